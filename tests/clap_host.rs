//! End to end through the real CLAP ABI: a small host (tests/clap/host.rs) loads the built
//! plugin library, checks its descriptor and parameters, plays notes, automates, saves and
//! restores state, and feeds it corrupt state.

mod common;
#[path = "clap/host.rs"]
mod host;

use common::*;
use host::*;
use rosin::controls;

const PLUGIN_ID: &str = "org.rosin.rosin";

/// The parameter IDs stored in DAW projects. This list only grows: never rename or remove.
const CONTRACT_IDS: &[&str] = &[
    "bow_force",
    "bow_velocity",
    "bow_position",
    "noise",
    "damping",
    "output_gain",
    "bristle_stiffness",
    "static_friction",
    "dynamic_friction",
    "stribeck_velocity",
    "string_stiffness",
    "finger_position",
    "bow_attack",
    "bow_release",
    "intonation",
    "instrument",
    "drum_quality",
    "drum_tuning",
    "drum_damping",
    "drum_noise",
    "drum_variation",
    "drum_rate",
    "drum_gain",
    "drum_bow_x",
    "drum_bow_y",
    "pad_layout",
];

fn library() -> ClapLibrary {
    ClapLibrary::load(&plugin_path())
}

/// Renders `seconds` in blocks of `block`, with `events` in the first block.
fn play(instance: &mut ClapInstance, rate: f64, seconds: f64, block: u32, events: &[(u32, HostEvent)]) -> Vec<f32> {
    let frames = (seconds * rate) as usize;
    let mut out = Vec::with_capacity(frames);
    let mut first = true;
    while out.len() < frames {
        let n = block.min((frames - out.len()) as u32);
        let (left, right) = instance.process(n, if first { events } else { &[] });
        assert!(left == right, "the two channels differ");
        out.extend_from_slice(&left);
        first = false;
    }
    out
}

#[test]
fn descriptor_names_a_stereo_instrument() {
    let library = library();
    let descriptors = library.descriptors();
    assert_eq!(descriptors.len(), 1);
    let d = unsafe { &*descriptors[0] };
    assert_eq!(c_str(d.id), PLUGIN_ID);
    assert_eq!(c_str(d.name), "Rosin");
    let mut features = Vec::new();
    let mut p = d.features;
    while !unsafe { *p }.is_null() {
        features.push(c_str(unsafe { *p }));
        p = unsafe { p.add(1) };
    }
    assert!(features.iter().any(|f| f == "instrument"), "features {features:?}");
}

#[test]
fn every_contract_parameter_is_exposed_with_its_name() {
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let infos = instance.param_infos();
    for id in CONTRACT_IDS {
        let clap_id = clap_param_id(id);
        let info = infos.iter().find(|i| i.id == clap_id).unwrap_or_else(|| panic!("parameter {id} is missing"));
        let spec = controls::find(id).expect("contract ID in the control table");
        let name = unsafe { std::ffi::CStr::from_ptr(info.name.as_ptr()) }.to_string_lossy().into_owned();
        assert_eq!(name, spec.name, "{id}");
    }
    assert_eq!(infos.len(), controls::ALL.len());
    // The names the brief fixes.
    for (id, name) in [("bow_force", "Bow Force"), ("bow_velocity", "Bow Velocity"), ("bow_position", "Bow Position")] {
        assert_eq!(controls::find(id).unwrap().name, name);
    }
}

#[test]
fn a_note_plays_in_tune_through_the_clap_abi() {
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    let rate = 48_000.0;
    assert!(instance.activate(rate, 512));
    let out = play(&mut instance, rate, 1.6, 512, &[(100, HostEvent::NoteOn { key: 57, velocity: 0.9, note_id: 7 })]);
    assert!(out[..100].iter().all(|&s| s == 0.0), "sound before the note's frame");
    let expected = 220.0;
    let pitch = fundamental_hz(&out[(0.9 * rate) as usize..], rate, expected);
    assert!(cents(pitch, expected).abs() < 3.0, "{pitch:.3} Hz");
    assert!(db(rms(&out[(0.9 * rate) as usize..])) > -30.0);
}

#[test]
fn automation_events_shape_the_sound_and_note_end_is_reported() {
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    let rate = 44_100.0;
    assert!(instance.activate(rate, 256));
    let loud = play(&mut instance, rate, 1.0, 256, &[(0, HostEvent::NoteOn { key: 62, velocity: 1.0, note_id: 3 })]);
    // Output gain to its minimum (normalised 0: -48 dB), mid-block.
    let gain_id = clap_param_id("output_gain");
    let quiet = play(&mut instance, rate, 0.5, 256, &[(77, HostEvent::Param { id: gain_id, value: 0.0 })]);
    assert_eq!(instance.param_value(gain_id), 0.0);
    let drop = db(rms(&loud[loud.len() / 2..])) - db(rms(&quiet[quiet.len() / 2..]));
    assert!(drop > 40.0, "gain automation lowered the level by only {drop:.1} dB");
    // Release: the voice ends in silence and the host hears of it.
    play(&mut instance, rate, 0.1, 256, &[(0, HostEvent::NoteOff { key: 62, note_id: 3 })]);
    let mut seconds = 0.0;
    while instance.note_ends.is_empty() && seconds < 30.0 {
        play(&mut instance, rate, 1.0, 1024, &[]);
        seconds += 1.0;
    }
    assert_eq!(instance.note_ends, vec![(62, 3)]);
}

#[test]
fn automation_is_sample_accurate() {
    // The same note twice; the second time the gain moves at frame 300 of a 512-frame
    // block. The outputs must agree up to frame 299 and part from frame 300 on.
    let library = library();
    let rate = 48_000.0;
    let render = |events: &[(u32, HostEvent)]| {
        let mut instance = ClapInstance::new(&library, PLUGIN_ID);
        assert!(instance.activate(rate, 512));
        play(&mut instance, rate, 0.5, 512, &[(0, HostEvent::NoteOn { key: 60, velocity: 1.0, note_id: 1 })]);
        instance.process(512, events).0
    };
    let plain = render(&[]);
    let automated = render(&[(300, HostEvent::Param { id: clap_param_id("output_gain"), value: 0.0 })]);
    assert_eq!(plain[..300], automated[..300]);
    assert_ne!(plain[300], automated[300]);
    assert!(automated[300..].iter().zip(&plain[300..]).all(|(a, p)| a.abs() <= p.abs() + 1e-9));
}

#[test]
fn state_round_trips_exactly() {
    let library = library();
    let mut a = ClapInstance::new(&library, PLUGIN_ID);
    assert!(a.activate(48_000.0, 64));
    let changes: Vec<(u32, HostEvent)> = [("bow_force", 0.731), ("bow_velocity", 0.1), ("damping", 0.9), ("intonation", 0.25), ("bow_position", 0.05)]
        .iter()
        .map(|(id, value)| (0, HostEvent::Param { id: clap_param_id(id), value: *value }))
        .collect();
    a.process(64, &changes);
    let saved = a.save_state();

    let b = ClapInstance::new(&library, PLUGIN_ID);
    assert!(b.load_state(&saved), "a saved state must load");
    for info in a.param_infos() {
        assert_eq!(a.param_value(info.id), b.param_value(info.id), "parameter {} differs after the round trip", info.id);
    }
    assert_eq!(b.save_state(), saved, "saving the restored state gives other bytes");
    assert!((b.param_value(clap_param_id("bow_force")) - 0.731).abs() < 1e-6);
}

#[test]
fn corrupt_state_is_refused_and_leaves_the_defaults() {
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let defaults: Vec<(u32, f64)> = instance.param_infos().iter().map(|i| (i.id, i.default_value)).collect();
    let mut truncated = instance.save_state();
    truncated.truncate(truncated.len() / 2);
    let mut wrong_length = instance.save_state();
    wrong_length[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    for garbage in [b"not a state at all".to_vec(), Vec::new(), truncated, wrong_length, vec![0xFF; 4096]] {
        assert!(!instance.load_state(&garbage), "corrupt state was accepted");
        for (id, default) in &defaults {
            assert!((instance.param_value(*id) - default).abs() < 1e-6, "parameter {id} moved after a refused load");
        }
    }
}

#[test]
fn out_of_range_values_in_a_state_are_clamped() {
    // A hand-edited or foreign project: values are clamped into range and unknown IDs are
    // ignored, so the voice never sees an impossible control.
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let json = br#"{"version":"0.0.1","params":{"bow_force":{"f32":1e30},"bow_velocity":{"f32":-7.5},"damping":{"f32":-3.0},"no_such_param":{"f32":1.0}},"fields":{}}"#;
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json);
    assert!(instance.load_state(&bytes));
    assert_eq!(instance.param_value(clap_param_id("bow_force")), 1.0);
    assert_eq!(instance.param_value(clap_param_id("bow_velocity")), 0.0);
    assert_eq!(instance.param_value(clap_param_id("damping")), 0.0);
}

/// A state written as a JSON body behind CLAP's length prefix.
fn state_bytes(json: &str) -> Vec<u8> {
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    bytes
}

#[test]
fn a_project_saved_before_a_control_existed_loads_it_at_its_default() {
    // A project from before the drum and the pad (the foundation's fifteen controls) is
    // loaded into an instance whose drum and pad controls were moved: those go back to
    // their defaults, the saved ones take the saved values.
    // (The host reads normalised values: 4.5 N of 0..20 N is 0.225.)
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let defaults: Vec<(u32, f64)> = instance.param_infos().iter().map(|i| (i.id, i.default_value)).collect();
    assert!(instance.load_state(&state_bytes(r#"{"version":"0.1.0","params":{"instrument":{"i32":1},"pad_layout":{"i32":1},"drum_tuning":{"f32":2.0}},"fields":{}}"#)));
    assert_eq!(instance.param_value(clap_param_id("pad_layout")), 1.0);
    let old = r#"{"version":"0.1.0","params":{"bow_force":{"f32":4.5},"bow_velocity":{"f32":0.2}},"fields":{}}"#;
    assert!(instance.load_state(&state_bytes(old)));
    assert!((instance.param_value(clap_param_id("bow_force")) - 0.225).abs() < 1e-6);
    let saved = [clap_param_id("bow_force"), clap_param_id("bow_velocity")];
    for (id, default) in defaults.iter().filter(|(id, _)| !saved.contains(id)) {
        assert!((instance.param_value(*id) - default).abs() < 1e-6, "parameter {id} kept a stale value");
    }
}

#[test]
fn sample_rates_and_block_sizes_through_the_abi() {
    let library = library();
    for (rate, block) in [(22_050.0, 1u32), (192_000.0, 4096), (96_000.0, 3)] {
        let mut instance = ClapInstance::new(&library, PLUGIN_ID);
        assert!(instance.activate(rate, block.max(1)), "activation at {rate} Hz failed");
        let out = play(&mut instance, rate, 0.5, block, &[(0, HostEvent::NoteOn { key: 69, velocity: 1.0, note_id: 1 })]);
        assert!(out.iter().all(|s| s.is_finite()));
        assert!(db(rms(&out[out.len() / 2..])) > -30.0, "silent at {rate} Hz");
    }
    // A rate the physics cannot run at is refused at activation, not crashed on.
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(!instance.activate(1_000.0, 512));
}

//! End to end through the real CLAP ABI: a small host (tests/clap/host.rs) loads the built
//! plugin library, checks its descriptor and parameters, plays notes (CLAP and raw MIDI, on
//! any channel), automates and modulates, saves and restores state, and feeds it corrupt
//! state.
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

mod common;
#[path = "clap/host.rs"]
mod host;

use clap_sys::events::*;
use clap_sys::ext::params::{CLAP_PARAM_IS_AUTOMATABLE, CLAP_PARAM_IS_MODULATABLE, CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID};
use common::*;
use host::*;
use rosin_engine::controls;

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
    "play_mode",
    "string_set",
    "glide_time",
    "pitch_bend_range",
    "mpe",
    "mpe_bend_range",
    "vibrato_rate",
    "vibrato_depth",
    "body",
    "body_mix",
    "sympathetic",
    "friction_model",
    "string_engine",
    "drum_friction_model",
    "bow_model",
    "bow_width",
    "bow_torsion",
    "string_weight",
    "drum_radiation",
    "vibrato_delay",
    "voices",
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

/// Moves a few controls away from their defaults, as a player would, and returns the
/// instance's state after it.
fn moved_away_from_the_defaults(instance: &mut ClapInstance) -> Vec<u8> {
    let changes: Vec<(u32, HostEvent)> = [("bow_force", 0.61), ("damping", 0.3), ("play_mode", 1.0), ("string_set", 3.0)]
        .iter()
        .map(|(id, value)| (0, HostEvent::Param { id: clap_param_id(id), value: *value }))
        .collect();
    instance.process(64, &changes);
    instance.save_state()
}

#[test]
fn corrupt_state_is_refused_and_leaves_the_instance_as_it_was() {
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(48_000.0, 64));
    let before = moved_away_from_the_defaults(&mut instance);
    let values: Vec<(u32, f64)> = instance.param_infos().iter().map(|i| (i.id, instance.param_value(i.id))).collect();
    assert!(values.iter().zip(instance.param_infos()).any(|((_, v), info)| (v - info.default_value).abs() > 1e-3), "the instance left its defaults");
    let mut truncated = instance.save_state();
    truncated.truncate(truncated.len() / 2);
    let mut wrong_length = instance.save_state();
    wrong_length[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    for garbage in [b"not a state at all".to_vec(), Vec::new(), truncated, wrong_length, vec![0xFF; 4096]] {
        assert!(!instance.load_state(&garbage), "corrupt state was accepted");
        for (id, value) in &values {
            assert_eq!(instance.param_value(*id), *value, "parameter {id} moved after a refused load");
        }
        assert_eq!(instance.save_state(), before);
    }
}

/// A saved project of `name` in `tests/fixtures/states/`.
fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/states").join(name);
    state_bytes(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The plain values a state's JSON gives its controls (f32 and i32 ones).
fn fixture_values(state: &[u8]) -> Vec<(String, f64)> {
    controls::ALL.iter().filter_map(|spec| saved_value(state, spec.id).map(|v| (spec.id.to_string(), v))).collect()
}

/// Projects saved by every state version load as they sounded: each saved control takes its
/// saved value and every other its default (whatever the instance held before), a version-1
/// project keeps its dry sound, and each re-saves as the current version. A project from a
/// newer Rosin loads the controls this one knows and leaves a note for the editor; one whose
/// version cannot be read changes nothing; values saved as the wrong kind are converted.
#[test]
fn saved_projects_of_every_version_load_as_they_sounded() {
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(48_000.0, 64));
    let notice = |state: &[u8]| String::from_utf8_lossy(&state[8..]).split("\"state_notice\":").nth(1).map(|r| r.split("\",\"").next().unwrap_or("").to_string()).unwrap_or_default();
    for (name, dry) in [("v1-foundation.json", true), ("v2-violin.json", false)] {
        moved_away_from_the_defaults(&mut instance);
        let file = fixture(name);
        assert!(instance.load_state(&file), "{name} was refused");
        instance.process(64, &[]);
        let state = instance.save_state();
        let saved = fixture_values(&file);
        for spec in controls::ALL {
            let loaded = saved_value(&state, spec.id).unwrap();
            let wanted = match saved.iter().find(|(id, _)| id == spec.id) {
                Some((_, v)) => *v,
                None if dry && spec.id == controls::BODY_MIX.id => 0.0,
                None => spec.default as f32 as f64,
            };
            assert_eq!(loaded, wanted, "{name}: {} is {loaded}, the project says {wanted}", spec.id);
        }
        let text = String::from_utf8_lossy(&state[8..]).into_owned();
        assert!(text.contains(&format!("\"state_version\":\"{}\"", rosin_engine::state::STATE_VERSION)), "{name} re-saved as {text}");
        assert!(notice(&state).trim_matches(['\\', '"']).is_empty(), "{name} left a notice: {}", notice(&state));
    }

    // From a newer Rosin: what this one knows, and a note.
    assert!(instance.load_state(&fixture("v7-from-a-newer-rosin.json")));
    instance.process(64, &[]);
    let state = instance.save_state();
    assert_eq!(saved_value(&state, "bow_force"), Some(0.55f32 as f64));
    assert!(notice(&state).contains("newer Rosin (state version 7)"), "{}", notice(&state));

    // An unreadable version: nothing changes.
    let before = instance.save_state();
    assert!(instance.load_state(&fixture("unreadable-version.json")));
    instance.process(64, &[]);
    assert_eq!(instance.save_state(), before, "a state with an unreadable version changed the instance");

    // Values of the wrong kind, converted.
    assert!(instance.load_state(&fixture("wrong-kinds.json")));
    instance.process(64, &[]);
    let state = instance.save_state();
    assert_eq!(saved_value(&state, "bow_force"), Some(5.0));
    assert_eq!(saved_value(&state, "play_mode"), Some(2.0));
    assert_eq!(saved_value(&state, "string_set"), Some(1.0));
    assert_eq!(saved_value(&state, "damping"), Some(2.0));
}

/// The editor's page, window size and preset name travel with the project: a state that
/// holds them loads them, and saves them again unchanged.
#[test]
fn the_editors_page_size_and_preset_name_are_saved_with_the_project() {
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let json = String::from_utf8_lossy(&fixture("v2-violin.json")[8..]).into_owned();
    let editor = r#""editor_page":"\"lab\"","editor_size":"[812.0,503.0]","preset_name":"\"Cello\"","#;
    let json = json.replacen("\"fields\":{", &format!("\"fields\":{{{editor}"), 1);
    assert!(instance.load_state(&state_bytes(&json)), "the project was refused");
    let saved = String::from_utf8_lossy(&instance.save_state()[8..]).into_owned();
    for field in [r#""editor_page":"\"lab\"""#, r#""editor_size":"[812.0,503.0]""#, r#""preset_name":"\"Cello\"""#] {
        assert!(saved.contains(field), "{field} was lost: {saved}");
    }
    // A new instance has no size yet: the editor opens at its default.
    let fresh = String::from_utf8_lossy(&ClapInstance::new(&library, PLUGIN_ID).save_state()[8..]).into_owned();
    assert!(fresh.contains(r#""editor_size":"null""#), "{fresh}");
}

#[test]
fn out_of_range_values_in_a_state_are_clamped() {
    // A hand-edited or foreign project: values are clamped into range and unknown IDs are
    // ignored, so the voice never sees an impossible control. (nice-plug clamps a saved
    // value into its range too: Rosin's own clamp, which also takes a non-finite value to
    // the default, is tested where deleting it fails, in `rosin_engine::state`.)
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let json = r#"{"version":"0.0.1","params":{"bow_force":{"f32":1e30},"bow_velocity":{"f32":-7.5},"damping":{"f32":-3.0},"no_such_param":{"f32":1.0}},"fields":{}}"#;
    assert!(instance.load_state(&state_bytes(json)));
    assert_eq!(instance.param_value(clap_param_id("bow_force")), 1.0);
    assert_eq!(instance.param_value(clap_param_id("bow_velocity")), 0.0);
    assert_eq!(instance.param_value(clap_param_id("damping")), 0.0);
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
    // The body came with state version 2: an older project keeps its dry sound.
    let migrated = clap_param_id("body_mix");
    assert_eq!(instance.param_value(migrated), 0.0, "a version-1 project got a body");
    for (id, default) in defaults.iter().filter(|(id, _)| !saved.contains(id) && *id != migrated) {
        assert!((instance.param_value(*id) - default).abs() < 1e-6, "parameter {id} kept a stale value");
    }
    // Saving it again writes the current version, and its body stays off.
    let resaved = String::from_utf8_lossy(&instance.save_state()[8..]).into_owned();
    assert!(resaved.contains(r#""state_version":"2""#), "{resaved}");
    let fresh = ClapInstance::new(&library, PLUGIN_ID);
    assert!(fresh.load_state(&instance.save_state()));
    assert_eq!(fresh.param_value(migrated), 0.0);
}

#[test]
fn sample_rates_and_block_sizes_through_the_abi() {
    let library = library();
    // Rates inside the physics' own range, and beyond it on both sides (clap-validator asks
    // for 1 kHz to 768 kHz and fractional rates; the VST3 validator for 1234.5677 Hz).
    for (rate, block) in [(22_050.0, 1u32), (192_000.0, 4096), (96_000.0, 3), (1_000.0, 7), (1_234.5677, 512), (768_000.0, 333), (44_100.5, 1000)] {
        let mut instance = ClapInstance::new(&library, PLUGIN_ID);
        assert!(instance.activate(rate, block.max(1)), "activation at {rate} Hz failed");
        // A3 fits below the Nyquist frequency of every one of these rates.
        let out = play(&mut instance, rate, 1.0, block, &[(0, HostEvent::NoteOn { key: 57, velocity: 1.0, note_id: 1 })]);
        assert!(out.iter().all(|s| s.is_finite() && (*s == 0.0 || s.abs() >= f32::MIN_POSITIVE)), "non-finite or subnormal output at {rate} Hz");
        let level = db(rms(&out[out.len() / 2..]));
        assert!(level > -30.0, "silent at {rate} Hz ({level:.1} dB)");
        let pitch = fundamental_hz(&out[out.len() / 2..], rate, 220.0);
        println!("{rate} Hz, blocks of {block}: A3 at {:+.2} cents, {level:.1} dB", cents(pitch, 220.0));
        assert!(cents(pitch, 220.0).abs() < 10.0, "A3 at {pitch} Hz at a host rate of {rate} Hz");
    }
    // A rate outside 1 kHz to 1.536 MHz is refused at activation, not crashed on.
    for rate in [999.0, 2_000_000.0] {
        let mut instance = ClapInstance::new(&library, PLUGIN_ID);
        assert!(!instance.activate(rate, 512), "activation at {rate} Hz should be refused");
    }
}

/// Every parameter's value -> text -> value -> text round trip gives the same text, on the
/// parameter's steps and in between (what clap-validator's param-conversions checks).
#[test]
fn every_parameter_reads_back_the_text_it_shows() {
    let library = library();
    let instance = ClapInstance::new(&library, PLUGIN_ID);
    let mut rng = TestRng(0x5eed_0f_7e37);
    let mut checked = 0;
    for info in instance.param_infos() {
        let name = c_str(info.name.as_ptr());
        let (min, max) = (info.min_value, info.max_value);
        let stepped = info.flags & clap_sys::ext::params::CLAP_PARAM_IS_STEPPED != 0;
        let on_steps = (0..=200).map(|i| min + (max - min) * i as f64 / 200.0);
        let between = (0..5000).map(|_| min + (max - min) * rng.unit());
        for value in on_steps.chain(between) {
            let value = if stepped { value.round() } else { value };
            let text = instance.value_to_text(info.id, value).unwrap_or_else(|| panic!("{name}: no text for {value}"));
            let read = instance.text_to_value(info.id, &text).unwrap_or_else(|| panic!("{name}: '{text}' (from {value}) does not read back"));
            let again = instance.value_to_text(info.id, read).unwrap_or_else(|| panic!("{name}: no text for {read}"));
            assert_eq!(text, again, "{name}: {value} shows '{text}', which reads back as {read}, which shows '{again}'");
            checked += 1;
        }
    }
    println!("{checked} round trips, every parameter");
}

/// Plays blocks until the plugin reports a note end, for at most `limit_s`; returns the audio.
fn play_until_a_note_ends(instance: &mut ClapInstance, rate: f64, limit_s: f64) -> Vec<f32> {
    let mut out = Vec::new();
    while instance.note_ends_on_channels.is_empty() && (out.len() as f64) < limit_s * rate {
        out.extend(play(instance, rate, 0.1, 512, &[]));
    }
    out
}

/// The steady part of a held note: from 0.9 s on, after the bow's attack.
fn steady(out: &[f32], rate: f64) -> &[f32] {
    &out[(0.9 * rate) as usize..]
}

/// Once a note has ended the plugin must fall silent, not merely quiet: only the body's
/// resonances (below -100 dBFS when the voice ended) ring down for a moment.
fn assert_silent_after_the_end(instance: &mut ClapInstance, rate: f64) {
    let after = play(instance, rate, 0.5, 512, &[]);
    assert!(peak(&after) < 1e-5, "sound after the note end: peak {:.2e}", peak(&after));
    let tail = &after[after.len() / 2..];
    assert!(peak(tail) < 1e-6, "the body still rings 0.25 s after the note end: peak {:.2e}", peak(tail));
}

#[test]
fn a_raw_midi_note_sounds_in_tune_and_either_midi_note_off_ends_it() {
    let library = library();
    let rate = 48_000.0;
    // MIDI 1.0 has two note-offs: 0x80, and a note-on with velocity 0.
    for note_off in [[0x80, 69, 64], [0x90, 69, 0]] {
        let mut instance = ClapInstance::new(&library, PLUGIN_ID);
        assert!(instance.activate(rate, 512));
        let held = play(&mut instance, rate, 1.6, 512, &[(0, HostEvent::Midi { data: [0x90, 69, 100] })]);
        let pitch = fundamental_hz(steady(&held, rate), rate, 440.0);
        assert!(cents(pitch, 440.0).abs() < 3.0, "{pitch:.3} Hz");
        assert!(db(rms(steady(&held, rate))) > -30.0, "the MIDI note is silent");
        play(&mut instance, rate, 0.01, 512, &[(0, HostEvent::Midi { data: note_off })]);
        play_until_a_note_ends(&mut instance, rate, 30.0);
        // A MIDI note has no CLAP note ID.
        assert_eq!(instance.note_ends_on_channels, vec![(0, 69, -1)], "after {note_off:02x?}");
        assert_silent_after_the_end(&mut instance, rate);
    }
}

#[test]
fn a_note_on_channel_3_is_released_by_a_note_off_on_channel_3_only() {
    // Two instances get the same note on channel 3. One also gets note-offs for the same
    // key on every other channel: its output must not differ by a single bit.
    let library = library();
    let rate = 48_000.0;
    let note_on = [(0, HostEvent::NoteOnAt { channel: 3, key: 64, velocity: 0.9, note_id: 11 })];
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    let mut reference = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(rate, 512) && reference.activate(rate, 512));
    let held = play(&mut instance, rate, 1.6, 512, &note_on);
    assert_eq!(held, play(&mut reference, rate, 1.6, 512, &note_on));
    let expected = 440.0 * 2f64.powf((64.0 - 69.0) / 12.0);
    let pitch = fundamental_hz(steady(&held, rate), rate, expected);
    assert!(cents(pitch, expected).abs() < 3.0, "{pitch:.3} Hz");
    assert!(db(rms(steady(&held, rate))) > -30.0, "the note on channel 3 is silent");

    // By key alone (note ID wildcard), so only the channel tells them apart.
    let other_channels: Vec<(u32, HostEvent)> =
        (0..16).filter(|&c| c != 3).map(|channel| (0, HostEvent::NoteOffAt { channel, key: 64, note_id: -1 })).collect();
    let after_other_offs = play(&mut instance, rate, 1.0, 512, &other_channels);
    assert_eq!(after_other_offs, play(&mut reference, rate, 1.0, 512, &[]), "a note-off on another channel touched the note");
    assert!(instance.note_ends_on_channels.is_empty());

    let released = play(&mut instance, rate, 1.0, 512, &[(0, HostEvent::NoteOffAt { channel: 3, key: 64, note_id: -1 })]);
    assert_ne!(released, play(&mut reference, rate, 1.0, 512, &[]), "the note-off on channel 3 changed nothing");
    play_until_a_note_ends(&mut instance, rate, 30.0);
    assert_eq!(instance.note_ends_on_channels, vec![(3, 64, 11)]);
    assert_eq!(instance.note_ends, vec![(64, 11)], "the channel-less list agrees");
    assert_silent_after_the_end(&mut instance, rate);
}

#[test]
fn a_midi_all_notes_off_ends_the_notes_on_every_key() {
    let library = library();
    let rate = 44_100.0;
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(rate, 512));
    let notes = [(0, HostEvent::NoteOn { key: 55, velocity: 0.8, note_id: 1 }), (0, HostEvent::NoteOnAt { channel: 0, key: 62, velocity: 0.8, note_id: 2 })];
    let held = play(&mut instance, rate, 1.0, 512, &notes);
    assert!(db(rms(&held[held.len() / 2..])) > -30.0);
    // Controller 123, all notes off, on channel 0.
    play(&mut instance, rate, 0.01, 512, &[(0, HostEvent::Midi { data: [0xB0, 123, 0] })]);
    let mut seconds = 0.0;
    while instance.note_ends_on_channels.len() < 2 && seconds < 30.0 {
        play(&mut instance, rate, 0.5, 512, &[]);
        seconds += 0.5;
    }
    let mut ends = instance.note_ends_on_channels.clone();
    ends.sort();
    assert_eq!(ends, vec![(0, 55, 1), (0, 62, 2)]);
    assert_silent_after_the_end(&mut instance, rate);
}

#[test]
fn a_monophonic_param_mod_offsets_the_sound_and_zero_takes_it_back() {
    // CLAP modulation is an offset on top of the value, not a new value: an offset of -1
    // (normalised) takes the output gain to its floor of -48 dB, and an offset of 0 restores it.
    let library = library();
    let rate = 48_000.0;
    let gain_id = clap_param_id("output_gain");
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(rate, 512));
    let modulation = |amount| HostEvent::ParamMod { id: gain_id, note_id: -1, channel: -1, key: -1, amount };
    let loud = play(&mut instance, rate, 1.0, 512, &[(0, HostEvent::NoteOn { key: 62, velocity: 1.0, note_id: 3 })]);
    let quiet = play(&mut instance, rate, 0.5, 512, &[(100, modulation(-1.0))]);
    let back = play(&mut instance, rate, 0.5, 512, &[(100, modulation(0.0))]);
    let level = |out: &[f32]| db(rms(&out[out.len() / 2..]));
    assert!(level(&loud) - level(&quiet) > 40.0, "the modulation lowered the level by only {:.1} dB", level(&loud) - level(&quiet));
    assert!((level(&back) - level(&loud)).abs() < 3.0, "{:.1} dB after the offset went back to 0, {:.1} dB before", level(&back), level(&loud));
}

#[test]
fn every_expression_event_a_host_sends_is_taken_without_harm() {
    // Note expressions, per-voice and per-parameter modulation, polyphonic values and every
    // MIDI channel-voice message, aimed at a sounding note by ID and by channel and key.
    // Whatever the plugin does with them, the output stays finite and the note still ends.
    let library = library();
    let rate = 48_000.0;
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(rate, 512));
    play(&mut instance, rate, 0.5, 512, &[(0, HostEvent::NoteOn { key: 60, velocity: 0.9, note_id: 5 })]);
    let expressions = [
        (CLAP_NOTE_EXPRESSION_VOLUME, 1.0),
        (CLAP_NOTE_EXPRESSION_PAN, 0.5),
        (CLAP_NOTE_EXPRESSION_TUNING, 0.0),
        (CLAP_NOTE_EXPRESSION_VIBRATO, 0.0),
        (CLAP_NOTE_EXPRESSION_EXPRESSION, 1.0),
        (CLAP_NOTE_EXPRESSION_BRIGHTNESS, 0.5),
        (CLAP_NOTE_EXPRESSION_PRESSURE, 0.5),
    ];
    let force_id = clap_param_id("bow_force");
    let force = instance.param_value(force_id);
    let mut events = Vec::new();
    for (expression_id, value) in expressions {
        events.push(HostEvent::NoteExpression { expression_id, note_id: 5, channel: -1, key: -1, value });
        events.push(HostEvent::NoteExpression { expression_id, note_id: -1, channel: 0, key: 60, value });
    }
    events.extend([
        HostEvent::ParamMod { id: force_id, note_id: 5, channel: 0, key: 60, amount: 0.0 },
        HostEvent::ParamMod { id: force_id, note_id: -1, channel: 0, key: 60, amount: 0.0 },
        HostEvent::ParamAt { id: force_id, value: force, note_id: 5, channel: 0, key: 60 },
        HostEvent::Midi { data: [0xA0, 60, 64] },   // polyphonic aftertouch
        HostEvent::Midi { data: [0xB0, 1, 64] },    // modulation wheel
        HostEvent::Midi { data: [0xD0, 64, 0] },    // channel pressure
        HostEvent::Midi { data: [0xE0, 0, 0x40] },  // pitch bend, centred
    ]);
    let timed: Vec<(u32, HostEvent)> = events.into_iter().enumerate().map(|(i, e)| (i as u32 * 16, e)).collect();
    let out = play(&mut instance, rate, 1.0, 512, &timed);
    assert!(out.iter().all(|s| s.is_finite()));
    assert!(db(rms(&out[out.len() / 2..])) > -30.0, "the note fell silent");
    play(&mut instance, rate, 0.01, 512, &[(0, HostEvent::NoteOff { key: 60, note_id: 5 })]);
    play_until_a_note_ends(&mut instance, rate, 30.0);
    assert_eq!(instance.note_ends_on_channels, vec![(0, 60, 5)]);
}

#[test]
fn voice_info_and_the_modulation_flags_agree() {
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(48_000.0, 512));
    println!("host extensions the plugin asked for: {:?}", instance.requested_host_extensions());
    let infos = instance.param_infos();
    for info in &infos {
        let flags = instance.param_info_flags(info.id);
        assert_eq!(flags, info.flags);
        if flags & CLAP_PARAM_IS_AUTOMATABLE != 0 {
            assert_ne!(flags & CLAP_PARAM_IS_MODULATABLE, 0, "parameter {} is automatable but not modulatable", info.id);
        }
    }
    assert_ne!(instance.param_info_flags(clap_param_id("output_gain")) & CLAP_PARAM_IS_MODULATABLE, 0);
    let per_note = infos.iter().filter(|i| i.flags & CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID != 0).count();
    match instance.voice_info() {
        Some((count, capacity, flags)) => {
            println!("voice-info: {count} voices of {capacity}, flags {flags:#x}");
            assert!((1..=capacity).contains(&count), "{count} voices of a capacity of {capacity}");
            // Bow force, velocity and position, and nothing else.
            assert_eq!(per_note, 3, "{per_note} parameters are modulatable per note");
        }
        None => {
            println!("the plugin offers no clap.voice-info");
            // A host modulating per note sizes its voices from voice-info.
            assert_eq!(per_note, 0, "{per_note} parameters are modulatable per note, with no voice-info");
        }
    }
}

/// A control's value in a saved state (nice-plug's JSON body behind its length prefix).
fn saved_value(state: &[u8], id: &str) -> Option<f64> {
    let json = std::str::from_utf8(&state[8..]).ok()?;
    let start = json.find(&format!("\"{id}\":{{"))? + id.len() + 4;
    let body = &json[start..];
    let number_start = body.find(':')? + 1;
    let number_end = body.find('}')?;
    body[number_start..number_end].trim().parse::<f32>().ok().map(|v| v as f64)
}

/// Every control of `state` is the value `controls` holds (as the plugin stores it).
fn assert_state_holds(state: &[u8], controls: &rosin_engine::controls::Controls, what: &str) {
    for spec in controls::ALL {
        let saved = saved_value(state, spec.id).unwrap_or_else(|| panic!("{what}: {} is not in the state", spec.id));
        let wanted = controls.get(spec.id).unwrap();
        let wanted = if spec.is_stepped() { wanted.round() } else { wanted as f32 as f64 };
        assert_eq!(saved, wanted, "{what}: {} is {saved}, the preset sets {wanted}", spec.id);
    }
}

/// A CLAP host's preset browser (`clap.preset-discovery-factory`) sees every factory preset,
/// as `.rosinpreset` files in Rosin's data folder, flagged as factory content, and the
/// player's own presets once they have saved one, flagged as theirs; a damaged file of
/// theirs hides nothing else. Loading any of them (`clap.preset-load`) sets every control to
/// the value the editor's menu sets, then tells the host. Where the data folder cannot be
/// written, the factory presets are found inside the plugin, by name, and load the same.
#[test]
fn presets_are_discovered_and_load_as_the_menu_sets_them() {
    use clap_sys::factory::preset_discovery::{CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT, CLAP_PRESET_DISCOVERY_IS_USER_CONTENT, CLAP_PRESET_DISCOVERY_LOCATION_FILE, CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN};
    use rosin_engine::presets::PRESETS;
    use rosin_engine::user_presets;
    let data = std::env::temp_dir().join(format!("rosin-clap-presets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    // SAFETY: no other test of this binary reads Rosin's data folder.
    unsafe { std::env::set_var("ROSIN_DATA_DIR", &data) };
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(48_000.0, 512));

    // The factory presets, as files.
    let crawls = library.crawl_presets();
    assert_eq!(crawls.len(), 1, "one provider");
    let (provider, crawl) = &crawls[0];
    assert!(crawl.errors.is_empty(), "{:?}", crawl.errors);
    assert_eq!(crawl.file_extensions, vec![user_presets::EXTENSION.to_string()]);
    let factory_dir = data.join("Factory Presets").to_string_lossy().into_owned();
    assert_eq!(crawl.locations, vec![(CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT, "Rosin factory presets".to_string(), CLAP_PRESET_DISCOVERY_LOCATION_FILE, Some(factory_dir))]);
    let mut names: Vec<&str> = crawl.presets.iter().map(|p| p.name.as_str()).collect();
    let mut expected: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected, "the provider lists the menu's presets");
    for found in &crawl.presets {
        assert_eq!(found.plugin_ids, vec![("clap".to_string(), PLUGIN_ID.to_string())], "{}", found.name);
        assert_eq!(found.flags, CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT, "{}", found.name);
        assert!(!found.description.is_empty() && found.features.contains(&"instrument".to_string()), "{}", found.name);
        let preset = rosin_engine::presets::find(&found.name).unwrap();
        let (ok, loaded, errors) = instance.load_preset(CLAP_PRESET_DISCOVERY_LOCATION_FILE, found.location.as_deref(), None);
        assert!(ok && errors.is_empty(), "{}: {errors:?}", preset.name);
        assert_eq!(loaded.len(), 1, "the host is told that the preset loaded");
        // The audio thread takes the new values at its next block.
        play(&mut instance, 48_000.0, 0.01, 480, &[]);
        assert_state_holds(&instance.save_state(), &preset.controls(), preset.name);
    }
    println!("provider {provider}: {} presets in '{}'", crawl.presets.len(), crawl.locations[0].1);

    // A player's own preset, saved as the editor saves it, beside a damaged file.
    let mut mine = rosin_engine::presets::find("Cello").unwrap().controls();
    mine.bow_force_n = 0.45;
    let user_dir = data.join("Presets");
    user_presets::save(&user_dir, "Soft Cello", &mine).unwrap();
    std::fs::write(user_dir.join("Broken.rosinpreset"), "not a preset").unwrap();
    let crawls = library.crawl_presets();
    let crawl = &crawls[0].1;
    assert!(crawl.errors.is_empty(), "{:?}", crawl.errors);
    assert_eq!(crawl.locations.len(), 2);
    assert_eq!((crawl.locations[1].0, crawl.locations[1].2), (CLAP_PRESET_DISCOVERY_IS_USER_CONTENT, CLAP_PRESET_DISCOVERY_LOCATION_FILE));
    let theirs: Vec<_> = crawl.presets.iter().filter(|p| p.flags == CLAP_PRESET_DISCOVERY_IS_USER_CONTENT).collect();
    assert_eq!(theirs.len(), 1, "the damaged file declares nothing");
    assert_eq!(theirs[0].name, "Soft Cello");
    assert_eq!(crawl.presets.len(), PRESETS.len() + 1);
    let (ok, _, errors) = instance.load_preset(CLAP_PRESET_DISCOVERY_LOCATION_FILE, theirs[0].location.as_deref(), None);
    assert!(ok && errors.is_empty(), "{errors:?}");
    play(&mut instance, 48_000.0, 0.01, 480, &[]);
    assert_state_holds(&instance.save_state(), &mine, "Soft Cello");

    // A damaged or missing file, and a key that names no preset, are refused with a message
    // for the host, and change nothing.
    let before = instance.save_state();
    let broken = user_dir.join("Broken.rosinpreset").to_string_lossy().into_owned();
    for (kind, location, key) in [
        (CLAP_PRESET_DISCOVERY_LOCATION_FILE, Some(broken.as_str()), None),
        (CLAP_PRESET_DISCOVERY_LOCATION_FILE, Some("/nonexistent/x.rosinpreset"), None),
        (CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN, None, Some("No Such Preset")),
    ] {
        let (ok, loaded, errors) = instance.load_preset(kind, location, key);
        assert!(!ok && loaded.is_empty() && errors.len() == 1, "{location:?} {key:?}: {errors:?}");
        println!("refused: {}", errors[0]);
    }
    assert_eq!(instance.save_state(), before);

    // A data folder that cannot be written: the factory presets inside the plugin, by name.
    unsafe { std::env::set_var("ROSIN_DATA_DIR", "/proc/rosin-cannot-write-here") };
    let crawls = library.crawl_presets();
    let crawl = &crawls[0].1;
    assert_eq!(crawl.locations, vec![(CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT, "Rosin factory presets".to_string(), CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN, None)]);
    let names: Vec<&str> = crawl.presets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, PRESETS.iter().map(|p| p.name).collect::<Vec<_>>(), "in the menu's order");
    for (found, preset) in crawl.presets.iter().zip(PRESETS) {
        let (ok, loaded, errors) = instance.load_preset(CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN, None, Some(&found.load_key));
        assert!(ok && errors.is_empty(), "{}: {errors:?}", preset.name);
        assert_eq!(loaded, vec![found.load_key.clone()], "the host is told which preset loaded");
        play(&mut instance, 48_000.0, 0.01, 480, &[]);
        assert_state_holds(&instance.save_state(), &preset.controls(), preset.name);
    }
    unsafe { std::env::remove_var("ROSIN_DATA_DIR") };
    std::fs::remove_dir_all(&data).unwrap();
}

/// The plugin tells the host when it is silent: while a note sounds, and while it rings out
/// after its note-off, `process()` asks to be called on (`CLAP_PROCESS_CONTINUE`); once no
/// voice sounds and the output is below -120 dBFS it says the host may stop calling until
/// the next event (`CLAP_PROCESS_CONTINUE_IF_NOT_QUIET`). A note after that silence plays at
/// once and in tune, its first block already sounding. The same in Four Strings, whose open
/// strings stay up (asleep once rung down).
#[test]
fn silence_lets_the_host_sleep_and_the_next_note_wakes_it() {
    use clap_sys::process::{CLAP_PROCESS_CONTINUE, CLAP_PROCESS_CONTINUE_IF_NOT_QUIET};
    let library = library();
    let mut instance = ClapInstance::new(&library, PLUGIN_ID);
    assert!(instance.activate(48_000.0, 480));
    // Before any note: silent.
    instance.process(480, &[]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE_IF_NOT_QUIET);
    play(&mut instance, 48_000.0, 0.5, 480, &[(0, HostEvent::NoteOnAt { channel: 0, key: 57, velocity: 0.8, note_id: 1 })]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE, "a sounding note lets the host sleep");
    play(&mut instance, 48_000.0, 0.05, 480, &[(0, HostEvent::NoteOffAt { channel: 0, key: 57, note_id: 1 })]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE, "a ringing string lets the host sleep");
    // Ring out: within 30 s it says it is quiet, and stays so.
    let ring_out = |instance: &mut ClapInstance, mode: &str| {
        let mut blocks = 0;
        while instance.last_status != CLAP_PROCESS_CONTINUE_IF_NOT_QUIET {
            instance.process(480, &[]);
            blocks += 1;
            assert!(blocks < 3000, "{mode}: still not quiet 30 s after the note-off");
        }
        println!("{mode}: quiet {:.2} s after the note-off", blocks as f64 * 0.01);
    };
    ring_out(&mut instance, "Poly");
    let (left, _) = instance.process(480, &[]);
    assert!(left.iter().all(|s| s.abs() < 1e-6));
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE_IF_NOT_QUIET);
    // The host slept; a note wakes it, sounding from its first block.
    let (left, _) = instance.process(480, &[(0, HostEvent::NoteOnAt { channel: 0, key: 57, velocity: 0.8, note_id: 2 })]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE);
    assert!(left.iter().any(|s| s.abs() > 1e-5), "the note did not sound at once");
    let out = play(&mut instance, 48_000.0, 1.0, 480, &[]);
    let hz = fundamental_hz(&out[24_000..], 48_000.0, 220.0);
    assert!(cents(hz, 220.0).abs() < 3.0, "{hz} Hz after waking");
    // Four Strings keeps its four strings up to ring in sympathy; rung down, they sleep, and
    // the host may sleep too.
    play(&mut instance, 48_000.0, 0.05, 480, &[(0, HostEvent::NoteOffAt { channel: 0, key: 57, note_id: 2 }), (0, HostEvent::Param { id: clap_param_id("play_mode"), value: 1.0 })]);
    play(&mut instance, 48_000.0, 0.5, 480, &[(0, HostEvent::NoteOnAt { channel: 0, key: 57, velocity: 0.8, note_id: 3 })]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE);
    play(&mut instance, 48_000.0, 0.05, 480, &[(0, HostEvent::NoteOffAt { channel: 0, key: 57, note_id: 3 })]);
    ring_out(&mut instance, "Four Strings");
    let (left, _) = instance.process(480, &[(0, HostEvent::NoteOnAt { channel: 0, key: 57, velocity: 0.8, note_id: 4 })]);
    assert_eq!(instance.last_status, CLAP_PROCESS_CONTINUE);
    assert!(left.iter().any(|s| s.abs() > 1e-5), "Four Strings: the note did not sound at once");
}

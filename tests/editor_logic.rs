//! The editor's pure logic: the mouse as a bow through the pad mapper, the host parameter
//! gestures, the control groups, value formatting, and the views' snapshot.
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

use rosin_engine::controller::gesture::{LaneGesture, PadLayout};
use rosin_engine::controller::mapper::PadMapper;
use rosin_engine::controls::{self, Controls};
use rosin::editor::logic::*;
use rosin_engine::view::snapshot::{capture, ViewSnapshot, VIEW_MEMBRANE_CELLS};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent};

fn mapper() -> PadMapper {
    PadMapper::new(MOUSE_PAD_WIDTH_MM, MOUSE_PAD_HEIGHT_MM)
}

/// Drags the bow at `along` on `lane` down the view at `px_per_s` for `frames` frames of
/// 1/60 s; returns the lanes' last gestures.
fn drag(mouse: &mut MouseState, lane: usize, along: f64, px_per_s: f64, layout: PadLayout) -> Vec<(usize, LaneGesture)> {
    let mut mapper = mapper();
    let mut last = Vec::new();
    for i in 0..40 {
        let t = i as f64 / 60.0;
        mouse.bowing = Some((lane, along, 100.0 + px_per_s * t));
        for change in mapper.update(&string_touches(mouse, layout), t, layout, false) {
            last.retain(|(l, _)| *l != change.0);
            last.push(change);
        }
    }
    last
}

#[test]
fn dragging_on_the_string_bows_where_the_pointer_is_at_the_pointer_speed() {
    let mut mouse = MouseState::new();
    let changes = drag(&mut mouse, 0, 0.85, 200.0, PadLayout::OneString);
    let g = changes.iter().find(|(l, _)| *l == 0).unwrap().1;
    assert!(g.bow_down);
    assert!((g.bow_position - 0.15).abs() < 2e-3, "the bow sits under the pointer, 0.15 from the bridge: {}", g.bow_position);
    assert!((g.bow_velocity_mps - 0.1).abs() < 5e-3, "200 px/s is 0.1 m/s: {}", g.bow_velocity_mps);
    assert!((g.bow_force_n - string_force_n(MOUSE_DEFAULT_PRESSURE_G)).abs() < 1e-9);
    // Left of the Bow Position range, the bow stays at its end.
    let g = drag(&mut MouseState::new(), 0, 0.1, -200.0, PadLayout::OneString)[0].1;
    assert!((g.bow_position - controls::BOW_POSITION.max).abs() < 2e-3 && g.bow_velocity_mps < -0.09);
}

#[test]
fn the_right_button_places_a_finger_that_stays_and_the_wheel_sets_the_pressure() {
    let mut mouse = MouseState::new();
    mouse.place_finger(2, 0.2);
    assert_eq!(mouse.fingers[2], Some(0.2));
    let changes = drag(&mut mouse, 2, 0.8, 100.0, PadLayout::FourStrings);
    let (lane, g) = changes[0];
    assert_eq!(lane, 2, "the A string's row plays lane 3");
    assert!((g.finger_position.unwrap() - 0.2).abs() < 2e-3, "{g:?}");
    mouse.place_finger(2, 0.01);
    assert_eq!(mouse.fingers[2], None, "a right click at the nut lifts the finger");
    mouse.place_finger(0, 0.9);
    assert_eq!(mouse.fingers[0], Some(controls::FINGER_POSITION.max), "no finger past the octave");

    let mut mouse = MouseState::new();
    mouse.scroll(4.0);
    assert_eq!(mouse.pressure_g, MOUSE_DEFAULT_PRESSURE_G + 4.0 * MOUSE_PRESSURE_STEP_G);
    mouse.scroll(1e6);
    assert_eq!(mouse.pressure_g, MOUSE_MAX_PRESSURE_G);
    mouse.scroll(-1e6);
    assert_eq!(mouse.pressure_g, 0.0);
}

#[test]
fn dragging_on_the_membrane_bows_at_the_pointer() {
    let mut mapper = mapper();
    let g = mapper.update(&[membrane_touch(0.3, 0.7, 500.0)], 0.0, PadLayout::OneString, true)[0].1;
    assert!((g.drum_bow_x - 0.3).abs() < 1e-9 && (g.drum_bow_y - 0.7).abs() < 1e-9);
    assert!(g.bow_force_n > 0.0 && g.bow_velocity_mps > 0.0);
}

#[test]
fn a_lane_gesture_becomes_begin_set_end_for_the_host() {
    let mut tracker = HostGestureTracker::default();
    let host = |id: &str| Controls::default().get(id).unwrap();
    let down = LaneGesture { bow_down: true, bow_force_n: 4.0, bow_velocity_mps: 0.1, bow_position: 0.2, finger_position: None, ..LaneGesture::default() };
    let out = tracker.update(&down, true, false, host);
    assert_eq!(
        out,
        vec![
            HostGesture::Begin("bow_force"),
            HostGesture::Set("bow_force", 4.0),
            HostGesture::Begin("bow_velocity"),
            HostGesture::Set("bow_velocity", 0.1),
            HostGesture::Begin("bow_position"),
            HostGesture::Set("bow_position", 0.2),
        ]
    );
    assert!(tracker.update(&down, true, false, host).is_empty(), "nothing is resent unchanged");
    let moved = LaneGesture { bow_velocity_mps: -0.2, finger_position: Some(0.1), ..down };
    assert_eq!(tracker.update(&moved, true, false, host), vec![HostGesture::Set("bow_velocity", -0.2), HostGesture::Begin("finger_position"), HostGesture::Set("finger_position", 0.1)]);
    // Lifting hands each lane back at its value from before the gesture, then ends.
    let ends = tracker.update(&moved.lifted(), true, false, |_| f64::NAN);
    assert_eq!(
        ends,
        vec![
            HostGesture::Set("bow_force", 6.0),
            HostGesture::End("bow_force"),
            HostGesture::Set("bow_velocity", 0.1),
            HostGesture::End("bow_velocity"),
            HostGesture::Set("bow_position", 0.18),
            HostGesture::End("bow_position"),
            HostGesture::Set("finger_position", 0.0),
            HostGesture::End("finger_position"),
        ]
    );
    assert!(tracker.update(&down, false, false, host).is_empty(), "four lanes write no host parameter");
    let drum = tracker.update(&down, true, true, host);
    assert!(drum.contains(&HostGesture::Begin("drum_bow_x")) && !drum.contains(&HostGesture::Begin("bow_position")));
    let closing = tracker.end_all();
    assert_eq!(closing.len(), 8);
    assert_eq!(closing[0], HostGesture::Set("bow_force", 6.0));
}

#[test]
fn every_control_is_in_exactly_one_group() {
    for spec in controls::ALL {
        let count = CONTROL_GROUPS.iter().flat_map(|(_, ids)| ids.iter()).filter(|id| **id == spec.id).count();
        assert_eq!(count, 1, "{} is in {count} groups", spec.id);
    }
    let listed: usize = CONTROL_GROUPS.iter().map(|(_, ids)| ids.len()).sum();
    assert_eq!(listed, controls::ALL.len(), "no group lists an unknown ID");
}

#[test]
fn values_notes_and_frets_are_written_as_a_player_reads_them() {
    assert_eq!(format_value(&controls::BOW_FORCE, 6.0), "6.0 N");
    assert_eq!(format_value(&controls::BOW_VELOCITY, -0.125), "-0.125 m/s");
    assert_eq!(format_value(&controls::DRUM_TUNING, 6.5), "6.5 /10");
    assert_eq!(format_value(&controls::INSTRUMENT, 1.0), "Friction Drum");
    assert_eq!(format_value(&controls::PAD_LAYOUT, 1.0), "Four Strings");
    assert_eq!(format_value(&controls::BRISTLE_STIFFNESS, 1e5), "100000 N/m");
    assert_eq!(format_value(&controls::STRING_STIFFNESS, 1e-4), "1.00e-4 B");
    assert_eq!(format_value(&controls::BOW_ATTACK, 200.0), "200 ms");
    assert_eq!(note_name(60), "C4");
    assert_eq!(note_name(55), "G3");
    assert_eq!(note_name(21), "A0");
    assert_eq!(string_label(69, Some(2)), "A4 440.0 Hz, pad lane 3");
    let frets = fret_positions();
    assert!((frets[11] - 0.5).abs() < 1e-12, "the 12th fret is half-way");
    assert!((frets[6] - (1.0 - 2f64.powf(-7.0 / 12.0))).abs() < 1e-12);
    assert!(frets.windows(2).all(|w| w[1] > w[0]));
    assert_eq!(grey_level(f32::NAN, 1.0), 0, "outside the mask is dark");
    assert!(grey_level(-1.0, 1.0) < grey_level(0.0, 1.0) && grey_level(0.0, 1.0) < grey_level(1.0, 1.0));
    assert!(bow_opacity(0.0, 10.0) < bow_opacity(5.0, 10.0) && bow_opacity(20.0, 10.0) == 1.0);
    assert_eq!(frames_per_second(&[0.0, 0.5, 1.0]), Some(2.0));
    assert_eq!(frames_per_second(&[1.0]), None);
}

#[test]
fn the_snapshot_shows_what_sounds_where_it_is() {
    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    let mut controls = Controls::default();
    controls.finger_position = 0.25;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: 57, voice_id: None }, velocity: 1.0 });
    let mut out = vec![0.0f32; 24_000];
    engine.render(&mut out);
    let mut snapshot = ViewSnapshot::default();
    capture(&engine, &mut snapshot);
    let string = &snapshot.strings[0];
    assert!(string.sounding && string.bowing && string.key == 57 && string.pad_lane.is_none());
    assert!(!snapshot.strings[1].sounding && !snapshot.membrane.sounding);
    assert!(string.displacement_m.iter().any(|u| u.abs() > 1e-7), "the string moves");
    assert_eq!(string.finger_from_nut, Some(0.25));
    // The bow sits 0.18 of the vibrating (stopped) length from the bridge.
    let expected = 1.0 - 0.18 * 0.75;
    assert!((string.bow_from_nut as f64 - expected).abs() < 0.02, "{} vs {expected}", string.bow_from_nut);
    // Between nut and finger the string is still.
    let stopped = (0.2 * string.displacement_m.len() as f64) as usize;
    assert!(string.displacement_m[..stopped].iter().all(|u| u.abs() < 1e-9));

    controls.instrument = 1.0;
    controls.drum_quality = 2.0;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: 48, voice_id: None }, velocity: 1.0 });
    engine.render(&mut out);
    capture(&engine, &mut snapshot);
    let m = &snapshot.membrane;
    assert!(m.sounding && m.key == 48);
    let corner = m.displacement_m[0];
    let centre = m.displacement_m[VIEW_MEMBRANE_CELLS * VIEW_MEMBRANE_CELLS / 2 + VIEW_MEMBRANE_CELLS / 2];
    assert!(corner.is_nan() && centre.is_finite(), "the mask is circular");
    assert!(m.displacement_m.iter().filter(|v| v.is_finite()).any(|v| v.abs() > 1e-9), "the membrane moves");
    assert!((m.bow_x - controls.drum_bow_x as f32).abs() < 0.02 && (m.bow_y - controls.drum_bow_y as f32).abs() < 0.02);
    assert!(m.tube_displacement_m.iter().any(|v| v.abs() > 0.0));
}

/// The largest drawn displacement of the first string over `snapshots` captures a
/// millisecond apart, after half a second of key 57 bowed with `controls`.
fn drawn_amplitude_m(controls: &Controls, snapshots: usize) -> (f32, ViewSnapshot) {
    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    engine.set_controls(controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: 57, voice_id: None }, velocity: 1.0 });
    let mut out = vec![0.0f32; 24_000];
    engine.render(&mut out);
    let mut snapshot = ViewSnapshot::default();
    let mut largest = 0.0f32;
    let mut block = vec![0.0f32; 48];
    for _ in 0..snapshots {
        engine.render(&mut block);
        capture(&engine, &mut snapshot);
        largest = snapshot.strings[0].displacement_m.iter().fold(largest, |m, u| m.max(u.abs()));
    }
    (largest, snapshot)
}

#[test]
fn the_waveguide_is_drawn_like_the_finite_difference_string() {
    // Issue 17: the view draws the waveguide's string from its travelling waves, over the
    // length that sounds, in metres: as large as the finite-difference string of the same
    // note, bowed the same way, within a factor of two.
    let mut controls = Controls { finger_position: 0.25, ..Controls::default() };
    let (finite_difference, _) = drawn_amplitude_m(&controls, 30);
    controls.string_engine = 1.0;
    let (waveguide, snapshot) = drawn_amplitude_m(&controls, 30);
    println!("largest drawn displacement: finite difference {finite_difference:.2e} m, waveguide {waveguide:.2e} m");
    let string = &snapshot.strings[0];
    assert!(string.sounding && string.bowing);
    assert!(waveguide > 0.5 * finite_difference && waveguide < 2.0 * finite_difference);
    assert_eq!(string.finger_from_nut, Some(0.25));
    let expected = 1.0 - 0.18 * 0.75;
    assert!((string.bow_from_nut as f64 - expected).abs() < 0.02, "{} vs {expected}", string.bow_from_nut);
    let stopped = (0.24 * string.displacement_m.len() as f64) as usize;
    assert!(string.displacement_m[..stopped].iter().all(|u| *u == 0.0), "behind the finger the string is still");
    assert_eq!(*string.displacement_m.last().unwrap(), 0.0, "the bridge holds");
}

#[test]
fn the_guettler_job_sweeps_in_the_background_and_stops_when_dropped() {
    use rosin_engine::guettler::{GuettlerPlan, GuettlerRunner};
    let plan = GuettlerPlan::around(55, &Controls::default(), 48_000.0, 3);
    let job = GuettlerJob::start(plan.clone());
    let start = std::time::Instant::now();
    while !job.is_finished() {
        assert!(start.elapsed().as_secs() < 120, "the sweep did not finish: {:?}", job.progress());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(job.progress(), (9, 9));
    // The same cells as a runner played here, in order.
    let mut runner = GuettlerRunner::new(plan.clone());
    let expected: Vec<Option<Option<f64>>> = (0..9).map(|i| Some(runner.run_cell(i))).collect();
    assert_eq!(job.results(), expected);
    assert!(expected[4].unwrap().is_some(), "the default bowing reaches Helmholtz motion");
    // The marker's place: the current settings in the middle cell.
    assert!((log_axis_position(&plan.forces_n, plan.current().0) - 1.0).abs() < 1e-9);
    assert!((log_axis_position(&plan.accelerations_mps2, plan.current().1) - 1.0).abs() < 1e-9);
    // A job dropped mid-sweep stops after its cell; a cancelled one reports itself finished.
    let big = GuettlerJob::start(GuettlerPlan::around(40, &Controls::default(), 48_000.0, 9));
    big.cancel();
    assert!(big.is_finished());
    drop(big);
}

#[test]
fn the_meter_holds_its_peak_latches_clipping_and_the_feedback_line_names_the_voices() {
    use rosin_engine::view::meter::{BowState, OutputLevel};
    use rosin_engine::view::snapshot::{FeedbackView, VoiceView};
    assert_eq!(meter_fraction(1.0), 1.0);
    assert_eq!(meter_fraction(0.0), 0.0);
    assert!((meter_fraction(10f32.powf(-30.0 / 20.0)) - 0.5).abs() < 1e-6, "-30 dBFS is half way");
    let mut hold = MeterHold::default();
    hold.update(&OutputLevel { peak: 0.8, rms: 0.3, clipped: false }, 0.0);
    hold.update(&OutputLevel { peak: 0.2, rms: 0.1, clipped: false }, 1.0);
    assert_eq!(hold.peak, 0.8, "held");
    hold.update(&OutputLevel { peak: 0.2, rms: 0.1, clipped: false }, 1.6);
    assert_eq!(hold.peak, 0.2, "falls after the hold");
    hold.update(&OutputLevel { peak: 1.1, rms: 0.5, clipped: true }, 2.0);
    hold.update(&OutputLevel { peak: 0.1, rms: 0.05, clipped: false }, 5.0);
    assert!(hold.clipped, "the clip light stays lit");
    hold.reset_clip();
    assert!(!hold.clipped);
    let mut feedback = FeedbackView { cpu_share: 0.031, voices_sounding: 2, ..FeedbackView::default() };
    feedback.voices[0] = VoiceView { key: 55, drum: false, state: BowState::Sustained };
    feedback.voices[1] = VoiceView { key: 60, drum: true, state: BowState::Attack };
    assert_eq!(feedback_line(&feedback), "CPU 3.1 % · 2 voices: G3 sustained, C4 drum attack");
    assert_eq!(feedback_line(&FeedbackView::default()), "CPU 0.0 % · 0 voices");
}

#[test]
fn the_preset_bar_steps_round_the_list_and_marks_a_moved_control() {
    use rosin_engine::presets::PRESETS;
    assert_eq!(preset_step(5, Some(4), 1), Some(0), "next wraps round");
    assert_eq!(preset_step(5, Some(0), -1), Some(4), "previous wraps round");
    assert_eq!(preset_step(5, None, 1), Some(0));
    assert_eq!(preset_step(5, None, -1), Some(4));
    assert_eq!(preset_step(0, None, 1), None);
    let violin = PRESETS.iter().find(|p| p.name == "Violin").unwrap().controls();
    assert!(!differs_from(&violin, &violin));
    // A host's 32-bit parameters round the values: not a change.
    let mut rounded = violin;
    rounded.bow_force_n = (rounded.bow_force_n as f32) as f64;
    rounded.vibrato_rate_hz = (rounded.vibrato_rate_hz as f32) as f64;
    assert!(!differs_from(&violin, &rounded));
    let mut moved = violin;
    moved.bow_position += 0.01;
    assert!(differs_from(&violin, &moved));
    let mut chosen = violin;
    chosen.body = 2.0;
    assert!(differs_from(&violin, &chosen));
    // *Voices* is the machine's, not the preset's: more of them is no change of the sound.
    let mut more = violin;
    more.voice_count = 40.0;
    assert!(!differs_from(&violin, &more));
}

#[test]
fn the_performance_strip_and_the_side_panel_show_every_control_once() {
    // For either instrument: the strip's controls are real, and the side panel (the groups
    // less what the strip shows) holds every other control, none twice.
    for drum in [false, true] {
        let strip = performance_controls(drum);
        assert!(strip.iter().all(|id| controls::find(id).is_some()));
        let panel: Vec<&str> = CONTROL_GROUPS.iter().flat_map(|(_, ids)| ids.iter().copied()).filter(|id| !strip.contains(id)).collect();
        let mut all: Vec<&str> = strip.iter().copied().chain(panel.iter().copied()).collect();
        all.sort_unstable();
        let before = all.len();
        all.dedup();
        assert_eq!(before, all.len(), "a control shown twice");
        assert_eq!(all.len(), controls::ALL.len(), "a control shown nowhere");
    }
    assert!(STRING_PERFORMANCE_CONTROLS.contains(&"bow_force") && DRUM_PERFORMANCE_CONTROLS.contains(&"drum_tuning"));
}

#[test]
fn every_editor_page_round_trips_through_its_saved_name() {
    for (tab, guettler) in [(Tab::String, false), (Tab::Membrane, false), (Tab::Lab, false), (Tab::Lab, true)] {
        assert_eq!(page_from_name(page_name(tab, guettler)), Some((tab, guettler)));
    }
    assert_eq!(page_from_name(""), None, "a project saved before pages were saved opens as it did");
    assert_eq!(page_from_name("nonsense"), None);
}

#[test]
fn the_window_opens_at_the_size_the_project_was_saved_at_and_records_the_players() {
    let default = (1040.0, 660.0);
    // A project saved at 800 x 500: the first frame asks the host for it; the opening
    // size the window reports meanwhile is not recorded over it.
    let mut keeper = WindowSizeKeeper::default();
    assert_eq!(keeper.resized(default), None, "the opening size overwrote the saved one");
    assert_eq!(keeper.frame(Some((800.0, 500.0)), default), Some((800.0, 500.0)));
    assert_eq!(keeper.resized(default), None, "a late opening size overwrote the saved one");
    assert_eq!(keeper.resized((800.0, 500.0)), Some((800.0, 500.0)), "the granted size");
    assert_eq!(keeper.resized((1200.0, 900.0)), Some((1200.0, 900.0)), "the player's size is saved");
    assert_eq!(keeper.frame(Some((1200.0, 900.0)), (1200.0, 900.0)), None, "asked again");

    // A host that refuses: the keeper stops asking, and the player's next size counts.
    let mut keeper = WindowSizeKeeper::default();
    assert!(keeper.frame(Some((2000.0, 1200.0)), default).is_some());
    for _ in 0..WINDOW_RESTORE_FRAMES {
        assert_eq!(keeper.frame(Some((2000.0, 1200.0)), default), None, "asked twice");
    }
    assert_eq!(keeper.resized((1100.0, 700.0)), Some((1100.0, 700.0)));

    // Reopened: restored again, and nothing asked when the window already has the size.
    keeper.closed();
    assert_eq!(keeper.frame(Some((1100.0, 700.0)), (1100.4, 699.6)), None);
    assert_eq!(keeper.resized((1300.0, 700.0)), Some((1300.0, 700.0)));

    // A project from before sizes were saved opens at the default and records from then on.
    let mut keeper = WindowSizeKeeper::default();
    assert_eq!(keeper.frame(None, default), None);
    assert_eq!(keeper.resized((900.0, 600.0)), Some((900.0, 600.0)));

    // Saved sizes the editor cannot take are clamped or ignored.
    assert_eq!(window_size_to_restore((100.0, 100.0)), Some(WINDOW_MIN_SIZE));
    assert_eq!(window_size_to_restore((1e6, 1e6)), Some(WINDOW_MAX_SIZE));
    assert_eq!(window_size_to_restore((f32::NAN, 500.0)), None);
    assert_eq!(window_size_to_restore((-800.0, 500.0)), None);
    assert_eq!(window_size_to_restore((3840.4, 2160.0)), Some((3840.0, 2160.0)));
}

/// Every control is a host parameter with the same ID (DAW projects store them), each ID
/// reaches its parameter, and a fresh plugin's parameters are the controls' defaults.
#[test]
fn every_control_is_a_parameter_with_the_same_id() {
    use nice_plug::prelude::Params;
    use rosin::params::RosinParams;
    let params = RosinParams::default();
    let map = params.param_map();
    let ids: Vec<&str> = map.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids.len(), controls::ALL.len());
    for spec in controls::ALL {
        assert!(ids.contains(&spec.id), "missing parameter {}", spec.id);
        assert!(params.value_of(spec.id).is_some(), "parameter {} is not looked up", spec.id);
    }
    assert_eq!(params.controls(), Controls::from_lookup(|s| s.default as f32 as f64));
}

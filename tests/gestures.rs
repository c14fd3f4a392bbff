//! Touch gestures without hardware: the pad mapping of the papers, gesture files, and the
//! engine's pad voices (a pad performance needs no MIDI note).

mod common;

use common::{cents, fundamental_hz, rms};
use rosin_engine::controller::gesture::{LaneGesture, PadLayout, LANES, LANE_OPEN_KEYS, PAD_CHANNEL};
use rosin_engine::controller::gesture_file::{GestureRecording, RecordedItem, HEADER};
use rosin_engine::controller::mapper::{PadMapper, Touch, STRING_MAX_VELOCITY_MPS};
use rosin_engine::controls::Controls;
use rosin_physics::string::tuning::midi_key_to_hz;
use rosin_engine::voices::{Engine, NoteEvent};

const W: f64 = 230.0;
const H: f64 = 130.0;

fn touch(id: u8, x_mm: f64, y_mm: f64, force_g: f64) -> Touch {
    Touch { id, x_mm, y_mm, force_g, ended: false }
}

/// Feeds `frames` frames 4 ms apart of a finger moving down at `speed_mm_per_s`, returning
/// the last gesture of lane 0.
fn stroke(mapper: &mut PadMapper, speed_mm_per_s: f64, frames: usize, extra: &[Touch]) -> LaneGesture {
    let mut last = None;
    for i in 0..frames {
        let t = i as f64 * 0.004;
        let mut touches = vec![touch(0, 57.5, 20.0 + speed_mm_per_s * t, 500.0)];
        touches.extend_from_slice(extra);
        for (lane, g) in mapper.update(&touches, t, PadLayout::OneString, false) {
            if lane == 0 {
                last = Some(g);
            }
        }
    }
    last.expect("lane 0 changed")
}

#[test]
fn the_first_finger_bows_with_its_pressure_vertical_speed_and_place() {
    let mut mapper = PadMapper::new(W, H);
    let g = stroke(&mut mapper, 100.0, 50, &[]);
    assert!(g.bow_down);
    assert!((g.bow_force_n - 5.0).abs() < 1e-9, "500 g is 5 N, got {}", g.bow_force_n);
    assert!((g.bow_velocity_mps - 0.1).abs() < 0.005, "100 mm/s down is a 0.1 m/s down-bow, got {}", g.bow_velocity_mps);
    // A quarter of the way across the pad is a quarter of the bow position's range.
    assert!((g.bow_position - (0.02 + 0.48 * 0.25)).abs() < 1e-9, "{}", g.bow_position);
    assert_eq!(g.finger_position, None);

    // Too fast a stroke is held to willemsen2019's 0.3 m/s, and an up-stroke is negative.
    let mut mapper = PadMapper::new(W, H);
    assert!((stroke(&mut mapper, 900.0, 30, &[]).bow_velocity_mps - STRING_MAX_VELOCITY_MPS).abs() < 1e-9);
    let mut mapper = PadMapper::new(W, H);
    assert!(stroke(&mut mapper, -100.0, 50, &[]).bow_velocity_mps < -0.09);
}

#[test]
fn the_second_finger_stops_the_string_and_lifting_lifts_the_bow_once() {
    let mut mapper = PadMapper::new(W, H);
    let g = stroke(&mut mapper, 100.0, 30, &[touch(1, 115.0, 60.0, 200.0)]);
    assert_eq!(g.finger_position, Some(0.25), "half-way across is a quarter of the length");
    // The bow finger leaves: the lane lifts exactly once; the stopping finger alone does
    // not bow (it would become the bow only as a new first finger).
    let ended = Touch { ended: true, ..touch(0, 57.5, 80.0, 0.0) };
    let changes = mapper.update(&[ended, touch(1, 115.0, 60.0, 200.0)], 1.0, PadLayout::OneString, false);
    assert_eq!(changes.len(), 1);
    assert!(changes[0].1.bow_down, "the remaining finger is now the first finger");
    let changes = mapper.update(&[], 1.004, PadLayout::OneString, false);
    assert_eq!(changes.len(), 1);
    assert!(!changes[0].1.bow_down);
    assert!(mapper.update(&[], 1.008, PadLayout::OneString, false).is_empty(), "a lift is sent once");
}

#[test]
fn four_columns_are_four_strings_and_sliding_across_crosses_strings() {
    let mut mapper = PadMapper::new(W, H);
    let columns: Vec<Touch> = (0..4).map(|k| touch(k, (k as f64 + 0.5) * W / 4.0, 50.0, 400.0)).collect();
    let changes = mapper.update(&columns, 0.0, PadLayout::FourStrings, false);
    assert_eq!(changes.len(), 4);
    for (lane, g) in &changes {
        assert!(g.bow_down, "lane {lane}");
        assert!((g.bow_position - 0.26).abs() < 1e-9, "middle of its column: {}", g.bow_position);
    }
    // The G-string finger slides into the D column: G lifts, D now has two fingers, the
    // second of which stops it.
    let mut moved = columns.clone();
    moved[0].x_mm = W / 4.0 + 10.0;
    let changes = mapper.update(&moved, 0.004, PadLayout::FourStrings, false);
    let g_lane = changes.iter().find(|(l, _)| *l == 0).expect("G changed").1;
    assert!(!g_lane.bow_down);
    let d_lane = changes.iter().find(|(l, _)| *l == 1).expect("D changed").1;
    assert!(d_lane.bow_down);
    let stop = d_lane.finger_position.expect("the second finger in a column stops that string");
    assert!((stop - 0.5 * 0.5).abs() < 1e-9, "{stop}");
}

#[test]
fn on_the_drum_pressure_drives_force_and_velocity_together() {
    let mut mapper = PadMapper::new(W, H);
    let changes = mapper.update(&[touch(0, 0.25 * W, 0.75 * H, 500.0)], 0.0, PadLayout::FourStrings, true);
    assert_eq!(changes.len(), 1, "the drum is one lane whatever the layout");
    let g = changes[0].1;
    assert!((g.bow_force_n - 10.0).abs() < 1e-9 && (g.bow_velocity_mps - 0.1).abs() < 1e-9, "{g:?}");
    assert!((g.drum_bow_x - 0.25).abs() < 1e-9 && (g.drum_bow_y - 0.75).abs() < 1e-9);
    let g = mapper.update(&[touch(0, 0.25 * W, 0.75 * H, 5000.0)], 0.004, PadLayout::OneString, true)[0].1;
    assert_eq!((g.bow_force_n, g.bow_velocity_mps), (20.0, 0.2), "onofrei2021's ranges end at 20 N and 0.2 m/s");
}

#[test]
fn gesture_files_round_trip_and_bad_ones_say_where() {
    let mut recording = GestureRecording::default();
    recording.push(0.0, RecordedItem::Control { id: "pad_layout".into(), value: 1.0 });
    let g = LaneGesture { bow_down: true, bow_force_n: 4.5, bow_velocity_mps: -0.125, bow_position: 0.2, finger_position: Some(0.1), drum_bow_x: 0.3, drum_bow_y: 0.6 };
    recording.push(0.5, RecordedItem::Lane { lane: 2, gesture: g });
    recording.push(0.75, RecordedItem::Lane { lane: 2, gesture: g.lifted() });
    let text = recording.to_text();
    assert!(text.starts_with(HEADER));
    assert_eq!(GestureRecording::parse(&text).unwrap(), recording);

    let bad = |body: &str| GestureRecording::parse(&format!("{HEADER}\n{body}\n")).unwrap_err();
    assert!(bad("0.1 lane 7 down 1 0 0.2 - 0.5 0.5").contains("line 2"), "{}", bad("0.1 lane 7 down 1 0 0.2 - 0.5 0.5"));
    assert!(bad("0.1 lane 0 sideways 1 0 0.2 - 0.5 0.5").contains("'down' or 'up'"));
    assert!(bad("0.1 lane 0 down 1 0 0.2 - 0.5").contains("missing drum bow y"));
    assert!(bad("0.1 control no_such 1").contains("unknown control"));
    assert!(bad("0.5 control noise 0.01\n0.2 control noise 0.02").contains("backwards"));
    assert!(bad("0.1 lane 0 down NaN 0 0.2 - 0.5 0.5").contains("not finite"));
    assert!(GestureRecording::parse("rosin-gestures 99\n").unwrap_err().contains("unsupported"));
    assert!(GestureRecording::parse("hello").unwrap_err().contains("not a gesture file"));
    // Out-of-range values are clamped into their controls' ranges, never refused.
    let clamped = GestureRecording::parse(&format!("{HEADER}\n0 lane 0 down 99 -7 0.2 - 0.5 0.5\n")).unwrap();
    let RecordedItem::Lane { gesture, .. } = &clamped.items()[0].1 else { panic!() };
    assert_eq!((gesture.bow_force_n, gesture.bow_velocity_mps), (20.0, -0.5));
}

fn bowing(force_n: f64, velocity_mps: f64, finger: Option<f64>) -> LaneGesture {
    LaneGesture { bow_down: true, bow_force_n: force_n, bow_velocity_mps: velocity_mps, bow_position: 0.15, finger_position: finger, ..LaneGesture::default() }
}

fn render(engine: &mut Engine, seconds: f64) -> Vec<f32> {
    let mut out = vec![0.0f32; (seconds * engine.sample_rate_hz()) as usize];
    engine.render(&mut out);
    out
}

#[test]
fn a_pad_gesture_plays_a_string_with_no_midi_note_and_the_second_finger_sets_the_pitch() {
    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    engine.set_controls(&Controls::default());
    let mut frame = [LaneGesture::default(); LANES];
    frame[0] = bowing(5.0, 0.15, None);
    engine.set_gestures(&frame);
    let open = render(&mut engine, 1.5);
    let open_hz = fundamental_hz(&open[(0.7 * rate) as usize..], rate, midi_key_to_hz(LANE_OPEN_KEYS[0] as f64));
    assert!(cents(open_hz, 196.0).abs() < 5.0, "the pad string is an open G3: {open_hz:.2} Hz");

    frame[0] = bowing(5.0, 0.15, Some(0.25));
    engine.set_gestures(&frame);
    let stopped = render(&mut engine, 1.5);
    let stopped_hz = fundamental_hz(&stopped[(0.7 * rate) as usize..], rate, open_hz * 4.0 / 3.0);
    let expected_hz = open_hz / (1.0 - 0.25);
    eprintln!("pad string open {open_hz:.2} Hz, stopped at 1/4: {stopped_hz:.2} Hz (a fourth up is {expected_hz:.2})");
    assert!(cents(stopped_hz, expected_hz).abs() < 10.0, "stopping a quarter of the length raises a fourth");

    // Lifting the finger lifts the bow: the string rings out freely, decaying.
    frame[0] = frame[0].lifted();
    engine.set_gestures(&frame);
    let bowed = rms(&stopped[stopped.len() - 4800..]);
    let tail = render(&mut engine, 3.0);
    assert!(tail.iter().all(|s| s.is_finite()));
    assert!(engine.voices().iter().all(|v| !v.is_held()), "the bow is off");
    let windows: Vec<f64> = tail.chunks(24_000).map(rms).collect();
    eprintln!("ring-out RMS per 0.5 s after the lift, relative to bowing: {:?}", windows.iter().map(|w| format!("{:.3}", w / bowed)).collect::<Vec<_>>());
    assert!(windows.windows(2).all(|w| w[1] < 0.8 * w[0]), "the ring decays steadily: no stuck sound");
}

#[test]
fn four_lanes_sound_four_open_strings_at_once() {
    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    let mut controls = Controls::default();
    controls.pad_layout = 1.0;
    engine.set_controls(&controls);
    let frame = [bowing(4.0, 0.12, None); LANES];
    engine.set_gestures(&frame);
    let out = render(&mut engine, 0.5);
    assert!(rms(&out) > 1e-3);
    let mut keys: Vec<u8> = engine.voices().iter().filter(|v| v.is_held()).map(|v| v.note.note).collect();
    keys.sort();
    assert_eq!(keys, LANE_OPEN_KEYS.to_vec(), "G D A E");
    assert!(engine.voices().iter().filter(|v| v.is_held()).all(|v| v.note.channel >= PAD_CHANNEL));
    // MIDI note-offs with wildcards never reach the pad's voices.
    engine.handle_event(&NoteEvent::NoteOff { pattern: Default::default() });
    assert_eq!(engine.voices().iter().filter(|v| v.is_held()).count(), 4);
}

#[test]
fn with_a_midi_note_held_the_pad_bows_that_note_through_the_same_controls() {
    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    engine.set_controls(&Controls::default());
    engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(64), velocity: 1.0 });
    render(&mut engine, 0.3);
    let mut frame = [LaneGesture::default(); LANES];
    frame[0] = bowing(3.0, -0.2, None);
    engine.set_gestures(&frame);
    render(&mut engine, 0.1);
    let held: Vec<_> = engine.voices().iter().filter(|v| v.is_held()).collect();
    assert_eq!(held.len(), 1, "no extra pad voice");
    let applied = held[0].applied_controls();
    assert!((applied.bow_velocity_mps + 0.2).abs() < 1e-9 && (applied.normal_force_n - 3.0).abs() < 1e-9, "{applied:?}");
    // Lifting hands the bow back to the host's values.
    engine.set_gestures(&[LaneGesture::default(); LANES]);
    render(&mut engine, 0.1);
    let applied = *engine.voices().iter().find(|v| v.is_held()).unwrap().applied_controls();
    assert!((applied.bow_velocity_mps - Controls::default().bow_velocity_mps).abs() < 1e-9);
}

#[test]
fn a_pad_gesture_on_the_drum_bows_the_membrane_where_the_finger_is() {
    let rate = 44_100.0;
    let mut engine = Engine::new(rate);
    let mut controls = Controls::default();
    controls.instrument = 1.0;
    controls.drum_quality = 2.0;
    engine.set_controls(&controls);
    let mut frame = [LaneGesture::default(); LANES];
    frame[0] = LaneGesture { bow_down: true, bow_force_n: 12.0, bow_velocity_mps: 0.12, drum_bow_x: 0.3, drum_bow_y: 0.6, ..LaneGesture::default() };
    engine.set_gestures(&frame);
    let out = render(&mut engine, 1.0);
    assert!(rms(&out[(0.5 * rate) as usize..]) > 1e-3, "the drum sounds");
    let drum = engine.drum_voices().iter().find(|v| v.is_held()).expect("a pad drum voice");
    let side = drum.drum().design().membrane.side_m;
    assert!((drum.applied_controls().bow_x_m / side - 0.3).abs() < 1e-6);
    assert!((drum.applied_controls().bow_y_m / side - 0.6).abs() < 1e-6);
}

#[test]
fn the_bus_records_a_performance_that_replays_as_it_was_played() {
    use rosin_engine::controller::bus::{GestureBus, GestureSource};
    use rosin_engine::render::{render, Timeline};
    let bus = GestureBus::default();
    bus.write(0, &bowing(1.0, 0.05, None), GestureSource::Mouse);
    bus.start_recording(&[("instrument", 0.0), ("bow_attack", 50.0)]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    bus.write(0, &bowing(6.0, 0.2, Some(0.1)), GestureSource::Sensel);
    bus.write(1, &bowing(2.0, -0.1, None), GestureSource::Mouse);
    bus.write(0, &bowing(99.0, 0.2, None).lifted(), GestureSource::Sensel);
    bus.write(1, &bowing(3.0, 0.1, None), GestureSource::Replay);
    let recording = bus.stop_recording().expect("a recording");
    assert!(!bus.is_recording());
    let items = recording.items();
    assert_eq!(items[0].1, RecordedItem::Control { id: "instrument".into(), value: 0.0 });
    assert_eq!(items[1].1, RecordedItem::Control { id: "bow_attack".into(), value: 50.0 });
    let RecordedItem::Lane { lane: 0, gesture: held } = items[2].1 else { panic!("the lane already down when recording starts: {:?}", items[2]) };
    assert!(held.bow_down && (held.bow_velocity_mps - 0.05).abs() < 1e-6, "{held:?}");
    let lanes: Vec<_> = items.iter().filter_map(|(t, i)| match i { RecordedItem::Lane { lane, gesture } => Some((*t, *lane, *gesture)), _ => None }).collect();
    assert!(lanes[1].0 >= 0.019, "times run from the start: {}", lanes[1].0);
    assert_eq!(lanes[1].2.finger_position, Some(0.1));
    assert_eq!(lanes[3].2.bow_force_n, 20.0, "values are clamped into range as they are written");
    assert_eq!(lanes.len(), 4 + LANES, "replayed writes are not recorded again; every lane lifts at the end");
    assert!(lanes[4..].iter().all(|(_, _, g)| !g.bow_down));

    // Through text and back, then rendered: the same as the recording itself.
    let reparsed = GestureRecording::parse(&recording.to_text()).unwrap();
    let rate = 22_050.0;
    let mut timelines = [Timeline::default(), Timeline::default()];
    timelines[0].add_gestures(&recording, rate);
    timelines[1].add_gestures(&reparsed, rate);
    let outs: Vec<Vec<f32>> = timelines
        .iter()
        .map(|t| render(&mut Engine::new(rate), &mut Controls::default(), t, (0.5 * rate) as u64, 128))
        .collect();
    assert!(rms(&outs[0]) > 1e-3);
    let worst = outs[0].iter().zip(&outs[1]).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst < 1e-3, "the saved file replays the performance ({worst})");
}

/// A recording and the file it saves are the same performance to the last bit, whatever
/// times and values were played: the file's rounding is applied as the recording is made.
/// (Rounded in the file alone, a time could move an event across a sample, and the render
/// of the saved file differed from the recording's by up to 0.013 under a loaded machine.)
#[test]
fn a_recording_and_its_file_hold_the_same_times_and_values() {
    let mut recording = GestureRecording::default();
    let mut t = 0.0;
    for i in 0..200 {
        t += 0.000_123_456_789 * (1 + i % 7) as f64;
        let g = LaneGesture { bow_down: i % 5 != 0, bow_force_n: 3.141_592_653 + i as f64 * 0.017_3, bow_velocity_mps: -0.123_456_789, bow_position: 0.111_111_1, finger_position: (i % 3 == 0).then_some(0.333_333_33), drum_bow_x: 0.271_828, drum_bow_y: 0.577_215_66, ..LaneGesture::default() };
        recording.push(t, RecordedItem::Lane { lane: i % LANES, gesture: g });
    }
    let reparsed = GestureRecording::parse(&recording.to_text()).unwrap();
    assert_eq!(reparsed.items(), recording.items());
}

//! The Sensel reader through the real run-time loading path: a mock LibSensel (the
//! `sensel-mock` cdylib, exporting LibSensel's C symbols) is loaded by file, plays scripted
//! touches, and is unplugged and plugged again. Each test loads its own copy of the mock.
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

mod common;

use std::sync::Arc;

use common::{cents, fundamental_hz, mock_sensel_copy, rms, wait_for};
use rosin_engine::controller::bus::GestureBus;
use rosin_engine::controller::gesture::{PadLayout, LANE_OPEN_KEYS};
use rosin::sensel::{times_reported, PadSettings, ReaderConfig, SenselReader, SenselState};
use rosin_engine::controls::Controls;
use rosin_physics::string::tuning::midi_key_to_hz;
use rosin_engine::voices::Engine;
use sensel_sys::mock::MockControl;
use sensel_sys::{SenselContact, CONTACT_MOVE, CONTACT_START};

fn string_settings() -> Arc<dyn Fn() -> PadSettings + Send + Sync> {
    Arc::new(|| PadSettings { layout: PadLayout::OneString, drum: false })
}

fn reader(path: &std::path::Path, bus: &Arc<GestureBus>) -> SenselReader {
    SenselReader::spawn(ReaderConfig { library: Some(path.to_path_buf()) }, bus.clone(), string_settings())
}

fn contact(id: u8, first: bool, x_mm: f32, y_mm: f32, force_g: f32) -> SenselContact {
    SenselContact::touch(id, if first { CONTACT_START } else { CONTACT_MOVE }, x_mm, y_mm, force_g)
}

/// Queues a bowing finger moving down 0.6 mm a frame (at the reader's ~250 frames/s,
/// about 0.15 m/s) at 57.5 mm across, with an optional stopping finger.
fn push_stroke(mock: &MockControl, frames: usize, stop_x_mm: Option<f32>) {
    for i in 0..frames {
        let mut contacts = vec![contact(0, i == 0, 57.5, 10.0 + 0.6 * (i % 180) as f32, 500.0)];
        if let Some(x) = stop_x_mm {
            contacts.push(contact(1, i == 0, x, 60.0, 300.0));
        }
        mock.push_frame(&contacts);
    }
}

/// Renders `seconds` with the gestures held as `frame` (the bus as it stood at one moment):
/// the pad's velocity is measured on the reader's clock, so a bus read while the test
/// renders would make the sound depend on how busy the machine is.
fn render_frame(engine: &mut Engine, frame: &rosin_engine::controller::gesture::GestureFrame, seconds: f64) -> Vec<f32> {
    let mut out = vec![0.0f32; (seconds * engine.sample_rate_hz()) as usize];
    for block in out.chunks_mut(64) {
        engine.set_gestures(frame);
        engine.render(block);
    }
    out
}

/// Renders through the engine with the bus read every 64 samples, as the plugin does.
fn render(engine: &mut Engine, bus: &GestureBus, seconds: f64) -> Vec<f32> {
    let mut out = vec![0.0f32; (seconds * engine.sample_rate_hz()) as usize];
    for block in out.chunks_mut(64) {
        engine.set_gestures(&bus.read());
        engine.render(block);
    }
    out
}

fn connected(reader: &SenselReader) -> bool {
    matches!(reader.status().state(), SenselState::Connected { .. })
}

#[test]
fn pressure_and_motion_bow_the_string_and_the_second_finger_sets_the_pitch() {
    let path = mock_sensel_copy("bow");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    let bus = Arc::new(GestureBus::default());
    let reader = reader(&path, &bus);
    assert!(wait_for(10.0, || connected(&reader)), "the reader opens the mock pad: {}", reader.status().state());

    push_stroke(&mock, 2000, None);
    assert!(wait_for(10.0, || bus.lane(0).bow_down && bus.lane(0).bow_velocity_mps > 0.05), "the stroke reaches the bus: {:?}", bus.lane(0));
    let g = bus.lane(0);
    assert!((g.bow_force_n - 5.0).abs() < 1e-6, "500 g is 5 N: {g:?}");
    // The read rate is printed, not asserted (tests never time things).
    let (frames, start) = (reader.status().frames(), std::time::Instant::now());
    std::thread::sleep(std::time::Duration::from_millis(500));
    let rate_hz = (reader.status().frames() - frames) as f64 / start.elapsed().as_secs_f64();
    eprintln!("the reader took {rate_hz:.0} pad frames a second (one per read from the mock)");

    let rate = 48_000.0;
    let mut engine = Engine::new(rate);
    engine.set_controls(&Controls::default());
    let open = render_frame(&mut engine, &bus.read(), 1.2);
    let open_hz = fundamental_hz(&open[(0.5 * rate) as usize..], rate, midi_key_to_hz(LANE_OPEN_KEYS[0] as f64));
    assert!(rms(&open[(0.5 * rate) as usize..]) > 1e-2, "pressure and motion make the string sound");
    assert!(cents(open_hz, 196.0).abs() < 10.0, "an open G3: {open_hz:.2} Hz");

    // A second finger half-way across stops the string at a quarter of its length.
    push_stroke(&mock, 2000, Some(115.0));
    let stopping = || bus.lane(0).bow_velocity_mps > 0.05 && bus.lane(0).finger_position.is_some_and(|f| (f - 0.25).abs() < 1e-3);
    assert!(wait_for(10.0, stopping), "{:?}", bus.lane(0));
    let stopped = render_frame(&mut engine, &bus.read(), 1.2);
    let stopped_hz = fundamental_hz(&stopped[(0.5 * rate) as usize..], rate, open_hz * 4.0 / 3.0);
    eprintln!("through the mock Sensel: open {open_hz:.2} Hz, stopped at 1/4 {stopped_hz:.2} Hz");
    assert!(cents(stopped_hz, open_hz * 4.0 / 3.0).abs() < 12.0, "a fourth up: {stopped_hz:.2} Hz");
    drop(reader);
    assert!(wait_for(10.0, || mock.open_handles() == 0), "the reader closes the pad once its last instance goes");
}

#[test]
fn unplugging_mid_note_lifts_the_bow_and_plugging_in_again_reconnects() {
    let path = mock_sensel_copy("unplug");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    let bus = Arc::new(GestureBus::default());
    let reader = reader(&path, &bus);
    assert!(wait_for(10.0, || connected(&reader)));
    push_stroke(&mock, 5000, None);
    assert!(wait_for(10.0, || bus.lane(0).bow_down && bus.lane(0).bow_velocity_mps > 0.05));

    let rate = 44_100.0;
    let mut engine = Engine::new(rate);
    engine.set_controls(&Controls::default());
    let bowed = render(&mut engine, &bus, 1.0);
    let level = rms(&bowed[bowed.len() / 2..]);
    assert!(level > 1e-2);

    mock.set_plugged(false);
    assert!(wait_for(10.0, || !bus.lane(0).bow_down), "an unplugged pad lifts its bow");
    assert!(wait_for(10.0, || reader.status().state() == SenselState::Searching), "{}", reader.status().state());
    let tail = render(&mut engine, &bus, 3.0);
    assert!(tail.iter().all(|s| s.is_finite()), "no NaN");
    assert!(engine.voices().iter().all(|v| !v.is_held()), "the bow is off the string");
    let last = rms(&tail[tail.len() - 4410..]);
    eprintln!("unplugged mid-note: level {level:.4} -> {last:.6} after 3 s");
    assert!(last < 0.05 * level, "nothing sticks: the string rings down");

    // Hot-plug: the pad comes back and is opened again.
    mock.set_plugged(true);
    assert!(wait_for(10.0, || connected(&reader) && reader.status().connections() == 2), "{}", reader.status().state());
    drop(reader);
    assert!(wait_for(10.0, || mock.open_handles() == 0), "the reader closes the pad once its last instance goes");
}

#[test]
fn a_missing_library_or_one_without_the_symbols_is_no_sensel_logged_once() {
    let bus = Arc::new(GestureBus::default());
    let missing = std::env::temp_dir().join("rosin-no-such-dir/libsensel.so");
    let first = reader(&missing, &bus);
    let second = reader(&missing, &bus);
    let no_library = |r: &SenselReader| matches!(r.status().state(), SenselState::NoLibrary(_));
    assert!(wait_for(10.0, || no_library(&first) && no_library(&second)));
    let SenselState::NoLibrary(reason) = first.status().state() else { unreachable!() };
    assert!(reason.contains("not found") || reason.contains("rosin-no-such-dir"), "{reason}");
    assert_eq!(times_reported(&reason), 1, "logged once, not once per instance");
    drop((first, second));

    // A real library that is not LibSensel.
    let wrong = reader(std::path::Path::new("libm.so.6"), &bus);
    assert!(wait_for(10.0, || no_library(&wrong)));
    let SenselState::NoLibrary(reason) = wrong.status().state() else { unreachable!() };
    assert!(reason.contains("sensel"), "names the missing symbol: {reason}");
    drop(wrong);
}

#[test]
fn two_instances_share_one_pad_without_fighting() {
    let path = mock_sensel_copy("arbitration");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    let (bus_a, bus_b) = (Arc::new(GestureBus::default()), Arc::new(GestureBus::default()));
    let a = reader(&path, &bus_a);
    assert!(wait_for(10.0, || connected(&a)));
    let b = reader(&path, &bus_b);
    assert!(wait_for(10.0, || b.status().state() == SenselState::InUseElsewhere { owner: a.instance() }), "{}", b.status().state());
    assert_eq!(mock.open_handles(), 1, "one instance opens the pad");

    push_stroke(&mock, 5000, None);
    assert!(wait_for(10.0, || bus_a.lane(0).bow_down));
    assert!(!bus_b.lane(0).bow_down, "the waiting instance hears nothing");

    // The second takes over: the first lifts its bow and waits.
    b.take_over();
    assert!(wait_for(10.0, || connected(&b) && a.status().state() == SenselState::InUseElsewhere { owner: b.instance() }));
    assert!(wait_for(10.0, || !bus_a.lane(0).bow_down && bus_b.lane(0).bow_down));
    assert_eq!(mock.open_handles(), 1);

    // When the owner goes, the other takes the pad back.
    drop(b);
    assert!(wait_for(10.0, || connected(&a)), "{}", a.status().state());
    drop(a);
    assert!(wait_for(10.0, || mock.open_handles() == 0));
}

/// A panic in the reader (here, in the pad settings it reads every frame) is caught: the
/// pad is closed and given up, the bow it was playing lifts, the state says why, and a
/// restarted reader plays the pad again. The process-wide tables are not poisoned: another
/// instance's reader still claims and plays the pad.
#[test]
fn a_reader_that_panics_lets_go_of_the_pad_and_a_restart_plays_it_again() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let path = mock_sensel_copy("panic");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    let bus = Arc::new(GestureBus::default());
    let explode = Arc::new(AtomicBool::new(false));
    let fuse = explode.clone();
    let settings: Arc<dyn Fn() -> PadSettings + Send + Sync> = Arc::new(move || {
        assert!(!fuse.load(Ordering::Relaxed), "a bug in the pad settings");
        PadSettings { layout: PadLayout::OneString, drum: false }
    });
    let crashing = SenselReader::spawn(ReaderConfig { library: Some(path.clone()) }, bus.clone(), settings);
    assert!(wait_for(10.0, || connected(&crashing)));
    push_stroke(&mock, 3000, None);
    assert!(wait_for(10.0, || bus.lane(0).bow_down), "the pad bows");

    explode.store(true, Ordering::Relaxed);
    push_stroke(&mock, 3000, None);
    assert!(wait_for(10.0, || matches!(crashing.status().state(), SenselState::Crashed(_))), "{}", crashing.status().state());
    let SenselState::Crashed(why) = crashing.status().state() else { unreachable!() };
    assert!(why.contains("a bug in the pad settings"), "{why}");
    assert!(!bus.lane(0).bow_down, "the crashed reader's bow lifts");
    assert!(wait_for(10.0, || mock.open_handles() == 0), "the pad is closed");

    // Restarted (the editor's Restart drops the old reader and spawns a new one): it plays.
    drop(crashing);
    let restarted = reader(&path, &bus);
    assert!(wait_for(10.0, || connected(&restarted)), "{}", restarted.status().state());
    push_stroke(&mock, 3000, None);
    assert!(wait_for(10.0, || bus.lane(0).bow_down), "the restarted reader bows");
    drop(restarted);
    assert!(wait_for(10.0, || mock.open_handles() == 0));
}

/// Dropping a reader never holds up the host's thread: one inside a slow LibSensel call (a
/// pad that takes a second to open) is left to finish, and then closes the pad and ends.
/// Readers of one library share it, and its lock: through take-overs back and forth, with
/// every open slow, no two calls into LibSensel ever run at once.
#[test]
fn a_reader_opening_a_slow_pad_is_dropped_at_once_and_readers_share_one_library() {
    let path = mock_sensel_copy("slow");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    mock.set_open_delay_ms(1000);
    let bus = Arc::new(GestureBus::default());
    let slow = reader(&path, &bus);
    assert!(wait_for(10.0, || mock.calls_in_flight() == 1), "the reader is opening the pad");
    let start = std::time::Instant::now();
    drop(slow);
    let drop_ms = start.elapsed().as_secs_f64() * 1e3;
    eprintln!("dropping a reader inside a 1 s open took {drop_ms:.2} ms");
    assert!(drop_ms < 50.0, "dropping the reader waited {drop_ms:.0} ms");
    assert!(wait_for(10.0, || mock.calls_in_flight() == 0 && mock.open_handles() == 0), "the open returned and the pad was closed");

    mock.set_open_delay_ms(100);
    let (bus_a, bus_b) = (Arc::new(GestureBus::default()), Arc::new(GestureBus::default()));
    let a = reader(&path, &bus_a);
    assert!(wait_for(10.0, || connected(&a)));
    let b = reader(&path, &bus_b);
    assert!(wait_for(10.0, || matches!(b.status().state(), SenselState::InUseElsewhere { .. })));
    // One library, held by both readers (and by the owner's open pad).
    let holders = rosin::sensel::library_holders(&path);
    assert!(holders.len() == 1 && holders[0] >= 2, "two readers of one LibSensel share one library: {holders:?}");
    for round in 0..4 {
        let (to, from) = if round % 2 == 0 { (&b, &a) } else { (&a, &b) };
        to.take_over();
        assert!(wait_for(10.0, || connected(to) && matches!(from.status().state(), SenselState::InUseElsewhere { .. })), "round {round}");
    }
    drop((a, b));
    assert!(wait_for(10.0, || mock.open_handles() == 0));
    assert_eq!(mock.most_calls_at_once(), 1, "two readers called into LibSensel at once");
}

//! The Sensel reader inside the built plugin, through the CLAP ABI: the plugin loads a mock
//! LibSensel named by `ROSIN_SENSEL_LIB`, starts no reader for an instance a host only
//! scans, plays a pad performance with no MIDI note at all once activated, shares one
//! reader thread between instances, and stops it when the host destroys them, without waiting for a slow pad, even when the
//! host unloads the plugin at once. One test in its own binary, so
//! no other plugin instance in the process competes for the mock pad.
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

mod common;
#[path = "clap/host.rs"]
mod host;

use common::{mock_sensel_copy, rms, wait_for};
use host::*;
use sensel_sys::mock::MockControl;
use sensel_sys::{SenselContact, CONTACT_MOVE, CONTACT_START};

/// The Sensel reader threads running in this process (they are named `rosin-sensel-N`).
fn reader_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|tasks| tasks.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok()).filter(|name| name.starts_with("rosin-sensel")).count())
        .unwrap_or(0)
}

#[test]
fn a_pad_performance_plays_the_plugin_with_no_note_and_the_reader_ends_with_it() {
    let path = mock_sensel_copy("clap");
    // SAFETY: the path is the mock built from this workspace.
    let mock = unsafe { MockControl::open(&path) }.unwrap();
    // SAFETY: the only test in this binary; no other thread reads the environment yet.
    unsafe { std::env::set_var(sensel_sys::ENV_OVERRIDE, &path) };
    let library = ClapLibrary::load(&plugin_path());
    // A host's scan creates instances and drops them: that starts no reader and opens no pad.
    let scanned = ClapInstance::new(&library, "org.rosin.rosin");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(reader_threads(), 0, "an instance that was never activated started a Sensel reader");
    assert_eq!(mock.open_handles(), 0, "an instance that was never activated opened the pad");
    drop(scanned);
    let mut instance = ClapInstance::new(&library, "org.rosin.rosin");
    assert!(instance.activate(48_000.0, 512));
    assert_eq!(reader_threads(), 1, "activation starts the reader");
    assert!(wait_for(10.0, || mock.open_handles() == 1), "the plugin's reader opens the pad");

    // A finger bowing down the pad at about 0.15 m/s, pressing 500 g.
    for i in 0..5000 {
        let state = if i == 0 { CONTACT_START } else { CONTACT_MOVE };
        mock.push_frame(&[SenselContact { id: 0, state, x_pos: 50.0, y_pos: 10.0 + 0.6 * (i % 180) as f32, total_force: 500.0, ..Default::default() }]);
    }
    // Process like a host: a block, then a short wait, so the pad and audio move together.
    let mut out = Vec::new();
    let sounding = wait_for(20.0, || {
        let (left, _) = instance.process(512, &[]);
        assert!(left.iter().all(|s| s.is_finite()));
        out.extend_from_slice(&left);
        out.len() > 48_000 && rms(&out[out.len() - 24_000..]) > 1e-2
    });
    assert!(sounding, "the pad bows a string with no MIDI note (rms {:.5})", rms(&out[out.len().saturating_sub(24_000)..]));
    assert!(instance.note_ends.is_empty(), "pad voices are not reported as host notes");

    // A second instance joins the same reader: one thread and one open pad for the process.
    let mut second = ClapInstance::new(&library, "org.rosin.rosin");
    assert!(second.activate(48_000.0, 512));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(reader_threads(), 1, "a second instance started a second Sensel reader");
    assert_eq!(mock.open_handles(), 1, "the pad is opened once for the process");
    drop(second);
    drop(instance);
    assert!(wait_for(2.0, || mock.open_handles() == 0), "destroying the plugin stopped its reader");
    assert!(wait_for(2.0, || reader_threads() == 0), "and its thread is gone");
    assert_eq!(mock.live_frame_data(), 0, "and freed the frame buffers");

    // A pad that takes a second to open: destroying the instance meanwhile does not wait for
    // it, and the host may unload the plugin at once. The reader finishes the call in code
    // that is still mapped (the library is pinned), closes the pad and ends.
    mock.set_open_delay_ms(1000);
    let mut instance = ClapInstance::new(&library, "org.rosin.rosin");
    assert!(instance.activate(48_000.0, 512));
    assert!(wait_for(10.0, || mock.calls_in_flight() == 1), "the reader is opening the pad");
    let start = std::time::Instant::now();
    drop(instance);
    let destroy_ms = start.elapsed().as_secs_f64() * 1e3;
    println!("destroying an instance whose reader is opening the pad took {destroy_ms:.1} ms");
    assert!(destroy_ms < 100.0, "destroying the instance waited {destroy_ms:.0} ms for its reader");
    // The host unloads the plugin while the reader is inside the open. (On Linux a Rust
    // library is not unmapped by dlclose anyway, so this shows no crash here rather than
    // proving the pin; the pin is for the systems that do unmap.)
    drop(library);
    assert!(wait_for(10.0, || reader_threads() == 0), "the reader ends once the open returns");
    assert!(wait_for(2.0, || mock.open_handles() == 0), "and closes the pad it opened");
    assert_eq!(mock.most_calls_at_once(), 1, "two calls into LibSensel ran at once");
}

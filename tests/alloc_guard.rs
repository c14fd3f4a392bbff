//! The allocation guard is armed where the tests rely on it: an allocation inside
//! `assert_no_alloc` aborts a test binary that checks the engine's audio path, and an
//! allocation inside the plugin's `process()` aborts the host in the test build (built with
//! `assert_process_allocs`). Each is provoked in a child process, which must die with the
//! guard's message.

#[path = "common/alloc_guard.rs"]
mod alloc_guard;
mod common;

/// What the child prints when the guard stops it: the guard refuses the allocation, and the
/// standard library's allocation-error handler aborts with this.
const GUARD_MESSAGE: &str = "memory allocation of 64 bytes failed";

/// Runs this test binary's test `name` in a child process with `env` set; returns whether
/// it exited normally (not killed by a signal, as an abort does) and what it printed to
/// stderr.
fn child(name: &str, env: (&str, &str)) -> (bool, String) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .output()
        .unwrap();
    (output.status.code().is_some(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_allocation_inside_assert_no_alloc_aborts_an_engine_test() {
    if std::env::var_os("ROSIN_ALLOC_GUARD_CHILD").is_some() {
        // In the child: this must never return.
        let v = nice_assert_no_alloc::assert_no_alloc(|| std::hint::black_box(Vec::<u8>::with_capacity(64)));
        drop(v);
        return;
    }
    let (exited, stderr) = child("an_allocation_inside_assert_no_alloc_aborts_an_engine_test", ("ROSIN_ALLOC_GUARD_CHILD", "1"));
    assert!(!exited && stderr.contains(GUARD_MESSAGE), "the allocation was not caught: {stderr}");
    // Rendering the engine under the same guard allocates nothing (robustness.rs plays storms
    // this way).
    let mut engine = rosin_engine::voices::Engine::new(48_000.0);
    engine.handle_event(&rosin_engine::voices::NoteEvent::NoteOn { note: common::note_id(57), velocity: 0.8 });
    let mut buffer = vec![0.0f32; 4800];
    nice_assert_no_alloc::assert_no_alloc(|| engine.render(&mut buffer));
}

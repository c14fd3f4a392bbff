//! The test build's allocation guard is armed in the plugin: the library the tests load is
//! built with `assert_process_allocs`, and an allocation inside `process()` aborts the host.
//! A debug build allocates there on purpose when `ROSIN_TEST_ALLOCATE_IN_PROCESS` is set at
//! activation; the host runs in a child process, which must die with the guard's message,
//! and plays normally without it.
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

mod common;
#[path = "clap/host.rs"]
mod host;

use host::*;

fn play_in_a_child(allocate: bool) -> (bool, String) {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "an_allocation_in_process_aborts_the_host", "--nocapture", "--test-threads=1"]).env("ROSIN_ALLOC_GUARD_CHILD", "1");
    if allocate {
        command.env("ROSIN_TEST_ALLOCATE_IN_PROCESS", "1");
    } else {
        command.env_remove("ROSIN_TEST_ALLOCATE_IN_PROCESS");
    }
    let output = command.output().unwrap();
    // An abort ends the child by a signal: no exit code.
    (output.status.code() == Some(0), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_allocation_in_process_aborts_the_host() {
    if std::env::var_os("ROSIN_ALLOC_GUARD_CHILD").is_some() {
        let library = ClapLibrary::load(&plugin_path());
        let mut instance = ClapInstance::new(&library, "org.rosin.rosin");
        assert!(instance.activate(48_000.0, 256));
        instance.process(256, &[(0, HostEvent::NoteOnAt { channel: 0, key: 57, velocity: 0.8, note_id: -1 })]);
        return;
    }
    let (played, stderr) = play_in_a_child(false);
    assert!(played, "the host did not play without the allocation: {stderr}");
    let (played, stderr) = play_in_a_child(true);
    assert!(!played && stderr.contains("memory allocation of 64 bytes failed"), "an allocation in process() was not caught: {stderr}");
}

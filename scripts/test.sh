#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds once (debug assertions on, with
# allocation checks in the audio path), checks that the benches compile, runs the VST3
# host test and every Rust test, then opens the editor under Xvfb and checks what it draws.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_rust
ensure_packages "${SYSTEM_PACKAGES[@]}"
python=$(python_env)

features=(--features rosin/assert_process_allocs)

say "Building the plugin bundles (the same build the tests use)"
cargo xtask bundle rosin --features assert_process_allocs

say "Checking that the benches compile (they run with 'cargo bench', not here)"
cargo test -p rosin "${features[@]}" --benches --no-run --quiet

say "VST3 through a real host (pedalboard)"
"$python" tests/vst3_host.py target/bundled/Rosin.vst3

say "Building the mock LibSensel the Sensel tests load at run time"
cargo build --quiet -p sensel-mock

say "Rust tests: physics, engine, gestures, Sensel, editor logic, robustness, CLAP ABI"
cargo test -p rosin -p sensel-sys -p sensel-mock "${features[@]}"

say "The editor in the standalone build under Xvfb: a screenshot of each view"
scripts/screenshots.sh --check

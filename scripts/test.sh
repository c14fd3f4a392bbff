#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds once (debug assertions on, with
# allocation checks in the audio path), checks that the benches compile, runs the VST3
# host test and every Rust test, then opens the editor under Xvfb and checks what it draws.
#
#   scripts/test.sh           everything (what CI runs)
#   scripts/test.sh --quick   the physics, engine and lab tests only: no bundle, no Xvfb,
#                             no plugin framework to compile
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_rust

case "${1:-}" in
    --quick)
        ensure_packages build-essential
        say "Quick tier: physics, engine and lab tests (no plugin, no bundle, no Xvfb)"
        cargo build --quiet -p rosin-engine -p rosin-lab --bins
        exec cargo test -p rosin-physics -p rosin-engine -p rosin-lab -p rosin-tests --no-default-features
        ;;
    "") ;;
    *)
        echo "usage: scripts/test.sh [--quick]" >&2
        exit 2
        ;;
esac

ensure_packages "${SYSTEM_PACKAGES[@]}"
python=$(python_env)

# One feature set for every step, so that each step reuses what the one before built.
features=(--features rosin/assert_process_allocs)

say "Building the plugin bundles (the same build the tests use)"
cargo xtask bundle rosin --features assert_process_allocs

say "Building the workspace's programs and tests, and checking that the benches compile"
cargo build --quiet --workspace --exclude xtask --bins "${features[@]}"
cargo build --quiet -p sensel-mock
cargo test --quiet --workspace --exclude xtask "${features[@]}" --benches --tests --no-run

say "VST3 through a real host (pedalboard)"
"$python" tests/vst3_host.py target/bundled/Rosin.vst3

say "Rust tests: architecture, physics, engine, gestures, Sensel, editor logic, robustness, CLAP ABI"
cargo test --workspace --exclude xtask "${features[@]}"

say "The editor in the standalone build under Xvfb: a screenshot of each view"
scripts/screenshots.sh --check

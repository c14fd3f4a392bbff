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
        # The phrase tests' long renders (a few minutes of audio) run in the full command.
        exec cargo test -p rosin-physics -p rosin-engine -p rosin-lab -p rosin-tests --no-default-features -- \
            --skip legato_scales --skip single_notes_across_the_range --skip every_preset_peaks_below_full_scale
        ;;
    "") ;;
    *)
        echo "usage: scripts/test.sh [--quick]" >&2
        exit 2
        ;;
esac

ensure_packages "${SYSTEM_PACKAGES[@]}" "${SCREENSHOT_PACKAGES[@]}"
python=$(python_env)

# One build serves every step: the programs (rosin-render, rosin-lab, the standalone
# editor), the plugin library, every test and the benches' check, all with one feature
# set, so nothing is compiled twice. The benches' package is in it although no test runs
# from it: cargo unifies the features of every dependency over the packages it is given,
# and checking the benches alone (`-p rosin-benches`) turned serde's `alloc` feature on
# for that check only (criterion's dependencies want it), so serde and some 30 crates
# built on it, egui and nice-plug among them, were compiled a second time (5 minutes).
# The allocation guard checks the audio path; the standalone feature only adds the
# standalone wrapper, which the plugin never calls.
build=(--workspace --exclude xtask --features rosin/assert_process_allocs,rosin/standalone)

say "Building the programs, the plugin and the tests (one build)"
cargo build --quiet "${build[@]}" --bins --tests

say "Bundling that plugin library as target/bundled/Rosin.clap and Rosin.vst3"
library=target/debug/deps/librosin.so
[ -f "$library" ] || { echo "$library was not built" >&2; exit 1; }
rm -rf target/bundled/Rosin.clap target/bundled/Rosin.vst3
mkdir -p target/bundled/Rosin.vst3/Contents/x86_64-linux
cp "$library" target/bundled/Rosin.clap
cp "$library" target/bundled/Rosin.vst3/Contents/x86_64-linux/Rosin.so

say "Checking that the benches compile (they run with 'cargo bench', not here)"
cargo test --quiet "${build[@]}" --benches --no-run

say "VST3 through a real host (pedalboard)"
"$python" tests/vst3_host.py target/bundled/Rosin.vst3

say "Building the mock LibSensel the Sensel tests load at run time"
cargo build --quiet -p sensel-mock

say "Rust tests: architecture, physics, engine, phrases, gestures, Sensel, editor logic, robustness, CLAP ABI"
cargo test "${build[@]}"

say "The editor in the standalone build under Xvfb: a screenshot of each view"
ROSIN_STANDALONE=target/debug/rosin-standalone scripts/screenshots.sh --check

#!/usr/bin/env bash
# Instructions per voice-sample, counted by callgrind (stable on a noisy machine, unlike
# time): the release rosin-render plays held notes at the default controls at 48 kHz, once
# for SHORT and once for LONG seconds, and the difference of the two counts is divided by
# the extra samples (and voices), so that start-up, preset loading and file writing cancel.
#
#   scripts/instructions.sh            a lone G3, 16 voices (C3 to G5, every whole tone),
#                                      64 voices (MIDI 36 to 96, `--voices 64`),
#                                      eight ribbon voices, the friction drum at each
#                                      resolution, then silence after a note in every
#                                      play mode
#   ROSIN_RENDER=path scripts/instructions.sh   counts another build's binary
#   scripts/instructions.sh --profile [KEY...]  where they go: the same difference for
#                                      each function and each source file (code inlined
#                                      from a file counts in that file), per voice-sample,
#                                      for KEY... held (MIDI numbers; the 16 voices when
#                                      none), with RENDER_OPTIONS passed on to the render
#                                      (`--set instrument=1` for the drum); TOP=n rows
#   scripts/instructions.sh --time [KEY...]     where the time goes on this machine's own
#                                      paths: the time a voice-sample (the difference of
#                                      two renders, as above), then perf's cpu-clock
#                                      samples of one render of KEY... held for HELD_S
#                                      seconds (8 by default), each function's share of
#                                      the time. The set-up (about a second, most of it
#                                      the drum's modes) is in the shares: hold many keys
#                                      or long. TOP=n rows. Needs perf (Debian's
#                                      `linux-perf`)
#
# Valgrind hides AVX-512 from the program it runs, so `multiversion` takes its AVX2 clones
# here: the counts are the AVX2 paths' on any machine (docs/performance.md, *What callgrind
# counts*). `--time` runs the paths the machine itself takes.
#
# Needs valgrind (Debian's `valgrind` package; installed when missing, as scripts/test.sh
# installs what it needs). Takes about half an hour: the held notes about 6 minutes, the
# ring-outs of the silence cases the rest; a profile about two, and its build with line
# tables (in target/profile) a few more the first time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

profile=false
timed=false
if [ "${1:-}" = "--profile" ]; then
    profile=true
    shift
elif [ "${1:-}" = "--time" ]; then
    timed=true
    shift
fi
if $timed; then
    command -v perf >/dev/null || ensure_packages linux-perf
    ensure_packages python3
else
    ensure_packages valgrind python3
fi
render=${ROSIN_RENDER:-}
if [ -z "$render" ] && { $profile || $timed; }; then
    # Line tables name the source of each instruction, inlined or not; the code is the
    # release build's.
    CARGO_TARGET_DIR=target/profile CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        cargo build --release --quiet -p rosin-engine --bin rosin-render
    render=target/profile/release/rosin-render
elif [ -z "$render" ]; then
    cargo build --release --quiet -p rosin-engine --bin rosin-render
    render=target/release/rosin-render
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
readonly SHORT_S=0.25 LONG_S=1.25 RATE_HZ=48000

# A MIDI file (format 0, 960 ticks a second) holding KEYS from 0 to SECONDS at velocity 90.
# A key listed again is played on the next channel, so that it sounds twice.
midi() {
    python3 - "$@" <<'EOF'
import struct, sys
path, seconds, keys = sys.argv[1], float(sys.argv[2]), [int(k) for k in sys.argv[3:]]
def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(reversed(out))
channels = [keys[:i].count(k) for i, k in enumerate(keys)]
track = b"".join(vlq(0) + bytes([0x90 | c, k, 90]) for k, c in zip(keys, channels))
track += b"".join(vlq(int(seconds * 960) if i == 0 else 0) + bytes([0x80 | c, k, 0]) for i, (k, c) in enumerate(zip(keys, channels)))
track += vlq(0) + b"\xff\x2f\x00"
with open(path, "wb") as f:
    f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)
EOF
}

# Renders the notes of $work/notes.mid, then TAIL seconds more (0 unless set), with the
# options in RENDER_OPTIONS, under the command given first (valgrind, perf, or none).
render_notes() {
    # shellcheck disable=SC2086
    "$@" "$render" "$work/notes.mid" --tail "${TAIL:-0}" --sample-rate $RATE_HZ ${RENDER_OPTIONS:-} \
        -o "$work/out.wav" >/dev/null 2>&1
}

# Instructions for rendering KEYS held for SECONDS, then TAIL seconds more (0 unless set),
# with the options in RENDER_OPTIONS.
count() {
    local seconds=$1
    shift
    midi "$work/notes.mid" "$seconds" "$@"
    render_notes valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out"
    sed -n 's/^summary: //p; s/^totals: //p' "$work/callgrind.out" | head -1
}

# Prints where the instructions of KEYS held go: callgrind's self cost of each function
# and of each source file, the LONG_S render's less the SHORT_S one's, per voice-sample.
profile_keys() {
    count $SHORT_S "$@" >/dev/null
    mv "$work/callgrind.out" "$work/short.out"
    count $LONG_S "$@" >/dev/null
    mv "$work/callgrind.out" "$work/long.out"
    python3 - "$work/short.out" "$work/long.out" "$(python3 -c "print(($LONG_S - $SHORT_S) * $RATE_HZ * $#)")" "${TOP:-25}" <<'EOF'
import collections, os, re, sys

def self_costs(path):
    """Self cost (the first event, instructions) of each (function, source file) in a
    callgrind file: a cost line counts for the function of the last `fn=` and the file of
    the last `fi=` or `fe=` (code inlined from it) since then, else of the last `fl=`; the
    line after `calls=` is a call's inclusive cost. The cost follows the `positions:`."""
    names, costs = {}, collections.Counter()
    function = source = file = None
    after_call = False
    positions = 1

    def name(space, text):
        # Compressed names: `(id) name` the first time, `(id)` after.
        m = re.fullmatch(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2) is not None:
            names[(space, m.group(1))] = m.group(2)
        return names.get((space, m.group(1)), text)

    for line in open(path):
        line = line.rstrip("\n")
        key, _, value = line.partition("=")
        if line.startswith("positions:"):
            positions = len(line.split()) - 1
        elif key == "fl":
            file = source = name("file", value)
        elif key in ("fi", "fe"):
            source = name("file", value)
        elif key == "fn":
            function = name("fn", value)
            source = file
        elif key in ("cfl", "cfi"):
            name("file", value)
        elif key == "cfn":
            name("fn", value)
        elif key in ("ob", "cob"):
            name("ob", value)
        elif key == "calls":
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
                continue
            fields = line.split()
            if len(fields) > positions:
                costs[(function, source)] += int(fields[positions])
    return costs

def short_path(path):
    """A source path without the machine's prefixes: the workspace's own relative, the
    standard library's from `std/`, a dependency's from `crates.io/`."""
    if path is None:
        return "?"
    path = os.path.normpath(path)
    path = re.sub(r"^.*/rustc/[0-9a-f]+/library/", "std/", path)
    path = re.sub(r"^.*/registry/src/[^/]+/", "crates.io/", path)
    return os.path.relpath(path) if path.startswith(os.getcwd() + "/") else path

short, long = self_costs(sys.argv[1]), self_costs(sys.argv[2])
voice_samples, top = float(sys.argv[3]), int(sys.argv[4])
difference = collections.Counter({k: (long[k] - short[k]) / voice_samples for k in set(long) | set(short)})
print(f"{sum(difference.values()):,.0f} instructions a voice-sample in all")
for title, group in (("function", 0), ("source file", 1)):
    totals = collections.Counter()
    for key, cost in difference.items():
        totals[(key[0] or "?") if group == 0 else short_path(key[1])] += cost
    print(f"\nBy {title} (self cost, a voice-sample):")
    for what, cost in totals.most_common(top):
        print(f"{cost:9,.1f}  {what}")
EOF
}

# Seconds of wall time to render KEYS held for SECONDS (the MIDI file is left for perf).
wall_time() {
    local seconds=$1 start end
    shift
    midi "$work/notes.mid" "$seconds" "$@"
    start=$(date +%s.%N)
    render_notes
    end=$(date +%s.%N)
    python3 -c "print($end - $start)"
}

# Prints each function's share of the time of one render of KEYS held for HELD_S seconds,
# from perf's samples of the CPU clock (user space; no hardware counters needed), and the
# render's time a voice-sample.
time_keys() {
    local seconds=${HELD_S:-8} short long
    short=$(wall_time $SHORT_S "$@")
    long=$(wall_time "$seconds" "$@")
    python3 -c "print(f'{($long - $short) * 1e9 / (($seconds - $SHORT_S) * $RATE_HZ * $#):,.0f} ns a voice-sample (the difference of a {$SHORT_S} s and a {$seconds} s render)')"
    render_notes perf record -q -e cpu-clock:u -F 4000 -o "$work/perf.data"
    perf report -i "$work/perf.data" --no-children --sort symbol --stdio 2>/dev/null | python3 -c '
import re, sys
top = int(sys.argv[1])
rows = []
for line in sys.stdin:
    m = re.match(r"\s*([0-9.]+)%\s+\[\.\]\s+(.*?)\s*$", line)
    if m:
        # Less the empty columns; a multiversion clone named by its widest feature.
        name = re.sub(r"(\s+-)+$", "", m.group(2))
        name = re.sub(r"_(avx2|avx512)[a-z0-9_]*_version$", lambda c: " (" + ("AVX-512" if "avx512" in c.group(0) else "AVX2") + " clone)", name)
        rows.append((float(m.group(1)), name))
print("\nBy function (share of the time):")
for share, name in rows[:top]:
    print(f"{share:6.1f} %  {name}")
' "${TOP:-25}"
}

if $profile || $timed; then
    keys=("$@")
    [ ${#keys[@]} -gt 0 ] || keys=($(seq 48 2 78))
    if $timed; then
        say "timing keys ${keys[*]} with perf (${HELD_S:-8} s held at $RATE_HZ Hz)"
        time_keys "${keys[@]}"
    else
        say "profiling keys ${keys[*]} with callgrind (${SHORT_S} s and ${LONG_S} s renders at $RATE_HZ Hz)"
        profile_keys "${keys[@]}"
    fi
    exit 0
fi

# Prints instructions per sample of silence: a 1 s G3, its ring-out (down to -100 dB within
# about 9 s, so 11 s are allowed), then 10 s more of nothing: the difference of a 21 s and
# an 11 s tail.
silence() {
    local name=$1 short long
    RENDER_OPTIONS=$2
    short=$(TAIL=11 count 1 55)
    long=$(TAIL=21 count 1 55)
    RENDER_OPTIONS=
    python3 -c "print(f'silence after a note, $name: {($long - $short) / (10 * $RATE_HZ):,.1f} instructions per sample')"
}

# Prints instructions per voice-sample for KEYS.
per_voice_sample() {
    local name=$1
    shift
    local short long
    short=$(count $SHORT_S "$@")
    long=$(count $LONG_S "$@")
    python3 -c "
short, long, voices = $short, $long, $#
samples = ($LONG_S - $SHORT_S) * $RATE_HZ
print(f'$name: {(long - short) / samples:,.0f} instructions per sample, {(long - short) / samples / voices:,.0f} per voice-sample')"
}

say "counting with callgrind (${SHORT_S} s and ${LONG_S} s renders at $RATE_HZ Hz)"
per_voice_sample "one voice, G3 (body and mix included)" 55
per_voice_sample "16 voices, C3 to G5 every whole tone" $(seq 48 2 78)
# Issue 16's sixty-four, in one engine of sixty-four (the bench's case).
RENDER_OPTIONS="--voices 64"
per_voice_sample "64 voices, MIDI 36 to 96 evenly (one engine)" $(python3 -c "print(*[36 + (60 * i + 31) // 63 for i in range(64)])")
RENDER_OPTIONS="--set bow_model=1"
per_voice_sample "8 ribbon-bow voices (M = 4, torsion), C3 E3 G3 C4 E4 G4 C5 E5" 48 52 55 60 64 67 72 76
for quality in 0 1 2; do
    RENDER_OPTIONS="--set instrument=1 --set drum_quality=$quality"
    per_voice_sample "friction drum, C4, Drum Resolution $quality (0 Full, 1 Half, 2 Paper)" 60
done
RENDER_OPTIONS=
silence "Poly (default)" ""
silence "Four Strings (Violin)" "--preset Violin"
silence "Mono Legato" "--set play_mode=2"
silence "friction drum (Cuica)" "--preset Cuica"

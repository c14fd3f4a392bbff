#!/usr/bin/env bash
# Instructions per voice-sample, counted by callgrind (stable on a noisy machine, unlike
# time): the release rosin-render plays held notes at the default controls at 48 kHz, once
# for SHORT and once for LONG seconds, and the difference of the two counts is divided by
# the extra samples (and voices), so that start-up, preset loading and file writing cancel.
#
#   scripts/instructions.sh            16 voices (C3 to G5, every whole tone), a lone G3,
#                                      eight ribbon voices, the friction drum at each
#                                      resolution, then silence after a note in every
#                                      play mode
#   ROSIN_RENDER=path scripts/instructions.sh   counts another build's binary
#
# Needs valgrind (Debian's `valgrind` package; installed when missing, as scripts/test.sh
# installs what it needs). Takes about ten minutes, most of it the ring-outs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_packages valgrind python3
render=${ROSIN_RENDER:-}
if [ -z "$render" ]; then
    cargo build --release --quiet -p rosin-engine --bin rosin-render
    render=target/release/rosin-render
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
readonly SHORT_S=0.25 LONG_S=1.25 RATE_HZ=48000

# A MIDI file (format 0, 960 ticks a second) holding KEYS from 0 to SECONDS at velocity 90.
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
track = b"".join(vlq(0) + bytes([0x90, k, 90]) for k in keys)
track += b"".join(vlq(int(seconds * 960) if i == 0 else 0) + bytes([0x80, k, 0]) for i, k in enumerate(keys))
track += vlq(0) + b"\xff\x2f\x00"
with open(path, "wb") as f:
    f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)
EOF
}

# Instructions for rendering KEYS held for SECONDS, then TAIL seconds more (0 unless set),
# with the options in RENDER_OPTIONS.
count() {
    local seconds=$1
    shift
    midi "$work/notes.mid" "$seconds" "$@"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$render" "$work/notes.mid" \
        --tail "${TAIL:-0}" --sample-rate $RATE_HZ ${RENDER_OPTIONS:-} -o "$work/out.wav" >/dev/null 2>&1
    sed -n 's/^summary: //p; s/^totals: //p' "$work/callgrind.out" | head -1
}

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

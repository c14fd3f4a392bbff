#!/usr/bin/env bash
# Null test: renders the demo phrase with the default controls, with every factory preset,
# with each friction law, on the waveguide engine and with the ribbon bow, and compares
# the WAV files with those of another build, sample by sample.
#
#   scripts/null-test.sh render DIR          render the phrases of this tree into DIR
#   scripts/null-test.sh compare REF NEW     print the difference of each pair of files:
#                                            its peak, and its power against REF's
#
# To compare two revisions: check out the first, `render /tmp/a`; check out the second,
# `render /tmp/b`; then `compare /tmp/a /tmp/b`. ROSIN_RENDER=path/to/rosin-render renders
# with a binary already built (for example one from an older revision) instead of this
# tree's. `compare` exits non-zero when any file differs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
    sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

render() {
    local dir=$1 render=${ROSIN_RENDER:-}
    if [ -z "$render" ]; then
        cargo build --release --quiet -p rosin-engine --bin rosin-render
        render=target/release/rosin-render
    fi
    mkdir -p "$dir"
    "$render" --output "$dir/demo-default.wav" 2>/dev/null
    "$render" --list-presets | cut -c1-28 | sed 's/ *$//' | while read -r preset; do
        "$render" --preset "$preset" --output "$dir/demo-${preset// /-}.wav" 2>/dev/null
    done
    # The other friction laws, and the waveguide engine.
    for model in 1 2 3; do
        "$render" --set friction_model=$model --output "$dir/demo-friction-model-$model.wav" 2>/dev/null
    done
    "$render" --set string_engine=1 --output "$dir/demo-waveguide.wav" 2>/dev/null
    # The ribbon bow: four points with torsion (its defaults), and two without.
    "$render" --set bow_model=1 --output "$dir/demo-ribbon.wav" 2>/dev/null
    "$render" --set bow_model=1 --set bow_width=1 --set bow_torsion=0 --output "$dir/demo-ribbon-two-points.wav" 2>/dev/null
    echo "rendered $(ls "$dir"/*.wav | wc -l) files into $dir" >&2
}

compare() {
    python3 - "$1" "$2" <<'EOF'
import math, os, struct, sys

def samples(path):
    data = open(path, "rb").read()
    pos, fmt, body = 12, None, None
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if tag == b"fmt ":
            fmt = list(struct.unpack("<HHIIHH", data[pos + 8:pos + 24]))
            if fmt[0] == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: the format is the sub-format's
                fmt[0] = struct.unpack("<H", data[pos + 32:pos + 34])[0]
        elif tag == b"data":
            body = data[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    if fmt is None or body is None or fmt[0] != 3 or fmt[5] != 32:
        sys.exit(f"{path}: not a 32-bit float WAV")
    return struct.unpack(f"<{len(body) // 4}f", body)

ref_dir, new_dir = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(ref_dir) if n.endswith(".wav"))
if not names:
    sys.exit(f"no WAV files in {ref_dir}")
different = 0
for name in names:
    a = samples(os.path.join(ref_dir, name))
    b_path = os.path.join(new_dir, name)
    if not os.path.exists(b_path):
        print(f"{name:<44} missing in {new_dir}")
        different += 1
        continue
    b = samples(b_path)
    if len(a) != len(b):
        print(f"{name:<44} lengths differ: {len(a)} and {len(b)} samples")
        different += 1
        continue
    peak = max(abs(x - y) for x, y in zip(a, b))
    level = "bit-identical" if peak == 0.0 else f"difference peaks at {20 * math.log10(peak):.1f} dBFS"
    if peak != 0.0:
        # The difference's power against the reference's: how far under the sound it lies.
        signal = sum(x * x for x in a)
        noise = sum((x - y) ** 2 for x, y in zip(a, b))
        level += f", {10 * math.log10(noise / signal):.1f} dB of the signal" if signal > 0.0 else ""
    different += peak != 0.0
    print(f"{name:<44} {len(a) // 2:>8} frames  {level}")
print(f"{len(names) - different} of {len(names)} files bit-identical")
sys.exit(1 if different else 0)
EOF
}

case "${1:-}" in
    render) [ $# -eq 2 ] || usage; render "$2" ;;
    compare) [ $# -eq 3 ] || usage; compare "$2" "$3" ;;
    *) usage ;;
esac

#!/usr/bin/env bash
# Renders the README's sound examples: one short phrase per preset family, written as MIDI
# files (docs/sounds/*.mid), played by rosin-render from a factory preset, and encoded as
# Opus (docs/sounds/*.opus, a few tens of kB each).
#
#   scripts/sound-examples.sh          renders every example
#   scripts/sound-examples.sh NAME     renders one (violin, cello, steel-string, rummelpot,
#                                      cuica, ghost-cello)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_rust
ensure_packages build-essential opus-tools python3-venv
python=$(python_env)

out=docs/sounds
mkdir -p "$out" target/sounds

# name | preset | what is played (each note: key, start and length in beats; velocity;
# the mod wheel's vibrato from 0 to 127 over the phrase)
"$python" - "$out" <<'EOF'
import sys
import mido

out = sys.argv[1]
TICKS = 480  # per beat

def phrase(name, bpm, notes, velocity=90, wheel=(0, 0), pressure=None):
    """notes: (key, start_beat, length_beats). The mod wheel glides from wheel[0] to
    wheel[1] over the phrase; pressure, if given, is channel pressure the same way."""
    events = []
    end = max(start + length for _, start, length in notes)
    steps = int(end * 4)
    for i in range(steps + 1):
        t = end * i / steps
        w = round(wheel[0] + (wheel[1] - wheel[0]) * i / steps)
        events.append((t, 0, mido.Message('control_change', control=1, value=w)))
        if pressure:
            p = round(pressure[0] + (pressure[1] - pressure[0]) * i / steps)
            events.append((t, 0, mido.Message('aftertouch', value=p)))
    for key, start, length in notes:
        # Note-offs sort before note-ons at the same time: a DAW's legato.
        events.append((start + length, 1, mido.Message('note_off', note=key, velocity=0)))
        events.append((start, 2, mido.Message('note_on', note=key, velocity=velocity)))
    events.sort(key=lambda e: (e[0], e[1]))
    track = mido.MidiTrack()
    track.append(mido.MetaMessage('set_tempo', tempo=mido.bpm2tempo(bpm)))
    now = 0
    for t, _, message in events:
        tick = round(t * TICKS)
        track.append(message.copy(time=tick - now))
        now = tick
    f = mido.MidiFile(ticks_per_beat=TICKS)
    f.tracks.append(track)
    f.save(f"{out}/{name}.mid")

def line(keys, beats, start=0.0):
    """A legato line: each key for its number of beats, one after another."""
    notes, t = [], start
    for key, b in zip(keys, beats):
        notes.append((key, t, b))
        t += b
    return notes

# Violin: a legato line over two strings, crossing and sliding, the vibrato coming in.
phrase("violin", 72, line([67, 69, 71, 72, 74, 76, 74, 79, 78, 76, 74], [1, 0.5, 0.5, 1, 1, 1.5, 0.5, 2, 1, 1, 3]), 90, (0, 90))
# Cello: low and slow, an open C, an arpeggio, a held top note.
phrase("cello", 60, line([36, 43, 48, 52, 55, 52, 50, 48], [2, 1, 1, 1, 2, 1, 1, 3]), 85, (20, 80))
# The Willemsen 2019 steel string as published: single bowed notes.
phrase("steel-string", 66, [(55, 0, 2), (62, 2.5, 2), (59, 5, 1.5), (67, 7, 1), (55, 8.5, 3)], 90)
# Rummelpot: a grunting pulse over its range.
phrase("rummelpot", 96, line([46, 46, 49, 46, 51, 49, 46, 54, 51, 46], [1, 0.5, 0.5, 1, 1, 0.5, 0.5, 1, 1, 2]), 100)
# Cuica: a high, wavering call and answer.
phrase("cuica", 100, line([58, 61, 63, 61, 58, 60, 61, 63], [0.5, 0.5, 1, 0.5, 0.5, 0.5, 0.5, 2]), 100)
# Ghost Cello Lead: one voice gliding, with its wide vibrato.
phrase("ghost-cello", 56, line([57, 64, 62, 60, 64, 69, 67], [2, 2, 1, 1, 2, 2, 4]), 90, (30, 110))
EOF

declare -A presets=(
    [violin]="Violin" [cello]="Cello" [steel-string]="Willemsen 2019 Steel String"
    [rummelpot]="Rummelpot" [cuica]="Cuica" [ghost-cello]="Ghost Cello Lead"
)
names=("${!presets[@]}")
[ $# -gt 0 ] && names=("$@")

say "Building rosin-render (release)"
cargo build --quiet --release -p rosin-engine --bin rosin-render
for name in "${names[@]}"; do
    preset=${presets[$name]:?"unknown example '$name'"}
    say "$name: $preset"
    target/release/rosin-render "$out/$name.mid" --preset "$preset" --tail 2 -o "target/sounds/$name.wav" >/dev/null
    opusenc --quiet --downmix-mono --bitrate 28 "target/sounds/$name.wav" "$out/$name.opus"
done
ls -l "$out"/*.opus >&2

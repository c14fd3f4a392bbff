#!/usr/bin/env bash
# Opens Rosin's editor in the standalone build under a virtual X server (Xvfb), played by
# the mock Sensel's demo performance, and saves a PNG of each view:
#   target/screenshots/string.png    the string view, a bowed G3 stopped by a second finger
#   target/screenshots/membrane.png  the membrane view, the friction drum bowed
#   target/screenshots/waveguide.png the string view with the waveguide engine playing
#   target/screenshots/lab.png       the lab view: the bowed string's hysteresis loop over
#                                    its law's curve, the stick/slip strip, the bow point
#   target/screenshots/guettler.png  the lab's Guettler diagram of G3, swept in the background
#   target/screenshots/ribbon.png    the string view with the ribbon bow: the string and its twist
#   target/screenshots/preset.png    the Cello preset loaded and its bow force moved: the preset
#                                    bar shows "Cello *"
#   target/screenshots/groups.png    the string view with every group of the side panel open
#   target/screenshots/small.png     the whole screen, with a project saved at 800 x 500: the
#                                    editor opens at that size, every control reachable
#   target/screenshots/hidpi.png     a 4K screen at twice the usual DPI (Xft.dpi 192), with a
#                                    project saved at 1920 x 1080 logical pixels: the editor
#                                    fills the 3840 x 2160 screen, drawn at twice the scale
# With --check it also verifies that each picture shows a moving model (the test suite
# runs it so). Installs what it needs (Xvfb, ImageMagick, Mesa, ALSA and JACK headers).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

check=false
[ "${1:-}" = "--check" ] && check=true

ensure_rust
ensure_packages "${SYSTEM_PACKAGES[@]}" "${SCREENSHOT_PACKAGES[@]}"

# The test command builds the standalone with everything else and says where it is.
standalone=${ROSIN_STANDALONE:-}
if [ -z "$standalone" ]; then
    say "Building the standalone editor and the mock Sensel"
    cargo build --quiet -p rosin --features standalone --bin rosin-standalone
    standalone=target/debug/rosin-standalone
fi
cargo build --quiet -p sensel-mock

out=target/screenshots
mkdir -p "$out"
display=":$((90 + RANDOM % 100))"
# -noreset keeps the X resources (the DPI) between clients.
Xvfb "$display" -noreset -screen 0 3840x2160x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
xvfb_pid=$!
trap 'kill "$xvfb_pid" 2>/dev/null || true' EXIT
sleep 1

# shot NAME [--set ID=VALUE ...]: runs the standalone with no sound card on the view NAME
# (or $VIEW), waits for the demo performance to get going, and grabs the screen (the
# editor's default size, or $CROP: "full" for the whole screen).
shot() {
    local name=$1
    shift
    DISPLAY="$display" SENSEL_MOCK_DEMO=1 ROSIN_SENSEL_LIB="$PWD/target/debug/libsensel_mock.so" ROSIN_EDITOR_VIEW="${VIEW:-$name}" \
        "$standalone" --backend dummy "$@" >"$out/$name.log" 2>&1 &
    local pid=$!
    sleep "${WAIT_S:-6}"
    local crop=(-crop "${CROP:-1040x660+0+0}")
    [ "${CROP:-}" = full ] && crop=()
    DISPLAY="$display" import -window root "${crop[@]}" "$out/$name.png"
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    say "Saved $out/$name.png"
}

shot string
shot membrane --set instrument=1 --set drum_quality=2
shot waveguide --set string_engine=1
shot lab
shot guettler
shot ribbon --set bow_model=1
shot preset --preset Cello --set bow_force=9
ROSIN_EDITOR_GROUPS=open VIEW=string shot groups
# A project saved small, then one saved at 4K on a screen of twice the DPI (set last: the
# DPI holds for every later client).
VIEW=string CROP=full shot small --editor-size 800x500
echo "Xft.dpi: 192" | DISPLAY="$display" xrdb -nocpp -merge
VIEW=string CROP=full WAIT_S=10 shot hidpi --editor-size 1920x1080

if $check; then
    # The fraction of pixels in a colour range (ImageMagick's fx: r, g, b in 0..1).
    fraction() { convert "$1" -fx "$2" -format '%[fx:mean]' info:; }
    # A sounding string is drawn bright cyan (an idle one dim); the bow is orange over the
    # grey membrane, and a moving membrane is not one flat grey; the tube's air is blue.
    string=$(fraction "$out/string.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    bow=$(fraction "$out/membrane.png" '(r - b > 0.3) ? 1 : 0')
    air=$(fraction "$out/membrane.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    grey=$(convert "$out/membrane.png" -crop 460x460+440+110 -colorspace Gray -format '%[fx:standard_deviation]' info:)
    # The waveguide's string is drawn like the other; the lab draws the loop (cyan), the
    # law's curve (orange) and the strip (green stick, red slip).
    waveguide=$(fraction "$out/waveguide.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    loop=$(fraction "$out/lab.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    curve=$(fraction "$out/lab.png" '(r>0.9 && g>0.45 && g<0.7 && b<0.3) ? 1 : 0')
    stick=$(fraction "$out/lab.png" '(r<0.3 && g>0.55 && g<0.75 && b<0.45 && b>0.25) ? 1 : 0')
    slip=$(fraction "$out/lab.png" '(r>0.7 && g<0.3 && b<0.3) ? 1 : 0')
    echo "string curve: $string of the pixels; drum bow: $bow; tube air: $air; membrane grey spread: $grey"
    # The Guettler diagram has cells where Helmholtz motion came (green to orange) and
    # where it never did (dark red).
    quick=$(fraction "$out/guettler.png" '(r>0.2 && r<0.6 && g>0.6 && b<0.3) ? 1 : 0')
    never=$(fraction "$out/guettler.png" '(r>0.38 && r<0.48 && g<0.15 && b<0.15) ? 1 : 0')
    # The output meter moves while the demo plays (its green bar in the top strip).
    meter=$(convert "$out/string.png" -crop 1040x90+0+0 -fx '(r>0.25 && r<0.4 && g>0.7 && g<0.85 && b>0.4 && b<0.55) ? 1 : 0' -format '%[fx:mean]' info:)
    # The preset bar shows the preset's name with the modified mark: the title's pixels
    # (bright text on the panel) differ from an editor with no preset.
    convert "$out/preset.png" -crop 240x26+0+50 +repage "$out/preset-title.png"
    convert "$out/string.png" -crop 240x26+0+50 +repage "$out/no-preset-title.png"
    title=$(compare -metric AE -fuzz 10% "$out/preset-title.png" "$out/no-preset-title.png" null: 2>&1 || true)
    # The ribbon's string (cyan) and its twist (magenta).
    ribbon=$(fraction "$out/ribbon.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    twist=$(fraction "$out/ribbon.png" '(r>0.8 && g>0.35 && g<0.5 && b>0.7) ? 1 : 0')
    # With the groups open the side panel shows their sliders: it differs from the closed one.
    convert "$out/groups.png" -crop 290x560+0+90 +repage "$out/groups-panel.png"
    convert "$out/string.png" -crop 290x560+0+90 +repage "$out/closed-panel.png"
    opened=$(compare -metric AE -fuzz 10% "$out/groups-panel.png" "$out/closed-panel.png" null: 2>&1 || true)
    echo "side panel pixels changed by opening the groups: $opened"
    awk -v o="${opened%% *}" 'BEGIN { exit !(o > 5000) }' || { echo "The side panel's groups did not open; see $out/groups.png" >&2; exit 1; }
    # The small project: the editor is 800 x 500 (its panels are grey, the screen beyond is
    # black), the string plays in it and the performance strip's sliders (blue) show.
    inside=$(convert "$out/small.png" -crop 800x500+0+0 -fx '(r+g+b > 0.05) ? 1 : 0' -format '%[fx:mean]' info:)
    beyond=$(convert "$out/small.png" -crop 3040x2160+800+0 -fx '(r+g+b > 0.05) ? 1 : 0' -format '%[fx:mean]' info:)
    small_string=$(convert "$out/small.png" -crop 800x500+0+0 -fx '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0' -format '%[fx:mean]' info:)
    sliders=$(convert "$out/small.png" -crop 520x170+280+330 -fx '(r<0.1 && g>0.3 && g<0.5 && b>0.45) ? 1 : 0' -format '%[fx:mean]' info:)
    # The 4K project at twice the DPI: the editor reaches the screen's far corner (the output
    # gain's slider and value) and its string is drawn there at the larger scale.
    corner=$(convert "$out/hidpi.png" -crop 800x400+3040+1760 -fx '(r+g+b > 0.05) ? 1 : 0' -format '%[fx:mean]' info:)
    hidpi_string=$(fraction "$out/hidpi.png" '(r<0.5 && g>0.7 && b>0.7) ? 1 : 0')
    echo "small window: drawn $inside inside 800 x 500 and $beyond beyond, string $small_string, strip sliders $sliders; 4K at 2x: far corner drawn $corner, string $hidpi_string"
    awk -v i="$inside" -v o="$beyond" -v s="$small_string" -v l="$sliders" -v c="$corner" -v h="$hidpi_string" \
        'BEGIN { exit !(i > 0.95 && o < 0.001 && s > 0.0005 && l > 0.01 && c > 0.5 && h > 0.0002) }' || {
        echo "The editor did not open at the sizes the projects were saved at, or did not draw at twice the DPI; see $out/small.png and $out/hidpi.png" >&2
        exit 1
    }
    echo "waveguide string: $waveguide; lab loop: $loop, law curve: $curve, stick: $stick, slip: $slip; Guettler quick: $quick, never: $never; ribbon string: $ribbon, twist: $twist; output meter: $meter; preset title pixels changed: $title"
    awk -v s="$string" -v b="$bow" -v a="$air" -v g="$grey" -v w="$waveguide" -v l="$loop" -v c="$curve" -v k="$stick" -v p="$slip" -v q="$quick" -v n="$never" -v rb="$ribbon" -v t="$twist" -v m="$meter" -v pt="${title%% *}" \
        'BEGIN { exit !(s > 0.0005 && b > 0.0001 && a > 0.0002 && g > 0.03 && w > 0.0005 && l > 0.0005 && c > 0.0002 && k > 0.0005 && p > 0.0001 && q > 0.005 && n > 0.005 && rb > 0.0005 && t > 0.0003 && m > 0.002 && pt > 200) }' || {
        echo "The screenshots do not show the string, the membrane, the waveguide and the lab being played; see $out/" >&2
        exit 1
    }
fi

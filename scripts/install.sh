#!/usr/bin/env bash
# The main job: installs what is missing, builds Rosin's CLAP and VST3 bundles, installs
# them into your plugin folders, and renders the demo phrase to rosin-demo.wav.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ensure_rust
ensure_packages "${SYSTEM_PACKAGES[@]}"

say "Building the plugin bundles (release)"
cargo xtask bundle rosin --release

case "$(uname -s)" in
    Darwin)
        clap_dir="$HOME/Library/Audio/Plug-Ins/CLAP"
        vst3_dir="$HOME/Library/Audio/Plug-Ins/VST3"
        ;;
    *)
        clap_dir="${CLAP_PATH_INSTALL:-$HOME/.clap}"
        vst3_dir="${VST3_PATH_INSTALL:-$HOME/.vst3}"
        ;;
esac
mkdir -p "$clap_dir" "$vst3_dir"
rm -rf "$clap_dir/Rosin.clap" "$vst3_dir/Rosin.vst3"
cp -R target/bundled/Rosin.clap "$clap_dir/"
cp -R target/bundled/Rosin.vst3 "$vst3_dir/"
say "Installed Rosin.clap into $clap_dir and Rosin.vst3 into $vst3_dir"

say "Rendering the demo phrase"
cargo run --release --quiet -p rosin-engine --bin rosin-render -- --output rosin-demo.wav "$@"
say "Done: load Rosin in your DAW, or listen to rosin-demo.wav"

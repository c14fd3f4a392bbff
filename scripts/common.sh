# Shared set-up for scripts/install.sh and scripts/test.sh: system packages and the
# Python environment for the VST3 host test. Sourced, not run.

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '\033[1m==> [%4ss] %s\033[0m\n' "$SECONDS" "$*" >&2; }

# Installs the Debian/Ubuntu packages named, if any is missing: as root directly, else
# through sudo when it needs no password; otherwise stops with the exact command to run.
ensure_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null; then
        echo "Missing system packages: ${missing[*]}. Install them with your package manager." >&2
        exit 1
    fi
    say "Installing system packages: ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    else
        echo "Missing system packages. Run this, then try again:" >&2
        echo "    sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
}

ensure_rust() {
    if ! command -v cargo >/dev/null; then
        echo "Rust is not installed. Install it from https://rustup.rs, then try again." >&2
        exit 1
    fi
}

# The C toolchain links the plugin (its editor loads X11 and OpenGL at run time, so it
# needs no headers); Python runs the VST3 host test.
SYSTEM_PACKAGES=(build-essential pkg-config python3 python3-venv)
# The standalone build (ALSA, JACK headers) and the editor under a virtual X server with
# software OpenGL, for scripts/screenshots.sh.
SCREENSHOT_PACKAGES=(libasound2-dev libjack-jackd2-dev xvfb x11-xserver-utils imagemagick libgl1 libegl1 libgl1-mesa-dri libx11-xcb1 libxcursor1 libxkbcommon-x11-0)

# A virtual environment under target/ with pedalboard (a headless VST3 host) and mido.
python_env() {
    local venv=target/python
    if [ ! -x "$venv/bin/python" ]; then
        say "Creating the Python environment for the VST3 host test"
        python3 -m venv "$venv"
    fi
    if ! "$venv/bin/python" -c "import pedalboard, mido, numpy" 2>/dev/null; then
        "$venv/bin/pip" install --quiet --disable-pip-version-check "pedalboard==0.9.*" "mido==1.3.*" "numpy<3"
    fi
    echo "$venv/bin/python"
}

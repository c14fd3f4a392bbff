//! Rosin as a standalone program with its editor open: `rosin-standalone --backend dummy`
//! runs with no sound card; `--backend jack` or `alsa` plays through one.
//!
//! Besides nice-plug's standalone options it takes `--preset NAME` (a factory preset to
//! start on) and `--set ID=VALUE` (repeatable, applied after the preset), the parameters'
//! values at start, e.g. `--set instrument=1` to open on the friction drum, and
//! `--editor-size WxH`, the window size in logical pixels a project would have saved (the
//! editor asks for it on its first frame).

use std::process::ExitCode;

use rosin_engine::controls;
use rosin::params::STANDALONE_START_VALUES;

fn main() -> ExitCode {
    let mut passed = Vec::new();
    let mut values = Vec::new();
    let mut args = std::env::args();
    passed.extend(args.next());
    let mut preset_values = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--preset" {
            let name = args.next().unwrap_or_default();
            let Some(preset) = rosin_engine::presets::find(&name) else {
                eprintln!("rosin-standalone: '--preset {name}' is not a factory preset (see rosin-render --list-presets)");
                return ExitCode::from(2);
            };
            preset_values = controls::ALL.iter().map(|spec| (spec.id, preset.value(spec))).collect();
            let _ = rosin::params::STANDALONE_START_PRESET.set(preset.name);
            continue;
        }
        if arg == "--editor-size" {
            let text = args.next().unwrap_or_default();
            let Some(size) = text.split_once('x').and_then(|(w, h)| Some((w.parse::<f32>().ok()?, h.parse::<f32>().ok()?))) else {
                eprintln!("rosin-standalone: '--editor-size {text}' is not WIDTHxHEIGHT in logical pixels, e.g. 800x500");
                return ExitCode::from(2);
            };
            let _ = rosin::params::STANDALONE_START_EDITOR_SIZE.set(size);
            continue;
        }
        if arg != "--set" {
            passed.push(arg);
            continue;
        }
        let Some(pair) = args.next() else {
            eprintln!("rosin-standalone: --set needs ID=VALUE");
            return ExitCode::from(2);
        };
        let parsed = pair.split_once('=').and_then(|(id, v)| Some((controls::find(id)?, v.parse::<f64>().ok()?)));
        match parsed {
            Some((spec, value)) => values.push((spec.id, value)),
            None => {
                eprintln!("rosin-standalone: '--set {pair}' is not ID=VALUE with a known ID (see rosin-render --list-params)");
                return ExitCode::from(2);
            }
        }
    }
    // The `--set` values win over the preset's: they come first in the list.
    let from_preset: Vec<_> = preset_values.into_iter().filter(|(id, _)| !values.iter().any(|(set, _)| set == id)).collect();
    values.extend(from_preset);
    let _ = STANDALONE_START_VALUES.set(values);
    if nice_plug::wrapper::standalone::nice_export_standalone_with_args::<rosin::plugin::Rosin, _>(passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

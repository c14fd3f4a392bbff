//! Rosin as a standalone program with its editor open: `rosin-standalone --backend dummy`
//! runs with no sound card; `--backend jack` or `alsa` plays through one.
//!
//! Besides nice-plug's standalone options it takes `--set ID=VALUE` (repeatable), the
//! parameters' values at start, e.g. `--set instrument=1` to open on the friction drum.

use std::process::ExitCode;

use rosin_engine::controls;
use rosin::params::STANDALONE_START_VALUES;

fn main() -> ExitCode {
    let mut passed = Vec::new();
    let mut values = Vec::new();
    let mut args = std::env::args();
    passed.extend(args.next());
    while let Some(arg) = args.next() {
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
    let _ = STANDALONE_START_VALUES.set(values);
    if nice_plug::wrapper::standalone::nice_export_standalone_with_args::<rosin::plugin::Rosin, _>(passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

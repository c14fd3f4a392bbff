//! `rosin-render`: renders a standard MIDI file, a recorded gesture performance, or the
//! built-in demo phrase, through Rosin's engine to a WAV file.

use std::path::PathBuf;
use std::process::ExitCode;

use rosin_engine::controller::gesture_file::GestureRecording;
use rosin_engine::controls::{self, Controls};
use rosin_engine::presets::{self, PRESETS};
use rosin_engine::render::{self, demo, midi_file, Timeline};
use rosin_engine::voices::{Engine, MOST_VOICES};

const USAGE: &str = "usage: rosin-render [MIDI_FILE] [options]

Renders MIDI_FILE and/or a gesture file (or, with neither, the built-in demo phrase) to a
stereo WAV file.

options:
  -g, --gestures FILE      replay a performance recorded in the editor (a .rgest file)
  -o, --output FILE        output WAV file (default: rosin-demo.wav, or MIDI_FILE.wav,
                           or FILE.wav for a gesture file alone)
  -r, --sample-rate HZ     sample rate, 22050 to 192000 (default: 48000)
  -b, --block-size N       host block size to simulate (default: 512)
      --tail SECONDS       render this long after the last event (default: 3)
      --take N             another take: every note draws its bow noise anew
                           (default: 0, the take every earlier build rendered)
      --voices N           string voices that sound at once before the oldest is
                           stolen, 1 to 64: the Voices control, as --set voices=N
                           (default: 16, the plugin's; a preset leaves it alone)
  -p, --preset NAME        start from a factory preset, e.g. --preset Cello (give it
                           before any --set; it leaves --voices alone)
  -s, --set ID=VALUE       set a parameter, e.g. --set bow_force=4.5 (repeatable)
      --list-params        list the parameters with their ranges and defaults
      --list-presets       list the factory presets
  -h, --help               show this help";

struct Options {
    input: Option<PathBuf>,
    gestures: Option<PathBuf>,
    output: Option<PathBuf>,
    sample_rate_hz: f64,
    block_size: usize,
    tail_s: f64,
    take: u64,
    controls: Controls,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options { input: None, gestures: None, output: None, sample_rate_hz: 48_000.0, block_size: 512, tail_s: 3.0, take: 0, controls: Controls::default() };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            "--list-params" => {
                for spec in controls::ALL {
                    println!("{:<18} {:<18} {} to {}{} (default {})", spec.id, spec.name, spec.min, spec.max, spec.unit, spec.default);
                }
                return Ok(None);
            }
            "--list-presets" => {
                for preset in PRESETS {
                    println!("{:<28} {:<15} {}", preset.name, preset.category, preset.description);
                }
                return Ok(None);
            }
            "-p" | "--preset" => {
                let name = value(&arg)?;
                let preset = presets::find(&name).ok_or_else(|| format!("unknown preset '{name}' (see --list-presets)"))?;
                options.controls = preset.chosen_over(&options.controls);
            }
            "-o" | "--output" => options.output = Some(PathBuf::from(value(&arg)?)),
            "-g" | "--gestures" => options.gestures = Some(PathBuf::from(value(&arg)?)),
            "-r" | "--sample-rate" => {
                let v = value(&arg)?;
                options.sample_rate_hz = v.parse().map_err(|_| format!("sample rate '{v}' is not a number"))?;
                if !(22_050.0..=192_000.0).contains(&options.sample_rate_hz) {
                    return Err(format!("sample rate {v} Hz is outside 22050 to 192000 Hz"));
                }
            }
            "-b" | "--block-size" => {
                let v = value(&arg)?;
                options.block_size = v.parse().ok().filter(|&b| b > 0).ok_or_else(|| format!("block size '{v}' is not a positive integer"))?;
            }
            "--tail" => {
                let v = value(&arg)?;
                options.tail_s = v.parse().ok().filter(|t: &f64| (0.0..=600.0).contains(t)).ok_or_else(|| format!("tail '{v}' is not a number of seconds from 0 to 600"))?;
            }
            "--take" => {
                let v = value(&arg)?;
                options.take = v.parse().map_err(|_| format!("take '{v}' is not a whole number from 0"))?;
            }
            "--voices" => {
                let v = value(&arg)?;
                let voices: usize = v.parse().ok().filter(|n| (1..=MOST_VOICES).contains(n)).ok_or_else(|| format!("voices '{v}' is not a whole number from 1 to {MOST_VOICES}"))?;
                options.controls.set(controls::VOICES.id, voices as f64);
            }
            "-s" | "--set" => {
                let v = value(&arg)?;
                let (id, number) = v.split_once('=').ok_or_else(|| format!("--set takes ID=VALUE, got '{v}'"))?;
                let spec = controls::find(id).ok_or_else(|| format!("unknown parameter '{id}' (see --list-params)"))?;
                let number: f64 = number.parse().map_err(|_| format!("value '{number}' for {id} is not a number"))?;
                if !(spec.min..=spec.max).contains(&number) {
                    return Err(format!("{id} = {number} is outside {} to {}{}", spec.min, spec.max, spec.unit));
                }
                options.controls.set(id, number);
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option '{arg}'")),
            _ if options.input.is_none() => options.input = Some(PathBuf::from(arg)),
            _ => return Err(format!("unexpected argument '{arg}'")),
        }
    }
    Ok(Some(options))
}

fn run(options: Options) -> Result<(), String> {
    let rate = options.sample_rate_hz;
    let (mut timeline, mut end): (Timeline, u64) = match (&options.input, &options.gestures) {
        (Some(path), _) => {
            let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let timeline = midi_file::parse(&bytes, rate).map_err(|e| format!("{}: {e}", path.display()))?;
            let end = timeline.end();
            (timeline, end)
        }
        (None, Some(_)) => (Timeline::default(), 0),
        (None, None) => demo::phrase(rate),
    };
    if let Some(path) = &options.gestures {
        let recording = GestureRecording::load(path)?;
        timeline.add_gestures(&recording, rate);
        end = end.max(timeline.end());
    }
    let length = end + (options.tail_s * rate) as u64;
    let output = options.output.clone().unwrap_or_else(|| match (&options.input, &options.gestures) {
        (Some(path), _) | (None, Some(path)) => path.with_extension("wav"),
        (None, None) => PathBuf::from("rosin-demo.wav"),
    });
    let mut engine = Engine::new(rate);
    engine.set_take(options.take);
    let mut controls = options.controls;
    let samples = render::render(&mut engine, &mut controls, &timeline, length, options.block_size);
    let spec = hound::WavSpec { channels: 2, sample_rate: rate as u32, bits_per_sample: 32, sample_format: hound::SampleFormat::Float };
    let mut writer = hound::WavWriter::create(&output, spec).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    let mut peak = 0.0f32;
    for &s in &samples {
        peak = peak.max(s.abs());
        writer.write_sample(s).and_then(|_| writer.write_sample(s)).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    }
    writer.finalize().map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    let stats = engine.newton_stats();
    eprintln!(
        "wrote {} ({:.2} s at {} Hz, peak {:.1} dBFS, Newton median {} iterations, {} fallbacks)",
        output.display(),
        length as f64 / rate,
        rate,
        20.0 * (peak.max(1e-12) as f64).log10(),
        stats.median().unwrap_or(0),
        stats.fallbacks
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(options)) => match run(options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("rosin-render: {message}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("rosin-render: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

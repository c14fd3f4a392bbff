//! The offline renderer, `rosin-render`, as a user runs it: the demo and a MIDI file to WAV,
//! and clear errors for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn binary() -> Command {
    common::workspace_program("rosin-render")
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rosin-test-{}-{name}", std::process::id()))
}

fn read_wav(path: &PathBuf) -> (hound::WavSpec, Vec<f32>) {
    let mut reader = hound::WavReader::open(path).expect("a readable WAV");
    let spec = reader.spec();
    let samples = reader.samples::<f32>().map(|s| s.unwrap()).collect();
    (spec, samples)
}

/// Writes a format-0 MIDI file to a temporary path: at 96 ticks a beat and 120 bpm, `key`
/// held at `velocity` for one beat (half a second).
fn one_note_midi(name: &str, key: u8, velocity: u8) -> PathBuf {
    midi_file(name, &[0x00, 0x90, key, velocity, 0x60, 0x80, key, 0, 0x00, 0xFF, 0x2F, 0x00])
}

/// Writes a format-0 MIDI file of one `track` (96 ticks a beat) to a temporary path.
fn midi_file(name: &str, track: &[u8]) -> PathBuf {
    let mut midi = b"MThd\x00\x00\x00\x06\x00\x00\x00\x01\x00\x60MTrk".to_vec();
    midi.extend_from_slice(&(track.len() as u32).to_be_bytes());
    midi.extend_from_slice(track);
    let path = temp_path(name);
    std::fs::write(&path, midi).unwrap();
    path
}

#[test]
fn renders_the_demo_phrase() {
    let out = temp_path("demo.wav");
    let status = binary().args(["--sample-rate", "22050", "--tail", "0.5", "-o"]).arg(&out).status().unwrap();
    assert!(status.success());
    let (spec, samples) = read_wav(&out);
    assert_eq!((spec.channels, spec.sample_rate), (2, 22_050));
    let seconds = samples.len() as f64 / 2.0 / 22_050.0;
    assert!(seconds > 10.0, "demo of {seconds:.1} s");
    let peak = samples.iter().fold(0.0f32, |a, &b| a.max(b.abs()));
    assert!(samples.iter().all(|s| s.is_finite()) && peak > 0.1 && peak < 2.0, "peak {peak}");
    std::fs::remove_file(out).ok();
}

#[test]
fn renders_a_midi_file_with_parameters() {
    let input = one_note_midi("note.mid", 57, 100);
    let out = temp_path("note.wav");
    let status = binary().arg(&input).args(["--tail", "0.25", "--set", "output_gain=-6", "--block-size", "1", "-o"]).arg(&out).status().unwrap();
    assert!(status.success());
    let (spec, samples) = read_wav(&out);
    assert_eq!(spec.sample_rate, 48_000);
    assert_eq!(samples.len(), 2 * (48_000 / 2 + 12_000), "half a second of note and a quarter of tail");
    assert!(samples.iter().any(|s| s.abs() > 0.01));
    std::fs::remove_file(input).ok();
    std::fs::remove_file(out).ok();
}

/// Renders the MIDI file `input` with `args` through a temporary WAV named `name`, and
/// returns its samples (stereo, interleaved).
fn render_midi(input: &Path, args: &[&str], name: &str) -> Vec<f32> {
    let out = temp_path(name);
    assert!(binary().arg(input).args(args).arg("-o").arg(&out).status().unwrap().success(), "rosin-render {args:?}");
    let (_, samples) = read_wav(&out);
    std::fs::remove_file(out).ok();
    samples
}

/// `--take 1` plays the same note again with its bow noise drawn anew: another waveform,
/// as loud; `--take 0` is the default take, to the bit.
#[test]
fn another_take_draws_the_bow_noise_anew() {
    let input = one_note_midi("take.mid", 55, 90);
    let default = render_midi(&input, &["--tail", "0.1"], "take-default.wav");
    let zero = render_midi(&input, &["--tail", "0.1", "--take", "0"], "take-0.wav");
    let one = render_midi(&input, &["--tail", "0.1", "--take", "1"], "take-1.wav");
    assert_eq!(default, zero, "take 0 is the default take");
    assert_ne!(default, one, "take 1 draws other noise");
    let rms = |s: &[f32]| (s.iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / s.len() as f64).sqrt();
    let level_db = 20.0 * (rms(&one) / rms(&default)).log10();
    assert!(level_db.abs() < 1.0, "take 1 is {level_db:+.2} dB from take 0");
    std::fs::remove_file(input).ok();
}

/// Writes a format-0 MIDI file to a temporary path: `keys` begun together at velocity 90
/// and held for a second.
fn chord_midi(name: &str, keys: &[u8]) -> PathBuf {
    let mut track = Vec::new();
    for &key in keys {
        track.extend_from_slice(&[0x00, 0x90, key, 90]);
    }
    for (i, &key) in keys.iter().enumerate() {
        track.extend_from_slice(&if i == 0 { [0x81, 0x40, 0x80, key, 0].to_vec() } else { [0x00, 0x80, key, 0].to_vec() });
    }
    track.extend_from_slice(&[0x00, 0xFF, 0x2F, 0x00]);
    midi_file(name, &track)
}

/// `--voices 20` sounds a chord of twenty notes whole, where the plugin's sixteen voices
/// steal its first four: C3 to D#3, whose fundamentals no other note of the chord (E3 to
/// G4) has, sound over its second half only with the twenty. `--voices 16` is the default,
/// to the bit.
#[test]
fn more_voices_sound_a_larger_chord_whole() {
    let keys: Vec<u8> = (48..68).collect();
    let input = chord_midi("chord.mid", &keys);
    let render = |args: &[&str], name: &str| render_midi(&input, args, name).iter().step_by(2).map(|&s| s as f64).collect::<Vec<f64>>();
    let default = render(&["--tail", "0"], "chord-default.wav");
    let sixteen = render(&["--tail", "0", "--voices", "16"], "chord-16.wav");
    let twenty = render(&["--tail", "0", "--voices", "20"], "chord-20.wav");
    assert!(default.iter().zip(&sixteen).all(|(a, b)| a.to_bits() == b.to_bits()), "--voices 16 is not the default");
    // The amplitude at each stolen note's fundamental over the chord's second half, through
    // a Hann window (its neighbours a semitone away leak little through it).
    let lowest = |signal: &[f64]| -> Vec<f64> {
        let half = common::hann_windowed(&signal[signal.len() / 2..]);
        let amplitude = |key: u8| 4.0 * common::dft_power(&half, 48_000.0, rosin_physics::string::tuning::midi_key_to_hz(key as f64)).sqrt() / half.len() as f64;
        keys[..4].iter().map(|&key| amplitude(key)).collect()
    };
    let (stolen, whole) = (lowest(&sixteen), lowest(&twenty));
    for ((key, s), w) in keys.iter().zip(&stolen).zip(&whole) {
        eprintln!("MIDI {key}: {w:.2e} with twenty voices, {s:.2e} with sixteen");
        assert!(*w > 10.0 * s && *w > 1e-3, "MIDI {key}: {w:.2e} with twenty voices, {s:.2e} with sixteen");
    }
    std::fs::remove_file(input).ok();
}

#[test]
fn bad_input_gets_a_clear_error() {
    for (args, message) in [
        (vec!["--set", "bow_force=99"], "outside"),
        (vec!["--set", "no_such=1"], "unknown parameter"),
        (vec!["--sample-rate", "8000"], "outside 22050"),
        (vec!["--frobnicate"], "unknown option"),
        (vec!["--take", "-1"], "not a whole number"),
        (vec!["--voices", "0"], "from 1 to 64"),
        (vec!["--voices", "65"], "from 1 to 64"),
    ] {
        let output = binary().args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let missing = binary().arg(temp_path("missing.mid")).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
}

/// A recorded pad performance replays offline: an open G3 bowed for a second, then a
/// stopping finger a quarter of the way up, then the lift.
#[test]
fn renders_a_recorded_gesture_performance() {
    use rosin_engine::controller::gesture::LaneGesture;
    use rosin_engine::controller::gesture_file::{GestureRecording, RecordedItem};
    let mut recording = GestureRecording::default();
    recording.push(0.0, RecordedItem::Control { id: "instrument".into(), value: 0.0 });
    let bow = LaneGesture { bow_down: true, bow_force_n: 5.0, bow_velocity_mps: 0.15, bow_position: 0.15, ..LaneGesture::default() };
    for i in 0..200 {
        let t = i as f64 * 0.01;
        let finger = (t >= 1.0).then_some(0.25);
        recording.push(t, RecordedItem::Lane { lane: 0, gesture: LaneGesture { finger_position: finger, ..bow } });
    }
    recording.push(2.0, RecordedItem::Lane { lane: 0, gesture: bow.lifted() });
    let input = temp_path("performance.rgest");
    recording.save(&input).unwrap();
    let out = temp_path("performance.wav");
    let status = binary().arg("--gestures").arg(&input).args(["--tail", "0.5", "-o"]).arg(&out).status().unwrap();
    assert!(status.success());
    let (_, samples) = read_wav(&out);
    let mono: Vec<f32> = samples.chunks(2).map(|f| f[0]).collect();
    assert_eq!(mono.len(), 48_000 * 5 / 2, "two seconds of performance and the tail");
    let open = common::fundamental_hz(&mono[24_000..48_000], 48_000.0, 196.0);
    let stopped = common::fundamental_hz(&mono[72_000..96_000], 48_000.0, 261.6);
    eprintln!("replayed gestures: open {open:.2} Hz, stopped {stopped:.2} Hz");
    assert!(common::cents(open, 196.0).abs() < 10.0, "{open}");
    assert!(common::cents(stopped, open * 4.0 / 3.0).abs() < 12.0, "{stopped}");

    // A damaged file is refused with its line named.
    std::fs::write(&input, "rosin-gestures 1\n0.0 lane 9 down 1 0 0.2 - 0.5 0.5\n").unwrap();
    let output = binary().arg("--gestures").arg(&input).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 2") && stderr.contains("lane 9"), "{stderr}");
    std::fs::remove_file(input).ok();
    std::fs::remove_file(out).ok();
}

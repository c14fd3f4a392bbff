//! Real-time factor of the bowed-string voice (willemsen2019 section 1): one voice at G3,
//! D4, A4 and E5, sixteen voices together, and sixty-four (issue 16's case) at 48 kHz.
//!
//! `cargo bench --bench string_voice` runs criterion, then prints a table of real-time
//! factors (seconds of audio per second of one core) and the cost per voice-sample, and
//! the sixty-four under each string engine and friction law (`cargo bench --bench
//! string_voice -- sixty_four` prints that table alone, without criterion's runs).

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin_engine::controls::Controls;
use rosin_engine::voices::{Engine, MOST_VOICES};
use rosin_physics::bow::contact::FrictionModel;

const STRINGS: [(&str, u8); 4] = [("G3", 55), ("D4", 62), ("A4", 69), ("E5", 76)];
/// Sixteen notes over the keyboard, from the low register to the top.
const CHORD: [u8; 16] = [31, 36, 40, 43, 48, 52, 55, 60, 64, 67, 72, 76, 79, 84, 88, 96];

/// `count` voices (2 to 64) spread evenly from MIDI 36 to 96, rounded to the nearest key:
/// issue 16's sixty-four (three keys twice) when `count` is 64.
fn spread_keys(count: usize) -> Vec<u8> {
    (0..count).map(|i| 36 + ((60 * i + (count - 1) / 2) / (count - 1)) as u8).collect()
}

/// An engine already bowing `keys` in steady state.
fn bowing(keys: &[u8]) -> Engine {
    common::sounding(&Controls::default(), keys, 0.8, 0.5)
}

/// Seconds of audio per second of wall time for `count` voices spread over MIDI 36 to 96
/// ([`spread_keys`]) under `controls`, the *Voices* control at `count`, over `seconds` of
/// audio.
fn spread_factor(count: usize, controls: &Controls, seconds: f64) -> f64 {
    let mut engine = common::sounding_with_voices(count, controls, &spread_keys(count), 0.8, 0.5);
    let sounding = engine.active_voice_count();
    assert_eq!(sounding, count, "the engine sounds {sounding} voices, not {count}");
    common::real_time_factor(seconds, |buffer: &mut [f32]| engine.render(buffer))
}

/// Seconds of audio per second of wall time for issue 16's sixty-four voices under
/// `controls`, over `seconds` of audio.
fn sixty_four_factor(controls: &Controls, seconds: f64) -> f64 {
    spread_factor(MOST_VOICES, controls, seconds)
}

/// What the *Voices* control costs at the defaults: 16, 32, 48 and 64 voices spread over
/// MIDI 36 to 96, all held and bowed at once (the most a setting can cost).
fn by_voice_count() {
    println!("\nVoices spread over MIDI 36 to 96, all bowed at once, at the defaults (48 kHz):");
    for count in [16, 32, 48, MOST_VOICES] {
        let rtf = spread_factor(count, &Controls::default(), 1.0);
        println!("  {count:2} voices: {rtf:6.2} x real time, {:6.1} ns per voice-sample, {:5.1} % of a core", 1e9 / (rtf * RATE * count as f64), 100.0 / rtf);
    }
}

/// The sixty-four voices under each string engine and friction law, the rest at the
/// defaults: what a producer's choice of model costs (the point bow; `docs/performance.md`,
/// *What 4 x would take*).
fn sixty_four_by_model() {
    println!("\nSixty-four voices, MIDI 36 to 96, by string engine and friction law (48 kHz):");
    for (engine_name, engine) in [("finite-difference string", 0.0), ("digital waveguide", 1.0)] {
        for (index, law) in FrictionModel::ALL.iter().enumerate() {
            let controls = Controls { string_engine: engine, friction_model: index as f64, ..Controls::default() };
            let rtf = sixty_four_factor(&controls, 1.0);
            println!("  {engine_name:<25} {:<32} {rtf:6.2} x real time, {:6.1} ns per voice-sample", format!("{law:?}"), 1e9 / (rtf * RATE * 64.0));
        }
    }
}

fn voices(c: &mut Criterion) {
    let mut group = c.benchmark_group("string_voice_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut buffer = vec![0.0f32; BLOCK];
    for (name, key) in STRINGS {
        let mut engine = bowing(&[key]);
        group.bench_function(BenchmarkId::new("one_voice", name), |b| b.iter(|| engine.render(black_box(&mut buffer))));
    }
    let mut engine = bowing(&CHORD);
    group.throughput(Throughput::Elements((BLOCK * CHORD.len()) as u64));
    group.bench_function("sixteen_voices", |b| b.iter(|| engine.render(black_box(&mut buffer))));
    group.finish();
}

/// Seconds of audio rendered per second of wall time, over `seconds` of audio.
fn real_time_factor(keys: &[u8], seconds: f64) -> f64 {
    let mut engine = bowing(keys);
    common::real_time_factor(seconds, |buffer| engine.render(buffer))
}

fn summary() {
    println!("\nReal-time factor at 48 kHz (audio seconds per core second):");
    for (name, key) in STRINGS {
        let rtf = real_time_factor(&[key], 4.0);
        println!("  one voice {name}: {rtf:7.1} x real time, {:6.1} ns per voice-sample, {:5.2} % of a core", 1e9 / (rtf * RATE), 100.0 / rtf);
    }
    let rtf = real_time_factor(&CHORD, 2.0);
    println!(
        "  sixteen voices: {rtf:7.1} x real time ({:.1} x per voice), {:6.1} ns per voice-sample, {:5.1} % of a core",
        rtf * CHORD.len() as f64,
        1e9 / (rtf * RATE * CHORD.len() as f64),
        100.0 / rtf
    );
    let rtf = sixty_four_factor(&Controls::default(), 1.0);
    println!(
        "  sixty-four voices, MIDI 36 to 96 (one engine): {rtf:7.2} x real time, {:6.1} ns per voice-sample (issue 16 asks 4 x, about 80 ns)",
        1e9 / (rtf * RATE * 64.0),
    );
}

criterion_group!(benches, voices);

fn main() {
    if std::env::args().any(|a| a == "sixty_four") {
        sixty_four_by_model();
        by_voice_count();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
    sixty_four_by_model();
    by_voice_count();
}

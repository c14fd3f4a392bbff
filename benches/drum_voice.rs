//! Real-time factor of the friction-drum voice (onofrei2021): one voice at each resolution
//! (full, half, the paper's), bowed at middle C with the paper's fN = 12 N and
//! vB = 0.1 m/s, at 48 kHz, and at Full at 96 kHz too (issue 16 asks 10 x and 2 x).
//!
//! `cargo bench --bench drum_voice` runs criterion, then prints a table of real-time
//! factors (seconds of audio per second of one core) and the membrane's size.

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin_engine::controls::Controls;
use rosin_physics::drum::friction_drum::DrumQuality;
use rosin_engine::voices::Engine;

const QUALITIES: [(&str, f64); 3] = [("full", 0.0), ("half", 1.0), ("paper", 2.0)];

/// An engine already bowing one drum note at `quality` in steady state.
fn bowing(quality: f64) -> Engine {
    bowing_at(RATE, quality)
}

/// [`bowing`] at `rate_hz`.
fn bowing_at(rate_hz: f64, quality: f64) -> Engine {
    let mut controls = Controls::default();
    controls.instrument = 1.0;
    controls.drum_quality = quality;
    controls.bow_force_n = 12.0;
    controls.bow_velocity_mps = 0.1;
    common::sounding_at(rate_hz, &controls, &[60], 1.0, 0.3)
}

fn voices(c: &mut Criterion) {
    let mut group = c.benchmark_group("drum_voice_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut buffer = vec![0.0f32; BLOCK];
    for (name, quality) in QUALITIES {
        let mut engine = bowing(quality);
        group.bench_function(BenchmarkId::new("one_voice", name), |b| b.iter(|| engine.render(black_box(&mut buffer))));
    }
    group.finish();
}

fn real_time_factor(rate_hz: f64, quality: f64, seconds: f64) -> f64 {
    let mut engine = bowing_at(rate_hz, quality);
    common::real_time_factor_at(rate_hz, seconds, |buffer| engine.render(buffer))
}

fn summary() {
    println!("\nFriction drum, one voice (audio seconds per core second):");
    let cases = QUALITIES.map(|(name, quality)| (name, quality, RATE)).into_iter().chain([("full", 0.0, 2.0 * RATE)]);
    for (name, quality, rate_hz) in cases {
        let n = DrumQuality::ALL[quality as usize].membrane_intervals(&Default::default(), rate_hz);
        let rtf = real_time_factor(rate_hz, quality, 3.0);
        println!("  {name:>5} at {:3.0} kHz ({n:3} x {n:3} grid): {rtf:7.1} x real time, {:7.2} us per sample, {:5.1} % of a core", rate_hz / 1e3, 1e6 / (rtf * rate_hz), 100.0 / rtf);
    }
}

criterion_group!(benches, voices);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

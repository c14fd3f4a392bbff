//! Real-time factor of the body resonator (`rosin_physics::body`): each body's bank of two-pole
//! modes, driven by noise at 48 kHz.
//!
//! `cargo bench --bench body` runs criterion, then prints a table of real-time factors
//! (seconds of audio per second of one core), the cost per sample and the mode count.

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin_physics::body::{BodyModel, BodyResonator, BODIES};


/// A block of deterministic noise in -1..1 (a 64-bit LCG), standing in for the bridge force.
fn noise_block() -> Vec<f64> {
    let mut state = 1u64;
    (0..BLOCK)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn resonator(model: &BodyModel) -> BodyResonator {
    let mut body = BodyResonator::new(RATE);
    body.set_model(model);
    body
}

fn render(body: &mut BodyResonator, input: &[f64], output: &mut [f64]) {
    for (y, &x) in output.iter_mut().zip(input) {
        *y = body.tick(x);
    }
}

fn bodies(c: &mut Criterion) {
    let mut group = c.benchmark_group("body_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let input = noise_block();
    let mut output = vec![0.0; BLOCK];
    for model in BODIES {
        let mut body = resonator(model);
        group.bench_function(BenchmarkId::new("block", model.name), |b| b.iter(|| render(&mut body, black_box(&input), black_box(&mut output))));
    }
    group.finish();
}

/// Seconds of audio rendered per second of wall time, over `seconds` of audio.
fn real_time_factor(model: &BodyModel, seconds: f64) -> f64 {
    let mut body = resonator(model);
    let input = noise_block();
    common::real_time_factor(seconds, |output| render(&mut body, black_box(&input), output))
}

fn summary() {
    println!("\nBody resonator at 48 kHz (audio seconds per core second):");
    for model in BODIES {
        let rtf = real_time_factor(model, 10.0);
        let modes = resonator(model).mode_count();
        println!(
            "  {:<12} {modes:3} modes: {rtf:8.1} x real time, {:6.1} ns per sample, {:5.2} ns per mode-sample, {:5.3} % of a core",
            model.name,
            1e9 / (rtf * RATE),
            1e9 / (rtf * RATE * modes as f64),
            100.0 / rtf
        );
    }
}

criterion_group!(benches, bodies);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

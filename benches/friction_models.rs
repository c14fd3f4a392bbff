//! Real-time factor per voice of every friction model on every string engine (issue 6):
//! one bowed A3 at 48 kHz with default controls.
//!
//! `cargo bench --bench friction_models` runs criterion, then prints the table.

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin_engine::controls::Controls;
use rosin_physics::bow::contact::FrictionModel;
use rosin_engine::voices::Engine;

const KEY: u8 = 57;
const ENGINES: [(&str, f64); 2] = [("fdtd", 0.0), ("waveguide", 1.0)];

fn bowing(model_index: usize, string_engine: f64) -> Engine {
    let mut controls = Controls::default();
    controls.friction_model = model_index as f64;
    controls.string_engine = string_engine;
    common::sounding(&controls, &[KEY], 0.8, 0.5)
}

fn models(c: &mut Criterion) {
    let mut group = c.benchmark_group("friction_models_a3_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut buffer = vec![0.0f32; BLOCK];
    for (engine_name, string_engine) in ENGINES {
        for (index, model) in FrictionModel::ALL.iter().enumerate() {
            let mut engine = bowing(index, string_engine);
            group.bench_function(BenchmarkId::new(engine_name, format!("{model:?}")), |b| b.iter(|| engine.render(black_box(&mut buffer))));
        }
    }
    group.finish();
}

fn summary() {
    println!("\nReal-time factor per voice, A3 at 48 kHz (audio seconds per core second):");
    for (engine_name, string_engine) in ENGINES {
        for (index, model) in FrictionModel::ALL.iter().enumerate() {
            let mut engine = bowing(index, string_engine);
            let rtf = common::real_time_factor(3.0, |buffer| engine.render(buffer));
            println!("  {engine_name:9} {:30} {rtf:7.1} x real time, {:6.1} ns per sample", model.name(), 1e9 / (rtf * RATE));
        }
    }
}

criterion_group!(benches, models);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

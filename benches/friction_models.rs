//! Real-time factor per voice of every friction model on every string engine (issue 6):
//! one bowed A3 at 48 kHz with default controls.
//!
//! `cargo bench --bench friction_models` runs criterion, then prints the table.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin::controls::Controls;
use rosin::physics::contact::FrictionModel;
use rosin::voice::NoteId;
use rosin::voices::{Engine, NoteEvent};

const RATE: f64 = 48_000.0;
const BLOCK: usize = 480;
const KEY: u8 = 57;
const ENGINES: [(&str, f64); 2] = [("fdtd", 0.0), ("waveguide", 1.0)];

fn bowing(model_index: usize, string_engine: f64) -> Engine {
    let mut engine = Engine::new(RATE);
    let mut controls = Controls::default();
    controls.friction_model = model_index as f64;
    controls.string_engine = string_engine;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: KEY, voice_id: None }, velocity: 0.8 });
    let mut warm = vec![0.0f32; (0.5 * RATE) as usize];
    engine.render(&mut warm);
    engine
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
            let mut buffer = vec![0.0f32; BLOCK];
            let blocks = (3.0 * RATE / BLOCK as f64) as usize;
            let start = Instant::now();
            for _ in 0..blocks {
                engine.render(black_box(&mut buffer));
            }
            let rtf = (blocks * BLOCK) as f64 / RATE / start.elapsed().as_secs_f64();
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

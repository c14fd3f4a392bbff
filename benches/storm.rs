//! The worst block against the median (issue 18): the engine played for 20 s of 256-sample
//! blocks at 48 kHz through a storm — every block moves a few controls at random (at their
//! ends one time in four; the string set, play mode, bow model and friction law among them),
//! and strikes, bends, presses or releases notes on random channels — and each block is
//! timed. The bench prints the median block, the 99th and 99.9th percentiles and the worst,
//! each as a multiple of the median, and the worst as a share of the block's real-time
//! budget.
//!
//! `cargo bench --bench storm` runs criterion (one storm block), then prints the summary.

mod common;

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rosin_engine::controls::{self, Controls};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

const BLOCK: usize = 256;
const RATE: f64 = 48_000.0;

/// A xorshift generator: the storm is the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The controls the storm leaves alone: the instrument (the drum is its own bench) and the
/// output gain (so the output stays meaningful).
const LEFT_ALONE: [&str; 2] = ["instrument", "output_gain"];

/// One storm block: a few control moves and events, then the block rendered.
fn storm_block(engine: &mut Engine, controls: &mut Controls, rng: &mut Rng, buffer: &mut [f32]) {
    for _ in 0..(rng.next() % 3) {
        let spec = &controls::ALL[(rng.next() % controls::ALL.len() as u64) as usize];
        if LEFT_ALONE.contains(&spec.id) {
            continue;
        }
        let value = match rng.next() % 8 {
            0 => spec.min,
            1 => spec.max,
            _ => spec.min + (spec.max - spec.min) * rng.unit(),
        };
        controls.set(spec.id, value);
    }
    engine.set_controls(controls);
    for _ in 0..(rng.next() % 5) {
        let note = NoteId { channel: (rng.next() % 4) as u8, note: 28 + (rng.next() % 70) as u8, voice_id: None };
        let event = match rng.next() % 6 {
            0 | 1 => NoteEvent::NoteOn { note, velocity: 0.3 + 0.7 * rng.unit() },
            2 => NoteEvent::NoteOff { pattern: NotePattern { channel: Some(note.channel), note: Some(note.note), voice_id: None } },
            3 => NoteEvent::PitchBend { channel: note.channel, value: rng.unit() },
            4 => NoteEvent::ChannelPressure { channel: note.channel, value: rng.unit() },
            _ => NoteEvent::ControlChange { channel: note.channel, cc: 1, value: rng.unit() },
        };
        engine.handle_event(&event);
    }
    engine.render(black_box(buffer));
}

fn bench(c: &mut Criterion) {
    let mut engine = Engine::new(RATE);
    let mut controls = Controls::default();
    let mut rng = Rng(0x5EED_5702);
    let mut buffer = vec![0.0f32; BLOCK];
    c.bench_function("storm_block_256", |b| b.iter(|| storm_block(&mut engine, &mut controls, &mut rng, &mut buffer)));
}

fn summary() {
    let mut engine = Engine::new(RATE);
    let mut controls = Controls::default();
    let mut rng = Rng(0x5EED_5702);
    let mut buffer = vec![0.0f32; BLOCK];
    let blocks = (20.0 * RATE / BLOCK as f64) as usize;
    let mut times: Vec<f64> = (0..blocks)
        .map(|_| {
            let start = Instant::now();
            storm_block(&mut engine, &mut controls, &mut rng, &mut buffer);
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    let median = at(0.5);
    let budget = BLOCK as f64 / RATE;
    println!("\nA storm of {blocks} blocks of {BLOCK} samples at 48 kHz (random controls and events every block):");
    println!("  median block {:8.1} us ({:.1} % of its real-time budget)", median * 1e6, 100.0 * median / budget);
    for (name, q) in [("99th percentile", 0.99), ("99.9th percentile", 0.999)] {
        println!("  {name:17} {:8.1} us, {:5.1} x the median", at(q) * 1e6, at(q) / median);
    }
    let worst = times[times.len() - 1];
    println!("  worst block     {:8.1} us, {:5.1} x the median, {:.1} % of its real-time budget", worst * 1e6, worst / median, 100.0 * worst / budget);
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

//! What the editor and the pad cost the audio thread: capturing the views' snapshot (eight
//! sounding strings and a full-resolution drum, done 60 times a second) and reading the
//! gesture atomics into the engine (done every 64 samples).
//!
//! `cargo bench --bench view_capture` runs criterion, then prints each cost as a share of
//! one core at 48 kHz.

mod common;

use common::RATE;
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rosin_engine::controller::bus::{GestureBus, GestureSource};
use rosin_engine::controller::gesture::LaneGesture;
use rosin_engine::controls::Controls;
use rosin_engine::view::snapshot::{capture, ViewSnapshot, VIEW_RATE_HZ};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent};


/// Eight strings and one drum at full resolution, all sounding.
fn busy_engine() -> Engine {
    let mut engine = Engine::new(RATE);
    let mut controls = Controls::default();
    engine.set_controls(&controls);
    for key in [43, 50, 57, 64, 67, 71, 74, 79] {
        engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 1.0 });
    }
    controls.instrument = 1.0;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: 60, voice_id: None }, velocity: 1.0 });
    let mut warm = vec![0.0f32; 4800];
    engine.render(&mut warm);
    engine
}

fn costs(c: &mut Criterion) {
    let engine = busy_engine();
    let mut snapshot = ViewSnapshot::default();
    c.bench_function("view_capture_8_strings_full_drum", |b| b.iter(|| capture(black_box(&engine), &mut snapshot)));
    let mut engine = busy_engine();
    let bus = GestureBus::default();
    bus.write(0, &LaneGesture { bow_down: true, bow_force_n: 4.0, bow_velocity_mps: 0.1, ..LaneGesture::default() }, GestureSource::Sensel);
    c.bench_function("gesture_read_and_apply", |b| b.iter(|| engine.set_gestures(black_box(&bus.read()))));
}

fn seconds_per_call(mut f: impl FnMut(), calls: u32) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    start.elapsed().as_secs_f64() / calls as f64
}

fn summary() {
    let engine = busy_engine();
    let mut snapshot = ViewSnapshot::default();
    let capture_s = seconds_per_call(|| capture(black_box(&engine), &mut snapshot), 2000);
    let mut engine = busy_engine();
    let bus = GestureBus::default();
    let apply_s = seconds_per_call(|| engine.set_gestures(black_box(&bus.read())), 20_000);
    println!("\nAudio-thread cost of the editor and the pad at 48 kHz:");
    println!("  view capture:   {:7.2} us a call, {:.3} % of a core at {VIEW_RATE_HZ} Hz", capture_s * 1e6, 100.0 * capture_s * VIEW_RATE_HZ);
    println!("  gesture update: {:7.2} us a call, {:.3} % of a core every 64 samples", apply_s * 1e6, 100.0 * apply_s * RATE / 64.0);
}

criterion_group!(benches, costs);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

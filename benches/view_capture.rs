//! What the editor and the pad cost the audio thread: capturing the views' snapshot (eight
//! sounding strings and a full-resolution drum, done 60 times a second), reading the
//! gesture atomics into the engine (done every 64 samples), and the lab view's recording of
//! the loudest voice's contact (every sample; issue 17 allows it 1 % of the audio thread),
//! measured against the cheapest engine it runs in, one string voice.
//!
//! `cargo bench --bench view_capture` runs criterion, then prints each cost as a share of
//! one core at 48 kHz.

mod common;

use common::{busy_engine, RATE};
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rosin_engine::controller::bus::{GestureBus, GestureSource};
use rosin_engine::controller::gesture::LaneGesture;
use rosin_engine::controls::Controls;
use rosin_engine::view::lab::{LabRecorder, LAB_CHOOSE_SAMPLES};
use rosin_engine::view::snapshot::{capture, ViewSnapshot, VIEW_RATE_HZ};
use rosin_engine::voices::Engine;



fn costs(c: &mut Criterion) {
    let engine = busy_engine();
    let mut snapshot = ViewSnapshot::default();
    c.bench_function("view_capture_8_strings_full_drum", |b| b.iter(|| capture(black_box(&engine), &mut snapshot)));
    let mut engine = busy_engine();
    let bus = GestureBus::default();
    bus.write(0, &LaneGesture { bow_down: true, bow_force_n: 4.0, bow_velocity_mps: 0.1, ..LaneGesture::default() }, GestureSource::Sensel);
    c.bench_function("gesture_read_and_apply", |b| b.iter(|| engine.set_gestures(black_box(&bus.read()))));
    let (mut recorder, engine) = lone_voice_recorder();
    c.bench_function("lab_record_one_sample", |b| b.iter(|| recorder.record(black_box(engine.voices()), black_box(engine.drum_voices()))));
}

/// A lone G3 sounding, and a recorder following it.
fn lone_voice_recorder() -> (LabRecorder, Engine) {
    let engine = common::sounding(&Controls::default(), &[55], 0.8, 0.5);
    let mut recorder = LabRecorder::default();
    recorder.choose(engine.voices(), engine.drum_voices());
    assert!(recorder.source().is_some());
    (recorder, engine)
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
    // The lab's recording against a lone voice's whole render, per sample (the best of
    // nine runs of each, so that the machine's noise does not inflate either).
    let (mut recorder, mut engine) = lone_voice_recorder();
    let record_s = (0..9).map(|_| seconds_per_call(|| recorder.record(black_box(engine.voices()), black_box(engine.drum_voices())), 200_000)).fold(f64::MAX, f64::min);
    let mut block = vec![0.0f32; common::BLOCK];
    engine.set_lab_enabled(false);
    let sample_s = (0..9).map(|_| seconds_per_call(|| engine.render(black_box(&mut block)), 200)).fold(f64::MAX, f64::min) / common::BLOCK as f64;
    // Looking for the loudest voice, once every LAB_CHOOSE_SAMPLES.
    let choose_s = (0..9).map(|_| seconds_per_call(|| recorder.choose(black_box(engine.voices()), black_box(engine.drum_voices())), 20_000)).fold(f64::MAX, f64::min);
    let per_sample_s = record_s + choose_s / LAB_CHOOSE_SAMPLES as f64;
    println!("  lab recording:  {:7.2} ns a sample and {:.2} us every {LAB_CHOOSE_SAMPLES} samples to choose the voice: {:.2} % of a lone string voice's {:.2} us a sample (issue 17 allows 1 %)", record_s * 1e9, choose_s * 1e6, 100.0 * per_sample_s / sample_s, sample_s * 1e6);
}

criterion_group!(benches, costs);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

//! Real-time factor of matusiak2025's high-fidelity bowed string (`rosin_physics::bow::hifi_bow`): the
//! Table 2 string with torsion, bowed with M = 1, 2 and 4 contact points, at 48 kHz, in
//! steady Helmholtz motion.
//!
//! Then the ribbon bow as a string voice (issue 17, `rosin_engine::ribbon`): the engine
//! playing one note with Bow Model Ribbon, M = 1, 2, 4, with and without torsion, against
//! the point bow's voice on the same note.
//!
//! `cargo bench --bench hifi_bow` runs criterion, then prints the real-time factor
//! per voice (seconds of audio per second of one core) and the cost per sample.

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rosin_engine::controls::Controls;
use rosin_physics::bow::hifi_bow::{HiFiBowParams, HiFiBowedString};

const POINTS: [usize; 3] = [1, 2, 4];

/// A string already bowing in steady state (the bow takes 0.39 s to reach speed).
fn bowing(points: usize) -> HiFiBowedString {
    let mut bowed = HiFiBowedString::new(HiFiBowParams { contact_points: points, ..HiFiBowParams::matusiak2025() }, RATE);
    for _ in 0..(0.8 * RATE) as usize {
        bowed.tick();
    }
    bowed
}

fn render(bowed: &mut HiFiBowedString, buffer: &mut [f64]) {
    for y in buffer.iter_mut() {
        *y = bowed.tick();
    }
}

fn voices(c: &mut Criterion) {
    let mut group = c.benchmark_group("hifi_bow_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut buffer = vec![0.0; BLOCK];
    for points in POINTS {
        let mut bowed = bowing(points);
        group.bench_function(BenchmarkId::new("contact_points", points), |b| b.iter(|| render(&mut bowed, black_box(&mut buffer))));
    }
    group.finish();
    let mut group = c.benchmark_group("ribbon_voice_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut block = vec![0.0f32; BLOCK];
    let mut engine = common::sounding(&ribbon(3.0, 1.0), &[55], 0.8, 0.5);
    group.bench_function("G3_four_points_torsion", |b| b.iter(|| engine.render(black_box(&mut block))));
    group.finish();
}

/// The controls of a ribbon voice with `width` (points less one) and `torsion` (0 or 1).
fn ribbon(width: f64, torsion: f64) -> Controls {
    Controls { bow_model: 1.0, bow_width: width, bow_torsion: torsion, ..Controls::default() }
}

/// Seconds of audio rendered per second of wall time, over `seconds` of audio.
fn real_time_factor(points: usize, seconds: f64) -> f64 {
    let mut bowed = bowing(points);
    common::real_time_factor(seconds, |buffer| render(&mut bowed, buffer))
}

fn summary() {
    println!("\nReal-time factor at 48 kHz, one voice (audio seconds per core second):");
    for points in POINTS {
        let rtf = real_time_factor(points, 4.0);
        println!("  M = {points}: {rtf:7.1} x real time, {:6.1} ns per sample, {:5.2} % of a core", 1e9 / (rtf * RATE), 100.0 / rtf);
    }
    // Issue 16 asks for eight ribbon voices together at 4 x real time.
    let chord = [48, 52, 55, 60, 64, 67, 72, 76];
    let mut engine = common::sounding(&ribbon(3.0, 1.0), &chord, 0.8, 0.5);
    let rtf = common::real_time_factor(4.0, |buffer: &mut [f32]| engine.render(buffer));
    println!(
        "\nEight ribbon voices together (M = 4, torsion; C3 E3 G3 C4 E4 G4 C5 E5, the engine and body): {rtf:6.2} x real time, {:6.1} ns a voice-sample",
        1e9 / (rtf * RATE * chord.len() as f64)
    );
    println!("\nThe ribbon bow as a string voice at 48 kHz (the engine, body included, one note):");
    for (name, key) in [("G3", 55u8), ("A4", 69)] {
        let point = {
            let mut engine = common::sounding(&Controls::default(), &[key], 0.8, 0.5);
            common::real_time_factor(2.0, |buffer: &mut [f32]| engine.render(buffer))
        };
        println!("  {name}, point bow: {point:7.1} x real time, {:6.1} ns a sample", 1e9 / (point * RATE));
        for (width, torsion) in [(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (3.0, 0.0), (3.0, 1.0)] {
            let mut engine = common::sounding(&ribbon(width, torsion), &[key], 0.8, 0.5);
            let rtf = common::real_time_factor(2.0, |buffer: &mut [f32]| engine.render(buffer));
            println!(
                "  {name}, ribbon M = {}, torsion {}: {rtf:7.1} x real time, {:6.1} ns a sample, {:.1} x the point bow's cost",
                width as usize + 1,
                if torsion > 0.5 { "on " } else { "off" },
                1e9 / (rtf * RATE),
                point / rtf
            );
        }
    }
}

criterion_group!(benches, voices);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

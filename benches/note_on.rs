//! What a burst of note-ons costs the audio thread (issue 18): sixteen notes struck on the
//! same sample while sixteen others sound (each steals a sounding voice, which is killed,
//! and tunes a fresh string: the grid's design, the ear, the bow), then that sample
//! rendered; against one ordinary sample of sixteen sounding voices. At 48 and 192 kHz.
//!
//! `cargo bench --bench note_on` runs criterion, then prints the median and the worst of
//! 200 such storms next to the median ordinary sample.

mod common;

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rosin_engine::controls::Controls;
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent};

/// Two chords of sixteen that take turns, so every note-on is a new note on a stolen voice.
const CHORDS: [[u8; 16]; 2] = [[31, 36, 40, 43, 48, 52, 55, 60, 64, 67, 72, 76, 79, 84, 88, 96], [33, 38, 41, 45, 50, 53, 57, 62, 65, 69, 74, 77, 81, 86, 89, 94]];

fn sounding(rate: f64) -> Engine {
    let mut engine = Engine::new(rate);
    engine.set_controls(&Controls::default());
    for key in CHORDS[0] {
        engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 0.8 });
    }
    let mut warm = vec![0.0f32; (0.3 * rate) as usize];
    engine.render(&mut warm);
    engine
}

/// Strikes chord `turn % 2` (sixteen note-ons) and renders one sample.
fn storm(engine: &mut Engine, turn: usize) {
    for key in CHORDS[turn % 2] {
        engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 0.8 });
    }
    engine.render(black_box(&mut [0.0f32]));
}

fn note_ons(c: &mut Criterion) {
    for rate in [48_000.0, 192_000.0] {
        let mut group = c.benchmark_group(format!("note_on_{}k", rate / 1000.0));
        let mut engine = sounding(rate);
        let mut turn = 1;
        group.bench_function("sixteen_note_ons_and_a_sample", |b| {
            b.iter(|| {
                storm(&mut engine, turn);
                turn += 1;
            })
        });
        let mut engine = sounding(rate);
        group.bench_function("an_ordinary_sample_of_sixteen_voices", |b| b.iter(|| engine.render(black_box(&mut [0.0f32]))));
        group.finish();
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn summary() {
    println!("\nSixteen note-ons on one sample, against an ordinary sample of sixteen voices:");
    for rate in [48_000.0, 192_000.0] {
        let mut engine = sounding(rate);
        let storms: Vec<f64> = (1..=200)
            .map(|turn| {
                let start = Instant::now();
                storm(&mut engine, turn);
                let mut t = start.elapsed().as_secs_f64();
                // The note-ons start four a sample: the worst of those samples counts.
                for _ in 0..3 {
                    let start = Instant::now();
                    engine.render(black_box(&mut [0.0f32]));
                    t = t.max(start.elapsed().as_secs_f64());
                }
                // Let the new notes sound a little before the next storm.
                engine.render(&mut vec![0.0f32; 64]);
                t
            })
            .collect();
        let mut engine = sounding(rate);
        let ordinary: Vec<f64> = (0..2_000)
            .map(|_| {
                let start = Instant::now();
                engine.render(black_box(&mut [0.0f32]));
                start.elapsed().as_secs_f64()
            })
            .collect();
        let (worst, typical, sample) = (storms.iter().copied().fold(0.0, f64::max), median(storms), median(ordinary));
        println!(
            "  {:5.0} kHz: a storm takes {:7.1} us (median), {:7.1} us at worst; an ordinary sample {:5.2} us: {:.0} and {:.0} times it",
            rate / 1000.0,
            typical * 1e6,
            worst * 1e6,
            sample * 1e6,
            typical / sample,
            worst / sample
        );
    }
}

/// The most one sample takes from the one on which `change` happens through the
/// [`SAMPLES_AFTER`] after it (events that wait their turn play there), over `times` tries,
/// each on a sounding engine: the median try's and the worst try's (which may be the
/// machine's: an interrupt on one sample of 660).
fn worst_change_s(rate: f64, times: usize, mut change: impl FnMut(&mut Engine, usize)) -> (f64, f64) {
    let tries: Vec<f64> = (0..times)
        .map(|turn| {
            let mut engine = sounding(rate);
            let start = Instant::now();
            change(&mut engine, turn);
            engine.render(black_box(&mut [0.0f32]));
            let mut worst = start.elapsed().as_secs_f64();
            for _ in 0..SAMPLES_AFTER {
                let start = Instant::now();
                engine.render(black_box(&mut [0.0f32]));
                worst = worst.max(start.elapsed().as_secs_f64());
            }
            worst
        })
        .collect();
    (median(tries.clone()), tries.iter().copied().fold(0.0, f64::max))
}

/// Samples timed after a change: a chord of sixteen notes on new settings waits for its
/// grids, designed a few modes a sample, for about 72 samples.
const SAMPLES_AFTER: usize = 256;

/// The other bursts issue 18 names: a reset, a change of play mode, string set, body or
/// preset under sixteen sounding voices, and sixteen note-ons on settings no note was
/// designed for yet (each designs its grid on the audio thread, once, a note a sample).
fn other_bursts() {
    use rosin_engine::controls::Controls;
    println!("\nOther bursts: the costliest sample from the change on, the median of 20 tries and the worst, against an ordinary sample (48 kHz):");
    let rate = 48_000.0;
    let mut engine = sounding(rate);
    let ordinary = median((0..2_000).map(|_| {
        let start = Instant::now();
        engine.render(black_box(&mut [0.0f32]));
        start.elapsed().as_secs_f64()
    }).collect());
    let report = |what: &str, (typical, worst): (f64, f64)| {
        println!("  {what:50} {:6.1} us, {:4.1} times an ordinary sample ({:.2} us); at worst {:6.1} us, {:4.1} times", typical * 1e6, typical / ordinary, ordinary * 1e6, worst * 1e6, worst / ordinary)
    };
    report("reset", worst_change_s(rate, 20, |engine, _| engine.reset()));
    report("play mode Poly -> Four Strings", worst_change_s(rate, 20, |engine, _| engine.set_controls(&Controls { play_mode: 1.0, ..Controls::default() })));
    report("play mode Poly -> Mono Legato", worst_change_s(rate, 20, |engine, _| engine.set_controls(&Controls { play_mode: 2.0, ..Controls::default() })));
    report("string set Rosin -> Cello", worst_change_s(rate, 20, |engine, _| engine.set_controls(&Controls { string_set: 3.0, ..Controls::default() })));
    report("body Violin -> Cello (sixteen voices' responses)", worst_change_s(rate, 20, |engine, _| engine.set_controls(&Controls { body: 2.0, ..Controls::default() })));
    let cello = rosin_engine::presets::find("Cello").expect("the Cello preset").controls();
    report("preset Cello (Four Strings, its strings and body)", worst_change_s(rate, 20, |engine, _| engine.set_controls(&cello)));
    report(
        "sixteen note-ons on a new string stiffness",
        worst_change_s(rate, 20, |engine, turn| {
            // A stiffness no note has been designed for: every note designs its grid.
            engine.set_controls(&Controls { string_stiffness: 1e-4 * (1.0 + 0.01 * (turn + 1) as f64), ..Controls::default() });
            for key in CHORDS[1] {
                engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 0.8 });
            }
        }),
    );
}

criterion_group!(benches, note_ons);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
    other_bursts();
}

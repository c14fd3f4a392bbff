//! The bowed string in f32, the format the engine's voices play it in ([`VoiceSample`]),
//! against the same string in f64, in which the scheme's tests prove it (issue 16: a
//! change of number format must show its effect on pitch, Helmholtz motion, level and
//! decay). The bow is quiet (no noise), so the two differ by rounding alone; bowed strings
//! amplify any difference into a different phase of the slip, so what is compared is what a
//! listener hears of each: the pitch, the slip's share of the period, the level, the
//! harmonics and the ring-out once the bow leaves.

mod common;

use common::{cents, least_squares_slope, peak_frequency_hz, relative_loop_area, slips};
use rosin_engine::voice::VoiceSample;
use rosin_lab::lab_friction;
use rosin_physics::bow::bowed_string::{BowedString, BowingControls};
use rosin_physics::bow::contact::FrictionModel;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::string::note_string::NoteStringDesign;
use rosin_physics::string::stiff_string::StringSample;

const RATE: f64 = 48_000.0;
const BOW_VELOCITY_MPS: f64 = 0.1;
const BOW_POSITION: f64 = 0.18;
const BOWED_S: f64 = 1.2;
/// The steady part of the note that is measured: its last half second.
const STEADY_S: f64 = 0.5;
const RING_S: f64 = 0.6;

/// A note from C2 to C7 with a bow force at which both formats play Helmholtz motion (one
/// slip a period, measured): bowed without the engine's adaptation of force to the key, a
/// low string needs a firmer bow, and a high one at a firm bow slips more than once.
const HELMHOLTZ_NOTES: [(f64, f64); 8] = [(65.41, 15.0), (98.0, 6.0), (130.81, 10.0), (261.63, 6.0), (440.0, 6.0), (880.0, 2.0), (1318.5, 3.0), (2093.0, 1.0)];

/// What one format's held note and ring-out sound like.
#[derive(Debug)]
struct Heard {
    pitch_hz: f64,
    slips_per_period: f64,
    slip_fraction: f64,
    level_db: f64,
    /// Harmonics 1 to 8 of the bridge force (dB, against the fundamental).
    harmonics_db: [f64; 8],
    /// The ring-out's decay rate (dB a second), from the bridge force's envelope.
    decay_db_per_s: f64,
}

fn string<S: StringSample>(frequency_hz: f64, rate_hz: f64) -> BowedString<S> {
    let (grid, material) = NoteStringDesign::default().build(frequency_hz, rate_hz, 1024);
    // `tests/bowing.rs`'s quiet bow: stiff bristles, no noise.
    let s0 = 1e5;
    let friction = ElastoPlasticParams { bristle_stiffness_n_per_m: s0, bristle_damping_kg_per_s: 0.001 * f64::sqrt(s0), noise_per_normal_force: 0.0, ..ElastoPlasticParams::default() };
    BowedString::with_capacity(1024, grid, material, friction, 7)
}

/// The power of `signal` at `frequency_hz` (one DFT bin, Hann window).
fn power_at(signal: &[f64], frequency_hz: f64, rate_hz: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * frequency_hz / rate_hz;
    let last = (signal.len() - 1) as f64;
    let (mut re, mut im) = (0.0, 0.0);
    for (i, x) in signal.iter().enumerate() {
        let hann = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / last).cos();
        let (s, c) = (w * i as f64).sin_cos();
        re += hann * x * c;
        im -= hann * x * s;
    }
    re * re + im * im
}

fn db(power: f64) -> f64 {
    10.0 * power.log10()
}

/// Bows a note at `force_n` for [`BOWED_S`] (a 100 ms ramp in), then lifts the bow and
/// lets it ring for [`RING_S`], at `rate_hz`.
fn hear<S: StringSample>(frequency_hz: f64, force_n: f64, rate_hz: f64) -> Heard {
    let mut bowed = string::<S>(frequency_hz, rate_hz);
    let samples = (BOWED_S * rate_hz) as usize;
    let ramp = (0.1 * rate_hz) as usize;
    let mut bridge = Vec::with_capacity(samples);
    let mut relative = Vec::with_capacity(samples);
    for i in 0..samples {
        let a = (i as f64 / ramp as f64).min(1.0);
        let controls = BowingControls { normal_force_n: force_n * a, bow_velocity_mps: BOW_VELOCITY_MPS * a, bow_position: BOW_POSITION, finger_position_m: None };
        bridge.push(bowed.tick(&controls));
        relative.push(bowed.last_contact().relative_velocity_mps);
    }
    let lifted = BowingControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_position: BOW_POSITION, finger_position_m: None };
    let ring: Vec<f64> = (0..(RING_S * rate_hz) as usize).map(|_| bowed.tick(&lifted)).collect();

    let steady_from = samples - (STEADY_S * rate_hz) as usize;
    let (steady, steady_relative) = (&bridge[steady_from..], &relative[steady_from..]);
    let pitch_hz = peak_frequency_hz(steady, rate_hz, frequency_hz);
    let slips = slips(steady_relative.iter().copied(), BOW_VELOCITY_MPS);
    let slip_fraction = steady_relative.iter().filter(|&&v| v < -BOW_VELOCITY_MPS).count() as f64 / steady.len() as f64;
    let level_db = db(steady.iter().map(|x| x * x).sum::<f64>() / steady.len() as f64);
    let fundamental = power_at(steady, pitch_hz, rate_hz);
    let harmonics_db = std::array::from_fn(|h| db(power_at(steady, (h + 1) as f64 * pitch_hz, rate_hz) / fundamental));
    // The envelope's level in 50 ms windows from 0.1 s after the lift, fitted by a line.
    let window = (0.05 * rate_hz) as usize;
    let points: Vec<(f64, f64)> = ring[(0.1 * rate_hz) as usize..]
        .chunks_exact(window)
        .enumerate()
        .map(|(i, w)| (i as f64 * 0.05, db(w.iter().map(|x| x * x).sum::<f64>() / window as f64)))
        .collect();
    let decay_db_per_s = -least_squares_slope(&points);
    Heard { pitch_hz, slips_per_period: slips as f64 / (STEADY_S * pitch_hz), slip_fraction, level_db, harmonics_db, decay_db_per_s }
}

/// How far f32 may stray from f64 at a rate.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    cents: f64,
    level_db: f64,
    slip_fraction: f64,
    harmonic_db: f64,
    decay: f64,
}

/// A host's rates, each with its bounds. f32 keeps 24 bits of each node, and a low note at a
/// high rate moves its nodes by little in a step: a C2's step at 192 kHz changes its
/// fundamental's curvature term by 4.5e-6 of the displacement, 75 roundings' worth, where at
/// 48 kHz it is 1,200. So the low notes stray further at 96 and 192 kHz (measured, worst: C2
/// 0.52 cents at 96 kHz, 0.78 at 192 kHz, with its harmonics 1.4 dB and its ring-out 1.4 %);
/// the engine's intonation still tunes every note by ear (`tests/host_rates.rs`).
const RATES: [(f64, Bounds); 4] = [
    (44_100.0, Bounds { cents: 0.1, level_db: 0.1, slip_fraction: 0.01, harmonic_db: 0.5, decay: 0.01 }),
    (48_000.0, Bounds { cents: 0.1, level_db: 0.1, slip_fraction: 0.01, harmonic_db: 0.5, decay: 0.01 }),
    (96_000.0, Bounds { cents: 1.0, level_db: 0.1, slip_fraction: 0.01, harmonic_db: 1.0, decay: 0.01 }),
    (192_000.0, Bounds { cents: 1.5, level_db: 0.2, slip_fraction: 0.01, harmonic_db: 2.5, decay: 0.03 }),
];

/// Across the keyboard (C2 to C7) and at 44.1 to 192 kHz, the f32 string plays what the f64
/// string plays: Helmholtz motion in both (one slip a period), and within each rate's
/// [`Bounds`] the same pitch, the slip's share of the period, the level, each of the first
/// eight harmonics that lies within 20 dB of the fundamental, and the ring-out's decay. At
/// 44.1 and 48 kHz: 0.1 cents, 0.01 of the period, 0.1 dB, 0.5 dB and 1 %.
#[test]
fn a_string_in_f32_plays_what_it_plays_in_f64() {
    assert_eq!(std::any::type_name::<VoiceSample>(), "f32", "this test is about the f32 voices");
    for (rate_hz, bounds) in RATES {
        let (mut worst_cents, mut worst_level, mut worst_harmonic, mut worst_decay, mut worst_slip): (f64, f64, f64, f64, f64) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (frequency_hz, force_n) in HELMHOLTZ_NOTES {
            let wide = hear::<f64>(frequency_hz, force_n, rate_hz);
            let narrow = hear::<VoiceSample>(frequency_hz, force_n, rate_hz);
            let case = format!("{frequency_hz} Hz at {force_n} N, {rate_hz} Hz: f64 {wide:?}, f32 {narrow:?}");
            for heard in [&wide, &narrow] {
                assert!((heard.slips_per_period - 1.0).abs() < 0.05, "not Helmholtz motion: {case}");
            }
            let off_cents = cents(narrow.pitch_hz, wide.pitch_hz);
            let off_level = narrow.level_db - wide.level_db;
            let off_slip = narrow.slip_fraction - wide.slip_fraction;
            // The strong harmonics, within 20 dB of the fundamental. (The weak ones lie in the
            // notches of the bow's position, or near the grid's highest frequencies on the
            // upper keys, 30 to 80 dB down, where any rounding moves them by a dB or more.)
            let off_harmonic = narrow.harmonics_db.iter().zip(&wide.harmonics_db).filter(|(_, b)| **b > -20.0).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            let off_decay = narrow.decay_db_per_s / wide.decay_db_per_s - 1.0;
            eprintln!("{rate_hz} Hz, {frequency_hz:7.2} Hz {force_n} N: pitch {off_cents:+.4} cents, level {off_level:+.3} dB, slip {off_slip:+.4}, harmonics within {off_harmonic:.3} dB, decay {:+.3} % ({:.1} dB/s)", 100.0 * off_decay, wide.decay_db_per_s);
            assert!(off_cents.abs() < bounds.cents, "pitch {off_cents:+.4} cents: {case}");
            assert!(off_level.abs() < bounds.level_db, "level {off_level:+.3} dB: {case}");
            assert!(off_slip.abs() < bounds.slip_fraction, "slip fraction {off_slip:+.4}: {case}");
            assert!(off_harmonic < bounds.harmonic_db, "a harmonic {off_harmonic:.3} dB off: {case}");
            assert!(off_decay.abs() < bounds.decay, "decay {:+.3} %: {case}", 100.0 * off_decay);
            worst_cents = worst_cents.max(off_cents.abs());
            worst_level = worst_level.max(off_level.abs());
            worst_harmonic = worst_harmonic.max(off_harmonic);
            worst_decay = worst_decay.max(off_decay.abs());
            worst_slip = worst_slip.max(off_slip.abs());
        }
        println!("{rate_hz} Hz, f32 against f64, worst: pitch {worst_cents:.4} cents, level {worst_level:.3} dB, slip fraction {worst_slip:.4}, harmonics {worst_harmonic:.3} dB, decay {:.3} %", 100.0 * worst_decay);
    }
}

/// What a D4 bowed under one friction law at `force_n` does over its last half second.
#[derive(Debug)]
struct Steady {
    slips_per_period: f64,
    /// The fastest slip (m/s, negative).
    fastest_slip_mps: f64,
    /// The bridge force's level (dB).
    level_db: f64,
    /// The (relative velocity, force) loop's area against its bounding box, over its last
    /// four periods.
    loop_area: f64,
}

fn steady<S: StringSample>(model: FrictionModel, force_n: f64) -> Steady {
    let f0 = 293.66;
    let (grid, material) = NoteStringDesign::default().build(f0, RATE, 1024);
    let mut bowed = BowedString::<S>::with_capacity(1024, grid, material, lab_friction(), 3);
    bowed.bow.set_model(model);
    let controls = BowingControls { normal_force_n: force_n, bow_velocity_mps: BOW_VELOCITY_MPS, bow_position: BOW_POSITION, finger_position_m: None };
    let trace: Vec<(f64, f64, f64)> = (0..(BOWED_S * RATE) as usize)
        .map(|_| {
            let bridge = bowed.tick(&controls);
            let contact = bowed.last_contact();
            (contact.relative_velocity_mps, contact.force_n, bridge)
        })
        .collect();
    let last = &trace[trace.len() - (STEADY_S * RATE) as usize..];
    let slips = slips(last.iter().map(|t| t.0), BOW_VELOCITY_MPS);
    let cycle: Vec<(f64, f64)> = trace[trace.len() - 4 * (RATE / f0).round() as usize..].iter().map(|&(v, f, _)| (v, f)).collect();
    Steady {
        slips_per_period: slips as f64 / (STEADY_S * f0),
        fastest_slip_mps: last.iter().map(|t| t.0).fold(f64::MAX, f64::min),
        level_db: db(last.iter().map(|t| t.2 * t.2).sum::<f64>() / last.len() as f64),
        loop_area: relative_loop_area(&cycle, 4),
    }
}

/// Each of the four friction laws bows the f32 string as it bows the f64 one (a D4 at
/// `tests/friction_models.rs`'s controls, at 3 N and 8 N): the same slips a period, the
/// fastest slip within 1 %, the level within 0.05 dB and, for the laws with a bristle
/// (whose force is not a function of the velocity), the hysteresis loop's area within 0.01
/// of its bounding box (measured: see the test's output).
///
/// Not at 6 N, where `tests/friction_models.rs` draws its loops: there the passive refined
/// law sits on the edge between its two regimes (a loop of area 0.11 with slips at 0.7 m/s
/// below about 6 N, one of 0.03 with slips at 1.16 m/s and 0.8 dB louder above), and f64
/// lands in the upper one, f32 in the lower (5.5 N and 6.5 N: both formats in the same).
#[test]
fn every_law_bows_the_f32_string_as_it_bows_the_f64_one() {
    let (mut worst_slip, mut worst_level, mut worst_area): (f64, f64, f64) = (0.0, 0.0, 0.0);
    for model in FrictionModel::ALL {
        for force_n in [3.0, 8.0] {
            let (wide, narrow) = (steady::<f64>(model, force_n), steady::<VoiceSample>(model, force_n));
            let case = format!("{} at {force_n} N: f64 {wide:?}, f32 {narrow:?}", model.name());
            eprintln!("{case}");
            assert!((narrow.slips_per_period - wide.slips_per_period).abs() < 0.02, "slips: {case}");
            assert!((narrow.fastest_slip_mps / wide.fastest_slip_mps - 1.0).abs() < 0.01, "fastest slip: {case}");
            assert!((narrow.level_db - wide.level_db).abs() < 0.05, "level: {case}");
            if model != FrictionModel::Hyperbolic {
                assert!((narrow.loop_area - wide.loop_area).abs() < 0.01, "loop area: {case}");
                worst_area = worst_area.max((narrow.loop_area - wide.loop_area).abs());
            }
            worst_slip = worst_slip.max((narrow.fastest_slip_mps / wide.fastest_slip_mps - 1.0).abs());
            worst_level = worst_level.max((narrow.level_db - wide.level_db).abs());
        }
    }
    println!("every law, f32 against f64, worst: fastest slip {:.3} %, level {worst_level:.4} dB, loop area {worst_area:.4}", 100.0 * worst_slip);
}

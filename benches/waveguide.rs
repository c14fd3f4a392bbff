//! Real-time factor of one bowed waveguide string (serafin1999; `MODELS.md` section 4) at A3,
//! 48 kHz, with the elasto-plastic (Dupont) contact, with the hyperbolic contact, and with the
//! hyperbolic contact under a vibrato that retunes the loop every sample.
//!
//! `cargo bench --bench waveguide` runs criterion, then prints the real-time factor of each
//! (seconds of audio per second of one core) and the cost per sample.

mod common;

use common::{BLOCK, RATE};
use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};
use rosin_physics::friction::dupont_contact::BowContact;
use rosin_physics::bow::bowed_string::BowingControls;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::friction::hyperbolic::{HyperbolicFriction, HyperbolicLaw};
use rosin_physics::string::tuning::midi_key_to_hz;
use rosin_physics::waveguide::WaveguideString;

const A3: f64 = 57.0;

/// The elasto-plastic bow with the default bristles (as the voice plays it) and with the
/// stiff bristles of the Helmholtz test (`tests/waveguide.rs`, where Newton falls back to
/// bisection a few hundred times a second), the hyperbolic bow, and the hyperbolic bow with
/// a 6 Hz vibrato that retunes the loop every sample.
#[derive(Clone, Copy)]
enum Case {
    ElastoPlastic,
    ElastoPlasticStiff,
    Hyperbolic,
    HyperbolicVibrato,
}

const CASES: [(&str, Case); 4] =
    [("elasto_plastic", Case::ElastoPlastic), ("elasto_plastic_stiff", Case::ElastoPlasticStiff), ("hyperbolic", Case::Hyperbolic), ("hyperbolic_vibrato", Case::HyperbolicVibrato)];

/// One string with its contact, already bowing in steady state.
struct Bowed {
    string: WaveguideString,
    dupont: BowContact,
    hyperbolic: HyperbolicFriction,
    case: Case,
    controls: BowingControls,
    sample: u64,
}

impl Bowed {
    fn new(case: Case) -> Self {
        let mut string = WaveguideString::new(30.0, RATE);
        string.set_frequency_hz(midi_key_to_hz(A3));
        let bristles = match case {
            Case::ElastoPlasticStiff => {
                let s0 = 1e6;
                ElastoPlasticParams { bristle_stiffness_n_per_m: s0, bristle_damping_kg_per_s: 0.001 * s0.sqrt(), ..ElastoPlasticParams::default() }
            }
            _ => ElastoPlasticParams::default(),
        };
        let controls = match case {
            Case::ElastoPlastic | Case::ElastoPlasticStiff => BowingControls { normal_force_n: 5.5, bow_velocity_mps: 0.1, bow_position: 0.1, finger_position_m: None },
            _ => BowingControls { normal_force_n: 4.0, bow_velocity_mps: 0.15, bow_position: 0.13, finger_position_m: None },
        };
        let mut bowed = Self { string, dupont: BowContact::new(bristles, 1), hyperbolic: HyperbolicFriction::new(HyperbolicLaw::default()), case, controls, sample: 0 };
        let mut warm = vec![0.0; (0.5 * RATE) as usize];
        bowed.render(&mut warm);
        bowed
    }

    fn render(&mut self, out: &mut [f64]) {
        for y in out.iter_mut() {
            *y = match self.case {
                Case::ElastoPlastic | Case::ElastoPlasticStiff => self.string.tick(&self.controls, &mut self.dupont),
                Case::Hyperbolic => self.string.tick_hyperbolic(&self.controls, 0.0, &mut self.hyperbolic),
                Case::HyperbolicVibrato => {
                    let phase = 2.0 * std::f64::consts::PI * 6.0 * self.sample as f64 / RATE;
                    self.sample += 1;
                    self.string.set_frequency_hz(midi_key_to_hz(A3 + 0.2 * phase.sin()));
                    self.string.tick_hyperbolic(&self.controls, 0.0, &mut self.hyperbolic)
                }
            };
        }
    }
}

fn contacts(c: &mut Criterion) {
    let mut group = c.benchmark_group("waveguide_a3_48k");
    group.throughput(Throughput::Elements(BLOCK as u64));
    let mut buffer = vec![0.0; BLOCK];
    for (name, case) in CASES {
        let mut bowed = Bowed::new(case);
        group.bench_function(name, |b| b.iter(|| bowed.render(black_box(&mut buffer))));
    }
    group.finish();
}

/// Seconds of audio rendered per second of wall time, over `seconds` of audio.
fn real_time_factor(case: Case, seconds: f64) -> f64 {
    let mut bowed = Bowed::new(case);
    common::real_time_factor(seconds, |buffer| bowed.render(buffer))
}

fn summary() {
    println!("\nReal-time factor of one bowed waveguide string, A3 at 48 kHz (audio seconds per core second):");
    for (name, case) in CASES {
        let rtf = real_time_factor(case, 10.0);
        println!("  {name:>20}: {rtf:8.1} x real time, {:6.1} ns per sample, {:6.3} % of a core", 1e9 / (rtf * RATE), 100.0 / rtf);
    }
}

criterion_group!(benches, contacts);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

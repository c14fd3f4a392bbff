//! Friction force against relative velocity at the friction interface, one loop per friction
//! model, on the lab's G3 string in steady Helmholtz motion (willemsen2019 Fig. 10,
//! serafin1999 Fig. 3 style).
//!
//! A model with memory (a bristle) traces a loop: the force at a given velocity depends on
//! whether the slip is starting or ending. Its area `∮ f dv` over one period (N·m/s) measures
//! that memory; a memoryless law slides on its curve and encloses area only through the stick,
//! where its velocity barely moves.

use super::{BowRecorder, BowSample, Bowing, SlipDetector, SAMPLE_RATE_HZ, STRING_FREQUENCY_HZ};
use rosin_physics::bow::contact::FrictionModel;

/// How a loop is recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HysteresisSettings {
    pub bowing: Bowing,
    /// Force and velocity ramp in over this long (s).
    pub ramp_s: f64,
    /// The loop is taken from the first slip after this time (s).
    pub settle_s: f64,
    /// Periods recorded, slip to slip.
    pub periods: usize,
}

impl Default for HysteresisSettings {
    fn default() -> Self {
        Self { bowing: Bowing::default(), ramp_s: 0.1, settle_s: 0.8, periods: 4 }
    }
}

/// One model's loop.
#[derive(Clone, Debug)]
pub struct HysteresisLoop {
    pub model: FrictionModel,
    /// The samples from one slip onset to `periods` slips later, both included.
    pub samples: Vec<BowSample>,
    /// How many periods `samples` spans (fewer than asked if the string stopped slipping).
    pub periods: usize,
    /// `∮ f dv` per period (N·m/s), with `v` the contact velocity: positive for a loop
    /// traced anticlockwise in the (v, f) plane.
    pub loop_area_n_mps: f64,
    /// `∮ f dv` of each period on its own (N·m/s): their spread shows how far the loop
    /// repeats from period to period, the noise floor of `loop_area_n_mps`.
    pub period_areas_n_mps: Vec<f64>,
    /// The mean period, slip to slip (s).
    pub period_s: f64,
}

/// `∮ f dv` around the samples taken as a closed polygon (trapezoid rule, with the segment
/// from the last sample back to the first), in the contact velocity. Closing the path makes
/// it the polygon's exact signed area: the last and first samples, both just past a slip's
/// start, may still lie a sample's worth of slip velocity apart.
pub fn loop_integral_n_mps(samples: &[BowSample]) -> f64 {
    let segment = |a: &BowSample, b: &BowSample| 0.5 * (a.force_n + b.force_n) * (b.contact_velocity_mps - a.contact_velocity_mps);
    let open: f64 = samples.windows(2).map(|w| segment(&w[0], &w[1])).sum();
    match (samples.first(), samples.last()) {
        (Some(first), Some(last)) => open + segment(last, first),
        _ => 0.0,
    }
}

/// Bows the lab string with `model` and records its loop.
pub fn hysteresis_loop(model: FrictionModel, settings: &HysteresisSettings) -> HysteresisLoop {
    let mut recorder = BowRecorder::new(model);
    let ramp = (settings.ramp_s * SAMPLE_RATE_HZ).max(1.0);
    let settle = (settings.settle_s * SAMPLE_RATE_HZ) as usize;
    let nominal_period = (SAMPLE_RATE_HZ / STRING_FREQUENCY_HZ).round() as usize;
    // Long enough for the periods asked even if the string plays an octave flat.
    let limit = settle + 2 * nominal_period * (settings.periods + 1);
    let mut detector = SlipDetector::new(settings.bowing.bow_position);
    let mut recorded = Vec::new();
    let mut onsets = Vec::new();
    for n in 0..limit {
        let controls = settings.bowing.controls((n as f64 / ramp).min(1.0));
        let sample = recorder.tick(&controls);
        // Slips are counted on the string's own velocity: the bow hair rings through the stick.
        let starts = detector.starts(sample.relative_velocity_mps, controls.bow_velocity_mps);
        if n < settle {
            continue;
        }
        if starts {
            onsets.push(recorded.len());
        }
        recorded.push(sample);
        if onsets.len() > settings.periods {
            break;
        }
    }
    if onsets.len() < 2 {
        // No Helmholtz motion: show the last nominal periods as they are, unclosed.
        let tail = recorded.len().min(nominal_period * settings.periods.max(1));
        let samples = recorded[recorded.len() - tail..].to_vec();
        let loop_area_n_mps = loop_integral_n_mps(&samples) / settings.periods.max(1) as f64;
        return HysteresisLoop { model, samples, periods: 0, loop_area_n_mps, period_areas_n_mps: Vec::new(), period_s: f64::NAN };
    }
    let periods = onsets.len() - 1;
    let samples = recorded[onsets[0]..=onsets[periods]].to_vec();
    let period_areas_n_mps = onsets.windows(2).map(|w| loop_integral_n_mps(&recorded[w[0]..=w[1]])).collect();
    let loop_area_n_mps = loop_integral_n_mps(&samples) / periods as f64;
    let period_s = (onsets[periods] - onsets[0]) as f64 / periods as f64 / SAMPLE_RATE_HZ;
    HysteresisLoop { model, samples, periods, loop_area_n_mps, period_areas_n_mps, period_s }
}

/// Every model's loop, computed in parallel.
pub fn all_loops(settings: &HysteresisSettings) -> Vec<HysteresisLoop> {
    use rayon::prelude::*;
    FrictionModel::ALL.par_iter().map(|&model| hysteresis_loop(model, settings)).collect()
}

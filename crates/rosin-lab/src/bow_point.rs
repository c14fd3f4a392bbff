//! The bow point's velocity and displacement over a few periods of Helmholtz motion
//! (willemsen2019 Figs. 8-9): the velocity sticks at the bow's and flies back once a period,
//! and the displacement is the sawtooth the bow drags out.

use super::{BowRecorder, Bowing, SAMPLE_RATE_HZ, STRING_FREQUENCY_HZ};
use rosin_physics::bow::contact::FrictionModel;
use rosin_physics::string::interpolation::CubicPoint;

/// How the trace is recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BowPointSettings {
    pub bowing: Bowing,
    pub ramp_s: f64,
    /// Recording starts here (s).
    pub start_s: f64,
    /// Nominal periods recorded.
    pub periods: usize,
}

impl Default for BowPointSettings {
    fn default() -> Self {
        Self { bowing: Bowing::default(), ramp_s: 0.1, start_s: 0.6, periods: 4 }
    }
}

/// The bow point over the recorded stretch, one entry per sample.
#[derive(Clone, Debug, Default)]
pub struct BowPointTrace {
    pub model: FrictionModel,
    /// Time since the bow started (s).
    pub time_s: Vec<f64>,
    /// The string's velocity at the bow point (m/s).
    pub velocity_mps: Vec<f64>,
    /// The string's displacement at the bow point (m).
    pub displacement_m: Vec<f64>,
    /// The bow's velocity (m/s).
    pub bow_velocity_mps: f64,
}

/// Bows the lab string with `model` and records the bow point.
pub fn bow_point_trace(model: FrictionModel, settings: &BowPointSettings) -> BowPointTrace {
    let mut recorder = BowRecorder::new(model);
    let ramp = (settings.ramp_s * SAMPLE_RATE_HZ).max(1.0);
    let start = (settings.start_s * SAMPLE_RATE_HZ) as usize;
    let length = (settings.periods as f64 * SAMPLE_RATE_HZ / STRING_FREQUENCY_HZ).ceil() as usize;
    let mut trace = BowPointTrace { model, bow_velocity_mps: settings.bowing.bow_velocity_mps, ..BowPointTrace::default() };
    for n in 0..start + length {
        let controls = settings.bowing.controls((n as f64 / ramp).min(1.0));
        let sample = recorder.tick(&controls);
        if n < start {
            continue;
        }
        let string = &recorder.string.string;
        let grid = string.grid();
        let point = CubicPoint::new(recorder.string.bow_point_m() / grid.spacing_m(), grid.intervals);
        // The contact's velocity is the centred one, at step n; after the tick the
        // displacement is at step n + 1, half a sample later.
        trace.time_s.push(n as f64 / SAMPLE_RATE_HZ);
        trace.velocity_mps.push(sample.relative_velocity_mps + controls.bow_velocity_mps);
        trace.displacement_m.push(point.interpolate(string.displacement()));
    }
    trace
}

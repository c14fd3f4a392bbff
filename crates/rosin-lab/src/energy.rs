//! matusiak2025's discrete energy balance on its bowed lumped mass (Fig. 7): each step,
//! `H^{n+1} - H^n + k (Q + P)` should vanish to rounding, with `H` the stored energy (mass,
//! hair, bristle), `Q` the losses (mass and hair damping, bristle) and `P = F vb` the power
//! the bow takes out (negative while it drives).

use rosin_physics::bow::lumped::{LumpedBowedMass, LumpedParams};

/// The run: matusiak2025's lumped test, the bow accelerating to a constant speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergySettings {
    pub sample_rate_hz: f64,
    pub seconds: f64,
    pub normal_force_n: f64,
    pub bow_acceleration_mps2: f64,
    pub bow_speed_mps: f64,
}

impl Default for EnergySettings {
    fn default() -> Self {
        Self { sample_rate_hz: 44_100.0, seconds: 1.0, normal_force_n: 2.343, bow_acceleration_mps2: 3.439, bow_speed_mps: 0.344 }
    }
}

/// One entry per step.
#[derive(Clone, Debug, Default)]
pub struct EnergyTrace {
    /// Time at the end of the step (s).
    pub time_s: Vec<f64>,
    /// The stored energy `H^{n+1}` (J).
    pub energy_j: Vec<f64>,
    /// `(H^{n+1} - H^n + k (Q + P)) / H^{n+1}`, signed (0 while nothing is stored).
    pub relative_error: Vec<f64>,
}

impl EnergyTrace {
    /// The largest `|relative_error|`.
    pub fn worst_relative_error(&self) -> f64 {
        self.relative_error.iter().fold(0.0, |worst, e| worst.max(e.abs()))
    }

    /// The relative error summarised over bins of `steps` steps: one entry per bin.
    pub fn error_envelope(&self, steps: usize) -> Vec<ErrorBin> {
        let steps = steps.max(1);
        self.time_s
            .chunks(steps)
            .zip(self.relative_error.chunks(steps))
            .map(|(times, errors)| ErrorBin {
                time_s: 0.5 * (times[0] + times[times.len() - 1]),
                min: errors.iter().copied().fold(f64::MAX, f64::min),
                max: errors.iter().copied().fold(f64::MIN, f64::max),
                rms: (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt(),
            })
            .collect()
    }
}

/// The relative energy error over a stretch of steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBin {
    /// The stretch's middle (s).
    pub time_s: f64,
    pub min: f64,
    pub max: f64,
    pub rms: f64,
}

/// Runs the lumped model with `params` and records its energy balance.
pub fn energy_trace(params: LumpedParams, settings: &EnergySettings) -> EnergyTrace {
    let mut system = LumpedBowedMass::new(params, settings.sample_rate_hz);
    let k = system.time_step_s();
    let steps = (settings.seconds * settings.sample_rate_hz) as usize;
    let mut trace = EnergyTrace { time_s: Vec::with_capacity(steps), energy_j: Vec::with_capacity(steps), relative_error: Vec::with_capacity(steps) };
    for n in 0..steps {
        let bow_velocity_mps = (settings.bow_acceleration_mps2 * n as f64 * k).min(settings.bow_speed_mps);
        let before = system.energy_j();
        let step = system.step(settings.normal_force_n, bow_velocity_mps);
        let after = system.energy_j();
        let flow = k * (step.mass_loss_w + step.hair_loss_w + step.bristle_loss_w + step.bow_power_w);
        let error = after - before + flow;
        trace.time_s.push((n + 1) as f64 * k);
        trace.energy_j.push(after);
        trace.relative_error.push(if after > 0.0 { error / after } else { 0.0 });
    }
    trace
}

//! A Guettler diagram of the note being played (issue 17): how long a string voice takes to
//! set up Helmholtz motion, over bow force and the bow's acceleration at the attack
//! (Guettler 2002, "On the creation of the Helmholtz motion in bowed strings"), for the
//! key, string set, engine, friction law and controls of the moment. The editor sweeps it
//! in a background thread, a cell at a time, with a progress bar.
//!
//! Each cell plays the note through a real [`StringVoice`], as a note struck at full
//! velocity: the bow's force comes in over the first half of the attack and its speed rises
//! linearly over the whole attack (`BowEnvelope::start`), so the attack's acceleration is
//! `vB / attack`. A cell sets `bow_force` to its force and `bow_attack` so that the bow
//! accelerates at its rate. The transient is the time from the bow's start to the first slip
//! of the run's final Helmholtz motion ([`helmholtz_onset`]), `None` if it never settles.
//!
//! The axes are centred on the current settings: force from a quarter to four times the
//! current force, acceleration from an eighth to eight times the current attack's, both on
//! log scales, so the current settings sit in the middle cell.

use crate::controls::Controls;
use crate::voice::{NoteId, StringVoice};
use rosin_physics::bow::helmholtz::{helmholtz_onset, HelmholtzCriteria, SlipDetector};
use rosin_physics::string::note_string::GridCache;
use rosin_physics::string::tuning::midi_key_to_hz;

/// How long each cell bows (s).
pub const GUETTLER_RUN_S: f64 = 0.5;
/// A slip-to-slip interval counts as one period within this fraction of the period.
pub const GUETTLER_PERIOD_TOLERANCE: f64 = 0.15;
/// Fewest periods of Helmholtz motion that count.
pub const GUETTLER_MIN_PERIODS: usize = 5;
/// The force axis spans this factor each side of the current force.
pub const FORCE_SPAN: f64 = 4.0;
/// The acceleration axis spans this factor each side of the current acceleration.
pub const ACCELERATION_SPAN: f64 = 8.0;

/// The bow's acceleration (m/s^2) over the attack of a note struck at full velocity.
pub fn attack_acceleration_mps2(controls: &Controls) -> f64 {
    controls.bow_velocity_mps.abs() / (0.5 * controls.bow_attack_ms * 1e-3)
}

/// The attack (ms) that accelerates the bow at `acceleration_mps2` to the controls' speed.
pub fn attack_ms_for(acceleration_mps2: f64, controls: &Controls) -> f64 {
    2e3 * controls.bow_velocity_mps.abs() / acceleration_mps2
}

/// `count` values from `centre / span` to `centre * span`, evenly spaced in log.
fn log_axis(centre: f64, span: f64, count: usize) -> Vec<f64> {
    match count {
        0 => Vec::new(),
        1 => vec![centre],
        _ => (0..count).map(|i| centre * span.powf(2.0 * i as f64 / (count - 1) as f64 - 1.0)).collect(),
    }
}

/// What to sweep: the note, the controls, and the two axes.
#[derive(Clone, Debug, PartialEq)]
pub struct GuettlerPlan {
    pub key: u8,
    pub controls: Controls,
    pub sample_rate_hz: f64,
    /// The y axis, low to high (N).
    pub forces_n: Vec<f64>,
    /// The x axis, low to high (m/s^2).
    pub accelerations_mps2: Vec<f64>,
}

impl GuettlerPlan {
    /// A `cells` by `cells` diagram around the current settings (see the module's notes).
    pub fn around(key: u8, controls: &Controls, sample_rate_hz: f64, cells: usize) -> Self {
        let force = controls.bow_force_n.max(0.05);
        let acceleration = attack_acceleration_mps2(controls).max(1e-3);
        Self { key, controls: *controls, sample_rate_hz, forces_n: log_axis(force, FORCE_SPAN, cells), accelerations_mps2: log_axis(acceleration, ACCELERATION_SPAN, cells) }
    }

    pub fn cells(&self) -> usize {
        self.forces_n.len() * self.accelerations_mps2.len()
    }

    /// Cell `index`'s (force, acceleration), row by row from the lowest force.
    pub fn cell(&self, index: usize) -> (f64, f64) {
        let width = self.accelerations_mps2.len();
        (self.forces_n[index / width], self.accelerations_mps2[index % width])
    }

    /// Where the current settings sit: (force N, acceleration m/s^2).
    pub fn current(&self) -> (f64, f64) {
        (self.controls.bow_force_n, attack_acceleration_mps2(&self.controls))
    }
}

/// Plays a plan's cells, one at a time, on a voice of its own (allocated here, off the
/// audio thread).
pub struct GuettlerRunner {
    plan: GuettlerPlan,
    voice: StringVoice,
    grids: GridCache,
}

impl GuettlerRunner {
    pub fn new(plan: GuettlerPlan) -> Self {
        let voice = StringVoice::new(plan.sample_rate_hz);
        Self { plan, voice, grids: GridCache::with_capacity(4) }
    }

    pub fn plan(&self) -> &GuettlerPlan {
        &self.plan
    }

    /// The transient (s) of cell `index`, or `None` if it never reached Helmholtz motion.
    pub fn run_cell(&mut self, index: usize) -> Option<f64> {
        let (force, acceleration) = self.plan.cell(index);
        let attack_ms = attack_ms_for(acceleration, &self.plan.controls);
        let controls = Controls { bow_force_n: force, bow_attack_ms: attack_ms.max(0.01), ..self.plan.controls };
        let rate = self.plan.sample_rate_hz;
        self.voice.kill();
        self.voice.start(NoteId { channel: 0, note: self.plan.key, voice_id: None }, 1.0, index as u64, &controls, &mut self.grids);
        let mut detector = SlipDetector::new(controls.bow_position);
        let run_samples = (GUETTLER_RUN_S * rate) as usize;
        let mut onsets = Vec::new();
        for n in 0..run_samples {
            self.voice.tick();
            if self.voice.is_free() {
                return None;
            }
            let probe = self.voice.contact_probe();
            if detector.starts(probe.bow_point_velocity_mps - probe.bow_velocity_mps, probe.bow_velocity_mps) {
                onsets.push(n);
            }
        }
        let criteria = HelmholtzCriteria {
            period_samples: rate / midi_key_to_hz(self.plan.key as f64),
            run_samples: run_samples as f64,
            period_tolerance: GUETTLER_PERIOD_TOLERANCE,
            min_periods: GUETTLER_MIN_PERIODS,
        };
        helmholtz_onset(&onsets, &criteria).map(|onset| onset as f64 / rate)
    }
}

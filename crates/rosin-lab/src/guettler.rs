//! A Guettler diagram: how long the bow takes to set up Helmholtz motion, over bow force and
//! bow acceleration (Guettler 2002, "On the creation of the Helmholtz motion in bowed
//! strings"; Galluzzo and Woodhouse 2014 measured it).
//!
//! Each cell is an independent run: the bow presses with a constant force from the start and
//! accelerates from rest at a constant rate to its final speed, then holds it. The transient
//! length is the time from the bow's start to the first slip from which every period has
//! exactly one slip until the run ends: the slip-to-slip intervals all lie within a
//! tolerance of the string's period (two slips a period, or a missing one, break it).

use rayon::prelude::*;

use super::{BowRecorder, SlipDetector, SAMPLE_RATE_HZ, STRING_FREQUENCY_HZ};
use rosin_physics::bow::bowed_string::BowingControls;
use rosin_physics::bow::contact::FrictionModel;
use rosin_physics::bow::helmholtz::{helmholtz_onset, HelmholtzCriteria};

/// The diagram's runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuettlerSettings {
    pub model: FrictionModel,
    /// Bow force range, the y axis (N).
    pub force_range_n: (f64, f64),
    /// Bow acceleration range, the x axis (m/s^2).
    pub acceleration_range_mps2: (f64, f64),
    /// Cells along each axis.
    pub grid: usize,
    /// The bow's final speed (m/s).
    pub bow_speed_mps: f64,
    pub bow_position: f64,
    /// How long each run bows (s).
    pub run_s: f64,
    /// A slip-to-slip interval counts as one period within this fraction of the period.
    pub period_tolerance: f64,
    /// Fewest periods of Helmholtz motion that count (a last-moment start does not).
    pub min_periods: usize,
}

impl Default for GuettlerSettings {
    fn default() -> Self {
        Self {
            model: FrictionModel::ElastoPlastic,
            force_range_n: (0.5, 12.0),
            acceleration_range_mps2: (0.5, 20.0),
            grid: 24,
            bow_speed_mps: 0.1,
            bow_position: 0.18,
            run_s: 0.5,
            period_tolerance: 0.15,
            min_periods: 5,
        }
    }
}

/// Transients up to this long count as "perfect" (s).
pub const PERFECT_TRANSIENT_S: f64 = 0.05;

/// The diagram: `transient_s[force_index * grid + acceleration_index]`, `None` where the run
/// never reached Helmholtz motion.
#[derive(Clone, Debug)]
pub struct GuettlerGrid {
    pub settings: GuettlerSettings,
    pub forces_n: Vec<f64>,
    pub accelerations_mps2: Vec<f64>,
    pub transient_s: Vec<Option<f64>>,
}

impl GuettlerGrid {
    pub fn at(&self, force_index: usize, acceleration_index: usize) -> Option<f64> {
        self.transient_s[force_index * self.accelerations_mps2.len() + acceleration_index]
    }
}

/// `count` values evenly spaced from `range.0` to `range.1`.
pub fn axis(range: (f64, f64), count: usize) -> Vec<f64> {
    match count {
        0 => Vec::new(),
        1 => vec![range.0],
        _ => (0..count).map(|i| range.0 + (range.1 - range.0) * i as f64 / (count - 1) as f64).collect(),
    }
}

/// The slip onsets (sample indices) of one run.
pub fn slip_onsets(settings: &GuettlerSettings, normal_force_n: f64, acceleration_mps2: f64) -> Vec<usize> {
    let mut recorder = BowRecorder::new(settings.model);
    let mut detector = SlipDetector::new(settings.bow_position);
    let samples = (settings.run_s * SAMPLE_RATE_HZ) as usize;
    let mut onsets = Vec::new();
    for n in 0..samples {
        let bow_velocity_mps = (acceleration_mps2 * n as f64 / SAMPLE_RATE_HZ).min(settings.bow_speed_mps);
        let controls = BowingControls { normal_force_n, bow_velocity_mps, bow_position: settings.bow_position, finger_position_m: None };
        let sample = recorder.tick(&controls);
        if !(sample.relative_velocity_mps.is_finite() && sample.force_n.is_finite()) {
            return Vec::new();
        }
        if detector.starts(sample.relative_velocity_mps, bow_velocity_mps) {
            onsets.push(n);
        }
    }
    onsets
}

/// The transient length (s) given a run's slip onsets, or `None` if it never settled into
/// one slip per period before the run's end.
pub fn transient_from_onsets(onsets: &[usize], settings: &GuettlerSettings) -> Option<f64> {
    let criteria = HelmholtzCriteria {
        period_samples: SAMPLE_RATE_HZ / STRING_FREQUENCY_HZ,
        run_samples: settings.run_s * SAMPLE_RATE_HZ,
        period_tolerance: settings.period_tolerance,
        min_periods: settings.min_periods,
    };
    helmholtz_onset(onsets, &criteria).map(|onset| onset as f64 / SAMPLE_RATE_HZ)
}

/// The transient length (s) of one run, or `None` for no Helmholtz motion.
pub fn transient_length_s(settings: &GuettlerSettings, normal_force_n: f64, acceleration_mps2: f64) -> Option<f64> {
    transient_from_onsets(&slip_onsets(settings, normal_force_n, acceleration_mps2), settings)
}

/// Every cell, in parallel; `on_cell` runs after each one (for a progress bar).
pub fn guettler_grid(settings: &GuettlerSettings, on_cell: &(dyn Fn() + Sync)) -> GuettlerGrid {
    let forces_n = axis(settings.force_range_n, settings.grid);
    let accelerations_mps2 = axis(settings.acceleration_range_mps2, settings.grid);
    let cells: Vec<(f64, f64)> = forces_n.iter().flat_map(|&f| accelerations_mps2.iter().map(move |&a| (f, a))).collect();
    let transient_s = cells
        .par_iter()
        .map(|&(force, acceleration)| {
            let transient = transient_length_s(settings, force, acceleration);
            on_cell();
            transient
        })
        .collect();
    GuettlerGrid { settings: *settings, forces_n, accelerations_mps2, transient_s }
}

//! Telling Helmholtz motion from the bow's point of view: when the string slips under the
//! bow, and when, after the bow starts, it settles into one slip per period (the transient
//! a Guettler diagram maps; Guettler 2002, "On the creation of the Helmholtz motion in
//! bowed strings"; Rosin's detector, used for matusiak2025's and willemsen2019's bows
//! alike). Shared by `rosin-lab`'s figures and the editor's live Guettler view.

/// Counts slips. In Helmholtz motion the string flies back past the bow at about
/// `vb / beta` (`beta` the bow's distance from the bridge as a fraction of the length), and
/// sticks, give or take the bristle's or the bow hair's ringing, at the bow's velocity. A slip
/// starts when the relative velocity falls below [`SLIP_ENTER`] of `-vb / beta` and ends when
/// it rises above [`SLIP_LEAVE`] of it: thresholds that scale with the bow's speed stay
/// meaningful while the bow accelerates, and the gap between them keeps a ragged slip from
/// counting twice.
#[derive(Clone, Copy, Debug)]
pub struct SlipDetector {
    slipping: bool,
    inverse_position: f64,
}

/// Where a slip starts, as a fraction of the ideal slip velocity `vb / beta`.
pub const SLIP_ENTER: f64 = 0.4;
/// Where it ends.
pub const SLIP_LEAVE: f64 = 0.15;

impl SlipDetector {
    pub fn new(bow_position: f64) -> Self {
        Self { slipping: false, inverse_position: 1.0 / bow_position.clamp(0.01, 1.0) }
    }

    /// Whether a slip starts at this sample.
    pub fn starts(&mut self, relative_velocity_mps: f64, bow_speed_mps: f64) -> bool {
        // A floor keeps the first few samples, with the bow barely moving, from counting
        // rounding as slips.
        let slip_speed = (bow_speed_mps.abs() * self.inverse_position).max(1e-4);
        if !self.slipping && relative_velocity_mps < -SLIP_ENTER * slip_speed {
            self.slipping = true;
            return true;
        }
        if self.slipping && relative_velocity_mps > -SLIP_LEAVE * slip_speed {
            self.slipping = false;
        }
        false
    }
}

/// How a run's slips are judged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HelmholtzCriteria {
    /// The string's period (samples).
    pub period_samples: f64,
    /// How long the run bowed (samples).
    pub run_samples: f64,
    /// A slip-to-slip interval counts as one period within this fraction of the period.
    pub period_tolerance: f64,
    /// Fewest periods of Helmholtz motion that count (a last-moment start does not).
    pub min_periods: usize,
}

/// The sample at which Helmholtz motion started, given a run's slip onsets: the first slip
/// from which every slip-to-slip interval is one period (within the tolerance) to the end of
/// the run, which must still be slipping once a period. `None` if the run never settled.
pub fn helmholtz_onset(onsets: &[usize], criteria: &HelmholtzCriteria) -> Option<usize> {
    let period = criteria.period_samples;
    let last = *onsets.last()?;
    // Still slipping once a period at the end.
    if criteria.run_samples - last as f64 > (1.0 + criteria.period_tolerance) * period {
        return None;
    }
    let good = |a: usize, b: usize| ((b - a) as f64 - period).abs() <= criteria.period_tolerance * period;
    let mut first = onsets.len() - 1;
    while first > 0 && good(onsets[first - 1], onsets[first]) {
        first -= 1;
    }
    (onsets.len() - 1 - first >= criteria.min_periods).then(|| onsets[first])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onset_is_the_first_slip_of_the_periodic_run() {
        let criteria = HelmholtzCriteria { period_samples: 100.0, run_samples: 1000.0, period_tolerance: 0.15, min_periods: 5 };
        // Chaos, then slips every 100 samples to the end.
        let onsets = [10, 35, 80, 150, 250, 350, 450, 550, 650, 750, 850, 950];
        assert_eq!(helmholtz_onset(&onsets, &criteria), Some(150));
        // Two slips a period is not Helmholtz motion.
        let double: Vec<usize> = (0..20).map(|i| 50 * i).collect();
        assert_eq!(helmholtz_onset(&double, &criteria), None);
        // It died before the end.
        assert_eq!(helmholtz_onset(&[100, 200, 300, 400, 500, 600, 700], &criteria), None);
        assert_eq!(helmholtz_onset(&[], &criteria), None);
    }

    #[test]
    fn slips_are_counted_once_each() {
        let mut detector = SlipDetector::new(0.2);
        // vb = 0.1 m/s: slips reach -0.5 m/s; a ragged slip crossing -0.2 twice counts once.
        let trace = [0.0, -0.3, -0.5, -0.19, -0.4, -0.01, 0.0, -0.45, 0.0];
        let slips = trace.iter().filter(|&&v| detector.starts(v, 0.1)).count();
        assert_eq!(slips, 2);
    }
}

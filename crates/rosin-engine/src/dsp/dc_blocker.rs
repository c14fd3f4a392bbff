//! A first-order DC blocker, `y[n] = x[n] - x[n-1] + R y[n-1]`.
//!
//! The bow pushes the string sideways with a steady friction force, so the force on the
//! bridge carries a large constant part. An instrument body radiates none of it (and a
//! loudspeaker should not get it), so each voice's output passes through this.

/// The corner frequency: well below the lowest note Rosin is tuned for (MIDI 28, 41 Hz).
pub const DC_BLOCKER_CORNER_HZ: f64 = 10.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcBlocker {
    pole: f64,
    previous_input: f64,
    previous_output: f64,
}

impl DcBlocker {
    pub fn new(sample_rate_hz: f64) -> Self {
        Self { pole: (-2.0 * std::f64::consts::PI * DC_BLOCKER_CORNER_HZ / sample_rate_hz).exp(), previous_input: 0.0, previous_output: 0.0 }
    }

    pub fn reset(&mut self) {
        self.previous_input = 0.0;
        self.previous_output = 0.0;
    }

    #[inline]
    pub fn process(&mut self, input: f64) -> f64 {
        let output = input - self.previous_input + self.pole * self.previous_output;
        self.previous_input = input;
        self.previous_output = output;
        output
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_dc_and_passes_the_lowest_note() {
        let rate = 48_000.0;
        let mut blocker = DcBlocker::new(rate);
        let mut last = 0.0;
        for _ in 0..(rate as usize) {
            last = blocker.process(1.0);
        }
        assert!(last.abs() < 1e-3, "DC left: {last}");
        let mut blocker = DcBlocker::new(rate);
        let mut peak: f64 = 0.0;
        for n in 0..(2.0 * rate) as usize {
            let y = blocker.process((2.0 * std::f64::consts::PI * 41.2 * n as f64 / rate).sin());
            if n > rate as usize {
                peak = peak.max(y.abs());
            }
        }
        assert!(peak > 0.96, "41 Hz passes at {peak}");
    }
}

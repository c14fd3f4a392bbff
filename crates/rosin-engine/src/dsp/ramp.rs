//! Per-sample linear ramps for control values, so no control ever steps (no zipper noise).
//! The string and drum voices set their ramps up the same way, through
//! [`LinearRamp::control`] and [`LinearRamp::pitch_smoother`].

/// How long a control takes to reach a new value.
pub const CONTROL_RAMP_S: f64 = 0.010;
/// Pitch-bend and tuning messages arrive in steps; each is smoothed over this long.
pub const PITCH_SMOOTHING_S: f64 = 0.005;
/// The widest pitch bend a voice takes, either way (MPE's full range), in semitones.
pub const MAX_BEND_ST: f64 = 48.0;

/// A value that moves linearly to its target over a fixed number of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinearRamp {
    value: f64,
    target: f64,
    step: f64,
    remaining: u32,
    length_samples: u32,
}

impl LinearRamp {
    /// A ramp that takes `length_samples` (at least 1) to reach each new target.
    pub fn new(value: f64, length_samples: u32) -> Self {
        Self { value, target: value, step: 0.0, remaining: 0, length_samples: length_samples.max(1) }
    }

    /// A control's ramp, starting at `value`: each new target is reached over
    /// [`CONTROL_RAMP_S`].
    pub fn control(value: f64, sample_rate_hz: f64) -> Self {
        Self::new(value, Self::samples_for(CONTROL_RAMP_S, sample_rate_hz))
    }

    /// A pitch offset in semitones, starting at 0, each new target smoothed over
    /// [`PITCH_SMOOTHING_S`].
    pub fn pitch_smoother(sample_rate_hz: f64) -> Self {
        Self::new(0.0, Self::samples_for(PITCH_SMOOTHING_S, sample_rate_hz))
    }

    /// Sets a pitch bend target, in semitones: within [`MAX_BEND_ST`] either way, and 0
    /// for a value that is not a number.
    pub fn set_bend_target(&mut self, semitones: f64) {
        self.set_target(if semitones.is_finite() { semitones.clamp(-MAX_BEND_ST, MAX_BEND_ST) } else { 0.0 });
    }

    /// The ramp length for `seconds` at `sample_rate_hz`.
    pub fn samples_for(seconds: f64, sample_rate_hz: f64) -> u32 {
        (seconds * sample_rate_hz).round().max(1.0) as u32
    }

    /// Starts a ramp from the current value to `target`. Setting the same target again
    /// leaves a running ramp alone.
    #[inline]
    pub fn set_target(&mut self, target: f64) {
        if target != self.target {
            self.target = target;
            self.remaining = self.length_samples;
            self.step = (target - self.value) / self.length_samples as f64;
        }
    }

    /// Starts a ramp to `target` that takes `samples` (at least 1), whatever the usual length.
    pub fn glide_to(&mut self, target: f64, samples: u32) {
        self.target = target;
        self.remaining = samples.max(1);
        self.step = (target - self.value) / self.remaining as f64;
    }

    /// Jumps to `value` with no ramp (for a voice that is starting).
    pub fn snap(&mut self, value: f64) {
        self.value = value;
        self.target = value;
        self.remaining = 0;
        self.step = 0.0;
    }

    /// Advances one sample and returns the new value.
    #[inline]
    pub fn next(&mut self) -> f64 {
        if self.remaining > 0 {
            self.remaining -= 1;
            self.value = if self.remaining == 0 { self.target } else { self.value + self.step };
        }
        self.value
    }

    pub fn value(&self) -> f64 {
        self.value
    }

    pub fn target(&self) -> f64 {
        self.target
    }

    /// Samples until the target is reached.
    pub fn remaining_samples(&self) -> u32 {
        self.remaining
    }

    /// Whether the ramp has arrived: [`Self::next`] returns the same value until it is
    /// given another target.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.remaining == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reaches_target_linearly() {
        let mut r = LinearRamp::new(0.0, 4);
        r.set_target(1.0);
        let v: Vec<f64> = (0..6).map(|_| r.next()).collect();
        assert_eq!(v, vec![0.25, 0.5, 0.75, 1.0, 1.0, 1.0]);
        r.set_target(1.0);
        assert_eq!(r.next(), 1.0);
    }
}

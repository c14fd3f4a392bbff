//! The lumped losses of a waveguide string: a lowpass reflection filter at each end
//! (serafin1999 section 2, `H_n(z)` and `H_b(z)`), designed from the decay rates of the
//! finite-difference note strings so that both engines ring alike.
//!
//! The filter is a symmetric three-tap FIR, `H(z) = -g (a + (1 - 2a) z^-1 + a z^-2)`: its
//! phase delay is exactly one sample at every frequency (for `a <= 1/4` the bracket is never
//! negative), so it keeps the partials harmonic and the tuning needs only that one sample.

use crate::string::note_string::{REFERENCE_SIGMA0_PER_S, REFERENCE_SIGMA1_M2_PER_S, REFERENCE_WAVE_SPEED_MPS};

/// The largest side tap: beyond it the response changes sign below Nyquist and the phase
/// delay is no longer one sample.
pub const MAX_SIDE_TAP: f64 = 0.25;

/// How fast the string's partials die away: a partial at `f` decays as `exp(-sigma(f) t)`
/// with `sigma(f) = scale (sigma0 + sigma1 (2 pi f / c_ref)^2)`, the damped stiff string's
/// mode decay (willemsen2019 eq. 1, `MODELS.md` section 1) for modes of wavenumber
/// `2 pi f / c_ref`. The defaults are those of every note string
/// ([`crate::string::note_string::NoteStringDesign`]): the same loss per frequency on
/// every note.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringLosses {
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
    /// The wave speed at which `sigma1` is given.
    pub loss_wave_speed_mps: f64,
    /// Multiplies both terms (the "Damping" control).
    pub damping_scale: f64,
}

impl Default for StringLosses {
    fn default() -> Self {
        Self { sigma0_per_s: REFERENCE_SIGMA0_PER_S, sigma1_m2_per_s: REFERENCE_SIGMA1_M2_PER_S, loss_wave_speed_mps: REFERENCE_WAVE_SPEED_MPS, damping_scale: 1.0 }
    }
}

impl StringLosses {
    /// `sigma(f)`, the decay rate of a partial at `frequency_hz` (1/s); its T60 is
    /// `3 ln 10 / sigma`.
    pub fn decay_rate_per_s(&self, frequency_hz: f64) -> f64 {
        self.damping_scale * (self.sigma0_per_s + self.frequency_coefficient_s() * frequency_hz * frequency_hz)
    }

    /// `sigma1 (2 pi / c_ref)^2`, the coefficient of `f^2` in `sigma(f) / scale`.
    fn frequency_coefficient_s(&self) -> f64 {
        let k = 2.0 * std::f64::consts::PI / self.loss_wave_speed_mps;
        self.sigma1_m2_per_s * k * k
    }
}

/// One end's reflection: `-g (a x[n] + (1 - 2a) x[n-1] + a x[n-2])`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReflectionFilter {
    gain: f64,
    side_tap: f64,
    x1: f64,
    x2: f64,
}

impl ReflectionFilter {
    /// Every end delays the wave by exactly this much, at every frequency.
    pub const PHASE_DELAY_SAMPLES: f64 = 1.0;

    /// A lossless, rigid end.
    pub fn rigid() -> Self {
        Self { gain: 1.0, side_tap: 0.0, x1: 0.0, x2: 0.0 }
    }

    /// The end that, with an identical one at the other end, gives a loop of fundamental
    /// `fundamental_hz` the decay `losses` asks for. A wave meets both ends once per period
    /// `1 / f0`, so each end takes half the loss of one period: `g = exp(-sigma0 / (2 f0))`,
    /// and `ln |H|` falls as `-a omega^2` at low frequencies, matched to
    /// `-(sigma(f) - sigma0) / (2 f0)` with `omega = 2 pi f / fs`. The side tap is capped at
    /// [`MAX_SIDE_TAP`], which only the lowest notes at the highest rates reach.
    pub fn design(&mut self, losses: &StringLosses, fundamental_hz: f64, sample_rate_hz: f64) {
        let scale = losses.damping_scale.max(0.0);
        self.gain = (-scale * losses.sigma0_per_s.max(0.0) / (2.0 * fundamental_hz)).exp();
        let a = scale * losses.frequency_coefficient_s().max(0.0) * sample_rate_hz * sample_rate_hz / (2.0 * fundamental_hz * 4.0 * std::f64::consts::PI * std::f64::consts::PI);
        self.side_tap = a.min(MAX_SIDE_TAP);
    }

    /// Takes another end's coefficients (not its state).
    pub fn copy_design(&mut self, other: &ReflectionFilter) {
        self.gain = other.gain;
        self.side_tap = other.side_tap;
    }

    pub fn gain(&self) -> f64 {
        self.gain
    }

    pub fn side_tap(&self) -> f64 {
        self.side_tap
    }

    pub fn clear(&mut self) {
        self.x1 = 0.0;
        self.x2 = 0.0;
    }

    /// The input of the previous sample: the incident wave that the output of this sample
    /// (delayed by one sample) is the reflection of.
    #[inline]
    pub fn previous_input(&self) -> f64 {
        self.x1
    }

    #[inline]
    pub fn process(&mut self, x: f64) -> f64 {
        let a = self.side_tap;
        let y = -self.gain * (a * (x + self.x2) + (1.0 - 2.0 * a) * self.x1);
        self.x2 = self.x1;
        self.x1 = x;
        y
    }

    /// `|H(omega)| = g (1 - 2a (1 - cos omega))`.
    pub fn magnitude(&self, omega: f64) -> f64 {
        self.gain * (1.0 - 2.0 * self.side_tap * (1.0 - omega.cos()))
    }

    pub fn is_finite(&self) -> bool {
        self.x1.is_finite() && self.x2.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impulse_response_is_symmetric_inverted_and_one_sample_late() {
        let mut filter = ReflectionFilter::rigid();
        filter.design(&StringLosses::default(), 55.0, 48_000.0);
        let (g, a) = (filter.gain(), filter.side_tap());
        assert!(g < 1.0 && a > 0.0 && a <= MAX_SIDE_TAP);
        let response: Vec<f64> = [1.0, 0.0, 0.0, 0.0].iter().map(|&x| filter.process(x)).collect();
        assert_eq!(response, vec![-g * a, -g * (1.0 - 2.0 * a), -g * a, 0.0]);
        // Symmetric about one sample: the centroid is exactly one sample.
        let centroid = response.iter().enumerate().map(|(k, y)| k as f64 * y).sum::<f64>() / response.iter().sum::<f64>();
        assert!((centroid - ReflectionFilter::PHASE_DELAY_SAMPLES).abs() < 1e-12);
    }

    /// Two ends designed for a loop of `f0` lose, per period, what the losses ask for:
    /// exactly at DC and to second order in frequency above it.
    #[test]
    fn two_ends_give_the_designed_decay_per_period() {
        let losses = StringLosses::default();
        for (f0, fs) in [(110.0, 48_000.0), (440.0, 44_100.0), (1760.0, 96_000.0)] {
            let mut end = ReflectionFilter::rigid();
            end.design(&losses, f0, fs);
            for partial in [1.0, 2.0, 4.0] {
                let f = partial * f0;
                let omega = 2.0 * std::f64::consts::PI * f / fs;
                let measured = -2.0 * end.magnitude(omega).ln() * f0;
                let designed = losses.decay_rate_per_s(f);
                assert!((measured / designed - 1.0).abs() < 0.03, "f0 {f0} partial {partial}: {measured} vs {designed}");
            }
        }
    }
}

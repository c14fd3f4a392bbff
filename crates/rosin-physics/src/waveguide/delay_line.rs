//! A travelling-wave delay line with a fractional, movable read point: a circular buffer of
//! fixed capacity read through cubic Lagrange interpolation (the maximally flat FIR
//! fractional delay). An FIR read has no state, so the delay can move every sample without
//! the transients a Thiran allpass would leave behind: moving it only resamples the stored
//! wave, heard as a Doppler shift, never as a click. These are the two delay lines of
//! serafin1999's waveguide string (section 2; `MODELS.md` section 4).

use std::f64::consts::PI;

/// The four weights of a cubic Lagrange read, and where they start.
///
/// The weights apply to the samples `first_delay_samples ..= first_delay_samples + 3`
/// samples older than the latest one pushed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LagrangeTaps {
    pub first_delay_samples: usize,
    pub weights: [f64; 4],
}

impl LagrangeTaps {
    /// The read at `delay_samples` (at least 0) behind the latest sample. From one sample
    /// on, the stencil is centred on the delay (two samples on each side), where cubic
    /// Lagrange interpolation is passive: its gain never exceeds 1 (Valimaki 1995), which a
    /// feedback loop needs. Below one sample the centred stencil would need a future
    /// sample, and the off-centre one amplifies high frequencies (a loop of short lines
    /// would blow up), so the read falls back to linear interpolation between the two
    /// newest samples, also passive. The two meet at one sample, where both read that
    /// sample alone.
    pub fn at(delay_samples: f64) -> Self {
        let d = delay_samples.max(0.0);
        if d < 1.0 {
            return Self { first_delay_samples: 0, weights: [1.0 - d, d, 0.0, 0.0] };
        }
        let base = d.floor();
        let a = d - base;
        // Lagrange basis through the nodes -1, 0, 1, 2 (relative to `base`), at `a`.
        let weights = [-a * (a - 1.0) * (a - 2.0) / 6.0, (a + 1.0) * (a - 1.0) * (a - 2.0) / 2.0, -(a + 1.0) * a * (a - 2.0) / 2.0, (a + 1.0) * a * (a - 1.0) / 6.0];
        Self { first_delay_samples: base as usize - 1, weights }
    }

    /// The read's phase delay (samples) at the probe's frequency `omega`:
    /// `-arg(H(omega)) / omega` with `H(omega) = sum_k w_k exp(-j omega (first + k))`.
    /// Cubic Lagrange interpolation is exact at DC, and its phase delay leaves the nominal
    /// delay only as `omega^4` (linear interpolation's as `omega^2`), but at the top of the
    /// keyboard that is still a few hundredths of a sample per read, a cent or so on a
    /// ten-sample loop.
    pub fn phase_delay_samples(&self, probe: &PhaseProbe) -> f64 {
        let (re, im) = self.response(probe);
        let mut phase = -im.atan2(re);
        // The read's own delay is under three samples past its first tap, so the unwrapped
        // phase lies within pi of `omega` times the kernel's centre (its first moment, which
        // for a Lagrange kernel is its design delay).
        let centre: f64 = self.weights.iter().enumerate().map(|(k, w)| k as f64 * w).sum();
        let nominal = probe.omega * centre;
        while phase < nominal - PI {
            phase += 2.0 * PI;
        }
        while phase > nominal + PI {
            phase -= 2.0 * PI;
        }
        self.first_delay_samples as f64 + phase / probe.omega
    }

    /// The read's gain at the probe's frequency, `|H(omega)|`: below 1 between taps at high
    /// frequencies, which is the loss a fractional delay adds to a loop.
    pub fn magnitude(&self, probe: &PhaseProbe) -> f64 {
        let (re, im) = self.response(probe);
        re.hypot(im)
    }

    /// `sum_k w_k exp(-j omega k)`, relative to the first tap.
    fn response(&self, probe: &PhaseProbe) -> (f64, f64) {
        let w = &self.weights;
        let re = (0..4).map(|k| w[k] * probe.cos[k]).sum();
        let im = -(0..4).map(|k| w[k] * probe.sin[k]).sum::<f64>();
        (re, im)
    }
}

/// `cos(k omega)` and `sin(k omega)` for the four taps of a read: computed once, they serve
/// every read whose response at `omega` is wanted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseProbe {
    pub omega: f64,
    cos: [f64; 4],
    sin: [f64; 4],
}

impl PhaseProbe {
    /// A probe at `omega` radians per sample, in `(0, pi)`.
    pub fn new(omega: f64) -> Self {
        let (s1, c1) = omega.sin_cos();
        let (c2, s2) = (c1 * c1 - s1 * s1, 2.0 * s1 * c1);
        let (c3, s3) = (c2 * c1 - s2 * s1, s2 * c1 + c2 * s1);
        Self { omega, cos: [1.0, c1, c2, c3], sin: [0.0, s1, s2, s3] }
    }
}

/// A delay line for one direction of travel on one stretch of string.
pub struct DelayLine {
    buffer: Vec<f64>,
    mask: usize,
    /// Where the latest sample was pushed.
    latest: usize,
}

impl DelayLine {
    /// A line that can delay by up to `max_delay_samples` (the read's stencil reaches two
    /// samples further, which is allowed for). Allocates once, here.
    pub fn new(max_delay_samples: f64) -> Self {
        let span = max_delay_samples.max(0.0).ceil() as usize + 4;
        let capacity = span.next_power_of_two();
        Self { buffer: vec![0.0; capacity], mask: capacity - 1, latest: 0 }
    }

    /// The longest delay a read may ask for.
    pub fn max_delay_samples(&self) -> f64 {
        (self.buffer.len() - 4) as f64
    }

    /// Empties the line (the string at rest).
    pub fn clear(&mut self) {
        self.buffer.fill(0.0);
        self.latest = 0;
    }

    #[inline]
    pub fn push(&mut self, sample: f64) {
        self.latest = (self.latest + 1) & self.mask;
        self.buffer[self.latest] = sample;
    }

    /// The latest sample pushed.
    #[inline]
    pub fn latest(&self) -> f64 {
        self.buffer[self.latest]
    }

    /// The wave `taps` describe: a fractional number of samples behind the latest push.
    #[inline]
    pub fn read(&self, taps: &LagrangeTaps) -> f64 {
        let start = self.latest.wrapping_sub(taps.first_delay_samples);
        let w = &taps.weights;
        w[0] * self.buffer[start & self.mask]
            + w[1] * self.buffer[start.wrapping_sub(1) & self.mask]
            + w[2] * self.buffer[start.wrapping_sub(2) & self.mask]
            + w[3] * self.buffer[start.wrapping_sub(3) & self.mask]
    }

    /// The wave `delay_samples` behind the latest push (clamped to the line), by linear
    /// interpolation: for drawing the string, not for the loop.
    #[inline]
    pub fn read_linear(&self, delay_samples: f64) -> f64 {
        let d = delay_samples.clamp(0.0, self.max_delay_samples());
        let whole = d.floor();
        let a = d - whole;
        let newer = self.buffer[self.latest.wrapping_sub(whole as usize) & self.mask];
        let older = self.buffer[self.latest.wrapping_sub(whole as usize + 1) & self.mask];
        newer + a * (older - newer)
    }

    /// Whether every stored sample is finite.
    pub fn is_finite(&self) -> bool {
        self.buffer.iter().all(|x| x.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes a cubic in time and reads it back at fractional delays: exact for cubics.
    #[test]
    fn reads_cubics_exactly_at_any_delay() {
        let signal = |t: f64| 0.002 * t * t * t - 0.05 * t * t + t - 3.0;
        let mut line = DelayLine::new(20.0);
        for t in 0..40 {
            line.push(signal(t as f64));
        }
        for d in [1.0, 1.5, 2.25, 7.8, 19.0, 20.0] {
            let got = line.read(&LagrangeTaps::at(d));
            let want = signal(39.0 - d);
            assert!((got - want).abs() < 1e-9, "delay {d}: {got} vs {want}");
        }
        // Below one sample the read is linear: exact for straight lines only.
        let mut line = DelayLine::new(4.0);
        for t in 0..8 {
            line.push(0.5 * t as f64 - 1.0);
        }
        for d in [0.0, 0.3, 0.99] {
            assert!((line.read(&LagrangeTaps::at(d)) - (0.5 * (7.0 - d) - 1.0)).abs() < 1e-12);
        }
    }

    /// A loop of short lines must not gain: every read's gain stays at or below 1 at every
    /// frequency, and the reads join continuously at one sample.
    #[test]
    fn every_read_is_passive_and_the_stencils_join() {
        for i in 0..=400 {
            let d = i as f64 * 0.01;
            let taps = LagrangeTaps::at(d);
            for j in 1..=64 {
                let probe = PhaseProbe::new(PI * j as f64 / 64.0);
                assert!(taps.magnitude(&probe) <= 1.0 + 1e-12, "delay {d} omega {}: gain {}", probe.omega, taps.magnitude(&probe));
            }
        }
        let below = LagrangeTaps::at(1.0 - 1e-12);
        let at = LagrangeTaps::at(1.0);
        let shift = at.first_delay_samples - below.first_delay_samples;
        for k in 0..4 {
            let other = if k >= shift { at.weights[k - shift] } else { 0.0 };
            assert!((below.weights[k] - other).abs() < 1e-9, "tap {k}");
        }
    }

    #[test]
    fn whole_delays_read_the_stored_sample() {
        let mut line = DelayLine::new(8.0);
        for t in 0..20 {
            line.push(t as f64);
        }
        for d in 0..=8 {
            assert_eq!(line.read(&LagrangeTaps::at(d as f64)), 19.0 - d as f64);
        }
    }

    /// The read of a steady sinusoid is `|H| cos(omega (t - tau))` with the computed phase
    /// delay `tau` and gain `|H|`.
    #[test]
    fn phase_delay_and_gain_match_a_sinusoid_through_the_line() {
        for omega in [0.05, 0.6, 1.5, 2.8] {
            for d in [0.0, 0.25, 0.5, 1.3, 2.5, 5.75] {
                let taps = LagrangeTaps::at(d);
                let probe = PhaseProbe::new(omega);
                let (tau, gain) = (taps.phase_delay_samples(&probe), taps.magnitude(&probe));
                let mut line = DelayLine::new(10.0);
                for t in 0..64 {
                    line.push((omega * t as f64).cos());
                    if t >= 16 {
                        let want = gain * (omega * (t as f64 - tau)).cos();
                        assert!((line.read(&taps) - want).abs() < 1e-9, "omega {omega} delay {d} t {t}");
                    }
                }
                assert!((tau - d).abs() < if d < 1.0 { 0.1 * omega * omega } else { 0.05 * omega.powi(4) } + 1e-12, "omega {omega} delay {d}: {tau}");
            }
        }
    }
}

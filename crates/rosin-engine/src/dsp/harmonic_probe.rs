//! Listening to a note's own harmonics, as a player listens to a note before evening it
//! out: the amplitude of each of its first harmonics over a whole number of its periods.
//! Rosin's own; it only measures. The evening (`dsp::evening`) weighs the body's gain at
//! each harmonic by what it hears, where a fixed `1/n` spectrum missed by up to 7 dB: a
//! string bowed near its lower Schelleng bound puts its second harmonic 15 dB under its
//! fundamental, not 6.

use crate::dsp::evening::{harmonic_count, EVENING_HARMONICS};

/// Harmonic amplitudes over a rectangular window of a whole number of periods, one
/// correlation per harmonic, its complex exponential advanced by a rotation each sample (no
/// transcendental function per sample). Fixed size; never allocates.
#[derive(Clone, Copy, Debug)]
pub struct HarmonicProbe {
    /// `e^(-j n w t)` for each harmonic at the current sample.
    phasor: [(f64, f64); EVENING_HARMONICS],
    /// `e^(-j n w)`: one sample's rotation.
    step: [(f64, f64); EVENING_HARMONICS],
    sum: [(f64, f64); EVENING_HARMONICS],
    /// The sum of the squared samples over the window.
    energy: f64,
    /// Harmonics below 0.45 of the sample rate.
    count: usize,
    /// Samples to let pass before listening.
    wait: u32,
    /// Samples still to listen to.
    left: u32,
    /// The window's length, in samples.
    length: u32,
}

impl Default for HarmonicProbe {
    fn default() -> Self {
        Self { phasor: [(1.0, 0.0); EVENING_HARMONICS], step: [(1.0, 0.0); EVENING_HARMONICS], sum: [(0.0, 0.0); EVENING_HARMONICS], energy: 0.0, count: 0, wait: 0, left: 0, length: 0 }
    }
}

impl HarmonicProbe {
    /// Listens, after `after_samples`, to `periods` periods of a note at `f0_hz` (at least
    /// one); whatever it was listening to before is dropped.
    pub fn listen(&mut self, f0_hz: f64, sample_rate_hz: f64, after_samples: u32, periods: u32) {
        let w = std::f64::consts::TAU * f0_hz / sample_rate_hz;
        self.count = harmonic_count(f0_hz, sample_rate_hz);
        for n in 1..=self.count {
            let (sin, cos) = (n as f64 * w).sin_cos();
            self.step[n - 1] = (cos, -sin);
            self.phasor[n - 1] = (1.0, 0.0);
            self.sum[n - 1] = (0.0, 0.0);
        }
        self.energy = 0.0;
        self.length = (periods.max(1) as f64 * sample_rate_hz / f0_hz).round().max(1.0) as u32;
        self.wait = after_samples;
        self.left = self.length;
    }

    /// Whether it is waiting or listening.
    pub fn is_listening(&self) -> bool {
        self.left > 0
    }

    /// Stops listening.
    pub fn stop(&mut self) {
        self.left = 0;
    }

    /// One sample of the note. True on the sample that completes the window.
    #[inline]
    pub fn push(&mut self, x: f64) -> bool {
        if self.left == 0 {
            return false;
        }
        if self.wait > 0 {
            self.wait -= 1;
            return false;
        }
        self.energy += x * x;
        for n in 0..self.count {
            let (pr, pi) = self.phasor[n];
            self.sum[n].0 += x * pr;
            self.sum[n].1 += x * pi;
            let (sr, si) = self.step[n];
            self.phasor[n] = (pr * sr - pi * si, pr * si + pi * sr);
        }
        self.left -= 1;
        self.left == 0
    }

    /// The power of each harmonic over the last whole window (zero past the highest below
    /// 0.45 of the sample rate): `|2 / N sum x e^(-j n w t)|^2`, the squared amplitude.
    pub fn powers(&self) -> [f64; EVENING_HARMONICS] {
        let scale = 2.0 / self.length.max(1) as f64;
        let mut powers = [0.0; EVENING_HARMONICS];
        for (power, &(re, im)) in powers.iter_mut().zip(&self.sum[..self.count]) {
            *power = (scale * re).powi(2) + (scale * im).powi(2);
        }
        powers
    }

    /// How much of the window's power its harmonics carry (0 to 1, about): near 1 for a
    /// periodic note at the listened pitch, less for a stiff string's inharmonic partials,
    /// a note off that pitch, or noise.
    pub fn harmonic_fraction(&self) -> f64 {
        let mean_square = self.energy / self.length.max(1) as f64;
        if mean_square <= 0.0 {
            return 0.0;
        }
        // A harmonic of amplitude a has mean square a^2 / 2.
        0.5 * self.powers().iter().sum::<f64>() / mean_square
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_hears_each_harmonic_at_its_amplitude() {
        let (rate, f0) = (48_000.0, 196.0);
        let mut probe = HarmonicProbe::default();
        probe.listen(f0, rate, 100, 8);
        let amplitudes = [1.0, 0.2, 0.0, 0.5];
        let mut finished_at = None;
        for t in 0..20_000 {
            let time = t as f64 / rate;
            let x: f64 = amplitudes.iter().enumerate().map(|(i, a)| a * (std::f64::consts::TAU * (i + 1) as f64 * f0 * time + 0.3 * i as f64).sin()).sum();
            if probe.push(x) {
                finished_at = Some(t);
            }
        }
        let expected = (100.0 + (8.0 * rate / f0).round()) as usize - 1;
        assert_eq!(finished_at, Some(expected), "it listens after its wait, for eight periods");
        let powers = probe.powers();
        for (n, a) in amplitudes.iter().enumerate() {
            assert!((powers[n].sqrt() - a).abs() < 0.01, "harmonic {}: {} for {a}", n + 1, powers[n].sqrt());
        }
        assert!(powers[4..].iter().all(|p| p.sqrt() < 0.01));
        assert!((probe.harmonic_fraction() - 1.0).abs() < 0.01, "a periodic note is all harmonics: {}", probe.harmonic_fraction());
        assert!(!probe.is_listening());
    }

    #[test]
    fn partials_off_the_harmonics_are_not_taken_for_them() {
        // A stiff string's partials, f_n = n f0 sqrt(1 + B n^2), B = 0.01: all but the first
        // few stray from the harmonics the probe listens at.
        let (rate, f0, b) = (48_000.0, 220.0, 0.01f64);
        let mut probe = HarmonicProbe::default();
        probe.listen(f0, rate, 0, 8);
        for t in 0..10_000 {
            let time = t as f64 / rate;
            let x: f64 = (1..=12).map(|n| (std::f64::consts::TAU * n as f64 * f0 * (1.0 + b * (n * n) as f64).sqrt() * time).sin() / n as f64).sum();
            probe.push(x);
        }
        assert!(probe.harmonic_fraction() < 0.8, "inharmonic partials read as harmonics: {}", probe.harmonic_fraction());
    }

    #[test]
    fn harmonics_above_0_45_of_the_rate_are_not_heard() {
        let mut probe = HarmonicProbe::default();
        probe.listen(4_000.0, 44_100.0, 0, 4);
        for _ in 0..100 {
            probe.push(1.0);
        }
        assert!(probe.powers()[4..].iter().all(|&p| p == 0.0), "4 kHz has four harmonics under 19.8 kHz");
    }
}

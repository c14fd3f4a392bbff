//! Any host sample rate, on physics that runs at a rate it is designed and tested for.
//!
//! The string and drum grids are tested from [`MIN_INTERNAL_RATE_HZ`] to
//! [`MAX_INTERNAL_RATE_HZ`] (pitch within 3 cents, stable at every control's extreme). A host
//! rate inside that range runs the engine directly. Outside it the engine runs at an integer
//! multiple or fraction of the host rate, and a polyphase FIR (a Kaiser-windowed sinc,
//! 80 dB stopband) converts:
//!
//! - below 22.05 kHz the engine runs `k` times faster (`k` the smallest integer that lifts
//!   it to 22.05 kHz) and its output is low-passed at 0.45 of the host rate and decimated;
//! - above 192 kHz it runs `k` times slower, the smallest `k` that brings it to 96 kHz or
//!   under (a 2-D drum grid costs the cube of its rate, and 96 kHz leaves the band to 43 kHz
//!   untouched), and its output is interpolated, low-passed at 0.45 of the engine's rate.
//!
//! Either filter is linear-phase, so the conversion delays the sound by
//! [`RatePlan::latency_samples`] host samples (32 at any rate below 22.05 kHz, 0.03 s at
//! 1 kHz; 32 `k` above 192 kHz, 0.33 ms at 768 kHz). The plugin reports it to the host.

use crate::voices::Engine;
use super::output::{safety_limit, to_host_sample};

/// The engine's tested range of sample rates.
pub const MIN_INTERNAL_RATE_HZ: f64 = 22_050.0;
pub const MAX_INTERNAL_RATE_HZ: f64 = 192_000.0;
/// Above [`MAX_INTERNAL_RATE_HZ`] the engine runs at this rate or just under.
pub const INTERPOLATED_RATE_CEILING_HZ: f64 = 96_000.0;
/// The host rates Rosin accepts: 1 kHz to 1.536 MHz.
pub const MIN_HOST_RATE_HZ: f64 = 1_000.0;
pub const MAX_HOST_RATE_HZ: f64 = 16.0 * INTERPOLATED_RATE_CEILING_HZ;

/// Taps of the conversion filter per phase (per sample at the lower of the two rates).
const TAPS_PER_PHASE: usize = 64;
/// The filter's cut-off (the middle of its transition band) as a fraction of the lower
/// rate, and its transition band's width as the same fraction.
const CUTOFF_OF_LOW_RATE: f64 = 0.45;
/// Kaiser window shape for about 80 dB of stopband attenuation.
const KAISER_BETA: f64 = 7.86;
/// Engine samples rendered at a time.
const CHUNK_SAMPLES: usize = 512;

/// How the host's rate reaches the engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Conversion {
    /// The engine runs at the host's rate.
    Direct,
    /// The engine runs this many times faster; its output is decimated.
    Decimate(usize),
    /// The engine runs this many times slower; its output is interpolated.
    Interpolate(usize),
}

/// The engine's rate for a host rate, and how the two are joined.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePlan {
    pub host_rate_hz: f64,
    pub internal_rate_hz: f64,
    pub conversion: Conversion,
}

/// A host rate Rosin cannot run at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnsupportedRate(pub f64);

impl std::fmt::Display for UnsupportedRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rosin runs at sample rates from {MIN_HOST_RATE_HZ} to {MAX_HOST_RATE_HZ} Hz; the host asked for {} Hz", self.0)
    }
}

impl std::error::Error for UnsupportedRate {}

impl RatePlan {
    pub fn for_host_rate(host_rate_hz: f64) -> Result<Self, UnsupportedRate> {
        if !(MIN_HOST_RATE_HZ..=MAX_HOST_RATE_HZ).contains(&host_rate_hz) {
            return Err(UnsupportedRate(host_rate_hz));
        }
        let (internal_rate_hz, conversion) = if host_rate_hz < MIN_INTERNAL_RATE_HZ {
            let k = (MIN_INTERNAL_RATE_HZ / host_rate_hz).ceil() as usize;
            (host_rate_hz * k as f64, Conversion::Decimate(k))
        } else if host_rate_hz > MAX_INTERNAL_RATE_HZ {
            let k = (host_rate_hz / INTERPOLATED_RATE_CEILING_HZ).ceil() as usize;
            (host_rate_hz / k as f64, Conversion::Interpolate(k))
        } else {
            (host_rate_hz, Conversion::Direct)
        };
        Ok(Self { host_rate_hz, internal_rate_hz, conversion })
    }

    fn factor(&self) -> usize {
        match self.conversion {
            Conversion::Direct => 1,
            Conversion::Decimate(k) | Conversion::Interpolate(k) => k,
        }
    }

    /// The conversion filter's delay in host samples (0 when the engine runs directly).
    pub fn latency_samples(&self) -> u32 {
        let taps = TAPS_PER_PHASE * self.factor();
        match self.conversion {
            Conversion::Direct => 0,
            // The group delay, (taps - 1) / 2 engine samples, in host samples.
            Conversion::Decimate(k) => ((taps - 1) as f64 / 2.0 / k as f64).round() as u32,
            Conversion::Interpolate(_) => ((taps - 1) as f64 / 2.0).round() as u32,
        }
    }
}

/// Turns the engine's output at its rate into samples at the host's rate. Allocates only
/// in [`RateAdapter::new`].
pub struct RateAdapter {
    plan: RatePlan,
    /// The filter, `TAPS_PER_PHASE * k` taps, stored reversed so a dot product with the
    /// history (oldest first) applies it; for interpolation, split into its `k` phases.
    taps: Vec<f64>,
    /// The last input samples, twice over, so the newest `len` are one contiguous slice.
    history: Vec<f64>,
    history_len: usize,
    write: usize,
    /// The engine's output for one chunk.
    scratch: Vec<f32>,
    /// Interpolated samples made but not yet taken by the host.
    pending: Vec<f32>,
    pending_read: usize,
}

impl RateAdapter {
    pub fn new(plan: RatePlan) -> Self {
        let k = plan.factor();
        let len = TAPS_PER_PHASE * k;
        let taps = match plan.conversion {
            Conversion::Direct => Vec::new(),
            Conversion::Decimate(_) => {
                let mut h = kaiser_lowpass(len, CUTOFF_OF_LOW_RATE / k as f64);
                h.reverse();
                h
            }
            Conversion::Interpolate(_) => {
                // Zero-stuffing by k leaves 1/k of the level: the filter makes it up.
                let h: Vec<f64> = kaiser_lowpass(len, CUTOFF_OF_LOW_RATE / k as f64).iter().map(|t| t * k as f64).collect();
                // Phase p holds h[p], h[p + k], ... reversed, to meet the history oldest first.
                let mut phases = Vec::with_capacity(len);
                for p in 0..k {
                    let mut phase: Vec<f64> = (0..TAPS_PER_PHASE).map(|i| h[p + k * i]).collect();
                    phase.reverse();
                    phases.extend(phase);
                }
                phases
            }
        };
        let history_len = match plan.conversion {
            Conversion::Direct => 0,
            Conversion::Decimate(_) => len,
            Conversion::Interpolate(_) => TAPS_PER_PHASE,
        };
        Self {
            plan,
            taps,
            history: vec![0.0; 2 * history_len],
            history_len,
            write: 0,
            scratch: vec![0.0; CHUNK_SAMPLES],
            pending: vec![0.0; k],
            pending_read: k,
        }
    }

    pub fn plan(&self) -> RatePlan {
        self.plan
    }

    /// Clears the filter's memory (with [`Engine::reset`]).
    pub fn reset(&mut self) {
        self.history.iter_mut().for_each(|x| *x = 0.0);
        self.write = 0;
        self.pending_read = self.pending.len();
    }

    fn push(&mut self, sample: f64) {
        self.history[self.write] = sample;
        self.history[self.write + self.history_len] = sample;
        self.write = (self.write + 1) % self.history_len;
    }

    /// The newest `history_len` inputs, oldest first.
    fn recent(&self) -> &[f64] {
        &self.history[self.write..self.write + self.history_len]
    }

    /// Renders `out.len()` host samples from `engine`, which runs at the plan's internal rate.
    pub fn render(&mut self, engine: &mut Engine, out: &mut [f32]) {
        match self.plan.conversion {
            Conversion::Direct => engine.render(out),
            Conversion::Decimate(k) => {
                for block in out.chunks_mut(CHUNK_SAMPLES / k) {
                    let input = block.len() * k;
                    engine.render(&mut self.scratch[..input]);
                    for (i, sample) in block.iter_mut().enumerate() {
                        for j in 0..k {
                            self.push(self.scratch[i * k + j] as f64);
                        }
                        *sample = converted_sample(dot(&self.taps, self.recent()));
                    }
                }
            }
            Conversion::Interpolate(k) => {
                let mut written = 0;
                while written < out.len() {
                    if self.pending_read < k {
                        let n = (k - self.pending_read).min(out.len() - written);
                        out[written..written + n].copy_from_slice(&self.pending[self.pending_read..self.pending_read + n]);
                        self.pending_read += n;
                        written += n;
                        continue;
                    }
                    // Whole engine samples for what is left; the last one's spare phases wait.
                    let remaining = out.len() - written;
                    let needed = remaining.div_ceil(k).min(CHUNK_SAMPLES);
                    engine.render(&mut self.scratch[..needed]);
                    for i in 0..needed {
                        self.push(self.scratch[i] as f64);
                        for p in 0..k {
                            let y = converted_sample(dot(&self.taps[p * TAPS_PER_PHASE..(p + 1) * TAPS_PER_PHASE], self.recent()));
                            if written < out.len() {
                                out[written] = y;
                                written += 1;
                            } else {
                                self.pending[p] = y;
                            }
                        }
                    }
                    self.pending_read = k - (needed * k).saturating_sub(remaining);
                }
            }
        }
    }
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A converted sample for the host: through the engine's safety limiter again (the filter
/// can overshoot it by a tenth), finite and never subnormal.
#[inline]
fn converted_sample(x: f64) -> f32 {
    to_host_sample(safety_limit(x))
}

/// A linear-phase low-pass of `len` taps with its cut-off at `cutoff` cycles per sample,
/// Kaiser-windowed, at unit gain at DC.
fn kaiser_lowpass(len: usize, cutoff: f64) -> Vec<f64> {
    let centre = (len - 1) as f64 / 2.0;
    let norm = bessel_i0(KAISER_BETA);
    let mut h: Vec<f64> = (0..len)
        .map(|i| {
            let x = i as f64 - centre;
            let sinc = if x == 0.0 { 2.0 * cutoff } else { (2.0 * std::f64::consts::PI * cutoff * x).sin() / (std::f64::consts::PI * x) };
            let r = x / centre;
            sinc * bessel_i0(KAISER_BETA * (1.0 - r * r).max(0.0).sqrt()) / norm
        })
        .collect();
    let sum: f64 = h.iter().sum();
    h.iter_mut().for_each(|t| *t /= sum);
    h
}

/// The modified Bessel function of the first kind, order 0 (its power series).
fn bessel_i0(x: f64) -> f64 {
    let mut sum = 1.0;
    let mut term = 1.0;
    let half = x / 2.0;
    for k in 1..50 {
        term *= (half / k as f64) * (half / k as f64);
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_every_rate() {
        assert_eq!(RatePlan::for_host_rate(48_000.0).unwrap().conversion, Conversion::Direct);
        let low = RatePlan::for_host_rate(1_234.5677).unwrap();
        assert_eq!(low.conversion, Conversion::Decimate(18));
        assert!((MIN_INTERNAL_RATE_HZ..=MAX_INTERNAL_RATE_HZ).contains(&low.internal_rate_hz));
        let high = RatePlan::for_host_rate(768_000.0).unwrap();
        assert_eq!(high.conversion, Conversion::Interpolate(8));
        assert_eq!(high.internal_rate_hz, 96_000.0);
        assert!(RatePlan::for_host_rate(999.0).is_err());
        assert!(RatePlan::for_host_rate(f64::NAN).is_err());
        assert!(RatePlan::for_host_rate(2e6).is_err());
        assert_eq!(RatePlan::for_host_rate(44_100.0).unwrap().latency_samples(), 0);
        assert_eq!(RatePlan::for_host_rate(768_000.0).unwrap().latency_samples(), 256);
    }

    #[test]
    fn the_filter_passes_the_band_and_stops_the_images() {
        let k = 4;
        let h = kaiser_lowpass(TAPS_PER_PHASE * k, CUTOFF_OF_LOW_RATE / k as f64);
        let gain = |f: f64| {
            let (re, im) = h.iter().enumerate().fold((0.0, 0.0), |(re, im), (i, t)| {
                let w = 2.0 * std::f64::consts::PI * f * i as f64;
                (re + t * w.cos(), im - t * w.sin())
            });
            (re * re + im * im).sqrt()
        };
        // Passband to 0.4 of the low rate within 0.01 dB; stopband from 0.5 below -75 dB.
        for i in 0..=40 {
            let f = 0.4 * i as f64 / 40.0 / k as f64;
            assert!((20.0 * gain(f).log10()).abs() < 0.01, "passband at {f}: {}", gain(f));
        }
        for i in 0..=100 {
            let f = (0.5 + 0.5 * i as f64 / 100.0 * (k as f64 - 1.0)) / k as f64;
            assert!(20.0 * gain(f).log10() < -75.0, "stopband at {f}: {} dB", 20.0 * gain(f).log10());
        }
    }

    #[test]
    fn host_samples_are_never_subnormal() {
        assert_eq!(to_host_sample(1e-35), 0.0);
        assert_eq!(to_host_sample(f64::NAN), 0.0);
        assert_eq!(to_host_sample(f64::INFINITY), 0.0);
        assert_eq!(to_host_sample(-0.5), -0.5);
    }
}

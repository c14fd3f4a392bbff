//! Integer-factor decimation for voices that run oversampled: a windowed-sinc lowpass
//! (Blackman window) followed by keeping one sample in `factor`.

/// The largest decimation factor.
pub const MAX_FACTOR: usize = 4;
const TAPS_PER_PHASE: usize = 16;
const MAX_TAPS: usize = TAPS_PER_PHASE * MAX_FACTOR;
/// The dot product's partial sums: eight chains of additions side by side, where one chain
/// of 32 or 64 dependent additions held every oversampled voice's output waiting (see
/// [`Decimator::output`]). A filter's length is a multiple of it.
const PARTIAL_SUMS: usize = 8;
const _: () = assert!(TAPS_PER_PHASE % PARTIAL_SUMS == 0, "the partial sums cover every tap");

/// A fixed-size FIR decimator. Factor 1 is a pass-through.
#[derive(Clone, Debug)]
pub struct Decimator {
    factor: usize,
    /// The filter's taps, the newest sample's last: `taps[len - 1 - i]` weighs `x[n - i]`,
    /// so that they run in the order of the history's run.
    taps: [f64; MAX_TAPS],
    /// The last `len` samples, written twice (at `i` and `i + len`), so that the newest
    /// `len` always lie in one run, `history[write..write + len]`: no index wraps. At
    /// factor 1 (a pass-through), only the newest sample, at 0.
    history: [f64; 2 * MAX_TAPS],
    write: usize,
}

impl Decimator {
    pub fn new(factor: usize) -> Self {
        assert!((1..=MAX_FACTOR).contains(&factor), "decimation factor out of range");
        let mut taps = [0.0; MAX_TAPS];
        let len = TAPS_PER_PHASE * factor;
        if factor == 1 {
            taps[0] = 1.0;
        } else {
            // Cut-off at 90 % of the output's Nyquist frequency.
            let cutoff = 0.45 / factor as f64;
            let centre = (len - 1) as f64 / 2.0;
            for (i, tap) in taps.iter_mut().take(len).enumerate() {
                let x = i as f64 - centre;
                let sinc = if x == 0.0 { 2.0 * cutoff } else { (2.0 * std::f64::consts::PI * cutoff * x).sin() / (std::f64::consts::PI * x) };
                let phase = 2.0 * std::f64::consts::PI * i as f64 / (len - 1) as f64;
                let window = 0.42 - 0.5 * phase.cos() + 0.08 * (2.0 * phase).cos();
                *tap = sinc * window;
            }
            let sum: f64 = taps.iter().sum();
            taps.iter_mut().for_each(|t| *t /= sum);
            taps[..len].reverse();
        }
        Self { factor, taps, history: [0.0; 2 * MAX_TAPS], write: 0 }
    }

    pub fn factor(&self) -> usize {
        self.factor
    }

    pub fn reset(&mut self) {
        self.history = [0.0; 2 * MAX_TAPS];
        self.write = 0;
    }

    /// Feeds one input sample (at the high rate).
    #[inline]
    pub fn push(&mut self, sample: f64) {
        if self.factor == 1 {
            // A pass-through keeps only the newest sample (the voices at their own rate:
            // most of them, every sample).
            self.history[0] = sample;
            return;
        }
        let len = TAPS_PER_PHASE * self.factor;
        self.history[self.write] = sample;
        self.history[self.write + len] = sample;
        self.write = if self.write + 1 == len { 0 } else { self.write + 1 };
    }

    /// The filtered output at the current input position (call once per `factor` pushes).
    #[inline]
    pub fn output(&self) -> f64 {
        if self.factor == 1 {
            return self.history[0];
        }
        let len = TAPS_PER_PHASE * self.factor;
        // The newest `len` samples in order, oldest first, each under its tap. Eight partial
        // sums, each over every eighth product, then joined in pairs: the core overlaps
        // eight chains of four or eight additions where one chain of `len` kept it waiting
        // (the sum rounds differently from one chain, by about one unit in the last place
        // of an f64: the voice's output, and the drive of a play mode's strings in
        // sympathy, which reads it; `docs/performance.md`).
        let newest = &self.history[self.write..self.write + len];
        let mut partial = [0.0; PARTIAL_SUMS];
        for (taps, samples) in self.taps[..len].chunks_exact(PARTIAL_SUMS).zip(newest.chunks_exact(PARTIAL_SUMS)) {
            for j in 0..PARTIAL_SUMS {
                partial[j] += taps[j] * samples[j];
            }
        }
        join_in_pairs(partial)
    }
}

/// `((p0 + p4) + (p2 + p6)) + ((p1 + p5) + (p3 + p7))`: the sum of eight partial sums, in
/// an order fixed here so that every build (vector width) adds them alike.
#[inline(always)]
fn join_in_pairs(p: [f64; PARTIAL_SUMS]) -> f64 {
    let q = [p[0] + p[4], p[1] + p[5], p[2] + p[6], p[3] + p[7]];
    (q[0] + q[2]) + (q[1] + q[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gain_at(factor: usize, normalised_freq_out: f64) -> f64 {
        let mut d = Decimator::new(factor);
        let mut energy = 0.0;
        let mut count = 0.0;
        for n in 0..8000 {
            for j in 0..factor {
                let t = (n * factor + j) as f64;
                d.push((2.0 * std::f64::consts::PI * normalised_freq_out / factor as f64 * t).sin());
            }
            if n > 200 {
                energy += d.output().powi(2);
                count += 1.0;
            }
        }
        // RMS gain relative to a unit sine's.
        (2.0 * energy / count).sqrt()
    }

    /// The filter over a ring of `len` samples, each index wrapped, in the same eight
    /// partial sums: the mirrored ring must give the same output to the last bit. And the
    /// filter as first written, one chain of additions from the newest sample back: the
    /// partial sums differ from it only by rounding.
    #[test]
    fn the_mirrored_ring_sums_exactly_as_the_wrapped_one() {
        for factor in [1, 2, 4] {
            let mut d = Decimator::new(factor);
            let len = TAPS_PER_PHASE * factor;
            let mut ring = vec![0.0f64; len];
            let mut write = 0;
            let mut x = 0.123_f64;
            for n in 0..5000 {
                x = (x * 3.9 * (1.0 - x)).clamp(1e-9, 1.0 - 1e-9);
                d.push(x - 0.5);
                ring[write] = x - 0.5;
                write = (write + 1) % len;
                if n % factor == 0 {
                    // `ring[write]` is the oldest sample, under the first tap.
                    let expected = if factor == 1 {
                        ring[(write + len - 1) % len]
                    } else {
                        let mut partial = [0.0; PARTIAL_SUMS];
                        for i in 0..len {
                            partial[i % PARTIAL_SUMS] += d.taps[i] * ring[(write + i) % len];
                        }
                        join_in_pairs(partial)
                    };
                    assert_eq!(d.output().to_bits(), expected.to_bits(), "factor {factor}, sample {n}");
                    if factor == 1 {
                        continue;
                    }
                    let one_chain = (0..len).fold(0.0, |acc, i| acc + d.taps[len - 1 - i] * ring[(write + len - 1 - i) % len]);
                    let scale: f64 = (0..len).map(|i| (d.taps[i] * ring[(write + i) % len]).abs()).sum();
                    assert!((d.output() - one_chain).abs() <= 1e-15 * scale, "factor {factor}, sample {n}: {} against {one_chain}", d.output());
                }
            }
        }
    }

    #[test]
    fn passes_the_band_and_stops_images() {
        for factor in [2, 4] {
            assert!((gain_at(factor, 0.05) - 1.0).abs() < 0.01);
            assert!((gain_at(factor, 0.3) - 1.0).abs() < 0.02);
            // A tone above the output Nyquist would alias: it must be strongly attenuated.
            assert!(gain_at(factor, 0.75) < 0.01, "factor {factor}");
        }
        assert!((gain_at(1, 0.3) - 1.0).abs() < 1e-3);
    }
}

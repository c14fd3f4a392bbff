//! Grid design and tuning for the stiff-string scheme (willemsen2019 eqs. 4-6; `MODELS.md`
//! section 1, "Pitfalls").
//!
//! The scheme's own mode frequencies are known in closed form, so the wave speed that puts
//! the first mode exactly on a note can be solved for. This accounts for stiffness, for the
//! scheme's dispersion and for the losses, where the published code used `c = 2 f0 L` and
//! played 18 to 53 cents sharp.

/// The smallest stable grid spacing `h_min` for wave speed `c`, stiffness `kappa`,
/// frequency-dependent damping `sigma1` and time step `k`.
pub fn min_grid_spacing_m(wave_speed_mps: f64, kappa_m2_per_s: f64, sigma1_m2_per_s: f64, time_step_s: f64) -> f64 {
    let k = time_step_s;
    let a = wave_speed_mps * wave_speed_mps * k * k + 4.0 * sigma1_m2_per_s * k;
    (0.5 * (a + (a * a + 16.0 * kappa_m2_per_s * kappa_m2_per_s * k * k).sqrt())).sqrt()
}

/// The coefficients of the scheme that decide its mode frequencies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchemeGrid {
    /// `N`, the number of intervals (`N + 1` nodes, two of them fixed).
    pub intervals: usize,
    pub length_m: f64,
    pub time_step_s: f64,
    pub wave_speed_mps: f64,
    pub kappa_m2_per_s: f64,
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
}

impl SchemeGrid {
    pub fn spacing_m(&self) -> f64 {
        self.length_m / self.intervals as f64
    }

    /// The frequency of mode `n` (1-based) of the damped scheme, from its exact
    /// characteristic equation. With no loss this is
    /// `arcsin(sqrt(lambda^2 s + 4 mu^2 s^2)) / (pi k)`, `s = sin^2(n pi / (2N))`.
    pub fn mode_frequency_hz(&self, mode: usize) -> f64 {
        let k = self.time_step_s;
        let h = self.spacing_m();
        let s = (mode as f64 * std::f64::consts::PI / (2.0 * self.intervals as f64)).sin().powi(2);
        let lambda = self.wave_speed_mps * k / h;
        let mu = self.kappa_m2_per_s * k / (h * h);
        let q = 4.0 * lambda * lambda * s + 16.0 * mu * mu * s * s;
        let p = 8.0 * self.sigma1_m2_per_s * k * s / (h * h);
        let sk = self.sigma0_per_s * k;
        let cos_wk = (2.0 - q - p) / (2.0 * ((1.0 + sk) * (1.0 - sk - p)).sqrt());
        cos_wk.clamp(-1.0, 1.0).acos() / (2.0 * std::f64::consts::PI * k)
    }

    /// The decay rate of mode `n` of the continuous model, `sigma0 + sigma1 (n pi / L)^2`,
    /// whose T60 is `3 ln 10` over it.
    pub fn mode_decay_rate_per_s(&self, mode: usize) -> f64 {
        let wavenumber = mode as f64 * std::f64::consts::PI / self.length_m;
        self.sigma0_per_s + self.sigma1_m2_per_s * wavenumber * wavenumber
    }

    /// The wave speed that puts mode 1 of this grid on `frequency_hz`, or `None` when the
    /// grid cannot reach that frequency.
    pub fn wave_speed_for_first_mode(&self, frequency_hz: f64) -> Option<f64> {
        let k = self.time_step_s;
        let h = self.spacing_m();
        let s = (std::f64::consts::PI / (2.0 * self.intervals as f64)).sin().powi(2);
        let mu = self.kappa_m2_per_s * k / (h * h);
        let p = 8.0 * self.sigma1_m2_per_s * k * s / (h * h);
        let sk = self.sigma0_per_s * k;
        let wk = 2.0 * std::f64::consts::PI * frequency_hz * k;
        let q = 2.0 - p - 2.0 * wk.cos() * ((1.0 + sk) * (1.0 - sk - p)).sqrt();
        let lambda_sq = (q - 16.0 * mu * mu * s * s) / (4.0 * s);
        (lambda_sq > 0.0 && lambda_sq.is_finite()).then(|| lambda_sq.sqrt() * h / k)
    }

    /// The pitch of Helmholtz motion on this grid: the mean of `f_n / n` over the modes
    /// below `max_frequency_hz`, weighted by `1 / n^2`, the share of mode `n` in the energy
    /// of a sawtooth. The bow locks the partials into one harmonic series, so a string
    /// whose partials are stretched by stiffness (or squeezed by the scheme's dispersion)
    /// plays at this compromise, not at its first mode.
    pub fn helmholtz_frequency_hz(&self, max_frequency_hz: f64) -> f64 {
        let mut sum = HelmholtzSum::new(self, max_frequency_hz);
        sum.add_modes(self, usize::MAX);
        sum.frequency_hz()
    }

    /// Whether the grid satisfies the stability condition for losses up to
    /// `max_sigma1_m2_per_s` and a wave speed up to `wave_speed_headroom` times its own.
    pub fn is_stable_for(&self, max_sigma1_m2_per_s: f64, wave_speed_headroom: f64) -> bool {
        let h_min = min_grid_spacing_m(self.wave_speed_mps * wave_speed_headroom, self.kappa_m2_per_s, max_sigma1_m2_per_s, self.time_step_s);
        self.spacing_m() >= h_min * (1.0 - 1e-12)
    }
}

/// What a string must be, apart from its wave speed, to be tuned by [`tune_grid`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuningRequest {
    pub frequency_hz: f64,
    pub length_m: f64,
    pub kappa_m2_per_s: f64,
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
    /// The grid stays stable for any `sigma1` up to this, so damping can be automated.
    pub max_sigma1_m2_per_s: f64,
    pub sample_rate_hz: f64,
    /// The most intervals the caller has memory for.
    pub max_intervals: usize,
    /// The grid stays stable if the wave speed is later raised by up to this factor (1 for
    /// none), so pitch can be corrected while the note sounds.
    pub wave_speed_headroom: f64,
    /// Which frequency is put on the note.
    pub target: PitchTarget,
}

/// [`SchemeGrid::helmholtz_frequency_hz`] summed a few modes at a time, in the same order
/// (so with the same result to the last bit).
#[derive(Clone, Copy, Debug)]
struct HelmholtzSum {
    next_mode: usize,
    highest: usize,
    weighted: f64,
    total: f64,
}

impl HelmholtzSum {
    fn new(grid: &SchemeGrid, max_frequency_hz: f64) -> Self {
        let first = grid.mode_frequency_hz(1);
        let highest = ((max_frequency_hz / first).floor() as usize).clamp(1, grid.intervals - 1);
        Self { next_mode: 1, highest, weighted: 0.0, total: 0.0 }
    }

    /// Adds up to `modes` more modes; returns how many it added.
    fn add_modes(&mut self, grid: &SchemeGrid, modes: usize) -> usize {
        let last = self.highest.min(self.next_mode.saturating_add(modes) - 1);
        let first = self.next_mode;
        for mode in first..=last {
            let weight = 1.0 / (mode * mode) as f64;
            self.weighted += weight * grid.mode_frequency_hz(mode) / mode as f64;
            self.total += weight;
        }
        self.next_mode = last + 1;
        last + 1 - first
    }

    fn is_done(&self) -> bool {
        self.next_mode > self.highest
    }

    fn frequency_hz(&self) -> f64 {
        self.weighted / self.total
    }
}

/// What [`tune_grid`] puts on the requested frequency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PitchTarget {
    /// The scheme's first mode: right for a plucked or freely ringing string.
    FirstMode,
    /// [`SchemeGrid::helmholtz_frequency_hz`]: right for a bowed string.
    Helmholtz,
}

/// The fewest intervals a string grid may have (cubic interpolation needs four nodes).
pub const MIN_INTERVALS: usize = 4;

/// Designs the finest stable grid whose first mode sounds at the requested frequency.
/// Frequencies the coarsest grid cannot reach are lowered to the highest it can.
fn tune_first_mode(request: &TuningRequest) -> SchemeGrid {
    let k = 1.0 / request.sample_rate_hz;
    let nyquist_safe_hz = 0.45 * request.sample_rate_hz;
    let mut grid = SchemeGrid {
        intervals: MIN_INTERVALS,
        length_m: request.length_m,
        time_step_s: k,
        wave_speed_mps: 2.0 * request.frequency_hz.min(nyquist_safe_hz) * request.length_m,
        kappa_m2_per_s: request.kappa_m2_per_s,
        sigma0_per_s: request.sigma0_per_s,
        sigma1_m2_per_s: request.sigma1_m2_per_s,
    };
    // N depends on c and c on N: start from the ideal string and refine. Each pass either
    // keeps N or lowers it, so this settles in a few passes.
    let mut intervals = {
        let h_min = min_grid_spacing_m(grid.wave_speed_mps * request.wave_speed_headroom, grid.kappa_m2_per_s, request.max_sigma1_m2_per_s, k);
        ((request.length_m / h_min).floor() as usize).clamp(MIN_INTERVALS, request.max_intervals)
    };
    let mut frequency_hz = request.frequency_hz.min(nyquist_safe_hz);
    for _ in 0..64 {
        grid.intervals = intervals;
        match grid.wave_speed_for_first_mode(frequency_hz) {
            Some(c) => {
                grid.wave_speed_mps = c;
                if grid.is_stable_for(request.max_sigma1_m2_per_s, request.wave_speed_headroom) {
                    return grid;
                }
                if intervals > MIN_INTERVALS {
                    intervals -= 1;
                } else {
                    frequency_hz *= 0.99;
                }
            }
            None => {
                // Stiffness alone already puts mode 1 above the note: a coarser grid does
                // not help, so the note is played at the lowest pitch this string allows.
                if intervals > MIN_INTERVALS {
                    intervals -= 1;
                } else {
                    frequency_hz *= 1.01;
                }
            }
        }
    }
    // Unreachable in practice; keep a grid that is stable whatever the pitch.
    grid.intervals = MIN_INTERVALS;
    grid.wave_speed_mps = 0.5 * request.length_m / MIN_INTERVALS as f64 / k;
    grid
}

/// Designs the finest stable grid that sounds the requested frequency, as
/// [`TuningRequest::target`] defines it. Frequencies the coarsest grid cannot reach are
/// lowered to the highest it can.
pub fn tune_grid(request: &TuningRequest) -> SchemeGrid {
    let mut tuner = GridTuner::new(request);
    loop {
        if let Some(grid) = tuner.step(usize::MAX) {
            return grid;
        }
    }
}

/// The most fixed-point passes [`tune_grid`] makes on the Helmholtz pitch.
const HELMHOLTZ_PASSES: usize = 6;

/// [`tune_grid`] a step at a time, for an audio thread that may spend only a few
/// microseconds a sample on it: each [`GridTuner::step`] sums at most a given number of
/// modes. The grid it ends with is [`tune_grid`]'s, to the last bit (`tune_grid` runs it).
///
/// For the Helmholtz target, `f_eff` is nearly proportional to the first mode, so a
/// fixed-point iteration on the first mode's target converges in a few passes, each a sum
/// over every mode below 10 kHz (180 modes for A1 at 48 kHz, 730 for the lowest MIDI key).
#[derive(Clone, Copy, Debug)]
pub struct GridTuner {
    request: TuningRequest,
    grid: SchemeGrid,
    first_mode_hz: f64,
    band_hz: f64,
    passes: usize,
    /// The sum in progress on `grid`; `None` once the grid is designed.
    sum: Option<HelmholtzSum>,
    modes_summed: u64,
}

impl GridTuner {
    pub fn new(request: &TuningRequest) -> Self {
        let grid = tune_first_mode(request);
        let band_hz = helmholtz_band_hz(request.sample_rate_hz);
        let sum = (request.target == PitchTarget::Helmholtz).then(|| HelmholtzSum::new(&grid, band_hz));
        Self { request: *request, grid, first_mode_hz: request.frequency_hz, band_hz, passes: 0, sum, modes_summed: 0 }
    }

    /// Sums at most `modes` more modes (retuning the first mode between passes); the grid
    /// once it is designed.
    pub fn step(&mut self, modes: usize) -> Option<SchemeGrid> {
        let mut budget = modes.max(1);
        while let Some(sum) = &mut self.sum {
            let added = sum.add_modes(&self.grid, budget);
            self.modes_summed += added as u64;
            budget -= added;
            if !sum.is_done() {
                return None;
            }
            let ratio = self.request.frequency_hz / sum.frequency_hz();
            self.passes += 1;
            if (ratio - 1.0).abs() < 1e-9 {
                self.sum = None;
                break;
            }
            self.first_mode_hz *= ratio;
            self.grid = tune_first_mode(&TuningRequest { frequency_hz: self.first_mode_hz, ..self.request });
            self.sum = (self.passes < HELMHOLTZ_PASSES).then(|| HelmholtzSum::new(&self.grid, self.band_hz));
            if self.sum.is_some() && budget == 0 {
                return None;
            }
        }
        Some(self.grid)
    }

    /// The modes summed so far: the measure of the work done.
    pub fn modes_summed(&self) -> u64 {
        self.modes_summed
    }

    pub fn request(&self) -> &TuningRequest {
        &self.request
    }
}

/// The band whose modes set the pitch of Helmholtz motion: up to 10 kHz (or Nyquist).
/// Higher modes carry little of a bowed string's energy; counting them up to Nyquist made
/// low notes at high sample rates several cents flat.
pub fn helmholtz_band_hz(sample_rate_hz: f64) -> f64 {
    (0.5 * sample_rate_hz).min(10_000.0)
}

/// Cents between two frequencies.
pub fn cents(frequency_hz: f64, reference_hz: f64) -> f64 {
    1200.0 * (frequency_hz / reference_hz).log2()
}

/// The equal-tempered frequency of a (possibly fractional) MIDI key, A4 = 440 Hz.
pub fn midi_key_to_hz(key: f64) -> f64 {
    440.0 * 2f64.powf((key - 69.0) / 12.0)
}

/// The frequency ratio of an equal-tempered interval of `semitones`, `2^(semitones / 12)`.
/// The voices take it every sample for their bends and glides; with none (most samples)
/// it is exactly 1, which needs no `exp2` (a libm call).
#[inline]
pub fn semitones_to_ratio(semitones: f64) -> f64 {
    if semitones == 0.0 {
        1.0
    } else {
        (semitones / 12.0).exp2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Octaves are exact, no interval (0, either sign) is exactly 1, and every other interval
    /// is the `exp2` it stands for, to the bit.
    #[test]
    fn semitones_give_the_equal_tempered_ratio() {
        assert_eq!(semitones_to_ratio(0.0), 1.0);
        assert_eq!(semitones_to_ratio(-0.0), 1.0);
        assert_eq!(semitones_to_ratio(12.0), 2.0);
        assert_eq!(semitones_to_ratio(-24.0), 0.25);
        for semitones in [7.0, -5.0, 0.37, -1e-9, 48.0] {
            assert_eq!(semitones_to_ratio(semitones).to_bits(), (semitones / 12.0).exp2().to_bits(), "{semitones} semitones");
            assert_ne!(semitones_to_ratio(semitones), 1.0, "{semitones} semitones");
        }
        assert!((cents(440.0 * semitones_to_ratio(7.0), 440.0) - 700.0).abs() < 1e-9);
    }

    /// The design as it was written before it could be stepped: one loop.
    fn tune_grid_in_one_go(request: &TuningRequest) -> SchemeGrid {
        let mut grid = tune_first_mode(request);
        if request.target == PitchTarget::Helmholtz {
            let band_hz = helmholtz_band_hz(request.sample_rate_hz);
            let mut first_mode_hz = request.frequency_hz;
            for _ in 0..HELMHOLTZ_PASSES {
                let first = grid.mode_frequency_hz(1);
                let highest = ((band_hz / first).floor() as usize).clamp(1, grid.intervals - 1);
                let (mut weighted, mut total) = (0.0, 0.0);
                for mode in 1..=highest {
                    let weight = 1.0 / (mode * mode) as f64;
                    weighted += weight * grid.mode_frequency_hz(mode) / mode as f64;
                    total += weight;
                }
                let ratio = request.frequency_hz / (weighted / total);
                if (ratio - 1.0).abs() < 1e-9 {
                    break;
                }
                first_mode_hz *= ratio;
                grid = tune_first_mode(&TuningRequest { frequency_hz: first_mode_hz, ..*request });
            }
        }
        grid
    }

    /// Stepped a few modes at a time or all at once, the tuner ends on the same grid, to the
    /// last bit, and never sums more modes a step than it is given.
    #[test]
    fn a_grid_designed_in_steps_is_the_grid_designed_in_one_go() {
        for rate in [44_100.0, 48_000.0, 192_000.0] {
            for key in [0.0, 9.0, 28.0, 40.5, 55.0, 69.0, 96.0, 127.0] {
                let frequency_hz = midi_key_to_hz(key);
                let c = 2.0 * frequency_hz * 0.33;
                let request = TuningRequest {
                    frequency_hz,
                    length_m: 0.33,
                    kappa_m2_per_s: 1e-4f64.sqrt() * c * 0.33 / std::f64::consts::PI,
                    sigma0_per_s: 1.4,
                    sigma1_m2_per_s: 1e-4 * (c / 200.0).powi(2),
                    max_sigma1_m2_per_s: 4e-4 * (c / 200.0).powi(2),
                    sample_rate_hz: rate,
                    max_intervals: 1024,
                    wave_speed_headroom: 1.03,
                    target: PitchTarget::Helmholtz,
                };
                let expected = tune_grid_in_one_go(&request);
                assert_eq!(tune_grid(&request), expected, "key {key} at {rate} Hz");
                for budget in [1, 7, 64] {
                    let mut tuner = GridTuner::new(&request);
                    let mut steps = 0u64;
                    let grid = loop {
                        let before = tuner.modes_summed();
                        let done = tuner.step(budget);
                        assert!(tuner.modes_summed() - before <= budget as u64, "a step summed more than {budget} modes");
                        steps += 1;
                        if let Some(grid) = done {
                            break grid;
                        }
                        assert!(steps < 100_000, "the tuner never finished");
                    };
                    assert_eq!(grid, expected, "key {key} at {rate} Hz in steps of {budget} modes");
                    assert!(steps >= tuner.modes_summed() / budget as u64, "fewer steps than the modes allow");
                }
            }
        }
    }

    #[test]
    fn paper_grids_count_intervals() {
        // willemsen2019: N = 95, 71, 49, 33 for G3, D4, A4, E5 at 44.1 kHz with c = 2 f0 L.
        let kappa = (2e11 * std::f64::consts::PI * 5e-4f64.powi(4) / 4.0 / (7850.0 * std::f64::consts::PI * 25e-8)).sqrt();
        for (f0, n) in [(196.0, 95), (293.66, 71), (440.0, 49), (659.26, 33)] {
            let h = min_grid_spacing_m(2.0 * f0, kappa, 5e-3, 1.0 / 44100.0);
            assert_eq!((1.0 / h).floor() as usize, n, "f0 {f0}");
        }
    }

    fn request(f: f64, fs: f64) -> TuningRequest {
        TuningRequest {
            frequency_hz: f,
            length_m: 1.0,
            kappa_m2_per_s: 0.003 * 2.0 * f,
            sigma0_per_s: 1.0,
            sigma1_m2_per_s: 5e-3,
            max_sigma1_m2_per_s: 2e-2,
            sample_rate_hz: fs,
            max_intervals: 1024,
            wave_speed_headroom: 1.01,
            target: PitchTarget::FirstMode,
        }
    }

    #[test]
    fn tuned_grid_is_stable_and_on_pitch() {
        for key in [28.0, 43.0, 69.0, 88.0, 100.0] {
            for fs in [22050.0, 44100.0, 96000.0, 192000.0] {
                let f = midi_key_to_hz(key);
                let grid = tune_grid(&request(f, fs));
                assert!(grid.is_stable_for(2e-2, 1.01));
                assert!(cents(grid.mode_frequency_hz(1), f).abs() < 1e-6, "key {key} fs {fs}");
                let bowed = tune_grid(&TuningRequest { target: PitchTarget::Helmholtz, ..request(f, fs) });
                assert!(cents(bowed.helmholtz_frequency_hz(helmholtz_band_hz(fs)), f).abs() < 1e-3, "key {key} fs {fs}");
                let h_min = min_grid_spacing_m(grid.wave_speed_mps * 1.01, grid.kappa_m2_per_s, 2e-2, 1.0 / fs);
                // As fine as the stability condition allows (or the memory cap).
                assert!(grid.intervals == 1024 || grid.spacing_m() < h_min * (grid.intervals as f64 + 1.0) / grid.intervals as f64);
            }
        }
    }
}

//! The instrument body as a bank of two-pole resonators driven by the bridge signal.
//!
//! The body's response at the bridge is a modal sum (Woodhouse, *On the bridge hill of the
//! violin*, Acta Acustica 2005, eq. 4):
//!
//! `Y(w) = sum_n i w u_n^2 / (w_n^2 + 2 i zeta_n w_n w - w^2)`, with `Q_n = 1 / (2 zeta_n)`.
//!
//! Each term is a velocity (band-pass) response: zero at DC, largest exactly at `w_n`,
//! falling 6 dB per octave on either side. The low, separately audible "signature" modes
//! come from published data, and the dense upper part of the bank is drawn at random from
//! the statistics of the body (constant modal density, Q spread, Gaussian amplitudes under
//! a bridge-hill envelope). Both are in `docs/research/issue5-body-modes-and-strings.md`
//! sections 1-3, whose tags are repeated here: [R] read in a source, [E] estimated.
//!
//! # Discretisation
//!
//! One mode, at `f` Hz with quality `Q`, sampled at `fs`:
//!
//! `H(z) = b (1 - z^-2) / (1 + a1 z^-1 + a2 z^-2)`, `a1 = -2 r cos(theta)`, `a2 = r^2`.
//!
//! * `r = exp(-pi f / (Q fs))` is the impulse-invariant pole radius: the continuous mode
//!   decays as `exp(-zeta w_n t) = exp(-pi f t / Q)`, so each mode keeps its decay time and
//!   its -3 dB bandwidth `f / Q` at every sample rate.
//! * The numerator `1 - z^-2` puts zeros at DC and at Nyquist, as the `i w` factor above
//!   puts one at DC: the body passes no DC, whatever the gains.
//! * `theta` is set so that the magnitude peak lands exactly on `f`. Setting the derivative
//!   of `|H(e^jw)|^2 = 4 sin^2 w / ((1 - 2r cos(w - theta) + r^2)(1 - 2r cos(w + theta) + r^2))`
//!   to zero gives the peak at `cos w = 2r cos(theta) / (1 + r^2)`, so we take
//!   `cos(theta) = cosh(pi f / (Q fs)) cos(2 pi f / fs)`. For small damping this is
//!   `theta = w_n sqrt(1 - zeta^2)`: the pole sits at the damped frequency, as in the
//!   continuous mode, whose velocity response also peaks at the undamped one.
//! * `b` makes the magnitude at `f` exactly 1, so a mode's `gain` is its peak amplitude.
//!
//! # Loudness
//!
//! The white-noise power gain of one mode is `sum h[n]^2 = 2 b^2 / (1 - r^2)` (from the
//! AR(2) autocovariances `gamma_0 - gamma_2 = 1 / (1 - a2)`). The bank is scaled by one
//! factor so that `sum_i gain_i^2 * 2 b_i^2 / (1 - r_i^2) * fs / 48 kHz = 1`: its mean-square
//! gain over 0-24 kHz is 1, which is its white-noise RMS gain at 48 kHz. Cross terms between
//! modes are ignored (they average out with the upper bank's random signs; the tests measure
//! what is left). The reference band is fixed rather than `fs / 2` so that a band-limited
//! signal such as a bowed string comes out equally loud at every sample rate.
//!
//! Modes at or above 0.45 `fs` are left out, so every rate from 22.05 to 192 kHz works.

use std::f64::consts::PI;

/// One resonance of the body at the bridge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyMode {
    pub frequency_hz: f64,
    /// `Q = 1 / (2 zeta)`; the -3 dB bandwidth is `frequency_hz / quality`.
    pub quality: f64,
    /// The mode's peak amplitude relative to the reference mode (B1- or its analogue = 1),
    /// linear; the sign is the sign of its modal term.
    pub gain: f64,
}

impl BodyMode {
    const SILENT: BodyMode = BodyMode { frequency_hz: 0.0, quality: 1.0, gain: 0.0 };
}

/// The statistical upper part of a body's bank (notes section 3.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UpperBank {
    /// The first synthesised mode lies at most one mean spacing above this.
    pub start_hz: f64,
    /// No mode is synthesised above this. Set it below `start_hz` for no upper bank.
    pub end_hz: f64,
    /// Mean distance between neighbouring modes (constant modal density, as for a plate).
    pub mean_spacing_hz: f64,
    /// Mean quality; each mode's is spread uniformly by +-30 % around it.
    pub quality: f64,
    /// Centre of the bridge hill, the broad peak of the bridge's rocking resonance.
    pub hill_hz: f64,
    /// Quality of the hill's two-pole peak (low: the hill is broad).
    pub hill_quality: f64,
    /// Height of the hill's top above the flat part of the envelope.
    pub hill_gain_db: f64,
    /// Above this, the envelope falls at 12 dB per octave (the bridge's mass).
    pub rolloff_hz: f64,
    /// RMS modal gain of the envelope's flat part, relative to the reference mode.
    pub mean_gain_db: f64,
}

/// A body: its published signature modes plus a synthesised statistical upper bank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyModel {
    pub name: &'static str,
    pub signature_modes: &'static [BodyMode],
    pub upper: UpperBank,
    /// Seeds the upper bank's random draw; the same seed always gives the same body.
    pub seed: u64,
}

/// Capacity of the bank; the models below stay under it at every sample rate.
pub const MAX_BODY_MODES: usize = 128;

/// The rate whose half band (0-24 kHz) defines the bank's unit mean-square gain.
pub const LOUDNESS_REFERENCE_RATE_HZ: f64 = 48_000.0;

/// Modes at or above this fraction of the sample rate are left out.
pub const MAX_MODE_FRACTION_OF_RATE: f64 = 0.45;

/// Violin signature modes (notes 1.2). All Q values and levels are [E]; the notes give
/// ranges, Q 20-60, and we take a value inside each.
///
/// | mode | Hz | source | Q | level |
/// |---|---|---|---|---|
/// | A0 | 275 | [E], inside "~280 Hz" [R] (Bissinger 2008) | 30 | -6 dB |
/// | CBR | 405 | [E] | 40 | -15 dB |
/// | B1- | 465 | [E], the B1 pair "~500 Hz" [R] (Bissinger 2008) | 35 | 0 dB (reference) |
/// | A1 | 475 | [E], B1- + 10, inside B1- + 0-16 Hz [R] (Kreit) | 50 | -15 dB |
/// | B1+ | 545 | [E], B1- + 80, inside B1- + 75-95 Hz [R] (Kreit) | 35 | +2 dB |
/// | "C4" | 700 | [E], inside the 650-796 Hz search band [R] (Wrzeciono 2007) | 40 | -4 dB |
/// | corpus | 760, 820, 880, 940 | [E], "3-6 modes, 600 Hz-1 kHz, 30-60 Hz apart" | 40 | -7, -6, -9, -8 dB |
pub const VIOLIN_SIGNATURE_MODES: [BodyMode; 10] = [
    BodyMode { frequency_hz: 275.0, quality: 30.0, gain: 0.501 },
    BodyMode { frequency_hz: 405.0, quality: 40.0, gain: 0.178 },
    BodyMode { frequency_hz: 465.0, quality: 35.0, gain: 1.0 },
    BodyMode { frequency_hz: 475.0, quality: 50.0, gain: 0.178 },
    BodyMode { frequency_hz: 545.0, quality: 35.0, gain: 1.259 },
    BodyMode { frequency_hz: 700.0, quality: 40.0, gain: 0.631 },
    BodyMode { frequency_hz: 760.0, quality: 40.0, gain: 0.447 },
    BodyMode { frequency_hz: 820.0, quality: 40.0, gain: 0.501 },
    BodyMode { frequency_hz: 880.0, quality: 40.0, gain: 0.355 },
    BodyMode { frequency_hz: 940.0, quality: 40.0, gain: 0.398 },
];

/// Violin body. Upper bank (notes 3.2): spacing 35 Hz [E], inside the 25-35 Hz derived [D]
/// from "more than 65 resonances below 2 kHz" [R] (Schleske); Q 40 [E]; bridge hill at
/// 2.4 kHz [R] (Bissinger 2008), Q 2 and +8 dB [E]; roll-off above 4 kHz [R] (Bissinger
/// 2008) at 12 dB/oct [E]; flat level -6 dB [E]. The bank ends at 4.9 kHz [E] to stay
/// inside [`MAX_BODY_MODES`].
pub const VIOLIN_BODY: BodyModel = BodyModel {
    name: "Violin",
    signature_modes: &VIOLIN_SIGNATURE_MODES,
    upper: UpperBank {
        start_hz: 960.0,
        end_hz: 4900.0,
        mean_spacing_hz: 35.0,
        quality: 40.0,
        hill_hz: 2400.0,
        hill_quality: 2.0,
        hill_gain_db: 8.0,
        rolloff_hz: 4000.0,
        mean_gain_db: -6.0,
    },
    seed: 0x7669_6f6c_696e_0001,
};

/// Viola signature modes (notes 2.1-2.2). Q values and levels are [E] (notes: Q 25-45).
///
/// | mode | Hz | source | Q | level |
/// |---|---|---|---|---|
/// | A0 | 230 | [R] (Johansson, in JAVS Summer 2011 p. 38) | 30 | -6 dB |
/// | CBR | 300 | [E] | 40 | -15 dB |
/// | B1- | 350 | [R] "body mode ~350 Hz" (same) | 35 | 0 dB (reference) |
/// | B1+ | 415 | [E], inside the 330-420 Hz pair [E] | 35 | +1 dB |
/// | corpus | 560, 620, 690, 760 | [E], the violin's 700-940 Hz scaled by 0.8 | 40 | -4, -7, -6, -9 dB |
pub const VIOLA_SIGNATURE_MODES: [BodyMode; 8] = [
    BodyMode { frequency_hz: 230.0, quality: 30.0, gain: 0.501 },
    BodyMode { frequency_hz: 300.0, quality: 40.0, gain: 0.178 },
    BodyMode { frequency_hz: 350.0, quality: 35.0, gain: 1.0 },
    BodyMode { frequency_hz: 415.0, quality: 35.0, gain: 1.122 },
    BodyMode { frequency_hz: 560.0, quality: 40.0, gain: 0.631 },
    BodyMode { frequency_hz: 620.0, quality: 40.0, gain: 0.447 },
    BodyMode { frequency_hz: 690.0, quality: 40.0, gain: 0.501 },
    BodyMode { frequency_hz: 760.0, quality: 40.0, gain: 0.355 },
];

/// Viola body. Upper bank (notes 3.2 item 5, all [E]): spacing 28 Hz (the violin's x 0.8),
/// Q 40, bridge hill at 2.1 kHz (inside 2.0-2.3 kHz), Q 2, +7 dB; roll-off above 3.4 kHz
/// (the violin's 4 kHz scaled like the hill); flat level -6 dB. Ends at 3.9 kHz to stay
/// inside [`MAX_BODY_MODES`].
pub const VIOLA_BODY: BodyModel = BodyModel {
    name: "Viola",
    signature_modes: &VIOLA_SIGNATURE_MODES,
    upper: UpperBank {
        start_hz: 800.0,
        end_hz: 3900.0,
        mean_spacing_hz: 28.0,
        quality: 40.0,
        hill_hz: 2100.0,
        hill_quality: 2.0,
        hill_gain_db: 7.0,
        rolloff_hz: 3400.0,
        mean_gain_db: -6.0,
    },
    seed: 0x7669_6f6c_6100_0002,
};

/// Cello signature modes (notes 2.2). All [E] except where marked; notes: Q 20-40, "the
/// violin's A0/B1 structure scaled down".
///
/// | mode | Hz | source | Q | level |
/// |---|---|---|---|---|
/// | A0 | 100 | [E] (95-110) | 25 | -6 dB |
/// | CBR | 145 | [E], bottom of the 145-220 Hz corpus band | 30 | -12 dB |
/// | B1- | 175 | [E], inside the E-F# wolf region 165-185 Hz [R] (Wolf tone; Firth 1974) | 30 | 0 dB (reference) |
/// | B1+ | 215 | [E], top of the 145-220 Hz band | 30 | -2 dB |
/// | corpus | 260, 300, 345, 390 | [E], the violin's 700-940 Hz modes scaled by 0.37 | 35 | -5, -7, -6, -9 dB |
pub const CELLO_SIGNATURE_MODES: [BodyMode; 8] = [
    BodyMode { frequency_hz: 100.0, quality: 25.0, gain: 0.501 },
    BodyMode { frequency_hz: 145.0, quality: 30.0, gain: 0.251 },
    BodyMode { frequency_hz: 175.0, quality: 30.0, gain: 1.0 },
    BodyMode { frequency_hz: 215.0, quality: 30.0, gain: 0.794 },
    BodyMode { frequency_hz: 260.0, quality: 35.0, gain: 0.562 },
    BodyMode { frequency_hz: 300.0, quality: 35.0, gain: 0.447 },
    BodyMode { frequency_hz: 345.0, quality: 35.0, gain: 0.501 },
    BodyMode { frequency_hz: 390.0, quality: 35.0, gain: 0.355 },
];

/// Cello body. Upper bank (notes 3.2 item 5, all [E]): spacing 15 Hz (inside 10-15 Hz),
/// Q 35, a weak bridge hill at 1.25 kHz (inside 1.0-1.5 kHz), Q 1.5, +4 dB; roll-off above
/// 2.1 kHz (the violin's hill-to-roll-off ratio); flat level -6 dB. Ends at 2.1 kHz to
/// stay inside [`MAX_BODY_MODES`].
pub const CELLO_BODY: BodyModel = BodyModel {
    name: "Cello",
    signature_modes: &CELLO_SIGNATURE_MODES,
    upper: UpperBank {
        start_hz: 420.0,
        end_hz: 2100.0,
        mean_spacing_hz: 15.0,
        quality: 35.0,
        hill_hz: 1250.0,
        hill_quality: 1.5,
        hill_gain_db: 4.0,
        rolloff_hz: 2100.0,
        mean_gain_db: -6.0,
    },
    seed: 0x6365_6c6c_6f00_0003,
};

/// Double-bass signature modes (notes 2.2). All [E]; notes: Q 15-35, A0 55-65 Hz, corpus
/// modes 90-130 Hz, a strong one near G#2 if the wolf is put there (the wolf is "around
/// G#" [R], octave not stated).
///
/// | mode | Hz | source | Q | level |
/// |---|---|---|---|---|
/// | A0 | 57 | [E] (55-65) | 20 | -6 dB |
/// | CBR | 88 | [E] (90-130 band, just below) | 25 | -10 dB |
/// | B1- | 104 | [E], G#2 = 103.8 Hz | 25 | 0 dB (reference) |
/// | B1+ | 125 | [E] (90-130) | 25 | -2 dB |
/// | corpus | 150, 180, 215 | [E] | 30 | -5, -7, -8 dB |
pub const DOUBLE_BASS_SIGNATURE_MODES: [BodyMode; 7] = [
    BodyMode { frequency_hz: 57.0, quality: 20.0, gain: 0.501 },
    BodyMode { frequency_hz: 88.0, quality: 25.0, gain: 0.316 },
    BodyMode { frequency_hz: 104.0, quality: 25.0, gain: 1.0 },
    BodyMode { frequency_hz: 125.0, quality: 25.0, gain: 0.794 },
    BodyMode { frequency_hz: 150.0, quality: 30.0, gain: 0.562 },
    BodyMode { frequency_hz: 180.0, quality: 30.0, gain: 0.447 },
    BodyMode { frequency_hz: 215.0, quality: 30.0, gain: 0.398 },
];

/// Double-bass body. Upper bank (notes 3.2 item 5, all [E]): spacing 10 Hz (top of
/// 6-10 Hz), Q 30, a weak bridge hill at 800 Hz (inside 0.6-1 kHz), Q 1.5, +4 dB; roll-off
/// above 1.3 kHz; flat level -6 dB. Ends at 1.35 kHz to stay inside [`MAX_BODY_MODES`].
pub const DOUBLE_BASS_BODY: BodyModel = BodyModel {
    name: "Double bass",
    signature_modes: &DOUBLE_BASS_SIGNATURE_MODES,
    upper: UpperBank {
        start_hz: 235.0,
        end_hz: 1350.0,
        mean_spacing_hz: 10.0,
        quality: 30.0,
        hill_hz: 800.0,
        hill_quality: 1.5,
        hill_gain_db: 4.0,
        rolloff_hz: 1300.0,
        mean_gain_db: -6.0,
    },
    seed: 0x6261_7373_0000_0004,
};

/// The bodies from high to low.
pub const BODIES: [&BodyModel; 4] = [&VIOLIN_BODY, &VIOLA_BODY, &CELLO_BODY, &DOUBLE_BASS_BODY];

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a 64-bit counter through a bijective mixer. Small, stateless apart from
/// the counter, and good enough for drawing a few hundred mode parameters.
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal draw (Box & Muller 1958).
    fn gaussian(&mut self) -> f64 {
        let radius = (-2.0 * (1.0 - self.uniform()).ln()).sqrt();
        radius * (2.0 * PI * self.uniform()).cos()
    }

    /// A spacing with mean 1 from the Wigner surmise `p(s) = (pi s / 2) exp(-pi s^2 / 4)`,
    /// the GOE nearest-neighbour law, by inverting its CDF `1 - exp(-pi s^2 / 4)`. Its
    /// density vanishes at `s = 0`: modes repel and do not bunch as a Poisson draw would
    /// (notes 3.2 item 1).
    fn wigner_spacing(&mut self) -> f64 {
        (-4.0 / PI * (1.0 - self.uniform()).ln()).sqrt()
    }
}

impl UpperBank {
    /// The skeleton envelope of the modal amplitudes at `frequency_hz` (notes 3.2 item 3): a
    /// flat mean, plus a two-pole band-pass hill whose top is `hill_gain_db` above it,
    /// times a second-order low-pass at `rolloff_hz` (12 dB per octave above it).
    pub fn envelope(&self, frequency_hz: f64) -> f64 {
        let detune = frequency_hz / self.hill_hz - self.hill_hz / frequency_hz;
        let hill = 1.0 / (1.0 + (self.hill_quality * detune).powi(2)).sqrt();
        let hill_top = 10f64.powf(self.hill_gain_db / 20.0);
        let rolloff = 1.0 / (1.0 + (frequency_hz / self.rolloff_hz).powi(4)).sqrt();
        10f64.powf(self.mean_gain_db / 20.0) * (1.0 + (hill_top - 1.0) * hill) * rolloff
    }
}

/// Four modes side by side, so the per-sample loop runs on short fixed arrays the compiler
/// turns into vector code.
const LANES: usize = 4;

#[derive(Clone, Copy, Debug, Default)]
struct ModeLanes {
    /// `gain * b * output scale`: each mode's whole numerator factor.
    input_gain: [f64; LANES],
    a1: [f64; LANES],
    a2: [f64; LANES],
    /// `y[n-1]` and `y[n-2]`.
    output_1: [f64; LANES],
    output_2: [f64; LANES],
}

/// One sample of every mode in `groups`, driven by `drive`: the sum of each lane's modes.
/// Compiled for AVX-512 and AVX2 as well as the baseline and chosen once at run time by
/// the CPU (`multiversion`), as the string's stencil is: a group of four modes is then one
/// vector operation instead of SSE2's two. The expression and the order of the sums are the
/// same on every path (no fused multiply-add), so every path gives the same bits.
// Five arrays indexed by one lane number read more plainly than a five-way zip.
#[allow(clippy::needless_range_loop)]
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn tick_lanes(groups: &mut [ModeLanes], drive: f64) -> [f64; LANES] {
    let mut sum = [0.0; LANES];
    for group in groups {
        for lane in 0..LANES {
            let y = group.input_gain[lane] * drive - group.a1[lane] * group.output_1[lane] - group.a2[lane] * group.output_2[lane];
            group.output_2[lane] = group.output_1[lane];
            group.output_1[lane] = y;
            sum[lane] += y;
        }
    }
    sum
}

/// The body resonator: a fixed-capacity bank of [`MAX_BODY_MODES`] two-pole band-pass
/// modes, summed. Nothing allocates after [`BodyResonator::new`].
#[derive(Clone, Debug)]
pub struct BodyResonator {
    sample_rate_hz: f64,
    modes: [BodyMode; MAX_BODY_MODES],
    mode_count: usize,
    lanes: [ModeLanes; MAX_BODY_MODES / LANES],
    lane_groups_in_use: usize,
    /// `x[n-1]` and `x[n-2]`, shared by every mode's `1 - z^-2`.
    input_1: f64,
    input_2: f64,
    output_scale: f64,
}

/// The coefficients of one mode at `sample_rate_hz`: `(a1, a2, b, noise power of b H)`.
fn mode_coefficients(mode: &BodyMode, sample_rate_hz: f64) -> (f64, f64, f64, f64) {
    let peak_rad = 2.0 * PI * mode.frequency_hz / sample_rate_hz;
    let damping_rad = PI * mode.frequency_hz / (mode.quality * sample_rate_hz);
    let r = (-damping_rad).exp();
    let cos_theta = (damping_rad.cosh() * peak_rad.cos()).clamp(-1.0, 1.0);
    let theta = cos_theta.acos();
    let a1 = -2.0 * r * cos_theta;
    let a2 = r * r;
    // `|e^jw - p|^2 = 1 - 2 r cos(w - theta) + r^2`, written as `(1 - r)^2 + 4 r sin^2(..)`
    // and with `1 - r^2 = -expm1(-2 d)`, so that nothing cancels when a low mode at a high
    // rate puts `r` within 1e-5 of 1.
    let one_minus_r = -(-damping_rad).exp_m1();
    let distance_squared = |angle: f64| one_minus_r * one_minus_r + 4.0 * r * (0.5 * angle).sin().powi(2);
    let raw_peak = 2.0 * peak_rad.sin() / (distance_squared(peak_rad - theta) * distance_squared(peak_rad + theta)).sqrt();
    let b = 1.0 / raw_peak;
    (a1, a2, b, 2.0 * b * b / -(-2.0 * damping_rad).exp_m1())
}

/// Appends `mode` if it is usable at this rate and there is room.
fn push_mode(modes: &mut [BodyMode; MAX_BODY_MODES], count: &mut usize, mode: BodyMode, limit_hz: f64) {
    let usable = mode.frequency_hz > 0.0 && mode.frequency_hz < limit_hz && mode.quality > 0.5;
    if usable && *count < MAX_BODY_MODES {
        modes[*count] = mode;
        *count += 1;
    }
}

impl BodyResonator {
    /// A silent resonator with the violin body.
    pub fn new(sample_rate_hz: f64) -> Self {
        let mut body = Self {
            sample_rate_hz,
            modes: [BodyMode::SILENT; MAX_BODY_MODES],
            mode_count: 0,
            lanes: [ModeLanes::default(); MAX_BODY_MODES / LANES],
            lane_groups_in_use: 0,
            input_1: 0.0,
            input_2: 0.0,
            output_scale: 0.0,
        };
        body.set_model(&VIOLIN_BODY);
        body
    }

    /// Loads `model`: lays out its modes (signature first, then the upper bank in rising
    /// frequency), computes every coefficient and clears the state. Does not allocate.
    pub fn set_model(&mut self, model: &BodyModel) {
        let limit_hz = MAX_MODE_FRACTION_OF_RATE * self.sample_rate_hz;
        let mut count = 0;
        for mode in model.signature_modes {
            push_mode(&mut self.modes, &mut count, *mode, limit_hz);
        }
        let upper = &model.upper;
        if upper.mean_spacing_hz > 0.0 {
            let mut random = SplitMix64 { state: model.seed };
            let mut frequency_hz = upper.start_hz + upper.mean_spacing_hz * random.uniform();
            while frequency_hz <= upper.end_hz && count < MAX_BODY_MODES {
                let quality = upper.quality * (1.0 + 0.3 * (2.0 * random.uniform() - 1.0));
                let gain = upper.envelope(frequency_hz) * random.gaussian();
                push_mode(&mut self.modes, &mut count, BodyMode { frequency_hz, quality, gain }, limit_hz);
                frequency_hz += upper.mean_spacing_hz * random.wigner_spacing();
            }
        }
        self.mode_count = count;

        let mut noise_power = 0.0;
        let mut numerators = [0.0; MAX_BODY_MODES];
        self.lanes = [ModeLanes::default(); MAX_BODY_MODES / LANES];
        for (index, mode) in self.modes[..count].iter().enumerate() {
            let (a1, a2, b, power) = mode_coefficients(mode, self.sample_rate_hz);
            let lanes = &mut self.lanes[index / LANES];
            lanes.a1[index % LANES] = a1;
            lanes.a2[index % LANES] = a2;
            numerators[index] = mode.gain * b;
            noise_power += mode.gain * mode.gain * power;
        }
        let band_power = noise_power * self.sample_rate_hz / LOUDNESS_REFERENCE_RATE_HZ;
        self.output_scale = if band_power > 0.0 { 1.0 / band_power.sqrt() } else { 0.0 };
        for (index, numerator) in numerators[..count].iter().enumerate() {
            self.lanes[index / LANES].input_gain[index % LANES] = numerator * self.output_scale;
        }
        self.lane_groups_in_use = count.div_ceil(LANES);
        self.reset();
    }

    /// One sample: the bridge signal in, the body's output out.
    #[inline]
    pub fn tick(&mut self, input: f64) -> f64 {
        let drive = input - self.input_2;
        self.input_2 = self.input_1;
        self.input_1 = input;
        let sum = tick_lanes(&mut self.lanes[..self.lane_groups_in_use], drive);
        (sum[0] + sum[1]) + (sum[2] + sum[3])
    }

    /// Whether nothing rings: every mode and the input history at zero (below 1e-20).
    pub fn is_at_rest(&self) -> bool {
        self.input_1.abs() < 1e-20
            && self.input_2.abs() < 1e-20
            && self.lanes[..self.lane_groups_in_use].iter().all(|g| g.output_1.iter().chain(&g.output_2).all(|y| y.abs() < 1e-20))
    }

    /// Silences every mode; the coefficients stay.
    pub fn reset(&mut self) {
        self.input_1 = 0.0;
        self.input_2 = 0.0;
        for group in &mut self.lanes {
            group.output_1 = [0.0; LANES];
            group.output_2 = [0.0; LANES];
        }
    }

    /// The number of modes in use (those below 0.45 of the sample rate).
    pub fn mode_count(&self) -> usize {
        self.mode_count
    }

    /// The modes in use, after synthesis of the upper bank, with their model gains (before
    /// [`BodyResonator::output_scale`]).
    pub fn modes(&self) -> &[BodyMode] {
        &self.modes[..self.mode_count]
    }

    /// The one factor applied to every mode's gain to make the bank's mean-square gain over
    /// 0-24 kHz equal to 1 (cross terms ignored): the magnitude at a mode's frequency, if
    /// the neighbours were silent, is `output_scale * gain`.
    pub fn output_scale(&self) -> f64 {
        self.output_scale
    }

    pub fn sample_rate_hz(&self) -> f64 {
        self.sample_rate_hz
    }

    /// The bank's gain at `frequency_hz`: `|sum_i g_i (1 - z^-2) / (1 + a1_i z^-1 + a2_i z^-2)|`
    /// at `z = e^(j w)`, as [`BodyResonator::tick`] applies it. Costs one complex division
    /// per mode; meant for a note's start, not for every sample.
    pub fn gain_at(&self, frequency_hz: f64) -> f64 {
        let (re, im) = self.response_at(frequency_hz);
        re.hypot(im)
    }

    /// The bank's complex response at `frequency_hz` (real, imaginary).
    pub fn response_at(&self, frequency_hz: f64) -> (f64, f64) {
        let w = 2.0 * PI * frequency_hz / self.sample_rate_hz;
        let (c1, s1) = (w.cos(), -w.sin());
        let (c2, s2) = ((2.0 * w).cos(), -(2.0 * w).sin());
        // The shared numerator 1 - z^-2.
        let (nr, ni) = (1.0 - c2, -s2);
        // Lane by lane (the modes past `mode_count` in the last group have no gain), each
        // lane's sum kept apart so that the loop runs as wide as the lanes.
        let (mut re, mut im) = ([0.0; LANES], [0.0; LANES]);
        for group in &self.lanes[..self.lane_groups_in_use] {
            for lane in 0..LANES {
                let (a1, a2, g) = (group.a1[lane], group.a2[lane], group.input_gain[lane]);
                let (dr, di) = (1.0 + a1 * c1 + a2 * c2, a1 * s1 + a2 * s2);
                let scale = g / (dr * dr + di * di);
                re[lane] += scale * (nr * dr + ni * di);
                im[lane] += scale * (ni * dr - nr * di);
            }
        }
        (re.iter().sum(), im.iter().sum())
    }
}

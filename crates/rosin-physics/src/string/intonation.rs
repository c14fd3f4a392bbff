//! Intonation: the player's ear. A bowed string plays a little flat of its free
//! vibration (the bow's grip lengthens each period, more so at high force and on low
//! strings: a few cents here). Like a violinist who listens and adjusts the finger, this
//! tracks the period of Helmholtz motion at the bow and nudges the wave speed until the
//! bowed pitch sits on the note. It is Rosin's own, on willemsen2019's string
//! (`MODELS.md` section 1): no seed paper models the player's ear.
//!
//! The period is taken between slips, each timed at its middle: halfway between the moment
//! the string, running back against the bow, passes standstill (the relative velocity
//! reaches the bow's speed) and the moment it stops running back. Timed at its start, a
//! slip that narrows as the note builds up (the Helmholtz corner sharpening) reads each
//! period long, and the ear, which adds up what it hears, leaves the note sharp: a double
//! bass's F#1 by about 6 cents. Periods far from the target (transients, a lifted bow) are
//! ignored. A slip that comes well inside a period (a second slip per period, as the lowest
//! strings show near the bridge) does not restart the count: the period runs from one main
//! slip to the next.

/// The most the correction may raise or lower the pitch (a factor on the frequency, about
/// two semitones). A bowed string's flattening grows with force and can pass 50 cents on a
/// violin's E string at its Schelleng upper range. The voice puts the first
/// [`crate::string::note_string::WAVE_SPEED_HEADROOM`] of it on the wave speed (the grid is
/// designed for that much) and the rest on the stopping finger.
pub const MAX_CORRECTION: f64 = 1.12;
/// Periods this much shorter than the target are not Helmholtz periods and are ignored.
const ACCEPTED_SHORT_RATIO: f64 = 0.08;
/// The bow only ever lengthens the period, and on a stopped high note by more than a short
/// period's margin: longer periods are accepted up to this far from the target.
const ACCEPTED_LONG_RATIO: f64 = 0.15;
/// The most of one period's error the ear believes (a share of the period): a period
/// that straddles a change of the bow's slips (a string slipping twice a period whose main
/// slip moves to its other one) reads up to 13 % off while the note is not. The bow's own
/// flattening, which the ear takes out at a note's start, is up to about 4 %. Bowed
/// strings near their bounds answer a slower or quicker ear chaotically: believing 8 %, a
/// Matusiak Mono Legato D4 read +16 cents at 48 kHz; at 5 % the 48 kHz phrases hold, but a
/// violin's F#5 at velocity 127 and 44.1 kHz stays raucous for its first 0.3 s
/// (`docs/physics.md`, *At other rates*).
const MAX_PERIOD_ERROR: f64 = 0.05;
/// [`Intonation::slips`] counts a slip if it runs this much faster than the bow at its
/// peak (the string running back at half the bow's speed or more): a Helmholtz slip runs at
/// `vB / beta`, at least twice the bow's speed, while bow noise in the stick phase now and
/// then brings the string to a halt (the default set's F1 at full velocity, twice in 28
/// periods). Every slip still times the period.
const SLIP_PEAK_RATIO: f64 = 1.5;
/// Accepted periods to see before correcting, so the attack transient is not judged (fewer
/// on a long period: [`Intonation::settle_periods`]).
const SETTLE_PERIODS: u32 = 4;
/// The fewest accepted periods seen before correcting, however long the periods.
const MIN_SETTLE_PERIODS: u32 = 2;

/// Tracks the bowed period and holds the wave-speed correction.
#[derive(Clone, Debug, PartialEq)]
pub struct Intonation {
    target_period_samples: f64,
    /// `x = -sign(vB) v` at the previous sample: positive while slipping.
    previous_slip: f64,
    samples_since_onset: f64,
    has_onset: bool,
    /// Re-armed once the string sticks again, so ripples during a slip are not onsets.
    armed: bool,
    /// While a slip is under way: how long ago (samples) it crossed the threshold upwards
    /// first, and downwards last.
    rise_ago: Option<f64>,
    fall_ago: Option<f64>,
    /// The fastest the slip under way has been (as `x` above).
    slip_peak: f64,
    accepted: u32,
    onsets: u32,
    correction: f64,
    /// The recent peak of the wave [`Intonation::observe_wave`] follows.
    wave_peak: f64,
    /// How much of each period's error is corrected at full strength.
    gain: f64,
    /// With [`Intonation::with_time_constant`]: the ear's time constant (samples). A period
    /// this long or longer is corrected by more than `gain`, up to [`MAX_PERIOD_GAIN`].
    time_constant_samples: f64,
}

/// The most of one period's error a time-constant ear corrects: a low note's periods are
/// long and measured to a small fraction of themselves, so it can be corrected quickly.
pub const MAX_PERIOD_GAIN: f64 = 0.35;

/// The share of each period's error corrected at full strength: a steady note is in tune
/// within about 30 periods.
pub const DEFAULT_GAIN: f64 = 0.1;

impl Intonation {
    /// Tracks toward a period of `target_period_samples` (at the rate the string runs at).
    pub fn new(target_period_samples: f64) -> Self {
        Self { target_period_samples, previous_slip: 0.0, samples_since_onset: 0.0, has_onset: false, armed: false, rise_ago: None, fall_ago: None, slip_peak: 0.0, accepted: 0, onsets: 0, correction: 1.0, wave_peak: 0.0, gain: DEFAULT_GAIN, time_constant_samples: f64::INFINITY }
    }

    /// A gentler (or quicker) ear: `gain` of each period's error is corrected. A noisy
    /// source, whose periods jitter, wants a small one.
    pub fn with_gain(mut self, gain: f64) -> Self {
        self.gain = gain.clamp(0.0, 1.0);
        self
    }

    /// An ear that settles within about `time_constant_samples` whatever the note: each
    /// period corrects its share of that time (at least `gain`, at most
    /// [`MAX_PERIOD_GAIN`]), so a low note is not left flat for a second while a fixed
    /// share per period takes thirty of its long periods.
    pub fn with_time_constant(mut self, time_constant_samples: f64) -> Self {
        self.time_constant_samples = time_constant_samples.max(1.0);
        self
    }

    /// The share of one period's error corrected at full strength.
    fn period_gain(&self) -> f64 {
        (self.target_period_samples / self.time_constant_samples).min(MAX_PERIOD_GAIN).max(self.gain)
    }

    /// Accepted periods to see before correcting: [`SETTLE_PERIODS`], or as many as last
    /// half the time constant if fewer, and at least [`MIN_SETTLE_PERIODS`].
    fn settle_periods(&self) -> u32 {
        let within_half_the_time_constant = (0.5 * self.time_constant_samples / self.target_period_samples).ceil();
        (within_half_the_time_constant.min(SETTLE_PERIODS as f64) as u32).max(MIN_SETTLE_PERIODS)
    }

    /// Moves the target (a stopping finger shortens the period).
    pub fn set_target_period(&mut self, target_period_samples: f64) {
        self.target_period_samples = target_period_samples;
    }

    /// The factor to apply to the tuned wave speed.
    pub fn correction(&self) -> f64 {
        self.correction
    }

    /// The number of slips seen so far (Helmholtz motion has one per period): slips in which
    /// the string runs back at half the bow's speed or more ([`SLIP_PEAK_RATIO`]).
    pub fn slips(&self) -> u32 {
        self.onsets
    }

    /// The number of Helmholtz periods seen so far.
    pub fn periods(&self) -> u32 {
        self.accepted
    }

    /// Feeds one sample of relative velocity at the bow, with the bow's own velocity.
    /// `strength` in [0, 1] sets how much of each period's error is corrected (0: none).
    // Always inlined, as `FrictionContact::solve` is, for the same lone voice's loop.
    #[inline(always)]
    pub fn observe(&mut self, relative_velocity_mps: f64, bow_velocity_mps: f64, strength: f64) {
        self.samples_since_onset += 1.0;
        let speed = bow_velocity_mps.abs();
        if speed < 1e-4 {
            self.has_onset = false;
            self.rise_ago = None;
            self.fall_ago = None;
            self.previous_slip = 0.0;
            return;
        }
        let slip = -bow_velocity_mps.signum() * relative_velocity_mps;
        // A Helmholtz slip runs at vB / beta against the bow (the string at
        // vB (1 - beta) / beta), at least twice the bow's speed; the stick phase jitters
        // well below it (bow noise).
        let threshold = speed;
        if let Some(rise_ago) = self.rise_ago.as_mut() {
            *rise_ago += 1.0;
        }
        if let Some(fall_ago) = self.fall_ago.as_mut() {
            *fall_ago += 1.0;
        }
        if self.rise_ago.is_some() {
            self.slip_peak = self.slip_peak.max(slip);
            if self.previous_slip >= threshold && slip < threshold {
                self.fall_ago = Some((threshold - slip) / (self.previous_slip - slip));
            }
        }
        if slip < 0.3 * speed {
            // The slip is over: it is timed at its middle, between its first crossing of
            // the threshold upwards and its last downwards, which bow noise on its flanks
            // does not move.
            if let (Some(rise_ago), Some(fall_ago)) = (self.rise_ago, self.fall_ago) {
                let counted = self.slip_peak >= SLIP_PEAK_RATIO * threshold;
                self.onset(0.5 * (rise_ago + fall_ago), strength, MAX_PERIOD_ERROR, counted);
            }
            self.rise_ago = None;
            self.fall_ago = None;
            self.armed = true;
        }
        if self.armed && self.previous_slip < threshold && slip >= threshold {
            self.armed = false;
            // Sub-sample crossing time, counted back from this sample.
            self.rise_ago = Some((slip - threshold) / (slip - self.previous_slip));
            self.slip_peak = slip;
        }
        self.previous_slip = slip;
    }

    /// Feeds one sample of a wave that crosses zero upwards once a period (a nearly
    /// sinusoidal output, such as the friction drum's, whose bow slips more than once a
    /// period). Crossings count once the wave has dipped below a third of its recent peak.
    #[inline]
    pub fn observe_wave(&mut self, wave: f64, strength: f64) {
        self.samples_since_onset += 1.0;
        self.wave_peak = (self.wave_peak * (1.0 - 0.25 / self.target_period_samples.max(1.0))).max(wave.abs());
        if wave < -0.3 * self.wave_peak {
            self.armed = true;
        }
        if self.armed && self.previous_slip < 0.0 && wave >= 0.0 {
            self.armed = false;
            let fraction = wave / (wave - self.previous_slip);
            self.onset(fraction, strength, f64::INFINITY, true);
        }
        self.previous_slip = wave;
    }

    /// A period's start, `fraction` of a sample before this one: the period since the last
    /// one is judged, and a Helmholtz period corrects the pitch by at most `max_error` of
    /// its error (slips are timed with [`MAX_PERIOD_ERROR`]; a wave's crossings, which do
    /// not move between slips, with no bound). `counted`: it counts in [`Intonation::slips`].
    fn onset(&mut self, fraction: f64, strength: f64, max_error: f64, counted: bool) {
        let period = self.samples_since_onset - fraction;
        self.onsets += u32::from(counted);
        if self.has_onset && period < (1.0 - ACCEPTED_SHORT_RATIO) * self.target_period_samples {
            // A second slip inside the period: the period goes on.
            return;
        }
        if self.has_onset && period < (1.0 + ACCEPTED_LONG_RATIO) * self.target_period_samples {
            self.accepted += 1;
            if self.accepted > self.settle_periods() && strength > 0.0 {
                // A long period means flat: raise the wave speed in proportion.
                let error = (period / self.target_period_samples - 1.0).clamp(-max_error, max_error);
                let gain = self.period_gain() * strength.clamp(0.0, 1.0);
                self.correction = (self.correction * (1.0 + gain * error)).clamp(1.0 / MAX_CORRECTION, MAX_CORRECTION);
            }
        }
        self.has_onset = true;
        self.samples_since_onset = fraction;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sawtooth-like relative velocity: stick (0) then a slip of 10 samples, with period
    /// `period` samples.
    fn feed(tracker: &mut Intonation, period: f64, samples: usize) {
        for n in 0..samples {
            let phase = (n as f64 / period).fract() * period;
            let v = if phase < 10.0 { -0.5 } else { 0.0 };
            tracker.observe(v, 0.1, 1.0);
        }
    }

    #[test]
    fn raises_the_wave_speed_when_flat_and_stays_bounded() {
        let mut tracker = Intonation::new(100.0);
        feed(&mut tracker, 100.5, 20_000);
        assert!(tracker.correction() > 1.0 && tracker.correction() <= MAX_CORRECTION);
        assert!(tracker.periods() > 150);
        let mut sharp = Intonation::new(100.0);
        feed(&mut sharp, 99.5, 20_000);
        assert!(sharp.correction() < 1.0);
    }

    #[test]
    fn a_second_slip_inside_the_period_does_not_split_it() {
        // Two slips per period of 100 samples, 30 samples apart, 1 % long.
        let mut tracker = Intonation::new(100.0);
        for n in 0..20_000 {
            let phase = (n as f64 / 101.0).fract() * 101.0;
            let v = if phase < 8.0 || (30.0..36.0).contains(&phase) { -0.5 } else { 0.0 };
            tracker.observe(v, 0.1, 1.0);
        }
        assert!(tracker.periods() > 150, "{} periods", tracker.periods());
        assert!(tracker.correction() > 1.005, "{}", tracker.correction());
    }

    #[test]
    fn a_wave_with_a_strong_second_harmonic_is_timed_once_a_period() {
        let mut tracker = Intonation::new(100.0);
        for n in 0..20_000 {
            let phase = std::f64::consts::TAU * n as f64 / 100.8;
            tracker.observe_wave(phase.sin() + 0.6 * (2.0 * phase + 0.5).sin(), 1.0);
        }
        assert!(tracker.periods() > 150, "{} periods", tracker.periods());
        assert!(tracker.correction() > 1.004, "{}", tracker.correction());
    }

    #[test]
    fn a_period_that_straddles_a_change_of_slips_moves_the_pitch_little() {
        // In tune for 50 periods, then one period read 12 % long (a string that slips twice
        // a period, whose main slip moved to its other one), then in tune again.
        let mut tracker = Intonation::new(100.0);
        feed(&mut tracker, 100.0, 5_000);
        let before = tracker.correction();
        feed(&mut tracker, 112.0, 112);
        feed(&mut tracker, 100.0, 100);
        let moved = tracker.correction() / before - 1.0;
        // The default share (a tenth) of at most 5 % (9 cents), where the whole 12 % moved
        // it by 1.2 % (21 cents).
        assert!((moved - DEFAULT_GAIN * MAX_PERIOD_ERROR).abs() < 1e-9, "{moved}");
    }

    #[test]
    fn a_time_constant_ear_settles_a_long_period_as_fast_as_a_short_one() {
        // A low note (1,000 samples a period) 2 % flat: the default share per period leaves
        // it flat for about 30 periods (0.6 s at 48 kHz); an ear with a time constant of
        // 3,000 samples corrects a third of its error each period.
        // A string whose period follows the correction, one period at a time.
        let settled_after = |tracker: &mut Intonation| {
            let mut periods = 0;
            loop {
                let period = 1020.0 / tracker.correction();
                if periods >= 200 || (period / 1000.0 - 1.0).abs() < 0.001 {
                    return periods;
                }
                feed(tracker, period, period.round() as usize);
                periods += 1;
            }
        };
        let fixed = settled_after(&mut Intonation::new(1000.0));
        let timed = settled_after(&mut Intonation::new(1000.0).with_time_constant(3000.0));
        assert!(timed <= 25 && fixed >= 2 * timed, "{timed} periods with a time constant, {fixed} without");
        // A short period keeps the default share, and no period corrects more than the cap.
        assert_eq!(Intonation::new(100.0).with_time_constant(3000.0).period_gain(), DEFAULT_GAIN);
        assert_eq!(Intonation::new(10_000.0).with_time_constant(3000.0).period_gain(), MAX_PERIOD_GAIN);
    }

    #[test]
    fn a_slip_that_narrows_as_the_note_builds_up_is_timed_at_its_middle() {
        // Exactly 100 samples a period; each slip a triangle around its period's middle,
        // narrowing from 40 samples wide to 10 over 40 periods (a Helmholtz corner
        // sharpening as the tone builds), with bow noise on its flanks. Timed at its front,
        // each period read 0.3 % long while it narrowed, and the ear, which adds up what it
        // hears, left the note 19 cents sharp.
        let mut tracker = Intonation::new(100.0);
        let mut noise = 0.37_f64;
        for n in 0..8_000 {
            let period = n / 100;
            let half_width = (20.0 - 0.375 * period as f64).max(5.0);
            let from_middle = ((n % 100) as f64 - 50.0).abs();
            noise = (noise * 3.7 * (1.0 - noise)).clamp(0.01, 0.99);
            let slip = (1.0 - from_middle / half_width).max(0.0) * 0.5 + 0.01 * (noise - 0.5);
            tracker.observe(-slip, 0.1, 1.0);
        }
        assert!(tracker.periods() > 70, "{} periods", tracker.periods());
        let cents = 1200.0 * tracker.correction().log2();
        assert!(cents.abs() < 0.5, "{cents:+.2} cents");
    }

    #[test]
    fn ignores_periods_that_are_not_helmholtz() {
        let mut tracker = Intonation::new(100.0);
        feed(&mut tracker, 70.0, 10_000);
        assert_eq!(tracker.periods(), 0);
        assert_eq!(tracker.correction(), 1.0);
        // A string in its second mode's motion (two slips a period) is still on its period.
        // (Counted in whole samples: `feed`'s rounded phase makes a slip a sample longer now
        // and then, which moves its middle.)
        let mut octave = Intonation::new(100.0);
        for n in 0..10_000 {
            octave.observe(if n % 50 < 10 { -0.5 } else { 0.0 }, 0.1, 1.0);
        }
        assert_eq!(octave.correction(), 1.0);
    }
}

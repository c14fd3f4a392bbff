//! Evening out the body: a string note that the body's resonances would make stand out (or
//! vanish) is played lighter (or heavier), as a player bows a wolf note lighter. Rosin's
//! own; it changes how the performance drives the physics, not the physics.

use rosin_physics::body::BodyResonator;

/// How much a string note is played lighter or heavier so that the body's resonances do
/// not make it stand out or vanish: the inverse of the dry-and-body mix's RMS gain on the
/// note's spectrum (its first [`EVENING_HARMONICS`] harmonics below 0.45 of the sample rate:
/// as they were heard, once a note at that key has been, `dsp::harmonic_probe`; before that
/// a bowed string's `1/n`), at most [`MAX_EVENING_CUT_DB`] lighter and [`MAX_EVENING_DB`]
/// heavier. A player does the same,
/// bowing a wolf note lighter; without a body (mix 0) it is 1. The engine keeps the body's
/// response at the harmonics per voice ([`BodyAtHarmonics`]) and per note played
/// ([`EveningCache`]), so a mix automated every block costs a few `hypot`s a voice.
pub fn evening_gain(body: &BodyResonator, body_mix: f64, key: f64) -> f64 {
    let mut at_harmonics = BodyAtHarmonics::default();
    at_harmonics.compute(body, 0, key);
    at_harmonics.evening_gain(body_mix)
}

/// The step of the keys a voice's body response is worked out for (semitones).
pub const EVENING_KEY_STEP_ST: f64 = 1.0;

/// The key a voice at `key` takes its body response from: the nearest semitone. A note bent,
/// gliding or stopped by a moving finger moves its key every block; worked out at every key
/// it passes, sixteen voices under a pitch-bend lane cost a few hundred microseconds a block
/// (found by the fuzz campaign, renders 2565, 3786 and 3873). At semitones, the default
/// body's responses are all designed ahead, and another body's are worked out once a
/// semitone. The gain a response sets glides, so a step of a semitone is not heard.
pub fn evening_key(key: f64) -> f64 {
    (key / EVENING_KEY_STEP_ST).round() * EVENING_KEY_STEP_ST
}

/// The harmonics of a note whose body response sets its evening gain.
pub const EVENING_HARMONICS: usize = 16;
/// How many of a note at `f0_hz`'s harmonics the evening weighs: the first
/// [`EVENING_HARMONICS`] below 0.45 of the sample rate, and at least the fundamental.
pub fn harmonic_count(f0_hz: f64, sample_rate_hz: f64) -> usize {
    (1..=EVENING_HARMONICS).take_while(|&n| n == 1 || n as f64 * f0_hz <= 0.45 * sample_rate_hz).count()
}

/// The most a note is played heavier, to lift it out of a dip of the body (dB): more would
/// raise the peaks of the notes there past the presets' headroom.
pub const MAX_EVENING_DB: f64 = 9.0;
/// The most a note is played lighter, to keep it from standing out on a mode of the body
/// (dB): the cello body's modes stand up to 17 dB over a high note's fundamental (the Ghost
/// Cello's D#6 and F#6 at Body Mix 100 %), and playing lighter costs no headroom.
pub const MAX_EVENING_CUT_DB: f64 = 20.0;

/// The body's complex response at a note's harmonics, for [`evening_gain`].
#[derive(Clone, Copy, Debug)]
pub struct BodyAtHarmonics {
    key: f64,
    body: usize,
    count: usize,
    response: [(f64, f64); EVENING_HARMONICS],
    /// The last `(body_mix, evening gain)` asked of [`BodyAtHarmonics::evening_gain_for`]:
    /// the engine asks every voice's at every change of controls.
    last_gain: (f64, f64),
    /// The power of each harmonic as a note at this key was heard (`HarmonicProbe`), when it
    /// has been: the weights of the body's gain at each, in place of a `1/n` spectrum's.
    heard: Option<[f64; EVENING_HARMONICS]>,
}

impl Default for BodyAtHarmonics {
    fn default() -> Self {
        Self { key: f64::NAN, body: usize::MAX, count: 0, response: [(0.0, 0.0); EVENING_HARMONICS], last_gain: (f64::NAN, 1.0), heard: None }
    }
}

impl BodyAtHarmonics {
    /// Works the response out for `key` on `body`, numbered `body_index`. Never allocates.
    fn compute(&mut self, body: &BodyResonator, body_index: usize, key: f64) {
        let f0 = rosin_physics::string::tuning::midi_key_to_hz(key);
        self.count = harmonic_count(f0, body.sample_rate_hz());
        for n in 1..=self.count {
            self.response[n - 1] = body.response_at(f0 * n as f64);
        }
        self.key = key;
        self.body = body_index;
        self.last_gain = (f64::NAN, 1.0);
        self.heard = None;
    }

    /// The note at this key has been heard with these harmonic powers: the evening weighs
    /// the body's gain by them from now on (until the key or the body changes).
    pub fn hear(&mut self, powers: &[f64; EVENING_HARMONICS]) {
        if powers[..self.count].iter().all(|p| p.is_finite()) && powers[..self.count].iter().sum::<f64>() > 0.0 {
            self.heard = Some(*powers);
            self.last_gain = (f64::NAN, 1.0);
        }
    }

    /// The key whose response this is (NaN before any).
    pub fn key(&self) -> f64 {
        self.key
    }

    /// The evening gain at a dry-and-body mix of `body_mix`.
    /// [`BodyAtHarmonics::evening_gain`], kept for the next call with the same `body_mix`.
    pub fn evening_gain_for(&mut self, body_mix: f64) -> f64 {
        if self.last_gain.0 != body_mix {
            self.last_gain = (body_mix, self.evening_gain(body_mix));
        }
        self.last_gain.1
    }

    pub fn evening_gain(&self, body_mix: f64) -> f64 {
        if body_mix <= 0.0 || self.count == 0 {
            return 1.0;
        }
        let (mut power, mut weights) = (0.0, 0.0);
        for (i, &(re, im)) in self.response[..self.count].iter().enumerate() {
            let weight = match &self.heard {
                Some(heard) => heard[i],
                None => 1.0 / ((i + 1) * (i + 1)) as f64,
            };
            power += weight * ((1.0 - body_mix) + body_mix * re).hypot(body_mix * im).powi(2);
            weights += weight;
        }
        let (cut, lift) = (10f64.powf(-MAX_EVENING_CUT_DB / 20.0), 10f64.powf(MAX_EVENING_DB / 20.0));
        (power / weights).sqrt().max(1e-6).recip().clamp(cut, lift)
    }
}

/// The body's response at the harmonics of the notes played so far, kept for every voice:
/// working it out costs 16 x the body's ~120 modes of complex arithmetic (a few
/// microseconds), which sixteen note-ons on one sample would pay sixteen times. Fixed
/// capacity, filled in turn; never allocates after [`EveningCache::with_capacity`].
pub struct EveningCache {
    entries: Box<[BodyAtHarmonics]>,
    next: usize,
    computed: u64,
}

impl EveningCache {
    pub fn with_capacity(capacity: usize) -> Self {
        Self { entries: vec![BodyAtHarmonics::default(); capacity.max(1)].into_boxed_slice(), next: 0, computed: 0 }
    }

    /// Brings a voice's `kept` response to `key` on the body numbered `body_index`: as it
    /// is, from the cache, or worked out and cached. Whether the body changed under a note
    /// that was already kept (its gain should then follow the bodies' crossfade).
    pub fn refresh(&mut self, body: &BodyResonator, body_index: usize, key: f64, kept: &mut BodyAtHarmonics) -> bool {
        self.refresh_within(body, body_index, key, kept, true).unwrap_or(false)
    }

    /// [`EveningCache::refresh`], which works a response out only if `may_compute`: `None`
    /// when it needed to and may not (`kept` is left as it was). A body change under sixteen
    /// voices works out sixteen responses, a few microseconds each; the engine spreads them
    /// over as many samples.
    pub fn refresh_within(&mut self, body: &BodyResonator, body_index: usize, key: f64, kept: &mut BodyAtHarmonics, may_compute: bool) -> Option<bool> {
        if kept.key == key && kept.body == body_index {
            return Some(false);
        }
        let body_changed = kept.count > 0 && kept.body != body_index;
        if let Some(found) = self.entries.iter().find(|e| e.key == key && e.body == body_index) {
            *kept = *found;
        } else if !may_compute {
            return None;
        } else {
            kept.compute(body, body_index, key);
            self.computed += 1;
            self.entries[self.next] = *kept;
            self.next = (self.next + 1) % self.entries.len();
        }
        Some(body_changed)
    }

    /// Keeps what a voice heard of its note (`BodyAtHarmonics::hear`) with its key's response,
    /// so that the next note at that key starts at the level it was evened to.
    pub fn remember_heard(&mut self, kept: &BodyAtHarmonics) {
        if let Some(entry) = self.entries.iter_mut().find(|e| e.key == kept.key && e.body == kept.body) {
            entry.heard = kept.heard;
            entry.last_gain = (f64::NAN, 1.0);
        }
    }

    /// Forgets every note heard (the engine was reset: the same input must render the same
    /// output again); the responses stay.
    pub fn forget_heard(&mut self) {
        for entry in self.entries.iter_mut() {
            entry.heard = None;
            entry.last_gain = (f64::NAN, 1.0);
        }
    }

    /// How many responses it has worked out (requests it could not answer from what it kept).
    pub fn computed(&self) -> u64 {
        self.computed
    }

    /// Forgets every response (a body's model changed in place, or the engine was reset).
    pub fn clear(&mut self) {
        self.entries.fill(BodyAtHarmonics::default());
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosin_physics::body::BODIES;

    /// A bowed string's bridge force (harmonics as `1/n`, as many as the evening weighs)
    /// through the dry and body mix as the engine plays it: its RMS against the dry signal's.
    fn mixed_rms_gain(body: &mut BodyResonator, mix: f64, f0: f64, rate: f64) -> f64 {
        body.reset();
        let partials = ((0.45 * rate / f0) as usize).clamp(1, EVENING_HARMONICS);
        let (mut dry, mut wet) = (0.0, 0.0);
        let samples = (2.0 * rate) as usize;
        for n in 0..samples {
            let t = n as f64 / rate;
            let x: f64 = (1..=partials).map(|k| (std::f64::consts::TAU * k as f64 * f0 * t).sin() / k as f64).sum();
            let y = x + mix * (body.tick(x) - x);
            // The second second only: the body's modes have built up.
            if n >= samples / 2 {
                dry += x * x;
                wet += y * y;
            }
        }
        (wet / dry).sqrt()
    }

    #[test]
    fn an_evened_note_comes_through_the_body_at_its_dry_level() {
        let rate = 48_000.0;
        let mut body = BodyResonator::new(rate);
        body.set_model(BODIES[2]);
        let mut worst_db = 0.0f64;
        for key in [36.0, 41.0, 43.0, 48.0, 55.0, 57.0, 59.0, 62.0, 68.0, 75.0] {
            for mix in [0.35, 0.7, 1.0] {
                let gain = evening_gain(&body, mix, key);
                let through = mixed_rms_gain(&mut body, mix, rosin_physics::string::tuning::midi_key_to_hz(key), rate);
                let db = 20.0 * (gain * through).log10();
                // Within the clamp, the evened note's level is its dry level.
                if (-MAX_EVENING_CUT_DB + 0.1..MAX_EVENING_DB - 0.1).contains(&(20.0 * gain.log10())) {
                    worst_db = worst_db.max(db.abs());
                }
            }
        }
        println!("the furthest an evened note comes through from its dry level: {worst_db:.3} dB");
        assert!(worst_db < 0.3, "an evened note is {worst_db:.2} dB off its dry level");
        // No body, no evening.
        assert_eq!(evening_gain(&body, 0.0, 57.0), 1.0);
    }

    /// A note whose harmonics were heard is evened by them: a spectrum far from `1/n` (its
    /// second harmonic over its fundamental, as a string slipping twice a period sounds)
    /// comes through the body at its dry level, where the `1/n` evening misses it.
    #[test]
    fn a_heard_note_is_evened_by_its_own_spectrum() {
        let rate = 48_000.0;
        let mut body = BodyResonator::new(rate);
        body.set_model(BODIES[1]);
        let amplitudes = [0.25, 1.0, 0.1, 0.3, 0.02, 0.1, 0.05, 0.02];
        let (mut worst_heard, mut worst_assumed) = (0.0f64, 0.0f64);
        for key in [48.0, 53.0, 58.0, 60.0, 65.0, 71.0] {
            let f0 = rosin_physics::string::tuning::midi_key_to_hz(key);
            let mix = 0.7;
            body.reset();
            let (mut dry, mut wet) = (0.0, 0.0);
            let samples = (2.0 * rate) as usize;
            for n in 0..samples {
                let t = n as f64 / rate;
                let x: f64 = amplitudes.iter().enumerate().map(|(k, a)| a * (std::f64::consts::TAU * (k + 1) as f64 * f0 * t).sin()).sum();
                let y = x + mix * (body.tick(x) - x);
                if n >= samples / 2 {
                    dry += x * x;
                    wet += y * y;
                }
            }
            let through = (wet / dry).sqrt();
            let mut at = BodyAtHarmonics::default();
            at.compute(&body, 1, key);
            let assumed = at.evening_gain(mix);
            let mut powers = [0.0; EVENING_HARMONICS];
            powers[..amplitudes.len()].iter_mut().zip(amplitudes).for_each(|(p, a)| *p = a * a);
            at.hear(&powers);
            let heard = at.evening_gain(mix);
            worst_heard = worst_heard.max((20.0 * (heard * through).log10()).abs());
            worst_assumed = worst_assumed.max((20.0 * (assumed * through).log10()).abs());
        }
        println!("off the dry level: {worst_heard:.2} dB evened by what was heard, {worst_assumed:.2} dB by 1/n");
        assert!(worst_heard < 0.3, "a heard note comes through {worst_heard:.2} dB off its dry level");
        assert!(worst_assumed > 1.0, "the test's spectrum is too near 1/n to tell ({worst_assumed:.2} dB)");
    }
}

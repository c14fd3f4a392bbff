//! Evening out the body: a string note that the body's resonances would make stand out (or
//! vanish) is played lighter (or heavier), as a player bows a wolf note lighter. Rosin's
//! own; it changes how the performance drives the physics, not the physics.

use rosin_physics::body::BodyResonator;

/// How much a string note is played lighter or heavier so that the body's resonances do
/// not make it stand out or vanish: the inverse of the dry-and-body mix's RMS gain on a
/// bowed string's spectrum (harmonics falling as `1/n`, the first [`EVENING_HARMONICS`]
/// below 0.45 of the sample rate), kept within [`MAX_EVENING_DB`]. A player does the same,
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
/// The most a note is evened out, either way (dB).
pub const MAX_EVENING_DB: f64 = 9.0;

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
}

impl Default for BodyAtHarmonics {
    fn default() -> Self {
        Self { key: f64::NAN, body: usize::MAX, count: 0, response: [(0.0, 0.0); EVENING_HARMONICS], last_gain: (f64::NAN, 1.0) }
    }
}

impl BodyAtHarmonics {
    /// Works the response out for `key` on `body`, numbered `body_index`. Never allocates.
    fn compute(&mut self, body: &BodyResonator, body_index: usize, key: f64) {
        let f0 = rosin_physics::string::tuning::midi_key_to_hz(key);
        let highest = 0.45 * body.sample_rate_hz();
        self.count = 0;
        for n in 1..=EVENING_HARMONICS {
            if n > 1 && f0 * n as f64 > highest {
                break;
            }
            self.response[n - 1] = body.response_at(f0 * n as f64);
            self.count = n;
        }
        self.key = key;
        self.body = body_index;
        self.last_gain = (f64::NAN, 1.0);
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
            let weight = 1.0 / ((i + 1) * (i + 1)) as f64;
            power += weight * ((1.0 - body_mix) + body_mix * re).hypot(body_mix * im).powi(2);
            weights += weight;
        }
        let limit = 10f64.powf(MAX_EVENING_DB / 20.0);
        (power / weights).sqrt().max(1e-6).recip().clamp(1.0 / limit, limit)
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
                if (20.0 * gain.log10()).abs() < MAX_EVENING_DB - 0.1 {
                    worst_db = worst_db.max(db.abs());
                }
            }
        }
        println!("the furthest an evened note comes through from its dry level: {worst_db:.3} dB");
        assert!(worst_db < 0.3, "an evened note is {worst_db:.2} dB off its dry level");
        // No body, no evening.
        assert_eq!(evening_gain(&body, 0.0, 57.0), 1.0);
    }
}

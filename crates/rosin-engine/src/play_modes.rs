//! The legato playing modes: an instrument's four strings, and a mono voice with
//! portamento. Both keep a stack of held notes (the last one sounds; releasing it returns to
//! the one before) and change notes without a new attack while one is held.
//!
//! **Four strings**: voices `0..4` of the string pool are the open strings of the string set,
//! always sounding so that they ring in sympathy. A note is fingered on the string a player
//! would choose (the highest open string at or below it); while a note is held, the next one
//! slides on the same string if it lies within a hand's reach above that string
//! ([`REACH_SEMITONES`]), else the bow crosses to the other string mid-stroke. The bowed
//! string drives the unbowed ones through the bridge (one way, so the coupling cannot feed
//! back on itself and the strings stay stable).
//!
//! The modes drive the string voices of the engine that owns them through [`StringPool`],
//! and never reach back into the engine itself.

use crate::controls::{Controls, PlayMode};
use crate::expression::NoteExpression;
use crate::voice::{NoteId, NotePattern, StringVoice};
use rosin_physics::string::note_string::NoteStringDesign;
use rosin_physics::string::string_set::string_set;
use rosin_physics::string::tuning::midi_key_to_hz;

/// How many notes the legato modes remember.
pub const NOTE_STACK: usize = 16;
/// The strings of the four-string mode are voices `0..STRINGS`.
pub const STRINGS: usize = 4;
/// The channel that marks a four-string voice that plays no host note.
pub const OPEN_STRING_CHANNEL: u8 = 24;
/// A held note moves to a note on the same string by sliding if the new note is no more than
/// this far above the string (a fifth: first to fourth position).
pub const REACH_SEMITONES: f64 = 7.0;
/// The longest a finger slides from the nut when a held open string moves to a note on it,
/// in the open string's periods (a player puts the finger down there). Over the whole
/// *Glide Time* (60 ms in the factory presets) the viola's G string was rough for the
/// slide's length: its A3 after the open G3 at velocity 40 and 96 kHz burst 7.0 dB. Put
/// down at once, as a hammer-on, every velocity's C3 to D3 on the viola clicked (8.4 to
/// 10 dB at 96 kHz). A fixed 20 or 35 ms was too quick for the double bass's E string
/// (its F#1 after the open E1 burst 7 to 9 dB), whose period is 24 ms.
pub const FROM_OPEN_GLIDE_PERIODS: f64 = 4.0;
/// But no quicker than this: four periods (13.6 ms on the violin's D string), or 20 ms,
/// put Glass Strings' E4 after its open D4 at velocity 40 and 44.1 kHz 9.1 dB over its
/// neighbours (that preset glides in 30 ms).
pub const FROM_OPEN_GLIDE_MIN_S: f64 = 0.03;
/// The most a bowed string's bridge force reaches the others, at 100 % sympathy: the
/// fraction of the force applied next to their bridges.
pub const SYMPATHETIC_COUPLING: f64 = 0.005;

/// The held notes, oldest first.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoteStack {
    notes: [Option<(NoteId, f64)>; NOTE_STACK],
    len: usize,
}

impl NoteStack {
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Adds a note on top; a note already held moves to the top; a full stack drops its oldest.
    pub fn push(&mut self, note: NoteId, velocity: f64) {
        self.remove_where(|n| n.channel == note.channel && n.note == note.note);
        if self.len == NOTE_STACK {
            self.notes.copy_within(1.., 0);
            self.len -= 1;
        }
        self.notes[self.len] = Some((note, velocity));
        self.len += 1;
    }

    /// Removes the notes that `pattern` matches and calls `removed` for each.
    pub fn remove_matching(&mut self, pattern: &NotePattern, mut removed: impl FnMut(NoteId)) {
        self.remove_where(|n| {
            let hit = pattern.matches(n);
            if hit {
                removed(*n);
            }
            hit
        });
    }

    fn remove_where(&mut self, mut remove: impl FnMut(&NoteId) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            if let Some((note, velocity)) = self.notes[i] {
                if !remove(&note) {
                    self.notes[kept] = Some((note, velocity));
                    kept += 1;
                }
            }
        }
        for slot in &mut self.notes[kept..self.len] {
            *slot = None;
        }
        self.len = kept;
    }

    pub fn top(&self) -> Option<(NoteId, f64)> {
        self.len.checked_sub(1).and_then(|i| self.notes[i])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What the legato modes remember between events.
#[derive(Clone, Copy, Debug)]
pub struct LegatoState {
    pub stack: NoteStack,
    /// The voice that sounds the top of the stack while a note is held, and that keeps its
    /// place after the last note ends: a note that comes while its bow still touches the
    /// string continues the stroke.
    pub sounding: Option<usize>,
    /// The mode, instrument and string set the strings were set up for.
    pub configured: Option<(PlayMode, u8)>,
}

impl Default for LegatoState {
    /// As a new engine starts: poly, which needs no set-up.
    fn default() -> Self {
        Self { stack: NoteStack::default(), sounding: None, configured: Some((PlayMode::Poly, 0)) }
    }
}

/// What the legato modes need of the engine that owns the string voices.
pub trait StringPool {
    /// The string voices; in Four Strings, voices `0..STRINGS` are the open strings.
    fn strings(&mut self) -> &mut [StringVoice];
    /// The controls in force (the host's, with the pad's gestures applied).
    fn controls(&self) -> Controls;
    /// Starts a voice for `note` from the pool, with a new attack (stealing if need be).
    fn start_string(&mut self, note: NoteId, velocity: f64, controls: &Controls);
    /// Puts voice `index` up as an open string tuned to `open_key` with `design`, at rest.
    fn start_open_string(&mut self, index: usize, note: NoteId, open_key: f64, design: NoteStringDesign, controls: &Controls);
    /// Frees voice `index` at once, with a declick.
    fn steal(&mut self, index: usize);
    /// Tells the host that `note` ended, although its voice may play on.
    fn report_ended(&mut self, note: NoteId);
    /// A voice changed its note: its controls must be pushed again before the next sample.
    fn note_changed(&mut self);
}

impl LegatoState {
    /// Re-sets the strings when the mode or the string set changes: every string voice
    /// stops (with a declick), and the four-string mode puts up its open strings.
    pub fn configure(&mut self, mode: PlayMode, string_set_control: f64, pool: &mut impl StringPool) {
        let set = string_set_control.round() as u8;
        let wanted = Some((mode, if mode == PlayMode::FourStrings { set } else { 0 }));
        if self.configured == wanted {
            return;
        }
        self.configured = wanted;
        for i in 0..pool.strings().len() {
            if !pool.strings()[i].is_free() {
                pool.steal(i);
            }
        }
        self.stack.clear();
        self.sounding = None;
        if mode == PlayMode::FourStrings {
            put_up_open_strings(string_set_control, pool);
        }
    }

    pub fn note_on(&mut self, mode: PlayMode, note: NoteId, velocity: f64, pool: &mut impl StringPool) {
        self.stack.push(note, velocity);
        self.sound_top(mode, Some(velocity), pool);
    }

    /// Sounds the top of the stack: legato from the sounding voice if one is bowing, else
    /// with a new attack (`fresh_velocity` is the new note's, `None` when returning to a
    /// note still held).
    fn sound_top(&mut self, mode: PlayMode, fresh_velocity: Option<f64>, pool: &mut impl StringPool) {
        let Some((note, stacked_velocity)) = self.stack.top() else { return };
        let velocity = fresh_velocity.unwrap_or(stacked_velocity);
        let controls = pool.controls();
        let glide_s = controls.glide_time_ms * 1e-3;
        let key = note.note as f64;
        // The bow is on a string if a note is held, or if the last one ended so recently that
        // the bow is still lifting: then this note continues the stroke.
        let bowing = self.sounding.filter(|&i| pool.strings()[i].is_held() || pool.strings()[i].is_bow_on_string());
        match mode {
            PlayMode::MonoLegato => match bowing {
                Some(i) => {
                    if !pool.strings()[i].is_held() {
                        // The bow was lifting from a note that has ended: the host hears of
                        // its end now, as the stroke goes on with this one.
                        let ended = pool.strings()[i].note;
                        pool.report_ended(ended);
                        pool.strings()[i].bow(velocity, true, &controls);
                    }
                    let voice = &mut pool.strings()[i];
                    voice.finger_note(key - voice.open_key(), glide_s);
                    voice.note = note;
                    voice.expression = NoteExpression::default();
                    self.sounding = Some(i);
                }
                None => {
                    pool.start_string(note, velocity, &controls);
                    self.sounding = pool.strings().iter().position(|v| v.is_held() && v.note == note);
                }
            },
            PlayMode::FourStrings => {
                let set = string_set(controls.string_set);
                let reach = |i: usize| {
                    let above = key - set.strings[i].open_key as f64;
                    (0.0..=REACH_SEMITONES).contains(&above)
                };
                let string = match bowing {
                    Some(i) if reach(i) => i,
                    _ => set.string_for(key),
                };
                let offset = key - set.strings[string].open_key as f64;
                let strings = pool.strings();
                match bowing {
                    Some(i) if i == string => {
                        if !strings[i].is_held() {
                            strings[i].bow(velocity, true, &controls);
                        }
                        // Off the open string, the finger is put down quickly; a low string's
                        // slow period wants a slower slide.
                        let from_open = strings[i].fingered_semitones() == 0.0;
                        let open_period_s = 1.0 / midi_key_to_hz(strings[i].open_key());
                        let from_open_s = (FROM_OPEN_GLIDE_PERIODS * open_period_s).max(FROM_OPEN_GLIDE_MIN_S);
                        strings[i].finger_note(offset, if from_open { glide_s.min(from_open_s) } else { glide_s });
                    }
                    Some(i) => {
                        // Cross: the hand is placed first, then the bow changes string mid-stroke.
                        strings[i].leave_for_another_string();
                        mark_open(strings, i);
                        let since_attack_samples = strings[i].since_vibrato_attack_samples();
                        strings[string].finger_note(offset, 0.0);
                        strings[string].bow(velocity, true, &controls);
                        strings[string].continue_vibrato(since_attack_samples);
                    }
                    None => {
                        strings[string].finger_note(offset, 0.0);
                        strings[string].bow(velocity, false, &controls);
                    }
                }
                let voice = &mut strings[string];
                voice.note = note;
                voice.expression = NoteExpression::default();
                self.sounding = Some(string);
            }
            PlayMode::Poly => {}
        }
        pool.note_changed();
    }

    /// Note-off in a legato mode: a note below the top leaves quietly; the top one returns
    /// to the note before it, or lifts the bow when none is held.
    pub fn note_off(&mut self, mode: PlayMode, pattern: &NotePattern, pool: &mut impl StringPool) {
        let sounding_note = self.sounding.map(|i| pool.strings()[i].note);
        let mut removed_top = false;
        let mut ended: [Option<NoteId>; NOTE_STACK] = [None; NOTE_STACK];
        let mut count = 0;
        self.stack.remove_matching(pattern, |note| {
            if Some(note) == sounding_note {
                removed_top = true;
            }
            ended[count] = Some(note);
            count += 1;
        });
        for note in ended.iter().flatten() {
            if Some(*note) != sounding_note || !self.stack.is_empty() {
                pool.report_ended(*note);
            }
        }
        if !removed_top {
            return;
        }
        if self.stack.is_empty() {
            if let Some(i) = self.sounding {
                pool.strings()[i].release();
                if mode == PlayMode::FourStrings {
                    let note = pool.strings()[i].note;
                    pool.report_ended(note);
                    mark_open(pool.strings(), i);
                }
            }
        } else {
            self.sound_top(mode, None, pool);
        }
    }
}

fn put_up_open_strings(string_set_control: f64, pool: &mut impl StringPool) {
    let set = string_set(string_set_control);
    let controls = pool.controls();
    for (i, spec) in set.strings.iter().enumerate() {
        let design = set.note_design(spec.open_key as f64, controls.string_stiffness, controls.damping_scale);
        let marker = NoteId { channel: OPEN_STRING_CHANNEL + i as u8, note: spec.open_key, voice_id: None };
        // The strings are never the oldest voice, so a pad note never steals them.
        pool.start_open_string(i, marker, spec.open_key as f64, design, &controls);
    }
}

/// A string that no longer plays a host note gets its marker back (so host events never
/// reach it).
fn mark_open(strings: &mut [StringVoice], string: usize) {
    let voice = &mut strings[string];
    voice.note = NoteId { channel: OPEN_STRING_CHANNEL + string as u8, note: voice.open_key() as u8, voice_id: None };
    voice.expression = NoteExpression::default();
}

/// Every string that is bowing drives the others near their bridges, one sample late.
pub fn couple_strings(strings: &mut [StringVoice], controls: &Controls) {
    let gain = SYMPATHETIC_COUPLING * controls.sympathetic_percent / 100.0;
    let strings = &mut strings[..STRINGS];
    let total: f64 = strings.iter().filter(|v| v.is_held()).map(|v| v.bridge_force_n()).sum();
    for voice in strings.iter_mut() {
        voice.drive(gain * total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(note: u8) -> NoteId {
        NoteId { channel: 0, note, voice_id: None }
    }

    #[test]
    fn stack_keeps_order_and_removes_matches() {
        let mut stack = NoteStack::default();
        stack.push(id(60), 0.5);
        stack.push(id(62), 0.6);
        stack.push(id(60), 0.7);
        assert_eq!(stack.len(), 2);
        assert_eq!(stack.top(), Some((id(60), 0.7)));
        let mut removed = Vec::new();
        stack.remove_matching(&NotePattern::exact(id(60)), |n| removed.push(n.note));
        assert_eq!(removed, vec![60]);
        assert_eq!(stack.top(), Some((id(62), 0.6)));
        for n in 0..40 {
            stack.push(id(n), 1.0);
        }
        assert_eq!(stack.len(), NOTE_STACK);
        assert_eq!(stack.top(), Some((id(39), 1.0)));
    }
}

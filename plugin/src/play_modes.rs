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

use crate::controls::{Controls, PlayMode};
use crate::expression::NoteExpression;
use crate::physics::string_set::string_set;
use crate::voice::NoteId;
use crate::voices::{Engine, NotePattern};

/// How many notes the legato modes remember.
pub const NOTE_STACK: usize = 16;
/// The strings of the four-string mode are voices `0..STRINGS`.
pub const STRINGS: usize = 4;
/// The channel that marks a four-string voice that plays no host note.
pub const OPEN_STRING_CHANNEL: u8 = 24;
/// A held note moves to a note on the same string by sliding if the new note is no more than
/// this far above the string (a fifth: first to fourth position).
pub const REACH_SEMITONES: f64 = 7.0;
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
    /// The voice that sounds the top of the stack while a note is held.
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

impl Engine {
    /// The active playing mode: the drum always plays poly.
    pub fn play_mode(&self) -> PlayMode {
        if self.controls.instrument >= 0.5 {
            PlayMode::Poly
        } else {
            PlayMode::from_control(self.controls.play_mode)
        }
    }

    /// Re-sets the strings when the mode or the string set changes: every string voice
    /// stops (with a declick), and the four-string mode puts up its open strings.
    pub(crate) fn configure_mode(&mut self) {
        let mode = self.play_mode();
        let set = self.controls.string_set.round() as u8;
        let wanted = Some((mode, if mode == PlayMode::FourStrings { set } else { 0 }));
        if self.legato.configured == wanted {
            return;
        }
        self.legato.configured = wanted;
        for i in 0..self.voices.len() {
            if !self.voices[i].is_free() {
                self.steal(i);
            }
        }
        self.legato.stack.clear();
        self.legato.sounding = None;
        if mode == PlayMode::FourStrings {
            self.put_up_open_strings();
        }
    }

    fn put_up_open_strings(&mut self) {
        let set = string_set(self.controls.string_set);
        let controls = self.effective_controls();
        for (i, spec) in set.strings.iter().enumerate() {
            let design = set.note_design(spec.open_key as f64, controls.string_stiffness, controls.damping_scale);
            let marker = NoteId { channel: OPEN_STRING_CHANNEL + i as u8, note: spec.open_key, voice_id: None };
            // The strings are never the oldest voice, so a pad note never steals them.
            self.voices[i].start_open_string(marker, spec.open_key as f64, design, u64::MAX, &controls);
        }
    }

    pub(crate) fn legato_note_on(&mut self, note: NoteId, velocity: f64) {
        self.legato.stack.push(note, velocity);
        self.sound_top(Some(velocity));
    }

    /// Sounds the top of the stack: legato from the sounding voice if one is bowing, else
    /// with a new attack (`fresh_velocity` is the new note's, `None` when returning to a
    /// note still held).
    fn sound_top(&mut self, fresh_velocity: Option<f64>) {
        let Some((note, stacked_velocity)) = self.legato.stack.top() else { return };
        let velocity = fresh_velocity.unwrap_or(stacked_velocity);
        let controls = self.effective_controls();
        let glide_s = controls.glide_time_ms * 1e-3;
        let key = note.note as f64;
        let bowing = self.legato.sounding.filter(|&i| self.voices[i].is_held());
        match self.play_mode() {
            PlayMode::MonoLegato => match bowing {
                Some(i) => {
                    let voice = &mut self.voices[i];
                    voice.finger_note(key - voice.open_key(), glide_s);
                    voice.note = note;
                    voice.expression = NoteExpression::default();
                }
                None => {
                    self.start_voice(false, note, velocity, &controls);
                    self.legato.sounding = self.voices.iter().position(|v| v.is_held() && v.note == note);
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
                match bowing {
                    Some(i) if i == string => self.voices[i].finger_note(offset, glide_s),
                    Some(i) => {
                        // Cross: the hand is placed first, then the bow changes string mid-stroke.
                        self.voices[i].release();
                        self.mark_open(i);
                        self.voices[string].finger_note(offset, 0.0);
                        self.voices[string].bow(velocity, true, &controls);
                    }
                    None => {
                        self.voices[string].finger_note(offset, 0.0);
                        self.voices[string].bow(velocity, false, &controls);
                    }
                }
                let voice = &mut self.voices[string];
                voice.note = note;
                voice.expression = NoteExpression::default();
                self.legato.sounding = Some(string);
            }
            PlayMode::Poly => {}
        }
        self.controls_dirty = true;
    }

    /// A string that no longer plays a host note gets its marker back (so host events never
    /// reach it).
    fn mark_open(&mut self, string: usize) {
        let voice = &mut self.voices[string];
        voice.note = NoteId { channel: OPEN_STRING_CHANNEL + string as u8, note: voice.open_key() as u8, voice_id: None };
        voice.expression = NoteExpression::default();
    }

    /// Note-off in a legato mode: a note below the top leaves quietly; the top one returns
    /// to the note before it, or lifts the bow when none is held.
    pub(crate) fn legato_note_off(&mut self, pattern: &NotePattern) {
        let sounding_note = self.legato.sounding.map(|i| self.voices[i].note);
        let mut removed_top = false;
        let mut ended: [Option<NoteId>; NOTE_STACK] = [None; NOTE_STACK];
        let mut count = 0;
        self.legato.stack.remove_matching(pattern, |note| {
            if Some(note) == sounding_note {
                removed_top = true;
            }
            ended[count] = Some(note);
            count += 1;
        });
        for note in ended.iter().flatten() {
            if Some(*note) != sounding_note || !self.legato.stack.is_empty() {
                self.report_ended(*note);
            }
        }
        if !removed_top {
            return;
        }
        if self.legato.stack.is_empty() {
            if let Some(i) = self.legato.sounding.take() {
                self.voices[i].release();
                if self.play_mode() == PlayMode::FourStrings {
                    self.report_ended(self.voices[i].note);
                    self.mark_open(i);
                }
            }
        } else {
            self.sound_top(None);
        }
    }

    /// Every string that is bowing drives the others near their bridges, one sample late.
    pub(crate) fn couple_strings(&mut self, controls: &Controls) {
        let gain = SYMPATHETIC_COUPLING * controls.sympathetic_percent / 100.0;
        let strings = &mut self.voices[..STRINGS];
        let total: f64 = strings.iter().filter(|v| v.is_held()).map(|v| v.bridge_force_n()).sum();
        for voice in strings.iter_mut() {
            voice.drive(gain * total);
        }
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

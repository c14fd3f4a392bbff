//! The polyphonic engine: fixed pools of string and friction-drum voices, note events at sample offsets,
//! voice stealing (oldest first, with a declick), and the output gain. It is the one
//! processor behind the plugin, the offline renderer and the tests.

use crate::controller::gesture::{GestureFrame, LaneGesture, PadLayout, LANES, LANE_OPEN_KEYS, PAD_ATTACK_MS, PAD_CHANNEL, PAD_DRUM_KEY, PAD_RELEASE_MS};
use crate::controls::Controls;
use crate::drum_voice::DrumVoice;
use crate::dsp::ramp::LinearRamp;
use rosin_physics::friction::newton::IterationStats;
use crate::controls::PlayMode;
use crate::dsp::evening::evening_key;
use crate::held_events::HeldEvents;
use crate::expression::{shape, ChannelAction, ExpressionKind, MidiExpression, NoteExpression, ShapedVoice, MIDI_CHANNELS};
use rosin_physics::body::{BodyResonator, BODIES};
use crate::play_modes::{self, LegatoState, STRINGS};
pub use crate::voice::NotePattern;
use crate::play_modes::StringPool;
use crate::voice::{Begun, NoteId, StringVoice};
use rosin_physics::bow::contact::FrictionContact;
use rosin_physics::friction::dupont_contact::ContactInput;
use rosin_physics::friction::dupont_lanes::LANES as CONTACT_LANES;
use crate::view::lab::{LabRecorder, LAB_CHOOSE_SAMPLES};
use rosin_physics::string::note_string::{GridCache, NoteStringDesign};

/// How many string voices Poly sounds at once by default, and the most it can: the
/// *Voices* control's range (defined beside it). Every engine holds the most
/// ([`Engine::new`]).
pub use crate::controls::{DEFAULT_VOICES, MOST_VOICES};
/// How many drum voices sound at once (each costs about a quarter of a core at full
/// resolution and 48 kHz).
pub const MAX_DRUM_VOICES: usize = 8;
/// A stolen voice's last output fades to zero over this long, so stealing never clicks.
const DECLICK_S: f64 = 0.003;
/// In poly mode, a note that starts this soon after another on its channel was released
/// makes a legato line: the released string is damped as a lifted finger damps it.
pub const LEGATO_GAP_S: f64 = 0.040;
/// ... and a note released this soon after the next one on its channel started.
pub const LEGATO_OVERLAP_S: f64 = 0.150;


/// A note event for the engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NoteEvent {
    NoteOn { note: NoteId, velocity: f64 },
    NoteOff { pattern: NotePattern },
    /// Silences matching notes at once (CLAP choke).
    Choke { pattern: NotePattern },
    /// Releases every held note (MIDI all-notes-off).
    AllNotesOff,
    /// A per-note expression: a CLAP or VST3 note expression, or MIDI poly aftertouch.
    Expression { pattern: NotePattern, kind: ExpressionKind, value: f64 },
    /// CLAP polyphonic modulation of [`crate::expression::POLY_MODULATED`]`[index]` on the voice with this ID,
    /// normalised as the host sends it.
    PolyModulation { voice_id: i32, index: usize, normalized_offset: f64 },
    /// MIDI pitch bend in [0, 1], centred at 0.5.
    PitchBend { channel: u8, value: f64 },
    /// MIDI channel pressure in [0, 1].
    ChannelPressure { channel: u8, value: f64 },
    /// A MIDI control change, its value in [0, 1].
    ControlChange { channel: u8, cc: u8, value: f64 },
}

/// How many held-back note-offs the sustain pedal remembers; past that, notes release.
const SUSTAINED_NOTES: usize = 64;

pub struct Engine {
    pub(crate) voices: Vec<StringVoice>,
    /// Every string voice that is not free is among the first `span`: a sample ticks no
    /// further (the engine holds [`MOST_VOICES`], and a lone note need not look at the
    /// other sixty-three every sample). Worked out again each block, and raised as a
    /// voice starts.
    span: usize,
    drums: Vec<DrumVoice>,
    sample_rate_hz: f64,
    /// The host's controls, before gestures override them.
    pub(crate) controls: Controls,
    /// MIDI channel state and MPE zones.
    midi: MidiExpression,
    legato: LegatoState,
    /// Note-offs the sustain pedal holds back.
    sustained: [Option<NotePattern>; SUSTAINED_NOTES],
    body: BodyResonator,
    body_index: usize,
    /// Every body model at rest, designed at this rate, to copy from.
    designed_bodies: Box<[BodyResonator]>,
    body_mix: LinearRamp,
    /// The body that was playing before the last change of model, fading out over
    /// [`BODY_CROSSFADE_S`] while the new one (starting from rest) fades in: a model change
    /// never cuts the resonances off.
    outgoing_body: BodyResonator,
    /// How far the crossfade has come (0 to 1; 1 when none runs) and its step per sample.
    body_fade: f64,
    /// Grids designed for notes already played (see [`GridCache`]).
    grids: GridCache,
    /// The design work done (grids designed and body responses worked out) when the sample
    /// being rendered began: a note-on after some waits for a later sample (see
    /// [`crate::held_events`]), and body responses wait for a sample with none.
    design_mark: u64,
    /// Note-ons played on the sample being rendered (at most [`NOTE_ONS_PER_SAMPLE`]).
    note_ons_this_sample: u32,
    /// Events waiting behind a note-on that waits (for its grid, or for a sample with room),
    /// played in order on later samples.
    held: HeldEvents<NoteEvent>,
    /// The grid being designed, [`MODES_PER_SAMPLE`] modes a sample, for the note-on at the
    /// front of `held`.
    pending_grid: Option<PendingGrid>,
    /// Modes summed by every pending design so far (the measure of that work).
    modes_summed: u64,
    /// The body's response at the harmonics of notes already played.
    evenings: crate::dsp::evening::EveningCache,
    /// The body is at rest and is not ticked while nothing plays into it.
    body_resting: bool,
    /// Samples the body has had no input and rung below [`BODY_REST_LEVEL`].
    body_quiet_samples: u32,
    body_fade_step: f64,
    /// Expression changed since the voices last got their controls: they get them once, at
    /// the next render, however many MIDI messages arrived in between.
    pub(crate) controls_dirty: bool,
    gestures: GestureFrame,
    /// Whether each lane's bow was down at the last [`Engine::set_gestures`].
    pad_down: [bool; LANES],
    next_age: u64,
    gain: LinearRamp,
    declick_value: f64,
    declick_step: f64,
    /// Notes whose voices ended since the last [`Engine::drain_terminated`].
    terminated: [Option<NoteId>; 2 * (MOST_VOICES + MAX_DRUM_VOICES)],
    terminated_count: usize,
    /// The loudest voice's bow contact, every sample, for the lab view.
    lab: Box<LabRecorder>,
    lab_enabled: bool,
    /// Whether sounding voices' bow contacts are solved side by side in vector lanes.
    contact_lanes: bool,
    /// Samples until the lab next looks for the loudest voice.
    lab_choose_in: usize,
    /// The string voices' outputs and contact problems within a sample.
    rounds: Rounds,
}

impl Engine {
    /// Allocates every voice for `sample_rate_hz`: [`MOST_VOICES`] string voices, of which
    /// the *Voices* control lets Poly sound [`Controls::voice_limit`] at once (sixteen by
    /// default), and [`MAX_DRUM_VOICES`] drum voices. Nothing allocates after this.
    pub fn new(sample_rate_hz: f64) -> Self {
        assert!(sample_rate_hz.is_finite() && sample_rate_hz > 0.0, "bad sample rate");
        let controls = Controls::default();
        Self {
            voices: (0..MOST_VOICES).map(|_| StringVoice::new(sample_rate_hz)).collect(),
            span: 0,
            drums: {
                // Every drum voice has the same grids: measure them once, then copy.
                let first = DrumVoice::new(sample_rate_hz);
                let mut drums = Vec::with_capacity(MAX_DRUM_VOICES);
                for _ in 1..MAX_DRUM_VOICES {
                    drums.push(first.duplicate());
                }
                drums.push(first);
                drums
            },
            sample_rate_hz,
            controls,
            midi: MidiExpression::default(),
            legato: LegatoState::default(),
            sustained: [None; SUSTAINED_NOTES],
            body: designed_body(0, sample_rate_hz),
            designed_bodies: (0..BODIES.len()).map(|index| designed_body(index, sample_rate_hz)).collect(),
            body_index: 0,
            body_mix: LinearRamp::control(controls.body_mix_percent / 100.0, sample_rate_hz),
            outgoing_body: designed_body(0, sample_rate_hz),
            body_fade: 1.0,
            grids: GridCache::with_capacity(GRID_CACHE_ENTRIES),
            design_mark: 0,
            note_ons_this_sample: 0,
            held: HeldEvents::new(NoteEvent::AllNotesOff),
            pending_grid: None,
            modes_summed: 0,
            evenings: crate::dsp::evening::EveningCache::with_capacity(GRID_CACHE_ENTRIES),
            body_resting: true,
            body_quiet_samples: 0,
            body_fade_step: 1.0 / (BODY_CROSSFADE_S * sample_rate_hz).max(1.0),
            controls_dirty: false,
            gestures: [LaneGesture::default(); LANES],
            pad_down: [false; LANES],
            next_age: 0,
            gain: LinearRamp::control(db_to_gain(controls.output_gain_db), sample_rate_hz),
            declick_value: 0.0,
            declick_step: 0.0,
            terminated: [None; 2 * (MOST_VOICES + MAX_DRUM_VOICES)],
            terminated_count: 0,
            lab: Box::default(),
            lab_enabled: true,
            contact_lanes: true,
            lab_choose_in: 0,
            rounds: Rounds { outputs: [0.0; MOST_VOICES], problems: [NO_CONTACT; MOST_VOICES] },
        }
        .with_default_grids()
    }

    /// Designs ahead, here on the thread that builds the engine, the grids and body
    /// responses of every key of a piano's range at the default controls (about 2 ms), so
    /// that first notes at the defaults cost the audio thread no design either; and the open
    /// strings of every factory preset (and of every string set at the default stiffness),
    /// so that choosing one, or the four-string mode, puts its strings up without a design.
    fn with_default_grids(mut self) -> Self {
        let c = self.controls;
        let set = rosin_physics::string::string_set::string_set(c.string_set);
        let engine = crate::voice::StringEngine::from_control(c.string_engine);
        for key in PREWARMED_KEYS {
            let design = set.note_design(key as f64, c.string_stiffness, c.damping_scale);
            StringVoice::design_grid(key as f64, &design, engine, self.sample_rate_hz, &mut self.grids);
            let mut kept = crate::dsp::evening::BodyAtHarmonics::default();
            self.evenings.refresh(&self.body, self.body_index, key as f64, &mut kept);
        }
        let sets = (0..rosin_physics::string::string_set::STRING_SETS.len()).map(|set| Controls { string_set: set as f64, ..c });
        for c in sets.chain(crate::presets::PRESETS.iter().map(|p| p.controls())) {
            let set = rosin_physics::string::string_set::string_set(c.string_set);
            let engine = crate::voice::StringEngine::from_control(c.string_engine);
            for spec in &set.strings {
                let design = set.note_design(spec.open_key as f64, c.string_stiffness, c.damping_scale);
                StringVoice::design_grid(spec.open_key as f64, &design, engine, self.sample_rate_hz, &mut self.grids);
            }
        }
        self.begin_sample_share();
        self
    }

    pub fn sample_rate_hz(&self) -> f64 {
        self.sample_rate_hz
    }

    /// Silences every voice and restarts note numbering, so the same input renders the
    /// same output again.
    pub fn reset(&mut self) {
        for voice in &mut self.voices {
            voice.kill();
        }
        for drum in &mut self.drums {
            drum.kill();
        }
        self.next_age = 0;
        self.pad_down = [false; LANES];
        self.gestures = [LaneGesture::default(); LANES];
        self.gain.snap(db_to_gain(self.controls.output_gain_db));
        self.declick_value = 0.0;
        self.declick_step = 0.0;
        self.terminated_count = 0;
        self.midi.reset();
        self.sustained = [None; SUSTAINED_NOTES];
        self.legato = LegatoState::default();
        self.held.clear();
        self.pending_grid = None;
        self.body.reset();
        self.outgoing_body.reset();
        self.body_fade = 1.0;
        self.body_resting = true;
        self.body_quiet_samples = 0;
        self.body_mix.snap(self.controls.body_mix_percent / 100.0);
        self.evenings.forget_heard();
        self.configure_mode();
    }

    /// The host's controls (before gestures override them).
    pub fn controls(&self) -> &Controls {
        &self.controls
    }

    /// New control values, applied from the next sample; each ramps in per sample.
    pub fn set_controls(&mut self, controls: &Controls) {
        let pool_before = self.string_pool();
        self.controls = *controls;
        let pool = self.string_pool();
        if pool < pool_before {
            // Fewer voices: the notes beyond the new count are let go as stealing would,
            // but gently (each rings out as at its note-off), and take no new note.
            for voice in self.voices[pool..].iter_mut().filter(|v| v.is_held()) {
                voice.release();
            }
        }
        self.midi.set_mpe(controls.mpe >= 0.5);
        let body = (controls.body.round().max(0.0) as usize).min(BODIES.len() - 1);
        if body != self.body_index {
            self.body_index = body;
            // The playing body rings on and fades out; the new one starts from rest. (A
            // change during a crossfade cuts the body fading out then, at its reduced weight.)
            // A body at rest (nothing has played yet, or all has died away) is simply
            // replaced.
            // The models' coefficients were worked out at construction (about 10 us a model).
            if self.body.is_at_rest() {
                self.body.clone_from(&self.designed_bodies[body]);
            } else {
                std::mem::swap(&mut self.body, &mut self.outgoing_body);
                self.body.clone_from(&self.designed_bodies[body]);
                self.body_fade = 0.0;
            }
        }
        self.configure_mode();
        self.push_controls();
    }

    /// The gestures of a touch controller now. A lane whose bow goes down starts a pad
    /// voice (its own string, or the drum), unless, with one lane, MIDI notes are held:
    /// then the pad bows those. A lane that lifts releases its voice. While lane 0 is down
    /// with one lane, its values override the host's bow controls for every voice.
    pub fn set_gestures(&mut self, gestures: &GestureFrame) {
        for (lane, gesture) in gestures.iter().enumerate() {
            self.gestures[lane] = gesture.sanitized();
        }
        let lanes = self.active_lanes();
        for lane in 0..LANES {
            let down = lane < lanes && self.gestures[lane].bow_down;
            if down && !self.pad_down[lane] {
                self.start_pad_voice(lane);
            } else if !down && self.pad_down[lane] {
                self.release_pad_voice(lane);
            }
            self.pad_down[lane] = down;
        }
        self.push_controls();
    }

    pub fn gestures(&self) -> &GestureFrame {
        &self.gestures
    }

    /// How many lanes the pad plays: one on the drum, else as the layout says.
    fn active_lanes(&self) -> usize {
        if self.controls.instrument >= 0.5 {
            1
        } else {
            PadLayout::from_control(self.controls.pad_layout).lanes()
        }
    }

    /// The controls every MIDI voice plays with: the host's, with lane 0's gesture in place
    /// of the bow controls while its bow is down and it is the only lane.
    pub fn effective_controls(&self) -> Controls {
        let mut c = self.controls;
        let g = &self.gestures[0];
        if self.active_lanes() == 1 && g.bow_down {
            c.bow_force_n = g.bow_force_n;
            c.bow_velocity_mps = g.bow_velocity_mps;
            c.bow_position = g.bow_position;
            if let Some(finger) = g.finger_position {
                c.finger_position = finger;
            }
            c.drum_bow_x = g.drum_bow_x;
            c.drum_bow_y = g.drum_bow_y;
        }
        c
    }

    /// The controls of lane `lane`'s own voice: its gesture's bow, a short attack and
    /// release (the finger is the bow), and, with four lanes, an open string unless a
    /// second finger stops it.
    fn pad_controls(&self, lane: usize) -> Controls {
        let mut c = self.effective_controls();
        let g = &self.gestures[lane];
        c.bow_force_n = g.bow_force_n;
        c.bow_velocity_mps = g.bow_velocity_mps;
        c.bow_position = g.bow_position;
        if self.active_lanes() > 1 {
            c.finger_position = g.finger_position.unwrap_or(0.0);
        }
        c.bow_attack_ms = PAD_ATTACK_MS;
        c.bow_release_ms = PAD_RELEASE_MS;
        c
    }

    /// Hands every sounding voice its controls: the host's (or the pad's), shaped by its
    /// channel's and its own expression, with its bend and vibrato.
    pub(crate) fn push_controls(&mut self) {
        self.controls_dirty = false;
        self.gain.set_target(db_to_gain(self.controls.output_gain_db));
        self.body_mix.set_target(self.controls.body_mix_percent / 100.0);
        let midi = self.effective_controls();
        let pad: [Controls; LANES] = std::array::from_fn(|lane| self.pad_controls(lane));
        let shaped_for = |note: &NoteId, expression: &NoteExpression| -> ShapedVoice {
            match note.channel {
                c if (c as usize) < MIDI_CHANNELS => shape(&midi, &self.midi.for_channel(c, &midi), expression),
                c if c < PAD_CHANNEL + LANES as u8 => ShapedVoice { controls: pad[(c - PAD_CHANNEL) as usize], bend_st: 0.0, vibrato_cents: 0.0 },
                // An open string of the four-string mode plays no note.
                _ => ShapedVoice { controls: midi, bend_st: 0.0, vibrato_cents: 0.0 },
            }
        };
        let body_mix = self.controls.body_mix_percent / 100.0;
        for voice in self.voices.iter_mut().filter(|v| !v.is_free()) {
            let shaped = shaped_for(&voice.note, &voice.expression);
            voice.set_controls(&shaped.controls);
            voice.set_bend(shaped.bend_st);
            voice.set_vibrato(shaped.vibrato_cents, shaped.controls.vibrato_rate_hz, shaped.controls.vibrato_delay_ms);
            // A legato note is evened at the key it goes to, from the glide's start.
            let key = evening_key(voice.destination_key());
            // Under a new body each voice's response is worked out once: one a sample, on a
            // sample with no other design work; the others keep theirs a sample longer.
            // (`design_work()`, spelled out: the loop holds the voices.)
            let may_compute = self.grids.designed() + self.evenings.computed() == self.design_mark;
            match self.evenings.refresh_within(&self.body, self.body_index, key, &mut voice.body_at_harmonics, may_compute) {
                // Under a new body, the note's level follows the bodies' crossfade.
                Some(true) => {
                    let gain = voice.body_at_harmonics.evening_gain_for(body_mix);
                    voice.glide_evening_gain(gain, LinearRamp::samples_for(BODY_CROSSFADE_S, self.sample_rate_hz));
                }
                Some(false) => {
                    let gain = voice.body_at_harmonics.evening_gain_for(body_mix);
                    voice.set_evening_gain(gain);
                }
                None => self.controls_dirty = true,
            }
            // Listened to only once its response is at this key: what is heard is kept with
            // the response it was heard for (a voice whose response waits is listened to at
            // the push that brings it).
            if voice.body_at_harmonics.key() == key {
                voice.listen_for(key);
            }
        }
        for drum in self.drums.iter_mut().filter(|v| !v.is_free()) {
            let shaped = shaped_for(&drum.note, &drum.expression);
            drum.set_controls(&shaped.controls);
            drum.set_bend(shaped.bend_st);
        }
    }

    fn pad_note(&self, lane: usize) -> NoteId {
        let key = if self.controls.instrument >= 0.5 { PAD_DRUM_KEY } else { LANE_OPEN_KEYS[lane] };
        NoteId { channel: PAD_CHANNEL + lane as u8, note: key, voice_id: None }
    }

    fn start_pad_voice(&mut self, lane: usize) {
        let drum = self.controls.instrument >= 0.5;
        let midi_held = if drum {
            self.drums.iter().any(|v| v.is_held() && v.note.channel < PAD_CHANNEL)
        } else {
            self.voices.iter().any(|v| v.is_held() && v.note.channel < PAD_CHANNEL)
        };
        if self.active_lanes() == 1 && midi_held {
            return;
        }
        let note = self.pad_note(lane);
        let controls = self.pad_controls(lane);
        self.start_voice(drum, note, 1.0, &controls);
    }

    fn release_pad_voice(&mut self, lane: usize) {
        let channel = PAD_CHANNEL + lane as u8;
        for voice in self.voices.iter_mut().filter(|v| v.is_held() && v.note.channel == channel) {
            voice.release();
        }
        for drum in self.drums.iter_mut().filter(|v| v.is_held() && v.note.channel == channel) {
            drum.release();
        }
    }

    /// Plays `event` now, unless it is a note-on that must wait: its grid is not designed
    /// yet (it is, a few modes a sample), or this sample has done its share of note-on work
    /// ([`NOTE_ONS_PER_SAMPLE`] note-ons, a body response or a whole grid). Then it waits, and
    /// every event after it (see [`crate::held_events`]); [`Engine::render`] plays them on
    /// later samples, in order.
    pub fn handle_event(&mut self, event: &NoteEvent) {
        let waits = |engine: &Self| match event {
            NoteEvent::NoteOn { note, .. } => engine.sample_is_full() || engine.missing_grid(note).is_some(),
            _ => false,
        };
        if self.held.is_empty() && !waits(self) {
            self.apply_event(event);
            return;
        }
        if self.held.is_full() {
            // A storm of more than HELD_EVENTS events behind a note-on that waits: the oldest
            // play now, whatever they cost (a note-on waiting for its grid designs it at
            // once), so that none is lost and the order holds.
            if let Some(oldest) = self.held.pop() {
                self.apply_event(&oldest);
            }
        }
        self.held.push(*event);
    }

    /// Grids designed and body responses worked out so far: about 10 us and a few us each.
    fn design_work(&self) -> u64 {
        self.grids.designed() + self.evenings.computed()
    }

    /// Whether a grid has been designed, or a body response worked out, since the sample
    /// being rendered began.
    fn designed_this_sample(&self) -> bool {
        self.design_work() != self.design_mark
    }

    /// Starts the next sample's share of note-on work afresh.
    fn begin_sample_share(&mut self) {
        self.design_mark = self.design_work();
        self.note_ons_this_sample = 0;
    }

    /// Whether a note-on now would be more than this sample's share of note-on work.
    fn sample_is_full(&self) -> bool {
        self.designed_this_sample() || self.note_ons_this_sample >= NOTE_ONS_PER_SAMPLE
    }

    /// Plays the held events, in order, up to the next note-on that would be more than the
    /// sample's share, or whose grid is still being designed (a few modes a sample: see
    /// [`Engine::design_a_little`]).
    fn play_held(&mut self) {
        while let Some(&event) = self.held.front() {
            if let NoteEvent::NoteOn { note, .. } = event {
                if let Some(needed) = self.missing_grid(&note) {
                    if self.pending_grid.as_ref().is_none_or(|p| !p.is_for(&needed)) {
                        self.pending_grid = Some(PendingGrid::new(needed));
                    }
                    break;
                }
                if self.sample_is_full() {
                    break;
                }
            }
            self.held.pop();
            self.apply_event(&event);
        }
    }

    /// The first grid a string note-on for `note` would design now (see
    /// [`StringVoice::missing_grid`]), or `None` when all it needs is kept. Only Poly notes
    /// wait for a grid: the four-string mode fingers strings already up, and Mono Legato
    /// plays one note at a time (its design counts against the sample's share).
    fn missing_grid(&self, note: &NoteId) -> Option<GridRequest> {
        let c = self.effective_controls();
        if c.instrument >= 0.5 || self.play_mode() != PlayMode::Poly {
            return None;
        }
        let key = note.note as f64;
        let design = rosin_physics::string::string_set::string_set(c.string_set).note_design(key, c.string_stiffness, c.damping_scale);
        let engine = crate::voice::StringEngine::from_control(c.string_engine);
        let rate_hz = StringVoice::missing_grid(key, &design, engine, self.sample_rate_hz, &self.grids)?;
        Some(GridRequest { design, frequency_hz: rosin_physics::string::tuning::midi_key_to_hz(key), rate_hz })
    }

    /// Sums up to [`MODES_PER_SAMPLE`] modes of the grid being designed, and keeps the grid
    /// once it is done.
    fn design_a_little(&mut self) {
        let Some(pending) = &mut self.pending_grid else { return };
        let before = pending.tuner.modes_summed();
        let done = pending.tuner.step(MODES_PER_SAMPLE);
        self.modes_summed += pending.tuner.modes_summed() - before;
        if let Some(grid) = done {
            let r = pending.request;
            self.grids.insert(&r.design, r.frequency_hz, r.rate_hz, crate::voice::MAX_INTERVALS, grid);
            self.pending_grid = None;
        }
    }

    fn apply_event(&mut self, event: &NoteEvent) {
        match *event {
            NoteEvent::NoteOn { note, velocity } => {
                self.note_ons_this_sample += 1;
                self.note_on(note, velocity);
            }
            NoteEvent::NoteOff { pattern } => {
                let held_back = pattern.channel.is_some_and(|c| self.midi.sustained(c));
                if !(held_back && self.hold_back(pattern)) {
                    self.note_off(&pattern);
                }
            }
            NoteEvent::Choke { pattern } => {
                let mode = self.play_mode();
                if mode != PlayMode::Poly {
                    self.legato_note_off(&pattern);
                }
                // The four strings stay up; their bow has just been lifted.
                let first = if mode == PlayMode::FourStrings { STRINGS } else { 0 };
                for i in first..self.voices.len() {
                    if !self.voices[i].is_free() && pattern.matches(&self.voices[i].note) {
                        self.steal(i);
                    }
                }
                for i in 0..self.drums.len() {
                    if !self.drums[i].is_free() && pattern.matches(&self.drums[i].note) {
                        self.steal_drum(i);
                    }
                }
            }
            NoteEvent::AllNotesOff => self.all_notes_off(),
            NoteEvent::Expression { pattern, kind, value } => {
                for voice in self.voices.iter_mut().filter(|v| !v.is_free() && pattern.matches(&v.note)) {
                    voice.expression.set(kind, value);
                }
                for drum in self.drums.iter_mut().filter(|v| !v.is_free() && pattern.matches(&v.note)) {
                    drum.expression.set(kind, value);
                }
                self.controls_dirty = true;
            }
            NoteEvent::PolyModulation { voice_id, index, normalized_offset } => {
                for voice in self.voices.iter_mut().filter(|v| !v.is_free() && v.note.voice_id == Some(voice_id)) {
                    voice.expression.modulate(index, normalized_offset);
                }
                for drum in self.drums.iter_mut().filter(|v| !v.is_free() && v.note.voice_id == Some(voice_id)) {
                    drum.expression.modulate(index, normalized_offset);
                }
                self.controls_dirty = true;
            }
            NoteEvent::PitchBend { channel, value } => {
                self.midi.pitch_bend(channel, value);
                self.controls_dirty = true;
            }
            NoteEvent::ChannelPressure { channel, value } => {
                self.midi.channel_pressure(channel, value);
                self.controls_dirty = true;
            }
            NoteEvent::ControlChange { channel, cc, value } => {
                match self.midi.control_change(channel, cc, value) {
                    ChannelAction::None => {}
                    ChannelAction::AllNotesOff => self.all_notes_off(),
                    ChannelAction::SustainReleased(pedal) => self.release_sustained(pedal),
                }
                self.controls_dirty = true;
            }
        }
    }

    fn note_off(&mut self, pattern: &NotePattern) {
        if self.play_mode() != PlayMode::Poly {
            self.legato_note_off(pattern);
            return;
        }
        for i in 0..self.voices.len() {
            if !(self.voices[i].is_held() && pattern.matches(&self.voices[i].note)) {
                continue;
            }
            self.voices[i].release();
            // A line played with overlaps: the next note on this channel has just begun, so
            // this one is lifted off as a finger is, not left ringing under it.
            let channel = self.voices[i].note.channel;
            if self.voices.iter().any(|v| v.is_held() && v.note.channel == channel && v.sounding_s() <= LEGATO_OVERLAP_S) {
                self.voices[i].damp_by_hand();
            }
        }
        for drum in self.drums.iter_mut().filter(|v| v.is_held() && pattern.matches(&v.note)) {
            drum.release();
        }
    }

    /// Keeps a note-off for when the pedal lifts; false when the list is full.
    fn hold_back(&mut self, pattern: NotePattern) -> bool {
        match self.sustained.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => {
                *slot = Some(pattern);
                true
            }
            None => false,
        }
    }

    /// The pedal on `pedal_channel` lifted: the note-offs it held back (on that channel, or
    /// on its MPE members) happen now, unless another pedal still holds them.
    fn release_sustained(&mut self, pedal_channel: u8) {
        for i in 0..SUSTAINED_NOTES {
            let Some(pattern) = self.sustained[i] else { continue };
            let channel = pattern.channel.unwrap_or(pedal_channel);
            if !self.midi.sustained(channel) {
                self.sustained[i] = None;
                self.note_off(&pattern);
            }
        }
    }

    fn all_notes_off(&mut self) {
        self.sustained = [None; SUSTAINED_NOTES];
        self.legato_note_off(&NotePattern::default());
        for voice in self.voices.iter_mut().filter(|v| v.note.channel < PAD_CHANNEL) {
            voice.release();
        }
        for drum in &mut self.drums {
            drum.release();
        }
    }

    /// Reports that a host note ended although its voice may play on (legato modes).
    pub(crate) fn report_ended(&mut self, note: NoteId) {
        push_terminated(&mut self.terminated, &mut self.terminated_count, note);
    }

    fn note_on(&mut self, note: NoteId, velocity: f64) {
        if self.play_mode() != PlayMode::Poly {
            self.legato_note_on(note, velocity);
            return;
        }
        let controls = self.effective_controls();
        if controls.instrument < 0.5 {
            // A line played note-off then note-on (as DAWs send legato), or with a short
            // gap: the note just released is lifted off as a finger is, not left ringing
            // under this one. Chords and pedalled notes, still held, ring on.
            for voice in self.voices.iter_mut().filter(|v| !v.is_free() && v.note.channel == note.channel) {
                if voice.released_s().is_some_and(|s| s <= LEGATO_GAP_S) {
                    voice.damp_by_hand();
                }
            }
        }
        self.start_voice(controls.instrument >= 0.5, note, velocity, &controls);
    }

    /// Starts a voice on the string or drum pool.
    pub(crate) fn start_voice(&mut self, drum: bool, note: NoteId, velocity: f64, controls: &Controls) {
        let age = self.next_age;
        self.next_age += 1;
        if drum {
            let (index, steal) = slot_for(&mut self.drums, note);
            if steal {
                self.steal_drum(index);
            }
            self.drums[index].start(note, velocity, age, controls);
        } else {
            let pool = self.string_pool();
            let (index, steal) = slot_for(&mut self.voices[..pool], note);
            if steal {
                self.steal(index);
            }
            self.voices[index].start(note, velocity, age, controls, &mut self.grids);
            self.span = self.span.max(index + 1);
            // Its body response now, so that the design work of a note-on is done (and
            // counted against the sample's budget) when it starts.
            let voice = &mut self.voices[index];
            self.evenings.refresh(&self.body, self.body_index, evening_key(voice.target_key()), &mut voice.body_at_harmonics);
        }
        // The new voice takes its channel's pressure, slide, bend and vibrato (and its own
        // expressions) before its first sample, not at the channel's next change.
        self.controls_dirty = true;
    }

    fn steal_drum(&mut self, index: usize) {
        let drum = &mut self.drums[index];
        let (output, note) = (drum.last_output(), drum.note);
        drum.kill();
        self.declick(output, note);
    }

    /// Starts the fade of a stolen voice's last sample and reports its end.
    fn declick(&mut self, last_output: f64, note: NoteId) {
        self.declick_value += last_output;
        let samples = (DECLICK_S * self.sample_rate_hz).max(1.0);
        self.declick_step = self.declick_value / samples;
        push_terminated(&mut self.terminated, &mut self.terminated_count, note);
    }

    /// Frees a sounding voice now; its last sample fades out over a few milliseconds.
    pub(crate) fn steal(&mut self, index: usize) {
        let voice = &mut self.voices[index];
        let (output, note) = (voice.last_output() * voice.evening_gain(), voice.note);
        voice.kill();
        self.declick(output, note);
    }


    /// Calls `sink` for every voice that ended since the last call (for CLAP's
    /// voice-terminated events).
    pub fn drain_terminated(&mut self, mut sink: impl FnMut(NoteId)) {
        for slot in &mut self.terminated[..self.terminated_count] {
            if let Some(note) = slot.take() {
                sink(note);
            }
        }
        self.terminated_count = 0;
    }

    /// Renders `out.len()` samples of the mono mix into `out` (overwriting it).
    pub fn render(&mut self, out: &mut [f32]) {
        if self.controls_dirty {
            self.push_controls();
        }
        if self.is_silent() {
            // Nothing sounds and the body has rung down: silence, at a few instructions a
            // block. The ramps arrive where they were going, as they would have meanwhile.
            out.fill(0.0);
            self.begin_sample_share();
            self.gain.snap(self.gain.target());
            self.body_mix.snap(self.body_mix.target());
            return;
        }
        let four_strings = self.play_mode() == PlayMode::FourStrings;
        let controls = self.controls;
        self.span = self.voices.iter().rposition(|v| !v.is_free()).map_or(0, |last| last + 1);
        if self.lab_enabled {
            self.lab_choose_in = self.lab_choose_in.saturating_sub(out.len());
            if self.lab_choose_in == 0 || self.lab.source().is_none() {
                self.lab.choose(&self.voices, &self.drums);
                self.lab_choose_in = LAB_CHOOSE_SAMPLES;
            }
        }
        let record_lab = self.lab_enabled && self.lab.source().is_some();
        for sample in out.iter_mut() {
            if !self.held.is_empty() {
                self.design_a_little();
                self.play_held();
            }
            if self.controls_dirty {
                self.push_controls();
            }
            if four_strings {
                play_modes::couple_strings(&mut self.voices, &controls);
            }
            let mut mix = 0.0;
            let mut sounding = tick_voices(&mut self.voices[..self.span], &mut self.rounds, self.contact_lanes);
            // The sounding voices, in order.
            while sounding != 0 {
                let index = sounding.trailing_zeros() as usize;
                sounding &= sounding - 1;
                let (voice, output) = (&mut self.voices[index], self.rounds.outputs[index]);
                mix += output * voice.next_evening_gain();
                if voice.take_heard_now() {
                    // Evened by what was heard of the note, gliding there.
                    self.evenings.remember_heard(&voice.body_at_harmonics);
                    let gain = voice.body_at_harmonics.evening_gain_for(self.body_mix.target());
                    voice.glide_evening_gain(gain, LinearRamp::samples_for(EVENING_GLIDE_S, self.sample_rate_hz));
                }
                if voice.is_free() {
                    push_terminated(&mut self.terminated, &mut self.terminated_count, voice.note);
                }
            }
            for drum in self.drums.iter_mut() {
                if !drum.is_free() {
                    mix += drum.tick();
                    if drum.is_free() {
                        push_terminated(&mut self.terminated, &mut self.terminated_count, drum.note);
                    }
                }
            }
            if record_lab {
                self.lab.record(&self.voices, &self.drums);
            }
            if self.declick_value != 0.0 {
                mix += self.declick_value;
                self.declick_value -= self.declick_step;
                if self.declick_value * self.declick_step <= 0.0 {
                    self.declick_value = 0.0;
                }
            }
            // The body colours the strings' bridge force; at mix 0 the output is the dry force.
            let mix_amount = self.body_mix.next();
            let out = if mix_amount == 0.0 && self.body_mix.target() == 0.0 {
                // Not heard, and not about to be (the drum presets mix none of it): it rests,
                // unticked, and starts from rest when the mix is raised.
                self.rest_body();
                mix
            } else {
                let bodied = if self.body_resting && mix == 0.0 {
                    0.0
                } else if self.body_fade < 1.0 {
                    let (incoming, outgoing) = (self.body.tick(mix), self.outgoing_body.tick(mix));
                    let faded = outgoing + self.body_fade * (incoming - outgoing);
                    self.body_fade = (self.body_fade + self.body_fade_step).min(1.0);
                    faded
                } else {
                    self.body.tick(mix)
                };
                self.track_body_rest(mix, bodied);
                mix + mix_amount * (bodied - mix)
            };
            *sample = crate::dsp::output::to_host_sample(crate::dsp::output::safety_limit(out * self.gain.next()));
            self.begin_sample_share();
        }
        // Every voice that sounded was ticked: none beyond the span had started.
        debug_assert!(self.voices[self.span..].iter().all(|v| v.is_free()), "a string voice started beyond the span");
    }

    /// Whether the engine would render only silence: no string sounding (or every one asleep),
    /// no drum, no declick, no event waiting, and the body at rest.
    pub fn is_silent(&self) -> bool {
        self.body_resting
            && self.held.is_empty()
            && self.declick_value == 0.0
            && self.voices.iter().all(|v| v.is_free() || v.is_asleep())
            && self.drums.iter().all(|d| d.is_free())
    }

    /// Counts the samples the body has had no input and rung below [`BODY_REST_LEVEL`]; after
    /// [`BODY_REST_S`] of them it is put to rest (a step below -160 dB) and no longer ticked
    /// until something plays into it.
    #[inline]
    fn track_body_rest(&mut self, input: f64, output: f64) {
        if input != 0.0 || output.abs() >= BODY_REST_LEVEL {
            self.body_resting = false;
            self.body_quiet_samples = 0;
        } else if !self.body_resting {
            self.body_quiet_samples += 1;
            if self.body_quiet_samples as f64 >= BODY_REST_S * self.sample_rate_hz {
                self.rest_body();
            }
        }
    }

    /// Puts the body at rest (both bodies of a crossfade), if it is not already.
    #[inline]
    fn rest_body(&mut self) {
        if !self.body_resting {
            self.body.reset();
            self.outgoing_body.reset();
            self.body_fade = 1.0;
            self.body_resting = true;
            self.body_quiet_samples = 0;
        }
    }

    /// The lab view's recording of the loudest voice's contact.
    pub fn lab(&self) -> &LabRecorder {
        &self.lab
    }

    /// Turns the lab view's recording on (the default) or off; off, it costs nothing.
    pub fn set_lab_enabled(&mut self, enabled: bool) {
        self.lab_enabled = enabled;
    }

    pub fn voices(&self) -> &[StringVoice] {
        &self.voices
    }

    pub fn drum_voices(&self) -> &[DrumVoice] {
        &self.drums
    }

    /// How many of the string voices new notes may take: in Poly the *Voices* control's
    /// count ([`Controls::voice_limit`]); in the legato modes [`DEFAULT_VOICES`], for the
    /// notes ringing on after a change and the pad's, as before the control existed.
    fn string_pool(&self) -> usize {
        let limit = if self.play_mode() == PlayMode::Poly { self.controls.voice_limit() } else { DEFAULT_VOICES };
        limit.min(self.voices.len())
    }

    /// How many notes can sound at once now: the drum pool, one mono voice, or the string
    /// pool (the four-string mode plays one note at a time on its strings).
    pub fn voice_capacity(&self) -> usize {
        if self.controls.instrument >= 0.5 {
            return MAX_DRUM_VOICES;
        }
        match self.play_mode() {
            PlayMode::Poly => self.string_pool(),
            PlayMode::FourStrings | PlayMode::MonoLegato => 1,
        }
    }

    /// How many times any string voice put its bow down from rest (legato changes do not
    /// count): the attack count a legato phrase must not raise.
    pub fn string_attacks(&self) -> u64 {
        self.voices.iter().map(|v| v.attacks()).sum()
    }

    /// The design work done since the engine was built: string grids designed and body
    /// responses worked out (each a few to a few tens of microseconds; see
    /// [`crate::held_events`]). For tests and benches.
    pub fn design_counts(&self) -> (u64, u64) {
        (self.grids.designed(), self.evenings.computed())
    }

    /// Events waiting for a later sample (see [`crate::held_events`]).
    pub fn held_event_count(&self) -> usize {
        self.held.len()
    }

    /// Modes summed so far by the grids designed a few modes a sample (see
    /// [`MODES_PER_SAMPLE`]). For tests and benches.
    pub fn modes_summed(&self) -> u64 {
        self.modes_summed
    }

    pub fn active_voice_count(&self) -> usize {
        self.voices.iter().filter(|v| !v.is_free()).count() + self.drums.iter().filter(|v| !v.is_free()).count()
    }

    /// Plays another take: every note from now on draws its bow noise anew
    /// ([`crate::voice::noise_seed`]), as the same phrase played again would. Take 0, the
    /// default, is the take every earlier build rendered; [`Engine::reset`] keeps the take.
    /// For renders and tests that hear how much a phrase depends on the bow's noise.
    pub fn set_take(&mut self, take: u64) {
        self.voices.iter_mut().for_each(|v| v.take = take);
        self.drums.iter_mut().for_each(|d| d.take = take);
    }

    /// Solves the sounding voices' bow contacts eight at a time in vector lanes (`true`,
    /// the default) or each voice's alone. Both give the same output to the bit; the lanes
    /// are quicker where the CPU has AVX2. For tests and benchmarks.
    pub fn set_contact_lanes(&mut self, on: bool) {
        self.contact_lanes = on;
    }

    /// Takes a string's controls over from its last sample while nothing they are worked
    /// from moves (`true`, the default), or works them out every sample. Both give the same
    /// output to the bit; holding them is quicker. For tests.
    pub fn set_hold_steady_controls(&mut self, on: bool) {
        for voice in &mut self.voices {
            voice.set_hold_steady_controls(on);
        }
    }

    /// Newton statistics over every voice since each started.
    pub fn newton_stats(&self) -> IterationStats {
        let mut stats = IterationStats::default();
        for voice in &self.voices {
            stats.merge(&voice.bowed_string().bow.stats());
            stats.merge(voice.ribbon().bowed().stats());
        }
        for drum in &self.drums {
            stats.merge(&drum.drum().bow.stats());
        }
        stats
    }

    /// Puts NaN into a voice's string, to test recovery from divergence.
    #[doc(hidden)]
    pub fn corrupt_voice_for_test(&mut self, index: usize) {
        self.voices[index].corrupt_for_test();
    }

    /// Bends a voice's string `metres` aside at its middle, to test the displacement check.
    #[doc(hidden)]
    pub fn displace_voice_for_test(&mut self, index: usize, metres: f64) {
        self.voices[index].displace_for_test(metres);
    }

    /// Puts NaN into a drum voice's membrane, to test recovery from divergence.
    #[doc(hidden)]
    pub fn corrupt_drum_for_test(&mut self, index: usize) {
        self.drums[index].corrupt_for_test();
    }

    /// How often any voice was recovered from a diverged state.
    pub fn recoveries(&self) -> u64 {
        self.voices.iter().map(|v| v.recoveries()).sum::<u64>() + self.drums.iter().map(|v| v.recoveries()).sum::<u64>()
    }

    /// The active playing mode: the drum always plays poly.
    pub fn play_mode(&self) -> PlayMode {
        if self.controls.instrument >= 0.5 {
            PlayMode::Poly
        } else {
            PlayMode::from_control(self.controls.play_mode)
        }
    }

    /// Re-sets the strings when the mode or the string set changes (see
    /// [`LegatoState::configure`]).
    fn configure_mode(&mut self) {
        let (mode, set) = (self.play_mode(), self.controls.string_set);
        let mut legato = self.legato;
        legato.configure(mode, set, self);
        self.legato = legato;
    }

    fn legato_note_on(&mut self, note: NoteId, velocity: f64) {
        let mode = self.play_mode();
        let mut legato = self.legato;
        legato.note_on(mode, note, velocity, self);
        self.legato = legato;
    }

    fn legato_note_off(&mut self, pattern: &NotePattern) {
        let mode = self.play_mode();
        let mut legato = self.legato;
        legato.note_off(mode, pattern, self);
        self.legato = legato;
    }
}

/// What the engine needs of a voice to keep a pool of them.
trait PooledVoice {
    fn note(&self) -> NoteId;
    fn age(&self) -> u64;
    fn is_free(&self) -> bool;
    fn is_held(&self) -> bool;
    fn release(&mut self);
}

macro_rules! pooled_voice {
    ($voice:ty) => {
        impl PooledVoice for $voice {
            fn note(&self) -> NoteId {
                self.note
            }
            fn age(&self) -> u64 {
                self.age
            }
            fn is_free(&self) -> bool {
                <$voice>::is_free(self)
            }
            fn is_held(&self) -> bool {
                <$voice>::is_held(self)
            }
            fn release(&mut self) {
                <$voice>::release(self)
            }
        }
    };
}
pooled_voice!(StringVoice);
pooled_voice!(DrumVoice);

/// Where a new note goes in a pool: a repeated note re-bows a fresh voice and the old one
/// is released to ring; then a free voice, or else the oldest, which must be stolen first
/// (the `bool`).
fn slot_for<V: PooledVoice>(pool: &mut [V], note: NoteId) -> (usize, bool) {
    for voice in pool.iter_mut().filter(|v| v.is_held() && v.note().channel == note.channel && v.note().note == note.note) {
        voice.release();
    }
    match pool.iter().position(|v| v.is_free()) {
        Some(index) => (index, false),
        None => ((0..pool.len()).min_by_key(|&i| pool[i].age()).unwrap_or(0), true),
    }
}

/// Records an ended voice; past the list's capacity the report is dropped (the host then
/// learns of it from the next note on that voice).
fn push_terminated(list: &mut [Option<NoteId>], count: &mut usize, note: NoteId) {
    if *count < list.len() {
        list[*count] = Some(note);
        *count += 1;
    }
}

/// The body an engine starts with: the first model, at rest.
/// A resonator with body model `index`, at rest.
fn designed_body(index: usize, sample_rate_hz: f64) -> BodyResonator {
    let mut body = BodyResonator::new(sample_rate_hz);
    body.set_model(BODIES[index]);
    body
}

/// How long a change of body model crossfades from the old body to the new (s): long enough
/// for the new body's lowest modes to build up (a violin's A0 at 275 Hz with Q 15 rings for
/// about 17 ms), short enough to follow automation.
pub const BODY_CROSSFADE_S: f64 = 0.08;
/// How long a note's level takes to reach the evening of what was heard of it (s): slow
/// enough to be heard as the note settling, not as a swell (80 ms was: a viola scale's first
/// notes on their keys dipped 4 dB and came back).
pub const EVENING_GLIDE_S: f64 = 0.25;

/// How many designed grids the engine keeps: a piano's range at the defaults (the high keys
/// twice, oversampled), and room for the keys a piece plays on other settings.
pub const GRID_CACHE_ENTRIES: usize = 256;
/// The most modes a sample sums for a grid being designed for a note-on that waits: about
/// 4 us, an ordinary sample of sixteen voices. A1 (180 modes below 10 kHz, a few passes)
/// waits about 20 samples the first time it is played on new settings, the lowest MIDI key
/// about 80.
pub const MODES_PER_SAMPLE: usize = 64;

/// A grid a note-on needs: its string's design, its frequency and the rate it runs at.
#[derive(Clone, Copy, Debug)]
struct GridRequest {
    design: NoteStringDesign,
    frequency_hz: f64,
    rate_hz: f64,
}

/// A grid being designed a step at a time.
struct PendingGrid {
    request: GridRequest,
    tuner: rosin_physics::string::tuning::GridTuner,
}

impl PendingGrid {
    fn new(request: GridRequest) -> Self {
        let tuning = request.design.tuning_request(request.frequency_hz, request.rate_hz, crate::voice::MAX_INTERVALS);
        Self { request, tuner: rosin_physics::string::tuning::GridTuner::new(&tuning) }
    }

    fn is_for(&self, other: &GridRequest) -> bool {
        self.request.design.same_to_f32(&other.design) && self.request.frequency_hz == other.frequency_hz && self.request.rate_hz == other.rate_hz
    }
}

/// The most note-ons a sample plays: a chord of sixteen spreads over four samples (a
/// twelfth of a millisecond at 48 kHz). Each steals a voice and tunes a string, about 1.5 us.
pub const NOTE_ONS_PER_SAMPLE: u32 = 4;
/// The keys whose grids a new engine designs ahead: a piano's range.
pub const PREWARMED_KEYS: std::ops::RangeInclusive<u8> = 21..=108;

/// The body goes to rest once it has had no input and rung below this (-160 dB) for
/// [`BODY_REST_S`].
pub const BODY_REST_LEVEL: f64 = 1e-8;
pub const BODY_REST_S: f64 = 0.05;

pub fn db_to_gain(db: f64) -> f64 {
    10f64.powf(db / 20.0)
}

/// The legato modes play the engine's string voices through this.
impl StringPool for Engine {
    fn strings(&mut self) -> &mut [StringVoice] {
        &mut self.voices
    }

    fn controls(&self) -> Controls {
        self.effective_controls()
    }

    fn start_string(&mut self, note: NoteId, velocity: f64, controls: &Controls) {
        self.start_voice(false, note, velocity, controls);
    }

    fn start_open_string(&mut self, index: usize, note: NoteId, open_key: f64, design: NoteStringDesign, controls: &Controls) {
        // The strings are never the oldest voice, so a pad note never steals them.
        self.voices[index].start_open_string(note, open_key, design, u64::MAX, controls, &mut self.grids);
        self.span = self.span.max(index + 1);
    }

    fn steal(&mut self, index: usize) {
        Engine::steal(self, index);
    }

    fn report_ended(&mut self, note: NoteId) {
        Engine::report_ended(self, note);
    }

    fn note_changed(&mut self) {
        self.controls_dirty = true;
    }
}

/// Ticks every sounding string voice one sample, its output into `outputs`, and returns
/// which voices sounded (bit `i` for voice `i`). The voices' bow contacts are solved eight
/// at a time in vector lanes (`FrictionContact::solve_lanes`), which gives each voice the
/// same bits as ticking it alone: a voice does its sample up to its contact, waits for up
/// to seven more to do the same, and goes on once their contacts are solved together. The
/// ribbon bows' contacts are solved two at a time the same way
/// (`BristleContact::solve_pair`, their Newtons in step). In rounds: an oversampled voice
/// (a high note, its string stepped two or four times a sample) takes a step in each round
/// until its last, so its steps after the first are solved beside the other oversampled
/// voices' rather than alone.
#[inline]
fn tick_voices(voices: &mut [StringVoice], rounds: &mut Rounds, lanes: bool) -> u64 {
    const _: () = assert!(MOST_VOICES <= 64, "the sounding voices are one bit each of a u64");
    let mut sounding: u64 = 0;
    // `voices` is the engine's first `span` (at most `MOST_VOICES`). Bounding the loop by
    // `MOST_VOICES` as well (`take`) cost a lone voice 37 instructions a sample.
    for (index, voice) in voices.iter().enumerate() {
        if !voice.is_free() && !voice.is_asleep() {
            sounding |= 1 << index;
        }
    }
    if sounding.count_ones() < 2 || !lanes {
        // One voice or none: nothing to solve beside it, so it ticks whole (which saves
        // keeping its sample's first half for the second). So does every voice without
        // the lanes.
        let mut rest = sounding;
        while rest != 0 {
            let index = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            rounds.outputs[index] = voices[index].tick();
        }
        return sounding;
    }
    tick_in_rounds(voices, rounds, sounding);
    sounding
}

/// [`tick_voices`] for the `sounding` voices (two or more), their contacts in lanes. Not
/// inlined: a call a sample costs less than the code it would add around a lone voice's
/// sample in the engine's loop.
///
/// Compiled for AVX-512 and for AVX2 as well as the baseline, and chosen once at run time
/// (`multiversion`), as the stencil and the body are: the voices' own sample, inlined here,
/// then has the three-operand encodings and, with AVX-512, 32 registers. It performs the
/// same operations in the same order (Rust fuses no multiply-add unasked), so it gives the
/// same bits on every path; `tests/engine.rs` compares it with the voices ticked alone,
/// which the baseline build does. 1 to 3 % less time for the sixty-four, and 1.7 % fewer
/// instructions on its AVX2 path (`docs/performance.md`, *The voices' sample compiled for
/// AVX2 and AVX-512*).
#[inline(never)]
#[multiversion::multiversion(targets("x86_64+avx512f+avx512vl+avx2+fma", "x86_64+avx2+fma"))]
fn tick_in_rounds(voices: &mut [StringVoice], rounds: &mut Rounds, sounding: u64) {
    // The voices waiting for a contact (bit `i` for voice `i`), with their problems.
    let mut waiting = Waiting::default();
    let Rounds { outputs, problems } = rounds;
    let mut rest = sounding;
    while rest != 0 {
        let index = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        record(index, voices[index].tick_begin::<true>(), outputs, problems, &mut waiting);
    }
    // A round takes every waiting voice a step; a voice waits again only for a step left
    // of its oversampling factor (at most `MAX_FACTOR` rounds). The ribbons go in pairs
    // (and a lone one), the point bows in groups of up to `CONTACT_LANES`, in order of
    // index.
    while waiting.ribbons != 0 {
        let mut round = std::mem::take(&mut waiting.ribbons);
        while round != 0 {
            let first = round & round.wrapping_neg();
            round &= round - 1;
            let second = round & round.wrapping_neg();
            round &= round.wrapping_sub(1);
            finish_ribbons(voices, first | second, outputs, problems, &mut waiting);
        }
    }
    while waiting.points != 0 {
        let mut round = std::mem::take(&mut waiting.points);
        while round != 0 {
            let mut group: [Option<(usize, &mut StringVoice)>; CONTACT_LANES] = Default::default();
            let mut inputs = [NO_CONTACT; CONTACT_LANES];
            // The group's voices borrowed one by one from what is left past the last.
            let (mut after, mut offset) = (&mut voices[..], 0);
            for (slot, input) in group.iter_mut().zip(&mut inputs) {
                if round == 0 {
                    break;
                }
                let index = round.trailing_zeros() as usize;
                round &= round - 1;
                let (voice, tail) = std::mem::take(&mut after)[index - offset..].split_first_mut().expect("a sounding voice");
                *input = problems[index];
                *slot = Some((index, voice));
                (after, offset) = (tail, index + 1);
            }
            finish_group(&mut group, &inputs, outputs, problems, &mut waiting);
        }
    }
}

/// Where a voice's sample stands: its output if done, else its next contact problem, and
/// the voice marked waiting.
#[inline(always)]
fn record(index: usize, begun: Begun, outputs: &mut [f64; MOST_VOICES], problems: &mut [ContactInput; MOST_VOICES], waiting: &mut Waiting) {
    match begun {
        Begun::Done(sample) => outputs[index] = sample,
        Begun::Contact(input) => {
            problems[index] = input;
            waiting.points |= 1 << index;
        }
        Begun::Ribbon => waiting.ribbons |= 1 << index,
    }
}

/// What the voices' samples hand the engine and the rounds, kept from sample to sample so
/// that no sample clears it: each sounding voice's output, and each waiting point bow's
/// contact problem (entry `i` for voice `i`). A sample writes the entries of the voices
/// that sound before it reads them, and reads no other.
struct Rounds {
    outputs: [f64; MOST_VOICES],
    problems: [ContactInput; MOST_VOICES],
}

/// The voices waiting for a contact (bit `i` for voice `i`): the point bows' (their
/// problems in [`Rounds`]) and the ribbons' (theirs in the ribbon).
#[derive(Default)]
struct Waiting {
    points: u64,
    ribbons: u64,
}

/// Solves the contacts of the one or two ribbons in `pair` (bits, as [`Waiting`]'s)
/// together, and takes each voice on ([`record`]).
// Always inlined, so that the voices' `tick_end` in it takes `tick_in_rounds`' build.
#[inline(always)]
fn finish_ribbons(voices: &mut [StringVoice], pair: u64, outputs: &mut [f64; MOST_VOICES], problems: &mut [ContactInput; MOST_VOICES], waiting: &mut Waiting) {
    let first = pair.trailing_zeros() as usize;
    let rest = pair & (pair - 1);
    if rest == 0 {
        let contact = voices[first].solve_ribbon();
        record(first, voices[first].tick_end_ribbon(contact), outputs, problems, waiting);
        return;
    }
    let second = rest.trailing_zeros() as usize;
    let (before, after) = voices.split_at_mut(second);
    let (a, b) = (&mut before[first], &mut after[0]);
    let (contact_a, contact_b) = StringVoice::solve_ribbons(a, b);
    record(first, a.tick_end_ribbon(contact_a), outputs, problems, waiting);
    record(second, b.tick_end_ribbon(contact_b), outputs, problems, waiting);
}

/// An empty lane's contact problem.
const NO_CONTACT: ContactInput = ContactInput { free_velocity_mps: 0.0, coupling_s_per_kg: 0.0, normal_force_n: 0.0, time_step_s: 0.0 };

/// Solves the contacts of the voices waiting in `group` (together, or one or two alone),
/// and takes each voice on ([`record`]), emptying the group.
// Always inlined, so that the voices' `tick_end` in it takes `tick_in_rounds`' build.
#[inline(always)]
fn finish_group(group: &mut [Option<(usize, &mut StringVoice)>; CONTACT_LANES], inputs: &[ContactInput; CONTACT_LANES], outputs: &mut [f64; MOST_VOICES], problems: &mut [ContactInput; MOST_VOICES], waiting: &mut Waiting) {
    if group[2].is_none() {
        // One or two contacts are cheaper solved on their own, one after the other, with
        // the same bits: a group runs all its lanes (about 5,000 instructions a group of
        // eight, a scalar solve about 700). Pairs wait in the rounds of the voices at four
        // times the rate: sixteen voices from MIDI 39 to 96 took 2,428 instructions a
        // voice-sample with pairs in lanes and take 2,258, in no more time.
        for (slot, input) in group.iter_mut().zip(inputs).take(2) {
            if let Some((index, voice)) = slot.take() {
                let contact = voice.contact_mut().solve(input);
                record(index, voice.tick_end(contact), outputs, problems, waiting);
            }
        }
        return;
    }
    let mut lanes = group.each_mut().map(|slot| slot.as_mut().map(|(_, voice)| voice.contact_mut()));
    let contacts = FrictionContact::solve_lanes(&mut lanes, inputs);
    for (slot, contact) in group.iter_mut().zip(contacts) {
        if let Some((index, voice)) = slot.take() {
            record(index, voice.tick_end(contact), outputs, problems, waiting);
        }
    }
}

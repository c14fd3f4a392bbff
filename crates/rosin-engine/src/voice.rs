//! One string voice: a bowed string tuned to a MIDI note, with the bow's envelope (press,
//! accelerate, lift), per-sample control ramps, oversampling for high notes, silence
//! detection and recovery from a diverged state.
//!
//! **Pitch while a note sounds** (bend, note tuning, vibrato, glides, a fingered note) is
//! played the way a string player plays it, never by re-building the grid:
//! - above the open string, the stopping finger shortens the vibrating length
//!   (`f = f_open / (1 - x_f / L)`). The wave speed, and with it the scheme's stability
//!   condition `h >= c k`, is untouched, so any upward bend is stable;
//! - below it, the wave speed is lowered (a slackened string). A lower `c` only loosens the
//!   stability condition.
//!
//! Sizing the grid for the highest reachable pitch instead would cost the whole bend range in
//! grid resolution: with MPE's +-48 semitones, a sixteenth of the nodes, or sixteen times
//! oversampling for every note. The finger costs nothing until it is used; its limit is
//! resolution: it stops no closer than [`MIN_STOPPED_INTERVALS`] to the bridge, which on the
//! coarsest grids (32 intervals) is 1.4 octaves above the open string, and more on finer
//! ones. The intonation loop then keeps the bowed pitch on the note.

use crate::controller::gesture::PAD_CHANNEL;
use crate::controls::Controls;
use crate::expression::NoteExpression;
pub use crate::envelope::Phase;
use crate::envelope::{BowEnvelope, SilenceDetector};
use crate::dsp::dc_blocker::DcBlocker;
use crate::dsp::decimator::{Decimator, MAX_FACTOR};
pub use crate::dsp::ramp::{CONTROL_RAMP_S, PITCH_SMOOTHING_S};
use crate::dsp::ramp::LinearRamp;
use crate::dsp::rotor::SineRotor;
use rosin_physics::bow::bowed_string::{BowedString, BowingControls};
use rosin_physics::bow::contact::{FrictionContact, FrictionModel};
use rosin_physics::friction::dupont_contact::{ContactInput, ContactOutput};
use rosin_physics::bow::hifi_contact::ContactSolution;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::string::intonation::Intonation;
use rosin_physics::string::string_set::string_set;
use rosin_physics::string::note_string::{GridCache, NoteStringDesign, REFERENCE_WAVE_SPEED_MPS, WAVE_SPEED_HEADROOM};
use rosin_physics::string::stiff_string::StringMaterial;
use rosin_physics::string::tuning::{midi_key_to_hz, semitones_to_ratio, SchemeGrid};
use rosin_physics::waveguide::reflection::StringLosses;
use rosin_physics::waveguide::WaveguideString;
use crate::ribbon::{BowModel, RibbonBow, RibbonShape};

/// The most grid intervals a voice's string can have (the lowest note at 192 kHz needs
/// about 560).
pub const MAX_INTERVALS: usize = 1024;
/// The format of a voice's finite-difference string levels. f32: AVX2 holds eight nodes to
/// f64's four, so the stencil, the largest part of a voice's sample, takes half the
/// instructions. The bow's contact, its interpolation and the force it spreads are worked in
/// f64 from the nodes. The tests that prove the scheme run it in f64 (the default of
/// [`BowedString`]); `tests/string_format.rs` shows what f32 changes of a voice's pitch,
/// Helmholtz motion and decay, and `docs/performance.md` a phrase's null test.
pub type VoiceSample = f32;
/// Grids coarser than this are run oversampled: a bowed string needs enough nodes for
/// Helmholtz motion to stay in tune.
pub const MIN_BOWED_INTERVALS: usize = 32;

/// Whether a string `grid` designed at `factor` times the rate is too coarse to bow and the
/// next oversampling step is to be designed: the one rule of [`StringVoice::design_grid`] and
/// [`StringVoice::missing_grid`]. The waveguide is tuned by its delays at any rate: it never
/// needs oversampling.
fn needs_finer_grid(engine: StringEngine, grid: &SchemeGrid, factor: usize) -> bool {
    engine == StringEngine::FiniteDifference && grid.intervals < MIN_BOWED_INTERVALS && factor < MAX_FACTOR
}
/// From the bridge force over the string impedance (m/s), with its steady part removed, to
/// full scale: a forte note with default controls peaks near -6 dBFS.
pub const OUTPUT_SCALE: f64 = 0.7;
/// When a note is listened to for the evening, after its note-on or a legato change: once
/// it speaks (most notes are periodic within 100 ms; `tests/phrases.rs`).
pub const LISTEN_AFTER_S: f64 = 0.12;
/// How long after the bow reaches full speed a note is listened to, at the earliest.
pub const LISTEN_SETTLE_S: f64 = 0.05;
/// How many of its periods it is listened to over, and at least how long.
pub const LISTEN_PERIODS: u32 = 8;
pub const LISTEN_MIN_S: f64 = 0.02;
/// The least share of a note's power its harmonics must carry for the evening to go by
/// what was heard (a periodic note's carry 0.95 and more).
pub const MIN_HARMONIC_FRACTION: f64 = 0.8;
/// A string displacement beyond this (metres) means the simulation has diverged.
const DIVERGED_DISPLACEMENT_M: f64 = 0.05;
/// The finger stops the string no closer to the bridge than this many grid intervals, so the
/// bow keeps room and Helmholtz motion stays resolved.
pub const MIN_STOPPED_INTERVALS: f64 = 12.0;
/// The ear settles a note's pitch within about this time, whatever the note: a double
/// bass's E1 (24 ms a period) is corrected by a third of its error each period, where the
/// default share (a tenth) would leave it flat for most of a 0.6 s legato note.
pub const EAR_TIME_CONSTANT_S: f64 = 0.07;
/// The lowest a note may be bent below its open string: four octaves (MPE's full range).
const MIN_WAVE_SPEED_RATIO: f64 = 1.0 / 16.0;
/// A string crossing brings the bow's pressure in over this long (no new attack).
const CROSSING_MS: f64 = 15.0;

/// The waveguide engine's lowest loop frequency (MIDI 0); lower bends stop there.
const WAVEGUIDE_LOWEST_HZ: f64 = 8.0;

/// The string model a voice plays (the `string_engine` control), chosen when a note starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StringEngine {
    /// willemsen2019's finite-difference stiff string.
    #[default]
    FiniteDifference,
    /// serafin1999's digital waveguide: fractional delay lines and lowpass reflections.
    Waveguide,
}

impl StringEngine {
    pub fn from_control(value: f64) -> Self {
        if value >= 0.5 { StringEngine::Waveguide } else { StringEngine::FiniteDifference }
    }
}

/// Which note a voice plays, for matching note-offs and reporting terminations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoteId {
    pub channel: u8,
    pub note: u8,
    pub voice_id: Option<i32>,
}

/// Which voices a note-off or choke applies to; `None` matches anything (CLAP wildcards).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotePattern {
    pub channel: Option<u8>,
    pub note: Option<u8>,
    pub voice_id: Option<i32>,
}

impl NotePattern {
    /// The pattern that matches exactly this note.
    pub fn exact(note: NoteId) -> Self {
        Self { channel: Some(note.channel), note: Some(note.note), voice_id: note.voice_id }
    }

    pub fn matches(&self, voice: &NoteId) -> bool {
        // Notes never reach the pad's own voices.
        if voice.channel >= PAD_CHANNEL {
            return false;
        }
        // A host that names voices matches on the ID alone.
        if let (Some(a), Some(b)) = (self.voice_id, voice.voice_id) {
            return a == b;
        }
        self.channel.is_none_or(|c| c == voice.channel) && self.note.is_none_or(|n| n == voice.note)
    }
}

/// A sample [`StringVoice::tick_begin`] began, or [`StringVoice::tick_end`] went on with.
pub(crate) enum Begun {
    /// Done: the voice's output.
    Done(f64),
    /// Waiting for the bow's contact to be solved.
    Contact(ContactInput),
    /// Waiting for the ribbon bow's contact to be solved (its problem is in the ribbon):
    /// [`StringVoice::solve_ribbons`], then [`StringVoice::tick_end_ribbon`].
    Ribbon,
}

/// No bow on the string.
const NO_BOWING: BowingControls = BowingControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_position: 0.0, finger_position_m: None };

/// What the rest of a sample needs from its beginning.
#[derive(Clone, Copy)]
struct Waiting {
    controls: BowingControls,
    /// The controls as the string gets them (its finger placed to sound stopped where
    /// asked), and the drive, for each step of an oversampled voice.
    on_string: BowingControls,
    drive_n: f64,
    strength: f64,
    speed_ratio: f64,
    /// The string's steps still to take this sample, the one waiting for its contact
    /// included: the oversampling factor at the sample's start.
    steps_left: usize,
    /// The string's `(sigma0, sigma1)`, hand damping included.
    losses: (f64, f64),
    /// The stopping finger's fraction of the length, before the ear's correction.
    finger_fraction: f64,
}

/// What a sample's controls were worked out under, besides the ramps and the envelope,
/// when none of those was moving: while these stay the same, the next sample's controls
/// are the same to the bit, and [`StringVoice::tick_begin`] takes them from [`Waiting`]
/// rather than working them out again ([`StringVoice::work_out_controls`], about 200
/// instructions a sample).
#[derive(Clone, Copy, PartialEq)]
struct HeldControls {
    hand_damping_per_s: f64,
    /// The ear's pitch correction, whose share beyond the wave speed's moves the finger.
    correction: f64,
}

pub struct StringVoice {
    /// The finite-difference string, its levels in f32 (see [`VoiceSample`]).
    bowed: BowedString<VoiceSample>,
    /// The sample begun and waiting for its contact.
    waiting: Waiting,
    /// The last sample's controls hold for the next while these do (see [`HeldControls`]);
    /// `None` when a control, the envelope or the pitch was moving, and after any method
    /// that changes what the controls are worked from (each sets it so first; the drive,
    /// the evening gain and the ear's probe are not among them).
    held: Option<HeldControls>,
    /// Whether `held` is used (the default): off, every sample works its controls out, for
    /// the test that both give the same bits.
    hold_steady_controls: bool,
    /// The waveguide string, bowed through `bowed.bow` when it is the engine.
    waveguide: WaveguideString,
    /// The waveguide has played since its lines were last cleared.
    waveguide_dirty: bool,
    /// The waveguide's loop length must be worked out again: the controls were worked out
    /// (or its note set up), so the stop, the slack or the ear's correction may have moved.
    /// While the controls are held, so is its frequency; working it out each sample cost
    /// about 30 instructions.
    waveguide_pitch_stale: bool,
    engine: StringEngine,
    /// matusiak2025's ribbon bow on the note's string, when it is the bow.
    ribbon: Box<RibbonBow>,
    bow_model: BowModel,
    ribbon_shape: RibbonShape,
    /// The damping scale the waveguide's reflections were last designed for.
    waveguide_damping: f64,
    decimator: Decimator,
    dc_blocker: DcBlocker,
    sample_rate_hz: f64,
    envelope: BowEnvelope,
    pub note: NoteId,
    /// The note's own expressions (note expressions, poly modulation), cleared at note-on.
    pub expression: NoteExpression,
    /// Note-on order; the smallest is the oldest.
    pub age: u64,
    /// The take whose bow noise this voice's notes draw ([`noise_seed`]).
    pub(crate) take: u64,
    velocity: f64,
    force: LinearRamp,
    bow_velocity: LinearRamp,
    position: LinearRamp,
    noise: LinearRamp,
    damping: LinearRamp,
    finger: LinearRamp,
    stiffness: LinearRamp,
    static_friction: LinearRamp,
    dynamic_friction: LinearRamp,
    stribeck: LinearRamp,
    intonation_strength: LinearRamp,
    intonation: Intonation,
    /// The wave speed the tuning solve gave; intonation scales it.
    tuned_wave_speed_mps: f64,
    /// `2 f0 L`, which the grid's losses are designed from.
    nominal_wave_speed_mps: f64,
    /// The open string's period at the rate the string runs at.
    open_period_samples: f64,
    /// `s0` scale for this string: the bristles are as stiff relative to the string's tension
    /// as on the reference string.
    stiffness_scale: f64,
    /// The string set this string was put up from: its weight follows the string a player
    /// would choose for the key it plays (`string_weight`).
    string_set: &'static rosin_physics::string::string_set::StringSet,
    silence: SilenceDetector,
    last_output: f64,
    applied: BowingControls,
    recoveries: u64,
    /// The open string's key; pitch offsets are measured from it (semitones).
    open_key: f64,
    /// The fingered note above the open string (semitones), gliding on legato.
    fingered_st: LinearRamp,
    /// Bend and note tuning (semitones), smoothed.
    bend_st: LinearRamp,
    vibrato_depth_st: LinearRamp,
    /// The vibrato's wave, turned only while it has depth (it holds its phase at 0 depth).
    vibrato: SineRotor,
    /// *Vibrato Delay* (output samples): how long a new note's vibrato waits, then grows in
    /// over as long again.
    vibrato_delay_samples: f64,
    /// `since_start_samples` at the phrase's attack, which the vibrato's delay counts from.
    /// A legato crossing carries over the attack of the string it leaves, which may lie
    /// before this string's own start (then the count is negative).
    vibrato_from_samples: i64,
    /// The finger control's fraction of the length, folded into the pitch.
    pitch_ratio: f64,
    /// The pitch offset of the last sample, vibrato included (semitones from the open key,
    /// before the finger control).
    last_offset_st: f64,
    /// [`StringVoice::next_pitch`]'s last split, for its inputs.
    pitch_split: Option<PitchSplit>,
    /// The string's wave impedance `Z = rho A c`: the bridge force over it is a velocity.
    impedance_kg_per_s: f64,
    design: NoteStringDesign,
    /// Kept sounding (never freed on silence): a string of the four-string instrument.
    keep_alive: bool,
    /// A string kept up (an open string of the four) that has rung down to silence with no
    /// bow on it: it costs nothing until a bow or the bridge wakes it.
    asleep: bool,
    /// How many times the bow was put down from rest (a legato change does not count).
    attacks: u64,
    drive_n: f64,
    /// Samples since the note started, and since it was released (`None` while held).
    since_start_samples: u64,
    /// The most normal force the bow has pressed this string with since it was put up (N):
    /// how far the bow's pull alone may hold it aside (`is_sane`).
    peak_force_n: f64,
    since_release_samples: Option<u64>,
    /// The damping of a player's hand on the string (1/s, added to `sigma0`): a released
    /// note that a legato line has moved on from is stopped from ringing under the next.
    hand_damping_per_s: f64,
    /// The hand damping the waveguide's reflections were last designed for.
    waveguide_hand_damping_per_s: f64,
    /// The Bow Release control (ms).
    release_ms_control: f64,
    /// The bow has crossed to another string (see [`StringVoice::leave_for_another_string`]).
    bow_crossed_away: bool,
    /// The bristle stiffness control the bristles were last solved with.
    stiffness_applied: f64,
    /// The engine's gain on this voice that evens out the body's resonances (ramped).
    evening: LinearRamp,
    /// The body's response at this note's harmonics, kept for the evening gain.
    pub(crate) body_at_harmonics: crate::dsp::evening::BodyAtHarmonics,
    /// Listens to the note's harmonics once it speaks, for the evening.
    probe: crate::dsp::harmonic_probe::HarmonicProbe,
    /// The key and the attack last listened to.
    listened: (f64, u64),
    /// Whether the probe finished at the last sample.
    heard_now: bool,
}

/// The seed of a note's bow noise: the voice kind's `base`, the note's `age` (its order
/// since the engine started or was reset) and the `take` ([`crate::voices::Engine::set_take`]).
/// Take 0 gives every earlier build's noise; another take draws it anew for every note,
/// as another performance of the same phrase would.
pub fn noise_seed(base: u64, age: u64, take: u64) -> u64 {
    base ^ age ^ take.wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// The share of the played force a note's velocity (0 to 1) asks for: 60 % at 0 to 100 % at
/// 1. The friction drum presses with it as it is (its keys were tuned with it); a string
/// with [`velocity_force_share`].
#[inline]
pub fn played_force_share(velocity: f64) -> f64 {
    0.6 + 0.4 * velocity
}

/// The share of *Bow Force* a string's note presses with: [`played_force_share`], but never
/// under [`SOFTEST_FORCE_SHARE`].
#[inline]
pub fn velocity_force_share(velocity: f64) -> f64 {
    played_force_share(velocity).max(SOFTEST_FORCE_SHARE)
}

/// The least share of *Bow Force* a soft note presses with (MIDI velocity 63 and under).
/// Each string preset's force sits inside its strings' Schelleng range at velocity 90; at
/// 60 % of it, as velocity 0 pressed until issue 14's scales at 44.1 kHz were measured,
/// the heavier strings fell under their lower bound at velocity 40: the cello's open C2
/// slipped twice a period for 0.45 s (and read -13.6 cents), the viola's E3 read 0.93, and
/// three notes of the Matusiak string read 7.3 to 16.9 cents off. A player bowing softly
/// keeps the bow on the string with the weight it needs; what a soft note gives up is its
/// attack's speed.
pub const SOFTEST_FORCE_SHARE: f64 = 0.8;

/// A player's hand or lifted finger on a string: it rings down by 60 dB in about 0.17 s
/// (`sigma0`, so every partial alike, and without a click: only the decay rate changes).
pub const HAND_DAMPING_PER_S: f64 = 40.0;
/// A bow that has moved on to the next note leaves a damped string within this long (ms).
pub const HAND_LIFT_MS: f64 = 40.0;
/// How long the hand damps a string the bow has crossed away from: 40/s over 150 ms takes
/// it down 52 dB, and it is then free to ring in sympathy.
pub const HAND_TOUCH_S: f64 = 0.15;

impl StringVoice {
    /// Allocates a voice for `sample_rate_hz`. Nothing allocates after this.
    pub fn new(sample_rate_hz: f64) -> Self {
        let (grid, material) = NoteStringDesign::default().build(440.0, sample_rate_hz, MAX_INTERVALS);
        let ramp = |v: f64| LinearRamp::control(v, sample_rate_hz);
        let c = Controls::default();
        Self {
            bowed: BowedString::with_capacity(MAX_INTERVALS, grid, material, ElastoPlasticParams::default(), 0),
            waveguide: WaveguideString::new(WAVEGUIDE_LOWEST_HZ, sample_rate_hz),
            waveguide_dirty: false,
            waveguide_pitch_stale: true,
            engine: StringEngine::FiniteDifference,
            ribbon: Box::new(RibbonBow::new(grid, material, MAX_INTERVALS)),
            bow_model: BowModel::Point,
            ribbon_shape: RibbonShape { points: 4, torsion: true },
            waveguide_damping: f64::NAN,
            decimator: Decimator::new(1),
            waiting: Waiting { controls: NO_BOWING, on_string: NO_BOWING, drive_n: 0.0, strength: 0.0, speed_ratio: 1.0, steps_left: 0, losses: (0.0, 0.0), finger_fraction: 0.0 },
            held: None,
            hold_steady_controls: true,
            dc_blocker: DcBlocker::new(sample_rate_hz),
            sample_rate_hz,
            envelope: BowEnvelope::default(),
            note: NoteId { channel: 0, note: 69, voice_id: None },
            expression: NoteExpression::default(),
            age: 0,
            take: 0,
            velocity: 1.0,
            force: ramp(c.bow_force_n),
            bow_velocity: ramp(c.bow_velocity_mps),
            position: ramp(c.bow_position),
            noise: ramp(c.noise),
            damping: ramp(c.damping_scale),
            finger: ramp(c.finger_position),
            stiffness: ramp(c.bristle_stiffness_n_per_m),
            static_friction: ramp(c.static_friction),
            dynamic_friction: ramp(c.dynamic_friction),
            stribeck: ramp(c.stribeck_velocity_mps),
            intonation_strength: ramp(c.intonation_percent / 100.0),
            intonation: Intonation::new(100.0),
            tuned_wave_speed_mps: grid.wave_speed_mps,
            nominal_wave_speed_mps: grid.wave_speed_mps,
            open_period_samples: sample_rate_hz / 440.0,
            stiffness_scale: 1.0,
            string_set: string_set(0.0),
            silence: SilenceDetector::new(sample_rate_hz),
            last_output: 0.0,
            applied: BowingControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_position: c.bow_position, finger_position_m: None },
            recoveries: 0,
            open_key: 69.0,
            fingered_st: LinearRamp::new(0.0, 1),
            bend_st: LinearRamp::pitch_smoother(sample_rate_hz),
            vibrato_depth_st: ramp(0.0),
            vibrato: SineRotor::default(),
            vibrato_delay_samples: 0.0,
            vibrato_from_samples: 0,
            pitch_ratio: 1.0,
            last_offset_st: 0.0,
            pitch_split: None,
            impedance_kg_per_s: NoteStringDesign::default().impedance_kg_per_s,
            design: NoteStringDesign::default(),
            keep_alive: false,
            asleep: false,
            attacks: 0,
            drive_n: 0.0,
            since_start_samples: 0,
            peak_force_n: 0.0,
            since_release_samples: None,
            hand_damping_per_s: 0.0,
            waveguide_hand_damping_per_s: 0.0,
            release_ms_control: c.bow_release_ms,
            bow_crossed_away: false,
            stiffness_applied: 0.0,
            evening: ramp(1.0),
            body_at_harmonics: crate::dsp::evening::BodyAtHarmonics::default(),
            probe: crate::dsp::harmonic_probe::HarmonicProbe::default(),
            listened: (f64::NAN, 0),
            heard_now: false,
        }
    }

    pub fn phase(&self) -> Phase {
        self.envelope.phase()
    }

    pub fn is_free(&self) -> bool {
        self.phase() == Phase::Free
    }

    /// Whether the bow is down for a held note (not yet released).
    pub fn is_held(&self) -> bool {
        self.phase() == Phase::Bowing
    }

    /// Whether the bow still touches the string: held, or lifting after a note-off. A note
    /// that arrives then continues the stroke (a DAW often sends a legato line's note-off
    /// just before the next note-on).
    pub fn is_bow_on_string(&self) -> bool {
        self.envelope.is_on_string()
    }

    /// The damping a player's hand adds now (1/s): 0 unless it is stopping the string.
    pub fn hand_damping_per_s(&self) -> f64 {
        self.hand_damping_per_s
    }

    /// What the bow is doing, for the editor.
    pub fn bow_state(&self) -> crate::view::meter::BowState {
        crate::view::meter::BowState::of(self.phase(), self.envelope.pressure(), self.envelope.speed())
    }

    /// How loud the voice is now: its output's peak over the last 50 to 100 ms.
    pub fn recent_peak(&self) -> f64 {
        self.silence.recent_peak()
    }

    /// The bow's contact at the last sample, for the lab view.
    #[inline]
    pub fn contact_probe(&self) -> crate::view::probe::ContactProbe {
        if self.bow_model == BowModel::Ribbon {
            let relative = self.ribbon.relative_velocity_mps();
            return crate::view::probe::ContactProbe {
                force_n: self.ribbon.force_n(),
                law_velocity_mps: relative,
                bow_point_velocity_mps: relative + self.applied.bow_velocity_mps,
                bow_velocity_mps: self.applied.bow_velocity_mps,
                normal_force_n: self.applied.normal_force_n,
            };
        }
        let contact = if self.engine == StringEngine::FiniteDifference { self.bowed.last_contact() } else { self.waveguide.last_contact() };
        crate::view::probe::ContactProbe {
            force_n: contact.force_n,
            law_velocity_mps: self.bowed.bow.interface_velocity_mps(),
            bow_point_velocity_mps: contact.relative_velocity_mps + self.applied.bow_velocity_mps,
            bow_velocity_mps: self.applied.bow_velocity_mps,
            normal_force_n: self.applied.normal_force_n,
        }
    }

    /// The friction controls the bow reads now (every law reads them).
    pub fn friction_params(&self) -> &rosin_physics::friction::dupont::ElastoPlasticParams {
        &self.bowed.bow.friction
    }

    /// The waveguide string, which sounds when [`Self::string_engine`] is the waveguide.
    pub fn waveguide(&self) -> &WaveguideString {
        &self.waveguide
    }

    pub fn bowed_string(&self) -> &BowedString<VoiceSample> {
        &self.bowed
    }

    pub fn oversampling(&self) -> usize {
        self.decimator.factor()
    }

    pub fn last_output(&self) -> f64 {
        self.last_output
    }

    /// The pitch tracker (its slip count shows whether the string is in Helmholtz motion).
    pub fn intonation(&self) -> &Intonation {
        &self.intonation
    }

    /// The bowing controls applied at the last sample, after ramps and envelopes. The finger
    /// is where the string sounds stopped (see [`rosin_physics::string::stiff_string::StiffString::finger_for_stop_m`]).
    pub fn applied_controls(&self) -> &BowingControls {
        &self.applied
    }

    /// The damping scale applied at the last sample.
    pub fn applied_damping_scale(&self) -> f64 {
        self.damping.value()
    }

    /// How often this voice had to be recovered from a diverged state.
    pub fn recoveries(&self) -> u64 {
        self.recoveries
    }

    /// Starts a note: tunes a fresh string to it (from the string set the controls name)
    /// and puts the bow down.
    pub fn start(&mut self, note: NoteId, velocity: f64, age: u64, controls: &Controls, grids: &mut GridCache) {
        self.held = None;
        self.expression = NoteExpression::default();
        let key = note.note as f64;
        let set = string_set(controls.string_set);
        let design = set.note_design(key, controls.string_stiffness, controls.damping_scale);
        self.string_set = set;
        self.age = age;
        self.engine = StringEngine::from_control(controls.string_engine);
        self.choose_bow(controls);
        self.tune(key, design, grids);
        self.choose_friction(controls);
        self.note = note;
        self.velocity = velocity.clamp(0.0, 1.0);
        // A fresh string at rest: the bow starts from the air.
        self.envelope.free();
        self.envelope.start(self.velocity, controls.bow_attack_ms, controls.bow_release_ms, self.sample_rate_hz);
        self.attacks += 1;
        self.snap_controls(controls);
    }

    /// Tunes a fresh string at rest to `open_key` with `design`, with no bow on it, kept
    /// sounding so that it can ring in sympathy: an open string of the four-string
    /// instrument.
    pub fn start_open_string(&mut self, note: NoteId, open_key: f64, design: NoteStringDesign, age: u64, controls: &Controls, grids: &mut GridCache) {
        self.held = None;
        self.string_set = string_set(controls.string_set);
        self.age = age;
        self.engine = StringEngine::from_control(controls.string_engine);
        self.choose_bow(controls);
        self.tune(open_key, design, grids);
        self.choose_friction(controls);
        self.note = note;
        self.velocity = 1.0;
        self.envelope.free();
        self.envelope.start(1.0, controls.bow_attack_ms, controls.bow_release_ms, self.sample_rate_hz);
        self.envelope.release_now();
        self.keep_alive = true;
        // Put up at rest, it sleeps until a bow or the bridge wakes it.
        self.asleep = true;
        self.snap_controls(controls);
    }

    /// Puts the bow down on a string that is already sounding (four-string mode): from rest
    /// with a full attack, or mid-stroke (`legato`) with only the pressure coming in.
    pub fn bow(&mut self, velocity: f64, legato: bool, controls: &Controls) {
        self.held = None;
        self.velocity = velocity.clamp(0.0, 1.0);
        self.since_release_samples = None;
        self.hand_damping_per_s = 0.0;
        self.bow_crossed_away = false;
        self.asleep = false;
        if legato {
            // The phrase's vibrato goes on as it was (see `continue_vibrato` for a crossing).
            self.envelope.start_crossing(CROSSING_MS, controls.bow_release_ms, self.sample_rate_hz);
        } else {
            self.vibrato_from_samples = self.since_start_samples as i64;
            // The bow comes down from the air: the moment a new friction model can take over
            // without a click.
            if self.envelope.pressure() == 0.0 {
                self.choose_friction(controls);
            }
            self.envelope.start(self.velocity, controls.bow_attack_ms, controls.bow_release_ms, self.sample_rate_hz);
            self.attacks += 1;
        }
    }

    /// Puts the bow's contact under the friction model the controls name. Only called with
    /// the bow off the string: the contact starts from rest.
    fn choose_friction(&mut self, controls: &Controls) {
        let model = FrictionModel::from_index(controls.friction_model.round().max(0.0) as usize);
        if model != self.bowed.bow.model() {
            self.bowed.bow.set_model(model);
        }
    }

    /// The bow model and the ribbon's shape, for the next note (the ribbon bows the
    /// finite-difference string only: on the waveguide the point bow plays).
    fn choose_bow(&mut self, controls: &Controls) {
        self.bow_model = if self.engine == StringEngine::FiniteDifference { BowModel::from_control(controls.bow_model) } else { BowModel::Point };
        self.ribbon_shape = RibbonShape::from_controls(controls);
    }

    /// See [`crate::voices::Engine::set_hold_steady_controls`].
    pub fn set_hold_steady_controls(&mut self, on: bool) {
        self.held = None;
        self.hold_steady_controls = on;
    }

    /// The bow this voice plays with.
    pub fn bow_model(&self) -> BowModel {
        self.bow_model
    }

    /// The ribbon bow and its string (sounding when [`Self::bow_model`] is the ribbon).
    pub fn ribbon(&self) -> &RibbonBow {
        &self.ribbon
    }

    /// For tests of the energy balance through the voice: the ribbon's string and power
    /// terms, mutable.
    #[doc(hidden)]
    pub fn ribbon_mut(&mut self) -> &mut RibbonBow {
        self.held = None;
        &mut self.ribbon
    }

    /// The string model this voice plays.
    pub fn string_engine(&self) -> StringEngine {
        self.engine
    }

    /// The friction model the bow follows.
    pub fn friction_model(&self) -> FrictionModel {
        self.bowed.bow.model()
    }

    /// The grid, material and oversampling factor that play `key` with `design` on `engine`
    /// at `sample_rate_hz`, through `grids`.
    pub fn design_grid(key: f64, design: &NoteStringDesign, engine: StringEngine, sample_rate_hz: f64, grids: &mut GridCache) -> (SchemeGrid, StringMaterial, usize) {
        let frequency_hz = midi_key_to_hz(key);
        let mut factor = 1;
        let (mut grid, mut material) = grids.build(design, frequency_hz, sample_rate_hz, MAX_INTERVALS);
        while needs_finer_grid(engine, &grid, factor) {
            factor *= 2;
            (grid, material) = grids.build(design, frequency_hz, sample_rate_hz * factor as f64, MAX_INTERVALS);
        }
        (grid, material, factor)
    }

    /// The first grid [`StringVoice::design_grid`] would have to design for this note (the
    /// rate it runs at), or `None` when every grid it needs is kept: the same steps, looked
    /// up only.
    pub fn missing_grid(key: f64, design: &NoteStringDesign, engine: StringEngine, sample_rate_hz: f64, grids: &GridCache) -> Option<f64> {
        let frequency_hz = midi_key_to_hz(key);
        let mut factor = 1;
        loop {
            let rate = sample_rate_hz * factor as f64;
            let Some((grid, _)) = grids.find(design, frequency_hz, rate, MAX_INTERVALS) else {
                return Some(rate);
            };
            if !needs_finer_grid(engine, &grid, factor) {
                return None;
            }
            factor *= 2;
        }
    }

    fn tune(&mut self, key: f64, design: NoteStringDesign, grids: &mut GridCache) {
        let frequency_hz = midi_key_to_hz(key);
        let (grid, material, factor) = Self::design_grid(key, &design, self.engine, self.sample_rate_hz, grids);
        let nominal_c = design.nominal_wave_speed_mps(frequency_hz);
        // The bristles are as stiff relative to the string's tension as on the reference
        // string, never softer than the control says.
        let tension_ratio = design.impedance_kg_per_s * nominal_c / (NoteStringDesign::default().impedance_kg_per_s * REFERENCE_WAVE_SPEED_MPS);
        self.stiffness_scale = tension_ratio.max(1.0);
        // The noise sequence depends only on the note's order and the take, so a reset
        // replays exactly.
        self.bowed.configure(grid, material, noise_seed(0x9E37_79B9_7F4A_7C15, self.age, self.take));
        if self.bow_model == BowModel::Ribbon && !self.ribbon.configure(grid, material, self.ribbon_shape, self.bowed.bow.friction) {
            // Never for grids the voice designs; the point bow plays if it happens.
            self.bow_model = BowModel::Point;
        }
        self.tuned_wave_speed_mps = grid.wave_speed_mps;
        self.clear_waveguide();
        self.waveguide.set_impedance_kg_per_s(design.impedance_kg_per_s);
        self.waveguide.set_frequency_hz(frequency_hz);
        self.waveguide_pitch_stale = true;
        self.waveguide_damping = f64::NAN;
        self.nominal_wave_speed_mps = nominal_c;
        self.impedance_kg_per_s = design.impedance_kg_per_s;
        self.design = design;
        self.open_key = key;
        self.open_period_samples = self.sample_rate_hz * factor as f64 / frequency_hz;
        self.intonation = Intonation::new(self.open_period_samples).with_time_constant(EAR_TIME_CONSTANT_S * self.sample_rate_hz * factor as f64);
        if self.decimator.factor() != factor {
            self.decimator = Decimator::new(factor);
        } else {
            self.decimator.reset();
        }
        self.dc_blocker.reset();
        self.fingered_st.snap(0.0);
        self.bend_st.snap(0.0);
        self.vibrato_depth_st.snap(0.0);
        self.vibrato.reset();
        self.keep_alive = false;
        self.drive_n = 0.0;
        self.since_start_samples = 0;
        self.vibrato_from_samples = 0;
        self.peak_force_n = 0.0;
        self.since_release_samples = None;
        self.hand_damping_per_s = 0.0;
        self.bow_crossed_away = false;
        self.asleep = false;
        self.silence.reset();
        self.last_output = 0.0;
    }

    /// The open string's key.
    pub fn open_key(&self) -> f64 {
        self.open_key
    }

    /// Fingers `semitones` above the open string, sliding there over `glide_s` (0: at once).
    pub fn finger_note(&mut self, semitones: f64, glide_s: f64) {
        self.held = None;
        let samples = (glide_s * self.sample_rate_hz).round() as u32;
        if samples == 0 {
            self.fingered_st.snap(semitones);
        } else {
            self.fingered_st.glide_to(semitones, samples);
        }
    }

    /// The fingered offset's target (semitones above the open string).
    pub fn fingered_semitones(&self) -> f64 {
        self.fingered_st.target()
    }

    /// Bend plus note tuning (semitones), smoothed over [`PITCH_SMOOTHING_S`].
    pub fn set_bend(&mut self, semitones: f64) {
        self.held = None;
        self.bend_st.set_bend_target(semitones);
    }

    /// Vibrato of `depth_cents` (peak) at `rate_hz`; a new note's waits `delay_ms`, then
    /// grows in over as long again ([`StringVoice::vibrato_onset`]).
    pub fn set_vibrato(&mut self, depth_cents: f64, rate_hz: f64, delay_ms: f64) {
        self.held = None;
        self.vibrato_depth_st.set_target((depth_cents / 100.0).clamp(0.0, 2.0));
        self.vibrato.set_step_rad(std::f64::consts::TAU * rate_hz.clamp(0.0, 20.0) / self.sample_rate_hz);
        // NaN and negatives are no delay.
        self.vibrato_delay_samples = if delay_ms > 0.0 { delay_ms.min(1000.0) * 1e-3 * self.sample_rate_hz } else { 0.0 };
    }

    /// How far a note's vibrato has grown in, 0 to 1: nothing for *Vibrato Delay* after the
    /// note's attack (a new string's, or the bow put down on a sounding one in Four Strings),
    /// then in a straight line over as long again; 1 with no delay. A legato note goes on
    /// with the phrase's vibrato, and a crossing to another string carries it over
    /// ([`StringVoice::continue_vibrato`]). A player's vibrato starts once the string
    /// speaks, and so the bow's attack is left alone: with the vibrato at once, the viola's
    /// D3 in Poly at velocity 90 locked into three slips a period for the whole note in 2
    /// of 20 takes, and in none with the string presets' 150 ms (`docs/physics.md`,
    /// *Takes*).
    fn vibrato_onset(&self) -> f64 {
        if self.vibrato_delay_samples <= 0.0 {
            return 1.0;
        }
        let since = self.since_vibrato_attack_samples() as f64;
        ((since - self.vibrato_delay_samples) / self.vibrato_delay_samples).clamp(0.0, 1.0)
    }

    /// Output samples since the attack that this string's vibrato delay counts from.
    pub fn since_vibrato_attack_samples(&self) -> i64 {
        self.since_start_samples as i64 - self.vibrato_from_samples
    }

    /// A legato crossing onto this string from one whose attack was
    /// `since_attack_samples` ago: the phrase's vibrato goes on where it was, still waiting or
    /// growing in if it was, rather than starting at once or over.
    pub fn continue_vibrato(&mut self, since_attack_samples: i64) {
        self.vibrato_from_samples = self.since_start_samples as i64 - since_attack_samples;
    }

    /// The gain the engine mixes this voice with, evening out the body's resonances (see
    /// `voices::evening_gain`): ramped there over the control ramp.
    pub fn set_evening_gain(&mut self, gain: f64) {
        self.evening.set_target(gain);
    }

    /// The same, gliding there over `samples` (a change of body, which crossfades).
    pub fn glide_evening_gain(&mut self, gain: f64, samples: u32) {
        self.evening.glide_to(gain, samples);
    }

    /// The evening gain, advanced one sample.
    #[inline]
    pub fn next_evening_gain(&mut self) -> f64 {
        self.evening.next()
    }

    /// The evening gain applied at the last sample.
    pub fn evening_gain(&self) -> f64 {
        self.evening.value()
    }

    /// A force reaching this string through the bridge for the next sample (N).
    pub fn drive(&mut self, force_n: f64) {
        self.drive_n = if force_n.is_finite() { force_n } else { 0.0 };
        if self.drive_n != 0.0 {
            self.asleep = false;
        }
    }

    /// Whether the string has rung down and sleeps (see [`StringVoice::tick`]).
    pub fn is_asleep(&self) -> bool {
        self.asleep
    }

    /// The string's last force on the bridge (N), before any output scaling.
    pub fn bridge_force_n(&self) -> f64 {
        self.decimator.output()
    }

    /// How many times the bow was put down from rest on this voice.
    pub fn attacks(&self) -> u64 {
        self.attacks
    }

    /// The pitch the voice aims at now, as a MIDI key (open key, finger, bend, no vibrato).
    pub fn target_key(&self) -> f64 {
        self.open_key + self.fingered_st.value() + self.bend_st.value() + 12.0 * self.pitch_ratio.log2()
    }

    /// The key the voice is going to: [`StringVoice::target_key`] with a legato glide
    /// already arrived. A legato note is evened and listened to at this key.
    pub fn destination_key(&self) -> f64 {
        self.target_key() + self.fingered_st.target() - self.fingered_st.value()
    }

    /// The key sounding at the last sample, vibrato included.
    pub fn sounding_key(&self) -> f64 {
        self.open_key + self.last_offset_st + 12.0 * self.pitch_ratio.log2()
    }

    /// The string's wave impedance (kg/s).
    pub fn impedance_kg_per_s(&self) -> f64 {
        self.impedance_kg_per_s
    }

    /// The Bow Force control, weighted for the string of its set a player would choose for
    /// the key this voice plays (`string_weight`): in Four Strings the voice's own string; in
    /// Mono Legato, where one string glides over the whole range, the string the line has
    /// reached, so a high note stopped on a heavy string is bowed as lightly as it was.
    fn weighted_force_n(&self, c: &Controls) -> f64 {
        // The key the finger is going to (a legato note's glide has only begun when the
        // engine hands the voice its controls again).
        let ratio = crate::string_weight::impedance_ratio(self.string_set, self.open_key + self.fingered_st.target());
        c.bow_force_n * crate::string_weight::force_factor(ratio, c.string_weight_percent)
    }

    fn snap_controls(&mut self, c: &Controls) {
        self.force.snap(self.weighted_force_n(c));
        self.bow_velocity.snap(c.bow_velocity_mps);
        self.position.snap(c.bow_position);
        self.noise.snap(c.noise);
        self.damping.snap(c.damping_scale);
        self.finger.snap(c.finger_position);
        self.stiffness.snap(c.bristle_stiffness_n_per_m);
        self.static_friction.snap(c.static_friction);
        self.dynamic_friction.snap(c.dynamic_friction);
        self.stribeck.snap(c.stribeck_velocity_mps);
        self.intonation_strength.snap(c.intonation_percent / 100.0);
        self.silence.reset();
        self.last_output = 0.0;
    }

    /// New control targets; each ramps there over [`CONTROL_RAMP_S`].
    pub fn set_controls(&mut self, c: &Controls) {
        self.held = None;
        self.force.set_target(self.weighted_force_n(c));
        self.bow_velocity.set_target(c.bow_velocity_mps);
        self.position.set_target(c.bow_position);
        self.noise.set_target(c.noise);
        self.damping.set_target(c.damping_scale);
        self.finger.set_target(c.finger_position);
        self.stiffness.set_target(c.bristle_stiffness_n_per_m);
        self.static_friction.set_target(c.static_friction);
        self.dynamic_friction.set_target(c.dynamic_friction);
        self.stribeck.set_target(c.stribeck_velocity_mps);
        self.intonation_strength.set_target(c.intonation_percent / 100.0);
        self.release_ms_control = c.bow_release_ms;
        self.envelope.set_release(self.release_ms(c.bow_release_ms), self.sample_rate_hz);
    }

    /// Note-off: the bow slows down and lifts off.
    pub fn release(&mut self) {
        self.held = None;
        self.envelope.release();
        self.since_release_samples.get_or_insert(0);
    }

    /// The bow crosses to another string: it leaves this one within [`HAND_LIFT_MS`] (not
    /// the release control's time, which is for a bow lifting at a phrase's end), and the
    /// hand touches the string quiet over [`HAND_TOUCH_S`], then lets it ring again in
    /// sympathy with the others. A bow left on it for a long release went on sounding the
    /// old note under the new one, at a falling force that passes below Schelleng's least;
    /// an undamped stopped string rang under the next notes, and where one of its partials
    /// met one of theirs (a double bass's B1 under C#2) the next note was heard raucous.
    pub fn leave_for_another_string(&mut self) {
        self.release();
        self.bow_crossed_away = true;
        self.damp_by_hand();
    }

    /// A player's hand stops the string ringing ([`HAND_DAMPING_PER_S`]), and the bow, gone
    /// to the next note, leaves it within [`HAND_LIFT_MS`].
    pub fn damp_by_hand(&mut self) {
        self.held = None;
        self.hand_damping_per_s = HAND_DAMPING_PER_S;
        self.envelope.set_release(self.release_ms(self.release_ms_control), self.sample_rate_hz);
    }

    /// The bow's release time: the control's, or a quick lift once the hand has damped the
    /// string or the bow has crossed to another.
    fn release_ms(&self, control_ms: f64) -> f64 {
        if self.hand_damping_per_s > 0.0 || self.bow_crossed_away {
            control_ms.min(HAND_LIFT_MS)
        } else {
            control_ms
        }
    }

    /// Seconds since the note started.
    pub fn sounding_s(&self) -> f64 {
        self.since_start_samples as f64 / self.sample_rate_hz
    }

    /// Seconds since the note was released, `None` while it is held.
    pub fn released_s(&self) -> Option<f64> {
        self.since_release_samples.map(|n| n as f64 / self.sample_rate_hz)
    }

    #[doc(hidden)]
    pub fn corrupt_for_test(&mut self) {
        self.held = None;
        let n = self.bowed.string.intervals();
        let mut shape = vec![0.0; n + 1];
        shape[n / 2] = f64::NAN;
        self.bowed.string.set_state(&shape, &shape);
    }

    /// Bends the string into its first mode, `metres` aside at its middle, at rest: a smooth
    /// shape whose bridge force stays finite and moderate, so only the displacement check
    /// (`is_sane`) can tell such a runaway string from a sounding one.
    #[doc(hidden)]
    pub fn displace_for_test(&mut self, metres: f64) {
        self.held = None;
        let n = self.bowed.string.intervals();
        let shape: Vec<f64> = (0..=n).map(|i| metres * (std::f64::consts::PI * i as f64 / n as f64).sin()).collect();
        self.bowed.string.set_state(&shape, &shape);
    }

    /// Silences and frees the voice at once.
    pub fn kill(&mut self) {
        self.held = None;
        self.keep_alive = false;
        self.evening.snap(1.0);
        // The next note takes its key's response, and what was heard of it, from the
        // engine's cache, which a reset empties of what was heard.
        self.body_at_harmonics = crate::dsp::evening::BodyAtHarmonics::default();
        self.probe.stop();
        self.listened = (f64::NAN, 0);
        self.heard_now = false;
        self.envelope.free();
        self.bowed.string.reset();
        if self.bow_model == BowModel::Ribbon {
            self.ribbon.reset();
        }
        self.clear_waveguide();
        self.decimator.reset();
        self.dc_blocker.reset();
        self.last_output = 0.0;
    }

    /// Clears the waveguide's delay lines, only if it has played since they were last
    /// cleared: they are sized for the lowest note at the rate (512 kB at 192 kHz), and a
    /// finite-difference voice never touches them.
    fn clear_waveguide(&mut self) {
        if self.waveguide_dirty {
            self.waveguide.reset();
            self.waveguide_dirty = false;
        }
    }

    /// Renders one host sample, before the output gain. A string asleep renders silence
    /// at no cost.
    #[inline]
    pub fn tick(&mut self) -> f64 {
        let mut begun = self.tick_begin::<false>();
        // At most the oversampling factor's steps, each ending the step before.
        loop {
            match begun {
                Begun::Done(output) => return output,
                Begun::Contact(input) => {
                    let contact = self.bowed.bow.solve(&input);
                    begun = self.tick_end(contact);
                }
                // (`tick_begin::<false>` ends a ribbon's sample itself.)
                Begun::Ribbon => return self.ribbon_sample_alone(),
            }
        }
    }

    /// The bow's contact of the sample [`StringVoice::tick_begin`] left waiting.
    pub(crate) fn contact_mut(&mut self) -> &mut FrictionContact {
        &mut self.bowed.bow
    }

    /// Begins a sample: everything up to the bow's contact. A finite-difference string
    /// bowed by the point bow returns the contact problem of its first step (of one, or of
    /// the oversampling factor's), to be solved (alone, or beside other voices' in vector
    /// lanes) and handed to [`StringVoice::tick_end`]; one bowed by the ribbon begins its
    /// first step, whose contact is solved (alone, or beside another voice's ribbon:
    /// [`StringVoice::solve_ribbons`]) and handed to [`StringVoice::tick_end_ribbon`]; a
    /// waveguide does the whole sample here.
    ///
    /// `PAIRED` says whether the caller pairs the ribbons' contacts: without, a ribbon's
    /// sample is done here whole, alone ([`StringVoice::ribbon_sample_alone`]), so that a
    /// lone voice's loop keeps only the point bow's path.
    #[inline(always)]
    pub(crate) fn tick_begin<const PAIRED: bool>(&mut self) -> Begun {
        if self.is_free() || self.asleep {
            return Begun::Done(0.0);
        }
        self.envelope.advance();
        self.since_start_samples += 1;
        if let Some(n) = &mut self.since_release_samples {
            *n += 1;
            if self.bow_crossed_away && *n as f64 >= HAND_TOUCH_S * self.sample_rate_hz {
                self.hand_damping_per_s = 0.0;
            }
        }
        // The controls are worked out again unless nothing they come from has moved, when
        // the last sample's stand.
        let held = HeldControls { hand_damping_per_s: self.hand_damping_per_s, correction: self.intonation.correction() };
        if self.held != Some(held) {
            self.work_out_controls(held);
        }
        let drive = self.next_drive_n();
        self.waiting.drive_n = drive;
        self.waiting.steps_left = self.decimator.factor();
        if self.engine == StringEngine::FiniteDifference && self.bow_model != BowModel::Ribbon {
            // The point bow's string (most voices): its contact is solved by the caller,
            // beside other voices' where there are, and it reads none of the copy below.
            return Begun::Contact(self.bowed.begin_driven(&self.waiting.on_string, drive));
        }
        if self.bow_model == BowModel::Ribbon {
            // The ribbon's contact is solved by the caller too, beside another voice's
            // ribbon where there is one.
            self.ribbon.begin(&self.waiting.on_string, self.waiting.losses, &self.bowed.bow.friction, drive);
            if !PAIRED {
                return Begun::Done(self.ribbon_sample_alone());
            }
            return Begun::Ribbon;
        }
        // The waveguide's pitch is its loop length: the stopped and slackened string's
        // frequency, with the ear's correction.
        if self.waveguide_pitch_stale {
            self.waveguide_pitch_stale = false;
            let open_hz = self.sample_rate_hz / self.open_period_samples;
            let Waiting { speed_ratio, finger_fraction, .. } = self.waiting;
            self.waveguide.set_frequency_hz(open_hz * speed_ratio / (1.0 - finger_fraction) * self.intonation.correction());
        }
        let bow = &mut self.bowed.bow;
        self.waveguide_dirty = true;
        let bridge_force = self.waveguide.tick_with(&self.waiting.controls, drive, |input| bow.solve(input));
        self.decimator.push(bridge_force);
        self.intonation.observe(self.waveguide.last_contact().relative_velocity_mps, self.waiting.controls.bow_velocity_mps, self.waiting.strength);
        Begun::Done(self.tick_output(self.waiting.controls))
    }

    /// Advances the controls a sample and works out from them what the string, its losses
    /// and the bow's friction take this sample, into [`Waiting`] (but its drive and steps);
    /// `held` is what they are worked out under besides the ramps and the envelope, kept
    /// while none of those moves (see [`HeldControls`]).
    // Most samples hold their controls and skip this: out of line, it keeps the voices'
    // loop small.
    #[inline(never)]
    fn work_out_controls(&mut self, held: HeldControls) {
        let damping = self.damping.next();
        let grid = *self.bowed.string.grid();
        // Losses follow the note's nominal wave speed, exactly as the grid was designed for,
        // never the intonation-corrected one, so the stability margin for the largest
        // damping holds.
        let (sigma0, sigma1) = self.design.losses_at(self.nominal_wave_speed_mps, damping);
        let sigma0 = sigma0 + self.hand_damping_per_s;
        if self.engine == StringEngine::FiniteDifference {
            self.bowed.string.set_losses(sigma0, sigma1);
        } else if damping != self.waveguide_damping || self.hand_damping_per_s != self.waveguide_hand_damping_per_s {
            // The same loss per frequency as the finite-difference string of this note.
            self.waveguide.set_losses(StringLosses { sigma0_per_s: sigma0, sigma1_m2_per_s: sigma1, loss_wave_speed_mps: self.nominal_wave_speed_mps, damping_scale: 1.0 });
            self.waveguide_damping = damping;
            self.waveguide_hand_damping_per_s = self.hand_damping_per_s;
        }

        let (finger_fraction, speed_ratio) = self.next_pitch(grid.intervals as f64);
        // The bristles stay as stiff relative to the string under the bow as on the open
        // string: a stopped string is stiffer there in proportion to its shorter length.
        let stiffness_control = self.stiffness.next();
        if stiffness_control != self.stiffness_applied {
            // Automated: the bristles keep the force they hold (see `rescale_bristles`).
            if self.stiffness_applied > 0.0 {
                self.bowed.bow.rescale_bristles(self.stiffness_applied, stiffness_control);
            }
            self.stiffness_applied = stiffness_control;
        }
        let friction = &mut self.bowed.bow.friction;
        let s0 = stiffness_control * self.stiffness_scale / (1.0 - finger_fraction);
        friction.bristle_stiffness_n_per_m = s0;
        friction.bristle_damping_kg_per_s = 0.001 * s0.sqrt();
        friction.static_coefficient = self.static_friction.next();
        friction.coulomb_coefficient = self.dynamic_friction.next().min(friction.static_coefficient);
        friction.stribeck_velocity_mps = self.stribeck.next();
        friction.noise_per_normal_force = self.noise.next();

        let force = self.force.next() * self.envelope.pressure() * velocity_force_share(self.velocity);
        self.peak_force_n = self.peak_force_n.max(force);
        let controls = BowingControls {
            normal_force_n: force,
            bow_velocity_mps: self.bow_velocity.next() * self.envelope.speed(),
            bow_position: self.position.next(),
            finger_position_m: (finger_fraction > 0.0).then_some(finger_fraction * grid.length_m),
        };
        // The ear's correction goes on the wave speed as far as the grid allows; the rest
        // moves the finger, as a player's does (on an open string, a touch near the nut).
        let (_, finger_correction) = split_correction(held.correction);
        let stop_fraction = corrected_stop_fraction(finger_fraction, finger_correction, grid.intervals as f64);
        // The string gets eq. 23's finger placed so that it sounds stopped where asked.
        let on_string = BowingControls { finger_position_m: (stop_fraction > 0.0).then(|| self.bowed.string.finger_for_stop_m(stop_fraction * grid.length_m)), ..controls };
        let strength = self.intonation_strength.next();
        // A stopped string's period is shorter in proportion to its vibrating length; a
        // slackened one longer in proportion to its wave speed.
        self.intonation.set_target_period(self.open_period_samples * (1.0 - finger_fraction) / speed_ratio);
        self.waiting = Waiting { controls, on_string, drive_n: 0.0, strength, speed_ratio, steps_left: 0, losses: (sigma0, sigma1), finger_fraction };
        self.waveguide_pitch_stale = true;
        self.held = (self.hold_steady_controls && self.controls_are_steady()).then_some(held);
    }

    /// The force another string's vibration drives this one with at this sample (none
    /// while the bow is on it), taken.
    #[inline(always)]
    fn next_drive_n(&mut self) -> f64 {
        let drive = if self.envelope.phase() == Phase::Bowing { 0.0 } else { self.drive_n };
        self.drive_n = 0.0;
        drive
    }

    /// Whether the next sample's controls come out as this one's, whatever the sample
    /// (only [`HeldControls`] aside): no control ramp moving, no vibrato, the envelope
    /// steady.
    fn controls_are_steady(&self) -> bool {
        let ramps = [
            &self.force,
            &self.bow_velocity,
            &self.position,
            &self.noise,
            &self.damping,
            &self.finger,
            &self.stiffness,
            &self.static_friction,
            &self.dynamic_friction,
            &self.stribeck,
            &self.intonation_strength,
            &self.fingered_st,
            &self.bend_st,
            &self.vibrato_depth_st,
        ];
        ramps.iter().all(|ramp| ramp.is_idle()) && self.vibrato_depth_st.value() <= 0.0 && self.envelope.is_steady()
    }

    /// Ends the string's step [`StringVoice::tick_begin`] began (or the last call went on
    /// with), with its bow's `contact`: the string moves on a step. An oversampled voice
    /// with steps left begins the next and returns its contact problem, as `tick_begin`
    /// does (the steps of every oversampled voice go through the lanes together, each
    /// voice's in order, as the rate's first steps do); after the last, the voice's output
    /// comes out.
    #[inline(always)]
    pub(crate) fn tick_end(&mut self, contact: ContactOutput) -> Begun {
        let bridge_force = self.bowed.end_driven(contact);
        self.decimator.push(bridge_force);
        let waiting = &mut self.waiting;
        self.intonation.observe(self.bowed.last_contact().relative_velocity_mps, waiting.controls.bow_velocity_mps, waiting.strength);
        if waiting.steps_left > 1 {
            waiting.steps_left -= 1;
            return Begun::Contact(self.bowed.begin_driven(&waiting.on_string, waiting.drive_n));
        }
        let (speed_correction, _) = split_correction(self.intonation.correction());
        self.bowed.string.set_wave_speed(self.tuned_wave_speed_mps * waiting.speed_ratio * speed_correction);
        let controls = waiting.controls;
        Begun::Done(self.tick_output(controls))
    }

    /// Solves the contacts of two voices' ribbons that [`StringVoice::tick_begin`] (or
    /// [`StringVoice::tick_end_ribbon`]) left waiting, together: each answer is the one it
    /// gets alone, to the bit.
    #[inline(always)]
    pub(crate) fn solve_ribbons(a: &mut Self, b: &mut Self) -> (ContactSolution, ContactSolution) {
        RibbonBow::solve_pair(&mut a.ribbon, &mut b.ribbon)
    }

    /// [`StringVoice::solve_ribbons`] for a voice alone.
    #[inline(always)]
    pub(crate) fn solve_ribbon(&mut self) -> ContactSolution {
        self.ribbon.solve_alone()
    }

    /// The rest of a ribbon's sample, its steps solved alone ([`StringVoice::tick_end_ribbon`]).
    #[inline(never)]
    fn ribbon_sample_alone(&mut self) -> f64 {
        loop {
            let contact = self.ribbon.solve_alone();
            if let Begun::Done(output) = self.tick_end_ribbon(contact) {
                return output;
            }
        }
    }

    /// [`StringVoice::tick_end`] for the ribbon bow: its step ended with its `contact`, the
    /// next step of an oversampled voice begun, or the voice's output.
    // Out of line: a call is little beside the ribbon's step, and inlined beside the point
    // bow's `tick_end` it led the compiler to leave that path's own helpers out of line.
    #[inline(never)]
    pub(crate) fn tick_end_ribbon(&mut self, contact: ContactSolution) -> Begun {
        let bridge_force = self.ribbon.end(contact);
        self.decimator.push(bridge_force);
        let waiting = &mut self.waiting;
        self.intonation.observe(self.ribbon.relative_velocity_mps(), waiting.controls.bow_velocity_mps, waiting.strength);
        if waiting.steps_left > 1 {
            waiting.steps_left -= 1;
            self.ribbon.begin(&waiting.on_string, waiting.losses, &self.bowed.bow.friction, waiting.drive_n);
            return Begun::Ribbon;
        }
        let (speed_correction, _) = split_correction(self.intonation.correction());
        self.ribbon.set_wave_speed(self.tuned_wave_speed_mps * waiting.speed_ratio * speed_correction);
        let controls = waiting.controls;
        Begun::Done(self.tick_output(controls))
    }

    /// The end of every sample: the output, checked, and what listens to it.
    #[inline(always)]
    fn tick_output(&mut self, controls: BowingControls) -> f64 {
        self.applied = controls;
        let output = self.dc_blocker.process(self.decimator.output()) / self.impedance_kg_per_s * OUTPUT_SCALE;
        // `!(|x| <= 1e3)` is true for NaN and the infinities too, in one comparison.
        if !(output.abs() <= 1e3) || (self.silence.at_window_end() && !self.is_sane()) {
            // A diverged voice is silenced and freed; the host never sees the NaN.
            self.recoveries += 1;
            self.kill();
            return 0.0;
        }
        self.last_output = output;
        self.track_silence(output);
        // Heard only if the note was still the one listened to and was a harmonic one (a
        // stiff string's partials stray from the harmonics).
        if self.probe.push(output) && self.body_at_harmonics.key() == self.listened.0 && self.probe.harmonic_fraction() >= MIN_HARMONIC_FRACTION {
            self.body_at_harmonics.hear(&self.probe.powers());
            self.heard_now = true;
        }
        output
    }

    /// Listens to the note at `key` (its evening key) once it has spoken, unless this key
    /// and this attack have been listened to already: [`LISTEN_AFTER_S`] after now, or
    /// [`LISTEN_SETTLE_S`] after the bow's attack and a legato glide end if later, over
    /// [`LISTEN_PERIODS`] periods (at least [`LISTEN_MIN_S`]). A string the bow is not
    /// bowing (ringing in sympathy, or released) is not listened to.
    pub(crate) fn listen_for(&mut self, key: f64) {
        if self.envelope.phase() != Phase::Bowing || self.listened == (key, self.attacks) {
            return;
        }
        self.listened = (key, self.attacks);
        let f0_hz = midi_key_to_hz(self.destination_key());
        let periods = LISTEN_PERIODS.max((LISTEN_MIN_S * f0_hz).ceil() as u32);
        // Once the bow is up to speed and a legato glide has arrived, too: a slow attack
        // (the Ghost Cello's 300 ms) sounds another spectrum on its way.
        let settled = self.envelope.attack_remaining_samples() + (LISTEN_SETTLE_S * self.sample_rate_hz) as u32;
        let after_samples = ((LISTEN_AFTER_S * self.sample_rate_hz) as u32).max(settled) + self.fingered_st.remaining_samples();
        self.probe.listen(f0_hz, self.sample_rate_hz, after_samples, periods);
    }

    /// Whether the voice finished hearing its note at the last sample (then its
    /// `body_at_harmonics` holds what it heard). Asked once: the answer is then false.
    pub(crate) fn take_heard_now(&mut self) -> bool {
        std::mem::take(&mut self.heard_now)
    }

    /// Advances the pitch controls one sample and splits the pitch into a stopping finger
    /// (up) and a wave-speed ratio (down): `(finger fraction of the length, c ratio)`.
    #[inline]
    fn next_pitch(&mut self, intervals: f64) -> (f64, f64) {
        let finger_control = self.finger.next();
        let depth = self.vibrato_depth_st.next();
        let mut semitones = self.fingered_st.next() + self.bend_st.next();
        if depth > 0.0 {
            semitones += depth * self.vibrato_onset() * self.vibrato.advance();
        }
        self.last_offset_st = semitones;
        // Most samples split the same pitch as the one before (no control moving): the same
        // answer, with no division.
        if let Some(last) = self.pitch_split {
            if last.finger_control == finger_control && last.semitones == semitones && last.intervals == intervals {
                return (last.finger_fraction, last.speed_ratio);
            }
        }
        // The finger control stops the string on its own; the pitch offsets act on top.
        let ratio = semitones_to_ratio(semitones) / (1.0 - finger_control);
        self.pitch_ratio = 1.0 / (1.0 - finger_control);
        let (finger_fraction, speed_ratio) = if ratio >= 1.0 {
            ((1.0 - 1.0 / ratio).min(max_stop_fraction(intervals)).max(0.0), 1.0)
        } else {
            (0.0, ratio.max(MIN_WAVE_SPEED_RATIO))
        };
        self.pitch_split = Some(PitchSplit { finger_control, semitones, intervals, finger_fraction, speed_ratio });
        (finger_fraction, speed_ratio)
    }

    fn is_sane(&self) -> bool {
        if self.bow_model == BowModel::Ribbon {
            return self.ribbon.is_sane();
        }
        match self.engine {
            StringEngine::FiniteDifference => {
                // The bow's pull alone holds a slack string far aside: under the most friction
                // it can give, muS fN, a string of tension T stands up to muS fN L / (4 T)
                // aside, and rings as far once the bow lifts. The Willemsen set's G3 string
                // re-tuned down to C1 (1/36 of its tension) under 20 N stands some 8 cm
                // aside: a linear string's answer, not a divergence (found by the robustness
                // storm at 44.1 kHz).
                let grid = self.bowed.string.grid();
                let linear_density_kg_per_m = self.impedance_kg_per_s / self.nominal_wave_speed_mps;
                let tension_n = linear_density_kg_per_m * grid.wave_speed_mps * grid.wave_speed_mps;
                let held_m = crate::controls::STATIC_FRICTION.max * self.peak_force_n * grid.length_m / (4.0 * tension_n);
                self.bowed.string.is_sane(DIVERGED_DISPLACEMENT_M.max(4.0 * held_m))
            }
            StringEngine::Waveguide => self.waveguide.is_sane(),
        }
    }

    // Every sample calls it: left out of line by the compiler, the call cost about 13
    // instructions a voice-sample (docs/performance.md, *Two calls a sample inlined*).
    #[inline(always)]
    fn track_silence(&mut self, output: f64) {
        if self.silence.observe(output) && self.phase() == Phase::Ringing {
            if self.keep_alive {
                self.sleep();
            } else {
                self.kill();
            }
        }
    }

    /// An open string of the four that has rung below [`crate::envelope::SILENCE_THRESHOLD`]
    /// for a whole window with no bow on it goes to rest (a step of less than -100 dB) and
    /// sleeps, still tuned, until a bow ([`StringVoice::bow`]) or the bridge
    /// ([`StringVoice::drive`]) wakes it. Only the engine in use is cleared.
    fn sleep(&mut self) {
        self.held = None;
        self.asleep = true;
        if self.bow_model == BowModel::Ribbon {
            self.ribbon.reset();
        } else if self.engine == StringEngine::FiniteDifference {
            self.bowed.string.reset();
        } else {
            self.clear_waveguide();
        }
        self.decimator.reset();
        self.dc_blocker.reset();
        self.last_output = 0.0;
    }
}

/// A pitch split into a stopping finger and a wave-speed ratio ([`StringVoice::next_pitch`]),
/// with what it was split from: the finger control, the offset in semitones, the grid's
/// intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PitchSplit {
    finger_control: f64,
    semitones: f64,
    intervals: f64,
    finger_fraction: f64,
    speed_ratio: f64,
}

/// The furthest along the string a finger may stop it: [`MIN_STOPPED_INTERVALS`] must
/// still vibrate.
fn max_stop_fraction(intervals: f64) -> f64 {
    1.0 - MIN_STOPPED_INTERVALS / intervals
}

/// The ear's pitch correction split into what the wave speed takes (up to the grid's
/// [`WAVE_SPEED_HEADROOM`]) and what is left for the finger: `(speed, finger)`, whose
/// product is the correction.
fn split_correction(correction: f64) -> (f64, f64) {
    let speed = correction.clamp(1.0 / WAVE_SPEED_HEADROOM, WAVE_SPEED_HEADROOM);
    (speed, correction / speed)
}

/// Where the finger stops the string (a fraction of its length from the nut) when the pitch
/// must rise by `pitch_factor` more than stopping it at `stop_fraction` gives: the vibrating
/// length shrinks by that factor.
fn corrected_stop_fraction(stop_fraction: f64, pitch_factor: f64, intervals: f64) -> f64 {
    if pitch_factor == 1.0 {
        return stop_fraction;
    }
    (1.0 - (1.0 - stop_fraction) / pitch_factor).clamp(0.0, max_stop_fraction(intervals).max(stop_fraction))
}

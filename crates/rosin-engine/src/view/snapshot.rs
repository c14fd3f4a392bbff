//! What the editor draws, captured from the engine on the audio thread (the lab view's
//! contact trace of the loudest voice, see [`crate::view::lab`]): each sounding
//! string's displacement with its bow and finger (the finite-difference string's nodes, or
//! the waveguide's travelling waves summed into a shape), the newest drum's membrane and tube.
//! Fixed-size arrays only, so capturing never allocates.

use crate::controller::gesture::PAD_CHANNEL;
use crate::drum_voice::DrumVoice;
use crate::view::lab::{LabSource, LAB_SAMPLES};
use crate::view::meter::{BowState, OutputLevel};
use crate::ribbon::BowModel;
use crate::voice::{StringEngine, StringVoice};
use rosin_physics::bow::contact::FrictionModel;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::waveguide::WaveguideString;
use crate::voices::{Engine, MOST_VOICES};

/// Points along each drawn string.
pub const VIEW_STRING_POINTS: usize = 192;
/// The most strings drawn at once.
pub const VIEW_STRINGS: usize = 8;
/// Cells across the drawn membrane (the grid is resampled to this).
pub const VIEW_MEMBRANE_CELLS: usize = 64;
/// Points along the drawn tube.
pub const VIEW_TUBE_POINTS: usize = 48;
/// How often the audio thread captures a snapshot.
pub const VIEW_RATE_HZ: f64 = 60.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringView {
    pub sounding: bool,
    pub key: u8,
    /// The pad lane playing it, for pad voices.
    pub pad_lane: Option<u8>,
    pub bowing: bool,
    /// Displacement along the string from the nut (index 0) to the bridge.
    pub displacement_m: [f32; VIEW_STRING_POINTS],
    /// The bow's place as a fraction of the length from the nut.
    pub bow_from_nut: f32,
    pub bow_force_n: f32,
    /// The stopping finger as a fraction of the length from the nut, if any.
    pub finger_from_nut: Option<f32>,
    /// Under the ribbon bow with torsion: the string surface's twist, `r w` (m), along the
    /// same points (the second trace).
    pub twisting: bool,
    pub twist_m: [f32; VIEW_STRING_POINTS],
}

impl Default for StringView {
    fn default() -> Self {
        Self {
            sounding: false,
            key: 0,
            pad_lane: None,
            bowing: false,
            displacement_m: [0.0; VIEW_STRING_POINTS],
            bow_from_nut: 0.82,
            bow_force_n: 0.0,
            finger_from_nut: None,
            twisting: false,
            twist_m: [0.0; VIEW_STRING_POINTS],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MembraneView {
    pub sounding: bool,
    pub key: u8,
    /// Row-major, `VIEW_MEMBRANE_CELLS` square; NaN outside the circular mask.
    pub displacement_m: [f32; VIEW_MEMBRANE_CELLS * VIEW_MEMBRANE_CELLS],
    /// The bow's place as fractions of the side, from the left and the top.
    pub bow_x: f32,
    pub bow_y: f32,
    pub bow_force_n: f32,
    /// The tube's air column, from the membrane (index 0) to the open end.
    pub tube_displacement_m: [f32; VIEW_TUBE_POINTS],
}

impl Default for MembraneView {
    fn default() -> Self {
        Self {
            sounding: false,
            key: 0,
            displacement_m: [f32::NAN; VIEW_MEMBRANE_CELLS * VIEW_MEMBRANE_CELLS],
            bow_x: 0.5,
            bow_y: 0.5,
            bow_force_n: 0.0,
            tube_displacement_m: [0.0; VIEW_TUBE_POINTS],
        }
    }
}

/// The lab view: the loudest voice's bow contact over its last [`LAB_SAMPLES`] samples
/// ([`crate::view::lab`]), and what to draw it against.
#[derive(Clone, Debug, PartialEq)]
pub struct LabView {
    pub sounding: bool,
    pub key: u8,
    /// A drum voice (else a string).
    pub drum: bool,
    /// Changes when the lab starts following another voice.
    pub generation: u32,
    pub model: FrictionModel,
    pub friction: ElastoPlasticParams,
    /// The hyperbolic law's viscous branch (s/m): the friction drum's, 0 on a string.
    pub hyperbolic_viscous_s_per_m: f64,
    pub normal_force_n: f32,
    pub bow_velocity_mps: f32,
    /// The engine's sample rate (the trace's).
    pub sample_rate_hz: f32,
    /// How many samples of the arrays are valid, oldest first.
    pub samples: usize,
    pub force_n: [f32; LAB_SAMPLES],
    pub law_velocity_mps: [f32; LAB_SAMPLES],
    pub bow_point_velocity_mps: [f32; LAB_SAMPLES],
}

impl Default for LabView {
    fn default() -> Self {
        Self {
            sounding: false,
            key: 0,
            drum: false,
            generation: 0,
            model: FrictionModel::default(),
            friction: ElastoPlasticParams::default(),
            hyperbolic_viscous_s_per_m: 0.0,
            normal_force_n: 0.0,
            bow_velocity_mps: 0.0,
            sample_rate_hz: 48_000.0,
            samples: 0,
            force_n: [0.0; LAB_SAMPLES],
            law_velocity_mps: [0.0; LAB_SAMPLES],
            bow_point_velocity_mps: [0.0; LAB_SAMPLES],
        }
    }
}

/// The most voices the feedback lists.
pub const VIEW_VOICES: usize = 24;

/// One sounding voice, for the editor's voice list.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VoiceView {
    pub key: u8,
    pub drum: bool,
    pub state: BowState,
}

/// The editor's feedback: the output's level since the last snapshot, the audio thread's
/// load, and the sounding voices (oldest first).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FeedbackView {
    pub level: OutputLevel,
    /// The audio thread's averaged share of its real-time budget (1 is all of it).
    pub cpu_share: f32,
    /// How many voices sound (all of them, even beyond [`VIEW_VOICES`]).
    pub voices_sounding: usize,
    pub voices: [VoiceView; VIEW_VOICES],
}

/// Everything the views draw, at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewSnapshot {
    pub strings: [StringView; VIEW_STRINGS],
    pub membrane: MembraneView,
    pub lab: LabView,
    /// Filled by [`capture`] (the voices) and [`capture_feedback`] (level and load).
    pub feedback: FeedbackView,
    /// Counts captures, so the editor can tell the audio is running.
    pub sequence: u64,
}

impl Default for ViewSnapshot {
    fn default() -> Self {
        Self { strings: [StringView::default(); VIEW_STRINGS], membrane: MembraneView::default(), lab: LabView::default(), feedback: FeedbackView::default(), sequence: 0 }
    }
}

/// Resamples `source` (nodes `0..=N`) onto `target` by linear interpolation.
fn resample<S: Copy + Into<f64>>(source: &[S], target: &mut [f32]) {
    let last = source.len().saturating_sub(1);
    if last == 0 {
        target.fill(0.0);
        return;
    }
    let span = (target.len() - 1) as f64;
    for (i, out) in target.iter_mut().enumerate() {
        // `i last / span`, not `i (last / span)`: the ends land exactly on the source's
        // ends (the bridge is drawn at rest, not at 1e-16 of its neighbour).
        let x = (i * last) as f64 / span;
        let j = (x as usize).min(last - 1);
        let a = x - j as f64;
        let (left, right): (f64, f64) = (source[j].into(), source[j + 1].into());
        *out = (left * (1.0 - a) + right * a) as f32;
    }
}

fn capture_string(voice: &StringVoice, view: &mut StringView) {
    let bowed = voice.bowed_string();
    let grid = bowed.string.grid();
    let length = grid.length_m;
    let applied = voice.applied_controls();
    view.sounding = true;
    view.key = voice.note.note;
    view.pad_lane = voice.note.channel.checked_sub(PAD_CHANNEL);
    view.bowing = voice.is_held();
    view.bow_force_n = applied.normal_force_n as f32;
    let finger = applied.finger_position_m.map(|m| m / length);
    view.finger_from_nut = finger.map(|f| f as f32);
    view.twisting = false;
    if voice.bow_model() == BowModel::Ribbon {
        let ribbon = voice.ribbon().bowed();
        resample(ribbon.string().displacement(), &mut view.displacement_m);
        view.bow_from_nut = (ribbon.bow_centre_m() / length) as f32;
        if let Some(torsion) = ribbon.torsion() {
            // The surface's sideways motion from the twist: the radius times the angle.
            resample(torsion.angle(), &mut view.twist_m);
            let radius = torsion.params().radius_m as f32;
            view.twist_m.iter_mut().for_each(|w| *w *= radius);
            view.twisting = true;
        }
        return;
    }
    match voice.string_engine() {
        StringEngine::FiniteDifference => {
            resample(bowed.string.displacement(), &mut view.displacement_m);
            view.bow_from_nut = (bowed.bow_point_m() / length) as f32;
        }
        StringEngine::Waveguide => capture_waveguide(voice.waveguide(), finger.unwrap_or(0.0), view),
    }
}

/// The waveguide's shape ([`WaveguideString::displacement_into`]) drawn over the length that
/// sounds, from the finger (or the nut) to the bridge; the waveguide's loop is only that
/// length, so the string behind the finger is drawn at rest.
fn capture_waveguide(waveguide: &WaveguideString, finger_fraction: f64, view: &mut StringView) {
    let mut shape = [0.0; VIEW_STRING_POINTS];
    waveguide.displacement_into(&mut shape);
    let sounding = (1.0 - finger_fraction).max(1e-6);
    let finger = ((finger_fraction * (VIEW_STRING_POINTS - 1) as f64).round() as usize).min(VIEW_STRING_POINTS - 2);
    view.displacement_m[..finger].fill(0.0);
    resample(&shape, &mut view.displacement_m[finger..]);
    view.bow_from_nut = (finger_fraction + sounding * (1.0 - waveguide.bow_position())) as f32;
}

fn capture_drum(voice: &DrumVoice, view: &mut MembraneView) {
    let drum = voice.drum();
    let membrane = &drum.membrane;
    let n = membrane.intervals();
    view.sounding = true;
    view.key = voice.note.note;
    for row in 0..VIEW_MEMBRANE_CELLS {
        let m = (((row as f64 + 0.5) / VIEW_MEMBRANE_CELLS as f64) * n as f64).round() as usize;
        for col in 0..VIEW_MEMBRANE_CELLS {
            let l = (((col as f64 + 0.5) / VIEW_MEMBRANE_CELLS as f64) * n as f64).round() as usize;
            let index = membrane.index(l.min(n), m.min(n));
            view.displacement_m[row * VIEW_MEMBRANE_CELLS + col] = if membrane.is_moving(index) { membrane.current_displacement_at(index) as f32 } else { f32::NAN };
        }
    }
    let side = drum.design().membrane.side_m;
    let applied = voice.applied_controls();
    view.bow_x = (applied.bow_x_m / side) as f32;
    view.bow_y = (applied.bow_y_m / side) as f32;
    view.bow_force_n = applied.normal_force_n as f32;
    resample(drum.tube.current_displacement(), &mut view.tube_displacement_m);
}

/// The sounding voices, strings and drums, oldest first.
fn capture_voices(engine: &Engine, view: &mut FeedbackView) {
    let strings = engine.voices().iter().filter(|v| !v.is_free()).map(|v| (v.age, VoiceView { key: v.note.note, drum: false, state: v.bow_state() }));
    let drums = engine.drum_voices().iter().filter(|v| !v.is_free()).map(|v| (v.age, VoiceView { key: v.note.note, drum: true, state: v.bow_state() }));
    let mut count = 0;
    let mut ages = [0u64; VIEW_VOICES];
    view.voices = [VoiceView::default(); VIEW_VOICES];
    for (age, voice) in strings.chain(drums) {
        // Keep the oldest VIEW_VOICES, in order of age (insertion into a short array).
        let filled = count.min(VIEW_VOICES);
        count += 1;
        let slot = ages[..filled].iter().position(|&a| age < a).unwrap_or(filled);
        if slot < VIEW_VOICES {
            let end = (filled + 1).min(VIEW_VOICES);
            ages.copy_within(slot..end - 1, slot + 1);
            view.voices.copy_within(slot..end - 1, slot + 1);
            ages[slot] = age;
            view.voices[slot] = voice;
        }
    }
    view.voices_sounding = count;
}

/// The output's level since the last snapshot and the audio thread's load, from the
/// plugin's meters.
pub fn capture_feedback(level: OutputLevel, cpu_share: f64, snapshot: &mut ViewSnapshot) {
    snapshot.feedback.level = level;
    snapshot.feedback.cpu_share = cpu_share as f32;
}

fn capture_lab(engine: &Engine, view: &mut LabView) {
    let lab = engine.lab();
    let (key, drum, model, friction, viscous, last) = match lab.source() {
        Some(LabSource::String(i)) => {
            let voice = &engine.voices()[i];
            (voice.note.note, false, voice.friction_model(), *voice.friction_params(), 0.0, voice.contact_probe())
        }
        Some(LabSource::Drum(i)) => {
            let voice = &engine.drum_voices()[i];
            (voice.note.note, true, voice.friction_model(), *voice.friction_params(), voice.hyperbolic_viscous_s_per_m(), voice.contact_probe())
        }
        None => {
            view.sounding = false;
            return;
        }
    };
    view.sounding = !lab.is_empty();
    (view.key, view.drum, view.model, view.friction, view.hyperbolic_viscous_s_per_m) = (key, drum, model, friction, viscous);
    view.generation = lab.generation();
    view.normal_force_n = last.normal_force_n as f32;
    view.bow_velocity_mps = last.bow_velocity_mps as f32;
    view.sample_rate_hz = engine.sample_rate_hz() as f32;
    view.samples = lab.copy_into(&mut view.force_n, &mut view.law_velocity_mps, &mut view.bow_point_velocity_mps);
}

/// Fills `snapshot` from the engine: the newest sounding strings (up to
/// [`VIEW_STRINGS`], oldest first so lanes stay put) and the newest sounding drum.
pub fn capture(engine: &Engine, snapshot: &mut ViewSnapshot) {
    let voices = engine.voices();
    let mut order = [0usize; MOST_VOICES];
    let mut count = 0;
    for (i, voice) in voices.iter().enumerate() {
        if !voice.is_free() && count < order.len() {
            order[count] = i;
            count += 1;
        }
    }
    let sounding = &mut order[..count];
    sounding.sort_unstable_by_key(|&i| voices[i].age);
    let shown = &sounding[count.saturating_sub(VIEW_STRINGS)..];
    for (slot, view) in snapshot.strings.iter_mut().enumerate() {
        match shown.get(slot) {
            Some(&i) => capture_string(&voices[i], view),
            None => view.sounding = false,
        }
    }
    match engine.drum_voices().iter().filter(|v| !v.is_free()).max_by_key(|v| v.age) {
        Some(drum) => capture_drum(drum, &mut snapshot.membrane),
        None => snapshot.membrane.sounding = false,
    }
    capture_lab(engine, &mut snapshot.lab);
    capture_voices(engine, &mut snapshot.feedback);
    snapshot.sequence += 1;
}

//! The performer's controls as plain numbers: one table of every control's ID, range and
//! default, shared by the plugin's parameters, the offline renderer and the tests.
//!
//! The IDs are a public contract (DAW projects store them): never rename or remove one.

/// How many string voices Poly sounds at once by default (the *Voices* control's default,
/// [`VOICES`]): every project saved before the control existed played sixteen.
pub const DEFAULT_VOICES: usize = 16;
/// The string voices every engine holds (`Engine::new`), and the most the *Voices* control
/// lets sound at once: issue 16's sixty-four, which `benches/string_voice.rs` plays.
pub const MOST_VOICES: usize = 64;

/// How a control's range is spread over its knob.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Taper {
    Linear,
    /// Logarithmic: equal knob travel multiplies the value by the same factor.
    Log,
    /// One of a list of named choices, stored as its index (`min` 0, `max` the last index).
    Choice(&'static [&'static str]),
    /// A whole number from `min` to `max`, stored as itself (a count, such as the voices).
    Whole,
}

/// One control: its stable ID, display name, unit, range and default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ControlSpec {
    pub id: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub min: f64,
    pub max: f64,
    pub default: f64,
    pub taper: Taper,
}

impl ControlSpec {
    /// Whether the control takes whole numbers only (a choice's index, or a count): the
    /// plugin makes it an integer parameter, and a saved state holds it as one.
    pub fn is_stepped(&self) -> bool {
        matches!(self.taper, Taper::Choice(_) | Taper::Whole)
    }

    /// Whether presets hold the control: every control but the settings of the machine
    /// rather than of the sound ([`VOICES`]), which a preset neither sets nor saves, so
    /// that choosing one leaves them where the player put them.
    pub fn in_presets(&self) -> bool {
        self.id != VOICES.id
    }

    pub fn clamp(&self, value: f64) -> f64 {
        if value.is_nan() {
            self.default
        } else if self.is_stepped() {
            value.round().clamp(self.min, self.max)
        } else {
            value.clamp(self.min, self.max)
        }
    }
}

macro_rules! spec {
    ($name:ident, $id:literal, $display:literal, $unit:literal, $min:expr, $max:expr, $default:expr, $taper:ident) => {
        pub const $name: ControlSpec = ControlSpec {
            id: $id,
            name: $display,
            unit: $unit,
            min: $min,
            max: $max,
            default: $default,
            taper: Taper::$taper,
        };
    };
    ($name:ident, $id:literal, $display:literal, choices $choices:expr, $default:expr) => {
        pub const $name: ControlSpec = ControlSpec {
            id: $id,
            name: $display,
            unit: "",
            min: 0.0,
            max: ($choices.len() - 1) as f64,
            default: $default,
            taper: Taper::Choice($choices),
        };
    };
}

spec!(BOW_FORCE, "bow_force", "Bow Force", " N", 0.0, 20.0, 6.0, Linear);
spec!(BOW_VELOCITY, "bow_velocity", "Bow Velocity", " m/s", -0.5, 0.5, 0.1, Linear);
spec!(BOW_POSITION, "bow_position", "Bow Position", " of length", 0.02, 0.5, 0.18, Linear);
spec!(NOISE, "noise", "Bow Noise", " of force", 0.0, 0.1, 0.02, Linear);
spec!(DAMPING, "damping", "Damping", " x", 0.1, 10.0, 1.0, Log);
spec!(OUTPUT_GAIN, "output_gain", "Output Gain", " dB", -48.0, 12.0, 0.0, Linear);
spec!(BRISTLE_STIFFNESS, "bristle_stiffness", "Bristle Stiffness", " N/m", 1e3, 1e6, 1e5, Log);
spec!(STATIC_FRICTION, "static_friction", "Static Friction", "", 0.1, 1.5, 0.8, Linear);
spec!(DYNAMIC_FRICTION, "dynamic_friction", "Dynamic Friction", "", 0.05, 1.0, 0.3, Linear);
spec!(STRIBECK_VELOCITY, "stribeck_velocity", "Stribeck Velocity", " m/s", 0.01, 1.0, 0.1, Log);
spec!(STRING_STIFFNESS, "string_stiffness", "String Stiffness", " B", 1e-6, 1e-2, 1e-4, Log);
spec!(FINGER_POSITION, "finger_position", "Finger Position", " of length", 0.0, 0.5, 0.0, Linear);
spec!(BOW_ATTACK, "bow_attack", "Bow Attack", " ms", 5.0, 2000.0, 200.0, Log);
spec!(BOW_RELEASE, "bow_release", "Bow Release", " ms", 5.0, 2000.0, 80.0, Log);
spec!(INTONATION, "intonation", "Intonation", " %", 0.0, 100.0, 100.0, Linear);
spec!(INSTRUMENT, "instrument", "Instrument", choices &["String", "Friction Drum"], 0.0);
// The friction drum's controls (onofrei2021 section 4.2), on the paper's 0..10 scale.
spec!(DRUM_QUALITY, "drum_quality", "Drum Resolution", choices &["Full", "Half", "Paper"], 0.0);
spec!(DRUM_TUNING, "drum_tuning", "Drum Tuning", " /10", 0.0, 10.0, 6.5, Linear);
spec!(DRUM_DAMPING, "drum_damping", "Drum Damping", " /10", 0.0, 10.0, 1.0, Linear);
spec!(DRUM_NOISE, "drum_noise", "Drum Noise", " /10", 0.0, 10.0, 2.0, Linear);
spec!(DRUM_VARIATION, "drum_variation", "Drum Variation", " /10", 0.0, 10.0, 0.0, Linear);
spec!(DRUM_RATE, "drum_rate", "Drum Rate", " /10", 0.0, 10.0, 5.0, Linear);
spec!(DRUM_GAIN, "drum_gain", "Drum Gain", " /10", 0.0, 10.0, 5.0, Linear);
spec!(DRUM_BOW_X, "drum_bow_x", "Drum Bow X", " of diameter", 0.0, 1.0, 0.4, Linear);
spec!(DRUM_BOW_Y, "drum_bow_y", "Drum Bow Y", " of diameter", 0.0, 1.0, 0.45, Linear);
// How a touch pad (a Sensel Morph, or the mouse in the editor) is split into strings.
spec!(PAD_LAYOUT, "pad_layout", "Pad Layout", choices &["One String", "Four Strings"], 0.0);
// How notes become strings: each its own (poly), on an instrument's four strings tuned in
// fifths, or one voice played legato.
spec!(PLAY_MODE, "play_mode", "Play Mode", choices &["Poly", "Four Strings", "Mono Legato"], 0.0);
// Whose strings: the equal-impedance Rosin design, real instrument sets, or the papers'.
spec!(STRING_SET, "string_set", "Strings", choices &["Rosin", "Violin", "Viola", "Cello", "Double Bass", "Willemsen 2019", "Matusiak 2025"], 0.0);
spec!(GLIDE_TIME, "glide_time", "Glide Time", " ms", 0.0, 1000.0, 60.0, Linear);
spec!(PITCH_BEND_RANGE, "pitch_bend_range", "Pitch Bend Range", " st", 0.0, 48.0, 2.0, Linear);
spec!(MPE, "mpe", "MPE", choices &["Off", "On"], 1.0);
spec!(MPE_BEND_RANGE, "mpe_bend_range", "MPE Bend Range", " st", 0.0, 96.0, 48.0, Linear);
spec!(VIBRATO_RATE, "vibrato_rate", "Vibrato Rate", " Hz", 2.0, 10.0, 5.5, Linear);
spec!(VIBRATO_DEPTH, "vibrato_depth", "Vibrato Depth", " cents", 0.0, 100.0, 30.0, Linear);
spec!(BODY, "body", "Body", choices &["Violin", "Viola", "Cello", "Double Bass"], 0.0);
spec!(BODY_MIX, "body_mix", "Body Mix", " %", 0.0, 100.0, 60.0, Linear);
spec!(SYMPATHETIC, "sympathetic", "Sympathetic Strings", " %", 0.0, 100.0, 50.0, Linear);
// Which friction law the bow follows (`rosin_physics::bow::contact`), and which string model it bows
// (`rosin_physics::waveguide`). Both are read when the bow next touches a string.
spec!(FRICTION_MODEL, "friction_model", "Friction Model", choices &["Dupont Elasto-Plastic (2019)", "Passive Refined (2025)", "Hyperbolic (1999)", "Dahl (1999)"], 0.0);
spec!(STRING_ENGINE, "string_engine", "String Engine", choices &["Finite Difference", "Waveguide"], 0.0);
// The drum bow's friction law, its own control so that projects saved before the drum had a
// choice (when it always played Dupont's law) sound as they did.
// The bow a string note plays (issue 17): a point, or matusiak2025's ribbon of finite width
// touching at 1 to 4 points, with or without the string's torsion. Read when a note starts.
spec!(BOW_MODEL, "bow_model", "Bow Model", choices &["Point", "Ribbon"], 0.0);
spec!(BOW_WIDTH, "bow_width", "Bow Width", choices &["1 point", "2 points", "3 points", "4 points"], 3.0);
spec!(BOW_TORSION, "bow_torsion", "Torsion", choices &["Off", "On"], 1.0);
// How much more of the arm's weight a heavier string of a set gets (see the `string_weight` module).
spec!(STRING_WEIGHT, "string_weight", "String Weight", " %", 0.0, 100.0, 0.0, Linear);
// Where the drum is heard from (see `drum_voice`): 0 the tube's open end, as onofrei2021
// outputs it (and as every project saved before this control played), 100 the membrane.
spec!(DRUM_RADIATION, "drum_radiation", "Drum Radiation", " %", 0.0, 100.0, 0.0, Linear);
// How long a note's vibrato waits before it grows in (as long again): 0, the default, is the
// vibrato at once, as every state saved before the control existed plays.
spec!(VIBRATO_DELAY, "vibrato_delay", "Vibrato Delay", " ms", 0.0, 1000.0, 0.0, Linear);
// How many string notes sound at once in Poly before the oldest is stolen (issue 16): a
// setting of the machine, not of the sound, so presets leave it where the player put it.
// 16, the default, is the count every project saved before the control existed played.
spec!(VOICES, "voices", "Voices", "", 1.0, MOST_VOICES as f64, DEFAULT_VOICES as f64, Whole);
spec!(DRUM_FRICTION_MODEL, "drum_friction_model", "Drum Friction Model", choices &["Dupont Elasto-Plastic (2019)", "Passive Refined (2025)", "Hyperbolic (1999)", "Dahl (1999)"], 0.0);

/// Every control, in display order.
/// What each control does, one sentence each, for the editor's tooltips. The parameter
/// table of `docs/user-guide.md` has the same words in its last column (`tests/controls.rs`
/// holds the two together), so the two cannot drift apart.
pub const DESCRIPTIONS: &[(&str, &str)] = &[
    ("bow_force", "Normal force of the bow (see *Schelleng mapping*)"),
    ("bow_velocity", "Bow speed; the sign is the bow direction (down/up)"),
    ("bow_position", "Bow–bridge distance, as a fraction of the vibrating length"),
    ("noise", "Rosin noise `s3 / fN` (willemsen2019 Table 1: 0.02)"),
    ("damping", "Scales both loss terms `sigma0` and `sigma1`"),
    ("output_gain", "Output level"),
    ("bristle_stiffness", "`s0` of the bristles on the A4 string (scaled with tension above it)"),
    ("static_friction", "`muS`"),
    ("dynamic_friction", "`muC` (held at or below `muS`)"),
    ("stribeck_velocity", "`vS`"),
    ("string_stiffness", "Inharmonicity coefficient `B`; read when a note starts"),
    ("finger_position", "Stopping finger (eq. 23), fraction of the length from the nut; 0 is open"),
    ("bow_attack", "Time for the bow to reach full speed at a medium velocity"),
    ("bow_release", "Time for the bow to slow and lift after note-off"),
    ("intonation", "How strongly each voice corrects its bowed pitch by ear (0: open loop): up to 12 %, the first 3 % on the wave speed, the rest on the finger; on the drum, on the wave speed"),
    ("instrument", "What new notes play; sounding notes keep their instrument"),
    ("drum_quality", "The membrane's grid, read when a drum note starts (see *Performance*)"),
    ("drum_tuning", "Wave speed for middle C, `15 + 13.5 t` m/s; at 6.5 every key is in tune"),
    ("drum_damping", "`sigma0 = 0.6 d` 1/s and `sigma1 = 0.00026 d` m²/s together"),
    ("drum_noise", "Bow noise `s3 = 0.004 n fN` (paper: 0 – 0.04 fN)"),
    ("drum_variation", "Vibrato depth on the wave speed, `0.3 v` m/s (0 – 3 m/s)"),
    ("drum_rate", "Vibrato rate in Hz"),
    ("drum_gain", "Drum output level, `4 (g − 5)` dB"),
    ("drum_bow_x", "Bow position across the membrane, fraction of the diameter"),
    ("drum_bow_y", "Bow position down the membrane, fraction of the diameter"),
    ("pad_layout", "How a Sensel Morph (or the mouse) is split: one string, or G D A E columns"),
    ("play_mode", "How notes become strings (see *Playing modes*)"),
    ("string_set", "Whose strings notes are built from; read when a string starts"),
    ("glide_time", "Portamento of a legato note, and a finger's slide on one string"),
    ("pitch_bend_range", "Bend range of a plain channel and of an MPE master channel"),
    ("mpe", "Read channels as MPE zones"),
    ("mpe_bend_range", "Bend range of an MPE member channel"),
    ("vibrato_rate", "Rate of the mod-wheel and note-expression vibrato"),
    ("vibrato_depth", "Peak depth at full mod wheel or note vibrato"),
    ("body", "The body resonator's modes; a change while notes sound crossfades from the old body to the new over 80 ms, so automating it does not click"),
    ("body_mix", "How much of the output goes through the body (0: the dry bridge force)"),
    ("sympathetic", "How strongly the bowed string drives the others (Four Strings)"),
    ("friction_model", "The bow's friction law on the strings (see *Friction models*); taken up when the bow next touches a string"),
    ("string_engine", "The string model (see *String engines*); read when a note starts"),
    ("bow_model", "The bow on a string (see *The ribbon bow*): a point, under Friction Model's law, or matusiak2025's ribbon of finite width with bow hair and the refined law at each contact; read when a note starts"),
    ("bow_width", "How many points the ribbon bow touches the string at, across its 1 cm; read when a note starts"),
    ("bow_torsion", "Whether the ribbon bow twists the string (its torsional waves); read when a note starts"),
    ("string_weight", "How much heavier the bow sits on a heavier string of a real instrument's set, as a player's arm does: at 100 % the force grows as the string's impedance over the set's lightest string's to the power 0.75, which keeps the violin's G, the viola's C and the cello's C and G strings from slipping twice a period at medium velocities; at 0 (the default) every string gets the same force"),
    ("drum_friction_model", "The drum bow's friction law (see *Friction models*); taken up when a drum note starts"),
    ("vibrato_delay", "How long a new note's vibrato waits, then grows in over as long again, as a player's starts once the string speaks; at 0 (the default) it is there from note-on"),
    ("voices", "How many string notes can sound at once in Poly before the oldest is stolen (1 to 64); lowered under a chord, it lets the notes beyond it go; presets leave it as it is. Every bowed voice costs time: 64 at once take over half of one core (see the README's *What a voice costs*)"),
    ("drum_radiation", "Where the drum is heard from: at 0 (the default, as onofrei2021) the tube's open end, whose resonances make neighbouring keys differ by up to 7 dB; at 100 % the membrane's motion under the tube, brighter and even across the keys; between, a blend of the two"),
];

impl ControlSpec {
    /// What the control does (see [`DESCRIPTIONS`]); empty for a control without one.
    pub fn description(&self) -> &'static str {
        DESCRIPTIONS.iter().find(|(id, _)| *id == self.id).map_or("", |(_, d)| d)
    }
}

pub const ALL: &[ControlSpec] = &[
    BOW_FORCE,
    BOW_VELOCITY,
    BOW_POSITION,
    NOISE,
    DAMPING,
    OUTPUT_GAIN,
    BRISTLE_STIFFNESS,
    STATIC_FRICTION,
    DYNAMIC_FRICTION,
    STRIBECK_VELOCITY,
    STRING_STIFFNESS,
    FINGER_POSITION,
    BOW_ATTACK,
    BOW_RELEASE,
    INTONATION,
    INSTRUMENT,
    DRUM_QUALITY,
    DRUM_TUNING,
    DRUM_DAMPING,
    DRUM_NOISE,
    DRUM_VARIATION,
    DRUM_RATE,
    DRUM_GAIN,
    DRUM_BOW_X,
    DRUM_BOW_Y,
    PAD_LAYOUT,
    PLAY_MODE,
    STRING_SET,
    GLIDE_TIME,
    PITCH_BEND_RANGE,
    MPE,
    MPE_BEND_RANGE,
    VIBRATO_RATE,
    VIBRATO_DEPTH,
    BODY,
    BODY_MIX,
    SYMPATHETIC,
    FRICTION_MODEL,
    STRING_ENGINE,
    DRUM_FRICTION_MODEL,
    BOW_MODEL,
    BOW_WIDTH,
    BOW_TORSION,
    STRING_WEIGHT,
    DRUM_RADIATION,
    VIBRATO_DELAY,
    VOICES,
];

/// Looks a control up by its ID.
pub fn find(id: &str) -> Option<&'static ControlSpec> {
    ALL.iter().find(|spec| spec.id == id)
}

/// The values of every control at one moment, in the units the specs name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Controls {
    pub bow_force_n: f64,
    pub bow_velocity_mps: f64,
    /// Bow-bridge distance as a fraction of the vibrating length.
    pub bow_position: f64,
    /// `s3 / fN`.
    pub noise: f64,
    pub damping_scale: f64,
    pub output_gain_db: f64,
    /// `s0` on the reference (A4) string; scaled with tension on higher strings.
    pub bristle_stiffness_n_per_m: f64,
    pub static_friction: f64,
    pub dynamic_friction: f64,
    pub stribeck_velocity_mps: f64,
    /// Inharmonicity coefficient `B`, read when a note starts.
    pub string_stiffness: f64,
    /// Stopping finger's distance from the nut as a fraction of the length; 0 is open.
    pub finger_position: f64,
    pub bow_attack_ms: f64,
    pub bow_release_ms: f64,
    /// How strongly the voice corrects its bowed pitch by ear (0: open loop, 100: fully).
    pub intonation_percent: f64,
    /// Which instrument new notes play: 0 string, 1 friction drum.
    pub instrument: f64,
    /// The drum's grid: 0 full, 1 half, 2 the paper's; read when a drum note starts.
    pub drum_quality: f64,
    /// The paper's 0..10 scales: see [`crate::drum_voice`] for what each means in SI units.
    pub drum_tuning: f64,
    pub drum_damping: f64,
    pub drum_noise: f64,
    pub drum_variation: f64,
    pub drum_rate: f64,
    pub drum_gain: f64,
    /// The bow's place on the membrane, as fractions of the diameter from the left and top.
    pub drum_bow_x: f64,
    pub drum_bow_y: f64,
    /// How the pad is split: 0 one string, 1 four strings (G D A E).
    pub pad_layout: f64,
    /// 0 poly, 1 four strings, 2 mono legato: see [`PlayMode`].
    pub play_mode: f64,
    /// Index into [`rosin_physics::string::string_set::STRING_SETS`]; read when a string starts.
    pub string_set: f64,
    /// Portamento of a legato note, and the finger's slide on one string.
    pub glide_time_ms: f64,
    /// Pitch bend range of a plain MIDI channel and of an MPE zone's master channel.
    pub pitch_bend_range_st: f64,
    /// Whether MIDI channels are read as MPE zones (0 off, 1 on).
    pub mpe: f64,
    /// Pitch bend range of an MPE member channel.
    pub mpe_bend_range_st: f64,
    pub vibrato_rate_hz: f64,
    /// The vibrato's depth at full mod wheel or note vibrato.
    pub vibrato_depth_cents: f64,
    /// Index into [`rosin_physics::body::BODIES`].
    pub body: f64,
    /// How much of the output goes through the body (0: the dry bridge force).
    pub body_mix_percent: f64,
    /// How strongly a bowed string drives the others in the four-string mode.
    pub sympathetic_percent: f64,
    /// Index into [`rosin_physics::bow::contact::FrictionModel::ALL`]; read when the bow next
    /// touches a string.
    pub friction_model: f64,
    /// 0 finite-difference string, 1 digital waveguide; read when a note starts.
    pub string_engine: f64,
    /// Index into [`rosin_physics::bow::contact::FrictionModel::ALL`] for the drum's bow;
    /// read when a drum note starts.
    pub drum_friction_model: f64,
    /// 0 the point bow, 1 the ribbon bow; read when a note starts.
    pub bow_model: f64,
    /// The ribbon's contact points less one (0 to 3).
    pub bow_width: f64,
    /// How much heavier the bow sits on a heavier string of a set (0 to 100).
    pub string_weight_percent: f64,
    /// 1: the ribbon bow twists the string.
    pub bow_torsion: f64,
    /// How much of the drum is heard from its membrane rather than its open end (0 to 100).
    pub drum_radiation_percent: f64,
    /// How long a new note's vibrato waits before it grows in, over as long again.
    pub vibrato_delay_ms: f64,
    /// How many string voices Poly sounds at once before it steals (1 to
    /// [`MOST_VOICES`]): new notes take only those, and a lower count lets the notes beyond
    /// it go.
    pub voice_count: f64,
}

/// How notes are given to strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayMode {
    /// Each note is its own string.
    Poly,
    /// An instrument's four strings: a note is fingered on the string a player would choose;
    /// a note while another is held slides or crosses on the same bow stroke.
    FourStrings,
    /// One voice; a note while another is held glides to it without a new attack.
    MonoLegato,
}

impl PlayMode {
    pub fn from_control(value: f64) -> Self {
        match value.round() as i64 {
            1 => Self::FourStrings,
            2 => Self::MonoLegato,
            _ => Self::Poly,
        }
    }
}

impl Default for Controls {
    fn default() -> Self {
        Self::from_lookup(|spec| spec.default)
    }
}

impl Controls {
    /// Builds the controls from a value per spec; each value is clamped into its range.
    pub fn from_lookup(mut value: impl FnMut(&ControlSpec) -> f64) -> Self {
        let mut get = |spec: &ControlSpec| spec.clamp(value(spec));
        Self {
            bow_force_n: get(&BOW_FORCE),
            bow_velocity_mps: get(&BOW_VELOCITY),
            bow_position: get(&BOW_POSITION),
            noise: get(&NOISE),
            damping_scale: get(&DAMPING),
            output_gain_db: get(&OUTPUT_GAIN),
            bristle_stiffness_n_per_m: get(&BRISTLE_STIFFNESS),
            static_friction: get(&STATIC_FRICTION),
            dynamic_friction: get(&DYNAMIC_FRICTION),
            stribeck_velocity_mps: get(&STRIBECK_VELOCITY),
            string_stiffness: get(&STRING_STIFFNESS),
            finger_position: get(&FINGER_POSITION),
            bow_attack_ms: get(&BOW_ATTACK),
            bow_release_ms: get(&BOW_RELEASE),
            intonation_percent: get(&INTONATION),
            instrument: get(&INSTRUMENT),
            drum_quality: get(&DRUM_QUALITY),
            drum_tuning: get(&DRUM_TUNING),
            drum_damping: get(&DRUM_DAMPING),
            drum_noise: get(&DRUM_NOISE),
            drum_variation: get(&DRUM_VARIATION),
            drum_rate: get(&DRUM_RATE),
            drum_gain: get(&DRUM_GAIN),
            drum_bow_x: get(&DRUM_BOW_X),
            drum_bow_y: get(&DRUM_BOW_Y),
            pad_layout: get(&PAD_LAYOUT),
            play_mode: get(&PLAY_MODE),
            string_set: get(&STRING_SET),
            glide_time_ms: get(&GLIDE_TIME),
            pitch_bend_range_st: get(&PITCH_BEND_RANGE),
            mpe: get(&MPE),
            mpe_bend_range_st: get(&MPE_BEND_RANGE),
            vibrato_rate_hz: get(&VIBRATO_RATE),
            vibrato_depth_cents: get(&VIBRATO_DEPTH),
            body: get(&BODY),
            body_mix_percent: get(&BODY_MIX),
            sympathetic_percent: get(&SYMPATHETIC),
            friction_model: get(&FRICTION_MODEL),
            string_engine: get(&STRING_ENGINE),
            drum_friction_model: get(&DRUM_FRICTION_MODEL),
            bow_model: get(&BOW_MODEL),
            bow_width: get(&BOW_WIDTH),
            bow_torsion: get(&BOW_TORSION),
            string_weight_percent: get(&STRING_WEIGHT),
            drum_radiation_percent: get(&DRUM_RADIATION),
            vibrato_delay_ms: get(&VIBRATO_DELAY),
            voice_count: get(&VOICES),
        }
    }

    /// The value of the control with this ID.
    pub fn get(&self, id: &str) -> Option<f64> {
        Some(match id {
            "bow_force" => self.bow_force_n,
            "bow_velocity" => self.bow_velocity_mps,
            "bow_position" => self.bow_position,
            "noise" => self.noise,
            "damping" => self.damping_scale,
            "output_gain" => self.output_gain_db,
            "bristle_stiffness" => self.bristle_stiffness_n_per_m,
            "static_friction" => self.static_friction,
            "dynamic_friction" => self.dynamic_friction,
            "stribeck_velocity" => self.stribeck_velocity_mps,
            "string_stiffness" => self.string_stiffness,
            "finger_position" => self.finger_position,
            "bow_attack" => self.bow_attack_ms,
            "bow_release" => self.bow_release_ms,
            "intonation" => self.intonation_percent,
            "instrument" => self.instrument,
            "drum_quality" => self.drum_quality,
            "drum_tuning" => self.drum_tuning,
            "drum_damping" => self.drum_damping,
            "drum_noise" => self.drum_noise,
            "drum_variation" => self.drum_variation,
            "drum_rate" => self.drum_rate,
            "drum_gain" => self.drum_gain,
            "drum_bow_x" => self.drum_bow_x,
            "drum_bow_y" => self.drum_bow_y,
            "pad_layout" => self.pad_layout,
            "play_mode" => self.play_mode,
            "string_set" => self.string_set,
            "glide_time" => self.glide_time_ms,
            "pitch_bend_range" => self.pitch_bend_range_st,
            "mpe" => self.mpe,
            "mpe_bend_range" => self.mpe_bend_range_st,
            "vibrato_rate" => self.vibrato_rate_hz,
            "vibrato_depth" => self.vibrato_depth_cents,
            "body" => self.body,
            "body_mix" => self.body_mix_percent,
            "sympathetic" => self.sympathetic_percent,
            "friction_model" => self.friction_model,
            "string_engine" => self.string_engine,
            "drum_friction_model" => self.drum_friction_model,
            "bow_model" => self.bow_model,
            "bow_width" => self.bow_width,
            "bow_torsion" => self.bow_torsion,
            "string_weight" => self.string_weight_percent,
            "drum_radiation" => self.drum_radiation_percent,
            "vibrato_delay" => self.vibrato_delay_ms,
            "voices" => self.voice_count,
            _ => return None,
        })
    }

    /// How many string voices Poly sounds at once: [`Controls::voice_count`] as a count
    /// (clamped into 1 to [`MOST_VOICES`], a NaN to the default, as every control is).
    pub fn voice_limit(&self) -> usize {
        VOICES.clamp(self.voice_count) as usize
    }

    /// Sets the control with this ID (clamped into its range). Returns false for an unknown ID.
    pub fn set(&mut self, id: &str, value: f64) -> bool {
        let Some(spec) = find(id) else { return false };
        let current = *self;
        *self = Self::from_lookup(|s| if s.id == spec.id { value } else { current.get(s.id).unwrap_or(s.default) });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_defaults_in_range() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(a.min <= a.default && a.default <= a.max, "{}", a.id);
            assert!(ALL[i + 1..].iter().all(|b| b.id != a.id), "duplicate {}", a.id);
            assert_eq!(Controls::default().get(a.id), Some(a.default));
        }
    }

    #[test]
    fn set_clamps_and_rejects_unknown() {
        let mut c = Controls::default();
        assert!(c.set("bow_force", 1e9));
        assert_eq!(c.bow_force_n, BOW_FORCE.max);
        assert!(c.set("bow_velocity", f64::NAN));
        assert_eq!(c.bow_velocity_mps, BOW_VELOCITY.default);
        assert!(!c.set("nope", 1.0));
        assert!(c.set("instrument", 0.7));
        assert_eq!(c.instrument, 1.0);
    }
}

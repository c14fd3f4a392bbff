//! The plugin's parameters: one nice-plug parameter per entry of [`rosin_engine::controls::ALL`],
//! with the same ID, range and default. The IDs are stored in DAW projects: never rename or
//! remove one.

use std::sync::Arc;

use nice_plug::prelude::*;

use rosin_engine::controls::{self, ControlSpec, Controls, Taper};

#[derive(Params)]
pub struct RosinParams {
    #[id = "bow_force"]
    pub bow_force: FloatParam,
    #[id = "bow_velocity"]
    pub bow_velocity: FloatParam,
    #[id = "bow_position"]
    pub bow_position: FloatParam,
    #[id = "noise"]
    pub noise: FloatParam,
    #[id = "damping"]
    pub damping: FloatParam,
    #[id = "output_gain"]
    pub output_gain: FloatParam,
    #[id = "bristle_stiffness"]
    pub bristle_stiffness: FloatParam,
    #[id = "static_friction"]
    pub static_friction: FloatParam,
    #[id = "dynamic_friction"]
    pub dynamic_friction: FloatParam,
    #[id = "stribeck_velocity"]
    pub stribeck_velocity: FloatParam,
    #[id = "string_stiffness"]
    pub string_stiffness: FloatParam,
    #[id = "finger_position"]
    pub finger_position: FloatParam,
    #[id = "bow_attack"]
    pub bow_attack: FloatParam,
    #[id = "bow_release"]
    pub bow_release: FloatParam,
    #[id = "intonation"]
    pub intonation: FloatParam,
    #[id = "instrument"]
    pub instrument: IntParam,
    #[id = "drum_quality"]
    pub drum_quality: IntParam,
    #[id = "drum_tuning"]
    pub drum_tuning: FloatParam,
    #[id = "drum_damping"]
    pub drum_damping: FloatParam,
    #[id = "drum_noise"]
    pub drum_noise: FloatParam,
    #[id = "drum_variation"]
    pub drum_variation: FloatParam,
    #[id = "drum_rate"]
    pub drum_rate: FloatParam,
    #[id = "drum_gain"]
    pub drum_gain: FloatParam,
    #[id = "drum_bow_x"]
    pub drum_bow_x: FloatParam,
    #[id = "drum_bow_y"]
    pub drum_bow_y: FloatParam,
    #[id = "pad_layout"]
    pub pad_layout: IntParam,
    /// The version of the saved state's layout ([`rosin_engine::state`]); saved with every project.
    #[persist = "state_version"]
    pub state_version: Arc<std::sync::atomic::AtomicU32>,
    /// What the player should know about the last state loaded (a project from a newer
    /// Rosin), shown by the editor until dismissed; empty when there is nothing to say.
    #[persist = "state_notice"]
    pub state_notice: Arc<std::sync::RwLock<String>>,
    /// The name of the preset last loaded or saved from the editor (empty: none), saved with
    /// the project so that the editor shows it, and whether the controls moved since.
    #[persist = "preset_name"]
    pub preset_name: Arc<std::sync::RwLock<String>>,
    /// The editor's page (`string`, `membrane`, `lab` or `guettler`), saved with the project
    /// and opened again with it; empty until the editor has been opened.
    #[persist = "editor_page"]
    pub editor_page: Arc<std::sync::RwLock<String>>,
    /// The editor window's size in logical pixels, saved with the project once the player
    /// resizes it, and asked of the host when the editor opens; `None` until then.
    #[persist = "editor_size"]
    pub editor_size: Arc<std::sync::RwLock<Option<(f32, f32)>>>,
    #[id = "play_mode"]
    pub play_mode: IntParam,
    #[id = "string_set"]
    pub string_set: IntParam,
    #[id = "glide_time"]
    pub glide_time: FloatParam,
    #[id = "pitch_bend_range"]
    pub pitch_bend_range: FloatParam,
    #[id = "mpe"]
    pub mpe: IntParam,
    #[id = "mpe_bend_range"]
    pub mpe_bend_range: FloatParam,
    #[id = "vibrato_rate"]
    pub vibrato_rate: FloatParam,
    #[id = "vibrato_depth"]
    pub vibrato_depth: FloatParam,
    #[id = "body"]
    pub body: IntParam,
    #[id = "body_mix"]
    pub body_mix: FloatParam,
    #[id = "sympathetic"]
    pub sympathetic: FloatParam,
    #[id = "friction_model"]
    pub friction_model: IntParam,
    #[id = "string_engine"]
    pub string_engine: IntParam,
    #[id = "drum_friction_model"]
    pub drum_friction_model: IntParam,
    #[id = "bow_model"]
    pub bow_model: IntParam,
    #[id = "bow_width"]
    pub bow_width: IntParam,
    #[id = "bow_torsion"]
    pub bow_torsion: IntParam,
    #[id = "string_weight"]
    pub string_weight: FloatParam,
    #[id = "drum_radiation"]
    pub drum_radiation: FloatParam,
    #[id = "vibrato_delay"]
    pub vibrato_delay: FloatParam,
    #[id = "voices"]
    pub voices: IntParam,
}

/// Starting values that replace the specs' defaults for this process: set once by
/// `rosin-standalone --set ID=VALUE` before the plugin exists. Plugins in hosts never set it.
pub static STANDALONE_START_VALUES: std::sync::OnceLock<Vec<(&'static str, f64)>> = std::sync::OnceLock::new();
/// The factory preset `rosin-standalone --preset NAME` starts on (its values are among the
/// start values), shown by the editor as the preset loaded.
pub static STANDALONE_START_PRESET: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The editor size `rosin-standalone --editor-size WxH` starts on, as if a project saved
/// at that size had loaded.
pub static STANDALONE_START_EDITOR_SIZE: std::sync::OnceLock<(f32, f32)> = std::sync::OnceLock::new();

fn start_value(spec: &ControlSpec) -> f64 {
    STANDALONE_START_VALUES.get().and_then(|values| values.iter().find(|(id, _)| *id == spec.id)).map_or(spec.default, |(_, v)| spec.clamp(*v))
}

/// One parameter, by its type.
#[derive(Clone, Copy)]
pub enum ParamRef<'a> {
    Float(&'a FloatParam),
    /// A choice, stored as its index.
    Int(&'a IntParam),
}

/// A choice parameter built from its control spec: an integer shown by name, which also
/// parses the name back.
fn choice(spec: &ControlSpec) -> IntParam {
    let Taper::Choice(names) = spec.taper else { panic!("{} is not a choice", spec.id) };
    IntParam::new(spec.name, start_value(spec) as i32, IntRange::Linear { min: 0, max: names.len() as i32 - 1 })
        .with_value_to_string(Arc::new(move |value| names.get(value as usize).map_or_else(|| value.to_string(), |n| n.to_string())))
        .with_string_to_value(Arc::new(move |text| {
            let text = text.trim();
            names.iter().position(|n| n.eq_ignore_ascii_case(text)).map(|i| i as i32).or_else(|| text.parse().ok())
        }))
}

/// An integer parameter for a count (a [`Taper::Whole`] control), shown as the number.
fn whole(spec: &ControlSpec) -> IntParam {
    assert!(spec.taper == Taper::Whole, "{} is not a count", spec.id);
    IntParam::new(spec.name, start_value(spec) as i32, IntRange::Linear { min: spec.min as i32, max: spec.max as i32 }).with_unit(spec.unit)
}

/// A float parameter built from its control spec.
fn param(spec: &ControlSpec) -> FloatParam {
    let range = match spec.taper {
        Taper::Linear | Taper::Choice(_) | Taper::Whole => FloatRange::Linear { min: spec.min as f32, max: spec.max as f32 },
        Taper::Log => FloatRange::Skewed {
            min: spec.min as f32,
            max: spec.max as f32,
            // Close to a logarithmic taper over two to three decades.
            factor: FloatRange::skew_factor(-2.0),
        },
    };
    // Each text must read back to a value that prints as the same text (hosts check the
    // round trip through the normalised value, which f32 and the skew blur by about 1e-6 of
    // the range): decimals fixed by the range for linear controls, four significant digits
    // for logarithmic ones.
    let formatter: Arc<dyn Fn(f32) -> String + Send + Sync> = match spec.taper {
        Taper::Log if spec.max / spec.min.max(1e-30) > 1e3 => Arc::new(|value| format!("{value:.3e}")),
        Taper::Log => Arc::new(|value| significant_digits(value, 4)),
        Taper::Linear | Taper::Choice(_) | Taper::Whole => formatters::v2s_f32_rounded(if spec.max - spec.min >= 10.0 { 1 } else { 3 }),
    };
    FloatParam::new(spec.name, start_value(spec) as f32, range).with_unit(spec.unit).with_value_to_string(formatter)
}

/// `value` rounded to `digits` significant digits, in plain notation ("4450 N/m", "0.01235").
pub fn significant_digits(value: f32, digits: i32) -> String {
    let value = value as f64;
    if value == 0.0 || !value.is_finite() {
        return "0".to_string();
    }
    let round = |v: f64| {
        let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
        (v * scale).round() / scale
    };
    // Rounding can carry into the next decade (9.9996 to 10.00): count the decimals after it.
    let rounded = round(value);
    let decimals = (digits - 1 - rounded.abs().log10().floor() as i32).max(0) as usize;
    format!("{rounded:.decimals$}")
}

impl Default for RosinParams {
    fn default() -> Self {
        Self {
            bow_force: param(&controls::BOW_FORCE).with_poly_modulation_id(0),
            bow_velocity: param(&controls::BOW_VELOCITY).with_poly_modulation_id(1),
            bow_position: param(&controls::BOW_POSITION).with_poly_modulation_id(2),
            noise: param(&controls::NOISE),
            damping: param(&controls::DAMPING),
            output_gain: param(&controls::OUTPUT_GAIN),
            bristle_stiffness: param(&controls::BRISTLE_STIFFNESS),
            static_friction: param(&controls::STATIC_FRICTION),
            dynamic_friction: param(&controls::DYNAMIC_FRICTION),
            stribeck_velocity: param(&controls::STRIBECK_VELOCITY),
            string_stiffness: param(&controls::STRING_STIFFNESS),
            finger_position: param(&controls::FINGER_POSITION),
            bow_attack: param(&controls::BOW_ATTACK),
            bow_release: param(&controls::BOW_RELEASE),
            intonation: param(&controls::INTONATION),
            instrument: choice(&controls::INSTRUMENT),
            drum_quality: choice(&controls::DRUM_QUALITY),
            drum_tuning: param(&controls::DRUM_TUNING),
            drum_damping: param(&controls::DRUM_DAMPING),
            drum_noise: param(&controls::DRUM_NOISE),
            drum_variation: param(&controls::DRUM_VARIATION),
            drum_rate: param(&controls::DRUM_RATE),
            drum_gain: param(&controls::DRUM_GAIN),
            drum_bow_x: param(&controls::DRUM_BOW_X),
            drum_bow_y: param(&controls::DRUM_BOW_Y),
            pad_layout: choice(&controls::PAD_LAYOUT),
            state_version: Arc::new(std::sync::atomic::AtomicU32::new(rosin_engine::state::STATE_VERSION)),
            state_notice: Arc::new(std::sync::RwLock::new(String::new())),
            editor_page: Arc::new(std::sync::RwLock::new(String::new())),
            editor_size: Arc::new(std::sync::RwLock::new(STANDALONE_START_EDITOR_SIZE.get().copied())),
            preset_name: Arc::new(std::sync::RwLock::new(STANDALONE_START_PRESET.get().map_or_else(String::new, |name| name.to_string()))),
            play_mode: choice(&controls::PLAY_MODE),
            string_set: choice(&controls::STRING_SET),
            glide_time: param(&controls::GLIDE_TIME),
            pitch_bend_range: param(&controls::PITCH_BEND_RANGE),
            mpe: choice(&controls::MPE),
            mpe_bend_range: param(&controls::MPE_BEND_RANGE),
            vibrato_rate: param(&controls::VIBRATO_RATE),
            vibrato_depth: param(&controls::VIBRATO_DEPTH),
            body: choice(&controls::BODY),
            body_mix: param(&controls::BODY_MIX),
            sympathetic: param(&controls::SYMPATHETIC),
            friction_model: choice(&controls::FRICTION_MODEL),
            string_engine: choice(&controls::STRING_ENGINE),
            drum_friction_model: choice(&controls::DRUM_FRICTION_MODEL),
            bow_model: choice(&controls::BOW_MODEL),
            bow_width: choice(&controls::BOW_WIDTH),
            bow_torsion: choice(&controls::BOW_TORSION),
            string_weight: param(&controls::STRING_WEIGHT),
            drum_radiation: param(&controls::DRUM_RADIATION),
            vibrato_delay: param(&controls::VIBRATO_DELAY),
            voices: whole(&controls::VOICES).non_automatable(),
        }
    }
}

impl RosinParams {
    /// The parameter with this ID.
    pub fn param_ref(&self, id: &str) -> Option<ParamRef<'_>> {
        use ParamRef::{Float, Int};
        Some(match id {
            "bow_force" => Float(&self.bow_force),
            "bow_velocity" => Float(&self.bow_velocity),
            "bow_position" => Float(&self.bow_position),
            "noise" => Float(&self.noise),
            "damping" => Float(&self.damping),
            "output_gain" => Float(&self.output_gain),
            "bristle_stiffness" => Float(&self.bristle_stiffness),
            "static_friction" => Float(&self.static_friction),
            "dynamic_friction" => Float(&self.dynamic_friction),
            "stribeck_velocity" => Float(&self.stribeck_velocity),
            "string_stiffness" => Float(&self.string_stiffness),
            "finger_position" => Float(&self.finger_position),
            "bow_attack" => Float(&self.bow_attack),
            "bow_release" => Float(&self.bow_release),
            "intonation" => Float(&self.intonation),
            "instrument" => Int(&self.instrument),
            "drum_quality" => Int(&self.drum_quality),
            "drum_tuning" => Float(&self.drum_tuning),
            "drum_damping" => Float(&self.drum_damping),
            "drum_noise" => Float(&self.drum_noise),
            "drum_variation" => Float(&self.drum_variation),
            "drum_rate" => Float(&self.drum_rate),
            "drum_gain" => Float(&self.drum_gain),
            "drum_bow_x" => Float(&self.drum_bow_x),
            "drum_bow_y" => Float(&self.drum_bow_y),
            "pad_layout" => Int(&self.pad_layout),
            "play_mode" => Int(&self.play_mode),
            "string_set" => Int(&self.string_set),
            "glide_time" => Float(&self.glide_time),
            "pitch_bend_range" => Float(&self.pitch_bend_range),
            "mpe" => Int(&self.mpe),
            "mpe_bend_range" => Float(&self.mpe_bend_range),
            "vibrato_rate" => Float(&self.vibrato_rate),
            "vibrato_depth" => Float(&self.vibrato_depth),
            "body" => Int(&self.body),
            "body_mix" => Float(&self.body_mix),
            "sympathetic" => Float(&self.sympathetic),
            "friction_model" => Int(&self.friction_model),
            "string_engine" => Int(&self.string_engine),
            "drum_friction_model" => Int(&self.drum_friction_model),
            "bow_model" => Int(&self.bow_model),
            "bow_width" => Int(&self.bow_width),
            "bow_torsion" => Int(&self.bow_torsion),
            "string_weight" => Float(&self.string_weight),
            "drum_radiation" => Float(&self.drum_radiation),
            "vibrato_delay" => Float(&self.vibrato_delay),
            "voices" => Int(&self.voices),
            _ => return None,
        })
    }

    /// The plain value of the parameter with this ID (a choice gives its index).
    pub fn value_of(&self, id: &str) -> Option<f64> {
        Some(match self.param_ref(id)? {
            ParamRef::Float(p) => p.value() as f64,
            ParamRef::Int(p) => p.value() as f64,
        })
    }

    /// The current values as plain controls. The engine ramps them per sample.
    pub fn controls(&self) -> Controls {
        Controls::from_lookup(|spec| self.value_of(spec.id).unwrap_or(spec.default))
    }
}

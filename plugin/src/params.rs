//! The plugin's parameters: one nice-plug parameter per entry of [`crate::controls::ALL`],
//! with the same ID, range and default. The IDs are stored in DAW projects: never rename or
//! remove one.

use std::sync::Arc;

use nice_plug::prelude::*;

use crate::controls::{self, ControlSpec, Controls, Taper};

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
}

/// A float parameter built from its control spec.
fn param(spec: &ControlSpec) -> FloatParam {
    let range = match spec.taper {
        Taper::Linear => FloatRange::Linear { min: spec.min as f32, max: spec.max as f32 },
        Taper::Log => FloatRange::Skewed {
            min: spec.min as f32,
            max: spec.max as f32,
            // Close to a logarithmic taper over two to three decades.
            factor: FloatRange::skew_factor(-2.0),
        },
    };
    let digits = match spec.taper {
        Taper::Linear if spec.max - spec.min >= 10.0 => 1,
        Taper::Linear => 3,
        Taper::Log => 3,
    };
    let formatter: Arc<dyn Fn(f32) -> String + Send + Sync> = if spec.taper == Taper::Log && spec.max / spec.min.max(1e-30) > 1e3 {
        Arc::new(|value| format!("{value:.3e}"))
    } else {
        formatters::v2s_f32_rounded(digits)
    };
    FloatParam::new(spec.name, spec.default as f32, range).with_unit(spec.unit).with_value_to_string(formatter)
}

impl Default for RosinParams {
    fn default() -> Self {
        Self {
            bow_force: param(&controls::BOW_FORCE),
            bow_velocity: param(&controls::BOW_VELOCITY),
            bow_position: param(&controls::BOW_POSITION),
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
        }
    }
}

impl RosinParams {
    fn by_id(&self, id: &str) -> Option<&FloatParam> {
        Some(match id {
            "bow_force" => &self.bow_force,
            "bow_velocity" => &self.bow_velocity,
            "bow_position" => &self.bow_position,
            "noise" => &self.noise,
            "damping" => &self.damping,
            "output_gain" => &self.output_gain,
            "bristle_stiffness" => &self.bristle_stiffness,
            "static_friction" => &self.static_friction,
            "dynamic_friction" => &self.dynamic_friction,
            "stribeck_velocity" => &self.stribeck_velocity,
            "string_stiffness" => &self.string_stiffness,
            "finger_position" => &self.finger_position,
            "bow_attack" => &self.bow_attack,
            "bow_release" => &self.bow_release,
            "intonation" => &self.intonation,
            _ => return None,
        })
    }

    /// The current values as plain controls. The engine ramps them per sample.
    pub fn controls(&self) -> Controls {
        Controls::from_lookup(|spec| self.by_id(spec.id).map_or(spec.default, |p| p.value() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_is_a_parameter_with_the_same_id() {
        let params = RosinParams::default();
        let map = params.param_map();
        let ids: Vec<&str> = map.iter().map(|(id, _, _)| id.as_str()).collect();
        assert_eq!(ids.len(), controls::ALL.len());
        for spec in controls::ALL {
            assert!(ids.contains(&spec.id), "missing parameter {}", spec.id);
            assert!(params.by_id(spec.id).is_some());
        }
        assert_eq!(params.controls(), Controls::from_lookup(|s| s.default as f32 as f64));
    }
}

//! Saved-state versions and their migrations. A DAW project keeps Rosin's state for years:
//! a project saved by any earlier Rosin must load in this one and sound as it did.
//!
//! The version is a persisted field, `state_version`. States without it are version 1
//! (everything before the body, expression and playing modes existed).
//!
//! | version | what changed | migration |
//! |---|---|---|
//! | 1 | the first release: string, drum, pad | - |
//! | 2 | body resonator, string sets, playing modes, MPE and vibrato | `body_mix` 0 (version 1 had no body: its output was the dry bridge force); the other new controls take their defaults, which play as version 1 did |

use std::collections::BTreeMap;

use crate::controls::{self, Taper};

/// A saved parameter value as the state holds it. The plugin glue converts the framework's
/// values to these and back, so that the migrations are written and tested without it.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// A continuous control's plain value.
    F32(f32),
    /// A choice's index.
    I32(i32),
    /// Any other kind of value (a switch, a text); migrations leave it as it is.
    Other,
}

/// The state version this build writes.
pub const STATE_VERSION: u32 = 2;
/// The persisted field that holds it.
pub const VERSION_FIELD: &str = "state_version";

/// The version a state was saved with (1 when it predates versioning, or the field is
/// unreadable).
pub fn version_of(fields: &BTreeMap<String, String>) -> u32 {
    fields.get(VERSION_FIELD).and_then(|v| v.trim().parse().ok()).unwrap_or(1)
}

/// Brings a saved state up to [`STATE_VERSION`], then makes every value safe: controls the
/// state lacks get their defaults (without this, nice-plug would keep the instance's current
/// value), and every value is clamped into its range, non-finite ones to the default.
pub fn migrate(params: &mut BTreeMap<String, ParamValue>, fields: &mut BTreeMap<String, String>) {
    let version = version_of(fields);
    if version < 2 {
        // Version 1 played the dry bridge force.
        params.entry(controls::BODY_MIX.id.to_string()).or_insert(ParamValue::F32(0.0));
    }
    fields.insert(VERSION_FIELD.to_string(), STATE_VERSION.to_string());
    for spec in controls::ALL {
        params.entry(spec.id.to_string()).or_insert_with(|| match spec.taper {
            Taper::Choice(_) => ParamValue::I32(spec.default as i32),
            _ => ParamValue::F32(spec.default as f32),
        });
    }
    for (id, value) in params.iter_mut() {
        match (controls::find(id), value) {
            (Some(spec), ParamValue::F32(v)) => *v = spec.clamp(*v as f64) as f32,
            (Some(spec), ParamValue::I32(v)) => *v = spec.clamp(*v as f64) as i32,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_one_state_loads_dry_and_becomes_version_two() {
        let mut params = BTreeMap::from([("bow_force".to_string(), ParamValue::F32(3.0))]);
        let mut fields = BTreeMap::new();
        migrate(&mut params, &mut fields);
        assert!(matches!(params["body_mix"], ParamValue::F32(v) if v == 0.0), "body_mix");
        assert!(matches!(params["bow_force"], ParamValue::F32(v) if v == 3.0), "bow_force");
        assert!(matches!(params["play_mode"], ParamValue::I32(v) if v == 0), "play_mode");
        assert_eq!(version_of(&fields), STATE_VERSION);
    }

    #[test]
    fn a_current_state_keeps_its_body_and_gets_missing_defaults() {
        let mut params = BTreeMap::from([("body_mix".to_string(), ParamValue::F32(80.0))]);
        let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), "2".to_string())]);
        migrate(&mut params, &mut fields);
        assert!(matches!(params["body_mix"], ParamValue::F32(v) if v == 80.0), "body_mix");
        let mut fresh = BTreeMap::new();
        migrate(&mut fresh, &mut fields);
        assert!(matches!(fresh["body_mix"], ParamValue::F32(v) if v == controls::BODY_MIX.default as f32));
    }
}

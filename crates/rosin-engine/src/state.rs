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

use crate::controls;

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

/// A saved state that cannot be loaded.
#[derive(Clone, Debug, PartialEq)]
pub enum StateError {
    /// The version field holds something that is not a version number.
    UnreadableVersion(String),
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnreadableVersion(text) => write!(f, "the saved state's version '{text}' is not a number, so Rosin cannot tell how to read it; nothing was loaded"),
        }
    }
}

impl std::error::Error for StateError {}

/// What loading a saved state did, for the log and the editor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Migration {
    /// The version the state was saved with.
    pub from_version: u32,
    /// Controls saved with a value of the wrong kind (a number for a choice, or the other way
    /// round), converted.
    pub converted: Vec<String>,
    /// What the player should know: the state came from a newer Rosin.
    pub notice: Option<String>,
}

/// The version a state was saved with: 1 when it predates versioning (no field), an error
/// when the field is there but holds no version number.
pub fn version_of(fields: &BTreeMap<String, String>) -> Result<u32, StateError> {
    match fields.get(VERSION_FIELD) {
        None => Ok(1),
        Some(text) => text.trim().trim_matches('"').parse().map_err(|_| StateError::UnreadableVersion(text.clone())),
    }
}

/// Brings a saved state up to [`STATE_VERSION`], then makes every value safe: controls the
/// state lacks get their defaults (without this, nice-plug would keep the instance's current
/// value), a value of the wrong kind is converted (without this, nice-plug would keep the
/// instance's current value too), and every value is clamped into its range, non-finite ones
/// to the default.
///
/// A state from a newer Rosin loads the controls this one knows and says so in
/// [`Migration::notice`]. A state whose version cannot be read is refused: the error says
/// why, and the caller applies nothing.
pub fn migrate(params: &mut BTreeMap<String, ParamValue>, fields: &mut BTreeMap<String, String>) -> Result<Migration, StateError> {
    let version = version_of(fields)?;
    let mut migration = Migration { from_version: version, ..Migration::default() };
    if version < 2 {
        // Version 1 played the dry bridge force.
        params.entry(controls::BODY_MIX.id.to_string()).or_insert(ParamValue::F32(0.0));
    }
    if version > STATE_VERSION {
        migration.notice = Some(format!(
            "This project was saved by a newer Rosin (state version {version}). This Rosin (state version {STATE_VERSION}) loaded the controls it knows; what the newer one added is left out, and the sound may differ."
        ));
    }
    fields.insert(VERSION_FIELD.to_string(), STATE_VERSION.to_string());
    for spec in controls::ALL {
        if !spec.in_presets() && !params.contains_key(spec.id) {
            // A setting of the machine (the voices), which presets do not hold: a state
            // without it (a preset, or a project from before it existed, which played the
            // default) leaves the instance's as it is.
            continue;
        }
        let value = params.entry(spec.id.to_string()).or_insert_with(|| if spec.is_stepped() { ParamValue::I32(spec.default as i32) } else { ParamValue::F32(spec.default as f32) });
        // The kind nice-plug expects: a whole number (a choice's index, a count), or a
        // continuous control's value.
        let converted = match (spec.is_stepped(), &*value) {
            (true, ParamValue::F32(v)) => Some(ParamValue::I32(if v.is_finite() { v.round() as i32 } else { spec.default as i32 })),
            (true, ParamValue::Other) => Some(ParamValue::I32(spec.default as i32)),
            (true, ParamValue::I32(_)) => None,
            (false, ParamValue::I32(v)) => Some(ParamValue::F32(*v as f32)),
            (false, ParamValue::Other) => Some(ParamValue::F32(spec.default as f32)),
            (false, ParamValue::F32(_)) => None,
        };
        if let Some(converted) = converted {
            *value = converted;
            migration.converted.push(spec.id.to_string());
        }
    }
    for (id, value) in params.iter_mut() {
        match (controls::find(id), value) {
            (Some(spec), ParamValue::F32(v)) => *v = spec.clamp(*v as f64) as f32,
            (Some(spec), ParamValue::I32(v)) => *v = spec.clamp(*v as f64) as i32,
            _ => {}
        }
    }
    Ok(migration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_one_state_loads_dry_and_becomes_version_two() {
        let mut params = BTreeMap::from([("bow_force".to_string(), ParamValue::F32(3.0))]);
        let mut fields = BTreeMap::new();
        migrate(&mut params, &mut fields).unwrap();
        assert!(matches!(params["body_mix"], ParamValue::F32(v) if v == 0.0), "body_mix");
        assert!(matches!(params["bow_force"], ParamValue::F32(v) if v == 3.0), "bow_force");
        assert!(matches!(params["play_mode"], ParamValue::I32(v) if v == 0), "play_mode");
        assert_eq!(version_of(&fields), Ok(STATE_VERSION));
    }

    #[test]
    fn a_current_state_keeps_its_body_and_gets_missing_defaults() {
        let mut params = BTreeMap::from([("body_mix".to_string(), ParamValue::F32(80.0))]);
        let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), "2".to_string())]);
        migrate(&mut params, &mut fields).unwrap();
        assert!(matches!(params["body_mix"], ParamValue::F32(v) if v == 80.0), "body_mix");
        let mut fresh = BTreeMap::new();
        migrate(&mut fresh, &mut fields).unwrap();
        assert!(matches!(fresh["body_mix"], ParamValue::F32(v) if v == controls::BODY_MIX.default as f32));
    }

    #[test]
    fn out_of_range_and_non_finite_values_are_brought_into_range() {
        let mut params = BTreeMap::from([
            ("bow_force".to_string(), ParamValue::F32(1e30)),
            ("bow_velocity".to_string(), ParamValue::F32(f32::NAN)),
            ("string_set".to_string(), ParamValue::I32(99)),
            ("play_mode".to_string(), ParamValue::I32(-4)),
        ]);
        let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), "2".to_string())]);
        migrate(&mut params, &mut fields).unwrap();
        assert!(matches!(params["bow_force"], ParamValue::F32(v) if v as f64 == controls::BOW_FORCE.max));
        assert!(matches!(params["bow_velocity"], ParamValue::F32(v) if v == controls::BOW_VELOCITY.default as f32));
        assert!(matches!(params["string_set"], ParamValue::I32(v) if v as f64 == controls::STRING_SET.max));
        assert!(matches!(params["play_mode"], ParamValue::I32(0)));
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_converted() {
        let mut params = BTreeMap::from([
            ("bow_force".to_string(), ParamValue::I32(5)),
            ("play_mode".to_string(), ParamValue::F32(2.2)),
            ("string_set".to_string(), ParamValue::Other),
        ]);
        let mut fields = BTreeMap::new();
        let migration = migrate(&mut params, &mut fields).unwrap();
        assert_eq!(params["bow_force"], ParamValue::F32(5.0));
        assert_eq!(params["play_mode"], ParamValue::I32(2));
        assert_eq!(params["string_set"], ParamValue::I32(controls::STRING_SET.default as i32));
        assert_eq!(migration.converted, vec!["bow_force".to_string(), "play_mode".to_string(), "string_set".to_string()]);
        assert!(migration.notice.is_none());
    }

    #[test]
    fn a_state_without_the_voices_leaves_the_instances_and_one_with_them_gets_a_whole_count() {
        // A preset, or a project saved before the control existed: the instance keeps its own.
        let mut params = BTreeMap::from([("bow_force".to_string(), ParamValue::F32(3.0))]);
        let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), "2".to_string())]);
        migrate(&mut params, &mut fields).unwrap();
        assert!(!params.contains_key(controls::VOICES.id));
        assert!(params.contains_key(controls::BOW_MODEL.id), "every control of the sound gets its default");
        // Saved as a number of another kind, or out of range: a whole count from 1 to 64.
        for (saved, loaded) in [(ParamValue::F32(31.6), 32), (ParamValue::I32(0), 1), (ParamValue::I32(500), 64), (ParamValue::F32(f32::NAN), 16), (ParamValue::Other, 16)] {
            let mut params = BTreeMap::from([(controls::VOICES.id.to_string(), saved.clone())]);
            migrate(&mut params, &mut fields).unwrap();
            assert_eq!(params[controls::VOICES.id], ParamValue::I32(loaded), "{saved:?}");
        }
    }

    #[test]
    fn a_newer_state_loads_what_it_can_and_says_so_and_an_unreadable_version_is_refused() {
        let mut params = BTreeMap::from([("bow_force".to_string(), ParamValue::F32(3.0)), ("from_the_future".to_string(), ParamValue::F32(1.0))]);
        let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), "7".to_string())]);
        let migration = migrate(&mut params, &mut fields).unwrap();
        assert_eq!(migration.from_version, 7);
        assert!(migration.notice.as_deref().is_some_and(|n| n.contains("newer Rosin") && n.contains("state version 7")));
        assert_eq!(params["bow_force"], ParamValue::F32(3.0));
        for text in ["two", "", "2.5", "-1"] {
            let mut fields = BTreeMap::from([(VERSION_FIELD.to_string(), text.to_string())]);
            let mut params = BTreeMap::from([("bow_force".to_string(), ParamValue::F32(3.0))]);
            assert_eq!(migrate(&mut params, &mut fields), Err(StateError::UnreadableVersion(text.to_string())), "{text:?}");
            assert_eq!(params.len(), 1, "a refused state is left as it was");
        }
        // Saved as a JSON string by a hand or another tool: still a version.
        assert_eq!(version_of(&BTreeMap::from([(VERSION_FIELD.to_string(), "\"2\"".to_string())])), Ok(2));
    }
}

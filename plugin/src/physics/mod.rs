//! The physical models. Nothing here imports the plugin framework: every model takes its
//! sample rate and controls as plain numbers, and can be built, tested and benchmarked alone.

pub mod body;
pub mod bow;
pub mod bowed_string;
pub mod friction;
pub mod interpolation;
pub mod newton;
pub mod string;
pub mod tuning;
pub mod note_string;
pub mod string_set;
pub mod intonation;
pub mod lumped_bow;
pub mod bow_hair;
pub mod refined_friction;
pub mod dahl_friction;
pub mod contact;
pub mod hyperbolic_friction;
pub mod membrane;
pub mod tube;
pub mod connection;
pub mod drum;
pub mod torsion;
pub mod hifi_contact;
pub mod hifi_params;
pub mod hifi_bow;
pub mod waveguide;

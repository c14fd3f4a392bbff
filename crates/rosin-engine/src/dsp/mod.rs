//! Signal-processing helpers shared by the voices. Like the physics, nothing here imports
//! the plugin framework.

pub mod dc_blocker;
pub mod decimator;
pub mod denormals;
pub mod evening;
pub mod harmonic_probe;
pub mod host_rate;
pub mod output;
pub mod ramp;
pub mod rotor;

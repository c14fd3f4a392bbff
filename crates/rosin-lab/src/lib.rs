//! The numbers behind `rosin-lab`'s figures, computed without drawing anything so that the
//! tests can check them (`tests/lab.rs`). One file per figure:
//!
//! - [`hysteresis`]: friction force against the relative velocity at the friction interface
//!   for each [`FrictionModel`], on the FDTD string in steady Helmholtz motion, and the loop
//!   area `∮ f dv`.
//! - [`bow_point`]: the bow point's velocity and displacement (willemsen2019 Figs. 8-9).
//! - [`energy`]: the lumped model's discrete energy balance, step by step (matusiak2025 Fig. 7).
//! - [`guettler`]: the transient length over bow force and bow acceleration (a Guettler diagram).
//! - [`hifi`]: matusiak2025's high-fidelity bow on its Table 2 string (its own string and
//!   rate; the others below use the lab string).
//!
//! Every string here is the same: G3 from [`NoteStringDesign`] at 44.1 kHz, with willemsen2019's
//! friction at `s0 = 1e5 N/m`, `s1 = 0.001 sqrt(s0)` and no bow noise, so every run is
//! deterministic.

pub mod bow_point;
pub mod energy;
pub mod guettler;
pub mod hifi;
pub mod hysteresis;

use rosin_physics::bow::bowed_string::{BowedString, BowingControls};
use rosin_physics::bow::contact::FrictionModel;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::friction::hyperbolic::ContactState;
use rosin_physics::string::note_string::NoteStringDesign;

/// The lab's sample rate (Hz).
pub const SAMPLE_RATE_HZ: f64 = 44_100.0;
/// G3, the string every figure bows.
pub const STRING_FREQUENCY_HZ: f64 = 196.0;
const MAX_INTERVALS: usize = 1024;
const SEED: u64 = 7;

/// The bow as `Controls::default()` has it: 6 N at 0.1 m/s, 0.18 of the length from the bridge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bowing {
    pub normal_force_n: f64,
    pub bow_velocity_mps: f64,
    pub bow_position: f64,
}

impl Default for Bowing {
    fn default() -> Self {
        Self { normal_force_n: 6.0, bow_velocity_mps: 0.1, bow_position: 0.18 }
    }
}

impl Bowing {
    /// The controls with force and velocity scaled by `amount` (a ramp in).
    pub fn controls(&self, amount: f64) -> BowingControls {
        BowingControls { normal_force_n: self.normal_force_n * amount, bow_velocity_mps: self.bow_velocity_mps * amount, bow_position: self.bow_position, finger_position_m: None }
    }
}

/// willemsen2019's friction with the stiffer bristle the lab uses, and no noise.
pub fn lab_friction() -> ElastoPlasticParams {
    let s0 = 1e5;
    ElastoPlasticParams { bristle_stiffness_n_per_m: s0, bristle_damping_kg_per_s: 0.001 * s0.sqrt(), noise_per_normal_force: 0.0, ..ElastoPlasticParams::default() }
}

/// The lab's G3 string, at rest, with `model` at the bow.
pub fn lab_string(model: FrictionModel) -> BowedString {
    let (grid, material) = NoteStringDesign::default().build(STRING_FREQUENCY_HZ, SAMPLE_RATE_HZ, MAX_INTERVALS);
    let mut string = BowedString::with_capacity(MAX_INTERVALS, grid, material, lab_friction(), SEED);
    string.bow.set_model(model);
    string
}

/// One sample at the bow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BowSample {
    /// The bow's own velocity (m/s).
    pub bow_velocity_mps: f64,
    /// String minus bow velocity at the bow point (m/s).
    pub relative_velocity_mps: f64,
    /// The velocity the friction law sees: string minus bow minus bow hair (m/s).
    pub contact_velocity_mps: f64,
    pub force_n: f64,
    /// Whether the hyperbolic law sticks or slides (for that model only).
    pub hyperbolic_state: Option<ContactState>,
}

/// A bowed string that records one [`BowSample`] per tick.
pub struct BowRecorder {
    pub string: BowedString,
}

impl BowRecorder {
    pub fn new(model: FrictionModel) -> Self {
        Self { string: lab_string(model) }
    }

    pub fn tick(&mut self, controls: &BowingControls) -> BowSample {
        self.string.tick(controls);
        let contact = *self.string.last_contact();
        BowSample {
            bow_velocity_mps: controls.bow_velocity_mps,
            relative_velocity_mps: contact.relative_velocity_mps,
            contact_velocity_mps: self.string.bow.interface_velocity_mps(),
            force_n: contact.force_n,
            hyperbolic_state: (self.string.bow.model() == FrictionModel::Hyperbolic).then(|| self.string.bow.hyperbolic_state()),
        }
    }
}

pub use rosin_physics::bow::helmholtz::{SlipDetector, SLIP_ENTER, SLIP_LEAVE};

/// Parses a model name as the command line gives it.
pub fn parse_model(name: &str) -> Option<FrictionModel> {
    match name.to_ascii_lowercase().as_str() {
        "dupont" | "elasto-plastic" | "elastoplastic" => Some(FrictionModel::ElastoPlastic),
        "refined" | "passive" | "passive-refined" | "matusiak" => Some(FrictionModel::PassiveRefined),
        "hyperbolic" | "serafin" => Some(FrictionModel::Hyperbolic),
        "dahl" => Some(FrictionModel::Dahl),
        _ => None,
    }
}

/// The short command-line name of a model.
pub fn model_key(model: FrictionModel) -> &'static str {
    match model {
        FrictionModel::ElastoPlastic => "dupont",
        FrictionModel::PassiveRefined => "refined",
        FrictionModel::Hyperbolic => "hyperbolic",
        FrictionModel::Dahl => "dahl",
    }
}

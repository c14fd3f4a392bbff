//! The ribbon bow on a note's string (issue 17): matusiak2025's high-fidelity bow
//! ([`rosin_physics::bow::hifi_bow`]), a bow of finite width touching the string at `M` points
//! (1 to 4, across [`BOW_WIDTH_M`]), bow hair behind each, the passive refined friction at
//! each, and the string's torsional waves, played by a string voice in place of the point
//! bow on the same note string (its grid, losses, finger, pitch bends and intonation).
//!
//! What a note's string does not say, this module chooses, each from matusiak2025's G string:
//! - the string is solid steel, so its radius (the bow's lever arm on the torsion) is
//!   `sqrt(rho A / (pi 7850))`;
//! - torsional waves run [`TORSION_SPEED_RATIO`] times faster than transverse ones (849.5
//!   against 137.2 m/s), with a first-mode quality factor of [`TORSION_QUALITY_FACTOR`]; on
//!   high notes (and low ones at high rates) the torsional wave speed is held where its grid
//!   keeps [`MIN_TORSION_INTERVALS`] to [`MAX_TORSION_INTERVALS`] intervals;
//! - the hair is Table 2's (4.5 g, 4.83e4 N/m, 5.77 kg/s for the whole bow), 1 cm wide.
//!
//! The friction is the controls' (`muS`, `muC`, `vS`, `s0` as the point bow gets it), under the
//! passive refined law at every point: the ribbon bow is matusiak2025's model, whatever
//! Friction Model says. The bow's speed follows the voice's envelope (no acceleration limit
//! of its own).

use crate::controls::Controls;
use rosin_physics::bow::bowed_string::BowingControls;
use rosin_physics::bow::hifi_bow::{BowHairParams, HiFiBowParams, HiFiBowedString, HiFiStringParams, HiFiStep};
use rosin_physics::bow::hifi_contact::{ContactSolution, MAX_CONTACT_POINTS};
use rosin_physics::bow::torsion::TorsionParams;
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::string::interpolation::CubicPoint;
use rosin_physics::string::stiff_string::StringMaterial;
use rosin_physics::string::tuning::SchemeGrid;

/// `c_T / c` of matusiak2025's G string.
pub const TORSION_SPEED_RATIO: f64 = 849.5 / 137.2;
/// matusiak2025 Table 2's torsional quality factor.
pub const TORSION_QUALITY_FACTOR: f64 = 29.0;
/// The torsional grid's bounds (intervals).
pub const MIN_TORSION_INTERVALS: usize = 8;
pub const MAX_TORSION_INTERVALS: usize = 1024;
/// The density of the steel a note's string is taken to be (kg/m^3).
pub const STEEL_DENSITY_KG_PER_M3: f64 = 7850.0;
/// matusiak2025 Table 2's bow width (m).
pub const BOW_WIDTH_M: f64 = 0.01;
/// Where a sympathetic drive enters, in intervals from the bridge (as the point bow's string).
const DRIVE_INTERVALS_FROM_BRIDGE: f64 = 1.5;

/// Which bow plays a string (the `bow_model` control), chosen when a note starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BowModel {
    /// A bow touching at one point, under the chosen friction law.
    #[default]
    Point,
    /// matusiak2025's bow of finite width, with hair and torsion.
    Ribbon,
}

impl BowModel {
    pub fn from_control(value: f64) -> Self {
        if value >= 0.5 { BowModel::Ribbon } else { BowModel::Point }
    }
}

/// The ribbon's shape, from the controls: `M` contact points and whether the string twists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RibbonShape {
    pub points: usize,
    pub torsion: bool,
}

impl RibbonShape {
    pub fn from_controls(controls: &Controls) -> Self {
        // The control's choices are 1 to 4 points, at indices 0 to 3.
        Self { points: (controls.bow_width.round().max(0.0) as usize + 1).min(MAX_CONTACT_POINTS), torsion: controls.bow_torsion >= 0.5 }
    }
}

/// The high-fidelity bow's parameters for a note's string on `grid`.
pub fn note_params(grid: &SchemeGrid, material: &StringMaterial, shape: RibbonShape, friction: ElastoPlasticParams) -> HiFiBowParams {
    let rho_a = material.linear_density_kg_per_m;
    let c = grid.wave_speed_mps;
    let radius_m = (rho_a / (std::f64::consts::PI * STEEL_DENSITY_KG_PER_M3)).sqrt();
    let length = grid.length_m;
    let k = grid.time_step_s;
    let torsion_speed = (TORSION_SPEED_RATIO * c).clamp(length / (MAX_TORSION_INTERVALS as f64 * k), length / (MIN_TORSION_INTERVALS as f64 * k));
    HiFiBowParams {
        string: HiFiStringParams {
            length_m: length,
            radius_m,
            tension_n: rho_a * c * c,
            linear_density_kg_per_m: rho_a,
            // The grid carries the stiffness (`kappa`); this is only descriptive.
            youngs_modulus_pa: 2e11,
            sigma0_per_s: grid.sigma0_per_s,
            sigma1_m2_per_s: grid.sigma1_m2_per_s,
        },
        torsion: shape.torsion.then(|| TorsionParams::solid_cylinder(length, radius_m, rho_a, torsion_speed, TORSION_QUALITY_FACTOR)),
        hair: BowHairParams { mass_kg: 4.5e-3, stiffness_n_per_m: 4.83e4, damping_kg_per_s: 5.77 },
        friction: ribbon_friction(friction),
        contact_points: shape.points,
        bow_width_m: BOW_WIDTH_M,
        bow_acceleration_mps2: 0.0,
        normal_force_n: 0.0,
        bow_velocity_mps: 0.0,
        bow_position: 0.1,
    }
}

/// The controls' friction as the ribbon's law takes it: no viscous term, no noise (neither
/// is part of matusiak2025's model).
fn ribbon_friction(friction: ElastoPlasticParams) -> ElastoPlasticParams {
    ElastoPlasticParams { viscous_damping_kg_per_s: 0.0, noise_per_normal_force: 0.0, ..friction }
}

/// A voice's ribbon bow and its string.
pub struct RibbonBow {
    bowed: HiFiBowedString,
    losses: (f64, f64),
    drive_point: CubicPoint,
}

impl RibbonBow {
    /// Room for any note's grid at `sample_rate_hz` (up to `max_intervals`) and for any
    /// torsion; nothing allocates after this.
    pub fn new(grid: SchemeGrid, material: StringMaterial, max_intervals: usize) -> Self {
        let params = note_params(&grid, &material, RibbonShape { points: MAX_CONTACT_POINTS, torsion: true }, ElastoPlasticParams::default());
        let bowed = HiFiBowedString::with_capacity(params, grid, max_intervals, MAX_TORSION_INTERVALS);
        Self { bowed, losses: (grid.sigma0_per_s, grid.sigma1_m2_per_s), drive_point: drive_point(&grid) }
    }

    /// Puts the bow on a new note's string, at rest. False if it does not fit (never for
    /// grids within the capacity).
    pub fn configure(&mut self, grid: SchemeGrid, material: StringMaterial, shape: RibbonShape, friction: ElastoPlasticParams) -> bool {
        let ok = self.bowed.configure(note_params(&grid, &material, shape, friction), grid);
        self.losses = (grid.sigma0_per_s, grid.sigma1_m2_per_s);
        self.drive_point = drive_point(&grid);
        ok
    }

    /// Begins a sample with the voice's controls, the string's losses now, the friction
    /// controls and a sympathetic drive, up to the bow's contact, which
    /// [`Self::solve_pair`] (or [`Self::solve_alone`]) solves and [`Self::end`] takes on.
    // Out of line, as the whole sample was before the ribbons were paired: a call is little
    // beside the ribbon's step.
    #[inline(never)]
    pub fn begin(&mut self, controls: &BowingControls, losses: (f64, f64), friction: &ElastoPlasticParams, drive_n: f64) {
        if losses != self.losses {
            self.bowed.set_string_losses(losses.0, losses.1);
            self.losses = losses;
        }
        self.bowed.set_friction(ribbon_friction(*friction));
        self.bowed.set_finger(controls.finger_position_m);
        self.bowed.set_bow_position(controls.bow_position);
        self.bowed.set_normal_force_n(controls.normal_force_n);
        self.bowed.set_bow_velocity_mps(controls.bow_velocity_mps);
        let drive = (drive_n != 0.0).then_some((&self.drive_point, drive_n));
        self.bowed.begin_driven(drive);
    }

    /// Solves the contact of the sample [`Self::begin`] began, alone.
    #[inline]
    pub fn solve_alone(&mut self) -> ContactSolution {
        self.bowed.solve_begun()
    }

    /// Solves the contacts of two bows' begun samples together (each answer to the bit the
    /// one it gets alone; see `HiFiBowedString::solve_begun_pair`).
    #[inline]
    pub fn solve_pair(a: &mut Self, b: &mut Self) -> (ContactSolution, ContactSolution) {
        HiFiBowedString::solve_begun_pair(&mut a.bowed, &mut b.bowed)
    }

    /// Ends the sample [`Self::begin`] began with its contact's `solution`; returns the
    /// bridge force (N).
    #[inline]
    pub fn end(&mut self, solution: ContactSolution) -> f64 {
        self.bowed.end_step(solution)
    }

    pub fn set_wave_speed(&mut self, wave_speed_mps: f64) {
        self.bowed.set_wave_speed(wave_speed_mps);
    }

    pub fn bowed(&self) -> &HiFiBowedString {
        &self.bowed
    }

    pub fn bowed_mut(&mut self) -> &mut HiFiBowedString {
        &mut self.bowed
    }

    pub fn last_step(&self) -> &HiFiStep {
        self.bowed.last_step()
    }

    /// The bow's total friction force at the last sample (N).
    pub fn force_n(&self) -> f64 {
        self.last_step().force_n[..self.bowed.contact_points()].iter().sum()
    }

    /// The relative velocity at the bow's middle at the last sample (m/s): the mean over the
    /// points of string surface less bow less hair.
    pub fn relative_velocity_mps(&self) -> f64 {
        let m = self.bowed.contact_points();
        self.last_step().relative_velocity_mps[..m].iter().sum::<f64>() / m as f64
    }

    pub fn is_sane(&self) -> bool {
        self.bowed.is_sane()
    }

    pub fn reset(&mut self) {
        self.bowed.reset();
    }
}

fn drive_point(grid: &SchemeGrid) -> CubicPoint {
    let intervals = grid.intervals.max(4);
    CubicPoint::new(intervals as f64 - DRIVE_INTERVALS_FROM_BRIDGE, intervals)
}

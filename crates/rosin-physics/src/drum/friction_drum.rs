//! The friction drum: a bowed membrane rigidly connected to an acoustic tube
//! (onofrei2021 eqs. 15, 17, 21, 25-36; `MODELS.md` section 3).
//!
//! Each sample has three coupled unknowns: the bow's relative velocity `v`, the bristle
//! deflection `z` and the connection force `fc`. The paper solves them with a 3x3 Newton
//! iteration; here `fc` is eliminated exactly, which is the same solution with less work,
//! because `fc` enters the scheme linearly. With `a = k^2 / (rho_m H (1 + sigma0 k))` and
//! `b = k^2 / (rho_t A)`, the forced next levels are
//!
//! ```text
//! u+    = u*    + a (fc J_m - fB J_B)
//! zeta+ = zeta* - b fc J_t
//! ```
//!
//! and the rigid connection `I_m u+ = I_t zeta+` (eq. 27) gives `fc = fc0 + beta fB` with
//! `D = a I_m.J_m + b I_t.J_t`, `fc0 = (I_t zeta* - I_m u*) / D`, `beta = a I_m.J_B / D`.
//! Put into the bow's relative velocity (eq. 30), `v = v_free - coupling fB`: the contact
//! line of the string, with the tube's reaction folded into `v_free` and `coupling`, so any
//! of the strings' friction laws ([`FrictionContact`]) bows the drum; the paper's is the
//! elasto-plastic one. The public reference app computes `fc` after its Newton loop instead, so the
//! bow never feels the tube within a sample; here it does, and the connection holds to
//! rounding every sample.

use crate::bow::contact::FrictionContact;
use crate::friction::dupont_contact::{ContactInput, ContactOutput};
use crate::drum::connection::{MembranePatch, TubePatch};
use crate::friction::dupont::ElastoPlasticParams;
use crate::drum::membrane::{min_grid_spacing_m, BilinearPoint, Membrane, MembraneMaterial, MembraneSample, MembraneShape, MembraneTuning};
use crate::drum::tube::{Tube, TubeMaterial};

/// The largest wave speed `drum_tuning` reaches (m/s).
pub const MAX_TUNING_WAVE_SPEED_MPS: f64 = 150.0;
/// The smallest (m/s).
pub const MIN_TUNING_WAVE_SPEED_MPS: f64 = 15.0;
/// The deepest vibrato on the wave speed (m/s).
pub const MAX_VIBRATO_DEPTH_MPS: f64 = 3.0;
/// The largest `sigma0` and `sigma1` of the Damping control.
pub const MAX_SIGMA0_PER_S: f64 = 6.0;
pub const MAX_SIGMA1_M2_PER_S: f64 = 0.0026;
/// onofrei2021's grid spacing, chosen in the paper to run in real time.
pub const PAPER_GRID_SPACING_M: f64 = 0.0167;

/// How finely the membrane is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrumQuality {
    /// `h_m = h_min` for the highest tuning, vibrato and damping: the finest stable grid.
    Full,
    /// Twice `h_min`: a quarter of the points.
    Half,
    /// The paper's `h_m = 0.0167 m` (17 intervals on 0.3 m), or `h_min` if that is coarser.
    Paper,
}

impl DrumQuality {
    pub const ALL: [DrumQuality; 3] = [DrumQuality::Full, DrumQuality::Half, DrumQuality::Paper];

    /// The membrane's intervals a side for this quality at `sample_rate_hz`. The grid is set
    /// for the largest wave speed (tuning plus vibrato) and damping, so no automation of
    /// Tuning, Variation or Damping can break stability (eq. 20).
    pub fn membrane_intervals(self, material: &MembraneMaterial, sample_rate_hz: f64) -> usize {
        let h_min = min_grid_spacing_m(MAX_TUNING_WAVE_SPEED_MPS + MAX_VIBRATO_DEPTH_MPS, MAX_SIGMA1_M2_PER_S, 1.0 / sample_rate_hz);
        let finest = (material.side_m / h_min).floor() as usize;
        let wanted = match self {
            DrumQuality::Full => finest,
            DrumQuality::Half => (material.side_m / (2.0 * h_min)).floor() as usize,
            DrumQuality::Paper => (material.side_m / PAPER_GRID_SPACING_M).floor() as usize,
        };
        wanted.clamp(4, finest.max(4))
    }
}

/// The drum's physical description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrumDesign {
    pub membrane: MembraneMaterial,
    pub tube: TubeMaterial,
    pub shape: MembraneShape,
}

impl Default for DrumDesign {
    fn default() -> Self {
        Self { membrane: MembraneMaterial::default(), tube: TubeMaterial::default(), shape: MembraneShape::Circle }
    }
}

/// The performer's controls at one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrumControls {
    pub normal_force_n: f64,
    pub bow_velocity_mps: f64,
    /// The bow's place on the membrane, in metres from the grid's corner.
    pub bow_x_m: f64,
    pub bow_y_m: f64,
    pub tuning: MembraneTuning,
}

/// The membrane, the tube, the connection and the bow, stepped together. The membrane's
/// and the tube's levels are in the number format `S` ([`MembraneSample`]); everything
/// else, the bow and the connection's force, is in f64.
pub struct FrictionDrum<S: MembraneSample = f64> {
    pub membrane: Membrane<S>,
    pub tube: Tube<S>,
    /// The bow's contact, under any of the friction models the strings play.
    pub bow: FrictionContact,
    design: DrumDesign,
    membrane_patch: MembranePatch<S>,
    tube_patch: TubePatch,
    bow_point: BilinearPoint,
    bow_xy_m: (f64, f64),
    /// `sum(I_m I_B)` at the bow's nodes: `h_m^2 (I_m . J_B)`.
    bow_patch_overlap: f64,
    last_contact: ContactOutput,
    last_connection_force_n: f64,
}

impl<S: MembraneSample> FrictionDrum<S> {
    /// Allocates a drum whose grids can hold `max_membrane_intervals` and
    /// `max_tube_intervals`; nothing allocates after this.
    pub fn with_capacity(max_membrane_intervals: usize, max_tube_intervals: usize, design: DrumDesign, sample_rate_hz: f64, friction: ElastoPlasticParams, seed: u64) -> Self {
        let k = 1.0 / sample_rate_hz;
        let membrane = Membrane::<S>::with_capacity(max_membrane_intervals, design.membrane, design.shape, max_membrane_intervals, k);
        let tube = Tube::<S>::with_capacity(max_tube_intervals, design.tube, max_tube_intervals, k);
        let bow_point = BilinearPoint::new(&membrane, 0.0, 0.0);
        let mut drum = Self {
            membrane,
            tube,
            bow: FrictionContact::new(friction, seed),
            design,
            membrane_patch: MembranePatch::with_capacity(max_membrane_intervals),
            tube_patch: TubePatch::with_capacity(max_tube_intervals),
            bow_point,
            bow_xy_m: (f64::NAN, f64::NAN),
            bow_patch_overlap: 0.0,
            last_contact: ContactOutput::default(),
            last_connection_force_n: 0.0,
        };
        drum.configure(design, max_membrane_intervals, max_tube_intervals, sample_rate_hz, seed);
        drum
    }

    /// Puts the drum on new grids (within capacity), at rest, with a fresh bow.
    pub fn configure(&mut self, design: DrumDesign, membrane_intervals: usize, tube_intervals: usize, sample_rate_hz: f64, seed: u64) {
        let k = 1.0 / sample_rate_hz;
        self.design = design;
        self.membrane.configure(design.shape, membrane_intervals, k);
        self.tube.configure(design.tube, tube_intervals, k);
        self.membrane_patch.configure(&self.membrane);
        // The connection's force is carried, not added over the membrane each sample.
        self.membrane.carry_pattern(self.membrane_patch.weights(), self.membrane_patch.rows());
        self.tube_patch.configure(self.tube.intervals());
        self.bow.reset(seed);
        self.bow_xy_m = (f64::NAN, f64::NAN);
        self.last_contact = ContactOutput::default();
        self.last_connection_force_n = 0.0;
    }

    pub fn design(&self) -> &DrumDesign {
        &self.design
    }

    pub fn membrane_patch(&self) -> &MembranePatch<S> {
        &self.membrane_patch
    }

    pub fn tube_patch(&self) -> &TubePatch {
        &self.tube_patch
    }

    /// Returns both bodies and the bow to rest.
    pub fn reset(&mut self, seed: u64) {
        self.membrane.reset();
        self.tube.reset();
        self.bow.reset(seed);
        self.last_contact = ContactOutput::default();
        self.last_connection_force_n = 0.0;
    }

    fn place_bow(&mut self, x_m: f64, y_m: f64) {
        if (x_m, y_m) != self.bow_xy_m {
            self.bow_point = BilinearPoint::new(&self.membrane, x_m, y_m);
            let w = self.membrane_patch.weights();
            self.bow_patch_overlap = self.bow_point.weights.iter().zip(&self.bow_point.indices).map(|(b, &i)| b * w[i].to_f64()).sum();
            self.bow_xy_m = (x_m, y_m);
        }
    }

    /// Steps one sample and returns the open end's displacement (m).
    #[inline]
    pub fn tick(&mut self, controls: &DrumControls) -> f64 {
        if *self.membrane.tuning() != controls.tuning {
            self.membrane.set_tuning(controls.tuning);
        }
        self.place_bow(controls.bow_x_m, controls.bow_y_m);
        // The bow's place at the previous level, which the update writes the next one over
        // (the connection's pattern carried in it too, see `Membrane::carry_pattern`).
        let (carried_previous, _) = self.membrane.carried_scales_m();
        let bow_previous = self.bow_point.interpolate(self.membrane.previous_displacement()) + carried_previous * self.bow_patch_overlap;
        // `I_m` of the free update, summed while the stencil writes it.
        let membrane_free = self.membrane.compute_free_update_and_carried_sum();
        self.tube.compute_free_update();

        let k = self.membrane.time_step_s();
        let h_m2 = self.membrane.spacing_m().powi(2);
        let h_t = self.tube.spacing_m();
        let a = self.membrane.force_to_displacement();
        let b = self.tube.force_to_displacement();
        // The inner products of eqs. 32-34, `I.J` with `J = I / h^d`.
        let im_jm = self.membrane_patch.sum_of_squares() / h_m2;
        let it_jt = self.tube_patch.sum_of_squares() / h_t;
        let ib_jb = self.bow_point.sum_of_squares() / h_m2;
        let im_jb = self.bow_patch_overlap / h_m2;

        let tube_free = self.tube_patch.interpolate(self.tube.next_displacement());
        let denominator = a * im_jm + b * it_jt;
        let fc_free = (tube_free - membrane_free) / denominator;
        let fc_per_bow_force = a * im_jb / denominator;

        let bow_free = (self.bow_point.interpolate(self.membrane.next_displacement()) - bow_previous) / (2.0 * k);
        let half_a_over_k = a / (2.0 * k);
        let free_velocity_mps = bow_free - controls.bow_velocity_mps + half_a_over_k * fc_free * im_jb;
        let coupling = half_a_over_k * (ib_jb - fc_per_bow_force * im_jb);
        self.last_contact = self.bow.solve(&ContactInput {
            free_velocity_mps,
            coupling_s_per_kg: coupling,
            normal_force_n: controls.normal_force_n,
            time_step_s: k,
        });
        let bow_force = self.last_contact.force_n;
        let fc = fc_free + fc_per_bow_force * bow_force;
        self.last_connection_force_n = fc;

        self.membrane.carry_to_next(a * fc / h_m2);
        if bow_force != 0.0 {
            for (w, &i) in self.bow_point.weights.iter().zip(&self.bow_point.indices) {
                self.membrane.add_to_next(i, -a * bow_force * w / h_m2);
            }
        }
        self.tube.add_spread_to_next(self.tube_patch.spread(), -b * fc, h_t);
        self.membrane.advance();
        self.tube.advance();
        self.tube.open_end_displacement_m()
    }

    /// The bow's contact at the last sample.
    pub fn last_contact(&self) -> &ContactOutput {
        &self.last_contact
    }

    /// `fc` at the last sample (N).
    pub fn last_connection_force_n(&self) -> f64 {
        self.last_connection_force_n
    }

    /// `I_m u - I_t zeta` at the current level: zero up to rounding when the connection holds.
    pub fn connection_gap_m(&self) -> f64 {
        self.connection_displacement_m() - self.tube_patch.interpolate(self.tube.current_displacement())
    }

    /// `I_m u` at the current level: the connection's displacement (m).
    pub fn connection_displacement_m(&self) -> f64 {
        let (_, carried) = self.membrane.carried_scales_m();
        self.membrane.weighted_sum(self.membrane.current_displacement(), self.membrane_patch.weights(), self.membrane_patch.rows()) + carried * self.membrane_patch.sum_of_squares()
    }

    /// `I_t zeta` at the current level: the tube's side of the rigid connection, which holds
    /// it equal to the membrane's `I_m u` (the weighted mean displacement of the membrane
    /// under the tube) up to rounding, for a few tube nodes instead of the membrane's patch.
    pub fn connected_displacement_m(&self) -> f64 {
        self.tube_patch.interpolate(self.tube.current_displacement())
    }

    /// The bow's interpolated membrane displacement at the current level.
    pub fn bow_point_displacement_m(&self) -> f64 {
        let (_, carried) = self.membrane.carried_scales_m();
        self.bow_point.interpolate(self.membrane.current_displacement()) + carried * self.bow_patch_overlap
    }

    pub fn is_sane(&self, limit_m: f64) -> bool {
        self.membrane.is_sane(limit_m) && self.tube.is_sane(limit_m)
    }
}

/// `J0(x)` for `|x| <= 3` (Abramowitz & Stegun 9.4.1, error below 5e-8).
fn bessel_j0(x: f64) -> f64 {
    let t = (x / 3.0).powi(2);
    let c = [1.0, -2.249_999_7, 1.265_620_8, -0.316_386_6, 0.044_447_9, -0.003_944_4, 0.000_210_0];
    c.iter().rev().fold(0.0, |acc, &a| acc * t + a)
}

/// The first zero of `J0`.
const J0_FIRST_ZERO: f64 = 2.404_825_557_695_773;

/// The fundamental eigenvalue `kappa` of the unscaled 5-point Laplacian on the membrane's
/// mask (so the (0,1) mode of the scheme obeys `cos(w k) = 1 - lambda^2 kappa / 2`).
///
/// A Rayleigh quotient over the trial shapes `J0(j01 r / R)`, minimised over the boundary
/// radius `R` near the staircase (a quotient is never below the true eigenvalue, and its
/// error is second order in the shape's), then polished by inverse iteration with
/// Gauss-Seidel solves. `tests/drum_physics.rs` finds the mode it predicts within 0.01
/// cent of the scheme's. It allocates and makes a few hundred passes over the grid, so it
/// runs when a voice is allocated, not per note.
pub fn fundamental_eigenvalue<S: MembraneSample>(membrane: &Membrane<S>) -> f64 {
    let n = membrane.intervals();
    let width = membrane.width();
    let centre = n as f64 / 2.0;
    let spans = membrane.spans();
    let quotient = |radius: f64| {
        let shape = |i: usize| {
            if !membrane.is_moving(i) {
                return 0.0;
            }
            let (l, m) = ((i % width) as f64 - centre, (i / width) as f64 - centre);
            let r = (l * l + m * m).sqrt();
            if r < radius { bessel_j0(J0_FIRST_ZERO * r / radius) } else { 0.0 }
        };
        let (mut numerator, mut denominator) = (0.0, 0.0);
        for &(start, end) in spans {
            for i in start..end {
                let u = shape(i);
                let minus_laplacian = 4.0 * u - shape(i - 1) - shape(i + 1) - shape(i - width) - shape(i + width);
                numerator += u * minus_laplacian;
                denominator += u * u;
            }
        }
        if denominator > 0.0 { numerator / denominator } else { f64::MAX }
    };
    let (mut lo, mut hi) = (centre - 1.5, centre + 1.5);
    let golden = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..40 {
        let a = hi - golden * (hi - lo);
        let b = lo + golden * (hi - lo);
        if quotient(a) < quotient(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    // Polish the best trial with a few inverse-iteration steps, each solved approximately by
    // Gauss-Seidel sweeps: they remove what the J0 shape gets wrong at the staircase.
    let radius = 0.5 * (lo + hi);
    let mut x: Vec<f64> = (0..width * width)
        .map(|i| {
            let (l, m) = ((i % width) as f64 - centre, (i / width) as f64 - centre);
            let r = (l * l + m * m).sqrt();
            if membrane.is_moving(i) && r < radius { bessel_j0(J0_FIRST_ZERO * r / radius) } else { 0.0 }
        })
        .collect();
    let rayleigh = |x: &[f64]| {
        let (mut numerator, mut denominator) = (0.0, 0.0);
        for &(start, end) in spans {
            for i in start..end {
                numerator += x[i] * (4.0 * x[i] - x[i - 1] - x[i + 1] - x[i - width] - x[i + width]);
                denominator += x[i] * x[i];
            }
        }
        numerator / denominator
    };
    let mut kappa = rayleigh(&x);
    for _ in 0..4 {
        let rhs = x.clone();
        let mut y: Vec<f64> = rhs.iter().map(|v| v / kappa).collect();
        for _ in 0..60 {
            for &(start, end) in spans {
                for i in start..end {
                    y[i] = (rhs[i] + y[i - 1] + y[i + 1] + y[i - width] + y[i + width]) / 4.0;
                }
            }
        }
        let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        x = y.iter().map(|v| v / norm).collect();
        kappa = kappa.min(rayleigh(&x));
    }
    kappa
}

/// The wave speed that puts the scheme's mode of eigenvalue `kappa` at `frequency_hz` on a
/// grid of spacing `h` and time step `k`: `cos(2 pi f k) = 1 - (c k / h)^2 kappa / 2`.
pub fn wave_speed_for_mode(frequency_hz: f64, eigenvalue: f64, spacing_m: f64, time_step_s: f64) -> f64 {
    let phase = (2.0 * std::f64::consts::PI * frequency_hz * time_step_s).min(std::f64::consts::PI);
    spacing_m / time_step_s * (2.0 * (1.0 - phase.cos()) / eigenvalue).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bessel_zero_and_square_eigenvalue() {
        assert!(bessel_j0(J0_FIRST_ZERO).abs() < 1e-7);
        assert!((bessel_j0(0.0) - 1.0).abs() < 1e-12);
        // Wave speed and frequency invert each other.
        let c = wave_speed_for_mode(200.0, 0.01, 0.005, 1.0 / 48_000.0);
        let lambda2 = (c / 48_000.0 / 0.005f64).powi(2);
        let f = (1.0 - lambda2 * 0.01 / 2.0).acos() * 48_000.0 / (2.0 * std::f64::consts::PI);
        assert!((f - 200.0).abs() < 1e-9);
    }
}

//! A bowed lumped mass with bow hair, and the passive refined elasto-plastic friction of
//! matusiak2025 (sections 2-4, eqs. 14, 24-35; `MODELS.md` section 2), in the paper's
//! energy-conserving scheme. It is the paper's test bed for the friction law before the
//! distributed string, and Rosin's: the energy balance, passivity and uniqueness checks of
//! issue 6 run on it.
//!
//! - Mass `m` on a spring `kappa` with damping `gamma` (eq. 25), bow hair `m_h, K_h,
//!   Gamma_h` with its stiffness averaged over three steps (eq. 26), relative velocity
//!   `v = dt. u - vb - dt. eta` (eq. 27).
//! - Friction `F = sigma0 mu_t z + sigma1(v) delta_t z` with `delta_t z = g(mu_t z, v)`
//!   (eqs. 28-29): the bristle deflection lives on half steps.
//! - Bristle damping: constant `sigma1_bar` (Dupont) or the refined
//!   `sigma1(v) = muC fN / sqrt(v^2 + eps^2)`, `eps = muC fN / sigma1_bar` (eq. 14), which
//!   makes the model passive for any parameters.
//!
//! Each step solves the paper's scalar equation `G(v) = 0` (eq. 32) with the contact
//! solver of [`crate::friction::refined`]: the mass and the hair ([`crate::bow::hair`]) are
//! linear over a step, so they only set its free velocity and mobility.

use crate::bow::hair::{BowHair, HairParams};
use crate::friction::dupont::ElastoPlasticParams;
use crate::friction::newton::IterationStats;
pub use crate::friction::refined::BristleDamping;
use crate::friction::refined::{RefinedBristle, RefinedProblem, MAX_NEWTON_STEPS};

/// The lumped system and its friction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LumpedParams {
    pub mass_kg: f64,
    pub stiffness_n_per_m: f64,
    pub damping_kg_per_s: f64,
    pub hair_mass_kg: f64,
    pub hair_stiffness_n_per_m: f64,
    pub hair_damping_kg_per_s: f64,
    /// `s0`, `muC`, `muS`, `vS` and `z_ba` are used; the bristle damping is
    /// `bristle_damping_kg_per_s` (as `sigma1_bar`) under `damping_law`. There is no
    /// viscous term or noise in the paper's lumped model.
    pub friction: ElastoPlasticParams,
    pub damping_law: BristleDamping,
}

impl LumpedParams {
    /// matusiak2025's bowed system reduced to the fundamental mode of its Table 2 string.
    /// The paper's Table 1 is derived that way by its eqs. 64-66, which the text available
    /// here does not show, so these are derived values [D]:
    /// - the fundamental's modal mass `m = rho A L / 2`, `rho A = T / (2 f0 L)^2` (T 149.74
    ///   N, f0 98 Hz, L 0.7 m): 2.78 g;
    /// - `kappa = m (2 pi f0)^2`, `gamma = 2 sigma0 m` (`sigma0` 1.537 1/s);
    /// - bow hair 4.5 g, 4.83e4 N/m, 5.77 kg/s and friction `s0` 3.186e5 N/m, `sigma1_bar`
    ///   0.0027 kg/s, `muC` 0.507, `muS` 1.021, `vS` 0.228 m/s as listed in `MODELS.md`.
    pub fn matusiak2025() -> Self {
        let length_m: f64 = 0.7;
        let f0_hz: f64 = 98.0;
        let linear_density = 149.74 / (2.0 * f0_hz * length_m).powi(2);
        let mass_kg = linear_density * length_m / 2.0;
        let omega = 2.0 * std::f64::consts::PI * f0_hz;
        Self {
            mass_kg,
            stiffness_n_per_m: mass_kg * omega * omega,
            damping_kg_per_s: 2.0 * 1.537 * mass_kg,
            hair_mass_kg: 4.5e-3,
            hair_stiffness_n_per_m: 4.83e4,
            hair_damping_kg_per_s: 5.77,
            friction: ElastoPlasticParams::matusiak2025(),
            damping_law: BristleDamping::Refined,
        }
    }

    /// `sigma1(v)` and its derivative for a normal force.
    #[inline]
    pub fn bristle_damping(&self, normal_force_n: f64, velocity_mps: f64) -> (f64, f64) {
        self.damping_law.at(&self.friction, normal_force_n, velocity_mps)
    }

    fn hair(&self) -> HairParams {
        HairParams { mass_kg: self.hair_mass_kg, stiffness_n_per_m: self.hair_stiffness_n_per_m, damping_kg_per_s: self.hair_damping_kg_per_s }
    }
}

/// What one step did: the solved relative velocity and force, and every power term of the
/// discrete energy balance (eq. 33), so that `(H(n+1) - H(n)) / k = -(Q + P)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LumpedStep {
    pub velocity_mps: f64,
    pub force_n: f64,
    /// `mu_t z^n`.
    pub deflection_m: f64,
    /// Mass damping loss `gamma (dt. u)^2`.
    pub mass_loss_w: f64,
    /// Hair damping loss `Gamma_h (dt. eta)^2`.
    pub hair_loss_w: f64,
    /// Bristle loss `F v - sigma0 mu_t z delta_t z` (eq. 34's `Q_b`).
    pub bristle_loss_w: f64,
    /// Power taken from the bow, `F vb` (the bow drives the system when it is negative).
    pub bow_power_w: f64,
    /// Newton steps taken (the cap means the bisection fallback ran).
    pub iterations: usize,
}

/// The bowed lumped mass: state at steps `n` and `n - 1`, the bristle at `n - 1/2`.
#[derive(Clone, Debug)]
pub struct LumpedBowedMass {
    pub params: LumpedParams,
    time_step_s: f64,
    u: f64,
    u_previous: f64,
    hair: BowHair,
    pub bristle: RefinedBristle,
    pub stats: IterationStats,
}

impl LumpedBowedMass {
    /// At rest. Requires `k < 2 sqrt(m / kappa)` (the scheme's stability condition).
    pub fn new(params: LumpedParams, sample_rate_hz: f64) -> Self {
        let time_step_s = 1.0 / sample_rate_hz;
        assert!(time_step_s < 2.0 * (params.mass_kg / params.stiffness_n_per_m).sqrt(), "time step too long for the mass-spring");
        Self { params, time_step_s, u: 0.0, u_previous: 0.0, hair: BowHair::default(), bristle: RefinedBristle::default(), stats: IterationStats::default() }
    }

    pub fn time_step_s(&self) -> f64 {
        self.time_step_s
    }

    /// Mass displacement `u^n` (m).
    pub fn displacement_m(&self) -> f64 {
        self.u
    }

    /// Hair displacement `eta^n` (m).
    pub fn hair_displacement_m(&self) -> f64 {
        self.hair.displacement_m()
    }

    /// The stored energy at step `n` (eq. 34): `H_r + H_h + H_b` (J), each non-negative.
    pub fn energy_j(&self) -> f64 {
        let p = &self.params;
        let k = self.time_step_s;
        let du = (self.u - self.u_previous) / k;
        0.5 * p.mass_kg * du * du
            + 0.5 * p.stiffness_n_per_m * self.u * self.u_previous
            + self.hair.energy_j(&p.hair(), k)
            + self.bristle.energy_j(&p.friction)
    }

    /// `(a_u, b_u)`: `dt. u = a_u - b_u F` over this step.
    fn mass_response(&self) -> (f64, f64) {
        let p = &self.params;
        let k = self.time_step_s;
        let mass_den = 2.0 * p.mass_kg / k + p.damping_kg_per_s;
        ((2.0 * p.mass_kg * (self.u - self.u_previous) / (k * k) - p.stiffness_n_per_m * self.u) / mass_den, 1.0 / mass_den)
    }

    fn problem(&self, normal_force_n: f64, bow_velocity_mps: f64) -> RefinedProblem<'_> {
        let k = self.time_step_s;
        let hair = self.params.hair();
        let (a_u, b_u) = self.mass_response();
        RefinedProblem {
            friction: &self.params.friction,
            damping_law: self.params.damping_law,
            normal_force_n,
            free_velocity_mps: a_u - self.hair.free_velocity_mps(&hair, k) - bow_velocity_mps,
            mobility_s_per_kg: b_u + hair.mobility_s_per_kg(k),
            time_step_s: k,
        }
    }

    /// `G(v)` (eq. 32) and `G'(v)` for the coming step.
    pub fn residual(&self, normal_force_n: f64, bow_velocity_mps: f64, v: f64) -> (f64, f64) {
        self.bristle.residual(&self.problem(normal_force_n, bow_velocity_mps), v)
    }

    /// Steps one sample with the bow pressing `normal_force_n` (> 0) at `bow_velocity_mps`.
    pub fn step(&mut self, normal_force_n: f64, bow_velocity_mps: f64) -> LumpedStep {
        let k = self.time_step_s;
        let solution = self.bristle.solve(&self.problem(normal_force_n, bow_velocity_mps));
        self.stats.record(solution.iterations);
        if solution.iterations == MAX_NEWTON_STEPS {
            self.stats.fallbacks += 1;
        }
        let (a_u, b_u) = self.mass_response();
        let force = solution.force_n;
        let mass_velocity = a_u - b_u * force;
        let u_next = self.u_previous + 2.0 * k * mass_velocity;
        self.u_previous = self.u;
        self.u = u_next;
        let hair_velocity = self.hair.advance(&self.params.hair(), k, force);
        let bristle_loss_w = solution.bristle_loss_w(&self.params.friction);
        self.bristle.commit(&solution);
        let p = &self.params;
        LumpedStep {
            velocity_mps: solution.velocity_mps,
            force_n: force,
            deflection_m: solution.deflection_m,
            mass_loss_w: p.damping_kg_per_s * mass_velocity * mass_velocity,
            hair_loss_w: p.hair_damping_kg_per_s * hair_velocity * hair_velocity,
            bristle_loss_w,
            bow_power_w: force * bow_velocity_mps,
            iterations: solution.iterations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bisection_fallback_finds_the_root_newton_finds() {
        let mut system = LumpedBowedMass::new(LumpedParams::matusiak2025(), 44_100.0);
        for n in 0..2000 {
            system.step(2.343, (3.439 * n as f64 / 44_100.0).min(0.344));
        }
        let problem = system.problem(2.343, 0.344);
        let solution = system.bristle.solve(&problem);
        assert!(solution.iterations < MAX_NEWTON_STEPS);
        let bisected = system.bristle.bisect(&problem);
        assert!((solution.velocity_mps - bisected).abs() < 1e-9, "Newton {}, bisection {bisected}", solution.velocity_mps);
        assert!(system.residual(2.343, 0.344, bisected).0.abs() < 1e-6);
    }

    #[test]
    fn refined_damping_is_sigma1_bar_at_rest_and_falls_as_one_over_v() {
        let p = LumpedParams::matusiak2025();
        let (at_rest, _) = p.bristle_damping(2.0, 0.0);
        assert!((at_rest - p.friction.bristle_damping_kg_per_s).abs() < 1e-15);
        // eps = muC fN / sigma1_bar is 375 m/s here: far above it, sigma1 v tends to muC fN.
        let (fast, slope) = p.bristle_damping(2.0, 1e5);
        assert!((fast * 1e5 / (p.friction.coulomb_coefficient * 2.0) - 1.0).abs() < 1e-4);
        assert!(slope < 0.0);
    }
}

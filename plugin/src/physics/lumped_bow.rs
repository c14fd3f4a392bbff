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
//! Each step solves the paper's scalar equation `G(v) = 0` (eq. 32): for a trial `v`, the
//! mass and hair updates are linear in the force, so `mu_t z` follows in closed form. The
//! solve is Newton's method with the analytic derivative, capped at [`MAX_NEWTON_STEPS`];
//! where the derivative vanishes or a step leaves the bracket (the paper warns that `G'`
//! may reach zero), it falls back to bisection on a bracket found by expanding from the
//! previous solution, itself capped.

use super::friction::{refined_bristle_damping, ElastoPlasticParams};
use super::newton::IterationStats;

/// Newton steps before the bisection fallback.
pub const MAX_NEWTON_STEPS: usize = 50;
/// Halvings of one Newton step while it does not reduce `|G|`.
const MAX_STEP_HALVINGS: usize = 30;
/// Bracket expansions and bisection halvings allowed in the fallback.
const MAX_BRACKET_STEPS: usize = 60;
const MAX_BISECTIONS: usize = 200;

/// How the bristle damping depends on the relative velocity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BristleDamping {
    /// Dupont's constant `sigma1_bar` (willemsen2019): not passive for every parameter set.
    Constant,
    /// matusiak2025 eq. 14: `muC fN / sqrt(v^2 + eps^2)`, passive.
    Refined,
}

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
        let s0 = 3.186e5;
        Self {
            mass_kg,
            stiffness_n_per_m: mass_kg * omega * omega,
            damping_kg_per_s: 2.0 * 1.537 * mass_kg,
            hair_mass_kg: 4.5e-3,
            hair_stiffness_n_per_m: 4.83e4,
            hair_damping_kg_per_s: 5.77,
            friction: ElastoPlasticParams {
                bristle_stiffness_n_per_m: s0,
                bristle_damping_kg_per_s: 0.0027,
                viscous_damping_kg_per_s: 0.0,
                noise_per_normal_force: 0.0,
                coulomb_coefficient: 0.507,
                static_coefficient: 1.021,
                stribeck_velocity_mps: 0.228,
                break_away_ratio: 0.7,
            },
            damping_law: BristleDamping::Refined,
        }
    }

    /// `sigma1(v)` and its derivative for a normal force.
    #[inline]
    pub fn bristle_damping(&self, normal_force_n: f64, velocity_mps: f64) -> (f64, f64) {
        let bar = self.friction.bristle_damping_kg_per_s;
        match self.damping_law {
            BristleDamping::Constant => (bar, 0.0),
            BristleDamping::Refined => refined_bristle_damping(self.friction.coulomb_coefficient * normal_force_n, bar, velocity_mps),
        }
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
    eta: f64,
    eta_previous: f64,
    z_half: f64,
    last_velocity_mps: f64,
    pub stats: IterationStats,
    /// Newton's tolerance on `v` (m/s).
    pub tolerance_mps: f64,
}

impl LumpedBowedMass {
    /// At rest. Requires `k < 2 sqrt(m / kappa)` (the scheme's stability condition).
    pub fn new(params: LumpedParams, sample_rate_hz: f64) -> Self {
        let time_step_s = 1.0 / sample_rate_hz;
        assert!(time_step_s < 2.0 * (params.mass_kg / params.stiffness_n_per_m).sqrt(), "time step too long for the mass-spring");
        Self { params, time_step_s, u: 0.0, u_previous: 0.0, eta: 0.0, eta_previous: 0.0, z_half: 0.0, last_velocity_mps: 0.0, stats: IterationStats::default(), tolerance_mps: 1e-12 }
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
        self.eta
    }

    /// The stored energy at step `n` (eq. 34): `H_r + H_h + H_b` (J), each non-negative.
    pub fn energy_j(&self) -> f64 {
        let p = &self.params;
        let k = self.time_step_s;
        let du = (self.u - self.u_previous) / k;
        let deta = (self.eta - self.eta_previous) / k;
        let mean_eta = 0.5 * (self.eta + self.eta_previous);
        0.5 * p.mass_kg * du * du
            + 0.5 * p.stiffness_n_per_m * self.u * self.u_previous
            + 0.5 * p.hair_mass_kg * deta * deta
            + 0.5 * p.hair_stiffness_n_per_m * mean_eta * mean_eta
            + 0.5 * p.friction.bristle_stiffness_n_per_m * self.z_half * self.z_half
    }

    /// `(A, B, a_u, b_u)` at this step: `v = A - B F` and `dt. u = a_u - b_u F`.
    fn linear_parts(&self, bow_velocity_mps: f64) -> (f64, f64, f64, f64) {
        let p = &self.params;
        let k = self.time_step_s;
        let mass_den = 2.0 * p.mass_kg / k + p.damping_kg_per_s;
        let a_u = (2.0 * p.mass_kg * (self.u - self.u_previous) / (k * k) - p.stiffness_n_per_m * self.u) / mass_den;
        let hair_den = 2.0 * p.hair_mass_kg / k + 0.5 * p.hair_stiffness_n_per_m * k + p.hair_damping_kg_per_s;
        let a_eta = (2.0 * p.hair_mass_kg * (self.eta - self.eta_previous) / (k * k) - 0.5 * p.hair_stiffness_n_per_m * (self.eta + self.eta_previous)) / hair_den;
        (a_u - a_eta - bow_velocity_mps, 1.0 / mass_den + 1.0 / hair_den, a_u, 1.0 / mass_den)
    }

    /// `mu_t z` for a trial `v` (the force balance solved for it) and its derivative.
    #[inline]
    fn deflection_for(&self, normal_force_n: f64, a: f64, b: f64, v: f64) -> (f64, f64) {
        let k = self.time_step_s;
        let s0 = self.params.friction.bristle_stiffness_n_per_m;
        let (s1, ds1) = self.params.bristle_damping(normal_force_n, v);
        // v = A - B (s0 r + s1 2 (r - z_half) / k)  =>  r = (A - v + 2 B s1 z_half / k) / D.
        let numerator = a - v + 2.0 * b * s1 * self.z_half / k;
        let denominator = b * (s0 + 2.0 * s1 / k);
        let r = numerator / denominator;
        let dr = ((-1.0 + 2.0 * b * ds1 * self.z_half / k) - r * 2.0 * b * ds1 / k) / denominator;
        (r, dr)
    }

    /// `G(v)` (eq. 32) and `G'(v)`.
    pub fn residual(&self, normal_force_n: f64, bow_velocity_mps: f64, v: f64) -> (f64, f64) {
        let (a, b, _, _) = self.linear_parts(bow_velocity_mps);
        self.residual_with(normal_force_n, a, b, v)
    }

    #[inline]
    fn residual_with(&self, normal_force_n: f64, a: f64, b: f64, v: f64) -> (f64, f64) {
        let k = self.time_step_s;
        let (r, dr) = self.deflection_for(normal_force_n, a, b, v);
        let rate = self.params.friction.bristle_rate(normal_force_n, v, r);
        let g = 2.0 * (r - self.z_half) / k - rate.rate_mps;
        let dg = 2.0 * dr / k - (rate.d_rate_d_velocity + rate.d_rate_d_deflection * dr);
        (g, dg)
    }

    /// Steps one sample with the bow pressing `normal_force_n` (> 0) at `bow_velocity_mps`.
    pub fn step(&mut self, normal_force_n: f64, bow_velocity_mps: f64) -> LumpedStep {
        let k = self.time_step_s;
        let (a, b, a_u, b_u) = self.linear_parts(bow_velocity_mps);
        let (v, iterations) = self.solve(normal_force_n, a, b);
        self.stats.record(iterations);
        if iterations == MAX_NEWTON_STEPS {
            self.stats.fallbacks += 1;
        }
        let (r, _) = self.deflection_for(normal_force_n, a, b, v);
        let (s1, _) = self.params.bristle_damping(normal_force_n, v);
        let s0 = self.params.friction.bristle_stiffness_n_per_m;
        let delta_z = 2.0 * (r - self.z_half) / k;
        let force = s0 * r + s1 * delta_z;
        // dt. u from its linear relation with the force; dt. eta from eq. 27.
        let mass_velocity = a_u - b_u * force;
        let hair_velocity = mass_velocity - bow_velocity_mps - v;
        let u_next = self.u_previous + 2.0 * k * mass_velocity;
        let eta_next = self.eta_previous + 2.0 * k * hair_velocity;
        self.u_previous = self.u;
        self.u = u_next;
        self.eta_previous = self.eta;
        self.eta = eta_next;
        self.z_half = 2.0 * r - self.z_half;
        self.last_velocity_mps = v;
        let p = &self.params;
        LumpedStep {
            velocity_mps: v,
            force_n: force,
            deflection_m: r,
            mass_loss_w: p.damping_kg_per_s * mass_velocity * mass_velocity,
            hair_loss_w: p.hair_damping_kg_per_s * hair_velocity * hair_velocity,
            bristle_loss_w: force * v - s0 * r * delta_z,
            bow_power_w: force * bow_velocity_mps,
            iterations,
        }
    }

    /// Newton from the previous solution, each step halved until `|G|` falls (G is only
    /// piecewise smooth: the adhesion map has corners, so a full step can overshoot a kink
    /// and cycle); bisection on a bracket when Newton still stalls.
    fn solve(&self, normal_force_n: f64, a: f64, b: f64) -> (f64, usize) {
        let mut v = self.last_velocity_mps;
        let (mut g, mut dg) = self.residual_with(normal_force_n, a, b, v);
        for iteration in 0..MAX_NEWTON_STEPS {
            if !dg.is_finite() || dg.abs() <= 1e-300 || !g.is_finite() {
                break;
            }
            let mut step = g / dg;
            let mut trial = self.residual_with(normal_force_n, a, b, v - step);
            for _ in 0..MAX_STEP_HALVINGS {
                if trial.0.abs() < g.abs() {
                    break;
                }
                step *= 0.5;
                trial = self.residual_with(normal_force_n, a, b, v - step);
            }
            v -= step;
            (g, dg) = trial;
            if step.abs() <= self.tolerance_mps.max(1e-15 * v.abs()) || g == 0.0 {
                return (v, iteration + 1);
            }
        }
        (self.bisect(normal_force_n, a, b), MAX_NEWTON_STEPS)
    }

    fn bisect(&self, normal_force_n: f64, a: f64, b: f64) -> f64 {
        let g = |v: f64| self.residual_with(normal_force_n, a, b, v).0;
        let centre = self.last_velocity_mps;
        let mut width = 1e-3;
        let (mut lo, mut hi) = (centre - width, centre + width);
        for _ in 0..MAX_BRACKET_STEPS {
            if g(lo) * g(hi) <= 0.0 {
                break;
            }
            width *= 2.0;
            lo = centre - width;
            hi = centre + width;
        }
        let mut g_lo = g(lo);
        for _ in 0..MAX_BISECTIONS {
            let mid = 0.5 * (lo + hi);
            if mid == lo || mid == hi {
                break;
            }
            let g_mid = g(mid);
            if g_mid * g_lo <= 0.0 {
                hi = mid;
            } else {
                lo = mid;
                g_lo = g_mid;
            }
        }
        0.5 * (lo + hi)
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
        let (a, b, _, _) = system.linear_parts(0.344);
        let (newton, iterations) = system.solve(2.343, a, b);
        assert!(iterations < MAX_NEWTON_STEPS);
        let bisected = system.bisect(2.343, a, b);
        assert!((newton - bisected).abs() < 1e-9, "Newton {newton}, bisection {bisected}");
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

//! Dupont's elasto-plastic friction model with the corrected adhesion map of willemsen2019
//! (eqs. 8-9; `MODELS.md` section 1).
//!
//! A bristle of deflection `z` (metres) sits between bow and string. Its rate is
//! `zdot = r(v, z) = v (1 - alpha(v, z) z / z_ss(v))`, and the friction force is
//! `f = s0 z + s1 zdot + s2 v + s3 w` with `w` uniform noise in `[-1, 1]`.
//!
//! The law's `sin`, `cos` and `exp` are [`crate::friction::elementary`]'s, on the ranges it
//! evaluates them.

use crate::friction::elementary::{exp_at_most_zero, sin_cos_within_quarter_turn};

/// Friction parameters that do not depend on the normal force. Defaults are willemsen2019
/// Table 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElastoPlasticParams {
    /// `s0`, the bristle stiffness.
    pub bristle_stiffness_n_per_m: f64,
    /// `s1`, the bristle damping.
    pub bristle_damping_kg_per_s: f64,
    /// `s2`, the viscous friction.
    pub viscous_damping_kg_per_s: f64,
    /// `s3 / fN`: the noise amplitude as a fraction of the normal force.
    pub noise_per_normal_force: f64,
    /// `muC`, the Coulomb (dynamic) friction coefficient.
    pub coulomb_coefficient: f64,
    /// `muS`, the static friction coefficient.
    pub static_coefficient: f64,
    /// `vS`, the Stribeck velocity.
    pub stribeck_velocity_mps: f64,
    /// `z_ba / (fC / s0)`: the break-away deflection relative to the Coulomb deflection.
    pub break_away_ratio: f64,
}

impl Default for ElastoPlasticParams {
    fn default() -> Self {
        let s0 = 1e4;
        Self {
            bristle_stiffness_n_per_m: s0,
            bristle_damping_kg_per_s: 0.001 * f64::sqrt(s0),
            viscous_damping_kg_per_s: 0.4,
            noise_per_normal_force: 0.02,
            coulomb_coefficient: 0.3,
            static_coefficient: 0.8,
            stribeck_velocity_mps: 0.1,
            break_away_ratio: 0.7,
        }
    }
}

/// matusiak2025's refined bristle damping (eq. 14): `sigma1(v) = fC / sqrt(v^2 + eps^2)`
/// with `eps = fC / sigma1_bar`, so `sigma1(0) = sigma1_bar` and `sigma1(v) v` never exceeds
/// the Coulomb force `fC = muC fN`. Returns `(sigma1, d sigma1 / dv)`.
#[inline]
pub fn refined_bristle_damping(coulomb_force_n: f64, damping_at_rest_kg_per_s: f64, velocity_mps: f64) -> (f64, f64) {
    let eps = coulomb_force_n / damping_at_rest_kg_per_s;
    let r2 = velocity_mps * velocity_mps + eps * eps;
    let r = r2.sqrt();
    (coulomb_force_n / r, -coulomb_force_n * velocity_mps / (r2 * r))
}

impl ElastoPlasticParams {
    /// matusiak2025 Table 2's bow friction: `s0` 3.186e5 N/m, `sigma1_bar` 0.0027 kg/s,
    /// `muC` 0.507, `muS` 1.021, `vS` 0.228 m/s, with no viscous term and no noise.
    pub fn matusiak2025() -> Self {
        Self {
            bristle_stiffness_n_per_m: 3.186e5,
            bristle_damping_kg_per_s: 0.0027,
            viscous_damping_kg_per_s: 0.0,
            noise_per_normal_force: 0.0,
            coulomb_coefficient: 0.507,
            static_coefficient: 1.021,
            stribeck_velocity_mps: 0.228,
            break_away_ratio: 0.7,
        }
    }
}

/// The bristle rate `r(v, z)` and its partial derivatives, for the analytic Jacobian.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BristleRate {
    pub rate_mps: f64,
    pub d_rate_d_velocity: f64,
    pub d_rate_d_deflection: f64,
    /// The adhesion map `alpha`, in `[0, 1]` (0: purely elastic, 1: fully sliding).
    pub adhesion: f64,
}

impl ElastoPlasticParams {
    /// `|z_ss(v)|`, the steady-state bristle deflection. Finite and positive for `fN > 0`,
    /// including at `v = 0` where it is `fS / s0`.
    #[inline]
    pub fn steady_state_deflection_m(&self, normal_force_n: f64, velocity_mps: f64) -> f64 {
        let x = velocity_mps / self.stribeck_velocity_mps;
        let coulomb = self.coulomb_coefficient * normal_force_n;
        let stat = self.static_coefficient * normal_force_n;
        (coulomb + (stat - coulomb) * (-x * x).exp()) / self.bristle_stiffness_n_per_m
    }

    /// The break-away deflection `z_ba`.
    #[inline]
    pub fn break_away_deflection_m(&self, normal_force_n: f64) -> f64 {
        self.break_away_ratio * self.coulomb_coefficient * normal_force_n / self.bristle_stiffness_n_per_m
    }

    /// `r(v, z)` with its derivatives. Requires `normal_force_n > 0`.
    #[inline]
    pub fn bristle_rate(&self, normal_force_n: f64, velocity_mps: f64, deflection_m: f64) -> BristleRate {
        let v = velocity_mps;
        let z = deflection_m;
        let elastic = BristleRate { rate_mps: v, d_rate_d_velocity: 1.0, d_rate_d_deflection: 0.0, adhesion: 0.0 };
        // alpha = 0 when v and z disagree in sign (or either is zero): this also settles
        // the undefined sgn(z_ss(0)).
        if v * z <= 0.0 {
            return elastic;
        }
        let z_abs = z.abs();
        let z_ba = self.break_away_deflection_m(normal_force_n);
        if z_abs <= z_ba {
            return elastic;
        }
        let vs = self.stribeck_velocity_mps;
        let x = v / vs;
        let stribeck = exp_at_most_zero(-x * x);
        let s0 = self.bristle_stiffness_n_per_m;
        let spread = (self.static_coefficient - self.coulomb_coefficient) * normal_force_n / s0;
        let z_ss = self.coulomb_coefficient * normal_force_n / s0 + spread * stribeck;
        let d_zss_dv = spread * stribeck * (-2.0 * v / (vs * vs));

        let (alpha, d_alpha_d_zabs, d_alpha_d_v) = if z_abs >= z_ss {
            (1.0, 0.0, 0.0)
        } else {
            let width = z_ss - z_ba;
            let theta = (z_abs - 0.5 * (z_ss + z_ba)) / width;
            // `theta` lies in (-1/2, 1/2): a quarter turn either way.
            let (sin, cos) = sin_cos_within_quarter_turn(std::f64::consts::PI * theta);
            let half_pi_cos = 0.5 * std::f64::consts::PI * cos;
            (0.5 * (1.0 + sin), half_pi_cos / width, half_pi_cos * (-0.5 - theta) / width * d_zss_dv)
        };
        let ratio = alpha * z_abs / z_ss;
        let v_abs = v.abs();
        BristleRate {
            rate_mps: v * (1.0 - ratio),
            d_rate_d_velocity: (1.0 - ratio) - v * z_abs * d_alpha_d_v / z_ss + v * ratio * d_zss_dv / z_ss,
            d_rate_d_deflection: -v_abs * (d_alpha_d_zabs * z_abs + alpha) / z_ss,
            adhesion: alpha,
        }
    }

    /// The friction force `s0 z + s1 zdot + s2 v + s3 w`, with `noise` = `w` in `[-1, 1]`.
    #[inline]
    pub fn force_n(&self, normal_force_n: f64, velocity_mps: f64, deflection_m: f64, rate_mps: f64, noise: f64) -> f64 {
        self.bristle_stiffness_n_per_m * deflection_m
            + self.bristle_damping_kg_per_s * rate_mps
            + self.viscous_damping_kg_per_s * velocity_mps
            + self.noise_per_normal_force * normal_force_n * noise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric_partials(p: &ElastoPlasticParams, fn_n: f64, v: f64, z: f64) -> (f64, f64) {
        let dv = 1e-7;
        let dz = 1e-10;
        let rv = (p.bristle_rate(fn_n, v + dv, z).rate_mps - p.bristle_rate(fn_n, v - dv, z).rate_mps) / (2.0 * dv);
        let rz = (p.bristle_rate(fn_n, v, z + dz).rate_mps - p.bristle_rate(fn_n, v, z - dz).rate_mps) / (2.0 * dz);
        (rv, rz)
    }

    #[test]
    fn analytic_jacobian_matches_finite_differences() {
        let p = ElastoPlasticParams::default();
        let fn_n = 5.0;
        let z_ss0 = p.steady_state_deflection_m(fn_n, 0.0);
        for &v in &[-0.3f64, -0.05, 0.02, 0.1, 0.25] {
            for &frac in &[-0.9, 0.1, 0.75, 0.85, 0.95, 1.2] {
                let z = frac * z_ss0 * v.signum();
                let r = p.bristle_rate(fn_n, v, z);
                let (rv, rz) = numeric_partials(&p, fn_n, v, z);
                assert!((r.d_rate_d_velocity - rv).abs() < 1e-4 * (1.0 + rv.abs()), "v={v} z={z}: {} vs {rv}", r.d_rate_d_velocity);
                assert!((r.d_rate_d_deflection - rz).abs() < 1e-4 * (1.0 + rz.abs()), "v={v} z={z}: {} vs {rz}", r.d_rate_d_deflection);
            }
        }
    }

    #[test]
    fn adhesion_map_is_continuous_and_bounded() {
        let p = ElastoPlasticParams::default();
        let fn_n = 2.0;
        let v = 0.05;
        let z_ss = p.steady_state_deflection_m(fn_n, v);
        let z_ba = p.break_away_deflection_m(fn_n);
        let below = p.bristle_rate(fn_n, v, z_ba * (1.0 - 1e-9)).adhesion;
        let above = p.bristle_rate(fn_n, v, z_ba * (1.0 + 1e-9)).adhesion;
        assert!(below == 0.0 && above < 1e-6);
        let top = p.bristle_rate(fn_n, v, z_ss * (1.0 - 1e-9)).adhesion;
        assert!((top - 1.0).abs() < 1e-6);
        // At steady state the bristle stops moving: r(v, z_ss) = 0.
        assert!(p.bristle_rate(fn_n, v, z_ss).rate_mps.abs() < 1e-15);
        // Opposite signs: purely elastic.
        assert_eq!(p.bristle_rate(fn_n, v, -z_ss).adhesion, 0.0);
        // v = 0 is defined and finite.
        let r0 = p.bristle_rate(fn_n, 0.0, z_ss);
        assert_eq!(r0.rate_mps, 0.0);
        assert!(r0.d_rate_d_velocity.is_finite());
    }

    #[test]
    fn steady_force_follows_stribeck_curve() {
        let p = ElastoPlasticParams::default();
        let fn_n = 4.0;
        for &v in &[0.0, 0.05, 0.1, 0.5] {
            let z = p.steady_state_deflection_m(fn_n, v);
            let f = p.bristle_stiffness_n_per_m * z;
            let mu = 0.3 + 0.5 * f64::exp(-(v / 0.1) * (v / 0.1));
            assert!((f - mu * fn_n).abs() < 1e-12);
        }
    }
}

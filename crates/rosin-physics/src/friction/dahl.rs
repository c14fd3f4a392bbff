//! The Dahl friction model in Hayward and Armstrong's discrete form, as serafin1999 puts it
//! on a bowed string (section 4, eqs. 4-5; `MODELS.md` section 4).
//!
//! A bristle joins the string to an adhesion point on the bow: `z = x - w`, with `x` the
//! string's position relative to the bow and `w` the adhesion point's, and the force is the
//! bristle's spring, `f = sigma0 z`. Each sample `x` moves by `v k`; the adhesion point
//! follows it by `|dx| alpha(z) z` (`z` before the step), where `alpha(z) z` is 0 below the stick deflection
//! `z_stick` (pure presliding: the point stays put) and rises smoothly to 1 at `z_max`
//! (full sliding: it moves with the string). A deflection that would pass `z_max` is held
//! there, `w = x - z_max sgn(z)`. Unlike the elasto-plastic model, the adhesion point is
//! dragged even while the bristle unloads (Dahl's `zdot = v (1 - z / z_max sgn v)`), which
//! is what gives its hysteresis loop its shape.
//!
//! Rosin's parameters, shared with the other models:
//! - `sigma0` is the bristle stiffness `s0`, `z_stick` the break-away deflection `z_ba`;
//! - `z_max` follows the Stribeck curve, `z_ss(v) = (muC + (muS - muC) e^{-(v/vS)^2}) fN / s0`.
//!   With `muS = muC` it is the paper's constant `z_max = muC fN / sigma0`; a pure Dahl
//!   bristle has no friction weakening and cannot keep Helmholtz motion going on its own, so
//!   the Stribeck term is what lets it bow;
//! - the viscous term `s2 v` of the elasto-plastic model is added, as damping of the
//!   bristle's spring against the string's mass (serafin1999 has none; set it to 0 for the
//!   paper's model).
//!
//! The contact must also satisfy the string's response, `v = v_free - c f`. `f` is a
//! function of the trial `v` alone, so the step is one scalar equation `G(v) = 0`, solved by
//! Newton's method from the previous sample (which keeps the contact on its branch where
//! `G` has several roots: the hysteresis rule), with a bracketing bisection as the
//! fallback. Both are capped.

use crate::friction::dupont_contact::{ContactInput, ContactOutput, MIN_NORMAL_FORCE_N};
use crate::friction::dupont::ElastoPlasticParams;
use crate::friction::newton::IterationStats;

/// Newton steps before the bisection fallback.
pub const MAX_NEWTON_STEPS: usize = 30;
const MAX_BISECTIONS: usize = 80;
/// The Newton tolerance on the relative velocity (m/s).
const TOLERANCE_MPS: f64 = 1e-10;

/// The bristle between samples.
#[derive(Clone, Debug)]
pub struct DahlFriction {
    pub friction: ElastoPlasticParams,
    /// `z = x - w` (m).
    deflection_m: f64,
    last_velocity_mps: f64,
    pub stats: IterationStats,
}

/// The bristle after a trial step.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Trial {
    deflection_m: f64,
    force_n: f64,
}

impl DahlFriction {
    pub fn new(friction: ElastoPlasticParams) -> Self {
        Self { friction, deflection_m: 0.0, last_velocity_mps: 0.0, stats: IterationStats::default() }
    }

    /// The bristle stiffness is about to be multiplied by `1 / ratio` (a control automated):
    /// the bristle keeps the force it holds, its deflection scaled by `ratio`.
    pub fn rescale_deflection(&mut self, ratio: f64) {
        if ratio.is_finite() && ratio > 0.0 {
            self.deflection_m *= ratio;
        }
    }

    pub fn reset(&mut self) {
        self.deflection_m = 0.0;
        self.last_velocity_mps = 0.0;
    }

    /// The bristle deflection `z` (m).
    pub fn deflection_m(&self) -> f64 {
        self.deflection_m
    }

    /// `alpha(z) z` for `|z|` between `z_stick` and `z_max`: 0 at the first, 1 at the
    /// second, with zero slope at both ends.
    #[inline]
    fn adhesion(z_abs: f64, z_stick: f64, z_max: f64) -> f64 {
        if z_abs <= z_stick {
            return 0.0;
        }
        if z_abs >= z_max {
            return 1.0;
        }
        let theta = (z_abs - z_stick) / (z_max - z_stick);
        0.5 * (1.0 - (std::f64::consts::PI * theta).cos())
    }

    /// The bristle and force after a step at relative velocity `v`.
    #[inline]
    fn trial(&self, normal_force_n: f64, time_step_s: f64, v: f64) -> Trial {
        let p = &self.friction;
        let dx = v * time_step_s;
        let z = self.deflection_m + dx;
        let z_max = p.steady_state_deflection_m(normal_force_n, v);
        let z_stick = p.break_away_deflection_m(normal_force_n).min(z_max);
        // The adhesion point moves by |dx| alpha(z) z, with alpha taken at the bristle's
        // deflection before the step (Hayward and Armstrong take it after the elastic part
        // of the step, which makes the force jump by sigma0 |dx| where it meets z_max, and
        // the contact line can then miss it); the cap keeps |z| <= z_max. The force is then
        // continuous and non-decreasing in v below the cap.
        let z_before = self.deflection_m;
        let towards = if z_before != 0.0 { z_before.signum() } else { v.signum() };
        let moved = dx.abs() * Self::adhesion(z_before.abs(), z_stick, z_max) * towards;
        // `max`/`min`, not `clamp`: `clamp` panics on a NaN bound, which a velocity of
        // 1e300 can make (the contact then answers as a lifted bow, see `bow::contact`).
        let deflection_m = (z - moved).max(-z_max).min(z_max);
        Trial { deflection_m, force_n: p.bristle_stiffness_n_per_m * deflection_m + p.viscous_damping_kg_per_s * v }
    }

    /// Solves one sample of the contact and commits the bristle.
    pub fn solve(&mut self, input: &ContactInput) -> ContactOutput {
        let fn_n = input.normal_force_n;
        let v_free = input.free_velocity_mps;
        if !(fn_n >= MIN_NORMAL_FORCE_N) || !v_free.is_finite() || !(input.coupling_s_per_kg > 0.0) {
            self.deflection_m = 0.0;
            self.last_velocity_mps = if v_free.is_finite() { v_free } else { 0.0 };
            return ContactOutput { force_n: 0.0, relative_velocity_mps: self.last_velocity_mps, deflection_m: 0.0, iterations: 0, converged: true };
        }
        let k = input.time_step_s;
        let c = input.coupling_s_per_kg;
        let g = |v: f64| v - v_free + c * self.trial(fn_n, k, v).force_n;

        let mut v = self.last_velocity_mps;
        let mut gv = g(v);
        let mut solved = None;
        let mut iterations = 0;
        while iterations < MAX_NEWTON_STEPS {
            iterations += 1;
            let dv = 1e-7 * (1.0 + v.abs());
            let slope = (g(v + dv) - gv) / dv;
            if !(slope.is_finite() && slope > 1e-12) {
                break;
            }
            let step = gv / slope;
            let next = v - step;
            let g_next = g(next);
            if !(g_next.abs() < gv.abs() || step.abs() <= TOLERANCE_MPS) {
                break;
            }
            v = next;
            gv = g_next;
            if step.abs() <= TOLERANCE_MPS {
                solved = Some(v);
                break;
            }
        }
        let converged = solved.is_some();
        let v = solved.unwrap_or_else(|| {
            self.stats.fallbacks += 1;
            self.bisect(fn_n, k, c, v_free)
        });
        self.stats.record(iterations);
        let trial = self.trial(fn_n, k, v);
        self.deflection_m = trial.deflection_m;
        self.last_velocity_mps = v;
        ContactOutput { force_n: trial.force_n, relative_velocity_mps: v, deflection_m: trial.deflection_m, iterations, converged }
    }

    /// Bisection of `G` between bounds where it must change sign: `|sigma0 z| <= muS fN`.
    fn bisect(&self, fn_n: f64, k: f64, c: f64, v_free: f64) -> f64 {
        let p = &self.friction;
        let g = |v: f64| v - v_free + c * self.trial(fn_n, k, v).force_n;
        let bound = c * p.static_coefficient.max(p.coulomb_coefficient) * fn_n;
        let scale = 1.0 + c * p.viscous_damping_kg_per_s;
        let mut lo = (v_free - bound) / scale - 1e-9;
        let mut hi = (v_free + bound) / scale + 1e-9;
        for _ in 0..MAX_BISECTIONS {
            let mid = 0.5 * (lo + hi);
            if g(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v_free: f64, coupling: f64) -> ContactInput {
        ContactInput { free_velocity_mps: v_free, coupling_s_per_kg: coupling, normal_force_n: 1.0, time_step_s: 1.0 / 48_000.0 }
    }

    #[test]
    fn presliding_is_a_spring_and_sliding_holds_the_stribeck_force() {
        let p = ElastoPlasticParams::default();
        let mut contact = DahlFriction::new(p);
        // A tiny coupling imposes the velocity: v = v_free.
        let out = contact.solve(&input(1e-4, 1e-9));
        let z = 1e-4 / 48_000.0;
        assert!((out.deflection_m - z).abs() < 1e-15, "presliding deflection {} vs {z}", out.deflection_m);
        for _ in 0..48_000 {
            contact.solve(&input(0.5, 1e-9));
        }
        let out = contact.solve(&input(0.5, 1e-9));
        let expected = p.bristle_stiffness_n_per_m * p.steady_state_deflection_m(1.0, 0.5) + p.viscous_damping_kg_per_s * 0.5;
        assert!((out.force_n - expected).abs() < 1e-9, "sliding force {} vs {expected}", out.force_n);
    }

    #[test]
    fn every_sample_is_on_the_contact_line() {
        let mut contact = DahlFriction::new(ElastoPlasticParams::default());
        for n in 0..20_000 {
            let v_free = 0.3 * (n as f64 * 0.002).sin();
            let out = contact.solve(&input(v_free, 0.08));
            assert!((out.relative_velocity_mps - (v_free - 0.08 * out.force_n)).abs() < 1e-8, "off the line at {n}");
        }
        assert!(contact.stats.fallbacks < 200, "{} fallbacks", contact.stats.fallbacks);
    }
}

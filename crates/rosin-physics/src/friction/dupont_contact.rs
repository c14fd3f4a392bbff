//! The bow-string contact: the elasto-plastic friction force and the string's response,
//! solved together each sample by a 2x2 Newton-Raphson iteration (willemsen2019 eqs. 12-20;
//! `MODELS.md` section 1).
//!
//! With `v_free` the relative velocity the contact point would have with no bow force, the
//! scheme gives `v = v_free - coupling * f(v, z)`, `coupling = k (I.J) / (2 rho A (1 + sigma0 k))`,
//! where `I.J = sum(w^2) / h` (so `v` is the string's true relative velocity). The bristle
//! follows the trapezoid rule, `r(v, z) = (2/k)(z - z_prev) - r_prev`.

use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::friction::dupont::{BristleRate, ElastoPlasticParams};
use crate::friction::elementary::finite;
use crate::friction::newton::{illinois, solve_2x2, IterationStats};

/// The fallback's root finders stop at this fraction of their starting bracket (about 47
/// halvings' worth), when the residual is this small (m/s: the bristle rate's equation,
/// then the velocity's, a ten-thousandth of Newton's step tolerance, which is about as near
/// as Newton's taken step leaves its answers: `tests/bowing.rs`), or after this many
/// evaluations each ([`FALLBACK_MAX_EVALUATIONS`] in all; on smooth ground about 10 x 10).
const FALLBACK_TOLERANCE: f64 = 1e-14;
const FALLBACK_RATE_RESIDUAL_MPS: f64 = 1e-12;
const FALLBACK_VELOCITY_RESIDUAL_MPS: f64 = 1e-9;
const FALLBACK_EVALUATIONS: usize = 60;
/// The most friction-law evaluations the fallback makes: the outer search's two ends and its
/// evaluations, each solving the inner equation (two ends, its evaluations) and evaluating
/// the force once, then the inner equation once more at the answer.
pub const FALLBACK_MAX_EVALUATIONS: usize = (2 + FALLBACK_EVALUATIONS) * (2 + FALLBACK_EVALUATIONS + 1) + (2 + FALLBACK_EVALUATIONS);
/// The hard budget of friction-law evaluations in one sample's contact solve: Newton's
/// first residual and every step it tries, then the fallback and the force at its answer.
/// 4,220 with the caps above; a sample that converges takes a handful.
pub const MAX_EVALUATIONS_PER_SAMPLE: usize = 1 + MAX_ITERATIONS * (MAX_STEP_HALVINGS + 1) + FALLBACK_MAX_EVALUATIONS + 1;

/// Below this normal force the bow is off the string.
pub const MIN_NORMAL_FORCE_N: f64 = 1e-6;
/// The Newton step tolerance on the relative velocity. Newton stops at a step below it and
/// takes that step ([`accept_step`]), which leaves the answer second order in the step from
/// the root: over held notes from C2 to F#6 within 2.4e-10 m/s of the root found to 1e-13
/// (`tests/bowing.rs`), where accepting the point before the step left it up to the
/// tolerance away. At 1e-7, the tolerance before, 66 % of the samples took two passes (one
/// step, then its check) and a group of eight voices in the lanes nearly always a third;
/// at 1e-5, 96 % take two (`tests/friction_models.rs`), for 4 % fewer instructions and 8 %
/// less time with sixteen voices.
pub const VELOCITY_TOLERANCE_MPS: f64 = 1e-5;
/// The Newton step tolerance on the bristle deflection, relative to `fS / s0` (see
/// [`VELOCITY_TOLERANCE_MPS`]).
pub const DEFLECTION_TOLERANCE: f64 = 1e-5;
/// The iteration cap; past it the fallback is taken.
pub const MAX_ITERATIONS: usize = 50;
/// How many times a Newton step may be halved to lower the residual. A sample's Newton
/// costs at most `MAX_ITERATIONS x (MAX_STEP_HALVINGS + 1) + 1` friction-law evaluations.
pub const MAX_STEP_HALVINGS: usize = 4;

/// Takes Newton's last step `(dv, dz)`, found below tolerance at `(v, z)`, without another
/// evaluation of the law: the point `(v - dv, z - dz)` and the bristle rate there by the
/// law's partials at `(v, z)`, `r - (dr/dv dv + dr/dz dz)`. That point and rate meet the
/// trapezoid rule (`g2`) exactly in Newton's linear model, and the law to second order in
/// the step (within 2.4e-10 m/s of the root at the step tolerance of 1e-5 m/s, 4.5e-14 at
/// 1e-7: `tests/bowing.rs`), where `(v, z)` itself is off by up to the step. Accepting
/// `(v, z)` as it stood, with the tolerance at 1e-7 m/s, the
/// answers sat as far from the root as the start let them: a start a step away from it,
/// as [`BowContact::warm_start`] gives, ends one step short, and the friction drum's
/// irregular bowed note (`tests/drum_physics.rs`) settled 2.6 dB quieter than with a
/// tolerance a thousand times tighter.
#[inline(always)]
pub(crate) fn accept_step(v: f64, z: f64, dv: f64, dz: f64, r: &BristleRate) -> (f64, f64, f64) {
    (v - dv, z - dz, r.rate_mps - (r.d_rate_d_velocity * dv + r.d_rate_d_deflection * dz))
}

/// One sample's contact problem.
#[derive(Clone, Copy, Debug)]
pub struct ContactInput {
    /// The relative velocity with no bow force (string velocity minus bow velocity).
    pub free_velocity_mps: f64,
    /// `dv / df`, the string's point mobility over one step (s/kg).
    pub coupling_s_per_kg: f64,
    pub normal_force_n: f64,
    pub time_step_s: f64,
}

/// The contact's result for one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactOutput {
    pub force_n: f64,
    pub relative_velocity_mps: f64,
    pub deflection_m: f64,
    pub iterations: usize,
    pub converged: bool,
}

/// The bow's friction state between samples.
#[derive(Clone)]
pub struct BowContact {
    pub friction: ElastoPlasticParams,
    deflection_m: f64,
    rate_mps: f64,
    velocity_mps: f64,
    rng: Xoshiro256PlusPlus,
    pub stats: IterationStats,
}

impl BowContact {
    pub fn new(friction: ElastoPlasticParams, seed: u64) -> Self {
        Self {
            friction,
            deflection_m: 0.0,
            rate_mps: 0.0,
            velocity_mps: 0.0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            stats: IterationStats::default(),
        }
    }

    /// Returns the bristle to rest and restarts the noise sequence.
    pub fn reset(&mut self, seed: u64) {
        self.deflection_m = 0.0;
        self.rate_mps = 0.0;
        self.velocity_mps = 0.0;
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    }

    pub fn deflection_m(&self) -> f64 {
        self.deflection_m
    }

    /// The bristle stiffness is about to be multiplied by `1 / ratio` (a control automated):
    /// the bristle keeps the force it holds, its deflection scaled by `ratio`.
    pub fn rescale_deflection(&mut self, ratio: f64) {
        if ratio.is_finite() && ratio > 0.0 {
            self.deflection_m *= ratio;
        }
    }

    /// The bristle's rate at the last sample (m/s).
    pub fn rate_mps(&self) -> f64 {
        self.rate_mps
    }

    /// The relative velocity at the last sample (m/s), from which the next solve's start is
    /// worked out (`warm_start`).
    pub fn velocity_mps(&self) -> f64 {
        self.velocity_mps
    }

    /// Where Newton starts this sample, `(v, z)`: the bristle carried on at its last rate,
    /// `z = z_prev + k r_prev`, and the velocity the string would reach if the force were
    /// the friction force there with the last velocity and rate and this sample's `noise`,
    /// `v = v_free - coupling f(v_prev, z, r_prev)`.
    ///
    /// From the last sample's `(v, z)` as it stood, two thirds of the samples took three
    /// passes or more and 5 % four or more (a legato scale and sixteen held voices at the
    /// defaults, `tests/friction_models.rs`, at the step tolerance of 1e-7 then); from here
    /// 66 % took two (one step, then its check) and 0.17 % four or more at that tolerance,
    /// and at today's [`VELOCITY_TOLERANCE_MPS`] 96 % take two and 0.04 % four or more, so
    /// that a group of eight voices in the lanes, which steps until its slowest is done,
    /// mostly stops after two. Both starts land on the same root (within 6e-14 m/s at the
    /// tolerance of 1e-7, solved side by side over held notes from C2 to F#6 and the
    /// drum's), since Newton takes its last step (`accept_step`).
    #[inline(always)]
    pub(crate) fn warm_start(&self, input: &ContactInput, noise: f64) -> (f64, f64) {
        let p = &self.friction;
        let z = self.deflection_m + input.time_step_s * self.rate_mps;
        let f = p.force_n(input.normal_force_n, self.velocity_mps, z, self.rate_mps, noise);
        (input.free_velocity_mps - input.coupling_s_per_kg * f, z)
    }

    /// Uniform noise in [-1, 1], the next of this contact's sequence.
    #[inline]
    pub(crate) fn noise(&mut self) -> f64 {
        let bits = self.rng.next_u64() >> 11;
        (bits as f64) * (2.0 / (1u64 << 53) as f64) - 1.0
    }

    /// Lifts the bow: no force, and the bristle relaxes.
    pub fn lift(&mut self, free_velocity_mps: f64) -> ContactOutput {
        self.deflection_m = 0.0;
        self.rate_mps = 0.0;
        self.velocity_mps = free_velocity_mps;
        ContactOutput { force_n: 0.0, relative_velocity_mps: free_velocity_mps, deflection_m: 0.0, iterations: 0, converged: true }
    }

    /// Lifts the bow, and returns its output, when `input` has no usable normal force (below
    /// [`MIN_NORMAL_FORCE_N`], infinite or NaN) or no finite free velocity.
    #[inline]
    pub(crate) fn lift_if_unusable(&mut self, input: &ContactInput) -> Option<ContactOutput> {
        let fn_n = input.normal_force_n;
        if fn_n >= MIN_NORMAL_FORCE_N && fn_n <= f64::MAX && finite(input.free_velocity_mps) {
            return None;
        }
        Some(self.lift(if input.free_velocity_mps.is_finite() { input.free_velocity_mps } else { 0.0 }))
    }

    /// Solves one sample of the contact and commits the new bristle state.
    pub fn solve(&mut self, input: &ContactInput) -> ContactOutput {
        self.solve_to(input, VELOCITY_TOLERANCE_MPS, DEFLECTION_TOLERANCE)
    }

    /// [`BowContact::solve`] for a contact that is not lifted and has drawn its sample's
    /// `noise` (the lanes' solve draws it for each contact before it knows whether the CPU
    /// can solve them in lanes).
    #[inline(always)]
    pub(crate) fn solve_with_noise(&mut self, input: &ContactInput, noise: f64) -> ContactOutput {
        self.solve_within(input, noise, VELOCITY_TOLERANCE_MPS, DEFLECTION_TOLERANCE)
    }

    /// [`BowContact::solve`] with Newton's step tolerances given (`deflection_tolerance`
    /// relative to `fS / s0`, as [`DEFLECTION_TOLERANCE`]): `solve` with the usual ones, and
    /// tests that measure how far those leave the answer from the root with tighter ones.
    #[doc(hidden)]
    #[inline]
    pub fn solve_to(&mut self, input: &ContactInput, velocity_tolerance_mps: f64, deflection_tolerance: f64) -> ContactOutput {
        if let Some(lifted) = self.lift_if_unusable(input) {
            return lifted;
        }
        let noise = self.noise();
        self.solve_within(input, noise, velocity_tolerance_mps, deflection_tolerance)
    }

    #[inline(always)]
    fn solve_within(&mut self, input: &ContactInput, noise: f64, velocity_tolerance_mps: f64, deflection_tolerance: f64) -> ContactOutput {
        let fn_n = input.normal_force_n;
        let p = self.friction;
        let k = input.time_step_s;
        let kf = input.coupling_s_per_kg;
        let v_free = input.free_velocity_mps;
        let z_prev = self.deflection_m;
        let r_prev = self.rate_mps;
        let z_tol = deflection_tolerance * p.static_coefficient * fn_n / p.bristle_stiffness_n_per_m;

        let evaluations = std::cell::Cell::new(0usize);
        let residuals = |v: f64, z: f64| {
            evaluations.set(evaluations.get() + 1);
            let r = p.bristle_rate(fn_n, v, z);
            let f = p.force_n(fn_n, v, z, r.rate_mps, noise);
            (v - v_free + kf * f, r.rate_mps - 2.0 / k * (z - z_prev) + r_prev, r)
        };

        // Warm start from the previous sample (see `warm_start`). Each pass takes the Jacobian
        // at (v, z); when the Newton step from there is below tolerance, it is taken along
        // Newton's linear model (`accept_step`), so the force needs no extra evaluation of
        // the law. Otherwise the step is damped: halved (at most MAX_STEP_HALVINGS times)
        // until it lowers the residual, measured as the size of the step it asks for in
        // tolerance units, so that plain Newton's overshoot on the steep side of the Stribeck
        // curve, which can cycle for all its iterations and send every sample to the
        // fallback, converges instead. A full step that lowers the residual is taken as
        // before, and the residual at the point it reaches is the next pass's.
        let (mut v, mut z) = self.warm_start(input, noise);
        let mut accepted = None;
        let mut iterations = 0;
        let (mut g1, mut g2, mut r) = residuals(v, z);
        while iterations < MAX_ITERATIONS {
            iterations += 1;
            let j11 = 1.0 + kf * (p.bristle_damping_kg_per_s * r.d_rate_d_velocity + p.viscous_damping_kg_per_s);
            let j12 = kf * (p.bristle_stiffness_n_per_m + p.bristle_damping_kg_per_s * r.d_rate_d_deflection);
            let j21 = r.d_rate_d_velocity;
            let j22 = r.d_rate_d_deflection - 2.0 / k;
            let Some((dv, dz)) = solve_2x2(j11, j12, j21, j22, g1, g2) else { break };
            if dv.abs() < velocity_tolerance_mps && dz.abs() < z_tol {
                // The step below tolerance is taken, with the rate carried along Newton's
                // linear model (see `accept_step`).
                let rate;
                (v, z, rate) = accept_step(v, z, dv, dz, &r);
                accepted = Some((rate, p.force_n(fn_n, v, z, rate, noise)));
                break;
            }
            let merit = |g1: f64, g2: f64| (g1 / (j11 * velocity_tolerance_mps)).powi(2) + (g2 / (j22 * z_tol)).powi(2);
            let current = merit(g1, g2);
            let mut t = 1.0;
            let mut halvings = 0;
            let moved = loop {
                let (vc, zc) = (v - t * dv, z - t * dz);
                let candidate = residuals(vc, zc);
                let lower = merit(candidate.0, candidate.1) < current;
                if (lower || halvings == MAX_STEP_HALVINGS) && vc.is_finite() && zc.is_finite() {
                    (v, z) = (vc, zc);
                    (g1, g2, r) = candidate;
                    break true;
                }
                if halvings == MAX_STEP_HALVINGS {
                    break false;
                }
                t *= 0.5;
                halvings += 1;
            };
            // No finite step: the next pass would try the same ones again, so the fallback
            // takes over now.
            if !moved || !(g1.is_finite() && g2.is_finite()) {
                break;
            }
        }

        self.finish(input, noise, v, z, accepted, iterations, evaluations.get())
    }

    /// Ends a sample's solve where Newton left it at `(v, z)` after `iterations` passes and
    /// `evaluations` of the law: with the rate and force it `accepted` there, or else from
    /// the fallback. Records the statistics and commits the bristle's state. Shared by
    /// [`BowContact::solve`] and the lanes' solve (`dupont_lanes`).
    // Every contact's every sample ends here: out of line, its seven arguments cost about
    // 39 instructions a voice-sample (docs/performance.md, *Two calls a sample inlined*).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn finish(&mut self, input: &ContactInput, noise: f64, mut v: f64, mut z: f64, accepted: Option<(f64, f64)>, iterations: usize, evaluations: usize) -> ContactOutput {
        let converged = accepted.is_some();
        let evaluations = std::cell::Cell::new(evaluations);
        let (rate, force) = match accepted {
            Some(found) => found,
            None => {
                self.stats.fallbacks += 1;
                (v, z) = self.fallback(input, noise, &evaluations);
                evaluations.set(evaluations.get() + 1);
                let p = self.friction;
                let r = p.bristle_rate(input.normal_force_n, v, z);
                (r.rate_mps, p.force_n(input.normal_force_n, v, z, r.rate_mps, noise))
            }
        };
        self.stats.record(iterations);
        self.stats.max_evaluations = self.stats.max_evaluations.max(evaluations.get());
        self.velocity_mps = v;
        self.deflection_m = z;
        self.rate_mps = rate;
        ContactOutput { force_n: force, relative_velocity_mps: v, deflection_m: z, iterations, converged }
    }

    /// The fallback when Newton fails: the same two equations, solved by nested bracketed
    /// root finding ([`illinois`]). For a fixed `v`, `g2` is strictly decreasing in `z` (r
    /// falls with z, and so does `-2z/k`), so it has one root `z(v)`; `g1(v, z(v))` is
    /// negative far below and positive far above any root in `v`. Both loops are bounded
    /// (at most 60 evaluations each, about 10 on smooth ground, where nested bisection took
    /// 3600 for every sample that fell back), and the answer is always finite.
    fn fallback(&self, input: &ContactInput, noise: f64, evaluations: &std::cell::Cell<usize>) -> (f64, f64) {
        let p = self.friction;
        let fn_n = input.normal_force_n;
        let k = input.time_step_s;
        let z_prev = self.deflection_m;
        let r_prev = self.rate_mps;
        let z_span = 4.0 * p.steady_state_deflection_m(fn_n, 0.0) + z_prev.abs() + k * r_prev.abs();
        let deflection_for = |v: f64| {
            let g2 = |z: f64| {
                evaluations.set(evaluations.get() + 1);
                p.bristle_rate(fn_n, v, z).rate_mps - 2.0 / k * (z - z_prev) + r_prev
            };
            let lo = z_prev - z_span - k * v.abs();
            let hi = z_prev + z_span + k * v.abs();
            illinois(g2, lo, hi, g2(lo), g2(hi), FALLBACK_TOLERANCE * (hi - lo), FALLBACK_RATE_RESIDUAL_MPS, FALLBACK_EVALUATIONS)
        };
        let g1 = |v: f64| {
            let z = deflection_for(v);
            evaluations.set(evaluations.get() + 1);
            let r = p.bristle_rate(fn_n, v, z);
            v - input.free_velocity_mps + input.coupling_s_per_kg * p.force_n(fn_n, v, z, r.rate_mps, noise)
        };
        let reach = 1.0 + input.free_velocity_mps.abs() + 2.0 * input.coupling_s_per_kg * (p.static_coefficient * fn_n + p.bristle_stiffness_n_per_m * z_span);
        let lo = input.free_velocity_mps - reach;
        let hi = input.free_velocity_mps + reach;
        let (g_lo, g_hi) = (g1(lo), g1(hi));
        if !(g_lo <= 0.0 && g_hi >= 0.0) {
            return (input.free_velocity_mps, 0.0);
        }
        let v = illinois(g1, lo, hi, g_lo, g_hi, FALLBACK_TOLERANCE * (hi - lo), FALLBACK_VELOCITY_RESIDUAL_MPS, FALLBACK_EVALUATIONS);
        (v, deflection_for(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fallback solves the same two equations as Newton: everywhere its residuals are
    /// small, and for ordinary bows, where Newton converges, both land on the same point. Ordinary and
    /// extreme bows (full static friction, stiff bristles, 10 N) at 22.05 to 192 kHz.
    #[test]
    fn the_fallback_lands_where_newton_does() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut compared = 0;
        for case in 0..400 {
            let mut friction = ElastoPlasticParams::default();
            if case % 2 == 1 {
                friction.static_coefficient = 1.5;
                friction.bristle_stiffness_n_per_m = 1e6 * unit().max(0.01);
                friction.stribeck_velocity_mps = 0.01;
            }
            let mut contact = BowContact::new(friction, case);
            contact.deflection_m = (2.0 * unit() - 1.0) * 1e-5;
            contact.rate_mps = (2.0 * unit() - 1.0) * 0.1;
            contact.velocity_mps = (2.0 * unit() - 1.0) * 0.5;
            let input = ContactInput {
                free_velocity_mps: (2.0 * unit() - 1.0) * 1.0,
                coupling_s_per_kg: 0.01 + 5.0 * unit(),
                normal_force_n: 0.05 + 10.0 * unit(),
                time_step_s: 1.0 / (22_050.0 + 170_000.0 * unit()),
            };
            let (v, z) = contact.fallback(&input, 0.0, &std::cell::Cell::new(0));
            let p = contact.friction;
            let r = p.bristle_rate(input.normal_force_n, v, z);
            let g1 = v - input.free_velocity_mps + input.coupling_s_per_kg * p.force_n(input.normal_force_n, v, z, r.rate_mps, 0.0);
            let g2 = r.rate_mps - 2.0 / input.time_step_s * (z - contact.deflection_m) + contact.rate_mps;
            assert!(g1.abs() < 1e-9, "case {case}: velocity residual {g1:e}");
            assert!(g2.abs() < 1e-6 * (1.0 + contact.rate_mps.abs() + v.abs()), "case {case}: deflection residual {g2:e}");
            // Newton from the same state, with the same (zero) noise.
            contact.friction.noise_per_normal_force = 0.0;
            let mut newton = BowContact::new(contact.friction, case);
            (newton.deflection_m, newton.rate_mps, newton.velocity_mps) = (contact.deflection_m, contact.rate_mps, contact.velocity_mps);
            let out = newton.solve(&input);
            // Past the Stribeck peak the load line can cross the friction curve three times:
            // with extreme bows, either root is a solution, so only ordinary ones compare.
            if out.converged && case % 2 == 0 {
                assert!((out.relative_velocity_mps - v).abs() < 1e-6, "case {case}: Newton {} against the fallback {v}", out.relative_velocity_mps);
                compared += 1;
            }
        }
        assert!(compared > 150, "only {compared} cases converged");
    }

    /// The worst inputs that can be built: forces from nothing to 1 kN, string velocities to
    /// 1 km/s, couplings to 1,000 s/kg, steps from 1 ms to 0.6 us, friction from the
    /// controls' extremes, NaN and infinity in, and a jump to something else at every
    /// sample. Every output is finite, and no sample takes more friction-law evaluations
    /// than the stated budget: the maximum is asserted, not the median.
    #[test]
    fn no_sample_exceeds_the_evaluation_budget_whatever_comes_in() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(18);
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut worst = IterationStats::default();
        let mut fallbacks = 0;
        for case in 0..40 {
            let mut friction = ElastoPlasticParams::default();
            friction.static_coefficient = [0.1, 0.8, 1.5][case % 3];
            friction.coulomb_coefficient = [0.05f64, 0.3, 1.0][case % 3].min(friction.static_coefficient);
            friction.bristle_stiffness_n_per_m = [1e3, 1e5, 1e6, 1e7][case % 4];
            friction.stribeck_velocity_mps = [0.01, 0.1, 1.0][case % 3];
            let mut contact = BowContact::new(friction, case as u64);
            for _ in 0..2_000 {
                let magnitude = |u: f64, top: f64| top * u.powi(3);
                let mut input = ContactInput {
                    free_velocity_mps: (2.0 * unit() - 1.0) * magnitude(unit(), 1e3),
                    coupling_s_per_kg: magnitude(unit(), 1e3),
                    normal_force_n: magnitude(unit(), 1e3),
                    time_step_s: 1.0 / (1_000.0 + 1.5e6 * unit()),
                };
                match (unit() * 40.0) as u32 {
                    0 => input.free_velocity_mps = f64::NAN,
                    1 => input.free_velocity_mps = f64::INFINITY,
                    2 => input.normal_force_n = f64::NAN,
                    3 => input.normal_force_n = f64::INFINITY,
                    4 => input.normal_force_n = 0.0,
                    _ => {}
                }
                let out = contact.solve(&input);
                assert!(out.force_n.is_finite() && out.relative_velocity_mps.is_finite() && out.deflection_m.is_finite(), "case {case}: {out:?} from {input:?}");
            }
            fallbacks += contact.stats.fallbacks;
            worst.merge(&contact.stats);
        }
        println!(
            "{} solves, {} fallbacks; iterations: median {:?}, most {:?}; friction-law evaluations in one sample: most {} (budget {MAX_EVALUATIONS_PER_SAMPLE})",
            worst.solves(),
            fallbacks,
            worst.median(),
            worst.max(),
            worst.max_evaluations
        );
        assert!(worst.max_evaluations <= MAX_EVALUATIONS_PER_SAMPLE, "a sample took {} evaluations", worst.max_evaluations);
        assert!(fallbacks > 0, "the worst inputs never reached the fallback: the test would not see its cost");
    }
}

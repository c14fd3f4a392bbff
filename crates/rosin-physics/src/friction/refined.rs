//! matusiak2025's passive refined elasto-plastic friction at one contact, in the paper's
//! energy-conserving scheme (eqs. 14, 28-32; `MODELS.md` section 2).
//!
//! The bristle deflection lives on half steps: `mu_t z^n = (z^{n+1/2} + z^{n-1/2}) / 2`,
//! `delta_t z^n = (z^{n+1/2} - z^{n-1/2}) / k`, and the force is
//! `F = sigma0 mu_t z + sigma1(v) delta_t z` with `delta_t z = g(mu_t z, v)`, `g` the
//! elasto-plastic bristle rate. Whatever the contact is attached to (a lumped mass, a
//! string, bow hair) only has to be linear over one step, `v = A - B F`: then for a trial
//! `v` the force balance gives `mu_t z` in closed form, and the step is the scalar equation
//! `G(v) = delta_t z - g(mu_t z, v) = 0` (eq. 32).
//!
//! The solve is Newton's method with the analytic derivative, each step halved until `|G|`
//! falls (G is only piecewise smooth: the adhesion map has corners), capped at
//! [`MAX_NEWTON_STEPS`]; where the derivative vanishes (the paper warns that it can) or
//! Newton stalls, bisection on a bracket grown from the previous solution, itself capped.

use crate::friction::dupont::{refined_bristle_damping, ElastoPlasticParams};

/// Newton steps before the bisection fallback.
pub const MAX_NEWTON_STEPS: usize = 50;
/// Halvings of one Newton step while it does not reduce `|G|`.
const MAX_STEP_HALVINGS: usize = 30;
/// Bracket expansions and bisection halvings allowed in the fallback.
const MAX_BRACKET_STEPS: usize = 60;
const MAX_BISECTIONS: usize = 200;

/// What a budgeted root search found: the root, the residual evaluations and Newton steps
/// it took, and whether Newton met its tolerance (else the bisection's answer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootSearch {
    pub velocity_mps: f64,
    pub evaluations: usize,
    pub newton_steps: usize,
    pub converged: bool,
}

/// How the bristle damping depends on the relative velocity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BristleDamping {
    /// Dupont's constant `sigma1_bar` (willemsen2019): not passive for every parameter set.
    Constant,
    /// matusiak2025 eq. 14: `muC fN / sqrt(v^2 + eps^2)`, passive.
    Refined,
}

impl BristleDamping {
    /// `sigma1(v)` and its derivative, with `friction.bristle_damping_kg_per_s` as
    /// `sigma1_bar`.
    #[inline]
    pub fn at(self, friction: &ElastoPlasticParams, normal_force_n: f64, velocity_mps: f64) -> (f64, f64) {
        let bar = friction.bristle_damping_kg_per_s;
        match self {
            BristleDamping::Constant => (bar, 0.0),
            BristleDamping::Refined => refined_bristle_damping(friction.coulomb_coefficient * normal_force_n, bar, velocity_mps),
        }
    }
}

/// One step's linear surroundings of the contact, `v = A - B F`, and the friction it meets.
#[derive(Clone, Copy, Debug)]
pub struct RefinedProblem<'a> {
    pub friction: &'a ElastoPlasticParams,
    pub damping_law: BristleDamping,
    pub normal_force_n: f64,
    /// `A`: the relative velocity with no friction force (m/s).
    pub free_velocity_mps: f64,
    /// `B`: how much the relative velocity falls per newton of friction (s/kg).
    pub mobility_s_per_kg: f64,
    pub time_step_s: f64,
}

/// The solved step, before it is committed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RefinedSolution {
    pub velocity_mps: f64,
    /// `mu_t z^n` (m).
    pub deflection_m: f64,
    /// `delta_t z^n` (m/s).
    pub deflection_rate_mps: f64,
    pub force_n: f64,
    /// Newton steps taken; [`MAX_NEWTON_STEPS`] means the bisection fallback ran.
    pub iterations: usize,
}

impl RefinedSolution {
    /// The bristle's loss `F v - sigma0 mu_t z delta_t z` (W): never negative for the
    /// refined damping (matusiak2025 eq. 34's `Q_b`).
    pub fn bristle_loss_w(&self, friction: &ElastoPlasticParams) -> f64 {
        self.force_n * self.velocity_mps - friction.bristle_stiffness_n_per_m * self.deflection_m * self.deflection_rate_mps
    }
}

/// The bristle between steps: `z^{n-1/2}` and the last solution, the warm start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefinedBristle {
    deflection_half_m: f64,
    last_velocity_mps: f64,
    /// Newton's tolerance on `v` (m/s).
    pub tolerance_mps: f64,
}

impl Default for RefinedBristle {
    fn default() -> Self {
        Self { deflection_half_m: 0.0, last_velocity_mps: 0.0, tolerance_mps: 1e-12 }
    }
}

impl RefinedBristle {
    /// At rest, with Newton's tolerance on `v` (m/s).
    pub fn with_tolerance(tolerance_mps: f64) -> Self {
        Self { tolerance_mps, ..Self::default() }
    }

    /// A bristle at `z^{n-1/2}` whose next solve starts from `warm_start_mps`.
    pub fn from_state(deflection_half_m: f64, warm_start_mps: f64, tolerance_mps: f64) -> Self {
        Self { deflection_half_m, last_velocity_mps: warm_start_mps, tolerance_mps }
    }

    /// `mu_t z` for a trial `v`: the force balance solved for it.
    pub fn deflection_at(&self, p: &RefinedProblem, v: f64) -> f64 {
        self.deflection_for(p, v).0
    }

    /// The bristle stiffness is about to be multiplied by `1 / ratio` (a control automated):
    /// the bristle keeps the force it holds, its deflection scaled by `ratio`.
    pub fn rescale_deflection(&mut self, ratio: f64) {
        if ratio.is_finite() && ratio > 0.0 {
            self.deflection_half_m *= ratio;
        }
    }

    pub fn reset(&mut self) {
        self.deflection_half_m = 0.0;
        self.last_velocity_mps = 0.0;
    }

    /// `z^{n-1/2}` (m).
    pub fn deflection_half_m(&self) -> f64 {
        self.deflection_half_m
    }

    /// The bristle's stored energy `sigma0 / 2 (z^{n-1/2})^2` (J).
    pub fn energy_j(&self, friction: &ElastoPlasticParams) -> f64 {
        0.5 * friction.bristle_stiffness_n_per_m * self.deflection_half_m * self.deflection_half_m
    }

    /// Lifts the bow: the bristle relaxes at once.
    pub fn lift(&mut self, free_velocity_mps: f64) {
        self.deflection_half_m = 0.0;
        self.last_velocity_mps = if free_velocity_mps.is_finite() { free_velocity_mps } else { 0.0 };
    }

    /// `mu_t z` for a trial `v` (the force balance solved for it), and its derivative.
    #[inline]
    fn deflection_for(&self, p: &RefinedProblem, v: f64) -> (f64, f64) {
        let k = p.time_step_s;
        let b = p.mobility_s_per_kg;
        let s0 = p.friction.bristle_stiffness_n_per_m;
        let (s1, ds1) = p.damping_law.at(p.friction, p.normal_force_n, v);
        // v = A - B (s0 r + s1 2 (r - z_half) / k)  =>  r = (A - v + 2 B s1 z_half / k) / D.
        let numerator = p.free_velocity_mps - v + 2.0 * b * s1 * self.deflection_half_m / k;
        let denominator = b * (s0 + 2.0 * s1 / k);
        let r = numerator / denominator;
        let dr = ((-1.0 + 2.0 * b * ds1 * self.deflection_half_m / k) - r * 2.0 * b * ds1 / k) / denominator;
        (r, dr)
    }

    /// `G(v)` (eq. 32) and `G'(v)`.
    #[inline]
    pub fn residual(&self, p: &RefinedProblem, v: f64) -> (f64, f64) {
        let k = p.time_step_s;
        let (r, dr) = self.deflection_for(p, v);
        let rate = p.friction.bristle_rate(p.normal_force_n, v, r);
        let g = 2.0 * (r - self.deflection_half_m) / k - rate.rate_mps;
        let dg = 2.0 * dr / k - (rate.d_rate_d_velocity + rate.d_rate_d_deflection * dr);
        (g, dg)
    }

    /// Solves one step without committing it. Requires `normal_force_n > 0` and
    /// `mobility_s_per_kg > 0`.
    pub fn solve(&self, p: &RefinedProblem) -> RefinedSolution {
        let (v, iterations) = self.find_root(p);
        let k = p.time_step_s;
        let (r, _) = self.deflection_for(p, v);
        let (s1, _) = p.damping_law.at(p.friction, p.normal_force_n, v);
        let rate = 2.0 * (r - self.deflection_half_m) / k;
        RefinedSolution { velocity_mps: v, deflection_m: r, deflection_rate_mps: rate, force_n: p.friction.bristle_stiffness_n_per_m * r + s1 * rate, iterations }
    }

    /// As [`Self::solve`], within `max_evaluations` residual evaluations
    /// ([`Self::find_root_within`]): for a contact in real time.
    pub fn solve_within(&self, p: &RefinedProblem, max_evaluations: usize) -> (RefinedSolution, RootSearch) {
        let search = self.find_root_within(p, max_evaluations);
        let v = search.velocity_mps;
        let k = p.time_step_s;
        let (r, _) = self.deflection_for(p, v);
        let (s1, _) = p.damping_law.at(p.friction, p.normal_force_n, v);
        let rate = 2.0 * (r - self.deflection_half_m) / k;
        (RefinedSolution { velocity_mps: v, deflection_m: r, deflection_rate_mps: rate, force_n: p.friction.bristle_stiffness_n_per_m * r + s1 * rate, iterations: search.newton_steps }, search)
    }

    /// Moves the bristle on to `z^{n+1/2}`.
    pub fn commit(&mut self, solution: &RefinedSolution) {
        self.deflection_half_m = 2.0 * solution.deflection_m - self.deflection_half_m;
        self.last_velocity_mps = solution.velocity_mps;
    }

    fn find_root(&self, p: &RefinedProblem) -> (f64, usize) {
        let mut v = self.last_velocity_mps;
        let (mut g, mut dg) = self.residual(p, v);
        for iteration in 0..MAX_NEWTON_STEPS {
            if !dg.is_finite() || dg.abs() <= 1e-300 || !g.is_finite() {
                break;
            }
            let mut step = g / dg;
            let mut trial = self.residual(p, v - step);
            for _ in 0..MAX_STEP_HALVINGS {
                if trial.0.abs() < g.abs() {
                    break;
                }
                step *= 0.5;
                trial = self.residual(p, v - step);
            }
            v -= step;
            (g, dg) = trial;
            if step.abs() <= self.tolerance_mps.max(1e-15 * v.abs()) || g == 0.0 {
                return (v, iteration + 1);
            }
        }
        (self.bisect(p), MAX_NEWTON_STEPS)
    }

    /// The root of `G` with at most `max_evaluations` residual evaluations (at least 4):
    /// Newton with step halving (at most four halvings a step) from the previous solution
    /// while it makes progress, then bisection on a bracket grown around where it stopped
    /// with what remains. For callers with a budget in real time: the point bow's contact,
    /// and the high-fidelity bow's fallback, which solves every point several times a sample.
    pub fn find_root_within(&self, p: &RefinedProblem, max_evaluations: usize) -> RootSearch {
        let budget = max_evaluations.max(4);
        let mut used = 1;
        let mut steps = 0;
        let mut v = self.last_velocity_mps;
        let (mut g, mut dg) = self.residual(p, v);
        while used + 5 <= budget {
            if !dg.is_finite() || dg.abs() <= 1e-300 || !g.is_finite() {
                break;
            }
            let mut step = g / dg;
            let mut trial = self.residual(p, v - step);
            used += 1;
            for _ in 0..4 {
                if trial.0.abs() < g.abs() {
                    break;
                }
                step *= 0.5;
                trial = self.residual(p, v - step);
                used += 1;
            }
            if !(trial.0.abs() < g.abs()) {
                break;
            }
            v -= step;
            (g, dg) = trial;
            steps += 1;
            if step.abs() <= self.tolerance_mps.max(1e-15 * v.abs()) || g == 0.0 {
                return RootSearch { velocity_mps: v, evaluations: used, newton_steps: steps, converged: true };
            }
        }
        let residual = |x: f64| self.residual(p, x).0;
        let centre = if v.is_finite() { v } else { 0.0 };
        let mut width = 1e-3;
        let (mut lo, mut hi) = (centre - width, centre + width);
        let (mut g_lo, mut g_hi) = (residual(lo), residual(hi));
        used += 2;
        while g_lo * g_hi > 0.0 && used + 2 <= budget {
            width *= 4.0;
            (lo, hi) = (centre - width, centre + width);
            (g_lo, g_hi) = (residual(lo), residual(hi));
            used += 2;
        }
        while used < budget {
            let mid = 0.5 * (lo + hi);
            if mid == lo || mid == hi {
                break;
            }
            let g_mid = residual(mid);
            used += 1;
            if g_mid * g_lo <= 0.0 {
                hi = mid;
            } else {
                lo = mid;
                g_lo = g_mid;
            }
        }
        RootSearch { velocity_mps: 0.5 * (lo + hi), evaluations: used, newton_steps: steps, converged: false }
    }

    /// The fallback: bisection on a bracket grown around the previous solution. `G` runs
    /// from positive far below any root to negative far above, so the bracket is found.
    pub fn bisect(&self, p: &RefinedProblem) -> f64 {
        let g = |v: f64| self.residual(p, v).0;
        let centre = if self.last_velocity_mps.is_finite() { self.last_velocity_mps } else { 0.0 };
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

//! The contact between a finite-width bow and a string at up to
//! [`MAX_CONTACT_POINTS`] points, with matusiak2025's passive refined elasto-plastic
//! friction at each (eqs. 14, 45-46, 53, 58-61; `MODELS.md` section 2).
//!
//! Each sample the rest of the system is linear in the friction forces, so the relative
//! velocities satisfy `v = a - C F` (eq. 59): `a` the relative velocities with no friction,
//! `C` the symmetric positive definite mobility matrix of the string, its torsion and the
//! bow hair. At point `m` the bristle deflection lives on half steps, and with
//! `r_m = mu_t z_m`, `delta_t z_m = 2 (r_m - z_m^{n-1/2}) / k`:
//!
//! - `F_m = sigma0 r_m + sigma1(v_m) delta_t z_m`,
//! - `v_m - a_m + sum_j C_mj F_j = 0` (eq. 60),
//! - `delta_t z_m - g(r_m, v_m) = 0` (eq. 61), `g` the bristle rate of
//!   [`ElastoPlasticParams::bristle_rate`].
//!
//! The `2M` unknowns `(v, r)` are found by Newton's method with the analytic Jacobian and a
//! dense solve ([`solve_dense_in_place`]), each step halved until the residual falls (the
//! adhesion map has corners, so a full step can overshoot). When the Jacobian is singular
//! or Newton stalls, Gauss-Seidel sweeps take over: each point solves its own scalar
//! equation `G(v) = 0` against the others' forces, exactly as the lumped model of
//! [`crate::bow::lumped`] does (safeguarded Newton, then bisection on a bracket), after which
//! Newton polishes the result. Every loop is capped; the caller lifts the bow for the
//! sample if nothing finite comes out.

use crate::friction::dupont::{refined_bristle_damping, ElastoPlasticParams};
use crate::friction::dupont_lanes::bristle_rates;
use crate::friction::newton::{solve_dense_in_place, IterationStats};
use crate::friction::refined::{BristleDamping, RefinedBristle, RefinedProblem};

/// The most contact points across the bow.
pub const MAX_CONTACT_POINTS: usize = 4;
const _: () = assert!(MAX_CONTACT_POINTS == crate::friction::dupont_lanes::POINT_LANES, "one lane a point");
const MAX_UNKNOWNS: usize = 2 * MAX_CONTACT_POINTS;
/// Newton steps of the coupled solve before the fallback.
pub const MAX_NEWTON_STEPS: usize = 40;
/// The most friction-law evaluations at one contact point in one sample's Newton solve (the
/// bow's `M` points share `M` times this), then in the fallback's sweeps and in its
/// polishing Newton: at most 264 a point a sample in all. Steady bowing takes about 3
/// (Newton's median is 3 steps); the point bow's contact allows 4,220. A sample that
/// uses it all is answered with the best point found, whose energy the balance still
/// accounts for exactly (it uses the realised velocities).
pub const MAX_EVALUATIONS_PER_POINT: usize = 120;
pub const FALLBACK_EVALUATIONS_PER_POINT: usize = 104;
pub const POLISH_EVALUATIONS_PER_POINT: usize = 40;
/// The hard budget of friction-law evaluations one sample's solve may make, per contact
/// point: Newton, the sweeps and the polish, and the two merits that choose between
/// Newton's and the fallback's answer. (The forces at the sweeps' start and at the answer
/// need only the bristle's damping, not the law.) [`IterationStats::max_evaluations`]
/// records the most a solve took.
pub const MAX_EVALUATIONS_PER_SAMPLE_PER_POINT: usize = MAX_EVALUATIONS_PER_POINT + FALLBACK_EVALUATIONS_PER_POINT + POLISH_EVALUATIONS_PER_POINT + 2;
/// Residual evaluations one scalar solve of the fallback may take.
const SCALAR_SOLVE_EVALUATIONS: usize = 24;
/// Halvings of one Newton step while it does not reduce the residual. On Table 2's string in
/// steady bowing, 8 left 3 samples in a second to the fallback and 16 none; 30 only spent
/// time on hopeless directions (in a hostile fuzz render, 200 us a sample with the
/// fallback's former 60 sweeps).
const MAX_STEP_HALVINGS: usize = 16;
/// Gauss-Seidel sweeps of the fallback, and the Newton steps that polish their answer. The
/// fallback is for the samples Newton cannot take (a handful a second under hostile
/// controls); the evaluation budget bounds them in real time.
pub const MAX_SWEEPS: usize = 6;
pub const MAX_POLISH_STEPS: usize = 10;
/// Below this normal force per point the bow is off the string.
pub const MIN_NORMAL_FORCE_N: f64 = 1e-9;
/// The default tolerance on the relative velocities of the fallback's solves, and of the
/// residual of a Newton that stalls.
pub const DEFAULT_TOLERANCE_MPS: f64 = 1e-10;
/// The default Newton step tolerance on the relative velocities. Newton stops at a step
/// below it and takes that step, which leaves the answer second order in the step from the
/// root: within 1.1e-10 m/s of the root found to 1e-13, its bristle rate within 2e-10,
/// over a bristle sticking and slipping at 1 to 4 points
/// (`the_step_tolerance_leaves_the_answer_at_the_root`; at 1e-7, the tolerance before,
/// 3.1e-12 and 5.5e-12, and at 1e-10 3e-16). Eight ribbon voices took 3.17 Newton steps a
/// sample at 1e-10 and 2.86 at 1e-7; from 1e-7 to 1e-6 their instructions fell by 1.6 %
/// and their render moved by -130 dB. At 1e-5 the answer lay 2.9e-8 m/s from the root and
/// the ribbon's phrase moved by -35 dB of the signal: a different motion, not kept.
pub const DEFAULT_STEP_TOLERANCE_MPS: f64 = 1e-6;

/// One value per contact point.
pub type PointVector = [f64; MAX_CONTACT_POINTS];
/// A matrix over the contact points.
pub type PointMatrix = [[f64; MAX_CONTACT_POINTS]; MAX_CONTACT_POINTS];
type Unknowns = [f64; MAX_UNKNOWNS];

/// The linear part of one sample: `v = a - C F`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactSystem {
    pub points: usize,
    /// `a`: the relative velocities with no friction force.
    pub free_velocity_mps: PointVector,
    /// `C`, symmetric to the bit (`C[m][j] == C[j][m]`: the solve reads a row for a
    /// column) with a positive diagonal (s/kg).
    pub mobility_s_per_kg: PointMatrix,
}

/// What the contact solve found for one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactSolution {
    /// The solved relative velocities `v`.
    pub velocity_mps: PointVector,
    /// `mu_t z^n`.
    pub deflection_m: PointVector,
    /// `delta_t z^n`.
    pub deflection_rate_mps: PointVector,
    pub force_n: PointVector,
    /// Newton steps of the coupled solve (the cap when it fell back).
    pub iterations: usize,
    pub fell_back: bool,
    /// The bow was off the string or nothing finite was found: no force this sample.
    pub lifted: bool,
    /// The bristle energy released when the bow was lifted (J); zero otherwise.
    pub released_energy_j: f64,
}

/// The bristles of every contact point between samples, and the solver's settings.
#[derive(Clone, Debug)]
pub struct BristleContact {
    /// The friction of one point: `s0` and `sigma1_bar` already divided among the points.
    friction: ElastoPlasticParams,
    points: usize,
    /// `z^{n-1/2}`.
    z_half: PointVector,
    /// Warm starts: the last sample's `v` and `delta_t z`.
    last_velocity_mps: PointVector,
    last_rate_mps: PointVector,
    /// The tolerance on `v` (m/s) of the fallback's solves and of a Newton that stalls
    /// (its residual's size); `r` is held to `k / 2` of it.
    pub tolerance_mps: f64,
    /// Newton stops at a step below this on `v` (m/s; on `r`, `k / 2` of it), and takes
    /// that step (see [`DEFAULT_STEP_TOLERANCE_MPS`]).
    pub step_tolerance_mps: f64,
    /// The coupled Newton's cap (at most [`MAX_NEWTON_STEPS`]): lowering it forces the
    /// fallback, for tests.
    pub max_newton_steps: usize,
    /// Evaluates the law at every point at once in vector lanes where the CPU has them
    /// (the default), and with four points runs the whole Newton in them (`avx2::newton`);
    /// off, one point at a time. The same bits either way (tests compare).
    pub law_in_lanes: bool,
    pub stats: IterationStats,
    /// Samples whose fallback ended short of the root and not passive, answered by lifting
    /// the bow (see [`BristleContact::solve`]).
    pub passivity_lifts: u64,
}

/// The residual at a trial `(v, r)` and what the Newton step needs.
struct Evaluation {
    residual: Unknowns,
    merit: f64,
    states: [PointState; MAX_CONTACT_POINTS],
}

/// The per-point quantities at a trial `(v, r)`.
#[derive(Clone, Copy, Default)]
struct PointState {
    force_n: f64,
    residual_rate_mps: f64,
    d_force_d_velocity: f64,
    d_force_d_deflection: f64,
    d_rate_d_velocity: f64,
    d_rate_d_deflection: f64,
}

impl BristleContact {
    /// `friction` is that of one contact point (see [`Self::set_point_friction`]).
    pub fn new(friction: ElastoPlasticParams, points: usize) -> Self {
        assert!((1..=MAX_CONTACT_POINTS).contains(&points), "1 to {MAX_CONTACT_POINTS} contact points");
        Self {
            friction,
            points,
            z_half: [0.0; MAX_CONTACT_POINTS],
            last_velocity_mps: [0.0; MAX_CONTACT_POINTS],
            last_rate_mps: [0.0; MAX_CONTACT_POINTS],
            tolerance_mps: DEFAULT_TOLERANCE_MPS,
            step_tolerance_mps: DEFAULT_STEP_TOLERANCE_MPS,
            max_newton_steps: MAX_NEWTON_STEPS,
            law_in_lanes: true,
            stats: IterationStats::default(),
            passivity_lifts: 0,
        }
    }

    /// Bristles at rest.
    pub fn reset(&mut self) {
        self.z_half = [0.0; MAX_CONTACT_POINTS];
        self.last_velocity_mps = [0.0; MAX_CONTACT_POINTS];
        self.last_rate_mps = [0.0; MAX_CONTACT_POINTS];
    }

    pub fn points(&self) -> usize {
        self.points
    }

    pub fn point_friction(&self) -> &ElastoPlasticParams {
        &self.friction
    }

    pub fn set_point_friction(&mut self, friction: ElastoPlasticParams) {
        self.friction = friction;
    }

    /// `z^{n-1/2}` of each point.
    pub fn half_step_deflection_m(&self) -> &[f64] {
        &self.z_half[..self.points]
    }

    /// The bristle energy `sigma0 / 2 sum z_m^2` (J).
    pub fn energy_j(&self) -> f64 {
        let s0 = self.friction.bristle_stiffness_n_per_m;
        self.z_half[..self.points].iter().map(|z| 0.5 * s0 * z * z).sum()
    }

    /// Sets where the next solve starts from (for tests of the fallback): relative
    /// velocities and bristle rates. Non-finite values are replaced by zero at the solve.
    pub fn set_warm_start(&mut self, velocity_mps: f64, rate_mps: f64) {
        self.last_velocity_mps = [velocity_mps; MAX_CONTACT_POINTS];
        self.last_rate_mps = [rate_mps; MAX_CONTACT_POINTS];
    }

    /// `sigma1(v)` of one point and its derivative.
    #[inline]
    fn damping(&self, normal_force_n: f64, velocity_mps: f64) -> (f64, f64) {
        refined_bristle_damping(self.friction.coulomb_coefficient * normal_force_n, self.friction.bristle_damping_kg_per_s, velocity_mps)
    }

    #[inline]
    fn point_state(&self, normal_force_n: f64, k: f64, m: usize, v: f64, r: f64) -> PointState {
        let rate = self.friction.bristle_rate(normal_force_n, v, r);
        self.point_state_at_rate(normal_force_n, k, m, v, r, (rate.rate_mps, rate.d_rate_d_velocity, rate.d_rate_d_deflection))
    }

    /// The force at point `m` for a trial `(v, r)`, `F = sigma0 r + sigma1(v) delta_t z`,
    /// with `delta_t z` and `sigma1(v)` and its derivative: what does not need the law.
    #[inline]
    fn bristle_force(&self, normal_force_n: f64, k: f64, m: usize, v: f64, r: f64) -> (f64, f64, f64, f64) {
        let s0 = self.friction.bristle_stiffness_n_per_m;
        let (s1, ds1) = self.damping(normal_force_n, v);
        let delta_z = 2.0 * (r - self.z_half[m]) / k;
        (s0 * r + s1 * delta_z, delta_z, s1, ds1)
    }

    /// [`Self::point_state`] with the law's bristle rate and its partials by `v` and `r`
    /// already worked out.
    #[inline]
    fn point_state_at_rate(&self, normal_force_n: f64, k: f64, m: usize, v: f64, r: f64, (rate_mps, d_rate_d_velocity, d_rate_d_deflection): (f64, f64, f64)) -> PointState {
        let s0 = self.friction.bristle_stiffness_n_per_m;
        let (force_n, delta_z, s1, ds1) = self.bristle_force(normal_force_n, k, m, v, r);
        PointState {
            force_n,
            residual_rate_mps: delta_z - rate_mps,
            d_force_d_velocity: ds1 * delta_z,
            d_force_d_deflection: s0 + 2.0 * s1 / k,
            d_rate_d_velocity,
            d_rate_d_deflection,
        }
    }

    /// The residual of eqs. 60-61 at `x = (v, r)`, its squared norm (m^2/s^2: both halves
    /// are velocities), and the per-point derivatives for the Jacobian.
    #[inline(always)]
    fn evaluate<const N: usize>(&self, system: &ContactSystem, normal_force_n: f64, k: f64, x: &Unknowns) -> Evaluation {
        debug_assert_eq!(system.points, N);
        let n = N;
        let mut states = [PointState::default(); MAX_CONTACT_POINTS];
        // The law at every point at once, in vector lanes where the CPU has them (the same
        // bits as one point at a time); a lane no point uses is at rest, and elastic.
        let (mut v, mut r) = ([0.0; MAX_CONTACT_POINTS], [0.0; MAX_CONTACT_POINTS]);
        v[..n].copy_from_slice(&x[..n]);
        r[..n].copy_from_slice(&x[n..2 * n]);
        let lanes = if N > 1 && self.law_in_lanes { bristle_rates(&self.friction, normal_force_n, &v, &r) } else { None };
        if let Some((rate, d_rate_d_velocity, d_rate_d_deflection)) = lanes {
            for m in 0..n {
                states[m] = self.point_state_at_rate(normal_force_n, k, m, v[m], r[m], (rate[m], d_rate_d_velocity[m], d_rate_d_deflection[m]));
            }
        } else {
            for m in 0..n {
                states[m] = self.point_state(normal_force_n, k, m, x[m], x[n + m]);
            }
        }
        let c = &system.mobility_s_per_kg;
        // `C F`, a column at a time so that the points' sums run side by side: `C` is
        // symmetric to the bit (see `ContactSystem`), so its row `j` is its column `j`, and
        // each point's sum adds the same terms in the same order as a row's dot product.
        let mut coupled = [0.0; MAX_CONTACT_POINTS];
        for j in 0..n {
            let force_n = states[j].force_n;
            for m in 0..n {
                coupled[m] += c[j][m] * force_n;
            }
        }
        let mut residual = [0.0; MAX_UNKNOWNS];
        for m in 0..n {
            residual[m] = x[m] - system.free_velocity_mps[m] + coupled[m];
            residual[n + m] = states[m].residual_rate_mps;
        }
        let merit = residual[..2 * n].iter().map(|r| r * r).sum();
        Evaluation { residual, merit, states }
    }

    /// The Newton step `J^-1 R` at an evaluation. The Jacobian has the block form
    /// `[I + C diag(dF/dv), C diag(dF/dr); -diag(g_v), diag(2/k - g_r)]`, and `g_r <= 0`, so
    /// the lower right block is diagonal and at least `2/k`: eliminating `dr` leaves the
    /// `M x M` system `(I + C diag(e)) dv = R1 - C diag(dF/dr / d) R2`, `d = 2/k - g_r`,
    /// `e = dF/dv + dF/dr g_v / d` (the force's slope along the bristle's constraint), and
    /// `dr = (R2 + g_v dv) / d`. The same step as the full `2M x 2M` solve, for an eighth
    /// of the work.
    #[inline(always)]
    fn newton_step<const N: usize>(&self, system: &ContactSystem, k: f64, evaluation: &Evaluation) -> Option<Unknowns> {
        debug_assert_eq!(system.points, N);
        let n = N;
        let c = &system.mobility_s_per_kg;
        let states = &evaluation.states;
        let residual = &evaluation.residual;
        let mut diagonal = [0.0; MAX_CONTACT_POINTS];
        let mut slope = [0.0; MAX_CONTACT_POINTS];
        let mut weighted_rate = [0.0; MAX_CONTACT_POINTS];
        for j in 0..n {
            let state = &states[j];
            diagonal[j] = 2.0 / k - state.d_rate_d_deflection;
            slope[j] = state.d_force_d_velocity + state.d_force_d_deflection * state.d_rate_d_velocity / diagonal[j];
            weighted_rate[j] = state.d_force_d_deflection * residual[n + j] / diagonal[j];
        }
        let mut matrix = [[0.0; N]; N];
        let mut coupled = [0.0; MAX_CONTACT_POINTS];
        for j in 0..n {
            // A column at a time, as in `evaluate`.
            for m in 0..n {
                coupled[m] += c[j][m] * weighted_rate[j];
            }
        }
        let mut rhs = [0.0; N];
        for m in 0..n {
            for j in 0..n {
                matrix[m][j] = c[m][j] * slope[j];
            }
            matrix[m][m] += 1.0;
            rhs[m] = residual[m] - coupled[m];
        }
        if !solve_dense_in_place(&mut matrix, &mut rhs, n) {
            return None;
        }
        let mut step = [0.0; MAX_UNKNOWNS];
        for j in 0..n {
            step[j] = rhs[j];
            step[n + j] = (residual[n + j] + states[j].d_rate_d_velocity * rhs[j]) / diagonal[j];
        }
        step[..2 * n].iter().all(|x| x.is_finite()).then_some(step)
    }

    /// Where Newton starts this sample: the last sample's velocities as they stood, each
    /// bristle carried on at its last rate, `r = z^{n-1/2} + (k/2) delta_t z^{n-1}`.
    ///
    /// Starting instead from the velocities the linear part gives under the forces there
    /// (`v = a - C F(v^{n-1}, r)`, as the point bow's contact starts) took eight ribbon
    /// voices from 2.86 Newton steps a sample to 2.46, but it did not always end where
    /// this start does: on the lossless string with the tolerances at 1e-13
    /// (`tests/hifi_bow.rs`), Newton from the two starts on the same state ended 0.38 to
    /// 1.04 m/s apart in 11 samples of 88,200, one converging where the other left the
    /// sample to the fallback, and that string's second then ended with the torsion, not
    /// the string, holding most of the energy. The last velocities keep the contact on
    /// the branch it was on (`docs/performance.md`).
    #[inline(always)]
    fn warm_start<const N: usize>(&self, k: f64) -> Unknowns {
        let n = N;
        let mut x = [0.0; MAX_UNKNOWNS];
        for m in 0..n {
            let v = self.last_velocity_mps[m];
            let rate = self.last_rate_mps[m];
            x[m] = if v.is_finite() { v } else { 0.0 };
            x[n + m] = self.z_half[m] + if rate.is_finite() { 0.5 * k * rate } else { 0.0 };
        }
        x
    }

    /// Whether a Newton step `dx` is below the step tolerance.
    #[inline(always)]
    fn step_is_small<const N: usize>(&self, k: f64, x: &Unknowns, dx: &Unknowns) -> bool {
        let n = N;
        let tol_v = self.step_tolerance_mps;
        let tol_r = 0.5 * k * self.step_tolerance_mps;
        (0..n).all(|m| dx[m].abs() <= tol_v + 1e-14 * x[m].abs() && dx[n + m].abs() <= tol_r + 1e-14 * x[n + m].abs())
    }

    /// Damped Newton from `x`. Returns whether it converged and the steps taken; `x` is
    /// left at the best point reached.
    #[inline(always)]
    fn newton<const N: usize>(&self, system: &ContactSystem, normal_force_n: f64, k: f64, x: &mut Unknowns, cap: usize, budget: &mut usize) -> (bool, usize) {
        debug_assert_eq!(system.points, N);
        let n = N;
        if *budget < n {
            return (false, 0);
        }
        *budget -= n;
        let mut evaluation = self.evaluate::<N>(system, normal_force_n, k, x);
        for iteration in 1..=cap {
            if !evaluation.merit.is_finite() {
                return (false, iteration);
            }
            if evaluation.merit == 0.0 {
                return (true, iteration);
            }
            let Some(step) = self.newton_step::<N>(system, k, &evaluation) else {
                return (false, iteration);
            };
            if self.step_is_small::<N>(k, x, &step) {
                for i in 0..2 * n {
                    x[i] -= step[i];
                }
                return (true, iteration);
            }
            let mut scale = 1.0;
            let mut accepted = false;
            let mut trial = *x;
            for _ in 0..MAX_STEP_HALVINGS {
                if *budget < n {
                    return (false, iteration);
                }
                *budget -= n;
                for i in 0..2 * n {
                    trial[i] = x[i] - scale * step[i];
                }
                let trial_evaluation = self.evaluate::<N>(system, normal_force_n, k, &trial);
                if trial_evaluation.merit < evaluation.merit {
                    evaluation = trial_evaluation;
                    accepted = true;
                    break;
                }
                scale *= 0.5;
            }
            if !accepted {
                // No descent along the Newton direction: either rounding already hides any
                // further progress, or Newton has stalled on a corner.
                return (evaluation.merit <= (self.tolerance_mps * self.tolerance_mps) * n as f64, iteration);
            }
            *x = trial;
        }
        (false, cap)
    }

    /// Point `m` alone, `v = A - B F`, as the single contact of
    /// [`crate::friction::refined`] poses it.
    #[inline]
    fn scalar_problem(&self, normal_force_n: f64, k: f64, a: f64, b: f64) -> RefinedProblem<'_> {
        RefinedProblem { friction: &self.friction, damping_law: BristleDamping::Refined, normal_force_n, free_velocity_mps: a, mobility_s_per_kg: b, time_step_s: k }
    }

    /// `mu_t z` of point `m` for a trial `v` when `v = A - B F(v, mu_t z)`.
    #[inline]
    fn deflection_for(&self, normal_force_n: f64, k: f64, m: usize, a: f64, b: f64, v: f64) -> f64 {
        RefinedBristle::from_state(self.z_half[m], v, self.tolerance_mps).deflection_at(&self.scalar_problem(normal_force_n, k, a, b), v)
    }

    /// Solves point `m`'s `G(v) = 0` from `start` with the single contact's safeguarded
    /// Newton and bisection.
    fn solve_scalar(&self, normal_force_n: f64, k: f64, m: usize, a: f64, b: f64, start: f64, max_evaluations: usize) -> (f64, usize) {
        let bristle = RefinedBristle::from_state(self.z_half[m], start, self.tolerance_mps);
        let search = bristle.find_root_within(&self.scalar_problem(normal_force_n, k, a, b), max_evaluations);
        (search.velocity_mps, search.evaluations)
    }

    /// Gauss-Seidel over the points from `x`: each solves its scalar problem against the
    /// others' current forces. Returns the sweeps taken.
    fn gauss_seidel(&self, system: &ContactSystem, normal_force_n: f64, k: f64, x: &mut Unknowns, budget: &mut usize) -> usize {
        let n = system.points;
        let c = &system.mobility_s_per_kg;
        let mut forces = [0.0; MAX_CONTACT_POINTS];
        for m in 0..n {
            let f = self.bristle_force(normal_force_n, k, m, x[m], x[n + m]).0;
            forces[m] = if f.is_finite() { f } else { 0.0 };
        }
        for sweep in 1..=MAX_SWEEPS {
            let mut largest_change: f64 = 0.0;
            for m in 0..n {
                if *budget < 8 {
                    return sweep;
                }
                let others: f64 = (0..n).filter(|&j| j != m).map(|j| c[m][j] * forces[j]).sum();
                let a = system.free_velocity_mps[m] - others;
                let b = c[m][m];
                let start = if x[m].is_finite() { x[m] } else { a };
                let (v, used) = self.solve_scalar(normal_force_n, k, m, a, b, start, SCALAR_SOLVE_EVALUATIONS.min(*budget - 2));
                *budget -= (used + 2).min(*budget);
                let r = self.deflection_for(normal_force_n, k, m, a, b, v);
                largest_change = largest_change.max((v - x[m]).abs());
                x[m] = v;
                x[n + m] = r;
                forces[m] = self.bristle_force(normal_force_n, k, m, v, r).0;
            }
            if !largest_change.is_finite() {
                return sweep;
            }
            if largest_change <= self.tolerance_mps {
                return sweep;
            }
        }
        MAX_SWEEPS
    }

    /// Whether `solution` loses energy in the bristles, `sum F v - s0 mu_t z delta_t z >= 0`,
    /// with `v` the relative velocity the solution realises through the linear part
    /// (`v = a - C F`), to rounding.
    fn is_passive(&self, system: &ContactSystem, solution: &ContactSolution) -> bool {
        let n = system.points;
        let s0 = self.friction.bristle_stiffness_n_per_m;
        let (mut loss, mut scale) = (0.0, 0.0);
        for m in 0..n {
            let mut coupled = 0.0;
            for j in 0..n {
                coupled += system.mobility_s_per_kg[m][j] * solution.force_n[j];
            }
            let realised = system.free_velocity_mps[m] - coupled;
            let power = solution.force_n[m] * realised;
            let stored = s0 * solution.deflection_m[m] * solution.deflection_rate_mps[m];
            loss += power - stored;
            scale += power.abs() + stored.abs();
        }
        loss >= -1e-9 * scale
    }

    /// Lifts the bow: no force, and the bristles relax.
    fn lift(&mut self, system: &ContactSystem) -> ContactSolution {
        let released_energy_j = self.energy_j();
        self.z_half = [0.0; MAX_CONTACT_POINTS];
        self.last_rate_mps = [0.0; MAX_CONTACT_POINTS];
        for m in 0..self.points {
            let a = system.free_velocity_mps[m];
            self.last_velocity_mps[m] = if a.is_finite() { a } else { 0.0 };
        }
        ContactSolution { velocity_mps: self.last_velocity_mps, lifted: true, released_energy_j, ..ContactSolution::default() }
    }

    /// Solves one sample with `normal_force_n` pressing at each point, and commits the new
    /// bristle state.
    pub fn solve(&mut self, system: &ContactSystem, normal_force_n: f64, time_step_s: f64) -> ContactSolution {
        debug_assert_eq!(system.points, self.points);
        solve_fastest(self, system, normal_force_n, time_step_s)
    }

    /// [`Self::solve`] for two bows at once (two voices' ribbons): each gets the bits it
    /// gets alone. Where the CPU has AVX2 and both bows have four points, their Newtons
    /// run in step with their laws evaluated together, two chains the core overlaps.
    pub fn solve_pair(a: (&mut Self, &ContactSystem, f64, f64), b: (&mut Self, &ContactSystem, f64, f64)) -> (ContactSolution, ContactSolution) {
        debug_assert!(a.1.points == a.0.points && b.1.points == b.0.points);
        solve_pair_fastest(a, b)
    }

    /// One solver for each number of points, so that every loop over them has a length the
    /// compiler knows: it unrolls them and drops their bounds checks (the same operations in
    /// the same order, so the same bits).
    ///
    /// `AVX2` is true only where the CPU has AVX2 ([`solve_fastest`]'s builds for it): there
    /// four points' Newton runs in the lanes of one register ([`avx2::newton`]).
    #[inline(always)]
    fn solve_any<const AVX2: bool>(&mut self, system: &ContactSystem, normal_force_n: f64, time_step_s: f64) -> ContactSolution {
        match self.points {
            1 => self.solve_points::<1, AVX2>(system, normal_force_n, time_step_s),
            2 => self.solve_points::<2, AVX2>(system, normal_force_n, time_step_s),
            3 => self.solve_points::<3, AVX2>(system, normal_force_n, time_step_s),
            _ => self.solve_points::<MAX_CONTACT_POINTS, AVX2>(system, normal_force_n, time_step_s),
        }
    }

    /// The coupled Newton of [`Self::solve_points`]: in lanes for four points where the CPU
    /// has AVX2 and the law is evaluated in lanes, else [`Self::newton`]. The same bits
    /// either way (`the_law_in_lanes_gives_the_same_bits`).
    #[inline(always)]
    fn newton_fastest<const N: usize, const AVX2: bool>(&self, system: &ContactSystem, normal_force_n: f64, k: f64, x: &mut Unknowns, cap: usize, budget: &mut usize) -> (bool, usize) {
        #[cfg(target_arch = "x86_64")]
        if AVX2 && N == 4 && self.law_in_lanes {
            // SAFETY: `AVX2` is true only in `solve_fastest`'s builds for CPUs with AVX2.
            return unsafe { avx2::newton(&mut avx2::Job { contact: self, system, normal_force_n, k, x, cap, budget }) };
        }
        self.newton::<N>(system, normal_force_n, k, x, cap, budget)
    }

    #[inline(always)]
    fn solve_points<const N: usize, const AVX2: bool>(&mut self, system: &ContactSystem, normal_force_n: f64, time_step_s: f64) -> ContactSolution {
        let k = time_step_s;
        let Some(mut x) = self.start::<N>(system, normal_force_n, k) else {
            return self.lift(system);
        };
        let cap = self.newton_cap();
        let mut budget = MAX_EVALUATIONS_PER_POINT * N;
        let (converged, iterations) = self.newton_fastest::<N, AVX2>(system, normal_force_n, k, &mut x, cap, &mut budget);
        self.finish::<N>(system, normal_force_n, k, x, (converged, iterations), budget)
    }

    /// The coupled Newton's cap.
    #[inline(always)]
    fn newton_cap(&self) -> usize {
        self.max_newton_steps.clamp(1, MAX_NEWTON_STEPS)
    }

    /// Newton's start, or `None` where the bow lifts (no force, or input not finite).
    #[inline(always)]
    fn start<const N: usize>(&self, system: &ContactSystem, normal_force_n: f64, k: f64) -> Option<Unknowns> {
        let n = N;
        let finite_input = system.free_velocity_mps[..n].iter().all(|a| a.is_finite());
        if !(normal_force_n >= MIN_NORMAL_FORCE_N) || !normal_force_n.is_finite() || !finite_input {
            return None;
        }
        debug_assert!((0..n).all(|m| (0..n).all(|j| system.mobility_s_per_kg[m][j].to_bits() == system.mobility_s_per_kg[j][m].to_bits())), "C is symmetric to the bit");
        Some(self.warm_start::<N>(k))
    }

    /// The rest of a sample after the coupled Newton: its fallback where it did not
    /// converge, the answer's forces, and the bristles' state committed.
    #[inline(always)]
    fn finish<const N: usize>(&mut self, system: &ContactSystem, normal_force_n: f64, k: f64, mut x: Unknowns, (converged, iterations): (bool, usize), budget: usize) -> ContactSolution {
        let n = N;
        let fell_back = !converged;
        // Friction-law evaluations at single points this sample (an `evaluate` is `n`).
        let mut evaluations = MAX_EVALUATIONS_PER_POINT * n - budget;
        if fell_back {
            self.stats.fallbacks += 1;
            self.stats.record(MAX_NEWTON_STEPS);
            let newton_best = x;
            let newton_merit = self.evaluate::<N>(system, normal_force_n, k, &x).merit;
            // The sweeps and the polish each have a budget of their own: the sweeps bring x
            // near the root, the polish converges there quadratically.
            let mut sweeps = FALLBACK_EVALUATIONS_PER_POINT * n;
            self.gauss_seidel(system, normal_force_n, k, &mut x, &mut sweeps);
            let mut polish = POLISH_EVALUATIONS_PER_POINT * n;
            self.newton::<N>(system, normal_force_n, k, &mut x, MAX_POLISH_STEPS, &mut polish);
            let merit = self.evaluate::<N>(system, normal_force_n, k, &x).merit;
            // And the two merits.
            evaluations += FALLBACK_EVALUATIONS_PER_POINT * n - sweeps + POLISH_EVALUATIONS_PER_POINT * n - polish + 2 * n;
            if !(merit <= newton_merit) && newton_merit.is_finite() {
                x = newton_best;
            }
        } else {
            self.stats.record(iterations);
        }

        self.stats.max_evaluations = self.stats.max_evaluations.max(evaluations);
        let mut solution = ContactSolution { iterations: if fell_back { MAX_NEWTON_STEPS } else { iterations }, fell_back, ..ContactSolution::default() };
        for m in 0..n {
            let (force_n, rate_mps, _, _) = self.bristle_force(normal_force_n, k, m, x[m], x[n + m]);
            solution.velocity_mps[m] = x[m];
            solution.deflection_m[m] = x[n + m];
            solution.deflection_rate_mps[m] = rate_mps;
            solution.force_n[m] = force_n;
        }
        let finite = (0..n).all(|m| solution.force_n[m].is_finite() && solution.deflection_m[m].is_finite() && solution.velocity_mps[m].is_finite());
        if !finite {
            return self.lift(system);
        }
        // A fallback that ran out of budget short of the root must still not make energy:
        // its bristles must lose what the realised motion says (`Q_b >= 0`, the passive
        // scheme's guarantee at the root). If not, the bow lifts for this sample, which is
        // passive (the bristles' energy is let go as a loss).
        if fell_back && !self.is_passive(system, &solution) {
            self.passivity_lifts += 1;
            return self.lift(system);
        }
        for m in 0..n {
            self.z_half[m] = 2.0 * solution.deflection_m[m] - self.z_half[m];
            self.last_velocity_mps[m] = solution.velocity_mps[m];
            self.last_rate_mps[m] = solution.deflection_rate_mps[m];
        }
        solution
    }
}

/// [`BristleContact::solve`] compiled for AVX-512 and AVX2 as well as the baseline and
/// chosen once at run time by the CPU (`multiversion`): the same operations (no fused
/// multiply-add), in wider registers where the compiler finds them side by side.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn solve_fastest(contact: &mut BristleContact, system: &ContactSystem, normal_force_n: f64, time_step_s: f64) -> ContactSolution {
    multiversion::target::match_target! {
        "x86_64+avx2" => contact.solve_any::<true>(system, normal_force_n, time_step_s),
        _ => contact.solve_any::<false>(system, normal_force_n, time_step_s),
    }
}

/// Two bows' samples solved together ([`BristleContact::solve_pair`]) on this CPU.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn solve_pair_fastest(a: (&mut BristleContact, &ContactSystem, f64, f64), b: (&mut BristleContact, &ContactSystem, f64, f64)) -> (ContactSolution, ContactSolution) {
    multiversion::target::match_target! {
        "x86_64+avx2" => solve_pair_any::<true>(a, b),
        _ => solve_pair_any::<false>(a, b),
    }
}

/// [`solve_pair_fastest`] for each CPU: the two Newtons in step where the CPU has AVX2 and
/// both bows have four points, their laws in lanes, and both are on the string; else each
/// sample solved alone.
#[inline(always)]
fn solve_pair_any<const AVX2: bool>((a, system_a, force_a, k_a): (&mut BristleContact, &ContactSystem, f64, f64), (b, system_b, force_b, k_b): (&mut BristleContact, &ContactSystem, f64, f64)) -> (ContactSolution, ContactSolution) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 && a.points == MAX_CONTACT_POINTS && b.points == MAX_CONTACT_POINTS && a.law_in_lanes && b.law_in_lanes {
        const N: usize = MAX_CONTACT_POINTS;
        if let (Some(mut x_a), Some(mut x_b)) = (a.start::<N>(system_a, force_a, k_a), b.start::<N>(system_b, force_b, k_b)) {
            let (mut budget_a, mut budget_b) = (MAX_EVALUATIONS_PER_POINT * N, MAX_EVALUATIONS_PER_POINT * N);
            let mut job_a = avx2::Job { contact: a, system: system_a, normal_force_n: force_a, k: k_a, x: &mut x_a, cap: a.newton_cap(), budget: &mut budget_a };
            let mut job_b = avx2::Job { contact: b, system: system_b, normal_force_n: force_b, k: k_b, x: &mut x_b, cap: b.newton_cap(), budget: &mut budget_b };
            // SAFETY: `AVX2` is true only in `solve_pair_fastest`'s builds for CPUs with AVX2.
            let (answer_a, answer_b) = unsafe { avx2::newton_pair(&mut job_a, &mut job_b) };
            return (a.finish::<N>(system_a, force_a, k_a, x_a, answer_a, budget_a), b.finish::<N>(system_b, force_b, k_b, x_b, answer_b, budget_b));
        }
    }
    (a.solve_any::<AVX2>(system_a, force_a, k_a), b.solve_any::<AVX2>(system_b, force_b, k_b))
}

/// Four points' coupled Newton ([`BristleContact::newton`] with `N = 4`) in the four f64
/// lanes of one AVX2 register, a point a lane: the evaluations (the law, the bristles'
/// damping and forces, `C F` and the residual), the step (its reduced `4 x 4` system and
/// the dense solve with partial pivoting, `solve_dense_in_place`) and the step's test.
/// Each lane performs the scalar code's operations on its point in the same order, with no
/// fused multiply-add; where the scalar code goes through the points in turn (the merit's
/// sum, the pivot's search, the back substitution), so does this. So every answer,
/// iteration count and budget is the scalar Newton's to the bit: a unit test compares them
/// sample after sample (`the_law_in_lanes_gives_the_same_bits`,
/// `the_newton_in_lanes_gives_the_same_bits_on_hard_systems`).
///
/// Two bows' Newtons also run in step ([`newton_pair`], for two voices' ribbons): one
/// bow's Newton is a chain of dependent operations longer than the core can look ahead, so
/// each stage of the one is placed beside the same stage of the other (the laws in two
/// registers, the two systems' eliminations column by column, their back substitutions row
/// by row), and the core works on both chains at once. Each bow still gets its own bits
/// (`two_bows_solved_together_get_the_bits_of_each_solved_alone`).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{BristleContact, ContactSystem, Unknowns, MAX_STEP_HALVINGS};
    use crate::friction::dupont_lanes::avx2::{bristle_rates, bristle_rates_pair};

    const N: usize = 4;

    /// What [`super::Evaluation`] holds, a point a lane.
    #[derive(Clone, Copy)]
    struct Evaluation {
        residual_velocity: __m256d,
        residual_rate: __m256d,
        merit: f64,
        d_force_d_velocity: __m256d,
        d_force_d_deflection: __m256d,
        d_rate_d_velocity: __m256d,
        d_rate_d_deflection: __m256d,
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(x: &[f64; N]) -> __m256d {
        // SAFETY: `x` holds four f64; the load is unaligned.
        unsafe { _mm256_loadu_pd(x.as_ptr()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(x: __m256d) -> [f64; N] {
        let mut out = [0.0; N];
        // SAFETY: `out` holds four f64; the store is unaligned.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), x) };
        out
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(x: f64) -> __m256d {
        _mm256_set1_pd(x)
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn abs(x: __m256d) -> __m256d {
        _mm256_andnot_pd(_mm256_set1_pd(-0.0), x)
    }

    /// Lane `lane` of `x` in every lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn broadcast(x: __m256d, lane: usize) -> __m256d {
        match lane {
            0 => _mm256_permute4x64_pd::<0x00>(x),
            1 => _mm256_permute4x64_pd::<0x55>(x),
            2 => _mm256_permute4x64_pd::<0xAA>(x),
            _ => _mm256_permute4x64_pd::<0xFF>(x),
        }
    }

    /// Every lane whose index is above `lane`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lanes_above(lane: usize) -> __m256d {
        let mask = |l: usize| if l > lane { -1 } else { 0 };
        _mm256_castsi256_pd(_mm256_setr_epi64x(mask(0), mask(1), mask(2), mask(3)))
    }

    /// `sum_j c_j x_j`, `c_j` row `j` of `C` (its column `j`, `C` being symmetric to the
    /// bit) and `x_j` lane `j` of `x`, added from zero in the order of `j`: the scalar code's
    /// `coupled[m] += c[j][m] * x[j]`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn coupled(system: &ContactSystem, x: __m256d) -> __m256d {
        let c = &system.mobility_s_per_kg;
        let mut sum = _mm256_setzero_pd();
        for (j, row) in c.iter().enumerate() {
            sum = _mm256_add_pd(sum, _mm256_mul_pd(load(row), broadcast(x, j)));
        }
        sum
    }

    /// `BristleContact::newton_step`: the step `(dv, dr)`, or `None` (`CALLER`: see
    /// [`run`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn newton_step<const CALLER: u8>(system: &ContactSystem, k: f64, e: &Evaluation) -> Option<(__m256d, __m256d)> {
        let (mut columns, rhs, diagonal) = step_system(system, k, e);
        let dv = solve_dense::<CALLER>(&mut columns, rhs)?;
        step_rates(e, dv, diagonal)
    }

    /// [`newton_step`] for two bows, each stage of the one beside the same stage of the
    /// other, so that the core overlaps their chains: each step's bits are `newton_step`'s.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn newton_step_pair(systems: [&ContactSystem; 2], k: [f64; 2], e: [&Evaluation; 2]) -> [Option<(__m256d, __m256d)>; 2] {
        let (mut columns_a, rhs_a, diagonal_a) = step_system(systems[0], k[0], e[0]);
        let (mut columns_b, rhs_b, diagonal_b) = step_system(systems[1], k[1], e[1]);
        let [dv_a, dv_b] = solve_dense_pair(&mut columns_a, rhs_a, &mut columns_b, rhs_b);
        [dv_a.and_then(|dv| step_rates(e[0], dv, diagonal_a)), dv_b.and_then(|dv| step_rates(e[1], dv, diagonal_b))]
    }

    /// The step's reduced system: the matrix `I + C diag(slope)` by columns, its right-hand
    /// side, and the rates' diagonal.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn step_system(system: &ContactSystem, k: f64, e: &Evaluation) -> ([__m256d; N], __m256d, __m256d) {
        let diagonal = _mm256_sub_pd(splat(2.0 / k), e.d_rate_d_deflection);
        let slope = _mm256_add_pd(e.d_force_d_velocity, _mm256_div_pd(_mm256_mul_pd(e.d_force_d_deflection, e.d_rate_d_velocity), diagonal));
        let weighted_rate = _mm256_div_pd(_mm256_mul_pd(e.d_force_d_deflection, e.residual_rate), diagonal);
        let rhs = _mm256_sub_pd(e.residual_velocity, coupled(system, weighted_rate));
        // The matrix `I + C diag(slope)` by columns: column `j` is `C`'s column `j` (its row
        // `j`) times `slope_j`, with 1 added to its lane `j` alone.
        let c = &system.mobility_s_per_kg;
        let mut columns = [_mm256_setzero_pd(); N];
        for (j, column) in columns.iter_mut().enumerate() {
            let scaled = _mm256_mul_pd(load(&c[j]), broadcast(slope, j));
            let diagonal_lane = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(j as i64)));
            *column = _mm256_blendv_pd(scaled, _mm256_add_pd(scaled, splat(1.0)), diagonal_lane);
        }
        (columns, rhs, diagonal)
    }

    /// The step's rates from its velocities `dv`, and its test for finite values.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn step_rates(e: &Evaluation, dv: __m256d, diagonal: __m256d) -> Option<(__m256d, __m256d)> {
        let dr = _mm256_div_pd(_mm256_add_pd(e.residual_rate, _mm256_mul_pd(e.d_rate_d_velocity, dv)), diagonal);
        let finite = |x: __m256d| _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(abs(x), splat(f64::INFINITY))) == 0xF;
        (finite(dv) && finite(dr)).then_some((dv, dr))
    }

    /// `solve_dense_in_place` with `n = N = 4`, on the matrix by columns (lane `row` of
    /// `columns[c]` is entry `(row, c)`): the same pivots, the same operations on each entry
    /// in the same order, and the same singular and finite tests. Returns the solution.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn solve_dense<const CALLER: u8>(columns: &mut [__m256d; N], mut b: __m256d) -> Option<__m256d> {
        // A column at a time, each its own copy, so that every lane index is a constant.
        if !(eliminate::<0, CALLER>(columns, &mut b) && eliminate::<1, CALLER>(columns, &mut b) && eliminate::<2, CALLER>(columns, &mut b) && eliminate::<3, CALLER>(columns, &mut b)) {
            return None;
        }
        let a = columns.map(|column| store(column));
        let mut x = store(b);
        for row in (0..N).rev() {
            let mut sum = x[row];
            for c in row + 1..N {
                sum -= a[c][row] * x[c];
            }
            x[row] = sum / a[row][row];
        }
        x.iter().all(|x| x.is_finite()).then(|| load(&x))
    }

    /// [`solve_dense`] for two systems, a column's elimination of one beside the same
    /// column's of the other, and their back substitutions row by row together.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn solve_dense_pair(columns_a: &mut [__m256d; N], mut b_a: __m256d, columns_b: &mut [__m256d; N], mut b_b: __m256d) -> [Option<__m256d>; 2] {
        let (mut ok_a, mut ok_b) = (eliminate::<0, 10>(columns_a, &mut b_a), eliminate::<0, 11>(columns_b, &mut b_b));
        ok_a = ok_a && eliminate::<1, 10>(columns_a, &mut b_a);
        ok_b = ok_b && eliminate::<1, 11>(columns_b, &mut b_b);
        ok_a = ok_a && eliminate::<2, 10>(columns_a, &mut b_a);
        ok_b = ok_b && eliminate::<2, 11>(columns_b, &mut b_b);
        ok_a = ok_a && eliminate::<3, 10>(columns_a, &mut b_a);
        ok_b = ok_b && eliminate::<3, 11>(columns_b, &mut b_b);
        // Both back substitutions whatever their verdicts (one of a singular system is
        // only discarded).
        let (a_a, a_b) = (columns_a.map(|column| store(column)), columns_b.map(|column| store(column)));
        let (mut x_a, mut x_b) = (store(b_a), store(b_b));
        for row in (0..N).rev() {
            let (mut sum_a, mut sum_b) = (x_a[row], x_b[row]);
            for c in row + 1..N {
                sum_a -= a_a[c][row] * x_a[c];
                sum_b -= a_b[c][row] * x_b[c];
            }
            x_a[row] = sum_a / a_a[row][row];
            x_b[row] = sum_b / a_b[row][row];
        }
        let answer = |ok: bool, x: [f64; N]| (ok && x.iter().all(|x| x.is_finite())).then(|| load(&x));
        [answer(ok_a, x_a), answer(ok_b, x_b)]
    }

    /// Column `COL` of [`solve_dense`]'s elimination: the pivot chosen and swapped in, and
    /// the rows below it eliminated. False where the pivot is negligible (singular).
    /// `CALLER` gives each call its own copy, inlined there.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn eliminate<const COL: usize, const CALLER: u8>(columns: &mut [__m256d; N], b: &mut __m256d) -> bool {
        let column = store(abs(columns[COL]));
        let mut pivot_row = COL;
        let mut pivot_abs = column[COL];
        for (row, &x) in column.iter().enumerate().skip(COL + 1) {
            if x > pivot_abs {
                pivot_abs = x;
                pivot_row = row;
            }
        }
        // Every row's largest entry, `f64::max` from zero over its columns in turn
        // (`vmaxpd` returns its second operand, the running maximum, on NaN).
        let mut row_scale = _mm256_setzero_pd();
        for column in columns.iter() {
            row_scale = _mm256_max_pd(abs(*column), row_scale);
        }
        // The scalar test, `!(pivot_abs > 1e-300) || pivot_abs <= 1e-14 * row_scale`, made
        // in every lane and read at the pivot's: no store and reload on the way.
        let magnitude = abs(columns[COL]);
        let tiny = _mm256_cmp_pd::<_CMP_NGT_UQ>(magnitude, splat(1e-300));
        let negligible = _mm256_cmp_pd::<_CMP_LE_OQ>(magnitude, _mm256_mul_pd(splat(1e-14), row_scale));
        if _mm256_movemask_pd(_mm256_or_pd(tiny, negligible)) & (1 << pivot_row) != 0 {
            return false;
        }
        if pivot_row != COL {
            // Rows `pivot_row` and `COL` swapped: their lanes, in every column and in b.
            let mut order = [0, 1, 2, 3];
            order.swap(pivot_row, COL);
            let words = _mm256_setr_epi32(2 * order[0], 2 * order[0] + 1, 2 * order[1], 2 * order[1] + 1, 2 * order[2], 2 * order[2] + 1, 2 * order[3], 2 * order[3] + 1);
            let swap = |x: __m256d| _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(x), words));
            for column in columns.iter_mut() {
                *column = swap(*column);
            }
            *b = swap(*b);
        }
        let inverse = 1.0 / store(columns[COL])[COL];
        let factor = _mm256_mul_pd(columns[COL], splat(inverse));
        // The rows below the pivot whose factor is not zero (`!=` is true on NaN).
        let update = _mm256_and_pd(lanes_above(COL), _mm256_cmp_pd::<_CMP_NEQ_UQ>(factor, _mm256_setzero_pd()));
        for column in columns.iter_mut().skip(COL + 1) {
            let eliminated = _mm256_sub_pd(*column, _mm256_mul_pd(factor, broadcast(*column, COL)));
            *column = _mm256_blendv_pd(*column, eliminated, update);
        }
        *b = _mm256_blendv_pd(*b, _mm256_sub_pd(*b, _mm256_mul_pd(factor, broadcast(*b, COL))), update);
        true
    }

    /// One bow's Newton: its problem, where its answer goes, its cap and its budget.
    pub(super) struct Job<'a> {
        pub contact: &'a BristleContact,
        pub system: &'a ContactSystem,
        pub normal_force_n: f64,
        pub k: f64,
        pub x: &'a mut Unknowns,
        pub cap: usize,
        pub budget: &'a mut usize,
    }

    /// Where a Newton stands: its point and the evaluation there.
    #[derive(Clone, Copy)]
    struct Flight {
        v: __m256d,
        r: __m256d,
        evaluation: Evaluation,
    }

    /// A Newton's answer: whether it converged and the steps taken.
    type Answer = (bool, usize);

    /// A step waiting for its line search: `(dv, dr)`, the scale to try first and the
    /// halvings already spent on it.
    type Pending = (__m256d, __m256d, f64, usize);

    #[inline]
    #[target_feature(enable = "avx2")]
    fn write(x: &mut Unknowns, v: __m256d, r: __m256d) {
        x[..N].copy_from_slice(&store(v));
        x[N..].copy_from_slice(&store(r));
    }

    /// `evaluate`'s rest, from the law's rates at `(v, r)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn evaluate_with(job: &Job, v: __m256d, r: __m256d, (rate, d_rate_d_velocity, d_rate_d_deflection): (__m256d, __m256d, __m256d)) -> Evaluation {
        let (contact, system, normal_force_n, k) = (job.contact, job.system, job.normal_force_n, job.k);
        let p = &contact.friction;
        // `refined_bristle_damping`, then `point_state_at_rate`.
        let coulomb_force_n = p.coulomb_coefficient * normal_force_n;
        let eps = coulomb_force_n / p.bristle_damping_kg_per_s;
        let r2 = _mm256_add_pd(_mm256_mul_pd(v, v), splat(eps * eps));
        let root = _mm256_sqrt_pd(r2);
        let s1 = _mm256_div_pd(splat(coulomb_force_n), root);
        let ds1 = _mm256_div_pd(_mm256_mul_pd(splat(-coulomb_force_n), v), _mm256_mul_pd(r2, root));
        let s0 = splat(p.bristle_stiffness_n_per_m);
        let k = splat(k);
        let delta_z = _mm256_div_pd(_mm256_mul_pd(splat(2.0), _mm256_sub_pd(r, load(&contact.z_half))), k);
        let force = _mm256_add_pd(_mm256_mul_pd(s0, r), _mm256_mul_pd(s1, delta_z));
        let residual_velocity = _mm256_add_pd(_mm256_sub_pd(v, load(&system.free_velocity_mps)), coupled(system, force));
        let residual_rate = _mm256_sub_pd(delta_z, rate);
        // The merit's sum in the scalar code's order: the velocities', then the rates'.
        let (a, b) = (store(_mm256_mul_pd(residual_velocity, residual_velocity)), store(_mm256_mul_pd(residual_rate, residual_rate)));
        let merit = a[0] + a[1] + a[2] + a[3] + b[0] + b[1] + b[2] + b[3];
        Evaluation {
            residual_velocity,
            residual_rate,
            merit,
            d_force_d_velocity: _mm256_mul_pd(ds1, delta_z),
            d_force_d_deflection: _mm256_add_pd(s0, _mm256_div_pd(_mm256_mul_pd(splat(2.0), s1), k)),
            d_rate_d_velocity,
            d_rate_d_deflection,
        }
    }

    /// `BristleContact::evaluate` at `(v, r)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn evaluate(job: &Job, v: __m256d, r: __m256d) -> Evaluation {
        let (rate, d_velocity, d_deflection) = bristle_rates(&job.contact.friction, job.normal_force_n, &store(v), &store(r));
        evaluate_with(job, v, r, (load(&rate), load(&d_velocity), load(&d_deflection)))
    }

    /// [`evaluate`] for two bows, their laws in two registers together
    /// (`bristle_rates_pair`): each evaluation's bits are `evaluate`'s.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn evaluate_pair(jobs: [&Job; 2], v: [__m256d; 2], r: [__m256d; 2]) -> [Evaluation; 2] {
        let laws = [(&jobs[0].contact.friction, jobs[0].normal_force_n), (&jobs[1].contact.friction, jobs[1].normal_force_n)];
        let [rates_a, rates_b] = bristle_rates_pair(laws, v, r);
        [evaluate_with(jobs[0], v[0], r[0], rates_a), evaluate_with(jobs[1], v[1], r[1], rates_b)]
    }

    /// An iteration's opening: the merit's tests, the Newton step and its size. The step,
    /// or the answer (written to the job's `x`) where the Newton ends here.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn opening<const CALLER: u8>(job: &mut Job, flight: &Flight, iteration: usize) -> Result<(__m256d, __m256d), Answer> {
        if let Some(answer) = merit_ends(job, flight, iteration) {
            return Err(answer);
        }
        let step = newton_step::<CALLER>(job.system, job.k, &flight.evaluation);
        step_ends(job, flight, step, iteration)
    }

    /// The merit's tests that end a Newton before its step: the answer (written to `x`).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn merit_ends(job: &mut Job, flight: &Flight, iteration: usize) -> Option<Answer> {
        let Flight { v, r, evaluation } = *flight;
        if !evaluation.merit.is_finite() {
            write(job.x, v, r);
            return Some((false, iteration));
        }
        if evaluation.merit == 0.0 {
            write(job.x, v, r);
            return Some((true, iteration));
        }
        None
    }

    /// The step's tests: the step to search along, or the answer (written to `x`) where
    /// there is none or it is small (then taken).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn step_ends(job: &mut Job, flight: &Flight, step: Option<(__m256d, __m256d)>, iteration: usize) -> Result<(__m256d, __m256d), Answer> {
        let Flight { v, r, .. } = *flight;
        let Some((dv, dr)) = step else {
            write(job.x, v, r);
            return Err((false, iteration));
        };
        // `step_is_small`.
        let tolerance_v = splat(job.contact.step_tolerance_mps);
        let tolerance_r = splat(0.5 * job.k * job.contact.step_tolerance_mps);
        let small_v = _mm256_cmp_pd::<_CMP_LE_OQ>(abs(dv), _mm256_add_pd(tolerance_v, _mm256_mul_pd(splat(1e-14), abs(v))));
        let small_r = _mm256_cmp_pd::<_CMP_LE_OQ>(abs(dr), _mm256_add_pd(tolerance_r, _mm256_mul_pd(splat(1e-14), abs(r))));
        if _mm256_movemask_pd(_mm256_and_pd(small_v, small_r)) == 0xF {
            write(job.x, _mm256_sub_pd(v, dv), _mm256_sub_pd(r, dr));
            return Err((true, iteration));
        }
        Ok((dv, dr))
    }

    /// The trial point at `scale` along the step.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn trial(flight: &Flight, dv: __m256d, dr: __m256d, scale: f64) -> (__m256d, __m256d) {
        let s = splat(scale);
        (_mm256_sub_pd(flight.v, _mm256_mul_pd(s, dv)), _mm256_sub_pd(flight.r, _mm256_mul_pd(s, dr)))
    }

    /// The line search along `(dv, dr)` from `scale`, `tried` halvings spent: the point it
    /// accepts, or the answer (written to `x`) where the Newton ends here.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn line_search<const CALLER: u8>(job: &mut Job, flight: &Flight, (dv, dr, mut scale, tried): Pending, iteration: usize) -> Result<Flight, Answer> {
        for _ in tried..MAX_STEP_HALVINGS {
            if *job.budget < N {
                write(job.x, flight.v, flight.r);
                return Err((false, iteration));
            }
            *job.budget -= N;
            let (v, r) = trial(flight, dv, dr, scale);
            let evaluation = evaluate(job, v, r);
            if evaluation.merit < flight.evaluation.merit {
                return Ok(Flight { v, r, evaluation });
            }
            scale *= 0.5;
        }
        // No descent along the Newton direction (see `BristleContact::newton`).
        write(job.x, flight.v, flight.r);
        let tolerance = job.contact.tolerance_mps;
        Err((flight.evaluation.merit <= (tolerance * tolerance) * N as f64, iteration))
    }

    /// The Newton from `flight` at step `from`, the first step's line search `pending`
    /// where its opening is done. `CALLER` gives the one-bow Newton (0) and the pair's
    /// bows going on alone (1) copies of their own of this and of the steps it takes
    /// (`opening`, `line_search`, `newton_step`, `solve_dense`), each inlined there.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn run<const CALLER: u8>(job: &mut Job, mut flight: Flight, from: usize, mut pending: Option<Pending>) -> Answer {
        for iteration in from..=job.cap {
            let pending = match pending.take() {
                Some(pending) => pending,
                None => match opening::<CALLER>(job, &flight, iteration) {
                    Ok((dv, dr)) => (dv, dr, 1.0, 0),
                    Err(answer) => return answer,
                },
            };
            match line_search::<CALLER>(job, &flight, pending, iteration) {
                Ok(next) => flight = next,
                Err(answer) => return answer,
            }
        }
        write(job.x, flight.v, flight.r);
        (false, job.cap)
    }

    /// The point `job`'s Newton starts from, `(v, r)` from its `x`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn start(job: &Job) -> (__m256d, __m256d) {
        (load(job.x[..N].try_into().expect("four")), load(job.x[N..].try_into().expect("four")))
    }

    /// `BristleContact::newton` with `N = 4`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn newton(job: &mut Job) -> Answer {
        debug_assert_eq!(job.system.points, N);
        if *job.budget < N {
            return (false, 0);
        }
        *job.budget -= N;
        let (v, r) = start(job);
        let evaluation = evaluate(job, v, r);
        run::<0>(job, Flight { v, r, evaluation }, 1, None)
    }

    /// The bows of [`newton_pair`] going on alone after their whole steps were tried
    /// (`tried`), each from there where it was accepted, else from its line search's first
    /// halving. Out of line: a step is rarely halved.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    fn go_on_alone(a: &mut Job, b: &mut Job, flights: &[Flight; 2], tried: &[Flight; 2], steps: [(__m256d, __m256d); 2], iteration: usize) -> (Answer, Answer) {
        (alone_after_trial(a, &flights[0], tried[0], steps[0], iteration), alone_after_trial(b, &flights[1], tried[1], steps[1], iteration))
    }

    /// One bow of [`go_on_alone`].
    #[inline]
    #[target_feature(enable = "avx2")]
    fn alone_after_trial(job: &mut Job, flight: &Flight, tried: Flight, (dv, dr): (__m256d, __m256d), iteration: usize) -> Answer {
        if tried.evaluation.merit < flight.evaluation.merit {
            return run::<1>(job, tried, iteration + 1, None);
        }
        match line_search::<1>(job, flight, (dv, dr, 0.5, 1), iteration) {
            Ok(next) => run::<1>(job, next, iteration + 1, None),
            Err(answer) => answer,
        }
    }

    /// Two bows' Newtons ([`newton`] each) in step, their laws evaluated together while
    /// both go on ([`evaluate_pair`]); where one ends, or a step needs halving, each goes
    /// on alone from where it stands. Each answer, `x` and budget is `newton`'s to the bit.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn newton_pair(a: &mut Job, b: &mut Job) -> (Answer, Answer) {
        debug_assert!(a.system.points == N && b.system.points == N);
        if *a.budget < N || *b.budget < N || a.cap != b.cap {
            // SAFETY: the caller's AVX2.
            return unsafe { (newton(a), newton(b)) };
        }
        *a.budget -= N;
        *b.budget -= N;
        let (start_a, start_b) = (start(a), start(b));
        let [evaluation_a, evaluation_b] = evaluate_pair([a, b], [start_a.0, start_b.0], [start_a.1, start_b.1]);
        let mut flights = [Flight { v: start_a.0, r: start_a.1, evaluation: evaluation_a }, Flight { v: start_b.0, r: start_b.1, evaluation: evaluation_b }];
        for iteration in 1..=a.cap {
            match (merit_ends(a, &flights[0], iteration), merit_ends(b, &flights[1], iteration)) {
                (None, None) => {}
                (Some(answer_a), None) => return (answer_a, run::<1>(b, flights[1], iteration, None)),
                (None, Some(answer_b)) => return (run::<1>(a, flights[0], iteration, None), answer_b),
                (Some(answer_a), Some(answer_b)) => return (answer_a, answer_b),
            }
            let [step_a, step_b] = newton_step_pair([a.system, b.system], [a.k, b.k], [&flights[0].evaluation, &flights[1].evaluation]);
            let (opened_a, opened_b) = (step_ends(a, &flights[0], step_a, iteration), step_ends(b, &flights[1], step_b, iteration));
            let ((dv_a, dr_a), (dv_b, dr_b)) = match (opened_a, opened_b) {
                (Ok(step_a), Ok(step_b)) => (step_a, step_b),
                (Err(answer_a), Ok((dv, dr))) => return (answer_a, run::<1>(b, flights[1], iteration, Some((dv, dr, 1.0, 0)))),
                (Ok((dv, dr)), Err(answer_b)) => return (run::<1>(a, flights[0], iteration, Some((dv, dr, 1.0, 0))), answer_b),
                (Err(answer_a), Err(answer_b)) => return (answer_a, answer_b),
            };
            if *a.budget < N || *b.budget < N {
                return (run::<1>(a, flights[0], iteration, Some((dv_a, dr_a, 1.0, 0))), run::<1>(b, flights[1], iteration, Some((dv_b, dr_b, 1.0, 0))));
            }
            // Both take their whole step, the first trial of each line search.
            *a.budget -= N;
            *b.budget -= N;
            let (trial_a, trial_b) = (trial(&flights[0], dv_a, dr_a, 1.0), trial(&flights[1], dv_b, dr_b, 1.0));
            let [try_a, try_b] = evaluate_pair([a, b], [trial_a.0, trial_b.0], [trial_a.1, trial_b.1]);
            let tried = [Flight { v: trial_a.0, r: trial_a.1, evaluation: try_a }, Flight { v: trial_b.0, r: trial_b.1, evaluation: try_b }];
            if try_a.merit < flights[0].evaluation.merit && try_b.merit < flights[1].evaluation.merit {
                flights = tried;
                continue;
            }
            // A step to halve: each bow finishes its own line search, then its Newton, alone.
            return go_on_alone(a, b, &flights, &tried, [(dv_a, dr_a), (dv_b, dr_b)], iteration);
        }
        let cap = a.cap;
        write(a.x, flights[0].v, flights[0].r);
        write(b.x, flights[1].v, flights[1].r);
        ((false, cap), (false, cap))
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::friction::dupont::ElastoPlasticParams;
        use crate::friction::newton::solve_dense_in_place;
        use rand_xoshiro::rand_core::{RngCore, SeedableRng};
        use rand_xoshiro::Xoshiro256PlusPlus;

        /// The dense solve in lanes gives `solve_dense_in_place`'s bits, and its verdict on
        /// singular systems, alone and beside another (`solve_dense_pair`, each system with
        /// the one before), over 40,000 random matrices: rows of magnitudes from 1e-12 to
        /// 1e6 (so the pivots swap rows), exact zeros, repeated and scaled rows (singular),
        /// and infinities and NaN.
        #[test]
        fn the_dense_solve_in_lanes_gives_the_scalar_bits() {
            if !is_x86_feature_detected!("avx2") {
                return;
            }
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(29);
            let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let (mut swapped, mut singular, mut solved) = (0, 0, 0);
            let mut previous = None;
            for case in 0..40_000 {
                let mut a = [[0.0; N]; N];
                let mut b = [0.0; N];
                for row in 0..N {
                    let magnitude = 10f64.powf(-12.0 + 18.0 * unit());
                    for entry in a[row].iter_mut() {
                        *entry = if unit() < 0.1 { 0.0 } else { magnitude * (2.0 * unit() - 1.0) };
                    }
                    b[row] = 2.0 * unit() - 1.0;
                }
                match case % 10 {
                    0 => a[3] = a[1].map(|x| 2.0 * x),
                    1 => a[2][(case / 10) % N] = [f64::INFINITY, f64::NAN, -f64::INFINITY][(case / 10) % 3],
                    _ => {}
                }
                swapped += usize::from((1..N).any(|row| a[row][0].abs() > a[0][0].abs()));
                let (mut scalar_a, mut scalar_b) = (a, b);
                let scalar = solve_dense_in_place(&mut scalar_a, &mut scalar_b, N);
                let mut columns: [__m256d; N] = std::array::from_fn(|c| {
                    let column: [f64; N] = std::array::from_fn(|row| a[row][c]);
                    // SAFETY: the CPU has AVX2 (checked above).
                    unsafe { load(&column) }
                });
                let original = columns;
                // SAFETY: as above.
                let lanes = unsafe { solve_dense::<0>(&mut columns, load(&b)) };
                assert_eq!(scalar, lanes.is_some(), "case {case}: {a:?}");
                // SAFETY: as above.
                let answer = lanes.map(|x| unsafe { store(x) }.map(f64::to_bits));
                match answer {
                    Some(x) => {
                        assert_eq!(x, scalar_b.map(f64::to_bits), "case {case}: {a:?}");
                        solved += 1;
                    }
                    None => singular += 1,
                }
                // `solve_dense_pair` on this system and the last gives each its answer alone.
                if let Some((mut last_columns, last_b, last_answer)) = previous {
                    let mut these = original;
                    // SAFETY: as above.
                    let [x_last, x_this] = unsafe { solve_dense_pair(&mut last_columns, last_b, &mut these, load(&b)) };
                    // SAFETY: as above.
                    let bits = |x: Option<__m256d>| x.map(|x| unsafe { store(x) }.map(f64::to_bits));
                    assert_eq!((bits(x_last), bits(x_this)), (last_answer, answer), "case {case} in a pair: {a:?}");
                }
                // SAFETY: as above.
                previous = Some((original, unsafe { load(&b) }, answer));
            }
            assert!(swapped > 20_000 && singular > 4_000 && solved > 30_000, "{swapped} swapped, {singular} singular, {solved} solved");
        }

        /// A hard sample's linear part: `C = L L^T + d I` for a random `L` and `d` from 1e-3
        /// to 1 (from nearly diagonal to nearly singular), its upper triangle copied to the
        /// lower (symmetric to the bit), and free velocities to 5 m/s.
        fn random_system(unit: &mut dyn FnMut() -> f64, points: usize) -> ContactSystem {
            let l: [[f64; N]; N] = std::array::from_fn(|_| std::array::from_fn(|_| 0.5 * (2.0 * unit() - 1.0)));
            let spread = 10f64.powf(-3.0 + 3.0 * unit());
            let mut c = [[0.0; N]; N];
            for m in 0..N {
                for j in m..N {
                    let dot: f64 = (0..N).map(|i| l[m][i] * l[j][i]).sum();
                    c[m][j] = dot + if m == j { spread } else { 0.0 };
                    c[j][m] = c[m][j];
                }
            }
            ContactSystem { points, free_velocity_mps: std::array::from_fn(|_| 5.0 * (2.0 * unit() - 1.0) * unit().powi(3)), mobility_s_per_kg: c }
        }

        /// Four points' solve with its Newton in lanes gives the scalar Newton's bits on hard
        /// samples: random mobilities (symmetric to the bit, from nearly diagonal to nearly
        /// singular), free velocities to 5 m/s, forces from 1 mN to 20 N, bristles anywhere,
        /// rates from 22.05 to 192 kHz, and a jump to another at every sample, so that steps
        /// are halved, budgets run out and the fallback answers.
        #[test]
        fn the_newton_in_lanes_gives_the_same_bits_on_hard_systems() {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
            let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let table = ElastoPlasticParams::matusiak2025();
            let mut solves = 0;
            let mut fallbacks = 0;
            for case in 0..60 {
                let friction = ElastoPlasticParams { bristle_stiffness_n_per_m: table.bristle_stiffness_n_per_m * (0.01 + unit()), bristle_damping_kg_per_s: table.bristle_damping_kg_per_s * (0.01 + 2.0 * unit()), ..table };
                let mut alone = BristleContact::new(friction, N);
                alone.law_in_lanes = false;
                let mut lanes = alone.clone();
                lanes.law_in_lanes = true;
                for n in 0..400 {
                    let system = random_system(&mut unit, N);
                    let force_n = 10f64.powf(-3.0 + 4.3 * unit());
                    let k = 1.0 / (22_050.0 + 170_000.0 * unit());
                    if n % 50 == 0 {
                        let (v, r) = (2.0 * unit() - 1.0, 1e3 * (2.0 * unit() - 1.0));
                        alone.set_warm_start(v, r);
                        lanes.set_warm_start(v, r);
                    }
                    let (e, g) = (alone.solve(&system, force_n, k), lanes.solve(&system, force_n, k));
                    let context = format!("case {case}, sample {n}: {g:?} against {e:?}");
                    for m in 0..N {
                        assert!(same(e.velocity_mps[m], g.velocity_mps[m]) && same(e.force_n[m], g.force_n[m]) && same(e.deflection_m[m], g.deflection_m[m]), "{context}");
                    }
                    assert!(e.iterations == g.iterations && e.fell_back == g.fell_back && e.lifted == g.lifted, "{context}");
                    solves += 1;
                }
                assert_eq!(alone.stats, lanes.stats, "case {case}");
                assert!((0..N).all(|m| same(alone.z_half[m], lanes.z_half[m])), "case {case}");
                fallbacks += alone.stats.fallbacks;
            }
            println!("{solves} solves, {fallbacks} fallbacks");
            assert!(fallbacks > 0, "the fallback was not reached");
        }

        /// Two bows solved together (`BristleContact::solve_pair`: their Newtons in step,
        /// each going on alone where the other ends or halves a step) give each bow the
        /// bits it gets solved alone, over 24,000 pairs of hard random samples: each bow
        /// its own law, mobilities, force (1 mN to 20 N, sometimes none: lifted), time step
        /// (22.05 to 192 kHz) and warm starts, so that the two end at different steps, one
        /// falls back while the other converges, steps are halved, and a bow of fewer
        /// points or a lower cap is solved alone beside the other.
        #[test]
        fn two_bows_solved_together_get_the_bits_of_each_solved_alone() {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(47);
            let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let table = ElastoPlasticParams::matusiak2025();
            let (mut unequal_steps, mut one_fell_back, mut halved) = (0, 0, 0);
            for case in 0..60 {
                let bow = |unit: &mut dyn FnMut() -> f64| {
                    let friction = ElastoPlasticParams { bristle_stiffness_n_per_m: table.bristle_stiffness_n_per_m * (0.01 + unit()), bristle_damping_kg_per_s: table.bristle_damping_kg_per_s * (0.01 + 2.0 * unit()), ..table };
                    let points = if case % 10 == 9 { 3 } else { N };
                    let mut contact = BristleContact::new(friction, points);
                    if case % 15 == 14 {
                        contact.max_newton_steps = 3;
                    }
                    contact
                };
                let mut alone = [bow(&mut unit), bow(&mut unit)];
                let mut together = alone.clone();
                for n in 0..200 {
                    let problem = |unit: &mut dyn FnMut() -> f64, points: usize| {
                        let system = random_system(unit, points);
                        let force_n = if unit() < 0.02 { 0.0 } else { 10f64.powf(-3.0 + 4.3 * unit()) };
                        (system, force_n, 1.0 / (22_050.0 + 170_000.0 * unit()))
                    };
                    let problems = [problem(&mut unit, alone[0].points), problem(&mut unit, alone[1].points)];
                    for (i, contact) in alone.iter_mut().enumerate() {
                        if (n + 25 * i) % 50 == 0 {
                            let (v, r) = (2.0 * unit() - 1.0, 1e3 * (2.0 * unit() - 1.0));
                            contact.set_warm_start(v, r);
                            together[i].set_warm_start(v, r);
                        }
                    }
                    // The most evaluations a solve took, that solve's alone: more than `M` a
                    // step where a step was halved.
                    for contact in alone.iter_mut().chain(together.iter_mut()) {
                        contact.stats.max_evaluations = 0;
                    }
                    let expected = [0, 1].map(|i| alone[i].solve(&problems[i].0, problems[i].1, problems[i].2));
                    for (contact, e) in alone.iter().zip(&expected) {
                        halved += usize::from(!e.fell_back && !e.lifted && contact.stats.max_evaluations > contact.points * e.iterations);
                    }
                    let [first, second] = &mut together;
                    let (a, b) = BristleContact::solve_pair((first, &problems[0].0, problems[0].1, problems[0].2), (second, &problems[1].0, problems[1].1, problems[1].2));
                    for (i, contact) in together.iter().enumerate() {
                        assert_eq!(contact.stats.max_evaluations, alone[i].stats.max_evaluations, "case {case}, sample {n}, bow {i}: evaluations");
                    }
                    for (i, (e, g)) in expected.iter().zip([a, b]).enumerate() {
                        let context = format!("case {case}, sample {n}, bow {i}: {g:?} against {e:?}");
                        for m in 0..N {
                            assert!(same(e.velocity_mps[m], g.velocity_mps[m]) && same(e.force_n[m], g.force_n[m]) && same(e.deflection_m[m], g.deflection_m[m]), "{context}");
                        }
                        assert!(e.iterations == g.iterations && e.fell_back == g.fell_back && e.lifted == g.lifted, "{context}");
                    }
                    unequal_steps += usize::from(expected[0].iterations != expected[1].iterations);
                    one_fell_back += usize::from(expected[0].fell_back != expected[1].fell_back);
                }
                for i in 0..2 {
                    assert_eq!(alone[i].stats, together[i].stats, "case {case}, bow {i}");
                    assert!((0..N).all(|m| same(alone[i].z_half[m], together[i].z_half[m])), "case {case}, bow {i}");
                }
            }
            println!("{unequal_steps} pairs ended at different steps, {one_fell_back} with one bow fallen back, {halved} bows that halved a step");
            assert!(unequal_steps > 1000 && one_fell_back > 10 && halved > 10, "the paths apart were not all reached");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point_friction(points: usize) -> ElastoPlasticParams {
        let table = ElastoPlasticParams::matusiak2025();
        ElastoPlasticParams { bristle_stiffness_n_per_m: table.bristle_stiffness_n_per_m / points as f64, bristle_damping_kg_per_s: table.bristle_damping_kg_per_s / points as f64, ..table }
    }

    /// Overlapping points, like four points 2.5 mm apart on a 4.4 mm grid, plus hair.
    fn system(a: f64) -> ContactSystem {
        let mut c = [[0.0; MAX_CONTACT_POINTS]; MAX_CONTACT_POINTS];
        for m in 0..4 {
            for j in 0..4 {
                let d = (m as f64 - j as f64).abs();
                c[m][j] = 0.16 * (-0.4 * d * d).exp();
            }
            c[m][m] += 0.01;
        }
        ContactSystem { points: 4, free_velocity_mps: [a, a * 1.01, a * 0.99, a * 1.02], mobility_s_per_kg: c }
    }

    /// The full `2M x 2M` Jacobian of eqs. 60-61, assembled from an evaluation.
    fn full_jacobian(system: &ContactSystem, k: f64, e: &Evaluation) -> [[f64; MAX_UNKNOWNS]; MAX_UNKNOWNS] {
        let n = system.points;
        let c = &system.mobility_s_per_kg;
        let mut jac = [[0.0; MAX_UNKNOWNS]; MAX_UNKNOWNS];
        for m in 0..n {
            for j in 0..n {
                jac[m][j] = c[m][j] * e.states[j].d_force_d_velocity;
                jac[m][n + j] = c[m][j] * e.states[j].d_force_d_deflection;
            }
            jac[m][m] += 1.0;
            jac[n + m][m] = -e.states[m].d_rate_d_velocity;
            jac[n + m][n + m] = 2.0 / k - e.states[m].d_rate_d_deflection;
        }
        jac
    }

    #[test]
    fn the_jacobian_matches_finite_differences_and_the_reduced_step_the_full_one() {
        let mut contact = BristleContact::new(point_friction(4), 4);
        contact.z_half = [2e-6, 5e-6, -1e-6, 6.5e-6];
        let sys = system(-0.2);
        let k = 1.0 / 44_100.0;
        let x = [0.05, 0.12, -0.3, 0.2, 3e-6, 5.5e-6, -2e-6, 6.9e-6];
        let evaluation = contact.evaluate::<4>(&sys, 0.6, k, &x);
        let jac = full_jacobian(&sys, k, &evaluation);
        for col in 0..8 {
            let delta = if col < 4 { 1e-7 } else { 1e-13 };
            let (mut up, mut down) = (x, x);
            up[col] += delta;
            down[col] -= delta;
            let ru = contact.evaluate::<4>(&sys, 0.6, k, &up).residual;
            let rd = contact.evaluate::<4>(&sys, 0.6, k, &down).residual;
            for row in 0..8 {
                let numeric = (ru[row] - rd[row]) / (2.0 * delta);
                assert!((jac[row][col] - numeric).abs() <= 1e-5 * (1.0 + numeric.abs()), "J[{row}][{col}] = {} vs {numeric}", jac[row][col]);
            }
        }
        let mut full = jac;
        let mut step = evaluation.residual;
        assert!(solve_dense_in_place(&mut full, &mut step, 8));
        let reduced = contact.newton_step::<4>(&sys, k, &evaluation).unwrap();
        for i in 0..8 {
            assert!((reduced[i] - step[i]).abs() <= 1e-9 * step[i].abs().max(if i < 4 { 1e-6 } else { 1e-12 }), "step {i}: {} vs {}", reduced[i], step[i]);
        }
    }

    #[test]
    fn the_fallback_finds_the_root_newton_finds() {
        let k = 1.0 / 44_100.0;
        for a in [-1.5, -0.3, 0.02, 0.4] {
            let mut newton = BristleContact::new(point_friction(4), 4);
            newton.tolerance_mps = 1e-13;
            newton.step_tolerance_mps = 1e-13;
            newton.z_half = [4e-6, 4.2e-6, 3.9e-6, 4.1e-6];
            let mut fallback = newton.clone();
            fallback.max_newton_steps = 1;
            fallback.set_warm_start(50.0, -1e3);
            let sys = system(a);
            let expected = newton.solve(&sys, 0.6, k);
            let got = fallback.solve(&sys, 0.6, k);
            assert!(!expected.fell_back && got.fell_back, "a = {a}");
            for m in 0..4 {
                assert!((expected.velocity_mps[m] - got.velocity_mps[m]).abs() < 1e-9, "a = {a}: {:?} vs {:?}", expected.velocity_mps, got.velocity_mps);
            }
        }
    }

    /// Newton's answer at the default step tolerance, which takes its last step below
    /// [`DEFAULT_STEP_TOLERANCE_MPS`] without checking it, lies within 5e-10 m/s of the
    /// root found to 1e-13 from the same state (measured: 1.1e-10; 3.1e-12 at the step
    /// tolerance of 1e-7), sample after sample of a bristle that sticks and slips (a
    /// sawtooth's free velocity at 1 to 4 points and three forces); and two samples in
    /// three take two steps or fewer (measured: 72.1 %; 69.2 % at 1e-7 and 60.3 % at 1e-10).
    #[test]
    fn the_step_tolerance_leaves_the_answer_at_the_root() {
        let k = 1.0 / 48_000.0;
        let (mut worst_velocity, mut worst_rate): (f64, f64) = (0.0, 0.0);
        let (mut solves, mut quick) = (0, 0);
        for points in 1..=MAX_CONTACT_POINTS {
            for (case, force_n) in [0.3, 1.2, 6.0].into_iter().enumerate() {
                let mut contact = BristleContact::new(point_friction(points), points);
                let mut sys = system(0.0);
                sys.points = points;
                for n in 0..4_000 {
                    // A sawtooth's stick and slip, rounded: the free velocity creeps up
                    // for most of a period, then falls fast.
                    let phase = (n as f64 * 0.011 + case as f64).rem_euclid(1.0);
                    let a = if phase < 0.8 { -0.05 + 0.3 * phase } else { 0.19 - 6.0 * (phase - 0.8) };
                    for m in 0..points {
                        sys.free_velocity_mps[m] = a * (1.0 + 0.01 * m as f64);
                    }
                    let mut root = contact.clone();
                    root.tolerance_mps = 1e-13;
                    root.step_tolerance_mps = 1e-13;
                    let expected = root.solve(&sys, force_n, k);
                    let got = contact.solve(&sys, force_n, k);
                    assert!(!got.fell_back && !expected.fell_back, "{points} points, sample {n}");
                    for m in 0..points {
                        worst_velocity = worst_velocity.max((got.velocity_mps[m] - expected.velocity_mps[m]).abs());
                        worst_rate = worst_rate.max((got.deflection_rate_mps[m] - expected.deflection_rate_mps[m]).abs());
                    }
                    solves += 1;
                    quick += usize::from(got.iterations <= 2);
                }
            }
        }
        let quick_fraction = quick as f64 / solves as f64;
        println!("{solves} solves: worst {worst_velocity:.1e} m/s from the root, bristle rate {worst_rate:.1e} m/s; {:.1} % in two steps or fewer", 100.0 * quick_fraction);
        assert!(worst_velocity <= 5e-10 && worst_rate <= 5e-10, "{worst_velocity:e} m/s, rate {worst_rate:e} m/s");
        assert!(quick_fraction > 2.0 / 3.0, "only {:.1} % of the solves took two steps or fewer", 100.0 * quick_fraction);
    }

    /// The law evaluated at every point at once, in vector lanes, gives the solve of one
    /// point at a time to the bit, sample after sample, for 2, 3 and 4 points: ordinary
    /// bowing (a slowly turning free velocity, so the bristles stick and slip), hard
    /// pressure, and samples forced into the fallback.
    #[test]
    fn the_law_in_lanes_gives_the_same_bits() {
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let k = 1.0 / 48_000.0;
        let mut fallbacks = 0;
        for points in 2..=MAX_CONTACT_POINTS {
            for (case, force_n) in [0.3, 1.2, 6.0].into_iter().enumerate() {
                let mut alone = BristleContact::new(point_friction(points), points);
                alone.law_in_lanes = false;
                let mut lanes = alone.clone();
                lanes.law_in_lanes = true;
                let mut sys = system(0.0);
                sys.points = points;
                for n in 0..3_000 {
                    let a = 0.4 * (n as f64 * 0.013 + case as f64).sin() - 0.05;
                    for m in 0..points {
                        sys.free_velocity_mps[m] = a * (1.0 + 0.01 * m as f64);
                    }
                    // Every 97th sample, a start Newton cannot take: the fallback answers.
                    let forced = n % 97 == 0;
                    for contact in [&mut alone, &mut lanes] {
                        contact.max_newton_steps = if forced { 1 } else { MAX_NEWTON_STEPS };
                        if forced {
                            contact.set_warm_start(50.0, -1e3);
                        }
                    }
                    let (e, g) = (alone.solve(&sys, force_n / points as f64, k), lanes.solve(&sys, force_n / points as f64, k));
                    let context = format!("{points} points, {force_n} N, sample {n}: {g:?} against {e:?}");
                    for m in 0..points {
                        assert!(same(e.velocity_mps[m], g.velocity_mps[m]) && same(e.force_n[m], g.force_n[m]) && same(e.deflection_m[m], g.deflection_m[m]), "{context}");
                    }
                    assert!(e.iterations == g.iterations && e.fell_back == g.fell_back && e.lifted == g.lifted, "{context}");
                }
                assert_eq!(alone.stats, lanes.stats, "{points} points, {force_n} N");
                assert!((0..points).all(|m| same(alone.z_half[m], lanes.z_half[m])));
                fallbacks += alone.stats.fallbacks;
            }
        }
        assert!(fallbacks > 0, "the fallback was not reached");
    }

    #[test]
    fn no_force_lifts_the_bow_and_releases_the_bristles() {
        let mut contact = BristleContact::new(point_friction(2), 2);
        contact.z_half = [1e-6, 2e-6, 0.0, 0.0];
        let energy = contact.energy_j();
        let sys = ContactSystem { points: 2, free_velocity_mps: [0.1, 0.1, 0.0, 0.0], mobility_s_per_kg: [[0.1, 0.05, 0.0, 0.0], [0.05, 0.1, 0.0, 0.0], [0.0; 4], [0.0; 4]] };
        let s = contact.solve(&sys, 0.0, 1.0 / 44_100.0);
        assert!(s.lifted && s.force_n == [0.0; 4]);
        assert_eq!(s.released_energy_j, energy);
        assert_eq!(contact.energy_j(), 0.0);
    }
}

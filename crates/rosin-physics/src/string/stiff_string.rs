//! The damped stiff string, simply supported at both ends, as an explicit finite-difference
//! scheme (willemsen2019 eqs. 1-7; `MODELS.md` section 1).
//!
//! Node 0 is the nut (where the stopping finger is measured from) and node `N` the bridge.
//! The update is split in two so a bow can be solved between them: [`StiffString::compute_free_update`]
//! takes a step with no external force, and [`StiffString::apply_point_force`] adds a
//! spread force to that step. Then [`StiffString::advance`] moves time on.

use crate::string::format::Sample;
use crate::string::interpolation::CubicPoint;
use crate::string::tuning::SchemeGrid;

/// The physical description of a string, apart from its grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringMaterial {
    /// `rho A`, the mass per unit length.
    pub linear_density_kg_per_m: f64,
}

/// A stiff string on its grid, with the state of three time levels in the format `S`: f64
/// (the default), in which the tests prove the scheme (its modes, its decay, its energy to
/// rounding), or f32, which the engine's voices play (see [`StringSample`]).
pub struct StiffString<S: StringSample = f64> {
    grid: SchemeGrid,
    /// The grid's `h`, worked out once a grid (the per-sample work needs it several times a
    /// sample, and `N as f64` from a `usize` is several instructions on x86-64).
    spacing_m: f64,
    material: StringMaterial,
    /// The stencil's coefficients, worked out in f64 and rounded once to the format.
    coefficients: StencilCoefficients<S>,
    /// `k^2 / (rho A (1 + sigma0 k))`: from a force density to a displacement.
    force_to_displacement: f64,
    /// The bridge force's two terms per displacement ([`StiffString::bridge_force_n`]):
    /// `-T / h` on the last node's, `EI / h^3` on the one-sided third difference's.
    bridge_tension_n_per_m: f64,
    bridge_bending_n_per_m: f64,
    /// Nodes `-1 ..= N + 1` are stored at `0 ..= N + 2`: ghost nodes carry the simply
    /// supported condition `u_{-1} = -u_1`, `u_{N+1} = -u_{N-1}`.
    next: Box<[S]>,
    current: Box<[S]>,
    previous: Box<[S]>,
    max_intervals: usize,
    /// `(l_f, alpha_f)` of eq. 23, when a finger stops the string.
    finger: Option<(usize, f64)>,
    /// How firmly the finger presses, from 0 (touching) to 1 (eq. 23's full stop).
    finger_pressure: f64,
    /// Whether the finger is lifting off (its pressure falls to 0, then it is gone).
    finger_lifting: bool,
    /// How many times the grid or the finger's place has changed: what a point placed by
    /// length on the string (the bow) follows ([`StiffString::layout_changes`]).
    layout_changes: u32,
}

const GHOST: usize = 1;
/// How far before its clamped node eq. 23's finger stops the string, in grid intervals
/// (measured: see [`StiffString::finger_for_stop_m`]).
pub const FINGER_CLAMP_OFFSET_INTERVALS: f64 = 0.055;
/// A finger that lands on the string presses it down to a full stop over this long. Eq. 23
/// clamps its nodes in one step, which on a vibrating string is a click; pressed in over a
/// few milliseconds, the finger first damps the nodes it touches, as flesh does, then stops
/// them.
pub const FINGER_LANDING_S: f64 = 0.004;
/// A finger that lifts off lets the string go over this long, damping it as it leaves.
pub const FINGER_LIFT_S: f64 = 0.015;

impl<S: StringSample> StiffString<S> {
    /// Allocates room for grids of up to `max_intervals` intervals. This is the only
    /// allocation; configuring and stepping never allocate.
    pub fn with_capacity(max_intervals: usize, grid: SchemeGrid, material: StringMaterial) -> Self {
        let len = max_intervals + 3 + S::PADDING;
        let mut string = Self {
            grid,
            spacing_m: grid.spacing_m(),
            material,
            coefficients: StencilCoefficients::default(),
            force_to_displacement: 0.0,
            bridge_tension_n_per_m: 0.0,
            bridge_bending_n_per_m: 0.0,
            next: vec![S::ZERO; len].into_boxed_slice(),
            current: vec![S::ZERO; len].into_boxed_slice(),
            previous: vec![S::ZERO; len].into_boxed_slice(),
            max_intervals,
            finger: None,
            finger_pressure: 0.0,
            finger_lifting: false,
            layout_changes: 0,
        };
        string.configure(grid, material);
        string
    }

    /// Puts the string on a new grid at rest.
    pub fn configure(&mut self, grid: SchemeGrid, material: StringMaterial) {
        assert!(grid.intervals <= self.max_intervals, "grid larger than the capacity");
        self.grid = grid;
        self.spacing_m = grid.spacing_m();
        self.material = material;
        self.finger = None;
        self.finger_pressure = 0.0;
        self.finger_lifting = false;
        self.layout_changes = self.layout_changes.wrapping_add(1);
        self.reset();
        self.update_coefficients();
    }

    /// Sets every node of every time level to rest: the grid's nodes, ghosts and padding,
    /// all that the scheme reads (a larger grid configured later clears its own), so that a
    /// note-on on a short grid does not clear the whole capacity.
    pub fn reset(&mut self) {
        let used = (self.grid.intervals + 3 + S::PADDING).min(self.next.len());
        self.next[..used].fill(S::ZERO);
        self.current[..used].fill(S::ZERO);
        self.previous[..used].fill(S::ZERO);
    }

    /// Changes the losses while the string sounds. Stability is the caller's contract: the
    /// grid must have been designed for the largest `sigma1` it will see.
    pub fn set_losses(&mut self, sigma0_per_s: f64, sigma1_m2_per_s: f64) {
        if self.grid.sigma0_per_s != sigma0_per_s || self.grid.sigma1_m2_per_s != sigma1_m2_per_s {
            self.grid.sigma0_per_s = sigma0_per_s;
            self.grid.sigma1_m2_per_s = sigma1_m2_per_s;
            self.update_coefficients();
        }
    }

    /// Changes the wave speed while the string sounds (for intonation). Stability is the
    /// caller's contract: the grid must have been designed with enough headroom.
    pub fn set_wave_speed(&mut self, wave_speed_mps: f64) {
        if self.grid.wave_speed_mps != wave_speed_mps {
            self.grid.wave_speed_mps = wave_speed_mps;
            self.update_coefficients();
        }
    }

    fn update_coefficients(&mut self) {
        let g = &self.grid;
        let k = g.time_step_s;
        let h = g.spacing_m();
        let lambda_sq = (g.wave_speed_mps * k / h).powi(2);
        let mu_sq = (g.kappa_m2_per_s * k / (h * h)).powi(2);
        let s = 2.0 * g.sigma1_m2_per_s * k / (h * h);
        let norm = 1.0 / (1.0 + g.sigma0_per_s * k);
        // Each divided through by `1 + sigma0 k`, in f64, then rounded to the format.
        self.coefficients = StencilCoefficients {
            centre: S::from_f64((2.0 - 2.0 * lambda_sq - 6.0 * mu_sq - 2.0 * s) * norm),
            neighbour: S::from_f64((lambda_sq + 4.0 * mu_sq + s) * norm),
            second_neighbour: S::from_f64(-mu_sq * norm),
            previous_centre: S::from_f64((-(1.0 - g.sigma0_per_s * k) + 2.0 * s) * norm),
            previous_neighbour: S::from_f64(-s * norm),
        };
        self.force_to_displacement = k * k * norm / self.material.linear_density_kg_per_m;
        let (tension, bending) = self.tension_and_bending();
        self.bridge_tension_n_per_m = -tension / h;
        self.bridge_bending_n_per_m = bending / (h * h * h);
    }

    /// The string's tension `T = rho A c^2` (N) and bending stiffness `EI = rho A kappa^2`
    /// (N m^2).
    fn tension_and_bending(&self) -> (f64, f64) {
        let rho_a = self.material.linear_density_kg_per_m;
        (rho_a * self.grid.wave_speed_mps.powi(2), rho_a * self.grid.kappa_m2_per_s.powi(2))
    }

    /// The most intervals a grid may have here (see [`Self::with_capacity`]).
    pub fn capacity_intervals(&self) -> usize {
        self.max_intervals
    }

    pub fn grid(&self) -> &SchemeGrid {
        &self.grid
    }

    /// The grid's spacing `h` ([`SchemeGrid::spacing_m`], to the bit).
    #[inline]
    pub fn spacing_m(&self) -> f64 {
        self.spacing_m
    }

    pub fn material(&self) -> &StringMaterial {
        &self.material
    }

    pub fn intervals(&self) -> usize {
        self.grid.intervals
    }

    /// The displacement `u^n` at nodes `0 ..= N`.
    pub fn displacement(&self) -> &[S] {
        &self.current[GHOST..GHOST + self.grid.intervals + 1]
    }

    /// `u^{n-1}` at nodes `0 ..= N`.
    pub fn previous_displacement(&self) -> &[S] {
        &self.previous[GHOST..GHOST + self.grid.intervals + 1]
    }

    /// The step being built, `u^{n+1}` at nodes `0 ..= N`, valid after
    /// [`Self::compute_free_update`].
    pub fn next_displacement(&self) -> &[S] {
        &self.next[GHOST..GHOST + self.grid.intervals + 1]
    }

    /// Whether node `l` moves (the two supports do not).
    pub fn is_free_node(&self, node: usize) -> bool {
        node > 0 && node < self.grid.intervals
    }

    /// Computes `u^{n+1}` with no external force.
    pub fn compute_free_update(&mut self) {
        let n = self.grid.intervals;
        // Node l is at index l + 1; interior nodes 1..=N-1 are at 2..=N, and the stencil
        // reaches two nodes either side. The interior's N - 1 nodes are rounded up to whole
        // vectors: the few nodes past node N - 1 (node N, the ghost and the padding) are
        // written too, and set right below.
        let count = (n - 1).next_multiple_of(S::LANES);
        S::stencil(&self.coefficients, &self.current, &self.previous, &mut self.next[2..2 + count]);
        // Node 1 reads the ghost u_{-1} = -u_1 through u_m2 at index 0, already set.
        self.next[GHOST] = S::ZERO;
        self.next[GHOST + n] = S::ZERO;
        // The padding goes back to rest, so that what the overrun computed there never
        // grows (it reaches no node: the nodes read at most the ghost, index N + 2). The
        // ghost is set at the end of the step, from node N - 1.
        self.next[GHOST + n + 2..][..S::PADDING].fill(S::ZERO);
    }

    /// Adds the displacement that a point force `force_n` at `point` causes in the step
    /// being built: `-k^2 J f / (rho A (1 + sigma0 k))`. Forces on fixed nodes are absorbed.
    #[inline]
    pub fn apply_point_force(&mut self, point: &CubicPoint, force_n: f64) {
        let scale = self.force_to_displacement * force_n / self.spacing_m;
        let first = point.first_index;
        if first > 0 && first + 3 < self.grid.intervals {
            // All four nodes move (the bow's, away from the ends): no check for each.
            let nodes = &mut self.next[GHOST + first..][..4];
            for (u, w) in nodes.iter_mut().zip(&point.weights) {
                *u -= S::from_f64(scale * w);
            }
            return;
        }
        for (i, w) in point.weights.iter().enumerate() {
            let node = first + i;
            if self.is_free_node(node) {
                self.next[GHOST + node] -= S::from_f64(scale * w);
            }
        }
    }

    /// `k^2 / (rho A (1 + sigma0 k))`: the step's response to a unit force density.
    pub fn force_to_displacement(&self) -> f64 {
        self.force_to_displacement
    }

    /// Stops the string with a finger at `position_m` from the nut (eq. 23), or releases it
    /// with `None`. Within the first interval, only node 1 is damped (`1 - alpha^7`): node 0
    /// is the nut itself.
    ///
    /// A finger that moves by less than a grid interval from one call to the next slides,
    /// pressing as firmly as it did. One that comes down on the string, or jumps further, lands:
    /// it presses in over [`FINGER_LANDING_S`]. One that is taken away lifts off over
    /// [`FINGER_LIFT_S`].
    pub fn set_finger(&mut self, position_m: Option<f64>) {
        let wanted = position_m.and_then(|x| {
            let in_intervals = x / self.spacing_m;
            let node = in_intervals.floor();
            // Keep at least three free nodes beyond the finger.
            (x > 0.0 && (node as usize) + 4 <= self.grid.intervals).then_some((node as usize, in_intervals - node))
        });
        let at = |(node, alpha): (usize, f64)| node as f64 + alpha;
        match (self.finger, wanted) {
            (Some(_), None) => self.finger_lifting = true,
            (None, None) => {}
            (old, Some(new)) => {
                let slides = old.is_some_and(|old| (at(old) - at(new)).abs() <= 1.0);
                if !slides {
                    self.finger_pressure = 0.0;
                }
                self.finger = Some(new);
                self.finger_lifting = false;
                self.layout_changes = self.layout_changes.wrapping_add(1);
            }
        }
    }

    /// How firmly the finger presses now, from 0 to 1 (a full stop), or `None` without one.
    pub fn finger_pressure(&self) -> Option<f64> {
        self.finger.map(|_| self.finger_pressure)
    }

    /// Where eq. 23's finger must go for the string to sound stopped at `stop_m` from the
    /// nut. Eq. 23 clamps nodes `l_f - 1` and `l_f` and only damps `l_f + 1`, so the string
    /// sounds stopped about [`FINGER_CLAMP_OFFSET_INTERVALS`] before node `l_f`, and the
    /// fraction `alpha_f` moves the stop towards the next node roughly as `alpha_f^7`
    /// (measured on the A4 string at 48 kHz: 5.94, 5.95, 6.0, 6.28, 6.66 intervals for
    /// `alpha_f` 0, 0.6, 0.76, 0.86, 0.95 at `l_f` = 6). This inverts both, so a finger
    /// gliding along the string raises the pitch smoothly instead of in steps of one
    /// interval; the intonation loop takes out what remains.
    pub fn finger_for_stop_m(&self, stop_m: f64) -> f64 {
        let h = self.spacing_m;
        let shifted = (stop_m / h + FINGER_CLAMP_OFFSET_INTERVALS).max(0.0);
        let node = shifted.floor();
        (node + (shifted - node).powf(1.0 / 7.0)) * h
    }

    /// The finger's `(l_f, alpha_f)`, if any.
    pub fn finger(&self) -> Option<(usize, f64)> {
        self.finger
    }

    /// A count that moves (wrapping) whenever the grid is configured or the finger's
    /// `(l_f, alpha_f)` is set or taken away: while it stands, so do the grid's length and
    /// spacing and the finger's place.
    #[inline]
    pub fn layout_changes(&self) -> u32 {
        self.layout_changes
    }

    /// Moves time on: `u^{n+1}` becomes `u^n`. Applies the finger and the ghost nodes first.
    pub fn advance(&mut self) {
        let n = self.grid.intervals;
        if let Some((node, alpha)) = self.finger {
            let pressure = self.finger_pressure;
            if pressure >= 1.0 {
                self.next[GHOST + node - 1] = S::ZERO;
                self.next[GHOST + node] = S::ZERO;
                self.next[GHOST + node + 1] *= S::from_f64(1.0 - alpha.powi(7));
            } else {
                let held = S::from_f64(1.0 - pressure);
                self.next[GHOST + node - 1] *= held;
                self.next[GHOST + node] *= held;
                self.next[GHOST + node + 1] *= S::from_f64(1.0 - pressure * alpha.powi(7));
            }
            let k = self.grid.time_step_s;
            if self.finger_lifting {
                self.finger_pressure -= k / FINGER_LIFT_S;
                if self.finger_pressure <= 0.0 {
                    self.finger = None;
                    self.layout_changes = self.layout_changes.wrapping_add(1);
                    self.finger_pressure = 0.0;
                    self.finger_lifting = false;
                }
            } else if pressure < 1.0 {
                self.finger_pressure = (pressure + k / FINGER_LANDING_S).min(1.0);
            }
        }
        self.next[0] = -self.next[GHOST + 1];
        self.next[GHOST + n + 1] = -self.next[GHOST + n - 1];
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.current, &mut self.next);
    }

    /// The transverse force of the string on the bridge (node `N`):
    /// `T u_x(L) - EI u_xxx(L)`, from one-sided differences at the support.
    ///
    /// Its two terms' factors are worked out with the stencil's coefficients, so that a
    /// sample multiplies where it divided twice (rounded once more each: the output, and
    /// the drive of a play mode's strings in sympathy, move by about one unit in the last
    /// place of an f64; `docs/performance.md`).
    #[inline]
    pub fn bridge_force_n(&self) -> f64 {
        let n = self.grid.intervals;
        let u1 = self.current[GHOST + n - 1].to_f64();
        let u2 = self.current[GHOST + n - 2].to_f64();
        self.bridge_tension_n_per_m * u1 + self.bridge_bending_n_per_m * (u2 - 2.0 * u1)
    }

    /// The scheme's conserved energy when lossless (J): kinetic plus potential terms over
    /// the time levels `n` and `n - 1`. With losses it can only decrease.
    pub fn energy_j(&self) -> f64 {
        let n = self.grid.intervals;
        let h = self.spacing_m;
        let k = self.grid.time_step_s;
        let rho_a = self.material.linear_density_kg_per_m;
        let (tension, bending) = self.tension_and_bending();
        let (u, p) = (&self.current, &self.previous);
        let (u, p) = (|i: usize| u[i].to_f64(), |i: usize| p[i].to_f64());
        let mut kinetic = 0.0;
        let mut tension_term = 0.0;
        let mut bending_term = 0.0;
        for l in 0..=n {
            let i = GHOST + l;
            let velocity = (u(i) - p(i)) / k;
            kinetic += velocity * velocity;
            if l < n {
                tension_term += (u(i + 1) - u(i)) * (p(i + 1) - p(i));
            }
            let dxx_u = u(i + 1) - 2.0 * u(i) + u(i - 1);
            let dxx_p = p(i + 1) - 2.0 * p(i) + p(i - 1);
            // Nodes 0 and N carry half weight in the trapezoid inner product; their dxx is 0.
            bending_term += dxx_u * dxx_p;
        }
        0.5 * rho_a * h * kinetic + 0.5 * tension * tension_term / h + 0.5 * bending * bending_term / (h * h * h)
    }

    /// Sets `u^n` and `u^{n-1}` (nodes `0 ..= N`, each of length `N + 1`, rounded to the
    /// format); the supports are held at zero. For initial conditions in tests and tools.
    pub fn set_state(&mut self, current: &[f64], previous: &[f64]) {
        let n = self.grid.intervals;
        assert!(current.len() == n + 1 && previous.len() == n + 1, "state must have N + 1 nodes");
        for l in 1..n {
            self.current[GHOST + l] = S::from_f64(current[l]);
            self.previous[GHOST + l] = S::from_f64(previous[l]);
        }
        for buffer in [&mut self.current, &mut self.previous] {
            buffer[GHOST] = S::ZERO;
            buffer[GHOST + n] = S::ZERO;
            buffer[0] = -buffer[GHOST + 1];
            buffer[GHOST + n + 1] = -buffer[GHOST + n - 1];
        }
    }

    /// Whether the state is finite and inside `limit_m` everywhere.
    pub fn is_sane(&self, limit_m: f64) -> bool {
        self.displacement().iter().all(|&x| x.to_f64().abs() <= limit_m)
    }
}

/// The number format of a string's levels ([`Sample`]): f64, in which the tests prove the
/// scheme, or f32, which the engine's voices play. The update's coefficients are worked out
/// in f64 and rounded once to the format; what the bow reads and spreads (interpolation,
/// the force, the bridge's force, the energy) is worked in f64 from the format's nodes.
pub trait StringSample: Sample + std::ops::Neg<Output = Self> + std::ops::SubAssign + std::ops::MulAssign {
    /// The vector the stencil works in, in nodes (AVX2's lanes of the format; AVX-512
    /// takes two at once): it updates the interior in whole vectors, running past node
    /// `N - 1` into as many as `LANES - 1` nodes beyond (node `N`, the ghost, the padding),
    /// so that no scalar remainder is left over. Rounding to AVX-512's width would save its
    /// remainder but cost AVX2 machines more in nodes computed for nothing than the
    /// remainder cost them (measured for f64).
    const LANES: usize;
    /// The nodes each level keeps past the grid's `N + 3` (its nodes and two ghosts): the
    /// stencil's rounded-up interior ends up to `LANES - 1` nodes past node `N - 1` and
    /// reads two nodes past its end, so up to `LANES - 1` past the ghost.
    const PADDING: usize = Self::LANES - 1;
    /// The interior update of [`StiffString::compute_free_update`]: `out[i]` from the
    /// current level `u[i..i + 5]` and the previous `p[i + 1..i + 4]`. Compiled for
    /// AVX-512 and for AVX2 as well as the baseline, and chosen once at run time by the CPU
    /// (`multiversion`). The arithmetic is the same expression in the same order on every
    /// path (no fused multiply-add), so every path gives the same bits.
    ///
    /// `out` is a whole number of [`Self::LANES`] nodes (asserted), so the compiler leaves
    /// no scalar remainder after the vector loop.
    #[doc(hidden)]
    fn stencil(c: &StencilCoefficients<Self>, u: &[Self], p: &[Self], out: &mut [Self]);
}

/// The stencil's coefficients of one update, divided through by `1 + sigma0 k`, in the
/// format `S`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StencilCoefficients<S> {
    centre: S,
    neighbour: S,
    second_neighbour: S,
    previous_centre: S,
    previous_neighbour: S,
}

/// Implements [`StringSample`] for a format whose AVX2 vector holds `$lanes` of it.
macro_rules! string_sample {
    ($format:ident, $lanes:literal) => {
        impl StringSample for $format {
            const LANES: usize = $lanes;

            #[inline]
            fn stencil(c: &StencilCoefficients<Self>, u: &[Self], p: &[Self], out: &mut [Self]) {
                #[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
                fn dispatch(c: &StencilCoefficients<$format>, u: &[$format], p: &[$format], out: &mut [$format]) {
                    let count = out.len();
                    assert!(count % $lanes == 0, "the stencil runs in whole vectors");
                    // One bounds check for each level, so that the compiler can drop the
                    // slices' own.
                    let (u, p) = (&u[..count + 4], &p[..count + 4]);
                    let (u_m2, u_m1, u_0, u_p1, u_p2) = (&u[0..count], &u[1..1 + count], &u[2..2 + count], &u[3..3 + count], &u[4..4 + count]);
                    let (p_m1, p_0, p_p1) = (&p[1..1 + count], &p[2..2 + count], &p[3..3 + count]);
                    for i in 0..count {
                        out[i] = c.centre * u_0[i]
                            + c.neighbour * (u_m1[i] + u_p1[i])
                            + c.second_neighbour * (u_m2[i] + u_p2[i])
                            + c.previous_centre * p_0[i]
                            + c.previous_neighbour * (p_m1[i] + p_p1[i]);
                    }
                }
                dispatch(c, u, p, out)
            }
        }
    };
}

string_sample!(f64, 4);
string_sample!(f32, 8);

#[cfg(test)]
mod tests {
    use super::*;

    /// The stencil runs past node `N - 1` into the padding (to whole vectors), so what lies
    /// there must never reach a node: with not-a-number in every level's padding, each
    /// grid length (every remainder of the interior by the vector) moves bit for bit as a
    /// clean one does, bowed off centre, and the padding is back at rest after a step.
    fn padding_never_reaches_a_node<S: StringSample>() {
        let (c, kappa, sigma1, k) = (392.0, 1.5, 1e-4, 1.0 / 48_000.0);
        let most = (1.0 / crate::string::tuning::min_grid_spacing_m(c, kappa, sigma1, k)).floor() as usize;
        for intervals in most - S::LANES + 1..=most {
            let grid = SchemeGrid { intervals, length_m: 1.0, time_step_s: k, wave_speed_mps: c, kappa_m2_per_s: kappa, sigma0_per_s: 1.0, sigma1_m2_per_s: sigma1 };
            let material = StringMaterial { linear_density_kg_per_m: 1e-3 };
            let shape: Vec<f64> = (0..=intervals).map(|l| 1e-4 * (std::f64::consts::PI * l as f64 / intervals as f64).sin()).collect();
            let mut clean = StiffString::<S>::with_capacity(intervals, grid, material);
            let mut poisoned = StiffString::<S>::with_capacity(intervals, grid, material);
            clean.set_state(&shape, &shape);
            poisoned.set_state(&shape, &shape);
            for level in [&mut poisoned.next, &mut poisoned.current, &mut poisoned.previous] {
                level[GHOST + intervals + 2..].fill(S::from_f64(f64::NAN));
            }
            let bow = CubicPoint::new(0.87 * intervals as f64, intervals);
            for step in 0..300 {
                for string in [&mut clean, &mut poisoned] {
                    string.compute_free_update();
                    string.apply_point_force(&bow, 0.01 * (step as f64 * 0.07).sin());
                    string.advance();
                }
                let bits = |s: &StiffString<S>| s.displacement().iter().map(|&x| x.to_f64().to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&clean), bits(&poisoned), "N = {intervals}, step {step}");
            }
            assert!(poisoned.current[GHOST + intervals + 2..].iter().all(|&x| x == S::ZERO), "N = {intervals}: the padding keeps what the overrun wrote");
            assert!(clean.displacement().iter().any(|&x| x.to_f64().abs() > 1e-6), "N = {intervals}: the string should still move");
        }
    }

    #[test]
    fn the_padding_past_the_grid_never_reaches_a_node() {
        padding_never_reaches_a_node::<f64>();
        padding_never_reaches_a_node::<f32>();
    }

    /// The stencil on whatever path this CPU takes (AVX-512, AVX2 or the baseline) gives the
    /// same bits as the expression evaluated one node at a time in the format, at every
    /// length it takes (whole vectors of the format's lanes: on AVX-512, whole vectors of
    /// twice as many and a remainder alike).
    fn dispatched_stencil_gives_the_scalar_bits<S: StringSample + std::ops::Add<Output = S> + std::ops::Mul<Output = S>>() {
        let r = S::from_f64;
        let c = StencilCoefficients { centre: r(1.31), neighbour: r(0.377), second_neighbour: r(-0.0123), previous_centre: r(-0.9991), previous_neighbour: r(0.000_37) };
        let mut uniform = crate::test_uniform(0x2545_F491_4F6C_DD1D);
        let mut random = || r((uniform() - 0.5) * 1e-3);
        for vectors in [1usize, 2, 3, 4, 5, 16, 50, 256] {
            let count = vectors * S::LANES;
            let u: Vec<S> = (0..count + 4).map(|_| random()).collect();
            let p: Vec<S> = (0..count + 4).map(|_| random()).collect();
            let mut out = vec![S::ZERO; count];
            S::stencil(&c, &u, &p, &mut out);
            for i in 0..count {
                let expected = c.centre * u[i + 2] + c.neighbour * (u[i + 1] + u[i + 3]) + c.second_neighbour * (u[i] + u[i + 4]) + c.previous_centre * p[i + 2] + c.previous_neighbour * (p[i + 1] + p[i + 3]);
                assert_eq!(out[i].to_f64().to_bits(), expected.to_f64().to_bits(), "node {i} of {count}");
            }
        }
    }

    #[test]
    fn the_dispatched_stencil_gives_the_scalar_bits() {
        dispatched_stencil_gives_the_scalar_bits::<f64>();
        dispatched_stencil_gives_the_scalar_bits::<f32>();
    }
}

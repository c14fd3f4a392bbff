//! Torsional waves of a string, fixed at both ends, as an explicit finite-difference scheme
//! on their own grid (matusiak2025 eq. 40, discretised as eq. 55 with the grid condition of
//! eq. 51; `MODELS.md` section 2).
//!
//! `P_T w_tt = K_T w_xx - 2 gamma_T P_T w_t + r f delta(x - x_b)`, `w(0) = w(L) = 0`, with
//! `w` the angle of twist (rad), `P_T` the polar moment of inertia per unit length (kg m),
//! `K_T` the torsional stiffness (N m^2) and `r` the string radius: a friction force `F` on
//! the string's surface is a torque `r F`. Torsional waves travel at `c_T = sqrt(K_T / P_T)`,
//! several times faster than transverse ones, so their grid (`h_T >= c_T k`) is much
//! coarser than the string's: 36 intervals for matusiak2025's G string at 44.1 kHz.
//!
//! The update is split like [`crate::string::stiff_string::StiffString`]'s so a bow can be solved between
//! the halves: [`TorsionalString::compute_free_update`], then
//! [`TorsionalString::apply_point_force`], then [`TorsionalString::advance`].

use crate::string::interpolation::CubicPoint;

/// The physical description of the string's torsion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TorsionParams {
    pub length_m: f64,
    /// `r`: the lever arm of a force on the string's surface.
    pub radius_m: f64,
    /// `P_T`, the polar moment of inertia per unit length (kg m^2 / m).
    pub polar_inertia_kg_m: f64,
    /// `c_T = sqrt(K_T / P_T)`.
    pub wave_speed_mps: f64,
    /// The quality factor of the first torsional mode; `f64::INFINITY` for no loss.
    pub quality_factor: f64,
}

impl TorsionParams {
    /// A solid cylinder of linear density `rho A`: `P_T = rho pi r^4 / 2 = rho A r^2 / 2`.
    pub fn solid_cylinder(length_m: f64, radius_m: f64, linear_density_kg_per_m: f64, wave_speed_mps: f64, quality_factor: f64) -> Self {
        Self { length_m, radius_m, polar_inertia_kg_m: 0.5 * linear_density_kg_per_m * radius_m * radius_m, wave_speed_mps, quality_factor }
    }

    /// `K_T = P_T c_T^2` (N m^2).
    pub fn stiffness_n_m2(&self) -> f64 {
        self.polar_inertia_kg_m * self.wave_speed_mps * self.wave_speed_mps
    }

    /// The first torsional mode, `c_T / (2 L)` (607 Hz for matusiak2025's string).
    pub fn first_mode_hz(&self) -> f64 {
        0.5 * self.wave_speed_mps / self.length_m
    }

    /// `gamma_T` (1/s) from the quality factor. The first mode obeys
    /// `q'' + 2 gamma_T q' + omega_1^2 q = 0`, whose resonance has `Q = omega_1 / (2 gamma_T)`,
    /// so `gamma_T = omega_1 / (2 Q) = pi f_1 / Q` (66 1/s at Q = 29). The loss is frequency
    /// independent, so mode `n` has `Q_n = n Q`. (`1 / (2 Q)` alone, which is not a rate,
    /// would leave the torsion almost undamped.)
    pub fn damping_per_s(&self) -> f64 {
        if self.quality_factor.is_finite() && self.quality_factor > 0.0 {
            std::f64::consts::PI * self.first_mode_hz() / self.quality_factor
        } else {
            0.0
        }
    }

    /// The finest stable grid at `sample_rate_hz`: `N_T = floor(L / (c_T k))` intervals.
    pub fn intervals_at(&self, sample_rate_hz: f64) -> usize {
        (self.length_m * sample_rate_hz / self.wave_speed_mps).floor() as usize
    }
}

/// The torsional waves on their grid, with the state of three time levels.
pub struct TorsionalString {
    params: TorsionParams,
    intervals: usize,
    spacing_m: f64,
    time_step_s: f64,
    damping_per_s: f64,
    /// `(2 - 2 lambda^2) / (1 + gamma k)`.
    centre: f64,
    /// `lambda^2 / (1 + gamma k)`.
    neighbour: f64,
    /// `-(1 - gamma k) / (1 + gamma k)`.
    previous_centre: f64,
    /// `k^2 r / (P_T (1 + gamma k))`: from a force density (N/m) to an angle step.
    force_to_angle: f64,
    /// Nodes `0 ..= held_through` do not move: the nut, and under a stopping finger the
    /// string up to it (a finger pressing the string down stops its twist too).
    held_through: usize,
    /// Nodes `0 ..= N_T`; the two ends stay at zero.
    next: Box<[f64]>,
    current: Box<[f64]>,
    previous: Box<[f64]>,
}

impl TorsionalString {
    /// At rest on the finest stable grid. This is the only allocation.
    ///
    /// Panics if the grid would have fewer than 3 intervals (cubic interpolation needs 4
    /// nodes): the string is too short or the sample rate too low for its torsion.
    pub fn new(params: TorsionParams, sample_rate_hz: f64) -> Self {
        let intervals = params.intervals_at(sample_rate_hz);
        Self::with_capacity(params, sample_rate_hz, intervals)
    }

    /// As [`Self::new`], with room for grids of up to `max_intervals` intervals, so that
    /// [`Self::configure`] can move it to another string without allocating.
    pub fn with_capacity(params: TorsionParams, sample_rate_hz: f64, max_intervals: usize) -> Self {
        let intervals = params.intervals_at(sample_rate_hz);
        assert!(intervals >= 3, "torsion grid of {intervals} intervals: too coarse for cubic interpolation");
        let len = intervals.max(max_intervals) + 1;
        let mut torsion = Self {
            params,
            intervals,
            spacing_m: params.length_m / intervals as f64,
            time_step_s: 1.0 / sample_rate_hz,
            damping_per_s: 0.0,
            centre: 0.0,
            neighbour: 0.0,
            previous_centre: 0.0,
            force_to_angle: 0.0,
            held_through: 0,
            next: vec![0.0; len].into_boxed_slice(),
            current: vec![0.0; len].into_boxed_slice(),
            previous: vec![0.0; len].into_boxed_slice(),
        };
        torsion.set_quality_factor(params.quality_factor);
        torsion
    }

    /// Puts the torsion of another string (or rate) on its finest stable grid, at rest. The
    /// grid must fit the capacity and have at least 3 intervals: returns false (and changes
    /// nothing) otherwise.
    pub fn configure(&mut self, params: TorsionParams, sample_rate_hz: f64) -> bool {
        let intervals = params.intervals_at(sample_rate_hz);
        if intervals < 3 || intervals + 1 > self.current.len() {
            return false;
        }
        self.params = params;
        self.intervals = intervals;
        self.spacing_m = params.length_m / intervals as f64;
        self.time_step_s = 1.0 / sample_rate_hz;
        self.held_through = 0;
        self.set_quality_factor(params.quality_factor);
        self.reset();
        true
    }

    /// Holds the string still up to `position_m` from the nut (a stopping finger), or only
    /// at the nut with `None`. At least three moving intervals stay beyond it.
    pub fn set_clamp(&mut self, position_m: Option<f64>) {
        let node = position_m.map_or(0, |x| (x / self.spacing_m).round().max(0.0) as usize);
        self.held_through = node.min(self.intervals.saturating_sub(4));
    }

    /// Changes the loss while the string sounds (the scheme is stable for any `Q > 0`).
    pub fn set_quality_factor(&mut self, quality_factor: f64) {
        self.params.quality_factor = quality_factor;
        self.damping_per_s = self.params.damping_per_s();
        let k = self.time_step_s;
        let lambda_sq = (self.params.wave_speed_mps * k / self.spacing_m).powi(2);
        let norm = 1.0 / (1.0 + self.damping_per_s * k);
        self.centre = (2.0 - 2.0 * lambda_sq) * norm;
        self.neighbour = lambda_sq * norm;
        self.previous_centre = -(1.0 - self.damping_per_s * k) * norm;
        self.force_to_angle = k * k * self.params.radius_m * norm / self.params.polar_inertia_kg_m;
    }

    /// Sets every node of every time level to rest.
    pub fn reset(&mut self) {
        self.next.fill(0.0);
        self.current.fill(0.0);
        self.previous.fill(0.0);
    }

    pub fn params(&self) -> &TorsionParams {
        &self.params
    }

    /// `N_T`.
    pub fn intervals(&self) -> usize {
        self.intervals
    }

    /// `h_T`.
    pub fn spacing_m(&self) -> f64 {
        self.spacing_m
    }

    pub fn time_step_s(&self) -> f64 {
        self.time_step_s
    }

    /// `gamma_T`.
    pub fn damping_per_s(&self) -> f64 {
        self.damping_per_s
    }

    /// `k^2 r / (P_T (1 + gamma_T k))`: the step's angle response to a unit force density.
    pub fn force_to_angle(&self) -> f64 {
        self.force_to_angle
    }

    /// Whether node `l` moves (the two ends do not).
    pub fn is_free_node(&self, node: usize) -> bool {
        node > self.held_through && node < self.intervals
    }

    /// The angle `w^n` (rad) at nodes `0 ..= N_T`.
    pub fn angle(&self) -> &[f64] {
        &self.current[..=self.intervals]
    }

    /// `w^{n-1}`.
    pub fn previous_angle(&self) -> &[f64] {
        &self.previous[..=self.intervals]
    }

    /// The step being built, `w^{n+1}`, valid after [`Self::compute_free_update`].
    pub fn next_angle(&self) -> &[f64] {
        &self.next[..=self.intervals]
    }

    /// Computes `w^{n+1}` with no external torque.
    #[inline]
    pub fn compute_free_update(&mut self) {
        let n = self.intervals;
        let count = n - 1;
        let (w, p) = (&self.current[..n + 1], &self.previous[..n + 1]);
        let (w_m1, w_0, w_p1, p_0) = (&w[0..count], &w[1..1 + count], &w[2..2 + count], &p[1..1 + count]);
        let out = &mut self.next[1..1 + count];
        for i in 0..count {
            out[i] = self.centre * w_0[i] + self.neighbour * (w_m1[i] + w_p1[i]) + self.previous_centre * p_0[i];
        }
        self.next[..=self.held_through].fill(0.0);
        self.next[n] = 0.0;
    }

    /// Adds the angle that a surface force `force_n` at `point` (on this grid) causes in
    /// the step being built: `+k^2 r J_T F / (P_T (1 + gamma_T k))`, `J_T = I_T^T / h_T`.
    /// Forces on the fixed ends are absorbed.
    #[inline]
    pub fn apply_point_force(&mut self, point: &CubicPoint, force_n: f64) {
        let scale = self.force_to_angle * force_n / self.spacing_m;
        let first = point.first_index;
        if first > self.held_through && first + 3 < self.intervals {
            // All four nodes move (the bow's, away from the ends): no check for each.
            for (w_rad, weight) in self.next[first..][..4].iter_mut().zip(&point.weights) {
                *w_rad += scale * weight;
            }
            return;
        }
        for (i, w) in point.weights.iter().enumerate() {
            let node = point.first_index + i;
            if self.is_free_node(node) {
                self.next[node] += scale * w;
            }
        }
    }

    /// Moves time on: `w^{n+1}` becomes `w^n`.
    #[inline]
    pub fn advance(&mut self) {
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.current, &mut self.next);
    }

    /// The scheme's energy at step `n` (J): `P_T/2 |dt- w|^2 + K_T/2 <dx+ w^n, dx+ w^{n-1}>`
    /// on the torsion grid (matusiak2025 section 6.3, `H_w`). Non-negative when
    /// `h_T >= c_T k`; conserved without loss and torque.
    pub fn energy_j(&self) -> f64 {
        let k = self.time_step_s;
        let h = self.spacing_m;
        let (w, p) = (&self.current, &self.previous);
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for l in 0..=self.intervals {
            let velocity = (w[l] - p[l]) / k;
            kinetic += velocity * velocity;
            if l < self.intervals {
                potential += (w[l + 1] - w[l]) * (p[l + 1] - p[l]);
            }
        }
        0.5 * self.params.polar_inertia_kg_m * h * kinetic + 0.5 * self.params.stiffness_n_m2() * potential / h
    }

    /// The power lost to damping over the step being built (W): `2 gamma_T P_T |dt. w|^2`.
    /// Valid between [`Self::compute_free_update`] (plus forces) and [`Self::advance`].
    pub fn loss_w(&self) -> f64 {
        if self.damping_per_s == 0.0 {
            return 0.0;
        }
        let two_k = 2.0 * self.time_step_s;
        let sum: f64 = self.next_angle().iter().zip(self.previous_angle()).map(|(a, b)| ((a - b) / two_k).powi(2)).sum();
        2.0 * self.damping_per_s * self.params.polar_inertia_kg_m * self.spacing_m * sum
    }

    /// Whether every angle is finite and inside `limit_rad`.
    pub fn is_sane(&self, limit_rad: f64) -> bool {
        self.angle().iter().all(|w| w.abs() <= limit_rad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matusiak() -> TorsionParams {
        let linear_density = 149.74 / (2.0f64 * 98.0 * 0.7).powi(2);
        TorsionParams::solid_cylinder(0.7, 5e-4, linear_density, 849.5, 29.0)
    }

    #[test]
    fn grid_is_coarse_and_stable() {
        let t = TorsionalString::new(matusiak(), 44_100.0);
        assert_eq!(t.intervals(), 36);
        assert!(t.spacing_m() >= 849.5 / 44_100.0);
        // gamma_T = pi f1 / Q, f1 = c_T / 2L.
        assert!((t.damping_per_s() - std::f64::consts::PI * 849.5 / 1.4 / 29.0).abs() < 1e-9);
    }

    #[test]
    fn lossless_energy_is_conserved_and_the_first_mode_rings_at_its_frequency() {
        let mut p = matusiak();
        p.quality_factor = f64::INFINITY;
        let mut t = TorsionalString::new(p, 44_100.0);
        let point = CubicPoint::new(7.3, t.intervals());
        // A short torque pulse, then free vibration.
        let mut energies = Vec::new();
        for n in 0..20_000 {
            t.compute_free_update();
            if n < 5 {
                t.apply_point_force(&point, 1.0);
            }
            t.advance();
            energies.push(t.energy_j());
        }
        let e = energies[10];
        assert!(e > 0.0);
        for &x in &energies[10..] {
            assert!((x - e).abs() <= 1e-12 * e, "{x} vs {e}");
        }
        // Released from the first mode's shape, the string rings at the scheme's first
        // mode, which at lambda just below 1 is nearly c_T / 2 L.
        let n = t.intervals();
        let shape: Vec<f64> = (0..=n).map(|l| (std::f64::consts::PI * l as f64 / n as f64).sin()).collect();
        t.current.copy_from_slice(&shape);
        t.previous.copy_from_slice(&shape);
        let trace: Vec<f64> = (0..20_000)
            .map(|_| {
                t.compute_free_update();
                t.advance();
                t.angle()[n / 2]
            })
            .collect();
        let crossings: Vec<usize> = (1..trace.len()).filter(|&i| trace[i - 1] < 0.0 && trace[i] >= 0.0).collect();
        assert!(crossings.len() > 100);
        let period = (crossings[crossings.len() - 1] - crossings[0]) as f64 / (crossings.len() - 1) as f64;
        let f = 44_100.0 / period;
        assert!((f / p.first_mode_hz() - 1.0).abs() < 0.01, "{f} Hz");
    }

    #[test]
    fn a_mode_decays_at_the_quality_factor() {
        let p = matusiak();
        let mut t = TorsionalString::new(p, 44_100.0);
        let n = t.intervals();
        let shape: Vec<f64> = (0..=n).map(|l| (std::f64::consts::PI * l as f64 / n as f64).sin()).collect();
        t.current.copy_from_slice(&shape);
        t.previous.copy_from_slice(&shape);
        let e0 = t.energy_j();
        let seconds = 0.05;
        for _ in 0..(seconds * 44_100.0) as usize {
            t.compute_free_update();
            t.advance();
        }
        // Energy decays as exp(-2 gamma t).
        let rate = -(t.energy_j() / e0).ln() / (2.0 * seconds);
        assert!((rate / t.damping_per_s() - 1.0).abs() < 0.05, "decay {rate} vs {}", t.damping_per_s());
    }
}

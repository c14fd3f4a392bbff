//! The acoustic tube: a 1D wave equation for the air column's displacement `zeta`, Neumann
//! at the membrane end and radiating at the open end (onofrei2021 eqs. 4-5, 21, 23-24;
//! `MODELS.md` section 3).
//!
//! `dtt zeta = gamma^2 dxx zeta`, `dx. zeta(0) = 0`,
//! `dx. zeta(N) = -alpha1 dt. zeta(N) - alpha2 mu_t. zeta(N)`. Both ends use a ghost node
//! and a centred difference, so the scheme's energy uses the trapezoid inner product (half
//! weights at the ends): see [`Tube::energy_j`].
//!
//! The levels are in the drum's number format `S` ([`TubeSample`], which every
//! [`MembraneSample`](crate::drum::membrane::MembraneSample) is): f64, in which the tests
//! prove the scheme, or f32, which the playing drum keeps, as its membrane's. The ends'
//! updates, the connection's force and every read-out work in f64 from the stored values.

use crate::string::format::Sample;

/// The number format of a tube's levels ([`Sample`]), with its interior's kernel.
pub trait TubeSample: Sample {
    /// The interior's update, `next = centre u + l2 (left + right) - previous`, each next
    /// written over its previous: the format's kernel, written by `tube_sample!` below.
    #[doc(hidden)]
    fn update_tube_interior(levels: InteriorLevels<Self>, centre: Self, l2: Self);
}

/// The tube's physical description.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TubeMaterial {
    pub length_m: f64,
    /// `A`, the cross-section.
    pub area_m2: f64,
    /// `rho_t`, the air's density.
    pub air_density_kg_per_m3: f64,
    /// `gamma`, the wave speed (tuned low in the paper, see its section 2.2).
    pub wave_speed_mps: f64,
    /// `alpha1`, the open end's loss (s/m).
    pub radiation_loss_s_per_m: f64,
    /// `alpha2`, the open end's stiffness (1/m).
    pub radiation_stiffness_per_m: f64,
}

impl Default for TubeMaterial {
    /// onofrei2021 Table 1.
    fn default() -> Self {
        Self {
            length_m: 0.4,
            area_m2: 0.0707,
            air_density_kg_per_m3: 1.225,
            wave_speed_mps: 30.0,
            radiation_loss_s_per_m: 0.008,
            radiation_stiffness_per_m: 4.348,
        }
    }
}

impl TubeMaterial {
    /// The interval count at the stability limit `h >= gamma k` (eq. 24).
    pub fn intervals_at_limit(&self, time_step_s: f64) -> usize {
        ((self.length_m / (self.wave_speed_mps * time_step_s)).floor() as usize).max(2)
    }

    /// `rho_t A`, the mass per unit length.
    pub fn linear_density_kg_per_m(&self) -> f64 {
        self.air_density_kg_per_m3 * self.area_m2
    }
}

/// The air column with three time levels in two arrays: the update writes the next level
/// over the previous one, node by node, each after reading it (as the membrane's does), so
/// a sample streams two arrays instead of three. The levels are in the format `S`.
pub struct Tube<S: TubeSample = f64> {
    material: TubeMaterial,
    intervals: usize,
    time_step_s: f64,
    /// `lambda^2 = (gamma k / h)^2`.
    lambda_squared: f64,
    /// The open end's update: `zeta+ = (rhs + previous_extra zeta-) * open_norm`.
    open_norm: f64,
    open_previous_extra: f64,
    /// The previous level, until [`Tube::compute_free_update`] writes the next one over it.
    previous_then_next: Box<[S]>,
    current: Box<[S]>,
    max_intervals: usize,
}

impl<S: TubeSample> Tube<S> {
    /// Allocates room for up to `max_intervals` intervals; nothing allocates after this.
    pub fn with_capacity(max_intervals: usize, material: TubeMaterial, intervals: usize, time_step_s: f64) -> Self {
        let len = max_intervals.max(2) + 1;
        let mut tube = Self {
            material,
            intervals: 2,
            time_step_s,
            lambda_squared: 0.0,
            open_norm: 1.0,
            open_previous_extra: 0.0,
            previous_then_next: vec![S::ZERO; len].into_boxed_slice(),
            current: vec![S::ZERO; len].into_boxed_slice(),
            max_intervals: max_intervals.max(2),
        };
        tube.configure(material, intervals, time_step_s);
        tube
    }

    /// Puts the tube on a grid of `intervals` (at most the capacity), at rest.
    pub fn configure(&mut self, material: TubeMaterial, intervals: usize, time_step_s: f64) {
        self.material = material;
        self.intervals = intervals.clamp(2, self.max_intervals);
        self.time_step_s = time_step_s;
        let h = self.spacing_m();
        let k = time_step_s;
        self.lambda_squared = (material.wave_speed_mps * k / h).powi(2);
        let loss = self.lambda_squared * h * material.radiation_loss_s_per_m / k;
        let spring = self.lambda_squared * h * material.radiation_stiffness_per_m;
        self.open_norm = 1.0 / (1.0 + loss + spring);
        self.open_previous_extra = loss - spring;
        self.reset();
    }

    pub fn reset(&mut self) {
        self.previous_then_next.fill(S::ZERO);
        self.current.fill(S::ZERO);
    }

    pub fn material(&self) -> &TubeMaterial {
        &self.material
    }

    pub fn intervals(&self) -> usize {
        self.intervals
    }

    pub fn spacing_m(&self) -> f64 {
        self.material.length_m / self.intervals as f64
    }

    /// Whether `gamma k <= h` holds.
    pub fn is_stable(&self) -> bool {
        self.lambda_squared <= 1.0 + 1e-12
    }

    /// `k^2 / (rho_t A)`: a force density (N/m) moves the next step by it times this.
    pub fn force_to_displacement(&self) -> f64 {
        self.time_step_s * self.time_step_s / self.material.linear_density_kg_per_m()
    }

    /// Computes the next level with no connection force, over the previous one: from here
    /// until [`Tube::advance`], the previous level is gone. The interior in the format `S`
    /// (its coefficients rounded to it), the two ends in f64, each rounded once to `S`.
    #[inline]
    pub fn compute_free_update(&mut self) {
        let n = self.intervals;
        let l2 = self.lambda_squared;
        let centre = 2.0 - 2.0 * l2;
        let u = &self.current[..=n];
        let out = &mut self.previous_then_next[..=n];
        let z = |level: &[S], p: usize| level[p].to_f64();
        out[0] = S::from_f64(centre * z(u, 0) + 2.0 * l2 * z(u, 1) - z(out, 0));
        S::update_tube_interior((&mut out[1..n], &u[..n - 1], &u[1..n], &u[2..=n]), S::from_f64(centre), S::from_f64(l2));
        let previous = z(out, n);
        let rhs = centre * z(u, n) + 2.0 * l2 * z(u, n - 1) - previous;
        out[n] = S::from_f64((rhs + self.open_previous_extra * previous) * self.open_norm);
    }

    /// Moves node `p` of the next level, from the membrane end on, by `scale * spread[p] /
    /// spacing_m` (rounded as that expression is, node by node): the connection's force
    /// spread over its nodes, never the open end. The sum is in f64, rounded once to `S`.
    /// One pass over a slice, which the compiler does in vector lanes; a call a node, each
    /// index checked, cost about 270 instructions a sample at the paper's 640 intervals.
    #[inline]
    pub fn add_spread_to_next(&mut self, spread: &[f64], scale: f64, spacing_m: f64) {
        debug_assert!(spread.len() < self.intervals, "the connection reaches the open end");
        for (z, s) in self.previous_then_next[..spread.len()].iter_mut().zip(spread) {
            *z = S::from_f64(z.to_f64() + scale * s / spacing_m);
        }
    }

    /// The next level, between [`Tube::compute_free_update`] and [`Tube::advance`].
    pub fn next_displacement(&self) -> &[S] {
        &self.previous_then_next[..=self.intervals]
    }

    pub fn current_displacement(&self) -> &[S] {
        &self.current[..=self.intervals]
    }

    /// The open end's displacement at the current level (the paper's output).
    pub fn open_end_displacement_m(&self) -> f64 {
        self.current[self.intervals].to_f64()
    }

    /// Moves time on: the next level becomes the current one, the current one the previous.
    #[inline]
    pub fn advance(&mut self) {
        std::mem::swap(&mut self.previous_then_next, &mut self.current);
    }

    /// Sets the current and previous levels (for tests), rounded to the format.
    pub fn set_state(&mut self, current: &[f64], previous: &[f64]) {
        let n = self.intervals;
        self.reset();
        for p in 0..=n {
            self.current[p] = S::from_f64(current[p]);
            self.previous_then_next[p] = S::from_f64(previous[p]);
        }
    }

    pub fn is_sane(&self, limit_m: f64) -> bool {
        self.current[..=self.intervals].iter().all(|z| z.to_f64().abs() < limit_m)
    }

    /// The stored energy between the previous and current levels (J), between steps:
    /// kinetic and potential energy with half weights at both ends, plus the open end's
    /// spring, `rho A gamma^2 alpha2 (zeta_N+^2 + zeta_N^2) / 4`. Only `alpha1` removes
    /// energy.
    pub fn energy_j(&self) -> f64 {
        let n = self.intervals;
        let h = self.spacing_m();
        let k = self.time_step_s;
        let rho_a = self.material.linear_density_kg_per_m();
        let gamma2 = self.material.wave_speed_mps.powi(2);
        let (current, previous) = (|p: usize| self.current[p].to_f64(), |p: usize| self.previous_then_next[p].to_f64());
        let mut kinetic = 0.0;
        for p in 0..=n {
            let weight = if p == 0 || p == n { 0.5 } else { 1.0 };
            let v = (current(p) - previous(p)) / k;
            kinetic += weight * v * v;
        }
        let mut potential = 0.0;
        for p in 0..n {
            potential += (current(p + 1) - current(p)) * (previous(p + 1) - previous(p));
        }
        let spring = 0.25 * rho_a * gamma2 * self.material.radiation_stiffness_per_m * (current(n).powi(2) + previous(n).powi(2));
        0.5 * rho_a * h * kinetic + 0.5 * rho_a * gamma2 * potential / h + spring
    }
}

/// The interior nodes' `(previous then next, left, centre, right)`, in the format `S`.
pub type InteriorLevels<'a, S> = (&'a mut [S], &'a [S], &'a [S], &'a [S]);

/// Implements [`TubeSample`] for a format: the interior nodes' update, the levels
/// cut to one length (each node's next level written over its previous one, which only it
/// reads), so the loop vectorises with no bounds checks. Compiled for AVX-512 and AVX2 as
/// well as the baseline and chosen once at run time by the CPU (`multiversion`), as the
/// string's stencil is: 8 or 4 lanes of f64 instead of SSE2's 2, twice as many of f32.
/// Where the CPU has FMA the multiplies and adds are fused,
/// `centre u + (l2 (left + right) - previous)` in two roundings instead of four (at the
/// paper's 640 intervals in f64, about 1,350 instructions a sample down to about 1,000);
/// elsewhere they are not, since a fused multiply-add without the instruction is a call.
/// So the paths agree to a few roundings, not to the bit.
macro_rules! tube_sample {
    ($format:ident) => {
        impl TubeSample for $format {
            #[inline]
            fn update_tube_interior(levels: InteriorLevels<Self>, centre: Self, l2: Self) {
                #[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
                fn dispatch(levels: InteriorLevels<$format>, centre: $format, l2: $format) {
                    let (out, left, u, right) = levels;
                    let n = out.len();
                    let (left, u, right) = (&left[..n], &u[..n], &right[..n]);
                    if multiversion::target::target_cfg_f!(target_feature = "fma") {
                        for j in 0..n {
                            out[j] = centre.mul_add(u[j], l2.mul_add(left[j] + right[j], -out[j]));
                        }
                    } else {
                        for j in 0..n {
                            out[j] = centre * u[j] + l2 * (left[j] + right[j]) - out[j];
                        }
                    }
                }
                dispatch(levels, centre, l2)
            }
        }
    };
}

tube_sample!(f64);
tube_sample!(f32);

#[cfg(test)]
mod tests {
    use super::*;

    /// The interior update in the format `S` (its epsilon `epsilon`) on whatever path this
    /// CPU takes (AVX-512 or AVX2 with FMA, or the baseline) keeps within a few roundings of
    /// the expression evaluated in f64 from the same stored values (as good as exact for
    /// f32), one node at a time, at every length (whole vectors and remainders alike).
    fn keeps_to_the_scalar_update<S: TubeSample>(epsilon: f64) {
        let mut uniform = crate::test_uniform(0x9E37_79B9_7F4A_7C15);
        let mut random = || S::from_f64((uniform() - 0.5) * 1e-3);
        let (centre, l2) = (S::from_f64(0.413), S::from_f64(0.7935));
        for count in [1usize, 3, 4, 7, 8, 15, 16, 17, 63, 200] {
            let u: Vec<S> = (0..count + 2).map(|_| random()).collect();
            let p: Vec<S> = (0..count).map(|_| random()).collect();
            let mut out = p.clone();
            S::update_tube_interior((&mut out, &u[..count], &u[1..count + 1], &u[2..]), centre, l2);
            let (c, l) = (centre.to_f64(), l2.to_f64());
            for j in 0..count {
                // Each evaluation rounds at most four times, each by half an epsilon of at
                // most the terms' sizes: the two stay within four epsilons of them.
                let (left, middle, right, previous) = (u[j].to_f64(), u[j + 1].to_f64(), u[j + 2].to_f64(), p[j].to_f64());
                let expected = c * middle + l * (left + right) - previous;
                let size = (c * middle).abs() + (l * (left + right)).abs() + previous.abs();
                let roundings = (out[j].to_f64() - expected).abs() / (epsilon * size);
                assert!(roundings <= 4.0, "node {j} of {count}: {roundings:.2} roundings from the scalar value");
            }
        }
    }

    #[test]
    fn the_dispatched_update_keeps_to_the_scalar_one() {
        keeps_to_the_scalar_update::<f64>(f64::EPSILON);
        keeps_to_the_scalar_update::<f32>(f64::from(f32::EPSILON));
    }
}

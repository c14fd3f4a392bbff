//! The damped membrane on a square grid, optionally carved into a circle by a staircase
//! mask, with Dirichlet conditions on every point outside it (onofrei2021 eqs. 1, 3, 17, 20;
//! `MODELS.md` section 3).
//!
//! `dtt u = c^2 Lap u - 2 sigma0 dt. u + 2 sigma1 dt- Lap u`, explicit thanks to the
//! backward difference on the frequency-dependent loss. As for the string, the update is
//! split: [`Membrane::compute_free_update`] steps with no external force, the drum adds its
//! spread forces to that step, then [`Membrane::advance`] moves time on.
//!
//! The grid is stored row by row, `(N + 1)^2` points with the Dirichlet frame included, and
//! each row's moving points form one contiguous span (a circle is convex), so the stencil
//! runs over plain slices the compiler vectorises and never visits a dead point.

/// The outline of the membrane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MembraneShape {
    /// Every interior point of the square moves.
    Square,
    /// Only points strictly inside the inscribed circle move (the staircase of Hamilton's
    /// thesis, onofrei2021 Fig. 3).
    Circle,
}

/// The membrane's physical description, apart from its grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MembraneMaterial {
    /// The side `L` of the square domain (the circle's diameter).
    pub side_m: f64,
    /// `rho_m H`, the mass per unit area.
    pub surface_density_kg_per_m2: f64,
}

impl Default for MembraneMaterial {
    /// onofrei2021 Table 1: 0.3 m, 1400 kg/m^3, 7 mm.
    fn default() -> Self {
        Self { side_m: 0.3, surface_density_kg_per_m2: 1400.0 * 0.007 }
    }
}

/// The smallest stable grid spacing, eq. 20: `h >= sqrt(2 c^2 k^2 + 8 sigma1 k)`.
pub fn min_grid_spacing_m(wave_speed_mps: f64, sigma1_m2_per_s: f64, time_step_s: f64) -> f64 {
    let ck = wave_speed_mps * time_step_s;
    (2.0 * ck * ck + 8.0 * sigma1_m2_per_s * time_step_s).sqrt()
}


/// The loss and wave speed of one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MembraneTuning {
    pub wave_speed_mps: f64,
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
}

/// The coefficients of `u+ = a u - b u- + c Lu - d Lu-` (`L` the unscaled 5-point
/// Laplacian), all divided through by `1 + sigma0 k`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct UpdateCoefficients {
    centre: f64,
    previous: f64,
    laplacian: f64,
    previous_laplacian: f64,
    /// `k^2 / (rho H (1 + sigma0 k))`: from a force density (N/m^2) to a displacement.
    force_to_displacement: f64,
}

/// A membrane with the state of three time levels.
pub struct Membrane {
    material: MembraneMaterial,
    shape: MembraneShape,
    intervals: usize,
    time_step_s: f64,
    tuning: MembraneTuning,
    coefficients: UpdateCoefficients,
    /// Per row `m`, the flat index range of its moving points (empty for the frame rows).
    spans: Box<[(usize, usize)]>,
    next: Box<[f64]>,
    current: Box<[f64]>,
    previous: Box<[f64]>,
    /// `L u` of the current level, written by the stencil, and of the previous level: the
    /// `sigma1` term needs both, and keeping the previous one saves a second stencil.
    laplacian_current: Box<[f64]>,
    laplacian_previous: Box<[f64]>,
    max_intervals: usize,
    /// How many leading entries of the five levels may be other than zero: a reset clears
    /// only those, not the whole capacity (hundreds of kB on the full grid), and nothing at
    /// all for a membrane still at rest.
    touched_len: usize,
}

impl Membrane {
    /// Allocates room for grids of up to `max_intervals` intervals a side. This is the only
    /// allocation; configuring and stepping never allocate.
    pub fn with_capacity(max_intervals: usize, material: MembraneMaterial, shape: MembraneShape, intervals: usize, time_step_s: f64) -> Self {
        assert!(max_intervals >= 2, "a membrane needs at least 2 intervals a side");
        let len = (max_intervals + 1) * (max_intervals + 1);
        let mut membrane = Self {
            material,
            shape,
            intervals: 2,
            time_step_s,
            tuning: MembraneTuning::default(),
            coefficients: UpdateCoefficients::default(),
            spans: vec![(0, 0); max_intervals + 1].into_boxed_slice(),
            next: vec![0.0; len].into_boxed_slice(),
            current: vec![0.0; len].into_boxed_slice(),
            previous: vec![0.0; len].into_boxed_slice(),
            laplacian_current: vec![0.0; len].into_boxed_slice(),
            laplacian_previous: vec![0.0; len].into_boxed_slice(),
            max_intervals,
            touched_len: 0,
        };
        membrane.configure(shape, intervals, time_step_s);
        membrane
    }

    /// Puts the membrane on a new grid of `intervals` a side (at most the capacity), at rest.
    pub fn configure(&mut self, shape: MembraneShape, intervals: usize, time_step_s: f64) {
        let n = intervals.clamp(2, self.max_intervals);
        self.shape = shape;
        self.intervals = n;
        self.time_step_s = time_step_s;
        let width = n + 1;
        let centre = n as f64 / 2.0;
        // Strictly inside the circle of radius N/2 (in grid units), so the frame stays fixed.
        let radius_squared = centre * centre;
        for m in 0..=self.max_intervals {
            self.spans[m] = (0, 0);
            if m == 0 || m >= n {
                continue;
            }
            let (first, last) = match shape {
                MembraneShape::Square => (1, n - 1),
                MembraneShape::Circle => {
                    let dy = m as f64 - centre;
                    let room = radius_squared - dy * dy;
                    if room <= 0.0 {
                        continue;
                    }
                    let half = room.sqrt();
                    // The smallest l with (l - centre)^2 < room, and the largest.
                    let mut first = (centre - half).ceil().max(1.0) as usize;
                    if (first as f64 - centre).powi(2) >= room {
                        first += 1;
                    }
                    let mut last = (centre + half).floor().min((n - 1) as f64) as usize;
                    if (last as f64 - centre).powi(2) >= room {
                        last = last.saturating_sub(1);
                    }
                    if first > last {
                        continue;
                    }
                    (first, last)
                }
            };
            self.spans[m] = (m * width + first, m * width + last + 1);
        }
        self.reset();
        let tuning = self.tuning;
        self.set_tuning(tuning);
    }

    /// Returns the membrane to rest: clears what has moved since the last reset.
    pub fn reset(&mut self) {
        let len = std::mem::take(&mut self.touched_len);
        for level in [&mut self.next, &mut self.current, &mut self.previous, &mut self.laplacian_current, &mut self.laplacian_previous] {
            level[..len].fill(0.0);
        }
    }

    /// Notes that the levels of the grid in use may move from now on.
    #[inline]
    fn touch(&mut self) {
        self.touched_len = self.touched_len.max((self.intervals + 1) * (self.intervals + 1));
    }

    pub fn material(&self) -> &MembraneMaterial {
        &self.material
    }

    pub fn shape(&self) -> MembraneShape {
        self.shape
    }

    /// `N`, the number of intervals along a side.
    pub fn intervals(&self) -> usize {
        self.intervals
    }

    /// `N + 1`, the row stride of the flat arrays.
    pub fn width(&self) -> usize {
        self.intervals + 1
    }

    pub fn spacing_m(&self) -> f64 {
        self.material.side_m / self.intervals as f64
    }

    pub fn time_step_s(&self) -> f64 {
        self.time_step_s
    }

    pub fn tuning(&self) -> &MembraneTuning {
        &self.tuning
    }

    /// The flat index of grid point `(l, m)` (`x = l h`, `y = m h`).
    #[inline]
    pub fn index(&self, l: usize, m: usize) -> usize {
        m * self.width() + l
    }

    /// Whether the point at this flat index moves (is inside the mask).
    pub fn is_moving(&self, index: usize) -> bool {
        let width = self.width();
        let m = index / width;
        m <= self.intervals && {
            let (start, end) = self.spans[m];
            (start..end).contains(&index)
        }
    }

    /// How many points move.
    pub fn moving_points(&self) -> usize {
        self.spans[..=self.intervals].iter().map(|(s, e)| e - s).sum()
    }

    /// Each row's flat index range of moving points, row `m` at position `m`.
    pub fn spans(&self) -> &[(usize, usize)] {
        &self.spans[..=self.intervals]
    }

    /// Sets the wave speed and losses for the next steps. Changing them between steps is
    /// safe as long as the grid was sized for the largest values (see [`min_grid_spacing_m`]).
    pub fn set_tuning(&mut self, tuning: MembraneTuning) {
        let k = self.time_step_s;
        let h = self.spacing_m();
        let lambda_squared = (tuning.wave_speed_mps * k / h).powi(2);
        let mu = 2.0 * tuning.sigma1_m2_per_s * k / (h * h);
        let norm = 1.0 / (1.0 + tuning.sigma0_per_s * k);
        self.tuning = tuning;
        self.coefficients = UpdateCoefficients {
            centre: 2.0 * norm,
            previous: (1.0 - tuning.sigma0_per_s * k) * norm,
            laplacian: (lambda_squared + mu) * norm,
            previous_laplacian: mu * norm,
            force_to_displacement: k * k * norm / self.material.surface_density_kg_per_m2,
        };
    }

    /// Whether the current tuning satisfies eq. 20 on this grid.
    pub fn is_stable(&self) -> bool {
        min_grid_spacing_m(self.tuning.wave_speed_mps, self.tuning.sigma1_m2_per_s, self.time_step_s) <= self.spacing_m() * (1.0 + 1e-12)
    }

    /// `k^2 / (rho H (1 + sigma0 k))`: a force density `F` (N/m^2) moves the next step by `F` times this.
    pub fn force_to_displacement(&self) -> f64 {
        self.coefficients.force_to_displacement
    }

    /// Computes the next time level with no external force.
    #[inline]
    pub fn compute_free_update(&mut self) {
        self.compute_free_update_and_weighted_sum(&[], 0..0);
    }

    /// Computes the next time level with no external force, and returns
    /// `sum(pattern[i] next[i])` over the moving points of `rows`: the same number, to the
    /// bit, as [`Membrane::weighted_sum`] of the new level, summed while the level is written
    /// instead of in a second pass over it. `pattern` may be empty when `rows` is.
    #[inline]
    pub fn compute_free_update_and_weighted_sum(&mut self, pattern: &[f64], rows: std::ops::Range<usize>) -> f64 {
        self.touch();
        let (c, width) = (self.coefficients, self.intervals + 1);
        let (spans, levels) = self.spans_and_levels();
        update_rows_and_dot(c, spans, width, levels, pattern, rows)
    }

    /// The moving spans of the grid in use, and the levels one update reads and writes.
    fn spans_and_levels(&mut self) -> (&[(usize, usize)], Levels<'_>) {
        let levels = Levels {
            next: &mut self.next,
            laplacian_current: &mut self.laplacian_current,
            laplacian_previous: &self.laplacian_previous,
            current: &self.current,
            previous: &self.previous,
        };
        (&self.spans[..=self.intervals], levels)
    }

    /// [`Membrane::compute_free_update_and_weighted_sum`] on the baseline path, whatever
    /// the CPU, for the tests that compare the paths.
    #[cfg(test)]
    fn compute_free_update_and_weighted_sum_on_baseline(&mut self, pattern: &[f64], rows: std::ops::Range<usize>) -> f64 {
        self.touch();
        let (c, width) = (self.coefficients, self.intervals + 1);
        let (spans, levels) = self.spans_and_levels();
        update_rows_then_dot(c, spans, width, levels, pattern, rows)
    }

    /// The next time level (free update plus whatever forces were added).
    pub fn next_displacement(&self) -> &[f64] {
        &self.next
    }

    /// Moves one point of the next time level. Callers only pass moving points.
    #[inline]
    pub fn add_to_next(&mut self, index: usize, displacement_m: f64) {
        self.touch();
        self.next[index] += displacement_m;
    }

    /// Adds `scale * pattern[i]` to the next time level over the rows `rows` (each row's
    /// moving span only).
    #[inline]
    pub fn add_pattern_to_next(&mut self, pattern: &[f64], rows: std::ops::Range<usize>, scale: f64) {
        self.touch();
        add_scaled(&mut self.next, pattern, &self.spans[rows], scale);
    }

    /// `sum(pattern[i] u[i])` over the moving points of `rows`, for `u` one of the time levels.
    #[inline]
    pub fn weighted_sum(&self, level: &[f64], pattern: &[f64], rows: std::ops::Range<usize>) -> f64 {
        dot(level, pattern, &self.spans[rows])
    }

    pub fn current_displacement(&self) -> &[f64] {
        &self.current
    }

    pub fn previous_displacement(&self) -> &[f64] {
        &self.previous
    }

    /// Moves time on: the next level becomes the current one.
    #[inline]
    pub fn advance(&mut self) {
        std::mem::swap(&mut self.previous, &mut self.current);
        std::mem::swap(&mut self.current, &mut self.next);
        std::mem::swap(&mut self.laplacian_previous, &mut self.laplacian_current);
    }

    /// Sets the current and previous levels (for tests and initial conditions). Values at
    /// fixed points are ignored.
    pub fn set_state(&mut self, current: &[f64], previous: &[f64]) {
        self.reset();
        self.touch();
        for m in 0..=self.intervals {
            let (start, end) = self.spans[m];
            self.current[start..end].copy_from_slice(&current[start..end]);
            self.previous[start..end].copy_from_slice(&previous[start..end]);
        }
        let width = self.width();
        for m in 0..=self.intervals {
            let (start, end) = self.spans[m];
            for i in start..end {
                let p = &self.previous;
                self.laplacian_previous[i] = p[i - 1] + p[i + 1] + p[i - width] + p[i + width] - 4.0 * p[i];
            }
        }
    }

    /// Whether every displacement is finite and below `limit_m`.
    pub fn is_sane(&self, limit_m: f64) -> bool {
        self.spans[..=self.intervals].iter().all(|&(s, e)| self.current[s..e].iter().all(|u| u.abs() < limit_m))
    }

    /// The stored energy between the previous and current levels, for a lossless membrane:
    /// `rho H/2 |dt- u|^2 + T/2 <grad u, grad u->` with `T = c^2 rho H` (J).
    pub fn energy_j(&self) -> f64 {
        let n = self.intervals;
        let width = self.width();
        let k = self.time_step_s;
        let h = self.spacing_m();
        let rho = self.material.surface_density_kg_per_m2;
        let tension = self.tuning.wave_speed_mps.powi(2) * rho;
        let mut kinetic = 0.0;
        for &(s, e) in self.spans() {
            for i in s..e {
                let v = (self.current[i] - self.previous[i]) / k;
                kinetic += v * v;
            }
        }
        let mut potential = 0.0;
        for m in 0..=n {
            for l in 0..=n {
                let i = m * width + l;
                if l < n {
                    potential += (self.current[i + 1] - self.current[i]) * (self.previous[i + 1] - self.previous[i]);
                }
                if m < n {
                    potential += (self.current[i + width] - self.current[i]) * (self.previous[i + width] - self.previous[i]);
                }
            }
        }
        0.5 * rho * h * h * kinetic + 0.5 * tension * potential
    }
}

/// The arrays one update reads and writes.
struct Levels<'a> {
    next: &'a mut [f64],
    laplacian_current: &'a mut [f64],
    laplacian_previous: &'a [f64],
    current: &'a [f64],
    previous: &'a [f64],
}

/// The update over every row's moving span, and over the rows `dot_rows` the dot product
/// of the new level with `pattern`: [`avx2::update_rows`] where the CPU has AVX2, which sums
/// the product as it writes, and elsewhere [`update_rows_then_dot`]. `multiversion` chooses
/// once at run time, and only its AVX2 build calls the AVX2 loop.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn update_rows_and_dot(c: UpdateCoefficients, spans: &[(usize, usize)], width: usize, levels: Levels, pattern: &[f64], dot_rows: std::ops::Range<usize>) -> f64 {
    multiversion::target::match_target! {
        "x86_64+avx2" => avx2::update_rows(c, spans, width, levels, pattern, dot_rows),
        _ => update_rows_then_dot(c, spans, width, levels, pattern, dot_rows),
    }
}

/// [`update_rows`], then the dot product of the new level with `pattern` over `dot_rows`
/// (0 when there are none): the baseline of [`update_rows_and_dot`].
#[inline(always)]
fn update_rows_then_dot(c: UpdateCoefficients, spans: &[(usize, usize)], width: usize, mut levels: Levels, pattern: &[f64], dot_rows: std::ops::Range<usize>) -> f64 {
    update_rows(c, spans, width, &mut levels);
    if dot_rows.is_empty() {
        return 0.0;
    }
    dot(levels.next, pattern, &spans[dot_rows])
}

/// The update over every row's moving span, on a CPU without AVX2. [`avx2::update_rows`]
/// performs the same operations in the same order, so both give the same bits.
#[inline(always)]
fn update_rows(c: UpdateCoefficients, spans: &[(usize, usize)], width: usize, levels: &mut Levels) {
    for &(start, end) in spans {
        if start == end {
            continue;
        }
        let n = end - start;
        let out = &mut levels.next[start..][..n];
        let lap_out = &mut levels.laplacian_current[start..][..n];
        let lap_previous = &levels.laplacian_previous[start..][..n];
        let previous = &levels.previous[start..][..n];
        let u = &levels.current[start..][..n];
        let left = &levels.current[start - 1..][..n];
        let right = &levels.current[start + 1..][..n];
        let up = &levels.current[start - width..][..n];
        let down = &levels.current[start + width..][..n];
        for j in 0..n {
            (lap_out[j], out[j]) = point(c, u[j], left[j], right[j], up[j], down[j], previous[j], lap_previous[j]);
        }
    }
}

/// One point of the update: its Laplacian `L u` and its next displacement.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn point(c: UpdateCoefficients, u: f64, left: f64, right: f64, up: f64, down: f64, previous: f64, lap_previous: f64) -> (f64, f64) {
    let lap = left + right + up + down - 4.0 * u;
    (lap, c.centre * u - c.previous * previous + c.laplacian * lap - c.previous_laplacian * lap_previous)
}

/// `out += scale * pattern` over the spans. Compiled for AVX-512 and AVX2 as well as the
/// baseline and chosen once at run time (`multiversion`); the compiler vectorises this one
/// well (two slices a row, one written), and the same operations give the same bits.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn add_scaled(out: &mut [f64], pattern: &[f64], spans: &[(usize, usize)], scale: f64) {
    for &(start, end) in spans {
        for (o, w) in out[start..end].iter_mut().zip(&pattern[start..end]) {
            *o += scale * w;
        }
    }
}

/// A dot product over the spans with eight partial sums in a fixed order: the product at
/// `j` goes to partial sum `(j - start) % 8` of its span, and the partial sums are added
/// pairwise at the end. [`avx2::update_rows`] keeps the same sums. Compiled for AVX-512
/// and AVX2 as well as the baseline and chosen once at run time (`multiversion`): off the
/// audio path (the drum's step sums its patch in [`update_rows_and_dot`]), so the
/// compiler's own vectorisation does.
#[multiversion::multiversion(targets("x86_64+avx512f+avx2+fma", "x86_64+avx2+fma", "aarch64+neon"))]
fn dot(level: &[f64], pattern: &[f64], spans: &[(usize, usize)]) -> f64 {
    let mut lanes = [0.0; 8];
    for &(start, end) in spans {
        let u = &level[start..end];
        let w = &pattern[start..end];
        let mut u_chunks = u.chunks_exact(8);
        let mut w_chunks = w.chunks_exact(8);
        for (a, b) in (&mut u_chunks).zip(&mut w_chunks) {
            for lane in 0..8 {
                lanes[lane] += a[lane] * b[lane];
            }
        }
        for (lane, (a, b)) in u_chunks.remainder().iter().zip(w_chunks.remainder()).enumerate() {
            lanes[lane] += a * b;
        }
    }
    sum_lanes(&lanes)
}

#[inline(always)]
fn sum_lanes(lanes: &[f64; 8]) -> f64 {
    ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]))
}

/// The membrane's loops in AVX2 lanes, four points at a time, written with `std::arch`
/// rather than left to the compiler: its own vectorisation of [`update_rows`] checked, for
/// every row, each of the nine slices' bounds and whether the two it writes overlap the
/// seven it reads (about 130 instructions a row, 65 rows), and did a row's last one to
/// three points in a scalar loop of 19 instructions each, and the dot product with the
/// connection's patch was a second pass, in SSE2 halves with scalar shuffles: the update
/// now sums it as it writes. It performs the baseline path's operations in the same order,
/// with no fused multiply-add, so it gives the same bits (the unit tests below compare
/// them). It is a safe function for AVX2 code only: the compiler lets only a caller built
/// for AVX2 call it ([`update_rows_and_dot`]'s AVX2 build, which `multiversion` runs only
/// where the CPU has AVX2).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{point, sum_lanes, Levels, UpdateCoefficients};
    use std::arch::x86_64::*;

    /// Four points of the update from `j` (a flat index): stores their `L u` and next
    /// displacements and returns the displacements.
    ///
    /// # Safety
    /// AVX2, and `j - width .. j + width + 4` within every level.
    #[inline(always)]
    unsafe fn four_points(k: &Coefficients, levels: &Pointers, width: usize, j: usize) -> __m256d {
        let u = _mm256_loadu_pd(levels.current.add(j));
        let left = _mm256_loadu_pd(levels.current.add(j - 1));
        let right = _mm256_loadu_pd(levels.current.add(j + 1));
        let up = _mm256_loadu_pd(levels.current.add(j - width));
        let down = _mm256_loadu_pd(levels.current.add(j + width));
        let lap = _mm256_sub_pd(_mm256_add_pd(_mm256_add_pd(_mm256_add_pd(left, right), up), down), _mm256_mul_pd(k.four, u));
        _mm256_storeu_pd(levels.laplacian_current.add(j), lap);
        let previous = _mm256_loadu_pd(levels.previous.add(j));
        let lap_previous = _mm256_loadu_pd(levels.laplacian_previous.add(j));
        let out = _mm256_sub_pd(
            _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(k.centre, u), _mm256_mul_pd(k.previous, previous)), _mm256_mul_pd(k.laplacian, lap)),
            _mm256_mul_pd(k.previous_laplacian, lap_previous),
        );
        _mm256_storeu_pd(levels.next.add(j), out);
        out
    }

    /// The update's coefficients in every lane.
    struct Coefficients {
        centre: __m256d,
        previous: __m256d,
        laplacian: __m256d,
        previous_laplacian: __m256d,
        four: __m256d,
    }

    struct Pointers {
        next: *mut f64,
        laplacian_current: *mut f64,
        laplacian_previous: *const f64,
        current: *const f64,
        previous: *const f64,
    }

    /// [`super::update_rows`], and over the rows `dot_rows` the dot product of the new level
    /// with `pattern` ([`super::dot`]'s partial sums, in its order).
    #[target_feature(enable = "avx2")]
    pub(super) fn update_rows(
        c: UpdateCoefficients,
        spans: &[(usize, usize)],
        width: usize,
        levels: Levels,
        pattern: &[f64],
        dot_rows: std::ops::Range<usize>,
    ) -> f64 {
        let len = levels.current.len();
        assert!(levels.next.len() == len && levels.laplacian_current.len() == len && levels.laplacian_previous.len() == len && levels.previous.len() == len);
        let k = Coefficients {
            centre: _mm256_set1_pd(c.centre),
            previous: _mm256_set1_pd(c.previous),
            laplacian: _mm256_set1_pd(c.laplacian),
            previous_laplacian: _mm256_set1_pd(c.previous_laplacian),
            four: _mm256_set1_pd(4.0),
        };
        let p = Pointers {
            next: levels.next.as_mut_ptr(),
            laplacian_current: levels.laplacian_current.as_mut_ptr(),
            laplacian_previous: levels.laplacian_previous.as_ptr(),
            current: levels.current.as_ptr(),
            previous: levels.previous.as_ptr(),
        };
        let mut lanes = [0.0; 8];
        for (row, &(start, end)) in spans.iter().enumerate() {
            if start == end {
                continue;
            }
            assert!(start > width && end + width <= len && start < end);
            let n = end - start;
            let quads = n / 4;
            // SAFETY: every point's four neighbours lie in the levels (a moving point is
            // never on the frame, as the assertion above checks), and the patch covers each
            // row it sums (below), so every load and store is in bounds.
            unsafe {
                if dot_rows.contains(&row) {
                    assert!(end <= pattern.len());
                    let w = pattern.as_ptr().add(start);
                    let mut low = _mm256_loadu_pd(lanes.as_ptr());
                    let mut high = _mm256_loadu_pd(lanes.as_ptr().add(4));
                    let mut q = 0;
                    while q + 2 <= quads {
                        let a = four_points(&k, &p, width, start + 4 * q);
                        low = _mm256_add_pd(low, _mm256_mul_pd(a, _mm256_loadu_pd(w.add(4 * q))));
                        let b = four_points(&k, &p, width, start + 4 * q + 4);
                        high = _mm256_add_pd(high, _mm256_mul_pd(b, _mm256_loadu_pd(w.add(4 * q + 4))));
                        q += 2;
                    }
                    if q < quads {
                        let a = four_points(&k, &p, width, start + 4 * q);
                        low = _mm256_add_pd(low, _mm256_mul_pd(a, _mm256_loadu_pd(w.add(4 * q))));
                    }
                    _mm256_storeu_pd(lanes.as_mut_ptr(), low);
                    _mm256_storeu_pd(lanes.as_mut_ptr().add(4), high);
                    for j in 4 * quads..n {
                        let out = tail_point(c, &p, width, start + j);
                        lanes[j % 8] += out * *w.add(j);
                    }
                } else {
                    for q in 0..quads {
                        four_points(&k, &p, width, start + 4 * q);
                    }
                    for j in 4 * quads..n {
                        tail_point(c, &p, width, start + j);
                    }
                }
            }
        }
        if dot_rows.is_empty() {
            return 0.0;
        }
        sum_lanes(&lanes)
    }

    /// One point of the update at flat index `j`, in scalar arithmetic.
    ///
    /// # Safety
    /// As [`four_points`], for one point.
    #[inline(always)]
    unsafe fn tail_point(c: UpdateCoefficients, p: &Pointers, width: usize, j: usize) -> f64 {
        let u = *p.current.add(j);
        let (lap, out) = point(c, u, *p.current.add(j - 1), *p.current.add(j + 1), *p.current.add(j - width), *p.current.add(j + width), *p.previous.add(j), *p.laplacian_previous.add(j));
        *p.laplacian_current.add(j) = lap;
        *p.next.add(j) = out;
        out
    }
}

/// The bilinear interpolant `I_B` at a point of the membrane, eq. 18, with its weights on
/// fixed points dropped (a force there is taken by the rim).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BilinearPoint {
    pub indices: [usize; 4],
    pub weights: [f64; 4],
}

impl BilinearPoint {
    /// The interpolant at `(x, y)` in metres from the grid's corner.
    pub fn new(membrane: &Membrane, x_m: f64, y_m: f64) -> Self {
        let h = membrane.spacing_m();
        let n = membrane.intervals();
        let gx = (x_m / h).clamp(0.0, n as f64 - 1e-9);
        let gy = (y_m / h).clamp(0.0, n as f64 - 1e-9);
        let l = (gx.floor() as usize).min(n - 1);
        let m = (gy.floor() as usize).min(n - 1);
        let ax = gx - l as f64;
        let ay = gy - m as f64;
        let indices = [membrane.index(l, m), membrane.index(l, m + 1), membrane.index(l + 1, m), membrane.index(l + 1, m + 1)];
        let mut weights = [(1.0 - ax) * (1.0 - ay), (1.0 - ax) * ay, ax * (1.0 - ay), ax * ay];
        for (w, &i) in weights.iter_mut().zip(&indices) {
            if !membrane.is_moving(i) {
                *w = 0.0;
            }
        }
        Self { indices, weights }
    }

    #[inline]
    pub fn interpolate(&self, level: &[f64]) -> f64 {
        self.weights.iter().zip(&self.indices).map(|(w, &i)| w * level[i]).sum()
    }

    /// `sum(w^2)`: `h^2 (I_B . J_B)`.
    pub fn sum_of_squares(&self) -> f64 {
        self.weights.iter().map(|w| w * w).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reset clears only what moved, yet every level of every grid is at rest after it:
    /// played on a large grid, put on a small one and back, nothing of the large one's
    /// motion is left.
    #[test]
    fn a_reset_leaves_every_grid_at_rest() {
        let k = 1.0 / 44_100.0;
        let mut m = Membrane::with_capacity(40, MembraneMaterial::default(), MembraneShape::Square, 40, k);
        let centre = m.index(20, 20);
        for _ in 0..50 {
            m.compute_free_update();
            m.add_to_next(centre, 1e-4);
            m.advance();
        }
        assert!(m.current_displacement().iter().any(|u| *u != 0.0));
        m.configure(MembraneShape::Square, 10, k);
        for _ in 0..5 {
            m.compute_free_update();
            m.add_to_next(m.index(5, 5), 1e-4);
            m.advance();
        }
        m.configure(MembraneShape::Square, 40, k);
        let at_rest = |m: &Membrane| m.next.iter().chain(&*m.current).chain(&*m.previous).chain(&*m.laplacian_current).chain(&*m.laplacian_previous).all(|u| *u == 0.0);
        assert!(at_rest(&m), "motion of an earlier grid survived a reset");
        // A membrane at rest has nothing to clear.
        m.reset();
        assert_eq!(m.touched_len, 0);
        assert!(at_rest(&m));
    }

    /// The path this CPU takes (the AVX2 loop where it has AVX2) gives the baseline's bits:
    /// the next level, its Laplacian and the dot product summed with it; the dot product
    /// alone gives the summed one's bits, and the pattern added to the level gives the
    /// scalar expression's, on grids whose rows leave every remainder of four and of eight,
    /// over all rows and a few.
    #[test]
    fn every_path_gives_the_same_bits() {
        let mut uniform = crate::test_uniform(0x2545_f491_4f6c_dd1d);
        let mut random = move || uniform() - 0.5;
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for intervals in [17, 30, 32, 64, 65] {
            for shape in [MembraneShape::Circle, MembraneShape::Square] {
                let k = 1.0 / 48_000.0;
                let mut membranes = [(); 2].map(|()| {
                    let mut m = Membrane::with_capacity(70, MembraneMaterial::default(), shape, intervals, k);
                    m.set_tuning(MembraneTuning { wave_speed_mps: 80.0, sigma0_per_s: 1.3, sigma1_m2_per_s: 5e-4 });
                    m
                });
                let len = membranes[0].current.len();
                let levels: Vec<Vec<f64>> = (0..3).map(|_| (0..len).map(|_| random() * 1e-4).collect()).collect();
                let pattern: Vec<f64> = (0..len).map(|_| random()).collect();
                for m in &mut membranes {
                    m.current.copy_from_slice(&levels[0]);
                    m.previous.copy_from_slice(&levels[1]);
                    m.laplacian_previous.copy_from_slice(&levels[2]);
                }
                for rows in [0..intervals + 1, 3..intervals / 2, 0..0] {
                    let [dispatched, baseline] = &mut membranes;
                    let sums = [dispatched.compute_free_update_and_weighted_sum(&pattern, rows.clone()), baseline.compute_free_update_and_weighted_sum_on_baseline(&pattern, rows.clone())];
                    assert_eq!(sums[0].to_bits(), sums[1].to_bits(), "{intervals} {shape:?} {rows:?}");
                    if !rows.is_empty() {
                        let alone = dispatched.weighted_sum(&dispatched.next, &pattern, rows.clone());
                        assert_eq!(alone.to_bits(), sums[0].to_bits());
                    }
                    assert_eq!(bits(&dispatched.next), bits(&baseline.next));
                    assert_eq!(bits(&dispatched.laplacian_current), bits(&baseline.laplacian_current));
                    assert!(dispatched.next.iter().any(|&u| u != 0.0));
                }
                let m = &mut membranes[0];
                let before = m.next.clone();
                m.add_pattern_to_next(&pattern, 2..intervals - 1, 0.37);
                for (row, &(start, end)) in m.spans().iter().enumerate() {
                    for i in start..end {
                        let expected = if (2..intervals - 1).contains(&row) { before[i] + 0.37 * pattern[i] } else { before[i] };
                        assert_eq!(m.next[i].to_bits(), expected.to_bits(), "point {i} of row {row}");
                    }
                }
            }
        }
    }

    #[test]
    fn circle_mask_is_symmetric_and_inside() {
        let m = Membrane::with_capacity(40, MembraneMaterial::default(), MembraneShape::Circle, 40, 1.0 / 44_100.0);
        let n = m.intervals();
        let centre = n as f64 / 2.0;
        let mut count = 0;
        for row in 0..=n {
            for l in 0..=n {
                let moving = m.is_moving(m.index(l, row));
                let inside = (l as f64 - centre).powi(2) + (row as f64 - centre).powi(2) < centre * centre;
                assert_eq!(moving, inside && l > 0 && row > 0 && l < n && row < n, "({l}, {row})");
                assert_eq!(moving, m.is_moving(m.index(n - l, row)));
                assert_eq!(moving, m.is_moving(m.index(row, l)));
                count += moving as usize;
            }
        }
        assert_eq!(count, m.moving_points());
        // The staircase area is within a few percent of the circle's.
        let area = count as f64;
        let circle = std::f64::consts::PI * centre * centre;
        assert!((area / circle - 1.0).abs() < 0.05, "{area} vs {circle}");
    }

    #[test]
    fn bilinear_weights_sum_to_one_inside() {
        let m = Membrane::with_capacity(30, MembraneMaterial::default(), MembraneShape::Circle, 30, 1.0 / 44_100.0);
        let p = BilinearPoint::new(&m, 0.137, 0.151);
        assert!((p.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let level: Vec<f64> = (0..31 * 31).map(|i| ((i % 31) as f64) * 0.01).collect();
        // Linear in x: interpolation is exact (x = 0.137 m is 13.7 intervals).
        assert!((p.interpolate(&level) - 0.137).abs() < 1e-12);
        // At the rim, weights on fixed points are dropped.
        let rim = BilinearPoint::new(&m, 0.005, 0.15);
        assert!(rim.weights.iter().sum::<f64>() < 1.0);
    }
}

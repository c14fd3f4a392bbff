//! Small dense linear solves for the per-sample Newton-Raphson iterations: the 2x2 system of
//! willemsen2019's bow (eqs. 12-20) and the MxM contact system of matusiak2025's
//! finite-width bow (`MODELS.md` sections 1 and 2); and the bracketed scalar root finder
//! the fallbacks use when Newton fails.

use crate::friction::elementary::finite;

/// Solves `[a11 a12; a21 a22] x = [b1; b2]` by Cramer's rule. Returns `None` when the matrix
/// is singular to working precision, so callers can take their fallback.
#[inline]
pub fn solve_2x2(a11: f64, a12: f64, a21: f64, a22: f64, b1: f64, b2: f64) -> Option<(f64, f64)> {
    let det = a11 * a22 - a12 * a21;
    let scale = (a11.abs() + a12.abs()) * (a21.abs() + a22.abs());
    if !finite(det) || det.abs() <= 1e-300 || det.abs() <= 1e-14 * scale {
        return None;
    }
    let x1 = (b1 * a22 - a12 * b2) / det;
    let x2 = (a11 * b2 - a21 * b1) / det;
    (finite(x1) && finite(x2)).then_some((x1, x2))
}

/// How many Newton iterations each solve took, for the statistics the tests check.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationStats {
    /// `histogram[i]` counts solves that took `i` iterations (the last bin collects the cap).
    pub histogram: [u64; 64],
    /// Solves that failed to converge within the cap and took the fallback.
    pub fallbacks: u64,
    /// The most friction-law evaluations one solve took (where the solver counts them).
    pub max_evaluations: usize,
}

impl Default for IterationStats {
    fn default() -> Self {
        Self { histogram: [0; 64], fallbacks: 0, max_evaluations: 0 }
    }
}

impl IterationStats {
    pub fn record(&mut self, iterations: usize) {
        let bin = iterations.min(self.histogram.len() - 1);
        self.histogram[bin] += 1;
    }

    pub fn merge(&mut self, other: &IterationStats) {
        for (a, b) in self.histogram.iter_mut().zip(other.histogram.iter()) {
            *a += b;
        }
        self.fallbacks += other.fallbacks;
        self.max_evaluations = self.max_evaluations.max(other.max_evaluations);
    }

    pub fn solves(&self) -> u64 {
        self.histogram.iter().sum()
    }

    /// The median number of iterations, or `None` when nothing was solved.
    pub fn median(&self) -> Option<usize> {
        let total = self.solves();
        if total == 0 {
            return None;
        }
        let mut seen = 0;
        for (iterations, count) in self.histogram.iter().enumerate() {
            seen += count;
            if 2 * seen >= total {
                return Some(iterations);
            }
        }
        None
    }

    pub fn max(&self) -> Option<usize> {
        self.histogram.iter().rposition(|&c| c > 0)
    }

    /// The mean number of iterations, or `None` when nothing was solved.
    pub fn mean(&self) -> Option<f64> {
        let total = self.solves();
        let sum: u64 = self.histogram.iter().enumerate().map(|(iterations, &count)| iterations as u64 * count).sum();
        (total > 0).then(|| sum as f64 / total as f64)
    }

    /// The fraction of solves that took at most `iterations` (0 when nothing was solved).
    pub fn fraction_within(&self, iterations: usize) -> f64 {
        let within: u64 = self.histogram.iter().take(iterations + 1).sum();
        within as f64 / self.solves().max(1) as f64
    }
}

/// Solves `a x = b` for the leading `n x n` block of `a` by Gaussian elimination with
/// partial pivoting, in place: on return `b[..n]` holds `x` and `a` is overwritten. Returns
/// `false`, leaving `b` unusable, when a pivot is zero or negligible against its column
/// (singular to working precision) or the result is not finite, so callers can take their
/// fallback. Fixed-size storage: no allocation, `O(n^3)` with `n <= N`. Always inlined, so
/// that where `n` is a constant (the finite-width bow's solve for each number of points)
/// its loops unroll.
#[inline(always)]
pub fn solve_dense_in_place<const N: usize>(a: &mut [[f64; N]; N], b: &mut [f64; N], n: usize) -> bool {
    debug_assert!(n <= N);
    // Every loop runs over `0..N` and skips what lies outside the triangle being worked
    // (`col + 1 .. n`): bounds the compiler knows, so that it unrolls each loop whole and
    // drops the skipped steps, where the triangle's own ranges kept a loop of a few steps
    // with its counter. The same operations in the same order.
    for col in 0..N {
        if col >= n {
            break;
        }
        let mut pivot_row = col;
        let mut pivot_abs = a[col][col].abs();
        for row in 0..N {
            if row <= col || row >= n {
                continue;
            }
            let x = a[row][col].abs();
            if x > pivot_abs {
                pivot_abs = x;
                pivot_row = row;
            }
        }
        let mut row_scale = 0.0f64;
        for c in 0..N {
            if c < n {
                row_scale = row_scale.max(a[pivot_row][c].abs());
            }
        }
        if !(pivot_abs > 1e-300) || pivot_abs <= 1e-14 * row_scale {
            return false;
        }
        if pivot_row != col {
            a.swap(pivot_row, col);
            b.swap(pivot_row, col);
        }
        let inverse = 1.0 / a[col][col];
        for row in 0..N {
            if row <= col || row >= n {
                continue;
            }
            let factor = a[row][col] * inverse;
            if factor != 0.0 {
                for c in 0..N {
                    if c > col && c < n {
                        a[row][c] -= factor * a[col][c];
                    }
                }
                b[row] -= factor * b[col];
            }
        }
    }
    for row in (0..N).rev() {
        if row >= n {
            continue;
        }
        let mut sum = b[row];
        for c in 0..N {
            if c > row && c < n {
                sum -= a[row][c] * b[c];
            }
        }
        b[row] = sum / a[row][row];
    }
    let mut finite = true;
    for x in &b[..n] {
        finite &= x.is_finite();
    }
    finite
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_rejects_singular() {
        let (x, y) = solve_2x2(2.0, 1.0, 1.0, 3.0, 5.0, 10.0).unwrap();
        assert!((x - 1.0).abs() < 1e-12 && (y - 3.0).abs() < 1e-12);
        assert!(solve_2x2(1.0, 2.0, 2.0, 4.0, 1.0, 1.0).is_none());
    }

    #[test]
    fn median_mean_and_shares_of_a_histogram() {
        let mut s = IterationStats::default();
        for i in [2, 3, 3, 4, 9] {
            s.record(i);
        }
        assert_eq!(s.median(), Some(3));
        assert_eq!(s.max(), Some(9));
        assert_eq!(s.mean(), Some(21.0 / 5.0));
        assert_eq!(s.fraction_within(3), 0.6);
        assert_eq!(s.fraction_within(1), 0.0);
        assert_eq!(s.fraction_within(100), 1.0);
        assert_eq!(IterationStats::default().mean(), None);
        assert_eq!(IterationStats::default().fraction_within(3), 0.0);
    }

    #[test]
    fn dense_solve_matches_a_known_system_and_rejects_singular() {
        let mut a = [[0.0; 4]; 4];
        let rows = [[0.0, 2.0, 1.0, 0.0], [1.0, 1.0, 0.0, 3.0], [4.0, 0.0, 1.0, 1.0], [0.0, 1.0, 5.0, 2.0]];
        let x = [1.0, -2.0, 0.5, 3.0];
        let mut b = [0.0; 4];
        for i in 0..4 {
            a[i] = rows[i];
            b[i] = (0..4).map(|j| rows[i][j] * x[j]).sum();
        }
        assert!(solve_dense_in_place(&mut a, &mut b, 4));
        for i in 0..4 {
            assert!((b[i] - x[i]).abs() < 1e-12, "{b:?}");
        }
        // Only the leading block is used.
        let mut a = [[1.0, 2.0, 9.0], [3.0, 4.0, 9.0], [9.0, 9.0, 0.0]];
        let mut b = [5.0, 11.0, 7.0];
        assert!(solve_dense_in_place(&mut a, &mut b, 2));
        assert!((b[0] - 1.0).abs() < 1e-12 && (b[1] - 2.0).abs() < 1e-12);
        let mut a = [[1.0, 2.0], [2.0, 4.0]];
        let mut b = [1.0, 1.0];
        assert!(!solve_dense_in_place(&mut a, &mut b, 2));
    }
}

/// The root of `f` between `a` and `b`, where `f(a)` and `f(b)` (given as `fa`, `fb`) do not
/// share a sign, by the Illinois variant of regula falsi (Dowell and Jarratt 1971): each step
/// takes the secant through the bracket's ends and keeps the root bracketed, and halving the
/// value kept at an end that stays twice in a row makes it converge superlinearly. It stops
/// when the bracket is narrower than `tolerance` or after `max_evaluations` evaluations of
/// `f`, and returns the point where `|f|` was smallest. Costs about a tenth of bisection to
/// the same precision on a smooth `f`. It also stops as soon as `|f|` falls to
/// `residual_tolerance` (0 to ask for the bracket alone).
#[allow(clippy::too_many_arguments)]
pub fn illinois(mut f: impl FnMut(f64) -> f64, mut a: f64, mut b: f64, mut fa: f64, mut fb: f64, tolerance: f64, residual_tolerance: f64, max_evaluations: usize) -> f64 {
    let (mut best, mut best_residual) = if fa.abs() <= fb.abs() { (a, fa.abs()) } else { (b, fb.abs()) };
    if fa.abs() <= residual_tolerance || fb.abs() <= residual_tolerance {
        return best;
    }
    // Which end moved last: +1 for `a`, -1 for `b`.
    let mut moved = 0;
    for _ in 0..max_evaluations {
        if (b - a).abs() <= tolerance {
            break;
        }
        let secant = (a * fb - b * fa) / (fb - fa);
        let c = if secant.is_finite() && secant > a.min(b) && secant < a.max(b) { secant } else { 0.5 * (a + b) };
        let fc = f(c);
        if !fc.is_finite() {
            break;
        }
        if fc.abs() < best_residual {
            (best, best_residual) = (c, fc.abs());
        }
        if fc.abs() <= residual_tolerance {
            break;
        }
        if (fc > 0.0) == (fb > 0.0) {
            (b, fb) = (c, fc);
            if moved == -1 {
                fa *= 0.5;
            }
            moved = -1;
        } else {
            (a, fa) = (c, fc);
            if moved == 1 {
                fb *= 0.5;
            }
            moved = 1;
        }
    }
    best
}

#[cfg(test)]
mod illinois_tests {
    use super::illinois;

    #[test]
    fn finds_roots_of_smooth_and_kinked_functions_within_the_bracket() {
        let mut evaluations = 0;
        let root = illinois(|x| { evaluations += 1; x * x * x - 2.0 }, 0.0, 2.0, -2.0, 6.0, 1e-14, 0.0, 100);
        assert!((root - 2f64.cbrt()).abs() < 1e-12, "{root}");
        assert!(evaluations < 20, "{evaluations} evaluations");
        // A decreasing function with a kink, bracketed the other way round.
        let f = |x: f64| if x < 0.3 { 1.0 - x } else { 0.7 - 10.0 * (x - 0.3) };
        let root = illinois(f, 0.0, 1.0, f(0.0), f(1.0), 1e-14, 0.0, 200);
        assert!((root - 0.37).abs() < 1e-12, "{root}");
        // The cap holds: the answer stays inside the bracket.
        let root = illinois(|x| x.tanh() - 0.5, -50.0, 50.0, -1.5, 0.5, 0.0, 0.0, 3);
        assert!((-50.0..=50.0).contains(&root));
        // With a residual tolerance it stops as soon as |f| is that small.
        let mut evaluations = 0;
        let root = illinois(|x| { evaluations += 1; x * x * x - 2.0 }, 0.0, 2.0, -2.0, 6.0, 0.0, 1e-3, 100);
        assert!((root * root * root - 2.0).abs() <= 1e-3 && evaluations < 10, "{root} after {evaluations}");
    }
}

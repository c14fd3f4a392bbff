//! Cubic Lagrange interpolation `I(x)` and its spreading dual `J(x) = I(x) / h` on a 1D grid
//! (willemsen2019, section 3, Fig. 4).

/// The four grid weights of cubic Lagrange interpolation at a point between grid nodes.
///
/// `first_index` is the grid index of the first weight; the weights cover
/// `first_index ..= first_index + 3`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicPoint {
    pub first_index: usize,
    pub weights: [f64; 4],
}

impl CubicPoint {
    /// Interpolation at `position_in_intervals` (a position `x / h` on a grid of
    /// `intervals` intervals, nodes `0..=intervals`). The stencil is kept inside the grid, so
    /// a point near an end uses an off-centre stencil (still exact for cubics).
    pub fn new(position_in_intervals: f64, intervals: usize) -> Self {
        assert!(intervals >= 3, "cubic interpolation needs at least 3 intervals");
        let max_base = (intervals - 2) as f64;
        let position = position_in_intervals.clamp(0.0, intervals as f64);
        // The stencil is `base - 1 ..= base + 2`, so base must stay in 1..=intervals-2.
        let base = position.floor().clamp(1.0, max_base);
        let a = position - base;
        let weights = [
            -a * (a - 1.0) * (a - 2.0) / 6.0,
            (a - 1.0) * (a + 1.0) * (a - 2.0) / 2.0,
            -a * (a + 1.0) * (a - 2.0) / 2.0,
            a * (a + 1.0) * (a - 1.0) / 6.0,
        ];
        Self { first_index: base as usize - 1, weights }
    }

    /// `I u`: the interpolated value of `grid` (indexed by node), worked in f64 whatever
    /// the grid's format.
    #[inline]
    pub fn interpolate<S: Copy + Into<f64>>(&self, grid: &[S]) -> f64 {
        let s = &grid[self.first_index..self.first_index + 4];
        let (s0, s1, s2, s3): (f64, f64, f64, f64) = (s[0].into(), s[1].into(), s[2].into(), s[3].into());
        self.weights[0] * s0 + self.weights[1] * s1 + self.weights[2] * s2 + self.weights[3] * s3
    }

    /// `sum(w_l^2)` over the nodes for which `is_free(node)` holds, i.e. `h * (I . J)` for a
    /// grid whose fixed nodes never move. A force spread onto a fixed node is absorbed by the
    /// support, so only free nodes count.
    pub fn sum_of_squares(&self, is_free: impl Fn(usize) -> bool) -> f64 {
        self.weights
            .iter()
            .enumerate()
            .filter(|(i, _)| is_free(self.first_index + i))
            .map(|(_, w)| w * w)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_cubics_exactly() {
        let grid: Vec<f64> = (0..=10).map(|l| {
            let x = l as f64;
            0.5 * x * x * x - 2.0 * x * x + x - 3.0
        }).collect();
        for &p in &[1.0, 1.3, 4.75, 8.99, 0.2, 9.8] {
            let exact = 0.5 * p * p * p - 2.0 * p * p + p - 3.0;
            let got = CubicPoint::new(p, 10).interpolate(&grid);
            assert!((got - exact).abs() < 1e-9, "p={p}: {got} vs {exact}");
        }
    }

    #[test]
    fn weights_sum_to_one_and_hit_nodes() {
        let c = CubicPoint::new(5.0, 10);
        assert_eq!(c.first_index, 4);
        assert!((c.weights[1] - 1.0).abs() < 1e-15);
        let c = CubicPoint::new(3.4, 10);
        assert!((c.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

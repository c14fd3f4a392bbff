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

/// Up to [`POINT_LANES`] cubic points read together, one in each lane: the finite-width
/// bow's points on a grid, read several times a sample (`crate::bow::hifi_bow`). Each lane's
/// value is [`CubicPoint::interpolate`]'s, to the bit: the same four products summed in the
/// same order. The weights are stored by tap, every lane's weight for a tap side by side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicPoints {
    first_index: [usize; POINT_LANES],
    /// `weights[tap][lane]`.
    weights: [[f64; POINT_LANES]; POINT_LANES],
}

/// The lanes of [`CubicPoints`].
pub const POINT_LANES: usize = 4;

impl CubicPoints {
    /// `points` (1 to [`POINT_LANES`]) in lanes; a lane past them repeats the first point,
    /// so that every lane reads inside the grid.
    pub fn new(points: &[CubicPoint]) -> Self {
        assert!((1..=POINT_LANES).contains(&points.len()), "1 to {POINT_LANES} points");
        let point = |lane: usize| points.get(lane).unwrap_or(&points[0]);
        Self {
            first_index: std::array::from_fn(|lane| point(lane).first_index),
            weights: std::array::from_fn(|tap| std::array::from_fn(|lane| point(lane).weights[tap])),
        }
    }

    /// `I u` at every lane's point (see [`CubicPoint::interpolate`]).
    #[inline]
    pub fn interpolate_each(&self, grid: &[f64]) -> [f64; POINT_LANES] {
        let taps: [&[f64; 4]; POINT_LANES] = std::array::from_fn(|lane| {
            let first = self.first_index[lane];
            grid[first..first + 4].try_into().expect("four taps")
        });
        let w = &self.weights;
        std::array::from_fn(|lane| {
            let s = taps[lane];
            w[0][lane] * s[0] + w[1][lane] * s[1] + w[2][lane] * s[2] + w[3][lane] * s[3]
        })
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

    /// Points in lanes read each lane's point to the bit, for one to four points anywhere on
    /// the grid, the ends included.
    #[test]
    fn points_in_lanes_read_each_point_to_the_bit() {
        let grid: Vec<f64> = (0..=40).map(|l| (0.37 * l as f64).sin() * 1e-3 + 1e-9 * l as f64).collect();
        for count in 1..=POINT_LANES {
            for start in [0.0, 0.4, 7.3, 19.05, 38.6, 40.0] {
                let points: Vec<CubicPoint> = (0..count).map(|m| CubicPoint::new(start + 0.57 * m as f64, 40)).collect();
                let got = CubicPoints::new(&points).interpolate_each(&grid);
                for (m, point) in points.iter().enumerate() {
                    assert_eq!(got[m].to_bits(), point.interpolate(&grid).to_bits(), "{count} points from {start}, point {m}");
                }
                for lane in count..POINT_LANES {
                    assert_eq!(got[lane].to_bits(), points[0].interpolate(&grid).to_bits(), "an unused lane reads the first point");
                }
            }
        }
    }
}

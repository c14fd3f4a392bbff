//! The distributions of the rigid membrane-tube connection (onofrei2021 section 3.1-3.3,
//! eqs. 19, 22, 25-27; `MODELS.md` section 3).
//!
//! - `I_m`: a 2D Hann window over the central 85 % of each side (72.25 % of the area),
//!   normalised to sum 1, so `I_m u` is a weighted mean displacement. `J_m = I_m / h_m^2`.
//! - `I_t`: a half-Hann over the first 4 % of the tube, peaking at the membrane end,
//!   normalised to sum 1. Its dual is `J_t = I_t / (h_t eps_p)` with `eps_0 = 1/2` and
//!   `eps_p = 1` elsewhere: the tube's energy weighs its end node by a half (trapezoid rule,
//!   see [`crate::drum::tube`]), and only this dual makes the connection's power on the tube
//!   `fc I_t dt. zeta` exactly, so the coupling neither creates nor destroys energy.
//!   `MODELS.md`'s plain `I_t / h_t` is the interior form of the same rule.

use crate::drum::membrane::{grid_points, AlignedLevel, Membrane, MembraneSample};
use crate::drum::tube::TubeSample;

/// The fraction of each side of the membrane that the Hann window covers.
pub const MEMBRANE_PATCH_FRACTION: f64 = 0.85;
/// The fraction of the tube that the half-Hann covers.
pub const TUBE_PATCH_FRACTION: f64 = 0.04;

/// `I_m` on the membrane's grid, in the membrane's number format: zero off the patch and
/// on fixed points.
pub struct MembranePatch<S: MembraneSample = f64> {
    /// On cache lines as the membrane's levels, which the update reads it beside.
    weights: AlignedLevel<S>,
    rows: std::ops::Range<usize>,
    /// `sum(I_m^2)`, i.e. `h^2 (I_m . J_m)`, of the weights as stored (rounded to `S`), so
    /// that the connection's force solves the update the membrane takes.
    sum_of_squares: f64,
}

impl<S: MembraneSample> MembranePatch<S> {
    /// Room for a membrane of up to `max_intervals` a side.
    pub fn with_capacity(max_intervals: usize) -> Self {
        Self { weights: AlignedLevel::filled(grid_points(max_intervals), S::ZERO), rows: 0..0, sum_of_squares: 0.0 }
    }

    /// Builds `I_m` for the membrane's current grid and mask. Never allocates.
    pub fn configure(&mut self, membrane: &Membrane<S>) {
        let n = membrane.intervals();
        let width = membrane.width();
        self.weights.fill(S::ZERO);
        let margin = 0.5 * (1.0 - MEMBRANE_PATCH_FRACTION) * n as f64;
        let span = MEMBRANE_PATCH_FRACTION * n as f64;
        let hann = |g: f64| {
            let t = (g - margin) / span;
            if (0.0..=1.0).contains(&t) {
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * t).cos()
            } else {
                0.0
            }
        };
        let mut total = 0.0;
        let mut first_row = usize::MAX;
        let mut last_row = 0;
        for m in 0..=n {
            let wy = hann(m as f64);
            if wy == 0.0 {
                continue;
            }
            let (start, end) = membrane.spans()[m];
            for i in start..end {
                total += wy * hann((i - m * width) as f64);
            }
            if start < end {
                first_row = first_row.min(m);
                last_row = m;
            }
        }
        assert!(total > 0.0, "the membrane grid is too coarse for its connection patch");
        // The weights divided by their sum, rounded once to the membrane's format.
        for m in first_row..=last_row {
            let wy = hann(m as f64);
            let (start, end) = membrane.spans()[m];
            for i in start..end {
                self.weights[i] = S::from_f64(wy * hann((i - m * width) as f64) / total);
            }
        }
        self.rows = first_row..last_row + 1;
        self.sum_of_squares = self.weights.iter().map(|w| w.to_f64() * w.to_f64()).sum();
    }

    pub fn weights(&self) -> &[S] {
        &self.weights
    }

    /// The rows the patch covers.
    pub fn rows(&self) -> std::ops::Range<usize> {
        self.rows.clone()
    }

    pub fn sum_of_squares(&self) -> f64 {
        self.sum_of_squares
    }
}

/// `I_t` on the tube's grid, and its dual's node factors.
pub struct TubePatch {
    weights: Box<[f64]>,
    /// `I_t[p] / eps_p`: the spreading weights before the `1 / h_t`.
    spread: Box<[f64]>,
    nodes: usize,
    /// `sum(I_t[p]^2 / eps_p)`, i.e. `h_t (I_t . J_t)`.
    sum_of_squares: f64,
}

impl TubePatch {
    pub fn with_capacity(max_intervals: usize) -> Self {
        Self { weights: vec![0.0; max_intervals + 1].into_boxed_slice(), spread: vec![0.0; max_intervals + 1].into_boxed_slice(), nodes: 0, sum_of_squares: 0.0 }
    }

    /// Builds `I_t` for a tube of `intervals`. Never allocates.
    pub fn configure(&mut self, intervals: usize) {
        self.weights.fill(0.0);
        self.spread.fill(0.0);
        // The window reaches zero at TUBE_PATCH_FRACTION of the length; at least one node
        // beyond the end node carries weight, however coarse the grid.
        let reach = (TUBE_PATCH_FRACTION * intervals as f64).max(1.5);
        let nodes = (reach.ceil() as usize).min(intervals.saturating_sub(1)).max(1);
        let mut total = 0.0;
        for p in 0..nodes {
            let w = 0.5 + 0.5 * (std::f64::consts::PI * p as f64 / reach).cos();
            self.weights[p] = w;
            total += w;
        }
        let mut sum_of_squares = 0.0;
        for p in 0..nodes {
            self.weights[p] /= total;
            let eps = if p == 0 { 0.5 } else { 1.0 };
            self.spread[p] = self.weights[p] / eps;
            sum_of_squares += self.weights[p] * self.spread[p];
        }
        self.nodes = nodes;
        self.sum_of_squares = sum_of_squares;
    }

    /// The nodes `0..nodes()` that carry weight.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    pub fn weights(&self) -> &[f64] {
        &self.weights[..self.nodes]
    }

    pub fn spread(&self) -> &[f64] {
        &self.spread[..self.nodes]
    }

    /// `I_t zeta` for one of the tube's levels, in f64 whatever their format.
    #[inline]
    pub fn interpolate<S: TubeSample>(&self, level: &[S]) -> f64 {
        self.weights().iter().zip(level).map(|(w, z)| w * z.to_f64()).sum()
    }

    pub fn sum_of_squares(&self) -> f64 {
        self.sum_of_squares
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drum::membrane::{MembraneMaterial, MembraneShape};

    #[test]
    fn membrane_patch_is_normalised_centred_and_masked() {
        let membrane = Membrane::<f64>::with_capacity(60, MembraneMaterial::default(), MembraneShape::Circle, 60, 1.0 / 44_100.0);
        let mut patch = MembranePatch::with_capacity(60);
        patch.configure(&membrane);
        let w = patch.weights();
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let centre = membrane.index(30, 30);
        assert!(w.iter().all(|&x| x <= w[centre] + 1e-15), "peak at the centre");
        assert_eq!(w[membrane.index(30, 25)], w[membrane.index(25, 30)]);
        for (i, &x) in w.iter().enumerate() {
            assert!(x == 0.0 || membrane.is_moving(i));
        }
        // Nothing outside the central 85 %: 60 * 0.075 = 4.5 intervals of margin.
        assert_eq!(w[membrane.index(30, 4)], 0.0);
        assert!(w[membrane.index(30, 5)] > 0.0);
    }

    #[test]
    fn tube_patch_is_a_normalised_half_hann() {
        let mut patch = TubePatch::with_capacity(600);
        patch.configure(588);
        let w = patch.weights();
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(w.windows(2).all(|p| p[1] < p[0]), "falls from the membrane end");
        assert_eq!(patch.nodes(), 24);
        assert_eq!(patch.spread()[0], 2.0 * w[0]);
    }
}

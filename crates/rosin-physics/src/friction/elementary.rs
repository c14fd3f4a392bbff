//! Rosin's own evaluation of the elementary functions in willemsen2019's elasto-plastic
//! law (eq. 9's adhesion map and the Stribeck curve, `MODELS.md` section 1), which the
//! law evaluates at every Newton step,
//! on the ranges it needs, without libm's general argument reduction: the adhesion map's
//! `sin` and `cos` of an angle within a quarter turn of zero, and the Stribeck curve's
//! `exp` of a number at or below zero. Sixteen held voices spent about 165 instructions a
//! voice-sample in libm's `sin_cos` and `exp` (callgrind, `docs/performance.md`); these
//! are short polynomials. They agree with libm over their ranges (unit tests): `sin` and
//! `exp` within two units in the last place, `cos` within 2.2e-16 absolute (near the
//! quarter turn, where it nears zero, the law uses it as a slope), so the law is the same
//! law, rounded a little differently.

use std::f64::consts::{FRAC_PI_2, LOG2_E};

/// Whether `x` is a finite number, by one comparison that NaN fails. `f64::is_finite` is
/// the same test, but LLVM merges it with the other tests of the same number beside it
/// (`x >= 0.0 && x.is_finite()`) into a classification of its bits, about twenty integer
/// instructions each on x86-64, where this is an `and` and a compare: the contacts' checks
/// of their inputs and answers cost sixteen voices about 40 instructions a voice-sample
/// that way (`docs/performance.md`, *Finite tests as comparisons*).
#[inline(always)]
pub fn finite(x: f64) -> bool {
    x.abs() <= f64::MAX
}

/// sin x = x + x^3 P(x^2), P(y) = sum_{k=1..10} (-1)^k y^(k-1) / (2k+1)!, highest first.
pub(crate) const P: [f64; 10] = [
    1.0 / 51_090_942_171_709_440_000.0,
    -1.0 / 121_645_100_408_832_000.0,
    1.0 / 355_687_428_096_000.0,
    -1.0 / 1_307_674_368_000.0,
    1.0 / 6_227_020_800.0,
    -1.0 / 39_916_800.0,
    1.0 / 362_880.0,
    -1.0 / 5_040.0,
    1.0 / 120.0,
    -1.0 / 6.0,
];
/// cos x = 1 + x^2 Q(x^2), Q(y) = sum_{k=1..11} (-1)^k y^(k-1) / (2k)!, highest first.
pub(crate) const Q: [f64; 11] = [
    -1.0 / 1_124_000_727_777_607_680_000.0,
    1.0 / 2_432_902_008_176_640_000.0,
    -1.0 / 6_402_373_705_728_000.0,
    1.0 / 20_922_789_888_000.0,
    -1.0 / 87_178_291_200.0,
    1.0 / 479_001_600.0,
    -1.0 / 3_628_800.0,
    1.0 / 40_320.0,
    -1.0 / 720.0,
    1.0 / 24.0,
    -1.0 / 2.0,
];
/// 1/n! for n = 13 down to 1.
pub(crate) const E: [f64; 13] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    1.0 / 2.0,
    1.0,
];
/// ln 2 in two parts (fdlibm's): `k LN2_HI` is exact for the `k` that occur here.
pub(crate) const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
pub(crate) const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;

/// `(sin x, cos x)` for `|x| <= pi / 2`: the Taylor series to `x^21` and `x^22` (the next
/// terms are below 2e-18 at the range's ends), summed by Estrin's scheme in `x^2`
/// ([`estrin`]). Outside that range (or for a NaN) it is libm's.
#[inline]
pub fn sin_cos_within_quarter_turn(x: f64) -> (f64, f64) {
    if !(x.abs() <= FRAC_PI_2) {
        return x.sin_cos();
    }
    let y = x * x;
    let powers = Powers::of(y);
    let p = estrin::<LOW_TERMS, _>(&P, &powers);
    let q = estrin::<LOW_TERMS, _>(&Q, &powers);
    (x + x * y * p, 1.0 + y * q)
}

/// The lowest terms [`estrin`] adds by Horner's rule.
pub(crate) const LOW_TERMS: usize = 2;

/// `x`, `x^2`, `x^4` and `x^8`: what [`estrin`] multiplies by.
#[derive(Clone, Copy)]
pub(crate) struct Powers {
    pub(crate) x: f64,
    pub(crate) x2: f64,
    pub(crate) x4: f64,
    pub(crate) x8: f64,
}

impl Powers {
    #[inline(always)]
    pub(crate) fn of(x: f64) -> Self {
        let x2 = x * x;
        let x4 = x2 * x2;
        Self { x, x2, x4, x8: x4 * x4 }
    }
}

/// The polynomial with `coefficients` (highest power first) at `x`: its `LOW` lowest terms
/// by Horner's rule, last, so that the largest terms are added as Horner adds them; the rest
/// (at most 16 coefficients) by Estrin's scheme, neighbouring coefficients paired by `x`,
/// the pairs by `x^2`, those by `x^4`, then by `x^8`. Four dependent multiply-adds and the
/// `LOW` where Horner's rule takes one a coefficient, which on the law's path (every Newton
/// step's `exp`, `sin` and `cos`) is most of its wait (`docs/performance.md`).
/// `dupont_lanes`' lanes take the same operations in the same order.
#[inline(always)]
pub(crate) fn estrin<const LOW: usize, const C: usize>(coefficients: &[f64; C], powers: &Powers) -> f64 {
    // The high part's coefficients ascending: `coefficients[high - 1 - j]` is that of `x^j`.
    let high = C - LOW;
    let [mut level, mut next] = [[0.0; 16]; 2];
    for (j, term) in level.iter_mut().enumerate().take(high) {
        *term = coefficients[high - 1 - j];
    }
    // Each level pairs its terms by the next power: `t(2i) + t(2i + 1) x^(2^level)`, a last
    // one without a partner carried up as it is.
    let mut count = high;
    for power in [powers.x, powers.x2, powers.x4, powers.x8] {
        for i in 0..8 {
            if 2 * i + 1 < count {
                next[i] = level[2 * i] + level[2 * i + 1] * power;
            } else if 2 * i < count {
                next[i] = level[2 * i];
            }
        }
        count = count.div_ceil(2);
        level = next;
    }
    coefficients[high..].iter().fold(level[0], |acc, &coefficient| acc * powers.x + coefficient)
}

/// `e^y` for `y <= 0`: `y = k ln 2 + r` with `|r| <= ln 2 / 2`, `e^r` by its Taylor series
/// to `r^13` (the next term is below 5e-18; [`estrin`]), scaled by `2^k` through the
/// exponent bits.
/// Below -708 (where `e^y` would be subnormal) it is 0; above 0 (or for a NaN) it is
/// libm's.
#[inline]
pub fn exp_at_most_zero(y: f64) -> f64 {
    if !(y <= 0.0) {
        return y.exp();
    }
    if y < -708.0 {
        return 0.0;
    }
    let k = round_half_away_from_zero(y * LOG2_E);
    let r = (y - k * LN2_HI) - k * LN2_LO;
    let series = 1.0 + r * estrin::<LOW_TERMS, _>(&E, &Powers::of(r));
    // 2^k: k is at least -1022 here, a normal number.
    series * f64::from_bits(((k as i64 + 1023) as u64) << 52)
}

/// `x.round()` (halves away from zero) for `|x| < 2^52`, in a few instructions: on
/// baseline x86-64, which has no rounding instruction, `f64::round` is a call into the
/// runtime (about 24 instructions, called twice a voice-sample by the Stribeck curve). The
/// integer part and the fraction `|x| - trunc(|x|)` are exact in that range, so the result
/// is `round`'s to the bit (a unit test compares them).
#[inline]
fn round_half_away_from_zero(x: f64) -> f64 {
    let magnitude = x.abs();
    let whole = magnitude as i64 as f64;
    let rounded = if magnitude - whole >= 0.5 { whole + 1.0 } else { whole };
    rounded.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units in the last place between `a` and the reference `b`.
    fn ulps(a: f64, b: f64) -> f64 {
        if a == b {
            return 0.0;
        }
        let ulp = f64::EPSILON * b.abs().max(f64::MIN_POSITIVE);
        (a - b).abs() / ulp
    }

    #[test]
    fn sin_and_cos_agree_with_libm_over_a_quarter_turn() {
        let mut worst: (f64, f64) = (0.0, 0.0);
        for i in 0..=200_000 {
            let x = -FRAC_PI_2 + std::f64::consts::PI * i as f64 / 200_000.0;
            let (s, c) = sin_cos_within_quarter_turn(x);
            worst.0 = worst.0.max(ulps(s, x.sin()));
            worst.1 = worst.1.max((c - x.cos()).abs());
        }
        println!("sin within {} ulps of libm's, cos within {:e} absolute", worst.0, worst.1);
        assert!(worst.0 <= 2.0, "sin: {} ulps", worst.0);
        assert!(worst.1 <= f64::EPSILON, "cos: {:e} absolute", worst.1);
        // Outside the range, and a NaN, are libm's.
        assert_eq!(sin_cos_within_quarter_turn(3.0), 3.0f64.sin_cos());
        assert!(sin_cos_within_quarter_turn(f64::NAN).0.is_nan());
    }

    #[test]
    fn exp_agrees_with_libm_within_two_ulps_at_and_below_zero() {
        let mut worst: f64 = 0.0;
        for i in 0..=400_000 {
            let y = -700.0 * (i as f64 / 400_000.0).powi(3);
            worst = worst.max(ulps(exp_at_most_zero(y), y.exp()));
        }
        println!("exp within {worst} ulps of libm's");
        assert!(worst <= 2.0, "{worst} ulps");
        assert_eq!(exp_at_most_zero(0.0), 1.0);
        assert_eq!(exp_at_most_zero(-800.0), 0.0);
        assert_eq!(exp_at_most_zero(f64::NEG_INFINITY), 0.0);
        assert!(exp_at_most_zero(f64::NAN).is_nan());
        assert_eq!(exp_at_most_zero(1.5), 1.5f64.exp());
    }

    /// The rounding in the exponential's range reduction is `f64::round` to the bit: on
    /// halves, next to them, on whole numbers and signed zeros, and over the range the
    /// Stribeck curve reaches (`y log2 e` for `y` in `[-708, 0]`), with and past it.
    #[test]
    fn rounding_is_the_standard_librarys_to_the_bit() {
        let below_half = 0.5 - f64::EPSILON / 4.0;
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, 1.5, -2.5, below_half, -below_half, 1.0, -1022.0, 0.49, -0.51, 4_503_599_627_370_495.5];
        for i in 0..=200_000 {
            let x = -1_100.0 * (i as f64 / 200_000.0);
            cases.extend([x, x + 0.5, f64::from_bits(x.to_bits() + 1), -x]);
        }
        for x in cases {
            assert_eq!(round_half_away_from_zero(x).to_bits(), x.round().to_bits(), "{x:e}");
        }
    }
}

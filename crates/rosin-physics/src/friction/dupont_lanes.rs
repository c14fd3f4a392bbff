//! willemsen2019's bow contact (eqs. 12-20, `MODELS.md` section 1) solved for [`LANES`]
//! bows at once, one in each lane of two vector registers: the same 2x2 Newton iteration as
//! [`BowContact::solve`], step for step, with the friction law evaluated for every lane in
//! one pass. The finite-width bow's law ([`bristle_rates`]) takes the same code in one
//! register, for its four points.
//!
//! **The same bits.** Each lane performs exactly the operations the scalar solve performs
//! on its own bow, in the same order (no fused multiply-add, no reassociation), so each
//! lane's answer, its iteration count and its number of law evaluations are those of
//! [`BowContact::solve`] to the last bit; a unit test compares them over random and extreme
//! contacts. What differs is only the control flow: the group steps while any lane is still
//! stepping, and a lane that has finished keeps its answer while the others go on. Where
//! the scalar code branches (the adhesion map's three zones, the `exp` and `sin`/`cos`
//! ranges), every lane evaluates every branch and keeps its own. A lane the iteration leaves
//! without an answer takes the scalar fallback, as [`BowContact::solve`] does.
//!
//! **Why.** The law's evaluation and Newton's bookkeeping are about 1,000 instructions a
//! voice-sample of sixteen voices' 2,350, each a chain of short scalar operations
//! (`docs/performance.md`). Four voices side by side share each instruction, and two
//! registers of four give the core two chains to overlap where one register's chain kept
//! it waiting (see `avx2::V`).

use crate::friction::dupont::ElastoPlasticParams;
use crate::friction::dupont_contact::{BowContact, ContactInput, ContactOutput};

/// The bows solved together: eight f64 lanes, two AVX2 registers side by side (see
/// `avx2::V`).
pub const LANES: usize = 8;
type Lanes = [f64; LANES];

/// The points [`bristle_rates`] evaluates together (the finite-width bow's): four f64
/// lanes, one AVX2 register.
pub const POINT_LANES: usize = 4;
type PointLanes = [f64; POINT_LANES];

/// Each lane's sample and its bow's friction, as the scalar solve reads them.
#[derive(Clone, Copy, Default)]
struct Problems {
    free_velocity_mps: Lanes,
    coupling_s_per_kg: Lanes,
    time_step_s: Lanes,
    normal_force_n: Lanes,
    deflection_prev_m: Lanes,
    rate_prev_mps: Lanes,
    start_velocity_mps: Lanes,
    start_deflection_m: Lanes,
    /// The sample's noise `w`, in `[-1, 1]`.
    noise: Lanes,
    stiffness: Lanes,
    damping: Lanes,
    viscous: Lanes,
    noise_per_normal_force: Lanes,
    coulomb: Lanes,
    static_coefficient: Lanes,
    stribeck_mps: Lanes,
    break_away_ratio: Lanes,
}

impl Problems {
    /// Every lane idle: all zeros but the time step, the bristles' stiffness and the
    /// Stribeck velocity, which are 1, so that an idle lane stays at rest at `v = z = 0`,
    /// elastic, with finite terms (`2 / k`, `z_ba`, `v / vS`) and steps of 0.
    ///
    /// All zeros, an idle lane's `2 / k` was infinite, its steps and trial points NaN
    /// (which the law takes for a point on its slope) and its `v / vS` was `0 / 0`: every
    /// evaluation then ran the whole law for the lanes beside it and handed the idle lane
    /// to libm's `exp` and `sin_cos`. A group is not full when fewer than eight voices wait
    /// (an oversampled voice's later steps): sixteen voices with five oversampled paid
    /// about 200 instructions a voice-sample for it. The lanes are independent, so the busy
    /// lanes' bits are the same either way.
    fn idle() -> Self {
        Problems { time_step_s: [1.0; LANES], stiffness: [1.0; LANES], stribeck_mps: [1.0; LANES], ..Problems::default() }
    }
}

/// Where each lane's Newton iteration ended.
#[derive(Clone, Copy, Default)]
struct Outcome {
    velocity_mps: Lanes,
    deflection_m: Lanes,
    /// The rate and force of an accepted point.
    rate_mps: Lanes,
    force_n: Lanes,
    accepted: [bool; LANES],
    iterations: [usize; LANES],
    evaluations: [usize; LANES],
}

impl BowContact {
    /// [`BowContact::solve`] for each of `contacts` with its `inputs`, eight at a time:
    /// every contact ends in the state, and returns the output, that `solve` would give it,
    /// to the bit (see the module's header). A lane without a contact is idle (its output
    /// is the default).
    pub fn solve_lanes(contacts: &mut [Option<&mut BowContact>; LANES], inputs: &[ContactInput; LANES]) -> [ContactOutput; LANES] {
        solve_in_lanes(contacts, inputs)
    }
}

/// [`BowContact::solve_lanes`]: the Newton iterations in lanes where the CPU has AVX2, each
/// contact alone elsewhere. `multiversion` chooses once at run time, and only its AVX2
/// build calls the AVX2 code.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn solve_in_lanes(contacts: &mut [Option<&mut BowContact>; LANES], inputs: &[ContactInput; LANES]) -> [ContactOutput; LANES] {
    let mut outputs = [ContactOutput::default(); LANES];
    let mut problems = Problems::idle();
    let mut active = [false; LANES];
    for l in 0..LANES {
        let Some(contact) = contacts[l].as_deref_mut() else { continue };
        let input = &inputs[l];
        if let Some(lifted) = contact.lift_if_unusable(input) {
            outputs[l] = lifted;
            continue;
        }
        active[l] = true;
        problems.noise[l] = contact.noise();
        let p = &contact.friction;
        problems.free_velocity_mps[l] = input.free_velocity_mps;
        problems.coupling_s_per_kg[l] = input.coupling_s_per_kg;
        problems.time_step_s[l] = input.time_step_s;
        problems.normal_force_n[l] = input.normal_force_n;
        problems.deflection_prev_m[l] = contact.deflection_m();
        problems.rate_prev_mps[l] = contact.rate_mps();
        (problems.start_velocity_mps[l], problems.start_deflection_m[l]) = contact.warm_start(input, problems.noise[l]);
        problems.stiffness[l] = p.bristle_stiffness_n_per_m;
        problems.damping[l] = p.bristle_damping_kg_per_s;
        problems.viscous[l] = p.viscous_damping_kg_per_s;
        problems.noise_per_normal_force[l] = p.noise_per_normal_force;
        problems.coulomb[l] = p.coulomb_coefficient;
        problems.static_coefficient[l] = p.static_coefficient;
        problems.stribeck_mps[l] = p.stribeck_velocity_mps;
        problems.break_away_ratio[l] = p.break_away_ratio;
    }
    if !active.iter().any(|&a| a) {
        return outputs;
    }
    multiversion::target::match_target! {
        "x86_64+avx2" => {
            let found = avx2::newton(&problems, active);
            for l in 0..LANES {
                if let (true, Some(contact)) = (active[l], contacts[l].as_deref_mut()) {
                    let accepted = found.accepted[l].then_some((found.rate_mps[l], found.force_n[l]));
                    outputs[l] = contact.finish(&inputs[l], problems.noise[l], found.velocity_mps[l], found.deflection_m[l], accepted, found.iterations[l], found.evaluations[l]);
                }
            }
        }
        _ => {
            // No lanes on this CPU: each contact is solved alone, with the noise it drew.
            for l in 0..LANES {
                if let (true, Some(contact)) = (active[l], contacts[l].as_deref_mut()) {
                    outputs[l] = contact.solve_with_noise(&inputs[l], problems.noise[l]);
                }
            }
        }
    }
    outputs
}

/// `ElastoPlasticParams::bristle_rate` at four points under one law and one normal force
/// (the finite-width bow's, `crate::bow::hifi_contact`), to the bit: each lane's rate and
/// its partial derivatives by velocity and by deflection. `None` where the CPU has no AVX2
/// (chosen as [`solve_in_lanes`]'s path is).
#[multiversion::multiversion(targets("x86_64+avx2"))]
pub(crate) fn bristle_rates(params: &ElastoPlasticParams, normal_force_n: f64, velocity_mps: &PointLanes, deflection_m: &PointLanes) -> Option<(PointLanes, PointLanes, PointLanes)> {
    multiversion::target::match_target! {
        "x86_64+avx2" => Some(avx2::bristle_rates(params, normal_force_n, velocity_mps, deflection_m)),
        _ => {
            let _ = (params, normal_force_n, velocity_mps, deflection_m);
            None
        }
    }
}

/// The lanes on AVX2: `std::arch` intrinsics, each the IEEE operation the scalar code
/// performs (`vaddpd` rounds as `addsd` does), on four lanes a register.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;
    use std::f64::consts::{FRAC_PI_2, LOG2_E, PI};

    use super::{ElastoPlasticParams, Outcome, PointLanes, Problems, LANES, POINT_LANES};
    use crate::friction::dupont_contact::{DEFLECTION_TOLERANCE, MAX_ITERATIONS, MAX_STEP_HALVINGS, VELOCITY_TOLERANCE_MPS};
    use crate::friction::elementary::{E, LN2_HI, LN2_LO, LOW_TERMS, P, Q};

    /// `K` AVX2 registers of four f64 lanes, each operation applied to every one of them:
    /// `K` chains of the same work with no dependence between them, which the core
    /// overlaps. The Newton iteration is a long chain of dependent operations (the law,
    /// then the step, then the law again), so one register of four bows left most of the
    /// core's units idle while each operation waited for the last: two registers, eight
    /// bows, solve in about the time of one (`docs/performance.md`). Four registers were
    /// slower again (sixteen bows wait for the slowest, and the registers run out).
    #[derive(Clone, Copy)]
    pub(super) struct V<const K: usize>([__m256d; K]);

    /// `$f` applied to the registers of each argument in turn.
    macro_rules! each {
        ($f:ident, $($x:ident),*) => {
            V(std::array::from_fn(|i| $f($($x.0[i]),*)))
        };
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat<const K: usize>(x: f64) -> V<K> {
        V([_mm256_set1_pd(x); K])
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load<const K: usize>(x: &[f64]) -> V<K> {
        assert!(x.len() == 4 * K, "four lanes a register");
        // SAFETY: `x` holds `4 K` f64 (checked); the loads are unaligned.
        V(std::array::from_fn(|i| unsafe { _mm256_loadu_pd(x.as_ptr().add(4 * i)) }))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn store_into<const K: usize>(x: V<K>, out: &mut [f64]) {
        assert!(out.len() == 4 * K, "four lanes a register");
        for (i, register) in x.0.into_iter().enumerate() {
            // SAFETY: `out` holds `4 K` f64 (checked); the store is unaligned.
            unsafe { _mm256_storeu_pd(out.as_mut_ptr().add(4 * i), register) };
        }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn store<const K: usize, const L: usize>(x: V<K>) -> [f64; L] {
        let mut out = [0.0; L];
        store_into(x, &mut out);
        out
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn add<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_add_pd, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sub<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_sub_pd, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mul<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_mul_pd, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn div<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_div_pd, a, b)
    }
    /// `-a`: the sign bit flipped, as scalar negation does.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn neg<const K: usize>(a: V<K>) -> V<K> {
        let sign: V<K> = splat(-0.0);
        each!(_mm256_xor_pd, a, sign)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn abs<const K: usize>(a: V<K>) -> V<K> {
        let sign: V<K> = splat(-0.0);
        each!(_mm256_andnot_pd, sign, a)
    }
    /// Comparisons: a lane of all ones where true, false on NaN (as the scalar `<`, `<=`
    /// and `>=` are).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lt<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(lt_one, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn le<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(le_one, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ge<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(ge_one, a, b)
    }
    /// Not `a <= b`: true where `a > b` and on NaN.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn not_le<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(not_le_one, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lt_one(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_LT_OQ>(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn le_one(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_LE_OQ>(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ge_one(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_GE_OQ>(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn not_le_one(a: __m256d, b: __m256d) -> __m256d {
        _mm256_cmp_pd::<_CMP_NLE_UQ>(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn and<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_and_pd, a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn or<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_or_pd, a, b)
    }
    /// `a and not b`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn and_not<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_andnot_pd, b, a)
    }
    /// `if mask { a } else { b }`, lane by lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn select<const K: usize>(mask: V<K>, a: V<K>, b: V<K>) -> V<K> {
        each!(_mm256_blendv_pd, b, a, mask)
    }
    /// The lanes set in `mask`, one bit each, lane `l` at bit `l`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bits<const K: usize>(mask: V<K>) -> i32 {
        mask.0.into_iter().enumerate().fold(0, |bits, (i, register)| bits | _mm256_movemask_pd(register) << (4 * i))
    }
    /// Every lane's bit set, as [`bits`] gives them.
    const fn every<const K: usize>() -> i32 {
        (1 << (4 * K)) - 1
    }
    /// `a.is_finite()`: `|a| < inf`, false on NaN.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn finite<const K: usize>(a: V<K>) -> V<K> {
        lt(abs(a), splat(f64::INFINITY))
    }
    /// Every lane false.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn none<const K: usize>() -> V<K> {
        V([_mm256_setzero_pd(); K])
    }
    /// Every lane true.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn all<const K: usize>() -> V<K> {
        V([_mm256_castsi256_pd(_mm256_set1_epi64x(-1)); K])
    }
    /// `!mask`, lane by lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn not<const K: usize>(mask: V<K>) -> V<K> {
        let every: V<K> = all();
        each!(_mm256_xor_pd, mask, every)
    }
    /// Rounded towards zero (exact).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn trunc<const K: usize>(a: V<K>) -> V<K> {
        each!(trunc_one, a)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn trunc_one(a: __m256d) -> __m256d {
        _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(a)
    }
    /// Each lane's low 12 bits shifted into the exponent's place.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn into_exponent<const K: usize>(a: V<K>) -> V<K> {
        each!(into_exponent_one, a)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn into_exponent_one(a: __m256d) -> __m256d {
        _mm256_castsi256_pd(_mm256_slli_epi64::<52>(_mm256_castpd_si256(a)))
    }

    /// `exp_at_most_zero`, lane by lane to the bit: its integer cast is `trunc` (the same
    /// integer below 2^52), its `2^k` the bits of `k + 1023 + 2^52` shifted into the
    /// exponent (the same bits as the scalar's integer shift for the whole numbers
    /// `-1022 <= k <= 0` it reaches).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn exp_at_most_zero<const CALLER: u8, const K: usize>(y: V<K>) -> V<K> {
        let t = mul(y, splat(LOG2_E));
        let magnitude = abs(t);
        let whole = trunc(magnitude);
        let rounded = select(ge(sub(magnitude, whole), splat(0.5)), add(whole, splat(1.0)), whole);
        // copysign(rounded, t)
        let k = or(abs(rounded), and(t, splat(-0.0)));
        let r = sub(sub(y, mul(k, splat(LN2_HI))), mul(k, splat(LN2_LO)));
        let series = add(splat(1.0), mul(r, estrin::<LOW_TERMS, 13, K>(&E, powers(r))));
        let biased = add(add(k, splat(1023.0)), splat(4_503_599_627_370_496.0));
        let scale = into_exponent(biased);
        let out = select(lt(y, splat(-708.0)), none(), mul(series, scale));
        // Above zero (or NaN) the scalar takes libm's: never for `-x^2` but a NaN.
        let outside = not_le(y, none());
        if bits(outside) == 0 {
            return out;
        }
        let (mut y_lanes, mut out_lanes) = ([0.0; LANES], [0.0; LANES]);
        let (y_lanes, out_lanes) = (&mut y_lanes[..4 * K], &mut out_lanes[..4 * K]);
        store_into(y, y_lanes);
        store_into(out, out_lanes);
        for (y, out) in y_lanes.iter().zip(out_lanes.iter_mut()) {
            if !(*y <= 0.0) {
                *out = y.exp();
            }
        }
        load(out_lanes)
    }

    /// `elementary::Powers::of`: `x`, `x^2`, `x^4` and `x^8`, lane by lane to the bit.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn powers<const K: usize>(x: V<K>) -> [V<K>; 4] {
        let x2 = mul(x, x);
        let x4 = mul(x2, x2);
        [x, x2, x4, mul(x4, x4)]
    }

    /// `elementary::estrin` with `powers` from [`powers`], lane by lane to the bit: its
    /// pairs and Horner's low terms in its order.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn estrin<const LOW: usize, const C: usize, const K: usize>(coefficients: &[f64; C], powers: [V<K>; 4]) -> V<K> {
        let x = powers[0];
        let high = C - LOW;
        let [mut level, mut next]: [[V<K>; 16]; 2] = [[none(); 16]; 2];
        for (j, term) in level.iter_mut().enumerate().take(high) {
            *term = splat(coefficients[high - 1 - j]);
        }
        let mut count = high;
        for power in powers {
            for i in 0..8 {
                if 2 * i + 1 < count {
                    next[i] = add(level[2 * i], mul(level[2 * i + 1], power));
                } else if 2 * i < count {
                    next[i] = level[2 * i];
                }
            }
            count = count.div_ceil(2);
            level = next;
        }
        coefficients[high..].iter().fold(level[0], |acc, &coefficient| add(mul(acc, x), splat(coefficient)))
    }

    /// `sin_cos_within_quarter_turn`, lane by lane to the bit, for the lanes in `needed`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sin_cos_within_quarter_turn<const CALLER: u8, const K: usize>(x: V<K>, needed: V<K>) -> (V<K>, V<K>) {
        let y = mul(x, x);
        let powers = powers(y);
        let p = estrin::<LOW_TERMS, 10, K>(&P, powers);
        let q = estrin::<LOW_TERMS, 11, K>(&Q, powers);
        let sin = add(x, mul(mul(x, y), p));
        let cos = add(splat(1.0), mul(y, q));
        let outside = and_not(needed, le(abs(x), splat(FRAC_PI_2)));
        if bits(outside) == 0 {
            return (sin, cos);
        }
        let outside = bits(outside);
        let mut lanes = [[0.0; LANES]; 3];
        let [x_lanes, sin_lanes, cos_lanes] = lanes.each_mut().map(|lanes| &mut lanes[..4 * K]);
        store_into(x, x_lanes);
        store_into(sin, sin_lanes);
        store_into(cos, cos_lanes);
        for l in 0..4 * K {
            if outside & (1 << l) != 0 {
                (sin_lanes[l], cos_lanes[l]) = x_lanes[l].sin_cos();
            }
        }
        (load(sin_lanes), load(cos_lanes))
    }

    /// The problems' terms, loaded.
    #[derive(Clone, Copy)]
    struct Terms<const K: usize> {
        free_velocity: V<K>,
        coupling: V<K>,
        two_over_k: V<K>,
        deflection_prev: V<K>,
        rate_prev: V<K>,
        deflection_tolerance: V<K>,
        stiffness: V<K>,
        damping: V<K>,
        viscous: V<K>,
        noise_force: V<K>,
        law: Law<K>,
    }

    /// The adhesion map's terms for one normal force: `z_ba`, `fC / s0`, `(fS - fC) / s0`,
    /// `vS` and `vS^2`.
    #[derive(Clone, Copy)]
    struct Law<const K: usize> {
        break_away: V<K>,
        coulomb_deflection: V<K>,
        spread: V<K>,
        stribeck: V<K>,
        stribeck_squared: V<K>,
    }

    /// `ElastoPlasticParams::bristle_rate` for every lane: the rate and its partial
    /// derivatives, every zone evaluated and each lane keeping its own, or `None` when
    /// every lane is elastic (there the rate is the velocity, its partials 1 and 0).
    ///
    /// `CALLER` gives each of its callers (the point bow's Newton, the finite-width bow's
    /// one and its pairs) a copy of its own, passed on to its `exp`, `sin` and `cos`:
    /// called from one place, a copy is inlined there (a target-feature function cannot be
    /// `inline(always)`), which keeps the point bow's Newton as it was before the ribbon
    /// bow shared this.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn law_rate<const CALLER: u8, const K: usize>(law: &Law<K>, v: V<K>, z: V<K>, z_abs: V<K>) -> Option<(V<K>, V<K>, V<K>)> {
        let elastic = or(le(mul(v, z), none()), le(z_abs, law.break_away));
        if bits(elastic) == every::<K>() {
            return None;
        }
        let x = div(v, law.stribeck);
        let stribeck = exp_at_most_zero::<CALLER, K>(mul(neg(x), x));
        let z_ss = add(law.coulomb_deflection, mul(law.spread, stribeck));
        let d_zss_dv = mul(mul(law.spread, stribeck), div(mul(splat(-2.0), v), law.stribeck_squared));
        let width = sub(z_ss, law.break_away);
        let theta = div(sub(z_abs, mul(splat(0.5), add(z_ss, law.break_away))), width);
        let sliding = ge(z_abs, z_ss);
        let on_slope = and_not(not(elastic), sliding);
        let (sin, cos) = if bits(on_slope) == 0 { (none(), none()) } else { sin_cos_within_quarter_turn::<CALLER, K>(mul(splat(PI), theta), on_slope) };
        let half_pi_cos = mul(splat(0.5 * PI), cos);
        let alpha = select(sliding, splat(1.0), mul(splat(0.5), add(splat(1.0), sin)));
        let d_alpha_d_zabs = select(sliding, none(), div(half_pi_cos, width));
        let d_alpha_d_v = select(sliding, none(), mul(div(mul(half_pi_cos, sub(splat(-0.5), theta)), width), d_zss_dv));
        let ratio = div(mul(alpha, z_abs), z_ss);
        let one_less = sub(splat(1.0), ratio);
        let rate = mul(v, one_less);
        let d_velocity = add(sub(one_less, div(mul(mul(v, z_abs), d_alpha_d_v), z_ss)), div(mul(mul(v, ratio), d_zss_dv), z_ss));
        let d_deflection = div(mul(neg(abs(v)), add(mul(d_alpha_d_zabs, z_abs), alpha)), z_ss);
        Some((select(elastic, v, rate), select(elastic, splat(1.0), d_velocity), select(elastic, none(), d_deflection)))
    }

    /// The law's terms for finite-width bows, a register each, each register's lanes
    /// sharing its bow's law and normal force, worked out by the scalar law's expressions.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bows_law<const K: usize>(bows: [(&ElastoPlasticParams, f64); K]) -> Law<K> {
        let term = |f: fn(&ElastoPlasticParams, f64) -> f64| V(bows.map(|(params, normal_force_n)| _mm256_set1_pd(f(params, normal_force_n))));
        Law {
            break_away: term(|p, f| p.break_away_deflection_m(f)),
            coulomb_deflection: term(|p, f| p.coulomb_coefficient * f / p.bristle_stiffness_n_per_m),
            spread: term(|p, f| (p.static_coefficient - p.coulomb_coefficient) * f / p.bristle_stiffness_n_per_m),
            stribeck: term(|p, _| p.stribeck_velocity_mps),
            stribeck_squared: term(|p, _| p.stribeck_velocity_mps * p.stribeck_velocity_mps),
        }
    }

    /// [`law_rate`] for one law and normal force shared by the lanes (the finite-width
    /// bow's points), its terms worked out by the scalar law's expressions.
    #[target_feature(enable = "avx2")]
    pub(crate) fn bristle_rates(params: &ElastoPlasticParams, normal_force_n: f64, v: &PointLanes, z: &PointLanes) -> (PointLanes, PointLanes, PointLanes) {
        let law = bows_law([(params, normal_force_n)]);
        let (v, z): (V<1>, V<1>) = (load(v), load(z));
        match law_rate::<1, 1>(&law, v, z, abs(z)) {
            Some((rate, d_velocity, d_deflection)) => (store(rate), store(d_velocity), store(d_deflection)),
            None => (store(v), [1.0; POINT_LANES], [0.0; POINT_LANES]),
        }
    }

    /// [`bristle_rates`] for two bows at once, each with its own law and normal force, in
    /// two registers: the two chains overlap in the core, and each register's lanes get
    /// the bits `bristle_rates` gives them alone (the operations are lane-wise, and a
    /// register whose lanes are all elastic keeps `v`, 1 and 0, as `bristle_rates` returns).
    #[target_feature(enable = "avx2")]
    pub(crate) fn bristle_rates_pair(bows: [(&ElastoPlasticParams, f64); 2], v: [__m256d; 2], z: [__m256d; 2]) -> [(__m256d, __m256d, __m256d); 2] {
        let law = bows_law(bows);
        let (v, z) = (V(v), V(z));
        let (rate, d_velocity, d_deflection) = law_rate::<2, 2>(&law, v, z, abs(z)).unwrap_or((v, splat(1.0), none()));
        [(rate.0[0], d_velocity.0[0], d_deflection.0[0]), (rate.0[1], d_velocity.0[1], d_deflection.0[1])]
    }

    /// The law's rate and its partial derivatives (`ElastoPlasticParams::bristle_rate`),
    /// every zone evaluated and each lane keeping its own; then the force and the two
    /// residuals (the scalar solve's `residuals`).
    #[derive(Clone, Copy)]
    struct Evaluation<const K: usize> {
        g1: V<K>,
        g2: V<K>,
        rate: V<K>,
        d_velocity: V<K>,
        d_deflection: V<K>,
        force: V<K>,
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn evaluate<const K: usize>(p: &Terms<K>, v: V<K>, z: V<K>) -> Evaluation<K> {
        let Some((rate, d_velocity, d_deflection)) = law_rate::<0, K>(&p.law, v, z, abs(z)) else {
            // Every lane elastic: the law's rate is the velocity itself.
            let force = force(p, v, z, v);
            let g1 = add(sub(v, p.free_velocity), mul(p.coupling, force));
            let g2 = add(sub(v, mul(p.two_over_k, sub(z, p.deflection_prev))), p.rate_prev);
            return Evaluation { g1, g2, rate: v, d_velocity: splat(1.0), d_deflection: none(), force };
        };
        let force = force(p, v, z, rate);
        let g1 = add(sub(v, p.free_velocity), mul(p.coupling, force));
        let g2 = add(sub(rate, mul(p.two_over_k, sub(z, p.deflection_prev))), p.rate_prev);
        Evaluation { g1, g2, rate, d_velocity, d_deflection, force }
    }

    /// The friction force at `(v, z)` with the bristle's `rate` (`ElastoPlasticParams::force_n`,
    /// in its order).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn force<const K: usize>(p: &Terms<K>, v: V<K>, z: V<K>, rate: V<K>) -> V<K> {
        add(add(add(mul(p.stiffness, z), mul(p.damping, rate)), mul(p.viscous, v)), p.noise_force)
    }

    /// `(a / b)^2`, as `powi(2)` computes it.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn squared_ratio<const K: usize>(a: V<K>, b: V<K>) -> V<K> {
        let x = div(a, b);
        mul(x, x)
    }

    /// The registers of [`LANES`] bows.
    const REGISTERS: usize = LANES / 4;

    /// The terms the scalar solve works out once a sample, by the same expressions.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn terms(problems: &Problems) -> Terms<REGISTERS> {
        let fn_n = load(&problems.normal_force_n);
        let s0 = load(&problems.stiffness);
        let coulomb = load(&problems.coulomb);
        let stat = load(&problems.static_coefficient);
        let stribeck = load(&problems.stribeck_mps);
        Terms {
            free_velocity: load(&problems.free_velocity_mps),
            coupling: load(&problems.coupling_s_per_kg),
            two_over_k: div(splat(2.0), load(&problems.time_step_s)),
            deflection_prev: load(&problems.deflection_prev_m),
            rate_prev: load(&problems.rate_prev_mps),
            deflection_tolerance: div(mul(mul(splat(DEFLECTION_TOLERANCE), stat), fn_n), s0),
            stiffness: s0,
            damping: load(&problems.damping),
            viscous: load(&problems.viscous),
            noise_force: mul(mul(load(&problems.noise_per_normal_force), fn_n), load(&problems.noise)),
            law: Law {
                break_away: div(mul(mul(load(&problems.break_away_ratio), coulomb), fn_n), s0),
                coulomb_deflection: div(mul(coulomb, fn_n), s0),
                spread: div(mul(sub(stat, coulomb), fn_n), s0),
                stribeck,
                stribeck_squared: mul(stribeck, stribeck),
            },
        }
    }

    /// The scalar solve's Newton iteration for every lane in `active`, in lockstep.
    #[target_feature(enable = "avx2")]
    pub(super) fn newton(problems: &Problems, active: [bool; LANES]) -> Outcome {
        let p = terms(problems);
        let mut going = load(&active.map(|a| if a { f64::from_bits(u64::MAX) } else { 0.0 }));
        let mut v = load(&problems.start_velocity_mps);
        let mut z = load(&problems.start_deflection_m);
        let mut e = evaluate(&p, v, z);
        let mut accepted = none();
        let (mut accepted_rate, mut accepted_force) = (none(), none());
        let mut iterations = [0; LANES];
        let mut evaluations = [1; LANES];
        let mut iteration = 0;
        while iteration < MAX_ITERATIONS && bits(going) != 0 {
            iteration += 1;
            let going_bits = bits(going);
            for (l, count) in iterations.iter_mut().enumerate() {
                if going_bits & (1 << l) != 0 {
                    *count = iteration;
                }
            }
            let j11 = add(splat(1.0), mul(p.coupling, add(mul(p.damping, e.d_velocity), p.viscous)));
            let j12 = mul(p.coupling, add(p.stiffness, mul(p.damping, e.d_deflection)));
            let j21 = e.d_velocity;
            let j22 = sub(e.d_deflection, p.two_over_k);
            // `newton::solve_2x2`, in the lanes.
            let det = sub(mul(j11, j22), mul(j12, j21));
            let scale = mul(add(abs(j11), abs(j12)), add(abs(j21), abs(j22)));
            let dv = div(sub(mul(e.g1, j22), mul(j12, e.g2)), det);
            let dz = div(sub(mul(j11, e.g2), mul(j21, e.g1)), det);
            let det_abs = abs(det);
            let singular = or(not(finite(det)), or(le(det_abs, splat(1e-300)), le(det_abs, mul(splat(1e-14), scale))));
            let solved = and(not(singular), and(finite(dv), finite(dz)));
            let small = and(lt(abs(dv), splat(VELOCITY_TOLERANCE_MPS)), lt(abs(dz), p.deflection_tolerance));
            let accept = and(going, and(solved, small));
            accepted = or(accepted, accept);
            // `dupont_contact::accept_step`: the step below tolerance taken, the rate
            // carried along the law's partials, and the force there.
            let (stepped_v, stepped_z) = (sub(v, dv), sub(z, dz));
            let stepped_rate = sub(e.rate, add(mul(e.d_velocity, dv), mul(e.d_deflection, dz)));
            let stepped_force = force(&p, stepped_v, stepped_z, stepped_rate);
            accepted_rate = select(accept, stepped_rate, accepted_rate);
            accepted_force = select(accept, stepped_force, accepted_force);
            v = select(accept, stepped_v, v);
            z = select(accept, stepped_z, z);
            // A singular lane stops without an answer (the fallback takes over).
            going = and_not(and(going, solved), small);
            let velocity_scale = mul(j11, splat(VELOCITY_TOLERANCE_MPS));
            let deflection_scale = mul(j22, p.deflection_tolerance);
            let current = add(squared_ratio(e.g1, velocity_scale), squared_ratio(e.g2, deflection_scale));
            let mut stepping = going;
            let mut moved = none();
            let mut t = splat(1.0);
            let mut halvings = 0;
            while bits(stepping) != 0 {
                let vc = sub(v, mul(t, dv));
                let zc = sub(z, mul(t, dz));
                let c = evaluate(&p, vc, zc);
                let stepping_bits = bits(stepping);
                for (l, count) in evaluations.iter_mut().enumerate() {
                    if stepping_bits & (1 << l) != 0 {
                        *count += 1;
                    }
                }
                let lower = lt(add(squared_ratio(c.g1, velocity_scale), squared_ratio(c.g2, deflection_scale)), current);
                let last = if halvings == MAX_STEP_HALVINGS { all() } else { none() };
                let take = and(and(stepping, or(lower, last)), and(finite(vc), finite(zc)));
                v = select(take, vc, v);
                z = select(take, zc, z);
                e = Evaluation {
                    g1: select(take, c.g1, e.g1),
                    g2: select(take, c.g2, e.g2),
                    rate: select(take, c.rate, e.rate),
                    d_velocity: select(take, c.d_velocity, e.d_velocity),
                    d_deflection: select(take, c.d_deflection, e.d_deflection),
                    force: select(take, c.force, e.force),
                };
                moved = or(moved, take);
                stepping = if halvings == MAX_STEP_HALVINGS { none() } else { and_not(stepping, take) };
                t = select(stepping, mul(t, splat(0.5)), t);
                halvings += 1;
            }
            // No finite step: the fallback takes over.
            let stuck = or(not(moved), not(and(finite(e.g1), finite(e.g2))));
            going = and_not(going, stuck);
        }
        let accepted_bits = bits(accepted);
        Outcome {
            velocity_mps: store(v),
            deflection_m: store(z),
            rate_mps: store(accepted_rate),
            force_n: store(accepted_force),
            accepted: std::array::from_fn(|l| accepted_bits & (1 << l) != 0),
            iterations,
            evaluations,
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::friction::elementary;
        use crate::friction::dupont_lanes::Lanes;

        /// The lanes' `exp` and `sin`/`cos` give the scalar functions' bits on their
        /// ranges, at and past their ends, and on infinities and NaN.
        #[test]
        fn the_lane_functions_give_the_scalar_bits() {
            if !crate::cpu_has_avx2() {
                return;
            }
            let mut values = vec![0.0, -0.0, -708.0, -708.1, -745.0, -1e300, f64::NEG_INFINITY, f64::INFINITY, f64::NAN, 1.0, FRAC_PI_2, -FRAC_PI_2, 1.6, -3.0];
            for i in 0..40_000 {
                let u = i as f64 / 40_000.0;
                values.extend([-750.0 * u.powi(3), (2.0 * u - 1.0) * FRAC_PI_2, -0.5 * u]);
            }
            let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            for chunk in values.chunks(LANES) {
                let mut x: Lanes = [0.0; LANES];
                x[..chunk.len()].copy_from_slice(chunk);
                // SAFETY: AVX2 is present (checked above).
                let (exp, sin, cos) = unsafe { lanes(&x) };
                for l in 0..LANES {
                    let (s, c) = elementary::sin_cos_within_quarter_turn(x[l]);
                    assert!(same(exp[l], elementary::exp_at_most_zero(x[l])), "exp({:e})", x[l]);
                    assert!(same(sin[l], s) && same(cos[l], c), "sin_cos({:e})", x[l]);
                }
            }
        }

        /// An idle lane ([`Problems::idle`]) has finite terms, is elastic at rest (with
        /// every lane idle, `law_rate` answers `None`: the law is not evaluated), and its
        /// residuals there are 0, so its Newton step is 0 and its trial points stay at
        /// rest. With all zeros, its `2 / k` was infinite and its `z_ba` was `0 / 0`.
        #[test]
        fn an_idle_lane_rests_with_finite_terms() {
            if !crate::cpu_has_avx2() {
                return;
            }
            // SAFETY: AVX2 is present (checked above).
            let (terms, law_skipped, residuals) = unsafe { idle_lanes() };
            assert!(terms.iter().all(|t| t.is_finite()), "{terms:?}");
            assert!(law_skipped);
            assert!(residuals.iter().all(|&r| r == 0.0), "{residuals:?}");
        }

        /// Every lane idle: its terms, whether the law is skipped at rest, and the residuals
        /// there.
        #[target_feature(enable = "avx2")]
        unsafe fn idle_lanes() -> (Vec<f64>, bool, Vec<f64>) {
            let p = terms(&Problems::idle());
            let every = [p.two_over_k, p.deflection_tolerance, p.noise_force, p.law.break_away, p.law.coulomb_deflection, p.law.spread, p.law.stribeck, p.law.stribeck_squared];
            let terms = every.iter().flat_map(|&t| store::<REGISTERS, LANES>(t)).collect();
            let (v, z) = (none(), none());
            let law_skipped = law_rate::<0, REGISTERS>(&p.law, v, z, abs(z)).is_none();
            let e = evaluate(&p, v, z);
            let residuals = [e.g1, e.g2].iter().flat_map(|&r| store::<REGISTERS, LANES>(r)).collect();
            (terms, law_skipped, residuals)
        }

        /// In the registers of [`newton`] (the finite-width bow's single register takes the
        /// same code, generic in the number of registers).
        #[target_feature(enable = "avx2")]
        unsafe fn lanes(x: &Lanes) -> (Lanes, Lanes, Lanes) {
            let v: V<REGISTERS> = load(x);
            let (sin, cos) = sin_cos_within_quarter_turn::<0, REGISTERS>(v, all());
            (store(exp_at_most_zero::<0, REGISTERS>(v)), store(sin), store(cos))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::friction::dupont::ElastoPlasticParams;

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Eight contacts solved in lanes and the same eight solved one by one, sample after
    /// sample, end every sample with the same outputs, states and statistics to the bit:
    /// ordinary bowing (a slowly turning free velocity, so the bristles stick and slip),
    /// extreme friction, steps from 1 ms to 0.6 us, and inputs no law can take (NaN,
    /// infinity, no force) in some lanes while the others solve.
    #[test]
    fn lanes_give_the_scalar_solves_bits() {
        let mut unit = crate::test_uniform(0x2545_F491_4F6C_DD1D);
        let mut compared = 0;
        let mut fallbacks = 0;
        let (mut on_slope, mut sliding) = (0, 0);
        for case in 0..60u64 {
            let extreme = case % 3 == 2;
            let mut frictions = [ElastoPlasticParams::default(); LANES];
            for (l, friction) in frictions.iter_mut().enumerate() {
                friction.bristle_stiffness_n_per_m *= 0.2 + 5.0 * unit();
                friction.noise_per_normal_force = 0.05 * unit();
                if extreme {
                    friction.static_coefficient = [0.1, 0.8, 1.5, 1.0, 0.4, 2.0, 0.9, 1.2][l];
                    friction.coulomb_coefficient = [0.05f64, 0.3, 1.0, 0.2, 0.35, 0.1, 0.9, 0.6][l].min(friction.static_coefficient);
                    friction.bristle_stiffness_n_per_m = [1e3, 1e5, 1e6, 1e7, 3e4, 3e6, 2e2, 5e7][l];
                    friction.stribeck_velocity_mps = [0.01, 0.1, 1.0, 0.05, 0.003, 0.3, 2.0, 0.02][l];
                }
            }
            let mut scalar: Vec<BowContact> = (0..LANES).map(|l| BowContact::new(frictions[l], case * 10 + l as u64)).collect();
            let mut lanes: Vec<BowContact> = (0..LANES).map(|l| BowContact::new(frictions[l], case * 10 + l as u64)).collect();
            let phases: Vec<f64> = (0..LANES).map(|_| unit() * 6.0).collect();
            let rate_hz = 22_050.0 + 170_000.0 * unit();
            for n in 0..400 {
                let mut inputs = [ContactInput { free_velocity_mps: 0.0, coupling_s_per_kg: 0.0, normal_force_n: 0.0, time_step_s: 0.0 }; LANES];
                for (l, input) in inputs.iter_mut().enumerate() {
                    *input = if extreme {
                        let magnitude = |u: f64, top: f64| top * u.powi(3);
                        ContactInput {
                            free_velocity_mps: (2.0 * unit() - 1.0) * magnitude(unit(), 1e3),
                            coupling_s_per_kg: magnitude(unit(), 1e3),
                            normal_force_n: magnitude(unit(), 1e3),
                            time_step_s: 1.0 / (1_000.0 + 1.5e6 * unit()),
                        }
                    } else {
                        ContactInput {
                            free_velocity_mps: 0.3 * (phases[l] + n as f64 * 0.05).sin() - 0.1 + 0.01 * (unit() - 0.5),
                            coupling_s_per_kg: 0.5 + l as f64,
                            normal_force_n: 0.2 + 2.0 * l as f64,
                            time_step_s: 1.0 / rate_hz,
                        }
                    };
                    match (unit() * 60.0) as u32 {
                        0 => input.free_velocity_mps = f64::NAN,
                        1 => input.free_velocity_mps = f64::INFINITY,
                        2 => input.normal_force_n = f64::NAN,
                        3 => input.normal_force_n = 0.0,
                        _ => {}
                    }
                }
                let expected: Vec<ContactOutput> = scalar.iter_mut().zip(&inputs).map(|(c, i)| c.solve(i)).collect();
                let mut each = lanes.iter_mut();
                let got = BowContact::solve_lanes(&mut std::array::from_fn(|_| each.next()), &inputs);
                for l in 0..LANES {
                    let (e, g) = (expected[l], got[l]);
                    let context = format!("case {case}, sample {n}, lane {l}: {g:?} against {e:?} from {:?}", inputs[l]);
                    assert!(same(e.force_n, g.force_n) && same(e.relative_velocity_mps, g.relative_velocity_mps) && same(e.deflection_m, g.deflection_m), "{context}");
                    assert!(e.iterations == g.iterations && e.converged == g.converged, "{context}");
                    let (s, t) = (&scalar[l], &lanes[l]);
                    assert!(same(s.deflection_m(), t.deflection_m()) && same(s.rate_mps(), t.rate_mps()) && same(s.velocity_mps(), t.velocity_mps()), "{context}: state");
                    assert_eq!(s.stats, t.stats, "{context}: statistics");
                    compared += 1;
                    if inputs[l].normal_force_n > 0.0 {
                        let alpha = frictions[l].bristle_rate(inputs[l].normal_force_n, e.relative_velocity_mps, e.deflection_m).adhesion;
                        if alpha > 0.0 && alpha < 1.0 {
                            on_slope += 1;
                        } else if alpha == 1.0 {
                            sliding += 1;
                        }
                    }
                }
            }
            fallbacks += scalar.iter().map(|c| c.stats.fallbacks).sum::<u64>();
        }
        println!("{compared} solves compared: {on_slope} on the adhesion map's slope, {sliding} fully sliding, {fallbacks} fallbacks");
        assert!(compared == 60 * 400 * LANES);
        assert!(fallbacks > 0, "no lane reached the fallback: the test would not see it");
    }

    /// The finite-width bow's law in lanes gives `bristle_rate`'s rate and partials to the
    /// bit in every zone of the adhesion map (elastic, on its slope, sliding, with some
    /// lanes in each), at ordinary and extreme frictions and forces, and for NaN and
    /// infinite inputs.
    #[test]
    fn bristle_rates_give_the_scalar_bits() {
        if !crate::cpu_has_avx2() {
            assert!(bristle_rates(&ElastoPlasticParams::matusiak2025(), 1.0, &[0.0; POINT_LANES], &[0.0; POINT_LANES]).is_none());
            return;
        }
        let mut unit = crate::test_uniform(0x9E37_79B9_7F4A_7C15);
        let mut zones = [0usize; 3];
        for case in 0..20_000 {
            let mut friction = if case % 2 == 0 { ElastoPlasticParams::matusiak2025() } else { ElastoPlasticParams::default() };
            let extreme = case % 5 == 4;
            if extreme {
                friction.bristle_stiffness_n_per_m *= 10f64.powf(4.0 * unit() - 2.0);
                friction.stribeck_velocity_mps *= 10f64.powf(2.0 * unit() - 1.0);
            }
            let normal_force_n = if extreme { 10f64.powf(6.0 * unit() - 3.0) } else { 0.05 + 2.0 * unit() };
            // Deflections around the break-away and steady deflections, so every zone is met.
            let steady = friction.static_coefficient * normal_force_n / friction.bristle_stiffness_n_per_m;
            let (mut v, mut z) = ([0.0; POINT_LANES], [0.0; POINT_LANES]);
            for l in 0..POINT_LANES {
                v[l] = (2.0 * unit() - 1.0) * [0.001, 0.05, 0.5, 5.0][l];
                z[l] = (2.0 * unit() - 1.0) * 1.5 * steady;
                match (unit() * 200.0) as u32 {
                    0 => v[l] = f64::NAN,
                    1 => z[l] = f64::INFINITY,
                    2 => v[l] = 0.0,
                    _ => {}
                }
            }
            let (rate, d_velocity, d_deflection) = bristle_rates(&friction, normal_force_n, &v, &z).unwrap();
            for l in 0..POINT_LANES {
                let e = friction.bristle_rate(normal_force_n, v[l], z[l]);
                let context = format!("case {case}, lane {l}: v {} z {} fN {normal_force_n}: {e:?}", v[l], z[l]);
                assert!(same(e.rate_mps, rate[l]), "{context}: rate {}", rate[l]);
                assert!(same(e.d_rate_d_velocity, d_velocity[l]), "{context}: by velocity {}", d_velocity[l]);
                assert!(same(e.d_rate_d_deflection, d_deflection[l]), "{context}: by deflection {}", d_deflection[l]);
                zones[if e.adhesion == 0.0 { 0 } else if e.adhesion < 1.0 { 1 } else { 2 }] += 1;
            }
        }
        println!("elastic, on the slope, sliding: {zones:?}");
        assert!(zones.iter().all(|&n| n > 5_000), "every zone often: {zones:?}");
    }
}

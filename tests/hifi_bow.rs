//! matusiak2025's high-fidelity bowed string (`rosin_physics::bow::hifi_bow`): a stiff string with
//! torsion, bow hair and a bow of finite width touching it at M points, each with the
//! passive refined elasto-plastic friction. The discrete energy balance holds to rounding,
//! every loss term stays non-negative, the paper's Table 2 settings give Helmholtz motion at
//! the scheme's pitch for M = 1, 2 and 4, and the coupled Newton solve converges in a few
//! steps, with a fallback that still gives a finite answer when it is forced.

#[path = "common/alloc_guard.rs"]
mod alloc_guard;

use nice_assert_no_alloc::assert_no_alloc;
use rosin_physics::bow::hifi_bow::{HiFiBowParams, HiFiBowedString};
use rosin_physics::friction::newton::IterationStats;
use rosin_physics::string::tuning::{cents, helmholtz_band_hz};

const RATE: f64 = 44_100.0;

fn paper(points: usize) -> HiFiBowParams {
    HiFiBowParams { contact_points: points, ..HiFiBowParams::matusiak2025() }
}

#[test]
fn the_energy_balance_holds_to_rounding_on_a_lossless_string() {
    for points in [1, 4] {
        let mut params = paper(points);
        params.torsion.as_mut().unwrap().quality_factor = f64::INFINITY;
        let mut bowed = HiFiBowedString::new(params, RATE);
        bowed.set_string_losses(0.0, 0.0);
        bowed.set_power_tracking(true);
        bowed.contact_mut().tolerance_mps = 1e-13;
        bowed.contact_mut().step_tolerance_mps = 1e-13;
        let k = bowed.time_step_s();
        let (mut worst, mut stored, mut supplied, mut lost) = (0.0f64, 0.0f64, 0.0, 0.0);
        let mut worst_relative_to_step = 0.0f64;
        let mut before = bowed.energy_j();
        for _ in 0..RATE as usize {
            bowed.tick();
            let after = bowed.energy_j();
            let step = *bowed.last_step();
            assert_eq!(step.string_loss_w, 0.0);
            assert_eq!(step.torsion_loss_w, 0.0);
            let error = (after - before + k * (step.loss_w() + step.bow_power_w)).abs();
            stored = stored.max(after);
            worst = worst.max(error);
            if after > 1e-3 * stored {
                worst_relative_to_step = worst_relative_to_step.max(error / after);
            }
            supplied -= k * step.bow_power_w;
            lost += k * step.loss_w();
            before = after;
        }
        let end = bowed.energy();
        eprintln!(
            "M = {points}: stored up to {stored:.4e} J (string {:.3e}, torsion {:.3e}, hair {:.3e}, bristles {:.3e} at the end), supplied {supplied:.4e} J, lost {lost:.4e} J; \
             worst step error {worst:.2e} J = {:.2e} of the largest H ({worst_relative_to_step:.2e} of that step's H)",
            end.string_j,
            end.torsion_j,
            end.hair_j,
            end.bristle_j,
            worst / stored
        );
        // Something happens: the bow feeds the string, and the string holds most of it.
        assert!(stored > 1e-4 && supplied > 1e-3, "nothing moved: {stored:e} J stored, {supplied:e} J supplied");
        assert!(end.string_j > 0.5 * end.total_j() && end.torsion_j > 0.0 && end.hair_j > 0.0 && end.bristle_j > 0.0);
        assert!(worst <= 1e-12 * stored, "energy balance off by {:.2e} of the stored energy", worst / stored);
        assert!((supplied - lost - end.total_j()).abs() <= 1e-9 * supplied, "{supplied} in, {lost} lost, {} stored", end.total_j());
    }
}

#[test]
fn every_loss_term_is_non_negative_at_every_sample() {
    let mut bowed = HiFiBowedString::new(paper(4), RATE);
    bowed.set_power_tracking(true);
    let k = bowed.time_step_s();
    let mut least = [f64::MAX; 4];
    let mut largest = [0.0f64; 4];
    let mut worst_balance = 0.0f64;
    let mut stored = 0.0f64;
    let mut before = bowed.energy_j();
    for _ in 0..RATE as usize {
        bowed.tick();
        let s = *bowed.last_step();
        for (i, q) in [s.string_loss_w, s.torsion_loss_w, s.hair_loss_w, s.bristle_loss_w].into_iter().enumerate() {
            least[i] = least[i].min(q);
            largest[i] = largest[i].max(q);
        }
        let after = bowed.energy_j();
        stored = stored.max(after);
        worst_balance = worst_balance.max((after - before + k * (s.loss_w() + s.bow_power_w)).abs());
        before = after;
    }
    eprintln!("least / largest loss (W): string {:.2e} / {:.2e}, torsion {:.2e} / {:.2e}, hair {:.2e} / {:.2e}, bristles {:.2e} / {:.2e}", least[0], largest[0], least[1], largest[1], least[2], largest[2], least[3], largest[3]);
    eprintln!("with losses, worst step balance error {:.2e} of the largest H", worst_balance / stored);
    for (name, (l, g)) in ["string", "torsion", "hair", "bristle"].iter().zip(least.iter().zip(largest.iter())) {
        assert!(*g > 0.0, "{name} never lost anything");
        // The bristle loss is F v - sigma0 mu_t z delta_t z with the realised v: a
        // difference of two terms up to a watt, each rounded; 1e-9 of the largest is that.
        assert!(*l >= -1e-9 * g, "{name} loss went negative: {l:e} W (largest {g:e} W)");
    }
    // The balance holds with the string's losses too (the sigma1 term is in H).
    assert!(worst_balance <= 1e-11 * stored, "balance with losses off by {:.2e}", worst_balance / stored);
}

/// Bows Table 2's string with `points` contact points and torsion for `seconds`, and
/// returns the relative velocity at the bow's centre over the last `measure_s`, with the
/// Newton statistics of that stretch alone.
fn bow(points: usize, seconds: f64, measure_s: f64) -> (HiFiBowedString, Vec<f64>, IterationStats) {
    let mut bowed = HiFiBowedString::new(paper(points), RATE);
    let total = (seconds * RATE) as usize;
    let measured = (measure_s * RATE) as usize;
    for _ in 0..total - measured {
        bowed.tick();
    }
    bowed.contact_mut().stats = IterationStats::default();
    let centre = |v: &[f64; 4]| if points % 2 == 1 { v[points / 2] } else { 0.5 * (v[points / 2 - 1] + v[points / 2]) };
    let trace = (0..measured)
        .map(|_| {
            bowed.tick();
            centre(&bowed.last_step().relative_velocity_mps)
        })
        .collect();
    let stats = bowed.stats().clone();
    (bowed, trace, stats)
}

/// Table 2's string plays at its note, 98 Hz (the scheme's first mode is 0.06 cents above
/// it). `SchemeGrid::helmholtz_frequency_hz`, the 1/n^2-weighted mean of `f_n / n`, predicts
/// 3.5 cents higher: it counts the partials that stiffness stretches, but on this string
/// they are heavily damped (`sigma1` 0.0087 m^2/s: a 2 kHz partial has a T60 of 0.1 s).
/// The measured pitch stays within 0.2 cents of the first mode (with `sigma1` lowered to
/// 0.001 it rose 1.2 cents towards the weighted mean), so the note is the reference.
const NOTE_HZ: f64 = 98.0;

#[test]
fn table_2_bowing_gives_helmholtz_motion_at_the_note() {
    let params = paper(4);
    let vb = params.bow_velocity_mps;
    let beta = params.bow_position;
    // Ideal Helmholtz motion slips at -vb / beta (relative to the bow): halfway there
    // separates stick from slip however much the corners are rounded.
    let slip_threshold = -0.5 * vb / beta;
    for points in [1, 2, 4] {
        // 0.39 s of acceleration, then time to settle.
        let (bowed, trace, stats) = bow(points, 1.6, 0.8);
        let helmholtz_hz = bowed.string().grid().helmholtz_frequency_hz(helmholtz_band_hz(RATE));
        // Slip onsets: the relative velocity falls through the threshold (hysteresis back
        // at -0.3 vb), timed by interpolating the crossing.
        let mut onsets = Vec::new();
        let mut slipping = false;
        for i in 1..trace.len() {
            let v = trace[i];
            if !slipping && v < slip_threshold {
                let (a, b) = (trace[i - 1], v);
                onsets.push((i - 1) as f64 + (a - slip_threshold) / (a - b));
                slipping = true;
            } else if slipping && v > -0.3 * vb {
                slipping = false;
            }
        }
        let periods = trace.len() as f64 / RATE * NOTE_HZ;
        let period_samples = (onsets[onsets.len() - 1] - onsets[0]) / (onsets.len() - 1) as f64;
        let pitch_hz = RATE / period_samples;
        let stick = trace.iter().filter(|v| **v >= slip_threshold).count() as f64 / trace.len() as f64;
        let near_bow = trace.iter().filter(|v| v.abs() < 0.3 * vb).count() as f64 / trace.len() as f64;
        let fastest = trace.iter().copied().fold(f64::MAX, f64::min);
        eprintln!(
            "M = {points}: {} slips in {periods:.2} periods, stick {stick:.3} (1 - beta = {:.3}; within 0.3 vb of the bow {near_bow:.3}), fastest slip {fastest:.2} m/s (-vb/beta = {:.2}), \
             pitch {pitch_hz:.3} Hz = {:+.2} cents from the note ({:+.2} from the first mode, {:+.2} from helmholtz_frequency_hz {helmholtz_hz:.3} Hz); Newton median {:?}, max {:?}, fallbacks {}",
            onsets.len(),
            1.0 - beta,
            -vb / beta,
            cents(pitch_hz, NOTE_HZ),
            cents(pitch_hz, bowed.string().grid().mode_frequency_hz(1)),
            cents(pitch_hz, helmholtz_hz),
            stats.median(),
            stats.max(),
            stats.fallbacks
        );
        assert!((onsets.len() as f64 / periods - 1.0).abs() < 0.05, "M = {points}: {} slips in {periods:.1} periods", onsets.len());
        assert!((stick - (1.0 - beta)).abs() < 0.02, "M = {points}: stick fraction {stick:.3}, ideal {:.3}", 1.0 - beta);
        // Sticking means moving with the bow, not just short of the slip: most of the
        // stick stays within 0.3 vb of it (the rest is the rounded corners).
        assert!(near_bow > 1.0 - beta - 0.1, "M = {points}: only {near_bow:.3} of the period near the bow");
        assert!(fastest < -0.6 * vb / beta, "M = {points}: the slip only reaches {fastest:.2} m/s");
        assert!(cents(pitch_hz, NOTE_HZ).abs() < 3.0, "M = {points}: {pitch_hz:.3} Hz");
        assert!(bowed.is_sane());
    }
}

#[test]
fn newton_converges_quickly_and_the_forced_fallback_stays_finite() {
    for points in [1, 4] {
        let (_, _, stats) = bow(points, 1.0, 0.5);
        eprintln!("M = {points}, steady bowing: median {:?}, max {:?} iterations, {} fallbacks in {} solves", stats.median(), stats.max(), stats.fallbacks, stats.solves());
        assert!(stats.median().unwrap() <= 4, "median {:?}", stats.median());
        assert_eq!(stats.fallbacks, 0);
    }

    // Two identical strings bowing; one is thrown a pathological start with a one-step
    // Newton cap, so it must take the Gauss-Seidel fallback, which finds the same root.
    let mut reference = HiFiBowedString::new(paper(4), RATE);
    let mut forced = HiFiBowedString::new(paper(4), RATE);
    for _ in 0..(0.6 * RATE) as usize {
        reference.tick();
        forced.tick();
    }
    for n in 0..200 {
        if n % 20 == 0 {
            forced.contact_mut().set_warm_start(1e3, -1e6);
            forced.contact_mut().max_newton_steps = 1;
        }
        let expected = reference.tick();
        let got = forced.tick();
        forced.contact_mut().max_newton_steps = rosin_physics::bow::hifi_contact::MAX_NEWTON_STEPS;
        let step = forced.last_step();
        if n % 20 == 0 {
            assert!(step.fell_back && !step.lifted, "sample {n}: no fallback");
        }
        assert!(got.is_finite() && step.force_n.iter().all(|f| f.abs() < 2.0 * 1.021 * 2.343), "sample {n}: {step:?}");
        assert!((got - expected).abs() <= 1e-6 * expected.abs().max(1.0), "sample {n}: {got} vs {expected}");
    }
    assert_eq!(forced.stats().fallbacks, 10);

    // Absurd and non-finite controls: the result stays finite and bounded.
    let mut wild = HiFiBowedString::new(paper(4), RATE);
    let controls = [(1e4, 50.0, 0.001), (f64::NAN, f64::INFINITY, f64::NAN), (0.0, -3.0, 0.5), (40.0, -20.0, 0.99), (1e-12, 1e3, 0.2)];
    for (force, velocity, position) in controls {
        wild.set_normal_force_n(force);
        wild.set_bow_velocity_mps(velocity);
        wild.set_bow_position(position);
        for _ in 0..2000 {
            let y = wild.tick();
            assert!(y.is_finite() && y.abs() < 1e6, "{force} N, {velocity} m/s at {position}: {y}");
        }
        assert!(wild.is_sane(), "{force} N, {velocity} m/s at {position}");
    }
}

#[test]
fn ticking_does_not_allocate_and_reset_is_deterministic() {
    let mut bowed = HiFiBowedString::new(paper(4), RATE);
    bowed.set_power_tracking(true);
    let mut first = vec![0.0; 4000];
    assert_no_alloc(|| {
        for y in first.iter_mut() {
            *y = bowed.tick();
        }
        bowed.set_bow_position(0.12);
        bowed.set_normal_force_n(1.0);
    });
    bowed.reset();
    bowed.set_bow_position(0.0786);
    bowed.set_normal_force_n(2.343);
    let again: Vec<f64> = (0..4000).map(|_| bowed.tick()).collect();
    assert_eq!(first, again);
    assert!(first.iter().any(|y| y.abs() > 1e-3));
}

#[test]
fn the_contact_never_spends_more_than_its_budget_on_the_worst_inputs() {
    // Issue 18: a hard budget, asserted as a maximum. The coupled contact meets hostile
    // samples: free velocities from 1e-9 to 1e3 m/s of either sign and jumping, normal forces
    // from 1e-12 to 1e4 N, NaN and infinity, near-singular and lopsided mobilities, bristles
    // from 1e2 to 1e8 N/m, and warm starts far from any root. Every answer is finite, and no
    // solve takes more than MAX_EVALUATIONS_PER_SAMPLE_PER_POINT evaluations a point.
    use rosin_physics::bow::hifi_contact::{BristleContact, ContactSystem, MAX_EVALUATIONS_PER_SAMPLE_PER_POINT};
    use rosin_physics::friction::dupont::ElastoPlasticParams;
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut solves, mut fallbacks, mut worst) = (0u64, 0u64, 0usize);
    for points in 1..=4usize {
        for stiffness in [1e2, 1e4, 1e6, 1e8] {
            let friction = ElastoPlasticParams { bristle_stiffness_n_per_m: stiffness / points as f64, ..ElastoPlasticParams::matusiak2025() };
            let mut contact = BristleContact::new(friction, points);
            for sample in 0..2_000 {
                let scale = 10f64.powf(-9.0 + 12.0 * next());
                let mut free = [0.0; 4];
                for a in free.iter_mut().take(points) {
                    *a = scale * (2.0 * next() - 1.0);
                }
                let force = match sample % 13 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => 1e-12,
                    _ => 10f64.powf(-3.0 + 7.0 * next()),
                };
                if sample % 17 == 0 {
                    free[0] = f64::NAN;
                }
                // A mobility of a string's stencils close together (near singular) plus hair.
                let (diagonal, coupling) = (10f64.powf(-4.0 + 4.0 * next()), 0.999 * next());
                let mut mobility = [[0.0; 4]; 4];
                for m in 0..points {
                    for j in 0..points {
                        mobility[m][j] = diagonal * if m == j { 1.0 } else { coupling };
                    }
                    mobility[m][m] += 1e-3;
                }
                if sample % 50 == 0 {
                    contact.set_warm_start(1e3 * (2.0 * next() - 1.0), -1e6);
                }
                let system = ContactSystem { points, free_velocity_mps: free, mobility_s_per_kg: mobility };
                let solution = contact.solve(&system, force, 1.0 / (22_050.0 * (1.0 + 70.0 * next())));
                assert!(solution.force_n.iter().chain(&solution.velocity_mps).all(|x| x.is_finite()), "sample {sample}: {solution:?}");
            }
            solves += contact.stats.solves();
            fallbacks += contact.stats.fallbacks;
            assert!(contact.stats.max_evaluations <= MAX_EVALUATIONS_PER_SAMPLE_PER_POINT * points, "{} evaluations with {points} points", contact.stats.max_evaluations);
            worst = worst.max(contact.stats.max_evaluations.div_ceil(points));
        }
    }
    println!("{solves} hostile solves, {fallbacks} fell back; the most evaluations a point took in one sample: {worst} (budget {MAX_EVALUATIONS_PER_SAMPLE_PER_POINT})");
    assert!(fallbacks > 0, "nothing here was hard enough to test the fallback's budget");
    assert!(worst <= MAX_EVALUATIONS_PER_SAMPLE_PER_POINT, "{worst} evaluations a point");
}

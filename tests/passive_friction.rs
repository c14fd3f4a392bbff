//! matusiak2025's passive refined elasto-plastic friction on its bowed lumped mass
//! (`rosin_physics::bow::lumped`): the discrete energy balance holds to rounding, the refined
//! bristle loss never goes negative where Dupont's constant damping does (the paper's
//! Fig. 4 case), and `G(v)` has a single root across a sweep of the paper's parameters.

use rosin_physics::bow::lumped::{BristleDamping, LumpedBowedMass, LumpedParams};

const RATE: f64 = 44_100.0;
/// The paper's lumped run: the bow accelerates at 3.439 m/s^2 to 0.344 m/s (Fig. 3).
const BOW_ACCELERATION_MPS2: f64 = 3.439;
const BOW_SPEED_MPS: f64 = 0.344;
const NORMAL_FORCE_N: f64 = 2.343;

fn bow_velocity(n: usize) -> f64 {
    (BOW_ACCELERATION_MPS2 * n as f64 / RATE).min(BOW_SPEED_MPS)
}

/// Runs `seconds` and returns, per step, (stored energy before, after, k (Q + P), step).
fn run(params: LumpedParams, normal_force_n: f64, seconds: f64) -> Vec<(f64, f64, f64, rosin_physics::bow::lumped::LumpedStep)> {
    let mut system = LumpedBowedMass::new(params, RATE);
    let k = system.time_step_s();
    (0..(seconds * RATE) as usize)
        .map(|n| {
            let before = system.energy_j();
            let step = system.step(normal_force_n, bow_velocity(n));
            let after = system.energy_j();
            let flow = k * (step.mass_loss_w + step.hair_loss_w + step.bristle_loss_w + step.bow_power_w);
            (before, after, flow, step)
        })
        .collect()
}

#[test]
fn the_discrete_energy_balance_holds_to_rounding() {
    for (name, mut params) in [("lossy", LumpedParams::matusiak2025()), ("lossless mass and hair", LumpedParams::matusiak2025())] {
        if name.starts_with("lossless") {
            params.damping_kg_per_s = 0.0;
            params.hair_damping_kg_per_s = 0.0;
        }
        let steps = run(params, NORMAL_FORCE_N, 1.0);
        let stored = steps.iter().map(|s| s.1).fold(0.0, f64::max);
        let supplied: f64 = steps.iter().map(|s| -s.3.bow_power_w / RATE).sum();
        let lost: f64 = steps.iter().map(|s| (s.3.mass_loss_w + s.3.hair_loss_w + s.3.bristle_loss_w) / RATE).sum();
        let worst = steps.iter().map(|(before, after, flow, _)| (after - before + flow).abs()).fold(0.0, f64::max);
        eprintln!("{name}: stored up to {stored:.3e} J, supplied {supplied:.3e} J, lost {lost:.3e} J, worst step error {:.2e} of the stored energy", worst / stored);
        // Something happens: the bow feeds the system and stick-slip sets in.
        assert!(stored > 1e-6 && supplied > 1e-4, "nothing moved: {stored:e} J stored, {supplied:e} J supplied");
        assert!(worst <= 1e-12 * stored, "energy balance off by {:.2e} of the stored energy", worst / stored);
        // Over the whole run: what went in either is stored or was lost.
        let end = steps.last().unwrap().1;
        assert!((supplied - lost - end).abs() <= 1e-9 * supplied, "{supplied} in, {lost} lost, {end} stored");
    }
}

fn fig4(damping_law: BristleDamping) -> LumpedParams {
    let mut p = LumpedParams::matusiak2025();
    p.friction.bristle_stiffness_n_per_m = 500.0;
    p.friction.bristle_damping_kg_per_s = 3.0;
    p.damping_law = damping_law;
    p
}

#[test]
fn the_refined_model_stays_passive_where_dupont_does_not() {
    let force = 0.25;
    let refined = run(fig4(BristleDamping::Refined), force, 1.0);
    let dupont = run(fig4(BristleDamping::Constant), force, 1.0);
    let least = |steps: &[(f64, f64, f64, rosin_physics::bow::lumped::LumpedStep)]| steps.iter().map(|s| s.3.bristle_loss_w).fold(f64::MAX, f64::min);
    let scale = refined.iter().map(|s| s.3.bristle_loss_w.abs()).fold(0.0, f64::max);
    eprintln!("least bristle loss: refined {:.3e} W, Dupont {:.3e} W (largest {scale:.3e} W)", least(&refined), least(&dupont));
    assert!(least(&refined) >= -1e-9 * scale, "the refined model lost passivity: {:.3e} W", least(&refined));
    let negative = dupont.iter().filter(|s| s.3.bristle_loss_w < -1e-6 * scale).count();
    assert!(negative > 0, "Dupont's constant damping never went active on the Fig. 4 input");
    // While sliding fast, the refined force follows the steady-state curve: between
    // muC fN and muS fN in size, against the slip.
    // While sliding fast, the force follows the steady-state curve (between muC fN and
    // muS fN in size, against the slip): the refined model closely, Dupont's not.
    let p = fig4(BristleDamping::Refined).friction;
    let off_curve = |steps: &[(f64, f64, f64, rosin_physics::bow::lumped::LumpedStep)]| {
        let sliding: Vec<_> = steps.iter().map(|s| s.3).filter(|s| s.velocity_mps.abs() > 0.1).collect();
        let off = sliding
            .iter()
            .filter(|s| {
                let curve = force * (p.coulomb_coefficient + (p.static_coefficient - p.coulomb_coefficient) * (-(s.velocity_mps / p.stribeck_velocity_mps).powi(2)).exp());
                (s.force_n * s.velocity_mps.signum() - curve).abs() > 0.2 * curve
            })
            .count();
        (off, sliding.len())
    };
    let ((refined_off, refined_sliding), (dupont_off, dupont_sliding)) = (off_curve(&refined), off_curve(&dupont));
    eprintln!("more than 20 % off the curve while sliding: refined {refined_off} of {refined_sliding}, Dupont {dupont_off} of {dupont_sliding}");
    assert!(refined_sliding > 100 && dupont_sliding > 100, "no sliding to judge");
    assert!(refined_off * 20 <= refined_sliding, "refined: {refined_off} of {refined_sliding} sliding samples off the curve");
    assert!(dupont_off as f64 / dupont_sliding as f64 > 4.0 * refined_off.max(1) as f64 / refined_sliding as f64, "Dupont follows the curve as well as the refined model");
}

/// Sign changes of `G(v)` over a fine grid of relative velocities.
fn roots(system: &LumpedBowedMass, normal_force_n: f64, bow: f64) -> usize {
    let mut count = 0;
    let mut previous = system.residual(normal_force_n, bow, -3.0).0;
    for i in 1..=6000 {
        let v = -3.0 + i as f64 * 1e-3;
        let g = system.residual(normal_force_n, bow, v).0;
        if g == 0.0 || (g > 0.0) != (previous > 0.0) {
            count += 1;
        }
        previous = g;
    }
    count
}

#[test]
fn the_refined_residual_has_a_single_root_across_the_papers_parameters() {
    let mut checked = 0;
    for bar in [0.0027, 1.0, 100.0] {
        for force in [0.25, NORMAL_FORCE_N, 5.0] {
            let mut params = LumpedParams::matusiak2025();
            params.friction.bristle_damping_kg_per_s = bar;
            let mut system = LumpedBowedMass::new(params, RATE);
            for n in 0..(0.1 * RATE) as usize {
                if n % 200 == 100 {
                    let found = roots(&system, force, bow_velocity(n));
                    assert_eq!(found, 1, "sigma1_bar {bar}, fN {force}, step {n}: {found} roots");
                    checked += 1;
                }
                system.step(force, bow_velocity(n));
            }
            let fallbacks = system.stats.fallbacks;
            eprintln!("sigma1_bar {bar}, fN {force}: {fallbacks} bisection fallbacks in {} steps", (0.1 * RATE) as usize);
            assert_eq!(fallbacks, 0, "sigma1_bar {bar}, fN {force}: Newton fell back {fallbacks} times");
        }
    }
    assert!(checked >= 90);
}

#[test]
fn the_budgeted_scalar_solve_stays_within_its_budget_and_finds_the_root() {
    // The high-fidelity bow's fallback solves each point with `find_root_within`: over a
    // spread of problems, with a budget of 24 residual evaluations, it agrees with the full
    // solve within 1e-6 m/s where that converges quickly (where Newton stalls on a corner,
    // the bisection it falls to ends at about 1e-7), and never spends more than its budget,
    // even on a problem posed far from its root.
    use rosin_physics::friction::dupont::ElastoPlasticParams;
    use rosin_physics::friction::refined::{BristleDamping as Law, RefinedBristle, RefinedProblem};
    let friction = ElastoPlasticParams::matusiak2025();
    let (mut agreed, mut worst_used) = (0, 0);
    for (i, free) in [-2.0, -0.5, -0.05, 0.0, 0.01, 0.3, 1.5].into_iter().enumerate() {
        for (j, start) in [0.0, -1.0, 5.0, 1e3].into_iter().enumerate() {
            let problem = RefinedProblem { friction: &friction, damping_law: Law::Refined, normal_force_n: 2.0, free_velocity_mps: free, mobility_s_per_kg: 0.05, time_step_s: 1.0 / 44_100.0 };
            let bristle = RefinedBristle::from_state(1e-6 * (i as f64 - 3.0), start, 1e-10);
            let search = bristle.find_root_within(&problem, 24);
            let (v, used) = (search.velocity_mps, search.evaluations);
            worst_used = worst_used.max(used);
            assert!(v.is_finite() && used <= 24, "free {free}, start {start}: {v} after {used}");
            let full = bristle.solve(&problem);
            if full.iterations <= 6 && j < 2 {
                assert!((v - full.velocity_mps).abs() <= 1e-6, "free {free}, start {start}: {v} against {}", full.velocity_mps);
                agreed += 1;
            }
        }
    }
    println!("{agreed} quick problems agree; the most evaluations spent: {worst_used}");
    assert!(agreed >= 6, "only {agreed} problems were quick for the full solve");
}

//! The bowed string (willemsen2019 section 3): Helmholtz motion, the hysteresis loop of the
//! elasto-plastic bow, the Newton solver's statistics and the edge cases of the contact.

mod common;

use common::{relative_loop_area, slips};
use rosin_physics::bow::bowed_string::{BowedString, BowingControls};
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::string::interpolation::CubicPoint;
use rosin_physics::string::note_string::NoteStringDesign;

const RATE: f64 = 48_000.0;

fn friction() -> ElastoPlasticParams {
    let s0 = 1e5;
    ElastoPlasticParams { bristle_stiffness_n_per_m: s0, bristle_damping_kg_per_s: 0.001 * s0.sqrt(), ..ElastoPlasticParams::default() }
}

fn string_for(frequency_hz: f64) -> BowedString {
    string_with(frequency_hz, friction())
}

fn string_with(frequency_hz: f64, friction: ElastoPlasticParams) -> BowedString {
    let (grid, material) = NoteStringDesign::default().build(frequency_hz, RATE, 1024);
    BowedString::with_capacity(1024, grid, material, friction, 7)
}

/// The same bow without its noise term, for measurements of the deterministic motion.
fn quiet_friction() -> ElastoPlasticParams {
    ElastoPlasticParams { noise_per_normal_force: 0.0, ..friction() }
}

fn controls(force: f64, velocity: f64, position: f64) -> BowingControls {
    BowingControls { normal_force_n: force, bow_velocity_mps: velocity, bow_position: position, finger_position_m: None }
}

/// Bows for `seconds` with a 100 ms ramp in, recording (relative velocity, force) per sample.
fn bow(string: &mut BowedString, force: f64, velocity: f64, position: f64, seconds: f64) -> Vec<(f64, f64)> {
    let samples = (seconds * RATE) as usize;
    let ramp = (0.1 * RATE) as usize;
    (0..samples)
        .map(|i| {
            let a = (i as f64 / ramp as f64).min(1.0);
            string.tick(&controls(force * a, velocity * a, position));
            let c = string.last_contact();
            (c.relative_velocity_mps, c.force_n)
        })
        .collect()
}

#[test]
fn helmholtz_motion_sticks_and_slips_in_the_right_proportions() {
    let (f0, vb, beta) = (440.0, 0.1, 0.18);
    let mut string = string_with(f0, quiet_friction());
    let trace = bow(&mut string, 6.0, vb, beta, 1.5);
    let steady = &trace[(1.0 * RATE) as usize..];
    let period = RATE / f0;

    // One slip per period: count entries into slipping (relative velocity below -vB).
    let slips = slips(steady.iter().map(|&(v, _)| v), vb);
    let periods = steady.len() as f64 / period;
    assert!((slips as f64 / periods - 1.0).abs() < 0.05, "{slips} slips in {periods:.1} periods");

    // Slip for about beta of the period and stick for the rest (the corner is rounded by
    // the losses and the bow's grip, which adds a short transition to each).
    let fraction = |p: &dyn Fn(f64) -> bool| steady.iter().filter(|(v, _)| p(*v)).count() as f64 / steady.len() as f64;
    let slip = fraction(&|v| v < -vb);
    assert!(slip > beta - 0.02 && slip < beta + 0.05, "slip fraction {slip:.3}, ideal {beta:.3}");
    let stick = fraction(&|v| v.abs() < 0.3 * vb);
    assert!(stick > 1.0 - beta - 0.08 && stick < 1.0 - beta + 0.02, "stick fraction {stick:.3}, ideal {:.3}", 1.0 - beta);

    // During the slip the string moves back at about vB (1 - beta) / beta relative to the
    // string's own stick velocity: the relative velocity plateaus near -vB / beta.
    let mut slip_velocities: Vec<f64> = steady.iter().map(|(v, _)| *v).filter(|v| *v < -vb).collect();
    slip_velocities.sort_by(f64::total_cmp);
    let fastest_quarter = &slip_velocities[..slip_velocities.len() / 4];
    let plateau = fastest_quarter.iter().sum::<f64>() / fastest_quarter.len() as f64;
    let ideal = -vb / beta;
    assert!((plateau / ideal - 1.0).abs() < 0.3, "slip plateau {plateau:.3} m/s, ideal {ideal:.3} m/s");
}

#[test]
fn force_against_relative_velocity_shows_a_hysteresis_loop() {
    let mut string = string_for(293.66);
    let trace = bow(&mut string, 6.0, 0.1, 0.18, 1.2);
    let period = (RATE / 293.66).round() as usize;
    let cycle = &trace[trace.len() - 4 * period..];
    let relative = relative_loop_area(cycle, 4);
    assert!(relative > 0.02, "loop area is {relative:.4} of its bounding box");
    // A memoryless friction curve would give one force per velocity: here the force at the
    // same slip velocity differs between the start and the end of the slip.
    let slip: Vec<&(f64, f64)> = cycle.iter().filter(|(v, _)| *v < -0.3).collect();
    let spread = slip.iter().map(|(_, f)| *f).fold(f64::MIN, f64::max) - slip.iter().map(|(_, f)| *f).fold(f64::MAX, f64::min);
    assert!(spread > 0.1, "force spread over the slip {spread:.3} N");
}

#[test]
fn newton_converges_in_a_few_iterations() {
    for f0 in [55.0, 196.0, 440.0, 1318.5] {
        let mut string = string_for(f0);
        bow(&mut string, 6.0, 0.1, 0.18, 0.6);
        let stats = &string.bow.stats();
        let median = stats.median().unwrap();
        assert!(median <= 5, "f0 {f0}: median {median} iterations");
        assert!(stats.max().unwrap() < 50, "f0 {f0}: hit the iteration cap");
        assert_eq!(stats.fallbacks, 0, "f0 {f0}: took the fallback");
    }
}

#[test]
fn solved_velocity_is_the_strings_true_relative_velocity() {
    // With sum(w^2) in the Newton system, the solved v equals I dt. u - vB exactly.
    let mut string = string_for(440.0);
    bow(&mut string, 6.0, 0.1, 0.23, 0.3);
    let k = 1.0 / RATE;
    let mut worst: f64 = 0.0;
    for _ in 0..2000 {
        let grid = *string.string.grid();
        let point = CubicPoint::new(string.bow_point_m() / grid.spacing_m(), grid.intervals);
        let before = point.interpolate(string.string.previous_displacement());
        string.tick(&controls(6.0, 0.1, 0.23));
        let after = point.interpolate(string.string.displacement());
        let actual = (after - before) / (2.0 * k) - 0.1;
        worst = worst.max((actual - string.last_contact().relative_velocity_mps).abs());
    }
    assert!(worst < 1e-6, "solved and actual relative velocity differ by {worst:.2e} m/s");
}

#[test]
fn edge_cases_stay_finite() {
    // v = 0: a pressed, still bow (without the noise term, which would move the string).
    let mut string = string_with(440.0, quiet_friction());
    for _ in 0..4800 {
        let out = string.tick(&controls(5.0, 0.0, 0.1));
        assert!(out.is_finite());
    }
    assert!(string.string.displacement().iter().all(|u| u.abs() < 1e-9), "a still bow must not excite the string");

    // fN = 0: the bow is off; no force, the bristles relax.
    let mut string = string_for(440.0);
    bow(&mut string, 6.0, 0.1, 0.18, 0.3);
    for _ in 0..10 {
        string.tick(&controls(0.0, 0.1, 0.18));
        assert_eq!(string.last_contact().force_n, 0.0);
        assert_eq!(string.bow.deflection_m(), 0.0);
    }

    // Bow positions at and beyond the ends, extreme force and speed, many notes.
    for f0 in [41.2, 440.0, 2637.0] {
        for position in [0.0, 1e-6, 0.5, 0.999, 1.0, 2.0] {
            let mut string = string_for(f0);
            for (force, velocity) in [(20.0, 0.5), (1e-5, -0.5), (20.0, -1e-4)] {
                for _ in 0..2000 {
                    let out = string.tick(&controls(force, velocity, position));
                    assert!(out.is_finite(), "f0 {f0} position {position}");
                }
            }
            assert!(string.string.is_sane(0.05));
        }
    }
}

/// The bow's place is a fraction of the vibrating length. A finger jumping to a new stop
/// moves that place at once; the bow drifts there at `MAX_BOW_DRIFT_MPS` instead of jumping
/// (a jump was a click at a cello triad's change). A finger gliding, and the first
/// placement of a note, are followed exactly.
#[test]
fn the_bow_drifts_to_its_place_when_the_finger_jumps_and_follows_a_glide_exactly() {
    use rosin_physics::bow::bowed_string::MAX_BOW_DRIFT_MPS;
    let mut string = string_for(220.0);
    let length = string.string.grid().length_m;
    let h = string.string.grid().spacing_m();
    let k = 1.0 / RATE;
    let at = |finger_m: Option<f64>| BowingControls { finger_position_m: finger_m, ..controls(0.5, 0.1, 0.18) };
    let expected = |finger_m: f64| length - 0.18 * (length - finger_m);
    // The first placement is at once, wherever the finger is.
    string.tick(&at(Some(0.2 * length)));
    let first = string.bow_point_m();
    let stopped = string.string.finger().map(|(node, alpha)| (node as f64 + alpha) * h).unwrap();
    assert_eq!(first, expected(stopped));
    for _ in 0..2000 {
        string.tick(&at(Some(0.2 * length)));
    }
    // The finger jumps a fifth up the string: the place moves by 0.18 of the jump.
    let jump_to = 0.2 * length + 0.2 * length;
    let before = string.bow_point_m();
    let mut steps = 0;
    loop {
        string.tick(&at(Some(jump_to)));
        let now = string.bow_point_m();
        let moved = (now - before).abs();
        steps += 1;
        let target = expected(string.string.finger().map(|(node, alpha)| (node as f64 + alpha) * h).unwrap());
        if now == target {
            break;
        }
        assert!((moved - steps as f64 * MAX_BOW_DRIFT_MPS * k).abs() < 1e-12, "step {steps}: moved {moved}");
        assert!(steps < 1000, "the bow never arrived");
    }
    let distance = 0.18 * 0.2 * length;
    assert!((steps as f64 - distance / (MAX_BOW_DRIFT_MPS * k)).abs() <= 2.0, "{steps} samples to drift {distance} m");
    // A finger gliding back by a small step each sample: the bow follows exactly.
    for i in 0..500 {
        let finger = jump_to - 1e-5 * i as f64;
        string.tick(&at(Some(finger)));
        let placed = string.string.finger().map(|(node, alpha)| (node as f64 + alpha) * h).unwrap();
        assert_eq!(string.bow_point_m(), expected(placed), "glide step {i}");
    }
    assert!(string.string.is_sane(0.05));
}

/// `place_bow` works the bow's place out again only when what decides it changes (the
/// position control, the finger, the grid): each of those, once the bow rests at its place,
/// still moves it where it belongs.
#[test]
fn the_bow_moves_whenever_what_places_it_changes() {
    let mut string = string_for(220.0);
    let at = |position: f64, finger_m: Option<f64>| BowingControls { finger_position_m: finger_m, ..controls(0.5, 0.1, position) };
    let place = |string: &BowedString, position: f64| {
        let grid = string.string.grid();
        let nut_side = string.string.finger().map_or(0.0, |(node, alpha)| (node as f64 + alpha) * grid.spacing_m());
        grid.length_m - position * (grid.length_m - nut_side)
    };
    let settle = |string: &mut BowedString, position: f64, finger_m: Option<f64>| {
        for _ in 0..(0.05 * RATE) as usize {
            string.tick(&at(position, finger_m));
        }
    };
    // Open, then the position control moving by less than half an interval a sample.
    settle(&mut string, 0.18, None);
    assert_eq!(string.bow_point_m(), place(&string, 0.18));
    string.tick(&at(0.181, None));
    assert_eq!(string.bow_point_m(), place(&string, 0.181));
    // A finger lands, and the bow drifts to its share of the stopped length.
    let length = string.string.grid().length_m;
    settle(&mut string, 0.181, Some(0.1 * length));
    assert_eq!(string.bow_point_m(), place(&string, 0.181));
    assert!(string.string.finger().is_some());
    // The finger lifts: it lets go over some milliseconds, with the bow's controls unchanged
    // from one sample to the next, and then the bow goes back to its open-string place.
    settle(&mut string, 0.181, None);
    assert!(string.string.finger().is_none());
    assert_eq!(string.bow_point_m(), place(&string, 0.181));
    // A new grid (a new note) with the same controls: the bow is placed on it at once.
    let (grid, material) = NoteStringDesign::default().build(330.0, RATE, 1024);
    string.configure(grid, material, 7);
    string.tick(&at(0.181, None));
    assert_eq!(string.string.grid().length_m, grid.length_m);
    assert_eq!(string.bow_point_m(), place(&string, 0.181));
    assert!(string.string.is_sane(0.05));
}

#[test]
fn the_bows_answer_lies_on_the_root() {
    // Newton stops once its step is below `VELOCITY_TOLERANCE_MPS` (1e-5 m/s, and the
    // deflection's tolerance) and takes that step along its linear model (`accept_step`),
    // which leaves the answer second order in the step from the root. Solved again from the
    // same state to tolerances of 1e-13, every sample of held notes from C2 to F#6, at a
    // light and a heavy bow and both bristles, lands within 2.4e-10 m/s and 3.8e-9 of the
    // normal force of that root (with tolerances of 1e-7: 4.5e-14 m/s; 1e-4: 3.6e-8). Before
    // the step was taken, the answer lay up to the tolerance itself, 1e-7 m/s, from it.
    let mut worst_velocity_mps: f64 = 0.0;
    let mut worst_force_n: f64 = 0.0;
    for &frequency_hz in &[65.41, 196.0, 523.25, 1479.98] {
        for (force_n, friction) in [(1.0, friction()), (6.0, friction()), (3.0, ElastoPlasticParams::default())] {
            let mut string = string_with(frequency_hz, friction);
            let samples = (0.5 * RATE) as usize;
            let ramp = (0.05 * RATE) as usize;
            for i in 0..samples {
                let a = (i as f64 / ramp as f64).min(1.0);
                let input = string.begin_driven(&controls(force_n * a, 0.1 * a, 0.18), 0.0);
                let mut tight = string.bow.elasto_plastic().clone();
                tight.friction = string.bow.friction;
                let root = tight.solve_to(&input, 1e-13, 1e-13);
                let out = string.bow.solve(&input);
                worst_velocity_mps = worst_velocity_mps.max((out.relative_velocity_mps - root.relative_velocity_mps).abs());
                worst_force_n = worst_force_n.max((out.force_n - root.force_n).abs() / force_n);
                string.end_driven(out);
            }
        }
    }
    println!("worst distance from the root: {worst_velocity_mps:.3e} m/s, {worst_force_n:.3e} of the normal force");
    assert!(worst_velocity_mps < 1e-9, "{worst_velocity_mps:e} m/s from the root");
    assert!(worst_force_n < 2e-8, "{worst_force_n:e} of the normal force from the root");
}

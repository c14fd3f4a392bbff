//! `rosin-lab`'s numbers (`rosin_lab`) and its command line: the bristle models' loops
//! enclose area and the hyperbolic law slides on its curve, the lumped model's energy
//! balance holds per step, the Guettler diagram tells a playable attack from an impossible
//! one, and the binary writes a PNG or fails with exit code 2.

mod common;

use std::path::PathBuf;

use rosin_lab::energy::{energy_trace, EnergySettings};
use rosin_lab::guettler::{guettler_grid, transient_from_onsets, GuettlerSettings};
use rosin_lab::hysteresis::{all_loops, HysteresisSettings};
use rosin_lab::{lab_friction, SAMPLE_RATE_HZ, STRING_FREQUENCY_HZ};
use rosin_physics::bow::contact::{hyperbolic_law_for, FrictionModel};
use rosin_physics::friction::hyperbolic::ContactState;
use rosin_physics::bow::lumped::LumpedParams;

#[test]
fn bristle_models_enclose_area_and_the_hyperbolic_law_slides_on_its_curve() {
    let settings = HysteresisSettings::default();
    let loops = all_loops(&settings);
    let fn_n = settings.bowing.normal_force_n;
    for l in &loops {
        let (v_lo, v_hi) = l.samples.iter().fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s.contact_velocity_mps), b.max(s.contact_velocity_mps)));
        let (f_lo, f_hi) = l.samples.iter().fold((f64::MAX, f64::MIN), |(a, b), s| (a.min(s.force_n), b.max(s.force_n)));
        let relative = l.loop_area_n_mps.abs() / ((v_hi - v_lo) * (f_hi - f_lo));
        eprintln!("{}: {} periods of {:.3} ms, loop area {:+.5} N m/s ({relative:.4} of its box), per period {:+.5?}", l.model.name(), l.periods, l.period_s * 1e3, l.loop_area_n_mps, l.period_areas_n_mps);
        // Every model plays steady Helmholtz motion at the default bowing.
        assert_eq!(l.periods, settings.periods, "{}: no steady Helmholtz motion", l.model.name());
        assert!((l.period_s * STRING_FREQUENCY_HZ - 1.0).abs() < 0.05, "{}: period {:.3} ms", l.model.name(), l.period_s * 1e3);
    }
    // The loop is not exactly the same from period to period; each period's own area shows
    // how much. The bristle models enclose area every period, with the same orientation,
    // and the mean is well clear of zero.
    for model in [FrictionModel::ElastoPlastic, FrictionModel::Dahl] {
        let l = loops.iter().find(|l| l.model == model).unwrap();
        assert!(l.loop_area_n_mps.abs() > 0.01, "{}: loop area {:.2e} N m/s", model.name(), l.loop_area_n_mps);
        for &a in &l.period_areas_n_mps {
            assert!(a * l.loop_area_n_mps.signum() > 0.5 * l.loop_area_n_mps.abs(), "{}: a period encloses {a:.2e} N m/s, the mean {:.2e}", model.name(), l.loop_area_n_mps);
        }
    }

    let hyperbolic = loops.iter().find(|l| l.model == FrictionModel::Hyperbolic).unwrap();
    let law = hyperbolic_law_for(&lab_friction());
    let sliding: Vec<_> = hyperbolic.samples.iter().filter(|s| matches!(s.hyperbolic_state, Some(ContactState::Sliding(_)))).collect();
    assert!(sliding.len() as f64 > 0.1 * hyperbolic.samples.len() as f64, "{} of {} samples slide", sliding.len(), hyperbolic.samples.len());
    for s in &sliding {
        let v = s.contact_velocity_mps;
        let on_curve = v.signum() * law.coefficient(v) * fn_n;
        assert!((s.force_n - on_curve).abs() < 1e-9 * fn_n, "off the law: v {v} m/s, f {} N, law {on_curve} N", s.force_n);
    }
    // And a sticking sample is not on the sliding curve (the check above could not tell).
    let sticking = hyperbolic.samples.iter().filter(|s| s.hyperbolic_state == Some(ContactState::Sticking)).count();
    assert!(sticking > 0, "the hyperbolic contact never stuck");
}

#[test]
fn the_lumped_energy_balance_holds_per_step() {
    let trace = energy_trace(LumpedParams::matusiak2025(), &EnergySettings::default());
    assert_eq!(trace.relative_error.len(), 44_100);
    let worst = trace.worst_relative_error();
    let stored = trace.energy_j.iter().fold(0.0f64, |a, &h| a.max(h));
    eprintln!("largest relative energy error {worst:.3e} ({:.1} eps), stored up to {stored:.3e} J", worst / f64::EPSILON);
    assert!(stored > 1e-6, "nothing was stored: {stored:e} J");
    assert!(worst < 1e-12, "energy error {worst:.3e} of the stored energy");
    // The error is rounding, not exactly zero everywhere (the check sees the terms).
    assert!(trace.relative_error.iter().any(|e| *e != 0.0));
}

#[test]
fn the_transient_starts_at_the_first_of_the_regular_slips() {
    let settings = GuettlerSettings::default();
    let period = (SAMPLE_RATE_HZ / STRING_FREQUENCY_HZ).round() as usize;
    let end = (settings.run_s * SAMPLE_RATE_HZ) as usize;
    // Two slips a period for 20 periods, then one a period to the end.
    let mut onsets: Vec<usize> = (0..40).map(|i| 100 + i * period / 2).collect();
    let helmholtz_start = 100 + 20 * period + 37;
    onsets.extend((0..).map(|i| helmholtz_start + i * period).take_while(|&n| n < end));
    let transient = transient_from_onsets(&onsets, &settings).expect("Helmholtz motion at the end");
    assert!((transient - helmholtz_start as f64 / SAMPLE_RATE_HZ).abs() < 1e-12, "transient {transient} s");
    // The slips stop well before the end: the motion died, never Helmholtz.
    let died: Vec<usize> = onsets.iter().copied().filter(|&n| n < end - 3 * period).collect();
    assert_eq!(transient_from_onsets(&died, &settings), None);
    assert_eq!(transient_from_onsets(&[], &settings), None);
}

#[test]
fn a_small_guettler_grid_tells_a_good_attack_from_an_impossible_one() {
    let settings = GuettlerSettings { grid: 3, force_range_n: (0.05, 6.0), acceleration_range_mps2: (1.0, 20.0), ..GuettlerSettings::default() };
    let counted = std::sync::atomic::AtomicUsize::new(0);
    let grid = guettler_grid(&settings, &|| {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    for (i, f) in grid.forces_n.iter().enumerate() {
        let row: Vec<String> = (0..3).map(|j| grid.at(i, j).map_or("never".into(), |t| format!("{:.0} ms", t * 1e3))).collect();
        eprintln!("{f:5.2} N: {}", row.join(", "));
    }
    assert_eq!(counted.into_inner(), 9);
    // 6 N, 1 m/s^2: a moderate force with a slow attack reaches Helmholtz motion soon.
    let good = grid.at(2, 0).expect("6 N at 1 m/s^2 never reached Helmholtz motion");
    assert!(good < 0.2, "6 N at 1 m/s^2 took {good} s");
    // 0.05 N: far below Schelleng's minimum force, whatever the attack.
    for j in 0..3 {
        assert_eq!(grid.at(0, j), None, "0.05 N at {} m/s^2 reached Helmholtz motion", grid.accelerations_mps2[j]);
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rosin-lab-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_binary_writes_a_png_and_rejects_bad_input_with_code_2() {
    let dir = scratch_dir("png");
    let out = common::workspace_program("rosin-lab").args(["energy", "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "rosin-lab energy failed: {}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(dir.join("energy.png")).expect("no energy.png");
    assert!(bytes.len() > 1000, "energy.png has {} bytes", bytes.len());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert!(String::from_utf8_lossy(&out.stdout).contains("energy.png"), "did not say where the file went");

    let run = |args: &[&str]| common::workspace_program("rosin-lab").args(args).output().unwrap();
    let bad = run(&["spectrogram"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown figure 'spectrogram'"));
    let bad = run(&["guettler", "--grid", "many"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--grid 'many'"));
    // An output directory under a plain file cannot be made.
    let blocker = dir.join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let bad = run(&["energy", "--out", blocker.join("figures").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot create the output directory"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_high_fidelity_bow_reaches_helmholtz_motion_at_table_2() {
    // Two points, one and a half seconds: past the paper's attack (0.39 s to full speed).
    let trace = rosin_lab::hifi::hifi_trace(2, 1.5, 8);
    let slips = trace.slips_per_period();
    assert!((0.93..=1.07).contains(&slips), "{slips:.2} slips per period");
    assert_eq!(trace.fallbacks, 0);
    assert_eq!(trace.bridge_force_n.len(), (1.5 * rosin_lab::hifi::HIFI_SAMPLE_RATE_HZ) as usize);
    let tail = &trace.bridge_force_n[trace.bridge_force_n.len() / 2..];
    let (lo, hi) = tail.iter().fold((f64::MAX, f64::MIN), |(a, b), f| (a.min(*f), b.max(*f)));
    assert!(tail.iter().all(|f| f.is_finite()) && hi - lo > 1e-3, "bridge force spans {lo:.3e} to {hi:.3e} N");
}

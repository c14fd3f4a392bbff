//! The body resonator (`rosin_physics::body`): the signature modes where the published data put
//! them, each mode's bandwidth `f / Q`, decay, no DC, unit mean-square gain over 0-24 kHz
//! at every sample rate, the Nyquist cut, and determinism of `reset` and `set_model`.

#[path = "common/alloc_guard.rs"]
mod alloc_guard;

use nice_assert_no_alloc::assert_no_alloc;
use rosin_physics::body::{
    BodyMode, BodyModel, BodyResonator, UpperBank, BODIES, CELLO_BODY, DOUBLE_BASS_BODY, LOUDNESS_REFERENCE_RATE_HZ, MAX_BODY_MODES,
    MAX_MODE_FRACTION_OF_RATE, VIOLA_BODY, VIOLIN_BODY,
};

/// 2.5 times the slowest signature mode's 60 dB decay time `T60 = 3 ln 10 Q / (pi f)`, so
/// the response has died long before its end (the slowest is the bass A0, Q 20 at 57 Hz:
/// T60 = 0.77 s). The upper bank's modes decay faster than the signature ones.
fn impulse_seconds(model: &BodyModel) -> f64 {
    let t60 = |m: &BodyMode| 3.0 * 10f64.ln() * m.quality / (std::f64::consts::PI * m.frequency_hz);
    2.5 * model.signature_modes.iter().map(t60).fold(0.0, f64::max)
}

fn impulse_response(model: &BodyModel, sample_rate_hz: f64, seconds: f64) -> Vec<f64> {
    let mut body = BodyResonator::new(sample_rate_hz);
    body.set_model(model);
    (0..(seconds * sample_rate_hz) as usize).map(|n| body.tick(if n == 0 { 1.0 } else { 0.0 })).collect()
}

/// `|sum_n h[n] e^(-i w n)|` at `frequency_hz`, by Goertzel's recurrence.
fn magnitude(signal: &[f64], sample_rate_hz: f64, frequency_hz: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * frequency_hz / sample_rate_hz;
    let coefficient = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0, 0.0);
    for &x in signal {
        let s0 = x + coefficient * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    (s1 * s1 + s2 * s2 - coefficient * s1 * s2).max(0.0).sqrt()
}

/// The local maxima of the magnitude spectrum on a 0.05 % grid from 0.96 to 1.04 of
/// `centre_hz`, as `(frequency, magnitude)`.
fn local_maxima(signal: &[f64], sample_rate_hz: f64, centre_hz: f64) -> Vec<(f64, f64)> {
    let grid: Vec<f64> = (0..=160).map(|k| centre_hz * (0.96 + 0.0005 * k as f64)).collect();
    let spectrum: Vec<f64> = grid.iter().map(|&f| magnitude(signal, sample_rate_hz, f)).collect();
    (1..grid.len() - 1).filter(|&k| spectrum[k] > spectrum[k - 1] && spectrum[k] >= spectrum[k + 1]).map(|k| (grid[k], spectrum[k])).collect()
}

fn energy(signal: &[f64]) -> f64 {
    signal.iter().map(|x| x * x).sum()
}

/// The RMS gain for white noise band-limited to 0-24 kHz: by Parseval, `sum h^2` is the
/// mean of `|H|^2` over 0..fs/2, and the body has no response above a few kHz.
fn band_noise_gain(impulse: &[f64], sample_rate_hz: f64) -> f64 {
    (energy(impulse) * sample_rate_hz / LOUDNESS_REFERENCE_RATE_HZ).sqrt()
}

fn noise(samples: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..samples)
        .map(|_| {
            // A 64-bit LCG (Knuth's MMIX constants): enough for a test signal.
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// The frequencies that must show as spectral peaks: the published signature modes.
fn landmarks(model: &BodyModel) -> Vec<BodyMode> {
    let pick = |hz: f64| *model.signature_modes.iter().find(|m| m.frequency_hz == hz).unwrap();
    match model.name {
        "Violin" => vec![pick(275.0), pick(465.0), pick(545.0)],
        "Viola" => vec![pick(230.0), pick(350.0)],
        "Cello" => vec![pick(100.0), pick(175.0)],
        "Double bass" => vec![pick(57.0), pick(104.0)],
        other => panic!("no landmarks for {other}"),
    }
}

/// A local spectral maximum within +-1.5 % of each landmark, at least half as high as that
/// mode alone would make it (so a neighbour's skirt cannot pass for it); plus decay,
/// finiteness, no DC, and unit band-limited noise gain.
fn check_body(model: &BodyModel, sample_rate_hz: f64) {
    let h = impulse_response(model, sample_rate_hz, impulse_seconds(model));
    assert!(h.iter().all(|x| x.is_finite()), "{} at {sample_rate_hz} Hz: not finite", model.name);
    let mut body = BodyResonator::new(sample_rate_hz);
    body.set_model(model);
    for mode in landmarks(model) {
        let maxima = local_maxima(&h, sample_rate_hz, mode.frequency_hz);
        let alone = body.output_scale() * mode.gain;
        let best = maxima.iter().filter(|(f, _)| (f / mode.frequency_hz - 1.0).abs() <= 0.015).map(|&(f, m)| (f, m)).fold(None, |best: Option<(f64, f64)>, p| match best {
            Some(b) if b.1 >= p.1 => Some(b),
            _ => Some(p),
        });
        println!("{} at {sample_rate_hz} Hz: mode {} Hz -> peak {:?} (alone {alone:.3})", model.name, mode.frequency_hz, best);
        let (peak_hz, peak) = best.unwrap_or_else(|| panic!("{} at {sample_rate_hz} Hz: no peak near {} Hz ({maxima:?})", model.name, mode.frequency_hz));
        assert!(peak > 0.5 * alone, "{} at {sample_rate_hz} Hz: peak at {peak_hz} Hz is {peak}, the mode alone gives {alone}", model.name);
    }

    let tenth = h.len() / 10;
    let (head, tail) = (energy(&h[..tenth]), energy(&h[h.len() - tenth..]));
    assert!(tail < 1e-10 * head, "{} at {sample_rate_hz} Hz: tail energy {tail:e} against {head:e}", model.name);

    let sum: f64 = h.iter().sum();
    let sum_abs: f64 = h.iter().map(|x| x.abs()).sum();
    assert!(sum.abs() < 1e-9 * sum_abs, "{} at {sample_rate_hz} Hz: DC gain {sum:e}", model.name);
    let peak_level = landmarks(model).iter().map(|m| magnitude(&h, sample_rate_hz, m.frequency_hz)).fold(0.0, f64::max);
    let one_hz = magnitude(&h, sample_rate_hz, 1.0);
    assert!(one_hz < 1e-2 * peak_level, "{} at {sample_rate_hz} Hz: |H(1 Hz)| = {one_hz:e}, peaks {peak_level}", model.name);

    let gain = band_noise_gain(&h, sample_rate_hz);
    println!("{} at {sample_rate_hz} Hz: {} modes, band noise gain {gain:.3}, output scale {:.4}", model.name, body.mode_count(), body.output_scale());
    assert!((0.5..2.0).contains(&gain), "{} at {sample_rate_hz} Hz: noise gain {gain}", model.name);
}

#[test]
fn violin_modes_decay_and_gain() {
    for rate in [22_050.0, 44_100.0, 48_000.0, 192_000.0] {
        check_body(&VIOLIN_BODY, rate);
    }
}

#[test]
fn viola_modes_decay_and_gain() {
    for rate in [44_100.0, 48_000.0] {
        check_body(&VIOLA_BODY, rate);
    }
}

#[test]
fn cello_modes_decay_and_gain() {
    for rate in [44_100.0, 48_000.0] {
        check_body(&CELLO_BODY, rate);
    }
}

#[test]
fn double_bass_modes_decay_and_gain() {
    for rate in [44_100.0, 48_000.0] {
        check_body(&DOUBLE_BASS_BODY, rate);
    }
}

/// A model of one signature mode with no upper bank.
fn lone_mode(mode: &'static [BodyMode]) -> BodyModel {
    BodyModel { name: "lone", signature_modes: mode, upper: UpperBank { end_hz: 0.0, ..VIOLIN_BODY.upper }, seed: 1 }
}

/// The half-power edge of a single peak between `inside_hz` (above half power) and
/// `outside_hz` (below), by bisection.
fn half_power_edge(h: &[f64], sample_rate_hz: f64, peak: f64, mut inside_hz: f64, mut outside_hz: f64) -> f64 {
    let half = peak / 2f64.sqrt();
    for _ in 0..30 {
        let middle = 0.5 * (inside_hz + outside_hz);
        if magnitude(h, sample_rate_hz, middle) >= half {
            inside_hz = middle;
        } else {
            outside_hz = middle;
        }
    }
    0.5 * (inside_hz + outside_hz)
}

/// The -3 dB bandwidth of `centre_hz`'s peak, searching out to `search_hz` either side.
fn bandwidth_hz(h: &[f64], sample_rate_hz: f64, centre_hz: f64, search_hz: f64) -> f64 {
    let peak = magnitude(h, sample_rate_hz, centre_hz);
    half_power_edge(h, sample_rate_hz, peak, centre_hz, centre_hz + search_hz) - half_power_edge(h, sample_rate_hz, peak, centre_hz, centre_hz - search_hz)
}

#[test]
fn a_lone_mode_peaks_at_f_with_bandwidth_f_over_q_and_unit_noise_gain() {
    static A0: [BodyMode; 1] = [VIOLIN_BODY.signature_modes[0]];
    static BASS_A0: [BodyMode; 1] = [DOUBLE_BASS_BODY.signature_modes[0]];
    for (modes, rate) in [(&A0, 22_050.0), (&A0, 48_000.0), (&A0, 192_000.0), (&BASS_A0, 44_100.0), (&BASS_A0, 192_000.0)] {
        let model = lone_mode(modes);
        let mode = modes[0];
        let h = impulse_response(&model, rate, impulse_seconds(&model));
        let mut body = BodyResonator::new(rate);
        body.set_model(&model);
        assert_eq!(body.mode_count(), 1);

        // The peak is on f (to the 0.05 % grid) and its height is output_scale * gain.
        let maxima = local_maxima(&h, rate, mode.frequency_hz);
        assert_eq!(maxima.len(), 1, "{maxima:?}");
        assert!((maxima[0].0 / mode.frequency_hz - 1.0).abs() < 6e-4, "peak at {} for {}", maxima[0].0, mode.frequency_hz);
        let at_f = magnitude(&h, rate, mode.frequency_hz);
        assert!((at_f / (body.output_scale() * mode.gain) - 1.0).abs() < 1e-4, "height {at_f}");

        let measured = bandwidth_hz(&h, rate, mode.frequency_hz, mode.frequency_hz / mode.quality * 3.0);
        let expected = mode.frequency_hz / mode.quality;
        println!("lone {} Hz at {rate}: bandwidth {measured:.4} Hz, f/Q {expected:.4} Hz", mode.frequency_hz);
        assert!((measured / expected - 1.0).abs() < 0.01, "bandwidth {measured} against {expected}");

        // With one mode there are no cross terms: the noise gain formula is exact.
        let gain = band_noise_gain(&h, rate);
        assert!((gain - 1.0).abs() < 1e-6, "noise gain {gain}");
    }
}

#[test]
fn violin_a0_keeps_its_bandwidth_inside_the_full_body() {
    let a0 = VIOLIN_BODY.signature_modes[0];
    let h = impulse_response(&VIOLIN_BODY, 48_000.0, impulse_seconds(&VIOLIN_BODY));
    let maxima = local_maxima(&h, 48_000.0, a0.frequency_hz);
    let (peak_hz, _) = maxima.iter().copied().fold((0.0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
    let measured = bandwidth_hz(&h, 48_000.0, peak_hz, 3.0 * a0.frequency_hz / a0.quality);
    let expected = a0.frequency_hz / a0.quality;
    println!("violin A0 in the body: peak {peak_hz:.2} Hz, bandwidth {measured:.3} Hz, f/Q {expected:.3} Hz");
    assert!((measured / expected - 1.0).abs() < 0.15, "bandwidth {measured} against {expected}");
}

#[test]
fn white_noise_gain_matches_the_impulse_response() {
    let rate = 48_000.0;
    let input = noise(rate as usize, 7);
    let input_rms = (energy(&input) / input.len() as f64).sqrt();
    for model in BODIES {
        let mut body = BodyResonator::new(rate);
        body.set_model(model);
        let output: Vec<f64> = input.iter().map(|&x| body.tick(x)).collect();
        let settled = &output[output.len() / 4..];
        let gain = (energy(settled) / settled.len() as f64).sqrt() / input_rms;
        let predicted = energy(&impulse_response(model, rate, impulse_seconds(model))).sqrt();
        println!("{}: white-noise RMS gain {gain:.3}, from the impulse response {predicted:.3}", model.name);
        assert!((0.5..2.0).contains(&gain), "{}: {gain}", model.name);
        assert!((gain / predicted - 1.0).abs() < 0.1, "{}: {gain} against {predicted}", model.name);
    }
}

#[test]
fn loudness_does_not_depend_on_the_sample_rate() {
    for model in BODIES {
        let gains: Vec<f64> = [44_100.0, 48_000.0, 96_000.0, 192_000.0].iter().map(|&r| band_noise_gain(&impulse_response(model, r, impulse_seconds(model)), r)).collect();
        println!("{}: band noise gain at 44.1/48/96/192 kHz {gains:.4?}", model.name);
        for g in &gains {
            assert!((g / gains[1] - 1.0).abs() < 0.02, "{}: {gains:?}", model.name);
        }
    }
}

#[test]
fn modes_above_045_of_the_rate_are_left_out() {
    let model = BodyModel {
        name: "wide",
        signature_modes: VIOLIN_BODY.signature_modes,
        upper: UpperBank { start_hz: 1000.0, end_hz: 20_000.0, mean_spacing_hz: 400.0, ..VIOLIN_BODY.upper },
        seed: 3,
    };
    let mut wide = BodyResonator::new(48_000.0);
    wide.set_model(&model);
    let mut narrow = BodyResonator::new(22_050.0);
    narrow.set_model(&model);
    assert!(wide.modes().iter().any(|m| m.frequency_hz > 15_000.0), "the draw should reach past 15 kHz");
    assert!(narrow.modes().iter().all(|m| m.frequency_hz < MAX_MODE_FRACTION_OF_RATE * 22_050.0));
    let kept = wide.modes().iter().filter(|m| m.frequency_hz < MAX_MODE_FRACTION_OF_RATE * 22_050.0).count();
    assert_eq!(narrow.mode_count(), kept);
    assert!(narrow.mode_count() < wide.mode_count());
    let h = impulse_response(&model, 22_050.0, 1.0);
    assert!(h.iter().all(|x| x.is_finite()) && energy(&h[h.len() * 9 / 10..]) < 1e-10 * energy(&h));
}

#[test]
fn every_body_fits_and_keeps_its_signature_modes() {
    for model in BODIES {
        for rate in [22_050.0, 48_000.0, 192_000.0] {
            let mut body = BodyResonator::new(rate);
            body.set_model(model);
            let modes = body.modes();
            assert_eq!(&modes[..model.signature_modes.len()], model.signature_modes, "{}", model.name);
            // The upper bank was not cut short by the capacity.
            let upper = &modes[model.signature_modes.len()..];
            let last = upper.last().unwrap().frequency_hz;
            assert!(body.mode_count() < MAX_BODY_MODES, "{}: {} modes", model.name, body.mode_count());
            assert!(model.upper.end_hz - last < 4.0 * model.upper.mean_spacing_hz, "{}: last mode {last} Hz", model.name);
            // Spacing statistics: mean near the model's, no two modes on top of each other.
            let spacings: Vec<f64> = upper.windows(2).map(|w| w[1].frequency_hz - w[0].frequency_hz).collect();
            let mean = spacings.iter().sum::<f64>() / spacings.len() as f64;
            assert!((mean / model.upper.mean_spacing_hz - 1.0).abs() < 0.15, "{}: mean spacing {mean}", model.name);
            assert!(spacings.iter().all(|&s| s > 0.0));
            let q_ratio = |m: &BodyMode| m.quality / model.upper.quality;
            assert!(upper.iter().all(|m| (0.7..=1.3).contains(&q_ratio(m))), "{}: Q spread", model.name);
            assert!(upper.iter().any(|m| m.gain < 0.0) && upper.iter().any(|m| m.gain > 0.0), "{}: signs", model.name);
            if rate == 48_000.0 {
                println!("{}: {} modes, upper {:.0}..{:.0} Hz, mean spacing {mean:.1} Hz", model.name, body.mode_count(), upper[0].frequency_hz, last);
            }
        }
    }
}

#[test]
fn reset_reproduces_the_output_exactly() {
    let input = noise(20_000, 11);
    let mut body = BodyResonator::new(44_100.0);
    body.set_model(&CELLO_BODY);
    let first: Vec<f64> = input.iter().map(|&x| body.tick(x)).collect();
    body.reset();
    let second: Vec<f64> = input.iter().map(|&x| body.tick(x)).collect();
    assert!(first.iter().any(|&x| x.abs() > 1e-3));
    assert_eq!(first, second);
}

#[test]
fn set_model_is_deterministic_clears_the_state_and_does_not_allocate() {
    let input = noise(10_000, 5);
    for model in BODIES {
        let mut fresh = BodyResonator::new(48_000.0);
        fresh.set_model(model);
        let expected: Vec<f64> = input.iter().map(|&x| fresh.tick(x)).collect();

        // A resonator that was ringing with another body, switched on the audio thread.
        let mut switched = BodyResonator::new(48_000.0);
        switched.set_model(&DOUBLE_BASS_BODY);
        for &x in &input {
            switched.tick(x);
        }
        let mut output = vec![0.0; input.len()];
        assert_no_alloc(|| {
            switched.set_model(model);
            for (y, &x) in output.iter_mut().zip(&input) {
                *y = switched.tick(x);
            }
        });
        assert_eq!(switched.modes(), fresh.modes(), "{}", model.name);
        assert_eq!(output, expected, "{}", model.name);
    }
    // Different seeds give different upper banks.
    let mut a = BodyResonator::new(48_000.0);
    a.set_model(&BodyModel { seed: 99, ..VIOLIN_BODY });
    let b = BodyResonator::new(48_000.0);
    assert_ne!(a.modes(), b.modes());
}

#[test]
fn the_banks_gain_at_a_frequency_is_its_impulse_responses_magnitude_there() {
    // `gain_at` (what a note's level is evened out with) against the measured response.
    for model in BODIES {
        let rate = 48_000.0;
        let mut body = BodyResonator::new(rate);
        body.set_model(model);
        let impulse = impulse_response(model, rate, impulse_seconds(model));
        for frequency_hz in [65.4, 196.0, 277.2, 440.0, 466.2, 880.0, 2_500.0] {
            let (expected, computed) = (magnitude(&impulse, rate, frequency_hz), body.gain_at(frequency_hz));
            assert!((computed / expected - 1.0).abs() < 1e-3, "{frequency_hz} Hz: {computed} against {expected}");
        }
    }
}

//! The listener the phrase tests rely on (`common::listen`), checked on signals whose answer
//! is known: a measure that cannot tell a click, a raucous note or a wrong pitch from a clean
//! one would let the phrase tests pass whatever Rosin plays.

mod common;

use common::listen::{click_band_energy, octave_over_fundamental_db, periodicity, periodicity_and_pitch, speaking_time_s, straight_line_deviation};

const RATE_HZ: f64 = 48_000.0;

/// Uniform white noise in [-0.5, 0.5), the same sequence every run (xorshift32).
fn white_noise() -> impl FnMut() -> f32 {
    let mut state = 0x2545_f491_u32;
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32 - 0.5
    }
}

/// A band-limited sawtooth (the shape of a bowed string's bridge force) whose frequency
/// follows `hz(t)`.
fn sawtooth(seconds: f64, hz: impl Fn(f64) -> f64) -> Vec<f32> {
    let mut phase = 0.0f64;
    (0..(seconds * RATE_HZ) as usize)
        .map(|n| {
            let f = hz(n as f64 / RATE_HZ);
            phase += f / RATE_HZ;
            let partials = ((0.45 * RATE_HZ / f) as usize).min(40);
            (1..=partials).map(|k| (std::f64::consts::TAU * k as f64 * phase).sin() / k as f64).sum::<f64>() as f32 * 0.2
        })
        .collect()
}

#[test]
fn a_steady_note_is_periodic_and_its_pitch_is_read_to_a_tenth_of_a_cent() {
    for (f0, off_cents) in [(41.2, 0.0), (196.0, 7.0), (659.26, -4.0), (1975.5, 2.0)] {
        let played = f0 * (off_cents / 1200.0f64).exp2();
        let signal = sawtooth(0.5, |_| played);
        let (periodicity, hz) = periodicity_and_pitch(&signal, RATE_HZ, f0);
        assert!(periodicity > 0.99, "{f0} Hz: periodicity {periodicity}");
        let read = common::cents(hz, f0);
        assert!((read - off_cents).abs() < 0.1, "{f0} Hz played {off_cents:+} cents, read {read:+.3}");
    }
}

#[test]
fn a_vibrato_is_read_at_its_centre() {
    // The mod wheel's vibrato: 5.5 Hz, 40 cents either way, over a window that is not a
    // whole number of cycles; the centre is 3 cents flat.
    let f0 = 293.66;
    let signal = sawtooth(0.37, |t| f0 * ((-3.0 + 40.0 * (std::f64::consts::TAU * 5.5 * t + 0.7).sin()) / 1200.0f64).exp2());
    let (periodicity, hz) = periodicity_and_pitch(&signal, RATE_HZ, f0);
    assert!(periodicity > 0.95, "periodicity {periodicity}");
    let read = common::cents(hz, f0);
    assert!((read + 3.0).abs() < 2.0, "read {read:+.2} cents");
}

#[test]
fn a_deep_or_slow_vibrato_is_read_at_its_centre_whatever_part_of_its_cycle_is_heard() {
    // (note Hz, depth either way in cents, rate Hz, seconds heard, centre in cents): the
    // Ghost Cello Lead's 60 cents at 4 Hz over under two cycles, the control's deepest (100
    // cents) at its slowest rate (2 Hz), and a low note's shallow fast one. Each starts at
    // several points of its cycle. On the low note the four-period windows span a third of
    // the vibrato's cycle, and the centre is read to 3 cents rather than 2.
    for (f0, depth, rate, seconds, centre, tolerance) in [(146.83, 60.0, 4.0, 0.4, 2.0, 2.0), (392.0, 100.0, 2.0, 0.6, -4.0, 2.0), (82.41, 25.0, 6.0, 0.5, 1.0, 3.0)] {
        for phase in [0.0, 1.3, 2.9, 4.4] {
            let signal = sawtooth(seconds, |t| f0 * ((centre + depth * (std::f64::consts::TAU * rate * t + phase).sin()) / 1200.0f64).exp2());
            let (periodicity, hz) = periodicity_and_pitch(&signal, RATE_HZ, f0);
            assert!(periodicity > 0.95, "{f0} Hz, {depth} cents at {rate} Hz: periodicity {periodicity}");
            let read = common::cents(hz, f0);
            assert!((read - centre).abs() < tolerance, "{f0} Hz, {depth} cents at {rate} Hz from phase {phase}: read {read:+.2} cents, centre {centre:+}");
        }
    }
}

/// A stiff steel string's bowed E4 (`F0_STEEL_E4_HZ`) around `centre` cents with a vibrato
/// `depth` cents deep at 5.5 Hz: a sawtooth and a partial near its fifth harmonic, 31 cents
/// sharp of it and three times as strong, its level times `swell(t)`.
fn beating_steel_string(centre: f64, depth: f64, swell: impl Fn(f64) -> f64) -> Vec<f32> {
    let pitch = |t: f64| F0_STEEL_E4_HZ * ((centre + depth * (std::f64::consts::TAU * 5.5 * t + 0.4).sin()) / 1200.0f64).exp2();
    let string = sawtooth(0.4, pitch);
    let mut phase = 0.0f64;
    string
        .iter()
        .enumerate()
        .map(|(n, &s)| {
            let t = n as f64 / RATE_HZ;
            phase += 5.0 * pitch(t) * (31.0f64 / 1200.0).exp2() / RATE_HZ;
            swell(t) as f32 * (s + 0.6 * (std::f64::consts::TAU * phase).sin() as f32 * 0.2)
        })
        .collect()
}

const F0_STEEL_E4_HZ: f64 = 329.63;

#[test]
fn a_partial_beating_against_the_harmonics_does_not_move_the_pitch_read() {
    // A stiff steel string's bowed E4 (Willemsen 2019 Steel String, velocity 127): besides
    // its harmonics, a partial near the fifth, 31 cents sharp of it. The beat makes each
    // four-period window's best lag jump between two neighbouring correlation peaks (about
    // -5 and +19 cents in the render), which read as a waver (+11 cents) or pulled a
    // vibrato's centre sharp (+8 to +10 cents; here, with the partial three times the fifth
    // harmonic, +6). The fundamental is steady, and so is the pitch read, with and without
    // a vibrato.
    for (depth, centre) in [(0.0, 0.0), (0.0, 3.0), (25.0, 0.0), (25.0, -2.0)] {
        let (_, hz) = periodicity_and_pitch(&beating_steel_string(centre, depth, |_| 1.0), RATE_HZ, F0_STEEL_E4_HZ);
        let read = common::cents(hz, F0_STEEL_E4_HZ);
        assert!((read - centre).abs() < 1.0, "{depth} cents of vibrato around {centre:+} cents: read {read:+.2}");
    }
}

#[test]
fn a_note_still_swelling_is_read_from_its_fundamental() {
    // The same beating steel string with its vibrato, swelling from a third of its level to
    // all of it over the first 40 % of what is heard, as a low note still building does at
    // the start of its steady part. Its fundamental carries the same share of each window's
    // power throughout; measured against the whole note's mean power, the quiet first windows
    // were refused, the note was read from its best lags and its centre pulled sharp (+6
    // cents here; a double bass's C#2 under vibrato read +6 cents, its harmonics' mean
    // frequency 0).
    for centre in [0.0, -2.0] {
        let swelling = beating_steel_string(centre, 25.0, |t| (1.0 / 3.0 + (2.0 / 3.0) * t / 0.16).min(1.0));
        let (_, hz) = periodicity_and_pitch(&swelling, RATE_HZ, F0_STEEL_E4_HZ);
        let read = common::cents(hz, F0_STEEL_E4_HZ);
        assert!((read - centre).abs() < 1.0, "a swelling vibrato around {centre:+} cents: read {read:+.2}");
    }
}

#[test]
fn a_pitch_that_drifts_is_read_as_its_average_not_as_a_vibrato() {
    // Settling from 30 cents flat onto the note over the window, as an ear does: the
    // frequency over the window averages about 14 cents flat.
    let f0 = 103.83;
    let signal = sawtooth(0.7, |t| f0 * ((-30.0 * (-t / 0.4).exp()) / 1200.0f64).exp2());
    let (_, hz) = periodicity_and_pitch(&signal, RATE_HZ, f0);
    let read = common::cents(hz, f0);
    let mean = -30.0 * 0.4 / 0.7 * (1.0 - (-0.7f64 / 0.4).exp());
    assert!((read - mean).abs() < 3.0, "read {read:+.2} cents, mean {mean:+.2}");
}

/// A note that sounds the octave above is periodic at its own period too, so periodicity
/// passes it: the octave measure tells it apart. A sawtooth at the note reads its second
/// harmonic 6 dB under its fundamental, the same sawtooth an octave up (a string slipping
/// twice a period alike) 60 dB or more over it, and repeats at half the period, which the
/// note does not.
#[test]
fn a_note_an_octave_up_is_told_from_its_note() {
    let f0 = 220.0;
    let note = sawtooth(0.5, |_| f0);
    let octave = sawtooth(0.5, |_| 2.0 * f0);
    let at_note = octave_over_fundamental_db(&note, RATE_HZ, f0);
    assert!((at_note + 6.0).abs() < 0.5, "{at_note}");
    assert!(periodicity(&octave, RATE_HZ, f0) > 0.99, "the octave is periodic at the note's period too");
    assert!(octave_over_fundamental_db(&octave, RATE_HZ, f0) > 60.0);
    assert!(periodicity(&octave, RATE_HZ, 2.0 * f0) > 0.99);
    assert!(periodicity(&note, RATE_HZ, 2.0 * f0) < 0.5);
}

#[test]
fn noise_and_a_note_an_octave_apart_are_not_periodic_at_the_period() {
    let mut state = 0x1234_5678_u32;
    let noise: Vec<f32> = (0..24_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32 - 0.5
        })
        .collect();
    assert!(periodicity_and_pitch(&noise, RATE_HZ, 220.0).0 < 0.2);
    // A note that has slipped to a period of a third of the next one (a raucous or
    // multi-slip motion keeps little of the period): a tritone off is far from periodic.
    let off = sawtooth(0.5, |_| 220.0 * 2f64.sqrt());
    assert!(periodicity_and_pitch(&off, RATE_HZ, 220.0).0 < 0.5);
}

#[test]
fn a_click_stands_out_above_six_kilohertz_and_a_clean_change_does_not() {
    let f0 = 220.0;
    let clean = sawtooth(0.4, |t| if t < 0.2 { f0 } else { f0 * 2f64.powf(2.0 / 12.0) });
    let mut clicked = clean.clone();
    // A broadband burst of 2 ms at the tone's own peak, as a finger clamping a moving
    // string left one (issue 14 measured bursts of 5 ms at up to three times the tone).
    let mut state = 0x2545_f491_u32;
    for s in &mut clicked[(0.2 * RATE_HZ) as usize..(0.202 * RATE_HZ) as usize] {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        *s += 0.6 * (state as f32 / u32::MAX as f32 - 0.5);
    }
    let burst = |signal: &[f32]| {
        let band = click_band_energy(signal, RATE_HZ);
        let mut steady: Vec<f64> = band[(0.05 * RATE_HZ) as usize..(0.15 * RATE_HZ) as usize].to_vec();
        steady.sort_by(f64::total_cmp);
        let reference = steady[steady.len() / 2];
        let peak = band[(0.19 * RATE_HZ) as usize..(0.28 * RATE_HZ) as usize].iter().fold(0.0f64, |m, &v| m.max(v));
        10.0 * (peak / reference).log10()
    };
    let (clean_db, clicked_db) = (burst(&clean), burst(&clicked));
    assert!(clean_db < 3.0, "a clean change bursts {clean_db:+.1} dB");
    assert!(clicked_db > 12.0, "a click bursts only {clicked_db:+.1} dB");
}

#[test]
fn a_step_from_a_dull_note_to_a_bright_one_is_not_a_burst_and_a_click_between_them_is() {
    use common::listen::{listen, PhraseNote};
    // A sine-like note (two partials), then a bright sawtooth: the band above 6 kHz steps
    // up by tens of dB, which is the second note's colour, not a click.
    let f0 = 220.0;
    let (half, whole) = ((0.4 * RATE_HZ) as usize, (0.8 * RATE_HZ) as usize);
    let bright = sawtooth(0.8, |_| f0 * 2f64.powf(2.0 / 12.0));
    let mut signal: Vec<f32> = (0..whole).map(|n| 0.2 * ((std::f64::consts::TAU * f0 * n as f64 / RATE_HZ).sin() + 0.3 * (std::f64::consts::TAU * 2.0 * f0 * n as f64 / RATE_HZ).sin()) as f32).collect();
    signal[half..].copy_from_slice(&bright[half..]);
    // A little noise throughout, so the dull note's band is not empty.
    let mut noise = white_noise();
    signal.iter_mut().for_each(|s| *s += 1e-4 * noise());
    let notes = [PhraseNote { key: 57.0, start: 0, end: half, settle_s: 0.15 }, PhraseNote { key: 59.0, start: half, end: whole, settle_s: 0.15 }];
    let step = listen(&signal, RATE_HZ, &notes).changes[0].burst_db;
    assert!(step < 3.0, "a dull note followed by a bright one reads as a {step:+.1} dB burst");
    // The same change with a 2 ms broadband burst at the tone's peak.
    let mut clicked = signal.clone();
    clicked[half..half + (0.002 * RATE_HZ) as usize].iter_mut().for_each(|s| *s += 0.6 * noise());
    let click = listen(&clicked, RATE_HZ, &notes).changes[0].burst_db;
    assert!(click > 12.0, "a click between them reads only {click:+.1} dB");
}

#[test]
fn a_low_note_that_pulses_at_each_slip_reads_no_burst_where_nothing_changes() {
    use common::listen::{listen, PhraseNote};
    // A double bass's E1 (41.2 Hz) with noise that doubles for 3 ms at each slip, as a low
    // bowed string's band above 6 kHz pulses once a period. Read as if a note changed in the
    // middle of it, the change is no louder than the note (+0.2 dB): against the note's
    // median 3 ms it read +6.5 dB, since a span of 90 ms always holds some slip's pulse.
    let f0 = 41.2;
    let (half, whole) = ((0.6 * RATE_HZ) as usize, (1.2 * RATE_HZ) as usize);
    let mut signal = sawtooth(1.2, |_| f0);
    let mut noise = white_noise();
    let period = (RATE_HZ / f0) as usize;
    for (n, s) in signal.iter_mut().enumerate() {
        let pulse = if n % period < (0.003 * RATE_HZ) as usize { 0.006 } else { 0.003 };
        *s += pulse * noise();
    }
    let notes = [PhraseNote { key: 28.0, start: 0, end: half, settle_s: 0.15 }, PhraseNote { key: 28.0, start: half, end: whole, settle_s: 0.15 }];
    let nothing = listen(&signal, RATE_HZ, &notes).changes[0].burst_db;
    assert!(nothing.abs() < 1.5, "a change that did not happen reads {nothing:+.1} dB");
    // A 2 ms broadband burst at the tone's peak there stands out.
    let mut clicked = signal.clone();
    clicked[half..half + (0.002 * RATE_HZ) as usize].iter_mut().for_each(|s| *s += 0.6 * noise());
    let click = listen(&clicked, RATE_HZ, &notes).changes[0].burst_db;
    assert!(click > 12.0, "a click reads only {click:+.1} dB");
}

#[test]
fn a_note_speaks_when_its_motion_becomes_periodic() {
    // Noise for 120 ms, then the note.
    let f0 = 196.0;
    let tone = sawtooth(0.5, |_| f0);
    let mut state = 7u32;
    let signal: Vec<f32> = tone
        .iter()
        .enumerate()
        .map(|(n, &s)| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            if (n as f64) < 0.12 * RATE_HZ { (state >> 8) as f32 / (1u32 << 24) as f32 - 0.5 } else { s }
        })
        .collect();
    let speaks = speaking_time_s(&signal, RATE_HZ, f0, 0.95).expect("the note speaks");
    assert!((0.09..0.13).contains(&speaks), "speaks at {speaks} s");
}

#[test]
fn levels_on_a_line_deviate_by_nothing_and_an_outlier_is_found() {
    let line: Vec<(f64, f64)> = (40..80).map(|k| (k as f64, -20.0 + 0.1 * k as f64)).collect();
    assert!(straight_line_deviation(&line) < 1e-9);
    let mut bumped = line.clone();
    bumped[10].1 += 6.0;
    assert!(straight_line_deviation(&bumped) > 5.0);
}

//! The ribbon bow as a voice (issue 17): matusiak2025's bow of finite width, with bow hair
//! and torsion (`rosin_engine::ribbon`), played on the note strings through a string voice:
//! every note from C2 to C7 in tune and in Helmholtz motion at default controls, the
//! discrete energy balance to 1e-12 through the voice's path, MPE bends, the finger, the pad
//! and the four-string instrument, and random automation without a diverged voice.

mod common;

use common::listen::{listen, melody, render_phrase, two_octave_scale};
use common::note_id;
use rosin_engine::controls::Controls;
use rosin_engine::ribbon::BowModel;
use rosin_engine::voices::{Engine, NoteEvent};
use rosin_physics::string::tuning::midi_key_to_hz;

const RATE_HZ: f64 = 48_000.0;

fn ribbon() -> Controls {
    Controls { bow_model: 1.0, ..Controls::default() }
}

/// Plays `key` alone at full velocity with `controls` and returns (pitch error in cents,
/// slips per period counted by the voice's ear) over 0.6 s after 0.9 s.
fn play_key(controls: &Controls, key: u8) -> (f64, f64) {
    let settle = (0.9 * RATE_HZ) as usize;
    let measure = (0.6 * RATE_HZ) as usize;
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(controls);
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(key), velocity: 1.0 });
    let mut out = vec![0.0f32; settle + measure];
    engine.render(&mut out[..settle]);
    assert_eq!(engine.voices()[0].bow_model(), BowModel::Ribbon);
    let before = engine.voices()[0].intonation().slips();
    engine.render(&mut out[settle..]);
    let slips = engine.voices()[0].intonation().slips() - before;
    let f0 = midi_key_to_hz(key as f64);
    (common::cents(common::fundamental_hz(&out[settle..], RATE_HZ, f0), f0), slips as f64 / (measure as f64 / RATE_HZ * f0))
}

#[test]
fn every_note_from_c2_to_c7_plays_in_tune_helmholtz_motion_with_the_ribbon_bow() {
    // Issue 17: at default controls (4 points across 1 cm, torsion on), MIDI 36 to 96,
    // every third key (every key with ROSIN_PHRASES=full).
    let step = if std::env::var("ROSIN_PHRASES").is_ok_and(|v| v == "full") { 1 } else { 3 };
    let mut failures = Vec::new();
    let mut worst: f64 = 0.0;
    for key in (36..=96).step_by(step) {
        let (cents, slips) = play_key(&ribbon(), key);
        worst = worst.max(cents.abs());
        if cents.abs() > 3.0 || !(0.93..=1.07).contains(&slips) {
            failures.push(format!("key {key}: {cents:+.2} cents, {slips:.2} slips a period"));
        }
    }
    println!("worst pitch error {worst:.2} cents");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}


/// Bows G3 through a string voice with the ribbon bow for a second, checking matusiak2025's
/// discrete energy balance `H^{n+1} - H^n = -k (Q + P)` at every step; returns the worst
/// step error relative to the largest stored energy, and the energy the bow supplied (J).
fn voice_energy_balance(controls: &Controls, lossless: bool) -> (f64, f64) {
    use rosin_engine::voice::StringVoice;
    use rosin_physics::string::note_string::GridCache;
    let mut voice = StringVoice::new(RATE_HZ);
    let mut grids = GridCache::with_capacity(4);
    voice.start(note_id(55), 1.0, 0, controls, &mut grids);
    assert_eq!(voice.bow_model(), BowModel::Ribbon);
    assert_eq!(voice.oversampling(), 1, "one physics step a sample, so every step is checked");
    let bowed = voice.ribbon_mut().bowed_mut();
    bowed.set_power_tracking(true);
    if lossless {
        bowed.set_torsion_quality_factor(f64::INFINITY);
        bowed.contact_mut().tolerance_mps = 1e-13;
        bowed.contact_mut().step_tolerance_mps = 1e-13;
    }
    let k = 1.0 / RATE_HZ;
    let (mut worst, mut stored, mut supplied) = (0.0f64, 0.0f64, 0.0);
    let mut before = voice.ribbon().bowed().energy_j();
    for _ in 0..RATE_HZ as usize {
        voice.tick();
        let after = voice.ribbon().bowed().energy_j();
        let step = *voice.ribbon().last_step();
        if lossless {
            assert_eq!(step.string_loss_w + step.torsion_loss_w, 0.0);
        }
        worst = worst.max((after - before + k * (step.loss_w() + step.bow_power_w)).abs());
        stored = stored.max(after);
        supplied -= k * step.bow_power_w;
        before = after;
    }
    assert!(voice.ribbon().bowed().energy().torsion_j > 0.0 && voice.ribbon().bowed().energy().hair_j > 0.0, "the torsion and the hair took part");
    (worst / stored, supplied)
}

#[test]
fn the_energy_balance_holds_through_the_voice() {
    // Issue 17: the balance of the lab's test, through a string voice's path (its grid,
    // envelope, ramps and per-sample controls), to 1e-12 of the stored energy: lossless
    // (Damping 0, torsion without loss, a tight Newton tolerance) and with the note's own
    // losses and the default tolerance (measured: 3e-15 and 4e-15).
    // The ear is off: a wave speed moved while the string sounds changes its stored energy.
    let lossless = Controls { damping_scale: 0.0, intonation_percent: 0.0, ..ribbon() };
    let (error, supplied) = voice_energy_balance(&lossless, true);
    println!("lossless: worst step error {error:.2e} of the largest stored energy; the bow supplied {supplied:.3e} J");
    assert!(supplied > 1e-4, "the bow did nothing");
    assert!(error <= 1e-12, "balance off by {error:.2e}");
    let (error, supplied) = voice_energy_balance(&Controls { intonation_percent: 0.0, ..ribbon() }, false);
    println!("with losses: worst step error {error:.2e}; the bow supplied {supplied:.3e} J");
    assert!(error <= 1e-12, "balance with losses off by {error:.2e}");
}

fn render(engine: &mut Engine, seconds: f64) -> Vec<f32> {
    let mut out = vec![0.0f32; (seconds * RATE_HZ) as usize];
    engine.render(&mut out);
    out
}

/// The pitch error (cents) of the last half second of `out` against `expected_hz`.
fn pitch_error(out: &[f32], expected_hz: f64) -> f64 {
    common::cents(common::fundamental_hz(&out[out.len() - (0.5 * RATE_HZ) as usize..], RATE_HZ, expected_hz), expected_hz)
}

#[test]
fn the_ribbon_plays_from_mpe_the_finger_the_pad_and_the_four_strings() {
    use rosin_engine::controller::gesture::{LaneGesture, LANES, LANE_OPEN_KEYS};
    use rosin_engine::voice::NoteId;
    // An MPE note bent up a tone on its own channel (MPE bend range 48 semitones).
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(&ribbon());
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 1, note: 60, voice_id: None }, velocity: 1.0 });
    engine.handle_event(&NoteEvent::PitchBend { channel: 1, value: 0.5 + 2.0 / 96.0 });
    let out = render(&mut engine, 1.5);
    let bent = pitch_error(&out, midi_key_to_hz(62.0));
    assert!(engine.voices().iter().filter(|v| !v.is_free()).all(|v| v.bow_model() == BowModel::Ribbon));
    // The finger control stops a quarter of the string: a fourth up.
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(&Controls { finger_position: 0.25, ..ribbon() });
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(55), velocity: 1.0 });
    let out = render(&mut engine, 1.5);
    let stopped = pitch_error(&out, midi_key_to_hz(55.0) / 0.75);
    // A pad lane bows its open string with no MIDI note.
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(&ribbon());
    let mut frame = [LaneGesture::default(); LANES];
    frame[0] = LaneGesture { bow_down: true, bow_force_n: 5.0, bow_velocity_mps: 0.1, bow_position: 0.15, ..LaneGesture::default() };
    engine.set_gestures(&frame);
    let out = render(&mut engine, 1.5);
    let pad = pitch_error(&out, midi_key_to_hz(LANE_OPEN_KEYS[0] as f64));
    let pad_voices: Vec<_> = engine.voices().iter().filter(|v| !v.is_free()).collect();
    assert!(!pad_voices.is_empty() && pad_voices.iter().all(|v| v.bow_model() == BowModel::Ribbon));
    // Four Strings: every string of the instrument is bowed by the ribbon.
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(&Controls { play_mode: 1.0, ..ribbon() });
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(64), velocity: 1.0 });
    let out = render(&mut engine, 1.5);
    let four = pitch_error(&out, midi_key_to_hz(64.0));
    let strings: Vec<_> = engine.voices().iter().filter(|v| !v.is_free()).collect();
    assert!(strings.len() >= 4 && strings.iter().all(|v| v.bow_model() == BowModel::Ribbon), "{} strings", strings.len());
    println!("MPE bend {bent:+.2} cents, finger {stopped:+.2} cents, pad {pad:+.2} cents, four strings {four:+.2} cents");
    for (what, error) in [("MPE bend", bent), ("finger", stopped), ("pad", pad), ("four strings", four)] {
        assert!(error.abs() < 3.0, "{what}: {error:+.2} cents");
    }
}

#[test]
fn random_automation_under_a_ribbon_note_stays_finite() {
    use rosin_engine::controls;
    let mut rng = common::TestRng(0x5EED_0017);
    let mut engine = Engine::new(RATE_HZ);
    let mut controls = ribbon();
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(50), velocity: 1.0 });
    let mut block = vec![0.0f32; 256];
    let automated = ["bow_force", "bow_velocity", "bow_position", "damping", "bristle_stiffness", "static_friction", "dynamic_friction", "stribeck_velocity", "finger_position", "string_stiffness"];
    for _ in 0..400 {
        let spec = controls::find(automated[(rng.next_u64() % automated.len() as u64) as usize]).unwrap();
        let unit = rng.unit();
        controls.set(spec.id, spec.min + unit * (spec.max - spec.min));
        engine.set_controls(&controls);
        engine.render(&mut block);
        let peak = block.iter().fold(0.0f32, |m, s| if s.is_finite() { m.max(s.abs()) } else { f32::INFINITY });
        // Finite, and within the output's safety ceiling (random forces and speeds at their
        // extremes are loud).
        assert!(peak <= rosin_engine::dsp::output::SAFETY_CEILING as f32, "peak {peak} after {} = {}", spec.id, controls.get(spec.id).unwrap());
    }
    println!("recoveries: {}", engine.recoveries());
    assert_eq!(engine.recoveries(), 0, "a ribbon voice diverged");
}

#[test]
fn legato_scales_with_the_ribbon_are_clean() {
    // A listener's measures of a two-octave legato scale (0.4 s a note, 30 ms overlap,
    // velocity 90): G2 to G4 in Mono Legato, G3 to G5 on the Four Strings (the violin's
    // compass), with the ribbon bow, beside the
    // point bow's: each note periodic at its period and in tune, and no note change bursting
    // above 6 kHz by more than 12 dB (measured 9.4 dB, in Mono Legato; the point bow's
    // scales in the phrase tests hold 6).
    for (mode, name, lowest) in [(2.0, "Mono Legato", 43), (1.0, "Four Strings", 55)] {
        let phrase = melody(&two_octave_scale(lowest), 0.4, 0.03, 90.0 / 127.0, 0.0, RATE_HZ);
        for (bow, label) in [(0.0, "point"), (1.0, "ribbon")] {
            let controls = Controls { play_mode: mode, bow_model: bow, ..Controls::default() };
            let out = render_phrase(&phrase, &controls, RATE_HZ);
            let report = listen(&out, RATE_HZ, &phrase.notes);
            let periodicity = report.notes.iter().map(|n| n.periodicity).fold(f64::MAX, f64::min);
            let cents = report.notes.iter().map(|n| n.cents.abs()).fold(0.0, f64::max);
            let burst = report.changes.iter().map(|c| c.burst_db).fold(f64::MIN, f64::max);
            println!("{name}, {label} bow: least periodicity {periodicity:.3}, worst pitch {cents:.1} cents, worst burst {burst:+.1} dB, peak {:.1} dBFS", report.peak_dbfs);
            if bow == 1.0 {
                assert!(periodicity >= 0.9, "{name}: a note's periodicity is {periodicity:.3}");
                assert!(cents <= 10.0, "{name}: a note is {cents:.1} cents off");
                assert!(burst <= 12.0, "{name}: a change bursts by {burst:+.1} dB");
            }
        }
    }
}

/// The amplitudes (dB) of the first `count` harmonics of `signal`, whose fundamental is
/// near `f0_hz`, over the whole of it.
fn harmonics_db(signal: &[f32], f0_hz: f64, count: usize) -> Vec<f64> {
    let f0 = common::fundamental_hz(signal, RATE_HZ, f0_hz);
    (1..=count)
        .map(|h| {
            let w = std::f64::consts::TAU * h as f64 * f0 / RATE_HZ;
            let (re, im) = signal.iter().enumerate().fold((0.0, 0.0), |(re, im), (n, x)| (re + *x as f64 * (w * n as f64).cos(), im - *x as f64 * (w * n as f64).sin()));
            common::db(2.0 * re.hypot(im) / signal.len() as f64)
        })
        .collect()
}

#[test]
fn one_point_without_torsion_is_the_point_bow_under_the_refined_law() {
    // matusiak2025's bow with M = 1 and no torsion is its lumped bow on the string: the point
    // bow under the passive refined law, with the same hair. Two solvers (the coupled
    // 2M-unknown Newton and the scalar one), and ears that listen to slightly different
    // velocities (the hair's share), so the waveforms drift apart in phase; what a listener
    // hears is the same: level, pitch and the first ten harmonics of G3 and A4.
    for key in [55u8, 69] {
        let phrase = melody(&[key], 1.5, 0.0, 90.0 / 127.0, 0.0, RATE_HZ);
        let steady = (0.6 * RATE_HZ) as usize..(1.4 * RATE_HZ) as usize;
        let point = render_phrase(&phrase, &Controls { friction_model: 1.0, ..Controls::default() }, RATE_HZ);
        let ribbon = render_phrase(&phrase, &Controls { bow_width: 0.0, bow_torsion: 0.0, ..ribbon() }, RATE_HZ);
        let f0 = midi_key_to_hz(key as f64);
        let (a, b) = (&point[steady.clone()], &ribbon[steady]);
        let level = common::db(common::rms(b) / common::rms(a));
        let pitch = common::cents(common::fundamental_hz(b, RATE_HZ, f0), common::fundamental_hz(a, RATE_HZ, f0));
        let (ha, hb) = (harmonics_db(a, f0, 10), harmonics_db(b, f0, 10));
        let worst = ha.iter().zip(&hb).filter(|(x, _)| **x > ha[0] - 40.0).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        println!("key {key}: level {level:+.2} dB, pitch {pitch:+.2} cents, harmonics within {worst:.2} dB");
        assert!(level.abs() < 0.1 && pitch.abs() < 0.1 && worst < 0.1, "key {key}: the one-point ribbon does not sound as the point bow");
    }
}

#[test]
fn the_view_draws_the_ribbons_string_and_its_twist() {
    use rosin_engine::view::snapshot::{capture, ViewSnapshot};
    let shot = |controls: &Controls| {
        let mut engine = Engine::new(RATE_HZ);
        engine.set_controls(controls);
        engine.handle_event(&NoteEvent::NoteOn { note: note_id(55), velocity: 1.0 });
        render(&mut engine, 0.8);
        let mut snapshot = ViewSnapshot::default();
        capture(&engine, &mut snapshot);
        snapshot.strings[0]
    };
    let twisted = shot(&ribbon());
    let largest = |values: &[f32]| values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let (moved, twist) = (largest(&twisted.displacement_m), largest(&twisted.twist_m));
    println!("G3 under the ribbon: string up to {moved:.2e} m, its surface twisted up to {twist:.2e} m");
    assert!(twisted.sounding && twisted.twisting);
    assert!(moved > 1e-5 && twist > 1e-8, "the string or its twist does not show");
    assert!((twisted.bow_from_nut - 0.82).abs() < 0.02, "the bow at {}", twisted.bow_from_nut);
    let plain = shot(&Controls { bow_torsion: 0.0, ..ribbon() });
    assert!(!plain.twisting && largest(&plain.displacement_m) > 1e-5);
    // A stopping finger holds the twist as well as the string, up to it.
    let stopped = shot(&Controls { finger_position: 0.25, ..ribbon() });
    let behind = (0.23 * stopped.twist_m.len() as f64) as usize;
    assert!(stopped.twisting && largest(&stopped.twist_m[behind..]) > 1e-8);
    assert!(stopped.twist_m[..behind].iter().all(|w| *w == 0.0), "the string twists behind the finger");
    assert!(stopped.displacement_m[..behind].iter().all(|u| u.abs() < 1e-9), "the string moves behind the finger");
}

#[test]
fn hostile_controls_at_96k_never_diverge_a_ribbon_voice() {
    // Random controls, at their ends one time in four, on four held ribbon notes on the
    // violin's short strings at 96 kHz: bristles up to 1e6 N/m, damping down to 0.1, bows
    // at 0.5 m/s near the bridge. The contact's budget leaves some samples short of the
    // root; those that would make energy lift the bow for the sample instead (before, each of
    // the first four seeds diverged). No voice diverges, and the lifts are rare: 0.95 % of
    // the samples under these extremes, none in ordinary playing (no fallback at all).
    use rosin_engine::controls;
    let skip = ["instrument", "play_mode", "bow_model", "string_engine", "pad_layout", "output_gain", "mpe", "bow_width", "bow_torsion"];
    let (mut lifts, mut solves) = (0, 0);
    for seed in 1..9u64 {
        let mut rng = common::TestRng(0x9E37_79B9 ^ seed);
        let mut controls = Controls { string_set: 1.0, ..ribbon() };
        let mut engine = Engine::new(96_000.0);
        engine.set_controls(&controls);
        for key in [60u8, 69, 76, 84] {
            engine.handle_event(&NoteEvent::NoteOn { note: note_id(key), velocity: 1.0 });
        }
        let mut block = vec![0.0f32; 512];
        for _ in 0..300 {
            for _ in 0..3 {
                let spec = &controls::ALL[(rng.next_u64() % controls::ALL.len() as u64) as usize];
                if skip.contains(&spec.id) {
                    continue;
                }
                let value = match rng.next_u64() % 8 {
                    0 => spec.min,
                    1 => spec.max,
                    _ => spec.min + (spec.max - spec.min) * rng.unit(),
                };
                controls.set(spec.id, value);
            }
            engine.set_controls(&controls);
            engine.render(&mut block);
            assert!(block.iter().all(|s| s.is_finite()));
        }
        assert_eq!(engine.recoveries(), 0, "seed {seed}: a ribbon voice diverged");
        for voice in engine.voices().iter().filter(|v| !v.is_free()) {
            lifts += voice.ribbon().bowed().contact().passivity_lifts;
            solves += voice.ribbon().bowed().stats().solves();
        }
    }
    println!("{lifts} of {solves} samples lifted the bow to stay passive");
    assert!(lifts as f64 <= 0.02 * solves as f64, "{lifts} lifts in {solves} samples");
}

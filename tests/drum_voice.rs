//! The friction drum as an instrument: MIDI notes in tune, the `instrument` choice, every
//! resolution at the edges of the sample-rate range, the paper's controls audibly at work,
//! random automation of every drum control (vibrato included), recovery from NaN, and Drum
//! Radiation hearing the open end, the membrane or a blend of one and the same drum.

#[path = "common/alloc_guard.rs"]
mod alloc_guard;
mod common;

use common::*;
use nice_assert_no_alloc::assert_no_alloc;
use rosin_engine::controls::{self, Controls};
use rosin_engine::drum_voice::{DrumSample, IN_TUNE_TUNING};
use rosin_engine::envelope::Phase;
use rosin_engine::voices::{Engine, NoteEvent};

fn drum_controls() -> Controls {
    let mut c = Controls::default();
    c.instrument = 1.0;
    c
}

#[test]
fn drum_notes_sound_at_their_keys() {
    // With the default bow the (0,1) mode leads on these keys; others can lock to a higher
    // mode (the membrane is inharmonic), as a real friction drum does.
    for key in [48u8, 60, 66] {
        let (out, engine) = render_note(key, 1.0, 48_000.0, 1.5, 0.0, drum_controls());
        assert_eq!(engine.voices().iter().filter(|v| !v.is_free()).count(), 0, "a string voice played");
        let tail = &out[out.len() / 2..];
        let target = 440.0 * 2f64.powf((key as f64 - 69.0) / 12.0);
        let measured = fundamental_hz(tail, 48_000.0, target);
        let off = cents(measured, target);
        println!("drum key {key}: {measured:.2} Hz against {target:.2} Hz ({off:+.1} cents), peak {:.1} dBFS", db(peak(&out) as f64));
        assert!(off.abs() < 15.0, "key {key}: {off:+.1} cents");
        assert!(peak(&out) > 0.1 && peak(&out) < 1.0, "level {}", peak(&out));
    }
}

#[test]
fn instrument_choice_applies_to_new_notes() {
    let mut engine = Engine::new(44_100.0);
    let mut controls = Controls::default();
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(60), velocity: 0.8 });
    let mut buffer = vec![0.0f32; 4410];
    engine.render(&mut buffer);
    controls.instrument = 1.0;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(64), velocity: 0.8 });
    assert_no_alloc(|| engine.render(&mut buffer));
    let strings = engine.voices().iter().filter(|v| !v.is_free()).count();
    let drums: Vec<_> = engine.drum_voices().iter().filter(|v| !v.is_free()).collect();
    assert_eq!((strings, drums.len()), (1, 1), "the string keeps sounding and the drum joins it");
    assert_eq!(drums[0].note.note, 64);
    assert_eq!(drums[0].phase(), Phase::Bowing);
    assert!(drums[0].last_output().abs() > 0.0);
}

#[test]
fn every_resolution_plays_at_the_rate_extremes() {
    for rate in [22_050.0, 96_000.0] {
        for quality in 0..3 {
            let mut c = drum_controls();
            c.drum_quality = quality as f64;
            let (out, engine) = render_note(57, 1.0, rate, 0.25, 0.05, c);
            assert!(out.iter().all(|s| s.is_finite()));
            assert!(peak(&out) > 0.01, "{rate} Hz quality {quality}: silent");
            assert_eq!(engine.recoveries(), 0);
        }
    }
}

#[test]
fn the_papers_controls_shape_the_sound() {
    let rms_with = |edit: &dyn Fn(&mut Controls)| {
        let mut c = drum_controls();
        edit(&mut c);
        let (out, _) = render_note(60, 1.0, 44_100.0, 0.6, 0.0, c);
        rms(&out[out.len() / 2..])
    };
    let base = rms_with(&|_| {});
    let quiet = rms_with(&|c| c.drum_gain = 0.0);
    assert!((db(quiet / base) + 20.0).abs() < 0.5, "Gain 0 is -20 dB: {:.2} dB", db(quiet / base));
    let damped = rms_with(&|c| c.drum_damping = 10.0);
    assert!((damped / base - 1.0).abs() > 0.05, "damping did nothing");
    let retuned = {
        let mut c = drum_controls();
        c.drum_tuning = IN_TUNE_TUNING + 1.0;
        let (out, _) = render_note(60, 1.0, 44_100.0, 1.0, 0.0, c);
        let (reference, _) = render_note(60, 1.0, 44_100.0, 1.0, 0.0, drum_controls());
        let f = |s: &[f32], guess: f64| fundamental_hz(&s[s.len() / 2..], 44_100.0, guess);
        f(&out, 261.63 * 116.25 / 102.75) / f(&reference, 261.63)
    };
    // Tuning scales the wave speed, 102.75 -> 116.25 m/s: every mode rises by that ratio.
    assert!((retuned / (116.25 / 102.75) - 1.0).abs() < 0.03, "Tuning moved the pitch by {retuned:.4}");
}

#[test]
fn random_drum_automation_with_vibrato_stays_bounded() {
    let drum_ids = ["drum_tuning", "drum_damping", "drum_noise", "drum_variation", "drum_rate", "drum_gain", "drum_bow_x", "drum_bow_y", "bow_force", "bow_velocity", "drum_quality"];
    let rate = 44_100.0;
    let mut engine = Engine::new(rate);
    let mut controls = drum_controls();
    controls.drum_variation = 10.0;
    let mut rng = TestRng(99);
    let mut buffer = vec![0.0f32; 512];
    let mut worst: f32 = 0.0;
    for block in 0..(1.5 * rate / 512.0) as usize {
        for _ in 0..3 {
            let id = drum_ids[(rng.next_u64() % drum_ids.len() as u64) as usize];
            let spec = controls::find(id).unwrap();
            let value = match rng.next_u64() % 4 {
                0 => spec.min,
                1 => spec.max,
                _ => spec.min + (spec.max - spec.min) * rng.unit(),
            };
            controls.set(id, value);
        }
        controls.drum_gain = controls.drum_gain.max(5.0);
        engine.set_controls(&controls);
        if block % 20 == 0 {
            engine.handle_event(&NoteEvent::NoteOn { note: note_id(30 + (rng.next_u64() % 50) as u8), velocity: rng.unit() });
        }
        assert_no_alloc(|| engine.render(&mut buffer));
        for s in &buffer {
            assert!(s.is_finite());
            worst = worst.max(s.abs());
        }
    }
    println!("random drum automation: peak {:.1} dBFS", db(worst as f64));
    // Loud is allowed: +20 dB of gain, five times the default bow speed and eight voices
    // reach some +40 dBFS. A diverging drum grows without bound (and is recovered).
    assert!(worst < 256.0, "output reached {worst}");
    assert_eq!(engine.recoveries(), 0, "a drum diverged");
}

#[test]
fn a_diverging_drum_is_recovered_silently() {
    let mut engine = Engine::new(44_100.0);
    engine.set_controls(&drum_controls());
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(50), velocity: 1.0 });
    let mut buffer = vec![0.0f32; 2048];
    engine.render(&mut buffer);
    let index = engine.drum_voices().iter().position(|v| !v.is_free()).unwrap();
    engine.corrupt_drum_for_test(index);
    engine.render(&mut buffer);
    assert!(buffer.iter().all(|s| s.is_finite()));
    assert_eq!(engine.recoveries(), 1);
    // The next note plays normally.
    engine.handle_event(&NoteEvent::NoteOn { note: note_id(50), velocity: 1.0 });
    engine.render(&mut buffer);
    assert!(buffer.iter().all(|s| s.is_finite()) && peak(&buffer) > 0.001);
}

#[test]
fn drum_radiation_hears_the_open_end_the_membrane_or_a_blend_of_the_same_drum() {
    use rosin_engine::drum_voice::{DrumVoice, MEMBRANE_RADIATION_S, OUTPUT_SCALE_PER_M};
    use rosin_engine::voice::NoteId;
    // Three voices in step, heard from the open end, half and half, and the membrane: the
    // control only chooses what is heard (the drum and its ear are the same in all three),
    // so the blend is the mean of the two ends, and at 100 % the output is the membrane's
    // mean velocity under the tube (the rigid connection's `I_t zeta`, differenced).
    let rate_hz = 48_000.0;
    let note = NoteId { channel: 0, note: 50, voice_id: None };
    let mut voices: Vec<DrumVoice> = [0.0, 50.0, 100.0]
        .iter()
        .map(|&radiation| {
            let controls = Controls { drum_radiation_percent: radiation, ..drum_controls() };
            let mut voice = DrumVoice::new(rate_hz);
            voice.start(note, 0.7, 0, &controls);
            voice
        })
        .collect();
    let (mut open_end, mut membrane, mut previous_m) = (Vec::new(), Vec::new(), 0.0);
    let mut worst_blend = 0.0f64;
    let mut worst_membrane = 0.0f64;
    let (mut worst_gap, mut largest) = (0.0f64, 0.0f64);
    for _ in 0..(0.8 * rate_hz) as usize {
        let out: Vec<f64> = voices.iter_mut().map(|v| v.tick()).collect();
        let connected_m = voices[2].drum().connected_displacement_m();
        let expected = MEMBRANE_RADIATION_S * (connected_m - previous_m) * rate_hz * OUTPUT_SCALE_PER_M;
        previous_m = connected_m;
        worst_membrane = worst_membrane.max((out[2] - expected).abs());
        worst_blend = worst_blend.max((out[1] - 0.5 * (out[0] + out[2])).abs());
        open_end.push(out[0] as f32);
        membrane.push(out[2] as f32);
        let drum = voices[2].drum();
        worst_gap = worst_gap.max((drum.connected_displacement_m() - drum.connection_displacement_m()).abs());
        largest = largest.max(drum.connection_displacement_m().abs());
    }
    // The tube's side of the connection is the membrane's, as the connection holds: to the
    // rounding of the membrane's levels (in f32, a few parts in 10^7 of their size, as
    // `tests/drum_physics.rs` measures; in f64 it would be 1e-12).
    println!("connection gap at most {worst_gap:.2e} m, displacement up to {largest:.2e} m");
    assert!(largest > 1e-6 && worst_gap <= 8.0 * f64::from(DrumSample::EPSILON) * largest, "gap {worst_gap:.2e} m");
    let level = |x: &[f32]| db(rms(x));
    let (open_db, membrane_db) = (level(&open_end[open_end.len() / 2..]), level(&membrane[membrane.len() / 2..]));
    println!("key 50: open end {open_db:.1} dB, membrane {membrane_db:.1} dB; blend off the mean by {worst_blend:e}, membrane off its velocity by {worst_membrane:e}");
    assert!(worst_membrane <= 1e-12, "at 100 % the output is not the membrane's velocity ({worst_membrane:e})");
    assert!(worst_blend <= 1e-12, "the blend is not the mean of the two ({worst_blend:e})");
    assert!(open_db > -40.0 && membrane_db > -40.0, "a silent end: {open_db:.1} and {membrane_db:.1} dB");
    // Two different signals, of the same drum.
    let difference: Vec<f32> = open_end.iter().zip(&membrane).map(|(a, b)| a - b).collect();
    assert!(level(&difference[difference.len() / 2..]) > membrane_db - 20.0, "the two ends sound the same");
}

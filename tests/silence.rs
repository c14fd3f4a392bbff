//! Silence costs nothing (issue 18): once a note has rung down, the engine renders silence
//! without ticking a string, a drum or the body, in every play mode and on the drum; the
//! four open strings of Four Strings sleep instead of ringing at -100 dB forever; and
//! everything wakes with the next note, or, for a sleeping open string, with the bridge.
//! `scripts/instructions.sh` counts what that silence costs with callgrind (49 instructions
//! a sample, rosin-render's WAV writing included).

mod common;

use rosin_engine::controls::{Controls, PlayMode};
use rosin_engine::presets::find;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

const RATE_HZ: f64 = 48_000.0;
const BLOCK: usize = 256;

/// Plays a 1 s G3 and renders until the engine is silent; returns when (s, after the
/// note-off), or `None` within `limit_s`.
fn silent_after(engine: &mut Engine, key: u8, limit_s: f64) -> Option<f64> {
    let mut buffer = [0.0f32; BLOCK];
    engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity: 0.7 });
    for _ in 0..(RATE_HZ as usize / BLOCK) {
        engine.render(&mut buffer);
    }
    assert!(!engine.is_silent());
    engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(common::note_id(key)) });
    let mut rendered = 0;
    while (rendered as f64) < limit_s * RATE_HZ {
        engine.render(&mut buffer);
        rendered += BLOCK;
        if engine.is_silent() {
            // From the next block on, exact zeros.
            engine.render(&mut buffer);
            assert!(buffer.iter().all(|&s| s == 0.0));
            return Some(rendered as f64 / RATE_HZ);
        }
    }
    None
}

fn engine_with(controls: &Controls) -> Engine {
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(controls);
    engine
}

#[test]
fn every_play_mode_and_the_drum_fall_silent_after_a_note_rings_down() {
    let mut cases: Vec<(&str, Controls)> = Vec::new();
    for (name, mode) in [("Poly", PlayMode::Poly), ("Four Strings", PlayMode::FourStrings), ("Mono Legato", PlayMode::MonoLegato)] {
        let mut controls = Controls::default();
        controls.play_mode = mode as u8 as f64;
        cases.push((name, controls));
    }
    cases.push(("Violin (Four Strings, a body)", find("Violin").unwrap().controls()));
    cases.push(("Cuica", find("Cuica").unwrap().controls()));
    for (name, controls) in cases {
        let mut engine = engine_with(&controls);
        assert!(engine.is_silent(), "{name}: a fresh engine is not silent");
        let key = if controls.instrument >= 0.5 { 60 } else { 55 };
        let after = silent_after(&mut engine, key, 20.0);
        println!("{name}: silent {after:?} s after the note-off");
        assert!(after.is_some(), "{name}: still sounding 20 s after the note-off");
        // Four Strings keeps its strings up, asleep, ready to ring in sympathy.
        if controls.play_mode.round() == PlayMode::FourStrings as u8 as f64 {
            assert!(engine.voices().iter().filter(|v| !v.is_free()).count() >= 4 && engine.voices().iter().filter(|v| !v.is_free()).all(|v| v.is_asleep()));
        }
    }
}

#[test]
fn a_silent_engine_wakes_with_the_next_note_cleanly() {
    for mode in [PlayMode::Poly, PlayMode::FourStrings] {
        let mut controls = find("Violin").unwrap().controls();
        controls.play_mode = mode as u8 as f64;
        let mut engine = engine_with(&controls);
        silent_after(&mut engine, 62, 20.0).expect("silent");
        let mut fresh = engine_with(&controls);
        let (mut woken, mut first) = (vec![0.0f32; 24_000], vec![0.0f32; 24_000]);
        engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(69), velocity: 0.7 });
        fresh.handle_event(&NoteEvent::NoteOn { note: common::note_id(69), velocity: 0.7 });
        engine.render(&mut woken);
        fresh.render(&mut first);
        // The onset (20 ms) and the steady note (0.2 to 0.5 s) are as loud as a first note's
        // from a fresh engine: no click from waking, nothing missing. (Not the same samples:
        // a bowed attack amplifies differences of a few ulps.)
        let peak = |x: &[f32]| x.iter().fold(0.0f32, |m, s| m.max(s.abs())) as f64;
        let rms = |x: &[f32]| (x.iter().map(|&s| (s as f64).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
        let onset = 20.0 * (peak(&woken[..960]) / peak(&first[..960])).log10();
        let steady = 20.0 * (rms(&woken[9_600..24_000]) / rms(&first[9_600..24_000])).log10();
        println!("{mode:?}: the note after silence against a first note: onset {onset:+.2} dB, steady {steady:+.2} dB");
        assert!(peak(&first) > 0.01, "{mode:?}: the note does not sound");
        assert!(onset.abs() < 1.5 && steady.abs() < 1.0, "{mode:?}: the note after silence is {onset:+.2} dB at its onset, {steady:+.2} dB steady");
    }
}

#[test]
fn a_sleeping_open_string_wakes_in_sympathy() {
    let mut controls = find("Violin").unwrap().controls();
    controls.play_mode = PlayMode::FourStrings as u8 as f64;
    controls.sympathetic_percent = 100.0;
    let mut engine = engine_with(&controls);
    silent_after(&mut engine, 62, 20.0).expect("silent");
    assert!(engine.voices()[..4].iter().all(|v| v.is_asleep()));
    // Bow the A string; the bridge drives the others, which wake and ring with it.
    engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(69), velocity: 0.7 });
    let mut buffer = [0.0f32; BLOCK];
    for _ in 0..(0.3 * RATE_HZ) as usize / BLOCK {
        engine.render(&mut buffer);
    }
    let awake = engine.voices()[..4].iter().filter(|v| !v.is_asleep()).count();
    assert_eq!(awake, 4, "the open strings did not wake with the bridge");
    assert!(engine.voices()[..4].iter().filter(|v| v.note.note != 69).any(|v| v.last_output().abs() > 0.0));
}

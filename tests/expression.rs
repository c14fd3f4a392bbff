//! Expression at the engine: MPE bends land in tune and stay stable, pressure and note
//! expressions reach only their voice, poly modulation by note ID, plain MIDI (poly
//! aftertouch, mod-wheel vibrato, sustain), and the legato playing modes (four strings in
//! fifths with sympathetic strings, mono with portamento).

mod common;

use common::*;
use rosin_engine::controls::{Controls, PlayMode};
use rosin_engine::expression::ExpressionKind;
use rosin_physics::string::tuning::midi_key_to_hz;
use rosin_engine::voice::{NoteId, Phase};
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

const RATE: f64 = 48_000.0;

fn engine_with(controls: Controls) -> Engine {
    let mut engine = Engine::new(RATE);
    engine.set_controls(&controls);
    engine
}

fn on(engine: &mut Engine, channel: u8, key: u8, voice_id: Option<i32>) {
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel, note: key, voice_id }, velocity: 0.9 });
}

fn off(engine: &mut Engine, channel: u8, key: u8) {
    engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern { channel: Some(channel), note: Some(key), voice_id: None } });
}

/// A 14-bit MIDI bend, normalised as hosts deliver it.
fn bend(engine: &mut Engine, channel: u8, semitones: f64, range_st: f64) {
    let raw = (8192.0 + semitones / range_st * 8192.0).round().clamp(0.0, 16383.0);
    engine.handle_event(&NoteEvent::PitchBend { channel, value: raw / 16383.0 });
}

/// Renders `seconds`, one sample at a time, and returns each string voice's own output.
fn per_voice(engine: &mut Engine, seconds: f64, voices: usize) -> Vec<Vec<f32>> {
    let mut out = vec![Vec::new(); voices];
    let mut sample = [0.0f32];
    for _ in 0..(seconds * RATE) as usize {
        engine.render(&mut sample);
        for (i, channel) in out.iter_mut().enumerate() {
            channel.push(engine.voices()[i].last_output() as f32);
        }
    }
    out
}

fn index_of(engine: &Engine, channel: u8, key: u8) -> usize {
    engine.voices().iter().position(|v| !v.is_free() && v.note.channel == channel && v.note.note == key).expect("voice")
}

#[test]
fn two_mpe_notes_bent_in_opposite_directions_both_land_in_tune() {
    two_notes_bent_apart_land_in_tune(Controls::default(), &[(69, 2.0), (62, 12.0), (55, -12.0), (76, 7.0)]);
}

/// The waveguide sets its loop length only when a voice works its controls out (a bend
/// moves them), and its notes land on their bends too.
#[test]
fn two_mpe_notes_on_the_waveguide_bent_apart_both_land_in_tune() {
    two_notes_bent_apart_land_in_tune(Controls { string_engine: 1.0, ..Controls::default() }, &[(69, 2.0), (55, -12.0)]);
}

/// Bows each key on MPE channel 2 and the key a fourth below on channel 3, bends them
/// `bend_st` apart a moment later, and asks each to land within 3 cents of its bent note.
fn two_notes_bent_apart_land_in_tune(c: Controls, cases: &[(u8, f64)]) {
    for &(key, bend_st) in cases {
        let mut engine = engine_with(c);
        on(&mut engine, 2, key, None);
        on(&mut engine, 3, key - 5, None);
        // The bends arrive a moment after the notes, as a player's slide does.
        engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
        bend(&mut engine, 2, bend_st, c.mpe_bend_range_st);
        bend(&mut engine, 3, -bend_st, c.mpe_bend_range_st);
        let (a, b) = (index_of(&engine, 2, key), index_of(&engine, 3, key - 5));
        let _settle = per_voice(&mut engine, 1.2, 2);
        let held = per_voice(&mut engine, 0.6, 2);
        for (index, target_key) in [(a, key as f64 + bend_st), (b, key as f64 - 5.0 - bend_st)] {
            let expected = midi_key_to_hz(target_key);
            let pitch = fundamental_hz(&held[index], RATE, expected);
            eprintln!("key {key} bent to {target_key}: {:+.2} cents", cents(pitch, expected));
            assert!(
                cents(pitch, expected).abs() < 3.0,
                "key {key} bent to {target_key}: {pitch:.3} Hz, {:+.2} cents from {expected:.3}",
                cents(pitch, expected)
            );
        }
        assert_eq!(engine.recoveries(), 0, "a voice diverged while bent");
    }
}

#[test]
fn a_four_octave_bend_sweep_stays_stable_and_finite() {
    let c = Controls::default();
    let mut engine = engine_with(c);
    on(&mut engine, 1, 69, None);
    let mut out = vec![0.0f32; 256];
    let steps = 400;
    for step in 0..=steps {
        // Down to -48, up to +48, back: every grid is stressed at both ends.
        let phase = step as f64 / steps as f64;
        let st = 48.0 * (std::f64::consts::TAU * phase).sin();
        bend(&mut engine, 1, st, c.mpe_bend_range_st);
        engine.render(&mut out);
        assert!(out.iter().all(|s| s.is_finite() && s.abs() < 4.0), "bend {st:.1} st");
    }
    assert_eq!(engine.recoveries(), 0);
    assert!(engine.voices()[0].is_held());
}

#[test]
fn pressure_on_one_channel_changes_only_that_voice() {
    let mut engine = engine_with(Controls::default());
    on(&mut engine, 2, 60, None);
    on(&mut engine, 3, 67, None);
    engine.render(&mut vec![0.0; (0.5 * RATE) as usize]);
    let (a, b) = (index_of(&engine, 2, 60), index_of(&engine, 3, 67));
    let force = |e: &Engine, i: usize| e.voices()[i].applied_controls().normal_force_n;
    let (a0, b0) = (force(&engine, a), force(&engine, b));
    engine.handle_event(&NoteEvent::ChannelPressure { channel: 2, value: 0.25 });
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    assert!((force(&engine, a) / a0 - 0.5).abs() < 1e-9, "pressure 0.25 halves the force: {} -> {}", a0, force(&engine, a));
    assert_eq!(force(&engine, b), b0, "the other channel's voice moved");
    // The slide (CC74) moves only its channel's bow towards the bridge.
    let position = |e: &Engine, i: usize| e.voices()[i].applied_controls().bow_position;
    engine.handle_event(&NoteEvent::ControlChange { channel: 3, cc: 74, value: 1.0 });
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    assert!((position(&engine, b) - Controls::default().bow_position / 2.0).abs() < 1e-9);
    assert_eq!(position(&engine, a), Controls::default().bow_position);
}

#[test]
fn note_expressions_and_poly_modulation_reach_only_their_voice() {
    let mut engine = engine_with(Controls::default());
    on(&mut engine, 0, 60, Some(7));
    on(&mut engine, 0, 64, Some(8));
    engine.render(&mut vec![0.0; (0.5 * RATE) as usize]);
    let (a, b) = (index_of(&engine, 0, 60), index_of(&engine, 0, 64));
    let by_id = |id| NotePattern { channel: None, note: None, voice_id: Some(id) };
    engine.handle_event(&NoteEvent::Expression { pattern: by_id(7), kind: ExpressionKind::Tuning, value: 1.0 });
    engine.handle_event(&NoteEvent::PolyModulation { voice_id: 8, index: 1, normalized_offset: 0.1 });
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    let v = engine.voices();
    assert!((v[a].target_key() - 61.0).abs() < 1e-9, "tuning: {}", v[a].target_key());
    assert!((v[b].target_key() - 64.0).abs() < 1e-9);
    let velocity = Controls::default().bow_velocity_mps;
    assert!((v[b].applied_controls().bow_velocity_mps - (velocity + 0.1)).abs() < 1e-9, "poly mod: {}", v[b].applied_controls().bow_velocity_mps);
    assert!((v[a].applied_controls().bow_velocity_mps - velocity).abs() < 1e-9);
    // MIDI poly aftertouch (no note ID) by channel and key.
    engine.handle_event(&NoteEvent::Expression { pattern: NotePattern { channel: Some(0), note: Some(64), voice_id: None }, kind: ExpressionKind::Pressure, value: 1.0 });
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    let v = engine.voices();
    assert!(v[b].applied_controls().normal_force_n > 1.5 * v[a].applied_controls().normal_force_n);
}

#[test]
fn the_mod_wheel_gives_vibrato_of_the_set_depth_and_rate() {
    let c = Controls { vibrato_depth_cents: 40.0, vibrato_rate_hz: 5.0, ..Controls::default() };
    let mut engine = engine_with(c);
    on(&mut engine, 0, 69, None);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 1, value: 1.0 });
    engine.render(&mut vec![0.0; (0.2 * RATE) as usize]);
    // The pitch swings at 5 Hz by 40 cents either side of the note.
    let mut offsets = Vec::new();
    let mut sample = [0.0f32];
    for _ in 0..RATE as usize {
        engine.render(&mut sample);
        offsets.push(engine.voices()[0].sounding_key() - 69.0);
    }
    let (lo, hi) = offsets.iter().fold((f64::MAX, f64::MIN), |(l, h), &s| (l.min(s), h.max(s)));
    assert!((lo + 0.4).abs() < 0.02 && (hi - 0.4).abs() < 0.02, "vibrato span {lo:.3}..{hi:.3} st");
    let rising: Vec<usize> = offsets.windows(2).enumerate().filter(|(_, w)| w[0] < 0.0 && w[1] >= 0.0).map(|(i, _)| i).collect();
    let period_s = (rising[rising.len() - 1] - rising[0]) as f64 / (rising.len() - 1) as f64 / RATE;
    assert!((period_s - 0.2).abs() < 0.002, "vibrato period {period_s:.4} s");
}

/// Renders `seconds` sample by sample and returns the most voice `voice`'s pitch strayed
/// from its note over them (semitones): its vibrato's swing over that stretch.
fn vibrato_swing_st(engine: &mut Engine, voice: usize, seconds: f64) -> f64 {
    let mut sample = [0.0f32];
    let mut most = 0.0f64;
    for _ in 0..(seconds * RATE) as usize {
        engine.render(&mut sample);
        let v = &engine.voices()[voice];
        most = most.max((v.sounding_key() - v.target_key()).abs());
    }
    most
}

/// With *Vibrato Delay*, a new note's vibrato waits that long, grows in over as long again,
/// then swings its full depth; a legato note in Mono Legato keeps the vibrato it has. At 0
/// (the default) the vibrato is there from note-on, as above.
#[test]
fn a_new_notes_vibrato_waits_for_vibrato_delay_then_grows_in() {
    let c = Controls { vibrato_depth_cents: 40.0, vibrato_rate_hz: 5.0, vibrato_delay_ms: 150.0, play_mode: PlayMode::MonoLegato as u8 as f64, ..Controls::default() };
    let mut engine = engine_with(c);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 1, value: 1.0 });
    on(&mut engine, 0, 69, None);
    // The control ramp and the bend smoothing take a few ms; the delay is 150 ms.
    let waiting = vibrato_swing_st(&mut engine, 0, 0.14);
    // From 0.14 to 0.24 s the vibrato has grown to at most 0.6 of its depth.
    let growing = vibrato_swing_st(&mut engine, 0, 0.1);
    vibrato_swing_st(&mut engine, 0, 0.06);
    let full = vibrato_swing_st(&mut engine, 0, 0.4);
    assert!(waiting < 0.005, "the vibrato swung {waiting:.3} st while it waited");
    assert!(growing > 0.02 && growing < 0.25, "growing in, the vibrato swung {growing:.3} st");
    assert!((full - 0.4).abs() < 0.02, "then it swung {full:.3} st");
    // A legato note: the same voice goes on, with its vibrato.
    on(&mut engine, 0, 71, None);
    off(&mut engine, 0, 69);
    let legato = vibrato_swing_st(&mut engine, 0, 0.2);
    assert!(legato > 0.3, "the legato note's vibrato swung {legato:.3} st");
}

/// In Four Strings a string keeps sounding between notes: each new attack on it (the bow
/// put down again) waits *Vibrato Delay* once more.
#[test]
fn in_four_strings_every_attack_waits_for_vibrato_delay() {
    let c = Controls { vibrato_depth_cents: 40.0, vibrato_rate_hz: 5.0, vibrato_delay_ms: 150.0, ..four_strings(1.0) };
    let mut engine = engine_with(c);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 1, value: 1.0 });
    // The A string (index 2) plays B4, once and again after a rest: from 0.02 to 0.14 s the
    // vibrato waits, and from 0.3 to 0.5 s it swings whole.
    for attack in 0..2 {
        on(&mut engine, 0, 71, None);
        vibrato_swing_st(&mut engine, 2, 0.02);
        let waiting = vibrato_swing_st(&mut engine, 2, 0.12);
        vibrato_swing_st(&mut engine, 2, 0.16);
        let full = vibrato_swing_st(&mut engine, 2, 0.2);
        assert!(waiting < 0.005, "attack {attack}: the vibrato swung {waiting:.3} st while it waited");
        assert!((full - 0.4).abs() < 0.02, "attack {attack}: then it swung {full:.3} st");
        off(&mut engine, 0, 71);
        engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
    }
}

/// A legato crossing in Four Strings carries the phrase's vibrato over to the new string as
/// it was: a crossing while the vibrato still waits leaves it waiting for the rest of the
/// delay counted from the phrase's attack, and one after it has grown in swings at once.
#[test]
fn a_four_strings_crossing_carries_the_phrases_vibrato_over() {
    let c = Controls { vibrato_depth_cents: 40.0, vibrato_rate_hz: 5.0, vibrato_delay_ms: 150.0, ..four_strings(1.0) };
    let mut engine = engine_with(c);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 1, value: 1.0 });
    // B4 on the A string (index 2); 100 ms in, F#5 crosses to the E string (index 3). The
    // vibrato goes on waiting there until 150 ms after B4's attack, then grows in (not 150
    // ms after the crossing, as a new attack's would). A note and a rest come first, so
    // that the strings, put up at the first note, have their own time apart from the phrase's.
    on(&mut engine, 0, 71, None);
    engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
    off(&mut engine, 0, 71);
    engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
    on(&mut engine, 0, 71, None);
    vibrato_swing_st(&mut engine, 2, 0.1);
    on(&mut engine, 0, 78, None);
    off(&mut engine, 0, 71);
    assert!(engine.voices()[3].is_held(), "F#5 crossed to the E string");
    let waiting = vibrato_swing_st(&mut engine, 3, 0.045);
    assert!(waiting < 0.005, "across the crossing, the vibrato swung {waiting:.3} st while it waited");
    vibrato_swing_st(&mut engine, 3, 0.015);
    // From 0.16 to 0.24 s after B4's attack the vibrato grows to 0.6 of its depth.
    let growing = vibrato_swing_st(&mut engine, 3, 0.08);
    assert!(growing > 0.02 && growing < 0.25, "growing in, the vibrato swung {growing:.3} st");
    vibrato_swing_st(&mut engine, 3, 0.11);
    let grown = vibrato_swing_st(&mut engine, 3, 0.2);
    assert!((grown - 0.4).abs() < 0.02, "then it swung {grown:.3} st");
    // Back to B4 on the A string, long after the attack: the vibrato swings at once.
    on(&mut engine, 0, 71, None);
    off(&mut engine, 0, 78);
    assert!(engine.voices()[2].is_held(), "B4 crossed back to the A string");
    let at_once = vibrato_swing_st(&mut engine, 2, 0.12);
    assert!(at_once > 0.3, "after the crossing back, the vibrato swung {at_once:.3} st");
    assert_eq!(engine.string_attacks(), 2, "the phrase is one bow stroke, after the first note");
}

#[test]
fn the_sustain_pedal_holds_released_notes_until_it_lifts() {
    let mut engine = engine_with(Controls::default());
    on(&mut engine, 0, 60, None);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 64, value: 1.0 });
    off(&mut engine, 0, 60);
    engine.render(&mut vec![0.0; 4800]);
    assert_eq!(engine.voices()[0].phase(), Phase::Bowing);
    engine.handle_event(&NoteEvent::ControlChange { channel: 0, cc: 64, value: 0.0 });
    engine.render(&mut vec![0.0; 480]);
    assert_ne!(engine.voices()[0].phase(), Phase::Bowing);
}

fn four_strings(set: f64) -> Controls {
    Controls { play_mode: 1.0, string_set: set, glide_time_ms: 40.0, ..Controls::default() }
}

#[test]
fn four_strings_play_a_legato_phrase_on_one_bow_stroke_in_tune() {
    // Violin: A4 (open A), B4 and C#5 slide on the A string, then F#5 (beyond a fifth above
    // the A string) crosses to the E string, then back down to B4: one attack for the whole
    // phrase.
    let mut engine = engine_with(Controls { bow_force_n: 0.25, ..four_strings(1.0) });
    let phrase: [(u8, usize); 5] = [(69, 2), (71, 2), (73, 2), (78, 3), (71, 2)];
    let mut previous = None;
    for (key, string) in phrase {
        on(&mut engine, 0, key, None);
        if let Some(p) = previous {
            off(&mut engine, 0, p);
        }
        previous = Some(key);
        let _settle = per_voice(&mut engine, 0.7, 4);
        let held = per_voice(&mut engine, 0.4, 4);
        let v = &engine.voices()[string];
        assert!(v.is_held(), "{key} is not bowed on string {string}");
        assert_eq!(v.note.note, key);
        let expected = midi_key_to_hz(key as f64);
        let pitch = fundamental_hz(&held[string], RATE, expected);
        eprintln!("{key} on string {string}: {:+.2} cents", cents(pitch, expected));
        assert!(cents(pitch, expected).abs() < 5.0, "{key} on string {string}: {pitch:.2} Hz ({:+.1} cents)", cents(pitch, expected));
    }
    assert_eq!(engine.string_attacks(), 1, "the legato phrase re-attacked");
    assert_eq!(engine.recoveries(), 0);
    // The fourth string went back to ringing when the bow crossed back.
    assert!(!engine.voices()[3].is_held() && !engine.voices()[3].is_free());
    // Releasing the last note lifts the bow; a new note now is a new attack.
    off(&mut engine, 0, 71);
    engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
    on(&mut engine, 0, 62, None);
    assert_eq!(engine.string_attacks(), 2);
    assert!(engine.voices()[1].is_held(), "D4 goes to the D string");
}

#[test]
fn four_strings_slide_off_an_open_string_quickly_and_between_stopped_notes_over_the_glide() {
    // Violin, Glide Time 60 ms: open G3, then A3 and B3 on the G string. Off the open string
    // the finger arrives within four of its periods (20.4 ms) or the floor (30 ms); from A3
    // to B3 it slides the whole glide.
    use rosin_engine::play_modes::{FROM_OPEN_GLIDE_MIN_S, FROM_OPEN_GLIDE_PERIODS};
    let from_open_s = (FROM_OPEN_GLIDE_PERIODS / midi_key_to_hz(55.0)).max(FROM_OPEN_GLIDE_MIN_S);
    assert!(from_open_s <= 0.03);
    let mut engine = engine_with(Controls { glide_time_ms: 60.0, ..four_strings(1.0) });
    let key_after = |engine: &mut Engine, seconds: f64| {
        engine.render(&mut vec![0.0; (seconds * RATE).round() as usize]);
        engine.voices()[0].target_key()
    };
    on(&mut engine, 0, 55, None);
    assert_eq!(key_after(&mut engine, 0.3), 55.0, "open G3");
    on(&mut engine, 0, 57, None);
    off(&mut engine, 0, 55);
    let early = key_after(&mut engine, 0.5 * from_open_s);
    assert!(early > 55.0 && early < 57.0, "A3 half-way through its slide off the open string: {early}");
    assert!((key_after(&mut engine, 0.5 * from_open_s + 2.0 / RATE) - 57.0).abs() < 1e-9, "A3 arrived");
    key_after(&mut engine, 0.3);
    on(&mut engine, 0, 59, None);
    off(&mut engine, 0, 57);
    let sliding = key_after(&mut engine, from_open_s);
    assert!(sliding > 57.0 && sliding < 59.0, "B3 half-way through its 60 ms slide: {sliding}");
    assert!((key_after(&mut engine, 0.06 - from_open_s + 2.0 / RATE) - 59.0).abs() < 1e-9, "B3 arrived");
    assert!(engine.voices()[0].is_held() && engine.voices()[0].note.note == 59);
    assert_eq!(engine.string_attacks(), 1, "one stroke");
}

#[test]
fn an_open_string_rings_in_sympathy_with_its_harmonic() {
    // Bowing A4 on the D string (fingered a fifth up) makes the open A string ring far more
    // than bowing G#4 there, which no open string shares.
    let ring = |key: u8| {
        let mut engine = engine_with(Controls { bow_force_n: 0.25, ..four_strings(1.0) });
        // F4 first (none of its partials is near the A string's), then legato up the D string.
        on(&mut engine, 0, 65, None);
        engine.render(&mut vec![0.0; (0.2 * RATE) as usize]);
        on(&mut engine, 0, key, None);
        off(&mut engine, 0, 65);
        assert!(engine.voices()[1].is_held(), "{key} should stay on the D string");
        let out = per_voice(&mut engine, 1.0, 4);
        (rms(&out[2][(0.5 * RATE) as usize..]), rms(&out[1][(0.5 * RATE) as usize..]))
    };
    let (a_string_at_a, bowed_a) = ring(69);
    let (a_string_at_g_sharp, bowed_g_sharp) = ring(68);
    let sympathy = db(a_string_at_a / bowed_a);
    let off_harmonic = db(a_string_at_g_sharp / bowed_g_sharp);
    eprintln!("open A string: {sympathy:.1} dB of the bowed A4, {off_harmonic:.1} dB of the bowed G#4");
    assert!(sympathy > off_harmonic + 15.0, "sympathy {sympathy:.1} dB vs {off_harmonic:.1} dB off the harmonic");
    assert!(sympathy > -35.0 && sympathy < -12.0, "the sympathetic string at {sympathy:.1} dB of the bowed one");
    // At zero sympathy the open string stays silent.
    let mut engine = engine_with(Controls { sympathetic_percent: 0.0, bow_force_n: 0.25, ..four_strings(1.0) });
    on(&mut engine, 0, 69, None);
    let out = per_voice(&mut engine, 0.5, 4);
    assert!(out[1].iter().chain(&out[0]).chain(&out[3]).all(|&s| s == 0.0));
}

#[test]
fn mono_legato_glides_without_a_new_attack_and_returns_to_a_held_note() {
    let c = Controls { play_mode: 2.0, glide_time_ms: 100.0, ..Controls::default() };
    let mut engine = engine_with(c);
    on(&mut engine, 0, 60, None);
    engine.render(&mut vec![0.0; (0.5 * RATE) as usize]);
    on(&mut engine, 0, 67, None);
    // Half-way through the glide the pitch is half-way.
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    let mid = engine.voices()[0].target_key();
    assert!((mid - 63.5).abs() < 0.2, "mid-glide key {mid:.2}");
    let _ = per_voice(&mut engine, 0.8, 1);
    let held = per_voice(&mut engine, 0.5, 1);
    let expected = midi_key_to_hz(67.0);
    let pitch = fundamental_hz(&held[0], RATE, expected);
    assert!(cents(pitch, expected).abs() < 3.0, "{pitch:.2} Hz after the glide");
    assert_eq!(engine.active_voice_count(), 1);
    assert_eq!(engine.string_attacks(), 1);
    // Releasing the top note glides back to the one still held.
    off(&mut engine, 0, 67);
    engine.render(&mut vec![0.0; (0.3 * RATE) as usize]);
    assert!((engine.voices()[0].target_key() - 60.0).abs() < 1e-9);
    assert!(engine.voices()[0].is_held());
    off(&mut engine, 0, 60);
    engine.render(&mut vec![0.0; 480]);
    assert!(!engine.voices()[0].is_held());
    assert_eq!(PlayMode::from_control(c.play_mode), PlayMode::MonoLegato);
}

#[test]
fn a_bent_drum_note_sounds_as_the_key_it_is_bent_to() {
    // Default plain-channel range (2 semitones) on channel 1, an MPE master: G3 bent up a
    // whole tone plays A3's drum, wave speed and pitch. (The drum's ear is off, so that the
    // wave speed is the bend's alone.)
    let drum = Controls { instrument: 1.0, intonation_percent: 0.0, ..Controls::default() };
    let play = |key: u8, raw_bend: f64| {
        let mut engine = engine_with(drum);
        on(&mut engine, 0, key, None);
        engine.handle_event(&NoteEvent::PitchBend { channel: 0, value: raw_bend / 16383.0 });
        engine.render(&mut vec![0.0; RATE as usize]);
        let mut out = vec![0.0f32; (0.8 * RATE) as usize];
        engine.render(&mut out);
        (engine.drum_voices()[0].applied_controls().tuning.wave_speed_mps, out)
    };
    // 16383 is the top of MIDI's range: 8191/8192 of two semitones.
    let (bent_c, bent) = play(55, 16383.0);
    let (a3_c, a3) = play(57, 8192.0);
    // (Within 0.2 cents: each key's wave speed is solved on the grid, not exactly 2^(1/12)
    // apart, and the top of the bend is a hair short of two semitones.)
    assert!((bent_c / a3_c - 1.0).abs() < 1e-4, "wave speeds {bent_c} and {a3_c}");
    let a3_hz = midi_key_to_hz(57.0);
    let (f_bent, f_a3) = (fundamental_hz(&bent, RATE, a3_hz), fundamental_hz(&a3, RATE, a3_hz));
    assert!(cents(f_bent, f_a3).abs() < 3.0, "bent G3 {f_bent:.2} Hz, A3 {f_a3:.2} Hz");
    assert!(cents(f_a3, a3_hz).abs() < 15.0, "A3's drum at {f_a3:.2} Hz");
}

#[test]
fn a_glide_is_smooth_no_clicks_as_the_finger_crosses_grid_nodes() {
    // A fifth in 200 ms crosses several grid nodes with the finger. The largest step from
    // one sample to the next during the glide stays of the size seen while the notes are
    // held (the slip corner of the Helmholtz wave): no click at a node crossing.
    let c = Controls { play_mode: 2.0, glide_time_ms: 200.0, noise: 0.0, body_mix_percent: 0.0, ..Controls::default() };
    let mut engine = engine_with(c);
    on(&mut engine, 0, 57, None);
    let mut before = vec![0.0f32; RATE as usize];
    engine.render(&mut before);
    on(&mut engine, 0, 64, None);
    let mut glide = vec![0.0f32; (0.2 * RATE) as usize];
    engine.render(&mut glide);
    let mut after = vec![0.0f32; RATE as usize];
    engine.render(&mut after);
    let largest_step = |x: &[f32]| x.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
    let held = largest_step(&before[(0.5 * RATE) as usize..]).max(largest_step(&after[(0.5 * RATE) as usize..]));
    let gliding = largest_step(&glide);
    eprintln!("largest step: {gliding:.4} gliding, {held:.4} held");
    assert!(gliding < 1.3 * held, "a click while gliding: {gliding:.4} against {held:.4} held");
    assert_eq!(engine.string_attacks(), 1);
}

#[test]
fn a_note_takes_its_channels_bend_and_pressure_from_its_first_samples() {
    // A bend and full pressure already on the channel when the note starts (a held bend, a
    // keyboard's aftertouch before the next note): the new voice plays them at once, not at
    // the channel's next change.
    let c = Controls::default();
    let mut engine = engine_with(c);
    bend(&mut engine, 0, 2.0, 2.0);
    engine.handle_event(&NoteEvent::ChannelPressure { channel: 0, value: 1.0 });
    on(&mut engine, 0, 60, None);
    engine.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    let voice = engine.voices().iter().find(|v| !v.is_free()).expect("a voice");
    assert!((voice.target_key() - 62.0).abs() < 0.01, "the note plays at key {}", voice.target_key());
    // Full pressure doubles the bow force: the force applied at 50 ms (the attack under
    // way) is above the control's own.
    let mut plain = engine_with(c);
    on(&mut plain, 0, 60, None);
    plain.render(&mut vec![0.0; (0.05 * RATE) as usize]);
    let force = |e: &Engine| e.voices().iter().find(|v| !v.is_free()).unwrap().applied_controls().normal_force_n;
    assert!(force(&engine) > 1.9 * force(&plain), "pressed {} N, plain {} N", force(&engine), force(&plain));
}

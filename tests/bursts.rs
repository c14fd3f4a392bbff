//! No bursts of work on the audio thread (issue 18, item 3), counted in work, not time:
//! time is `cargo bench --bench note_on`'s (see docs/performance.md).
//!
//! - A chord on settings no note was designed for starts at most one note that designs its
//!   string grid a sample (about 10 to 20 us each), and works out at most one body response a
//!   sample; every note of it still sounds, a sample a note later at most.
//! - A storm of note-ons on designed settings starts at most [`NOTE_ONS_PER_SAMPLE`] a sample.
//! - Events that wait keep their order: a note-off right behind a note-on that waits still
//!   ends that note.
//! - A body change under sixteen voices works their responses out one a sample, and a pitch
//!   bend works a voice's out once a quarter tone, not once a block.
//! - Factory presets and the four-string mode put their open strings up without a design.

mod common;

use rosin_engine::controls::Controls;
use rosin_engine::dsp::decimator::MAX_FACTOR;
use rosin_engine::presets::PRESETS;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern, NOTE_ONS_PER_SAMPLE};

const RATE_HZ: f64 = 48_000.0;
const CHORD: [u8; 16] = [31, 36, 40, 43, 48, 52, 55, 60, 64, 67, 72, 76, 79, 84, 88, 96];

fn note_on(engine: &mut Engine, key: u8) {
    engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity: 0.8 });
}

/// An engine with the chord sounding for 0.3 s, at `controls`.
fn sounding(controls: &Controls) -> Engine {
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(controls);
    for key in CHORD {
        note_on(&mut engine, key);
    }
    let mut warm = vec![0.0f32; (0.3 * RATE_HZ) as usize];
    engine.render(&mut warm);
    engine
}

/// Renders `samples` one at a time; returns the most design work any one of them did, as
/// (grids, body responses), and the most note-ons any one started.
fn worst_sample(engine: &mut Engine, samples: usize) -> (u64, u64, u64) {
    let (mut grids, mut responses, mut attacks) = (0, 0, 0);
    for _ in 0..samples {
        let (before, before_attacks) = (engine.design_counts(), engine.string_attacks());
        engine.render(&mut [0.0f32]);
        let after = engine.design_counts();
        grids = grids.max(after.0 - before.0);
        responses = responses.max(after.1 - before.1);
        attacks = attacks.max(engine.string_attacks() - before_attacks);
    }
    (grids, responses, attacks)
}

#[test]
fn a_chord_on_new_settings_designs_one_grid_a_sample_and_every_note_sounds() {
    let mut engine = sounding(&Controls::default());
    // A string stiffness no note was designed for, and sixteen new keys.
    engine.set_controls(&Controls { string_stiffness: 1.3e-4, ..Controls::default() });
    let (designed_before, _) = engine.design_counts();
    let attacks_before = engine.string_attacks();
    for key in CHORD {
        note_on(&mut engine, key + 2);
    }
    // The first note designs at once; the other fifteen wait their turn.
    assert_eq!(engine.design_counts().0 - designed_before, 1, "the first note-on designs its grid at once");
    assert_eq!(engine.held_event_count(), CHORD.len() - 1);
    let (grids, responses, attacks) = worst_sample(&mut engine, 64);
    let designed = engine.design_counts().0 - designed_before;
    println!("sixteen new notes: {designed} grids designed, at most {attacks} note a sample, {grids} grids a sample and {responses} body responses a sample");
    // Every note here designs, so one note a sample; a high note designs at 1x, 2x and 4x
    // the rate until its grid is fine enough (each of those builds is cheap: a few modes).
    let builds_of_one_note = 1 + MAX_FACTOR.trailing_zeros() as u64;
    assert!(attacks <= 1, "{attacks} notes that design started on one sample");
    assert!(grids <= builds_of_one_note && responses <= 1, "a sample designed {grids} grids and worked out {responses} body responses");
    assert!(designed >= CHORD.len() as u64, "only {designed} grids designed for {} new notes", CHORD.len());
    assert_eq!(engine.held_event_count(), 0, "events still wait after 64 samples");
    assert_eq!(engine.string_attacks() - attacks_before, CHORD.len() as u64, "not every note of the chord started");
    assert_eq!(engine.active_voice_count(), CHORD.len());
}

#[test]
fn a_storm_of_note_ons_starts_a_few_a_sample() {
    let mut engine = sounding(&Controls::default());
    let attacks_before = engine.string_attacks();
    // Keys designed ahead: no design, only the per-sample limit.
    for key in CHORD {
        note_on(&mut engine, key + 1);
    }
    let (grids, _, attacks) = worst_sample(&mut engine, 16);
    println!("sixteen note-ons: at most {attacks} started a sample, {grids} grids designed");
    assert_eq!(grids, 0, "keys designed ahead were designed again");
    assert!(attacks <= NOTE_ONS_PER_SAMPLE as u64, "{attacks} note-ons started on one sample");
    assert_eq!(engine.string_attacks() - attacks_before, CHORD.len() as u64, "not every note-on started");
}

#[test]
fn events_that_wait_keep_their_order() {
    let mut engine = sounding(&Controls::default());
    engine.set_controls(&Controls { string_stiffness: 1.7e-4, ..Controls::default() });
    // Every note-on after the first waits; each one's note-off comes right behind it, and a
    // second note-on of the last key after its note-off.
    for key in CHORD {
        note_on(&mut engine, key + 3);
        engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(common::note_id(key + 3)) });
    }
    let last = CHORD[CHORD.len() - 1] + 3;
    note_on(&mut engine, last);
    assert!(engine.held_event_count() > 2 * (CHORD.len() - 2));
    worst_sample(&mut engine, 64);
    assert_eq!(engine.held_event_count(), 0);
    let held: Vec<u8> = engine.voices().iter().filter(|v| v.is_held()).map(|v| v.note.note).collect();
    assert_eq!(held, vec![last], "only the last note-on should still be held");
}

#[test]
fn a_body_change_under_sixteen_voices_works_one_response_out_a_sample() {
    let mut engine = sounding(&Controls::default());
    let (_, responses_before) = engine.design_counts();
    engine.set_controls(&Controls { body: 2.0, ..Controls::default() });
    let (_, responses, _) = worst_sample(&mut engine, 64);
    let computed = engine.design_counts().1 - responses_before;
    println!("a body change under sixteen voices: {computed} responses, at most {responses} a sample");
    assert!(responses <= 1, "{responses} body responses on one sample");
    assert_eq!(computed, CHORD.len() as u64, "every voice should have its response under the new body");
}

#[test]
fn a_pitch_bend_works_a_response_out_once_a_quarter_tone() {
    let mut engine = sounding(&Controls { pitch_bend_range_st: 2.0, ..Controls::default() });
    let (_, before) = engine.design_counts();
    // The whole range and back over a second, a bend message every block of 64 samples.
    let blocks = (RATE_HZ / 64.0) as usize;
    let mut buffer = [0.0f32; 64];
    for block in 0..blocks {
        let phase = block as f64 / blocks as f64;
        let bend = 0.5 + 0.5 * (std::f64::consts::TAU * phase).sin();
        engine.handle_event(&NoteEvent::PitchBend { channel: 0, value: bend });
        engine.render(&mut buffer);
    }
    let computed = engine.design_counts().1 - before;
    // Four semitones of bend in quarter tones, up and back, per voice: at most 17 keys each.
    let most = CHORD.len() as u64 * 17;
    println!("a +-2 semitone bend under sixteen voices over {blocks} blocks: {computed} body responses (at most {most})");
    assert!(computed <= most, "{computed} body responses for {blocks} bend messages");
    assert!(computed > 0, "a bend of a whole tone changed no voice's response");
}

#[test]
fn presets_and_the_four_string_mode_put_their_strings_up_without_a_design() {
    let mut engine = Engine::new(RATE_HZ);
    let (before, _) = engine.design_counts();
    for preset in PRESETS {
        engine.set_controls(&preset.controls());
        engine.render(&mut [0.0f32; 16]);
    }
    engine.set_controls(&Controls { play_mode: 1.0, ..Controls::default() });
    engine.render(&mut [0.0f32; 16]);
    let designed = engine.design_counts().0 - before;
    assert_eq!(designed, 0, "choosing the factory presets designed {designed} grids on the audio thread");
}

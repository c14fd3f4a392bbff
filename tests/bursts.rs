//! No bursts of work on the audio thread (issue 18, item 3), counted in work, not time:
//! time is `cargo bench --bench note_on`'s (see docs/performance.md).
//!
//! - A chord on settings no note was designed for designs its string grids a few modes a
//!   sample ([`MODES_PER_SAMPLE`], about 4 us) while its notes wait, never a whole grid in
//!   one sample (1 to 76 us), and works out at most one body response a sample; every note
//!   of it sounds, in order, within a few milliseconds.
//! - A storm of note-ons on designed settings starts at most [`NOTE_ONS_PER_SAMPLE`] a sample.
//! - Events that wait keep their order: a note-off right behind a note-on that waits still
//!   ends that note.
//! - A body change under sixteen voices works their responses out one a sample, and a pitch
//!   bend works a voice's out once a semitone, not once a block.
//! - Factory presets and the four-string mode put their open strings up without a design.

mod common;

use rosin_engine::controls::Controls;
use rosin_engine::dsp::decimator::MAX_FACTOR;
use rosin_engine::presets::PRESETS;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern, MODES_PER_SAMPLE, NOTE_ONS_PER_SAMPLE};

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

/// The most work any one sample did: whole grids designed, body responses worked out,
/// modes summed for grids designed a step at a time, and notes started.
#[derive(Debug, Default)]
struct Worst {
    grids: u64,
    responses: u64,
    modes: u64,
    attacks: u64,
}

/// Renders `samples` one at a time; the most work any one of them did.
fn worst_sample(engine: &mut Engine, samples: usize) -> Worst {
    let mut worst = Worst::default();
    for _ in 0..samples {
        let (before, modes, attacks) = (engine.design_counts(), engine.modes_summed(), engine.string_attacks());
        engine.render(&mut [0.0f32]);
        let after = engine.design_counts();
        worst.grids = worst.grids.max(after.0 - before.0);
        worst.responses = worst.responses.max(after.1 - before.1);
        worst.modes = worst.modes.max(engine.modes_summed() - modes);
        worst.attacks = worst.attacks.max(engine.string_attacks() - attacks);
    }
    worst
}

#[test]
fn a_chord_on_new_settings_designs_one_grid_a_sample_and_every_note_sounds() {
    let mut engine = sounding(&Controls::default());
    // A string stiffness no note was designed for, and sixteen new keys.
    engine.set_controls(&Controls { string_stiffness: 1.3e-4, ..Controls::default() });
    let (designed_before, _) = engine.design_counts();
    let (modes_before, attacks_before) = (engine.modes_summed(), engine.string_attacks());
    for key in CHORD {
        note_on(&mut engine, key + 2);
    }
    // Nothing is designed on the spot: every note waits for its grid.
    assert_eq!(engine.design_counts().0, designed_before, "a note-on designed its grid at once");
    assert_eq!(engine.held_event_count(), CHORD.len());
    // Half a second is far more than the chord needs (about 1,000 samples).
    let mut samples = 0;
    let mut worst = Worst::default();
    while engine.held_event_count() > 0 && samples < 24_000 {
        let w = worst_sample(&mut engine, 1);
        worst = Worst { grids: worst.grids.max(w.grids), responses: worst.responses.max(w.responses), modes: worst.modes.max(w.modes), attacks: worst.attacks.max(w.attacks) };
        samples += 1;
    }
    let modes = engine.modes_summed() - modes_before;
    println!(
        "sixteen new notes: designed in {samples} samples ({:.1} ms), {modes} modes summed; the most in one sample: {} modes, {} whole grids, {} body responses, {} notes started",
        samples as f64 / RATE_HZ * 1e3,
        worst.modes,
        worst.grids,
        worst.responses,
        worst.attacks
    );
    assert_eq!(engine.held_event_count(), 0, "events still wait after {samples} samples");
    assert!(worst.modes <= MODES_PER_SAMPLE as u64 && worst.grids == 0 && worst.responses <= 1, "a sample did too much: {worst:?}");
    // A high note's grid is designed at 1x, 2x and 4x the rate until it is fine enough.
    let most_grids = CHORD.len() as u64 * (1 + MAX_FACTOR.trailing_zeros() as u64);
    assert!(modes > 0 && engine.design_counts().0 == designed_before, "the grids were not designed a step at a time");
    assert!(samples as u64 <= modes / MODES_PER_SAMPLE as u64 + most_grids + CHORD.len() as u64, "{samples} samples for {modes} modes: the design dawdles");
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
    let worst = worst_sample(&mut engine, 16);
    println!("sixteen note-ons: at most {} started a sample, {} grids designed", worst.attacks, worst.grids);
    assert!(worst.grids == 0 && worst.modes == 0, "keys designed ahead were designed again");
    assert!(worst.attacks <= NOTE_ONS_PER_SAMPLE as u64, "{} note-ons started on one sample", worst.attacks);
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
    assert_eq!(engine.held_event_count(), 2 * CHORD.len() + 1);
    let mut samples = 0;
    while engine.held_event_count() > 0 && samples < 24_000 {
        engine.render(&mut [0.0f32]);
        samples += 1;
    }
    assert_eq!(engine.held_event_count(), 0);
    let held: Vec<u8> = engine.voices().iter().filter(|v| v.is_held()).map(|v| v.note.note).collect();
    assert_eq!(held, vec![last], "only the last note-on should still be held");
}

#[test]
fn a_body_change_under_sixteen_voices_works_one_response_out_a_sample() {
    let mut engine = sounding(&Controls::default());
    let (_, responses_before) = engine.design_counts();
    engine.set_controls(&Controls { body: 2.0, ..Controls::default() });
    let responses = worst_sample(&mut engine, 64).responses;
    let computed = engine.design_counts().1 - responses_before;
    println!("a body change under sixteen voices: {computed} responses, at most {responses} a sample");
    assert!(responses <= 1, "{responses} body responses on one sample");
    assert_eq!(computed, CHORD.len() as u64, "every voice should have its response under the new body");
}

#[test]
fn a_pitch_bend_works_a_response_out_once_a_semitone() {
    // The cello body: the default body's responses are all designed ahead.
    let mut engine = sounding(&Controls { pitch_bend_range_st: 2.0, body: 2.0, ..Controls::default() });
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
    // Four semitones of bend, up and back: at most five keys a voice, each worked out once.
    let most = CHORD.len() as u64 * 5;
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

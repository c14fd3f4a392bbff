//! A player's own presets as files (`rosin_engine::user_presets`): what is saved loads back
//! exactly, an older or hand-edited file loads with nothing lost, and a damaged one is an
//! error that applies nothing.

mod common;

use common::TestRng;
use rosin_engine::controls::{self, Controls, Taper};
use rosin_engine::presets::PRESETS;
use rosin_engine::user_presets::{self, PresetFileError, HEADER};

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rosin-user-presets-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn random_controls(rng: &mut TestRng) -> Controls {
    Controls::from_lookup(|spec| match spec.taper {
        Taper::Choice(names) => (rng.next_u64() % names.len() as u64) as f64,
        // The machine's settings are not the preset's: a file leaves them at the default.
        _ if !spec.in_presets() => spec.default,
        Taper::Whole => (spec.min + (spec.max - spec.min) * rng.unit()).round(),
        _ => spec.min + (spec.max - spec.min) * rng.unit(),
    })
}

#[test]
fn a_saved_preset_loads_back_exactly_and_is_listed() {
    let dir = scratch_dir("round-trip");
    let mut rng = TestRng(0x9e3779b97f4a7c15);
    for i in 0..50 {
        let controls = random_controls(&mut rng);
        let name = format!("Take {i}");
        let path = user_presets::save(&dir, &name, &controls).unwrap();
        let loaded = user_presets::load(&path).unwrap();
        assert_eq!(loaded.name, name);
        assert_eq!(loaded.controls, controls, "{name} does not load back exactly");
        assert!(loaded.unknown_ids.is_empty());
    }
    // Saving under a name again replaces the file; the list is sorted and has no temporaries.
    let listed = user_presets::list(&dir);
    assert_eq!(listed.len(), 50);
    assert_eq!(listed[0].0, "Take 0");
    assert!(listed.windows(2).all(|w| w[0].0.to_lowercase() <= w[1].0.to_lowercase()));
    // Every factory preset, saved by a player, loads to the controls the menu sets.
    for preset in PRESETS {
        let path = user_presets::save(&dir, preset.name, &preset.controls()).unwrap();
        assert_eq!(user_presets::load(&path).unwrap().controls, preset.controls(), "{}", preset.name);
    }
    assert!(user_presets::list(&scratch_dir("missing")).is_empty(), "a missing folder lists nothing");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_older_or_hand_edited_file_loads_with_nothing_lost() {
    // Only two controls named (an older Rosin's file): the rest take their defaults.
    let text = format!("{HEADER}\n# my bow\n\nbow_force = 0.9\r\n  string_set =  2  \nfuture_control = 3\nbow_velocity = 99\n");
    let preset = user_presets::parse("Old", &text).unwrap();
    assert_eq!(preset.value(&controls::BOW_FORCE), 0.9);
    assert_eq!(preset.value(&controls::STRING_SET), 2.0);
    assert_eq!(preset.value(&controls::DAMPING), controls::DAMPING.default);
    // Out of range: clamped. Unknown: skipped and reported.
    assert_eq!(preset.value(&controls::BOW_VELOCITY), controls::BOW_VELOCITY.max);
    assert_eq!(preset.unknown_ids, vec!["future_control".to_string()]);
}

#[test]
fn a_damaged_file_is_an_error_that_names_the_problem() {
    let cases: [(&str, fn(&PresetFileError) -> bool); 5] = [
        ("bow_force = 0.5\n", |e| matches!(e, PresetFileError::NotAPreset)),
        ("", |e| matches!(e, PresetFileError::NotAPreset)),
        ("# Rosin preset 1\nbow_force 0.5\n", |e| matches!(e, PresetFileError::BadLine { line: 2, .. })),
        ("# Rosin preset 1\n\nbow_force = NaN\n", |e| matches!(e, PresetFileError::BadValue { line: 3, .. })),
        ("# Rosin preset 1\nbow_force = 1e999\n", |e| matches!(e, PresetFileError::BadValue { line: 2, .. })),
    ];
    for (text, expected) in cases {
        let error = user_presets::parse("x", text).expect_err(text);
        assert!(expected(&error), "{text:?} gave {error}");
        println!("{text:?}: {error}");
    }
    let dir = scratch_dir("damaged");
    for name in ["", " Lead", "../escape", "a/b", ".hidden", "x\ny"] {
        assert!(matches!(user_presets::save(&dir, name, &Controls::default()), Err(PresetFileError::BadName(_))), "{name:?} accepted");
    }
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("Big.rosinpreset");
    std::fs::write(&big, format!("{HEADER}\n{}", "# padding\n".repeat(10_000))).unwrap();
    assert!(matches!(user_presets::load(&big), Err(PresetFileError::TooLarge { .. })));
    assert!(matches!(user_presets::load(&dir.join("Nothing.rosinpreset")), Err(PresetFileError::Io { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The factory presets written as files (for hosts' preset browsers) load as the menu sets
/// them; a file that says something else is written again, one that matches is left alone,
/// and hosts scanning at once (threads here, processes in life) all succeed.
/// A preset holds the sound, not the machine's settings: *Voices* is neither written to a
/// file nor to a factory preset's state, and choosing a preset leaves it where it was.
#[test]
fn a_preset_holds_the_sound_and_leaves_the_voices_alone() {
    let forty = Controls { voice_count: 40.0, ..Controls::default() };
    let text = user_presets::to_text(&forty);
    assert!(!text.lines().any(|l| l.trim_start().starts_with(controls::VOICES.id)), "the file holds the voices:\n{text}");
    for preset in PRESETS {
        assert!(!preset.state_json("test").contains(&format!("\"{}\"", controls::VOICES.id)), "{}'s state holds the voices", preset.name);
        let chosen = preset.chosen_over(&forty);
        assert_eq!(chosen.voice_count, 40.0, "{} moved the voices", preset.name);
        assert_eq!(Controls { voice_count: preset.controls().voice_count, ..chosen }, preset.controls(), "{} is not chosen whole", preset.name);
    }
    // A hand-edited file that names the voices still loads (the editor's preset menu then
    // sets only the controls presets hold).
    let loaded = user_presets::parse("edited", &format!("{HEADER}\nvoices = 8\nbow_force = 3\n")).unwrap();
    assert!(loaded.unknown_ids.is_empty());
    assert_eq!(loaded.controls.bow_force_n, 3.0);
}

#[test]
fn factory_presets_are_installed_as_files_that_load_as_the_menu_sets_them() {
    let dir = scratch_dir("factory");
    let threads: Vec<_> = (0..8).map(|_| {
        let dir = dir.clone();
        std::thread::spawn(move || user_presets::install_factory_presets(&dir))
    }).collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    let listed = user_presets::list(&dir);
    assert_eq!(listed.len(), PRESETS.len(), "{listed:?}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), PRESETS.len(), "no temporary file is left behind");
    for preset in PRESETS {
        let path = user_presets::path_for(&dir, preset.name).unwrap();
        assert_eq!(user_presets::load(&path).unwrap().controls, preset.controls(), "{}", preset.name);
    }
    // An edited factory file is put back; a matching one is not rewritten.
    let violin = user_presets::path_for(&dir, "Violin").unwrap();
    std::fs::write(&violin, format!("{HEADER}\nbow_force = 19\n")).unwrap();
    let cello = user_presets::path_for(&dir, "Cello").unwrap();
    let cello_written = std::fs::metadata(&cello).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    user_presets::install_factory_presets(&dir).unwrap();
    assert_eq!(user_presets::load(&violin).unwrap().controls, PRESETS.iter().find(|p| p.name == "Violin").unwrap().controls());
    assert_eq!(std::fs::metadata(&cello).unwrap().modified().unwrap(), cello_written);
    std::fs::remove_dir_all(&dir).unwrap();
}

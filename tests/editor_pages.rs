//! The editor's pages drawn without a window (`rosin::editor::headless`), at the sizes a
//! producer's screen gives them (issue 19): every performance control shown by its label,
//! the groups, the preset bar and the meter present, each whole and inside the window (not
//! cut by a panel's edge), from 800 x 500 to 4K.
#![cfg(feature = "plugin")]

use std::sync::Arc;

use rosin::editor::headless::HeadlessEditor;
use rosin::editor::logic::{performance_controls, CONTROL_GROUPS};
use rosin::params::RosinParams;
use rosin_engine::controls::{self, Controls};
use rosin_engine::view::meter::OutputLevel;
use rosin_engine::view::snapshot::{capture, capture_feedback, ViewSnapshot};
use rosin_engine::view::triple_buffer::{triple_buffer, TripleReader};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent};

/// What the audio thread would publish while `key` sounds on the string or the drum.
fn playing(key: u8, drum: bool) -> TripleReader<ViewSnapshot> {
    let mut engine = Engine::new(48_000.0);
    let controls = Controls { instrument: if drum { 1.0 } else { 0.0 }, ..Controls::default() };
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 0.8 });
    let mut out = vec![0.0f32; 9_600];
    engine.render(&mut out);
    let peak = out.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let (mut writer, reader) = triple_buffer(ViewSnapshot::default());
    writer.publish(|view| {
        capture(&engine, view);
        capture_feedback(OutputLevel { peak, rms: peak * 0.5, clipped: false }, 0.04, view);
    });
    reader
}

const SIZES: [(f32, f32); 4] = [(800.0, 500.0), (1040.0, 660.0), (1920.0, 1080.0), (3840.0, 2160.0)];

#[test]
fn every_page_shows_its_controls_and_fits_its_window_at_every_size() {
    for drum in [false, true] {
        for size in SIZES {
            for page in ["string", "membrane", "lab"] {
                let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), playing(if drum { 60 } else { 55 }, drum), size);
                if drum {
                    editor.set_control("instrument", 1.0);
                }
                editor.show(page);
                let mut vertices = 0;
                for _ in 0..3 {
                    vertices = editor.frame(1.0 / 30.0);
                }
                let texts = editor.visible_texts();
                let has = |text: &str| texts.iter().any(|t| t.contains(text));
                let what = format!("{} {page} page at {} x {}", if drum { "drum" } else { "string" }, size.0, size.1);
                for id in performance_controls(drum) {
                    let spec = controls::find(id).unwrap();
                    assert!(texts.iter().any(|t| t == spec.name), "{what}: no {} on the performance strip", spec.name);
                }
                for (group, _) in CONTROL_GROUPS {
                    assert!(has(group), "{what}: no {group} group");
                }
                for label in ["No preset", "< Prev", "Next >", "Browse", "dBFS", "CPU", "1 voice"] {
                    assert!(has(label), "{what}: no '{label}' in {texts:?}");
                }
                let extent = editor.drawn_extent();
                assert!(extent.0 <= size.0 + 0.5 && extent.1 <= size.1 + 0.5, "{what}: drawn out to {extent:?}");
                assert!(extent.0 >= size.0 - 2.0 && extent.1 >= size.1 - 2.0, "{what}: the page fills only {extent:?}");
                assert!(vertices > 1_000, "{what}: {vertices} vertices drawn");
                if size == SIZES[0] {
                    println!("{what}: {} texts, {vertices} vertices", texts.len());
                }
            }
        }
    }
}

/// The view follows the instrument: a sounding string names its note on the string page,
/// the drum its key on the membrane page.
#[test]
fn the_views_name_the_note_that_plays() {
    let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), playing(55, false), (1040.0, 660.0));
    editor.show("string");
    editor.frame(0.03);
    editor.frame(0.03);
    assert!(editor.texts().iter().any(|t| t.starts_with("G3")), "{:?}", editor.texts());
    let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), playing(60, true), (1040.0, 660.0));
    editor.set_control("instrument", 1.0);
    editor.show("membrane");
    editor.frame(0.03);
    editor.frame(0.03);
    assert!(editor.texts().iter().any(|t| t.contains("C4 drum")), "{:?}", editor.texts());
}

/// The deep controls, one click away: with the side panel's groups open, every control the
/// performance strip does not show is drawn by its name in the side panel (which scrolls),
/// for the strings and for the drum.
#[test]
fn every_control_is_in_the_side_panel_or_on_the_strip() {
    for drum in [false, true] {
        let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), playing(55, false), (1040.0, 4000.0));
        if drum {
            editor.set_control("instrument", 1.0);
        }
        editor.open_groups();
        for _ in 0..3 {
            editor.frame(1.0 / 30.0);
        }
        let texts = editor.visible_texts();
        for spec in controls::ALL {
            assert!(texts.iter().any(|t| t == spec.name), "{}: {} is drawn nowhere", if drum { "drum" } else { "string" }, spec.name);
        }
    }
}

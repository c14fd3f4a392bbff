//! The built-in demo phrase: a bowed line over the violin's range with a crescendo on the
//! force lane, a bow change on a velocity sign flip, and a closing chord.

use super::{Timeline, TimelineItem};
use crate::voice::NoteId;
use crate::voices::{NoteEvent, NotePattern};

/// The demo at `sample_rate_hz`, and its length in samples (with the release tail).
pub fn phrase(sample_rate_hz: f64) -> (Timeline, u64) {
    let at = |seconds: f64| (seconds * sample_rate_hz).round() as u64;
    let mut timeline = Timeline::default();
    let note = |timeline: &mut Timeline, key: u8, start: f64, length: f64, velocity: f64| {
        let id = NoteId { channel: 0, note: key, voice_id: None };
        timeline.push(at(start), TimelineItem::Note(NoteEvent::NoteOn { note: id, velocity }));
        timeline.push(at(start + length), TimelineItem::Note(NoteEvent::NoteOff { pattern: NotePattern::exact(id) }));
    };
    // G3 D4 A4 E5: the four violin strings of willemsen2019.
    for (i, key) in [55u8, 62, 69, 76].into_iter().enumerate() {
        note(&mut timeline, key, 0.6 * i as f64, 0.55, 0.8);
    }
    // A held D4 with a crescendo on the force lane and bow changes (velocity sign flips).
    note(&mut timeline, 62, 2.6, 3.0, 0.6);
    for step in 0..=30 {
        let t = 2.6 + 0.1 * step as f64;
        timeline.push(at(t), TimelineItem::Control { id: "bow_force", value: 2.5 + 0.25 * step as f64 });
    }
    timeline.push(at(3.6), TimelineItem::Control { id: "bow_velocity", value: -0.1 });
    timeline.push(at(4.6), TimelineItem::Control { id: "bow_velocity", value: 0.1 });
    timeline.push(at(5.6), TimelineItem::Control { id: "bow_force", value: 6.0 });
    // A short melody, then a chord (G2 D3 B3 G4).
    for (i, key) in [67u8, 69, 71, 72, 74, 72, 71, 67].into_iter().enumerate() {
        note(&mut timeline, key, 6.0 + 0.3 * i as f64, 0.28, 0.5 + 0.06 * i as f64);
    }
    // Four strings at once: the mix is brought down so the chord stays below full scale.
    timeline.push(at(8.5), TimelineItem::Control { id: "output_gain", value: -6.0 });
    for key in [43u8, 50, 59, 67] {
        note(&mut timeline, key, 8.6, 2.0, 0.6);
    }
    let end = timeline.end() + at(2.5);
    (timeline, end)
}

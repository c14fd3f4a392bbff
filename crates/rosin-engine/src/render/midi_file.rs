//! Standard MIDI files (format 0 and 1) to a [`Timeline`]: notes, all-notes-off, and the
//! tempo map.

use midly::{MetaMessage, MidiMessage, Smf, Timing, TrackEventKind};

use crate::expression::ExpressionKind;

use super::{Timeline, TimelineItem};
use crate::voice::NoteId;
use crate::voices::{NoteEvent, NotePattern};

/// Why a MIDI file could not be read.
#[derive(Debug)]
pub struct MidiFileError(pub String);

impl std::fmt::Display for MidiFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a usable standard MIDI file: {}", self.0)
    }
}

impl std::error::Error for MidiFileError {}

/// Parses a standard MIDI file into a timeline at `sample_rate_hz`.
pub fn parse(bytes: &[u8], sample_rate_hz: f64) -> Result<Timeline, MidiFileError> {
    let smf = Smf::parse(bytes).map_err(|e| MidiFileError(e.to_string()))?;
    let ticks_per_beat = match smf.header.timing {
        Timing::Metrical(t) if t.as_int() > 0 => t.as_int() as f64,
        Timing::Metrical(_) => return Err(MidiFileError("zero ticks per beat".into())),
        Timing::Timecode(fps, sub) => {
            // SMPTE timing: ticks are a fixed fraction of a second; use a tempo of 1 s/beat.
            return parse_with(&smf, sample_rate_hz, |_| 1.0 / (fps.as_f32() as f64 * sub as f64), true);
        }
    };
    parse_with(&smf, sample_rate_hz, move |us_per_beat| us_per_beat * 1e-6 / ticks_per_beat, false)
}

fn parse_with(smf: &Smf, sample_rate_hz: f64, seconds_per_tick: impl Fn(f64) -> f64, fixed: bool) -> Result<Timeline, MidiFileError> {
    // Gather every event with its absolute tick, then walk them in time order so the tempo
    // map (which may live on another track) applies to all tracks.
    let mut events = Vec::new();
    for (track_index, track) in smf.tracks.iter().enumerate() {
        let mut tick = 0u64;
        for (order, event) in track.iter().enumerate() {
            tick += event.delta.as_int() as u64;
            events.push((tick, track_index, order, event.kind));
        }
    }
    events.sort_by_key(|(tick, track, order, _)| (*tick, *track, *order));

    let mut timeline = Timeline::default();
    let mut us_per_beat = 500_000.0;
    let mut last_tick = 0u64;
    let mut seconds = 0.0;
    for (tick, _, _, kind) in events {
        seconds += (tick - last_tick) as f64 * seconds_per_tick(us_per_beat);
        last_tick = tick;
        let sample = (seconds * sample_rate_hz).round() as u64;
        match kind {
            TrackEventKind::Meta(MetaMessage::Tempo(t)) if !fixed => us_per_beat = t.as_int() as f64,
            TrackEventKind::Midi { channel, message } => {
                let channel = channel.as_int();
                let item = match message {
                    MidiMessage::NoteOn { key, vel } if vel.as_int() > 0 => NoteEvent::NoteOn {
                        note: NoteId { channel, note: key.as_int(), voice_id: None },
                        velocity: vel.as_int() as f64 / 127.0,
                    },
                    MidiMessage::NoteOn { key, .. } | MidiMessage::NoteOff { key, .. } => NoteEvent::NoteOff {
                        pattern: NotePattern { channel: Some(channel), note: Some(key.as_int()), voice_id: None },
                    },
                    MidiMessage::Controller { controller, value } => NoteEvent::ControlChange { channel, cc: controller.as_int(), value: value.as_int() as f64 / 127.0 },
                    MidiMessage::PitchBend { bend } => NoteEvent::PitchBend { channel, value: bend.0.as_int() as f64 / 16383.0 },
                    MidiMessage::ChannelAftertouch { vel } => NoteEvent::ChannelPressure { channel, value: vel.as_int() as f64 / 127.0 },
                    MidiMessage::Aftertouch { key, vel } => NoteEvent::Expression {
                        pattern: NotePattern { channel: Some(channel), note: Some(key.as_int()), voice_id: None },
                        kind: ExpressionKind::Pressure,
                        value: vel.as_int() as f64 / 127.0,
                    },
                    _ => continue,
                };
                timeline.push(sample, TimelineItem::Note(item));
            }
            _ => {}
        }
    }
    Ok(timeline)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A format-1 file: tempo on track 0 (120 bpm, then 60 bpm at beat 1), notes on track 1.
    fn file() -> Vec<u8> {
        let mut bytes = b"MThd\x00\x00\x00\x06\x00\x01\x00\x02\x00\x60".to_vec();
        let tempo_track: &[u8] = &[0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x60, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40, 0x00, 0xFF, 0x2F, 0x00];
        bytes.extend_from_slice(b"MTrk");
        bytes.extend_from_slice(&(tempo_track.len() as u32).to_be_bytes());
        bytes.extend_from_slice(tempo_track);
        // Note 69 on at 0, off at beat 2 (0.5 s + 1.0 s), with running status.
        let note_track: &[u8] = &[0x00, 0x90, 69, 100, 0x81, 0x40, 69, 0, 0x00, 0xFF, 0x2F, 0x00];
        bytes.extend_from_slice(b"MTrk");
        bytes.extend_from_slice(&(note_track.len() as u32).to_be_bytes());
        bytes.extend_from_slice(note_track);
        bytes
    }

    #[test]
    fn follows_the_tempo_map_across_tracks() {
        let timeline = parse(&file(), 1000.0).unwrap();
        let items = timeline.items();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].0, 0);
        assert!(matches!(items[0].1, TimelineItem::Note(NoteEvent::NoteOn { note, .. }) if note.note == 69));
        assert_eq!(items[1].0, 1500);
        assert!(matches!(items[1].1, TimelineItem::Note(NoteEvent::NoteOff { .. })));
    }

    #[test]
    fn rejects_garbage_with_a_clear_error() {
        let err = parse(b"RIFF....", 48000.0).unwrap_err();
        assert!(err.to_string().contains("not a usable standard MIDI file"));
    }
}

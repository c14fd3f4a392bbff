//! Offline rendering through the same engine the plugin runs: a timeline of note events and
//! control changes, rendered sample-accurately in host-sized blocks.

pub mod demo;
pub mod midi_file;

use crate::controller::gesture::{GestureFrame, LaneGesture, LANES};
use crate::controller::gesture_file::{GestureRecording, RecordedItem};
use crate::controls::{self, Controls};
use crate::voices::{Engine, NoteEvent};

/// Something that happens at a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimelineItem {
    Note(NoteEvent),
    /// A control moves to a value (the engine ramps it per sample).
    Control { id: &'static str, value: f64 },
    /// A touch controller's lane takes a new gesture.
    Gesture { lane: usize, gesture: LaneGesture },
}

/// A sorted list of timed items, in samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    items: Vec<(u64, TimelineItem)>,
}

impl Timeline {
    pub fn push(&mut self, sample: u64, item: TimelineItem) {
        // Stable insertion keeps same-time items in the order they were added.
        let index = self.items.partition_point(|(s, _)| *s <= sample);
        self.items.insert(index, (sample, item));
    }

    pub fn items(&self) -> &[(u64, TimelineItem)] {
        &self.items
    }

    /// Adds a recorded performance, starting at sample 0.
    pub fn add_gestures(&mut self, recording: &GestureRecording, sample_rate_hz: f64) {
        for (time_s, item) in recording.items() {
            let sample = (time_s * sample_rate_hz).round() as u64;
            match item {
                RecordedItem::Lane { lane, gesture } => self.push(sample, TimelineItem::Gesture { lane: *lane, gesture: *gesture }),
                RecordedItem::Control { id, value } => {
                    if let Some(spec) = controls::find(id) {
                        self.push(sample, TimelineItem::Control { id: spec.id, value: *value });
                    }
                }
            }
        }
    }

    /// The sample of the last item.
    pub fn end(&self) -> u64 {
        self.items.last().map_or(0, |(s, _)| *s)
    }
}

/// Renders `length` samples of the timeline, calling the engine in blocks of `block_size`
/// split at every item, exactly as a host with sample-accurate automation would.
pub fn render(engine: &mut Engine, controls: &mut Controls, timeline: &Timeline, length: u64, block_size: usize) -> Vec<f32> {
    let block_size = block_size.max(1) as u64;
    let mut out = vec![0.0f32; length as usize];
    engine.set_controls(controls);
    let items = timeline.items();
    let mut gestures: GestureFrame = [LaneGesture::default(); LANES];
    let mut next = 0;
    let mut position = 0u64;
    while position < length {
        let block_end = (position + block_size).min(length);
        while position < block_end {
            let (mut changed, mut gestured) = (false, false);
            while next < items.len() && items[next].0 <= position {
                match items[next].1 {
                    TimelineItem::Note(event) => engine.handle_event(&event),
                    TimelineItem::Control { id, value } => {
                        controls.set(id, value);
                        changed = true;
                    }
                    TimelineItem::Gesture { lane, gesture } => {
                        if lane < LANES {
                            gestures[lane] = gesture;
                            gestured = true;
                        }
                    }
                }
                next += 1;
            }
            if changed {
                engine.set_controls(controls);
            }
            if gestured {
                engine.set_gestures(&gestures);
            }
            let end = if next < items.len() { items[next].0.clamp(position + 1, block_end) } else { block_end };
            engine.render(&mut out[position as usize..end as usize]);
            position = end;
        }
    }
    out
}

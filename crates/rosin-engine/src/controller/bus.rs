//! The one-way road from gesture sources (the Sensel reader thread, the editor's mouse) to
//! the audio thread: one set of atomics per lane. Writers never block the reader; the
//! audio thread only loads.
//!
//! Each field is its own atomic, so a reader may see one field of a new gesture beside
//! another of the previous one. That is harmless: every value is ramped per sample, and
//! gestures arrive at 150 Hz or more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use atomic_float::AtomicF32;

use super::gesture::{GestureFrame, LaneGesture, LANES};
use super::gesture_file::{GestureRecording, RecordedItem};

/// A stopping finger's "none" in the atomics.
const NO_FINGER: f32 = -1.0;

struct AtomicLane {
    bow_down: AtomicBool,
    bow_force_n: AtomicF32,
    bow_velocity_mps: AtomicF32,
    bow_position: AtomicF32,
    finger_position: AtomicF32,
    drum_bow_x: AtomicF32,
    drum_bow_y: AtomicF32,
}

impl AtomicLane {
    fn new(g: &LaneGesture) -> Self {
        Self {
            bow_down: AtomicBool::new(g.bow_down),
            bow_force_n: AtomicF32::new(g.bow_force_n as f32),
            bow_velocity_mps: AtomicF32::new(g.bow_velocity_mps as f32),
            bow_position: AtomicF32::new(g.bow_position as f32),
            finger_position: AtomicF32::new(g.finger_position.map_or(NO_FINGER, |f| f as f32)),
            drum_bow_x: AtomicF32::new(g.drum_bow_x as f32),
            drum_bow_y: AtomicF32::new(g.drum_bow_y as f32),
        }
    }

    fn store(&self, g: &LaneGesture) {
        // Values first, then the flag that makes them count.
        self.bow_force_n.store(g.bow_force_n as f32, Ordering::Relaxed);
        self.bow_velocity_mps.store(g.bow_velocity_mps as f32, Ordering::Relaxed);
        self.bow_position.store(g.bow_position as f32, Ordering::Relaxed);
        self.finger_position.store(g.finger_position.map_or(NO_FINGER, |f| f as f32), Ordering::Relaxed);
        self.drum_bow_x.store(g.drum_bow_x as f32, Ordering::Relaxed);
        self.drum_bow_y.store(g.drum_bow_y as f32, Ordering::Relaxed);
        self.bow_down.store(g.bow_down, Ordering::Release);
    }

    fn load(&self) -> LaneGesture {
        let bow_down = self.bow_down.load(Ordering::Acquire);
        let finger = self.finger_position.load(Ordering::Relaxed);
        LaneGesture {
            bow_down,
            bow_force_n: self.bow_force_n.load(Ordering::Relaxed) as f64,
            bow_velocity_mps: self.bow_velocity_mps.load(Ordering::Relaxed) as f64,
            bow_position: self.bow_position.load(Ordering::Relaxed) as f64,
            finger_position: (finger >= 0.0).then_some(finger as f64),
            drum_bow_x: self.drum_bow_x.load(Ordering::Relaxed) as f64,
            drum_bow_y: self.drum_bow_y.load(Ordering::Relaxed) as f64,
        }
        .sanitized()
    }
}

/// Which source last wrote a lane, for the editor and for recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GestureSource {
    Sensel,
    Mouse,
    Replay,
}

struct Recorder {
    started: Instant,
    recording: GestureRecording,
}

/// The gesture state of one plugin instance, shared by its sources, its audio thread and
/// its editor.
pub struct GestureBus {
    lanes: [AtomicLane; LANES],
    /// Gesture recording for the offline renderer. Only the sources' threads touch it,
    /// never the audio thread.
    recorder: Mutex<Option<Recorder>>,
}

impl Default for GestureBus {
    fn default() -> Self {
        let lifted = LaneGesture::default();
        Self {
            lanes: std::array::from_fn(|_| AtomicLane::new(&lifted)),
            recorder: Mutex::new(None),
        }
    }
}

impl GestureBus {
    /// Sets one lane. Out-of-range lanes are ignored; values are sanitised.
    pub fn write(&self, lane: usize, gesture: &LaneGesture, source: GestureSource) {
        let Some(slot) = self.lanes.get(lane) else { return };
        let gesture = gesture.sanitized();
        slot.store(&gesture);
        if source != GestureSource::Replay {
            if let Ok(mut guard) = self.recorder.lock() {
                if let Some(recorder) = guard.as_mut() {
                    let time_s = recorder.started.elapsed().as_secs_f64();
                    recorder.recording.push(time_s, RecordedItem::Lane { lane, gesture });
                }
            }
        }
    }

    /// Every lane now. Lock-free; the audio thread calls it.
    #[inline]
    pub fn read(&self) -> GestureFrame {
        std::array::from_fn(|lane| self.lanes[lane].load())
    }

    pub fn lane(&self, lane: usize) -> LaneGesture {
        self.lanes.get(lane).map_or_else(LaneGesture::default, AtomicLane::load)
    }

    /// Starts recording every gesture written from now on. `controls` are the controls
    /// that shape how the gestures sound (instrument, layout), stored first so a replay
    /// sounds the same.
    pub fn start_recording(&self, controls: &[(&'static str, f64)]) {
        let mut recording = GestureRecording::default();
        for &(id, value) in controls {
            recording.push(0.0, RecordedItem::Control { id: id.to_string(), value });
        }
        for lane in 0..LANES {
            let gesture = self.lanes[lane].load();
            if gesture.bow_down {
                recording.push(0.0, RecordedItem::Lane { lane, gesture });
            }
        }
        if let Ok(mut guard) = self.recorder.lock() {
            *guard = Some(Recorder { started: Instant::now(), recording });
        }
    }

    pub fn is_recording(&self) -> bool {
        self.recorder.lock().map(|g| g.is_some()).unwrap_or(false)
    }

    /// Stops recording and hands over what was recorded, with every lane lifted at the end.
    pub fn stop_recording(&self) -> Option<GestureRecording> {
        let recorder = self.recorder.lock().ok()?.take()?;
        let mut recording = recorder.recording;
        let end_s = recorder.started.elapsed().as_secs_f64();
        for lane in 0..LANES {
            recording.push(end_s, RecordedItem::Lane { lane, gesture: LaneGesture::default() });
        }
        Some(recording)
    }
}

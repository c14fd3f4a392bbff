//! From touches on a pad to lane gestures, as the papers map the Sensel Morph:
//!
//! - String (willemsen2019 section 4.2): the first finger is the bow. Its pressure gives
//!   the force (0 to 10 N), its vertical velocity the bow velocity (clamped to ±0.3 m/s),
//!   its horizontal place the bow position. The second finger stops the string: its
//!   horizontal place is the finger position.
//! - Drum (onofrei2021 section 4.2): the finger's x and y are the bow's place on the
//!   membrane; its pressure drives the force (0 to 20 N) and the velocity (0 to 0.2 m/s)
//!   together, linearly.
//! - Four strings: the pad is split into four columns, G D A E from the left, each mapped
//!   as one string within its column. A finger sliding into another column crosses to that
//!   string.
//!
//! Pure logic with no I/O: the Sensel reader and the tests drive it.

use super::gesture::{LaneGesture, PadLayout, LANES};
use crate::controls::{BOW_POSITION, FINGER_POSITION};

/// The string's bow force per gram of finger pressure: a firm 500 g press is 5 N.
pub const STRING_FORCE_N_PER_G: f64 = 0.01;
/// willemsen2019's limits for the pad-played string.
pub const STRING_MAX_FORCE_N: f64 = 10.0;
pub const STRING_MAX_VELOCITY_MPS: f64 = 0.3;
/// The drum's pressure scale: this much pressure is the top of onofrei2021's ranges.
pub const DRUM_FULL_PRESSURE_G: f64 = 1000.0;
pub const DRUM_MAX_FORCE_N: f64 = 20.0;
pub const DRUM_MAX_VELOCITY_MPS: f64 = 0.2;
/// The finger's velocity is a derivative of a sampled position: smoothed over this long.
pub const VELOCITY_SMOOTHING_S: f64 = 0.020;

/// One finger on the pad, in the pad's own units (origin top left, y towards the player).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch {
    pub id: u8,
    pub x_mm: f64,
    pub y_mm: f64,
    pub force_g: f64,
    /// The finger left the pad in this frame.
    pub ended: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct LaneTrack {
    bow_id: Option<u8>,
    last_y_mm: f64,
    last_time_s: f64,
    velocity_mps: f64,
}

/// Turns successive frames of touches into lane gestures.
pub struct PadMapper {
    width_mm: f64,
    height_mm: f64,
    /// Fingers on the pad with their order of arrival.
    arrivals: Vec<(u8, u64)>,
    next_arrival: u64,
    tracks: [LaneTrack; LANES],
    sent: [LaneGesture; LANES],
}

impl PadMapper {
    /// A mapper for a pad of this size (the Morph's active area is 230 x 130 mm).
    pub fn new(width_mm: f64, height_mm: f64) -> Self {
        let valid = |v: f64, fallback: f64| if v.is_finite() && v > 1.0 { v } else { fallback };
        Self {
            width_mm: valid(width_mm, 230.0),
            height_mm: valid(height_mm, 130.0),
            arrivals: Vec::with_capacity(16),
            next_arrival: 0,
            tracks: [LaneTrack::default(); LANES],
            sent: [LaneGesture::default(); LANES],
        }
    }

    /// The lane a finger at `x_mm` plays, and its place across that lane (0 to 1).
    pub fn lane_at(&self, x_mm: f64, layout: PadLayout) -> (usize, f64) {
        let u = (x_mm / self.width_mm).clamp(0.0, 1.0);
        let lanes = layout.lanes();
        let lane = ((u * lanes as f64) as usize).min(lanes - 1);
        (lane, u * lanes as f64 - lane as f64)
    }

    /// Takes one frame of touches at `time_s` and returns the lanes whose gesture changed,
    /// with their new gesture. `drum` maps for the friction drum (one lane, the whole pad).
    pub fn update(&mut self, touches: &[Touch], time_s: f64, layout: PadLayout, drum: bool) -> Vec<(usize, LaneGesture)> {
        let layout = if drum { PadLayout::OneString } else { layout };
        // Arrival order: new fingers go to the back, lifted ones leave.
        self.arrivals.retain(|(id, _)| touches.iter().any(|t| t.id == *id && !t.ended));
        for touch in touches.iter().filter(|t| !t.ended) {
            if !self.arrivals.iter().any(|(id, _)| *id == touch.id) {
                self.arrivals.push((touch.id, self.next_arrival));
                self.next_arrival += 1;
            }
        }
        let mut fingers: Vec<(u64, Touch)> = touches
            .iter()
            .filter(|t| !t.ended && t.x_mm.is_finite() && t.y_mm.is_finite() && t.force_g.is_finite())
            .filter_map(|t| self.arrivals.iter().find(|(id, _)| *id == t.id).map(|(_, order)| (*order, *t)))
            .collect();
        fingers.sort_by_key(|(order, _)| *order);

        let mut changed = Vec::new();
        for lane in 0..LANES {
            let mut in_lane = fingers.iter().map(|(_, t)| t).filter(|t| lane < layout.lanes() && self.lane_at(t.x_mm, layout).0 == lane);
            let bow = in_lane.next().copied();
            let stop = in_lane.next().copied();
            let gesture = match bow {
                None => self.sent[lane].lifted(),
                Some(bow) => {
                    let velocity_mps = self.track_velocity(lane, &bow, time_s);
                    if drum {
                        self.drum_gesture(&bow)
                    } else {
                        let (_, across) = self.lane_at(bow.x_mm, layout);
                        LaneGesture {
                            bow_down: true,
                            bow_force_n: (bow.force_g.max(0.0) * STRING_FORCE_N_PER_G).min(STRING_MAX_FORCE_N),
                            bow_velocity_mps: velocity_mps,
                            bow_position: BOW_POSITION.min + (BOW_POSITION.max - BOW_POSITION.min) * across,
                            finger_position: stop.map(|s| FINGER_POSITION.max * self.lane_at(s.x_mm, layout).1),
                            ..self.sent[lane]
                        }
                    }
                }
            };
            if bow.is_none() {
                self.tracks[lane].bow_id = None;
            }
            if gesture != self.sent[lane] {
                self.sent[lane] = gesture;
                changed.push((lane, gesture));
            }
        }
        changed
    }

    /// Every lane lifted (the pad went away); returns the lanes that were down.
    pub fn lift_all(&mut self) -> Vec<(usize, LaneGesture)> {
        self.arrivals.clear();
        let mut changed = Vec::new();
        for lane in 0..LANES {
            self.tracks[lane] = LaneTrack::default();
            let lifted = self.sent[lane].lifted();
            if lifted != self.sent[lane] {
                self.sent[lane] = lifted;
                changed.push((lane, lifted));
            }
        }
        changed
    }

    fn drum_gesture(&self, bow: &Touch) -> LaneGesture {
        let pressure = (bow.force_g / DRUM_FULL_PRESSURE_G).clamp(0.0, 1.0);
        LaneGesture {
            bow_down: true,
            bow_force_n: DRUM_MAX_FORCE_N * pressure,
            bow_velocity_mps: DRUM_MAX_VELOCITY_MPS * pressure,
            drum_bow_x: (bow.x_mm / self.width_mm).clamp(0.0, 1.0),
            drum_bow_y: (bow.y_mm / self.height_mm).clamp(0.0, 1.0),
            finger_position: None,
            ..self.sent[0]
        }
    }

    /// The bow finger's vertical velocity (m/s), smoothed; restarts at rest for a new finger.
    fn track_velocity(&mut self, lane: usize, bow: &Touch, time_s: f64) -> f64 {
        let track = &mut self.tracks[lane];
        if track.bow_id != Some(bow.id) {
            *track = LaneTrack { bow_id: Some(bow.id), last_y_mm: bow.y_mm, last_time_s: time_s, velocity_mps: 0.0 };
            return 0.0;
        }
        let dt_s = time_s - track.last_time_s;
        if dt_s > 1e-4 {
            let raw_mps = (bow.y_mm - track.last_y_mm) * 1e-3 / dt_s;
            let alpha = 1.0 - (-dt_s / VELOCITY_SMOOTHING_S).exp();
            track.velocity_mps += alpha * (raw_mps - track.velocity_mps);
            track.last_y_mm = bow.y_mm;
            track.last_time_s = time_s;
        }
        track.velocity_mps.clamp(-STRING_MAX_VELOCITY_MPS, STRING_MAX_VELOCITY_MPS)
    }
}

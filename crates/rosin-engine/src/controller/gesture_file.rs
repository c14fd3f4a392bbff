//! Gesture files: a performance on the pad (or with the mouse), recorded as timed lane
//! gestures, to be replayed offline by `rosin-render --gestures FILE`.
//!
//! The format is text, one item a line, times in seconds from the start:
//!
//! ```text
//! rosin-gestures 1
//! 0.000000 control instrument 0
//! 0.000000 control pad_layout 0
//! 0.012500 lane 0 down 4.000 0.1200 0.1800 - 0.5000 0.5000
//! 0.900000 lane 0 up 4.000 0.0000 0.1800 - 0.5000 0.5000
//! ```
//!
//! A lane line holds: lane, `down`/`up`, bow force (N), bow velocity (m/s), bow position
//! (fraction of the length), stopping finger (fraction, or `-` for none), drum bow x and y
//! (fractions of the diameter). Lines starting with `#` are comments.

use std::fmt::Write as _;
use std::path::Path;

use super::gesture::{LaneGesture, LANES};
use crate::controls;

/// The first line of every gesture file; the number is the format's version.
pub const HEADER: &str = "rosin-gestures 1";

#[derive(Clone, Debug, PartialEq)]
pub enum RecordedItem {
    Lane { lane: usize, gesture: LaneGesture },
    Control { id: String, value: f64 },
}

/// A performance: items in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GestureRecording {
    items: Vec<(f64, RecordedItem)>,
}

impl GestureRecording {
    /// Appends an item; times never go backwards (a late item takes the last time). Times
    /// and a lane's values are kept to the precision the file writes them with
    /// ([`GestureRecording::to_text`]), so a recording and its file replay the same samples:
    /// a time rounded in the file alone could move an event across a sample, and a bowed
    /// attack makes much of a sample's difference.
    pub fn push(&mut self, time_s: f64, item: RecordedItem) {
        let last = self.items.last().map_or(0.0, |(t, _)| *t);
        let time_s = if time_s.is_finite() { quantize(time_s, 1e6).max(last) } else { last };
        let item = match item {
            RecordedItem::Lane { lane, gesture: g } => RecordedItem::Lane {
                lane,
                gesture: LaneGesture {
                    bow_force_n: quantize(g.bow_force_n, 1e4),
                    bow_velocity_mps: quantize(g.bow_velocity_mps, 1e5),
                    bow_position: quantize(g.bow_position, 1e5),
                    finger_position: g.finger_position.map(|f| quantize(f, 1e5)),
                    drum_bow_x: quantize(g.drum_bow_x, 1e5),
                    drum_bow_y: quantize(g.drum_bow_y, 1e5),
                    ..g
                },
            },
            control => control,
        };
        self.items.push((time_s, item));
    }

    pub fn items(&self) -> &[(f64, RecordedItem)] {
        &self.items
    }

    /// The time of the last item.
    pub fn duration_s(&self) -> f64 {
        self.items.last().map_or(0.0, |(t, _)| *t)
    }

    pub fn to_text(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "{HEADER}");
        let _ = writeln!(text, "# time_s lane LANE down|up force_N velocity_m/s position finger|- drum_x drum_y");
        let _ = writeln!(text, "# time_s control ID VALUE");
        for (time_s, item) in &self.items {
            match item {
                RecordedItem::Control { id, value } => {
                    let _ = writeln!(text, "{time_s:.6} control {id} {value}");
                }
                RecordedItem::Lane { lane, gesture: g } => {
                    let finger = g.finger_position.map_or_else(|| "-".to_string(), |f| format!("{f:.5}"));
                    let _ = writeln!(
                        text,
                        "{time_s:.6} lane {lane} {} {:.4} {:.5} {:.5} {finger} {:.5} {:.5}",
                        if g.bow_down { "down" } else { "up" },
                        g.bow_force_n,
                        g.bow_velocity_mps,
                        g.bow_position,
                        g.drum_bow_x,
                        g.drum_bow_y
                    );
                }
            }
        }
        text
    }

    /// Parses a gesture file. Errors name the line and what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        match lines.next() {
            Some((_, l)) if l.trim() == HEADER => {}
            Some((_, l)) if l.trim_start().starts_with("rosin-gestures") => {
                return Err(format!("unsupported gesture file version '{}' (this Rosin reads '{HEADER}')", l.trim()))
            }
            _ => return Err(format!("not a gesture file: the first line must be '{HEADER}'")),
        }
        let mut recording = Self::default();
        for (index, line) in lines {
            let item = parse_line(line).map_err(|e| format!("line {}: {e}", index + 1))?;
            let (time_s, item) = item;
            if time_s < recording.duration_s() {
                return Err(format!("line {}: time {time_s} goes backwards", index + 1));
            }
            recording.push(time_s, item);
        }
        Ok(recording)
    }

    pub fn save(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, self.to_text()).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

fn number(word: Option<&str>, what: &str) -> Result<f64, String> {
    let word = word.ok_or_else(|| format!("missing {what}"))?;
    let value: f64 = word.parse().map_err(|_| format!("{what} '{word}' is not a number"))?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{what} '{word}' is not finite"))
    }
}

fn parse_line(line: &str) -> Result<(f64, RecordedItem), String> {
    let mut words = line.split_whitespace();
    let time_s = number(words.next(), "time")?;
    if time_s < 0.0 {
        return Err(format!("negative time {time_s}"));
    }
    let item = match words.next() {
        Some("control") => {
            let id = words.next().ok_or("missing control ID")?;
            let spec = controls::find(id).ok_or_else(|| format!("unknown control '{id}'"))?;
            let value = number(words.next(), "value")?;
            RecordedItem::Control { id: spec.id.to_string(), value: spec.clamp(value) }
        }
        Some("lane") => {
            let lane = number(words.next(), "lane")?;
            if lane.fract() != 0.0 || !(0.0..LANES as f64).contains(&lane) {
                return Err(format!("lane {lane} is not 0 to {}", LANES - 1));
            }
            let bow_down = match words.next() {
                Some("down") => true,
                Some("up") => false,
                other => return Err(format!("expected 'down' or 'up', got '{}'", other.unwrap_or(""))),
            };
            let bow_force_n = number(words.next(), "bow force")?;
            let bow_velocity_mps = number(words.next(), "bow velocity")?;
            let bow_position = number(words.next(), "bow position")?;
            let finger_position = match words.next() {
                Some("-") => None,
                word => Some(number(word, "finger position")?),
            };
            let drum_bow_x = number(words.next(), "drum bow x")?;
            let drum_bow_y = number(words.next(), "drum bow y")?;
            let gesture = LaneGesture { bow_down, bow_force_n, bow_velocity_mps, bow_position, finger_position, drum_bow_x, drum_bow_y };
            RecordedItem::Lane { lane: lane as usize, gesture: gesture.sanitized() }
        }
        other => return Err(format!("expected 'lane' or 'control', got '{}'", other.unwrap_or(""))),
    };
    if let Some(extra) = words.next() {
        return Err(format!("unexpected '{extra}' at the end"));
    }
    Ok((time_s, item))
}

/// `value` rounded to `1 / per_unit`, as `{:.N}` writes it with `per_unit = 10^N`.
fn quantize(value: f64, per_unit: f64) -> f64 {
    if value.is_finite() {
        (value * per_unit).round() / per_unit
    } else {
        value
    }
}

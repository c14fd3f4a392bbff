//! The editor's pure logic, free of egui so it can be tested: how the mouse becomes pad
//! touches (it goes through the same [`PadMapper`](rosin_engine::controller::mapper::PadMapper)
//! as the Sensel), which host parameter gestures a lane's gesture makes, the control
//! groups, and how values and notes are written.
//!
//! The mouse as a bow:
//! - String view, left drag: the bow sits where the pointer is along the drawn string (its
//!   distance from the bridge, within the Bow Position range), and the pointer's vertical
//!   speed is the bow velocity (down is a down-bow; 200 px/s is 0.1 m/s).
//! - Force: the mouse has no pressure, so the scroll wheel sets it, as a pressure held
//!   between strokes (shown in the views as the bow's opacity): 500 g (5 N on a string) to
//!   start, 25 g a notch, 0 to 1000 g.
//! - String view, right press or drag: places the stopping finger at the pointer; it stays
//!   down until a right click at the nut's end (the leftmost 3 %) lifts it.
//! - Membrane view, left drag: bows the membrane at the pointer with the wheel's pressure.

use rosin_engine::controller::gesture::{LaneGesture, PadLayout};
use rosin_engine::controller::mapper::{Touch, STRING_FORCE_N_PER_G};
use rosin_engine::controls::{self, ControlSpec, Taper, BOW_POSITION, FINGER_POSITION};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rosin_engine::guettler::{GuettlerPlan, GuettlerRunner};
use rosin_engine::view::snapshot::LabView;
use rosin_physics::bow::contact::steady_friction_force_n;
use rosin_physics::string::tuning::midi_key_to_hz;

/// The virtual pad the mouse plays, with the Morph's size.
pub const MOUSE_PAD_WIDTH_MM: f64 = 230.0;
pub const MOUSE_PAD_HEIGHT_MM: f64 = 130.0;
/// Vertical pointer travel to finger travel: 200 px/s is a 0.1 m/s bow.
pub const MOUSE_MM_PER_PX: f64 = 0.5;
pub const MOUSE_DEFAULT_PRESSURE_G: f64 = 500.0;
pub const MOUSE_PRESSURE_STEP_G: f64 = 25.0;
pub const MOUSE_MAX_PRESSURE_G: f64 = 1000.0;
/// A right click closer to the nut than this (fraction of the length) lifts the finger.
pub const FINGER_LIFT_ZONE: f64 = 0.03;

/// Touch IDs the mouse uses on its virtual pad.
const BOW_TOUCH: u8 = 0;
const STOP_TOUCH: u8 = 1;

/// What the mouse is doing in a view, in view terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MouseState {
    /// The left button is bowing: the lane, the place along it (0 nut .. 1 bridge) and the
    /// pointer's y in pixels.
    pub bowing: Option<(usize, f64, f64)>,
    /// The stopping finger per lane, as a fraction of the length from the nut.
    pub fingers: [Option<f64>; 4],
    pub pressure_g: f64,
}

impl MouseState {
    pub fn new() -> Self {
        Self { pressure_g: MOUSE_DEFAULT_PRESSURE_G, ..Self::default() }
    }

    /// One wheel notch (positive: up, more pressure).
    pub fn scroll(&mut self, notches: f64) {
        self.pressure_g = (self.pressure_g + notches * MOUSE_PRESSURE_STEP_G).clamp(0.0, MOUSE_MAX_PRESSURE_G);
    }

    /// A right press or drag at `along` (0 nut .. 1 bridge) on `lane`.
    pub fn place_finger(&mut self, lane: usize, along: f64) {
        if let Some(slot) = self.fingers.get_mut(lane) {
            *slot = if along < FINGER_LIFT_ZONE { None } else { Some(along.clamp(0.0, FINGER_POSITION.max)) };
        }
    }
}

/// The pad column of `lane` (one column with one lane).
fn column_mm(lane: usize, across: f64, layout: PadLayout) -> f64 {
    let lanes = layout.lanes() as f64;
    let lane = (lane as f64).min(lanes - 1.0);
    (lane + across.clamp(0.0, 1.0) * 0.999) * MOUSE_PAD_WIDTH_MM / lanes
}

/// The string view's mouse as touches on the virtual pad, placed so that the mapper puts
/// the bow (and the finger) exactly where the pointer is on the drawn string.
pub fn string_touches(mouse: &MouseState, layout: PadLayout) -> Vec<Touch> {
    let mut touches = Vec::with_capacity(2);
    let Some((lane, along, y_px)) = mouse.bowing else { return touches };
    let from_bridge = BOW_POSITION.clamp(1.0 - along);
    let across = (from_bridge - BOW_POSITION.min) / (BOW_POSITION.max - BOW_POSITION.min);
    touches.push(Touch { id: BOW_TOUCH, x_mm: column_mm(lane, across, layout), y_mm: y_px * MOUSE_MM_PER_PX, force_g: mouse.pressure_g, ended: false });
    if let Some(finger) = mouse.fingers.get(lane).copied().flatten() {
        let across = finger / FINGER_POSITION.max;
        touches.push(Touch { id: STOP_TOUCH, x_mm: column_mm(lane, across, layout), y_mm: 0.0, force_g: mouse.pressure_g, ended: false });
    }
    touches
}

/// The membrane view's mouse as a touch: `x`, `y` are fractions of the membrane's square.
pub fn membrane_touch(x: f64, y: f64, pressure_g: f64) -> Touch {
    Touch { id: BOW_TOUCH, x_mm: x.clamp(0.0, 1.0) * MOUSE_PAD_WIDTH_MM, y_mm: y.clamp(0.0, 1.0) * MOUSE_PAD_HEIGHT_MM, force_g: pressure_g, ended: false }
}

/// The bow force a pressure gives on a string, for the views' read-outs.
pub fn string_force_n(pressure_g: f64) -> f64 {
    pressure_g * STRING_FORCE_N_PER_G
}

/// A parameter gesture to report to the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostGesture {
    Begin(&'static str),
    Set(&'static str, f64),
    End(&'static str),
}

/// Turns lane 0's gestures into parameter gestures for the host, so a performance is
/// recorded as automation: begin when a finger lands, a value at every change, end when
/// it lifts. Only with one lane (the four-string layout has no single parameter to write).
#[derive(Clone, Debug, Default)]
pub struct HostGestureTracker {
    /// Parameters with an open gesture: the value last sent, and the value before the
    /// gesture began.
    open: Vec<(&'static str, f64, f64)>,
}

impl HostGestureTracker {
    /// The gestures to send for lane 0's gesture now: values only when they changed. When
    /// a finger lifts, each parameter is set back to its value from before the gesture
    /// (`value_before` is asked at the gesture's start), then the gesture ends: the finger
    /// hands the lane back, so a MIDI note after a pad stroke plays with the bow it had.
    pub fn update(&mut self, gesture: &LaneGesture, one_lane: bool, drum: bool, value_before: impl Fn(&str) -> f64) -> Vec<HostGesture> {
        let mut wanted: Vec<(&'static str, f64)> = Vec::new();
        if one_lane && gesture.bow_down {
            wanted.push((controls::BOW_FORCE.id, gesture.bow_force_n));
            wanted.push((controls::BOW_VELOCITY.id, gesture.bow_velocity_mps));
            if drum {
                wanted.push((controls::DRUM_BOW_X.id, gesture.drum_bow_x));
                wanted.push((controls::DRUM_BOW_Y.id, gesture.drum_bow_y));
            } else {
                wanted.push((controls::BOW_POSITION.id, gesture.bow_position));
                if let Some(finger) = gesture.finger_position {
                    wanted.push((controls::FINGER_POSITION.id, finger));
                }
            }
        }
        let mut out = Vec::new();
        self.open.retain(|(id, _, before)| {
            let keep = wanted.iter().any(|(w, _)| w == id);
            if !keep {
                out.push(HostGesture::Set(id, *before));
                out.push(HostGesture::End(id));
            }
            keep
        });
        for (id, value) in wanted {
            match self.open.iter_mut().find(|(open, _, _)| *open == id) {
                Some((_, last, _)) if *last == value => {}
                Some((_, last, _)) => {
                    *last = value;
                    out.push(HostGesture::Set(id, value));
                }
                None => {
                    self.open.push((id, value, value_before(id)));
                    out.push(HostGesture::Begin(id));
                    out.push(HostGesture::Set(id, value));
                }
            }
        }
        out
    }

    /// Ends every open gesture, handing each lane back (the editor closes).
    pub fn end_all(&mut self) -> Vec<HostGesture> {
        self.open.drain(..).flat_map(|(id, _, before)| [HostGesture::Set(id, before), HostGesture::End(id)]).collect()
    }
}

/// The editor's control groups, in order: every control in exactly one.
pub const CONTROL_GROUPS: &[(&str, &[&str])] = &[
    ("Instrument", &["instrument", "play_mode", "voices", "string_set", "pad_layout", "output_gain"]),
    ("Body", &["body", "body_mix", "sympathetic"]),
    ("Expression", &["glide_time", "pitch_bend_range", "mpe", "mpe_bend_range", "vibrato_rate", "vibrato_depth", "vibrato_delay"]),
    ("Bow", &["bow_force", "bow_velocity", "bow_position", "bow_attack", "bow_release", "noise", "string_weight"]),
    ("String", &["string_engine", "finger_position", "string_stiffness", "damping", "intonation"]),
    ("Friction", &["bow_model", "bow_width", "bow_torsion", "friction_model", "bristle_stiffness", "static_friction", "dynamic_friction", "stribeck_velocity"]),
    ("Drum (0..10, as in onofrei2021)", &["drum_quality", "drum_friction_model", "drum_tuning", "drum_damping", "drum_noise", "drum_variation", "drum_rate", "drum_gain", "drum_radiation", "drum_bow_x", "drum_bow_y"]),
];

/// A control's value with its unit, as the editor's read-outs show it.
pub fn format_value(spec: &ControlSpec, value: f64) -> String {
    match spec.taper {
        Taper::Choice(names) => names.get(value.round().max(0.0) as usize).copied().unwrap_or("?").to_string(),
        Taper::Whole => format!("{}{}", value.round(), spec.unit),
        Taper::Log if spec.max / spec.min.max(1e-30) > 1e3 => format!("{value:.2e}{}", spec.unit),
        _ => {
            let span = spec.max - spec.min;
            let digits = if span >= 100.0 { 0 } else if span >= 10.0 { 1 } else { 3 };
            format!("{value:.digits$}{}", spec.unit)
        }
    }
}

/// `60` is "C4".
pub fn note_name(key: u8) -> String {
    const NAMES: [&str; 12] = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"];
    format!("{}{}", NAMES[key as usize % 12], key as i32 / 12 - 1)
}

/// A string row's label: note, frequency, and who plays it.
pub fn string_label(key: u8, pad_lane: Option<u8>) -> String {
    let who = match pad_lane {
        Some(lane) => format!("pad lane {}", lane + 1),
        None => "MIDI".to_string(),
    };
    format!("{} {:.1} Hz, {who}", note_name(key), midi_key_to_hz(key as f64))
}

/// The semitone frets as fractions of the length from the nut, up to the octave.
pub fn fret_positions() -> [f64; 12] {
    std::array::from_fn(|k| 1.0 - 2f64.powf(-((k + 1) as f64) / 12.0))
}

/// The bow's opacity for a force: faint when light, solid at `full_force_n`.
pub fn bow_opacity(force_n: f64, full_force_n: f64) -> f32 {
    (0.15 + 0.85 * (force_n / full_force_n).clamp(0.0, 1.0)) as f32
}

/// A membrane displacement as a grey level (mid-grey at rest), scaled to `peak_m`.
pub fn grey_level(displacement_m: f32, peak_m: f32) -> u8 {
    if !displacement_m.is_finite() {
        return 0;
    }
    let v = 0.5 + 0.5 * (displacement_m / peak_m.max(1e-12)).clamp(-1.0, 1.0);
    (40.0 + 200.0 * v).round() as u8
}

/// How many frames per second the views drew, from the times of recent frames.
pub fn frames_per_second(frame_times_s: &[f64]) -> Option<f64> {
    let (first, last) = (frame_times_s.first()?, frame_times_s.last()?);
    (frame_times_s.len() > 1 && last > first).then(|| (frame_times_s.len() - 1) as f64 / (last - first))
}

/// Where a new gesture recording is saved: `$ROSIN_GESTURE_DIR`, else
/// `~/Rosin/Gestures`, named by the time it was made.
pub fn recording_path(unix_time_s: u64) -> std::path::PathBuf {
    let dir = std::env::var_os("ROSIN_GESTURE_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(std::path::PathBuf::from).unwrap_or_default();
        home.join("Rosin").join("Gestures")
    });
    dir.join(format!("rosin-{unix_time_s}.rgest"))
}

/// How many periods of the followed note the lab view's loop shows.
pub const LAB_PERIODS: f64 = 4.0;

/// The lab view's window into the trace: the last [`LAB_PERIODS`] periods of the note (all
/// the trace holds, for notes too low for that).
pub fn lab_window(lab: &LabView) -> std::ops::Range<usize> {
    let period = lab.sample_rate_hz as f64 / midi_key_to_hz(lab.key as f64);
    let wanted = (LAB_PERIODS * period).ceil() as usize;
    lab.samples.saturating_sub(wanted)..lab.samples
}

/// The loop plot's axes: the velocity range (m/s) the window covers and the force range (N)
/// that holds both the loop and the steady curve over it, each with a tenth's margin.
pub fn lab_axes(lab: &LabView, window: std::ops::Range<usize>) -> ((f64, f64), (f64, f64)) {
    let span = |values: &[f32]| values.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v as f64), hi.max(v as f64)));
    let (mut v_lo, mut v_hi) = span(&lab.law_velocity_mps[window.clone()]);
    let (mut f_lo, mut f_hi) = span(&lab.force_n[window]);
    if v_lo > v_hi {
        (v_lo, v_hi, f_lo, f_hi) = (-0.1, 0.1, -1.0, 1.0);
    }
    for (_, f) in lab_steady_curve(lab, (v_lo, v_hi), 64) {
        (f_lo, f_hi) = (f_lo.min(f), f_hi.max(f));
    }
    let pad = |lo: f64, hi: f64| {
        let margin = 0.1 * (hi - lo).max(1e-6);
        (lo - margin, hi + margin)
    };
    (pad(v_lo, v_hi), pad(f_lo, f_hi))
}

/// `points` samples of the followed law's steady curve over `velocities` (m/s), as
/// (velocity, force); the static band at zero velocity is left out (the curve jumps there).
pub fn lab_steady_curve(lab: &LabView, velocities: (f64, f64), points: usize) -> Vec<(f64, f64)> {
    let (lo, hi) = velocities;
    (0..points)
        .map(|i| lo + (hi - lo) * i as f64 / (points.max(2) - 1) as f64)
        .filter(|v| *v != 0.0)
        .map(|v| (v, steady_friction_force_n(lab.model, &lab.friction, lab.hyperbolic_viscous_s_per_m, lab.normal_force_n as f64, v)))
        .collect()
}

/// A Guettler diagram swept in a background thread (issue 17), a cell at a time: the
/// editor polls its progress and results each frame. Dropping it asks the thread to stop
/// after the cell it is playing, without waiting for it.
pub struct GuettlerJob {
    plan: GuettlerPlan,
    done: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    /// Each cell's transient once played: `Some(None)` for no Helmholtz motion.
    results: Arc<Mutex<Vec<Option<Option<f64>>>>>,
}

impl GuettlerJob {
    /// Starts sweeping `plan` on a thread of its own.
    pub fn start(plan: GuettlerPlan) -> Self {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let results = Arc::new(Mutex::new(vec![None; plan.cells()]));
        let (thread_done, thread_cancel, thread_results, thread_plan) = (done.clone(), cancel.clone(), results.clone(), plan.clone());
        let spawned = std::thread::Builder::new().name("rosin-guettler".into()).spawn(move || {
            let mut runner = GuettlerRunner::new(thread_plan);
            for index in 0..runner.plan().cells() {
                if thread_cancel.load(Ordering::Relaxed) {
                    return;
                }
                let transient = runner.run_cell(index);
                if let Ok(mut results) = thread_results.lock() {
                    results[index] = Some(transient);
                }
                thread_done.fetch_add(1, Ordering::Release);
            }
        });
        if spawned.is_err() {
            // No thread to be had: the job reports itself stopped with nothing done.
            cancel.store(true, Ordering::Relaxed);
        }
        Self { plan, done, cancel, results }
    }

    pub fn plan(&self) -> &GuettlerPlan {
        &self.plan
    }

    /// (cells played, cells in all).
    pub fn progress(&self) -> (usize, usize) {
        (self.done.load(Ordering::Acquire), self.plan.cells())
    }

    pub fn is_finished(&self) -> bool {
        let (done, total) = self.progress();
        done == total || self.cancel.load(Ordering::Relaxed)
    }

    /// The cells played so far.
    pub fn results(&self) -> Vec<Option<Option<f64>>> {
        self.results.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for GuettlerJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// How many cells along each side of the editor's Guettler diagram (odd, so the current
/// settings have a cell of their own in the middle).
pub const GUETTLER_CELLS: usize = 9;

/// Where a value sits along a log axis of cell centres, in cells from the first (may fall
/// outside `0 ..= len - 1` when the settings moved since the sweep).
pub fn log_axis_position(axis: &[f64], value: f64) -> f64 {
    match axis {
        [] => 0.0,
        [_] => 0.0,
        [first, .., last] => (value / first).ln() / (last / first).ln() * (axis.len() - 1) as f64,
    }
}

/// The meter's scale: this many dB below full scale is its left end.
pub const METER_FLOOR_DB: f32 = -60.0;
/// How long the peak-hold line stays before it falls (s).
pub const PEAK_HOLD_S: f64 = 1.5;

/// Where a linear level sits on the meter, 0 (at or below [`METER_FLOOR_DB`]) to 1 (0 dBFS or
/// more).
pub fn meter_fraction(level: f32) -> f32 {
    let db = 20.0 * level.max(1e-9).log10();
    ((db - METER_FLOOR_DB) / -METER_FLOOR_DB).clamp(0.0, 1.0)
}

/// The meter's memory between frames: the held peak and the clip light, which stays lit
/// until it is clicked.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeterHold {
    pub peak: f32,
    held_at_s: f64,
    pub clipped: bool,
}

impl MeterHold {
    /// Takes the level the audio thread measured since the last snapshot, at `now_s`.
    pub fn update(&mut self, level: &rosin_engine::view::meter::OutputLevel, now_s: f64) {
        if level.peak >= self.peak || now_s - self.held_at_s > PEAK_HOLD_S {
            self.peak = level.peak;
            self.held_at_s = now_s;
        }
        self.clipped |= level.clipped;
    }

    pub fn reset_clip(&mut self) {
        self.clipped = false;
    }
}

/// The feedback line: the CPU share and the voices, e.g. "CPU 3.1 % · 2 voices: G3 sustained,
/// C4 attack".
pub fn feedback_line(feedback: &rosin_engine::view::snapshot::FeedbackView) -> String {
    let shown = feedback.voices_sounding.min(feedback.voices.len());
    let voices: Vec<String> = feedback.voices[..shown].iter().map(|v| format!("{}{} {}", note_name(v.key), if v.drum { " drum" } else { "" }, v.state.name())).collect();
    let more = feedback.voices_sounding.saturating_sub(shown);
    format!(
        "CPU {:.1} % · {} voice{}{}{}{}",
        100.0 * feedback.cpu_share,
        feedback.voices_sounding,
        if feedback.voices_sounding == 1 { "" } else { "s" },
        if voices.is_empty() { "" } else { ": " },
        voices.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    )
}

/// The preset `step` places on from `current` in a list of `count` (wrapping round), or the
/// first (stepping forward) or last (back) when none is current.
pub fn preset_step(count: usize, current: Option<usize>, step: i32) -> Option<usize> {
    if count == 0 {
        return None;
    }
    Some(match current {
        Some(i) => (i as i64 + step as i64).rem_euclid(count as i64) as usize,
        None if step >= 0 => 0,
        None => count - 1,
    })
}

/// Whether the controls a preset holds now differ from `reference` (a preset's value for
/// every control), beyond the rounding of a host's 32-bit parameters.
pub fn differs_from(reference: &rosin_engine::controls::Controls, now: &rosin_engine::controls::Controls) -> bool {
    controls::ALL.iter().filter(|spec| spec.in_presets()).any(|spec| {
        let (a, b) = (reference.get(spec.id).unwrap_or(spec.default), now.get(spec.id).unwrap_or(spec.default));
        (a - b).abs() > 1e-5 * (spec.max - spec.min).abs().max(1e-9)
    })
}

/// The controls a player reaches for while playing, on the performance strip under the view
/// (issue 19), for the strings and for the drum. The side panel leaves out whichever the
/// strip shows, so no control is in two places.
pub const STRING_PERFORMANCE_CONTROLS: &[&str] = &["bow_force", "bow_velocity", "bow_position", "vibrato_depth", "body_mix", "output_gain"];
pub const DRUM_PERFORMANCE_CONTROLS: &[&str] = &["drum_tuning", "drum_damping", "drum_variation", "drum_gain", "output_gain"];

/// The performance strip's controls for the instrument chosen.
pub fn performance_controls(drum: bool) -> &'static [&'static str] {
    if drum { DRUM_PERFORMANCE_CONTROLS } else { STRING_PERFORMANCE_CONTROLS }
}

/// Which view the editor shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    String,
    Membrane,
    /// The live lab view: the loudest voice's hysteresis loop, stick/slip and bow point, or
    /// the Guettler diagram.
    Lab,
}

/// The name a page is saved with in the project: the tab, and on the lab tab which page.
pub fn page_name(tab: Tab, guettler: bool) -> &'static str {
    match (tab, guettler) {
        (Tab::String, _) => "string",
        (Tab::Membrane, _) => "membrane",
        (Tab::Lab, false) => "lab",
        (Tab::Lab, true) => "guettler",
    }
}

/// The page a saved name (or `ROSIN_EDITOR_VIEW`) names; `None` for anything else.
pub fn page_from_name(name: &str) -> Option<(Tab, bool)> {
    match name {
        "string" => Some((Tab::String, false)),
        "membrane" => Some((Tab::Membrane, false)),
        "lab" => Some((Tab::Lab, false)),
        "guettler" => Some((Tab::Lab, true)),
        _ => None,
    }
}

/// The editor's least size and the largest it asks the host for on opening, in logical
/// pixels (8K at a scale of 1).
pub const WINDOW_MIN_SIZE: (f32, f32) = (760.0, 480.0);
pub const WINDOW_MAX_SIZE: (f32, f32) = (7680.0, 4320.0);
/// Frames the keeper waits for the host to grant a restored size before it gives up (the
/// host may refuse, or offer another size).
pub const WINDOW_RESTORE_FRAMES: u32 = 30;

/// Keeps the editor window's size with the project (issue 19).
///
/// nice-plug-egui opens the window at the size the editor was built with, before any
/// project loads, and offers no way to change it. So the keeper asks the host, on the first
/// frame, for the size the project was saved at, and from then on records every size the
/// player gives the window. Until the restored size is granted (or the host has had
/// [`WINDOW_RESTORE_FRAMES`] frames to refuse it), the sizes the window reports are its
/// opening size, and are not recorded over the saved one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum WindowSizeKeeper {
    /// The window is not open yet, or has not drawn its first frame.
    #[default]
    Opening,
    /// The host was asked for this size, this many frames ago.
    Asked((f32, f32), u32),
    /// Every size the window takes is the player's, and is saved.
    Recording,
}

impl WindowSizeKeeper {
    /// A frame drawn at `current` logical pixels, with `saved` the project's size: returns
    /// the size to ask the host for, if any.
    pub fn frame(&mut self, saved: Option<(f32, f32)>, current: (f32, f32)) -> Option<(f32, f32)> {
        match *self {
            Self::Opening => {
                let wanted = saved.and_then(window_size_to_restore);
                match wanted {
                    Some(size) if !same_window_size(size, current) => {
                        *self = Self::Asked(size, 0);
                        Some(size)
                    }
                    _ => {
                        *self = Self::Recording;
                        None
                    }
                }
            }
            Self::Asked(size, frames) => {
                *self = if same_window_size(size, current) || frames + 1 >= WINDOW_RESTORE_FRAMES { Self::Recording } else { Self::Asked(size, frames + 1) };
                None
            }
            Self::Recording => None,
        }
    }

    /// The window now has `size` logical pixels: returns the size to save with the project,
    /// if it is the player's.
    pub fn resized(&mut self, size: (f32, f32)) -> Option<(f32, f32)> {
        match *self {
            Self::Opening => None,
            Self::Asked(asked, _) => {
                if same_window_size(asked, size) {
                    *self = Self::Recording;
                    Some(size)
                } else {
                    None
                }
            }
            Self::Recording => Some(size),
        }
    }

    /// The window closed: the next opening restores again.
    pub fn closed(&mut self) {
        *self = Self::Opening;
    }
}

/// A saved size the editor can take: clamped to its least and largest size; `None` for a
/// size that is not a size (not finite, or not positive).
pub fn window_size_to_restore(saved: (f32, f32)) -> Option<(f32, f32)> {
    let (w, h) = saved;
    if !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
        return None;
    }
    Some((w.clamp(WINDOW_MIN_SIZE.0, WINDOW_MAX_SIZE.0).round(), h.clamp(WINDOW_MIN_SIZE.1, WINDOW_MAX_SIZE.1).round()))
}

/// Two window sizes within a pixel of each other (hosts and scale factors round).
fn same_window_size(a: (f32, f32), b: (f32, f32)) -> bool {
    (a.0 - b.0).abs() <= 1.5 && (a.1 - b.1).abs() <= 1.5
}

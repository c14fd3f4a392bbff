//! Expression: what MIDI channels (plain or MPE), note expressions and polyphonic modulation
//! say about each voice, and how that shapes the voice's bow and pitch.
//!
//! Default mapping (documented in the README):
//! - **pressure** (MPE pressure, channel pressure, poly aftertouch, note-expression
//!   pressure) scales the bow force by `2 p` up to half pressure (the Bow Force control),
//!   then faster, to 4x at full pressure ([`pressure_force_factor`]). A voice that has
//!   received no pressure plays at the control's force.
//! - **slide / brightness** (MPE CC74, plain CC74, note-expression brightness) moves the bow
//!   along the string: brighter is nearer the bridge (sul ponticello). The bow-bridge
//!   distance is the Bow Position control times `4^(0.5 - b)`: from twice as far (sul tasto,
//!   `b = 0`) to half as far (`b = 1`).
//! - **expression** (note expression) scales the bow velocity by `2 e`.
//! - **pitch**: bend (member and master channel, with their ranges), note tuning, and
//!   vibrato (mod wheel, or note-expression vibrato, times the Vibrato Depth control).
//!
//! MPE zones follow the MPE specification (MMA/AMEI RP-053): with the MPE control on, a
//! lower zone of fifteen member channels is assumed until an MPE Configuration Message (RPN 6
//! on channel 1 or 16) says otherwise. A master channel's bend adds to every member's; its
//! pressure, slide and sustain apply to member channels that have none of their own.

use crate::controls::{self, Controls};

pub const MIDI_CHANNELS: usize = 16;
/// The RPN selection "none" (CC 101 and 100 both 127): data entry then changes nothing.
const NULL_RPN: (u8, u8) = (127, 127);

/// What one MIDI channel currently says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelState {
    /// -1 to 1.
    pub bend: f64,
    pub pressure: Option<f64>,
    pub brightness: Option<f64>,
    pub mod_wheel: f64,
    pub sustain: bool,
    /// A bend range set on this channel by RPN 0 (semitones), overriding the control.
    pub bend_range_st: Option<f64>,
    rpn: (u8, u8),
    data_msb: u8,
}

impl Default for ChannelState {
    fn default() -> Self {
        Self { bend: 0.0, pressure: None, brightness: None, mod_wheel: 0.0, sustain: false, bend_range_st: None, rpn: NULL_RPN, data_msb: 0 }
    }
}

/// The role of a channel under MPE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelRole {
    /// Not in a zone (MPE off, or outside both zones).
    Plain,
    /// A zone's master channel (channel 1 for the lower zone, 16 for the upper).
    Master,
    /// A member channel; the field is its zone's master channel.
    Member(u8),
}

/// What a MIDI message asks of the notes, beyond updating channel state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelAction {
    None,
    /// The sustain pedal went up on this channel: release the notes it held.
    SustainReleased(u8),
    /// All notes off / all sound off.
    AllNotesOff,
}

/// Every channel's state and the MPE zones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MidiExpression {
    channels: [ChannelState; MIDI_CHANNELS],
    /// Member-channel counts of the lower and upper zones, once an MPE Configuration Message
    /// set them (`None`: the default lower zone of 15).
    zones: Option<(u8, u8)>,
    /// The MPE control.
    mpe_on: bool,
}

impl Default for MidiExpression {
    fn default() -> Self {
        Self { channels: [ChannelState::default(); MIDI_CHANNELS], zones: None, mpe_on: true }
    }
}

impl MidiExpression {
    /// Forgets every controller (a reset).
    pub fn reset(&mut self) {
        *self = Self { mpe_on: self.mpe_on, ..Self::default() };
    }

    /// Whether channels are read as MPE zones (the MPE control).
    pub fn set_mpe(&mut self, on: bool) {
        self.mpe_on = on;
    }

    pub fn channel(&self, channel: u8) -> &ChannelState {
        &self.channels[(channel as usize).min(MIDI_CHANNELS - 1)]
    }

    fn channel_mut(&mut self, channel: u8) -> &mut ChannelState {
        &mut self.channels[(channel as usize).min(MIDI_CHANNELS - 1)]
    }

    /// `(lower members, upper members)` in force when MPE is on.
    pub fn zones(&self) -> (u8, u8) {
        self.zones.unwrap_or((15, 0))
    }

    pub fn role(&self, channel: u8) -> ChannelRole {
        if !self.mpe_on {
            return ChannelRole::Plain;
        }
        let (lower, upper) = self.zones();
        match channel {
            0 if lower > 0 => ChannelRole::Master,
            15 if upper > 0 => ChannelRole::Master,
            c if lower > 0 && c >= 1 && c <= lower => ChannelRole::Member(0),
            c if upper > 0 && c < 15 && c >= 15 - upper => ChannelRole::Member(15),
            _ => ChannelRole::Plain,
        }
    }

    /// Pitch bend, `value` in [0, 1]: MIDI's 14 bits over 16383. The 14-bit value is
    /// recovered so that 8192 is exactly no bend (0.5 itself is a hair above it).
    pub fn pitch_bend(&mut self, channel: u8, value: f64) {
        let v = if value.is_finite() { value.clamp(0.0, 1.0) } else { 8192.0 / 16383.0 };
        let raw = (v * 16383.0).round();
        self.channel_mut(channel).bend = ((raw - 8192.0) / 8192.0).clamp(-1.0, 1.0);
    }

    pub fn channel_pressure(&mut self, channel: u8, value: f64) {
        self.channel_mut(channel).pressure = Some(unit(value));
    }

    /// A control change, `value` in [0, 1] (the 7-bit value over 127).
    pub fn control_change(&mut self, channel: u8, cc: u8, value: f64) -> ChannelAction {
        let value = unit(value);
        let data = (value * 127.0).round() as u8;
        let state = self.channel_mut(channel);
        match cc {
            1 => state.mod_wheel = value,
            74 => state.brightness = Some(value),
            64 => {
                let down = data >= 64;
                let was = std::mem::replace(&mut state.sustain, down);
                if was && !down {
                    return ChannelAction::SustainReleased(channel);
                }
            }
            101 => state.rpn.0 = data,
            100 => state.rpn.1 = data,
            6 => {
                state.data_msb = data;
                return self.data_entry(channel, data as f64);
            }
            38 => {
                // Fine bend range: cents.
                let rpn = state.rpn;
                if rpn == (0, 0) {
                    let coarse = state.data_msb as f64;
                    self.set_bend_range(channel, coarse + data as f64 / 100.0);
                }
            }
            121 => {
                // Reset all controllers.
                let range = state.bend_range_st;
                *state = ChannelState { bend_range_st: range, ..ChannelState::default() };
            }
            120 | 123 => return ChannelAction::AllNotesOff,
            _ => {}
        }
        ChannelAction::None
    }

    fn data_entry(&mut self, channel: u8, value: f64) -> ChannelAction {
        match self.channel(channel).rpn {
            (0, 0) => self.set_bend_range(channel, value),
            // MPE Configuration Message: on channel 1 the lower zone, on 16 the upper.
            (0, 6) if channel == 0 || channel == 15 => {
                let members = (value as u8).min(15);
                let (mut lower, mut upper) = self.zones();
                if channel == 0 {
                    lower = members;
                    upper = upper.min(14u8.saturating_sub(lower));
                } else {
                    upper = members;
                    lower = lower.min(14u8.saturating_sub(upper));
                }
                self.zones = Some((lower, upper));
                // A new zone layout restores the default bend ranges (the controls').
                for state in &mut self.channels {
                    state.bend_range_st = None;
                }
            }
            _ => {}
        }
        ChannelAction::None
    }

    /// RPN 0: on an MPE member channel it sets the range of every member of the zone.
    fn set_bend_range(&mut self, channel: u8, semitones: f64) {
        let semitones = Some(semitones.clamp(0.0, 96.0));
        match self.role(channel) {
            ChannelRole::Member(master) => {
                for c in 0..MIDI_CHANNELS as u8 {
                    if self.role(c) == ChannelRole::Member(master) {
                        self.channel_mut(c).bend_range_st = semitones;
                    }
                }
            }
            _ => self.channel_mut(channel).bend_range_st = semitones,
        }
    }

    /// Whether the sustain pedal holds notes on `channel` (its own, or its zone master's).
    pub fn sustained(&self, channel: u8) -> bool {
        self.channel(channel).sustain || matches!(self.role(channel), ChannelRole::Member(m) if self.channel(m).sustain)
    }

    /// What the channel says about a voice on it.
    pub fn for_channel(&self, channel: u8, c: &Controls) -> ChannelExpression {
        let own = self.channel(channel);
        let own_range = |default: f64| own.bend_range_st.unwrap_or(default);
        match self.role(channel) {
            ChannelRole::Plain | ChannelRole::Master => ChannelExpression {
                bend_st: own.bend * own_range(c.pitch_bend_range_st),
                pressure: own.pressure,
                brightness: own.brightness,
                mod_wheel: own.mod_wheel,
            },
            ChannelRole::Member(master) => {
                let m = self.channel(master);
                ChannelExpression {
                    bend_st: own.bend * own_range(c.mpe_bend_range_st) + m.bend * m.bend_range_st.unwrap_or(c.pitch_bend_range_st),
                    pressure: own.pressure.or(m.pressure),
                    brightness: own.brightness.or(m.brightness),
                    mod_wheel: own.mod_wheel.max(m.mod_wheel),
                }
            }
        }
    }
}

/// A channel's contribution to a voice.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChannelExpression {
    pub bend_st: f64,
    pub pressure: Option<f64>,
    pub brightness: Option<f64>,
    pub mod_wheel: f64,
}

/// Which per-note expression a host sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpressionKind {
    /// 0..1.
    Pressure,
    /// Semitones, -120..120.
    Tuning,
    /// 0..1.
    Vibrato,
    /// 0..1.
    Expression,
    /// 0..1.
    Brightness,
}

/// The bow controls that CLAP polyphonic modulation reaches, by their poly-modulation ID.
pub const POLY_MODULATED: [&controls::ControlSpec; 3] = [&controls::BOW_FORCE, &controls::BOW_VELOCITY, &controls::BOW_POSITION];

/// One voice's own expression, from note expressions and polyphonic modulation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NoteExpression {
    pub tuning_st: f64,
    pub vibrato: Option<f64>,
    pub pressure: Option<f64>,
    pub brightness: Option<f64>,
    pub expression: Option<f64>,
    /// Offsets of [`POLY_MODULATED`], in each control's plain units.
    pub modulation: [f64; 3],
}

impl NoteExpression {
    pub fn set(&mut self, kind: ExpressionKind, value: f64) {
        if !value.is_finite() {
            return;
        }
        match kind {
            ExpressionKind::Pressure => self.pressure = Some(unit(value)),
            ExpressionKind::Tuning => self.tuning_st = value.clamp(-120.0, 120.0),
            ExpressionKind::Vibrato => self.vibrato = Some(unit(value)),
            ExpressionKind::Expression => self.expression = Some(unit(value)),
            ExpressionKind::Brightness => self.brightness = Some(unit(value)),
        }
    }

    /// A polyphonic modulation offset, normalised as the host sends it: the three controls are
    /// linear, so the plain offset is the normalised one times the range.
    pub fn modulate(&mut self, index: usize, normalized_offset: f64) {
        if let (Some(spec), true) = (POLY_MODULATED.get(index), normalized_offset.is_finite()) {
            self.modulation[index] = normalized_offset.clamp(-1.0, 1.0) * (spec.max - spec.min);
        }
    }
}

/// A voice's controls, bend and vibrato after its channel and note expressions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapedVoice {
    pub controls: Controls,
    pub bend_st: f64,
    pub vibrato_cents: f64,
}

/// Applies a channel's and a note's expression to the controls a voice would play with.
pub fn shape(base: &Controls, channel: &ChannelExpression, note: &NoteExpression) -> ShapedVoice {
    let mut c = *base;
    let [force, velocity, position] = POLY_MODULATED;
    c.bow_force_n = force.clamp(c.bow_force_n + note.modulation[0]);
    c.bow_velocity_mps = velocity.clamp(c.bow_velocity_mps + note.modulation[1]);
    c.bow_position = position.clamp(c.bow_position + note.modulation[2]);
    if let Some(p) = note.pressure.or(channel.pressure) {
        // A drum's bow scales as `2 p` all the way: the membrane has no raucous regime to
        // reach, only louder and rougher notes past the force it is tuned for.
        let factor = if c.instrument >= 0.5 { 2.0 * unit(p) } else { pressure_force_factor(p) };
        c.bow_force_n = force.clamp(c.bow_force_n * factor);
    }
    if let Some(b) = note.brightness.or(channel.brightness) {
        c.bow_position = position.clamp(c.bow_position * 4f64.powf(0.5 - b));
    }
    if let Some(e) = note.expression {
        c.bow_velocity_mps = velocity.clamp(c.bow_velocity_mps * 2.0 * e);
    }
    let vibrato = note.vibrato.unwrap_or(0.0).max(channel.mod_wheel);
    ShapedVoice { controls: c, bend_st: channel.bend_st + note.tuning_st, vibrato_cents: vibrato * c.vibrato_depth_cents }
}

/// What pressure `p` (0..1) multiplies the bow force by: `2 p` up to half pressure (the
/// control's force there), then rising faster, to 4x at full pressure, so that pressing
/// hard takes the bow past Schelleng's upper bound into raucous motion, as a real bow does.
/// The curve is smooth at half pressure (slope 2 on both sides).
pub fn pressure_force_factor(p: f64) -> f64 {
    let p = unit(p);
    if p <= 0.5 {
        2.0 * p
    } else {
        2.0 * p + 8.0 * (p - 0.5) * (p - 0.5)
    }
}

fn unit(value: f64) -> f64 {
    if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(m: &mut MidiExpression, channel: u8, cc: u8, value: u8) -> ChannelAction {
        m.control_change(channel, cc, value as f64 / 127.0)
    }

    #[test]
    fn default_zone_is_lower_with_fifteen_members() {
        let mut m = MidiExpression::default();
        assert_eq!(m.role(0), ChannelRole::Master);
        assert_eq!(m.role(1), ChannelRole::Member(0));
        assert_eq!(m.role(15), ChannelRole::Member(0));
        m.set_mpe(false);
        assert_eq!(m.role(3), ChannelRole::Plain);
    }

    #[test]
    fn configuration_message_sets_both_zones() {
        let mut m = MidiExpression::default();
        // Upper zone of 5 members on channel 16: channels 11..15 (0-based 10..14).
        cc(&mut m, 15, 101, 0);
        cc(&mut m, 15, 100, 6);
        cc(&mut m, 15, 6, 5);
        assert_eq!(m.zones(), (9, 5));
        assert_eq!(m.role(15), ChannelRole::Master);
        assert_eq!(m.role(12), ChannelRole::Member(15));
        assert_eq!(m.role(9), ChannelRole::Member(0));
        assert_eq!(m.role(10), ChannelRole::Member(15));
        // Turning the lower zone off leaves only the upper one.
        cc(&mut m, 0, 101, 0);
        cc(&mut m, 0, 100, 6);
        cc(&mut m, 0, 6, 0);
        assert_eq!(m.role(3), ChannelRole::Plain);
        assert_eq!(m.role(0), ChannelRole::Plain);
    }

    #[test]
    fn member_bend_uses_the_member_range_and_adds_the_master() {
        let mut m = MidiExpression::default();
        let c = Controls::default();
        m.pitch_bend(2, 0.0);
        assert_eq!(m.for_channel(2, &c).bend_st, -c.mpe_bend_range_st);
        m.pitch_bend(2, 8192.0 / 16383.0);
        assert_eq!(m.for_channel(2, &c).bend_st, 0.0);
        m.pitch_bend(2, 0.0);
        m.pitch_bend(0, 0.0);
        assert_eq!(m.for_channel(2, &c).bend_st, -c.mpe_bend_range_st - c.pitch_bend_range_st);
        // RPN 0 on a member sets the range of all members.
        cc(&mut m, 2, 101, 0);
        cc(&mut m, 2, 100, 0);
        cc(&mut m, 2, 6, 24);
        m.pitch_bend(0, 8192.0 / 16383.0);
        assert_eq!(m.for_channel(5, &c).bend_st, 0.0);
        m.pitch_bend(5, 0.0);
        assert_eq!(m.for_channel(5, &c).bend_st, -24.0);
        // MPE off: every channel is plain, with the plain range.
        let mut plain = MidiExpression::default();
        plain.set_mpe(false);
        plain.pitch_bend(7, 0.0);
        assert_eq!(plain.for_channel(7, &c).bend_st, -c.pitch_bend_range_st);
    }

    #[test]
    fn sustain_release_is_reported() {
        let mut m = MidiExpression::default();
        assert_eq!(cc(&mut m, 0, 64, 127), ChannelAction::None);
        assert!(m.sustained(4));
        m.set_mpe(false);
        assert!(!m.sustained(4));
        assert_eq!(cc(&mut m, 0, 64, 0), ChannelAction::SustainReleased(0));
    }

    #[test]
    fn shaping_maps_pressure_slide_and_modulation() {
        let c = Controls::default();
        let channel = ChannelExpression { pressure: Some(0.25), brightness: Some(1.0), ..Default::default() };
        let shaped = shape(&c, &channel, &NoteExpression::default());
        assert!((shaped.controls.bow_force_n - c.bow_force_n * 0.5).abs() < 1e-12);
        assert!((shaped.controls.bow_position - c.bow_position * 0.5).abs() < 1e-12);
        let mut note = NoteExpression::default();
        note.modulate(0, 0.1);
        note.set(ExpressionKind::Tuning, 1.5);
        note.set(ExpressionKind::Vibrato, 0.5);
        let shaped = shape(&c, &ChannelExpression::default(), &note);
        assert!((shaped.controls.bow_force_n - (c.bow_force_n + 0.1 * controls::BOW_FORCE.max)).abs() < 1e-9);
        assert_eq!(shaped.bend_st, 1.5);
        assert_eq!(shaped.vibrato_cents, 0.5 * c.vibrato_depth_cents);
        // The three modulated controls are linear, which `modulate` relies on.
        assert!(POLY_MODULATED.iter().all(|s| s.taper == controls::Taper::Linear));
    }
}

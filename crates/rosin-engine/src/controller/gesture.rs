//! What a touch controller tells the engine: per lane, whether the bow is down and the
//! bow's force, velocity and place, the stopping finger, and the drum bow's place.
//!
//! A lane is one bowed string (or, on the drum, the one bow). With the *One String* pad
//! layout only lane 0 plays; with *Four Strings* lanes 0 to 3 are the G, D, A and E strings.

/// How many lanes a controller can play at once.
pub const LANES: usize = 4;

/// The open strings of the four lanes (MIDI keys): a violin's G3, D4, A4 and E5.
pub const LANE_OPEN_KEYS: [u8; LANES] = [55, 62, 69, 76];

/// The key a pad-played drum sounds at: middle C, where the drum's Tuning control reads
/// as in onofrei2021 (`c = 15 + 13.5 t` m/s).
pub const PAD_DRUM_KEY: u8 = 60;

/// Pad voices are told apart from MIDI voices by channel: lane `k` plays on channel
/// `PAD_CHANNEL + k`, past MIDI's 16 channels.
pub const PAD_CHANNEL: u8 = 16;

/// How long a pad voice's bow takes to press in, and to lift when the finger leaves (or the
/// controller is unplugged): the finger is the bow, so both are short but never a step.
pub const PAD_ATTACK_MS: f64 = 15.0;
pub const PAD_RELEASE_MS: f64 = 40.0;

/// How the pad is split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PadLayout {
    /// The whole pad bows one string (willemsen2019 section 4.2).
    #[default]
    OneString,
    /// Four columns, G D A E from the left, each a string of its own.
    FourStrings,
}

impl PadLayout {
    /// From the `pad_layout` control's value.
    pub fn from_control(value: f64) -> Self {
        if value >= 0.5 {
            Self::FourStrings
        } else {
            Self::OneString
        }
    }

    pub fn lanes(self) -> usize {
        match self {
            Self::OneString => 1,
            Self::FourStrings => LANES,
        }
    }
}

/// One lane's gesture at one moment, in the units of the controls it overrides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneGesture {
    /// A finger is on the lane: the bow is down and the values below apply.
    pub bow_down: bool,
    pub bow_force_n: f64,
    /// Positive is a down-bow (the finger moving towards the player).
    pub bow_velocity_mps: f64,
    /// Bow-bridge distance as a fraction of the vibrating length.
    pub bow_position: f64,
    /// The stopping finger's place as a fraction of the length from the nut, while a
    /// second finger is down.
    pub finger_position: Option<f64>,
    /// The drum bow's place as fractions of the diameter.
    pub drum_bow_x: f64,
    pub drum_bow_y: f64,
}

impl Default for LaneGesture {
    fn default() -> Self {
        Self { bow_down: false, bow_force_n: 0.0, bow_velocity_mps: 0.0, bow_position: 0.18, finger_position: None, drum_bow_x: 0.5, drum_bow_y: 0.5 }
    }
}

impl LaneGesture {
    /// The same gesture with every value finite and inside its control's range.
    pub fn sanitized(&self) -> Self {
        use crate::controls::{BOW_FORCE, BOW_POSITION, BOW_VELOCITY, DRUM_BOW_X, DRUM_BOW_Y, FINGER_POSITION};
        Self {
            bow_down: self.bow_down,
            bow_force_n: BOW_FORCE.clamp(self.bow_force_n),
            bow_velocity_mps: BOW_VELOCITY.clamp(self.bow_velocity_mps),
            bow_position: BOW_POSITION.clamp(self.bow_position),
            finger_position: self.finger_position.filter(|f| f.is_finite()).map(|f| FINGER_POSITION.clamp(f)),
            drum_bow_x: DRUM_BOW_X.clamp(self.drum_bow_x),
            drum_bow_y: DRUM_BOW_Y.clamp(self.drum_bow_y),
        }
    }

    /// The lane lifted: no bow, the values kept (a lifted lane is not read).
    pub fn lifted(&self) -> Self {
        Self { bow_down: false, finger_position: None, ..*self }
    }
}

/// Every lane at one moment.
pub type GestureFrame = [LaneGesture; LANES];

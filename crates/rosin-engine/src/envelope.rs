//! What every bowed voice shares, whatever it bows: the bow's press-and-accelerate attack,
//! its lift on note-off, the voice's life cycle, and the silence detector that frees it.

/// Where a voice is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Free,
    /// The bow is on the string or membrane (or pressing in).
    Bowing,
    /// Note-off: the bow slows and lifts.
    Releasing,
    /// The bow is off; the body rings until it is silent.
    Ringing,
}

/// The bow's pressure and speed, each from 0 (off, at rest) to 1 (full), per sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BowEnvelope {
    phase: Phase,
    pressure: f64,
    speed: f64,
    pressure_step: f64,
    speed_step: f64,
    release_step: f64,
}

impl Default for BowEnvelope {
    fn default() -> Self {
        Self { phase: Phase::Free, pressure: 0.0, speed: 0.0, pressure_step: 0.0, speed_step: 0.0, release_step: 0.0 }
    }
}

impl BowEnvelope {
    /// Puts the bow down. Harder notes press in and accelerate faster: the attack takes from
    /// 1.5x (soft) to 0.5x (hard) of `attack_ms`. The force arrives in half that time,
    /// before the bow reaches full speed, for a clean (Guettler) start. A bow still on the
    /// string (lifting after a note-off) presses in again from where it is: its force never
    /// steps, so a note that follows a note-off at once does not click.
    pub fn start(&mut self, velocity: f64, attack_ms: f64, release_ms: f64, sample_rate_hz: f64) {
        let attack_s = attack_ms * 1e-3 * (1.5 - velocity.clamp(0.0, 1.0));
        self.phase = Phase::Bowing;
        self.speed_step = 1.0 / (attack_s * sample_rate_hz).max(1.0);
        self.pressure_step = 2.0 * self.speed_step;
        self.set_release(release_ms, sample_rate_hz);
    }

    /// Puts the bow down on this string in the middle of a stroke (a string crossing), with
    /// no attack of its own: the pressure comes in over `crossing_ms` and the bow's grip on
    /// the string over twice that. A bow arriving at full speed on a string at rest starts
    /// in double slipping; force first, then speed, is the order Guettler's diagram needs for
    /// Helmholtz motion from the start. A bow still on this string carries on from where it is.
    pub fn start_crossing(&mut self, crossing_ms: f64, release_ms: f64, sample_rate_hz: f64) {
        self.phase = Phase::Bowing;
        self.pressure_step = 1.0 / (crossing_ms * 1e-3 * sample_rate_hz).max(1.0);
        self.speed_step = 0.5 * self.pressure_step;
        self.set_release(release_ms, sample_rate_hz);
    }

    pub fn set_release(&mut self, release_ms: f64, sample_rate_hz: f64) {
        self.release_step = 1.0 / (release_ms * 1e-3 * sample_rate_hz).max(1.0);
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Samples until the bow reaches full speed (0 once it has, or while it is not bowing).
    pub fn attack_remaining_samples(&self) -> u32 {
        if self.phase != Phase::Bowing || self.speed >= 1.0 || self.speed_step <= 0.0 {
            return 0;
        }
        ((1.0 - self.speed) / self.speed_step).ceil() as u32
    }

    /// Whether the bow touches the string: held, or lifting after a note-off.
    pub fn is_on_string(&self) -> bool {
        matches!(self.phase, Phase::Bowing | Phase::Releasing) && self.pressure > 0.0
    }

    /// Note-off: the bow slows down and lifts off.
    pub fn release(&mut self) {
        if self.phase == Phase::Bowing {
            self.phase = Phase::Releasing;
        }
    }

    /// Lifts the bow at once: the body rings on its own.
    pub fn release_now(&mut self) {
        if self.phase != Phase::Free {
            self.phase = Phase::Ringing;
            self.pressure = 0.0;
            self.speed = 0.0;
        }
    }

    pub fn free(&mut self) {
        self.phase = Phase::Free;
        self.pressure = 0.0;
        self.speed = 0.0;
    }

    pub fn pressure(&self) -> f64 {
        self.pressure
    }

    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Whether [`Self::advance`] leaves the envelope as it is: the bow fully down and up
    /// to speed, or off the string.
    #[inline]
    pub fn is_steady(&self) -> bool {
        match self.phase {
            Phase::Bowing => self.bowing_step() == (self.pressure, self.speed),
            Phase::Releasing => false,
            Phase::Ringing | Phase::Free => true,
        }
    }

    /// The pressure and speed one sample on while bowing: what [`Self::advance`] sets, and
    /// what [`Self::is_steady`] compares with.
    #[inline]
    fn bowing_step(&self) -> (f64, f64) {
        ((self.pressure + self.pressure_step).min(1.0), (self.speed + self.speed_step).min(1.0))
    }

    /// Moves one sample on.
    #[inline]
    pub fn advance(&mut self) {
        match self.phase {
            Phase::Bowing => (self.pressure, self.speed) = self.bowing_step(),
            Phase::Releasing => {
                self.pressure = (self.pressure - self.release_step).max(0.0);
                self.speed = (self.speed - self.release_step).max(0.0);
                if self.pressure == 0.0 {
                    self.phase = Phase::Ringing;
                }
            }
            Phase::Ringing | Phase::Free => {}
        }
    }
}

/// A ringing voice quieter than this over a whole detection window is freed (-100 dBFS).
pub const SILENCE_THRESHOLD: f64 = 1e-5;
const SILENCE_WINDOW_S: f64 = 0.05;

/// Watches a voice's output in windows of [`SILENCE_WINDOW_S`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SilenceDetector {
    window_samples: u32,
    window_peak: f64,
    window_left: u32,
    /// The peak of the last whole window.
    last_window_peak: f64,
}

impl SilenceDetector {
    pub fn new(sample_rate_hz: f64) -> Self {
        let window_samples = (SILENCE_WINDOW_S * sample_rate_hz) as u32;
        Self { window_samples, window_peak: 0.0, window_left: window_samples, last_window_peak: 0.0 }
    }

    pub fn reset(&mut self) {
        self.window_peak = 0.0;
        self.window_left = self.window_samples;
        self.last_window_peak = 0.0;
    }

    /// The output's peak over the last one to two windows: how loud the voice is now.
    pub fn recent_peak(&self) -> f64 {
        self.window_peak.max(self.last_window_peak)
    }

    /// Whether a window just ended (a good moment for slower checks).
    pub fn at_window_end(&self) -> bool {
        self.window_left == 0
    }

    /// Takes one output sample; returns true when a whole window stayed below the threshold.
    #[inline]
    pub fn observe(&mut self, output: f64) -> bool {
        self.window_peak = self.window_peak.max(output.abs());
        if self.window_left > 0 {
            self.window_left -= 1;
            return false;
        }
        let silent = self.window_peak < SILENCE_THRESHOLD;
        self.last_window_peak = self.window_peak;
        self.window_peak = 0.0;
        self.window_left = self.window_samples;
        silent
    }
}

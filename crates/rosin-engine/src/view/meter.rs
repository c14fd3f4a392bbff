//! The editor's feedback (issue 19): the output's level since the last snapshot (peak, RMS
//! and whether it clipped), the audio thread's share of its real-time budget, and each
//! sounding voice's note and bow state. Measured on the audio thread with plain numbers (no
//! allocation, no lock) and carried in the views' snapshot ([`super::snapshot::FeedbackView`]).

use crate::envelope::Phase;

/// The level at or above which a sample clips (0 dBFS).
pub const CLIP_LEVEL: f32 = 1.0;
/// The CPU share is averaged over about this long (s).
pub const CPU_AVERAGE_S: f64 = 0.5;

/// The output's level between two snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OutputMeter {
    peak: f32,
    sum_of_squares: f64,
    samples: usize,
    clipped: bool,
}

/// What the meter read since it was last taken.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OutputLevel {
    /// The largest magnitude (linear; 1 is 0 dBFS).
    pub peak: f32,
    pub rms: f32,
    /// Whether any sample reached [`CLIP_LEVEL`].
    pub clipped: bool,
}

impl OutputMeter {
    /// Takes a block of output samples.
    #[inline]
    pub fn observe(&mut self, samples: &[f32]) {
        for &s in samples {
            let magnitude = s.abs();
            self.peak = self.peak.max(magnitude);
            self.sum_of_squares += (s as f64) * (s as f64);
        }
        self.samples += samples.len();
        self.clipped |= self.peak >= CLIP_LEVEL;
    }

    /// The level since the last call, and a fresh start.
    pub fn take(&mut self) -> OutputLevel {
        let rms = if self.samples > 0 { (self.sum_of_squares / self.samples as f64).sqrt() as f32 } else { 0.0 };
        let level = OutputLevel { peak: self.peak, rms, clipped: self.clipped };
        *self = Self::default();
        level
    }
}

/// The audio thread's share of its real-time budget: the time `process()` took over the
/// audio it made, averaged over about [`CPU_AVERAGE_S`] of audio.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuMeter {
    share: f64,
}

impl CpuMeter {
    /// One call took `busy_s` to make `audio_s` of audio.
    #[inline]
    pub fn observe(&mut self, busy_s: f64, audio_s: f64) {
        if !(audio_s > 0.0) || !busy_s.is_finite() || busy_s < 0.0 {
            return;
        }
        // An exponential average whose weight follows the audio the call made, so a host's
        // block size does not change how long the readout remembers.
        let weight = (audio_s / CPU_AVERAGE_S).min(1.0);
        self.share += weight * (busy_s / audio_s - self.share);
    }

    /// The averaged share (1 is the whole budget).
    pub fn share(&self) -> f64 {
        self.share
    }
}

/// What a sounding voice's bow is doing, for the editor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BowState {
    #[default]
    Free,
    /// The bow is coming in: its pressure or speed is still rising.
    Attack,
    Sustained,
    /// Note-off: the bow slows and lifts.
    Releasing,
    /// The bow is off and the string or membrane rings.
    Ringing,
}

impl BowState {
    /// The state of a voice in `phase` whose bow is at `pressure` and `speed` (0 to 1).
    pub fn of(phase: Phase, pressure: f64, speed: f64) -> Self {
        match phase {
            Phase::Free => BowState::Free,
            Phase::Bowing if pressure < 1.0 || speed < 1.0 => BowState::Attack,
            Phase::Bowing => BowState::Sustained,
            Phase::Releasing => BowState::Releasing,
            Phase::Ringing => BowState::Ringing,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BowState::Free => "free",
            BowState::Attack => "attack",
            BowState::Sustained => "sustained",
            BowState::Releasing => "releasing",
            BowState::Ringing => "ringing",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meter_reads_peak_rms_and_clipping_and_starts_afresh() {
        let mut meter = OutputMeter::default();
        meter.observe(&[0.5, -0.5, 0.5, -0.5]);
        let level = meter.take();
        assert_eq!((level.peak, level.rms, level.clipped), (0.5, 0.5, false));
        meter.observe(&[0.1, -1.2]);
        assert!(meter.take().clipped);
        assert_eq!(meter.take(), OutputLevel::default());
    }

    #[test]
    fn the_cpu_share_settles_on_the_busy_fraction_whatever_the_block() {
        for block_s in [64.0 / 48_000.0, 4096.0 / 48_000.0] {
            let mut cpu = CpuMeter::default();
            for _ in 0..(3.0 / block_s) as usize {
                cpu.observe(0.25 * block_s, block_s);
            }
            assert!((cpu.share() - 0.25).abs() < 1e-3, "{block_s}: {}", cpu.share());
        }
    }
}

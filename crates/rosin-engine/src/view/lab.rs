//! The live lab view's capture (issue 17): for the loudest sounding voice, string or drum,
//! the bow's contact at every sample (the friction force, the relative velocity the law
//! sees, and the velocity of the string or membrane under the bow), kept in a ring on the
//! audio thread and copied into the views' snapshot ([`super::snapshot::LabView`]). The
//! editor draws the hysteresis loop over the law's steady curve
//! ([`rosin_physics::bow::contact::steady_friction_force_n`]), a stick/slip strip and the
//! bow-point velocity from it.
//!
//! Fixed arrays only: recording a sample writes three numbers and moves an index, so it
//! never allocates. Which voice is followed is chosen at the start of a block, every
//! [`LAB_CHOOSE_SAMPLES`], from each voice's recent peak level; a voice is only left for one at least [`SWITCH_RATIO`] louder
//! (or when it ends), so a chord's loop does not jump between its notes.

use crate::drum_voice::DrumVoice;
use crate::voice::StringVoice;
pub use crate::view::probe::ContactProbe;

/// Samples kept: 85 ms at 48 kHz, four periods of E2, more than one of the lowest string.
pub const LAB_SAMPLES: usize = 4096;
/// How often the engine looks for the loudest voice (samples; 21 ms at 48 kHz), at the
/// start of the first block after each such stretch: looking costs a pass over every voice,
/// which at every block of a small host buffer would cost as much as the recording.
pub const LAB_CHOOSE_SAMPLES: usize = 1024;
/// How much louder another voice must be for the lab to follow it instead.
pub const SWITCH_RATIO: f64 = 2.0;
/// A stuck contact starts to slip when the law's relative velocity passes this multiple of
/// the bow's speed (in Helmholtz motion the string flies back at `vB / beta`, at least twice
/// the bow's speed), and sticks again when it falls within [`STICK_FRACTION_OF_BOW_SPEED`]
/// of it: the gap keeps the bristles' creep and the hair's ringing from reading as slips.
pub const SLIP_FRACTION_OF_BOW_SPEED: f64 = 1.0;
pub const STICK_FRACTION_OF_BOW_SPEED: f64 = 0.25;
/// The thresholds' floor (m/s), for a bow at rest.
pub const STICK_FLOOR_MPS: f64 = 1e-4;

/// The stick/slip strip: `true` where the contact sticks, for each sample of
/// `law_velocity_mps` with the bow at `bow_velocity_mps` (see [`SLIP_FRACTION_OF_BOW_SPEED`]).
pub fn stick_slip(law_velocity_mps: &[f32], bow_velocity_mps: f64, sticking: &mut [bool]) {
    let speed = bow_velocity_mps.abs();
    let (slip, stick) = ((SLIP_FRACTION_OF_BOW_SPEED * speed).max(STICK_FLOOR_MPS), (STICK_FRACTION_OF_BOW_SPEED * speed).max(STICK_FLOOR_MPS));
    let mut stuck = law_velocity_mps.first().is_some_and(|v| (v.abs() as f64) < slip);
    for (v, out) in law_velocity_mps.iter().zip(sticking.iter_mut()) {
        let v = v.abs() as f64;
        stuck = if stuck { v < slip } else { v <= stick };
        *out = stuck;
    }
}

/// The voice the lab follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabSource {
    String(usize),
    Drum(usize),
}

/// The audio thread's ring of the followed voice's contact.
pub struct LabRecorder {
    source: Option<LabSource>,
    /// Bumped each time the source changes, so the editor can restart its drawing.
    generation: u32,
    force_n: [f32; LAB_SAMPLES],
    law_velocity_mps: [f32; LAB_SAMPLES],
    bow_point_velocity_mps: [f32; LAB_SAMPLES],
    next: usize,
    filled: usize,
}

impl Default for LabRecorder {
    fn default() -> Self {
        Self {
            source: None,
            generation: 0,
            force_n: [0.0; LAB_SAMPLES],
            law_velocity_mps: [0.0; LAB_SAMPLES],
            bow_point_velocity_mps: [0.0; LAB_SAMPLES],
            next: 0,
            filled: 0,
        }
    }
}

impl LabRecorder {
    pub fn source(&self) -> Option<LabSource> {
        self.source
    }

    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// How many samples the ring holds (up to [`LAB_SAMPLES`]).
    pub fn len(&self) -> usize {
        self.filled
    }

    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Follows the loudest sounding voice (see the module's notes); with none, nothing.
    pub fn choose(&mut self, strings: &[StringVoice], drums: &[DrumVoice]) {
        let level_of = |source: LabSource| match source {
            LabSource::String(i) => strings.get(i).filter(|v| !v.is_free()).map(|v| v.recent_peak() * v.evening_gain()),
            LabSource::Drum(i) => drums.get(i).filter(|v| !v.is_free()).map(|v| v.recent_peak()),
        };
        let loudest = (0..strings.len())
            .map(LabSource::String)
            .chain((0..drums.len()).map(LabSource::Drum))
            .filter_map(|s| level_of(s).map(|level| (s, level)))
            .fold(None, |best: Option<(LabSource, f64)>, (s, level)| match best {
                Some((_, top)) if top >= level => best,
                _ => Some((s, level)),
            });
        let current = self.source.and_then(level_of);
        let next = match (current, loudest) {
            (Some(level), Some((s, top))) if top > SWITCH_RATIO * level => Some(s),
            (Some(_), _) => self.source,
            (None, found) => found.map(|(s, _)| s),
        };
        if next != self.source {
            self.source = next;
            self.generation = self.generation.wrapping_add(1);
            self.next = 0;
            self.filled = 0;
        }
    }

    /// Records one sample of the followed voice, if any.
    #[inline]
    pub fn record(&mut self, strings: &[StringVoice], drums: &[DrumVoice]) {
        let probe = match self.source {
            Some(LabSource::String(i)) => strings[i].contact_probe(),
            Some(LabSource::Drum(i)) => drums[i].contact_probe(),
            None => return,
        };
        self.force_n[self.next] = probe.force_n as f32;
        self.law_velocity_mps[self.next] = probe.law_velocity_mps as f32;
        self.bow_point_velocity_mps[self.next] = probe.bow_point_velocity_mps as f32;
        self.next = (self.next + 1) % LAB_SAMPLES;
        self.filled = (self.filled + 1).min(LAB_SAMPLES);
    }

    /// Copies the ring, oldest first, into the three slices (each [`LAB_SAMPLES`] long);
    /// returns how many samples are valid (at their start).
    pub fn copy_into(&self, force_n: &mut [f32], law_velocity_mps: &mut [f32], bow_point_velocity_mps: &mut [f32]) -> usize {
        let start = (self.next + LAB_SAMPLES - self.filled) % LAB_SAMPLES;
        for (ring, out) in [(&self.force_n, force_n), (&self.law_velocity_mps, law_velocity_mps), (&self.bow_point_velocity_mps, bow_point_velocity_mps)] {
            let first = (LAB_SAMPLES - start).min(self.filled);
            out[..first].copy_from_slice(&ring[start..start + first]);
            out[first..self.filled].copy_from_slice(&ring[..self.filled - first]);
        }
        self.filled
    }
}

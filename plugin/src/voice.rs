//! One string voice: a bowed string tuned to a MIDI note, with the bow's envelope (press,
//! accelerate, lift), per-sample control ramps, oversampling for high notes, silence
//! detection and recovery from a diverged state.

use crate::controls::Controls;
pub use crate::envelope::Phase;
use crate::envelope::{BowEnvelope, SilenceDetector};
use crate::dsp::dc_blocker::DcBlocker;
use crate::dsp::decimator::{Decimator, MAX_FACTOR};
use crate::dsp::ramp::LinearRamp;
use crate::physics::bowed_string::{BowedString, BowingControls};
use crate::physics::friction::ElastoPlasticParams;
use crate::physics::intonation::Intonation;
use crate::physics::note_string::{losses_for, NoteStringDesign, REFERENCE_IMPEDANCE_KG_PER_S, REFERENCE_WAVE_SPEED_MPS};
use crate::physics::tuning::midi_key_to_hz;

/// The most grid intervals a voice's string can have (the lowest note at 192 kHz needs
/// about 560).
pub const MAX_INTERVALS: usize = 1024;
/// Grids coarser than this are run oversampled: a bowed string needs enough nodes for
/// Helmholtz motion to stay in tune.
pub const MIN_BOWED_INTERVALS: usize = 32;
/// How long a control takes to reach a new value.
pub const CONTROL_RAMP_S: f64 = 0.010;
/// From the bridge force over the string impedance (m/s), with its steady part removed, to
/// full scale: a forte note with default controls peaks near -6 dBFS.
pub const OUTPUT_SCALE: f64 = 0.7;
/// A string displacement beyond this (metres) means the simulation has diverged.
const DIVERGED_DISPLACEMENT_M: f64 = 0.05;

/// Which note a voice plays, for matching note-offs and reporting terminations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoteId {
    pub channel: u8,
    pub note: u8,
    pub voice_id: Option<i32>,
}

pub struct StringVoice {
    bowed: BowedString,
    decimator: Decimator,
    dc_blocker: DcBlocker,
    sample_rate_hz: f64,
    envelope: BowEnvelope,
    pub note: NoteId,
    /// Note-on order; the smallest is the oldest.
    pub age: u64,
    velocity: f64,
    force: LinearRamp,
    bow_velocity: LinearRamp,
    position: LinearRamp,
    noise: LinearRamp,
    damping: LinearRamp,
    finger: LinearRamp,
    stiffness: LinearRamp,
    static_friction: LinearRamp,
    dynamic_friction: LinearRamp,
    stribeck: LinearRamp,
    intonation_strength: LinearRamp,
    intonation: Intonation,
    /// The wave speed the tuning solve gave; intonation scales it.
    tuned_wave_speed_mps: f64,
    /// `2 f0 L`, which the grid's losses are designed from.
    nominal_wave_speed_mps: f64,
    /// The open string's period at the rate the string runs at.
    open_period_samples: f64,
    /// `s0` scale for this string: the bristles are as stiff relative to the string's tension
    /// as on the reference string.
    stiffness_scale: f64,
    silence: SilenceDetector,
    last_output: f64,
    applied: BowingControls,
    recoveries: u64,
}

impl StringVoice {
    /// Allocates a voice for `sample_rate_hz`. Nothing allocates after this.
    pub fn new(sample_rate_hz: f64) -> Self {
        let (grid, material) = NoteStringDesign::default().build(440.0, sample_rate_hz, MAX_INTERVALS);
        let ramp = |v: f64| LinearRamp::new(v, LinearRamp::samples_for(CONTROL_RAMP_S, sample_rate_hz));
        let c = Controls::default();
        Self {
            bowed: BowedString::with_capacity(MAX_INTERVALS, grid, material, ElastoPlasticParams::default(), 0),
            decimator: Decimator::new(1),
            dc_blocker: DcBlocker::new(sample_rate_hz),
            sample_rate_hz,
            envelope: BowEnvelope::default(),
            note: NoteId { channel: 0, note: 69, voice_id: None },
            age: 0,
            velocity: 1.0,
            force: ramp(c.bow_force_n),
            bow_velocity: ramp(c.bow_velocity_mps),
            position: ramp(c.bow_position),
            noise: ramp(c.noise),
            damping: ramp(c.damping_scale),
            finger: ramp(c.finger_position),
            stiffness: ramp(c.bristle_stiffness_n_per_m),
            static_friction: ramp(c.static_friction),
            dynamic_friction: ramp(c.dynamic_friction),
            stribeck: ramp(c.stribeck_velocity_mps),
            intonation_strength: ramp(c.intonation_percent / 100.0),
            intonation: Intonation::new(100.0),
            tuned_wave_speed_mps: grid.wave_speed_mps,
            nominal_wave_speed_mps: grid.wave_speed_mps,
            open_period_samples: sample_rate_hz / 440.0,
            stiffness_scale: 1.0,
            silence: SilenceDetector::new(sample_rate_hz),
            last_output: 0.0,
            applied: BowingControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_position: c.bow_position, finger_position_m: None },
            recoveries: 0,
        }
    }

    pub fn phase(&self) -> Phase {
        self.envelope.phase()
    }

    pub fn is_free(&self) -> bool {
        self.phase() == Phase::Free
    }

    /// Whether the bow is down for a held note (not yet released).
    pub fn is_held(&self) -> bool {
        self.phase() == Phase::Bowing
    }

    pub fn bowed_string(&self) -> &BowedString {
        &self.bowed
    }

    pub fn oversampling(&self) -> usize {
        self.decimator.factor()
    }

    pub fn last_output(&self) -> f64 {
        self.last_output
    }

    /// The pitch tracker (its slip count shows whether the string is in Helmholtz motion).
    pub fn intonation(&self) -> &Intonation {
        &self.intonation
    }

    /// The bowing controls applied at the last sample, after ramps and envelopes.
    pub fn applied_controls(&self) -> &BowingControls {
        &self.applied
    }

    /// The damping scale applied at the last sample.
    pub fn applied_damping_scale(&self) -> f64 {
        self.damping.value()
    }

    /// How often this voice had to be recovered from a diverged state.
    pub fn recoveries(&self) -> u64 {
        self.recoveries
    }

    /// Starts a note: tunes a fresh string to it and puts the bow down.
    pub fn start(&mut self, note: NoteId, velocity: f64, age: u64, controls: &Controls) {
        let frequency_hz = midi_key_to_hz(note.note as f64);
        let design = NoteStringDesign { inharmonicity: controls.string_stiffness, damping_scale: controls.damping_scale, ..NoteStringDesign::default() };
        let mut factor = 1;
        let (mut grid, mut material) = design.build(frequency_hz, self.sample_rate_hz, MAX_INTERVALS);
        while grid.intervals < MIN_BOWED_INTERVALS && factor < MAX_FACTOR {
            factor *= 2;
            (grid, material) = design.build(frequency_hz, self.sample_rate_hz * factor as f64, MAX_INTERVALS);
        }
        self.stiffness_scale = (design.nominal_wave_speed_mps(frequency_hz) / REFERENCE_WAVE_SPEED_MPS).max(1.0);
        // The noise sequence depends only on the note's order, so a reset replays exactly.
        self.bowed.configure(grid, material, 0x9E37_79B9_7F4A_7C15 ^ age);
        self.tuned_wave_speed_mps = grid.wave_speed_mps;
        self.nominal_wave_speed_mps = design.nominal_wave_speed_mps(frequency_hz);
        self.open_period_samples = self.sample_rate_hz * factor as f64 / frequency_hz;
        self.intonation = Intonation::new(self.open_period_samples);
        if self.decimator.factor() != factor {
            self.decimator = Decimator::new(factor);
        } else {
            self.decimator.reset();
        }
        self.dc_blocker.reset();
        self.note = note;
        self.age = age;
        self.velocity = velocity.clamp(0.0, 1.0);
        self.envelope.start(self.velocity, controls.bow_attack_ms, controls.bow_release_ms, self.sample_rate_hz);
        self.snap_controls(controls);
        self.silence.reset();
        self.last_output = 0.0;
    }

    fn snap_controls(&mut self, c: &Controls) {
        self.force.snap(c.bow_force_n);
        self.bow_velocity.snap(c.bow_velocity_mps);
        self.position.snap(c.bow_position);
        self.noise.snap(c.noise);
        self.damping.snap(c.damping_scale);
        self.finger.snap(c.finger_position);
        self.stiffness.snap(c.bristle_stiffness_n_per_m);
        self.static_friction.snap(c.static_friction);
        self.dynamic_friction.snap(c.dynamic_friction);
        self.stribeck.snap(c.stribeck_velocity_mps);
        self.intonation_strength.snap(c.intonation_percent / 100.0);
    }

    /// New control targets; each ramps there over [`CONTROL_RAMP_S`].
    pub fn set_controls(&mut self, c: &Controls) {
        self.force.set_target(c.bow_force_n);
        self.bow_velocity.set_target(c.bow_velocity_mps);
        self.position.set_target(c.bow_position);
        self.noise.set_target(c.noise);
        self.damping.set_target(c.damping_scale);
        self.finger.set_target(c.finger_position);
        self.stiffness.set_target(c.bristle_stiffness_n_per_m);
        self.static_friction.set_target(c.static_friction);
        self.dynamic_friction.set_target(c.dynamic_friction);
        self.stribeck.set_target(c.stribeck_velocity_mps);
        self.intonation_strength.set_target(c.intonation_percent / 100.0);
        self.envelope.set_release(c.bow_release_ms, self.sample_rate_hz);
    }

    /// Note-off: the bow slows down and lifts off.
    pub fn release(&mut self) {
        self.envelope.release();
    }

    #[doc(hidden)]
    pub fn corrupt_for_test(&mut self) {
        let n = self.bowed.string.intervals();
        let mut shape = vec![0.0; n + 1];
        shape[n / 2] = f64::NAN;
        self.bowed.string.set_state(&shape, &shape);
    }

    /// Silences and frees the voice at once.
    pub fn kill(&mut self) {
        self.envelope.free();
        self.bowed.string.reset();
        self.decimator.reset();
        self.dc_blocker.reset();
        self.last_output = 0.0;
    }

    /// Renders one host sample, before the output gain.
    #[inline]
    pub fn tick(&mut self) -> f64 {
        if self.is_free() {
            return 0.0;
        }
        self.envelope.advance();
        let damping = self.damping.next();
        let grid = *self.bowed.string.grid();
        // Losses follow the note's nominal wave speed, exactly as the grid was designed for,
        // never the intonation-corrected one, so the stability margin for the largest
        // damping holds.
        let (sigma0, sigma1) = losses_for(self.nominal_wave_speed_mps, damping);
        self.bowed.string.set_losses(sigma0, sigma1);

        let friction = &mut self.bowed.bow.friction;
        let s0 = self.stiffness.next() * self.stiffness_scale;
        friction.bristle_stiffness_n_per_m = s0;
        friction.bristle_damping_kg_per_s = 0.001 * s0.sqrt();
        friction.static_coefficient = self.static_friction.next();
        friction.coulomb_coefficient = self.dynamic_friction.next().min(friction.static_coefficient);
        friction.stribeck_velocity_mps = self.stribeck.next();
        friction.noise_per_normal_force = self.noise.next();

        let force = self.force.next() * self.envelope.pressure() * (0.6 + 0.4 * self.velocity);
        let finger = self.finger.next();
        let controls = BowingControls {
            normal_force_n: force,
            bow_velocity_mps: self.bow_velocity.next() * self.envelope.speed(),
            bow_position: self.position.next(),
            finger_position_m: (finger > 0.0).then(|| finger * grid.length_m),
        };
        let strength = self.intonation_strength.next();
        // A stopped string's period is shorter in proportion to its vibrating length.
        self.intonation.set_target_period(self.open_period_samples * (1.0 - finger));
        for _ in 0..self.decimator.factor() {
            let bridge_force = self.bowed.tick(&controls);
            self.decimator.push(bridge_force);
            self.intonation.observe(self.bowed.last_contact().relative_velocity_mps, controls.bow_velocity_mps, strength);
        }
        self.bowed.string.set_wave_speed(self.tuned_wave_speed_mps * self.intonation.correction());
        self.applied = controls;
        let output = self.dc_blocker.process(self.decimator.output()) / REFERENCE_IMPEDANCE_KG_PER_S * OUTPUT_SCALE;
        if !output.is_finite() || output.abs() > 1e3 || (self.silence.at_window_end() && !self.bowed.string.is_sane(DIVERGED_DISPLACEMENT_M)) {
            // A diverged voice is silenced and freed; the host never sees the NaN.
            self.recoveries += 1;
            self.kill();
            return 0.0;
        }
        self.last_output = output;
        self.track_silence(output);
        output
    }

    fn track_silence(&mut self, output: f64) {
        if self.silence.observe(output) && self.phase() == Phase::Ringing {
            self.kill();
        }
    }
}

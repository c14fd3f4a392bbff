//! One friction-drum voice: the membrane and tube of [`rosin_physics::drum::friction_drum`] tuned to a
//! MIDI note, bowed with the same envelope as a string, every control ramped per sample.
//!
//! The paper's controls arrive on its 0..10 scale and mean, in SI units:
//! - Tuning `t`: the wave speed for middle C, `c60 = 15 + 13.5 t` m/s. Key `K` plays
//!   `c = c_tune(K) * c60 / c60(6.5)`, where `c_tune(K)` puts the scheme's own (0,1) mode
//!   (staircase, grid and time step included) on `440 * 2^((K - 69) / 12)` Hz. At the
//!   default 6.5 every key is in tune; turning Tuning moves every key like tension.
//!   `c` is clamped to 15..150 m/s (the grid's design range), so at the default keys from
//!   about MIDI 27 to 66 are in tune and the rest stop at the range's ends.
//! - Damping `d`: `sigma0 = 0.6 d` 1/s and `sigma1 = 0.00026 d` m^2/s.
//! - Noise `n`: `s3 = 0.004 n fN`.
//! - Variation `v` and Rate `r`: vibrato of `0.3 v` m/s on `c` at `r` Hz.
//! - Gain `g`: `4 (g - 5)` dB on the output. The output is also scaled by `c / c60(6.5)`,
//!   since the membrane's displacement grows about as `1 / c`.
//! - Drum Radiation `r` (Rosin's own, 0 to 100 %): at 0 the output is the open end's
//!   displacement as above, to the bit; at 100 % the membrane's mean velocity under the
//!   tube (the connection's `I_t zeta`, differenced) times [`MEMBRANE_RADIATION_S`], not
//!   scaled by `c`; between, the blend `(1 - r) open + r membrane`. The open end's level
//!   jumps from key to key with the tube's resonances; the membrane's does not.
//!
//! Bow force and velocity are the string's parameters, used as the paper's `fN` and `vB`
//! (no per-string Schelleng mapping: one membrane, the paper's ranges). Drum Friction
//! Model chooses the bow's law from the strings' laws
//! ([`rosin_physics::bow::contact::FrictionContact`]), through the same contact line
//! `v = v_free - coupling f`; it is taken up when a note starts on a drum at rest. Every law
//! reads the paper's bow (`muS`, `muC`, `vS`, `s0`, `s1`, `s2`); [`LawBow`] adapts it where a
//! law needs it to hold the tone: Dahl's law presses a softer bristle harder, and the
//! hyperbolic law takes a sharper knee, a viscous branch and a stronger force.
//!
//! Two things are Rosin's own, so that the drum plays across its keys (`docs/physics.md`):
//! below [`BRISTLE_REFERENCE_WAVE_SPEED_MPS`] the bristles soften as `c^2`, as the
//! membrane's tension does; and an ear ([`Intonation::observe_wave`]) takes out the bow's
//! flattening by correcting the wave speed. The Paper resolution keeps the paper's bow.

use crate::controls::Controls;
use crate::expression::NoteExpression;
use crate::dsp::dc_blocker::DcBlocker;
use crate::dsp::ramp::LinearRamp;
use crate::dsp::rotor::SineRotor;
use crate::envelope::{BowEnvelope, Phase, SilenceDetector};
use rosin_physics::drum::friction_drum::{fundamental_eigenvalue, wave_speed_for_mode, DrumControls, DrumDesign, DrumQuality, FrictionDrum, MAX_SIGMA0_PER_S, MAX_SIGMA1_M2_PER_S, MAX_TUNING_WAVE_SPEED_MPS, MAX_VIBRATO_DEPTH_MPS, MIN_TUNING_WAVE_SPEED_MPS};
use rosin_physics::bow::contact::{FrictionContact, FrictionModel};
use rosin_physics::friction::dupont::ElastoPlasticParams;
use rosin_physics::friction::hyperbolic::STICK_DAMPING_PER_MOBILITY;
use rosin_physics::drum::membrane::{Membrane, MembraneTuning};
use rosin_physics::string::intonation::Intonation;
use rosin_physics::string::tuning::{midi_key_to_hz, semitones_to_ratio};
use crate::voice::{played_force_share, NoteId};

/// The open end's displacement (m) to full scale, for middle C's wave speed: a default
/// note peaks near -6 dBFS.
pub const OUTPUT_SCALE_PER_M: f64 = 8000.0;
/// The membrane's velocity (m/s) to the open end's displacement (m) it is heard as at
/// Drum Radiation 100 %: at the default controls a middle C is as loud from either.
pub const MEMBRANE_RADIATION_S: f64 = 7.5e-4;
/// Drum Gain: 5 is 0 dB, each step of the 0..10 scale 4 dB (-20 to +20 dB).
pub const GAIN_DB_PER_STEP: f64 = 4.0;
/// The bow stays this far inside the rim, as a fraction of the radius.
pub const MAX_BOW_RADIUS: f64 = 0.9;
/// A displacement beyond this (metres) means the simulation has diverged.
const DIVERGED_DISPLACEMENT_M: f64 = 0.05;

/// The wave speed for middle C at a Tuning value on the paper's scale.
pub fn tuning_wave_speed_mps(tuning: f64) -> f64 {
    MIN_TUNING_WAVE_SPEED_MPS + (MAX_TUNING_WAVE_SPEED_MPS - MIN_TUNING_WAVE_SPEED_MPS) * tuning / 10.0
}

/// The Tuning value at which every key is in tune.
pub const IN_TUNE_TUNING: f64 = 6.5;

fn quality_from(control: f64) -> DrumQuality {
    DrumQuality::ALL[(control.round().max(0.0) as usize).min(DrumQuality::ALL.len() - 1)]
}

/// The number format of the playing drum's membrane and tube: f32, eight points to an AVX2
/// vector instead of f64's four, which halves the membrane's cost, the drum's largest, and
/// the tube's. The tests prove the scheme in f64, and `tests/drum_physics.rs` measures what
/// f32 changes: the modes of each, the connection, the energy and a bowed note against f64.
pub type DrumSample = f32;

pub struct DrumVoice {
    drum: FrictionDrum<DrumSample>,
    dc_blocker: DcBlocker,
    sample_rate_hz: f64,
    envelope: BowEnvelope,
    silence: SilenceDetector,
    pub note: NoteId,
    /// The note's own expressions (note expressions, poly modulation), cleared at note-on.
    pub expression: NoteExpression,
    pub age: u64,
    /// The take whose bow noise this voice's notes draw ([`crate::voice::noise_seed`]).
    pub(crate) take: u64,
    velocity: f64,
    /// Per quality: the grid's intervals and its (0,1) eigenvalue, computed once.
    grids: [(usize, f64); 3],
    tube_intervals: usize,
    /// The in-tune wave speed of the note being played.
    note_wave_speed_mps: f64,
    /// Played on the paper's grid, with the paper's bow.
    paper: bool,
    /// The waver's wave.
    vibrato: SineRotor,
    /// The Gain control last applied, and its linear gain: `powf` only when it moves.
    gain_applied: (f64, f64),
    bend_st: LinearRamp,
    force: LinearRamp,
    bow_velocity: LinearRamp,
    bow_x: LinearRamp,
    bow_y: LinearRamp,
    tuning: LinearRamp,
    damping: LinearRamp,
    noise: LinearRamp,
    variation: LinearRamp,
    rate: LinearRamp,
    gain: LinearRamp,
    intonation_strength: LinearRamp,
    /// The player's ear, as on a string: the bowed membrane plays flat of its free (0,1)
    /// mode (up to 45 cents low on the keyboard), and this takes it out.
    intonation: Intonation,
    last_output: f64,
    applied: DrumControls,
    recoveries: u64,
    /// How the note's friction law meets the membrane.
    law_bow: LawBow,
    /// Drum Radiation, 0 to 1: how much is heard from the membrane.
    radiation: LinearRamp,
    /// The membrane's displacement under the tube at the last sample (m).
    last_connected_m: f64,
}

impl DrumVoice {
    /// Allocates a voice whose grids hold the full quality at `sample_rate_hz`. Nothing
    /// allocates after this.
    pub fn new(sample_rate_hz: f64) -> Self {
        let design = DrumDesign::default();
        let k = 1.0 / sample_rate_hz;
        let grids = DrumQuality::ALL.map(|quality| {
            let n = quality.membrane_intervals(&design.membrane, sample_rate_hz);
            let membrane = Membrane::<DrumSample>::with_capacity(n, design.membrane, design.shape, n, k);
            (n, fundamental_eigenvalue(&membrane))
        });
        Self::with_grids(sample_rate_hz, design, grids)
    }

    /// Another voice for the same sample rate, reusing this one's measured grids.
    pub fn duplicate(&self) -> Self {
        Self::with_grids(self.sample_rate_hz, *self.drum.design(), self.grids)
    }

    fn with_grids(sample_rate_hz: f64, design: DrumDesign, grids: [(usize, f64); 3]) -> Self {
        let k = 1.0 / sample_rate_hz;
        let full = grids[0].0;
        let tube_intervals = design.tube.intervals_at_limit(k);
        let friction = paper_friction();
        let ramp = |v: f64| LinearRamp::control(v, sample_rate_hz);
        let c = Controls::default();
        Self {
            drum: FrictionDrum::with_capacity(full, tube_intervals, design, sample_rate_hz, friction, 0),
            dc_blocker: DcBlocker::new(sample_rate_hz),
            sample_rate_hz,
            envelope: BowEnvelope::default(),
            silence: SilenceDetector::new(sample_rate_hz),
            note: NoteId { channel: 0, note: 60, voice_id: None },
            expression: NoteExpression::default(),
            age: 0,
            take: 0,
            velocity: 1.0,
            grids,
            tube_intervals,
            note_wave_speed_mps: tuning_wave_speed_mps(IN_TUNE_TUNING),
            paper: false,
            vibrato: SineRotor::default(),
            gain_applied: (f64::NAN, 1.0),
            bend_st: LinearRamp::pitch_smoother(sample_rate_hz),
            force: ramp(c.bow_force_n),
            bow_velocity: ramp(c.bow_velocity_mps),
            bow_x: ramp(c.drum_bow_x),
            bow_y: ramp(c.drum_bow_y),
            tuning: ramp(c.drum_tuning),
            damping: ramp(c.drum_damping),
            noise: ramp(c.drum_noise),
            variation: ramp(c.drum_variation),
            rate: ramp(c.drum_rate),
            gain: ramp(c.drum_gain),
            intonation_strength: ramp(c.intonation_percent / 100.0),
            intonation: Intonation::new(100.0),
            last_output: 0.0,
            applied: DrumControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_x_m: 0.15, bow_y_m: 0.15, tuning: MembraneTuning::default() },
            recoveries: 0,
            law_bow: LawBow::AS_PLAYED,
            radiation: ramp(c.drum_radiation_percent / 100.0),
            last_connected_m: 0.0,
        }
    }

    pub fn phase(&self) -> Phase {
        self.envelope.phase()
    }

    pub fn is_free(&self) -> bool {
        self.phase() == Phase::Free
    }

    pub fn is_held(&self) -> bool {
        self.phase() == Phase::Bowing
    }

    /// What the bow is doing, for the editor.
    pub fn bow_state(&self) -> crate::view::meter::BowState {
        crate::view::meter::BowState::of(self.phase(), self.envelope.pressure(), self.envelope.speed())
    }

    /// How loud the voice is now: its output's peak over the last 50 to 100 ms.
    pub fn recent_peak(&self) -> f64 {
        self.silence.recent_peak()
    }

    /// The bow's contact at the last sample, for the lab view.
    #[inline]
    pub fn contact_probe(&self) -> crate::view::probe::ContactProbe {
        let contact = self.drum.last_contact();
        crate::view::probe::ContactProbe {
            force_n: contact.force_n,
            law_velocity_mps: self.drum.bow.interface_velocity_mps(),
            bow_point_velocity_mps: contact.relative_velocity_mps + self.applied.bow_velocity_mps,
            bow_velocity_mps: self.applied.bow_velocity_mps,
            normal_force_n: self.applied.normal_force_n,
        }
    }

    /// The friction controls the bow reads now.
    pub fn friction_params(&self) -> &ElastoPlasticParams {
        &self.drum.bow.friction
    }

    /// The hyperbolic law's viscous branch (s/m; [`LawBow::viscous_s_per_m`]), for the lab
    /// view's steady curve.
    pub fn hyperbolic_viscous_s_per_m(&self) -> f64 {
        self.drum.bow.hyperbolic_viscous_s_per_m
    }

    /// The friction law the bow follows.
    pub fn friction_model(&self) -> FrictionModel {
        self.drum.bow.model()
    }

    pub fn drum(&self) -> &FrictionDrum<DrumSample> {
        &self.drum
    }

    pub fn last_output(&self) -> f64 {
        self.last_output
    }

    /// The drum's controls applied at the last sample, after ramps, envelope and vibrato.
    pub fn applied_controls(&self) -> &DrumControls {
        &self.applied
    }

    pub fn recoveries(&self) -> u64 {
        self.recoveries
    }

    /// The ear that keeps the bowed pitch on the note.
    pub fn intonation(&self) -> &Intonation {
        &self.intonation
    }

    /// The wave speed that puts key `key`'s (0,1) mode in tune on the grid of `quality`.
    pub fn in_tune_wave_speed_mps(&self, key: f64, quality: DrumQuality) -> f64 {
        let (n, eigenvalue) = self.grids[quality as usize];
        let h = self.drum.design().membrane.side_m / n as f64;
        wave_speed_for_mode(midi_key_to_hz(key), eigenvalue, h, 1.0 / self.sample_rate_hz)
    }

    /// Starts a note on a drum at rest, on the grid the quality control asks for.
    pub fn start(&mut self, note: NoteId, velocity: f64, age: u64, controls: &Controls) {
        self.expression = NoteExpression::default();
        let quality = quality_from(controls.drum_quality);
        let design = *self.drum.design();
        self.drum.configure(design, self.grids[quality as usize].0, self.tube_intervals, self.sample_rate_hz, crate::voice::noise_seed(0x2545_F491_4F6C_DD1D, age, self.take));
        // The drum is at rest: the moment a new friction law can take over.
        let model = FrictionModel::from_index(controls.drum_friction_model.round().max(0.0) as usize);
        if model != self.drum.bow.model() {
            self.drum.bow.set_model(model);
        }
        self.law_bow = LawBow::for_model(model);
        self.law_bow.apply_to(&mut self.drum.bow);
        self.note_wave_speed_mps = self.in_tune_wave_speed_mps(note.note as f64, quality);
        self.paper = quality == DrumQuality::Paper;
        self.dc_blocker.reset();
        self.last_connected_m = 0.0;
        self.note = note;
        self.age = age;
        self.velocity = velocity.clamp(0.0, 1.0);
        self.vibrato.reset();
        self.bend_st.snap(0.0);
        self.intonation = Intonation::new(self.sample_rate_hz / midi_key_to_hz(note.note as f64)).with_gain(DRUM_EAR_GAIN);
        self.envelope.start(self.velocity, controls.bow_attack_ms, controls.bow_release_ms, self.sample_rate_hz);
        self.silence.reset();
        self.last_output = 0.0;
        self.snap_controls(controls);
    }

    fn snap_controls(&mut self, c: &Controls) {
        self.force.snap(c.bow_force_n);
        self.bow_velocity.snap(c.bow_velocity_mps);
        self.bow_x.snap(c.drum_bow_x);
        self.bow_y.snap(c.drum_bow_y);
        self.tuning.snap(c.drum_tuning);
        self.damping.snap(c.drum_damping);
        self.noise.snap(c.drum_noise);
        self.variation.snap(c.drum_variation);
        self.rate.snap(c.drum_rate);
        self.gain.snap(c.drum_gain);
        self.radiation.snap(c.drum_radiation_percent / 100.0);
        self.intonation_strength.snap(c.intonation_percent / 100.0);
    }

    /// Pitch bend and note tuning (semitones), smoothed over [`crate::dsp::ramp::PITCH_SMOOTHING_S`].
    pub fn set_bend(&mut self, semitones: f64) {
        self.bend_st.set_bend_target(semitones);
    }

    /// New control targets; each ramps there over [`crate::dsp::ramp::CONTROL_RAMP_S`].
    pub fn set_controls(&mut self, c: &Controls) {
        self.force.set_target(c.bow_force_n);
        self.bow_velocity.set_target(c.bow_velocity_mps);
        self.bow_x.set_target(c.drum_bow_x);
        self.bow_y.set_target(c.drum_bow_y);
        self.tuning.set_target(c.drum_tuning);
        self.damping.set_target(c.drum_damping);
        self.noise.set_target(c.drum_noise);
        self.variation.set_target(c.drum_variation);
        self.rate.set_target(c.drum_rate);
        self.gain.set_target(c.drum_gain);
        self.radiation.set_target(c.drum_radiation_percent / 100.0);
        self.intonation_strength.set_target(c.intonation_percent / 100.0);
        self.envelope.set_release(c.bow_release_ms, self.sample_rate_hz);
    }

    pub fn release(&mut self) {
        self.envelope.release();
    }

    pub fn kill(&mut self) {
        self.envelope.free();
        self.drum.reset(0);
        self.dc_blocker.reset();
        self.last_connected_m = 0.0;
        self.last_output = 0.0;
    }

    #[doc(hidden)]
    pub fn corrupt_for_test(&mut self) {
        let n = self.drum.membrane.intervals();
        let mut state = vec![0.0; (n + 1) * self.drum.membrane.width()];
        state[self.drum.membrane.index(n / 2, n / 2)] = f64::NAN;
        self.drum.membrane.set_state(&state, &state);
    }

    /// Where the bow sits (m from the grid's corner) for control fractions of the diameter,
    /// pulled inside [`MAX_BOW_RADIUS`] of the rim so it always meets moving points.
    fn bow_point_m(&self, x: f64, y: f64) -> (f64, f64) {
        let side = self.drum.design().membrane.side_m;
        let (dx, dy) = (x - 0.5, y - 0.5);
        let r = (dx * dx + dy * dy).sqrt();
        let limit = 0.5 * MAX_BOW_RADIUS;
        let scale = if r > limit { limit / r } else { 1.0 };
        (side * (0.5 + dx * scale), side * (0.5 + dy * scale))
    }

    /// Renders one host sample, before the engine's output gain.
    #[inline]
    pub fn tick(&mut self) -> f64 {
        if self.is_free() {
            return 0.0;
        }
        self.envelope.advance();
        let tuning = self.tuning.next();
        let damping = self.damping.next();
        let depth_mps = MAX_VIBRATO_DEPTH_MPS * self.variation.next() / 10.0;
        let rate_hz = self.rate.next();
        self.vibrato.set_step_rad(std::f64::consts::TAU * rate_hz / self.sample_rate_hz);
        let vibrato = depth_mps * self.vibrato.advance();
        let detune = tuning_wave_speed_mps(tuning) / tuning_wave_speed_mps(IN_TUNE_TUNING);
        // A bend moves the wave speed as tension would, inside the grid's design range (like
        // the Tuning control), so it can never break the stability condition.
        let bend = semitones_to_ratio(self.bend_st.next());
        let steady_speed = (self.note_wave_speed_mps * detune * bend * self.intonation.correction()).clamp(MIN_TUNING_WAVE_SPEED_MPS, MAX_TUNING_WAVE_SPEED_MPS);
        let wave_speed = steady_speed + vibrato;
        // The (0,1) mode's frequency is proportional to the wave speed: Tuning, bends and the
        // waver move the pitch the ear aims at in proportion, so it never fights them.
        let aimed_hz = midi_key_to_hz(self.note.note as f64) * detune * bend * (wave_speed / steady_speed);
        self.intonation.set_target_period(self.sample_rate_hz / aimed_hz);
        let friction = &mut self.drum.bow.friction;
        friction.noise_per_normal_force = 0.004 * self.noise.next();
        // The bristles keep their stiffness relative to the membrane's tension (`c^2`) below
        // the reference wave speed: on a slack membrane the paper's 1e5 N/m would pin the bow
        // point, and the drum would lock to a higher mode or go raucous. A law may also keep
        // them in proportion to a light played force (`LawBow::full_stiffness_force_n`).
        // The Paper resolution keeps the paper's bow, as published.
        let played_force_n = self.force.next();
        let softening = if self.paper { 1.0 } else { (wave_speed / BRISTLE_REFERENCE_WAVE_SPEED_MPS).powi(2).min(self.law_bow.stiffness_share(played_force_n)) };
        let s0 = PAPER_BRISTLE_STIFFNESS_N_PER_M * softening * self.law_bow.bristle_scale;
        friction.bristle_stiffness_n_per_m = s0;
        friction.bristle_damping_kg_per_s = 0.001 * s0.sqrt();
        let (x, y) = (self.bow_x.next(), self.bow_y.next());
        let (bow_x_m, bow_y_m) = self.bow_point_m(x, y);
        let controls = DrumControls {
            normal_force_n: played_force_n * self.law_bow.force_scale_at(wave_speed) * self.envelope.pressure() * played_force_share(self.velocity),
            bow_velocity_mps: self.bow_velocity.next() * self.envelope.speed(),
            bow_x_m,
            bow_y_m,
            tuning: MembraneTuning {
                wave_speed_mps: wave_speed,
                sigma0_per_s: MAX_SIGMA0_PER_S * damping / 10.0,
                sigma1_m2_per_s: MAX_SIGMA1_M2_PER_S * damping / 10.0,
            },
        };
        let displacement = self.drum.tick(&controls);
        self.applied = controls;
        let gain_control = self.gain.next();
        if gain_control != self.gain_applied.0 {
            self.gain_applied = (gain_control, 10f64.powf(GAIN_DB_PER_STEP * (gain_control - 5.0) / 20.0));
        }
        let gain = self.gain_applied.1;
        // The bowed membrane's displacement grows about as 1/c (onofrei2021 section 4.2 adds
        // a gain knob for it); scaling by c keeps low and high notes at similar levels.
        let level = (wave_speed - vibrato) / tuning_wave_speed_mps(IN_TUNE_TUNING);
        let centred = self.dc_blocker.process(displacement);
        // The bow slips more than once a period on a membrane: the ear times the open end's
        // nearly sinusoidal wave instead.
        // It listens once the bow has come in: the attack's own periods are not the note's.
        let strength = self.intonation_strength.next() * if self.envelope.pressure() >= 0.95 { 1.0 } else { 0.0 };
        self.intonation.observe_wave(centred, strength);
        // Drum Radiation: the open end as onofrei2021 outputs it, or the membrane's motion
        // under the tube (its weighted mean velocity, which the tube's resonances move far
        // less from key to key), or a blend.
        let connected_m = self.drum.connected_displacement_m();
        let membrane_velocity_mps = (connected_m - self.last_connected_m) * self.sample_rate_hz;
        self.last_connected_m = connected_m;
        let radiation = self.radiation.next();
        // At 0 exactly the open end's output as it always was, to the bit.
        let open_end = centred * OUTPUT_SCALE_PER_M * level * gain;
        let membrane = MEMBRANE_RADIATION_S * membrane_velocity_mps * OUTPUT_SCALE_PER_M * gain;
        let output = (1.0 - radiation) * open_end + radiation * membrane;
        // `!(|x| <= 1e3)` is true for NaN and the infinities too, in one comparison.
        if !(output.abs() <= 1e3) || (self.silence.at_window_end() && !self.drum.is_sane(DIVERGED_DISPLACEMENT_M)) {
            self.recoveries += 1;
            self.kill();
            return 0.0;
        }
        self.last_output = output;
        if self.silence.observe(output) && self.phase() == Phase::Ringing {
            self.kill();
        }
        output
    }
}

/// How a friction law's bow meets the membrane, on top of the controls: Rosin's own, chosen
/// by measurement so that every law holds the drum's tone (issue 17; `docs/physics.md`,
/// "Every friction law on the drum").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LawBow {
    /// On the bristle stiffness the drum gives the elasto-plastic law.
    pub bristle_scale: f64,
    /// On the played bow force, at the reference wave speed.
    pub force_scale: f64,
    /// The force scale grows as the wave speed to this power.
    pub force_exponent: f64,
    /// The played force (N) at and above which the bristles may reach the paper's
    /// stiffness. Under it they are at most that share of it: stiffness in proportion to the
    /// load, as a contact's is, keeps the bristles' deflection before sliding (`muS fN / s0`)
    /// that of this force. 0: the paper's stiffness at any force.
    pub full_stiffness_force_n: f64,
    /// On the paper's Stribeck velocity, where the law's friction falls from static to
    /// Coulomb (the hyperbola's knee is twice it).
    pub stribeck_velocity_scale: f64,
    /// The hyperbolic law's stick: its least damping, in units of the membrane's `1 / c`.
    pub stick_damping_per_mobility: f64,
    /// The hyperbolic law's viscous branch: `mu` grows by this per m/s of sliding speed
    /// (s/m), a viscous friction `viscous_s_per_m fN` kg/s in proportion to the load.
    pub viscous_s_per_m: f64,
}

impl LawBow {
    /// The bow as the controls give it.
    pub const AS_PLAYED: LawBow = LawBow {
        bristle_scale: 1.0,
        force_scale: 1.0,
        force_exponent: 0.0,
        full_stiffness_force_n: 0.0,
        stribeck_velocity_scale: 1.0,
        stick_damping_per_mobility: STICK_DAMPING_PER_MOBILITY,
        viscous_s_per_m: 0.0,
    };

    /// The most of the paper's stiffness the bristles may have at a played force of
    /// `played_force_n` (before velocity and the attack scale it).
    #[inline]
    pub fn stiffness_share(&self, played_force_n: f64) -> f64 {
        if self.full_stiffness_force_n > 0.0 { (played_force_n / self.full_stiffness_force_n).min(1.0) } else { 1.0 }
    }

    /// Gives the drum's bow `contact` this law's own settings: its knee (on the paper's
    /// Stribeck velocity), its stick's least damping and its viscous branch. The bristles'
    /// stiffness and the force follow the controls, so the voice scales them each sample
    /// ([`LawBow::bristle_scale`], [`LawBow::force_scale_at`]).
    pub fn apply_to(&self, contact: &mut FrictionContact) {
        contact.friction.stribeck_velocity_mps = paper_friction().stribeck_velocity_mps * self.stribeck_velocity_scale;
        contact.stick_damping_per_mobility = self.stick_damping_per_mobility;
        contact.hyperbolic_viscous_s_per_m = self.viscous_s_per_m;
    }

    /// What the played force is multiplied by at `wave_speed_mps`.
    #[inline]
    pub fn force_scale_at(&self, wave_speed_mps: f64) -> f64 {
        if self.force_exponent == 0.0 {
            return self.force_scale;
        }
        self.force_scale * (wave_speed_mps / BRISTLE_REFERENCE_WAVE_SPEED_MPS).powf(self.force_exponent)
    }

    pub fn for_model(model: FrictionModel) -> Self {
        match model {
            // The drum's own law, its bristles in proportion to the played force up to
            // 10.9 N: at the default 6 N they are at most 0.55 times the paper's, a share
            // the softening with the membrane's tension reaches at about G3 (76 m/s at the
            // default Tuning). At the paper's stiffness and 6 N the bow of some keys from
            // G#3 up drove the membrane near the bow point, at the key's pitch but 15 to 25
            // dB under its neighbours: B3 and C#4 at 48 kHz, B3, C#4 and D4 at 44.1 kHz, G#3
            // and B3 at 96 kHz, and at velocity 40 G#3 to C#4. Over every key from E2 to E4
            // the levels strayed 13 to 21 dB from a line; at 0.5 to 0.6 times they stray 4.3
            // to 5.8 dB at velocities 40, 90 and 127 and at 44.1, 48 and 96 kHz, every key
            // periodic (0.995) and within 6.5 cents (at 0.65 G#3 at velocity 40 was still 14
            // dB under). Every key softer (0.6 to 0.7 times throughout) sent keys 8 to 28
            // cents off. The presets bow at 12 and 15 N, which held every key, and keep the
            // paper's stiffness.
            FrictionModel::ElastoPlastic => LawBow { full_stiffness_force_n: crate::controls::BOW_FORCE.default / DEFAULT_FORCE_STIFFNESS_SHARE, ..Self::AS_PLAYED },
            // The refined law with its hair, as played: capped at 0.65 its A#3 faded by 8 dB.
            FrictionModel::PassiveRefined => Self::AS_PLAYED,
            // Dahl's bristle is dragged along even while it unloads, so it holds the
            // membrane differently from the elasto-plastic bristle at the same stiffness
            // and force. As played, the membrane's higher modes take the contact over: on
            // E2 to E4 in tritones the tone fades by 7 dB in 0.3 s or locks to another
            // mode. With a fifth of the stiffness the keys up to middle C hold at the
            // played force; above it, where the membrane's impedance grows with its wave
            // speed, they need more, and the low keys less. So the force is 1.5 times the
            // played one at middle C's wave speed and goes as its square root: 0.84 times
            // at E2, 1.8 times at F#4. Then every key from C2 to F#4, at velocities 40, 90
            // and 127, is periodic (0.99) and within 8 cents.
            FrictionModel::Dahl => LawBow { bristle_scale: 0.2, force_scale: 1.5, force_exponent: 0.5, ..Self::AS_PLAYED },
            // serafin1999's hyperbola falls from muS at rest to halfway to muC only at its
            // knee, 0.2 m/s with the paper's constants (a violin's bow on a string). On the
            // membrane that slow fall holds no tone: the contact slips several times a
            // period and wanders between modes, whatever the force, bow speed, bow point,
            // stick stiffness or damping (`docs/physics.md`). The drum's bow changes four
            // things:
            // - the knee 2,000 times sharper (0.1 mm/s): the law falls to muC as the contact
            //   breaks away, as a sharp Stribeck curve does;
            // - a viscous branch, `mu` growing by 0.3 per m/s of sliding speed: the `s2 v`
            //   of a Stribeck curve with viscous friction (the elasto-plastic law's `s2`,
            //   here in proportion to the load). Without it a key could fall from its tone
            //   into double slipping (two slips a period, 20 to 45 dB quieter) as the
            //   drum's ear drew it to pitch (F3), or never leave it (G2), and 20 of the 25
            //   keys from E2 to E4 held a clean tone; with it all 25 do, at velocities 40,
            //   90 and 127 and at 44.1, 48 and 96 kHz (periodicity 0.98, within a cent;
            //   0.2 s/m held 23 of 25 at velocity 40, 0.35 and 0.4 lost keys at other
            //   forces, a constant 1 to 1.5 kg/s held fewer at velocity 40 and at 9 N);
            // - the stick's least damping 1.5 times the membrane's impedance (the
            //   strings' is 2);
            // - twice the played force at middle C's wave speed, going as its square root,
            //   and the stick's stiffness in proportion to a light played force as the
            //   elasto-plastic law's.
            // Chosen from sweeps of the knee (0.0005 to 1 times the paper's: with the
            // viscous branch a knee of 0.01 still lost 7 keys), the viscous branch (0.12 to
            // 0.4 s/m, and a constant 0 to 10 kg/s), the force (1 to 2.5 times, going as
            // the wave speed to the powers 0 to 1), the stick's stiffness (0.2 to 2 times)
            // and its least damping (1 to 6 times the membrane's impedance).
            FrictionModel::Hyperbolic => LawBow {
                force_scale: 2.0,
                force_exponent: 0.5,
                full_stiffness_force_n: crate::controls::BOW_FORCE.default / DEFAULT_FORCE_STIFFNESS_SHARE,
                stribeck_velocity_scale: 0.0005,
                stick_damping_per_mobility: 1.5,
                viscous_s_per_m: 0.3,
                ..Self::AS_PLAYED
            },
        }
    }
}

/// The drum's ear corrects this share of each period's error: a rough bow's periods jitter
/// by a few per cent, which a quicker ear would follow.
pub const DRUM_EAR_GAIN: f64 = 0.1;

/// The share of the paper's bristle stiffness the drum's own law keeps at the default Bow
/// Force (`LawBow::full_stiffness_force_n`).
pub const DEFAULT_FORCE_STIFFNESS_SHARE: f64 = 0.55;

/// onofrei2021 Table 1's bristle stiffness (N/m).
pub const PAPER_BRISTLE_STIFFNESS_N_PER_M: f64 = 1e5;
/// Below this wave speed (middle C's at the default Tuning) the bristles soften with the
/// membrane's tension: at key 36 they are 16 times softer than the paper's.
pub const BRISTLE_REFERENCE_WAVE_SPEED_MPS: f64 = 103.0;

/// onofrei2021 Table 1's bow: s0 = 1e5 N/m, s1 = 0.001 sqrt(s0), s2 = 4 kg/s.
pub fn paper_friction() -> ElastoPlasticParams {
    let s0 = PAPER_BRISTLE_STIFFNESS_N_PER_M;
    ElastoPlasticParams {
        bristle_stiffness_n_per_m: s0,
        bristle_damping_kg_per_s: 0.001 * s0.sqrt(),
        viscous_damping_kg_per_s: 4.0,
        noise_per_normal_force: 0.0,
        coulomb_coefficient: 0.3,
        static_coefficient: 0.8,
        stribeck_velocity_mps: 0.1,
        break_away_ratio: 0.7,
    }
}

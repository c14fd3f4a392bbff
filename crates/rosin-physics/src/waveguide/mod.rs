//! A bowed string as a digital waveguide (serafin1999 section 2, after McIntyre, Schumacher
//! and Woodhouse 1983 and J. O. Smith 1982; `MODELS.md` section 4).
//!
//! The string is cut at the bow into two stretches, bow to nut and bow to bridge, each
//! carrying two travelling velocity waves: four fractional delay lines. A lowpass
//! reflection filter at each end (`H_n`, `H_b`) lumps the string's losses. At the bow the
//! waves arriving from both ends sum to `v_h` (serafin1999 eq. 1a's `v_h = v_in,n + v_in,b`),
//! and the bow-string force `f` and the string velocity `v` satisfy both the string's
//! response and the friction law (eqs. 1a, 1b).
//!
//! **Sign of the bow force.** This engine uses the finite-difference engine's contact form
//! ([`crate::friction::dupont_contact`]): `f` is the friction force *on the bow*, so the string feels
//! `-f`, and with `v` the relative velocity (string minus bow)
//!
//! ```text
//! v = v_free - f / (2 Z),   v_free = v_h - v_bow,   coupling = 1 / (2 Z)
//! ```
//!
//! (a point force on a string of impedance `Z` sees the two halves in parallel, `2 Z`).
//! serafin1999 writes eq. 1a with the force on the string, `f_s = 2 Z (v - v_h) = -f`; its
//! eq. 2, `v_out = v_in + f_s / (2 Z)`, is here `v_out = v_in - f / (2 Z)`: each outgoing
//! wave is the wave arriving from the other side plus the velocity the bow imposes.
//!
//! **Bridge force.** Velocities are positive in the bow's direction, `x` runs from nut to
//! bridge, and a wave travelling toward the bridge has force `-Z v` (`T u_x`), one travelling
//! away `+Z v`. The force returned is the string's transverse force at the bridge,
//! `T u_x = Z (v_reflected - v_incident)`, the same quantity (and sign) as the
//! finite-difference string's `bridge_force_n()`; at a rigid bridge it is `-2 Z v_incident`.
//!
//! **Tuning.** The loop (bow, nut, bow, bridge, bow) must take one period `P = fs / f`.
//! Each side's round trip is its two line delays, one sample of each end filter (linear
//! phase, exactly one sample at every frequency) and one sample of junction latency (the
//! wave computed at the bow at tick `n` returns at tick `n + 1` at the earliest). The bow
//! splits the period as it splits the string: the bridge side gets `beta P` with `beta` the
//! bow position (bow-bridge distance over the vibrating length, as in
//! [`BowingControls::bow_position`]), the nut side the rest. Each line's nominal delay is
//! then corrected by its Lagrange read's own phase delay error at the fundamental, so the
//! open string sounds at `f` to within a small fraction of a cent on the whole keyboard.
//!
//! Pitch is the loop length only: a stopped note is just a higher `f`, and the stopping
//! finger of [`BowingControls::finger_position_m`] is ignored (the bow position is always a
//! fraction of the length that sounds).
//!
//! **Limits.** Any rate; frequencies from the lowest given to [`WaveguideString::new`] up to
//! a period of [`MIN_PERIOD_SAMPLES`] (4.4 kHz at 22.05 kHz). Each side needs a round trip
//! of [`MIN_SIDE_ROUND_TRIP_SAMPLES`], so the bow stays `2.5 / P` of the length away from
//! either end (0.06 at 1 kHz and 0.24 at 4.2 kHz, at 44.1 kHz).
//!
//! **Playing it** (`tests/waveguide.rs`). The open string is within 0.4 cents of its note
//! from MIDI 28 to 93 at 44.1 to 96 kHz, and its partials decay at the designed rates.
//! Helmholtz motion needs a bow force well inside Schelleng's range and a suitable attack:
//! with serafin1999's hyperbolic law, a start at full bow speed (a slow start on a low note
//! settles into two to four slips per period); with the elasto-plastic bow, a gradual
//! start and stiff bristles. Willemsen's bristles (`s0 = 1e4 N/m`) give way over
//! `2 Z / s0`, about a millisecond here, so they let the string creep while it sticks and
//! the note plays 5 to 40 cents flat, more the higher it is. The contact decides between
//! sticking and slipping at whole samples, so with the hyperbolic law a high note whose
//! period is close to a whole number of samples can lock to it (4 cents at MIDI 93 and
//! 44.1 kHz).

pub mod delay_line;
pub mod reflection;

use delay_line::{DelayLine, LagrangeTaps, PhaseProbe};
use reflection::{ReflectionFilter, StringLosses};

use crate::friction::dupont_contact::{BowContact, ContactInput, ContactOutput};
use crate::bow::bowed_string::BowingControls;
use crate::friction::hyperbolic::HyperbolicFriction;
use crate::string::note_string::REFERENCE_IMPEDANCE_KG_PER_S;

/// The shortest delay any of the four lines may take (samples). A shorter read would only
/// use the newest sample and lose its fractional control.
pub const MIN_LINE_DELAY_SAMPLES: f64 = 0.25;

/// The fixed part of a side's round trip: one sample of junction latency and the end
/// filter's one-sample phase delay.
pub const FIXED_ROUND_TRIP_SAMPLES: f64 = 1.0 + ReflectionFilter::PHASE_DELAY_SAMPLES;

/// The shortest round trip of one side (samples): the bow can come no closer to the bridge
/// (or the nut) than this, so it stays at least `2.5 / P` of the length from either end.
pub const MIN_SIDE_ROUND_TRIP_SAMPLES: f64 = FIXED_ROUND_TRIP_SAMPLES + 2.0 * MIN_LINE_DELAY_SAMPLES;

/// The shortest period the loop can take: two shortest sides.
pub const MIN_PERIOD_SAMPLES: f64 = 2.0 * MIN_SIDE_ROUND_TRIP_SAMPLES;

/// Below this fundamental (radians per sample; 920 Hz at 48 kHz) the cubic reads' phase
/// delay error, under `0.05 omega^4` samples each, is less than a millionth of the period
/// for all four reads together, and tuning skips its correction (and its trigonometry).
pub const NEGLIGIBLE_READ_ERROR_OMEGA: f64 = 0.12;

/// One side of the bow: its two lines (away from the bow and back) and its end.
struct Side {
    outgoing: DelayLine,
    returning: DelayLine,
    end: ReflectionFilter,
    /// Both lines of a side take the same delay.
    taps: LagrangeTaps,
    line_delay_samples: f64,
}

impl Side {
    fn new(max_line_delay_samples: f64) -> Self {
        Self {
            outgoing: DelayLine::new(max_line_delay_samples),
            returning: DelayLine::new(max_line_delay_samples),
            end: ReflectionFilter::rigid(),
            taps: LagrangeTaps::at(MIN_LINE_DELAY_SAMPLES),
            line_delay_samples: MIN_LINE_DELAY_SAMPLES,
        }
    }

    fn clear(&mut self) {
        self.outgoing.clear();
        self.returning.clear();
        self.end.clear();
    }

    /// Gives the side a round trip of `round_trip_samples` at the fundamental `omega`
    /// (radians per sample): the nominal line delay, less its read's phase-delay error
    /// there. `probe` caches the fundamental's sines for the other side.
    fn set_round_trip(&mut self, round_trip_samples: f64, omega: f64, probe: &mut Option<PhaseProbe>) {
        let max = self.outgoing.max_delay_samples();
        let nominal = (0.5 * (round_trip_samples - FIXED_ROUND_TRIP_SAMPLES)).clamp(MIN_LINE_DELAY_SAMPLES, max);
        let mut delay = nominal;
        if nominal < 1.0 || omega > NEGLIGIBLE_READ_ERROR_OMEGA {
            // Solve `tau(d) = nominal` by the secant method from the nominal delay: the error
            // is a few hundredths of a sample at most and smooth in `d`, so it settles in one
            // or two steps.
            let fundamental = probe.get_or_insert_with(|| PhaseProbe::new(omega));
            let error_at = |d: f64| LagrangeTaps::at(d).phase_delay_samples(fundamental) - nominal;
            let (mut d0, mut e0) = (nominal, error_at(nominal));
            delay = (nominal - e0).clamp(0.0, max);
            for _ in 0..3 {
                if e0.abs() < 1e-6 {
                    break;
                }
                let e1 = error_at(delay);
                if e1.abs() < 1e-7 || e1 == e0 {
                    break;
                }
                let next = (delay - e1 * (delay - d0) / (e1 - e0)).clamp(0.0, max);
                (d0, e0, delay) = (delay, e1, next);
            }
        }
        self.line_delay_samples = delay;
        self.taps = LagrangeTaps::at(delay);
    }

    /// Carries the wave leaving the bow to the end, reflects it, and sends it back with
    /// `injected_mps` added at the end. Returns `(incident, reflected)` at the end, aligned in
    /// time (the filter's output is centred one sample after its input).
    #[inline]
    fn propagate(&mut self, leaving_bow_mps: f64, injected_mps: f64) -> (f64, f64) {
        self.outgoing.push(leaving_bow_mps);
        let arriving = self.outgoing.read(&self.taps);
        let incident = self.end.previous_input();
        let reflected = self.end.process(arriving);
        self.returning.push(reflected + injected_mps);
        (incident, reflected)
    }

    /// The wave arriving at the bow from this side's end.
    #[inline]
    fn arriving_at_bow(&self) -> f64 {
        self.returning.read(&self.taps)
    }

    /// The side's travel time from the bow to its end (samples): its line and half the
    /// fixed part of a round trip (the end filter and the junction).
    fn travel_samples(&self) -> f64 {
        self.line_delay_samples + 0.5 * FIXED_ROUND_TRIP_SAMPLES
    }

    /// The slope `du/dx` of this side's string at `s` samples of travel from the bow, times
    /// the distance one sample travels (`c / fs`), so in metres per sample of travel: the
    /// waves `v_away` (leaving the bow) and `v_back` (coming back to it) give
    /// `u_x = -(v_away - v_back) / c` for a wave moving to larger `s` (d'Alembert: a wave
    /// `f(x - c t)` has `u_t = -c u_x`). Within the end's filter and the junction the
    /// nearest stored wave stands in.
    #[inline]
    fn slope_per_travel_sample(&self, s: f64, sample_rate_hz: f64) -> f64 {
        let d = self.line_delay_samples;
        let away = self.outgoing.read_linear(s.min(d));
        let back = self.returning.read_linear((d - s).max(0.0));
        -(away - back) / sample_rate_hz
    }

    /// Walks from the end (`u = 0`) toward the bow and writes `u` at each distance of
    /// `targets` (samples of travel from the bow, in decreasing order) through `write`,
    /// integrating the slope by the trapezoid rule at steps of at most one sample. Returns
    /// `u` at the bow.
    fn integrate_from_end(&self, sample_rate_hz: f64, targets: impl Iterator<Item = (usize, f64)>, mut write: impl FnMut(usize, f64)) -> f64 {
        let mut s = self.travel_samples();
        let mut slope = self.slope_per_travel_sample(s, sample_rate_hz);
        let mut u = 0.0;
        let step_to = |target: f64, s: &mut f64, slope: &mut f64, u: &mut f64| {
            while *s > target {
                let next = (*s - 1.0).max(target);
                let next_slope = self.slope_per_travel_sample(next, sample_rate_hz);
                // Walking toward the bow runs against increasing `s`.
                *u -= 0.5 * (*slope + next_slope) * (*s - next);
                (*s, *slope) = (next, next_slope);
            }
        };
        for (index, target) in targets {
            step_to(target.max(0.0), &mut s, &mut slope, &mut u);
            write(index, u);
        }
        step_to(0.0, &mut s, &mut slope, &mut u);
        u
    }

    fn is_finite(&self) -> bool {
        self.outgoing.latest().is_finite() && self.returning.latest().is_finite() && self.end.is_finite()
    }
}

/// A bowed string as a digital waveguide: the finite-difference [`crate::bow::bowed_string::BowedString`]'s
/// counterpart, with the same controls, contact interface and bridge-force output.
pub struct WaveguideString {
    sample_rate_hz: f64,
    impedance_kg_per_s: f64,
    losses: StringLosses,
    lowest_frequency_hz: f64,
    frequency_hz: f64,
    /// The bow position asked for, and the one the loop is split at (after the limits).
    requested_bow_position: f64,
    bow_position: f64,
    nut: Side,
    bridge: Side,
    last_contact: ContactOutput,
    last_bridge_force_n: f64,
}

impl WaveguideString {
    /// A string at rest that can play down to `lowest_frequency_hz` at `sample_rate_hz`,
    /// with the note strings' impedance ([`REFERENCE_IMPEDANCE_KG_PER_S`]) and losses. All
    /// memory is taken here. It starts at 440 Hz (or its nearest playable frequency) with the
    /// bow at 0.1.
    pub fn new(lowest_frequency_hz: f64, sample_rate_hz: f64) -> Self {
        assert!(sample_rate_hz > 0.0 && lowest_frequency_hz > 0.0, "the rate and the lowest frequency must be positive");
        let lowest_frequency_hz = lowest_frequency_hz.min(sample_rate_hz / MIN_PERIOD_SAMPLES);
        let longest_period = sample_rate_hz / lowest_frequency_hz;
        // A side's line is longest when the bow is nearest the other end.
        let max_line = 0.5 * (longest_period - MIN_SIDE_ROUND_TRIP_SAMPLES - FIXED_ROUND_TRIP_SAMPLES) + 1.0;
        let mut string = Self {
            sample_rate_hz,
            impedance_kg_per_s: REFERENCE_IMPEDANCE_KG_PER_S,
            losses: StringLosses::default(),
            lowest_frequency_hz,
            frequency_hz: f64::NAN,
            requested_bow_position: 0.1,
            bow_position: 0.1,
            nut: Side::new(max_line),
            bridge: Side::new(max_line),
            last_contact: ContactOutput::default(),
            last_bridge_force_n: 0.0,
        };
        string.set_frequency_hz(440.0);
        string
    }

    /// Returns the string to rest (the tuning, bow position and losses stay).
    pub fn reset(&mut self) {
        self.nut.clear();
        self.bridge.clear();
        self.last_contact = ContactOutput::default();
        self.last_bridge_force_n = 0.0;
    }

    pub fn sample_rate_hz(&self) -> f64 {
        self.sample_rate_hz
    }

    /// The range [`Self::set_frequency_hz`] accepts: down to the lowest frequency of
    /// [`Self::new`], up to a period of [`MIN_PERIOD_SAMPLES`].
    pub fn frequency_range_hz(&self) -> (f64, f64) {
        (self.lowest_frequency_hz, self.sample_rate_hz / MIN_PERIOD_SAMPLES)
    }

    /// The frequency the open loop sounds at (after the limits).
    pub fn frequency_hz(&self) -> f64 {
        self.frequency_hz
    }

    /// Tunes the loop. Cheap when the frequency has not changed; otherwise a few
    /// trigonometric calls, so it can follow a bend or vibrato every sample. The stored wave
    /// is resampled by the moving reads, so the pitch glides without clicks. Frequencies
    /// outside [`Self::frequency_range_hz`] are clamped; a non-finite one is ignored.
    pub fn set_frequency_hz(&mut self, frequency_hz: f64) {
        if !frequency_hz.is_finite() {
            return;
        }
        let (low, high) = self.frequency_range_hz();
        let f = frequency_hz.clamp(low, high);
        if f != self.frequency_hz {
            self.frequency_hz = f;
            self.design_ends();
            self.split_loop();
        }
    }

    /// The wave impedance `Z = sqrt(T rho A)` (kg/s), which scales the bow's effect and the
    /// bridge force. Defaults to [`REFERENCE_IMPEDANCE_KG_PER_S`].
    pub fn impedance_kg_per_s(&self) -> f64 {
        self.impedance_kg_per_s
    }

    pub fn set_impedance_kg_per_s(&mut self, impedance_kg_per_s: f64) {
        if impedance_kg_per_s.is_finite() && impedance_kg_per_s > 0.0 {
            self.impedance_kg_per_s = impedance_kg_per_s;
        }
    }

    pub fn losses(&self) -> &StringLosses {
        &self.losses
    }

    /// Sets the decay of the partials (and so the brightness of the ringing string); the end
    /// filters are redesigned for the current frequency.
    pub fn set_losses(&mut self, losses: StringLosses) {
        self.losses = losses;
        self.design_ends();
    }

    /// Both ends take half the loss of a period each.
    fn design_ends(&mut self) {
        self.nut.end.design(&self.losses, self.frequency_hz, self.sample_rate_hz);
        self.bridge.end.copy_design(&self.nut.end);
    }

    /// The bow position the loop is split at: bow-bridge distance over the vibrating length,
    /// the control's value kept within [`Self::bow_position_range`].
    pub fn bow_position(&self) -> f64 {
        self.bow_position
    }

    /// The bow positions the current period allows: each side needs a round trip of at
    /// least [`MIN_SIDE_ROUND_TRIP_SAMPLES`].
    pub fn bow_position_range(&self) -> (f64, f64) {
        let margin = (MIN_SIDE_ROUND_TRIP_SAMPLES / self.period_samples()).min(0.5);
        (margin, 1.0 - margin)
    }

    /// The loop's period, `fs / f` (samples).
    pub fn period_samples(&self) -> f64 {
        self.sample_rate_hz / self.frequency_hz
    }

    /// The delay of each line on the nut side and on the bridge side (samples).
    pub fn line_delays_samples(&self) -> (f64, f64) {
        (self.nut.line_delay_samples, self.bridge.line_delay_samples)
    }

    fn split_loop(&mut self) {
        let period = self.period_samples();
        let (low, high) = self.bow_position_range();
        self.bow_position = self.requested_bow_position.clamp(low, high);
        let bridge_side = self.bow_position * period;
        let omega = 2.0 * std::f64::consts::PI / period;
        let mut probe = None;
        self.bridge.set_round_trip(bridge_side, omega, &mut probe);
        self.nut.set_round_trip(period - bridge_side, omega, &mut probe);
    }

    fn place_bow(&mut self, bow_position: f64) {
        if bow_position.is_finite() && bow_position != self.requested_bow_position {
            self.requested_bow_position = bow_position;
            self.split_loop();
        }
    }

    /// Steps one sample with the elasto-plastic bow and returns the force on the bridge (N).
    #[inline]
    pub fn tick(&mut self, controls: &BowingControls, contact: &mut BowContact) -> f64 {
        self.tick_with(controls, 0.0, |input| contact.solve(input))
    }

    /// [`Self::tick`] with a sympathetic drive, as [`crate::bow::bowed_string::BowedString::tick_driven`].
    #[inline]
    pub fn tick_driven(&mut self, controls: &BowingControls, drive_n: f64, contact: &mut BowContact) -> f64 {
        self.tick_with(controls, drive_n, |input| contact.solve(input))
    }

    /// Steps one sample with serafin1999's hyperbolic friction (section 3).
    #[inline]
    pub fn tick_hyperbolic(&mut self, controls: &BowingControls, drive_n: f64, friction: &mut HyperbolicFriction) -> f64 {
        self.tick_with(controls, drive_n, |input| hyperbolic_output(friction, input))
    }

    /// Steps one sample and returns the force on the bridge (N).
    ///
    /// `solve` is the friction model: given the contact line `v = v_free - coupling f`
    /// (`coupling = 1 / (2 Z)`, `f` the force on the bow), it returns the force and the
    /// relative velocity on that line. A non-finite force is taken as zero, so no solver can
    /// poison the string.
    ///
    /// `drive_n` is a force on the string next to the bridge (sympathetic excitation), with
    /// the sign of the bow force (it pushes the string against positive velocity): it adds
    /// `-drive / (2 Z)` to the wave leaving the bridge. It is not part of the force returned,
    /// which is the string's own.
    #[inline]
    pub fn tick_with(&mut self, controls: &BowingControls, drive_n: f64, solve: impl FnOnce(&ContactInput) -> ContactOutput) -> f64 {
        self.place_bow(controls.bow_position);
        let coupling = 0.5 / self.impedance_kg_per_s;
        let from_nut = self.nut.arriving_at_bow();
        let from_bridge = self.bridge.arriving_at_bow();
        // A non-finite bow is a lifted bow.
        let (bow_velocity_mps, normal_force_n) =
            if controls.bow_velocity_mps.is_finite() && controls.normal_force_n.is_finite() { (controls.bow_velocity_mps, controls.normal_force_n) } else { (0.0, 0.0) };
        let free_velocity_mps = from_nut + from_bridge - bow_velocity_mps;
        let mut contact = solve(&ContactInput { free_velocity_mps, coupling_s_per_kg: coupling, normal_force_n, time_step_s: 1.0 / self.sample_rate_hz });
        if !contact.force_n.is_finite() {
            contact = ContactOutput { force_n: 0.0, relative_velocity_mps: free_velocity_mps, ..ContactOutput::default() };
        }
        // serafin1999 eq. 2: each side's outgoing wave is the other side's arriving wave plus
        // the bow's velocity jump.
        let imposed = -coupling * contact.force_n;
        let drive = if drive_n.is_finite() { -coupling * drive_n } else { 0.0 };
        self.nut.propagate(from_bridge + imposed, 0.0);
        let (incident, reflected) = self.bridge.propagate(from_nut + imposed, drive);

        self.last_contact = contact;
        self.last_bridge_force_n = self.impedance_kg_per_s * (reflected - incident);
        self.last_bridge_force_n
    }

    /// The contact of the last sample: force, relative velocity, bristle deflection.
    pub fn last_contact(&self) -> &ContactOutput {
        &self.last_contact
    }

    /// The bridge force of the last sample (N).
    pub fn bridge_force_n(&self) -> f64 {
        self.last_bridge_force_n
    }

    /// The string's velocity at the bow with no bow force: the two arriving waves, `v_h`.
    pub fn free_velocity_at_bow_mps(&self) -> f64 {
        self.nut.arriving_at_bow() + self.bridge.arriving_at_bow()
    }

    /// The string's displacement along its vibrating length, at `shape.len()` evenly spaced
    /// points from the nut (index 0) to the bridge, for drawing: the two travelling velocity
    /// waves of each side summed into the slope and integrated from each rigid end toward
    /// the bow (`u_x = (v_left - v_right) / c`), so the shape is in metres. The two sides
    /// reach the bow with slightly different displacements (the reads interpolate, and the
    /// ends and junction take whole samples); each side is leaned linearly, from nothing at
    /// its end, so that they meet at the mean. Returns the mismatch before that lean (m).
    /// No allocation; about `P / 2 + shape.len()` interpolated reads.
    pub fn displacement_into(&self, shape: &mut [f64]) -> f64 {
        let n = shape.len();
        if n < 2 {
            shape.fill(0.0);
            return 0.0;
        }
        let last = (n - 1) as f64;
        // The bow's place from the nut, as a fraction and as a point index.
        let bow_from_nut = 1.0 - self.bow_position;
        let split = ((bow_from_nut * last).floor() as usize).min(n - 1);
        let rate = self.sample_rate_hz;
        let (nut_travel, bridge_travel) = (self.nut.travel_samples(), self.bridge.travel_samples());
        // Nut side: points 0..=split, from the nut toward the bow. Position fraction `p` is
        // `(bow_from_nut - p) / bow_from_nut` of the side's travel from the bow.
        // (The fraction first, so that at each end it is exactly 1 and the end sits at rest.)
        let nut_targets = (0..=split).map(|i| (i, nut_travel * ((bow_from_nut - i as f64 / last) / bow_from_nut)));
        let nut_at_bow = self.nut.integrate_from_end(rate, nut_targets, |i, u| shape[i] = u);
        // Bridge side: points n-1 down to split+1, from the bridge toward the bow (each side
        // measures its own distance from the bow, so the slope's sign takes care of itself).
        let bridge_targets = (split + 1..n).rev().map(|i| (i, bridge_travel * ((i as f64 / last - bow_from_nut) / (1.0 - bow_from_nut))));
        let bridge_at_bow = self.bridge.integrate_from_end(rate, bridge_targets, |i, u| shape[i] = u);
        let meet = 0.5 * (nut_at_bow + bridge_at_bow);
        for (i, u) in shape.iter_mut().enumerate() {
            let p = i as f64 / last;
            *u += if i <= split { (meet - nut_at_bow) * p / bow_from_nut } else { (meet - bridge_at_bow) * (1.0 - p) / (1.0 - bow_from_nut) };
        }
        nut_at_bow - bridge_at_bow
    }

    /// Whether the string's state is finite. Non-finite values can only enter through the
    /// state itself (every input is screened), so this checks what each line last received
    /// and the filters' memories; a caller that finds it false should [`Self::reset`].
    pub fn is_sane(&self) -> bool {
        self.last_bridge_force_n.is_finite() && self.nut.is_finite() && self.bridge.is_finite()
    }
}

/// serafin1999's hyperbolic contact as a [`ContactOutput`], for [`WaveguideString::tick_with`]
/// (or any engine with the same contact form).
#[inline]
pub fn hyperbolic_output(friction: &mut HyperbolicFriction, input: &ContactInput) -> ContactOutput {
    let c = friction.solve(input.free_velocity_mps, input.coupling_s_per_kg, input.normal_force_n);
    ContactOutput { force_n: c.force_n, relative_velocity_mps: c.relative_velocity_mps, deflection_m: 0.0, iterations: 0, converged: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controls(bow_position: f64) -> BowingControls {
        BowingControls { normal_force_n: 0.0, bow_velocity_mps: 0.0, bow_position, finger_position_m: None }
    }

    /// One sample of bow force `f` sends `-f / 2Z` both ways; the half that reaches the
    /// bridge first gives it an impulse of `+f (1 + g) / 2` (`g` the end's DC gain, so `f` at
    /// a rigid end): `T u_x` rises when the string next to the bridge is pushed toward
    /// negative displacement, as on the finite-difference string.
    #[test]
    fn a_bow_impulse_reaches_the_bridge_with_the_contact_sign() {
        let mut string = WaveguideString::new(55.0, 48_000.0);
        string.set_frequency_hz(440.0);
        let z = string.impedance_kg_per_s();
        let force = 1.0;
        string.tick_with(&controls(0.2), 0.0, |input| {
            assert_eq!(input.coupling_s_per_kg, 0.5 / z);
            assert_eq!(input.free_velocity_mps, 0.0);
            ContactOutput { force_n: force, relative_velocity_mps: -force * input.coupling_s_per_kg, ..Default::default() }
        });
        let period = string.period_samples();
        let first_arrival: f64 = (0..(0.5 * period) as usize).map(|_| string.tick_with(&controls(0.2), 0.0, |_| ContactOutput::default())).sum();
        let gain = string.bridge.end.gain();
        let expected = 0.5 * force * (1.0 + gain);
        assert!((first_arrival - expected).abs() < 1e-9, "{first_arrival} vs {expected}");
        // The reflected wave is back at the bow after the bridge side's round trip.
        let (_, bridge_line) = string.line_delays_samples();
        assert!((2.0 * bridge_line + FIXED_ROUND_TRIP_SAMPLES - 0.2 * period).abs() < 0.05);
    }

    #[test]
    fn the_bow_keeps_clear_of_the_ends_and_the_loop_fills_the_period() {
        for (fs, f) in [(22_050.0, 4186.0), (48_000.0, 32.7), (192_000.0, 4186.0), (44_100.0, 1000.0)] {
            let mut string = WaveguideString::new(30.0, fs);
            string.set_frequency_hz(f);
            for beta in [0.0, 0.01, 0.13, 0.5, 0.97, 1.0] {
                string.tick_with(&controls(beta), 0.0, |_| ContactOutput::default());
                let (low, high) = string.bow_position_range();
                let applied = string.bow_position();
                assert!(applied >= low && applied <= high && (applied == beta || applied == low || applied == high));
                let (nut, bridge) = string.line_delays_samples();
                assert!(nut >= 0.0 && bridge >= 0.0);
                // At the fundamental, the reads' phase delays and the fixed parts fill the
                // period, and the bridge side takes beta of it.
                let fundamental = PhaseProbe::new(2.0 * std::f64::consts::PI * f / fs);
                let side = |s: &Side| 2.0 * s.taps.phase_delay_samples(&fundamental) + FIXED_ROUND_TRIP_SAMPLES;
                let total = side(&string.nut) + side(&string.bridge);
                assert!((total / string.period_samples() - 1.0).abs() < 1e-6, "fs {fs} f {f} beta {beta}: {total}");
                assert!((side(&string.bridge) / string.period_samples() - applied).abs() < 1e-6);
            }
            assert!(string.is_sane());
        }
    }

    #[test]
    fn non_finite_inputs_never_reach_the_state() {
        let mut string = WaveguideString::new(55.0, 48_000.0);
        let bad = BowingControls { normal_force_n: f64::NAN, bow_velocity_mps: f64::INFINITY, bow_position: f64::NAN, finger_position_m: None };
        string.set_frequency_hz(f64::NAN);
        let mut contact = BowContact::new(crate::friction::dupont::ElastoPlasticParams::default(), 1);
        let mut hyperbolic = HyperbolicFriction::new(Default::default());
        for _ in 0..1000 {
            let y = string.tick_with(&bad, f64::NAN, |input| {
                // The solver sees a lifted bow on a finite string.
                assert!(input.free_velocity_mps.is_finite() && input.normal_force_n == 0.0);
                ContactOutput { force_n: f64::NAN, ..Default::default() }
            });
            assert!(y.is_finite() && string.last_contact().force_n == 0.0 && string.last_contact().relative_velocity_mps.is_finite());
            assert!(string.tick(&bad, &mut contact).is_finite());
            assert!(string.tick_hyperbolic(&bad, f64::INFINITY, &mut hyperbolic).is_finite());
        }
        assert!(string.is_sane());
        assert_eq!(string.frequency_hz(), 440.0);
    }
}

//! A bowed stiff string: the string scheme, the bow's friction contact and the stopping finger
//! stepped together, one sample at a time (willemsen2019).

use crate::friction::dupont_contact::{ContactInput, ContactOutput};
use crate::bow::contact::FrictionContact;
use crate::friction::dupont::ElastoPlasticParams;
use crate::string::interpolation::CubicPoint;
use crate::string::stiff_string::{StiffString, StringMaterial, StringSample};
use crate::string::tuning::SchemeGrid;

/// The bow stays at least this many grid intervals from the bridge and from the finger, so
/// that it meets enough moving nodes to drive Helmholtz motion on coarse (high) strings.
pub const MIN_BOW_INTERVALS_FROM_END: f64 = 2.0;

/// The performer's controls at one sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BowingControls {
    pub normal_force_n: f64,
    /// The bow's own velocity, signed (positive is a down-bow).
    pub bow_velocity_mps: f64,
    /// Bow-bridge distance as a fraction of the vibrating length (bridge to finger).
    pub bow_position: f64,
    /// The stopping finger's distance from the nut, if a finger stops the string.
    pub finger_position_m: Option<f64>,
}

/// A stiff string with a bow and a stopping finger, the string's levels in the format `S`
/// (f64 unless asked: see [`StringSample`]).
pub struct BowedString<S: StringSample = f64> {
    pub string: StiffString<S>,
    /// The bow's contact, under whichever friction model is chosen.
    pub bow: FrictionContact,
    bow_point: CubicPoint,
    bow_point_m: f64,
    /// Whether the bow is drifting to a place that jumped ([`MAX_BOW_DRIFT_MPS`]).
    bow_drifting: bool,
    /// `sum(w^2)` over the bow stencil's moving nodes.
    bow_weight_energy: f64,
    /// What the bow was last put at its place for, once there (not drifting).
    placed_for: Option<Placement>,
    last_contact: ContactOutput,
    finger_position_m: Option<f64>,
    /// Where a sympathetic drive enters: [`DRIVE_INTERVALS_FROM_BRIDGE`] from the bridge.
    drive_point: CubicPoint,
}

/// What decides where [`BowedString::place_bow`] puts the bow: asked the same again, with
/// the bow at its place, it leaves the bow where it is. Most samples ask the same as the one
/// before (a control that is not moving), and working the place out again cost about 50
/// instructions a voice-sample. The string's grid and finger are the string's count of
/// their changes ([`StiffString::layout_changes`]): comparing their values cost about 20.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Placement {
    bow_position: f64,
    layout_changes: u32,
}

/// How fast the bow's point on the string may follow the place it is asked for when that
/// place jumps (m/s). The place is a fraction of the vibrating length, so a finger that
/// jumps to a new stop moves it by that fraction of the jump: in one sample that was a
/// click (a cello triad's change, the finger jumping 3.5 cm and the bow 6 mm: 7.4 dB above
/// the notes' band above 6 kHz; drifting at this speed, 1.9 dB, `tests/phrases.rs`). A
/// player's bow stays where it is and drifts to its place.
pub const MAX_BOW_DRIFT_MPS: f64 = 2.0;

/// A force that reaches the string through the bridge (another string's vibration) is
/// applied this many grid intervals from the bridge: the bridge itself is a fixed node, and a
/// point force next to a support drives every mode in proportion to its slope there, as the
/// moving bridge does.
pub const DRIVE_INTERVALS_FROM_BRIDGE: f64 = 1.5;

impl<S: StringSample> BowedString<S> {
    pub fn with_capacity(max_intervals: usize, grid: SchemeGrid, material: StringMaterial, friction: ElastoPlasticParams, seed: u64) -> Self {
        let string = StiffString::with_capacity(max_intervals, grid, material);
        let mut bowed = Self {
            string,
            bow: FrictionContact::new(friction, seed),
            bow_point: CubicPoint::new(1.0, grid.intervals.max(4)),
            bow_point_m: f64::NAN,
            bow_drifting: false,
            bow_weight_energy: 0.0,
            placed_for: None,
            last_contact: ContactOutput::default(),
            finger_position_m: None,
            drive_point: Self::drive_point_for(&grid),
        };
        bowed.place_bow(0.1, true);
        // Weights for a valid stencil; the first tick puts the bow where it is asked, at once.
        bowed.bow_point_m = f64::NAN;
        bowed.placed_for = None;
        bowed
    }

    /// Puts the string on a new grid at rest, with a fresh bow.
    pub fn configure(&mut self, grid: SchemeGrid, material: StringMaterial, seed: u64) {
        self.string.configure(grid, material);
        self.drive_point = Self::drive_point_for(&grid);
        self.bow.reset(seed);
        self.bow_point_m = f64::NAN;
        self.finger_position_m = None;
        self.last_contact = ContactOutput::default();
        self.place_bow(0.1, true);
        // Weights for a valid stencil; the first tick puts the bow where it is asked, at once.
        self.bow_point_m = f64::NAN;
        self.bow_drifting = false;
        self.placed_for = None;
    }

    fn drive_point_for(grid: &SchemeGrid) -> CubicPoint {
        let intervals = grid.intervals.max(4);
        CubicPoint::new(intervals as f64 - DRIVE_INTERVALS_FROM_BRIDGE, intervals)
    }

    /// The grid position of the bow for a bow-bridge fraction of the vibrating length.
    fn bow_point_m_for(&self, bow_position: f64) -> f64 {
        let length = self.string.grid().length_m;
        let h = self.string.spacing_m();
        let nut_side = self.string.finger().map_or(0.0, |(node, alpha)| (node as f64 + alpha) * h);
        let vibrating = length - nut_side;
        let margin = MIN_BOW_INTERVALS_FROM_END * h;
        let from_bridge = (bow_position.clamp(0.0, 1.0) * vibrating).clamp(margin, (vibrating - margin).max(margin));
        length - from_bridge
    }

    /// Puts the bow at `bow_position` of the vibrating length. A place that jumps by more
    /// than half a grid interval in one sample (a finger jumping to a new stop) is reached at
    /// [`MAX_BOW_DRIFT_MPS`]; one that moves less (a gliding finger, a vibrato, the control's
    /// ramp) is followed exactly. A new note's first placement is at once. `moved_finger`:
    /// the finger changed, so the stencil's free nodes may have.
    #[inline(always)]
    fn place_bow(&mut self, bow_position: f64, moved_finger: bool) {
        let placement = Placement { bow_position, layout_changes: self.string.layout_changes() };
        if moved_finger || self.placed_for != Some(placement) {
            self.move_bow(placement, moved_finger);
        }
    }

    /// [`BowedString::place_bow`] when the placement changed.
    #[inline(never)]
    fn move_bow(&mut self, placement: Placement, moved_finger: bool) {
        let target = self.bow_point_m_for(placement.bow_position);
        let gap = target - self.bow_point_m;
        if gap.abs() > 0.5 * self.string.spacing_m() {
            self.bow_drifting = true;
        }
        let step = MAX_BOW_DRIFT_MPS * self.string.grid().time_step_s;
        let x = if self.bow_drifting && gap.abs() > step {
            self.bow_point_m + step.copysign(gap)
        } else {
            self.bow_drifting = false;
            target
        };
        if x != self.bow_point_m || moved_finger {
            let h = self.string.spacing_m();
            self.bow_point = CubicPoint::new(x / h, self.string.intervals());
            let string = &self.string;
            self.bow_weight_energy = self.bow_point.sum_of_squares(|node| string.is_free_node(node));
            self.bow_point_m = x;
        }
        // At its place, the bow is where the same placement puts it again.
        self.placed_for = (!self.bow_drifting).then_some(placement);
    }

    /// Steps one sample and returns the force on the bridge (N).
    #[inline]
    pub fn tick(&mut self, controls: &BowingControls) -> f64 {
        self.tick_driven(controls, 0.0)
    }

    /// Steps one sample with `drive_n` pushing the string near the bridge (sympathetic
    /// excitation), and returns the force on the bridge (N).
    #[inline]
    pub fn tick_driven(&mut self, controls: &BowingControls, drive_n: f64) -> f64 {
        let input = self.begin_driven(controls, drive_n);
        let contact = self.bow.solve(&input);
        self.end_driven(contact)
    }

    /// The first half of [`BowedString::tick_driven`]: the string's free update, and the
    /// contact problem it leaves the bow. Solve it (alone with `bow.solve`, or beside other
    /// strings' with [`FrictionContact::solve_lanes`]) and hand the answer to
    /// [`BowedString::end_driven`].
    ///
    /// [`FrictionContact::solve_lanes`]: crate::bow::contact::FrictionContact::solve_lanes
    #[inline(always)]
    pub fn begin_driven(&mut self, controls: &BowingControls, drive_n: f64) -> ContactInput {
        let moved_finger = controls.finger_position_m != self.finger_position_m;
        if moved_finger {
            self.string.set_finger(controls.finger_position_m);
            self.finger_position_m = controls.finger_position_m;
        }
        self.place_bow(controls.bow_position, moved_finger);
        self.string.compute_free_update();
        if drive_n != 0.0 {
            self.string.apply_point_force(&self.drive_point, drive_n);
        }
        let k = self.string.grid().time_step_s;
        let h = self.string.spacing_m();
        let free_next = self.bow_point.interpolate(self.string.next_displacement());
        let previous = self.bow_point.interpolate(self.string.previous_displacement());
        let free_velocity_mps = (free_next - previous) / (2.0 * k) - controls.bow_velocity_mps;
        let coupling = self.string.force_to_displacement() * self.bow_weight_energy / (2.0 * k * h);
        ContactInput { free_velocity_mps, coupling_s_per_kg: coupling, normal_force_n: controls.normal_force_n, time_step_s: k }
    }

    /// The second half of [`BowedString::tick_driven`]: the bow's force from `contact`
    /// goes on the string, which moves on a sample. Returns the force on the bridge (N).
    #[inline(always)]
    pub fn end_driven(&mut self, contact: ContactOutput) -> f64 {
        self.last_contact = contact;
        if self.last_contact.force_n != 0.0 {
            self.string.apply_point_force(&self.bow_point, self.last_contact.force_n);
        }
        self.string.advance();
        self.string.bridge_force_n()
    }

    /// The contact of the last sample: force, relative velocity, bristle deflection.
    pub fn last_contact(&self) -> &ContactOutput {
        &self.last_contact
    }

    /// Where the bow sits, in metres from the nut.
    pub fn bow_point_m(&self) -> f64 {
        self.bow_point_m
    }
}

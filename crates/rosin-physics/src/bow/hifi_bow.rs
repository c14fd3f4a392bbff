//! matusiak2025's high-fidelity bowed string: the stiff string of willemsen2019 with its
//! torsional waves, a bow of finite width touching it at up to [`MAX_CONTACT_POINTS`]
//! points, compliant bow hair behind each point, and the passive refined elasto-plastic
//! friction at each (matusiak2025 sections 5-6, eqs. 39-46 and their discretisation,
//! eqs. 52-62; `MODELS.md` section 2).
//!
//! - Transverse motion: [`StiffString`] (eq. 52; node 0 is the nut, node `N` the bridge).
//! - Torsion: [`TorsionalString`] on its own, coarser grid (eqs. 40, 51, 55).
//! - Bow hair: one oscillator per contact point, stiffness averaged over three steps as in
//!   the lumped model (eq. 57).
//! - Relative velocity `v_m = I_m dt. u - r I_T,m dt. w - vb - dt. eta_m` (eq. 58), friction
//!   `F_m = sigma0 mu_t z_m + sigma1(v_m) delta_t z_m`, `delta_t z_m = g(mu_t z_m, v_m)`
//!   (eq. 53), solved by [`BristleContact`] (eqs. 59-61).
//!
//! How the bow is divided among its `M` points. The paper's Table 2 gives the bow-hair
//! mass, stiffness and damping of the lumped model "divided by the bow width": the hair is a
//! ribbon with `m_h / W_b` kg per metre of bow width, and so on. A contact point sits at the
//! centre of a strip `W_b / M` wide and stands for all of it, so it carries `m_h / M`,
//! `K_h / M` and `Gamma_h / M`. Likewise the paper applies `1/M` of each point's friction (eq. 52's
//! `J f / M`, `H_b = sigma0 |z|^2 / (2M)`): here each point has the normal force `fN / M`,
//! bristle stiffness `s0 / M` and `sigma1_bar / M`, which gives exactly those forces while
//! leaving `z_ss`, `z_ba` and `eps` as in the lumped model. With `M = 1` the bow is the
//! lumped bow of [`crate::bow::lumped`] on a string. (The authors' published MATLAB instead
//! gives every point the whole per-width density and `1/M` of the force, which makes the
//! hair behind a point numerically `M / W_b` (400) times heavier than its share, and scales
//! the torsional coupling by `h / h_T`; the torsion here follows eq. 40 on its own grid.)

pub use crate::bow::hifi_params::{BowHairParams, HiFiBowParams, HiFiStringParams};
use crate::friction::dupont::ElastoPlasticParams;

use crate::bow::hifi_contact::{BristleContact, ContactSolution, ContactSystem, PointMatrix, PointVector, MAX_CONTACT_POINTS};
use crate::string::interpolation::{CubicPoint, CubicPoints};
use crate::friction::newton::IterationStats;
use crate::string::stiff_string::{StiffString, StringMaterial};
use crate::bow::torsion::{TorsionParams, TorsionalString};
use crate::string::tuning::SchemeGrid;

/// Every contact point stays at least this many string intervals from either end.
pub const MIN_BOW_INTERVALS_FROM_END: f64 = 2.0;
/// [`HiFiBowedString::is_sane`]'s limits.
pub const DIVERGED_DISPLACEMENT_M: f64 = 0.05;
pub const DIVERGED_ANGLE_RAD: f64 = 100.0;

/// One sample's contact, and every power term of the discrete energy balance
/// (matusiak2025 eq. 63): `H^{n+1} - H^n = -k (Q + P)`, `Q` the sum of the losses. The
/// string and torsion losses are only computed with
/// [`HiFiBowedString::set_power_tracking`] on (they cost a pass over each grid).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HiFiStep {
    pub bridge_force_n: f64,
    /// `vb^n`, after the acceleration limit.
    pub bow_velocity_mps: f64,
    /// The relative velocity of each point as the updated state realises it (eq. 58).
    pub relative_velocity_mps: PointVector,
    pub force_n: PointVector,
    /// `mu_t z^n` per point.
    pub deflection_m: PointVector,
    /// `P = vb sum F_m`: the bow supplies power when it is negative. This and the rest to
    /// `solver_mismatch_mps` only with power tracking on
    /// ([`HiFiBowedString::set_power_tracking`]), else 0.
    pub bow_power_w: f64,
    /// `Q_r = 2 sigma0 rho A |dt. u|^2 + 2 sigma1 rho A |dx+ dt. u|^2`.
    pub string_loss_w: f64,
    /// `Q_w = 2 gamma_T P_T |dt. w|^2`.
    pub torsion_loss_w: f64,
    /// `Q_h = sum Gamma_h,m (dt. eta_m)^2`.
    pub hair_loss_w: f64,
    /// `Q_b = sum F_m v_m - sigma0 mu_t z_m delta_t z_m` (plus, when the bow lifts, the
    /// bristle energy it lets go).
    pub bristle_loss_w: f64,
    /// The largest `|v_solved - v_realised|`: how far Newton's answer is from the state.
    pub solver_mismatch_mps: f64,
    pub iterations: usize,
    pub fell_back: bool,
    pub lifted: bool,
}

impl HiFiStep {
    /// `Q`, every loss together (W).
    pub fn loss_w(&self) -> f64 {
        self.string_loss_w + self.torsion_loss_w + self.hair_loss_w + self.bristle_loss_w
    }
}

/// The stored energy, part by part (J).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HiFiEnergy {
    pub string_j: f64,
    pub torsion_j: f64,
    pub hair_j: f64,
    pub bristle_j: f64,
}

impl HiFiEnergy {
    pub fn total_j(&self) -> f64 {
        self.string_j + self.torsion_j + self.hair_j + self.bristle_j
    }
}

/// One contact point's hair oscillator (eq. 57): `eta^n`, `eta^{n-1}`.
#[derive(Clone, Copy, Debug, Default)]
struct Hair {
    eta_m: f64,
    eta_previous_m: f64,
}

/// The bowed string of matusiak2025 with a bow of finite width.
pub struct HiFiBowedString {
    params: HiFiBowParams,
    string: StiffString,
    torsion: Option<TorsionalString>,
    /// The torsion grid kept for later notes while this one has none.
    parked_torsion: Option<TorsionalString>,
    /// The stopping finger, in metres from the nut.
    finger_m: Option<f64>,
    contact: BristleContact,
    points: usize,
    time_step_s: f64,
    string_points: [CubicPoint; MAX_CONTACT_POINTS],
    torsion_points: [CubicPoint; MAX_CONTACT_POINTS],
    /// The same points in lanes, read together (`string_points[..points]`, and
    /// `torsion_points[..points]` while the string twists).
    string_lanes: CubicPoints,
    torsion_lanes: CubicPoints,
    /// `C` of eq. 59.
    mobility: PointMatrix,
    hair: [Hair; MAX_CONTACT_POINTS],
    /// Per point: `m_h / M`, `K_h / M`, `Gamma_h / M`, and `2 m/k + K k/2 + Gamma`.
    hair_mass_kg: f64,
    hair_stiffness_n_per_m: f64,
    hair_damping_kg_per_s: f64,
    hair_denominator_kg_per_s: f64,
    normal_force_n: f64,
    target_bow_velocity_mps: f64,
    bow_velocity_mps: f64,
    bow_position: f64,
    bow_centre_m: f64,
    track_power: bool,
    last: HiFiStep,
    /// The step [`Self::begin_driven`] began, for [`Self::end_step`].
    begun: BegunStep,
}

/// What the end of a step needs from its beginning: the contact's problem, and what the
/// hair and the realised velocities are worked out from.
#[derive(Clone, Copy, Debug)]
struct BegunStep {
    bow_velocity_mps: f64,
    hair_free_mps: PointVector,
    surface_previous: (PointVector, PointVector),
    system: ContactSystem,
    normal_force_per_point_n: f64,
}

impl Default for BegunStep {
    fn default() -> Self {
        let system = ContactSystem { points: 1, free_velocity_mps: [0.0; MAX_CONTACT_POINTS], mobility_s_per_kg: [[0.0; MAX_CONTACT_POINTS]; MAX_CONTACT_POINTS] };
        Self { bow_velocity_mps: 0.0, hair_free_mps: [0.0; MAX_CONTACT_POINTS], surface_previous: ([0.0; MAX_CONTACT_POINTS], [0.0; MAX_CONTACT_POINTS]), system, normal_force_per_point_n: 0.0 }
    }
}

impl HiFiBowedString {
    /// The paper's string on its own grid at `sample_rate_hz`, at rest with the bow on it
    /// (the bow starts at rest and accelerates to `params.bow_velocity_mps`).
    pub fn new(params: HiFiBowParams, sample_rate_hz: f64) -> Self {
        Self::with_grid(params, params.string.scheme_grid(sample_rate_hz))
    }

    /// As [`Self::new`] on a given grid (for a re-tuned string: see `tuning::tune_grid`).
    /// Allocates the grids; nothing else does.
    pub fn with_grid(params: HiFiBowParams, grid: SchemeGrid) -> Self {
        let torsion_intervals = params.torsion.map_or(0, |t| t.intervals_at(1.0 / grid.time_step_s));
        Self::with_capacity(params, grid, grid.intervals, torsion_intervals)
    }

    /// As [`Self::with_grid`], with room for string grids of up to `max_intervals` and
    /// torsion grids of up to `max_torsion_intervals`, so that [`Self::configure`] can move
    /// the bow to another note's string without allocating. A torsion store is kept even
    /// when `params` has none, if `max_torsion_intervals` is at least 3.
    pub fn with_capacity(params: HiFiBowParams, grid: SchemeGrid, max_intervals: usize, max_torsion_intervals: usize) -> Self {
        let points = params.contact_points;
        assert!((1..=MAX_CONTACT_POINTS).contains(&points), "1 to {MAX_CONTACT_POINTS} contact points");
        assert!(params.hair.mass_kg > 0.0, "the bow hair needs a mass");
        let material = StringMaterial { linear_density_kg_per_m: params.string.linear_density_kg_per_m };
        let string = StiffString::with_capacity(max_intervals.max(grid.intervals), grid, material);
        let k = grid.time_step_s;
        if let Some(t) = &params.torsion {
            assert!((t.length_m - grid.length_m).abs() <= 1e-9 * grid.length_m, "torsion and string lengths differ");
        }
        let torsion = params.torsion.map(|t| TorsionalString::with_capacity(t, 1.0 / k, max_torsion_intervals));
        // A store for notes that twist, when this one does not.
        let parked_torsion = match (&torsion, max_torsion_intervals >= 3) {
            (None, true) => {
                let length = grid.length_m;
                let store = TorsionParams { length_m: length, radius_m: 1e-4, polar_inertia_kg_m: 1e-9, wave_speed_mps: length / (3.0 * k), quality_factor: f64::INFINITY };
                Some(TorsionalString::with_capacity(store, 1.0 / k, max_torsion_intervals))
            }
            _ => None,
        };
        let share = 1.0 / points as f64;
        let hair_mass_kg = params.hair.mass_kg * share;
        let hair_stiffness_n_per_m = params.hair.stiffness_n_per_m * share;
        let hair_damping_kg_per_s = params.hair.damping_kg_per_s * share;
        let placeholder = CubicPoint::new(1.0, grid.intervals);
        let mut bowed = Self {
            params,
            string,
            contact: BristleContact::new(params.point_friction(), points),
            torsion_points: [torsion.as_ref().map_or(placeholder, |t| CubicPoint::new(1.0, t.intervals())); MAX_CONTACT_POINTS],
            torsion,
            parked_torsion,
            finger_m: None,
            points,
            time_step_s: k,
            string_points: [placeholder; MAX_CONTACT_POINTS],
            string_lanes: CubicPoints::new(&[placeholder]),
            torsion_lanes: CubicPoints::new(&[placeholder]),
            mobility: [[0.0; MAX_CONTACT_POINTS]; MAX_CONTACT_POINTS],
            hair: [Hair::default(); MAX_CONTACT_POINTS],
            hair_mass_kg,
            hair_stiffness_n_per_m,
            hair_damping_kg_per_s,
            hair_denominator_kg_per_s: 2.0 * hair_mass_kg / k + 0.5 * hair_stiffness_n_per_m * k + hair_damping_kg_per_s,
            normal_force_n: 0.0,
            target_bow_velocity_mps: 0.0,
            bow_velocity_mps: 0.0,
            bow_position: f64::NAN,
            bow_centre_m: f64::NAN,
            track_power: false,
            last: HiFiStep::default(),
            begun: BegunStep::default(),
        };
        bowed.set_normal_force_n(params.normal_force_n);
        bowed.set_bow_velocity_mps(params.bow_velocity_mps);
        bowed.set_bow_position(params.bow_position);
        bowed
    }

    /// Moves the bow to another string (another note): `params` (its string, torsion, hair,
    /// friction, contact points and bow width) on `grid`, at rest, with no finger. Nothing
    /// allocates: returns false and changes nothing if the grids do not fit the capacity
    /// given at [`Self::with_capacity`], or if `params` has torsion and no store is left.
    pub fn configure(&mut self, params: HiFiBowParams, grid: SchemeGrid) -> bool {
        let points = params.contact_points;
        if !(1..=MAX_CONTACT_POINTS).contains(&points) || grid.intervals > self.string.capacity_intervals() || !(params.hair.mass_kg > 0.0) {
            return false;
        }
        let k = grid.time_step_s;
        match params.torsion {
            Some(t) => {
                let mut store = match self.torsion.take().or_else(|| self.parked_torsion.take()) {
                    Some(store) => store,
                    None => return false,
                };
                if !store.configure(t, 1.0 / k) {
                    self.torsion = Some(store);
                    return false;
                }
                self.torsion = Some(store);
            }
            None => {
                if let Some(store) = self.torsion.take() {
                    self.parked_torsion = Some(store);
                }
            }
        }
        let material = StringMaterial { linear_density_kg_per_m: params.string.linear_density_kg_per_m };
        self.string.configure(grid, material);
        self.params = params;
        self.points = points;
        self.time_step_s = k;
        self.contact = BristleContact::new(params.point_friction(), points);
        let share = 1.0 / points as f64;
        self.hair_mass_kg = params.hair.mass_kg * share;
        self.hair_stiffness_n_per_m = params.hair.stiffness_n_per_m * share;
        self.hair_damping_kg_per_s = params.hair.damping_kg_per_s * share;
        self.hair_denominator_kg_per_s = 2.0 * self.hair_mass_kg / k + 0.5 * self.hair_stiffness_n_per_m * k + self.hair_damping_kg_per_s;
        self.finger_m = None;
        self.reset();
        self.target_bow_velocity_mps = 0.0;
        self.normal_force_n = 0.0;
        self.bow_position = f64::NAN;
        self.set_bow_position(params.bow_position);
        true
    }

    /// Stops the string with a finger at `position_m` from the nut, or lifts it with `None`
    /// ([`StiffString::set_finger`], willemsen2019 eq. 23). The finger holds the string's
    /// twist too, up to it ([`TorsionalString::set_clamp`]). The bow position is then a
    /// fraction of the length that sounds, bridge to finger.
    pub fn set_finger(&mut self, position_m: Option<f64>) {
        if position_m != self.finger_m {
            self.string.set_finger(position_m);
            if let Some(t) = &mut self.torsion {
                t.set_clamp(position_m);
            }
            self.finger_m = position_m;
            let position = self.bow_position;
            self.bow_position = f64::NAN;
            self.set_bow_position(position);
        }
    }

    /// The transverse wave speed while the string sounds (for intonation); the grid must
    /// have the headroom (see [`StiffString::set_wave_speed`]). The mobility is unchanged.
    pub fn set_wave_speed(&mut self, wave_speed_mps: f64) {
        self.string.set_wave_speed(wave_speed_mps);
    }

    /// The whole bow's friction (its `s0` and `sigma1_bar` are shared among the points, see
    /// [`HiFiBowParams::point_friction`]), for controls that move while the bow plays.
    pub fn set_friction(&mut self, friction: ElastoPlasticParams) {
        if friction != self.params.friction {
            self.params.friction = friction;
            self.contact.set_point_friction(self.params.point_friction());
        }
    }

    /// Everything back to rest, with the bow at rest on the string.
    pub fn reset(&mut self) {
        self.string.reset();
        if let Some(t) = &mut self.torsion {
            t.reset();
        }
        self.contact.reset();
        self.hair = [Hair::default(); MAX_CONTACT_POINTS];
        self.bow_velocity_mps = 0.0;
        self.last = HiFiStep::default();
    }

    pub fn params(&self) -> &HiFiBowParams {
        &self.params
    }

    pub fn string(&self) -> &StiffString {
        &self.string
    }

    pub fn torsion(&self) -> Option<&TorsionalString> {
        self.torsion.as_ref()
    }

    pub fn contact(&self) -> &BristleContact {
        &self.contact
    }

    /// The contact solver, for its tolerance, cap and warm start.
    pub fn contact_mut(&mut self) -> &mut BristleContact {
        &mut self.contact
    }

    pub fn stats(&self) -> &IterationStats {
        &self.contact.stats
    }

    pub fn contact_points(&self) -> usize {
        self.points
    }

    pub fn time_step_s(&self) -> f64 {
        self.time_step_s
    }

    /// The normal force of the whole bow; `<= 0` (or not finite) lifts it.
    pub fn set_normal_force_n(&mut self, normal_force_n: f64) {
        self.normal_force_n = if normal_force_n.is_finite() { normal_force_n.max(0.0) } else { 0.0 };
    }

    /// The bow velocity to reach, at most [`HiFiBowParams::bow_acceleration_mps2`] per second.
    pub fn set_bow_velocity_mps(&mut self, bow_velocity_mps: f64) {
        if bow_velocity_mps.is_finite() {
            self.target_bow_velocity_mps = bow_velocity_mps;
        }
    }

    /// The bow's distance from the bridge as a fraction of the string length. Every point
    /// is kept [`MIN_BOW_INTERVALS_FROM_END`] string intervals inside the ends.
    pub fn set_bow_position(&mut self, bow_position: f64) {
        if !bow_position.is_finite() || bow_position == self.bow_position {
            return;
        }
        self.bow_position = bow_position;
        let grid = *self.string.grid();
        let h = grid.spacing_m();
        let strip_m = self.params.bow_width_m.max(0.0) / self.points as f64;
        let half_span = 0.5 * strip_m * (self.points - 1) as f64;
        let margin = MIN_BOW_INTERVALS_FROM_END * h + half_span;
        // A stopped string sounds from the finger to the bridge.
        let nut_side = self.string.finger().map_or(0.0, |(node, alpha)| (node as f64 + alpha) * h);
        let vibrating = grid.length_m - nut_side;
        let from_bridge = (bow_position.clamp(0.0, 1.0) * vibrating).clamp(margin, (vibrating - margin).max(margin));
        self.bow_centre_m = grid.length_m - from_bridge;
        for m in 0..self.points {
            let x = self.bow_centre_m - half_span + m as f64 * strip_m;
            self.string_points[m] = CubicPoint::new(x / h, grid.intervals);
            if let Some(t) = &self.torsion {
                self.torsion_points[m] = CubicPoint::new(x / t.spacing_m(), t.intervals());
            }
        }
        self.string_lanes = CubicPoints::new(&self.string_points[..self.points]);
        if self.torsion.is_some() {
            self.torsion_lanes = CubicPoints::new(&self.torsion_points[..self.points]);
        }
        self.update_mobility();
    }

    /// Changes the string's losses while it sounds (`0, 0` for a lossless string). The grid
    /// must have been designed for the largest `sigma1` it will see.
    pub fn set_string_losses(&mut self, sigma0_per_s: f64, sigma1_m2_per_s: f64) {
        self.string.set_losses(sigma0_per_s, sigma1_m2_per_s);
        self.update_mobility();
    }

    /// The torsion's quality factor (`f64::INFINITY` for none).
    pub fn set_torsion_quality_factor(&mut self, quality_factor: f64) {
        if let Some(t) = &mut self.torsion {
            t.set_quality_factor(quality_factor);
        }
        self.update_mobility();
    }

    /// Whether each step computes its powers (off by default): the bow's power, every loss
    /// and the solver's mismatch of [`HiFiStep`], for the energy balance. Off, they are 0
    /// (a voice plays without them).
    pub fn set_power_tracking(&mut self, on: bool) {
        self.track_power = on;
    }

    /// The bow's centre, in metres from the nut.
    pub fn bow_centre_m(&self) -> f64 {
        self.bow_centre_m
    }

    /// `C` of eq. 59: `v = a - C F`.
    pub fn mobility_s_per_kg(&self) -> &PointMatrix {
        &self.mobility
    }

    fn update_mobility(&mut self) {
        let n = self.points;
        let k = self.time_step_s;
        let string = &self.string;
        let string_scale = string.force_to_displacement() / (2.0 * k * string.spacing_m());
        for m in 0..n {
            for j in 0..n {
                let mut c = string_scale * overlap(&self.string_points[m], &self.string_points[j], |l| string.is_free_node(l));
                if let Some(t) = &self.torsion {
                    let torsion_scale = t.params().radius_m * t.force_to_angle() / (2.0 * k * t.spacing_m());
                    c += torsion_scale * overlap(&self.torsion_points[m], &self.torsion_points[j], |l| t.is_free_node(l));
                }
                if m == j {
                    c += 1.0 / self.hair_denominator_kg_per_s;
                }
                self.mobility[m][j] = c;
            }
        }
    }

    /// Steps one sample and returns the force on the bridge (N).
    #[inline]
    pub fn tick(&mut self) -> f64 {
        self.tick_driven(None)
    }

    /// [`Self::tick`] with a point force (N; at a point of the string's grid) added to the
    /// string before the bow is solved: a sympathetic drive through the bridge. It is an
    /// external force: the energy balance then has its power as well.
    #[inline]
    pub fn tick_driven(&mut self, drive: Option<(&CubicPoint, f64)>) -> f64 {
        self.begin_driven(drive);
        let solution = self.solve_begun();
        self.end_step(solution)
    }

    /// Begins [`Self::tick_driven`]'s step: the bow's speed, the free updates and the
    /// contact's problem. [`Self::solve_begun`] (or [`Self::solve_begun_pair`]) solves it
    /// and [`Self::end_step`] ends the step with the answer.
    #[inline]
    pub fn begin_driven(&mut self, drive: Option<(&CubicPoint, f64)>) {
        let n = self.points;
        let k = self.time_step_s;
        let max_step = self.params.bow_acceleration_mps2 * k;
        let change = self.target_bow_velocity_mps - self.bow_velocity_mps;
        self.bow_velocity_mps += if max_step > 0.0 { change.clamp(-max_step, max_step) } else { change };
        let vb = self.bow_velocity_mps;

        self.string.compute_free_update();
        if let Some((point, force)) = drive {
            if force != 0.0 && force.is_finite() {
                self.string.apply_point_force(point, force);
            }
        }
        if let Some(t) = &mut self.torsion {
            t.compute_free_update();
        }
        let mut hair_free = [0.0; MAX_CONTACT_POINTS];
        let mut system = ContactSystem { points: n, free_velocity_mps: [0.0; MAX_CONTACT_POINTS], mobility_s_per_kg: self.mobility };
        // The previous level does not move within the step: its part of each point's
        // surface velocity is read once, for the free velocity and the realised one.
        let surface_previous = self.surface_previous();
        let surface_free = self.surface_velocities_mps(&surface_previous);
        for m in 0..n {
            let hair = self.hair[m];
            hair_free[m] = (2.0 * self.hair_mass_kg * (hair.eta_m - hair.eta_previous_m) / (k * k) - 0.5 * self.hair_stiffness_n_per_m * (hair.eta_m + hair.eta_previous_m)) / self.hair_denominator_kg_per_s;
            system.free_velocity_mps[m] = surface_free[m] - vb - hair_free[m];
        }
        self.begun = BegunStep { bow_velocity_mps: vb, hair_free_mps: hair_free, surface_previous, system, normal_force_per_point_n: self.normal_force_n / n as f64 };
    }

    /// Solves the contact of the step [`Self::begin_driven`] began.
    #[inline]
    pub fn solve_begun(&mut self) -> ContactSolution {
        let begun = &self.begun;
        self.contact.solve(&begun.system, begun.normal_force_per_point_n, self.time_step_s)
    }

    /// [`Self::solve_begun`] for two strings at once (two voices' ribbons): each answer is
    /// the one it gets alone, to the bit ([`BristleContact::solve_pair`]).
    #[inline]
    pub fn solve_begun_pair(a: &mut Self, b: &mut Self) -> (ContactSolution, ContactSolution) {
        BristleContact::solve_pair(
            (&mut a.contact, &a.begun.system, a.begun.normal_force_per_point_n, a.time_step_s),
            (&mut b.contact, &b.begun.system, b.begun.normal_force_per_point_n, b.time_step_s),
        )
    }

    /// Ends the step [`Self::begin_driven`] began with its contact's `solution`: the forces
    /// spread, the hair moved, the step's record, and time moved on. Returns the force on
    /// the bridge (N).
    #[inline]
    pub fn end_step(&mut self, solution: ContactSolution) -> f64 {
        let n = self.points;
        let k = self.time_step_s;
        let BegunStep { bow_velocity_mps: vb, hair_free_mps: hair_free, surface_previous, .. } = self.begun;

        let mut step = HiFiStep { bow_velocity_mps: vb, iterations: solution.iterations, fell_back: solution.fell_back, lifted: solution.lifted, ..HiFiStep::default() };
        let mut hair_velocity = [0.0; MAX_CONTACT_POINTS];
        for m in 0..n {
            let force = solution.force_n[m];
            if force != 0.0 {
                self.string.apply_point_force(&self.string_points[m], force);
                if let Some(t) = &mut self.torsion {
                    t.apply_point_force(&self.torsion_points[m], force);
                }
            }
            hair_velocity[m] = hair_free[m] + force / self.hair_denominator_kg_per_s;
        }
        let s0 = self.contact.point_friction().bristle_stiffness_n_per_m;
        let surface = self.surface_velocities_mps(&surface_previous);
        for m in 0..n {
            let force = solution.force_n[m];
            let realised = surface[m] - vb - hair_velocity[m];
            step.relative_velocity_mps[m] = realised;
            step.force_n[m] = force;
            step.deflection_m[m] = solution.deflection_m[m];
            if self.track_power {
                step.bow_power_w += vb * force;
                step.hair_loss_w += self.hair_damping_kg_per_s * hair_velocity[m] * hair_velocity[m];
                step.bristle_loss_w += force * realised - s0 * solution.deflection_m[m] * solution.deflection_rate_mps[m];
                if !solution.lifted {
                    step.solver_mismatch_mps = step.solver_mismatch_mps.max((realised - solution.velocity_mps[m]).abs());
                }
            }
            let hair = &mut self.hair[m];
            let eta_next = hair.eta_previous_m + 2.0 * k * hair_velocity[m];
            hair.eta_previous_m = hair.eta_m;
            hair.eta_m = eta_next;
        }
        if self.track_power {
            step.bristle_loss_w += solution.released_energy_j / k;
            step.string_loss_w = self.string_loss_w();
            step.torsion_loss_w = self.torsion.as_ref().map_or(0.0, |t| t.loss_w());
        }
        self.string.advance();
        if let Some(t) = &mut self.torsion {
            t.advance();
        }
        step.bridge_force_n = self.string.bridge_force_n();
        self.last = step;
        step.bridge_force_n
    }

    /// `I_m dt. u - r I_T,m dt. w` of the step being built: the string surface's velocity
    /// at each point, along the bow, with `previous` from [`Self::surface_previous`]. The
    /// points are read together, in lanes (a lane past the bow's points repeats the first).
    #[inline]
    fn surface_velocities_mps(&self, (string_previous_m, torsion_previous_rad): &(PointVector, PointVector)) -> PointVector {
        let two_k = 2.0 * self.time_step_s;
        let string_next_m = self.string_lanes.interpolate_each(self.string.next_displacement());
        let torsion_next = self.torsion.as_ref().map(|t| (t.params().radius_m, self.torsion_lanes.interpolate_each(t.next_angle())));
        std::array::from_fn(|m| {
            let transverse = (string_next_m[m] - string_previous_m[m]) / two_k;
            let twist = torsion_next.map_or(0.0, |(radius_m, next_rad)| radius_m * (next_rad[m] - torsion_previous_rad[m]) / two_k);
            transverse - twist
        })
    }

    /// `I_m u^{n-1}` and `I_T,m w^{n-1}` at each point (0 without torsion).
    #[inline]
    fn surface_previous(&self) -> (PointVector, PointVector) {
        let string = self.string_lanes.interpolate_each(self.string.previous_displacement());
        let torsion = self.torsion.as_ref().map_or([0.0; MAX_CONTACT_POINTS], |t| self.torsion_lanes.interpolate_each(t.previous_angle()));
        (string, torsion)
    }

    /// `Q_r` of the step being built (between the free update and `advance`).
    fn string_loss_w(&self) -> f64 {
        let grid = self.string.grid();
        let (next, previous) = (self.string.next_displacement(), self.string.previous_displacement());
        let two_k = 2.0 * grid.time_step_s;
        let h = grid.spacing_m();
        let rho_a = self.string.material().linear_density_kg_per_m;
        let mut velocity_sq = 0.0;
        let mut slope_rate_sq = 0.0;
        let mut before = 0.0;
        for (a, b) in next.iter().zip(previous) {
            let velocity = (a - b) / two_k;
            velocity_sq += velocity * velocity;
            let slope_rate = (velocity - before) / h;
            slope_rate_sq += slope_rate * slope_rate;
            before = velocity;
        }
        // The loop counted one interval before node 0, where both nodes are still.
        2.0 * rho_a * h * (grid.sigma0_per_s * velocity_sq + grid.sigma1_m2_per_s * slope_rate_sq)
    }

    /// The stored energy `H^n` (matusiak2025 section 6.3), part by part. The string's part
    /// is [`StiffString::energy_j`] less `sigma1 rho A k / 2 |dx+ dt- u|^2`: the term that
    /// the backward-difference `sigma1` loss moves out of the energy, so that the balance
    /// holds exactly with losses too and `Q_r` is a sum of squares.
    pub fn energy(&self) -> HiFiEnergy {
        let grid = self.string.grid();
        let k = grid.time_step_s;
        let h = grid.spacing_m();
        let rho_a = self.string.material().linear_density_kg_per_m;
        let mut string_j = self.string.energy_j();
        if grid.sigma1_m2_per_s != 0.0 {
            let (u, p) = (self.string.displacement(), self.string.previous_displacement());
            let mut sum = 0.0;
            for l in 0..grid.intervals {
                let d = ((u[l + 1] - p[l + 1]) - (u[l] - p[l])) / (h * k);
                sum += d * d;
            }
            string_j -= 0.5 * grid.sigma1_m2_per_s * rho_a * k * h * sum;
        }
        let hair_j = self.hair[..self.points]
            .iter()
            .map(|hair| {
                let velocity = (hair.eta_m - hair.eta_previous_m) / k;
                let mean = 0.5 * (hair.eta_m + hair.eta_previous_m);
                0.5 * self.hair_mass_kg * velocity * velocity + 0.5 * self.hair_stiffness_n_per_m * mean * mean
            })
            .sum();
        HiFiEnergy { string_j, torsion_j: self.torsion.as_ref().map_or(0.0, |t| t.energy_j()), hair_j, bristle_j: self.contact.energy_j() }
    }

    /// `H^n` (J).
    pub fn energy_j(&self) -> f64 {
        self.energy().total_j()
    }

    /// The last sample's contact and power terms.
    pub fn last_step(&self) -> &HiFiStep {
        &self.last
    }

    /// The bow velocity of the last sample (after the acceleration limit).
    pub fn bow_velocity_mps(&self) -> f64 {
        self.bow_velocity_mps
    }

    /// Whether every state is finite and within bounds (string 5 cm, twist 100 rad, hair
    /// 5 cm).
    pub fn is_sane(&self) -> bool {
        self.string.is_sane(DIVERGED_DISPLACEMENT_M)
            && self.torsion.as_ref().map_or(true, |t| t.is_sane(DIVERGED_ANGLE_RAD))
            && self.hair[..self.points].iter().all(|h| h.eta_m.abs() <= DIVERGED_DISPLACEMENT_M && h.eta_previous_m.abs() <= DIVERGED_DISPLACEMENT_M)
            && self.contact.half_step_deflection_m().iter().all(|z| z.is_finite())
    }
}

/// `sum_l w_a,l w_b,l` over the moving nodes two stencils share: `h (I_a . J_b)`.
fn overlap(a: &CubicPoint, b: &CubicPoint, is_free: impl Fn(usize) -> bool) -> f64 {
    let mut sum = 0.0;
    for (i, wa) in a.weights.iter().enumerate() {
        let node = a.first_index + i;
        if is_free(node) && node >= b.first_index && node < b.first_index + 4 {
            sum += wa * b.weights[node - b.first_index];
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_grids_and_shares() {
        let p = HiFiBowParams::matusiak2025();
        let bowed = HiFiBowedString::new(p, 44_100.0);
        assert_eq!(bowed.string().intervals(), 158);
        assert_eq!(bowed.torsion().unwrap().intervals(), 36);
        // P_T = rho A r^2 / 2 with rho A = T / (2 f0 L)^2.
        let rho_a = 149.74 / (2.0f64 * 98.0 * 0.7).powi(2);
        assert!((p.torsion.unwrap().polar_inertia_kg_m - rho_a * 25e-8 / 2.0).abs() < 1e-20);
        assert!((bowed.contact().point_friction().bristle_stiffness_n_per_m - 3.186e5 / 4.0).abs() < 1e-9);
        // The points span 7.5 mm around the bow, 5.5 cm from the bridge.
        assert!((0.7 - bowed.bow_centre_m() - 0.0786 * 0.7).abs() < 1e-12);
    }

    #[test]
    fn the_mobility_is_symmetric_and_positive_definite() {
        let bowed = HiFiBowedString::new(HiFiBowParams::matusiak2025(), 44_100.0);
        let c = bowed.mobility_s_per_kg();
        for m in 0..4 {
            for j in 0..4 {
                assert!((c[m][j] - c[j][m]).abs() <= 1e-15 * c[m][m]);
            }
        }
        // Cholesky succeeds.
        let mut l = [[0.0; 4]; 4];
        for i in 0..4 {
            for j in 0..=i {
                let s: f64 = (0..j).map(|q| l[i][q] * l[j][q]).sum();
                if i == j {
                    let d = c[i][i] - s;
                    assert!(d > 0.0, "not positive definite at {i}: {d}");
                    l[i][i] = d.sqrt();
                } else {
                    l[i][j] = (c[i][j] - s) / l[j][j];
                }
            }
        }
    }

    #[test]
    fn overlap_of_a_point_with_itself_is_its_sum_of_squares() {
        let a = CubicPoint::new(5.3, 20);
        let free = |l: usize| l > 0 && l < 20;
        assert!((overlap(&a, &a, free) - a.sum_of_squares(free)).abs() < 1e-15);
        let b = CubicPoint::new(12.0, 20);
        assert_eq!(overlap(&a, &b, free), 0.0);
    }
}

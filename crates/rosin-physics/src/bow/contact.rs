//! The bow's contact with whichever friction model is chosen. Every string engine gives the
//! contact the same problem each sample, `v = v_free - c f` (the relative velocity with no
//! friction, and the string's mobility over a step), so every model works on every engine:
//!
//! | model | paper | state | solve |
//! |---|---|---|---|
//! | [`FrictionModel::ElastoPlastic`] | willemsen2019 (Dupont) | bristle `z` | 2x2 Newton, bisection fallback ([`crate::friction::dupont_contact`]) |
//! | [`FrictionModel::PassiveRefined`] | matusiak2025 | `z^{n-1/2}`, bow hair | scalar Newton, bisection fallback ([`crate::friction::refined`]) |
//! | [`FrictionModel::Hyperbolic`] | serafin1999 | stick or slide | closed form ([`crate::friction::hyperbolic`]) |
//! | [`FrictionModel::Dahl`] | serafin1999 (Hayward-Armstrong) | bristle `z` | scalar Newton, bisection fallback ([`crate::friction::dahl`]) |
//!
//! All of them read the same friction controls, [`ElastoPlasticParams`]: the hyperbolic law is
//! fitted to `muS`, `muC` and `vS` (`mu = muC + (muS - muC) b / (b + |v|)`, `b = 2 vS`, which
//! is serafin1999's `0.3 + 0.1 / (0.2 + |v|)` at the default controls); only the
//! elasto-plastic model uses the bow noise (willemsen2019's `s3` term).
//!
//! The model is chosen while the bow is off the string ([`FrictionContact::set_model`]
//! resets the contact state), so a change never lands mid-stroke.

use crate::friction::dupont_contact::{BowContact, ContactInput, ContactOutput, MIN_NORMAL_FORCE_N};
use crate::friction::dupont_lanes::LANES;
use crate::bow::hair::{BowHair, HairParams};
use crate::friction::dahl::DahlFriction;
use crate::friction::dupont::ElastoPlasticParams;
use crate::friction::elementary::finite;
use crate::friction::hyperbolic::{ContactState, ElasticStick, HyperbolicFriction, HyperbolicLaw, STICK_DAMPING_PER_MOBILITY};
use crate::friction::newton::IterationStats;
use crate::friction::refined::{BristleDamping, RefinedBristle, RefinedProblem};

/// The passive refined law's budget of residual evaluations in one sample at one contact
/// point: Newton (its median is 3 steps, at most four halvings a step) and then bisection.
/// Its unbudgeted solve could take about 1,900 (50 steps of up to 30 halvings, then 260 of
/// bisection), which a storm of random controls found: 16 voices at 6.6 us a sample each,
/// five times a block's budget. In a legato scale and a chord, 6.8 % of samples end in the
/// bisection, which the budget still takes to about 1e-16 m/s: the render differs from the
/// unbudgeted solve's by -119 dB RMS.
pub const MAX_REFINED_EVALUATIONS: usize = 64;

/// The friction models Rosin plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrictionModel {
    /// Dupont's elasto-plastic bristle with willemsen2019's corrections.
    #[default]
    ElastoPlastic,
    /// matusiak2025's passive elasto-plastic model, energy-conserving scheme and bow hair.
    PassiveRefined,
    /// serafin1999's hyperbolic static friction curve.
    Hyperbolic,
    /// serafin1999's Dahl / Hayward-Armstrong bristle.
    Dahl,
}

impl FrictionModel {
    pub const ALL: [FrictionModel; 4] = [FrictionModel::ElastoPlastic, FrictionModel::PassiveRefined, FrictionModel::Hyperbolic, FrictionModel::Dahl];

    /// The model at a choice index (out of range: the last).
    pub fn from_index(index: usize) -> Self {
        Self::ALL[index.min(Self::ALL.len() - 1)]
    }

    pub fn name(self) -> &'static str {
        match self {
            FrictionModel::ElastoPlastic => "Dupont elasto-plastic (2019)",
            FrictionModel::PassiveRefined => "Passive refined (2025)",
            FrictionModel::Hyperbolic => "Hyperbolic (1999)",
            FrictionModel::Dahl => "Dahl (1999)",
        }
    }
}

/// serafin1999's hyperbola through the elasto-plastic controls' `muS`, `muC` and `vS`.
pub fn hyperbolic_law_for(friction: &ElastoPlasticParams) -> HyperbolicLaw {
    let offset_mps = 2.0 * friction.stribeck_velocity_mps;
    HyperbolicLaw {
        coulomb_coefficient: friction.coulomb_coefficient,
        numerator_mps: (friction.static_coefficient - friction.coulomb_coefficient).max(0.0) * offset_mps,
        offset_mps,
        viscous_s_per_m: 0.0,
    }
}

/// [`hyperbolic_law_for`] with a viscous branch (s/m; 0 is the paper's law).
fn hyperbolic_law(friction: &ElastoPlasticParams, viscous_s_per_m: f64) -> HyperbolicLaw {
    HyperbolicLaw { viscous_s_per_m, ..hyperbolic_law_for(friction) }
}

/// The law's steady curve: the friction force (N, on the bow, the sign of `velocity_mps`)
/// that `model` settles to when the contact slides at a constant relative velocity, at
/// `normal_force_n`. What a hysteresis loop is drawn against. The bristle laws hold the
/// steady deflection `z_ss(v)` (so `s0 z_ss`, plus `s2 v` where the law has the viscous
/// term: elasto-plastic and Dahl); the hyperbolic law is its curve `mu(v) fN`, with the
/// viscous branch `hyperbolic_viscous_s_per_m` ([`FrictionContact::hyperbolic_viscous_s_per_m`];
/// 0 on the strings). No noise. At `v = 0` the steady force is anywhere in the static band:
/// 0 is returned.
pub fn steady_friction_force_n(model: FrictionModel, friction: &ElastoPlasticParams, hyperbolic_viscous_s_per_m: f64, normal_force_n: f64, velocity_mps: f64) -> f64 {
    if velocity_mps == 0.0 || !(normal_force_n > 0.0) {
        return 0.0;
    }
    let sign = velocity_mps.signum();
    let bristle = || sign * friction.bristle_stiffness_n_per_m * friction.steady_state_deflection_m(normal_force_n, velocity_mps);
    match model {
        FrictionModel::ElastoPlastic | FrictionModel::Dahl => bristle() + friction.viscous_damping_kg_per_s * velocity_mps,
        FrictionModel::PassiveRefined => bristle(),
        FrictionModel::Hyperbolic => sign * hyperbolic_law(friction, hyperbolic_viscous_s_per_m).coefficient(velocity_mps) * normal_force_n,
    }
}

/// The bow's contact under any of the models. Only the chosen model's state moves.
pub struct FrictionContact {
    /// The friction controls every model reads.
    pub friction: ElastoPlasticParams,
    /// The bow hair of the passive refined model (matusiak2025 Table 2 by default).
    pub hair: HairParams,
    /// The hyperbolic law's stick: its least damping in units of the resonator's `1 / c`
    /// ([`STICK_DAMPING_PER_MOBILITY`] on a string).
    pub stick_damping_per_mobility: f64,
    /// The hyperbolic law's viscous branch, `mu` growing by this per m/s of sliding speed
    /// (s/m; [`HyperbolicLaw::viscous_s_per_m`]). 0, the paper's law, on the strings.
    pub hyperbolic_viscous_s_per_m: f64,
    model: FrictionModel,
    elasto_plastic: BowContact,
    refined: RefinedBristle,
    hair_state: BowHair,
    hyperbolic: HyperbolicFriction,
    dahl: DahlFriction,
    /// Newton statistics of the passive refined model (the others keep their own).
    refined_stats: IterationStats,
    seed: u64,
    /// The relative velocity the friction law itself saw at the last sample.
    interface_velocity_mps: f64,
}

impl FrictionContact {
    pub fn new(friction: ElastoPlasticParams, seed: u64) -> Self {
        Self {
            friction,
            hair: HairParams::matusiak2025(),
            stick_damping_per_mobility: STICK_DAMPING_PER_MOBILITY,
            hyperbolic_viscous_s_per_m: 0.0,
            model: FrictionModel::ElastoPlastic,
            elasto_plastic: BowContact::new(friction, seed),
            refined: RefinedBristle::with_tolerance(1e-10),
            hair_state: BowHair::default(),
            hyperbolic: HyperbolicFriction::new(hyperbolic_law_for(&friction)),
            dahl: DahlFriction::new(friction),
            refined_stats: IterationStats::default(),
            seed,
            interface_velocity_mps: 0.0,
        }
    }

    pub fn model(&self) -> FrictionModel {
        self.model
    }

    /// Chooses the model and puts every contact state at rest: call it with the bow off
    /// the string.
    pub fn set_model(&mut self, model: FrictionModel) {
        self.model = model;
        self.reset(self.seed);
    }

    /// Every state at rest; the noise sequence restarts from `seed`.
    pub fn reset(&mut self, seed: u64) {
        self.seed = seed;
        self.elasto_plastic.reset(seed);
        self.refined.reset();
        self.hair_state.reset();
        self.hyperbolic.reset();
        self.dahl.reset();
    }

    /// The bristle deflection of the chosen model (0 for the hyperbolic law, which has none).
    pub fn deflection_m(&self) -> f64 {
        match self.model {
            FrictionModel::ElastoPlastic => self.elasto_plastic.deflection_m(),
            FrictionModel::PassiveRefined => self.refined.deflection_half_m(),
            FrictionModel::Hyperbolic => 0.0,
            FrictionModel::Dahl => self.dahl.deflection_m(),
        }
    }

    /// The elasto-plastic model's state (its `friction` as of its last solve), for tests
    /// that solve a sample again from it.
    #[doc(hidden)]
    pub fn elasto_plastic(&self) -> &BowContact {
        &self.elasto_plastic
    }

    /// Newton statistics of every model that iterates.
    pub fn stats(&self) -> IterationStats {
        let mut stats = self.elasto_plastic.stats.clone();
        stats.merge(&self.refined_stats);
        stats.merge(&self.dahl.stats);
        stats
    }

    /// The relative velocity the friction law saw at the last sample (m/s): the string's
    /// relative velocity less the bow hair's velocity under the passive refined model (the
    /// output's `relative_velocity_mps` is the string's), the same for the others. Hysteresis
    /// plots put the force against this.
    pub fn interface_velocity_mps(&self) -> f64 {
        self.interface_velocity_mps
    }

    /// The bristle stiffness control moves from `from_n_per_m` to `to_n_per_m` (automation):
    /// every bristle keeps the force it holds, rather than the force jumping with the
    /// stiffness (raised a hundredfold under a held note it made a 20 dB click).
    pub fn rescale_bristles(&mut self, from_n_per_m: f64, to_n_per_m: f64) {
        let ratio = from_n_per_m / to_n_per_m;
        self.elasto_plastic.rescale_deflection(ratio);
        self.refined.rescale_deflection(ratio);
        self.dahl.rescale_deflection(ratio);
    }

    /// The bow off the string: no force, the string's own velocity (0 if that is not a
    /// finite number), every bristle and the hair relaxed.
    pub fn lift(&mut self, free_velocity_mps: f64) -> ContactOutput {
        let v = if free_velocity_mps.is_finite() { free_velocity_mps } else { 0.0 };
        self.elasto_plastic.lift(v);
        self.refined.lift(v);
        self.hair_state.reset();
        self.hyperbolic.reset();
        self.dahl.reset();
        self.interface_velocity_mps = v;
        ContactOutput { force_n: 0.0, relative_velocity_mps: v, deflection_m: 0.0, iterations: 0, converged: true }
    }

    /// Solves one sample with the chosen model and commits its state.
    // Always inlined: a lone voice's sample in the engine's loop otherwise calls it (the
    // compiler left it and `Intonation::observe` out of line once the ribbons were
    // paired: without the two attributes, 2,323 instructions a sample for a lone G3
    // against 2,291).
    #[inline(always)]
    pub fn solve(&mut self, input: &ContactInput) -> ContactOutput {
        // Inputs no law can take (a normal force below the bow's touch, infinite or NaN; a
        // velocity, mobility or time step that is not a finite number) lift the bow, for
        // every law alike: no force, the string's own velocity, every bristle relaxed.
        if !Self::usable(input) {
            return self.lift(input.free_velocity_mps);
        }
        let out = self.solve_model(input);
        self.settle(input, out)
    }

    /// [`FrictionContact::solve`] for up to eight contacts (a lane without one is idle): the
    /// elasto-plastic ones side by side in vector lanes
    /// ([`crate::friction::dupont_lanes`]), the others one by one. Every contact ends as
    /// `solve` would leave it, to the bit.
    pub fn solve_lanes(contacts: &mut [Option<&mut FrictionContact>; LANES], inputs: &[ContactInput; LANES]) -> [ContactOutput; LANES] {
        let mut outputs = [ContactOutput::default(); LANES];
        let mut in_lanes = [false; LANES];
        let solved = {
            let mut laned: [Option<&mut BowContact>; LANES] = Default::default();
            for (l, slot) in contacts.iter_mut().enumerate() {
                let Some(contact) = slot.as_deref_mut() else { continue };
                if contact.model == FrictionModel::ElastoPlastic && Self::usable(&inputs[l]) {
                    contact.elasto_plastic.friction = contact.friction;
                    laned[l] = Some(&mut contact.elasto_plastic);
                    in_lanes[l] = true;
                } else {
                    outputs[l] = contact.solve(&inputs[l]);
                }
            }
            BowContact::solve_lanes(&mut laned, inputs)
        };
        for (l, slot) in contacts.iter_mut().enumerate() {
            if let (true, Some(contact)) = (in_lanes[l], slot.as_deref_mut()) {
                outputs[l] = contact.settle(&inputs[l], solved[l]);
            }
        }
        outputs
    }

    /// Whether any law can take `input` (see [`FrictionContact::solve`]).
    #[inline]
    fn usable(input: &ContactInput) -> bool {
        // Each a comparison that NaN fails (see `elementary::finite`).
        input.normal_force_n >= MIN_NORMAL_FORCE_N
            && input.normal_force_n <= f64::MAX
            && finite(input.free_velocity_mps)
            && input.coupling_s_per_kg >= 0.0
            && input.coupling_s_per_kg <= f64::MAX
            && input.time_step_s > 0.0
            && input.time_step_s <= f64::MAX
    }

    /// What [`FrictionContact::solve`] does with a law's answer `out`.
    #[inline]
    fn settle(&mut self, input: &ContactInput, out: ContactOutput) -> ContactOutput {
        // A law that overflows on inputs at the edge of the representable (a mobility of
        // 1e300) answers as a lifted bow rather than hand the string an infinity.
        if !(finite(out.force_n) && finite(out.relative_velocity_mps)) {
            return self.lift(input.free_velocity_mps);
        }
        if self.model != FrictionModel::PassiveRefined {
            self.interface_velocity_mps = out.relative_velocity_mps;
        }
        out
    }

    #[inline]
    fn solve_model(&mut self, input: &ContactInput) -> ContactOutput {
        match self.model {
            FrictionModel::ElastoPlastic => {
                self.elasto_plastic.friction = self.friction;
                self.elasto_plastic.solve(input)
            }
            FrictionModel::PassiveRefined => self.solve_refined(input),
            FrictionModel::Hyperbolic | FrictionModel::Dahl => self.solve_1999(input),
        }
    }

    /// serafin1999's two laws, with no bow hair (the paper has none).
    fn solve_1999(&mut self, input: &ContactInput) -> ContactOutput {
        if self.model == FrictionModel::Hyperbolic {
            self.hyperbolic.law = hyperbolic_law(&self.friction, self.hyperbolic_viscous_s_per_m);
            let stick = ElasticStick { stiffness_n_per_m: self.friction.bristle_stiffness_n_per_m, damping_kg_per_s: self.friction.bristle_damping_kg_per_s, least_damping_per_mobility: self.stick_damping_per_mobility, time_step_s: input.time_step_s };
            let out = self.hyperbolic.solve_elastic(input.free_velocity_mps, input.coupling_s_per_kg, input.normal_force_n, &stick);
            ContactOutput { force_n: out.force_n, relative_velocity_mps: out.relative_velocity_mps, deflection_m: 0.0, iterations: 0, converged: true }
        } else {
            self.dahl.friction = self.friction;
            self.dahl.solve(input)
        }
    }

    /// Whether the hyperbolic contact sticks (for tools that plot it).
    pub fn hyperbolic_state(&self) -> ContactState {
        self.hyperbolic.state()
    }

    /// matusiak2025 at one point: the hair adds its own free velocity and mobility to the
    /// string's, then the scalar solve runs on the sum.
    fn solve_refined(&mut self, input: &ContactInput) -> ContactOutput {
        let k = input.time_step_s;
        if !(input.normal_force_n >= MIN_NORMAL_FORCE_N) || !input.free_velocity_mps.is_finite() {
            // The bow lifts: the hair and the bristle relax.
            self.hair_state.reset();
            self.refined.lift(input.free_velocity_mps);
            let v = if input.free_velocity_mps.is_finite() { input.free_velocity_mps } else { 0.0 };
            self.interface_velocity_mps = v;
            return ContactOutput { force_n: 0.0, relative_velocity_mps: v, deflection_m: 0.0, iterations: 0, converged: true };
        }
        let problem = RefinedProblem {
            friction: &self.friction,
            damping_law: BristleDamping::Refined,
            normal_force_n: input.normal_force_n,
            free_velocity_mps: input.free_velocity_mps - self.hair_state.free_velocity_mps(&self.hair, k),
            mobility_s_per_kg: input.coupling_s_per_kg + self.hair.mobility_s_per_kg(k),
            time_step_s: k,
        };
        let (solution, search) = self.refined.solve_within(&problem, MAX_REFINED_EVALUATIONS);
        self.refined_stats.record(search.newton_steps);
        self.refined_stats.max_evaluations = self.refined_stats.max_evaluations.max(search.evaluations);
        let converged = search.converged;
        if !converged {
            self.refined_stats.fallbacks += 1;
        }
        if !(solution.force_n.is_finite() && solution.velocity_mps.is_finite()) {
            self.hair_state.reset();
            self.refined.lift(input.free_velocity_mps);
            self.interface_velocity_mps = 0.0;
            return ContactOutput { force_n: 0.0, relative_velocity_mps: input.free_velocity_mps, deflection_m: 0.0, iterations: solution.iterations, converged: false };
        }
        self.hair_state.advance(&self.hair, k, solution.force_n);
        self.refined.commit(&solution);
        self.interface_velocity_mps = solution.velocity_mps;
        // The string moves at v + dt. eta relative to the bow; the hair's share is the
        // difference between the string's own velocity and the contact's.
        ContactOutput {
            force_n: solution.force_n,
            relative_velocity_mps: input.free_velocity_mps - input.coupling_s_per_kg * solution.force_n,
            deflection_m: solution.deflection_m,
            iterations: solution.iterations,
            converged,
        }
    }
}

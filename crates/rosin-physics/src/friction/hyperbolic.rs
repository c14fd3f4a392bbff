//! serafin1999's hyperbolic friction law, solved in closed form at a bow contact
//! (`MODELS.md` section 4). The friction coefficient falls with the sliding speed,
//! `mu(x) = muC + a / (b + x)` (the paper: 0.3 + 0.1 / (0.2 + |dv|), so `muS` = 0.8), and the
//! bow-string contact must satisfy both the friction law and the string's response, the
//! line `v = v_free - c f` with `c` the string's mobility over a step (`1 / 2Z` on a
//! waveguide, the FDTD coupling on a finite-difference string).
//!
//! While sliding in direction `s`, `f = s mu(|v|) fN`; with `x = s v` the two meet where
//! `x^2 + (b - p) x + c fN a - p b = 0`, `p = s v_free - c fN muC`: a quadratic, so no
//! iteration at all. Sticking (`v = 0`) needs `|v_free| <= c muS fN`.
//!
//! Rosin's own addition, zero in the paper and on the strings: a viscous branch
//! `mu(x) = muC + a / (b + x) + e x` (`e` in s/m, [`HyperbolicLaw::viscous_s_per_m`]), the
//! `sigma2 v` of a Stribeck curve with viscous friction (the elasto-plastic law's `s2`), here
//! in proportion to the load. The friction drum's bow takes it
//! (`rosin_engine::drum_voice::LawBow`). With `q = 1 + c fN e` the meeting point is the root
//! of `q x^2 + (q b - p) x + c fN a - p b = 0`, still in closed form. At `e = 0` the
//! paper's own expressions run, so the strings' law keeps its bits.
//!
//! Where sticking and sliding are both possible the contact keeps what it was doing (the
//! paper's hysteresis rule), and of two sliding roots it takes the larger: the smaller is
//! the unstable middle intersection, never taken.

/// The law's constants: `mu(x) = coulomb + numerator / (offset_mps + x) + viscous x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperbolicLaw {
    pub coulomb_coefficient: f64,
    pub numerator_mps: f64,
    pub offset_mps: f64,
    /// How much `mu` grows per m/s of sliding speed (s/m): a viscous branch, Rosin's own.
    /// 0 in serafin1999 and on the strings.
    pub viscous_s_per_m: f64,
}

impl Default for HyperbolicLaw {
    /// serafin1999: `mu = 0.3 + 0.1 / (0.2 + |dv|)`.
    fn default() -> Self {
        Self { coulomb_coefficient: 0.3, numerator_mps: 0.1, offset_mps: 0.2, viscous_s_per_m: 0.0 }
    }
}

impl HyperbolicLaw {
    /// `mu` at a sliding speed (m/s, its size).
    #[inline]
    pub fn coefficient(&self, speed_mps: f64) -> f64 {
        let speed_mps = speed_mps.abs();
        let hyperbola = self.coulomb_coefficient + self.numerator_mps / (self.offset_mps + speed_mps);
        if self.viscous_s_per_m == 0.0 {
            return hyperbola;
        }
        hyperbola + self.viscous_s_per_m * speed_mps
    }

    /// `muS`, the coefficient at rest.
    pub fn static_coefficient(&self) -> f64 {
        self.coefficient(0.0)
    }
}

/// What the contact is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactState {
    Sticking,
    /// Sliding with the relative velocity's sign.
    Sliding(i8),
}

/// One sample's result: the friction force (acting as `v = v_free - c f`) and the relative
/// velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperbolicContact {
    pub force_n: f64,
    pub relative_velocity_mps: f64,
    pub state: ContactState,
}

/// The contact between samples: whether it sticks or slides, and (for the elastic stick)
/// the stuck contact's deflection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperbolicFriction {
    pub law: HyperbolicLaw,
    state: ContactState,
    stick_deflection_m: f64,
}

/// The elastic stick's least damping on a string, in units of the string's own `1 / c`
/// (`2 Z` on a waveguide): the stuck contact absorbs the waves reaching it instead of
/// ringing with them. Measured over MIDI 28-100 on both engines: at 0.25 and 0.5 the
/// contact chatters into two to four slips a period, at 1 the lowest notes still do, at 2
/// Helmholtz motion holds from MIDI 31 up, at 4 the waveguide's low notes double-slip
/// again. (The friction drum's membrane takes 1.5: `rosin_engine::drum_voice::LawBow`.)
pub const STICK_DAMPING_PER_MOBILITY: f64 = 2.0;

/// A sticking contact held by a stiff, damped spring instead of rigidly: see
/// [`HyperbolicFriction::solve_elastic`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElasticStick {
    pub stiffness_n_per_m: f64,
    pub damping_kg_per_s: f64,
    /// The least damping, in units of the contact's `1 / c` (the resonator's own
    /// impedance over a step): [`STICK_DAMPING_PER_MOBILITY`] on a string.
    pub least_damping_per_mobility: f64,
    pub time_step_s: f64,
}

impl HyperbolicFriction {
    pub fn new(law: HyperbolicLaw) -> Self {
        Self { law, state: ContactState::Sticking, stick_deflection_m: 0.0 }
    }

    /// The law with a compliant stick, for the finite-difference string. There a rigid stick
    /// (`v = 0` exactly) is imposed on the centred velocity `(u^{n+1} - u^{n-1}) / 2k`, which
    /// leaves the contact point's sample-to-sample motion free: the stuck string chatters
    /// and slips several times a period. Here the stuck contact is held by a spring `s0`
    /// with damping `s1` (the elasto-plastic model's presliding bristle, backward Euler),
    /// `f = s0 (z + v k) + s1 v` with `s1` at least `ElasticStick::least_damping_per_mobility / c`,
    /// for as long as `|f| <= muS fN`; past that it slides on the
    /// hyperbola exactly as [`Self::solve`] does, and when the sliding root vanishes it
    /// sticks again with the spring carrying the force it had. Sliding samples are on the
    /// law's curve; sticking ones have `|v|` of order `muS fN / (s0 k)`.
    pub fn solve_elastic(&mut self, free_velocity_mps: f64, mobility_s_per_kg: f64, normal_force_n: f64, stick: &ElasticStick) -> HyperbolicContact {
        if normal_force_n <= 0.0 || !free_velocity_mps.is_finite() || mobility_s_per_kg <= 0.0 {
            self.stick_deflection_m = 0.0;
            return self.solve(free_velocity_mps, mobility_s_per_kg, normal_force_n);
        }
        let k = stick.time_step_s;
        let s0 = stick.stiffness_n_per_m;
        let grip = s0 * k + stick.damping_kg_per_s.max(stick.least_damping_per_mobility / mobility_s_per_kg);
        let limit = self.law.static_coefficient() * normal_force_n;
        let stuck = |z: f64| {
            let v = (free_velocity_mps - mobility_s_per_kg * s0 * z) / (1.0 + mobility_s_per_kg * grip);
            (v, s0 * z + grip * v)
        };
        let c = mobility_s_per_kg * normal_force_n;
        if let ContactState::Sliding(sign) = self.state {
            if let Some(x) = self.slide_speed(sign as f64, free_velocity_mps, c) {
                let force = sign as f64 * self.law.coefficient(x) * normal_force_n;
                self.stick_deflection_m = force / s0;
                return HyperbolicContact { force_n: force, relative_velocity_mps: sign as f64 * x, state: self.state };
            }
            // The sliding root is gone: the contact grips, the spring carrying the force of
            // the last sliding sample.
            self.state = ContactState::Sticking;
        }
        let (v, force) = stuck(self.stick_deflection_m);
        if force.abs() <= limit {
            self.stick_deflection_m += v * k;
            return HyperbolicContact { force_n: force, relative_velocity_mps: v, state: ContactState::Sticking };
        }
        // Break away in the direction the spring pulls.
        let sign = force.signum();
        match self.slide_speed(sign, free_velocity_mps, c) {
            Some(x) => {
                self.state = ContactState::Sliding(sign as i8);
                let force = sign * self.law.coefficient(x) * normal_force_n;
                self.stick_deflection_m = force / s0;
                HyperbolicContact { force_n: force, relative_velocity_mps: sign * x, state: self.state }
            }
            None => {
                // No sliding root either: hold at the static limit.
                let force = sign * limit;
                self.stick_deflection_m = force / s0;
                HyperbolicContact { force_n: force, relative_velocity_mps: free_velocity_mps - mobility_s_per_kg * force, state: ContactState::Sticking }
            }
        }
    }

    pub fn state(&self) -> ContactState {
        self.state
    }

    pub fn reset(&mut self) {
        self.state = ContactState::Sticking;
        self.stick_deflection_m = 0.0;
    }

    /// The larger sliding speed in direction `sign` where the line meets the law, if any.
    fn slide_speed(&self, sign: f64, free_velocity_mps: f64, mobility: f64) -> Option<f64> {
        let l = &self.law;
        let p = sign * free_velocity_mps - mobility * l.coulomb_coefficient;
        let b = l.offset_mps;
        if l.viscous_s_per_m != 0.0 {
            // q x^2 + (q b - p) x + (mobility a - p b) = 0 with q = 1 + mobility e.
            let q = 1.0 + mobility * l.viscous_s_per_m;
            let discriminant = (q * b + p) * (q * b + p) - 4.0 * q * mobility * l.numerator_mps;
            if discriminant < 0.0 {
                return None;
            }
            let x = ((p - q * b) + discriminant.sqrt()) / (2.0 * q);
            return (x > 0.0).then_some(x);
        }
        // x^2 + (b - p) x + (mobility a - p b) = 0, mobility here already times fN.
        let discriminant = (b + p) * (b + p) - 4.0 * mobility * l.numerator_mps;
        if discriminant < 0.0 {
            return None;
        }
        let x = 0.5 * ((p - b) + discriminant.sqrt());
        (x > 0.0).then_some(x)
    }

    /// Solves one sample: the string would move at `free_velocity_mps` relative to the bow
    /// without friction, and moves `mobility_s_per_kg` m/s less per newton of friction.
    pub fn solve(&mut self, free_velocity_mps: f64, mobility_s_per_kg: f64, normal_force_n: f64) -> HyperbolicContact {
        if normal_force_n <= 0.0 || !free_velocity_mps.is_finite() || mobility_s_per_kg <= 0.0 {
            self.state = ContactState::Sliding(free_velocity_mps.signum() as i8);
            let v = if free_velocity_mps.is_finite() { free_velocity_mps } else { 0.0 };
            return HyperbolicContact { force_n: 0.0, relative_velocity_mps: v, state: self.state };
        }
        let c = mobility_s_per_kg * normal_force_n;
        let stick_force = free_velocity_mps / mobility_s_per_kg;
        let can_stick = stick_force.abs() <= self.law.static_coefficient() * normal_force_n;
        let slide = |sign: f64| self.slide_speed(sign, free_velocity_mps, c).map(|x| (sign, x));
        let sliding = match self.state {
            // Hysteresis: a sticking contact sticks while it can.
            ContactState::Sticking if can_stick => None,
            ContactState::Sticking => slide(free_velocity_mps.signum()),
            // A sliding contact slides on while its root exists.
            ContactState::Sliding(s) => slide(s as f64).or_else(|| if can_stick { None } else { slide(free_velocity_mps.signum()) }),
        };
        let result = match sliding {
            Some((sign, x)) => HyperbolicContact {
                force_n: sign * self.law.coefficient(x) * normal_force_n,
                relative_velocity_mps: sign * x,
                state: ContactState::Sliding(sign as i8),
            },
            // No sliding root (the line passes between the branches) means sticking is
            // possible: the line meets v = 0 inside the static band.
            None => HyperbolicContact {
                // `max`/`min`, not `clamp`, which panics on a NaN bound.
                force_n: stick_force.max(-self.law.static_coefficient() * normal_force_n).min(self.law.static_coefficient() * normal_force_n),
                relative_velocity_mps: 0.0,
                state: ContactState::Sticking,
            },
        };
        self.state = result.state;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sweeps the free velocity up and back down through the contact: returns the free
    /// velocities where it broke away and where it stuck again.
    fn sweep(mobility: f64, normal_force_n: f64) -> (f64, f64, Vec<(f64, HyperbolicContact)>) {
        sweep_law(HyperbolicLaw::default(), mobility, normal_force_n)
    }

    fn sweep_law(law: HyperbolicLaw, mobility: f64, normal_force_n: f64) -> (f64, f64, Vec<(f64, HyperbolicContact)>) {
        let mut contact = HyperbolicFriction::new(law);
        let steps = 20_000;
        let top = 2.0 * mobility * normal_force_n;
        let mut samples = Vec::new();
        let (mut broke, mut stuck) = (f64::NAN, f64::NAN);
        for i in 0..=2 * steps {
            let phase = i as f64 / steps as f64;
            let v_free = top * if phase <= 1.0 { phase } else { 2.0 - phase };
            let before = contact.state();
            let out = contact.solve(v_free, mobility, normal_force_n);
            if before == ContactState::Sticking && out.state != ContactState::Sticking && broke.is_nan() {
                broke = v_free;
            }
            if before != ContactState::Sticking && out.state == ContactState::Sticking && phase > 1.0 && stuck.is_nan() {
                stuck = v_free;
            }
            samples.push((v_free, out));
        }
        (broke, stuck, samples)
    }

    #[test]
    fn every_sample_is_on_the_line_and_on_the_law() {
        // The paper's law, and with the viscous branch the friction drum gives it.
        let viscous = HyperbolicLaw { viscous_s_per_m: 0.3, ..HyperbolicLaw::default() };
        for (law, mobility, force) in [(HyperbolicLaw::default(), 1.0, 1.0), (HyperbolicLaw::default(), 2.5, 0.5), (HyperbolicLaw::default(), 0.05, 2.0), (viscous, 1.0, 1.0), (viscous, 2.5, 0.5), (viscous, 0.05, 2.0)] {
            let (_, _, samples) = sweep_law(law, mobility, force);
            for (v_free, out) in samples {
                let line = v_free - mobility * out.force_n;
                assert!((out.relative_velocity_mps - line).abs() < 1e-12, "off the line at v_free {v_free}");
                match out.state {
                    ContactState::Sticking => {
                        assert_eq!(out.relative_velocity_mps, 0.0);
                        assert!(out.force_n.abs() <= law.static_coefficient() * force * (1.0 + 1e-12));
                    }
                    ContactState::Sliding(s) => {
                        assert_eq!(out.relative_velocity_mps.signum(), s as f64);
                        let on_law = s as f64 * law.coefficient(out.relative_velocity_mps) * force;
                        assert!((out.force_n - on_law).abs() < 1e-12 * force, "off the law at v_free {v_free}");
                    }
                }
            }
        }
    }

    #[test]
    fn breakaway_at_mu_s_and_a_later_return_to_stick_is_hysteresis() {
        // In the (speed, force) plane the line falls with slope -1/mobility and the law at
        // most with slope -fN a / b^2 = -2.5 fN. With mobility fN = 1 > 0.4 the line is the
        // shallower, can meet the law twice, and sliding outlives the breakaway point.
        let (mobility, force) = (1.0, 1.0);
        let (broke, stuck, _) = sweep(mobility, force);
        let threshold = mobility * HyperbolicLaw::default().static_coefficient() * force;
        assert!((broke - threshold).abs() <= 2.0 * 2.0 * mobility * force / 20_000.0, "broke away at {broke}, muS threshold {threshold}");
        assert!(stuck < broke - 0.05, "stuck again at {stuck}, broke away at {broke}: no hysteresis");
        // Where it sticks again the sliding root has just vanished: the line is tangent to
        // the law, so the discriminant crosses zero there.
        let law = HyperbolicLaw::default();
        let c = mobility * force;
        let discriminant = |v_free: f64| {
            let p = v_free - c * law.coulomb_coefficient;
            (law.offset_mps + p).powi(2) - 4.0 * c * law.numerator_mps
        };
        let step = 2.0 * 2.0 * mobility * force / 20_000.0;
        assert!(discriminant(stuck) < 0.0 && discriminant(stuck + step) >= 0.0, "release not at the tangency");
        // With mobility fN = 0.1 < 0.4 the line meets the law once: no hysteresis band.
        let (broke, stuck, _) = sweep(0.05, 2.0);
        assert!((broke - stuck).abs() <= 2.0 * 2.0 * 0.05 * 2.0 / 20_000.0 + 1e-12, "{broke} vs {stuck}");
    }

    /// A stuck contact held by the elastic stick moves at `v_free / (1 + c (s0 k + s1))`,
    /// its damping `s1` at least `least_damping_per_mobility / c`: the friction drum's 1.5
    /// grips less than the strings' 2, and the bristle's own damping rules when larger.
    #[test]
    fn the_elastic_stick_takes_the_least_damping_it_is_given() {
        let (mobility, force_n, v_free) = (0.03, 6.0, 1e-3);
        for (least, bristle_damping) in [(1.5, 0.3), (STICK_DAMPING_PER_MOBILITY, 0.3), (1.5, 200.0)] {
            let stick = ElasticStick { stiffness_n_per_m: 1e4, damping_kg_per_s: bristle_damping, least_damping_per_mobility: least, time_step_s: 1.0 / 48_000.0 };
            let mut contact = HyperbolicFriction::new(HyperbolicLaw::default());
            let out = contact.solve_elastic(v_free, mobility, force_n, &stick);
            assert_eq!(out.state, ContactState::Sticking);
            let damping = bristle_damping.max(least / mobility);
            let expected = v_free / (1.0 + mobility * (stick.stiffness_n_per_m * stick.time_step_s + damping));
            assert!((out.relative_velocity_mps - expected).abs() <= 1e-15, "least {least}, s1 {bristle_damping}: {} against {expected}", out.relative_velocity_mps);
            assert!((out.force_n - damping * out.relative_velocity_mps - stick.stiffness_n_per_m * stick.time_step_s * out.relative_velocity_mps).abs() <= 1e-12);
        }
    }
}

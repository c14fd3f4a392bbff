//! The bow hair's compliance at a contact (matusiak2025 eq. 26; `MODELS.md` section 2): a
//! mass on a spring and damper, pushed by the friction force,
//! `mh dtt eta = -Kh mu_tt eta - Gamma_h dt. eta + F`, with the stiffness averaged over three
//! steps (`mu_tt x = (x^{n+1} + 2 x^n + x^{n-1}) / 4`) so the scheme conserves energy for any
//! time step. Over one step the hair's velocity is linear in the force,
//! `dt. eta = a + F / D`, so it only adds to the contact's mobility.

/// The hair's physical constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HairParams {
    pub mass_kg: f64,
    pub stiffness_n_per_m: f64,
    pub damping_kg_per_s: f64,
}

impl HairParams {
    /// matusiak2025 Table 2: 4.5 g, 4.83e4 N/m, 5.77 kg/s for the whole bow.
    pub fn matusiak2025() -> Self {
        Self { mass_kg: 4.5e-3, stiffness_n_per_m: 4.83e4, damping_kg_per_s: 5.77 }
    }

    /// `1 / D`: how much faster the hair moves per newton of friction over one step (s/kg).
    #[inline]
    pub fn mobility_s_per_kg(&self, time_step_s: f64) -> f64 {
        let k = time_step_s;
        1.0 / (2.0 * self.mass_kg / k + 0.5 * self.stiffness_n_per_m * k + self.damping_kg_per_s)
    }
}

/// The hair's displacement at steps `n` and `n - 1`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BowHair {
    eta_m: f64,
    eta_previous_m: f64,
}

impl BowHair {
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// `eta^n` (m).
    pub fn displacement_m(&self) -> f64 {
        self.eta_m
    }

    /// `a`: the hair's velocity `dt. eta` over this step with no friction force (m/s).
    #[inline]
    pub fn free_velocity_mps(&self, p: &HairParams, time_step_s: f64) -> f64 {
        let k = time_step_s;
        let drive = 2.0 * p.mass_kg * (self.eta_m - self.eta_previous_m) / (k * k) - 0.5 * p.stiffness_n_per_m * (self.eta_m + self.eta_previous_m);
        drive * p.mobility_s_per_kg(k)
    }

    /// Steps with the solved friction force; returns `dt. eta` (m/s).
    #[inline]
    pub fn advance(&mut self, p: &HairParams, time_step_s: f64, force_n: f64) -> f64 {
        let velocity = self.free_velocity_mps(p, time_step_s) + force_n * p.mobility_s_per_kg(time_step_s);
        let next = self.eta_previous_m + 2.0 * time_step_s * velocity;
        self.eta_previous_m = self.eta_m;
        self.eta_m = next;
        velocity
    }

    /// The stored energy (J): `mh / 2 (dt- eta)^2 + Kh / 2 (mu_t- eta)^2`, never negative.
    pub fn energy_j(&self, p: &HairParams, time_step_s: f64) -> f64 {
        let velocity = (self.eta_m - self.eta_previous_m) / time_step_s;
        let mean = 0.5 * (self.eta_m + self.eta_previous_m);
        0.5 * p.mass_kg * velocity * velocity + 0.5 * p.stiffness_n_per_m * mean * mean
    }
}

//! The parameters of matusiak2025's high-fidelity bowed string ([`crate::bow::hifi_bow`]): the
//! string, the bow hair, the bow and its friction, with the paper's Table 2 as
//! [`HiFiBowParams::matusiak2025`].

use crate::friction::dupont::ElastoPlasticParams;
use crate::bow::torsion::TorsionParams;
use crate::string::tuning::{min_grid_spacing_m, SchemeGrid, MIN_INTERVALS};

/// The string's physical description (matusiak2025 eq. 39).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HiFiStringParams {
    pub length_m: f64,
    pub radius_m: f64,
    pub tension_n: f64,
    /// `rho A`.
    pub linear_density_kg_per_m: f64,
    pub youngs_modulus_pa: f64,
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
}

impl HiFiStringParams {
    /// `c = sqrt(T / (rho A))`.
    pub fn wave_speed_mps(&self) -> f64 {
        (self.tension_n / self.linear_density_kg_per_m).sqrt()
    }

    /// `kappa = sqrt(E I / (rho A))`, `I = pi r^4 / 4`.
    pub fn kappa_m2_per_s(&self) -> f64 {
        let area_moment = std::f64::consts::PI * self.radius_m.powi(4) / 4.0;
        (self.youngs_modulus_pa * area_moment / self.linear_density_kg_per_m).sqrt()
    }

    /// The paper's grid (eq. 50): the finest stable spacing, `N = floor(L / h_min)`
    /// intervals, with the physical wave speed (no re-tuning: the string plays at the
    /// scheme's own Helmholtz pitch, [`SchemeGrid::helmholtz_frequency_hz`]).
    pub fn scheme_grid(&self, sample_rate_hz: f64) -> SchemeGrid {
        let k = 1.0 / sample_rate_hz;
        let c = self.wave_speed_mps();
        let kappa = self.kappa_m2_per_s();
        let h_min = min_grid_spacing_m(c, kappa, self.sigma1_m2_per_s, k);
        SchemeGrid {
            intervals: ((self.length_m / h_min).floor() as usize).max(MIN_INTERVALS),
            length_m: self.length_m,
            time_step_s: k,
            wave_speed_mps: c,
            kappa_m2_per_s: kappa,
            sigma0_per_s: self.sigma0_per_s,
            sigma1_m2_per_s: self.sigma1_m2_per_s,
        }
    }
}

/// The bow hair of the whole bow, as in the lumped model (matusiak2025 eq. 26, Table 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BowHairParams {
    pub mass_kg: f64,
    pub stiffness_n_per_m: f64,
    pub damping_kg_per_s: f64,
}

/// Everything [`crate::bow::hifi_bow::HiFiBowedString`] is built from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HiFiBowParams {
    pub string: HiFiStringParams,
    /// `None`: no torsional waves (the string's surface moves only transversely).
    pub torsion: Option<TorsionParams>,
    pub hair: BowHairParams,
    /// The friction of the whole bow: `s0`, `sigma1_bar` (as `bristle_damping_kg_per_s`),
    /// `muC`, `muS`, `vS`, `z_ba`; the viscous and noise terms are not part of the model.
    pub friction: ElastoPlasticParams,
    /// `M`, 1 to [`MAX_CONTACT_POINTS`].
    pub contact_points: usize,
    /// `W_b`: the points sit at the centres of `M` equal strips across it.
    pub bow_width_m: f64,
    /// The bow velocity follows its setter at most this fast (m/s^2).
    pub bow_acceleration_mps2: f64,
    /// The controls at the start.
    pub normal_force_n: f64,
    pub bow_velocity_mps: f64,
    /// Bow-bridge distance as a fraction of the string length (`beta`).
    pub bow_position: f64,
}

impl HiFiBowParams {
    /// matusiak2025 Table 2 (and `MODELS.md` section 2): G string L 0.7 m, r 0.5 mm,
    /// f0 98 Hz, T 149.74 N (so `rho A = T / (2 f0 L)^2`), E 13.7 GPa, sigma0 1.537 1/s,
    /// sigma1 0.0087 m^2/s; torsion c_T 849.5 m/s, Q 29, `P_T` of a solid cylinder; M = 4
    /// points over a 1 cm bow; hair 4.5 g, 4.83e4 N/m, 5.77 kg/s; friction s0 3.186e5 N/m,
    /// sigma1_bar 0.0027 kg/s, vS 0.228 m/s, muC 0.507, muS 1.021; bow 0.344 m/s reached at
    /// 0.872 m/s^2, 2.343 N, at beta = 0.0786.
    pub fn matusiak2025() -> Self {
        let (length_m, radius_m, f0_hz, tension_n) = (0.7, 5e-4, 98.0, 149.74);
        let linear_density = tension_n / (2.0 * f0_hz * length_m as f64).powi(2);
        Self {
            string: HiFiStringParams {
                length_m,
                radius_m,
                tension_n,
                linear_density_kg_per_m: linear_density,
                youngs_modulus_pa: 1.37e10,
                sigma0_per_s: 1.537,
                sigma1_m2_per_s: 0.0087,
            },
            torsion: Some(TorsionParams::solid_cylinder(length_m, radius_m, linear_density, 849.5, 29.0)),
            hair: BowHairParams { mass_kg: 4.5e-3, stiffness_n_per_m: 4.83e4, damping_kg_per_s: 5.77 },
            friction: ElastoPlasticParams::matusiak2025(),
            contact_points: 4,
            bow_width_m: 0.01,
            bow_acceleration_mps2: 0.872,
            normal_force_n: 2.343,
            bow_velocity_mps: 0.344,
            bow_position: 0.0786,
        }
    }

    /// The friction of one of `M` points: `s0 / M`, `sigma1_bar / M` (see [`crate::bow::hifi_bow`]).
    pub fn point_friction(&self) -> ElastoPlasticParams {
        let share = 1.0 / self.contact_points as f64;
        ElastoPlasticParams {
            bristle_stiffness_n_per_m: self.friction.bristle_stiffness_n_per_m * share,
            bristle_damping_kg_per_s: self.friction.bristle_damping_kg_per_s * share,
            viscous_damping_kg_per_s: 0.0,
            noise_per_normal_force: 0.0,
            ..self.friction
        }
    }
}

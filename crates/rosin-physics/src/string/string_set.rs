//! Sets of real strings: the four strings of a violin, viola, cello or double bass, and the
//! strings of the two papers, each with its length, linear density, tension and bending
//! stiffness. A set decides how every note's string is built:
//!
//! - in the four-string playing mode, the set's own strings are played, stopped by a finger;
//! - in the poly and mono modes, a note gets the set's string that a player would choose
//!   for it (the highest open string at or below the note), re-tuned to the note by its
//!   tension: the length, density and material stay, so the note keeps that string's
//!   impedance and character.
//!
//! Two sets are the seed papers' own strings: willemsen2019's steel string and matusiak2025's
//! Table 2 string; the others are Rosin's, from published string data.
//!
//! Sources: docs/research/issue5-body-modes-and-strings.md section 4. Violin and cello rows
//! are Desvages (2018) as tabulated in Russo et al.'s companion code ([C] in the notes), at
//! the Thomastik-Infeld vibrating lengths ([R]); the tension follows from `T = (2 f L)^2 mu`.
//! Viola densities are derived from estimated tensions, and double-bass bending stiffness is
//! an estimate (the source's solid-steel value is unrealistic for wound strings): both [E].

use crate::string::note_string::{NoteStringDesign, REFERENCE_SIGMA0_PER_S, REFERENCE_SIGMA1_M2_PER_S, REFERENCE_WAVE_SPEED_MPS};
use crate::string::tuning::midi_key_to_hz;

/// One string at its open tuning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringSpec {
    pub name: &'static str,
    /// The open string's MIDI key.
    pub open_key: u8,
    pub length_m: f64,
    pub linear_density_kg_per_m: f64,
    /// `B = pi^2 E I / (T L^2)` at the open tuning.
    pub inharmonicity: f64,
    /// Frequency-independent loss (1/s) and the frequency-dependent coefficient (m^2/s) at
    /// the open tuning.
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
}

impl StringSpec {
    pub fn open_frequency_hz(&self) -> f64 {
        midi_key_to_hz(self.open_key as f64)
    }

    pub fn open_wave_speed_mps(&self) -> f64 {
        2.0 * self.open_frequency_hz() * self.length_m
    }

    /// `T = rho A c^2` at the open tuning.
    pub fn tension_n(&self) -> f64 {
        self.linear_density_kg_per_m * self.open_wave_speed_mps().powi(2)
    }

    /// The string re-tuned to `frequency_hz` by its tension: same length, density and bending
    /// stiffness `E I`, so `Z` scales with the frequency and `B` with its inverse square.
    /// `stiffness_scale` multiplies `B`; `damping_scale` both losses.
    pub fn retuned(&self, frequency_hz: f64, stiffness_scale: f64, damping_scale: f64) -> NoteStringDesign {
        let ratio = frequency_hz / self.open_frequency_hz();
        let open_c = self.open_wave_speed_mps();
        NoteStringDesign {
            impedance_kg_per_s: self.linear_density_kg_per_m * open_c * ratio,
            inharmonicity: self.inharmonicity * stiffness_scale / (ratio * ratio),
            length_m: self.length_m,
            damping_scale,
            sigma0_per_s: self.sigma0_per_s,
            sigma1_m2_per_s: self.sigma1_m2_per_s,
            loss_wave_speed_mps: open_c,
        }
    }
}

/// Four strings and the body they belong on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StringSet {
    pub name: &'static str,
    /// Lowest first.
    pub strings: [StringSpec; 4],
    /// Whether notes re-tune the reference design of [`NoteStringDesign::default`] (equal
    /// impedance on every note, B from the String Stiffness control) instead of the strings.
    pub equal_impedance: bool,
}

impl StringSet {
    /// The string a player would choose for `key`: the highest open string at or below it,
    /// or the lowest string for a note below the instrument.
    pub fn string_for(&self, key: f64) -> usize {
        (0..4).rev().find(|&i| self.strings[i].open_key as f64 <= key + 1e-9).unwrap_or(0)
    }

    /// The design of a string sounding `frequency_hz` on its own (poly and mono modes).
    pub fn note_design(&self, key: f64, string_stiffness: f64, damping_scale: f64) -> NoteStringDesign {
        let frequency_hz = midi_key_to_hz(key);
        if self.equal_impedance {
            return NoteStringDesign { inharmonicity: string_stiffness, damping_scale, ..NoteStringDesign::default() };
        }
        self.strings[self.string_for(key)].retuned(frequency_hz, string_stiffness / DEFAULT_STIFFNESS_CONTROL, damping_scale)
    }
}

/// The String Stiffness control's default: on a set of real strings, the control scales each
/// string's own `B` by its value over this.
pub const DEFAULT_STIFFNESS_CONTROL: f64 = crate::string::note_string::DEFAULT_INHARMONICITY;

/// Loss per frequency as on the reference string: a mode at `f` decays at
/// `sigma0 + sigma1_ref (pi f / c_ref)^2`, so `sigma1 = sigma1_ref (c / c_ref)^2`.
const fn reference_sigma1(open_key_hz: f64, length_m: f64) -> f64 {
    let c = 2.0 * open_key_hz * length_m;
    REFERENCE_SIGMA1_M2_PER_S * (c / REFERENCE_WAVE_SPEED_MPS) * (c / REFERENCE_WAVE_SPEED_MPS)
}

macro_rules! string {
    ($name:literal, $key:literal, $hz:literal, $length:literal, $density_g_per_m:literal, $b:literal) => {
        StringSpec {
            name: $name,
            open_key: $key,
            length_m: $length,
            linear_density_kg_per_m: $density_g_per_m * 1e-3,
            inharmonicity: $b,
            sigma0_per_s: REFERENCE_SIGMA0_PER_S,
            sigma1_m2_per_s: reference_sigma1($hz, $length),
        }
    };
}

/// Table 1 of willemsen2019: steel, r = 0.5 mm, L = 1 m, E = 200 GPa, tuned G3 D4 A4 E5.
/// `mu = 7850 pi r^2`; `B = pi^2 E (pi r^4 / 4) / (T L^2)`.
const STEEL_MU_G_PER_M: f64 = 7850.0 * std::f64::consts::PI * 0.25e-6 * 1e3;

const fn steel(name: &'static str, key: u8, hz: f64) -> StringSpec {
    let mu = STEEL_MU_G_PER_M * 1e-3;
    let c = 2.0 * hz;
    let bending_n_m2 = 2e11 * std::f64::consts::PI * 0.0625e-12 / 4.0;
    StringSpec {
        name,
        open_key: key,
        length_m: 1.0,
        linear_density_kg_per_m: mu,
        inharmonicity: std::f64::consts::PI * std::f64::consts::PI * bending_n_m2 / (mu * c * c),
        sigma0_per_s: REFERENCE_SIGMA0_PER_S,
        sigma1_m2_per_s: REFERENCE_SIGMA1_M2_PER_S,
    }
}

/// matusiak2025 Table 2: L 0.7 m, r 0.5 mm, f0 98 Hz, T 149.74 N, E 13.7 GPa, sigma0 1.537,
/// sigma1 0.0087. `mu = T / (2 f0 L)^2`, `B = pi^2 E (pi r^4/4) / (T L^2)`.
const MATUSIAK_STRING: StringSpec = {
    let c = 2.0 * 98.0 * 0.7;
    let tension = 149.74;
    let bending_n_m2 = 1.37e10 * std::f64::consts::PI * 0.0625e-12 / 4.0;
    StringSpec {
        name: "G2 (matusiak2025)",
        open_key: 43,
        length_m: 0.7,
        linear_density_kg_per_m: tension / (c * c),
        inharmonicity: std::f64::consts::PI * std::f64::consts::PI * bending_n_m2 / (tension * 0.49),
        sigma0_per_s: 1.537,
        sigma1_m2_per_s: 0.0087,
    }
};

/// The equal-impedance design every note used before string sets existed (its strings are
/// only used to pick the four-string mode's tuning).
pub const ROSIN_SET: StringSet = StringSet {
    name: "Rosin",
    strings: [steel("G3", 55, 196.0), steel("D4", 62, 293.66), steel("A4", 69, 440.0), steel("E5", 76, 659.26)],
    equal_impedance: true,
};

pub const VIOLIN_SET: StringSet = StringSet {
    name: "Violin",
    strings: [
        string!("G3 silver-wound synthetic", 55, 196.0, 0.328, 2.79, 2.6e-4),
        string!("D4 aluminium-wound synthetic", 62, 293.66, 0.328, 1.61, 2.2e-4),
        string!("A4 aluminium-wound synthetic", 69, 440.0, 0.328, 0.72, 2.0e-4),
        string!("E5 plain steel", 76, 659.26, 0.328, 0.41, 4.6e-5),
    ],
    equal_impedance: false,
};

pub const VIOLA_SET: StringSet = StringSet {
    name: "Viola",
    strings: [
        string!("C3 tungsten-wound", 48, 130.81, 0.375, 5.71, 3.0e-4),
        string!("G3 silver-wound synthetic", 55, 196.0, 0.375, 2.31, 2.5e-4),
        string!("D4 aluminium-wound synthetic", 62, 293.66, 0.375, 1.03, 2.0e-4),
        string!("A4 steel-core wound", 69, 440.0, 0.375, 0.60, 1.0e-4),
    ],
    equal_impedance: false,
};

pub const CELLO_SET: StringSet = StringSet {
    name: "Cello",
    strings: [
        string!("C2 tungsten-wound steel rope", 36, 65.41, 0.69, 21.2, 5.7e-4),
        string!("G2 tungsten-wound steel rope", 43, 98.0, 0.69, 6.16, 1.7e-4),
        string!("D3 steel-wound steel", 50, 146.83, 0.69, 2.50, 1.5e-4),
        string!("A3 steel-wound steel", 57, 220.0, 0.69, 1.66, 5.3e-5),
    ],
    equal_impedance: false,
};

pub const DOUBLE_BASS_SET: StringSet = StringSet {
    name: "Double Bass",
    strings: [
        string!("E1 steel rope, wound", 28, 41.2, 1.06, 40.72, 3.0e-4),
        string!("A1 steel rope, wound", 33, 55.0, 1.06, 22.16, 3.0e-4),
        string!("D2 steel rope, wound", 38, 73.42, 1.06, 12.04, 3.0e-4),
        string!("G2 steel rope, wound", 43, 98.0, 1.06, 6.62, 3.0e-4),
    ],
    equal_impedance: false,
};

/// willemsen2019's steel strings, each with its own tension (`B` falls as the tension rises).
pub const WILLEMSEN2019_SET: StringSet = StringSet {
    name: "Willemsen 2019 steel",
    strings: [steel("G3", 55, 196.0), steel("D4", 62, 293.66), steel("A4", 69, 440.0), steel("E5", 76, 659.26)],
    equal_impedance: false,
};

/// A string of the Matusiak set above the paper's G2: as long and as damped, with the G2's
/// wave impedance `Z = mu c` (lighter in proportion to its higher pitch) and its `B`, as the
/// strings of a real set are matched. Re-tuning the G2 string itself instead would raise
/// `Z`, and with it Schelleng's least force as `Z^2`: the E4 would need 11 times the G2's.
const fn matusiak_upper(name: &'static str, open_key: u8, open_hz: f64) -> StringSpec {
    StringSpec { name, open_key, linear_density_kg_per_m: MATUSIAK_STRING.linear_density_kg_per_m * 98.0 / open_hz, ..MATUSIAK_STRING }
}

/// matusiak2025's string, as the bottom of a cello-like set tuned in fifths from it.
pub const MATUSIAK2025_SET: StringSet = StringSet {
    name: "Matusiak 2025",
    strings: [
        MATUSIAK_STRING,
        matusiak_upper("D3 (matched)", 50, 146.83),
        matusiak_upper("A3 (matched)", 57, 220.0),
        matusiak_upper("E4 (matched)", 64, 329.63),
    ],
    equal_impedance: false,
};

/// Every set, in the order of the `string_set` control's choices.
pub const STRING_SETS: [&StringSet; 7] = [&ROSIN_SET, &VIOLIN_SET, &VIOLA_SET, &CELLO_SET, &DOUBLE_BASS_SET, &WILLEMSEN2019_SET, &MATUSIAK2025_SET];

/// The set for a `string_set` control value.
pub fn string_set(index: f64) -> &'static StringSet {
    STRING_SETS[(index.round().max(0.0) as usize).min(STRING_SETS.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::string::note_string::REFERENCE_IMPEDANCE_KG_PER_S;

    #[test]
    fn tensions_match_the_published_strings() {
        // Desvages via Russo et al.: violin A 57.1 N at 0.32 m, so 60.0 N at 0.328 m.
        let a = VIOLIN_SET.strings[2];
        assert!((a.tension_n() - 60.0).abs() < 0.5, "{}", a.tension_n());
        // Cello C 172.7 N at 0.69 m.
        assert!((CELLO_SET.strings[0].tension_n() - 172.7).abs() < 1.0);
        // matusiak2025: T 149.74 N.
        assert!((MATUSIAK_STRING.tension_n() - 149.74).abs() < 0.01);
        // Its set's upper strings are matched to its impedance (within the rounding of their
        // pitches), so one bow force suits all four.
        let z = |s: &StringSpec| s.linear_density_kg_per_m * s.open_wave_speed_mps();
        for upper in &MATUSIAK2025_SET.strings[1..] {
            assert!((z(upper) / z(&MATUSIAK_STRING) - 1.0).abs() < 1e-3, "{}", upper.name);
            assert_eq!(upper.inharmonicity, MATUSIAK_STRING.inharmonicity);
        }
        // willemsen2019's A4: Z = 5.42 kg/s, and B(G3) about 1e-4.
        let steel_a = WILLEMSEN2019_SET.strings[2];
        assert!((steel_a.linear_density_kg_per_m * steel_a.open_wave_speed_mps() - REFERENCE_IMPEDANCE_KG_PER_S).abs() < 1e-9);
        assert!((WILLEMSEN2019_SET.strings[0].inharmonicity - 1.0e-4).abs() < 0.05e-4);
    }

    #[test]
    fn notes_go_to_the_string_a_player_would_choose() {
        assert_eq!(VIOLIN_SET.string_for(55.0), 0);
        assert_eq!(VIOLIN_SET.string_for(61.0), 0);
        assert_eq!(VIOLIN_SET.string_for(69.0), 2);
        assert_eq!(VIOLIN_SET.string_for(90.0), 3);
        assert_eq!(VIOLIN_SET.string_for(40.0), 0);
    }

    #[test]
    fn retuning_keeps_the_material() {
        let a = VIOLIN_SET.strings[2];
        let up = a.retuned(880.0, 1.0, 1.0);
        assert!((up.impedance_kg_per_s - 2.0 * a.linear_density_kg_per_m * a.open_wave_speed_mps()).abs() < 1e-12);
        assert!((up.inharmonicity - a.inharmonicity / 4.0).abs() < 1e-15);
        assert_eq!(up.length_m, a.length_m);
    }
}

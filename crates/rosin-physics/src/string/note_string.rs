//! The family of strings that MIDI notes play: one physical string per note, designed so
//! that every note responds to the bow the same way.
//!
//! - **Same wave impedance** `Z = rho A c` on every note (that of willemsen2019's A4 string,
//!   5.42 kg/s). Schelleng's playable force range scales with `Z`
//!   (`F_max = 2 Z vB / (beta (muS - muC))`), so a bow force that gives Helmholtz motion on
//!   one note gives it on all of them: this is how the bow force is mapped into each string's
//!   playable range.
//! - **Same inharmonicity** `B = pi^2 E I / (T L^2)` (willemsen2019's G3 string has about
//!   1e-4), so `kappa = sqrt(B) c L / pi`.
//! - **Same loss per frequency**: a mode at frequency `f` decays at
//!   `sigma0 + sigma1_ref (pi f / c_ref)^2`, i.e. `sigma1 = sigma1_ref (c / c_ref)^2`, with the
//!   reference being the A4 string of Table 1 (`sigma0 = 1`, `sigma1 = 5e-3`).

use crate::string::stiff_string::StringMaterial;
use crate::string::tuning::{tune_grid, PitchTarget, SchemeGrid, TuningRequest};

/// Table 1's A4 string: rho 7850, r 5e-4, c = 2 * 440 * 1 m.
pub const REFERENCE_IMPEDANCE_KG_PER_S: f64 = 7850.0 * std::f64::consts::PI * 5e-4 * 5e-4 * 880.0;
pub const REFERENCE_WAVE_SPEED_MPS: f64 = 880.0;
pub const STRING_LENGTH_M: f64 = 1.0;
pub const DEFAULT_INHARMONICITY: f64 = 1e-4;
pub const REFERENCE_SIGMA0_PER_S: f64 = 1.0;
pub const REFERENCE_SIGMA1_M2_PER_S: f64 = 5e-3;
/// The largest damping scale the controls allow; grids are designed for it.
pub const MAX_DAMPING_SCALE: f64 = 10.0;
/// How far the wave speed may be raised while a note sounds (about 51 cents), for
/// intonation; grids are designed for it. Light strings (a violin's, 60 N) bowed near their
/// largest force play up to about 60 cents flat of their free pitch in this model (the
/// bristles' give lengthens each stick); what the wave speed cannot take, the voice puts on
/// the finger (see `string::intonation::MAX_CORRECTION`).
pub const WAVE_SPEED_HEADROOM: f64 = 1.03;

/// The design of a note's string, apart from its pitch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoteStringDesign {
    pub impedance_kg_per_s: f64,
    pub inharmonicity: f64,
    pub length_m: f64,
    /// Multiplies both loss terms (the "Damping" control).
    pub damping_scale: f64,
    /// The string's own losses: `sigma1` is given at the wave speed `loss_wave_speed_mps` and
    /// scales with `c^2` from there, so a re-tuned string keeps its loss per frequency.
    pub sigma0_per_s: f64,
    pub sigma1_m2_per_s: f64,
    pub loss_wave_speed_mps: f64,
}

impl NoteStringDesign {
    /// Whether `other` is this design to the precision a host stores a control in (f32):
    /// a plugin's controls come from f32 parameters, while an engine's defaults and presets
    /// are f64 constants, so the same setting reaches [`GridCache`] as two designs a part in
    /// 10^8 apart. A grid designed for one plays the other at the same pitch.
    pub fn same_to_f32(&self, other: &NoteStringDesign) -> bool {
        let fields = |d: &NoteStringDesign| [d.impedance_kg_per_s, d.inharmonicity, d.length_m, d.damping_scale, d.sigma0_per_s, d.sigma1_m2_per_s, d.loss_wave_speed_mps].map(|x| x as f32);
        fields(self) == fields(other)
    }
}

impl Default for NoteStringDesign {
    fn default() -> Self {
        Self {
            impedance_kg_per_s: REFERENCE_IMPEDANCE_KG_PER_S,
            inharmonicity: DEFAULT_INHARMONICITY,
            length_m: STRING_LENGTH_M,
            damping_scale: 1.0,
            sigma0_per_s: REFERENCE_SIGMA0_PER_S,
            sigma1_m2_per_s: REFERENCE_SIGMA1_M2_PER_S,
            loss_wave_speed_mps: REFERENCE_WAVE_SPEED_MPS,
        }
    }
}

impl NoteStringDesign {
    /// The loss coefficients `(sigma0, sigma1)` of this string at its nominal wave speed `c`
    /// and a damping scale.
    pub fn losses_at(&self, nominal_wave_speed_mps: f64, damping_scale: f64) -> (f64, f64) {
        let ratio = nominal_wave_speed_mps / self.loss_wave_speed_mps;
        (self.sigma0_per_s * damping_scale, self.sigma1_m2_per_s * ratio * ratio * damping_scale)
    }

    /// `2 f0 L`: the wave speed of an ideal string at this pitch, which sets the losses.
    pub fn nominal_wave_speed_mps(&self, frequency_hz: f64) -> f64 {
        2.0 * frequency_hz * self.length_m
    }

    /// The grid and material of the string for `frequency_hz` at `sample_rate_hz`.
    pub fn build(&self, frequency_hz: f64, sample_rate_hz: f64, max_intervals: usize) -> (SchemeGrid, StringMaterial) {
        let grid = tune_grid(&self.tuning_request(frequency_hz, sample_rate_hz, max_intervals));
        (grid, self.material_on(&grid))
    }

    /// What [`tune_grid`] (or a [`crate::string::tuning::GridTuner`]) is asked for this
    /// string at `frequency_hz`.
    pub fn tuning_request(&self, frequency_hz: f64, sample_rate_hz: f64, max_intervals: usize) -> TuningRequest {
        let nominal_c = self.nominal_wave_speed_mps(frequency_hz);
        let kappa = self.inharmonicity.sqrt() * nominal_c * self.length_m / std::f64::consts::PI;
        let (sigma0, sigma1) = self.losses_at(nominal_c, self.damping_scale);
        let (_, max_sigma1) = self.losses_at(nominal_c, MAX_DAMPING_SCALE);
        TuningRequest {
            frequency_hz,
            length_m: self.length_m,
            kappa_m2_per_s: kappa,
            sigma0_per_s: sigma0,
            sigma1_m2_per_s: sigma1,
            max_sigma1_m2_per_s: max_sigma1,
            sample_rate_hz,
            max_intervals,
            wave_speed_headroom: WAVE_SPEED_HEADROOM,
            target: PitchTarget::Helmholtz,
        }
    }

    /// The string's material on a grid designed for it: its impedance at the grid's wave
    /// speed.
    pub fn material_on(&self, grid: &SchemeGrid) -> StringMaterial {
        StringMaterial { linear_density_kg_per_m: self.impedance_kg_per_s / grid.wave_speed_mps }
    }
}

/// Designed grids kept for reuse: [`NoteStringDesign::build`] sums the Helmholtz pitch over
/// every mode below 10 kHz for a few passes (about 10 us a note), which sixteen note-ons on
/// one sample would do sixteen times. A note played before with the same design at the
/// same rate takes its grid from here. Fixed capacity, filled in turn; never allocates after
/// [`GridCache::with_capacity`].
pub struct GridCache {
    entries: Box<[Option<GridCacheEntry>]>,
    next: usize,
    designed: u64,
}

#[derive(Clone, Copy)]
struct GridCacheEntry {
    design: NoteStringDesign,
    frequency_hz: f64,
    sample_rate_hz: f64,
    max_intervals: usize,
    grid: SchemeGrid,
    material: StringMaterial,
}

impl GridCache {
    pub fn with_capacity(capacity: usize) -> Self {
        Self { entries: vec![None; capacity.max(1)].into_boxed_slice(), next: 0, designed: 0 }
    }

    /// [`NoteStringDesign::build`], from the cache when this exact request was built before.
    pub fn build(&mut self, design: &NoteStringDesign, frequency_hz: f64, sample_rate_hz: f64, max_intervals: usize) -> (SchemeGrid, StringMaterial) {
        if let Some(found) = self.find(design, frequency_hz, sample_rate_hz, max_intervals) {
            return found;
        }
        let (grid, material) = design.build(frequency_hz, sample_rate_hz, max_intervals);
        self.designed += 1;
        self.insert(design, frequency_hz, sample_rate_hz, max_intervals, grid);
        (grid, material)
    }

    /// The grid kept for this request, if any.
    pub fn find(&self, design: &NoteStringDesign, frequency_hz: f64, sample_rate_hz: f64, max_intervals: usize) -> Option<(SchemeGrid, StringMaterial)> {
        // The cheap comparisons first: most entries are other notes.
        let same = |e: &GridCacheEntry| e.frequency_hz == frequency_hz && e.sample_rate_hz == sample_rate_hz && e.max_intervals == max_intervals && e.design.same_to_f32(design);
        self.entries.iter().flatten().find(|e| same(e)).map(|e| (e.grid, e.material))
    }

    /// Keeps `grid`, designed elsewhere (a step at a time) for this request.
    pub fn insert(&mut self, design: &NoteStringDesign, frequency_hz: f64, sample_rate_hz: f64, max_intervals: usize, grid: SchemeGrid) {
        let material = design.material_on(&grid);
        self.entries[self.next] = Some(GridCacheEntry { design: *design, frequency_hz, sample_rate_hz, max_intervals, grid, material });
        self.next = (self.next + 1) % self.entries.len();
    }

    /// How many grids it has designed (requests it could not answer from what it kept).
    pub fn designed(&self) -> u64 {
        self.designed
    }

    /// Forgets every grid (the cache is as new).
    pub fn clear(&mut self) {
        self.entries.fill(None);
        self.next = 0;
    }
}

#[cfg(test)]
mod grid_cache_tests {
    use super::*;

    #[test]
    fn a_cached_grid_is_the_grid_built_and_a_full_cache_takes_turns() {
        let mut cache = GridCache::with_capacity(2);
        let design = NoteStringDesign::default();
        let built = design.build(196.0, 48_000.0, 1024);
        assert_eq!(cache.build(&design, 196.0, 48_000.0, 1024), built);
        assert_eq!(cache.build(&design, 196.0, 48_000.0, 1024), built);
        assert_eq!(cache.designed(), 1, "the second request was designed again");
        // Any difference in the request is another grid.
        let stiffer = NoteStringDesign { inharmonicity: design.inharmonicity * 2.0, ..design };
        assert_eq!(cache.build(&stiffer, 196.0, 48_000.0, 1024), stiffer.build(196.0, 48_000.0, 1024));
        assert_eq!(cache.build(&design, 196.0, 96_000.0, 1024), design.build(196.0, 96_000.0, 1024));
        // Two entries: the first has made way, and comes back built again, the same.
        assert_eq!(cache.build(&design, 196.0, 48_000.0, 1024), built);
        assert_eq!(cache.designed(), 4);
        cache.clear();
        assert_eq!(cache.build(&design, 196.0, 48_000.0, 1024), built);
        // The same setting as a host stores it (f32) is the same grid, not a new design.
        let from_a_host = NoteStringDesign { inharmonicity: design.inharmonicity as f32 as f64, damping_scale: 0.7f32 as f64, ..design };
        let from_a_preset = NoteStringDesign { damping_scale: 0.7, ..design };
        assert_ne!(from_a_host.inharmonicity, design.inharmonicity, "the default is exact in f32: pick another value");
        let designed = cache.designed();
        let grid = cache.build(&from_a_preset, 196.0, 48_000.0, 1024);
        assert_eq!(cache.build(&from_a_host, 196.0, 48_000.0, 1024), grid);
        assert_eq!(cache.designed(), designed + 1);
    }
}

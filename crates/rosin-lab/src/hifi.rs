//! matusiak2025's high-fidelity bow on its Table 2 string (`rosin_physics::bow::hifi_bow`), bowed as in
//! the paper: the bow accelerates at 0.872 m/s^2 to 0.344 m/s with 2.343 N at beta = 0.0786,
//! with `M` contact points across a 1 cm bow and torsional waves. The trace keeps each
//! point's relative velocity over the last periods, and the bridge force of the whole run
//! (to listen to).

use rosin_physics::bow::hifi_bow::{HiFiBowParams, HiFiBowedString};

/// The paper's sample rate (Hz).
pub const HIFI_SAMPLE_RATE_HZ: f64 = 44_100.0;
/// The Table 2 string's note (Hz).
pub const HIFI_STRING_FREQUENCY_HZ: f64 = 98.0;

/// One run of the high-fidelity bow.
#[derive(Clone, Debug, Default)]
pub struct HiFiTrace {
    pub contact_points: usize,
    /// Time of each recorded sample (s), over the last `periods` nominal periods.
    pub time_s: Vec<f64>,
    /// Per recorded sample, each point's relative velocity (m/s); only the first
    /// `contact_points` entries are used.
    pub relative_velocity_mps: Vec<[f64; 4]>,
    /// The bridge force of the whole run (N), one per sample.
    pub bridge_force_n: Vec<f64>,
    /// The bow's velocity at the end (m/s).
    pub bow_velocity_mps: f64,
    /// Newton's fallbacks over the run.
    pub fallbacks: u64,
}

/// Bows the Table 2 string for `seconds` with `contact_points` points (1 to 4).
pub fn hifi_trace(contact_points: usize, seconds: f64, periods: usize) -> HiFiTrace {
    let params = HiFiBowParams { contact_points: contact_points.clamp(1, 4), ..HiFiBowParams::matusiak2025() };
    let mut bowed = HiFiBowedString::new(params, HIFI_SAMPLE_RATE_HZ);
    let samples = (seconds * HIFI_SAMPLE_RATE_HZ) as usize;
    let recorded = ((periods as f64 * HIFI_SAMPLE_RATE_HZ / HIFI_STRING_FREQUENCY_HZ) as usize).min(samples);
    let mut trace = HiFiTrace { contact_points: params.contact_points, bridge_force_n: Vec::with_capacity(samples), ..HiFiTrace::default() };
    for n in 0..samples {
        trace.bridge_force_n.push(bowed.tick());
        if n >= samples - recorded {
            let step = bowed.last_step();
            let mut v = [0.0; 4];
            v.copy_from_slice(&step.relative_velocity_mps[..4]);
            trace.time_s.push(n as f64 / HIFI_SAMPLE_RATE_HZ);
            trace.relative_velocity_mps.push(v);
        }
    }
    trace.bow_velocity_mps = bowed.bow_velocity_mps();
    trace.fallbacks = bowed.stats().fallbacks;
    trace
}

impl HiFiTrace {
    /// Slip onsets of the central point per nominal period over the recorded stretch: the
    /// relative velocity falling through half of the ideal slip velocity `-vb / beta`.
    pub fn slips_per_period(&self) -> f64 {
        let threshold = -0.5 * self.bow_velocity_mps / HiFiBowParams::matusiak2025().bow_position;
        let centre = self.contact_points / 2;
        let onsets = self.relative_velocity_mps.windows(2).filter(|w| w[0][centre] > threshold && w[1][centre] <= threshold).count();
        onsets as f64 / (self.time_s.len() as f64 / HIFI_SAMPLE_RATE_HZ * HIFI_STRING_FREQUENCY_HZ)
    }
}

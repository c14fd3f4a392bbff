//! The last step before the host: the output's safety limiter and the conversion to a
//! host sample that is finite and never subnormal. Both the engine's own mix
//! ([`crate::voices`]) and the host-rate converter ([`super::host_rate`]) end here, so this
//! module depends on neither.

/// Where the output's safety limiter starts to bend (+6 dBFS) and the level it never
/// passes (+12 dBFS). Presets peak below -1 dBFS, so playing never reaches the knee; sixteen
/// voices at full force under +12 dB of Output Gain would reach +40 dBFS without it.
pub const SAFETY_KNEE: f64 = 2.0;
pub const SAFETY_CEILING: f64 = 4.0;

/// The output's safety limiter: the identity up to [`SAFETY_KNEE`], then a tanh curve that
/// meets it with the same slope and approaches [`SAFETY_CEILING`].
#[inline]
pub fn safety_limit(x: f64) -> f64 {
    let magnitude = x.abs();
    if magnitude <= SAFETY_KNEE {
        return x;
    }
    let room = SAFETY_CEILING - SAFETY_KNEE;
    (SAFETY_KNEE + room * ((magnitude - SAFETY_KNEE) / room).tanh()).copysign(x)
}

/// A sample for the host: finite and never subnormal (anything below 1e-30, 600 dB under
/// full scale, is silence).
#[inline]
pub fn to_host_sample(x: f64) -> f32 {
    if x.is_finite() && x.abs() >= 1e-30 {
        x as f32
    } else {
        0.0
    }
}


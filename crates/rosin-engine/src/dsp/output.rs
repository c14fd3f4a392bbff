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
    // Two comparisons that NaN fails (`rosin_physics::friction::elementary::finite`).
    if (1e-30..=f64::MAX).contains(&x.abs()) {
        x as f32
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reaches the host: NaN, the infinities and anything below 1e-30 are silence;
    /// the rest passes as f32 (after the safety limit, which keeps it within 4).
    #[test]
    fn the_host_gets_finite_normal_samples() {
        for x in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1e-310, -1e-310, 9.9e-31, -9.9e-31] {
            assert_eq!(to_host_sample(x).to_bits(), 0.0f32.to_bits(), "{x:e}");
        }
        for x in [1e-30, -1e-30, 0.5, -0.5, 1.0, SAFETY_CEILING, -SAFETY_CEILING] {
            assert_eq!(to_host_sample(x), x as f32, "{x:e}");
        }
        assert!(to_host_sample(safety_limit(f64::MAX)).abs() <= SAFETY_CEILING as f32);
    }
}

//! The number formats a scheme's levels are kept in, Rosin's own: f64, in which the tests
//! prove each scheme (willemsen2019's string, onofrei2021's membrane), or f32, which the
//! real-time voices play. A stencil is bound by how many points a vector holds, and AVX2
//! holds eight f32 to four f64, so f32 halves its instructions. Each scheme works its
//! coefficients out in f64 and rounds them once to the format, and works in f64 what it
//! reads from its levels: only the levels and their stencil are in the format.
//! [`crate::string::stiff_string::StringSample`] and
//! [`crate::drum::membrane::MembraneSample`] add each scheme's kernels.

/// A format a scheme's levels may be kept in: f64 or f32 (sealed).
pub trait Sample: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static + Into<f64> + sealed::Sealed {
    const ZERO: Self;
    /// `value` rounded to the format.
    fn from_f64(value: f64) -> Self;
    /// The value in f64 (exact).
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.into()
    }
}

impl Sample for f64 {
    const ZERO: Self = 0.0;

    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value
    }
}

impl Sample for f32 {
    const ZERO: Self = 0.0;

    #[inline(always)]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

mod sealed {
    /// Only the formats the schemes have kernels for.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

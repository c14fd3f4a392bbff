//! Rosin's physical models, free of any plugin framework, GUI or thread: every model takes
//! its sample rate and controls as plain numbers, and can be built, tested and benchmarked
//! alone. `README.md` beside this file maps each seed paper to the files that implement it.
//!
//! The families, lowest layer first (a family uses only those above it in this list):
//!
//! - [`string`]: the stiff string scheme, its grid design and tuning, the note strings,
//!   the string sets and the player's intonation (willemsen2019).
//! - [`friction`]: the friction laws and their per-sample solves: Dupont elasto-plastic
//!   (willemsen2019), passive refined (matusiak2025), hyperbolic and Dahl (serafin1999),
//!   and the small Newton solves they share.
//! - [`body`]: the instrument body as a modal resonator bank.
//! - [`bow`]: a bow on a string: the contact with whichever law, the bow hair, the
//!   point-bowed string, the lumped test bed, and matusiak2025's finite-width bow with
//!   torsional waves.
//! - [`drum`]: onofrei2021's friction drum: membrane, tube and their rigid connection.
//! - [`waveguide`]: serafin1999's digital waveguide string, bowed through the same contact.

pub mod body;
pub mod bow;
pub mod drum;
pub mod friction;
pub mod string;
pub mod waveguide;

/// The unit tests' random numbers: uniform in [0, 1), the same sequence for a seed on every
/// run and machine (xorshift64, 53 bits).
#[cfg(test)]
pub(crate) fn test_uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Whether this CPU has AVX2: for the tests of the contacts in lanes, to know which path
/// the CPU takes. The code itself never asks: `multiversion` chooses each loop's build once
/// at run time.
#[cfg(test)]
pub(crate) fn cpu_has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

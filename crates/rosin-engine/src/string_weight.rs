//! The arm's weight on each string: a heavier string of a set is bowed harder, as a player
//! leans into a cello's C string and lightens on its A. Rosin's own performance mapping; it
//! changes how the performance drives the physics, not the physics.
//!
//! Schelleng's bounds on the bow force both grow with the string's wave impedance `Z`: the
//! most force before the motion goes raucous as `Z`, the least that keeps one slip a period
//! as `Z^2` (Schelleng 1973, "The bowed string and the player"). One force for a whole set
//! therefore sits under the lower bound of its heaviest string: with the presets' forces,
//! the viola's C string, the cello's C and G strings and the violin's G string slip twice a
//! period (an octave-up double slip the periodicity measure does not see). Scaling the force by `(Z / Z_lightest)^0.75`
//! keeps all but 2 of 296 keys at one slip a period at velocity 90, where exponents of 0.6
//! and 0.9 left the cello's or the violin's lowest strings outside their range
//! (`tests/phrases.rs`, `with_string_weight_every_string_of_every_set_slips_once_a_period`).
//! The control is 0 by default: weighted, the heavy strings speak later and at velocity 127
//! pass their upper bound (docs/physics.md, *One string per note*).

use rosin_physics::string::string_set::StringSet;

/// The exponent of the impedance ratio at String Weight 100 %.
pub const STRING_WEIGHT_EXPONENT: f64 = 0.75;

/// The impedance of the string of `set` that plays `key` over that of the set's lightest
/// string: 1 on a set of one impedance (Rosin's equal-impedance design, matusiak2025's
/// string), at least 1 on any set.
pub fn impedance_ratio(set: &StringSet, key: f64) -> f64 {
    if set.equal_impedance {
        return 1.0;
    }
    let impedance = |i: usize| set.strings[i].linear_density_kg_per_m * set.strings[i].open_wave_speed_mps();
    let lightest = (0..4).map(impedance).fold(f64::INFINITY, f64::min);
    (impedance(set.string_for(key)) / lightest).max(1.0)
}

/// The factor on the bow force of a string whose impedance is `impedance_ratio` times the
/// set's lightest, at a String Weight of `weight_percent` (0 to 100).
pub fn force_factor(impedance_ratio: f64, weight_percent: f64) -> f64 {
    impedance_ratio.powf(STRING_WEIGHT_EXPONENT * weight_percent.clamp(0.0, 100.0) / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosin_physics::string::string_set::string_set;

    #[test]
    fn the_lightest_string_keeps_the_force_and_heavier_ones_get_more() {
        let cello = string_set(3.0);
        assert_eq!(impedance_ratio(cello, 57.0), 1.0, "the A string is the cello's lightest");
        let c_string = impedance_ratio(cello, 36.0);
        assert!((3.7..3.9).contains(&c_string), "the C string is {c_string:.2} times the A string's impedance");
        // A stopped note is weighted as its string.
        assert_eq!(impedance_ratio(cello, 40.0), c_string);
        assert!((force_factor(c_string, 100.0) - c_string.powf(0.75)).abs() < 1e-12);
        assert_eq!(force_factor(c_string, 0.0), 1.0);
        assert_eq!(force_factor(c_string, 250.0), force_factor(c_string, 100.0));
    }

    #[test]
    fn a_set_of_one_impedance_is_not_weighted() {
        for index in [0.0, 6.0] {
            for key in [30.0, 55.0, 90.0] {
                // matusiak2025's four strings are one string re-tuned (equal to 3e-5).
                assert!((impedance_ratio(string_set(index), key) - 1.0).abs() < 1e-4);
            }
        }
    }
}

//! A bow on a string.
//!
//! - [`contact`]: the bow's contact through whichever friction law is chosen, with bow hair
//!   for the refined law.
//! - [`hair`]: matusiak2025's compliant bow hair (eq. 26).
//! - [`helmholtz`]: slips under the bow, and when they settle into Helmholtz motion.
//! - [`bowed_string`]: the finite-difference string bowed at a point, with the stopping
//!   finger (willemsen2019).
//! - [`lumped`]: matusiak2025's bowed lumped mass, the test bed of the energy balance.
//! - [`hifi_bow`], [`hifi_contact`], [`hifi_params`], [`torsion`]: matusiak2025's bow of
//!   finite width, touching the string at up to four points, with torsional waves.

pub mod bowed_string;
pub mod contact;
pub mod hair;
pub mod helmholtz;
pub mod hifi_bow;
pub mod hifi_contact;
pub mod hifi_params;
pub mod lumped;
pub mod torsion;

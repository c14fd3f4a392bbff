//! onofrei2021's friction drum (`MODELS.md` section 3): a bowed circular membrane rigidly
//! connected to an acoustic tube.
//!
//! - [`membrane`]: the damped membrane on a square grid with a circular mask.
//! - [`tube`]: the air column, radiating at its open end.
//! - [`connection`]: the distributions that join them.
//! - [`friction_drum`]: the three stepped together with the bow, one sample at a time.

pub mod connection;
pub mod friction_drum;
pub mod membrane;
pub mod tube;

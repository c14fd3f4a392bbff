//! The friction laws of the seed papers and their per-sample solves, each at one contact
//! that sees the line `v = v_free - c f` of whichever resonator it bows:
//!
//! - [`dupont`], [`dupont_contact`]: Dupont's elasto-plastic model with willemsen2019's
//!   corrected adhesion map, solved with the string by a 2x2 Newton iteration
//!   (`MODELS.md` section 1).
//! - [`refined`]: matusiak2025's passive refined elasto-plastic model (section 2).
//! - [`hyperbolic`], [`dahl`]: serafin1999's two laws (section 4).
//! - [`newton`]: the small dense solves the iterations share.
//! - [`elementary`]: the law's `sin`, `cos` and `exp` on the ranges it evaluates them.

pub mod dahl;
pub mod dupont;
pub mod dupont_contact;
pub mod dupont_lanes;
pub mod elementary;
pub mod hyperbolic;
pub mod newton;
pub mod refined;

//! The damped stiff string of willemsen2019 (`MODELS.md` section 1) and what makes it a
//! playable note: the grid design and tuning, the family of note strings, real string sets
//! and the player's intonation.

pub mod format;
pub mod interpolation;
pub mod intonation;
pub mod note_string;
pub mod stiff_string;
pub mod string_set;
pub mod tuning;

//! From the audio thread to the editor, one way and lock-free: [`snapshot`] captures what
//! the views draw, [`triple_buffer`] carries it.

pub mod snapshot;
pub mod triple_buffer;

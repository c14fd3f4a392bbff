//! From the audio thread to the editor, one way and lock-free: [`snapshot`] captures what
//! the views draw, [`lab`] records the loudest voice's bow contact every sample for the lab
//! view, [`meter`] measures the output's level and the audio thread's load, [`triple_buffer`] carries it.

pub mod lab;
pub mod meter;
pub mod probe;
pub mod snapshot;
pub mod triple_buffer;

//! Touch input: gestures from a Sensel Morph (or the editor's mouse) into the engine.
//!
//! - [`gesture`]: what a gesture is (per lane: bow down, force, velocity, place, finger).
//! - [`mapper`]: from touches on a pad to lane gestures, as the papers map the Morph.
//! - [`bus`]: the atomics that carry gestures to the audio thread, lock-free.
//! - [`sensel`]: the reader thread that finds, opens and reads the Morph, with hot-plug.
//! - [`gesture_file`]: recorded performances, for offline rendering.

pub mod bus;
pub mod gesture;
pub mod gesture_file;
pub mod mapper;
pub mod sensel;

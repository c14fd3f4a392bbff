//! Touch input as the engine sees it: gestures from a Sensel Morph or the editor's mouse.
//! The reader thread that finds and opens the Morph is the plugin's (`rosin::sensel`); all
//! that is here is framework-free and thread-free but for the bus's atomics.
//!
//! - [`gesture`]: what a gesture is (per lane: bow down, force, velocity, place, finger).
//! - [`mapper`]: from touches on a pad to lane gestures, as the papers map the Morph.
//! - [`bus`]: the atomics that carry gestures to the audio thread, lock-free.
//! - [`gesture_file`]: recorded performances, for offline rendering.

pub mod bus;
pub mod gesture;
pub mod gesture_file;
pub mod mapper;

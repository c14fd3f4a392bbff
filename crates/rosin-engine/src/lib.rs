//! Rosin's engine: everything between the physics and a host, free of any plugin framework,
//! so that the plugin, `rosin-render`, the lab and the tests all play through the same code.
//!
//! - [`controls`]: every control's ID, range and default (the parameter IDs are a public
//!   contract: DAW projects store them).
//! - [`voice`], [`drum_voice`]: one string voice and one friction-drum voice, each a
//!   physical model driven by a bow [`envelope`] and per-sample [`dsp`] ramps.
//! - [`voices`]: the polyphonic [`voices::Engine`] that owns the voices, routes notes and
//!   expression to them and mixes them through the body.
//! - [`play_modes`]: the legato modes (Four Strings, Mono Legato), which drive the engine's
//!   string voices through the small [`play_modes::StringPool`] interface.
//! - [`expression`]: MIDI, MPE and note expressions, shaped per voice.
//! - [`string_weight`]: a heavier string of a set bowed harder, as a player's arm does.
//! - [`held_events`]: note events that wait a few samples so that no sample designs more
//!   than one string grid.
//! - [`presets`], [`state`]: factory presets and saved-state versions with their migrations.
//! - [`user_presets`]: a player's own presets as text files.
//! - [`controller`]: touch gestures (from a Sensel Morph or a mouse) and their lock-free bus.
//! - [`view`]: the lock-free snapshot of what plays, for the editor's views, with the lab
//!   view's per-sample record of the loudest voice's bow contact.
//! - [`guettler`]: a Guettler diagram of the note being played, swept off the audio thread.
//! - [`dsp::host_rate`]: any host sample rate, on physics that runs where it is tested.
//! - [`render`]: offline rendering of MIDI files, gesture recordings and the demo phrase.

pub mod controller;
pub mod controls;
pub mod drum_voice;
pub mod dsp;
pub mod envelope;
pub mod expression;
pub mod guettler;
pub mod held_events;
pub mod play_modes;
pub mod presets;
pub mod render;
pub mod ribbon;
pub mod state;
pub mod string_weight;
pub mod user_presets;
pub mod view;
pub mod voice;
pub mod voices;

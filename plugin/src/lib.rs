//! Rosin: physically modelled bowed strings (VST3/CLAP).
//!
//! - [`physics`]: the models, free of any plugin framework.
//! - [`dsp`]: ramps and decimation.
//! - [`controller`]: touch input (Sensel Morph, mouse) as gestures for the engine.
//! - [`controls`]: every control's ID, range and default.
//! - [`voice`], [`voices`]: the polyphonic engine behind the plugin, the renderer and the tests.
//! - [`params`], [`plugin`]: the nice-plug glue.
//! - [`render`]: offline rendering of MIDI files to WAV.

pub mod controller;
pub mod controls;
pub mod dsp;
pub mod physics;
pub mod drum_voice;
pub mod editor;
pub mod envelope;
pub mod voice;
pub mod view;
pub mod voices;
pub mod expression;
pub mod play_modes;
pub mod params;
pub mod state;
pub mod presets;
pub mod plugin;

nice_plug::nice_export_clap!(plugin::Rosin);
nice_plug::nice_export_vst3!(plugin::Rosin);
pub mod render;
pub mod lab;

//! Rosin as a VST3/CLAP plugin: the nice-plug glue around [`rosin_engine`], which holds all
//! that sounds.
//!
//! - [`params`]: the host's parameters, built from [`rosin_engine::controls`].
//! - [`plugin`]: the [`plugin::Rosin`] plugin: audio, MIDI and note expressions in, the
//!   engine's voices out, saved state through [`rosin_engine::state`].
//! - [`editor`]: the egui editor. It sees the plugin only through the
//!   [`editor::EditorLinks`] the glue hands it.
//! - [`sensel`]: the reader thread that finds, opens and reads a Sensel Morph, with hot-plug.
//! - [`clap_entry`]: the CLAP entry point: nice-plug's plugin, plus the factory presets for a
//!   host's browser (preset discovery) and loading one by its key (preset load).

pub mod clap_entry;
pub mod editor;
pub mod params;
pub mod plugin;
pub mod sensel;

nice_plug::nice_export_vst3!(plugin::Rosin);

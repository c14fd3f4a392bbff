//! The nice-plug glue: parameters in, note events in, audio and voice terminations out.
//! All sound comes from [`crate::voices::Engine`].

use std::num::NonZeroU32;
use std::sync::Arc;

use nice_plug::prelude::*;
use nice_plug::midi::{Channel, Key, VoiceID};
use nice_plug::plugin::ParamValue;

use crate::controls;
use crate::params::RosinParams;
use crate::voice::NoteId;
use crate::voices::{self, Engine, NotePattern};

/// Sample rates the plugin accepts. Rosin is tested from 22.05 to 192 kHz.
pub const MIN_SAMPLE_RATE_HZ: f32 = 8_000.0;
pub const MAX_SAMPLE_RATE_HZ: f32 = 400_000.0;

pub struct Rosin {
    params: Arc<RosinParams>,
    engine: Engine,
    mono: Vec<f32>,
}

impl Default for Rosin {
    fn default() -> Self {
        Self { params: Arc::new(RosinParams::default()), engine: Engine::new(44_100.0), mono: vec![0.0; 1024] }
    }
}

impl Rosin {
    fn handle(&mut self, event: NoteEvent<()>) {
        let pattern = |channel: Channel, key: Key, voice_id: VoiceID| NotePattern { channel: channel.number(), note: key.number(), voice_id: voice_id.id() };
        let engine_event = match event {
            NoteEvent::NoteOn { voice_id, channel, key, velocity, .. } => {
                let note = NoteId { channel: channel.number().unwrap_or(0), note: key.number_or_middle_c(), voice_id: voice_id.id() };
                voices::NoteEvent::NoteOn { note, velocity: velocity as f64 }
            }
            NoteEvent::NoteOff { voice_id, channel, key, .. } => voices::NoteEvent::NoteOff { pattern: pattern(channel, key, voice_id) },
            NoteEvent::Choke { voice_id, channel, key, .. } => voices::NoteEvent::Choke { pattern: pattern(channel, key, voice_id) },
            // All notes off (123) and all sound off (120).
            NoteEvent::MidiCC { cc: 120 | 123, .. } => voices::NoteEvent::AllNotesOff,
            _ => return,
        };
        self.engine.handle_event(&engine_event);
    }

    fn render(&mut self, start: usize, end: usize, buffer: &mut Buffer) {
        let mut position = start;
        while position < end {
            let len = (end - position).min(self.mono.len());
            self.engine.render(&mut self.mono[..len]);
            for channel in buffer.as_slice().iter_mut() {
                channel[position..position + len].copy_from_slice(&self.mono[..len]);
            }
            position += len;
        }
    }
}

impl Plugin for Rosin {
    const NAME: &'static str = "Rosin";
    const VENDOR: &'static str = "Rosin";
    const URL: &'static str = "https://example.invalid/rosin";
    const EMAIL: &'static str = "rosin@example.invalid";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    const AUDIO_IO_LAYOUTS: &'static [AudioIOLayout] = &[AudioIOLayout {
        main_input_channels: None,
        main_output_channels: NonZeroU32::new(2),
        ..AudioIOLayout::const_default()
    }];
    const MIDI_INPUT: MidiConfig = MidiConfig::MidiCCs;
    const SAMPLE_ACCURATE_AUTOMATION: bool = true;

    type SysExMessage = ();
    type BackgroundTask = ();
    type Editor = ();

    fn params(&self) -> Arc<dyn Params> {
        self.params.clone()
    }

    /// Sanitises a loaded state before it is applied: values are clamped into their ranges
    /// and non-finite ones fall back to the default, so a hand-edited or damaged project
    /// can never put an impossible control into the voices.
    fn filter_state(state: &mut PluginState) {
        for (id, value) in state.params.iter_mut() {
            match (controls::find(id), value) {
                (Some(spec), ParamValue::F32(v)) => *v = spec.clamp(*v as f64) as f32,
                (Some(spec), ParamValue::I32(v)) => *v = spec.clamp(*v as f64) as i32,
                _ => {}
            }
        }
    }

    fn activate(&mut self, _layout: &AudioIOLayout, config: &BufferConfig, _context: &mut impl ActivateContext<Self>) -> bool {
        if !(MIN_SAMPLE_RATE_HZ..=MAX_SAMPLE_RATE_HZ).contains(&config.sample_rate) {
            nice_error!(
                "Rosin supports sample rates from {} to {} Hz; the host asked for {} Hz",
                MIN_SAMPLE_RATE_HZ,
                MAX_SAMPLE_RATE_HZ,
                config.sample_rate
            );
            return false;
        }
        self.engine = Engine::new(config.sample_rate as f64);
        self.mono = vec![0.0; (config.max_buffer_size as usize).clamp(1, 1 << 16)];
        self.engine.set_controls(&self.params.controls());
        true
    }

    fn reset(&mut self) {
        self.engine.reset();
    }

    fn process(&mut self, buffer: &mut Buffer, _aux: &mut AuxiliaryBuffers, context: &mut impl ProcessContext<Self>) -> ProcessStatus {
        // With sample-accurate automation the host's block is split at every parameter
        // change, so reading the values once per call is exact.
        self.engine.set_controls(&self.params.controls());
        let samples = buffer.samples();
        let mut next_event = context.next_event();
        let mut start = 0;
        while start < samples {
            while let Some(event) = next_event {
                if event.timing() as usize > start {
                    break;
                }
                self.handle(event);
                next_event = context.next_event();
            }
            let end = next_event.map_or(samples, |e| (e.timing() as usize).clamp(start + 1, samples));
            self.render(start, end, buffer);
            start = end;
        }
        let timing = samples.saturating_sub(1) as u32;
        self.engine.drain_terminated(|note| {
            // A full event queue only loses the report; the host re-learns on the next note.
            let _ = context.try_send_event(NoteEvent::VoiceTerminated {
                timing,
                voice_id: note.voice_id.map_or(VoiceID::Wildcard, VoiceID::ID),
                channel: Channel::Number(note.channel),
                key: Key::Number(note.note),
            });
        });
        ProcessStatus::KeepAlive
    }
}

impl ClapPlugin for Rosin {
    const CLAP_ID: &'static str = "org.rosin.rosin";
    const CLAP_DESCRIPTION: Option<&'static str> = Some("Physically modelled bowed strings");
    const CLAP_MANUAL_URL: Option<&'static str> = None;
    const CLAP_SUPPORT_URL: Option<&'static str> = None;
    const CLAP_FEATURES: &'static [ClapFeature] = &[ClapFeature::Instrument, ClapFeature::Synthesizer, ClapFeature::Stereo];
}

impl Vst3Plugin for Rosin {
    const VST3_CLASS_ID: [u8; 16] = *b"RosinBowedString";
    const VST3_SUBCATEGORIES: &'static [Vst3SubCategory] = &[Vst3SubCategory::Instrument, Vst3SubCategory::Synth];
}

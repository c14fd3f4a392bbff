//! The nice-plug glue: parameters in, note events in, audio and voice terminations out.
//! All sound comes from [`rosin_engine::voices::Engine`].

use std::num::NonZeroU32;
use std::sync::Arc;

use nice_plug::prelude::*;
use nice_plug::midi::{Channel, Key, VoiceID};
use nice_plug::plugin::ParamValue;

use rosin_engine::controller::bus::GestureBus;
use rosin_engine::controller::gesture::{PadLayout, PAD_CHANNEL};
use crate::sensel::{LazySensel, PadSettings};
use crate::editor::logic::HostGesture;
use crate::editor::{self, EditorLinks};
use crate::params::RosinParams;
use rosin_engine::view::meter::{CpuMeter, OutputMeter};
use rosin_engine::view::snapshot::{self, ViewSnapshot, VIEW_RATE_HZ};
use rosin_engine::view::triple_buffer::{triple_buffer, TripleReader, TripleWriter};
use rosin_engine::voice::NoteId;
use rosin_engine::expression::ExpressionKind;
use rosin_engine::voices::{self, Engine, NotePattern, DEFAULT_VOICES, MOST_VOICES};
use rosin_engine::dsp::denormals::DenormalGuard;
use rosin_engine::dsp::host_rate::{self, RateAdapter, RatePlan};

/// Sample rates the plugin accepts: any from 1 kHz to 1.536 MHz. The physics runs from 22.05
/// to 192 kHz; outside that range it runs at a multiple or fraction of the host's rate
/// ([`rosin_engine::dsp::host_rate`]).
pub const MIN_SAMPLE_RATE_HZ: f64 = host_rate::MIN_HOST_RATE_HZ;
pub const MAX_SAMPLE_RATE_HZ: f64 = host_rate::MAX_HOST_RATE_HZ;
/// Below this level (-120 dBFS) a block with no voice sounding is silence.
const SILENCE_LEVEL: f32 = 1e-6;
/// Gestures are read from their atomics at least this often (in samples), so a long host
/// block still follows the pad; the engine ramps each value over 10 ms in between.
const GESTURE_READ_SAMPLES: usize = 64;

pub struct Rosin {
    params: Arc<RosinParams>,
    engine: Engine,
    /// Joins the engine's rate to the host's.
    rate: RateAdapter,
    mono: Vec<f32>,
    gestures: Arc<GestureBus>,
    view_writer: TripleWriter<ViewSnapshot>,
    /// The editor's end of the view buffer (the GUI side only ever locks it).
    view_reader: Arc<std::sync::Mutex<TripleReader<ViewSnapshot>>>,
    samples_to_capture: usize,
    /// The output's level and the audio thread's load, for the editor's feedback.
    meter: OutputMeter,
    cpu: CpuMeter,
    editor_state: Arc<nice_plug_egui::EguiEditorState>,
    repaint: nice_plug_egui::RepaintNotifier,
    gui_context: Arc<std::sync::Mutex<Option<nice_plug::context::gui::GuiContext>>>,
    /// The voice capacity last reported to the host (CLAP voice info).
    voice_capacity: usize,
    /// Debug builds only: `process()` allocates on purpose when `ROSIN_TEST_ALLOCATE_IN_PROCESS`
    /// is set at activation, so that a test can prove the allocation guard of the test build
    /// (`assert_process_allocs`) is armed (`tests/clap_alloc_guard.rs`).
    #[cfg(debug_assertions)]
    allocate_in_process_for_test: bool,
    /// The Sensel reader, started when the instance is first activated or its editor draws,
    /// never by a host's scan (which creates instances and drops them). Dropped last of all
    /// (fields drop in order): the last handle leaves the shared reader, without
    /// waiting for it.
    sensel: Arc<LazySensel>,
}

impl Default for Rosin {
    fn default() -> Self {
        let (view_writer, view_reader) = triple_buffer(ViewSnapshot::default());
        let params = Arc::new(RosinParams::default());
        let gestures = Arc::new(GestureBus::default());
        let pad_params = params.clone();
        let pad_settings = Arc::new(move || PadSettings {
            layout: PadLayout::from_control(pad_params.pad_layout.value() as f64),
            drum: pad_params.instrument.value() == 1,
        });
        let sensel = Arc::new(LazySensel::new(gestures.clone(), pad_settings));
        Self {
            params,
            engine: Engine::new(44_100.0),
            rate: RateAdapter::new(RatePlan::for_host_rate(44_100.0).expect("44.1 kHz is supported")),
            mono: vec![0.0; 1024],
            gestures,
            view_writer,
            view_reader: Arc::new(std::sync::Mutex::new(view_reader)),
            samples_to_capture: 0,
            meter: OutputMeter::default(),
            cpu: CpuMeter::default(),
            editor_state: nice_plug_egui::EguiEditorState::from_size(nice_plug::editor::dpi::LogicalSize::new(editor::DEFAULT_SIZE.0, editor::DEFAULT_SIZE.1), 1.0),
            repaint: nice_plug_egui::RepaintNotifier::new(),
            gui_context: Arc::new(std::sync::Mutex::new(None)),
            voice_capacity: DEFAULT_VOICES,
            #[cfg(debug_assertions)]
            allocate_in_process_for_test: false,
            sensel,
        }
    }
}

impl Rosin {
    fn handle(&mut self, event: NoteEvent<()>) {
        let pattern = |channel: Channel, key: Key, voice_id: VoiceID| NotePattern { channel: channel.number(), note: key.number(), voice_id: voice_id.id() };
        let expression = |voice_id: VoiceID, channel: Channel, key: Key, kind: ExpressionKind, value: f32| voices::NoteEvent::Expression {
            pattern: pattern(channel, key, voice_id),
            kind,
            value: value as f64,
        };
        let engine_event = match event {
            NoteEvent::NoteOn { voice_id, channel, key, velocity, .. } => {
                let note = NoteId { channel: channel.number().unwrap_or(0), note: key.number_or_middle_c(), voice_id: voice_id.id() };
                voices::NoteEvent::NoteOn { note, velocity: velocity as f64 }
            }
            NoteEvent::NoteOff { voice_id, channel, key, .. } => voices::NoteEvent::NoteOff { pattern: pattern(channel, key, voice_id) },
            NoteEvent::Choke { voice_id, channel, key, .. } => voices::NoteEvent::Choke { pattern: pattern(channel, key, voice_id) },
            // CLAP and VST3 note expressions; MIDI poly aftertouch arrives as PolyPressure too.
            NoteEvent::PolyPressure { voice_id, channel, key, pressure, .. } => expression(voice_id, channel, key, ExpressionKind::Pressure, pressure),
            NoteEvent::PolyTuning { voice_id, channel, key, tuning, .. } => expression(voice_id, channel, key, ExpressionKind::Tuning, tuning),
            NoteEvent::PolyVibrato { voice_id, channel, key, vibrato, .. } => expression(voice_id, channel, key, ExpressionKind::Vibrato, vibrato),
            NoteEvent::PolyExpression { voice_id, channel, key, expression: value, .. } => expression(voice_id, channel, key, ExpressionKind::Expression, value),
            NoteEvent::PolyBrightness { voice_id, channel, key, brightness, .. } => expression(voice_id, channel, key, ExpressionKind::Brightness, brightness),
            NoteEvent::PolyModulation { voice_id, poly_modulation_id, normalized_offset, .. } => voices::NoteEvent::PolyModulation {
                voice_id,
                index: poly_modulation_id as usize,
                normalized_offset: normalized_offset as f64,
            },
            NoteEvent::MidiPitchBend { channel, value, .. } => voices::NoteEvent::PitchBend { channel, value: value as f64 },
            NoteEvent::MidiChannelPressure { channel, pressure, .. } => voices::NoteEvent::ChannelPressure { channel, value: pressure as f64 },
            NoteEvent::MidiCC { channel, cc, value, .. } => voices::NoteEvent::ControlChange { channel, cc, value: value as f64 },
            _ => return,
        };
        self.engine.handle_event(&engine_event);
    }

    fn render(&mut self, start: usize, end: usize, buffer: &mut Buffer) {
        let mut position = start;
        while position < end {
            let len = (end - position).min(self.mono.len()).min(GESTURE_READ_SAMPLES);
            self.engine.set_gestures(&self.gestures.read());
            self.rate.render(&mut self.engine, &mut self.mono[..len]);
            self.meter.observe(&self.mono[..len]);
            for channel in buffer.as_slice().iter_mut() {
                channel[position..position + len].copy_from_slice(&self.mono[..len]);
            }
            position += len;
            self.capture_view(len);
        }
    }

    /// Hands the views a snapshot about [`VIEW_RATE_HZ`] times a second.
    fn capture_view(&mut self, samples: usize) {
        if self.samples_to_capture > samples {
            self.samples_to_capture -= samples;
            return;
        }
        self.samples_to_capture = (self.rate.plan().host_rate_hz / VIEW_RATE_HZ) as usize;
        let (engine, level, cpu_share) = (&self.engine, self.meter.take(), self.cpu.share());
        self.view_writer.publish(|view| {
            snapshot::capture(engine, view);
            snapshot::capture_feedback(level, cpu_share, view);
        });
        self.repaint.request_repaint();
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
    /// Room for the largest burst a host sends in one block without growing the wrapper's
    /// event queue on the audio thread: a VST3 host restoring every MIDI-CC proxy parameter at
    /// once sends 16 channels x 130 controllers = 2,080 events, plus its notes.
    const INPUT_EVENT_CAPACITY: usize = 8192;

    type SysExMessage = ();
    /// Parameter gestures from the pad or the mouse, run on the host's GUI thread.
    type BackgroundTask = HostGesture;
    type Editor = nice_plug_egui::EguiEditor<editor::RosinEditorApp>;

    fn params(&self) -> Arc<dyn Params> {
        self.params.clone()
    }

    fn task_executor(&mut self) -> TaskExecutor<Self> {
        let (context, params) = (self.gui_context.clone(), self.params.clone());
        Box::new(move |gesture| {
            let context = context.lock().ok().and_then(|c| c.clone());
            if let Some(context) = context {
                editor::apply_host_gesture(&context, &params, gesture);
            }
        })
    }

    fn editor(&mut self, executor: AsyncExecutor<Self>) -> Option<Self::Editor> {
        let links = EditorLinks {
            params: self.params.clone(),
            bus: self.gestures.clone(),
            view: self.view_reader.clone(),
            sensel: Some(self.sensel.clone()),
            gui_context: self.gui_context.clone(),
            post_gesture: Arc::new(move |gesture| executor.execute_gui(gesture)),
        };
        editor::create(links, self.editor_state.clone(), self.repaint.clone())
    }

    /// Migrates a loaded state from the version it was saved with and sanitises it before it
    /// is applied (see [`rosin_engine::state`]): a project from an older Rosin sounds as it did,
    /// a hand-edited or damaged one can never put an impossible control into the voices, one
    /// from a newer Rosin loads what this one knows and says so (the log, and a note in the
    /// editor), and one whose version cannot be read is refused: nothing of it is applied.
    fn filter_state(state: &mut PluginState) {
        use rosin_engine::state::{self, ParamValue as Saved};
        let mut params: std::collections::BTreeMap<String, Saved> = state
            .params
            .iter()
            .map(|(id, value)| {
                // A switch or a number written as text (a hand-edited project, another
                // tool's) is read as the number it says; the migration converts it to the
                // kind the control takes.
                let saved = match value {
                    ParamValue::F32(v) => Saved::F32(*v),
                    ParamValue::I32(v) => Saved::I32(*v),
                    ParamValue::Bool(b) => Saved::I32(*b as i32),
                    ParamValue::String(text) => text.trim().parse().map_or(Saved::Other, Saved::F32),
                };
                (id.clone(), saved)
            })
            .collect();
        let migration = match state::migrate(&mut params, &mut state.fields) {
            Ok(migration) => migration,
            Err(error) => {
                nice_error!("{error}");
                // Nothing is applied: the instance stays as it was.
                state.params.clear();
                state.fields.clear();
                return;
            }
        };
        if let Some(notice) = &migration.notice {
            nice_warn!("{notice}");
        }
        if !migration.converted.is_empty() {
            nice_warn!("converted saved values of the wrong kind: {}", migration.converted.join(", "));
        }
        state.fields.insert("state_notice".to_string(), json_string(migration.notice.as_deref().unwrap_or("")));
        for (id, saved) in params {
            match saved {
                Saved::F32(v) => drop(state.params.insert(id, ParamValue::F32(v))),
                Saved::I32(v) => drop(state.params.insert(id, ParamValue::I32(v))),
                Saved::Other => {}
            }
        }
    }

    fn activate(&mut self, _layout: &AudioIOLayout, config: &BufferConfig, context: &mut impl ActivateContext<Self>) -> bool {
        let plan = match RatePlan::for_host_rate(config.sample_rate as f64) {
            Ok(plan) => plan,
            Err(error) => {
                nice_error!("{error}");
                return false;
            }
        };
        // The pad starts playing with the first activation (not while a host scans).
        self.sensel.start();
        self.engine = Engine::new(plan.internal_rate_hz);
        self.rate = RateAdapter::new(plan);
        context.set_latency_samples(plan.latency_samples());
        self.mono = vec![0.0; (config.max_buffer_size as usize).clamp(1, 1 << 16)];
        self.engine.set_controls(&self.params.controls());
        self.voice_capacity = self.engine.voice_capacity();
        context.set_current_voice_capacity(self.voice_capacity as u32);
        #[cfg(debug_assertions)]
        {
            self.allocate_in_process_for_test = std::env::var_os("ROSIN_TEST_ALLOCATE_IN_PROCESS").is_some();
        }
        true
    }

    fn reset(&mut self) {
        self.engine.reset();
        self.rate.reset();
    }

    fn process(&mut self, buffer: &mut Buffer, _aux: &mut AuxiliaryBuffers, context: &mut impl ProcessContext<Self>) -> ProcessStatus {
        // Flush-to-zero and denormals-are-zero for the whole call (nice-plug sets only FTZ,
        // and only with a feature Rosin does not use); the host's own mode comes back after.
        let _denormals = DenormalGuard::new();
        // The call's own time, for the editor's CPU readout (a clock read: no lock, no
        // allocation).
        let started = std::time::Instant::now();
        #[cfg(debug_assertions)]
        if self.allocate_in_process_for_test {
            drop(std::hint::black_box(Vec::<u8>::with_capacity(64)));
        }
        // With sample-accurate automation the host's block is split at every parameter
        // change, so reading the values once per call is exact.
        self.engine.set_controls(&self.params.controls());
        if self.engine.voice_capacity() != self.voice_capacity {
            self.voice_capacity = self.engine.voice_capacity();
            context.set_current_voice_capacity(self.voice_capacity as u32);
        }
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
        self.cpu.observe(started.elapsed().as_secs_f64(), samples as f64 / self.rate.plan().host_rate_hz);
        let timing = samples.saturating_sub(1) as u32;
        self.engine.drain_terminated(|note| {
            // The pad's own voices are not the host's notes.
            if note.channel >= PAD_CHANNEL {
                return;
            }
            // A full event queue only loses the report; the host re-learns on the next note.
            let _ = context.try_send_event(NoteEvent::VoiceTerminated {
                timing,
                voice_id: note.voice_id.map_or(VoiceID::Wildcard, VoiceID::ID),
                channel: Channel::Number(note.channel),
                key: Key::Number(note.note),
            });
        });
        // Silent (nothing sounds, Four Strings' open strings asleep, the body at rest, and
        // the block below -120 dBFS): the host may stop calling until the next event (CLAP's
        // "continue if not quiet"), which wakes the plugin as it left it. Sounding: keep
        // calling, whatever the input.
        let quiet = self.engine.is_silent() && buffer.as_slice().iter().all(|channel| channel.iter().all(|s| s.abs() < SILENCE_LEVEL));
        if quiet {
            ProcessStatus::Normal
        } else {
            ProcessStatus::KeepAlive
        }
    }
}

impl ClapPlugin for Rosin {
    const CLAP_ID: &'static str = "org.rosin.rosin";
    const CLAP_DESCRIPTION: Option<&'static str> = Some("Physically modelled bowed strings");
    const CLAP_MANUAL_URL: Option<&'static str> = None;
    const CLAP_SUPPORT_URL: Option<&'static str> = None;
    const CLAP_FEATURES: &'static [ClapFeature] = &[ClapFeature::Instrument, ClapFeature::Synthesizer, ClapFeature::Stereo];
    /// Bow force, velocity and position can be modulated per voice; hosts may stack voices on
    /// one key (every voice is matched by its note ID first).
    const CLAP_POLY_MODULATION_CONFIG: Option<PolyModulationConfig> = Some(PolyModulationConfig {
        max_voice_capacity: MOST_VOICES as u32,
        supports_overlapping_voices: true,
    });
}

impl Vst3Plugin for Rosin {
    const VST3_CLASS_ID: [u8; 16] = *b"RosinBowedString";
    const VST3_SUBCATEGORIES: &'static [Vst3SubCategory] = &[Vst3SubCategory::Instrument, Vst3SubCategory::Synth];
}

/// `text` as a JSON string literal (how nice-plug stores a persisted `String` field).
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

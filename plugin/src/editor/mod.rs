//! The editor (nice-plug-egui): the string and membrane views, every control in groups,
//! the Sensel's state, gesture recording, and the mouse as a bow.
//!
//! - [`logic`]: the pure parts (mouse to touches, host gestures, groups, formatting).
//! - [`string_view`], [`membrane_view`], [`lab_view`]: the views.
//! - [`controls_panel`]: the grouped sliders.
//! - [`feedback`]: the output meter, the CPU readout and the sounding voices.
//!
//! The views read [`ViewSnapshot`]s from the audio thread through a triple buffer and
//! redraw at the window's frame rate. The mouse writes gestures into the same
//! [`GestureBus`] as the Sensel, through the same mapper. Lane 0's gestures (from either)
//! are reported to the host as parameter gestures through the plugin's GUI-thread task
//! executor, so that VST3 hosts get them on their GUI thread.

pub mod controls_panel;
pub mod feedback;
pub mod headless;
pub mod lab_view;
pub mod logic;
pub mod membrane_view;
pub mod string_view;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nice_plug::prelude::*;
use nice_plug::context::gui::GuiContext;
use nice_plug_egui::{create_egui_editor, EguiEditor, EguiEditorState, EguiNiceSettings, NiceEguiApp, RepaintNotifier};

use rosin_engine::controller::bus::{GestureBus, GestureSource};
use rosin_engine::controller::gesture::PadLayout;
use rosin_engine::controller::mapper::PadMapper;
use crate::sensel::{LazySensel, SenselState};
use rosin_engine::controls;
use crate::params::{ParamRef, RosinParams};
use rosin_engine::view::snapshot::{ViewSnapshot, VIEW_STRINGS};
use rosin_engine::view::triple_buffer::TripleReader;
use logic::{membrane_touch, string_touches, HostGesture, HostGestureTracker, MouseState, MOUSE_PAD_HEIGHT_MM, MOUSE_PAD_WIDTH_MM};
use membrane_view::{MembraneImage, MembraneMouse};

/// The editor's size when it first opens, in logical pixels.
pub const DEFAULT_SIZE: (f32, f32) = (1040.0, 660.0);
pub const MIN_SIZE: (f32, f32) = logic::WINDOW_MIN_SIZE;

pub use logic::Tab;

/// Hands a parameter gesture to the host on its GUI thread.
pub type GesturePoster = Arc<dyn Fn(HostGesture) + Send + Sync>;

/// All the editor knows of the plugin: what the glue hands it when the host opens it.
#[derive(Clone)]
pub struct EditorLinks {
    pub params: Arc<RosinParams>,
    pub bus: Arc<GestureBus>,
    pub view: Arc<Mutex<TripleReader<ViewSnapshot>>>,
    /// The Sensel reader, started when the editor first draws.
    pub sensel: Option<Arc<LazySensel>>,
    /// The open editor's GUI context, for the host-gesture task executor.
    pub gui_context: Arc<Mutex<Option<GuiContext>>>,
    /// Posts the pad's and the mouse's parameter gestures to the host.
    pub post_gesture: GesturePoster,
}

/// Sends one host gesture through `context` (on the GUI thread).
pub fn apply_host_gesture(context: &GuiContext, params: &RosinParams, gesture: HostGesture) {
    let setter = context.param_setter();
    let id = match gesture {
        HostGesture::Begin(id) | HostGesture::Set(id, _) | HostGesture::End(id) => id,
    };
    match (params.param_ref(id), gesture) {
        (Some(ParamRef::Float(p)), HostGesture::Begin(_)) => setter.begin_set_parameter(p),
        (Some(ParamRef::Float(p)), HostGesture::Set(_, v)) => setter.set_parameter(p, v as f32),
        (Some(ParamRef::Float(p)), HostGesture::End(_)) => setter.end_set_parameter(p),
        (Some(ParamRef::Int(p)), HostGesture::Begin(_)) => setter.begin_set_parameter(p),
        (Some(ParamRef::Int(p)), HostGesture::Set(_, v)) => setter.set_parameter(p, v.round() as i32),
        (Some(ParamRef::Int(p)), HostGesture::End(_)) => setter.end_set_parameter(p),
        (None, _) => {}
    }
}

/// The editor page saved with the project (empty: none).
fn params_page(params: &RosinParams) -> String {
    params.editor_page.read().map(|p| p.clone()).unwrap_or_default()
}

pub fn create(links: EditorLinks, state: Arc<EguiEditorState>, repaint: RepaintNotifier) -> Option<EguiEditor<RosinEditorApp>> {
    let settings = EguiNiceSettings::new()
        .with_tile("Rosin")
        .with_resize_hint(ResizeHint::resizable().with_min_logical_size(nice_plug::editor::dpi::LogicalSize::new(MIN_SIZE.0, MIN_SIZE.1)));
    create_egui_editor(state, repaint, settings, RosinEditorApp::new(links))
}

pub struct RosinEditorApp {
    links: EditorLinks,
    gui: Option<GuiContext>,
    tab: Option<Tab>,
    snapshot: ViewSnapshot,
    mouse: MouseState,
    mouse_mapper: PadMapper,
    membrane_mouse: Option<(f64, f64)>,
    tracker: HostGestureTracker,
    string_peaks: [f32; VIEW_STRINGS],
    membrane: MembraneImage,
    frame_times_s: VecDeque<f64>,
    message: String,
    /// The lab view's stick/slip strip, kept between frames.
    sticking: Vec<bool>,
    /// The output meter's held peak and clip light.
    meter: logic::MeterHold,
    /// The lab tab's page: the live contact, or the Guettler diagram.
    guettler_page: bool,
    guettler: Option<logic::GuettlerJob>,
    /// The note the lab last followed: the Guettler diagram's note when none sounds.
    lab_key: u8,
    /// Restores the project's window size on opening and records the player's.
    size_keeper: logic::WindowSizeKeeper,
    /// Whether the side panel's groups open with the editor (`ROSIN_EDITOR_GROUPS=open`,
    /// for the screenshots; closed otherwise).
    groups_open: bool,
}

impl RosinEditorApp {
    fn new(links: EditorLinks) -> Self {
        // The screenshot script opens a chosen view first.
        let tab = std::env::var("ROSIN_EDITOR_VIEW").ok().and_then(|name| logic::page_from_name(&name)).map(|(tab, _)| tab);
        Self {
            links,
            gui: None,
            tab,
            snapshot: ViewSnapshot::default(),
            mouse: MouseState::new(),
            mouse_mapper: PadMapper::new(MOUSE_PAD_WIDTH_MM, MOUSE_PAD_HEIGHT_MM),
            membrane_mouse: None,
            tracker: HostGestureTracker::default(),
            string_peaks: [1e-7; VIEW_STRINGS],
            membrane: MembraneImage::default(),
            frame_times_s: VecDeque::with_capacity(64),
            message: String::new(),
            sticking: Vec::new(),
            meter: logic::MeterHold::default(),
            guettler_page: std::env::var("ROSIN_EDITOR_VIEW").as_deref() == Ok("guettler"),
            guettler: None,
            lab_key: 55,
            size_keeper: logic::WindowSizeKeeper::default(),
            groups_open: std::env::var("ROSIN_EDITOR_GROUPS").as_deref() == Ok("open"),
        }
    }

    fn drum(&self) -> bool {
        self.links.params.instrument.value() == 1
    }

    fn layout(&self) -> PadLayout {
        PadLayout::from_control(self.links.params.pad_layout.value() as f64)
    }

    fn top_bar(&mut self, ui: &mut egui::Ui, tab: &mut Tab) {
        // Wrapped, so that a small window shows all of it on two lines.
        ui.horizontal_wrapped(|ui| {
            ui.heading("Rosin");
            ui.separator();
            ui.selectable_value(tab, Tab::String, "String");
            ui.selectable_value(tab, Tab::Membrane, "Membrane");
            ui.selectable_value(tab, Tab::Lab, "Lab");
            ui.separator();
            match self.links.sensel.as_ref().and_then(|lazy| lazy.start()) {
                Some(sensel) => {
                    let state = sensel.state();
                    match &state {
                        // The loader's full reason is long: it goes in the tooltip.
                        SenselState::NoLibrary(reason) => ui.label("No Sensel").on_hover_text(reason.as_str()),
                        _ => ui.label(format!("{state} [this is Rosin #{}]", sensel.instance())),
                    };
                    if matches!(state, SenselState::InUseElsewhere { .. }) && ui.button("Take over").clicked() {
                        sensel.take_over();
                    }
                    if matches!(state, SenselState::Crashed(_)) && ui.button("Restart").clicked() {
                        if let Some(lazy) = self.links.sensel.as_ref() {
                            lazy.restart();
                        }
                    }
                }
                None => {
                    ui.label("No Sensel reader");
                }
            }
            ui.separator();
            let recording = self.links.bus.is_recording();
            if ui.selectable_label(recording, if recording { "Stop recording" } else { "Record gestures" }).clicked() {
                self.toggle_recording();
            }
            ui.separator();
            ui.label(format!("Mouse pressure {:.0} g (wheel)", self.mouse.pressure_g));
            if let Some(fps) = logic::frames_per_second(self.frame_times_s.make_contiguous()) {
                ui.label(format!("{fps:.0} fps"));
            }
        });
        if !self.message.is_empty() {
            ui.label(&self.message);
        }
    }

    fn toggle_recording(&mut self) {
        let bus = &self.links.bus;
        if bus.is_recording() {
            let Some(recording) = bus.stop_recording() else { return };
            let unix_s = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
            let path = logic::recording_path(unix_s);
            self.message = match recording.save(&path) {
                Ok(()) => format!("Saved {:.1} s of gestures to {} (play it with rosin-render --gestures)", recording.duration_s(), path.display()),
                Err(e) => format!("Could not save the gestures: {e}"),
            };
        } else {
            let controls = self.links.params.controls();
            let values: Vec<(&'static str, f64)> = controls::ALL.iter().map(|s| (s.id, controls.get(s.id).unwrap_or(s.default))).collect();
            bus.start_recording(&values);
            self.message = "Recording every gesture (pad and mouse)...".into();
        }
    }

    /// The mouse's touches through the mouse's own mapper into the bus.
    fn play_mouse(&mut self, time_s: f64, tab: Tab) {
        let drum = self.drum();
        let touches = match tab {
            Tab::String if !drum => string_touches(&self.mouse, self.layout()),
            Tab::Membrane if drum => self.membrane_mouse.map(|(x, y)| vec![membrane_touch(x, y, self.mouse.pressure_g)]).unwrap_or_default(),
            _ => Vec::new(),
        };
        for (lane, gesture) in self.mouse_mapper.update(&touches, time_s, self.layout(), drum) {
            self.links.bus.write(lane, &gesture, GestureSource::Mouse);
        }
    }

    /// On the first frames, asks the host for the size the project was saved at.
    fn restore_window_size(&mut self, ctx: &egui::Context) {
        let zoom = ctx.zoom_factor();
        let points = ctx.content_rect().size();
        let current = (points.x * zoom, points.y * zoom);
        let saved = self.links.params.editor_size.read().ok().and_then(|size| *size);
        if let Some((width, height)) = self.size_keeper.frame(saved, current) {
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(egui::vec2(width / zoom, height / zoom)));
        }
    }

    fn report_host_gestures(&mut self) {
        let gesture = self.links.bus.lane(0);
        let drum = self.drum();
        let one_lane = drum || self.layout() == PadLayout::OneString;
        let params = self.links.params.clone();
        let before = move |id: &str| {
            let controls = params.controls();
            controls.get(id).unwrap_or_default()
        };
        for task in self.tracker.update(&gesture, one_lane, drum, before) {
            (self.links.post_gesture)(task);
        }
    }
}

impl NiceEguiApp for RosinEditorApp {
    fn build(&mut self, _ctx: egui::Context, gui: GuiContext, _frame: &mut nice_plug_egui::Frame) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        if let Ok(mut slot) = self.links.gui_context.lock() {
            *slot = Some(gui.clone());
        }
        self.gui = Some(gui);
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut nice_plug_egui::Frame) {
        self.draw(ui);
    }

    fn resized(&mut self, new_size: nice_plug_egui::baseview::WindowSize) {
        let size = (new_size.logical.width as f32, new_size.logical.height as f32);
        if let Some(size) = self.size_keeper.resized(size) {
            if let Ok(mut saved) = self.links.params.editor_size.write() {
                *saved = Some(size);
            }
        }
    }

    fn editor_closed(&mut self) {
        self.size_keeper.closed();
        // Nothing stays bowed by a closed window, and every host gesture is ended.
        for (lane, gesture) in self.mouse_mapper.lift_all() {
            self.links.bus.write(lane, &gesture, GestureSource::Mouse);
        }
        self.mouse.bowing = None;
        self.membrane_mouse = None;
        for task in self.tracker.end_all() {
            (self.links.post_gesture)(task);
        }
        self.membrane.forget_texture();
        // The shared context stays: the gesture ends above may run after this returns.
        self.gui = None;
    }
}

impl RosinEditorApp {
    /// Draws one frame of the editor into `ui`: what the window does each frame, and what
    /// [`headless::HeadlessEditor`] does without a window.
    pub fn draw(&mut self, ui: &mut egui::Ui) {
        let Some(gui) = self.gui.clone() else { return };
        let time_s = ui.input(|i| i.time);
        if self.frame_times_s.len() == 60 {
            self.frame_times_s.pop_front();
        }
        self.frame_times_s.push_back(time_s);
        if let Ok(mut reader) = self.links.view.lock() {
            self.snapshot.clone_from(reader.read());
        }
        if self.tab.is_none() {
            // The page the project was saved on, if any.
            let saved = params_page(&self.links.params);
            if let Some((tab, guettler)) = logic::page_from_name(&saved) {
                self.tab = Some(tab);
                self.guettler_page = guettler;
            }
        }
        self.restore_window_size(ui.ctx());
        let mut tab = self.tab.unwrap_or(if self.drum() { Tab::Membrane } else { Tab::String });
        let params = self.links.params.clone();
        let setter = gui.param_setter();

        egui::Panel::top("top").show(ui, |ui| {
            self.top_bar(ui, &mut tab);
            feedback::show(ui, &self.snapshot.feedback, &mut self.meter, time_s);
        });
        let performance = logic::performance_controls(self.drum());
        // The side panel takes less of a small window (at 800 wide, about 230 of it).
        let side_width = (ui.ctx().content_rect().width() * 0.29).clamp(220.0, 380.0);
        egui::Panel::left("controls").resizable(true).show(ui, |ui| {
            ui.set_min_width(side_width);
            controls_panel::show(ui, &params, &setter, performance, self.groups_open);
        });
        egui::Panel::bottom("performance").show(ui, |ui| {
            ui.add_space(6.0);
            controls_panel::performance_strip(ui, &params, &setter, performance);
            ui.add_space(6.0);
        });
        egui::CentralPanel::default().show(ui, |ui| match tab {
            Tab::String => {
                if self.drum() {
                    ui.label("Instrument is the friction drum: set it to String to bow a string with the mouse.");
                }
                string_view::show(ui, &self.snapshot, self.layout(), &mut self.mouse, &mut self.string_peaks);
            }
            Tab::Membrane => {
                if !self.drum() {
                    ui.label("Instrument is the string: set it to Friction Drum to bow the membrane with the mouse.");
                }
                let label = if self.snapshot.membrane.sounding { format!("{} drum", logic::note_name(self.snapshot.membrane.key)) } else { "drag to bow".into() };
                match membrane_view::show(ui, &self.snapshot.membrane, &mut self.membrane, &label) {
                    MembraneMouse::Bow(x, y) => self.membrane_mouse = Some((x, y)),
                    MembraneMouse::Lift => self.membrane_mouse = None,
                    MembraneMouse::None => {
                        if !ui.input(|i| i.pointer.primary_down()) {
                            self.membrane_mouse = None;
                        }
                    }
                }
                if ui.ui_contains_pointer() {
                    let scroll = ui.input(|i| i.smooth_scroll_delta.y) as f64;
                    if scroll != 0.0 {
                        self.mouse.scroll(scroll / 50.0);
                    }
                }
            }
            Tab::Lab => {
                if self.snapshot.lab.sounding {
                    self.lab_key = self.snapshot.lab.key;
                }
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.guettler_page, false, "Live contact");
                    ui.selectable_value(&mut self.guettler_page, true, "Guettler diagram");
                });
                if self.guettler_page {
                    let rate = self.snapshot.lab.sample_rate_hz as f64;
                    lab_view::show_guettler(ui, &mut self.guettler, self.lab_key, &params.controls(), rate);
                } else {
                    lab_view::show(ui, &self.snapshot.lab, &mut self.sticking);
                }
            }
        });
        if self.tab != Some(tab) || params_page(&self.links.params) != logic::page_name(tab, self.guettler_page) {
            if let Ok(mut page) = self.links.params.editor_page.write() {
                *page = logic::page_name(tab, self.guettler_page).to_string();
            }
        }
        self.tab = Some(tab);
        self.play_mouse(time_s, tab);
        self.report_host_gestures();
        ui.ctx().request_repaint_after(Duration::from_millis(16));
    }
}

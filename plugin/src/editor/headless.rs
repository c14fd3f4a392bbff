//! The editor without a window: the same [`RosinEditorApp`] drawing into an egui context
//! with no host, no GPU and no Sensel, for the frame-time bench (`benches/editor_frame.rs`)
//! and for tests that read what a page draws (`tests/editor_pages.rs`).
//!
//! A frame here is what the window does before the GPU: egui's layout of every panel and
//! view, and its tessellation into triangles.

use std::sync::{Arc, Mutex};

use nice_plug::context::gui::{GuiContext, GuiContextInner};
use nice_plug::prelude::*;

use super::{logic, EditorLinks, RosinEditorApp, Tab};
use crate::params::RosinParams;
use rosin_engine::controller::bus::GestureBus;
use rosin_engine::view::snapshot::ViewSnapshot;
use rosin_engine::view::triple_buffer::TripleReader;

/// A host that takes the editor's parameter changes and applies them, as a host does, with
/// no automation to record them in.
struct NoHost;

impl GuiContextInner for NoHost {
    fn plugin_api(&self) -> PluginApi {
        PluginApi::Clap
    }
    unsafe fn raw_begin_set_parameter(&self, _param: ParamPtr) {}
    unsafe fn raw_set_parameter_normalized(&self, param: ParamPtr, normalized: f32) {
        // SAFETY: `param` points into the editor's parameters, which outlive the editor.
        unsafe { param._internal_set_normalized_value(normalized) };
    }
    unsafe fn raw_end_set_parameter(&self, _param: ParamPtr) {}
    fn get_state(&self) -> PluginState {
        PluginState { version: String::new(), params: Default::default(), fields: Default::default() }
    }
    fn set_state(&self, _state: PluginState) {}
    fn request_restart(&self) {}
}

/// The editor drawing frames of a given size without a window.
pub struct HeadlessEditor {
    ctx: egui::Context,
    app: RosinEditorApp,
    size: (f32, f32),
    time_s: f64,
    last: Option<egui::FullOutput>,
}

impl HeadlessEditor {
    /// An editor of `size` logical pixels showing what `view` receives, with `params`.
    pub fn new(params: Arc<RosinParams>, view: TripleReader<ViewSnapshot>, size: (f32, f32)) -> Self {
        let links = EditorLinks {
            params,
            bus: Arc::new(GestureBus::default()),
            view: Arc::new(Mutex::new(view)),
            sensel: None,
            gui_context: Arc::new(Mutex::new(None)),
            post_gesture: Arc::new(|_| {}),
        };
        let mut app = RosinEditorApp::new(links);
        app.gui = Some(GuiContext::new(Arc::new(NoHost)));
        Self { ctx: egui::Context::default(), app, size, time_s: 0.0, last: None }
    }

    /// Sets a control as the host would (`instrument` to 1 shows the drum's controls).
    pub fn set_control(&self, id: &str, value: f64) {
        let (Some(gui), Some(spec)) = (&self.app.gui, rosin_engine::controls::find(id)) else { return };
        super::apply_host_gesture(gui, &self.app.links.params, logic::HostGesture::Set(spec.id, value));
    }

    /// Opens every group of the side panel (before the first frame).
    pub fn open_groups(&mut self) {
        self.app.groups_open = true;
    }

    /// Shows `page` (as the project saves it: `string`, `membrane`, `lab`, `guettler`) from
    /// the next frame.
    pub fn show(&mut self, page: &str) {
        let (tab, guettler) = logic::page_from_name(page).unwrap_or((Tab::String, false));
        self.app.tab = Some(tab);
        self.app.guettler_page = guettler;
    }

    /// Draws one frame, `dt_s` after the last, and tessellates it: returns the triangles'
    /// vertex count.
    pub fn frame(&mut self, dt_s: f64) -> usize {
        self.time_s += dt_s;
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(self.size.0, self.size.1))),
            time: Some(self.time_s),
            ..Default::default()
        };
        let app = &mut self.app;
        let mut output = self.ctx.run_ui(input, |ui| app.draw(ui));
        // The window would upload these to the GPU; here there is none.
        output.textures_delta.clear();
        let meshes = self.ctx.tessellate(output.shapes.clone(), output.pixels_per_point);
        let vertices = meshes
            .iter()
            .map(|clipped| match &clipped.primitive {
                egui::epaint::Primitive::Mesh(mesh) => mesh.vertices.len(),
                egui::epaint::Primitive::Callback(_) => 0,
            })
            .sum();
        self.last = Some(output);
        vertices
    }

    /// Every piece of text the last frame drew, in drawing order.
    pub fn texts(&self) -> Vec<String> {
        self.placed_texts().into_iter().map(|(text, _)| text).collect()
    }

    /// The texts the last frame drew whole where the player sees them: inside the window and
    /// not cut by a panel's or a scroll area's edge.
    pub fn visible_texts(&self) -> Vec<String> {
        self.placed_texts().into_iter().filter(|(_, visible)| *visible).map(|(text, _)| text).collect()
    }

    fn placed_texts(&self) -> Vec<(String, bool)> {
        fn collect(shape: &egui::Shape, clip: egui::Rect, out: &mut Vec<(String, bool)>) {
            match shape {
                egui::Shape::Text(text) => {
                    let rect = text.visual_bounding_rect();
                    out.push((text.galley.text().to_string(), clip.expand(0.5).contains_rect(rect)));
                }
                egui::Shape::Vec(shapes) => shapes.iter().for_each(|s| collect(s, clip, out)),
                _ => {}
            }
        }
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(self.size.0, self.size.1));
        let mut out = Vec::new();
        if let Some(output) = &self.last {
            output.shapes.iter().for_each(|clipped| collect(&clipped.shape, clipped.clip_rect.intersect(screen), &mut out));
        }
        out
    }

    /// The largest extent of anything the last frame drew, in logical pixels: whether the
    /// page fits its window.
    pub fn drawn_extent(&self) -> (f32, f32) {
        let mut extent = (0.0f32, 0.0f32);
        if let Some(output) = &self.last {
            for clipped in &output.shapes {
                let rect = clipped.shape.visual_bounding_rect().intersect(clipped.clip_rect);
                if rect.is_positive() {
                    extent = (extent.0.max(rect.max.x), extent.1.max(rect.max.y));
                }
            }
        }
        extent
    }
}

//! The membrane view (onofrei2021 Fig. 6): the displacement as a grey-scale image inside the
//! circular mask, the bow as an orange square whose opacity follows the force, and the
//! tube's air column beside it.

use egui::{pos2, vec2, Align2, Color32, ColorImage, FontId, PointerButton, Rect, Sense, Stroke, StrokeKind, TextureHandle, TextureOptions};

use super::logic::{bow_opacity, grey_level};
use rosin_engine::controller::mapper::DRUM_MAX_FORCE_N;
use rosin_engine::view::snapshot::{MembraneView, VIEW_MEMBRANE_CELLS};

const BOW_COLOUR: Color32 = Color32::from_rgb(255, 140, 0);
const AIR_COLOUR: Color32 = Color32::from_rgb(120, 200, 255);

/// The pixels and texture of the image, kept between frames.
pub struct MembraneImage {
    pixels: Vec<u8>,
    texture: Option<TextureHandle>,
    peak_m: f32,
    tube_peak_m: f32,
}

impl Default for MembraneImage {
    fn default() -> Self {
        Self { pixels: vec![0; VIEW_MEMBRANE_CELLS * VIEW_MEMBRANE_CELLS], texture: None, peak_m: 1e-7, tube_peak_m: 1e-7 }
    }
}

impl MembraneImage {
    /// Drops the texture (its context is gone when the window closes).
    pub fn forget_texture(&mut self) {
        self.texture = None;
    }
}

/// What the mouse does on the membrane this frame.
pub enum MembraneMouse {
    None,
    /// Bowing at these fractions of the square.
    Bow(f64, f64),
    Lift,
}

pub fn show(ui: &mut egui::Ui, membrane: &MembraneView, image: &mut MembraneImage, label: &str) -> MembraneMouse {
    let available = ui.available_size();
    let side = (available.x - 140.0).min(available.y).max(120.0);
    let (response, painter) = ui.allocate_painter(available, Sense::click_and_drag());
    let square = Rect::from_min_size(response.rect.min + vec2(8.0, (available.y - side) * 0.5), vec2(side, side));
    painter.rect_filled(response.rect, 4.0, Color32::from_gray(18));

    let now = membrane.displacement_m.iter().filter(|v| v.is_finite()).fold(0.0f32, |m, v| m.max(v.abs()));
    image.peak_m = (image.peak_m * 0.97).max(now).max(1e-9);
    for (pixel, value) in image.pixels.iter_mut().zip(membrane.displacement_m.iter()) {
        *pixel = grey_level(*value, image.peak_m);
    }
    let picture = ColorImage::from_gray([VIEW_MEMBRANE_CELLS, VIEW_MEMBRANE_CELLS], &image.pixels);
    match image.texture.as_mut() {
        Some(texture) => texture.set(picture, TextureOptions::LINEAR),
        None => image.texture = Some(ui.ctx().load_texture("membrane", picture, TextureOptions::LINEAR)),
    }
    if let Some(texture) = &image.texture {
        painter.image(texture.id(), square, Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)), Color32::WHITE);
    }
    painter.circle_stroke(square.center(), side * 0.5, Stroke::new(1.5, Color32::from_gray(120)));
    let bow = pos2(square.left() + membrane.bow_x * side, square.top() + membrane.bow_y * side);
    let alpha = if membrane.sounding { bow_opacity(membrane.bow_force_n as f64, DRUM_MAX_FORCE_N) } else { 0.1 };
    let bow_rect = Rect::from_center_size(bow, vec2(14.0, 14.0));
    painter.rect_filled(bow_rect, 1.0, BOW_COLOUR.gamma_multiply(alpha));
    painter.rect_stroke(bow_rect, 1.0, Stroke::new(1.0, BOW_COLOUR), StrokeKind::Inside);
    painter.text(square.left_top() + vec2(4.0, 4.0), Align2::LEFT_TOP, label, FontId::proportional(12.0), Color32::from_gray(190));

    // The tube's air column: membrane end at the top, open end at the bottom.
    let tube = Rect::from_min_size(pos2(square.right() + 40.0, square.top()), vec2(60.0, side));
    painter.rect_stroke(tube, 2.0, Stroke::new(1.0, Color32::from_gray(100)), StrokeKind::Inside);
    let now = membrane.tube_displacement_m.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    image.tube_peak_m = (image.tube_peak_m * 0.97).max(now).max(1e-9);
    let n = membrane.tube_displacement_m.len();
    let points: Vec<_> = membrane
        .tube_displacement_m
        .iter()
        .enumerate()
        .map(|(i, u)| pos2(tube.center().x + 0.45 * tube.width() * u / image.tube_peak_m, tube.top() + tube.height() * i as f32 / (n - 1) as f32))
        .collect();
    painter.line(points, Stroke::new(2.0, AIR_COLOUR));
    painter.text(pos2(tube.center().x, tube.bottom() + 4.0), Align2::CENTER_TOP, "tube", FontId::proportional(12.0), Color32::from_gray(170));

    if let Some(pointer) = response.interact_pointer_pos() {
        if response.dragged_by(PointerButton::Primary) || response.drag_started_by(PointerButton::Primary) {
            let x = ((pointer.x - square.left()) / side) as f64;
            let y = ((pointer.y - square.top()) / side) as f64;
            return MembraneMouse::Bow(x.clamp(0.0, 1.0), y.clamp(0.0, 1.0));
        }
    }
    if response.drag_stopped_by(PointerButton::Primary) {
        return MembraneMouse::Lift;
    }
    MembraneMouse::None
}

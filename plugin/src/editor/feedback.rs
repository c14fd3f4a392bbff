//! The editor's feedback strip (issue 19): an output meter (RMS bar, peak tick, held peak,
//! a clip light that stays lit until clicked), the audio thread's CPU share, and each
//! sounding voice's note and bow state, from the snapshot's [`FeedbackView`].

use egui::{pos2, vec2, Color32, Rect, Sense, Stroke, StrokeKind};

use super::logic::{feedback_line, meter_fraction, MeterHold};
use rosin_engine::view::snapshot::FeedbackView;

const METER_COLOUR: Color32 = Color32::from_rgb(80, 200, 120);
const HOT_COLOUR: Color32 = Color32::from_rgb(240, 200, 60);
const CLIP_COLOUR: Color32 = Color32::from_rgb(230, 50, 50);

/// Draws the strip on one line.
pub fn show(ui: &mut egui::Ui, feedback: &FeedbackView, hold: &mut MeterHold, now_s: f64) {
    hold.update(&feedback.level, now_s);
    ui.horizontal(|ui| {
        let (response, painter) = ui.allocate_painter(vec2(160.0, 14.0), Sense::click());
        let rect = response.rect;
        painter.rect_filled(rect, 2.0, Color32::from_gray(30));
        let bar = |fraction: f32| Rect::from_min_max(rect.min, pos2(rect.left() + fraction * (rect.width() - 16.0), rect.bottom()));
        let rms = meter_fraction(feedback.level.rms);
        painter.rect_filled(bar(rms), 2.0, if rms > meter_fraction(0.5) { HOT_COLOUR } else { METER_COLOUR });
        let tick = |fraction: f32, colour: Color32| {
            let x = rect.left() + fraction * (rect.width() - 16.0);
            painter.line_segment([pos2(x, rect.top()), pos2(x, rect.bottom())], Stroke::new(2.0, colour));
        };
        tick(meter_fraction(feedback.level.peak), METER_COLOUR);
        tick(meter_fraction(hold.peak), Color32::WHITE);
        let light = Rect::from_min_size(pos2(rect.right() - 14.0, rect.top()), vec2(14.0, rect.height()));
        painter.rect_filled(light, 2.0, if hold.clipped { CLIP_COLOUR } else { Color32::from_gray(60) });
        painter.rect_stroke(rect, 2.0, Stroke::new(1.0, Color32::from_gray(90)), StrokeKind::Inside);
        let response = response.on_hover_text("Output level: RMS (bar), peak (tick) and held peak (white); the light turns red when the output reaches 0 dBFS and stays lit until clicked");
        if response.clicked() {
            hold.reset_clip();
        }
        let peak_db = 20.0 * hold.peak.max(1e-9).log10();
        ui.label(if hold.peak > 0.0 { format!("{peak_db:+.1} dBFS") } else { "-inf".into() });
        ui.separator();
        ui.label(feedback_line(feedback)).on_hover_text("The audio thread's share of its real-time budget, averaged over half a second, and each sounding voice's note and bow state");
    });
}

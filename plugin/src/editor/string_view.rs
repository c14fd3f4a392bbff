//! The string view (willemsen2019 Fig. 5): each sounding string as a curve, the bow as a
//! rectangle whose opacity follows the force, the stopping finger as a circle, fret lines
//! at the semitones; under the ribbon bow with torsion, the surface's twist as a second,
//! magenta curve on its own scale. With four pad lanes, rows 1 to 4 are the G, D, A and E strings.

use egui::{pos2, vec2, Align2, Color32, FontId, PointerButton, Rect, Sense, Stroke, StrokeKind};

use super::logic::{bow_opacity, fret_positions, string_label, MouseState};
use rosin_engine::controller::gesture::{PadLayout, LANES, LANE_OPEN_KEYS};
use rosin_engine::controller::mapper::STRING_MAX_FORCE_N;
use rosin_engine::view::snapshot::{StringView, ViewSnapshot, VIEW_STRINGS};

const STRING_COLOUR: Color32 = Color32::from_rgb(80, 220, 230);
const BOW_COLOUR: Color32 = Color32::from_rgb(240, 200, 60);
const TWIST_COLOUR: Color32 = Color32::from_rgb(230, 110, 200);

/// One drawn row: a string (or an idle pad lane) and which lane the mouse plays there.
struct Row<'a> {
    string: Option<&'a StringView>,
    label: String,
    mouse_lane: usize,
}

fn rows<'a>(snapshot: &'a ViewSnapshot, layout: PadLayout) -> Vec<Row<'a>> {
    let sounding: Vec<&StringView> = snapshot.strings.iter().filter(|s| s.sounding).collect();
    let mut rows = Vec::new();
    if layout == PadLayout::FourStrings {
        for (lane, key) in LANE_OPEN_KEYS.iter().enumerate() {
            let string = sounding.iter().copied().find(|s| s.pad_lane == Some(lane as u8));
            rows.push(Row { string, label: string_label(*key, Some(lane as u8)), mouse_lane: lane });
        }
        for s in sounding.iter().filter(|s| s.pad_lane.is_none()).take(VIEW_STRINGS - LANES) {
            rows.push(Row { string: Some(s), label: string_label(s.key, None), mouse_lane: 0 });
        }
    } else {
        for s in &sounding {
            rows.push(Row { string: Some(s), label: string_label(s.key, s.pad_lane), mouse_lane: 0 });
        }
        if rows.is_empty() {
            rows.push(Row { string: None, label: format!("{} (drag to bow)", string_label(LANE_OPEN_KEYS[0], Some(0))), mouse_lane: 0 });
        }
    }
    rows
}

/// Draws the view and turns the mouse into `mouse` changes. Returns whether the mouse
/// state changed.
pub fn show(ui: &mut egui::Ui, snapshot: &ViewSnapshot, layout: PadLayout, mouse: &mut MouseState, peaks: &mut [f32; VIEW_STRINGS]) -> bool {
    let size = ui.available_size();
    let (response, painter) = ui.allocate_painter(size, Sense::click_and_drag());
    let rect = response.rect;
    painter.rect_filled(rect, 4.0, Color32::from_gray(18));
    let rows = rows(snapshot, layout);
    let row_height = rect.height() / rows.len().max(1) as f32;
    let margin = 24.0;
    let x_of = |along: f64, r: Rect| r.left() + margin + (r.width() - 2.0 * margin) * along as f32;
    let along_of = |x: f32, r: Rect| (((x - r.left() - margin) / (r.width() - 2.0 * margin)) as f64).clamp(0.0, 1.0);

    for (i, row) in rows.iter().enumerate() {
        let r = Rect::from_min_size(pos2(rect.left(), rect.top() + i as f32 * row_height), vec2(rect.width(), row_height));
        let mid = r.center().y;
        for fret in fret_positions() {
            let x = x_of(fret, r);
            painter.line_segment([pos2(x, r.top() + 6.0), pos2(x, r.bottom() - 6.0)], Stroke::new(1.0, Color32::from_gray(60)));
        }
        painter.line_segment([pos2(x_of(0.0, r), r.top() + 4.0), pos2(x_of(0.0, r), r.bottom() - 4.0)], Stroke::new(3.0, Color32::from_gray(140)));
        painter.line_segment([pos2(x_of(1.0, r), r.top() + 4.0), pos2(x_of(1.0, r), r.bottom() - 4.0)], Stroke::new(3.0, Color32::from_gray(140)));
        painter.text(pos2(r.left() + 6.0, r.top() + 4.0), Align2::LEFT_TOP, &row.label, FontId::proportional(12.0), Color32::from_gray(170));
        let Some(string) = row.string else {
            painter.line_segment([pos2(x_of(0.0, r), mid), pos2(x_of(1.0, r), mid)], Stroke::new(2.0, STRING_COLOUR.gamma_multiply(0.5)));
            continue;
        };
        // A slowly falling peak keeps the drawing steady while the level moves.
        let peak = &mut peaks[i.min(VIEW_STRINGS - 1)];
        let now = string.displacement_m.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        *peak = (*peak * 0.97).max(now).max(1e-7);
        let scale = 0.4 * row_height / *peak;
        let n = string.displacement_m.len();
        let points: Vec<_> = string.displacement_m.iter().enumerate().map(|(j, u)| pos2(x_of(j as f64 / (n - 1) as f64, r), mid - u * scale)).collect();
        painter.line(points, Stroke::new(2.0, STRING_COLOUR));
        if string.twisting {
            // The ribbon bow's torsion: the surface's twist, on a scale of its own (it is
            // tens of times smaller than the string's displacement), named with its factor.
            let twist_peak = string.twist_m.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(1e-12);
            let twist_scale = 0.25 * row_height / twist_peak;
            let twist: Vec<_> = string.twist_m.iter().enumerate().map(|(j, w)| pos2(x_of(j as f64 / (n - 1) as f64, r), mid - w * twist_scale)).collect();
            painter.line(twist, Stroke::new(1.5, TWIST_COLOUR));
            let label = format!("twist (surface, x{:.0})", twist_scale / scale);
            painter.text(pos2(r.right() - 6.0, r.top() + 4.0), Align2::RIGHT_TOP, label, FontId::proportional(12.0), TWIST_COLOUR);
        }
        let bow_x = x_of(string.bow_from_nut as f64, r);
        let bow = Rect::from_center_size(pos2(bow_x, mid), vec2(10.0, row_height * 0.8));
        let alpha = if string.bowing { bow_opacity(string.bow_force_n as f64, STRING_MAX_FORCE_N) } else { 0.1 };
        painter.rect_filled(bow, 2.0, BOW_COLOUR.gamma_multiply(alpha));
        painter.rect_stroke(bow, 2.0, Stroke::new(1.0, BOW_COLOUR), StrokeKind::Inside);
        if let Some(finger) = string.finger_from_nut {
            painter.circle_filled(pos2(x_of(finger as f64, r), mid), 7.0, BOW_COLOUR);
        }
    }

    // The mouse: left drag bows the row's lane, right places its stopping finger.
    let before = *mouse;
    let row_at = |y: f32| (((y - rect.top()) / row_height).max(0.0) as usize).min(rows.len().saturating_sub(1));
    if let Some(pointer) = response.interact_pointer_pos() {
        let row = &rows[row_at(pointer.y)];
        let along = along_of(pointer.x, rect);
        if response.dragged_by(PointerButton::Primary) || response.drag_started_by(PointerButton::Primary) {
            let lane = match mouse.bowing {
                Some((lane, _, _)) => lane,
                None => row.mouse_lane,
            };
            mouse.bowing = Some((lane, along, pointer.y as f64));
        }
        if response.dragged_by(PointerButton::Secondary) || response.clicked_by(PointerButton::Secondary) || response.drag_started_by(PointerButton::Secondary) {
            mouse.place_finger(row.mouse_lane, along);
        }
    }
    if response.drag_stopped_by(PointerButton::Primary) || (!response.dragged_by(PointerButton::Primary) && mouse.bowing.is_some() && !ui.input(|i| i.pointer.primary_down())) {
        mouse.bowing = None;
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y) as f64;
        if scroll != 0.0 {
            mouse.scroll(scroll / 50.0);
        }
    }
    *mouse != before
}

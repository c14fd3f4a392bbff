//! The live lab view (issue 17): for the loudest sounding voice, the friction force against
//! the relative velocity the law sees over the last few periods (the hysteresis loop, cyan)
//! over the law's steady curve (orange); under it a stick/slip strip (green while the
//! contact sticks, red while it slips) and the velocity of the string or membrane under the
//! bow against the bow's own (yellow line). The data come from the audio thread's
//! recording ([`rosin_engine::view::lab`]) in each snapshot.
//!
//! Its second page sweeps a Guettler diagram of the note ([`rosin_engine::guettler`]) in a
//! background thread, with a progress bar, and marks where the current bow settings sit.

use egui::{pos2, Align2, Color32, FontId, Rect, Sense, Shape, Stroke};

use super::logic::{lab_axes, lab_steady_curve, lab_window, log_axis_position, note_name, GuettlerJob, GUETTLER_CELLS, LAB_PERIODS};
use rosin_engine::controls::Controls;
use rosin_engine::guettler::GuettlerPlan;
use rosin_engine::view::lab::stick_slip;
use rosin_engine::view::snapshot::LabView;

const LOOP_COLOUR: Color32 = Color32::from_rgb(80, 220, 230);
const CURVE_COLOUR: Color32 = Color32::from_rgb(255, 150, 40);
const BOW_COLOUR: Color32 = Color32::from_rgb(240, 200, 60);
const STICK_COLOUR: Color32 = Color32::from_rgb(60, 170, 90);
const SLIP_COLOUR: Color32 = Color32::from_rgb(200, 60, 60);
const AXIS_COLOUR: Color32 = Color32::from_gray(90);
const TEXT_COLOUR: Color32 = Color32::from_gray(180);

/// Maps a value range onto a pixel range.
fn scale(value: f64, (lo, hi): (f64, f64), (from, to): (f32, f32)) -> f32 {
    from + (to - from) * ((value - lo) / (hi - lo)) as f32
}

pub fn show(ui: &mut egui::Ui, lab: &LabView, sticking: &mut Vec<bool>) {
    let size = ui.available_size();
    let (response, painter) = ui.allocate_painter(size, Sense::hover());
    let rect = response.rect;
    painter.rect_filled(rect, 4.0, Color32::from_gray(18));
    let font = FontId::proportional(12.0);
    if !lab.sounding || lab.samples < 2 {
        painter.text(rect.center(), Align2::CENTER_CENTER, "Play a note: the loudest voice's bow contact is drawn here", font, TEXT_COLOUR);
        return;
    }
    let window = lab_window(lab);
    let ((v_lo, v_hi), (f_lo, f_hi)) = lab_axes(lab, window.clone());
    let title = format!(
        "{} {}: {}, fN {:.2} N, vB {:+.3} m/s; last {:.0} periods",
        if lab.drum { "drum" } else { "string" },
        note_name(lab.key),
        lab.model.name(),
        lab.normal_force_n,
        lab.bow_velocity_mps,
        LAB_PERIODS.min((window.len() as f64) * rosin_physics::string::tuning::midi_key_to_hz(lab.key as f64) / lab.sample_rate_hz as f64).floor()
    );
    painter.text(pos2(rect.left() + 8.0, rect.top() + 6.0), Align2::LEFT_TOP, title, font.clone(), TEXT_COLOUR);

    // The loop, over the steady curve.
    let plot = Rect::from_min_max(pos2(rect.left() + 56.0, rect.top() + 26.0), pos2(rect.right() - 12.0, rect.top() + 0.62 * rect.height()));
    let x_of = |v: f64| scale(v, (v_lo, v_hi), (plot.left(), plot.right()));
    let y_of = |f: f64| scale(f, (f_lo, f_hi), (plot.bottom(), plot.top()));
    painter.rect_stroke(plot, 0.0, Stroke::new(1.0, AXIS_COLOUR), egui::StrokeKind::Inside);
    if v_lo < 0.0 && v_hi > 0.0 {
        painter.line_segment([pos2(x_of(0.0), plot.top()), pos2(x_of(0.0), plot.bottom())], Stroke::new(1.0, AXIS_COLOUR));
    }
    if f_lo < 0.0 && f_hi > 0.0 {
        painter.line_segment([pos2(plot.left(), y_of(0.0)), pos2(plot.right(), y_of(0.0))], Stroke::new(1.0, AXIS_COLOUR));
    }
    painter.text(pos2(plot.right(), plot.bottom() + 2.0), Align2::RIGHT_TOP, format!("relative velocity {v_lo:+.3} .. {v_hi:+.3} m/s"), font.clone(), TEXT_COLOUR);
    painter.text(pos2(plot.left() - 4.0, plot.top()), Align2::RIGHT_TOP, format!("{f_hi:+.2} N"), font.clone(), TEXT_COLOUR);
    painter.text(pos2(plot.left() - 4.0, plot.bottom()), Align2::RIGHT_BOTTOM, format!("{f_lo:+.2} N"), font.clone(), TEXT_COLOUR);
    // The steady curve, each side of the static band drawn apart.
    let curve = lab_steady_curve(lab, (v_lo, v_hi), 256);
    for side in [curve.iter().filter(|(v, _)| *v < 0.0).collect::<Vec<_>>(), curve.iter().filter(|(v, _)| *v > 0.0).collect()] {
        let points: Vec<_> = side.iter().map(|(v, f)| pos2(x_of(*v), y_of(*f))).collect();
        painter.add(Shape::line(points, Stroke::new(1.5, CURVE_COLOUR)));
    }
    let points: Vec<_> = window.clone().map(|i| pos2(x_of(lab.law_velocity_mps[i] as f64), y_of(lab.force_n[i] as f64))).collect();
    painter.add(Shape::line(points, Stroke::new(1.2, LOOP_COLOUR)));

    // The stick/slip strip.
    let strip = Rect::from_min_max(pos2(plot.left(), plot.bottom() + 34.0), pos2(plot.right(), plot.bottom() + 48.0));
    sticking.resize(window.len(), false);
    stick_slip(&lab.law_velocity_mps[window.clone()], lab.bow_velocity_mps as f64, sticking);
    let t_of = |k: usize| scale(k as f64, (0.0, window.len().max(2) as f64 - 1.0), (strip.left(), strip.right()));
    let mut start = 0;
    for k in 1..=sticking.len() {
        if k == sticking.len() || sticking[k] != sticking[start] {
            let colour = if sticking[start] { STICK_COLOUR } else { SLIP_COLOUR };
            painter.rect_filled(Rect::from_min_max(pos2(t_of(start), strip.top()), pos2(t_of(k.min(sticking.len() - 1)).max(t_of(start) + 1.0), strip.bottom())), 0.0, colour);
            start = k;
        }
    }
    painter.text(pos2(plot.left(), strip.top() - 2.0), Align2::LEFT_BOTTOM, "stick (green) / slip (red)", font.clone(), TEXT_COLOUR);

    // The bow point's velocity against the bow's.
    let trace = Rect::from_min_max(pos2(plot.left(), strip.bottom() + 10.0), pos2(plot.right(), rect.bottom() - 22.0));
    painter.rect_stroke(trace, 0.0, Stroke::new(1.0, AXIS_COLOUR), egui::StrokeKind::Inside);
    let velocities = &lab.bow_point_velocity_mps[window.clone()];
    let (lo, hi) = velocities.iter().fold((lab.bow_velocity_mps.min(0.0) as f64, lab.bow_velocity_mps.max(0.0) as f64), |(lo, hi), &v| (lo.min(v as f64), hi.max(v as f64)));
    let range = (lo - 0.05 * (hi - lo).max(1e-6), hi + 0.05 * (hi - lo).max(1e-6));
    let y_v = |v: f64| scale(v, range, (trace.bottom(), trace.top()));
    let x_t = |k: usize| scale(k as f64, (0.0, velocities.len().max(2) as f64 - 1.0), (trace.left(), trace.right()));
    painter.line_segment([pos2(trace.left(), y_v(lab.bow_velocity_mps as f64)), pos2(trace.right(), y_v(lab.bow_velocity_mps as f64))], Stroke::new(1.0, BOW_COLOUR));
    let points: Vec<_> = velocities.iter().enumerate().map(|(k, v)| pos2(x_t(k), y_v(*v as f64))).collect();
    painter.add(Shape::line(points, Stroke::new(1.2, LOOP_COLOUR)));
    painter.text(pos2(trace.left() + 4.0, trace.top() + 2.0), Align2::LEFT_TOP, "velocity under the bow (cyan), the bow's (yellow)", font.clone(), TEXT_COLOUR);
    painter.text(pos2(trace.right(), trace.bottom() + 2.0), Align2::RIGHT_TOP, format!("{:.1} ms, {:+.3} .. {:+.3} m/s", 1e3 * window.len() as f64 / lab.sample_rate_hz as f64, range.0, range.1), font, TEXT_COLOUR);
}

/// The colour of a Guettler cell: green for a quick start (within
/// [`rosin_engine::guettler::GUETTLER_RUN_S`]'s first tenth), through yellow to orange for a
/// slow one, dark red where Helmholtz motion never came, grey while unplayed.
fn transient_colour(cell: Option<Option<f64>>) -> Color32 {
    match cell {
        None => Color32::from_gray(45),
        Some(None) => Color32::from_rgb(110, 25, 25),
        Some(Some(t)) => {
            let slow = (t / (0.6 * rosin_engine::guettler::GUETTLER_RUN_S)).clamp(0.0, 1.0) as f32;
            Color32::from_rgb((60.0 + 195.0 * slow) as u8, (200.0 - 80.0 * slow) as u8, 60)
        }
    }
}

/// The Guettler page: a button that sweeps the diagram of `key` with `controls` in the
/// background, its progress, and the diagram with the current settings marked.
pub fn show_guettler(ui: &mut egui::Ui, job: &mut Option<GuettlerJob>, key: u8, controls: &Controls, sample_rate_hz: f64) {
    // The screenshot script opens this page with a sweep under way.
    if job.is_none() && std::env::var("ROSIN_EDITOR_VIEW").as_deref() == Ok("guettler") {
        *job = Some(GuettlerJob::start(GuettlerPlan::around(key, controls, sample_rate_hz, GUETTLER_CELLS)));
    }
    let running = job.as_ref().is_some_and(|j| !j.is_finished());
    ui.horizontal(|ui| {
        let label = format!("Sweep {} ({}), {GUETTLER_CELLS} x {GUETTLER_CELLS}", note_name(key), rosin_physics::bow::contact::FrictionModel::from_index(controls.friction_model.round().max(0.0) as usize).name());
        if ui.add_enabled(!running, egui::Button::new(label)).on_hover_text("Plays the note from rest at each bow force and attack acceleration around the current ones, in a background thread, and maps how long Helmholtz motion takes to start").clicked() {
            *job = Some(GuettlerJob::start(GuettlerPlan::around(key, controls, sample_rate_hz, GUETTLER_CELLS)));
        }
        if running && ui.button("Cancel").clicked() {
            if let Some(j) = job.as_ref() {
                j.cancel();
            }
        }
        if let Some(j) = job.as_ref() {
            let (done, total) = j.progress();
            ui.add(egui::ProgressBar::new(done as f32 / total.max(1) as f32).text(format!("{done} / {total} cells")).desired_width(200.0));
        }
    });
    let size = ui.available_size();
    let (response, painter) = ui.allocate_painter(size, Sense::hover());
    let rect = response.rect;
    painter.rect_filled(rect, 4.0, Color32::from_gray(18));
    let font = FontId::proportional(12.0);
    let Some(j) = job.as_ref() else {
        painter.text(rect.center(), Align2::CENTER_CENTER, "A Guettler diagram: how long the bow takes to set up Helmholtz motion,\nover bow force and the attack's acceleration, for the note and settings of the moment", font, TEXT_COLOUR);
        return;
    };
    let plan = j.plan();
    let results = j.results();
    let (rows, columns) = (plan.forces_n.len(), plan.accelerations_mps2.len());
    let side = (rect.width() - 90.0).min(rect.height() - 60.0).max(40.0);
    let grid = Rect::from_min_size(pos2(rect.left() + 70.0, rect.top() + 12.0), egui::vec2(side, side));
    let (cell_w, cell_h) = (side / columns as f32, side / rows as f32);
    for (index, cell) in results.iter().enumerate() {
        let (row, column) = (index / columns, index % columns);
        // The lowest force at the bottom.
        let min = pos2(grid.left() + column as f32 * cell_w, grid.bottom() - (row + 1) as f32 * cell_h);
        painter.rect_filled(Rect::from_min_size(min, egui::vec2(cell_w - 1.0, cell_h - 1.0)), 0.0, transient_colour(*cell));
    }
    // The current settings (they may have moved since the sweep).
    let (force, acceleration) = (controls.bow_force_n, rosin_engine::guettler::attack_acceleration_mps2(controls));
    let x = grid.left() + (log_axis_position(&plan.accelerations_mps2, acceleration) as f32 + 0.5) * cell_w;
    let y = grid.bottom() - (log_axis_position(&plan.forces_n, force) as f32 + 0.5) * cell_h;
    painter.circle_stroke(pos2(x.clamp(grid.left(), grid.right()), y.clamp(grid.top(), grid.bottom())), 0.3 * cell_w.min(cell_h), Stroke::new(2.0, Color32::WHITE));
    let first = |axis: &[f64]| axis.first().copied().unwrap_or(0.0);
    let last = |axis: &[f64]| axis.last().copied().unwrap_or(0.0);
    painter.text(pos2(grid.left() - 4.0, grid.top()), Align2::RIGHT_TOP, format!("{:.2} N", last(&plan.forces_n)), font.clone(), TEXT_COLOUR);
    painter.text(pos2(grid.left() - 4.0, grid.bottom()), Align2::RIGHT_BOTTOM, format!("{:.2} N", first(&plan.forces_n)), font.clone(), TEXT_COLOUR);
    painter.text(pos2(grid.left() - 4.0, grid.center().y), Align2::RIGHT_CENTER, "bow force\n(log)", font.clone(), TEXT_COLOUR);
    painter.text(pos2(grid.left(), grid.bottom() + 4.0), Align2::LEFT_TOP, format!("{:.3} m/s²", first(&plan.accelerations_mps2)), font.clone(), TEXT_COLOUR);
    painter.text(pos2(grid.right(), grid.bottom() + 4.0), Align2::RIGHT_TOP, format!("{:.3} m/s²", last(&plan.accelerations_mps2)), font.clone(), TEXT_COLOUR);
    painter.text(pos2(grid.center().x, grid.bottom() + 4.0), Align2::CENTER_TOP, "attack acceleration (log)", font.clone(), TEXT_COLOUR);
    painter.text(
        pos2(grid.left(), grid.bottom() + 22.0),
        Align2::LEFT_TOP,
        "green: Helmholtz motion at once, to orange: after 300 ms or more;\ndark red: not within 0.5 s; white ring: the current settings",
        font,
        TEXT_COLOUR,
    );
}

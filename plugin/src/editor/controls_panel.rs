//! The preset menu (the factory presets and the player's own, saved as files through
//! [`rosin_engine::user_presets`]), then every parameter as a slider, in the groups of
//! [`CONTROL_GROUPS`], with its unit.

use nice_plug::prelude::ParamSetter;
use nice_plug_egui::widgets::ParamSlider;

use super::logic::CONTROL_GROUPS;
use rosin_engine::controls;
use crate::params::{ParamRef, RosinParams};
use rosin_engine::presets::{Preset, PRESETS};
use rosin_engine::user_presets;

/// Sets every control to the preset's value, each as one host gesture, so the host records
/// the change (and can undo it).
pub fn apply_preset(preset: &Preset, params: &RosinParams, setter: &ParamSetter) {
    apply_values(|spec| preset.value(spec), params, setter);
}

/// Sets every control to `value(spec)`, each as one host gesture.
fn apply_values(value: impl Fn(&controls::ControlSpec) -> f64, params: &RosinParams, setter: &ParamSetter) {
    for spec in controls::ALL {
        let value = value(spec);
        match params.param_ref(spec.id) {
            Some(ParamRef::Float(p)) => {
                setter.begin_set_parameter(p);
                setter.set_parameter(p, value as f32);
                setter.end_set_parameter(p);
            }
            Some(ParamRef::Int(p)) => {
                setter.begin_set_parameter(p);
                setter.set_parameter(p, value.round() as i32);
                setter.end_set_parameter(p);
            }
            None => {}
        }
    }
}

/// The menu's memory between frames: the preset last chosen, the player's presets on disk
/// (listed again at most once a second), the name typed for saving, and the last outcome.
#[derive(Clone, Default)]
struct PresetMenuState {
    chosen: Option<String>,
    user_presets: Vec<(String, std::path::PathBuf)>,
    listed_at_s: Option<f64>,
    save_name: String,
    status: Option<(bool, String)>,
}

fn preset_menu(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter) {
    let id = ui.scope_id().with("rosin_preset");
    let mut menu: PresetMenuState = ui.data(|d| d.get_temp(id)).unwrap_or_default();
    let now_s = ui.input(|i| i.time);
    let directory = user_presets::directory();
    if menu.listed_at_s.is_none_or(|t| now_s - t > 1.0) {
        menu.user_presets = directory.as_deref().map(user_presets::list).unwrap_or_default();
        menu.listed_at_s = Some(now_s);
    }
    ui.horizontal(|ui| {
        ui.label("Preset");
        egui::ComboBox::from_id_salt("preset").selected_text(menu.chosen.clone().unwrap_or_else(|| "-".into())).width(190.0).show_ui(ui, |ui| {
            let mut category = "";
            for preset in PRESETS {
                if preset.category != category {
                    category = preset.category;
                    ui.label(egui::RichText::new(category).small().weak());
                }
                if ui.selectable_label(menu.chosen.as_deref() == Some(preset.name), preset.name).on_hover_text(preset.description).clicked() {
                    apply_preset(preset, params, setter);
                    menu.chosen = Some(preset.name.to_string());
                    menu.status = None;
                }
            }
            if !menu.user_presets.is_empty() {
                ui.label(egui::RichText::new("Yours").small().weak());
            }
            for (name, path) in menu.user_presets.clone() {
                if ui.selectable_label(menu.chosen.as_deref() == Some(name.as_str()), &name).on_hover_text(path.display().to_string()).clicked() {
                    match user_presets::load(&path) {
                        Ok(preset) => {
                            apply_values(|spec| preset.value(spec), params, setter);
                            menu.status = (!preset.unknown_ids.is_empty()).then(|| (true, format!("Loaded; skipped unknown {}", preset.unknown_ids.join(", "))));
                            menu.save_name = name.clone();
                            menu.chosen = Some(name);
                        }
                        Err(error) => menu.status = Some((false, format!("Not loaded: {error}"))),
                    }
                }
            }
        });
    });
    ui.horizontal(|ui| {
        ui.label("Save as");
        ui.add(egui::TextEdit::singleline(&mut menu.save_name).hint_text("preset name").desired_width(130.0));
        if ui.button("Save").on_hover_text(directory.as_ref().map_or_else(|| "no preset folder".to_string(), |d| d.display().to_string())).clicked() {
            let result = directory.as_deref().ok_or(user_presets::PresetFileError::NoDirectory).and_then(|dir| user_presets::save(dir, menu.save_name.trim(), &params.controls()));
            menu.status = Some(match result {
                Ok(path) => {
                    menu.chosen = Some(menu.save_name.trim().to_string());
                    menu.listed_at_s = None;
                    (true, format!("Saved {}", path.display()))
                }
                Err(error) => (false, format!("Not saved: {error}")),
            });
        }
    });
    if let Some((ok, text)) = &menu.status {
        let colour = if *ok { ui.visuals().weak_text_color() } else { ui.visuals().error_fg_color };
        ui.label(egui::RichText::new(text).small().color(colour));
    }
    ui.data_mut(|d| d.insert_temp(id, menu));
}

/// The note about the last state loaded (a project from a newer Rosin), until dismissed.
fn state_notice(ui: &mut egui::Ui, params: &RosinParams) {
    let notice = params.state_notice.read().map(|n| n.clone()).unwrap_or_default();
    if notice.is_empty() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.colored_label(egui::Color32::from_rgb(230, 180, 60), notice);
        if ui.small_button("Dismiss").clicked() {
            if let Ok(mut n) = params.state_notice.write() {
                n.clear();
            }
        }
    });
}

pub fn show(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter) {
    state_notice(ui, params);
    preset_menu(ui, params, setter);
    egui::ScrollArea::vertical().id_salt("controls").show(ui, |ui| {
        for (group, ids) in CONTROL_GROUPS {
            egui::CollapsingHeader::new(*group).default_open(true).show(ui, |ui| {
                egui::Grid::new(*group).num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
                    for id in *ids {
                        let (Some(spec), Some(param)) = (controls::find(id), params.param_ref(id)) else { continue };
                        let tip = tooltip(spec);
                        ui.label(spec.name).on_hover_text(&tip);
                        match param {
                            ParamRef::Float(p) => ui.add(ParamSlider::for_param(p, setter).with_width(150.0)),
                            ParamRef::Int(p) => ui.add(ParamSlider::for_param(p, setter).with_width(150.0)),
                        }
                        .on_hover_text(&tip);
                        ui.end_row();
                    }
                });
            });
        }
    });
}

/// A control's tooltip: what it does (the sentence the user guide's parameter table has,
/// from the same [`controls::DESCRIPTIONS`], without the Markdown), its range and unit, and
/// its ID.
pub fn tooltip(spec: &controls::ControlSpec) -> String {
    let what = spec.description().replace(['`', '*'], "");
    let range = match spec.taper {
        controls::Taper::Choice(choices) => choices.join(" / "),
        _ => format!("{} to {}{}", spec.min, spec.max, spec.unit),
    };
    format!("{what}.\n{range}. ID {}", spec.id)
}

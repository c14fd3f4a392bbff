//! The factory-preset menu, then every parameter as a slider, in the groups of
//! [`CONTROL_GROUPS`], with its unit.

use nice_plug::prelude::ParamSetter;
use nice_plug_egui::widgets::ParamSlider;

use super::logic::CONTROL_GROUPS;
use rosin_engine::controls;
use crate::params::{ParamRef, RosinParams};
use rosin_engine::presets::{Preset, PRESETS};

/// Sets every control to the preset's value, each as one host gesture, so the host records
/// the change (and can undo it).
pub fn apply_preset(preset: &Preset, params: &RosinParams, setter: &ParamSetter) {
    for spec in controls::ALL {
        let value = preset.value(spec);
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

fn preset_menu(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter) {
    let id = ui.scope_id().with("rosin_preset");
    let mut chosen: Option<&'static str> = ui.data(|d| d.get_temp(id));
    ui.horizontal(|ui| {
        ui.label("Preset");
        egui::ComboBox::from_id_salt("preset").selected_text(chosen.unwrap_or("-")).width(190.0).show_ui(ui, |ui| {
            let mut category = "";
            for preset in PRESETS {
                if preset.category != category {
                    category = preset.category;
                    ui.label(egui::RichText::new(category).small().weak());
                }
                if ui.selectable_label(chosen == Some(preset.name), preset.name).on_hover_text(preset.description).clicked() {
                    apply_preset(preset, params, setter);
                    chosen = Some(preset.name);
                }
            }
        });
    });
    ui.data_mut(|d| d.insert_temp(id, chosen));
}

pub fn show(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter) {
    preset_menu(ui, params, setter);
    egui::ScrollArea::vertical().id_salt("controls").show(ui, |ui| {
        for (group, ids) in CONTROL_GROUPS {
            egui::CollapsingHeader::new(*group).default_open(true).show(ui, |ui| {
                egui::Grid::new(*group).num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
                    for id in *ids {
                        let (Some(spec), Some(param)) = (controls::find(id), params.param_ref(id)) else { continue };
                        ui.label(spec.name).on_hover_text(format!("ID {} ({})", spec.id, spec.unit.trim()));
                        match param {
                            ParamRef::Float(p) => ui.add(ParamSlider::for_param(p, setter).with_width(150.0)),
                            ParamRef::Int(p) => ui.add(ParamSlider::for_param(p, setter).with_width(150.0)),
                        };
                        ui.end_row();
                    }
                });
            });
        }
    });
}

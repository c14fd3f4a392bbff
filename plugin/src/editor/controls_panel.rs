//! Every parameter as a slider, in the groups of [`CONTROL_GROUPS`], with its unit.

use nice_plug::prelude::ParamSetter;
use nice_plug_egui::widgets::ParamSlider;

use super::logic::CONTROL_GROUPS;
use crate::controls;
use crate::params::{ParamRef, RosinParams};

pub fn show(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter) {
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

//! The preset bar (the preset's name, marked `*` once a control moves from it; previous and
//! next; a browser of the factory presets by category and the player's own, saved as files
//! through [`rosin_engine::user_presets`]), then every parameter as a slider, in the groups
//! of [`CONTROL_GROUPS`], with its unit.

use nice_plug::prelude::ParamSetter;
use nice_plug_egui::widgets::ParamSlider;

use super::logic::{differs_from, preset_step, CONTROL_GROUPS};
use rosin_engine::controls::Controls;
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
    // The machine's settings (the voices) stay where the player put them.
    for spec in controls::ALL.iter().filter(|spec| spec.in_presets()) {
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

/// The menu's memory between frames: the preset last chosen and its values (to tell when
/// the controls have moved from it), the player's presets on disk (listed again at most
/// once a second), the name typed for saving, and the last outcome.
#[derive(Clone, Default)]
struct PresetMenuState {
    chosen: Option<String>,
    reference: Option<Controls>,
    started: bool,
    user_presets: Vec<(String, std::path::PathBuf)>,
    listed_at_s: Option<f64>,
    save_name: String,
    status: Option<(bool, String)>,
}

/// One entry of the preset list: a factory preset, or one of the player's files.
#[derive(Clone)]
enum Entry {
    Factory(&'static Preset),
    User(String, std::path::PathBuf),
}

impl Entry {
    fn name(&self) -> &str {
        match self {
            Entry::Factory(p) => p.name,
            Entry::User(name, _) => name,
        }
    }
}

impl PresetMenuState {
    fn entries(&self) -> Vec<Entry> {
        PRESETS.iter().map(Entry::Factory).chain(self.user_presets.iter().map(|(n, p)| Entry::User(n.clone(), p.clone()))).collect()
    }

    /// Loads `entry` into the host's parameters (one gesture per control) and remembers it.
    fn load(&mut self, entry: &Entry, params: &RosinParams, setter: &ParamSetter) {
        match entry {
            Entry::Factory(preset) => {
                apply_preset(preset, params, setter);
                self.reference = Some(preset.controls());
                self.status = None;
            }
            Entry::User(name, path) => match user_presets::load(path) {
                Ok(preset) => {
                    apply_values(|spec| preset.value(spec), params, setter);
                    self.status = (!preset.unknown_ids.is_empty()).then(|| (true, format!("Loaded; skipped unknown {}", preset.unknown_ids.join(", "))));
                    self.save_name = name.clone();
                    self.reference = Some(preset.controls);
                }
                Err(error) => {
                    self.status = Some((false, format!("Not loaded: {error}")));
                    return;
                }
            },
        }
        self.chosen = Some(entry.name().to_string());
        if let Ok(mut n) = params.preset_name.write() {
            *n = entry.name().to_string();
        }
    }

    /// The chosen preset's values, found again by name (a project saved with a preset's
    /// name, or the first frame after the editor opens).
    fn find_reference(&mut self) {
        let Some(name) = self.chosen.clone() else { return };
        self.reference = match self.entries().into_iter().find(|e| e.name() == name) {
            Some(Entry::Factory(preset)) => Some(preset.controls()),
            Some(Entry::User(_, path)) => user_presets::load(&path).ok().map(|p| p.controls),
            None => None,
        };
    }
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
    if !menu.started {
        // The project's preset, by name.
        menu.started = true;
        let saved = params.preset_name.read().map(|n| n.clone()).unwrap_or_default();
        if !saved.is_empty() {
            menu.chosen = Some(saved);
            menu.find_reference();
        }
    }
    let entries = menu.entries();
    let current = menu.chosen.as_deref().and_then(|c| entries.iter().position(|e| e.name() == c));
    let modified = menu.reference.as_ref().is_some_and(|r| differs_from(r, &params.controls()));
    ui.horizontal(|ui| {
        let title = match &menu.chosen {
            Some(name) => format!("{name}{}", if modified { " *" } else { "" }),
            None => "No preset".into(),
        };
        ui.label(egui::RichText::new(title).heading()).on_hover_text(if modified { "The controls have moved from the preset (*)" } else { "The preset loaded" });
    });
    ui.horizontal(|ui| {
        let mut step = 0;
        if ui.button("< Prev").on_hover_text("The previous preset").clicked() {
            step = -1;
        }
        if ui.button("Next >").on_hover_text("The next preset").clicked() {
            step = 1;
        }
        if step != 0 {
            if let Some(i) = preset_step(entries.len(), current, step) {
                menu.load(&entries[i], params, setter);
            }
        }
        egui::ComboBox::from_id_salt("preset").selected_text("Browse").width(150.0).show_ui(ui, |ui| {
            let mut category = "";
            for entry in &entries {
                let heading = match entry {
                    Entry::Factory(p) => p.category,
                    Entry::User(..) => "Yours",
                };
                if heading != category {
                    category = heading;
                    ui.label(egui::RichText::new(category).small().weak());
                }
                let hover = match entry {
                    Entry::Factory(p) => p.description.to_string(),
                    Entry::User(_, path) => path.display().to_string(),
                };
                if ui.selectable_label(menu.chosen.as_deref() == Some(entry.name()), entry.name()).on_hover_text(hover).clicked() {
                    menu.load(entry, params, setter);
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
                    let name = menu.save_name.trim().to_string();
                    if let Ok(mut n) = params.preset_name.write() {
                        *n = name.clone();
                    }
                    menu.chosen = Some(name);
                    menu.reference = Some(params.controls());
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

/// The preset bar and every control not on the performance strip (`shown_elsewhere`), in
/// collapsible groups, closed at first unless `open`.
pub fn show(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter, shown_elsewhere: &[&str], open: bool) {
    state_notice(ui, params);
    preset_menu(ui, params, setter);
    egui::ScrollArea::vertical().id_salt("controls").show(ui, |ui| {
        for (group, ids) in CONTROL_GROUPS {
            let ids: Vec<&str> = ids.iter().copied().filter(|id| !shown_elsewhere.contains(id)).collect();
            if ids.is_empty() {
                continue;
            }
            egui::CollapsingHeader::new(*group).default_open(open).show(ui, |ui| {
                egui::Grid::new(*group).num_columns(2).spacing([8.0, 4.0]).show(ui, |ui| {
                    for id in ids {
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

/// The performance strip: the controls of `ids` as large labelled sliders with their
/// values and units, three to a row.
pub fn performance_strip(ui: &mut egui::Ui, params: &RosinParams, setter: &ParamSetter, ids: &[&str]) {
    // Each cell holds its slider and the value box beside it (about 90 px). Three to a row,
    // or two in a small window, so that a slider stays long enough to play.
    let cell_width = |columns: usize| ((ui.available_width() - 16.0 * columns as f32) / columns as f32).max(120.0);
    let columns = if cell_width(3) >= 210.0 { 3 } else { 2 };
    let cell = cell_width(columns);
    let slider = (cell - 95.0).max(40.0);
    egui::Grid::new("performance").num_columns(columns).spacing([16.0, 6.0]).show(ui, |ui| {
        for (i, id) in ids.iter().enumerate() {
            let (Some(spec), Some(param)) = (controls::find(id), params.param_ref(id)) else { continue };
            let tip = tooltip(spec);
            ui.vertical(|ui| {
                ui.set_width(cell);
                ui.label(egui::RichText::new(spec.name).strong().size(15.0)).on_hover_text(&tip);
                ui.spacing_mut().interact_size.y = 24.0;
                match param {
                    ParamRef::Float(p) => ui.add(ParamSlider::for_param(p, setter).with_width(slider)),
                    ParamRef::Int(p) => ui.add(ParamSlider::for_param(p, setter).with_width(slider)),
                }
                .on_hover_text(&tip);
            });
            if i % columns == columns - 1 {
                ui.end_row();
            }
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

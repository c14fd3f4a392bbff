//! A player's own presets, as files. The editor saves the current controls under a name and
//! lists the saved ones beside the factory presets; a file can be shared, hand-edited, or
//! kept across Rosin versions.
//!
//! A preset file (`NAME.rosinpreset`) is UTF-8 text: a header line, then one control a line
//! as `ID = plain value`, with `#` comments and blank lines ignored:
//!
//! ```text
//! # Rosin preset 1
//! bow_force = 0.6
//! string_set = 2
//! ```
//!
//! Reading is forgiving where nothing is lost and strict where something would be: a control
//! the file does not name takes its default (a file from an older Rosin loads as it
//! sounded), a value out of range is clamped, and an ID this Rosin does not know is skipped
//! and reported. A missing header, a line that is not `ID = number`, or a value that is not
//! finite makes the whole file an error, and nothing is applied.

use std::path::{Path, PathBuf};

use crate::controls::{self, ControlSpec, Controls};

/// The first line of every preset file.
pub const HEADER: &str = "# Rosin preset 1";
/// The file name extension, without its dot.
pub const EXTENSION: &str = "rosinpreset";
/// Longest accepted file, in bytes (a preset is about 1 kB).
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// A preset read from a file: every control's value, and what was skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct UserPreset {
    pub name: String,
    pub controls: Controls,
    /// IDs the file names that this Rosin does not know (from a newer version, or typos).
    pub unknown_ids: Vec<String>,
}

impl UserPreset {
    /// The preset's plain value for `spec`.
    pub fn value(&self, spec: &ControlSpec) -> f64 {
        self.controls.get(spec.id).unwrap_or(spec.default)
    }
}

/// Why a preset could not be saved or read.
#[derive(Debug)]
pub enum PresetFileError {
    Io { path: PathBuf, error: std::io::Error },
    TooLarge { path: PathBuf, bytes: u64 },
    NotAPreset,
    BadLine { line: usize, text: String },
    BadValue { line: usize, id: String, text: String },
    BadName(String),
    NoDirectory,
}

impl std::fmt::Display for PresetFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, error } => write!(f, "{}: {error}", path.display()),
            Self::TooLarge { path, bytes } => write!(f, "{} is {bytes} bytes, too large for a preset", path.display()),
            Self::NotAPreset => write!(f, "not a Rosin preset (the first line is not '{HEADER}')"),
            Self::BadLine { line, text } => write!(f, "line {line}: '{text}' is not 'ID = value'"),
            Self::BadValue { line, id, text } => write!(f, "line {line}: {id} = '{text}' is not a finite number"),
            Self::BadName(name) => write!(f, "'{name}' cannot name a preset file (use letters, digits, spaces, '-' or '_')"),
            Self::NoDirectory => write!(f, "no folder for presets: set ROSIN_DATA_DIR or HOME"),
        }
    }
}

impl std::error::Error for PresetFileError {}

/// The text of a preset holding every control's value in `controls`.
pub fn to_text(controls: &Controls) -> String {
    let mut text = format!("{HEADER}\n");
    // The machine's settings (the voices) are not the preset's to hold.
    for spec in controls::ALL.iter().filter(|spec| spec.in_presets()) {
        let value = controls.get(spec.id).unwrap_or(spec.default);
        // `{:?}` writes the shortest text that reads back as the same f64.
        text.push_str(&format!("{} = {value:?}\n", spec.id));
    }
    text
}

/// Reads a preset's text.
pub fn parse(name: &str, text: &str) -> Result<UserPreset, PresetFileError> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim().trim_start_matches('\u{feff}') == HEADER => {}
        _ => return Err(PresetFileError::NotAPreset),
    }
    let mut values: Vec<(&'static ControlSpec, f64)> = Vec::new();
    let mut unknown_ids = Vec::new();
    for (index, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((id, value)) = line.split_once('=') else {
            return Err(PresetFileError::BadLine { line: index + 1, text: line.to_string() });
        };
        let (id, value) = (id.trim(), value.trim());
        let number: f64 = match value.parse() {
            Ok(v) if f64::is_finite(v) => v,
            _ => return Err(PresetFileError::BadValue { line: index + 1, id: id.to_string(), text: value.to_string() }),
        };
        match controls::find(id) {
            Some(spec) => values.push((spec, number)),
            None => unknown_ids.push(id.to_string()),
        }
    }
    let controls = Controls::from_lookup(|spec| values.iter().rev().find(|(s, _)| s.id == spec.id).map_or(spec.default, |(_, v)| spec.clamp(*v)));
    Ok(UserPreset { name: name.to_string(), controls, unknown_ids })
}

/// Rosin's data folder: `$ROSIN_DATA_DIR` when set; otherwise, on Linux,
/// `$XDG_DATA_HOME/Rosin` or `~/.local/share/Rosin`; on macOS
/// `~/Library/Application Support/Rosin`; on Windows `%APPDATA%\\Rosin`.
pub fn data_directory() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("ROSIN_DATA_DIR") {
        return Some(dir);
    }
    let base = if cfg!(target_os = "windows") {
        var("APPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local/share")))
    };
    base.map(|b| b.join("Rosin"))
}

/// The folder for a player's presets: `$ROSIN_PRESET_DIR` when set, otherwise `Presets` in
/// [`data_directory`].
pub fn directory() -> Option<PathBuf> {
    match std::env::var_os("ROSIN_PRESET_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => data_directory().map(|d| d.join("Presets")),
    }
}

/// The folder the factory presets are written to as files, for hosts' preset browsers
/// (CLAP preset discovery): `Factory Presets` in [`data_directory`].
pub fn factory_directory() -> Option<PathBuf> {
    data_directory().map(|d| d.join("Factory Presets"))
}

/// Writes every factory preset into `dir` as `NAME.rosinpreset`, where the file is missing
/// or says something else (an older Rosin's values), and leaves files that already match
/// alone. A player's own presets live elsewhere ([`directory`]), so nothing of theirs is
/// touched.
pub fn install_factory_presets(dir: &Path) -> Result<(), PresetFileError> {
    for preset in crate::presets::PRESETS {
        let path = path_for(dir, preset.name)?;
        let controls = preset.controls();
        let text = to_text(&controls);
        if std::fs::read_to_string(&path).is_ok_and(|on_disk| on_disk == text) {
            continue;
        }
        if let Err(error) = save(dir, preset.name, &controls) {
            // Another process may have written the same file at the same moment.
            if std::fs::read_to_string(&path).ok() != Some(text) {
                return Err(error);
            }
        }
    }
    Ok(())
}

/// Whether `name` can be a file name on every system Rosin runs on.
fn valid_name(name: &str) -> bool {
    let trimmed = name.trim();
    !trimmed.is_empty() && trimmed.len() <= 100 && trimmed == name && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '(' | ')' | '.')) && !name.starts_with('.')
}

/// The file a preset of this name is saved in.
pub fn path_for(dir: &Path, name: &str) -> Result<PathBuf, PresetFileError> {
    if !valid_name(name) {
        return Err(PresetFileError::BadName(name.to_string()));
    }
    Ok(dir.join(format!("{name}.{EXTENSION}")))
}

/// Saves `controls` as the preset `name` in `dir` (created if missing), replacing a preset
/// of that name. Writes a temporary file and renames it, so a crash never leaves half a file.
pub fn save(dir: &Path, name: &str, controls: &Controls) -> Result<PathBuf, PresetFileError> {
    let path = path_for(dir, name)?;
    let io = |path: &Path, error| PresetFileError::Io { path: path.to_path_buf(), error };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    // A temporary name of this process's and this call's own, so that two hosts scanning at
    // once never write into the same temporary file.
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temporary = dir.join(format!(".{name}.{EXTENSION}.{}-{call}.partial", std::process::id()));
    std::fs::write(&temporary, to_text(controls)).map_err(|e| io(&temporary, e))?;
    std::fs::rename(&temporary, &path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        io(&path, e)
    })?;
    Ok(path)
}

/// Reads the preset file at `path`; its name is the file's stem.
pub fn load(path: &Path) -> Result<UserPreset, PresetFileError> {
    let io = |error| PresetFileError::Io { path: path.to_path_buf(), error };
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    if bytes > MAX_FILE_BYTES {
        return Err(PresetFileError::TooLarge { path: path.to_path_buf(), bytes });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let name = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    parse(&name, &text)
}

/// The presets in `dir`, by name, sorted (a missing folder has none).
pub fn list(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == EXTENSION) && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .filter_map(|p| Some((p.file_stem()?.to_string_lossy().into_owned(), p)))
        .collect();
    found.sort_by_key(|(name, _)| name.to_lowercase());
    found
}

//! Rosin's CLAP entry point. nice-plug's wrapper is the plugin; this module adds what the
//! framework's own entry does not offer:
//!
//! - a preset-discovery factory (`clap.preset-discovery-factory/2`) with one provider. It
//!   declares the `.rosinpreset` file type and two folders of such files:
//!   - the factory presets ([`rosin_engine::presets::PRESETS`]), written as files into
//!     [`user_presets::factory_directory`] when the provider starts (only where a file is
//!     missing or differs), flagged as factory content;
//!   - the player's own presets ([`user_presets::directory`], saved from the editor's
//!     menu), when that folder exists, flagged as user content.
//!
//!   Where the factory folder cannot be written, the factory presets are declared inside
//!   the plugin instead, as one container keyed by preset name. Files are the first choice
//!   because clap-validator 0.4.1 deadlocks on a container of more than one preset (its
//!   metadata receiver locks its result twice in `begin_preset`), and because a file is what
//!   every host's browser can show, tag and favourite.
//! - the plugin's preset-load extension (`clap.preset-load/2`): a host loads a preset file by
//!   its path, or a factory preset inside the plugin by its key (the preset's name). Either
//!   arrives as a saved state ([`rosin_engine::presets::state_json`]) through the wrapper's
//!   own state extension, which sets every control to the preset's value: the values the
//!   editor's menu sets.
//!
//! The plugin a host sees is nice-plug's `clap_plugin` with two of its functions replaced:
//! `get_extension` (to add preset loading) and `destroy` (to free this shell too). Every
//! other call goes straight to the wrapper, which finds itself through `plugin_data`.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::{Arc, OnceLock};

use clap_sys::entry::clap_plugin_entry;
use clap_sys::ext::preset_load::{clap_host_preset_load, clap_plugin_preset_load, CLAP_EXT_PRESET_LOAD, CLAP_EXT_PRESET_LOAD_COMPAT};
use clap_sys::ext::state::{clap_plugin_state, CLAP_EXT_STATE};
use clap_sys::factory::plugin_factory::{clap_plugin_factory, CLAP_PLUGIN_FACTORY_ID};
use clap_sys::factory::preset_discovery::*;
use clap_sys::host::clap_host;
use clap_sys::plugin::{clap_plugin, clap_plugin_descriptor};
use clap_sys::stream::clap_istream;
use clap_sys::universal_plugin_id::clap_universal_plugin_id;
use clap_sys::version::CLAP_VERSION;
use nice_plug::prelude::ClapPlugin;
use nice_plug::wrapper::clap::{PluginDescriptor, Wrapper};

use crate::plugin::Rosin;
use rosin_engine::controls::Controls;
use rosin_engine::presets::{self, PRESETS};
use rosin_engine::user_presets;

/// The provider's ID, and the location that holds the factory presets.
const PROVIDER_ID: &CStr = c"org.rosin.rosin.factory-presets";
const LOCATION_NAME: &CStr = c"Rosin factory presets";
const USER_LOCATION_NAME: &CStr = c"Your Rosin presets";

#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
#[used]
pub static clap_entry: clap_plugin_entry = clap_plugin_entry {
    clap_version: CLAP_VERSION,
    init: Some(entry_init),
    deinit: Some(entry_deinit),
    get_factory: Some(get_factory),
};

unsafe extern "C" fn entry_init(_plugin_path: *const c_char) -> bool {
    nice_plug::wrapper::setup_logger::<Rosin>();
    true
}

unsafe extern "C" fn entry_deinit() {}

unsafe extern "C" fn get_factory(factory_id: *const c_char) -> *const c_void {
    if factory_id.is_null() {
        return ptr::null();
    }
    let id = unsafe { CStr::from_ptr(factory_id) };
    if id == CLAP_PLUGIN_FACTORY_ID {
        &PLUGIN_FACTORY as *const clap_plugin_factory as *const c_void
    } else if id == CLAP_PRESET_DISCOVERY_FACTORY_ID || id == CLAP_PRESET_DISCOVERY_FACTORY_ID_COMPAT {
        &PRESET_DISCOVERY_FACTORY as *const clap_preset_discovery_factory as *const c_void
    } else {
        ptr::null()
    }
}

// ---- The plugin factory --------------------------------------------------------------------

static PLUGIN_FACTORY: clap_plugin_factory = clap_plugin_factory {
    get_plugin_count: Some(plugin_count),
    get_plugin_descriptor: Some(plugin_descriptor),
    create_plugin: Some(create_plugin),
};

fn descriptor() -> &'static PluginDescriptor {
    static DESCRIPTOR: OnceLock<PluginDescriptor> = OnceLock::new();
    DESCRIPTOR.get_or_init(PluginDescriptor::for_plugin::<Rosin>)
}

unsafe extern "C" fn plugin_count(_factory: *const clap_plugin_factory) -> u32 {
    1
}

unsafe extern "C" fn plugin_descriptor(_factory: *const clap_plugin_factory, index: u32) -> *const clap_plugin_descriptor {
    if index == 0 {
        descriptor().clap_plugin_descriptor()
    } else {
        ptr::null()
    }
}

/// The plugin the host holds: the wrapper's `clap_plugin` (first, so the host's pointer is
/// this struct's) and what the replaced functions need.
#[repr(C)]
struct Shell {
    plugin: clap_plugin,
    wrapper_get_extension: unsafe extern "C" fn(*const clap_plugin, *const c_char) -> *const c_void,
    wrapper_destroy: unsafe extern "C" fn(*const clap_plugin),
    host: *const clap_host,
}

unsafe extern "C" fn create_plugin(_factory: *const clap_plugin_factory, host: *const clap_host, plugin_id: *const c_char) -> *const clap_plugin {
    if host.is_null() || plugin_id.is_null() || unsafe { CStr::from_ptr(plugin_id) } != descriptor().clap_id() {
        return ptr::null();
    }
    let wrapper = Wrapper::<Rosin>::new(host);
    let inner = *wrapper.clap_plugin.borrow();
    // The wrapper's `destroy` takes this reference back (through `plugin_data`).
    let _ = Arc::into_raw(wrapper);
    let (Some(wrapper_get_extension), Some(wrapper_destroy)) = (inner.get_extension, inner.destroy) else {
        return ptr::null();
    };
    let shell = Box::new(Shell {
        plugin: clap_plugin { get_extension: Some(shell_get_extension), destroy: Some(shell_destroy), ..inner },
        wrapper_get_extension,
        wrapper_destroy,
        host,
    });
    &Box::leak(shell).plugin
}

unsafe extern "C" fn shell_destroy(plugin: *const clap_plugin) {
    if plugin.is_null() {
        return;
    }
    let shell = unsafe { Box::from_raw(plugin as *mut Shell) };
    unsafe { (shell.wrapper_destroy)(plugin) };
}

unsafe extern "C" fn shell_get_extension(plugin: *const clap_plugin, id: *const c_char) -> *const c_void {
    if plugin.is_null() || id.is_null() {
        return ptr::null();
    }
    let name = unsafe { CStr::from_ptr(id) };
    if name == CLAP_EXT_PRESET_LOAD || name == CLAP_EXT_PRESET_LOAD_COMPAT {
        return &PRESET_LOAD as *const clap_plugin_preset_load as *const c_void;
    }
    let shell = unsafe { &*(plugin as *const Shell) };
    unsafe { (shell.wrapper_get_extension)(plugin, id) }
}

// ---- Loading a preset by its key -----------------------------------------------------------

static PRESET_LOAD: clap_plugin_preset_load = clap_plugin_preset_load { from_location: Some(preset_from_location) };

/// The controls a preset location names: a `.rosinpreset` file by its path, or a factory
/// preset inside the plugin by its key.
fn preset_controls(kind: u32, location: *const c_char, load_key: *const c_char) -> Result<(String, Controls), String> {
    let text = |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
    match kind {
        CLAP_PRESET_DISCOVERY_LOCATION_FILE => {
            let path = text(location).ok_or("a file location without a path")?;
            let preset = user_presets::load(std::path::Path::new(&path)).map_err(|e| e.to_string())?;
            Ok((preset.name.clone(), preset.controls))
        }
        CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN => {
            if !location.is_null() {
                return Err("a location inside the plugin has no path".to_string());
            }
            let key = text(load_key).ok_or("no preset key")?;
            let preset = presets::find(&key).ok_or_else(|| format!("Rosin has no factory preset '{key}'"))?;
            Ok((preset.name.to_string(), preset.controls()))
        }
        _ => Err(format!("unknown preset location kind {kind}")),
    }
}

unsafe extern "C" fn preset_from_location(plugin: *const clap_plugin, kind: u32, location: *const c_char, load_key: *const c_char) -> bool {
    if plugin.is_null() {
        return false;
    }
    let shell = unsafe { &*(plugin as *const Shell) };
    let host_extension = unsafe { host_preset_load(shell.host) };
    let fail = |message: String| {
        nice_plug::nice_error!("{message}");
        if let Some(on_error) = host_extension.and_then(|ext| ext.on_error) {
            let message = CString::new(message).unwrap_or_default();
            unsafe { on_error(shell.host, kind, location, load_key, 0, message.as_ptr()) };
        }
        false
    };
    let (name, controls) = match preset_controls(kind, location, load_key) {
        Ok(found) => found,
        Err(message) => return fail(message),
    };
    let state = unsafe { (shell.wrapper_get_extension)(plugin, CLAP_EXT_STATE.as_ptr()) } as *const clap_plugin_state;
    let Some(load) = (unsafe { state.as_ref() }).and_then(|s| s.load) else { return fail("the plugin's state extension is missing".to_string()) };
    // nice-plug's state: the JSON body's length (little-endian u64), then the body.
    let json = presets::state_json(&controls, env!("CARGO_PKG_VERSION"));
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    let mut reader = ByteReader { bytes: &bytes, position: 0 };
    let stream = clap_istream { ctx: &mut reader as *mut ByteReader as *mut c_void, read: Some(read_bytes) };
    if !unsafe { load(plugin, &stream) } {
        return fail(format!("the preset '{name}' did not load"));
    }
    if let Some(loaded) = host_extension.and_then(|ext| ext.loaded) {
        unsafe { loaded(shell.host, kind, location, load_key) };
    }
    true
}

unsafe fn host_preset_load(host: *const clap_host) -> Option<&'static clap_host_preset_load> {
    let get_extension = unsafe { host.as_ref() }?.get_extension?;
    let ext = unsafe { get_extension(host, CLAP_EXT_PRESET_LOAD.as_ptr()) };
    let ext = if ext.is_null() { unsafe { get_extension(host, CLAP_EXT_PRESET_LOAD_COMPAT.as_ptr()) } } else { ext };
    unsafe { (ext as *const clap_host_preset_load).as_ref() }
}

struct ByteReader<'a> {
    bytes: &'a [u8],
    position: usize,
}

unsafe extern "C" fn read_bytes(stream: *const clap_istream, buffer: *mut c_void, size: u64) -> i64 {
    let reader = unsafe { &mut *((*stream).ctx as *mut ByteReader) };
    let n = (size as usize).min(reader.bytes.len() - reader.position);
    unsafe { ptr::copy_nonoverlapping(reader.bytes[reader.position..].as_ptr(), buffer as *mut u8, n) };
    reader.position += n;
    n as i64
}

// ---- Preset discovery ----------------------------------------------------------------------

static PRESET_DISCOVERY_FACTORY: clap_preset_discovery_factory = clap_preset_discovery_factory {
    count: Some(provider_count),
    get_descriptor: Some(provider_descriptor),
    create: Some(create_provider),
};

static PROVIDER_DESCRIPTOR: clap_preset_discovery_provider_descriptor = clap_preset_discovery_provider_descriptor {
    clap_version: CLAP_VERSION,
    id: PROVIDER_ID.as_ptr(),
    name: LOCATION_NAME.as_ptr(),
    vendor: c"Rosin".as_ptr(),
};

unsafe extern "C" fn provider_count(_factory: *const clap_preset_discovery_factory) -> u32 {
    1
}

unsafe extern "C" fn provider_descriptor(_factory: *const clap_preset_discovery_factory, index: u32) -> *const clap_preset_discovery_provider_descriptor {
    if index == 0 {
        &PROVIDER_DESCRIPTOR
    } else {
        ptr::null()
    }
}

/// What a provider keeps between its calls: the host's indexer, and the folders it declared.
struct ProviderState {
    indexer: *const clap_preset_discovery_indexer,
    /// The factory presets' folder, when they were written there.
    factory_directory: Option<std::path::PathBuf>,
}

unsafe extern "C" fn create_provider(
    _factory: *const clap_preset_discovery_factory,
    indexer: *const clap_preset_discovery_indexer,
    provider_id: *const c_char,
) -> *const clap_preset_discovery_provider {
    if indexer.is_null() || provider_id.is_null() || unsafe { CStr::from_ptr(provider_id) } != PROVIDER_ID {
        return ptr::null();
    }
    let state = Box::new(ProviderState { indexer, factory_directory: None });
    let provider = Box::new(clap_preset_discovery_provider {
        desc: &PROVIDER_DESCRIPTOR,
        provider_data: Box::into_raw(state) as *mut c_void,
        init: Some(provider_init),
        destroy: Some(provider_destroy),
        get_metadata: Some(provider_get_metadata),
        get_extension: Some(provider_get_extension),
    });
    Box::leak(provider)
}

fn path_text(path: &std::path::Path) -> Option<CString> {
    CString::new(path.to_str()?).ok()
}

unsafe extern "C" fn provider_init(provider: *const clap_preset_discovery_provider) -> bool {
    let state = unsafe { &mut *((*provider).provider_data as *mut ProviderState) };
    let Some(indexer) = (unsafe { state.indexer.as_ref() }) else { return false };
    let Some(declare_location) = indexer.declare_location else { return false };
    if let Some(declare_filetype) = indexer.declare_filetype {
        let filetype = clap_preset_discovery_filetype {
            name: c"Rosin preset".as_ptr(),
            description: c"Every Rosin control's value, as text".as_ptr(),
            file_extension: c"rosinpreset".as_ptr(),
        };
        unsafe { declare_filetype(state.indexer, &filetype) };
    }
    // The factory presets as files, or else inside the plugin.
    let factory = user_presets::factory_directory().filter(|dir| match user_presets::install_factory_presets(dir) {
        Ok(()) => true,
        Err(error) => {
            nice_plug::nice_warn!("factory presets stay inside the plugin: {error}");
            false
        }
    });
    let factory_path = factory.as_deref().and_then(path_text);
    state.factory_directory = factory.filter(|_| factory_path.is_some());
    let location = clap_preset_discovery_location {
        flags: CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT,
        name: LOCATION_NAME.as_ptr(),
        kind: if factory_path.is_some() { CLAP_PRESET_DISCOVERY_LOCATION_FILE } else { CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN },
        location: factory_path.as_ref().map_or(ptr::null(), |p| p.as_ptr()),
    };
    if !unsafe { declare_location(state.indexer, &location) } {
        return false;
    }
    // The player's own presets, once they have saved one.
    if let Some(user) = user_presets::directory().filter(|d| d.is_dir()).and_then(|d| path_text(&d)) {
        let location = clap_preset_discovery_location {
            flags: CLAP_PRESET_DISCOVERY_IS_USER_CONTENT,
            name: USER_LOCATION_NAME.as_ptr(),
            kind: CLAP_PRESET_DISCOVERY_LOCATION_FILE,
            location: user.as_ptr(),
        };
        unsafe { declare_location(state.indexer, &location) };
    }
    true
}

unsafe extern "C" fn provider_destroy(provider: *const clap_preset_discovery_provider) {
    if !provider.is_null() {
        let provider = unsafe { Box::from_raw(provider as *mut clap_preset_discovery_provider) };
        drop(unsafe { Box::from_raw(provider.provider_data as *mut ProviderState) });
    }
}

unsafe extern "C" fn provider_get_extension(_provider: *const clap_preset_discovery_provider, _id: *const c_char) -> *const c_void {
    ptr::null()
}

/// Declares one preset to the receiver: its name and key, the plugin it is for, and what
/// the factory says of it.
unsafe fn declare_preset(r: &clap_preset_discovery_metadata_receiver, receiver: *const clap_preset_discovery_metadata_receiver, name: &str, load_key: Option<&str>, flags: u32) -> bool {
    let (Some(begin_preset), Some(add_plugin_id)) = (r.begin_preset, r.add_plugin_id) else { return false };
    let plugin_id = CString::new(Rosin::CLAP_ID).unwrap_or_default();
    let universal_id = clap_universal_plugin_id { abi: c"clap".as_ptr(), id: plugin_id.as_ptr() };
    let name_text = CString::new(name).unwrap_or_default();
    let key_text = load_key.map(|k| CString::new(k).unwrap_or_default());
    if !unsafe { begin_preset(receiver, name_text.as_ptr(), key_text.as_ref().map_or(ptr::null(), |k| k.as_ptr())) } {
        return false;
    }
    unsafe { add_plugin_id(receiver, &universal_id) };
    if let Some(set_flags) = r.set_flags {
        unsafe { set_flags(receiver, flags) };
    }
    let factory = presets::find(name).filter(|_| flags & CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT != 0);
    if let Some(preset) = factory {
        if let Some(add_creator) = r.add_creator {
            unsafe { add_creator(receiver, c"Rosin".as_ptr()) };
        }
        if let Some(set_description) = r.set_description {
            let description = CString::new(preset.description).unwrap_or_default();
            unsafe { set_description(receiver, description.as_ptr()) };
        }
    }
    if let Some(add_feature) = r.add_feature {
        unsafe { add_feature(receiver, c"instrument".as_ptr()) };
        if let Some(preset) = factory {
            let category = CString::new(preset.category.to_lowercase()).unwrap_or_default();
            unsafe { add_feature(receiver, category.as_ptr()) };
        }
    }
    true
}

unsafe extern "C" fn provider_get_metadata(
    provider: *const clap_preset_discovery_provider,
    kind: u32,
    location: *const c_char,
    receiver: *const clap_preset_discovery_metadata_receiver,
) -> bool {
    let Some(r) = (unsafe { receiver.as_ref() }) else { return false };
    let Some(state) = (unsafe { provider.as_ref() }).and_then(|p| unsafe { (p.provider_data as *const ProviderState).as_ref() }) else { return false };
    match kind {
        CLAP_PRESET_DISCOVERY_LOCATION_PLUGIN if location.is_null() => {
            for preset in PRESETS {
                if !unsafe { declare_preset(r, receiver, preset.name, Some(preset.name), CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT) } {
                    break;
                }
            }
            true
        }
        CLAP_PRESET_DISCOVERY_LOCATION_FILE if !location.is_null() => {
            let path = std::path::PathBuf::from(unsafe { CStr::from_ptr(location) }.to_string_lossy().into_owned());
            // A file that is not a readable preset declares nothing: one damaged file of a
            // player's never hides the others from the host's browser.
            let preset = match user_presets::load(&path) {
                Ok(preset) => preset,
                Err(error) => {
                    nice_plug::nice_warn!("not a preset: {error}");
                    return true;
                }
            };
            let in_factory = state.factory_directory.as_deref().is_some_and(|dir| path.parent() == Some(dir));
            let flags = if in_factory { CLAP_PRESET_DISCOVERY_IS_FACTORY_CONTENT } else { CLAP_PRESET_DISCOVERY_IS_USER_CONTENT };
            unsafe { declare_preset(r, receiver, &preset.name, None, flags) };
            true
        }
        _ => false,
    }
}

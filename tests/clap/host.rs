//! A minimal CLAP host, written here for the tests: it loads the built plugin library,
//! creates an instance, and drives it through the real C ABI (init, activate, process with
//! every input event a CLAP host sends, the params, state and voice-info extensions).
#![allow(dead_code)]

use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use clap_sys::audio_buffer::clap_audio_buffer;
use clap_sys::entry::clap_plugin_entry;
use clap_sys::events::*;
use clap_sys::ext::params::{clap_param_info, clap_plugin_params, CLAP_EXT_PARAMS};
use clap_sys::ext::preset_load::{clap_host_preset_load, clap_plugin_preset_load, CLAP_EXT_PRESET_LOAD};
use clap_sys::factory::preset_discovery::*;
use clap_sys::universal_plugin_id::clap_universal_plugin_id;
use clap_sys::ext::state::{clap_plugin_state, CLAP_EXT_STATE};
use clap_sys::ext::voice_info::{clap_host_voice_info, clap_plugin_voice_info, clap_voice_info, CLAP_EXT_VOICE_INFO};
use clap_sys::factory::plugin_factory::{clap_plugin_factory, CLAP_PLUGIN_FACTORY_ID};
use clap_sys::host::clap_host;
use clap_sys::plugin::{clap_plugin, clap_plugin_descriptor};
use clap_sys::process::clap_process;
use clap_sys::stream::{clap_istream, clap_ostream};
use clap_sys::version::CLAP_VERSION;

/// The plugin library this test run built: the cdylib next to the test executable (built by
/// the same `cargo test`, with the same features), unless `ROSIN_CLAP` names another file
/// (for example `target/bundled/Rosin.clap`).
pub fn plugin_path() -> PathBuf {
    if let Some(path) = std::env::var_os("ROSIN_CLAP") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().expect("deps directory").join(libloading::library_filename("rosin"))
}

/// An event the host sends at a frame of a block. In the CLAP events, -1 is the wildcard
/// for `note_id`, `channel` and `key`.
#[derive(Clone, Copy, Debug)]
pub enum HostEvent {
    /// A note on channel 0.
    NoteOn { key: i16, velocity: f64, note_id: i32 },
    /// A note off on channel 0.
    NoteOff { key: i16, note_id: i32 },
    /// A normalised value in [0, 1] for the parameter with this CLAP ID.
    Param { id: u32, value: f64 },
    NoteOnAt { channel: i16, key: i16, velocity: f64, note_id: i32 },
    NoteOffAt { channel: i16, key: i16, note_id: i32 },
    /// `CLAP_EVENT_NOTE_CHOKE`: the matching notes stop at once.
    NoteChoke { channel: i16, key: i16, note_id: i32 },
    /// A raw MIDI 1.0 message (`clap_event_midi` on note port 0), for example
    /// `[0x90 | channel, key, velocity]`; two-byte messages leave the last byte 0.
    Midi { data: [u8; 3] },
    /// `clap_event_note_expression`; `expression_id` is one of clap_sys's
    /// `CLAP_NOTE_EXPRESSION_*` (volume, pan, tuning, vibrato, expression, brightness, pressure).
    NoteExpression { expression_id: i32, note_id: i32, channel: i16, key: i16, value: f64 },
    /// `clap_event_param_mod`: an offset (in the parameter's CLAP units, normalised for
    /// continuous parameters) on top of its value, for one voice when `note_id`, `channel` or
    /// `key` is given, for the whole parameter when all three are -1.
    ParamMod { id: u32, note_id: i32, channel: i16, key: i16, amount: f64 },
    /// `clap_event_param_value` aimed at one voice (or, with all three -1, the same as `Param`).
    ParamAt { id: u32, value: f64, note_id: i32, channel: i16, key: i16 },
}

/// Room for any event the host sends; each event's header says which member it is.
#[repr(C)]
union EventStorage {
    header: clap_event_header,
    note: clap_event_note,
    note_expression: clap_event_note_expression,
    param: clap_event_param_value,
    param_mod: clap_event_param_mod,
    midi: clap_event_midi,
}

struct InputEvents {
    events: Vec<EventStorage>,
}

unsafe extern "C" fn input_size(list: *const clap_input_events) -> u32 {
    let events = unsafe { &*((*list).ctx as *const InputEvents) };
    events.events.len() as u32
}

unsafe extern "C" fn input_get(list: *const clap_input_events, index: u32) -> *const clap_event_header {
    let events = unsafe { &*((*list).ctx as *const InputEvents) };
    events.events.get(index as usize).map_or(ptr::null(), |e| e as *const EventStorage as *const clap_event_header)
}

/// Note-end events the plugin sent back: (channel, key, note_id).
struct OutputEvents {
    note_ends: Vec<(i16, i16, i32)>,
}

unsafe extern "C" fn output_try_push(list: *const clap_output_events, event: *const clap_event_header) -> bool {
    let out = unsafe { &mut *((*list).ctx as *mut OutputEvents) };
    let header = unsafe { &*event };
    if header.space_id == CLAP_CORE_EVENT_SPACE_ID && header.type_ == CLAP_EVENT_NOTE_END {
        assert_eq!(header.size as usize, std::mem::size_of::<clap_event_note>(), "a note end the size of a clap_event_note");
        let note = unsafe { &*(event as *const clap_event_note) };
        out.note_ends.push((note.channel, note.key, note.note_id));
    }
    true
}

/// What the host remembers between calls: the extension names the plugin asked it for, and
/// how often the plugin said its voice info changed.
#[derive(Default)]
struct HostState {
    requested_extensions: Mutex<Vec<String>>,
    voice_info_changes: AtomicU32,
    /// `clap.preset-load` reports: the keys loaded, and the errors.
    presets_loaded: Mutex<Vec<String>>,
    preset_errors: Mutex<Vec<String>>,
}

unsafe extern "C" fn host_preset_loaded(host: *const clap_host, _kind: u32, _location: *const c_char, load_key: *const c_char) {
    let state = unsafe { &*((*host).host_data as *const HostState) };
    state.presets_loaded.lock().unwrap().push(c_str(load_key));
}

unsafe extern "C" fn host_preset_error(host: *const clap_host, _kind: u32, _location: *const c_char, _load_key: *const c_char, _os_error: i32, message: *const c_char) {
    let state = unsafe { &*((*host).host_data as *const HostState) };
    state.preset_errors.lock().unwrap().push(c_str(message));
}

static HOST_PRESET_LOAD: clap_host_preset_load = clap_host_preset_load { on_error: Some(host_preset_error), loaded: Some(host_preset_loaded) };

unsafe extern "C" fn host_voice_info_changed(host: *const clap_host) {
    let state = unsafe { &*((*host).host_data as *const HostState) };
    state.voice_info_changes.fetch_add(1, Ordering::SeqCst);
}

/// `clap.voice-info` on the host side: hosts that take polyphonic modulation offer it.
static HOST_VOICE_INFO: clap_host_voice_info = clap_host_voice_info { changed: Some(host_voice_info_changed) };

/// The host offers only `clap.voice-info`; it notes which extensions the plugin asked for.
unsafe extern "C" fn host_get_extension(host: *const clap_host, id: *const c_char) -> *const c_void {
    let state = unsafe { &*((*host).host_data as *const HostState) };
    let name = c_str(id);
    state.requested_extensions.lock().unwrap().push(name.clone());
    if name.as_bytes() == CLAP_EXT_VOICE_INFO.to_bytes() {
        return &HOST_VOICE_INFO as *const clap_host_voice_info as *const c_void;
    }
    if name.as_bytes() == CLAP_EXT_PRESET_LOAD.to_bytes() {
        return &HOST_PRESET_LOAD as *const clap_host_preset_load as *const c_void;
    }
    ptr::null()
}
unsafe extern "C" fn host_request(_host: *const clap_host) {}

struct ByteStream {
    bytes: Vec<u8>,
    position: usize,
}

unsafe extern "C" fn stream_write(stream: *const clap_ostream, buffer: *const c_void, size: u64) -> i64 {
    let s = unsafe { &mut *((*stream).ctx as *mut ByteStream) };
    let data = unsafe { std::slice::from_raw_parts(buffer as *const u8, size as usize) };
    s.bytes.extend_from_slice(data);
    size as i64
}

unsafe extern "C" fn stream_read(stream: *const clap_istream, buffer: *mut c_void, size: u64) -> i64 {
    let s = unsafe { &mut *((*stream).ctx as *mut ByteStream) };
    let n = (size as usize).min(s.bytes.len() - s.position);
    unsafe { ptr::copy_nonoverlapping(s.bytes[s.position..].as_ptr(), buffer as *mut u8, n) };
    s.position += n;
    n as i64
}

/// The loaded library and its entry point.
pub struct ClapLibrary {
    _library: libloading::Library,
    entry: *const clap_plugin_entry,
}

impl ClapLibrary {
    pub fn load(path: &Path) -> Self {
        let library = unsafe { libloading::Library::new(path) }.unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
        let entry = unsafe { *library.get::<*const clap_plugin_entry>(b"clap_entry\0").expect("no clap_entry symbol") };
        let path_c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap();
        assert!(unsafe { ((*entry).init.unwrap())(path_c.as_ptr()) }, "clap_entry.init failed");
        Self { _library: library, entry }
    }

    pub fn factory(&self) -> *const clap_plugin_factory {
        let factory = unsafe { ((*self.entry).get_factory.unwrap())(CLAP_PLUGIN_FACTORY_ID.as_ptr()) } as *const clap_plugin_factory;
        assert!(!factory.is_null(), "no plugin factory");
        factory
    }

    pub fn descriptors(&self) -> Vec<*const clap_plugin_descriptor> {
        let factory = self.factory();
        let count = unsafe { ((*factory).get_plugin_count.unwrap())(factory) };
        (0..count).map(|i| unsafe { ((*factory).get_plugin_descriptor.unwrap())(factory, i) }).collect()
    }
}

/// A preset a preset-discovery provider listed.
#[derive(Clone, Debug, Default)]
pub struct DiscoveredPreset {
    /// Where the host found it: the location kind and, for a file, its path.
    pub kind: u32,
    pub location: Option<String>,
    pub name: String,
    pub load_key: String,
    pub plugin_ids: Vec<(String, String)>,
    pub flags: u32,
    pub creators: Vec<String>,
    pub description: String,
    pub features: Vec<String>,
}

/// Everything a crawl of one provider found.
#[derive(Default)]
pub struct Crawl {
    /// (flags, name, kind, location)
    pub locations: Vec<(u32, String, u32, Option<String>)>,
    pub presets: Vec<DiscoveredPreset>,
    pub errors: Vec<String>,
    /// The file extensions the provider declared.
    pub file_extensions: Vec<String>,
    /// Where the crawl is: the kind and path each new preset is found at.
    crawling: (u32, Option<String>),
}

unsafe extern "C" fn indexer_declare_filetype(indexer: *const clap_preset_discovery_indexer, filetype: *const clap_preset_discovery_filetype) -> bool {
    let crawl = unsafe { &mut *((*indexer).indexer_data as *mut Crawl) };
    crawl.file_extensions.push(c_str(unsafe { (*filetype).file_extension }));
    true
}

unsafe extern "C" fn indexer_declare_location(indexer: *const clap_preset_discovery_indexer, location: *const clap_preset_discovery_location) -> bool {
    let crawl = unsafe { &mut *((*indexer).indexer_data as *mut Crawl) };
    let l = unsafe { &*location };
    let path = (!l.location.is_null()).then(|| c_str(l.location));
    crawl.locations.push((l.flags, c_str(l.name), l.kind, path));
    true
}

unsafe extern "C" fn indexer_declare_soundpack(_indexer: *const clap_preset_discovery_indexer, _soundpack: *const clap_preset_discovery_soundpack) -> bool {
    true
}

unsafe extern "C" fn indexer_get_extension(_indexer: *const clap_preset_discovery_indexer, _id: *const c_char) -> *const c_void {
    ptr::null()
}

fn receiving(receiver: *const clap_preset_discovery_metadata_receiver) -> &'static mut Crawl {
    unsafe { &mut *((*receiver).receiver_data as *mut Crawl) }
}

fn current(receiver: *const clap_preset_discovery_metadata_receiver) -> &'static mut DiscoveredPreset {
    receiving(receiver).presets.last_mut().expect("metadata before begin_preset")
}

unsafe extern "C" fn receiver_on_error(receiver: *const clap_preset_discovery_metadata_receiver, _os_error: i32, message: *const c_char) {
    receiving(receiver).errors.push(c_str(message));
}
unsafe extern "C" fn receiver_begin_preset(receiver: *const clap_preset_discovery_metadata_receiver, name: *const c_char, load_key: *const c_char) -> bool {
    let crawl = receiving(receiver);
    let (kind, location) = crawl.crawling.clone();
    crawl.presets.push(DiscoveredPreset { kind, location, name: c_str(name), load_key: c_str(load_key), ..Default::default() });
    true
}
unsafe extern "C" fn receiver_add_plugin_id(receiver: *const clap_preset_discovery_metadata_receiver, id: *const clap_universal_plugin_id) {
    let id = unsafe { &*id };
    current(receiver).plugin_ids.push((c_str(id.abi), c_str(id.id)));
}
unsafe extern "C" fn receiver_set_soundpack_id(_receiver: *const clap_preset_discovery_metadata_receiver, _id: *const c_char) {}
unsafe extern "C" fn receiver_set_flags(receiver: *const clap_preset_discovery_metadata_receiver, flags: u32) {
    current(receiver).flags = flags;
}
unsafe extern "C" fn receiver_add_creator(receiver: *const clap_preset_discovery_metadata_receiver, creator: *const c_char) {
    current(receiver).creators.push(c_str(creator));
}
unsafe extern "C" fn receiver_set_description(receiver: *const clap_preset_discovery_metadata_receiver, description: *const c_char) {
    current(receiver).description = c_str(description);
}
unsafe extern "C" fn receiver_set_timestamps(_receiver: *const clap_preset_discovery_metadata_receiver, _created: u64, _modified: u64) {}
unsafe extern "C" fn receiver_add_feature(receiver: *const clap_preset_discovery_metadata_receiver, feature: *const c_char) {
    current(receiver).features.push(c_str(feature));
}
unsafe extern "C" fn receiver_add_extra_info(_receiver: *const clap_preset_discovery_metadata_receiver, _key: *const c_char, _value: *const c_char) {}

impl ClapLibrary {
    /// The preset-discovery factory (`clap.preset-discovery-factory/2`), or null.
    pub fn preset_discovery_factory(&self) -> *const clap_preset_discovery_factory {
        unsafe { ((*self.entry).get_factory.unwrap())(CLAP_PRESET_DISCOVERY_FACTORY_ID.as_ptr()) as *const clap_preset_discovery_factory }
    }

    /// Crawls every provider of the preset-discovery factory, as a host's indexer does:
    /// creates it, lets it declare its locations, then asks for each location's presets.
    pub fn crawl_presets(&self) -> Vec<(String, Crawl)> {
        let factory = self.preset_discovery_factory();
        assert!(!factory.is_null(), "no preset-discovery factory");
        let count = unsafe { ((*factory).count.unwrap())(factory) };
        let mut crawls = Vec::new();
        for index in 0..count {
            let descriptor = unsafe { ((*factory).get_descriptor.unwrap())(factory, index) };
            assert!(!descriptor.is_null(), "provider {index} has no descriptor");
            let provider_id = unsafe { CStr::from_ptr((*descriptor).id) };
            let mut crawl = Box::new(Crawl::default());
            let indexer = clap_preset_discovery_indexer {
                clap_version: CLAP_VERSION,
                name: c"rosin-test-indexer".as_ptr(),
                vendor: c"rosin".as_ptr(),
                url: c"".as_ptr(),
                version: c"0".as_ptr(),
                indexer_data: &mut *crawl as *mut Crawl as *mut c_void,
                declare_filetype: Some(indexer_declare_filetype),
                declare_location: Some(indexer_declare_location),
                declare_soundpack: Some(indexer_declare_soundpack),
                get_extension: Some(indexer_get_extension),
            };
            let provider = unsafe { ((*factory).create.unwrap())(factory, &indexer, provider_id.as_ptr()) };
            assert!(!provider.is_null(), "provider {index} was not created");
            assert!(unsafe { ((*provider).init.unwrap())(provider) }, "provider {index} did not initialise");
            let receiver = clap_preset_discovery_metadata_receiver {
                receiver_data: &mut *crawl as *mut Crawl as *mut c_void,
                on_error: Some(receiver_on_error),
                begin_preset: Some(receiver_begin_preset),
                add_plugin_id: Some(receiver_add_plugin_id),
                set_soundpack_id: Some(receiver_set_soundpack_id),
                set_flags: Some(receiver_set_flags),
                add_creator: Some(receiver_add_creator),
                set_description: Some(receiver_set_description),
                set_timestamps: Some(receiver_set_timestamps),
                add_feature: Some(receiver_add_feature),
                add_extra_info: Some(receiver_add_extra_info),
            };
            // As a host's indexer does: a folder is walked, and each file with a declared
            // extension is asked for its presets (in name order here); a location inside
            // the plugin is asked once.
            let locations = crawl.locations.clone();
            for (_, _, kind, location) in locations {
                let targets: Vec<Option<String>> = match &location {
                    Some(path) if std::path::Path::new(path).is_dir() => {
                        let mut files: Vec<String> = std::fs::read_dir(path)
                            .unwrap()
                            .filter_map(|e| e.ok().map(|e| e.path()))
                            .filter(|p| p.is_file() && p.extension().is_some_and(|x| crawl.file_extensions.iter().any(|d| x == d.as_str())))
                            .map(|p| p.to_string_lossy().into_owned())
                            .collect();
                        files.sort();
                        files.into_iter().map(Some).collect()
                    }
                    other => vec![other.clone()],
                };
                for target in targets {
                    crawl.crawling = (kind, target.clone());
                    let target = target.map(|l| std::ffi::CString::new(l).unwrap());
                    let found = unsafe { ((*provider).get_metadata.unwrap())(provider, kind, target.as_ref().map_or(ptr::null(), |l| l.as_ptr()), &receiver) };
                    assert!(found, "provider {index} found no metadata in a location it declared");
                }
            }
            unsafe { ((*provider).destroy.unwrap())(provider) };
            crawls.push((provider_id.to_string_lossy().into_owned(), *crawl));
        }
        crawls
    }
}

impl Drop for ClapLibrary {
    fn drop(&mut self) {
        unsafe { ((*self.entry).deinit.unwrap())() };
    }
}

pub fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// One plugin instance with its host.
pub struct ClapInstance {
    host: Box<clap_host>,
    host_state: Box<HostState>,
    plugin: *const clap_plugin,
    params: *const clap_plugin_params,
    state: *const clap_plugin_state,
    active: bool,
    processing: bool,
    steady_time: i64,
    /// The note ends the plugin reported, in order: (key, note_id).
    pub note_ends: Vec<(i16, i32)>,
    /// The same note ends with their channel: (channel, key, note_id).
    pub note_ends_on_channels: Vec<(i16, i16, i32)>,
    /// How long the plugin's last `process()` call took, in seconds of this thread's CPU
    /// time (see [`thread_cpu_s`]).
    pub last_process_s: f64,
    /// What the plugin's last `process()` call returned (`CLAP_PROCESS_*`).
    pub last_status: i32,
}

impl ClapInstance {
    pub fn new(library: &ClapLibrary, plugin_id: &str) -> Self {
        let host_state = Box::new(HostState::default());
        let host = Box::new(clap_host {
            clap_version: CLAP_VERSION,
            host_data: &*host_state as *const HostState as *mut c_void,
            name: c"rosin-test-host".as_ptr(),
            vendor: c"rosin".as_ptr(),
            url: c"".as_ptr(),
            version: c"0".as_ptr(),
            get_extension: Some(host_get_extension),
            request_restart: Some(host_request),
            request_process: Some(host_request),
            request_callback: Some(host_request),
        });
        let factory = library.factory();
        let id = std::ffi::CString::new(plugin_id).unwrap();
        let plugin = unsafe { ((*factory).create_plugin.unwrap())(factory, &*host, id.as_ptr()) };
        assert!(!plugin.is_null(), "create_plugin failed");
        assert!(unsafe { ((*plugin).init.unwrap())(plugin) }, "plugin init failed");
        let params = unsafe { ((*plugin).get_extension.unwrap())(plugin, CLAP_EXT_PARAMS.as_ptr()) } as *const clap_plugin_params;
        let state = unsafe { ((*plugin).get_extension.unwrap())(plugin, CLAP_EXT_STATE.as_ptr()) } as *const clap_plugin_state;
        assert!(!params.is_null() && !state.is_null(), "params and state extensions are required");
        Self {
            host,
            host_state,
            plugin,
            params,
            state,
            active: false,
            processing: false,
            steady_time: 0,
            note_ends: Vec::new(),
            note_ends_on_channels: Vec::new(),
            last_process_s: 0.0,
            last_status: 0,
        }
    }

    /// The plugin's extension with this ID, or null when it does not offer it.
    pub fn extension(&self, id: &CStr) -> *const c_void {
        unsafe { ((*self.plugin).get_extension.unwrap())(self.plugin, id.as_ptr()) }
    }

    /// The host extensions the plugin has asked for so far, in order (the host offers none).
    /// How often the plugin told the host its voice info changed.
    pub fn voice_info_changes(&self) -> u32 {
        self.host_state.voice_info_changes.load(Ordering::SeqCst)
    }

    /// Loads a preset through the plugin's `clap.preset-load`; returns the plugin's answer,
    /// and what it told the host (the keys it reported loaded, and its errors).
    /// Loads a preset through `clap.preset-load`: (accepted, the keys the host was told
    /// loaded, the errors it was told of).
    pub fn load_preset(&self, kind: u32, location: Option<&str>, load_key: Option<&str>) -> (bool, Vec<String>, Vec<String>) {
        let ext = self.extension(CLAP_EXT_PRESET_LOAD) as *const clap_plugin_preset_load;
        assert!(!ext.is_null(), "no clap.preset-load extension");
        let location = location.map(|l| std::ffi::CString::new(l).unwrap());
        let key = load_key.map(|k| std::ffi::CString::new(k).unwrap());
        self.host_state.presets_loaded.lock().unwrap().clear();
        self.host_state.preset_errors.lock().unwrap().clear();
        let ok = unsafe { ((*ext).from_location.unwrap())(self.plugin, kind, location.as_ref().map_or(ptr::null(), |l| l.as_ptr()), key.as_ref().map_or(ptr::null(), |k| k.as_ptr())) };
        (ok, self.host_state.presets_loaded.lock().unwrap().clone(), self.host_state.preset_errors.lock().unwrap().clone())
    }

    pub fn requested_host_extensions(&self) -> Vec<String> {
        self.host_state.requested_extensions.lock().unwrap().clone()
    }

    /// `clap.voice-info`: (voice_count, voice_capacity, flags), or None when the plugin does not
    /// offer the extension or its `get` fails. CLAP allows the call only while active.
    pub fn voice_info(&self) -> Option<(u32, u32, u64)> {
        let voice_info = self.extension(CLAP_EXT_VOICE_INFO) as *const clap_plugin_voice_info;
        if voice_info.is_null() {
            return None;
        }
        let mut info = clap_voice_info { voice_count: 0, voice_capacity: 0, flags: 0 };
        let ok = unsafe { ((*voice_info).get.expect("voice-info without get"))(self.plugin, &mut info) };
        ok.then_some((info.voice_count, info.voice_capacity, info.flags))
    }

    pub fn activate(&mut self, sample_rate_hz: f64, max_frames: u32) -> bool {
        let ok = unsafe { ((*self.plugin).activate.unwrap())(self.plugin, sample_rate_hz, 1, max_frames) };
        if ok {
            self.active = true;
            assert!(unsafe { ((*self.plugin).start_processing.unwrap())(self.plugin) });
            self.processing = true;
        }
        ok
    }

    pub fn deactivate(&mut self) {
        if self.processing {
            unsafe { ((*self.plugin).stop_processing.unwrap())(self.plugin) };
            self.processing = false;
        }
        if self.active {
            unsafe { ((*self.plugin).deactivate.unwrap())(self.plugin) };
            self.active = false;
        }
    }

    pub fn param_infos(&self) -> Vec<clap_param_info> {
        let count = unsafe { ((*self.params).count.unwrap())(self.plugin) };
        (0..count)
            .map(|i| {
                let mut info: clap_param_info = unsafe { std::mem::zeroed() };
                assert!(unsafe { ((*self.params).get_info.unwrap())(self.plugin, i, &mut info) });
                info
            })
            .collect()
    }

    /// The `CLAP_PARAM_IS_*` flags of the parameter with this CLAP ID.
    pub fn param_info_flags(&self, id: u32) -> u32 {
        let info = self.param_infos().into_iter().find(|i| i.id == id);
        info.unwrap_or_else(|| panic!("no parameter with CLAP ID {id}")).flags
    }

    pub fn param_value(&self, id: u32) -> f64 {
        let mut value = f64::NAN;
        assert!(unsafe { ((*self.params).get_value.unwrap())(self.plugin, id, &mut value) });
        value
    }

    /// The plugin's text for a value (with its unit, as a host shows it).
    pub fn value_to_text(&self, id: u32, value: f64) -> Option<String> {
        let mut text = [0 as c_char; 256];
        let ok = unsafe { ((*self.params).value_to_text.unwrap())(self.plugin, id, value, text.as_mut_ptr(), text.len() as u32) };
        ok.then(|| c_str(text.as_ptr()))
    }

    /// The value the plugin reads from a text a user typed.
    pub fn text_to_value(&self, id: u32, text: &str) -> Option<f64> {
        let text = std::ffi::CString::new(text).ok()?;
        let mut value = f64::NAN;
        let ok = unsafe { ((*self.params).text_to_value.unwrap())(self.plugin, id, text.as_ptr(), &mut value) };
        ok.then_some(value)
    }

    pub fn save_state(&self) -> Vec<u8> {
        let mut stream = ByteStream { bytes: Vec::new(), position: 0 };
        let ostream = clap_ostream { ctx: &mut stream as *mut ByteStream as *mut c_void, write: Some(stream_write) };
        assert!(unsafe { ((*self.state).save.unwrap())(self.plugin, &ostream) }, "state save failed");
        stream.bytes
    }

    pub fn load_state(&self, bytes: &[u8]) -> bool {
        let mut stream = ByteStream { bytes: bytes.to_vec(), position: 0 };
        let istream = clap_istream { ctx: &mut stream as *mut ByteStream as *mut c_void, read: Some(stream_read) };
        unsafe { ((*self.state).load.unwrap())(self.plugin, &istream) }
    }

    /// Processes one block of `frames` stereo frames with `events` (frame, event), and
    /// returns the left and right outputs.
    pub fn process(&mut self, frames: u32, events: &[(u32, HostEvent)]) -> (Vec<f32>, Vec<f32>) {
        // Hosts hand over buffers holding anything: the plugin must write every sample.
        let mut left = vec![f32::NAN; frames as usize];
        let mut right = vec![f32::NAN; frames as usize];
        let mut channels = [left.as_mut_ptr(), right.as_mut_ptr()];
        let mut output = clap_audio_buffer { data32: channels.as_mut_ptr(), data64: ptr::null_mut(), channel_count: 2, latency: 0, constant_mask: 0 };
        let mut input_events = InputEvents { events: events.iter().map(|(time, e)| to_storage(*time, e)).collect() };
        let in_events = clap_input_events { ctx: &mut input_events as *mut InputEvents as *mut c_void, size: Some(input_size), get: Some(input_get) };
        let mut out = OutputEvents { note_ends: Vec::new() };
        let out_events = clap_output_events { ctx: &mut out as *mut OutputEvents as *mut c_void, try_push: Some(output_try_push) };
        let process = clap_process {
            steady_time: self.steady_time,
            frames_count: frames,
            transport: ptr::null(),
            audio_inputs: ptr::null(),
            audio_outputs: &mut output,
            audio_inputs_count: 0,
            audio_outputs_count: 1,
            in_events: &in_events,
            out_events: &out_events,
        };
        let started = thread_cpu_s();
        let status = unsafe { ((*self.plugin).process.unwrap())(self.plugin, &process) };
        self.last_process_s = thread_cpu_s() - started;
        self.last_status = status;
        assert_ne!(status, clap_sys::process::CLAP_PROCESS_ERROR, "process returned an error");
        self.steady_time += frames as i64;
        self.note_ends.extend(out.note_ends.iter().map(|&(_, key, note_id)| (key, note_id)));
        self.note_ends_on_channels.extend(out.note_ends);
        (left, right)
    }
}

fn to_storage(time: u32, event: &HostEvent) -> EventStorage {
    use std::mem::size_of;
    let header = |size: usize, type_: u16| clap_event_header { size: size as u32, time, space_id: CLAP_CORE_EVENT_SPACE_ID, type_, flags: 0 };
    let note = |type_: u16, channel: i16, key: i16, velocity: f64, note_id: i32| EventStorage {
        note: clap_event_note { header: header(size_of::<clap_event_note>(), type_), note_id, port_index: 0, channel, key, velocity },
    };
    // An event aimed at no note carries no note port either.
    let port = |note_id: i32, channel: i16, key: i16| if note_id == -1 && channel == -1 && key == -1 { -1 } else { 0 };
    let param = |id: u32, value: f64, note_id: i32, channel: i16, key: i16| EventStorage {
        param: clap_event_param_value {
            header: header(size_of::<clap_event_param_value>(), CLAP_EVENT_PARAM_VALUE),
            param_id: id,
            cookie: ptr::null_mut(),
            note_id,
            port_index: port(note_id, channel, key),
            channel,
            key,
            value,
        },
    };
    match *event {
        HostEvent::NoteOn { key, velocity, note_id } => note(CLAP_EVENT_NOTE_ON, 0, key, velocity, note_id),
        HostEvent::NoteOff { key, note_id } => note(CLAP_EVENT_NOTE_OFF, 0, key, 0.0, note_id),
        HostEvent::Param { id, value } => param(id, value, -1, -1, -1),
        HostEvent::NoteOnAt { channel, key, velocity, note_id } => note(CLAP_EVENT_NOTE_ON, channel, key, velocity, note_id),
        HostEvent::NoteOffAt { channel, key, note_id } => note(CLAP_EVENT_NOTE_OFF, channel, key, 0.0, note_id),
        HostEvent::NoteChoke { channel, key, note_id } => note(CLAP_EVENT_NOTE_CHOKE, channel, key, 0.0, note_id),
        HostEvent::Midi { data } => EventStorage { midi: clap_event_midi { header: header(size_of::<clap_event_midi>(), CLAP_EVENT_MIDI), port_index: 0, data } },
        HostEvent::NoteExpression { expression_id, note_id, channel, key, value } => EventStorage {
            note_expression: clap_event_note_expression {
                header: header(size_of::<clap_event_note_expression>(), CLAP_EVENT_NOTE_EXPRESSION),
                expression_id,
                note_id,
                port_index: 0,
                channel,
                key,
                value,
            },
        },
        HostEvent::ParamMod { id, note_id, channel, key, amount } => EventStorage {
            param_mod: clap_event_param_mod {
                header: header(size_of::<clap_event_param_mod>(), CLAP_EVENT_PARAM_MOD),
                param_id: id,
                cookie: ptr::null_mut(),
                note_id,
                port_index: port(note_id, channel, key),
                channel,
                key,
                amount,
            },
        },
        HostEvent::ParamAt { id, value, note_id, channel, key } => param(id, value, note_id, channel, key),
    }
}

impl Drop for ClapInstance {
    fn drop(&mut self) {
        self.deactivate();
        unsafe { ((*self.plugin).destroy.unwrap())(self.plugin) };
    }
}

/// nice-plug's CLAP parameter ID for a string ID (a Rabin fingerprint, top bit cleared).
/// A state written as a JSON body behind CLAP's length prefix (nice-plug's state format).
pub fn state_bytes(json: &str) -> Vec<u8> {
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    bytes
}

pub fn clap_param_id(id: &str) -> u32 {
    let mut hash: u32 = 0;
    for byte in id.bytes() {
        hash = hash.wrapping_mul(31).wrapping_add(byte as u32);
    }
    hash & !(1 << 31)
}

/// The calling thread's CPU time (s): the plugin's own work, whatever else the machine runs
/// meanwhile (a build beside a fuzz campaign makes wall time wander by tens of
/// milliseconds). Wall time where the platform has no thread clock.
pub fn thread_cpu_s() -> f64 {
    #[cfg(unix)]
    {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `now` is a valid timespec to write to.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0 {
            return now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9;
        }
    }
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

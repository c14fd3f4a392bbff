//! A minimal CLAP host, written here for the tests: it loads the built plugin library,
//! creates an instance, and drives it through the real C ABI (init, activate, process with
//! note and parameter events, params and state extensions).
#![allow(dead_code)]

use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::ptr;

use clap_sys::audio_buffer::clap_audio_buffer;
use clap_sys::entry::clap_plugin_entry;
use clap_sys::events::*;
use clap_sys::ext::params::{clap_param_info, clap_plugin_params, CLAP_EXT_PARAMS};
use clap_sys::ext::state::{clap_plugin_state, CLAP_EXT_STATE};
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

/// An event the host sends: a note or a parameter change at a frame of a block.
#[derive(Clone, Copy, Debug)]
pub enum HostEvent {
    NoteOn { key: i16, velocity: f64, note_id: i32 },
    NoteOff { key: i16, note_id: i32 },
    /// A normalised value in [0, 1] for the parameter with this CLAP ID.
    Param { id: u32, value: f64 },
}

#[repr(C)]
union EventStorage {
    note: clap_event_note,
    param: clap_event_param_value,
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

/// Note-end events the plugin sent back: (key, note_id).
struct OutputEvents {
    note_ends: Vec<(i16, i32)>,
}

unsafe extern "C" fn output_try_push(list: *const clap_output_events, event: *const clap_event_header) -> bool {
    let out = unsafe { &mut *((*list).ctx as *mut OutputEvents) };
    let header = unsafe { &*event };
    if header.space_id == CLAP_CORE_EVENT_SPACE_ID && header.type_ == CLAP_EVENT_NOTE_END {
        let note = unsafe { &*(event as *const clap_event_note) };
        out.note_ends.push((note.key, note.note_id));
    }
    true
}

unsafe extern "C" fn host_get_extension(_host: *const clap_host, _id: *const c_char) -> *const c_void {
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
    plugin: *const clap_plugin,
    params: *const clap_plugin_params,
    state: *const clap_plugin_state,
    active: bool,
    processing: bool,
    steady_time: i64,
    pub note_ends: Vec<(i16, i32)>,
}

impl ClapInstance {
    pub fn new(library: &ClapLibrary, plugin_id: &str) -> Self {
        let host = Box::new(clap_host {
            clap_version: CLAP_VERSION,
            host_data: ptr::null_mut(),
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
        Self { host, plugin, params, state, active: false, processing: false, steady_time: 0, note_ends: Vec::new() }
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

    pub fn param_value(&self, id: u32) -> f64 {
        let mut value = f64::NAN;
        assert!(unsafe { ((*self.params).get_value.unwrap())(self.plugin, id, &mut value) });
        value
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
        let mut left = vec![0.0f32; frames as usize];
        let mut right = vec![0.0f32; frames as usize];
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
        let status = unsafe { ((*self.plugin).process.unwrap())(self.plugin, &process) };
        assert_ne!(status, clap_sys::process::CLAP_PROCESS_ERROR, "process returned an error");
        self.steady_time += frames as i64;
        self.note_ends.extend(out.note_ends);
        (left, right)
    }
}

fn to_storage(time: u32, event: &HostEvent) -> EventStorage {
    let header = |size: usize, type_: u16| clap_event_header { size: size as u32, time, space_id: CLAP_CORE_EVENT_SPACE_ID, type_, flags: 0 };
    match *event {
        HostEvent::NoteOn { key, velocity, note_id } => EventStorage {
            note: clap_event_note { header: header(std::mem::size_of::<clap_event_note>(), CLAP_EVENT_NOTE_ON), note_id, port_index: 0, channel: 0, key, velocity },
        },
        HostEvent::NoteOff { key, note_id } => EventStorage {
            note: clap_event_note { header: header(std::mem::size_of::<clap_event_note>(), CLAP_EVENT_NOTE_OFF), note_id, port_index: 0, channel: 0, key, velocity: 0.0 },
        },
        HostEvent::Param { id, value } => EventStorage {
            param: clap_event_param_value {
                header: header(std::mem::size_of::<clap_event_param_value>(), CLAP_EVENT_PARAM_VALUE),
                param_id: id,
                cookie: ptr::null_mut(),
                note_id: -1,
                port_index: -1,
                channel: -1,
                key: -1,
                value,
            },
        },
    }
}

impl Drop for ClapInstance {
    fn drop(&mut self) {
        self.deactivate();
        unsafe { ((*self.plugin).destroy.unwrap())(self.plugin) };
    }
}

/// nice-plug's CLAP parameter ID for a string ID (a Rabin fingerprint, top bit cleared).
pub fn clap_param_id(id: &str) -> u32 {
    let mut hash: u32 = 0;
    for byte in id.bytes() {
        hash = hash.wrapping_mul(31).wrapping_add(byte as u32);
    }
    hash & !(1 << 31)
}

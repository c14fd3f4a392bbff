//! The Sensel Morph reader: a background thread per plugin instance that loads LibSensel
//! at run time, finds and opens the pad, reads its contacts at 250 Hz and writes the
//! mapped gestures into the instance's [`GestureBus`].
//!
//! - No library, or one without the expected symbols: "no Sensel", logged once per
//!   process and reason, and the thread idles until the plugin goes.
//! - Hot-plug: with no pad, discovery is retried every second. A read error (the pad was
//!   unplugged) lifts every lane it was playing at once, so the bows lift smoothly
//!   through the voices' release, and discovery starts again.
//! - Several instances in one process: the pad belongs to one instance at a time, the
//!   first to load the library, also while the pad is unplugged. The others wait, say so in
//!   their editors, and take over when the owner goes away or when the user asks (the
//!   editor's "Take over" button).
//! - Dropping the reader stops the thread and waits for it at most [`DROP_WAIT`]: every
//!   sleep is an unparkable wait, so a reader between calls ends at once. One inside a
//!   LibSensel call that takes long (opening a device can) is left to finish on its own,
//!   never holding up the host's thread. So that its code is still there when it does, the
//!   first reader pins the plugin's library in memory for the rest of the process
//!   ([`pin_this_library`]): a host unloading Rosin leaves it mapped.
//! - One loaded library per process: readers of the same LibSensel share one
//!   [`Library`], whose lock serialises every call into it, so a take-over never calls into
//!   LibSensel from two threads at once.
//! - A panic in the reader is caught: the pad is released and its lanes lifted, the state
//!   says why ([`SenselState::Crashed`]), and the shared tables are never left poisoned, so
//!   [`LazySensel::restart`] (the editor's "Restart" button) plays the pad again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use sensel_sys::{Library, CONTACT_END, FRAME_CONTENT_CONTACTS_MASK};

use rosin_engine::controller::bus::{GestureBus, GestureSource};
use rosin_engine::controller::gesture::PadLayout;
use rosin_engine::controller::mapper::{PadMapper, Touch};

/// How often the reader asks the pad for frames: above the papers' 150 Hz.
pub const POLL_INTERVAL: Duration = Duration::from_millis(4);
/// How often a missing pad is looked for again.
pub const DISCOVERY_INTERVAL: Duration = Duration::from_secs(1);
/// The frame rate asked of the pad (the Morph scans at 125 to 1000 fps).
pub const PAD_FRAME_RATE_HZ: u16 = 500;
/// The longest dropping a reader waits for its thread, on the host's thread.
pub const DROP_WAIT: Duration = Duration::from_millis(5);

/// What the reader is doing, for the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SenselState {
    Starting,
    /// LibSensel could not be loaded; the reason.
    NoLibrary(String),
    /// The library is there; no pad is connected.
    Searching,
    /// Another Rosin instance in this process has the pad.
    InUseElsewhere { owner: u64 },
    Connected { serial: String },
    Stopped,
    /// The reader panicked, with the panic's message; restart it to play again.
    Crashed(String),
}

impl std::fmt::Display for SenselState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Starting => write!(f, "Sensel: starting"),
            Self::NoLibrary(reason) => write!(f, "No Sensel ({reason})"),
            Self::Searching => write!(f, "Sensel: looking for a Morph"),
            Self::InUseElsewhere { owner } => write!(f, "Sensel: played by Rosin #{owner}"),
            Self::Connected { serial } => write!(f, "Sensel: {serial} connected"),
            Self::Stopped => write!(f, "Sensel: stopped"),
            Self::Crashed(why) => write!(f, "Sensel reader stopped by an error ({why})"),
        }
    }
}

/// How the pad maps, read at every frame (the host may automate it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PadSettings {
    pub layout: PadLayout,
    pub drum: bool,
}

/// Where the library comes from.
#[derive(Clone, Debug, Default)]
pub struct ReaderConfig {
    /// None: the environment override (`ROSIN_SENSEL_LIB`), then the platform's names.
    pub library: Option<PathBuf>,
}

/// The reader's state and counters, shared with the editor.
pub struct SenselStatus {
    state: Mutex<SenselState>,
    frames: AtomicU64,
    connections: AtomicU64,
}

impl SenselStatus {
    pub fn state(&self) -> SenselState {
        lock(&self.state).clone()
    }

    fn set(&self, state: SenselState) {
        *lock(&self.state) = state;
    }

    /// Pad frames read so far.
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    /// How many times a pad was opened (a re-plug counts again).
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }
}

// ---- One pad, one owner: the process-wide arbitration between instances. ----

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// Locks a process-wide table, whatever panicked while it was held: its contents are plain
/// lists, valid after any partial update.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
/// Per library path, the instance that plays its pad.
static OWNERS: Mutex<Vec<(PathBuf, u64)>> = Mutex::new(Vec::new());

fn owner_of(path: &Path) -> Option<u64> {
    lock(&OWNERS).iter().find(|(p, _)| p == path).map(|(_, id)| *id)
}

/// Claims the pad for `instance` if nobody has it; returns the owner otherwise.
fn claim(path: &Path, instance: u64) -> Result<(), u64> {
    let mut owners = lock(&OWNERS);
    match owners.iter().find(|(p, _)| p == path) {
        Some((_, owner)) if *owner != instance => Err(*owner),
        Some(_) => Ok(()),
        None => {
            owners.push((path.to_path_buf(), instance));
            Ok(())
        }
    }
}

fn release(path: &Path, instance: u64) {
    lock(&OWNERS).retain(|(p, id)| !(p == path && *id == instance));
}

/// Gives up every pad `instance` holds (its reader panicked).
fn release_all(instance: u64) {
    lock(&OWNERS).retain(|(_, id)| *id != instance);
}

fn take_over(path: &Path, instance: u64) {
    let mut owners = lock(&OWNERS);
    owners.retain(|(p, _)| p != path);
    owners.push((path.to_path_buf(), instance));
}

// ---- One loaded library per process. ----

/// The LibSensel libraries loaded, by path: every reader of one path shares its [`Library`]
/// (and so its call lock) for as long as any reader holds it.
static LIBRARIES: Mutex<Vec<std::sync::Weak<Library>>> = Mutex::new(Vec::new());

/// The shared library for a freshly loaded one: the one already shared if its path is
/// loaded (the fresh handle is dropped; the system counts loads, so nothing is unloaded).
fn shared_library(loaded: Arc<Library>) -> Arc<Library> {
    let mut libraries = lock(&LIBRARIES);
    libraries.retain(|weak| weak.strong_count() > 0);
    if let Some(shared) = libraries.iter().filter_map(std::sync::Weak::upgrade).find(|l| l.path() == loaded.path()) {
        return shared;
    }
    libraries.push(Arc::downgrade(&loaded));
    loaded
}

/// For each [`Library`] loaded from `path` and still held, how many holders it has (for
/// tests: one library, held by every reader of that path and by each pad it has open).
pub fn library_holders(path: &Path) -> Vec<usize> {
    lock(&LIBRARIES).iter().filter_map(std::sync::Weak::upgrade).filter(|l| l.path() == path).map(|l| Arc::strong_count(&l) - 1).collect()
}

// ---- The plugin's library stays mapped once a reader has run. ----

/// Pins the library this code is in, so that unloading it (a host closing Rosin) leaves it
/// mapped until the process ends: a reader thread still inside a slow LibSensel call when
/// its instance went finishes in code that is still there. Once per process; a program
/// that links Rosin in (not a plugin) has nothing to pin. Returns whether it is pinned.
pub fn pin_this_library() -> bool {
    static PINNED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PINNED.get_or_init(|| {
        let pinned = pin_library_of(pin_this_library as *const ());
        if !pinned {
            report_once("Rosin could not pin its library in memory: a host that unloads it while a Sensel reader is still opening a pad may crash");
        }
        pinned
    })
}

#[cfg(unix)]
fn pin_library_of(address: *const ()) -> bool {
    // SAFETY: dladdr only reads the loader's tables for an address in this library; the
    // name it returns lives as long as the library. dlopen of a library that is already
    // loaded runs no initialiser: it adds a reference, and RTLD_NODELETE keeps it mapped
    // after the last dlclose. The handle is left open on purpose.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(address as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return false;
        }
        let handle = libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE);
        !handle.is_null()
    }
}

#[cfg(windows)]
fn pin_library_of(address: *const ()) -> bool {
    // kernel32's GetModuleHandleExW, with FROM_ADDRESS (4) and PIN (1): the module holding
    // `address` stays loaded until the process ends.
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut *mut std::ffi::c_void) -> i32;
    }
    let mut module = std::ptr::null_mut();
    // SAFETY: with FROM_ADDRESS the name is read as an address inside a loaded module, and
    // `module` is a valid place for the handle.
    unsafe { GetModuleHandleExW(1 | 4, address as *const u16, &mut module) != 0 }
}

#[cfg(not(any(unix, windows)))]
fn pin_library_of(_address: *const ()) -> bool {
    false
}

// ---- Logging each problem once. ----

static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Logs `message` unless it was logged before in this process. Returns whether it logged.
fn report_once(message: &str) -> bool {
    let mut reported = lock(&REPORTED);
    if reported.iter().any(|m| m == message) {
        return false;
    }
    reported.push(message.to_string());
    nice_plug::nice_log!("{message}");
    true
}

/// How often `message` was logged in this process (0 or 1).
pub fn times_reported(message: &str) -> usize {
    lock(&REPORTED).iter().filter(|m| *m == message).count()
}

// ---- The thread. ----

struct Shared {
    stop: AtomicBool,
    /// The library's path once loaded, for taking over.
    library_path: Mutex<Option<PathBuf>>,
    status: Arc<SenselStatus>,
}

/// A running reader. Dropping it stops the thread (see its `Drop`).
pub struct SenselReader {
    instance: u64,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl SenselReader {
    /// Starts the thread. `settings` is read at every frame.
    pub fn spawn(config: ReaderConfig, bus: Arc<GestureBus>, settings: Arc<dyn Fn() -> PadSettings + Send + Sync>) -> Self {
        pin_this_library();
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        let status = Arc::new(SenselStatus { state: Mutex::new(SenselState::Starting), frames: AtomicU64::new(0), connections: AtomicU64::new(0) });
        let shared = Arc::new(Shared { stop: AtomicBool::new(false), library_path: Mutex::new(None), status });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("rosin-sensel-{instance}"))
            .spawn(move || {
                let worker = Worker { instance, shared: thread_shared, bus, settings };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run(config))) {
                    Ok(()) => worker.shared.status.set(SenselState::Stopped),
                    Err(panic) => worker.recover(panic.as_ref()),
                }
            })
            .ok();
        if thread.is_none() {
            shared.status.set(SenselState::NoLibrary("the reader thread could not start".into()));
        }
        Self { instance, shared, thread }
    }

    /// This instance's number, as the editor shows it ("Rosin #n").
    pub fn instance(&self) -> u64 {
        self.instance
    }

    pub fn status(&self) -> Arc<SenselStatus> {
        self.shared.status.clone()
    }

    /// A handle for the editor: the state, and taking the pad over.
    pub fn control(&self) -> SenselControl {
        SenselControl { instance: self.instance, shared: self.shared.clone(), thread: self.thread.as_ref().map(|t| t.thread().clone()) }
    }

    /// Takes the pad from whichever instance has it.
    pub fn take_over(&self) {
        self.control().take_over();
    }
}

/// A reader started on first use: when its instance is activated or its editor draws, never
/// when a host only scans the plugin (creating instances, and their editor objects, and
/// dropping them). Dropping the last handle stops the reader.
pub struct LazySensel {
    reader: Mutex<Option<SenselReader>>,
    bus: Arc<GestureBus>,
    settings: Arc<dyn Fn() -> PadSettings + Send + Sync>,
}

impl LazySensel {
    pub fn new(bus: Arc<GestureBus>, settings: Arc<dyn Fn() -> PadSettings + Send + Sync>) -> Self {
        Self { reader: Mutex::new(None), bus, settings }
    }

    /// Starts the reader if it has not started yet, and returns its handle.
    pub fn start(&self) -> Option<SenselControl> {
        let mut reader = lock(&self.reader);
        let reader = reader.get_or_insert_with(|| SenselReader::spawn(ReaderConfig::default(), self.bus.clone(), self.settings.clone()));
        Some(reader.control())
    }

    /// Stops the reader (if it runs) and starts a new one: after a crash, the pad plays
    /// again.
    pub fn restart(&self) -> Option<SenselControl> {
        let mut reader = lock(&self.reader);
        // The old one stops first; if it is still inside a LibSensel call, the new one
        // waits for the pad ("played by" the old) until that call returns.
        drop(reader.take());
        let reader = reader.insert(SenselReader::spawn(ReaderConfig::default(), self.bus.clone(), self.settings.clone()));
        Some(reader.control())
    }
}

/// The editor's handle on a reader.
#[derive(Clone)]
pub struct SenselControl {
    instance: u64,
    shared: Arc<Shared>,
    thread: Option<std::thread::Thread>,
}

impl SenselControl {
    pub fn instance(&self) -> u64 {
        self.instance
    }

    pub fn state(&self) -> SenselState {
        self.shared.status.state()
    }

    pub fn frames(&self) -> u64 {
        self.shared.status.frames()
    }

    /// Takes the pad from whichever instance has it; that one lifts its bows and waits.
    pub fn take_over(&self) {
        if let Some(path) = lock(&self.shared.library_path).clone() {
            take_over(&path, self.instance);
        }
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }
}

impl Drop for SenselReader {
    /// Stops the thread and waits for it at most [`DROP_WAIT`]; one still inside a
    /// LibSensel call finishes on its own (the library stays mapped: [`pin_this_library`]),
    /// closes what it opened and gives the pad up.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let deadline = Instant::now() + DROP_WAIT;
            while !thread.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(200));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

struct Worker {
    instance: u64,
    shared: Arc<Shared>,
    bus: Arc<GestureBus>,
    settings: Arc<dyn Fn() -> PadSettings + Send + Sync>,
}

impl Worker {
    /// After a panic in [`Worker::run`]: the pad goes back to the other instances, every
    /// lane this reader may have been bowing is lifted, and the state says why.
    fn recover(&self, panic: &(dyn std::any::Any + Send)) {
        let why = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".into());
        release_all(self.instance);
        for lane in 0..rosin_engine::controller::gesture::LANES {
            let gesture = self.bus.lane(lane);
            if gesture.bow_down {
                self.bus.write(lane, &gesture.lifted(), GestureSource::Sensel);
            }
        }
        nice_plug::nice_log!("The Sensel reader of Rosin #{} stopped: {why}", self.instance);
        self.shared.status.set(SenselState::Crashed(why));
    }

    fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::Acquire)
    }

    /// Waits `duration` or until woken (stop, take-over).
    fn wait(&self, duration: Duration) {
        let until = Instant::now() + duration;
        while !self.stopped() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            std::thread::park_timeout(until - now);
        }
    }

    fn run(&self, config: ReaderConfig) {
        // SAFETY: LibSensel is loaded from where its installers put it, or from the file the
        // player (or a test, with the mock) named in ROSIN_SENSEL_LIB or the config; either
        // is taken to be LibSensel, as sensel.h describes it.
        let loaded = match &config.library {
            Some(path) => unsafe { Library::open(path) },
            None => unsafe { Library::open_default() },
        };
        let library = match loaded {
            Ok(library) => shared_library(library),
            Err(error) => {
                let message = error.to_string();
                report_once(&message);
                self.shared.status.set(SenselState::NoLibrary(message));
                while !self.stopped() {
                    std::thread::park();
                }
                return;
            }
        };
        let path = library.path().to_path_buf();
        *lock(&self.shared.library_path) = Some(path.clone());
        while !self.stopped() {
            if let Err(owner) = claim(&path, self.instance) {
                self.shared.status.set(SenselState::InUseElsewhere { owner });
                self.wait(DISCOVERY_INTERVAL / 4);
                continue;
            }
            let device = library.devices().ok().and_then(|devices| devices.into_iter().next()).and_then(|info| {
                let serial = info.serial.clone();
                library.open_device(&info).ok().map(|device| (device, serial))
            });
            match device {
                Some((device, serial)) => {
                    self.shared.status.connections.fetch_add(1, Ordering::Relaxed);
                    self.shared.status.set(SenselState::Connected { serial });
                    self.play(device, &path);
                    if !self.stopped() && owner_of(&path) == Some(self.instance) {
                        self.shared.status.set(SenselState::Searching);
                    }
                }
                None => {
                    // The claim is kept while searching: the pad comes back to this
                    // instance when it is plugged in again.
                    self.shared.status.set(SenselState::Searching);
                    self.wait(DISCOVERY_INTERVAL);
                }
            }
        }
        release(&path, self.instance);
    }

    /// Reads the open pad until it goes away, the plugin stops or another instance takes
    /// over; then lifts whatever it was playing.
    fn play(&self, mut device: sensel_sys::Device, path: &Path) {
        let info = device.sensor_info();
        let mut mapper = PadMapper::new(info.width_mm as f64, info.height_mm as f64);
        // A pad that refuses a setting still scans with its own; only reads can fail it.
        let _ = device.set_frame_content(FRAME_CONTENT_CONTACTS_MASK);
        let _ = device.set_max_frame_rate(PAD_FRAME_RATE_HZ);
        let _ = device.start_scanning();
        let started = Instant::now();
        let mut last_read_s = 0.0;
        let mut touches: Vec<Touch> = Vec::with_capacity(16);
        'reading: while !self.stopped() && owner_of(path) == Some(self.instance) {
            if device.read_sensor().is_err() {
                break;
            }
            let now_s = started.elapsed().as_secs_f64();
            let available = match device.num_available_frames() {
                Ok(n) => n,
                Err(_) => break,
            };
            for i in 0..available {
                let Ok(frame) = device.next_frame() else { break 'reading };
                touches.clear();
                touches.extend(frame.contacts().iter().map(|c| Touch {
                    id: c.id,
                    x_mm: c.x_pos as f64,
                    y_mm: c.y_pos as f64,
                    force_g: c.total_force as f64,
                    ended: c.state == CONTACT_END,
                }));
                // Frames that waited together were scanned evenly since the last read.
                let time_s = last_read_s + (now_s - last_read_s) * (i + 1) as f64 / available as f64;
                let settings = (self.settings)();
                for (lane, gesture) in mapper.update(&touches, time_s, settings.layout, settings.drum) {
                    self.bus.write(lane, &gesture, GestureSource::Sensel);
                }
                self.shared.status.frames.fetch_add(1, Ordering::Relaxed);
            }
            last_read_s = now_s;
            self.wait(POLL_INTERVAL);
        }
        for (lane, gesture) in mapper.lift_all() {
            self.bus.write(lane, &gesture, GestureSource::Sensel);
        }
    }
}

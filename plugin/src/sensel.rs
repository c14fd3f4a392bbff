//! The Sensel Morph reader: one background thread per loaded LibSensel (in practice one
//! per process), shared by every plugin instance, that loads LibSensel at run time, finds
//! and opens the pad, reads its contacts at 250 Hz and writes the mapped gestures into the
//! playing instance's [`GestureBus`].
//!
//! - An instance joins the reader when it is first activated or its editor draws
//!   ([`LazySensel`]); the first to join starts the thread, and the thread ends once the
//!   last has gone.
//! - No library, or one without the expected symbols: "no Sensel", logged once per
//!   process and reason, and the thread idles until the instances go.
//! - Hot-plug: with no pad, discovery is retried every second. A read error (the pad was
//!   unplugged) lifts every lane it was playing at once, so the bows lift smoothly
//!   through the voices' release, and discovery starts again.
//! - One pad, one player: the pad belongs to one instance at a time, the first to join,
//!   also while the pad is unplugged. The others wait, say so in their editors, and take
//!   over when the owner goes away or when the user asks (the editor's "Take over"
//!   button); the old owner's bows lift, and the pad stays open.
//! - Leaving never waits: an instance that goes ([`SenselReader`]'s `Drop`) takes itself
//!   off the reader's list and wakes it. A reader inside a LibSensel call that takes long
//!   (opening a device can) finishes it on its own. So that its code is still there when it
//!   does, the first reader pins the plugin's library in memory for the rest of the process
//!   ([`pin_this_library`]): a host unloading Rosin leaves it mapped.
//! - One loaded library per process ([`Library`] shared by path), whose lock serialises
//!   every call into it.
//! - A panic in the reader is caught: the pad is closed, the playing lanes lift, every
//!   instance's state says why ([`SenselState::Crashed`]), and the thread leaves; the
//!   shared tables are never left poisoned, so [`LazySensel::restart`] (the editor's
//!   "Restart" button) starts a new reader that plays the pad again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// Reads the pad's settings (an instance's parameters) at every frame.
pub type PadSettingsFn = Arc<dyn Fn() -> PadSettings + Send + Sync>;

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

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// Locks a process-wide table, whatever panicked while it was held: its contents are plain
/// lists, valid after any partial update.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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

// ---- The reader: one thread per library, shared by the instances. ----

/// An instance the reader serves.
struct Client {
    instance: u64,
    bus: Arc<GestureBus>,
    settings: PadSettingsFn,
    status: Arc<SenselStatus>,
}

/// What a reader thread and its instances share.
struct Reader {
    /// Which library it loads (`ReaderConfig::library`).
    config: ReaderConfig,
    /// The instances, oldest first.
    clients: Mutex<Vec<Client>>,
    /// The instance that plays the pad.
    owner: Mutex<Option<u64>>,
    /// The thread, to wake it.
    thread: Mutex<Option<std::thread::Thread>>,
    /// Set when the thread has left (no instance, or a panic): the next instance starts
    /// another.
    ended: AtomicBool,
}

/// The running readers, by library.
static READERS: Mutex<Vec<Arc<Reader>>> = Mutex::new(Vec::new());

impl Reader {
    fn wake(&self) {
        if let Some(thread) = lock(&self.thread).as_ref() {
            thread.unpark();
        }
    }

    fn owner(&self) -> Option<u64> {
        *lock(&self.owner)
    }

    /// Every instance's status, from who owns the pad: `owner_state` for the owner, "played
    /// by" for the others.
    fn tell(&self, owner_state: SenselState) {
        let owner = self.owner();
        for client in lock(&self.clients).iter() {
            if Some(client.instance) == owner {
                client.status.set(owner_state.clone());
            } else if let Some(owner) = owner {
                client.status.set(SenselState::InUseElsewhere { owner });
            }
        }
    }

    fn tell_all(&self, state: SenselState) {
        for client in lock(&self.clients).iter() {
            client.status.set(state.clone());
        }
    }

    /// The owner's bus, settings and status, if it is still there.
    fn owner_client(&self) -> Option<(u64, Arc<GestureBus>, PadSettingsFn, Arc<SenselStatus>)> {
        let owner = self.owner()?;
        lock(&self.clients).iter().find(|c| c.instance == owner).map(|c| (c.instance, c.bus.clone(), c.settings.clone(), c.status.clone()))
    }

    /// Ends the thread's service if no instance is left: under the readers' lock, so that
    /// an instance joining now starts a new reader instead of joining this one.
    fn leave_if_unused(self: &Arc<Self>) -> bool {
        let mut readers = lock(&READERS);
        if !lock(&self.clients).is_empty() {
            return false;
        }
        self.unlist(&mut readers);
        true
    }

    /// Leaves after a panic: the instances see why, and the next start runs a new reader.
    fn leave_crashed(self: &Arc<Self>, why: String) {
        self.unlist(&mut lock(&READERS));
        self.tell_all(SenselState::Crashed(why));
    }

    /// Marks this reader ended and takes it off `readers` (the locked list of running
    /// readers): an instance that joins from now on starts another.
    fn unlist(self: &Arc<Self>, readers: &mut Vec<Arc<Reader>>) {
        self.ended.store(true, Ordering::Release);
        readers.retain(|r| !Arc::ptr_eq(r, self));
    }
}

/// An instance's place at the reader. Dropping it leaves the reader at once: it never
/// waits for the thread (see the module's notes).
pub struct SenselReader {
    instance: u64,
    reader: Arc<Reader>,
    status: Arc<SenselStatus>,
}

impl SenselReader {
    /// Joins the reader of `config`'s library, starting it if none runs. `settings` is read
    /// at every frame.
    pub fn spawn(config: ReaderConfig, bus: Arc<GestureBus>, settings: PadSettingsFn) -> Self {
        pin_this_library();
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        let status = Arc::new(SenselStatus { state: Mutex::new(SenselState::Starting), frames: AtomicU64::new(0), connections: AtomicU64::new(0) });
        let client = Client { instance, bus, settings, status: status.clone() };
        let mut readers = lock(&READERS);
        let running = readers.iter().find(|r| r.config.library == config.library && !r.ended.load(Ordering::Acquire)).cloned();
        let reader = match running {
            Some(reader) => {
                let mut clients = lock(&reader.clients);
                clients.push(client);
                let mut owner = lock(&reader.owner);
                match *owner {
                    Some(owner) => status.set(SenselState::InUseElsewhere { owner }),
                    None => *owner = Some(instance),
                }
                drop((clients, owner));
                reader
            }
            None => {
                let reader = Arc::new(Reader {
                    config,
                    clients: Mutex::new(vec![client]),
                    owner: Mutex::new(Some(instance)),
                    thread: Mutex::new(None),
                    ended: AtomicBool::new(false),
                });
                readers.push(reader.clone());
                let thread_reader = reader.clone();
                let spawned = std::thread::Builder::new().name("rosin-sensel".into()).spawn(move || {
                    let worker = Worker { reader: thread_reader };
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run())) {
                        Ok(()) => {}
                        Err(panic) => worker.recover(panic.as_ref()),
                    }
                });
                match spawned {
                    Ok(handle) => *lock(&reader.thread) = Some(handle.thread().clone()),
                    Err(_) => {
                        reader.unlist(&mut readers);
                        status.set(SenselState::NoLibrary("the reader thread could not start".into()));
                    }
                }
                reader
            }
        };
        drop(readers);
        reader.wake();
        Self { instance, reader, status }
    }

    /// This instance's number, as the editor shows it ("Rosin #n").
    pub fn instance(&self) -> u64 {
        self.instance
    }

    pub fn status(&self) -> Arc<SenselStatus> {
        self.status.clone()
    }

    /// A handle for the editor: the state, and taking the pad over.
    pub fn control(&self) -> SenselControl {
        SenselControl { instance: self.instance, reader: self.reader.clone(), status: self.status.clone() }
    }

    /// Takes the pad from whichever instance has it.
    pub fn take_over(&self) {
        self.control().take_over();
    }
}

impl Drop for SenselReader {
    /// Leaves the reader: off its list, the pad passed to the oldest instance left (whose
    /// bows the reader lifts from the old owner's bus), and the thread woken. Never waits.
    fn drop(&mut self) {
        let mut clients = lock(&self.reader.clients);
        clients.retain(|c| c.instance != self.instance);
        let mut owner = lock(&self.reader.owner);
        if *owner == Some(self.instance) {
            *owner = clients.first().map(|c| c.instance);
        }
        drop((clients, owner));
        self.status.set(SenselState::Stopped);
        self.reader.wake();
    }
}

/// A reader joined on first use: when its instance is activated or its editor draws, never
/// when a host only scans the plugin (creating instances, and their editor objects, and
/// dropping them).
pub struct LazySensel {
    reader: Mutex<Option<SenselReader>>,
    bus: Arc<GestureBus>,
    settings: PadSettingsFn,
}

impl LazySensel {
    pub fn new(bus: Arc<GestureBus>, settings: PadSettingsFn) -> Self {
        Self { reader: Mutex::new(None), bus, settings }
    }

    /// Joins the reader if this instance has not yet, and returns its handle.
    pub fn start(&self) -> Option<SenselControl> {
        let mut reader = lock(&self.reader);
        let reader = reader.get_or_insert_with(|| SenselReader::spawn(ReaderConfig::default(), self.bus.clone(), self.settings.clone()));
        Some(reader.control())
    }

    /// Leaves the reader and joins again: after a crash, a new reader starts and plays the
    /// pad.
    pub fn restart(&self) -> Option<SenselControl> {
        let mut reader = lock(&self.reader);
        drop(reader.take());
        let reader = reader.insert(SenselReader::spawn(ReaderConfig::default(), self.bus.clone(), self.settings.clone()));
        Some(reader.control())
    }
}

/// The editor's handle on its instance's place at the reader.
#[derive(Clone)]
pub struct SenselControl {
    instance: u64,
    reader: Arc<Reader>,
    status: Arc<SenselStatus>,
}

impl SenselControl {
    pub fn instance(&self) -> u64 {
        self.instance
    }

    pub fn state(&self) -> SenselState {
        self.status.state()
    }

    pub fn frames(&self) -> u64 {
        self.status.frames()
    }

    /// Takes the pad from whichever instance has it; that one's bows lift and it waits.
    pub fn take_over(&self) {
        if lock(&self.reader.clients).iter().any(|c| c.instance == self.instance) {
            *lock(&self.reader.owner) = Some(self.instance);
        }
        self.reader.wake();
    }
}

struct Worker {
    reader: Arc<Reader>,
}

impl Worker {
    /// After a panic in [`Worker::run`] (the pad it held was closed by the unwinding): the
    /// owner's lanes lift, every instance's state says why, and the reader leaves.
    fn recover(&self, panic: &(dyn std::any::Any + Send)) {
        let why = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".into());
        if let Some((_, bus, _, _)) = self.reader.owner_client() {
            for lane in 0..rosin_engine::controller::gesture::LANES {
                let gesture = bus.lane(lane);
                if gesture.bow_down {
                    bus.write(lane, &gesture.lifted(), GestureSource::Sensel);
                }
            }
        }
        nice_plug::nice_log!("The Sensel reader stopped: {why}");
        self.reader.leave_crashed(why);
    }

    /// Whether the thread's service is over (no instance left).
    fn done(&self) -> bool {
        self.reader.leave_if_unused()
    }

    /// Waits `duration` or until woken (an instance joins, leaves or takes over).
    fn wait(&self, duration: Duration) {
        std::thread::park_timeout(duration);
    }

    fn run(&self) {
        // SAFETY: LibSensel is loaded from where its installers put it, or from the file the
        // player (or a test, with the mock) named in ROSIN_SENSEL_LIB or the config; either
        // is taken to be LibSensel, as sensel.h describes it.
        let loaded = match &self.reader.config.library {
            Some(path) => unsafe { Library::open(path) },
            None => unsafe { Library::open_default() },
        };
        let library = match loaded {
            Ok(library) => shared_library(library),
            Err(error) => {
                let message = error.to_string();
                report_once(&message);
                while !self.done() {
                    self.reader.tell_all(SenselState::NoLibrary(message.clone()));
                    self.wait(DISCOVERY_INTERVAL);
                }
                return;
            }
        };
        while !self.done() {
            self.reader.tell(SenselState::Searching);
            let device = library.devices().ok().and_then(|devices| devices.into_iter().next()).and_then(|info| {
                let serial = info.serial.clone();
                library.open_device(&info).ok().map(|device| (device, serial))
            });
            match device {
                Some((device, serial)) => self.play(device, &serial),
                // The owner keeps the pad while it is unplugged: it comes back to it.
                None => self.wait(DISCOVERY_INTERVAL),
            }
        }
    }

    /// Reads the open pad for whichever instance owns it, until it goes away or no instance
    /// is left; a take-over lifts the old owner's bows and plays on for the new one.
    fn play(&self, mut device: sensel_sys::Device, serial: &str) {
        let info = device.sensor_info();
        // A pad that refuses a setting still scans with its own; only reads can fail it.
        let _ = device.set_frame_content(FRAME_CONTENT_CONTACTS_MASK);
        let _ = device.set_max_frame_rate(PAD_FRAME_RATE_HZ);
        let _ = device.start_scanning();
        let started = Instant::now();
        let mut last_read_s = 0.0;
        let mut touches: Vec<Touch> = Vec::with_capacity(16);
        let mut playing: Option<(u64, Arc<GestureBus>, PadMapper)> = None;
        let lift = |playing: &mut Option<(u64, Arc<GestureBus>, PadMapper)>| {
            if let Some((_, bus, mut mapper)) = playing.take() {
                for (lane, gesture) in mapper.lift_all() {
                    bus.write(lane, &gesture, GestureSource::Sensel);
                }
            }
        };
        'reading: while !self.done() {
            let Some((owner, bus, settings, status)) = self.reader.owner_client() else {
                lift(&mut playing);
                self.wait(POLL_INTERVAL);
                continue;
            };
            if playing.as_ref().map(|(id, _, _)| *id) != Some(owner) {
                lift(&mut playing);
                playing = Some((owner, bus, PadMapper::new(info.width_mm as f64, info.height_mm as f64)));
                status.connections.fetch_add(1, Ordering::Relaxed);
                self.reader.tell(SenselState::Connected { serial: serial.to_string() });
            }
            let Some((_, bus, mapper)) = playing.as_mut() else { continue };
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
                let settings = settings();
                for (lane, gesture) in mapper.update(&touches, time_s, settings.layout, settings.drum) {
                    bus.write(lane, &gesture, GestureSource::Sensel);
                }
                status.frames.fetch_add(1, Ordering::Relaxed);
            }
            last_read_s = now_s;
            self.wait(POLL_INTERVAL);
        }
        lift(&mut playing);
    }
}

//! LibSensel (the Sensel Morph's C library), loaded at run time.
//!
//! [`ffi`] declares the C API exactly as `sensel.h` does. [`Library`] loads LibSensel with
//! `libloading` and resolves the functions Rosin needs; nothing is linked at build time,
//! so a machine without LibSensel still loads every program that uses this crate and
//! simply gets a [`LoadError`] back. [`Device`] wraps one open sensor.
//!
//! Typical use, on a reader thread:
//!
//! ```ignore
//! // SAFETY: LibSensel from where its installer put it.
//! let lib = unsafe { sensel_sys::Library::open_default() }?;
//! let info = lib.devices()?.into_iter().next().ok_or("no Sensel plugged in")?;
//! let mut device = lib.open_device(&info)?;
//! device.set_frame_content(sensel_sys::FRAME_CONTENT_CONTACTS_MASK)?;
//! device.start_scanning()?;
//! loop {
//!     device.read_sensor()?;
//!     for _ in 0..device.num_available_frames()? {
//!         let frame = device.next_frame()?;
//!         for contact in frame.contacts() { /* contact.x_pos is in mm */ }
//!     }
//! }
//! ```

pub mod ffi;
/// The stand-in library's control functions, for tests: behind the `mock` feature, which
/// the plugin does not enable, so the product carries none of it.
#[cfg(feature = "mock")]
pub mod mock;

pub use ffi::*;

use ffi::c_bytes_to_string;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard};

/// Environment variable naming the LibSensel file to try before the platform defaults.
pub const ENV_OVERRIDE: &str = "ROSIN_SENSEL_LIB";

/// The paths [`Library::open_default`] tries, in order: the [`ENV_OVERRIDE`] path if the
/// variable is set and not empty, then the platform's usual names for LibSensel.
pub fn default_candidates() -> Vec<PathBuf> {
    candidates_with_override(std::env::var_os(ENV_OVERRIDE))
}

fn candidates_with_override(override_path: Option<OsString>) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = override_path.filter(|path| !path.is_empty()) {
        candidates.push(path.into());
    }
    // Bare names go through the system's search path (LD_LIBRARY_PATH, PATH, ...).
    #[cfg(windows)]
    candidates.push("LibSensel.dll".into());
    #[cfg(target_os = "macos")]
    candidates.extend(["libsensel.dylib", "/usr/local/lib/libsensel.dylib"].map(PathBuf::from));
    #[cfg(all(unix, not(target_os = "macos")))]
    candidates.extend(
        [
            "libsensel.so",
            "/usr/lib/libsensel.so",
            "/usr/local/lib/libsensel.so",
        ]
        .map(PathBuf::from),
    );
    candidates
}

/// Why LibSensel could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// No candidate could be loaded; each path tried comes with the loader's reason.
    NotFound {
        /// Every path tried, with why it failed.
        tried: Vec<(PathBuf, String)>,
    },
    /// The library loaded but does not export a function the API table needs.
    MissingSymbol {
        /// The library that was loaded.
        path: PathBuf,
        /// The first missing symbol.
        symbol: &'static str,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound { tried } => {
                write!(f, "no Sensel: LibSensel not found (tried ")?;
                if tried.is_empty() {
                    write!(f, "nothing")?;
                }
                for (i, (path, reason)) in tried.iter().enumerate() {
                    if i > 0 {
                        write!(f, "; ")?;
                    }
                    // Loader messages are one line, but make sure of it.
                    let reason = reason.replace(['\n', '\r'], " ");
                    write!(f, "{}: {}", path.display(), reason.trim())?;
                }
                write!(f, ")")
            }
            LoadError::MissingSymbol { path, symbol } => {
                write!(f, "no Sensel: {} lacks the symbol {symbol}", path.display())
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A LibSensel call returned `SENSEL_ERROR` (or an unusable result).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenselError {
    /// The C function that failed, e.g. `"senselReadSensor"`.
    pub call: &'static str,
}

impl fmt::Display for SenselError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sensel: {} failed", self.call)
    }
}

impl std::error::Error for SenselError {}

fn check(call: &'static str, status: SenselStatus) -> Result<(), SenselError> {
    if status == SENSEL_OK {
        Ok(())
    } else {
        Err(SenselError { call })
    }
}

/// A loaded LibSensel with its function table.
///
/// Shared as `Arc<Library>`: each [`Device`] holds a clone, so the library stays loaded
/// until the last device is closed.
pub struct Library {
    api: SenselApi,
    path: PathBuf,
    /// Serialises every call into the library. LibSensel keeps global state (the device
    /// list that `senselOpenDeviceByID` reads) and promises nothing about threads; the
    /// lock is uncontended in normal use (one reader thread).
    call_lock: Mutex<()>,
    /// Keeps the code behind `api` mapped. Declared last so it is dropped last.
    _lib: libloading::Library,
}

// `Library` is `Send` and `Sync` without an `unsafe impl`: `libloading::Library` is both,
// the table holds plain function pointers, and every call through `&Library` takes
// `call_lock`. The `library_and_device_are_send` test pins this down.

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Library {
    /// Loads LibSensel (or a stand-in such as `sensel-mock`) from `path` and resolves
    /// every symbol of [`SenselApi`].
    ///
    /// # Safety
    ///
    /// Loading a library runs its initialisers, and every later call runs its code: `path`
    /// must be LibSensel, or a library that exports its functions with `sensel.h`'s
    /// signatures and behaviour (such as `sensel-mock`), and whose initialisers are sound
    /// to run in this process.
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<Arc<Library>, LoadError> {
        let path = path.as_ref();
        // SAFETY: the caller vouches for the library at `path` (this function's contract).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|err| LoadError::NotFound {
            tried: vec![(path.to_path_buf(), err.to_string())],
        })?;
        // SAFETY: a library exporting these names is taken to follow sensel.h, and the
        // table is stored next to `lib`, which outlives every call through it.
        let api = unsafe { SenselApi::load(&lib) }.map_err(|symbol| LoadError::MissingSymbol {
            path: path.to_path_buf(),
            symbol,
        })?;
        Ok(Arc::new(Library {
            api,
            path: path.to_path_buf(),
            call_lock: Mutex::new(()),
            _lib: lib,
        }))
    }

    /// Tries each of [`default_candidates`] in order and returns the first that loads
    /// with all its symbols. On failure the error lists every path tried and why.
    ///
    /// # Safety
    ///
    /// As [`Library::open`], for every candidate: the places LibSensel's installers put it,
    /// and the file `ROSIN_SENSEL_LIB` names if it is set.
    pub unsafe fn open_default() -> Result<Arc<Library>, LoadError> {
        // SAFETY: the caller vouches for the candidates (this function's contract).
        unsafe { Self::open_first(default_candidates()) }
    }

    /// Tries `candidates` in order, like [`Library::open_default`].
    ///
    /// # Safety
    ///
    /// As [`Library::open`], for every candidate.
    pub unsafe fn open_first(
        candidates: impl IntoIterator<Item = PathBuf>,
    ) -> Result<Arc<Library>, LoadError> {
        let mut tried = Vec::new();
        for candidate in candidates {
            // SAFETY: the caller vouches for every candidate.
            match unsafe { Library::open(&candidate) } {
                Ok(lib) => return Ok(lib),
                Err(LoadError::NotFound { tried: reasons }) => tried.extend(reasons),
                Err(LoadError::MissingSymbol { symbol, .. }) => {
                    tried.push((candidate, format!("lacks the symbol {symbol}")));
                }
            }
        }
        Err(LoadError::NotFound { tried })
    }

    /// The path this library was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw function table. Calling through it bypasses this wrapper's locking and
    /// bookkeeping, hence `unsafe` to use.
    pub fn api(&self) -> &SenselApi {
        &self.api
    }

    /// Runs one call into the library under the call lock.
    fn call<R>(&self, f: impl FnOnce(&SenselApi) -> R) -> R {
        let _guard: MutexGuard<'_, ()> = self
            .call_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&self.api)
    }

    /// Scans for attached Sensel devices.
    pub fn devices(&self) -> Result<Vec<DeviceInfo>, SenselError> {
        let mut list = SenselDeviceList::default();
        // SAFETY: `list` is a valid, writable SenselDeviceList.
        let status = self.call(|api| unsafe { (api.senselGetDeviceList)(&mut list) });
        check("senselGetDeviceList", status)?;
        let count = usize::from(list.num_devices).min(SENSEL_MAX_DEVICES);
        Ok(list.devices[..count]
            .iter()
            .map(DeviceInfo::from_raw)
            .collect())
    }

    /// Opens the device `info` (from [`Library::devices`]), reads its sensor geometry and
    /// allocates its frame buffer. The device keeps this library loaded.
    pub fn open_device(self: &Arc<Self>, info: &DeviceInfo) -> Result<Device, SenselError> {
        let mut handle: SenselHandle = ptr::null_mut();
        // SAFETY: `handle` is a valid out-pointer. On failure LibSensel may leave a freed
        // pointer in it, so it is only kept when the call succeeds.
        let status = self.call(|api| unsafe { (api.senselOpenDeviceByID)(&mut handle, info.idx) });
        if status != SENSEL_OK || handle.is_null() {
            return Err(SenselError {
                call: "senselOpenDeviceByID",
            });
        }
        // From here on, dropping `device` closes the handle, so early returns clean up.
        let mut device = Device {
            handle,
            frame: ptr::null_mut(),
            sensor_info: SensorInfo::default(),
            info: info.clone(),
            scanning: false,
            lib: Arc::clone(self),
        };

        let mut raw_info = SenselSensorInfo::default();
        // SAFETY: open handle, valid out-pointer.
        let status = self.call(|api| unsafe { (api.senselGetSensorInfo)(handle, &mut raw_info) });
        check("senselGetSensorInfo", status)?;
        device.sensor_info = SensorInfo::from_raw(&raw_info);

        let mut frame: *mut SenselFrameData = ptr::null_mut();
        // SAFETY: open handle, valid out-pointer.
        let status = self.call(|api| unsafe { (api.senselAllocateFrameData)(handle, &mut frame) });
        if status != SENSEL_OK || frame.is_null() {
            return Err(SenselError {
                call: "senselAllocateFrameData",
            });
        }
        device.frame = frame;
        Ok(device)
    }
}

/// One attached device, as listed by [`Library::devices`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Index to open the device by.
    pub idx: u8,
    /// Serial number, e.g. `"SM01234567890"`.
    pub serial: String,
    /// Serial port the device is attached to.
    pub com_port: String,
    raw: SenselDeviceID,
}

impl DeviceInfo {
    fn from_raw(raw: &SenselDeviceID) -> DeviceInfo {
        DeviceInfo {
            idx: raw.idx,
            serial: c_bytes_to_string(&raw.serial_num),
            com_port: c_bytes_to_string(&raw.com_port),
            raw: *raw,
        }
    }

    /// The entry exactly as LibSensel reported it.
    pub fn raw(&self) -> &SenselDeviceID {
        &self.raw
    }
}

/// Sensor geometry of an open device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SensorInfo {
    /// Most contacts reported in one frame.
    pub max_contacts: u8,
    /// Number of sensor rows.
    pub num_rows: u16,
    /// Number of sensor columns.
    pub num_cols: u16,
    /// Active width in mm.
    pub width_mm: f32,
    /// Active height in mm.
    pub height_mm: f32,
}

impl SensorInfo {
    fn from_raw(raw: &SenselSensorInfo) -> SensorInfo {
        SensorInfo {
            max_contacts: raw.max_contacts,
            num_rows: raw.num_rows,
            num_cols: raw.num_cols,
            width_mm: raw.width,
            height_mm: raw.height,
        }
    }
}

/// An open Sensel device with its frame buffer.
///
/// Dropping it stops scanning (if started), frees the frame buffer and closes the handle.
pub struct Device {
    handle: SenselHandle,
    /// Allocated by LibSensel; null only while `open_device` is still setting up.
    frame: *mut SenselFrameData,
    sensor_info: SensorInfo,
    info: DeviceInfo,
    scanning: bool,
    lib: Arc<Library>,
}

// SAFETY: `handle` and `frame` are owned exclusively by this `Device`: nothing else holds
// them, and every use goes through `&mut self` (or `Drop`), so moving the device to
// another thread moves sole access with it. LibSensel's handles are not tied to the
// thread that opened them, and calls into the library are serialised by the library's
// call lock. `Device` is deliberately not `Sync`.
unsafe impl Send for Device {}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("serial", &self.info.serial)
            .field("sensor_info", &self.sensor_info)
            .field("scanning", &self.scanning)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// The sensor's geometry, read when the device was opened.
    pub fn sensor_info(&self) -> SensorInfo {
        self.sensor_info
    }

    /// The list entry this device was opened from.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The library this device was opened with.
    pub fn library(&self) -> &Arc<Library> {
        &self.lib
    }

    fn simple_call(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&SenselApi, SenselHandle) -> SenselStatus,
    ) -> Result<(), SenselError> {
        let handle = self.handle;
        check(name, self.lib.call(|api| f(api, handle)))
    }

    /// Chooses what frames carry, as a combination of `FRAME_CONTENT_*_MASK`.
    pub fn set_frame_content(&mut self, mask: u8) -> Result<(), SenselError> {
        // SAFETY: open handle.
        self.simple_call("senselSetFrameContent", |api, h| unsafe {
            (api.senselSetFrameContent)(h, mask)
        })
    }

    /// Caps the rate at which the device reports frames.
    pub fn set_max_frame_rate(&mut self, rate_hz: u16) -> Result<(), SenselError> {
        // SAFETY: open handle.
        self.simple_call("senselSetMaxFrameRate", |api, h| unsafe {
            (api.senselSetMaxFrameRate)(h, rate_hz)
        })
    }

    /// Starts scanning; frames become available through [`Device::read_sensor`].
    pub fn start_scanning(&mut self) -> Result<(), SenselError> {
        // SAFETY: open handle.
        self.simple_call("senselStartScanning", |api, h| unsafe {
            (api.senselStartScanning)(h)
        })?;
        self.scanning = true;
        Ok(())
    }

    /// Stops scanning. Dropping the device does this too.
    pub fn stop_scanning(&mut self) -> Result<(), SenselError> {
        // SAFETY: open handle.
        self.simple_call("senselStopScanning", |api, h| unsafe {
            (api.senselStopScanning)(h)
        })?;
        self.scanning = false;
        Ok(())
    }

    /// Reads all pending frames from the sensor into LibSensel's buffer. Fails when the
    /// device has gone away (unplugged).
    pub fn read_sensor(&mut self) -> Result<(), SenselError> {
        // SAFETY: open handle.
        self.simple_call("senselReadSensor", |api, h| unsafe {
            (api.senselReadSensor)(h)
        })
    }

    /// How many frames [`Device::next_frame`] can hand out before the next read.
    pub fn num_available_frames(&mut self) -> Result<u32, SenselError> {
        let mut count: u32 = 0;
        // SAFETY: open handle, valid out-pointer.
        self.simple_call("senselGetNumAvailableFrames", |api, h| unsafe {
            (api.senselGetNumAvailableFrames)(h, &mut count)
        })?;
        Ok(count)
    }

    /// Takes the oldest available frame. Fails when none is available.
    pub fn next_frame(&mut self) -> Result<Frame<'_>, SenselError> {
        let frame = self.frame;
        // SAFETY: open handle; `frame` was allocated by senselAllocateFrameData for it.
        self.simple_call("senselGetFrame", |api, h| unsafe {
            (api.senselGetFrame)(h, frame)
        })?;
        // SAFETY: `frame` is valid and not null once the device is open, and the
        // returned borrow of `self` keeps the next call from overwriting it.
        let data = unsafe { &*frame };
        Ok(Frame {
            data,
            max_contacts: usize::from(self.sensor_info.max_contacts),
        })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let handle = self.handle;
        let frame = self.frame;
        let scanning = self.scanning;
        // Errors are ignored: there is nothing left to do about them (an unplugged
        // device fails here routinely).
        self.lib.call(|api| {
            // SAFETY: `handle` is open and `frame` (if not null) belongs to it; neither
            // is used again after this.
            unsafe {
                if scanning {
                    (api.senselStopScanning)(handle);
                }
                if !frame.is_null() {
                    (api.senselFreeFrameData)(handle, frame);
                }
                (api.senselClose)(handle);
            }
        });
    }
}

/// One frame, borrowed from the device's frame buffer until the next [`Device`] call.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a> {
    data: &'a SenselFrameData,
    max_contacts: usize,
}

impl<'a> Frame<'a> {
    /// The frame's contacts; empty when there are none or contacts were not requested.
    pub fn contacts(&self) -> &'a [SenselContact] {
        let data = self.data;
        if data.contacts.is_null() || data.n_contacts == 0 {
            return &[];
        }
        // LibSensel does not bound-check the count it writes; never read past the
        // buffer it allocated (`max_contacts` entries).
        let count = usize::from(data.n_contacts).min(self.max_contacts);
        // SAFETY: `contacts` points to `max_contacts` contacts, the first `n_contacts`
        // of which were written by senselGetFrame; the borrow keeps them unchanged.
        unsafe { std::slice::from_raw_parts(data.contacts, count) }
    }

    /// Frames dropped between the previous frame and this one.
    pub fn lost_frame_count(&self) -> i32 {
        self.data.lost_frame_count
    }

    /// What the frame carries (`FRAME_CONTENT_*_MASK`).
    pub fn content_bit_mask(&self) -> u8 {
        self.data.content_bit_mask
    }

    /// The raw frame.
    pub fn raw(&self) -> &'a SenselFrameData {
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_put_the_override_first() {
        let plain = candidates_with_override(None);
        assert!(!plain.is_empty());
        let with = candidates_with_override(Some("/opt/sensel/libsensel.so".into()));
        assert_eq!(with[0], PathBuf::from("/opt/sensel/libsensel.so"));
        assert_eq!(&with[1..], &plain[..]);
        assert_eq!(candidates_with_override(Some("".into())), plain);
        #[cfg(target_os = "linux")]
        assert_eq!(
            plain,
            [
                "libsensel.so",
                "/usr/lib/libsensel.so",
                "/usr/local/lib/libsensel.so"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn errors_read_as_one_line() {
        let not_found = LoadError::NotFound {
            tried: vec![
                (
                    "libsensel.so".into(),
                    "libsensel.so: cannot open shared object file".into(),
                ),
                ("/usr/lib/libsensel.so".into(), "gone\nreally".into()),
            ],
        };
        let text = not_found.to_string();
        assert!(
            text.starts_with("no Sensel: LibSensel not found (tried libsensel.so: "),
            "{text}"
        );
        assert!(!text.contains('\n'), "{text}");
        assert!(
            text.contains("; /usr/lib/libsensel.so: gone really)"),
            "{text}"
        );

        let missing = LoadError::MissingSymbol {
            path: "/x/libfoo.so".into(),
            symbol: "senselGetFrame",
        };
        assert_eq!(
            missing.to_string(),
            "no Sensel: /x/libfoo.so lacks the symbol senselGetFrame"
        );

        assert_eq!(
            SenselError {
                call: "senselReadSensor"
            }
            .to_string(),
            "Sensel: senselReadSensor failed"
        );
    }

    #[test]
    fn open_first_collects_every_reason() {
        // SAFETY: neither file exists.
        let err = unsafe { Library::open_first(["/nonexistent/a.so", "/nonexistent/b.so"].map(PathBuf::from)) }.unwrap_err();
        match err {
            LoadError::NotFound { tried } => {
                assert_eq!(tried.len(), 2);
                assert_eq!(tried[0].0, PathBuf::from("/nonexistent/a.so"));
                assert_eq!(tried[1].0, PathBuf::from("/nonexistent/b.so"));
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    }

    #[test]
    fn library_and_device_are_send() {
        fn send<T: Send>() {}
        fn sync<T: Sync>() {}
        send::<Library>();
        sync::<Library>();
        send::<Arc<Library>>();
        send::<Device>();
        send::<(Arc<Library>, Device)>();
        send::<LoadError>();
        sync::<LoadError>();
        send::<SenselError>();
    }
}

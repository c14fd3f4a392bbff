//! Test helper: the control functions of the `sensel-mock` library.
//!
//! `sensel-mock` is a fake LibSensel (one simulated Sensel Morph). Load it as LibSensel
//! with [`crate::Library::open`] and steer it from tests with [`MockControl`], opened on
//! the same file: both share the mock's one global state.

use std::path::{Path, PathBuf};

use crate::ffi::SenselContact;
use crate::LoadError;

/// The mock's file name on this platform (`libsensel_mock.so` on Linux).
pub fn file_name() -> String {
    format!(
        "{}sensel_mock{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// Where `cargo build -p sensel-mock` puts the mock, given the target directory
/// (e.g. `<workspace>/target`) and the profile directory name (e.g. `"debug"`).
pub fn built_path(target_dir: &Path, profile: &str) -> PathBuf {
    target_dir.join(profile).join(file_name())
}

/// `void senselMockPushFrame(const SenselContact *contacts, unsigned int n)`.
pub type PushFrameFn = unsafe extern "C" fn(contacts: *const SenselContact, n: u32);
/// `void senselMockSetPlugged(bool plugged)`.
pub type SetPluggedFn = unsafe extern "C" fn(plugged: bool);
/// `int senselMockOpenHandles(void)`.
pub type OpenHandlesFn = unsafe extern "C" fn() -> i32;
/// `uint64_t senselMockReadCount(void)`.
pub type ReadCountFn = unsafe extern "C" fn() -> u64;
/// `unsigned int senselMockQueuedFrames(void)`.
pub type QueuedFramesFn = unsafe extern "C" fn() -> u32;
/// `void senselMockReset(void)`.
pub type ResetFn = unsafe extern "C" fn();
/// `int senselMockLiveFrameData(void)`.
pub type LiveFrameDataFn = unsafe extern "C" fn() -> i32;
/// `void senselMockSetOpenDelayMs(unsigned int ms)`.
pub type SetOpenDelayFn = unsafe extern "C" fn(ms: u32);
/// `int senselMockCallsInFlight(void)` and `int senselMockMostCallsAtOnce(void)`.
pub type CallsFn = unsafe extern "C" fn() -> i32;

/// Safe handles on the mock's control functions.
pub struct MockControl {
    push_frame: PushFrameFn,
    set_plugged: SetPluggedFn,
    open_handles: OpenHandlesFn,
    read_count: ReadCountFn,
    queued_frames: QueuedFramesFn,
    reset: ResetFn,
    live_frame_data: LiveFrameDataFn,
    set_open_delay: SetOpenDelayFn,
    calls_in_flight: CallsFn,
    most_calls_at_once: CallsFn,
    /// Keeps the functions above mapped; dropped last.
    _lib: libloading::Library,
}

impl std::fmt::Debug for MockControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockControl").finish_non_exhaustive()
    }
}

/// Copies one function pointer out of the library.
///
/// # Safety
/// `T` must be the symbol's true type.
unsafe fn control<T: Copy>(
    lib: &libloading::Library,
    path: &Path,
    name: &'static str,
) -> Result<T, LoadError> {
    // SAFETY: forwarded to the caller.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|sym| *sym)
        .map_err(|_| LoadError::MissingSymbol {
            path: path.to_path_buf(),
            symbol: name,
        })
}

impl MockControl {
    /// Opens the mock's control functions from the mock library at `path`.
    ///
    /// # Safety
    ///
    /// `path` must be `sensel-mock` (loading a library runs its initialisers, and the
    /// control functions are called with the mock's signatures).
    pub unsafe fn open(path: impl AsRef<Path>) -> Result<MockControl, LoadError> {
        let path = path.as_ref();
        // SAFETY: the caller vouches that the path is sensel-mock (this function's contract).
        let lib = unsafe { libloading::Library::new(path) }.map_err(|err| LoadError::NotFound {
            tried: vec![(path.to_path_buf(), err.to_string())],
        })?;
        // SAFETY: the types match the `#[no_mangle]` definitions in sensel-mock, and `lib`
        // is stored alongside the pointers.
        unsafe {
            Ok(MockControl {
                push_frame: control(&lib, path, "senselMockPushFrame")?,
                set_plugged: control(&lib, path, "senselMockSetPlugged")?,
                open_handles: control(&lib, path, "senselMockOpenHandles")?,
                read_count: control(&lib, path, "senselMockReadCount")?,
                queued_frames: control(&lib, path, "senselMockQueuedFrames")?,
                reset: control(&lib, path, "senselMockReset")?,
                live_frame_data: control(&lib, path, "senselMockLiveFrameData")?,
                set_open_delay: control(&lib, path, "senselMockSetOpenDelayMs")?,
                calls_in_flight: control(&lib, path, "senselMockCallsInFlight")?,
                most_calls_at_once: control(&lib, path, "senselMockMostCallsAtOnce")?,
                _lib: lib,
            })
        }
    }

    /// Queues one frame; `senselReadSensor` hands queued frames out in order. At most
    /// 16 contacts (the sensor's maximum) are kept.
    pub fn push_frame(&self, contacts: &[SenselContact]) {
        let n = u32::try_from(contacts.len()).unwrap_or(u32::MAX);
        // SAFETY: `contacts` is valid for `n` reads for the duration of the call.
        unsafe { (self.push_frame)(contacts.as_ptr(), n) }
    }

    /// Plugs the simulated Morph in or pulls it out.
    pub fn set_plugged(&self, plugged: bool) {
        // SAFETY: no arguments to check.
        unsafe { (self.set_plugged)(plugged) }
    }

    /// Makes opening the device take `ms` milliseconds (0: at once).
    pub fn set_open_delay_ms(&self, ms: u32) {
        // SAFETY: no arguments to check.
        unsafe { (self.set_open_delay)(ms) }
    }

    /// LibSensel calls running now.
    pub fn calls_in_flight(&self) -> i32 {
        // SAFETY: no arguments to check.
        unsafe { (self.calls_in_flight)() }
    }

    /// The most LibSensel calls that ran at once so far.
    pub fn most_calls_at_once(&self) -> i32 {
        // SAFETY: no arguments to check.
        unsafe { (self.most_calls_at_once)() }
    }

    /// Handles opened and not yet closed.
    pub fn open_handles(&self) -> i32 {
        // SAFETY: no arguments to check.
        unsafe { (self.open_handles)() }
    }

    /// `senselReadSensor` calls since the last reset.
    pub fn read_count(&self) -> u64 {
        // SAFETY: no arguments to check.
        unsafe { (self.read_count)() }
    }

    /// Frames pushed and not yet read.
    pub fn queued_frames(&self) -> u32 {
        // SAFETY: no arguments to check.
        unsafe { (self.queued_frames)() }
    }

    /// Back to plugged in, nothing queued, no contacts, counters at zero (open handles
    /// are kept: they belong to whoever opened them).
    pub fn reset(&self) {
        // SAFETY: no arguments to check.
        unsafe { (self.reset)() }
    }

    /// Frame buffers allocated with `senselAllocateFrameData` and not yet freed.
    pub fn live_frame_data(&self) -> i32 {
        // SAFETY: no arguments to check.
        unsafe { (self.live_frame_data)() }
    }
}

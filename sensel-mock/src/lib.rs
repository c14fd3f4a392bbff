//! A fake LibSensel for tests: one simulated Sensel Morph.
//!
//! Built as a shared library exporting the LibSensel functions that `sensel-sys` loads,
//! with the signatures of `sensel.h`, plus `senselMock*` control functions for tests.
//! All handles share one global state behind a mutex (this is test code, not real-time
//! code).
//!
//! Frames: every successful `senselReadSensor` makes exactly one frame available. It is
//! the next frame pushed with `senselMockPushFrame`, or, when none is queued, the last
//! frame's live contacts held still (state `CONTACT_MOVE`, deltas zero; ended contacts
//! are gone). With the environment variable `SENSEL_MOCK_DEMO` set, an empty queue
//! instead plays a looping two-finger performance (see [`demo_frame`]).
//!
//! The LibSensel functions use `extern "system"` like the header's `WINAPI` (the plain C
//! convention on every 64-bit target); the `senselMock*` functions are `extern "C"`.

#![allow(non_snake_case)]

use std::collections::VecDeque;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use sensel_sys::ffi::*;

/// Serial number of the simulated device.
pub const MOCK_SERIAL: &str = "MOCK0001";
/// Port name of the simulated device.
#[cfg(windows)]
pub const MOCK_COM_PORT: &str = "COM9";
/// Port name of the simulated device.
#[cfg(not(windows))]
pub const MOCK_COM_PORT: &str = "/dev/ttyMOCK0";
/// Sensor width in mm (a Morph's active area).
pub const SENSOR_WIDTH_MM: f32 = 230.0;
/// Sensor height in mm.
pub const SENSOR_HEIGHT_MM: f32 = 130.0;
/// Most contacts in one frame; also the capacity of every frame buffer.
pub const MAX_CONTACTS: usize = 16;
/// Sensor rows.
pub const NUM_ROWS: u16 = 185;
/// Sensor columns.
pub const NUM_COLS: u16 = 105;
/// Frames kept between `senselReadSensor` and `senselGetFrame`; older ones are dropped
/// and counted in the next frame's `lost_frame_count`.
pub const MAX_BUFFERED_FRAMES: usize = 64;

/// Environment variable that turns on the demo performance (read once per process).
pub const DEMO_ENV: &str = "SENSEL_MOCK_DEMO";
/// Frame rate the demo assumes when turning frames read into time.
pub const DEMO_FRAME_RATE_HZ: f64 = 500.0;
/// Demo finger 1's x position in mm.
pub const DEMO_FINGER1_X_MM: f64 = 80.0;
/// Demo finger 1's lowest y in mm.
pub const DEMO_FINGER1_Y_MIN_MM: f64 = 30.0;
/// Demo finger 1's highest y in mm.
pub const DEMO_FINGER1_Y_MAX_MM: f64 = 100.0;
/// Demo finger 1's speed along y in mm/s.
pub const DEMO_FINGER1_SPEED_MM_PER_S: f64 = 150.0;
/// Demo finger 1's mean force in grams.
pub const DEMO_FINGER1_FORCE_G: f64 = 300.0;
/// Demo finger 2's position in mm.
pub const DEMO_FINGER2_XY_MM: (f64, f64) = (150.0, 65.0);
/// Demo finger 2's force in grams.
pub const DEMO_FINGER2_FORCE_G: f64 = 200.0;

const SENSOR_CELLS: usize = NUM_ROWS as usize * NUM_COLS as usize;

/// A frame made available by `senselReadSensor`, waiting for `senselGetFrame`.
struct BufferedFrame {
    contacts: Vec<SenselContact>,
    lost_frame_count: i32,
}

struct State {
    plugged: bool,
    open_handles: i32,
    live_frame_data: i32,
    read_count: u64,
    /// Frames pushed by tests, not yet read.
    queue: VecDeque<Vec<SenselContact>>,
    /// Frames read, not yet fetched.
    available: VecDeque<BufferedFrame>,
    /// Contacts of the most recently read frame.
    last: Vec<SenselContact>,
    frame_content: u8,
    max_frame_rate_hz: u16,
    scanning: bool,
}

impl State {
    const fn new() -> State {
        State {
            plugged: true,
            open_handles: 0,
            live_frame_data: 0,
            read_count: 0,
            queue: VecDeque::new(),
            available: VecDeque::new(),
            last: Vec::new(),
            frame_content: 0,
            max_frame_rate_hz: 0,
            scanning: false,
        }
    }

    /// Makes one frame available, dropping the oldest if the buffer is full.
    fn buffer(&mut self, contacts: Vec<SenselContact>) {
        if self.available.len() >= MAX_BUFFERED_FRAMES {
            if let Some(dropped) = self.available.pop_front() {
                let carried = dropped.lost_frame_count.saturating_add(1);
                match self.available.front_mut() {
                    Some(next) => {
                        next.lost_frame_count = next.lost_frame_count.saturating_add(carried)
                    }
                    None => {
                        self.available.push_back(BufferedFrame {
                            contacts,
                            lost_frame_count: carried,
                        });
                        return;
                    }
                }
            }
        }
        self.available.push_back(BufferedFrame {
            contacts,
            lost_frame_count: 0,
        });
    }
}


// ---------------------------------------------------------------------------------------
// Calls in flight: LibSensel is not documented as safe to call from two threads at once, so
// the mock counts how many of its calls overlap, for the tests that check its callers never
// do that. `senselMockSetOpenDelayMs` makes opening a device slow, as a real one can be.

static CALLS_IN_FLIGHT: AtomicI32 = AtomicI32::new(0);
static MOST_CALLS_AT_ONCE: AtomicI32 = AtomicI32::new(0);
static OPEN_DELAY_MS: AtomicU32 = AtomicU32::new(0);

/// One LibSensel call, counted while it runs.
struct CallGuard;

impl CallGuard {
    fn enter() -> Self {
        let now = CALLS_IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_CALLS_AT_ONCE.fetch_max(now, Ordering::SeqCst);
        CallGuard
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        CALLS_IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

static STATE: Mutex<State> = Mutex::new(State::new());

fn state() -> MutexGuard<'static, State> {
    STATE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn demo_enabled() -> bool {
    static DEMO: OnceLock<bool> = OnceLock::new();
    *DEMO.get_or_init(|| std::env::var_os(DEMO_ENV).is_some())
}

/// The address handed out as the device handle; never dereferenced.
static HANDLE_TOKEN: u8 = 0;

fn mock_handle() -> SenselHandle {
    ptr::addr_of!(HANDLE_TOKEN) as *mut c_void
}

fn is_mock_handle(handle: SenselHandle) -> bool {
    handle == mock_handle()
}

fn is_live(state: &SenselContactState) -> bool {
    *state == CONTACT_START || *state == CONTACT_MOVE
}

/// The previous frame's live contacts, held still.
fn held_frame(previous: &[SenselContact]) -> Vec<SenselContact> {
    previous
        .iter()
        .filter(|contact| is_live(&contact.state))
        .map(|contact| SenselContact {
            state: CONTACT_MOVE,
            delta_x: 0.0,
            delta_y: 0.0,
            delta_force: 0.0,
            delta_area: 0.0,
            ..*contact
        })
        .collect()
}

/// One demo contact; `START` unless `previous` has the same id alive, deltas from it.
fn demo_contact(
    id: u8,
    x_mm: f32,
    y_mm: f32,
    force_g: f32,
    previous: &[SenselContact],
) -> SenselContact {
    let before = previous
        .iter()
        .find(|contact| contact.id == id && is_live(&contact.state));
    // A fingertip of about 10 x 8 mm; area in sensor elements grows a little with force.
    let major_axis_mm = 10.0;
    let minor_axis_mm = 8.0;
    let area_elements = 40.0 + force_g / 15.0;
    let (delta_x, delta_y, delta_force, delta_area) = match before {
        Some(b) => (
            x_mm - b.x_pos,
            y_mm - b.y_pos,
            force_g - b.total_force,
            area_elements - b.area,
        ),
        None => (0.0, 0.0, 0.0, 0.0),
    };
    SenselContact {
        content_bit_mask: CONTACT_MASK_ELLIPSE
            | CONTACT_MASK_DELTAS
            | CONTACT_MASK_BOUNDING_BOX
            | CONTACT_MASK_PEAK,
        id,
        state: if before.is_some() {
            CONTACT_MOVE
        } else {
            CONTACT_START
        },
        x_pos: x_mm,
        y_pos: y_mm,
        total_force: force_g,
        area: area_elements,
        orientation: 90.0,
        major_axis: major_axis_mm,
        minor_axis: minor_axis_mm,
        delta_x,
        delta_y,
        delta_force,
        delta_area,
        min_x: x_mm - minor_axis_mm / 2.0,
        min_y: y_mm - major_axis_mm / 2.0,
        max_x: x_mm + minor_axis_mm / 2.0,
        max_y: y_mm + major_axis_mm / 2.0,
        peak_x: x_mm,
        peak_y: y_mm,
        peak_force: force_g / 12.0,
    }
}

/// The demo performance at frame `frame_index` (counted from 0 at
/// [`DEMO_FRAME_RATE_HZ`]): finger 1 (id 0) at x = 80 mm sweeping y between 30 and
/// 100 mm at 150 mm/s (a triangle wave) with about 300 g; finger 2 (id 1) held at
/// (150, 65) mm with 200 g. Contacts start when `previous` lacks them, then move.
pub fn demo_frame(frame_index: u64, previous: &[SenselContact]) -> Vec<SenselContact> {
    let time_s = frame_index as f64 / DEMO_FRAME_RATE_HZ;
    let span_mm = DEMO_FINGER1_Y_MAX_MM - DEMO_FINGER1_Y_MIN_MM;
    let period_s = 2.0 * span_mm / DEMO_FINGER1_SPEED_MM_PER_S;
    let phase = (time_s / period_s).fract();
    // 0 → 1 → 0 over one period.
    let triangle = 1.0 - (2.0 * phase - 1.0).abs();
    let y1_mm = DEMO_FINGER1_Y_MIN_MM + span_mm * triangle;
    // A slow swell of ±10 % so the force display has something to show.
    let force1_g =
        DEMO_FINGER1_FORCE_G * (1.0 + 0.1 * (std::f64::consts::TAU * 0.7 * time_s).sin());
    let (x2_mm, y2_mm) = DEMO_FINGER2_XY_MM;
    vec![
        demo_contact(
            0,
            DEMO_FINGER1_X_MM as f32,
            y1_mm as f32,
            force1_g as f32,
            previous,
        ),
        demo_contact(
            1,
            x2_mm as f32,
            y2_mm as f32,
            DEMO_FINGER2_FORCE_G as f32,
            previous,
        ),
    ]
}

// ---------------------------------------------------------------------------------------
// The LibSensel API.

/// Lists the simulated Morph when plugged in, nothing otherwise.
///
/// # Safety
/// `list` must be null or point to a writable `SenselDeviceList`.
#[no_mangle]
pub unsafe extern "system" fn senselGetDeviceList(list: *mut SenselDeviceList) -> SenselStatus {
    let _call = CallGuard::enter();
    if list.is_null() {
        return SENSEL_ERROR;
    }
    let mut out = SenselDeviceList::default();
    if state().plugged {
        out.num_devices = 1;
        let device = &mut out.devices[0];
        device.idx = 0;
        device.serial_num[..MOCK_SERIAL.len()].copy_from_slice(MOCK_SERIAL.as_bytes());
        device.com_port[..MOCK_COM_PORT.len()].copy_from_slice(MOCK_COM_PORT.as_bytes());
    }
    // SAFETY: checked not null; the caller guarantees it is writable.
    unsafe { list.write(out) };
    SENSEL_OK
}

/// Opens the simulated Morph (index 0) when plugged in and counts the handle.
///
/// # Safety
/// `handle` must be null or point to a writable `SENSEL_HANDLE`.
#[no_mangle]
pub unsafe extern "system" fn senselOpenDeviceByID(
    handle: *mut SenselHandle,
    idx: u8,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if handle.is_null() {
        return SENSEL_ERROR;
    }
    let delay_ms = OPEN_DELAY_MS.load(Ordering::SeqCst);
    if delay_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(delay_ms as u64));
    }
    let mut state = state();
    if !state.plugged || idx != 0 {
        // SAFETY: checked not null; the caller guarantees it is writable.
        unsafe { handle.write(ptr::null_mut()) };
        return SENSEL_ERROR;
    }
    state.open_handles += 1;
    // SAFETY: as above.
    unsafe { handle.write(mock_handle()) };
    SENSEL_OK
}

/// Closes a handle (works unplugged too).
///
/// # Safety
/// Any pointer value is accepted; only the mock's own handle succeeds.
#[no_mangle]
pub unsafe extern "system" fn senselClose(handle: SenselHandle) -> SenselStatus {
    let _call = CallGuard::enter();
    let mut state = state();
    if !is_mock_handle(handle) || state.open_handles <= 0 {
        return SENSEL_ERROR;
    }
    state.open_handles -= 1;
    if state.open_handles == 0 {
        state.scanning = false;
    }
    SENSEL_OK
}

/// Shared checks of the calls that talk to the device: a valid handle, plugged in.
fn device_call(handle: SenselHandle, f: impl FnOnce(&mut State)) -> SenselStatus {
    let mut state = state();
    if !is_mock_handle(handle) || !state.plugged {
        return SENSEL_ERROR;
    }
    f(&mut state);
    SENSEL_OK
}

/// Records the frame content mask (frames always carry contacts regardless).
///
/// # Safety
/// Any pointer value is accepted.
#[no_mangle]
pub unsafe extern "system" fn senselSetFrameContent(
    handle: SenselHandle,
    content: u8,
) -> SenselStatus {
    let _call = CallGuard::enter();
    device_call(handle, |state| state.frame_content = content)
}

/// Marks the device as scanning.
///
/// # Safety
/// Any pointer value is accepted.
#[no_mangle]
pub unsafe extern "system" fn senselStartScanning(handle: SenselHandle) -> SenselStatus {
    let _call = CallGuard::enter();
    device_call(handle, |state| state.scanning = true)
}

/// Marks the device as not scanning.
///
/// # Safety
/// Any pointer value is accepted.
#[no_mangle]
pub unsafe extern "system" fn senselStopScanning(handle: SenselHandle) -> SenselStatus {
    let _call = CallGuard::enter();
    device_call(handle, |state| state.scanning = false)
}

/// Records the maximum frame rate.
///
/// # Safety
/// Any pointer value is accepted.
#[no_mangle]
pub unsafe extern "system" fn senselSetMaxFrameRate(
    handle: SenselHandle,
    rate_hz: u16,
) -> SenselStatus {
    let _call = CallGuard::enter();
    device_call(handle, |state| state.max_frame_rate_hz = rate_hz)
}

/// Counts the call; when plugged in, makes one new frame available.
///
/// # Safety
/// Any pointer value is accepted.
#[no_mangle]
pub unsafe extern "system" fn senselReadSensor(handle: SenselHandle) -> SenselStatus {
    let _call = CallGuard::enter();
    let mut state = state();
    state.read_count += 1;
    if !is_mock_handle(handle) || !state.plugged {
        return SENSEL_ERROR;
    }
    let frame_index = state.read_count - 1;
    let contacts = match state.queue.pop_front() {
        Some(pushed) => pushed,
        None if demo_enabled() => demo_frame(frame_index, &state.last),
        None => held_frame(&state.last),
    };
    state.last.clone_from(&contacts);
    state.buffer(contacts);
    SENSEL_OK
}

/// Reports how many frames `senselGetFrame` can hand out.
///
/// # Safety
/// `num_avail_frames` must be null or point to a writable `unsigned int`.
#[no_mangle]
pub unsafe extern "system" fn senselGetNumAvailableFrames(
    handle: SenselHandle,
    num_avail_frames: *mut u32,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if !is_mock_handle(handle) || num_avail_frames.is_null() {
        return SENSEL_ERROR;
    }
    let count = u32::try_from(state().available.len()).unwrap_or(u32::MAX);
    // SAFETY: checked not null; the caller guarantees it is writable.
    unsafe { num_avail_frames.write(count) };
    SENSEL_OK
}

/// Copies the oldest available frame into `data`; fails when none is available.
///
/// # Safety
/// `data` must be null or a frame from `senselAllocateFrameData` not yet freed.
#[no_mangle]
pub unsafe extern "system" fn senselGetFrame(
    handle: SenselHandle,
    data: *mut SenselFrameData,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if !is_mock_handle(handle) || data.is_null() {
        return SENSEL_ERROR;
    }
    // SAFETY: checked not null; the caller guarantees it is our allocation.
    let data = unsafe { &mut *data };
    if data.contacts.is_null() {
        return SENSEL_ERROR;
    }
    let Some(frame) = state().available.pop_front() else {
        return SENSEL_ERROR;
    };
    let count = frame.contacts.len().min(MAX_CONTACTS);
    // SAFETY: `data.contacts` has room for MAX_CONTACTS contacts (our allocation).
    unsafe { ptr::copy_nonoverlapping(frame.contacts.as_ptr(), data.contacts, count) };
    data.n_contacts = count as u8;
    data.content_bit_mask = FRAME_CONTENT_CONTACTS_MASK;
    data.lost_frame_count = frame.lost_frame_count;
    SENSEL_OK
}

/// Allocates a frame with room for [`MAX_CONTACTS`] contacts and a full-size force and
/// labels image.
///
/// # Safety
/// `data` must be null or point to a writable `SenselFrameData *`.
#[no_mangle]
pub unsafe extern "system" fn senselAllocateFrameData(
    handle: SenselHandle,
    data: *mut *mut SenselFrameData,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if data.is_null() {
        return SENSEL_ERROR;
    }
    if !is_mock_handle(handle) {
        // SAFETY: checked not null; the caller guarantees it is writable.
        unsafe { data.write(ptr::null_mut()) };
        return SENSEL_ERROR;
    }
    let contacts = Box::into_raw(vec![SenselContact::default(); MAX_CONTACTS].into_boxed_slice());
    let force = Box::into_raw(vec![0.0_f32; SENSOR_CELLS].into_boxed_slice());
    let labels = Box::into_raw(vec![0_u8; SENSOR_CELLS].into_boxed_slice());
    let accel = Box::into_raw(Box::new(SenselAccelData::default()));
    let frame = Box::new(SenselFrameData {
        content_bit_mask: 0,
        lost_frame_count: 0,
        n_contacts: 0,
        contacts: contacts.cast(),
        force_array: force.cast(),
        labels_array: labels.cast(),
        accel_data: accel,
    });
    // SAFETY: as above.
    unsafe { data.write(Box::into_raw(frame)) };
    state().live_frame_data += 1;
    SENSEL_OK
}

/// Frees a frame from [`senselAllocateFrameData`] (the handle is not needed, as in LibSensel).
///
/// # Safety
/// `data` must be null or a frame from `senselAllocateFrameData` not yet freed.
#[no_mangle]
pub unsafe extern "system" fn senselFreeFrameData(
    _handle: SenselHandle,
    data: *mut SenselFrameData,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if data.is_null() {
        return SENSEL_ERROR;
    }
    // SAFETY: every pointer was made by `Box::into_raw` in senselAllocateFrameData with
    // these lengths, and the caller hands each frame back once.
    unsafe {
        let frame = Box::from_raw(data);
        drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
            frame.contacts,
            MAX_CONTACTS,
        )));
        drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
            frame.force_array,
            SENSOR_CELLS,
        )));
        drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
            frame.labels_array,
            SENSOR_CELLS,
        )));
        drop(Box::from_raw(frame.accel_data));
    }
    state().live_frame_data -= 1;
    SENSEL_OK
}

/// Reports the Morph's geometry (works unplugged too: LibSensel caches it).
///
/// # Safety
/// `info` must be null or point to a writable `SenselSensorInfo`.
#[no_mangle]
pub unsafe extern "system" fn senselGetSensorInfo(
    handle: SenselHandle,
    info: *mut SenselSensorInfo,
) -> SenselStatus {
    let _call = CallGuard::enter();
    if !is_mock_handle(handle) || info.is_null() {
        return SENSEL_ERROR;
    }
    let sensor = SenselSensorInfo {
        max_contacts: MAX_CONTACTS as u8,
        num_rows: NUM_ROWS,
        num_cols: NUM_COLS,
        width: SENSOR_WIDTH_MM,
        height: SENSOR_HEIGHT_MM,
    };
    // SAFETY: checked not null; the caller guarantees it is writable.
    unsafe { info.write(sensor) };
    SENSEL_OK
}

// The exports must have exactly the types sensel-sys loads them as.
const _: SenselGetDeviceListFn = senselGetDeviceList;
const _: SenselOpenDeviceByIDFn = senselOpenDeviceByID;
const _: SenselCloseFn = senselClose;
const _: SenselSetFrameContentFn = senselSetFrameContent;
const _: SenselStartScanningFn = senselStartScanning;
const _: SenselStopScanningFn = senselStopScanning;
const _: SenselReadSensorFn = senselReadSensor;
const _: SenselGetNumAvailableFramesFn = senselGetNumAvailableFrames;
const _: SenselGetFrameFn = senselGetFrame;
const _: SenselAllocateFrameDataFn = senselAllocateFrameData;
const _: SenselFreeFrameDataFn = senselFreeFrameData;
const _: SenselSetMaxFrameRateFn = senselSetMaxFrameRate;
const _: SenselGetSensorInfoFn = senselGetSensorInfo;

// ---------------------------------------------------------------------------------------
// Control functions for tests.

/// Queues one frame of `n` contacts (at most [`MAX_CONTACTS`] are kept).
///
/// # Safety
/// `contacts` must point to `n` readable contacts (it may be null when `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn senselMockPushFrame(contacts: *const SenselContact, n: u32) {
    let count = (n as usize).min(MAX_CONTACTS);
    let frame = if count == 0 || contacts.is_null() {
        Vec::new()
    } else {
        // SAFETY: the caller guarantees `n` (≥ count) readable contacts.
        unsafe { std::slice::from_raw_parts(contacts, count) }.to_vec()
    };
    state().queue.push_back(frame);
}

/// Plugs the Morph in or pulls it out. Pulling it out discards frames read but not
/// fetched and the held contacts; queued frames stay queued.
#[no_mangle]
pub extern "C" fn senselMockSetPlugged(plugged: bool) {
    let mut state = state();
    state.plugged = plugged;
    if !plugged {
        state.available.clear();
        state.last.clear();
        state.scanning = false;
    }
}

/// Handles opened and not yet closed.
#[no_mangle]
pub extern "C" fn senselMockOpenHandles() -> i32 {
    state().open_handles
}

/// `senselReadSensor` calls since the last reset, failed ones included.
#[no_mangle]
pub extern "C" fn senselMockReadCount() -> u64 {
    state().read_count
}

/// Frames pushed and not yet read.
#[no_mangle]
pub extern "C" fn senselMockQueuedFrames() -> u32 {
    u32::try_from(state().queue.len()).unwrap_or(u32::MAX)
}

/// Frame buffers allocated and not yet freed.
#[no_mangle]
pub extern "C" fn senselMockLiveFrameData() -> i32 {
    state().live_frame_data
}

/// Plugged in, nothing queued or buffered, no contacts, read count zero. Open handles,
/// live frame buffers, frame content and scanning belong to whoever opened the device
/// and are kept.
#[no_mangle]
pub extern "C" fn senselMockReset() {
    let mut state = state();
    state.plugged = true;
    state.queue.clear();
    state.available.clear();
    state.last.clear();
    state.read_count = 0;
}

/// Makes every `senselOpenDeviceByID` take this long (0: at once), as a real device can.
#[no_mangle]
pub extern "C" fn senselMockSetOpenDelayMs(ms: u32) {
    OPEN_DELAY_MS.store(ms, Ordering::SeqCst);
}

/// LibSensel calls running now.
#[no_mangle]
pub extern "C" fn senselMockCallsInFlight() -> i32 {
    CALLS_IN_FLIGHT.load(Ordering::SeqCst)
}

/// The most LibSensel calls that ever ran at once in this library.
#[no_mangle]
pub extern "C" fn senselMockMostCallsAtOnce() -> i32 {
    MOST_CALLS_AT_ONCE.load(Ordering::SeqCst)
}

const _: sensel_sys::mock::PushFrameFn = senselMockPushFrame;
const _: sensel_sys::mock::SetOpenDelayFn = senselMockSetOpenDelayMs;
const _: sensel_sys::mock::CallsFn = senselMockCallsInFlight;
const _: sensel_sys::mock::CallsFn = senselMockMostCallsAtOnce;
const _: sensel_sys::mock::SetPluggedFn = senselMockSetPlugged;
const _: sensel_sys::mock::OpenHandlesFn = senselMockOpenHandles;
const _: sensel_sys::mock::ReadCountFn = senselMockReadCount;
const _: sensel_sys::mock::QueuedFramesFn = senselMockQueuedFrames;
const _: sensel_sys::mock::ResetFn = senselMockReset;
const _: sensel_sys::mock::LiveFrameDataFn = senselMockLiveFrameData;

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(
        id: u8,
        state: SenselContactState,
        x_mm: f32,
        y_mm: f32,
        force_g: f32,
    ) -> SenselContact {
        SenselContact { delta_x: 1.0, ..SenselContact::touch(id, state, x_mm, y_mm, force_g) }
    }

    #[test]
    fn held_frame_keeps_live_contacts_still() {
        let previous = [
            contact(0, CONTACT_START, 10.0, 20.0, 100.0),
            contact(1, CONTACT_END, 30.0, 40.0, 0.0),
            contact(2, CONTACT_MOVE, 50.0, 60.0, 80.0),
        ];
        let held = held_frame(&previous);
        assert_eq!(held.len(), 2);
        assert_eq!(
            (held[0].id, held[0].state, held[0].x_pos),
            (0, CONTACT_MOVE, 10.0)
        );
        assert_eq!(
            (held[1].id, held[1].state, held[1].total_force),
            (2, CONTACT_MOVE, 80.0)
        );
        assert!(held
            .iter()
            .all(|c| c.delta_x == 0.0 && c.delta_y == 0.0 && c.delta_force == 0.0));
        assert!(held_frame(&held).iter().all(|c| c.state == CONTACT_MOVE));
    }

    #[test]
    fn demo_sweeps_finger_one_and_holds_finger_two() {
        let first = demo_frame(0, &[]);
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|c| c.state == CONTACT_START));
        assert_eq!(
            (first[0].id, first[0].x_pos, first[0].y_pos),
            (0, 80.0, 30.0)
        );
        assert_eq!(
            (
                first[1].id,
                first[1].x_pos,
                first[1].y_pos,
                first[1].total_force
            ),
            (1, 150.0, 65.0, 200.0)
        );

        let mut previous = first;
        let (mut lowest_mm, mut highest_mm) = (f32::MAX, f32::MIN);
        // Two seconds: more than two sweeps up and down.
        for frame_index in 1..1000 {
            let frame = demo_frame(frame_index, &previous);
            assert!(frame.iter().all(|c| c.state == CONTACT_MOVE));
            let finger = frame[0];
            lowest_mm = lowest_mm.min(finger.y_pos);
            highest_mm = highest_mm.max(finger.y_pos);
            let speed_mm_per_s = finger.delta_y.abs() * DEMO_FRAME_RATE_HZ as f32;
            assert!(
                speed_mm_per_s <= 151.0,
                "{speed_mm_per_s} mm/s at frame {frame_index}"
            );
            assert!((finger.total_force - 300.0).abs() <= 31.0);
            assert_eq!(
                (frame[1].x_pos, frame[1].y_pos, frame[1].delta_y),
                (150.0, 65.0, 0.0)
            );
            previous = frame;
        }
        assert!(
            lowest_mm <= 30.5 && highest_mm >= 99.5,
            "{lowest_mm}..{highest_mm}"
        );
        // 0.25 s in, finger 1 has moved 37.5 mm up.
        let quarter = demo_frame(125, &[]);
        assert!(
            (quarter[0].y_pos - 67.5).abs() < 0.01,
            "{}",
            quarter[0].y_pos
        );
    }

    #[test]
    fn full_buffer_drops_oldest_and_counts_it() {
        let mut state = State::new();
        for i in 0..(MAX_BUFFERED_FRAMES + 3) {
            state.buffer(vec![contact(0, CONTACT_MOVE, i as f32, 0.0, 1.0)]);
        }
        assert_eq!(state.available.len(), MAX_BUFFERED_FRAMES);
        let front = state.available.front().unwrap();
        assert_eq!(front.contacts[0].x_pos, 3.0);
        assert_eq!(front.lost_frame_count, 3);
    }
}

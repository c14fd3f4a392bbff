//! Raw declarations of LibSensel's C API, as published in `sensel.h`.
//!
//! Struct and field names follow the header so the two can be compared line by line.
//! The header has no packing pragmas, so every struct uses the platform's natural C
//! layout (`#[repr(C)]`), padding included. All functions are declared `WINAPI` in the
//! header, which is `__stdcall` on 32-bit Windows and the C convention everywhere else;
//! `extern "system"` is the Rust spelling of exactly that.

use std::ffi::{c_int, c_uint, c_void};
use std::fmt;

/// Maximum number of devices a [`SenselDeviceList`] can describe.
pub const SENSEL_MAX_DEVICES: usize = 16;

/// Frame content bit: the frame carries the pressure (force) image.
pub const FRAME_CONTENT_PRESSURE_MASK: u8 = 0x01;
/// Frame content bit: the frame carries the labels image.
pub const FRAME_CONTENT_LABELS_MASK: u8 = 0x02;
/// Frame content bit: the frame carries the contact list.
pub const FRAME_CONTENT_CONTACTS_MASK: u8 = 0x04;
/// Frame content bit: the frame carries accelerometer data.
pub const FRAME_CONTENT_ACCEL_MASK: u8 = 0x08;

/// Contact content bit: `orientation`, `major_axis` and `minor_axis` are valid.
pub const CONTACT_MASK_ELLIPSE: u8 = 0x01;
/// Contact content bit: the `delta_*` fields are valid.
pub const CONTACT_MASK_DELTAS: u8 = 0x02;
/// Contact content bit: the bounding box (`min_*`, `max_*`) is valid.
pub const CONTACT_MASK_BOUNDING_BOX: u8 = 0x04;
/// Contact content bit: the `peak_*` fields are valid.
pub const CONTACT_MASK_PEAK: u8 = 0x08;

/// Opaque handle to an open device (`SENSEL_HANDLE`, a `void *`).
pub type SenselHandle = *mut c_void;

/// Status returned by every API call (the C enum `SenselStatus`, which is `int` sized).
///
/// Kept as a plain integer rather than a Rust enum: a library returning a value outside
/// the two listed would otherwise be undefined behaviour.
pub type SenselStatus = c_int;
/// The call succeeded.
pub const SENSEL_OK: SenselStatus = 0;
/// The call failed.
pub const SENSEL_ERROR: SenselStatus = -1;

/// Scan reporting mode (the C enum `SenselScanMode`).
pub type SenselScanMode = c_int;
/// Scanning disabled.
pub const SCAN_MODE_DISABLE: SenselScanMode = 0;
/// The host requests every frame.
pub const SCAN_MODE_SYNC: SenselScanMode = 1;
/// The device streams frames on its own.
pub const SCAN_MODE_ASYNC: SenselScanMode = 2;

/// Scan resolution (the C enum `SenselScanDetail`).
pub type SenselScanDetail = c_int;
/// Full resolution.
pub const SCAN_DETAIL_HIGH: SenselScanDetail = 0;
/// Half resolution.
pub const SCAN_DETAIL_MEDIUM: SenselScanDetail = 1;
/// Quarter resolution.
pub const SCAN_DETAIL_LOW: SenselScanDetail = 2;
/// Unknown resolution.
pub const SCAN_DETAIL_UNKNOWN: SenselScanDetail = 3;

/// Contact state, as stored in [`SenselContact::state`] (an `unsigned int` in the header).
pub type SenselContactState = c_uint;
/// The contact is invalid.
pub const CONTACT_INVALID: SenselContactState = 0;
/// The contact started in this frame.
pub const CONTACT_START: SenselContactState = 1;
/// The contact continues from the previous frame.
pub const CONTACT_MOVE: SenselContactState = 2;
/// The contact ended in this frame; it is not reported afterwards.
pub const CONTACT_END: SenselContactState = 3;

/// Sensor geometry (`SenselSensorInfo`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenselSensorInfo {
    /// Maximum number of contacts the sensor reports in one frame.
    pub max_contacts: u8,
    /// Number of sensor rows.
    pub num_rows: u16,
    /// Number of sensor columns.
    pub num_cols: u16,
    /// Active width in millimetres.
    pub width: f32,
    /// Active height in millimetres.
    pub height: f32,
}

/// Firmware description (`SenselFirmwareInfo`); not used by the wrapper, declared for completeness.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenselFirmwareInfo {
    /// Communication protocol version.
    pub fw_protocol_version: u8,
    /// Firmware major version.
    pub fw_version_major: u8,
    /// Firmware minor version.
    pub fw_version_minor: u8,
    /// Firmware build number.
    pub fw_version_build: u16,
    /// Firmware release number.
    pub fw_version_release: u8,
    /// Device type.
    pub device_id: u16,
    /// Device revision.
    pub device_revision: u8,
}

/// One contact of a frame (`SenselContact`). Which groups of fields are valid is given
/// by `content_bit_mask` (`CONTACT_MASK_*`); positions are in mm, forces in grams.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenselContact {
    /// Which optional field groups are valid (`CONTACT_MASK_*`).
    pub content_bit_mask: u8,
    /// Contact id, stable from `CONTACT_START` to `CONTACT_END`.
    pub id: u8,
    /// Contact state (`CONTACT_*`).
    pub state: SenselContactState,
    /// Centroid x in mm.
    pub x_pos: f32,
    /// Centroid y in mm.
    pub y_pos: f32,
    /// Total force in grams.
    pub total_force: f32,
    /// Area in sensor elements.
    pub area: f32,
    /// Ellipse orientation in degrees.
    pub orientation: f32,
    /// Ellipse major axis in mm.
    pub major_axis: f32,
    /// Ellipse minor axis in mm.
    pub minor_axis: f32,
    /// Change of x since the previous frame, in mm.
    pub delta_x: f32,
    /// Change of y since the previous frame, in mm.
    pub delta_y: f32,
    /// Change of force since the previous frame, in grams.
    pub delta_force: f32,
    /// Change of area since the previous frame, in sensor elements.
    pub delta_area: f32,
    /// Bounding box minimum x in mm.
    pub min_x: f32,
    /// Bounding box minimum y in mm.
    pub min_y: f32,
    /// Bounding box maximum x in mm.
    pub max_x: f32,
    /// Bounding box maximum y in mm.
    pub max_y: f32,
    /// Peak x in mm.
    pub peak_x: f32,
    /// Peak y in mm.
    pub peak_y: f32,
    /// Peak force in grams.
    pub peak_force: f32,
}

impl SenselContact {
    /// A contact `id` in `state` (`CONTACT_*`) at (`x_mm`, `y_mm`) pressing with `force_g`
    /// grams, every other field zero: what a test or the mock builds frames from.
    pub fn touch(id: u8, state: SenselContactState, x_mm: f32, y_mm: f32, force_g: f32) -> Self {
        Self { id, state, x_pos: x_mm, y_pos: y_mm, total_force: force_g, ..Self::default() }
    }
}

/// Accelerometer reading (`SenselAccelData`), in device units.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenselAccelData {
    /// X axis acceleration.
    pub x: i32,
    /// Y axis acceleration.
    pub y: i32,
    /// Z axis acceleration.
    pub z: i32,
}

/// One frame of data (`SenselFrameData`). The buffers are owned by the library:
/// allocate with `senselAllocateFrameData`, release with `senselFreeFrameData`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SenselFrameData {
    /// Which parts of the frame are valid (`FRAME_CONTENT_*_MASK`).
    pub content_bit_mask: u8,
    /// Number of frames dropped before this one.
    pub lost_frame_count: i32,
    /// Number of valid entries in `contacts`.
    pub n_contacts: u8,
    /// Contact array (capacity: the sensor's `max_contacts`).
    pub contacts: *mut SenselContact,
    /// Force image, `num_rows * num_cols` values in grams.
    pub force_array: *mut f32,
    /// Labels image, `num_rows * num_cols` bytes.
    pub labels_array: *mut u8,
    /// Accelerometer reading.
    pub accel_data: *mut SenselAccelData,
}

/// Identification of one attached device (`SenselDeviceID`).
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SenselDeviceID {
    /// Index to pass to `senselOpenDeviceByID`.
    pub idx: u8,
    /// Serial number, NUL-terminated.
    pub serial_num: [u8; 64],
    /// Serial port path, NUL-terminated.
    pub com_port: [u8; 64],
}

impl Default for SenselDeviceID {
    fn default() -> Self {
        SenselDeviceID {
            idx: 0,
            serial_num: [0; 64],
            com_port: [0; 64],
        }
    }
}

impl fmt::Debug for SenselDeviceID {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SenselDeviceID")
            .field("idx", &self.idx)
            .field("serial_num", &c_bytes_to_string(&self.serial_num))
            .field("com_port", &c_bytes_to_string(&self.com_port))
            .finish()
    }
}

/// The list filled by `senselGetDeviceList` (`SenselDeviceList`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenselDeviceList {
    /// Number of valid entries in `devices`.
    pub num_devices: u8,
    /// Attached devices.
    pub devices: [SenselDeviceID; SENSEL_MAX_DEVICES],
}

/// Reads a NUL-terminated byte string from a fixed buffer (lossy UTF-8, no NUL needed).
pub(crate) fn c_bytes_to_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// `SenselStatus senselGetDeviceList(SenselDeviceList *list)`.
pub type SenselGetDeviceListFn =
    unsafe extern "system" fn(list: *mut SenselDeviceList) -> SenselStatus;
/// `SenselStatus senselOpenDeviceByID(SENSEL_HANDLE *handle, unsigned char idx)`.
pub type SenselOpenDeviceByIDFn =
    unsafe extern "system" fn(handle: *mut SenselHandle, idx: u8) -> SenselStatus;
/// `SenselStatus senselClose(SENSEL_HANDLE handle)`.
pub type SenselCloseFn = unsafe extern "system" fn(handle: SenselHandle) -> SenselStatus;
/// `SenselStatus senselSetFrameContent(SENSEL_HANDLE handle, unsigned char content)`.
pub type SenselSetFrameContentFn =
    unsafe extern "system" fn(handle: SenselHandle, content: u8) -> SenselStatus;
/// `SenselStatus senselStartScanning(SENSEL_HANDLE handle)`.
pub type SenselStartScanningFn = unsafe extern "system" fn(handle: SenselHandle) -> SenselStatus;
/// `SenselStatus senselStopScanning(SENSEL_HANDLE handle)`.
pub type SenselStopScanningFn = unsafe extern "system" fn(handle: SenselHandle) -> SenselStatus;
/// `SenselStatus senselReadSensor(SENSEL_HANDLE handle)`.
pub type SenselReadSensorFn = unsafe extern "system" fn(handle: SenselHandle) -> SenselStatus;
/// `SenselStatus senselGetNumAvailableFrames(SENSEL_HANDLE handle, unsigned int *num_avail_frames)`.
pub type SenselGetNumAvailableFramesFn =
    unsafe extern "system" fn(handle: SenselHandle, num_avail_frames: *mut c_uint) -> SenselStatus;
/// `SenselStatus senselGetFrame(SENSEL_HANDLE handle, SenselFrameData *data)`.
pub type SenselGetFrameFn =
    unsafe extern "system" fn(handle: SenselHandle, data: *mut SenselFrameData) -> SenselStatus;
/// `SenselStatus senselAllocateFrameData(SENSEL_HANDLE handle, SenselFrameData **data)`.
pub type SenselAllocateFrameDataFn = unsafe extern "system" fn(
    handle: SenselHandle,
    data: *mut *mut SenselFrameData,
) -> SenselStatus;
/// `SenselStatus senselFreeFrameData(SENSEL_HANDLE handle, SenselFrameData *data)`.
pub type SenselFreeFrameDataFn =
    unsafe extern "system" fn(handle: SenselHandle, data: *mut SenselFrameData) -> SenselStatus;
/// `SenselStatus senselSetMaxFrameRate(SENSEL_HANDLE handle, unsigned short val)`.
pub type SenselSetMaxFrameRateFn =
    unsafe extern "system" fn(handle: SenselHandle, rate_hz: u16) -> SenselStatus;
/// `SenselStatus senselGetSensorInfo(SENSEL_HANDLE handle, SenselSensorInfo *info)`.
pub type SenselGetSensorInfoFn =
    unsafe extern "system" fn(handle: SenselHandle, info: *mut SenselSensorInfo) -> SenselStatus;

/// Declares [`SenselApi`] and its loader from one list, so the field names, the symbol
/// names and [`SenselApi::SYMBOLS`] cannot drift apart.
macro_rules! sensel_api {
    ($($symbol:ident: $fn_type:ty,)*) => {
        /// The LibSensel functions this crate uses, resolved from a loaded library.
        ///
        /// Field names are the C symbol names. The pointers stay valid only while the
        /// `libloading::Library` they came from is loaded; [`crate::Library`] keeps the
        /// two together.
        #[allow(non_snake_case)]
        #[derive(Clone, Copy, Debug)]
        pub struct SenselApi {
            $(
                #[doc = concat!("`", stringify!($symbol), "`.")]
                pub $symbol: $fn_type,
            )*
        }

        impl SenselApi {
            /// Every symbol the table needs, in the order they are resolved.
            pub const SYMBOLS: &'static [&'static str] = &[$(stringify!($symbol)),*];

            /// Resolves every symbol from `lib`, or names the first one missing.
            ///
            /// # Safety
            /// `lib` must be LibSensel or a library exporting these symbols with the
            /// signatures of `sensel.h`; the returned pointers must not be called after
            /// `lib` is unloaded.
            pub unsafe fn load(lib: &libloading::Library) -> Result<SenselApi, &'static str> {
                // SAFETY: each field's type is the header's signature for that symbol,
                // and the caller vouches that `lib` follows the header.
                unsafe {
                    Ok(SenselApi {
                        $($symbol: symbol(lib, stringify!($symbol))?,)*
                    })
                }
            }
        }
    };
}

sensel_api! {
    senselGetDeviceList: SenselGetDeviceListFn,
    senselOpenDeviceByID: SenselOpenDeviceByIDFn,
    senselClose: SenselCloseFn,
    senselSetFrameContent: SenselSetFrameContentFn,
    senselStartScanning: SenselStartScanningFn,
    senselStopScanning: SenselStopScanningFn,
    senselReadSensor: SenselReadSensorFn,
    senselGetNumAvailableFrames: SenselGetNumAvailableFramesFn,
    senselGetFrame: SenselGetFrameFn,
    senselAllocateFrameData: SenselAllocateFrameDataFn,
    senselFreeFrameData: SenselFreeFrameDataFn,
    senselSetMaxFrameRate: SenselSetMaxFrameRateFn,
    senselGetSensorInfo: SenselGetSensorInfoFn,
}

/// Looks up one function symbol and copies the pointer out of libloading's guard.
///
/// # Safety
/// `T` must be the symbol's true type.
unsafe fn symbol<T: Copy>(
    lib: &libloading::Library,
    name: &'static str,
) -> Result<T, &'static str> {
    // SAFETY: forwarded to the caller; libloading adds the trailing NUL itself.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|sym| *sym)
        .map_err(|_| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    // Expected layouts are worked out by hand from sensel.h with the natural C rules
    // (each field at a multiple of its alignment, size rounded up to the largest alignment).

    #[test]
    fn device_id_and_list_have_no_padding() {
        // unsigned char + 2 x unsigned char[64]: 129 bytes, byte aligned.
        assert_eq!(size_of::<SenselDeviceID>(), 129);
        assert_eq!(align_of::<SenselDeviceID>(), 1);
        assert_eq!(offset_of!(SenselDeviceID, serial_num), 1);
        assert_eq!(offset_of!(SenselDeviceID, com_port), 65);
        // unsigned char + 16 x 129 bytes.
        assert_eq!(size_of::<SenselDeviceList>(), 1 + 16 * 129);
        assert_eq!(align_of::<SenselDeviceList>(), 1);
        assert_eq!(offset_of!(SenselDeviceList, devices), 1);
    }

    #[test]
    fn sensor_info_layout() {
        // u8 @0, pad, u16 @2, u16 @4, pad, f32 @8, f32 @12.
        assert_eq!(offset_of!(SenselSensorInfo, num_rows), 2);
        assert_eq!(offset_of!(SenselSensorInfo, num_cols), 4);
        assert_eq!(offset_of!(SenselSensorInfo, width), 8);
        assert_eq!(offset_of!(SenselSensorInfo, height), 12);
        assert_eq!(size_of::<SenselSensorInfo>(), 16);
        assert_eq!(align_of::<SenselSensorInfo>(), 4);
    }

    #[test]
    fn firmware_info_layout() {
        // u8 u8 u8 @0..3, pad, u16 @4, u8 @6, pad, u16 @8, u8 @10, pad to 12.
        assert_eq!(offset_of!(SenselFirmwareInfo, fw_version_build), 4);
        assert_eq!(offset_of!(SenselFirmwareInfo, fw_version_release), 6);
        assert_eq!(offset_of!(SenselFirmwareInfo, device_id), 8);
        assert_eq!(offset_of!(SenselFirmwareInfo, device_revision), 10);
        assert_eq!(size_of::<SenselFirmwareInfo>(), 12);
        assert_eq!(align_of::<SenselFirmwareInfo>(), 2);
    }

    #[test]
    fn contact_layout() {
        // u8 @0, u8 @1, pad 2, unsigned int @4, then 18 floats from @8.
        assert_eq!(offset_of!(SenselContact, id), 1);
        assert_eq!(offset_of!(SenselContact, state), 4);
        assert_eq!(offset_of!(SenselContact, x_pos), 8);
        assert_eq!(offset_of!(SenselContact, total_force), 16);
        assert_eq!(offset_of!(SenselContact, orientation), 24);
        assert_eq!(offset_of!(SenselContact, delta_x), 36);
        assert_eq!(offset_of!(SenselContact, min_x), 52);
        assert_eq!(offset_of!(SenselContact, peak_x), 68);
        assert_eq!(offset_of!(SenselContact, peak_force), 76);
        assert_eq!(size_of::<SenselContact>(), 80);
        assert_eq!(align_of::<SenselContact>(), 4);
    }

    #[test]
    fn accel_layout() {
        assert_eq!(size_of::<SenselAccelData>(), 12);
        assert_eq!(align_of::<SenselAccelData>(), 4);
    }

    #[test]
    fn frame_data_layout() {
        // u8 @0, pad 3, int @4, u8 @8, pad to pointer alignment, then four pointers.
        let ptr = size_of::<*mut c_void>();
        assert_eq!(offset_of!(SenselFrameData, lost_frame_count), 4);
        assert_eq!(offset_of!(SenselFrameData, n_contacts), 8);
        let contacts_at = if ptr == 8 { 16 } else { 12 };
        assert_eq!(offset_of!(SenselFrameData, contacts), contacts_at);
        assert_eq!(offset_of!(SenselFrameData, force_array), contacts_at + ptr);
        assert_eq!(
            offset_of!(SenselFrameData, labels_array),
            contacts_at + 2 * ptr
        );
        assert_eq!(
            offset_of!(SenselFrameData, accel_data),
            contacts_at + 3 * ptr
        );
        assert_eq!(size_of::<SenselFrameData>(), contacts_at + 4 * ptr);
        assert_eq!(align_of::<SenselFrameData>(), ptr);
        if ptr == 8 {
            assert_eq!(size_of::<SenselFrameData>(), 48);
        }
    }

    #[test]
    fn status_and_enums_are_int_sized() {
        assert_eq!(size_of::<SenselStatus>(), 4);
        assert_eq!(size_of::<SenselContactState>(), 4);
        assert_eq!(size_of::<SenselScanMode>(), 4);
    }

    #[test]
    fn symbol_list_matches_table() {
        assert_eq!(SenselApi::SYMBOLS.len(), 13);
        assert_eq!(SenselApi::SYMBOLS[0], "senselGetDeviceList");
        assert!(SenselApi::SYMBOLS.contains(&"senselGetFrame"));
    }

    #[test]
    fn c_strings_stop_at_nul() {
        let mut buf = [0u8; 64];
        buf[..8].copy_from_slice(b"MOCK0001");
        assert_eq!(c_bytes_to_string(&buf), "MOCK0001");
        assert_eq!(c_bytes_to_string(b"abc"), "abc");
    }
}

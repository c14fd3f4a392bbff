//! Loads the `sensel-mock` library through `sensel_sys::Library` and drives it.
//!
//! The mock is not built here: run `cargo build -p sensel-mock` first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use sensel_sys::mock::MockControl;
use sensel_sys::{
    Library, LoadError, SenselContact, CONTACT_END, CONTACT_MOVE, CONTACT_START,
    FRAME_CONTENT_CONTACTS_MASK,
};

/// The mock has one global state per process; tests touching it take turns.
static MOCK_LOCK: Mutex<()> = Mutex::new(());

fn mock_path() -> PathBuf {
    let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let path = sensel_sys::mock::built_path(&target_dir, "debug");
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p sensel-mock` before `cargo test -p sensel-sys`",
        path.display()
    );
    path
}

/// Loads the mock both ways and resets it.
fn setup() -> (MutexGuard<'static, ()>, Arc<Library>, MockControl) {
    let guard = MOCK_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let path = mock_path();
    // SAFETY: the path is the mock built from this workspace.
    let lib = unsafe { Library::open(&path) }.unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(lib.path(), path.as_path());
    // SAFETY: the path is the mock built from this workspace.
    let control = unsafe { MockControl::open(&path) }.unwrap_or_else(|err| panic!("{err}"));
    control.reset();
    (guard, lib, control)
}

fn contact(id: u8, state: u32, x_mm: f32, y_mm: f32, force_g: f32) -> SenselContact {
    SenselContact { area: force_g / 10.0, delta_x: 0.5, delta_y: -0.25, ..SenselContact::touch(id, state, x_mm, y_mm, force_g) }
}

#[test]
fn frames_pushed_into_the_mock_come_back_out() {
    let (_guard, lib, control) = setup();

    let devices = lib.devices().expect("device list");
    assert_eq!(devices.len(), 1);
    let info = &devices[0];
    assert_eq!(info.idx, 0);
    assert_eq!(info.serial, "MOCK0001");
    assert!(!info.com_port.is_empty());

    let mut device = lib.open_device(info).expect("open the mock Morph");
    let sensor = device.sensor_info();
    assert_eq!(sensor.max_contacts, 16);
    assert_eq!((sensor.num_rows, sensor.num_cols), (185, 105));
    assert_eq!((sensor.width_mm, sensor.height_mm), (230.0, 130.0));
    assert_eq!(control.open_handles(), 1);
    assert_eq!(control.live_frame_data(), 1);

    device
        .set_frame_content(FRAME_CONTENT_CONTACTS_MASK)
        .unwrap();
    device.set_max_frame_rate(500).unwrap();
    device.start_scanning().unwrap();

    // Nothing read yet.
    assert_eq!(device.num_available_frames().unwrap(), 0);
    assert_eq!(device.next_frame().unwrap_err().call, "senselGetFrame");

    let pushed = [
        contact(0, CONTACT_START, 12.5, 40.0, 150.0),
        contact(3, CONTACT_START, 200.0, 100.0, 55.0),
    ];
    control.push_frame(&pushed);
    assert_eq!(control.queued_frames(), 1);

    device.read_sensor().unwrap();
    assert_eq!(control.queued_frames(), 0);
    assert_eq!(device.num_available_frames().unwrap(), 1);
    {
        let frame = device.next_frame().unwrap();
        assert_eq!(frame.lost_frame_count(), 0);
        assert_ne!(frame.content_bit_mask() & FRAME_CONTENT_CONTACTS_MASK, 0);
        assert_eq!(frame.contacts(), &pushed[..]);
    }
    assert_eq!(device.num_available_frames().unwrap(), 0);

    // Empty queue: the same contacts, held still.
    device.read_sensor().unwrap();
    {
        let frame = device.next_frame().unwrap();
        let held = frame.contacts();
        assert_eq!(held.len(), 2);
        for (held, pushed) in held.iter().zip(&pushed) {
            assert_eq!(held.id, pushed.id);
            assert_eq!(held.state, CONTACT_MOVE);
            assert_eq!(
                (held.x_pos, held.y_pos, held.total_force),
                (pushed.x_pos, pushed.y_pos, pushed.total_force)
            );
            assert_eq!(
                (held.delta_x, held.delta_y, held.delta_force),
                (0.0, 0.0, 0.0)
            );
        }
    }

    // Contact 0 lifts; afterwards only contact 3 is held.
    control.push_frame(&[
        contact(0, CONTACT_END, 12.5, 40.0, 0.0),
        contact(3, CONTACT_MOVE, 201.0, 99.0, 60.0),
    ]);
    device.read_sensor().unwrap();
    device.read_sensor().unwrap();
    assert_eq!(device.num_available_frames().unwrap(), 2);
    assert_eq!(device.next_frame().unwrap().contacts().len(), 2);
    {
        let frame = device.next_frame().unwrap();
        let contacts = frame.contacts();
        assert_eq!(contacts.len(), 1);
        assert_eq!(
            (contacts[0].id, contacts[0].state, contacts[0].x_pos),
            (3, CONTACT_MOVE, 201.0)
        );
    }

    // More than 16 contacts are cut to the sensor's maximum.
    let crowd: Vec<_> = (0..20)
        .map(|id| contact(id, CONTACT_START, f32::from(id), 1.0, 10.0))
        .collect();
    control.push_frame(&crowd);
    device.read_sensor().unwrap();
    assert_eq!(device.next_frame().unwrap().contacts(), &crowd[..16]);

    // An empty frame reads back as no contacts.
    control.push_frame(&[]);
    device.read_sensor().unwrap();
    assert!(device.next_frame().unwrap().contacts().is_empty());
    assert_eq!(control.read_count(), 6);

    // Unplugged: reading fails, the list is empty, opening fails.
    control.set_plugged(false);
    let err = device.read_sensor().unwrap_err();
    assert_eq!(err.call, "senselReadSensor");
    assert_eq!(err.to_string(), "Sensel: senselReadSensor failed");
    assert!(lib.devices().unwrap().is_empty());
    assert_eq!(
        lib.open_device(info).unwrap_err().call,
        "senselOpenDeviceByID"
    );
    assert_eq!(control.open_handles(), 1);
    assert_eq!(control.read_count(), 7);

    // Dropping the device while unplugged still closes it and frees its frame.
    drop(device);
    assert_eq!(control.open_handles(), 0);
    assert_eq!(control.live_frame_data(), 0);
    control.reset();
}

#[test]
fn open_handles_are_counted() {
    let (_guard, lib, control) = setup();
    let info = lib.devices().unwrap().remove(0);
    assert_eq!(control.open_handles(), 0);

    let first = lib.open_device(&info).unwrap();
    let second = lib.open_device(&info).unwrap();
    assert_eq!(control.open_handles(), 2);
    assert_eq!(control.live_frame_data(), 2);
    drop(first);
    assert_eq!(control.open_handles(), 1);

    // The device keeps the library loaded after the last other reference goes; the
    // device and its library can go to a reader thread together.
    drop(lib);
    let reader = std::thread::spawn(move || {
        let mut device = second;
        device.start_scanning().unwrap();
        device.read_sensor().unwrap();
        device.num_available_frames().unwrap()
    });
    assert_eq!(reader.join().unwrap(), 1);
    assert_eq!(control.open_handles(), 0);
    assert_eq!(control.live_frame_data(), 0);
    assert_eq!(control.read_count(), 1);
}

#[test]
fn libraries_without_sensel_are_rejected() {
    // libc loads fine but exports none of LibSensel.
    #[cfg(target_os = "linux")]
    // SAFETY: libc is already loaded in this process; loading it again runs nothing new.
    match unsafe { Library::open("libc.so.6") } {
        Err(LoadError::MissingSymbol { path, symbol }) => {
            assert_eq!(path, PathBuf::from("libc.so.6"));
            assert_eq!(symbol, "senselGetDeviceList");
            let text = LoadError::MissingSymbol { path, symbol }.to_string();
            assert_eq!(
                text,
                "no Sensel: libc.so.6 lacks the symbol senselGetDeviceList"
            );
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }

    let nowhere = Path::new("/nonexistent/dir/libsensel.so");
    // SAFETY: nothing exists there to load.
    match unsafe { Library::open(nowhere) } {
        Err(LoadError::NotFound { tried }) => {
            assert_eq!(tried.len(), 1);
            assert_eq!(tried[0].0, nowhere);
            assert!(!tried[0].1.is_empty());
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let text = unsafe { Library::open(nowhere) }.unwrap_err().to_string();
    assert!(
        text.starts_with("no Sensel: LibSensel not found (tried /nonexistent/dir/libsensel.so: "),
        "{text}"
    );
    assert!(!text.contains('\n'));
}

#[test]
fn open_first_skips_candidates_that_fail() {
    let _guard = MOCK_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mock = mock_path();
    // SAFETY: the first candidate does not exist; the second is the mock.
    let lib = unsafe { Library::open_first([PathBuf::from("/nonexistent/libsensel.so"), mock.clone()]) }.unwrap();
    assert_eq!(lib.path(), mock.as_path());

    #[cfg(target_os = "linux")]
    {
        // SAFETY: libc is loaded already; the second candidate does not exist.
        let err = unsafe { Library::open_first([PathBuf::from("libc.so.6"), PathBuf::from("/nonexistent/libsensel.so")]) }.unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(
                "libc.so.6: lacks the symbol senselGetDeviceList; /nonexistent/libsensel.so: "
            ),
            "{text}"
        );
    }
}

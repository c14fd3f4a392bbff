//! Shared helpers for the integration tests: rendering notes through the engine and
//! measuring what comes out.
#![allow(dead_code)]

use rosin_engine::controls::Controls;
use rosin_engine::render::{render, Timeline, TimelineItem};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

pub const TEST_RATES_HZ: [f64; 3] = [44_100.0, 48_000.0, 96_000.0];

pub fn note_id(key: u8) -> NoteId {
    NoteId { channel: 0, note: key, voice_id: None }
}

/// Renders one note held for `held_s` then released, with `tail_s` after, through a fresh
/// engine. Returns the engine too, for its statistics.
pub fn render_note(key: u8, velocity: f64, sample_rate_hz: f64, held_s: f64, tail_s: f64, controls: Controls) -> (Vec<f32>, Engine) {
    let mut engine = Engine::new(sample_rate_hz);
    let mut timeline = Timeline::default();
    timeline.push(0, TimelineItem::Note(NoteEvent::NoteOn { note: note_id(key), velocity }));
    let off = (held_s * sample_rate_hz) as u64;
    timeline.push(off, TimelineItem::Note(NoteEvent::NoteOff { pattern: NotePattern::exact(note_id(key)) }));
    let mut controls = controls;
    let out = render(&mut engine, &mut controls, &timeline, off + (tail_s * sample_rate_hz) as u64, 256);
    (out, engine)
}

/// The fundamental frequency of a periodic signal, from the autocorrelation at a lag of as
/// many whole periods as fit in half the signal (so the estimate's error is divided by
/// that count), refined by parabolic interpolation.
pub fn fundamental_hz(signal: &[f32], sample_rate_hz: f64, expected_hz: f64) -> f64 {
    let x: Vec<f64> = {
        let mean = signal.iter().map(|&s| s as f64).sum::<f64>() / signal.len() as f64;
        signal.iter().map(|&s| s as f64 - mean).collect()
    };
    let correlation = |lag: usize| -> f64 {
        let n = x.len() - lag;
        let dot: f64 = (0..n).map(|i| x[i] * x[i + lag]).sum();
        let e0: f64 = x[..n].iter().map(|v| v * v).sum();
        let e1: f64 = x[lag..].iter().map(|v| v * v).sum();
        dot / (e0 * e1).sqrt().max(1e-300)
    };
    // First find one period near the expectation (within a semitone either side).
    let peak_near = |centre: f64, half_width: f64| -> f64 {
        let lo = (centre - half_width).floor().max(2.0) as usize;
        let hi = (centre + half_width).ceil() as usize;
        let (mut best, mut best_value) = (lo, f64::MIN);
        for lag in lo..=hi {
            let v = correlation(lag);
            if v > best_value {
                best_value = v;
                best = lag;
            }
        }
        let (a, b, c) = (correlation(best - 1), best_value, correlation(best + 1));
        let denominator = a - 2.0 * b + c;
        best as f64 + if denominator.abs() > 1e-300 { 0.5 * (a - c) / denominator } else { 0.0 }
    };
    let mut periods = 1.0;
    let mut period = peak_near(sample_rate_hz / expected_hz, sample_rate_hz / expected_hz * 0.06);
    // Refine at ever longer lags; each step's prediction error stays inside its window.
    while period * periods * 4.0 < x.len() as f64 * 0.5 {
        periods *= 4.0;
        period = peak_near(period * periods, 3.0) / periods;
    }
    sample_rate_hz / period
}

pub fn cents(f: f64, reference: f64) -> f64 {
    1200.0 * (f / reference).log2()
}

pub fn peak(signal: &[f32]) -> f32 {
    signal.iter().fold(0.0f32, |a, &b| a.max(b.abs()))
}

pub fn rms(signal: &[f32]) -> f64 {
    (signal.iter().map(|&s| (s as f64) * (s as f64)).sum::<f64>() / signal.len().max(1) as f64).sqrt()
}

pub fn db(x: f64) -> f64 {
    20.0 * x.max(1e-30).log10()
}

/// A small deterministic generator for test input (no dependency on the plugin's RNG).
pub struct TestRng(pub u64);

impl TestRng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `signal` through a Hann window (zero at both ends).
pub fn hann_windowed(signal: &[f64]) -> Vec<f64> {
    signal.iter().enumerate().map(|(i, x)| x * (0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / (signal.len() - 1) as f64).cos())).collect()
}

/// The squared magnitude of `signal`'s discrete-time Fourier transform at `frequency_hz`.
pub fn dft_power(signal: &[f64], sample_rate_hz: f64, frequency_hz: f64) -> f64 {
    let w = 2.0 * std::f64::consts::PI * frequency_hz / sample_rate_hz;
    let (mut re, mut im) = (0.0, 0.0);
    for (i, x) in signal.iter().enumerate() {
        let (s, c) = (w * i as f64).sin_cos();
        re += x * c;
        im -= x * s;
    }
    re * re + im * im
}

/// The frequency of the strongest spectral peak near `guess_hz` in `signal`, by a
/// zero-padded DFT scan refined with a parabola (resolution far below a cent for seconds of signal).
pub fn peak_frequency_hz(signal: &[f64], sample_rate_hz: f64, guess_hz: f64) -> f64 {
    let window = hann_windowed(signal);
    let power = |f: f64| dft_power(&window, sample_rate_hz, f);
    let resolution = sample_rate_hz / signal.len() as f64;
    let mut best = guess_hz;
    let mut step = resolution;
    for _ in 0..6 {
        let candidates: Vec<f64> = (-4..=4).map(|i| best + i as f64 * step).collect();
        best = candidates.into_iter().max_by(|a, b| power(*a).total_cmp(&power(*b))).unwrap();
        step /= 4.0;
    }
    best
}

/// A private copy of the mock LibSensel (`cargo build -p sensel-mock`), so each test has
/// a mock of its own: the dynamic loader gives each file its own instance.
pub fn mock_sensel_copy(name: &str) -> std::path::PathBuf {
    let built = sensel_sys::mock::built_path(&target_dir(), "debug");
    assert!(built.exists(), "{} is missing: run `cargo build -p sensel-mock` first (scripts/test.sh does)", built.display());
    let dir = std::env::temp_dir().join(format!("rosin-mock-sensel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join(format!("{name}-{}", sensel_sys::mock::file_name()));
    std::fs::copy(&built, &copy).unwrap();
    copy
}

/// Waits up to `timeout_s` for `condition` (a liveness bound for threads, not a timing).
pub fn wait_for(timeout_s: f64, mut condition: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout_s);
    while std::time::Instant::now() < until {
        if condition() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    condition()
}

/// The target directory this test run builds into: the test executable sits in its
/// `<profile>/deps/`.
pub fn target_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.ancestors().nth(3).expect("target directory").to_path_buf()
}

/// A program of the workspace, built by the same run (`scripts/test.sh` builds the
/// workspace's programs before it runs the tests) with the same profile.
pub fn workspace_program(name: &str) -> std::process::Command {
    let exe = std::env::current_exe().expect("test executable path");
    let path = exe.ancestors().nth(2).expect("profile directory").join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} is missing: run `cargo build --bins` first (scripts/test.sh does)", path.display());
    std::process::Command::new(path)
}
pub mod listen;

/// The area a (relative velocity, force) loop drawn over `periods` periods encloses in one
/// (shoelace), relative to its bounding box: 0 for a force that is a function of the
/// velocity, more the more the friction remembers.
pub fn relative_loop_area(cycle: &[(f64, f64)], periods: usize) -> f64 {
    let area = cycle.windows(2).map(|w| w[0].0 * w[1].1 - w[1].0 * w[0].1).sum::<f64>().abs() / 2.0 / periods as f64;
    let (vmin, vmax) = cycle.iter().fold((f64::MAX, f64::MIN), |(a, b), (v, _)| (a.min(*v), b.max(*v)));
    let (fmin, fmax) = cycle.iter().fold((f64::MAX, f64::MIN), |(a, b), (_, f)| (a.min(*f), b.max(*f)));
    area / ((vmax - vmin) * (fmax - fmin))
}

/// The slips in a bowed string's relative velocity: each entry below `-bow_velocity_mps`,
/// counted once until the velocity comes back above `-0.3 bow_velocity_mps`.
pub fn slips(relative_mps: impl IntoIterator<Item = f64>, bow_velocity_mps: f64) -> usize {
    let (mut slips, mut slipping) = (0, false);
    for v in relative_mps {
        if !slipping && v < -bow_velocity_mps {
            slips += 1;
            slipping = true;
        } else if slipping && v > -0.3 * bow_velocity_mps {
            slipping = false;
        }
    }
    slips
}

/// The slope of the least-squares line through `points`.
pub fn least_squares_slope(points: &[(f64, f64)]) -> f64 {
    let count = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (sxx, sxy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x * x, b + x * y));
    (count * sxy - sx * sy) / (count * sxx - sx * sx)
}

//! What the benches share: the rate and block they render at, an engine already bowing in
//! steady state, and the real-time factor.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::Instant;

use rosin_engine::controls::Controls;
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent};

/// Every bench renders at 48 kHz ...
pub const RATE: f64 = 48_000.0;
/// ... in blocks of 10 ms.
pub const BLOCK: usize = 480;

/// An engine with `controls` already sounding `keys` at `velocity`, rendered for `warm_s`
/// so that what is measured is the steady state.
pub fn sounding(controls: &Controls, keys: &[u8], velocity: f64, warm_s: f64) -> Engine {
    sounding_at(RATE, controls, keys, velocity, warm_s)
}

/// [`sounding`] at `rate_hz` instead of [`RATE`].
pub fn sounding_at(rate_hz: f64, controls: &Controls, keys: &[u8], velocity: f64, warm_s: f64) -> Engine {
    warmed(Engine::new(rate_hz), controls, keys, velocity, warm_s)
}

/// [`sounding`] with the *Voices* control at `string_voices` rather than its default
/// sixteen.
pub fn sounding_with_voices(string_voices: usize, controls: &Controls, keys: &[u8], velocity: f64, warm_s: f64) -> Engine {
    warmed(Engine::new(RATE), &Controls { voice_count: string_voices as f64, ..*controls }, keys, velocity, warm_s)
}

/// `engine` with `controls`, sounding `keys` after `warm_s` of them. Each key is played on
/// a channel of its own in turn (0 to 15), so that a key listed twice sounds twice.
fn warmed(mut engine: Engine, controls: &Controls, keys: &[u8], velocity: f64, warm_s: f64) -> Engine {
    engine.set_controls(controls);
    for (i, &key) in keys.iter().enumerate() {
        engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: (i % 16) as u8, note: key, voice_id: None }, velocity });
    }
    let mut warm = vec![0.0f32; (warm_s * engine.sample_rate_hz()) as usize];
    engine.render(&mut warm);
    engine
}

/// Seconds of audio rendered per second of wall time: `render` fills one block of
/// [`BLOCK`] samples a call, for `seconds` of audio at [`RATE`].
pub fn real_time_factor<T: Copy + Default>(seconds: f64, render: impl FnMut(&mut [T])) -> f64 {
    real_time_factor_at(RATE, seconds, render)
}

/// [`real_time_factor`] for an engine running at `rate_hz`.
pub fn real_time_factor_at<T: Copy + Default>(rate_hz: f64, seconds: f64, mut render: impl FnMut(&mut [T])) -> f64 {
    let mut buffer = vec![T::default(); BLOCK];
    let blocks = (seconds * rate_hz / BLOCK as f64) as usize;
    let start = Instant::now();
    for _ in 0..blocks {
        render(black_box(&mut buffer));
    }
    (blocks * BLOCK) as f64 / rate_hz / start.elapsed().as_secs_f64()
}

/// Eight strings and one drum at full resolution, all sounding: what the editor's views
/// draw at their busiest.
pub fn busy_engine() -> Engine {
    let mut engine = Engine::new(RATE);
    let mut controls = Controls::default();
    engine.set_controls(&controls);
    for key in [43, 50, 57, 64, 67, 71, 74, 79] {
        engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: key, voice_id: None }, velocity: 1.0 });
    }
    controls.instrument = 1.0;
    engine.set_controls(&controls);
    engine.handle_event(&NoteEvent::NoteOn { note: NoteId { channel: 0, note: 60, voice_id: None }, velocity: 1.0 });
    let mut warm = vec![0.0f32; 4800];
    engine.render(&mut warm);
    engine
}

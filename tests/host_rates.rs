//! Any sample rate a host asks for, and any block size: the physics runs from 22.05 to
//! 192 kHz, and outside that range at a multiple or fraction of the host's rate
//! (`rosin_engine::dsp::host_rate`). Notes sound in tune at every rate, and no output sample
//! is ever non-finite or subnormal, on every instrument and friction model, through the
//! note-off and the ring-out to silence.

mod common;

use common::*;
use rosin_engine::controls::Controls;
use rosin_engine::dsp::host_rate::{Conversion, RateAdapter, RatePlan, MAX_INTERNAL_RATE_HZ, MIN_INTERNAL_RATE_HZ};
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

/// An engine at the plan's internal rate behind its adapter.
struct HostSide {
    engine: Engine,
    adapter: RateAdapter,
    rate_hz: f64,
}

impl HostSide {
    fn new(rate_hz: f64, controls: &Controls) -> Self {
        let plan = RatePlan::for_host_rate(rate_hz).unwrap();
        let mut engine = Engine::new(plan.internal_rate_hz);
        engine.set_controls(controls);
        Self { engine, adapter: RateAdapter::new(plan), rate_hz }
    }

    /// Renders `seconds` in blocks of sizes drawn from `blocks` in turn.
    fn render(&mut self, seconds: f64, blocks: &mut impl Iterator<Item = usize>) -> Vec<f32> {
        let mut out = vec![0.0f32; (seconds * self.rate_hz) as usize];
        let mut position = 0;
        while position < out.len() {
            let n = blocks.next().unwrap().min(out.len() - position);
            self.adapter.render(&mut self.engine, &mut out[position..position + n]);
            position += n;
        }
        out
    }
}

fn assert_clean(out: &[f32], what: &str) {
    for (i, s) in out.iter().enumerate() {
        assert!(s.is_finite(), "{what}: sample {i} is {s}");
        assert!(*s == 0.0 || s.abs() >= f32::MIN_POSITIVE, "{what}: sample {i} is subnormal ({s:e})");
        assert!(s.abs() < 4.0, "{what}: sample {i} is {s}");
    }
}

/// Host rates well outside the physics' range, common ones and fractional ones.
const RATES_HZ: [f64; 12] = [1_000.0, 1_234.5677, 8_000.0, 11_025.0, 16_000.0, 22_050.0, 44_100.0, 48_000.5, 192_000.0, 200_000.0, 384_000.0, 768_000.0];

#[test]
fn notes_sound_in_tune_at_every_host_rate() {
    let mut worst_outside: f64 = 0.0;
    for rate in RATES_HZ {
        let plan = RatePlan::for_host_rate(rate).unwrap();
        let inside = plan.conversion == Conversion::Direct;
        assert!((MIN_INTERNAL_RATE_HZ..=MAX_INTERNAL_RATE_HZ).contains(&plan.internal_rate_hz));
        // From E1 up, every note whose fundamental sits inside the conversion's passband.
        for key in [28u8, 45, 57, 69, 81] {
            let f0 = 440.0 * 2f64.powf((key as f64 - 69.0) / 12.0);
            if f0 > 0.4 * rate {
                continue;
            }
            let mut host = HostSide::new(rate, &Controls::default());
            host.engine.handle_event(&NoteEvent::NoteOn { note: note_id(key), velocity: 0.8 });
            let out = host.render(1.2, &mut [512usize, 77, 1].into_iter().cycle());
            assert_clean(&out, &format!("key {key} at {rate} Hz"));
            let steady = &out[(0.6 * rate) as usize..];
            let level = db(rms(steady));
            // Under 8 samples a period the autocorrelation's lag grid is too coarse: the
            // spectral peak measures those.
            let measured = if rate / f0 < 8.0 {
                peak_frequency_hz(&steady.iter().map(|&s| s as f64).collect::<Vec<_>>(), rate, f0)
            } else {
                fundamental_hz(steady, rate, f0)
            };
            let error = cents(measured, f0);
            println!("{rate:>9} Hz ({:?}, latency {} samples): key {key} {error:+.2} cents, {level:.1} dB", plan.conversion, plan.latency_samples());
            assert!(level > -40.0, "key {key} at {rate} Hz is silent ({level:.1} dB)");
            let tolerance = if inside { 3.0 } else { 10.0 };
            assert!(error.abs() < tolerance, "key {key} at {rate} Hz: {error:+.2} cents");
            if !inside {
                worst_outside = worst_outside.max(error.abs());
            }
        }
    }
    println!("worst pitch error outside 22.05 to 192 kHz: {worst_outside:.2} cents");
}

/// The same notes through the adapter in any block sizes (1 to 16384, not only powers of
/// two) give the same samples: the conversion keeps no state that depends on the blocks.
#[test]
fn the_conversion_does_not_depend_on_block_sizes() {
    for rate in [1_234.5677, 768_000.0, 48_000.0] {
        let mut renders = Vec::new();
        for blocks in [vec![1usize], vec![16_384], vec![3, 1000, 4097, 5]] {
            let mut host = HostSide::new(rate, &Controls::default());
            host.engine.handle_event(&NoteEvent::NoteOn { note: note_id(57), velocity: 0.8 });
            renders.push(host.render(0.3, &mut blocks.into_iter().cycle()));
        }
        assert_eq!(renders[0], renders[1], "{rate} Hz: blocks of 1 and of 16384 differ");
        assert_eq!(renders[0], renders[2], "{rate} Hz: odd blocks differ");
    }
}

/// Every instrument, string engine and friction model, at a rate below, inside and above
/// the physics' range: a note, its release and its ring-out to silence, in random block
/// sizes, never give the host a non-finite or subnormal sample.
#[test]
fn no_subnormal_or_non_finite_sample_through_the_ring_out() {
    let mut renders = 0u64;
    for rate in [1_000.0, 48_000.0, 768_000.0] {
        for (instrument, engine, model) in [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 0), (0, 1, 2), (1, 0, 0)] {
            // The drum's 2-D grid at 96 kHz takes half a minute to ring out here; its output
            // meets the same interpolator as the strings'.
            if instrument == 1 && rate > 48_000.0 {
                continue;
            }
            let mut controls = Controls::default();
            controls.set("instrument", instrument as f64);
            controls.set("string_engine", engine as f64);
            controls.set("friction_model", model as f64);
            let what = format!("instrument {instrument}, engine {engine}, model {model} at {rate} Hz");
            let started = std::time::Instant::now();
            let mut host = HostSide::new(rate, &controls);
            let key = if instrument == 1 { 60 } else { 45 };
            host.engine.handle_event(&NoteEvent::NoteOn { note: note_id(key), velocity: 0.9 });
            let mut rng = TestRng(0x0ddb_10c5 + 7919 * renders);
            let mut blocks = std::iter::repeat_with(move || 1 + (rng.next_u64() % 16_384) as usize);
            let held = host.render(0.5, &mut blocks);
            assert_clean(&held, &what);
            host.engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(note_id(key)) });
            // Until the voice is freed (at most 20 s), then a second of the silence after.
            let mut seconds = 0.0;
            while host.engine.active_voice_count() > 0 {
                assert!(seconds < 20.0, "{what}: the voice never ended");
                assert_clean(&host.render(0.25, &mut blocks), &what);
                seconds += 0.25;
            }
            let after = host.render(1.0, &mut blocks);
            assert_clean(&after, &what);
            assert!(peak(&after[after.len() / 2..]) < 1e-6, "{what}: still sounding a second after the note ended");
            renders += 1;
            println!("{what}: rang out in {seconds} s ({:.1} s to render)", started.elapsed().as_secs_f64());
        }
    }
    println!("{renders} notes rung out to silence, every sample finite and normal or zero");
}

//! A fuzz campaign through the CLAP ABI, in the test host of `tests/clap/host.rs`: each
//! render picks a sample rate (1 kHz to 768 kHz, fractional ones too) and a largest block,
//! then plays blocks of random sizes full of random events: every parameter at random values
//! and at its extremes, MIDI and MPE storms (notes, controllers, RPNs, bends, pressure),
//! note expressions, polyphonic modulation; and at random moments it saves and restores the
//! state, or feeds the plugin a random, truncated or version-mismatched state blob.
//!
//! - Every output sample is finite, never subnormal, and bounded (the host's buffers arrive
//!   full of NaN, so every sample must be written).
//! - The library is built with `assert_process_allocs` by the test command: an allocation
//!   in `process()` aborts the run, as a panic would.
//! - No block takes more than 10 times the time per frame of its render's usual busy block:
//!   the 90th percentile over blocks of 64 frames or more that sound, with at most 8 events
//!   and no storm in the 512 engine samples before them (the events behind a storm's
//!   note-ons wait and play a few a sample: `rosin_engine::held_events`).
//!   Not the median, as the issue first put it: a render's median block is often one voice
//!   ringing out, at a twentieth of the cost of sixteen voices bowing, which is load, not a
//!   stall. A silent block costs next to nothing, and a storm's block costs in proportion
//!   to its events (the worst cost per event is printed). The instrument is chosen once a
//!   render, since a drum voice costs tens of string voices. The yardstick is also at least
//!   the time per frame of the block before (whatever its events) and of the block after (a
//!   calm one; the render ends with one such block, without events), each of 16 frames or
//!   more: voices keep costing from block to block, while a solver's run-away does not.
//!   Voices that a storm starts and the next storm chokes make a calm block between them tens
//!   of times the render's usual one, but no more than the storm's block that started them
//!   (renders 3786, 3873 and 7636: sixteen ribbon bows with the refined law cost about 100 us
//!   a sample). Times are the audio thread's CPU time, so a build
//!   running beside the campaign does not read as a stall; and a block over the bound is
//!   played again (the render is deterministic): only one slow both times is a stall.
//!   Every stalled render is listed before the test fails.
//! - A bad state blob is refused and leaves the instance's state as it was.
//!
//! The normal suite runs 24 renders; `ROSIN_FUZZ_RENDERS=10000` is the nightly-size run
//! (`ROSIN_FUZZ_FIRST=N` starts at render N, to run it in parts; `ROSIN_FUZZ_RENDER=N` plays
//! render N alone, and `ROSIN_FUZZ_SHOW_BLOCK=B` prints its block B's events and the state
//! after it).
// Needs the plugin crate: left out of the quick tier (`--no-default-features`).
#![cfg(feature = "plugin")]

mod common;
#[path = "clap/host.rs"]
mod host;

use clap_sys::events::*;
use clap_sys::ext::params::{clap_param_info, CLAP_PARAM_IS_MODULATABLE_PER_KEY, CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID, CLAP_PARAM_IS_STEPPED};
use common::*;
use host::*;

const PLUGIN_ID: &str = "org.rosin.rosin";
/// The output's safety limiter holds every sample under +12 dBFS.
const OUTPUT_BOUND: f32 = rosin_engine::dsp::output::SAFETY_CEILING as f32;
const RATES_HZ: [f64; 13] = [1_000.0, 1_234.5677, 8_000.0, 22_050.0, 31_999.9, 44_100.0, 44_100.5, 48_000.0, 88_200.0, 96_000.0, 192_000.0, 384_000.0, 768_000.0];
/// Blocks with at most this many events are compared for stalls.
const CALM_EVENTS: usize = 8;
/// Blocks shorter than this are not yardsticks for their neighbours: a call's own overhead
/// would count for much of their time per frame.
const NEIGHBOUR_FRAMES: u32 = 16;
const MAX_BLOCKS: [u32; 10] = [1, 2, 3, 17, 64, 256, 512, 1000, 4096, 16_384];

#[derive(Default)]
struct Totals {
    renders: usize,
    blocks: usize,
    events: usize,
    frames: u64,
    state_round_trips: usize,
    bad_states_refused: usize,
    mismatched_states_loaded: usize,
    worst_peak: f32,
    slow_blocks_replayed: usize,
    /// The most a storm's block took per event, in microseconds.
    worst_event_us: f64,
}

struct Fuzz {
    rng: TestRng,
    params: Vec<clap_param_info>,
}

impl Fuzz {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.unit() < p
    }

    fn any_param(&mut self) -> clap_param_info {
        let index = self.below(self.params.len() as u64) as usize;
        self.params[index]
    }

    /// A value for a parameter: a third of the time one of its extremes.
    fn param_value(&mut self, info: &clap_param_info) -> f64 {
        let value = match self.below(6) {
            0 => info.min_value,
            1 => info.max_value,
            _ => info.min_value + (info.max_value - info.min_value) * self.rng.unit(),
        };
        if info.flags & CLAP_PARAM_IS_STEPPED != 0 {
            value.round()
        } else {
            value
        }
    }

    fn event(&mut self) -> HostEvent {
        let channel = self.below(16) as i16;
        let key = self.below(128) as i16;
        let note_id = self.below(64) as i32 - 1;
        match self.below(12) {
            0 | 1 => {
                let info = self.any_param();
                HostEvent::Param { id: info.id, value: self.param_value(&info) }
            }
            2 => {
                let info = self.any_param();
                let span = info.max_value - info.min_value;
                let amount = span * (2.0 * self.rng.unit() - 1.0) * if self.chance(0.2) { 4.0 } else { 1.0 };
                // Aimed at one note only where the parameter says it can be (as a host does);
                // otherwise the whole instrument.
                let per_note = info.flags & (CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID | CLAP_PARAM_IS_MODULATABLE_PER_KEY) != 0;
                let (note_id, channel, key) = if !per_note || self.chance(0.5) { (-1, -1, -1) } else { (note_id, channel, key) };
                HostEvent::ParamMod { id: info.id, note_id, channel, key, amount }
            }
            3 => {
                let info = self.any_param();
                HostEvent::ParamAt { id: info.id, value: self.param_value(&info), note_id, channel, key }
            }
            4 | 5 => {
                let velocity = match self.below(5) {
                    0 => 0.0,
                    1 => 1.0,
                    _ => self.rng.unit(),
                };
                HostEvent::NoteOnAt { channel, key, velocity, note_id }
            }
            6 => HostEvent::NoteOffAt { channel, key, note_id },
            7 => HostEvent::NoteChoke { channel: if self.chance(0.3) { -1 } else { channel }, key: if self.chance(0.3) { -1 } else { key }, note_id },
            8 => {
                let expression_id = self.below(7) as i32;
                let value = match expression_id {
                    CLAP_NOTE_EXPRESSION_TUNING => 240.0 * (self.rng.unit() - 0.5),
                    CLAP_NOTE_EXPRESSION_VOLUME => 4.0 * self.rng.unit(),
                    _ => self.rng.unit(),
                };
                // Now and then far out of the documented range.
                let value = if self.chance(0.1) { value * 1e6 } else { value };
                HostEvent::NoteExpression { expression_id, note_id, channel, key, value }
            }
            _ => {
                // MIDI 1.0 on any channel: notes, poly and channel pressure, controllers (the
                // mod wheel, RPN pitch-bend range, channel modes), program change, bends.
                let status = [0x80u8, 0x90, 0xA0, 0xB0, 0xB0, 0xB0, 0xC0, 0xD0, 0xE0][self.below(9) as usize] | channel as u8;
                let data1 = if status & 0xF0 == 0xB0 { [1u8, 1, 6, 38, 64, 74, 100, 101, 120, 121, 123, 127][self.below(12) as usize] } else { key as u8 };
                HostEvent::Midi { data: [status, data1, self.below(128) as u8] }
            }
        }
    }

    /// A state blob that must be refused: nothing, random bytes, a valid state cut short
    /// (behind its own length prefix, or behind one that promises more), or one whose JSON
    /// body no longer opens as an object. (Random bytes changed inside the JSON could still
    /// make a valid state, which must load: those are the version-mismatch cases' business.)
    fn bad_state(&mut self, good: &[u8]) -> Vec<u8> {
        let body = &good[8..];
        match self.below(5) {
            0 => Vec::new(),
            1 => (0..self.below(300)).map(|_| self.below(256) as u8).collect(),
            2 => {
                // The length prefix promises more than follows.
                let cut = 8 + self.below((good.len() - 8) as u64) as usize;
                good[..cut].to_vec()
            }
            3 => {
                // A consistent length over a JSON object cut short: never valid JSON.
                let cut = 1 + self.below((body.len() - 2) as u64) as usize;
                let mut blob = (cut as u64).to_le_bytes().to_vec();
                blob.extend_from_slice(&body[..cut]);
                blob
            }
            _ => {
                // A consistent length over a body that does not open as an object.
                let mut blob = good.to_vec();
                blob[8] = b"}]\":,\0x"[self.below(7) as usize];
                blob
            }
        }
    }
}

/// The same state with its versions changed: an older or a newer Rosin's.
fn mismatched_state(good: &[u8], rosin_version: &str, state_version: &str) -> Vec<u8> {
    let json = String::from_utf8_lossy(&good[8..]).into_owned();
    let json = match json.find("\"version\":\"") {
        Some(start) => {
            let value_start = start + "\"version\":\"".len();
            let end = value_start + json[value_start..].find('"').unwrap();
            format!("{}{rosin_version}{}", &json[..value_start], &json[end..])
        }
        None => json,
    };
    let json = json.replace(&format!("\"state_version\":\"{}\"", rosin_engine::state::STATE_VERSION), &format!("\"state_version\":\"{state_version}\""));
    state_bytes(&json)
}

/// Plays one render; returns the blocks that took over 10 times the render's usual time per
/// frame (its 90th percentile over calm, sounding blocks; by index), and checks everything
/// else on the way.
fn render(library: &ClapLibrary, seed: u64, totals: &mut Totals) -> Vec<usize> {
    let mut instance = ClapInstance::new(library, PLUGIN_ID);
    // The instrument is chosen once a render: a friction drum's membrane costs tens of
    // times a string's, so blocks are compared with blocks of the same instrument. (Switching
    // instruments mid-storm is the engine's storm test, tests/robustness.rs.)
    let instrument_id = clap_param_id("instrument");
    let params: Vec<clap_param_info> = instance.param_infos().into_iter().filter(|p| p.id != instrument_id).collect();
    let mut fuzz = Fuzz { rng: TestRng(seed), params };
    let rate = if fuzz.chance(0.2) { 1_000.0 + 767_000.0 * fuzz.rng.unit() } else { RATES_HZ[fuzz.below(RATES_HZ.len() as u64) as usize] };
    let max_block = MAX_BLOCKS[fuzz.below(MAX_BLOCKS.len() as u64) as usize];
    assert!(instance.activate(rate, max_block), "seed {seed}: activation at {rate} Hz, blocks up to {max_block}");
    let drum = fuzz.chance(0.25);
    instance.process(1, &[(0, HostEvent::Param { id: instrument_id, value: if drum { 1.0 } else { 0.0 } })]);
    // A fifth of a second to half a second of audio, at most 60k frames.
    let frames = ((0.2 + 0.3 * fuzz.rng.unit()) * rate).min(60_000.0) as u64;
    let mut played = 0u64;
    let mut timings: Vec<(usize, u32, f64)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    // Every block's frames, time and whether it was calm: at most CALM_EVENTS events, and
    // no storm in the frames before it in which the events a storm's note-ons held back are
    // played (a few a sample, within HELD_EVENTS samples of the engine's rate; see
    // rosin_engine::held_events): that work is the storm's, not a stall.
    let mut all_blocks: Vec<(u32, f64, bool)> = Vec::new();
    let internal_rate_hz = rosin_engine::dsp::host_rate::RatePlan::for_host_rate(rate).expect("a rate the plugin took").internal_rate_hz;
    let storm_spill_frames = (rosin_engine::held_events::HELD_EVENTS as f64 * rate / internal_rate_hz).ceil() as u64;
    let mut frames_since_storm = u64::MAX;
    let mut last_block_frames = 0;
    let mut block_index = 0;
    while played < frames {
        let n = (1 + fuzz.below(max_block as u64) as u32).min((frames - played) as u32);
        let storm = fuzz.chance(0.1);
        // Now and then the largest storm a VST3 host sends: every MIDI-CC proxy at once.
        let largest = if fuzz.chance(0.1) { 2_100 } else { 300 };
        let count = if storm { 1 + fuzz.below(largest) } else { fuzz.below(4) };
        let mut events: Vec<(u32, HostEvent)> = (0..count).map(|_| (fuzz.below(n as u64) as u32, fuzz.event())).collect();
        events.sort_by_key(|(time, _)| *time);
        totals.events += events.len();
        let mut action = "";
        if fuzz.chance(0.03) {
            action = "after a state load, ";
            let good = instance.save_state();
            match fuzz.below(3) {
                0 => {
                    assert!(instance.load_state(&good), "seed {seed}: the plugin's own state was refused");
                    totals.state_round_trips += 1;
                }
                1 => {
                    let bad = fuzz.bad_state(&good);
                    assert!(!instance.load_state(&bad), "seed {seed}: a bad state blob ({} bytes) was accepted", bad.len());
                    assert_eq!(instance.save_state(), good, "seed {seed}: a refused state changed the instance");
                    totals.bad_states_refused += 1;
                }
                _ => {
                    let (rosin, state) = [("0.0.1", "1"), ("99.0.0", "999"), ("0.1.0", "2")][fuzz.below(3) as usize];
                    assert!(instance.load_state(&mismatched_state(&good, rosin, state)), "seed {seed}: a state from Rosin {rosin} (state {state}) was refused");
                    totals.mismatched_states_loaded += 1;
                }
            }
        }
        let (left, right) = instance.process(n, &events);
        if std::env::var("ROSIN_FUZZ_SHOW_BLOCK").is_ok_and(|b| b.parse() == Ok(block_index)) {
            println!("block {block_index}: {:.3} ms, events {events:?}", instance.last_process_s * 1e3);
            println!("state {}", String::from_utf8_lossy(&instance.save_state()[8..]));
        }
        check_output(&left, &right, totals, &format!("seed {seed}: block {block_index} ({rate} Hz, {n} frames)"));
        // A storm's block costs in proportion to its events (each parameter change splits
        // the block and recomputes the controls): only calm blocks are compared for stalls.
        let sounding = left.iter().any(|s| *s != 0.0);
        let calm = events.len() <= CALM_EVENTS && frames_since_storm >= storm_spill_frames;
        if calm && sounding {
            timings.push((block_index, n, instance.last_process_s));
        } else if events.len() > CALM_EVENTS {
            totals.worst_event_us = totals.worst_event_us.max(instance.last_process_s * 1e6 / events.len() as f64);
        }
        all_blocks.push((n, instance.last_process_s, calm));
        frames_since_storm = if events.len() > CALM_EVENTS { 0 } else { frames_since_storm.saturating_add(n as u64) };
        last_block_frames = n;
        notes.push(format!("{action}{rate} Hz, {n} frames, {} events, {:.3} ms", events.len(), instance.last_process_s * 1e3));
        played += n as u64;
        block_index += 1;
        totals.blocks += 1;
    }
    // One more block without events, as long as the last: the last block's note, if costly,
    // is measured again in it.
    let tail = last_block_frames.max(1);
    let (left, right) = instance.process(tail, &[]);
    check_output(&left, &right, totals, &format!("seed {seed}: the tail block ({rate} Hz, {tail} frames)"));
    all_blocks.push((tail, instance.last_process_s, frames_since_storm >= storm_spill_frames));
    totals.frames += played + tail as u64;
    let per_frame: Vec<f64> = timings.iter().filter(|(_, n, _)| *n >= 64).map(|(_, n, t)| t / *n as f64).collect();
    if per_frame.len() < 5 {
        return Vec::new();
    }
    let usual = percentile(per_frame, 0.9);
    // The yardstick of block i: the render's usual time per frame, or the block before's (any
    // events) or the block after's (a calm one) if more, each long enough to time.
    let per_frame_of = |j: usize, calm_only: bool| match all_blocks.get(j) {
        Some(&(n, t, calm)) if n >= NEIGHBOUR_FRAMES && (calm || !calm_only) => t / n as f64,
        _ => 0.0,
    };
    let yardstick = |i: usize| usual.max(per_frame_of(i + 1, true)).max(if i > 0 { per_frame_of(i - 1, false) } else { 0.0 });
    // A tenth of a millisecond is the machine's noise floor, not a stall.
    let slow: Vec<usize> = timings.iter().filter(|(i, n, t)| *n >= 64 && *t > 10.0 * yardstick(*i) * *n as f64 && *t > 1e-4).map(|(i, _, _)| *i).collect();
    for &i in &slow {
        println!("seed {seed}: block {i} ({}) against {:.3} us a frame (the 90th percentile {:.3})", notes[i], yardstick(i) * 1e6, usual * 1e6);
    }
    slow
}

/// Every sample finite, never subnormal and bounded; the worst peak is recorded.
fn check_output(left: &[f32], right: &[f32], totals: &mut Totals, block: &str) {
    for (i, s) in left.iter().chain(right).enumerate() {
        assert!(s.is_finite() && (*s == 0.0 || s.abs() >= f32::MIN_POSITIVE), "{block}: sample {i} is {s:e}");
        assert!(s.abs() <= OUTPUT_BOUND, "{block}: sample {i} is {s}");
        totals.worst_peak = totals.worst_peak.max(s.abs());
    }
}

fn percentile(mut values: Vec<f64>, fraction: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * fraction) as usize]
}

#[test]
fn fuzz_campaign_through_the_clap_abi() {
    let renders: u64 = std::env::var("ROSIN_FUZZ_RENDERS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let library = ClapLibrary::load(&plugin_path());
    let mut totals = Totals::default();
    let only: Option<u64> = std::env::var("ROSIN_FUZZ_RENDER").ok().and_then(|v| v.parse().ok());
    // A long campaign can be run in parts: `ROSIN_FUZZ_FIRST` is the first render's index.
    let first: u64 = std::env::var("ROSIN_FUZZ_FIRST").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    // Renders with a stall, by index: all of them are listed before the test fails.
    let mut stalls: Vec<u64> = Vec::new();
    for render_index in first..first + renders {
        if only.is_some_and(|o| o != render_index) {
            continue;
        }
        let seed = 0xF022_0000_u64.wrapping_add(render_index.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1;
        let slow = render(&library, seed, &mut totals);
        if !slow.is_empty() {
            // Play it again: a block slow twice is the plugin's, once is the machine's.
            totals.slow_blocks_replayed += slow.len();
            let mut again = Totals::default();
            let slow_again = render(&library, seed, &mut again);
            let both: Vec<usize> = slow.iter().filter(|b| slow_again.contains(b)).copied().collect();
            if !both.is_empty() {
                println!("STALL render {render_index}, seed {seed}: blocks {both:?} took over 10 times the render's usual time per frame, twice");
                stalls.push(render_index);
            }
        }
        totals.renders += 1;
    }
    println!(
        "{} renders, {} blocks, {} frames, {} events; {} state round trips, {} bad states refused, {} other versions' states loaded; {} slow blocks replayed; storms took at most {:.1} us an event; worst peak {:.3} ({:+.1} dBFS)",
        totals.renders,
        totals.blocks,
        totals.frames,
        totals.events,
        totals.state_round_trips,
        totals.bad_states_refused,
        totals.mismatched_states_loaded,
        totals.slow_blocks_replayed,
        totals.worst_event_us,
        totals.worst_peak,
        20.0 * (totals.worst_peak.max(1e-12) as f64).log10()
    );
    assert!(stalls.is_empty(), "{} of {} renders stalled: {stalls:?} (ROSIN_FUZZ_RENDER=N plays one again)", stalls.len(), totals.renders);
}

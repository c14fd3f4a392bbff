//! Rosin played as a producer plays it: phrases, not held notes. Two-octave legato scales
//! on the default instrument and every string preset, in each playing mode, at three
//! velocities, with and without the mod wheel's vibrato; repeated notes, chords and fast
//! runs. What a listener hears is measured (`common::listen`): every note periodic at its
//! period and in tune, no burst above 6 kHz at a note change, levels on a smooth curve,
//! peaks below full scale.
//!
//! The normal suite plays a cross-section of the matrix; `ROSIN_PHRASES=full` plays all of
//! it (9 instruments x 3 modes x 3 velocities x 2 mod-wheel settings). `ROSIN_PHRASES_TAKES=N`
//! plays the legato scales as N takes, each note's bow noise drawn anew in each
//! (`Engine::set_take`; take 0 alone unless set), from take `ROSIN_PHRASES_FIRST_TAKE` on
//! (0 unless set), so that a census can be carried on past the takes it has played.

mod common;

use common::listen::{listen, melody, octave_over_fundamental_db, render_phrase, render_phrase_take, two_octave_scale, PhraseReport};
use rosin_engine::controls::{Controls, PlayMode};
use rosin_engine::presets::PRESETS;
use rosin_physics::string::string_set::string_set;

const RATE_HZ: f64 = 48_000.0;

/// The default instrument and every string preset, by name.
fn string_instruments() -> Vec<(&'static str, Controls)> {
    let mut all = vec![("Default", Controls::default())];
    all.extend(PRESETS.iter().filter(|p| p.controls().instrument < 0.5).map(|p| (p.name, p.controls())));
    all
}

/// With `ROSIN_PHRASES_WAV=DIR`, each render is also written to DIR, to listen to.
fn write_wav(name: &str, samples: &[f32], sample_rate_hz: f64) {
    let Ok(dir) = std::env::var("ROSIN_PHRASES_WAV") else { return };
    let spec = hound::WavSpec { channels: 1, sample_rate: sample_rate_hz as u32, bits_per_sample: 32, sample_format: hound::SampleFormat::Float };
    let path = std::path::Path::new(&dir).join(format!("{}.wav", name.replace(' ', "-")));
    let mut writer = hound::WavWriter::create(&path, spec).expect("a writable WAV");
    samples.iter().for_each(|&s| writer.write_sample(s).expect("a writable WAV"));
    writer.finalize().expect("a writable WAV");
}

fn full_matrix() -> bool {
    std::env::var("ROSIN_PHRASES").is_ok_and(|v| v == "full")
}

/// How many takes of the legato scales to play (`ROSIN_PHRASES_TAKES`, 1 to 64; 1 unless
/// set): take 0, the default take, then takes 1, 2, ... with the bow noise drawn anew.
fn takes() -> u64 {
    std::env::var("ROSIN_PHRASES_TAKES").ok().and_then(|v| v.parse::<u64>().ok()).filter(|n| (1..=64).contains(n)).unwrap_or(1)
}

/// The first take of the legato scales (`ROSIN_PHRASES_FIRST_TAKE`, 0 unless set): a
/// census of takes 0 to 5 goes on with `ROSIN_PHRASES_FIRST_TAKE=6`.
fn first_take() -> u64 {
    std::env::var("ROSIN_PHRASES_FIRST_TAKE").ok().and_then(|v| v.parse::<u64>().ok()).filter(|n| *n <= 1_000).unwrap_or(0)
}

/// The rate the legato scales are played at: [`RATE_HZ`], or `ROSIN_PHRASES_RATE` (Hz), to
/// hear them as a host at another rate would. Their bounds are met at 48 kHz; at 44.1 and
/// 96 kHz a few notes are not yet (`docs/physics.md`, *At other rates*).
fn scale_rate_hz() -> f64 {
    std::env::var("ROSIN_PHRASES_RATE").ok().and_then(|v| v.parse::<f64>().ok()).filter(|r| (8_000.0..=384_000.0).contains(r)).unwrap_or(RATE_HZ)
}

fn mode_name(mode: PlayMode) -> &'static str {
    match mode {
        PlayMode::Poly => "poly",
        PlayMode::FourStrings => "four strings",
        PlayMode::MonoLegato => "mono legato",
    }
}

/// A legato line as a DAW sends it: each note-off on the same sample as the next note-on,
/// and before it. Players' own overlaps (the next note first) are played too.
const DAW_LEGATO_S: f64 = 0.0;
const OVERLAP_S: f64 = 0.005;

fn scale_report(name: &str, controls: &Controls, mode: PlayMode, velocity: f64, mod_wheel: f64, overlap_s: f64, take: u64) -> PhraseReport {
    let mut controls = *controls;
    let rate_hz = scale_rate_hz();
    controls.play_mode = mode as u8 as f64;
    let lowest = string_set(controls.string_set).strings[0].open_key;
    // A preset with a slow legato glide or bow attack (a pad) is played slowly enough for
    // them to end: each note is judged once it has arrived.
    let settle_s = (controls.glide_time_ms.max(controls.bow_attack_ms) * 1e-3 + 0.1).max(0.150);
    let note_s = (settle_s + 0.35).max(0.6);
    let mut phrase = melody(&two_octave_scale(lowest), note_s, overlap_s, velocity, mod_wheel, rate_hz);
    phrase.notes.iter_mut().for_each(|n| n.settle_s = settle_s);
    let out = render_phrase_take(&phrase, &controls, rate_hz, take);
    let take_name = if take > 0 { format!(" take {take}") } else { String::new() };
    write_wav(&format!("{name} {} {:.0} {:.0} {}{take_name}", mode_name(mode), velocity * 127.0, mod_wheel * 127.0, if overlap_s > 0.0 { "overlapping" } else { "daw" }), &out, rate_hz);
    if std::env::var("ROSIN_PHRASES_WAV").is_ok() {
        for (i, n) in phrase.notes.iter().enumerate().skip(1) {
            println!("  change {i} at {:.3} s", n.start as f64 / rate_hz);
        }
    }
    listen(&out, rate_hz, &phrase.notes)
}

fn print(name: &str, mode: PlayMode, velocity: f64, mod_wheel: f64, overlap_s: f64, take: u64, report: &PhraseReport) {
    let order = if overlap_s > 0.0 { "overlapping" } else { "DAW order" };
    let take = if take > 0 { format!(" / take {take}") } else { String::new() };
    println!("{name} / {} / velocity {:.0} / mod wheel {:.0} / {order}{take}: peak {:+.1} dBFS", mode_name(mode), velocity * 127.0, mod_wheel * 127.0, report.peak_dbfs);
    for (i, n) in report.notes.iter().enumerate() {
        let change = i.checked_sub(1).map(|c| format!("{:+6.1} dB", report.changes[c].burst_db)).unwrap_or_else(|| "     -   ".into());
        println!("  key {:5.1}  periodicity {:.3}  {:+7.2} cents  rms {:6.1} dB  burst at change {change}", n.key, n.periodicity, n.cents, n.rms_db);
    }
}

#[test]
fn legato_scales() {
    let modes = [PlayMode::Poly, PlayMode::MonoLegato, PlayMode::FourStrings];
    let cases: Vec<(f64, f64, f64)> = if full_matrix() {
        [40.0, 90.0, 127.0].iter().flat_map(|&v| [0.0, 100.0].into_iter().flat_map(move |m| [DAW_LEGATO_S, OVERLAP_S].map(|o| (v / 127.0, m / 127.0, o)))).collect()
    } else {
        vec![(90.0 / 127.0, 0.0, DAW_LEGATO_S), (127.0 / 127.0, 100.0 / 127.0, OVERLAP_S), (40.0 / 127.0, 100.0 / 127.0, DAW_LEGATO_S)]
    };
    let mut worst = (f64::MAX, f64::MIN, f64::MIN);
    let mut worst_levels = (0.0f64, String::new());
    println!("legato scales at {} Hz", scale_rate_hz());
    // ROSIN_PHRASES_ONLY=Cello plays only the instruments whose name contains it.
    let only = std::env::var("ROSIN_PHRASES_ONLY").unwrap_or_default();
    // Per instrument: the takes in which a note is off (periodicity, pitch), a change
    // bursts or a scale's levels stray, by issue 14's bounds below.
    let mut census: Vec<(&str, Vec<u64>)> = Vec::new();
    for (name, controls) in string_instruments().into_iter().filter(|(n, _)| n.contains(only.as_str())) {
        let mut off_takes = Vec::new();
        for take in first_take()..first_take() + takes() {
            let mut off = false;
            for mode in modes {
                for &(velocity, mod_wheel, overlap_s) in &cases {
                    let report = scale_report(name, &controls, mode, velocity, mod_wheel, overlap_s, take);
                    print(name, mode, velocity, mod_wheel, overlap_s, take, &report);
                    for n in &report.notes {
                        worst.0 = worst.0.min(n.periodicity);
                        worst.1 = worst.1.max(n.cents.abs());
                        off |= n.periodicity < MIN_LEGATO_PERIODICITY || n.cents.abs() > MAX_LEGATO_CENTS;
                    }
                    for c in &report.changes {
                        worst.2 = worst.2.max(c.burst_db);
                        off |= c.burst_db > MAX_CHANGE_BURST_DB;
                    }
                    let levels: Vec<(f64, f64)> = report.notes.iter().map(|n| (n.key, n.rms_db)).collect();
                    let deviation = common::listen::straight_line_deviation(&levels);
                    off |= deviation > MAX_SCALE_LEVEL_DEVIATION_DB;
                    if deviation > worst_levels.0 {
                        worst_levels = (deviation, format!("{name} / {} / velocity {:.0} / mod wheel {:.0} / take {take}", mode_name(mode), velocity * 127.0, mod_wheel * 127.0));
                    }
                }
            }
            if off {
                off_takes.push(take);
            }
        }
        census.push((name, off_takes));
    }
    if takes() > 1 {
        println!("takes with a note, change or scale out of bounds, of {} (takes {} to {}):", takes(), first_take(), first_take() + takes() - 1);
        for (name, off_takes) in &census {
            println!("  {name:<28} {} {off_takes:?}", off_takes.len());
        }
    }
    println!("worst periodicity {:.3}, worst pitch {:.2} cents, worst burst {:+.1} dB", worst.0, worst.1, worst.2);
    println!("levels: the furthest a scale's note strays from a straight line is {:.1} dB ({})", worst_levels.0, worst_levels.1);
    // Every note of every scale speaks periodically (issue 14's 0.95), over the full matrix
    // too (its worst: 0.966, the Matusiak string's E4 in Poly at velocity 90; 0.961, the
    // violin's D5 in Four Strings at velocity 127 with vibrato, until its preset bowed at
    // 0.33 N instead of 0.35; 0.950, the violin's F#4 in Four Strings at velocity 40,
    // which started rough, 0.87 to 0.94 over 50 ms, until a soft note pressed with at
    // least 80 % of Bow Force: it reads 0.978 again, as it did until the ear timed each slip
    // at its middle, when 0.964 was the worst, the Matusiak string's B3 in Mono Legato at
    // velocity 90; 0.951, its A3, until the ear believed no period more than 5 % off). The
    // violin's top notes at velocity 127 went raucous (0.80) until its preset bowed at
    // 0.35 N instead of 0.4 (the E string's impedance is half the G string's, and
    // so is its Schelleng upper bound; at 0.35 N its B4 still read 0.948 at 44.1 kHz); the
    // open strings ringing in sympathy at 50 % read as 0.89 to 0.93 on the violin's F#4
    // until the string presets set them at 25 %.
    assert!(worst.0 >= MIN_LEGATO_PERIODICITY, "a note's periodicity is {:.3}", worst.0);
    // In tune within issue 14's 5 cents over the full matrix (its worst: -4.36 cents, the
    // double bass's E1, the first note of its Four Strings scale at velocity 40 with
    // vibrato; -3.31 until a soft note pressed with at least 80 % of Bow Force, which
    // flattens it more before the ear starts). Until
    // the ear timed each slip at its middle, 2 of 2,430 notes in DAW order were over: that
    // E1 (-5.08) and the double bass's F#1 under vibrato (+5.06; +4.5 without). Timed at its
    // front, a slip that narrows as the note builds up reads each period long, and the ear,
    // adding up what it hears, set the F#1 about 6 cents sharp of the period it held; that
    // E1 was left flat because the ear corrected only from the fifth period the bow grips
    // (now from the third, on periods longer than a quarter of its time constant). The cello's B3 at
    // the top of a Mono Legato scale at velocity 127 read -6.5 until its preset bowed at
    // String Weight 100 % (its C string slipped twice a period, and the ear had tuned that
    // motion, 3 % sharper than one slip a period). The double bass's E1 and G#1 at velocity 40
    // read 6 to 8.7 cents flat until its preset's bristles went from 3e3 to 4e3 N/m (its
    // bow gripped only some 150 ms in at that force, while the bow flattens E1 by 21
    // cents, and the ear starts on the fourth period after); its C#2 and E2 under vibrato
    // read +6 to +7 until the listener followed a swelling note's fundamental (the first
    // three harmonics' mean frequency over the steady part: within 0.4 cents).
    assert!(worst.1 <= MAX_LEGATO_CENTS, "a note is {:.2} cents out of tune", worst.1);
    // A finger clamping a moving string in one step, and a bow lifted and put down again
    // between a DAW's note-off and note-on, burst 25 to 31 dB above the notes around them.
    // Now every change of the full matrix, 4,536 of them, is within issue 14's 6 dB (worst
    // 5.8 dB, Glass Strings'). Glass Strings' glided at the controls' 60 ms until its preset
    // glided in 30: its D5 in Mono Legato swelled through the glide (7.0 dB at velocity
    // 127) and its crossing onto the E4 string with vibrato started bright (7.2 dB); at 120
    // ms it read 7.5. Against the median 3 ms of the notes around, where a change that did
    // not happen read +1 to +3.5 dB, the worst read 10.1 dB and 46 of the changes were over
    // 6 dB, 28 of them the double bass's, whose band pulses at each slip.
    assert!(worst.2 <= MAX_CHANGE_BURST_DB, "a note change bursts {:+.1} dB above the steady notes around it", worst.2);
    // A scale's notes on a line: each note evened by the body's gain on the harmonics it was
    // heard with (`dsp::harmonic_probe`), at the key a legato note goes to. With the body's
    // gain reckoned on a `1/n` spectrum, and in Mono Legato at the key the glide left, the
    // viola's Mono Legato scale strayed 11.6 dB; now the worst is 6.1 dB, the Ghost Cello's
    // E4 under its 60-cent vibrato, which sweeps its harmonics across the body's modes.
    assert!(worst_levels.0 <= MAX_SCALE_LEVEL_DEVIATION_DB, "a scale's note is {:.1} dB off its line ({})", worst_levels.0, worst_levels.1);
}

/// The most a legato scale's note may stray from a straight line through its levels (dB).
const MAX_SCALE_LEVEL_DEVIATION_DB: f64 = 6.5;

/// The least periodicity a legato scale's note may have (issue 14's 0.95).
const MIN_LEGATO_PERIODICITY: f64 = 0.95;

/// The most a legato scale's note may be out of tune (cents).
const MAX_LEGATO_CENTS: f64 = 5.0;

/// The most any note change may burst above 6 kHz over the steady notes around it: issue
/// 14's 6 dB, for legato scales, repeated notes, chords and fast runs.
const MAX_CHANGE_BURST_DB: f64 = 6.0;

#[test]
fn a_daw_legato_line_is_one_bow_stroke() {
    // Note-off and the next note-on on the same sample, the note-off first, as DAWs send a
    // legato line: the bow is still on the string, so the stroke goes on.
    for mode in [PlayMode::FourStrings, PlayMode::MonoLegato] {
        let mut controls = rosin_engine::presets::find("Violin").unwrap().controls();
        controls.play_mode = mode as u8 as f64;
        let phrase = melody(&two_octave_scale(55), 0.3, DAW_LEGATO_S, 0.7, 0.0, RATE_HZ);
        let mut engine = rosin_engine::voices::Engine::new(RATE_HZ);
        let mut c = controls;
        rosin_engine::render::render(&mut engine, &mut c, &phrase.timeline, phrase.length as u64, 256);
        assert_eq!(engine.string_attacks(), 1, "{}: the line re-attacked", mode_name(mode));
        // The host hears of every note's end, once, although one stroke played them all (the
        // last note may still be ringing: its end comes when its string falls silent).
        let mut ended = Vec::new();
        engine.drain_terminated(|note| ended.push(note.note));
        let keys = two_octave_scale(55);
        for key in &keys[..keys.len() - 1] {
            assert_eq!(ended.iter().filter(|&&k| k == *key).count(), 1, "{}: key {key}'s end, in {ended:?}", mode_name(mode));
        }
        assert!(ended.iter().filter(|&&k| k == keys[keys.len() - 1]).count() <= 1);
    }
}

/// The loudest a preset plays: its own playing mode, velocity 127, full pressure and the mod
/// wheel full, over a two-octave legato scale from its lowest string and held notes up to
/// three octaves above it (drums: every key of their range). Peak in dBFS.
fn loudest_peak_dbfs(controls: &Controls, keys: &[u8]) -> f64 {
    use rosin_engine::render::TimelineItem;
    use rosin_engine::voices::NoteEvent;
    let mut phrase = melody(keys, 0.6, DAW_LEGATO_S, 1.0, 1.0, RATE_HZ);
    phrase.timeline.push(0, TimelineItem::Note(NoteEvent::ChannelPressure { channel: 0, value: 1.0 }));
    let out = render_phrase(&phrase, controls, RATE_HZ);
    common::db(common::peak(&out) as f64)
}

/// The keys a preset is played over at its loudest.
fn preset_range(controls: &Controls, keys: (u8, u8)) -> Vec<u8> {
    if controls.instrument >= 0.5 {
        // The drums: the range they are made for.
        return (keys.0..=keys.1).collect();
    }
    let lowest = string_set(controls.string_set).strings[0].open_key;
    let mut keys = two_octave_scale(lowest);
    keys.extend([lowest + 24, lowest + 31, lowest + 36]);
    keys
}

#[test]
fn every_preset_peaks_below_full_scale() {
    let mut worst = f64::MIN;
    for preset in PRESETS {
        let controls = preset.controls();
        let peak = loudest_peak_dbfs(&controls, &preset_range(&controls, preset.keys));
        println!("{:<28} peak {peak:+5.1} dBFS at velocity 127, full pressure and mod wheel", preset.name);
        worst = worst.max(peak);
    }
    println!("loudest preset peaks at {worst:+.1} dBFS");
    assert!(worst <= -1.0, "a preset peaks at {worst:+.1} dBFS");
}

/// Every note from each string instrument's lowest string to three octaves above, alone, at
/// velocity 90 and default controls: when it speaks (periodic from then on), how periodic
/// its steady part is, its pitch and its level. Each is periodic (at least 0.95) and in tune
/// (within 5 cents) over its steady part, high stopped notes included: the bow flattens
/// them by up to 4 %, which the ear's correction takes out. Levels stay within
/// [`MAX_LEVEL_DEVIATION_DB`] of a straight line over each instrument's keys. When each
/// note speaks is printed. With `ROSIN_PHRASES=full` every key is played at 48, 44.1 and
/// 96 kHz, and each rate is held to the same bounds.
#[test]
fn single_notes_across_the_range() {
    let mut worst = (f64::MAX, 0.0f64);
    let mut worst_levels = 0.0f64;
    let (mut notes, mut slow, mut latest) = (0usize, Vec::new(), 0.0f64);
    use common::listen::{periodicity_and_pitch, speaking_time_s, PhraseNote};
    let only = std::env::var("ROSIN_PHRASES_ONLY").unwrap_or_default();
    let step = if full_matrix() { 1 } else { 3 };
    // A host may run at any rate: the full matrix plays every key at the two other common
    // ones too (the grids, the bow's attack in samples and the body are drawn anew for each).
    let rates: &[f64] = if full_matrix() { &[RATE_HZ, 44_100.0, 96_000.0] } else { &[RATE_HZ] };
    for (&rate_hz, (name, controls)) in rates.iter().flat_map(|r| string_instruments().into_iter().filter(|(n, _)| n.contains(only.as_str())).map(move |i| (r, i))) {
        let lowest = string_set(controls.string_set).strings[0].open_key;
        println!("{name} ({} mode), single notes at velocity 90, {rate_hz} Hz:", mode_name(PlayMode::from_control(controls.play_mode)));
        let mut levels = Vec::new();
        for key in (lowest..=lowest + 36).step_by(step) {
            let phrase = melody(&[key], 0.9, 0.0, 90.0 / 127.0, 0.0, rate_hz);
            let out = render_phrase(&phrase, &controls, rate_hz);
            if rate_hz == RATE_HZ {
                write_wav(&format!("{name}-{key}"), &out, rate_hz);
            }
            let note = PhraseNote { key: key as f64, ..phrase.notes[0] };
            let f0 = rosin_physics::string::tuning::midi_key_to_hz(key as f64);
            let (periodicity, hz) = periodicity_and_pitch(&out[note.steady(rate_hz)], rate_hz, f0);
            let speaks = speaking_time_s(&out[note.start..note.end], rate_hz, f0, 0.95);
            let rms_db = common::db(common::rms(&out[note.steady(rate_hz)]));
            levels.push((key as f64, rms_db));
            // A swell (Glass Strings' 600 ms bow) is not asked to speak at once.
            let swell = controls.bow_attack_ms >= SWELL_ATTACK_MS;
            notes += usize::from(!swell);
            match speaks {
                _ if swell => {}
                Some(s) if s <= SPEAKS_WITHIN_S => {}
                Some(s) => slow.push(format!("{name} {key} at {rate_hz} Hz ({:.0} ms)", s * 1e3)),
                None => slow.push(format!("{name} {key} at {rate_hz} Hz (never)")),
            }
            if !swell {
                latest = latest.max(speaks.unwrap_or(f64::INFINITY));
            }
            let speaks = speaks.map_or("never".to_string(), |s| format!("{:4.0} ms", s * 1e3));
            println!("  key {key:3}  speaks {speaks}  periodicity {periodicity:.3}  {:+7.2} cents  rms {rms_db:6.1} dB", common::cents(hz, f0));
            worst = (worst.0.min(periodicity), worst.1.max(common::cents(hz, f0).abs()));
        }
        let deviation = common::listen::straight_line_deviation(&levels);
        println!("  levels: the furthest from a straight line over the keys is {deviation:.1} dB");
        worst_levels = worst_levels.max(deviation);
    }
    println!("worst periodicity {:.3}, worst pitch {:.2} cents", worst.0, worst.1);
    assert!(worst.0 >= 0.95, "a single note's periodicity is {:.3}", worst.0);
    assert!(worst.1 <= 5.0, "a single note is {:.2} cents out of tune", worst.1);
    // Issue 14's 3 dB. Each note is evened by the body's gain on the harmonics it was
    // heard with (`dsp::harmonic_probe`): through the body it comes out within 0.3 dB of its
    // dry level, so what is left is the strings' own. Over every key (`ROSIN_PHRASES=full`)
    // every instrument holds 3 dB at the three rates: the furthest are the Matusiak string
    // (2.9 dB at 48 kHz, 2.8 at 44.1 and 2.5 at 96, bowed at beta 0.16 with 2.6 N) and the
    // Willemsen steel string (2.7). The Matusiak string slips one to five times a period,
    // and each key's level follows how many (`docs/physics.md`, *Takes*): bowed at beta
    // 0.13 or 0.15 with the paper's 2.343 N, its scales held over more takes but its single
    // notes strayed 4.5 and 3.5 dB at 48 kHz, and at the paper's beta 0.079 with 3 N (its
    // preset until 30 November) they held 2.9 dB but its scales went sharp or rough in 13
    // of 20 takes. At beta 0.079 it strayed 3.6 dB until the ear timed each slip at its
    // middle. It was 4.6 dB while the
    // violin's G string slipped twice a period at String Weight 0 (its preset now bows at
    // 35 %, the viola's at 70 %). With the evening reckoned on a `1/n` spectrum it was 4.9
    // dB (the viola), up to 7 dB off on a single note, and the Ghost Cello's D#6 stood 6 dB
    // out on a body mode 17 dB high.
    println!("levels: the furthest from a straight line, over every instrument, is {worst_levels:.1} dB");
    assert!(worst_levels <= MAX_LEVEL_DEVIATION_DB, "a note's level is {worst_levels:.1} dB off its instrument's line");
    // Issue 14: every note speaks within 150 ms. Over every key at 48, 44.1 and 96 kHz the
    // latest are the viola's D3 at 96 kHz (150 ms), the double bass's E2 at 44.1 kHz (146
    // ms) and its C#2 (144 ms at every rate). The Ghost Cello Lead's G3 spoke in 147 ms at
    // 48 kHz and 163 at 44.1 until its preset's bow came in over 350 ms instead of 400 (now
    // 132 ms at every rate; at 300 ms a Four Strings scale's levels strayed 8.9 dB from
    // their line, over `MAX_SCALE_LEVEL_DEVIATION_DB`, where 350 reads 5.7). The cello's
    // open C spoke in 168 ms until the Cello preset's bristles went from 3e4 to 1.2e4 N/m
    // (with String Weight 100 %); now 122 ms. The viola's F#4 spoke in 398 ms until its
    // preset's bow noise was halved: the noise, through the body's B1 modes either side of
    // it, held its periodicity near 0.95.
    println!("{} of {notes} notes speak later than {:.0} ms: {slow:?}; the latest in {:.0} ms", slow.len(), SPEAKS_WITHIN_S * 1e3, latest * 1e3);
    assert!(slow.is_empty(), "{} of {notes} notes speak late: {slow:?}", slow.len());
}

/// When a note should speak (periodic from then on for 100 ms), from its note-on.
const SPEAKS_WITHIN_S: f64 = 0.150;
/// A preset whose bow takes this long to come in is a swell, not asked to speak at once.
const SWELL_ATTACK_MS: f64 = 500.0;

/// The most a held note's level may stray from a straight line over its instrument's keys.
const MAX_LEVEL_DEVIATION_DB: f64 = 3.0;

/// The loudest output of the voice playing `key` over the next `seconds` (0 once it is free).
fn voice_level(engine: &mut rosin_engine::voices::Engine, key: u8, seconds: f64) -> f64 {
    let mut loudest = 0.0f64;
    let mut sample = [0.0f32];
    for _ in 0..(seconds * RATE_HZ) as usize {
        engine.render(&mut sample);
        let level = engine.voices().iter().filter(|v| !v.is_free() && v.note.note == key).map(|v| v.last_output().abs()).fold(0.0, f64::max);
        loudest = loudest.max(level);
    }
    loudest
}

#[test]
fn in_poly_a_legato_line_damps_the_note_it_leaves_and_a_last_note_rings_on() {
    use rosin_engine::voice::NoteId;
    use rosin_engine::voices::{Engine, NoteEvent, NotePattern};
    let id = |key: u8| NoteId { channel: 0, note: key, voice_id: None };
    let played = |legato: bool| {
        let mut engine = Engine::new(RATE_HZ);
        engine.set_controls(&Controls::default());
        engine.handle_event(&NoteEvent::NoteOn { note: id(60), velocity: 0.7 });
        voice_level(&mut engine, 60, 0.5);
        let before = voice_level(&mut engine, 60, 0.05);
        // A DAW's legato: the note-off, then the next note-on on the same sample.
        engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(id(60)) });
        if legato {
            engine.handle_event(&NoteEvent::NoteOn { note: id(62), velocity: 0.7 });
        }
        voice_level(&mut engine, 60, 0.25);
        (before, voice_level(&mut engine, 60, 0.05))
    };
    let (before, left) = played(true);
    let (alone_before, alone) = played(false);
    let (left_db, alone_db) = (common::db(left / before), common::db(alone / alone_before));
    println!("0.25 s after its note-off: a note left by a legato line {left_db:+.1} dB, a last note {alone_db:+.1} dB");
    assert!(left_db < -30.0, "the note a legato line left rings on at {left_db:+.1} dB");
    assert!(alone_db > -20.0, "a last note is cut short: {alone_db:+.1} dB");
}

/// Four Strings, a double bass's scale crossing from the E string (its B1, as far up as the
/// hand reaches) to the A string's C#2: the bow leaves the E string within 50 ms, not over
/// the preset's release; the hand takes it down by 40 dB within 0.15 s, so its B1 does not
/// ring under the C#2 (which was heard raucous over it, periodicity 0.76); and then lets go,
/// so that it rings in sympathy again.
#[test]
fn in_four_strings_a_crossing_leaves_the_old_string_quiet_then_free() {
    use rosin_engine::voice::{NoteId, HAND_TOUCH_S};
    use rosin_engine::voices::{Engine, NoteEvent, NotePattern};
    let id = |key: u8| NoteId { channel: 0, note: key, voice_id: None };
    let mut engine = Engine::new(RATE_HZ);
    let mut controls = rosin_engine::presets::find("Double Bass").unwrap().controls();
    controls.play_mode = PlayMode::FourStrings as u8 as f64;
    controls.bow_release_ms = 1500.0;
    engine.set_controls(&controls);
    // The open E, then B1 on the same string, as a scale plays them.
    engine.handle_event(&NoteEvent::NoteOn { note: id(28), velocity: 0.7 });
    for _ in 0..(0.3 * RATE_HZ) as usize {
        engine.render(&mut [0.0f32]);
    }
    engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(id(28)) });
    engine.handle_event(&NoteEvent::NoteOn { note: id(35), velocity: 0.7 });
    fn e_string(engine: &Engine) -> &rosin_engine::voice::StringVoice {
        &engine.voices()[0]
    }
    let mut sample = [0.0f32];
    let mut run = |engine: &mut Engine, seconds: f64| {
        let mut loudest = 0.0f64;
        for _ in 0..(seconds * RATE_HZ) as usize {
            engine.render(&mut sample);
            loudest = loudest.max(e_string(engine).last_output().abs());
        }
        loudest
    };
    run(&mut engine, 0.6);
    let before = run(&mut engine, 0.05);
    assert!(e_string(&engine).is_bow_on_string());
    engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(id(35)) });
    engine.handle_event(&NoteEvent::NoteOn { note: id(37), velocity: 0.7 });
    assert_eq!(engine.voices()[1].note.note, 37, "C#2 is played on the A string");
    run(&mut engine, 0.05);
    assert!(!e_string(&engine).is_bow_on_string(), "the bow is still on the string it crossed from");
    run(&mut engine, HAND_TOUCH_S - 0.05);
    let after = run(&mut engine, 0.05);
    let quiet_db = common::db(after / before);
    println!("the string crossed from, {HAND_TOUCH_S} s later: {quiet_db:+.1} dB");
    assert!(quiet_db < -40.0, "the string crossed from rings on at {quiet_db:+.1} dB");
    assert_eq!(e_string(&engine).hand_damping_per_s(), 0.0, "the hand still damps the string crossed from");
    assert!(!e_string(&engine).is_free(), "an open string of the four stays up to ring in sympathy");
}

/// The README's sound examples (`scripts/sound-examples.sh`): each MIDI phrase, rendered from
/// its preset as the script does, is clean (finite, below -1 dBFS, no voice diverged), and
/// its encoded file is there and small.
#[test]
fn the_readme_sound_examples_render_clean() {
    let examples = [("violin", "Violin"), ("cello", "Cello"), ("steel-string", "Willemsen 2019 Steel String"), ("rummelpot", "Rummelpot"), ("cuica", "Cuica"), ("ghost-cello", "Ghost Cello Lead")];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sounds");
    let mut total_bytes = 0;
    for (name, preset) in examples {
        let bytes = std::fs::read(dir.join(format!("{name}.mid"))).expect("the example's MIDI file");
        let timeline = rosin_engine::render::midi_file::parse(&bytes, RATE_HZ).expect("a readable MIDI file");
        let mut controls = rosin_engine::presets::find(preset).expect("a factory preset").controls();
        let mut engine = rosin_engine::voices::Engine::new(RATE_HZ);
        let length = timeline.end() + (2.0 * RATE_HZ) as u64;
        let out = rosin_engine::render::render(&mut engine, &mut controls, &timeline, length, 512);
        let peak = common::db(common::peak(&out) as f64);
        println!("{name:13} {preset:28} {:5.1} s  peak {peak:+5.1} dBFS", out.len() as f64 / RATE_HZ);
        assert!(out.iter().all(|s| s.is_finite()), "{name}");
        assert!(peak <= -1.0, "{name} peaks at {peak:+.1} dBFS");
        assert_eq!(engine.recoveries(), 0, "{name}: a voice diverged");
        total_bytes += std::fs::metadata(dir.join(format!("{name}.opus"))).expect("the encoded example").len();
    }
    assert!(total_bytes < 500_000, "the examples take {total_bytes} bytes");
}

/// Repeated notes on one key, chords and a fast run (8 notes a second): no note change
/// bursts above 6 kHz more than the notes around it, and a stolen voice is not heard.
#[test]
fn repeated_notes_chords_and_fast_runs_change_cleanly() {
    use common::listen::{chord, Phrase};
    use rosin_engine::render::Timeline;
    let at = |s: f64| (s * RATE_HZ).round() as usize;
    let mut worst = f64::MIN;
    for (name, controls) in string_instruments() {
        // Repeated notes: one key, eight times, 0.3 s each, in DAW order (a pad whose bow
        // takes longer than that to come in is played as slowly as it speaks).
        let lowest = string_set(controls.string_set).strings[0].open_key;
        let settle_s = (controls.bow_attack_ms * 1e-3 + 0.1).max(0.150);
        let mut repeated = melody(&[lowest + 12; 8], (settle_s + 0.15).max(0.3), DAW_LEGATO_S, 0.7, 0.0, RATE_HZ);
        repeated.notes.iter_mut().for_each(|n| n.settle_s = settle_s);
        // A fast run: a two-octave scale at 8 notes a second.
        let mut run = melody(&two_octave_scale(lowest), 0.125, DAW_LEGATO_S, 0.7, 0.0, RATE_HZ);
        // Each note of the run is judged from 40 ms on.
        run.notes.iter_mut().for_each(|n| n.settle_s = 0.04);
        // Chords: three triads, each held 0.8 s, the next struck as the last is released.
        let mut timeline = Timeline::default();
        let mut notes = Vec::new();
        for (i, root) in [lowest + 12, lowest + 17, lowest + 19].into_iter().enumerate() {
            let start = 0.01 + 0.8 * i as f64;
            chord(&[root, root + 4, root + 7], start, 0.8, 0.7, RATE_HZ, &mut timeline);
            notes.push(common::listen::PhraseNote { key: root as f64, start: at(start), end: at(start + 0.8), settle_s: 0.15 });
        }
        let chords = Phrase { timeline, length: at(0.01 + 2.4 + 0.5), notes };
        // A pad's slow bow never speaks at 8 notes a second: it is not asked to.
        let phrases = if controls.bow_attack_ms < SWELL_ATTACK_MS { vec![("repeated notes", repeated), ("fast run", run), ("chords", chords)] } else { vec![("repeated notes", repeated), ("chords", chords)] };
        for (what, phrase) in phrases {
            let out = render_phrase(&phrase, &controls, RATE_HZ);
            let report = listen(&out, RATE_HZ, &phrase.notes);
            let loudest = report.changes.iter().map(|c| c.burst_db).fold(f64::MIN, f64::max);
            println!("{name:28} {what:15} worst burst at a change {loudest:+5.1} dB, peak {:+5.1} dBFS", report.peak_dbfs);
            worst = worst.max(loudest);
            // A factory preset leaves a triad its headroom (the default instrument's Output
            // Gain is the parameter's default, 0 dB: it is not levelled).
            if what == "chords" && name != "Default" {
                assert!(report.peak_dbfs <= -1.0, "{name}: a triad peaks at {:+.1} dBFS", report.peak_dbfs);
            }
        }
    }
    // Measured: 3.7 dB at worst (the viola's triads); 7.4 dB (a cello triad) before the
    // steady notes were read like for like (`common::listen::listen`).
    println!("worst burst {worst:+.1} dB");
    assert!(worst <= MAX_CHANGE_BURST_DB, "a change bursts {worst:+.1} dB");
}

/// Pressure is the player's force: at half pressure (the preset's own force) the home key of
/// every string-family and paper preset is periodic; pressed to the top, the bow passes
/// Schelleng's upper bound and the note goes raucous, as a real bow does. (The sound-design
/// presets bow the heavy Rosin string, whose upper bound lies beyond the 20 N the force
/// control reaches: they stay clean.)
#[test]
fn pressing_to_the_top_goes_raucous_as_a_real_bow_does() {
    use common::listen::periodicity_and_pitch;
    use rosin_engine::render::TimelineItem;
    use rosin_engine::voices::NoteEvent;
    for preset in PRESETS.iter().filter(|p| matches!(p.category, "Strings" | "Papers")) {
        let key = preset.home_key;
        let periodicity_at = |pressure: f64| {
            let mut phrase = melody(&[key], 1.0, 0.0, 1.0, 0.0, RATE_HZ);
            phrase.timeline.push(0, TimelineItem::Note(NoteEvent::ChannelPressure { channel: 0, value: pressure }));
            let out = render_phrase(&phrase, &preset.controls(), RATE_HZ);
            periodicity_and_pitch(&out[phrase.notes[0].steady(RATE_HZ)], RATE_HZ, rosin_physics::string::tuning::midi_key_to_hz(key as f64)).0
        };
        let (half, full) = (periodicity_at(0.5), periodicity_at(1.0));
        println!("{:28} key {key}: periodicity {half:.3} at half pressure, {full:.3} at full", preset.name);
        assert!(half >= 0.95, "{}: not periodic at its own force ({half:.3})", preset.name);
        assert!(full < 0.9, "{}: still periodic at full pressure ({full:.3})", preset.name);
    }
}

/// How many times a period the bow slips on the string playing `key` alone, over 0.4 to 0.9 s
/// after its note-on (Helmholtz motion: once).
fn slips_per_period(controls: &Controls, key: u8, velocity: f64) -> f64 {
    use rosin_engine::voices::{Engine, NoteEvent};
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(controls);
    engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity });
    engine.render(&mut vec![0.0f32; (0.4 * RATE_HZ) as usize]);
    let voice = engine.voices().iter().position(|v| !v.is_free() && v.note.note == key).expect("a voice plays the key");
    let before = engine.voices()[voice].intonation().slips();
    engine.render(&mut vec![0.0f32; (0.5 * RATE_HZ) as usize]);
    let slips = engine.voices()[voice].intonation().slips() - before;
    slips as f64 / (0.5 * rosin_physics::string::tuning::midi_key_to_hz(key as f64))
}

/// `key` played `times` times in one engine, each note held for 0.9 s with `gap_s` between
/// them (a repeated note bows a string still ringing from the last one, in Four Strings the
/// same string, each with its own bow noise): for each, how far its second harmonic stands
/// over its fundamental over its last 0.5 s ([`octave_over_fundamental_db`]), and whether it
/// sounds the octave above.
fn octave_of_repeated_notes_db(controls: &Controls, key: u8, velocity: f64, times: usize, gap_s: f64) -> Vec<(f64, bool)> {
    use rosin_engine::voices::{Engine, NoteEvent, NotePattern};
    let mut engine = Engine::new(RATE_HZ);
    engine.set_controls(controls);
    let f0_hz = rosin_physics::string::tuning::midi_key_to_hz(key as f64);
    let mut out = vec![0.0f32; (0.5 * RATE_HZ) as usize];
    (0..times)
        .map(|_| {
            engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity });
            engine.render(&mut vec![0.0f32; (0.4 * RATE_HZ) as usize]);
            engine.render(&mut out);
            engine.handle_event(&NoteEvent::NoteOff { pattern: NotePattern::exact(common::note_id(key)) });
            engine.render(&mut vec![0.0f32; (gap_s * RATE_HZ) as usize]);
            // The octave above is heard when the second harmonic stands far over the
            // fundamental and the sound repeats at half the period: a bright note whose
            // body filters its fundamental away still has its odd harmonics.
            let octave_db = octave_over_fundamental_db(&out, RATE_HZ, f0_hz);
            (octave_db, octave_db > MAX_OCTAVE_OVER_FUNDAMENTAL_DB && common::listen::periodicity(&out, RATE_HZ, 2.0 * f0_hz) >= 0.9)
        })
        .collect()
}

/// How far a note's second harmonic may stand over its fundamental (dB) before it may be
/// heard as the octave above (if it also repeats at half its period): held notes read -15
/// to +17 (the Ghost Cello Lead's C6 +25, its fundamental under its body's), notes an
/// octave up 28 to 55.
const MAX_OCTAVE_OVER_FUNDAMENTAL_DB: f64 = 20.0;

/// The keys of the factory presets that sound the octave above on some repetitions at
/// velocity 90 (open: `docs/physics.md`, *Notes that sound the octave*). The Double Bass's
/// G#1, re-bowed 0.5 s after the last note on its still-ringing E string, sounded G#2 on
/// four of six repetitions in one rendering and two in another (with less bow noise, or at
/// String Weight 50 or 100 %, it held, but at 50 and 100 % its low notes speak 160 to 280 ms
/// late); the Ghost Cello Lead's C6 sounds C7 from the first note, its second harmonic 25 dB
/// over its fundamental (B5 20 dB, C#6 -25 dB): its string is in Helmholtz motion, but the
/// cello body it mixes at 100 % passes that harmonic some 30 dB more than the fundamental.
const SOUND_THE_OCTAVE: [(&str, u8); 2] = [("Double Bass", 32), ("Ghost Cello Lead", 84)];

/// Every string preset in its own play mode sounds its note, not the octave above, when a
/// key is played again and again 0.5 s apart, as a repeated-note figure does: each note bows
/// a string still ringing from the last and draws new bow noise, and either can tip a bow
/// near Schelleng's lower bound into sounding the octave (its second harmonic 28 to 55 dB
/// over its fundamental, repeating at half the period), which the periodicity measure
/// passes. Every third key from each instrument's lowest string to three octaves above,
/// four times each at velocity 90 (`ROSIN_PHRASES=full`: every key, six times); the keys in
/// [`SOUND_THE_OCTAVE`] are known and printed. The Matusiak preset is not asked (see
/// [`with_string_weight_every_string_of_every_set_slips_once_a_period`]): slipping one to
/// five times a period, it sounds the octave on 6 of 222 notes of the full matrix, on five
/// keys (`docs/physics.md`, *Notes that sound the octave*).
#[test]
fn repeated_notes_sound_their_note() {
    let (step, times) = if full_matrix() { (1, 6) } else { (3, 4) };
    let (mut off, mut known_off) = (Vec::new(), Vec::new());
    let mut notes = 0;
    let mut highest = f64::MIN;
    let only = std::env::var("ROSIN_PHRASES_ONLY").unwrap_or_default();
    for (name, controls) in string_instruments().into_iter().filter(|(n, _)| !n.starts_with("Matusiak") && n.contains(only.as_str())) {
        let lowest = string_set(controls.string_set).strings[0].open_key;
        for key in (lowest..=lowest + 36).step_by(step) {
            let octave_db = octave_of_repeated_notes_db(&controls, key, 90.0 / 127.0, times, 0.5);
            notes += octave_db.len();
            highest = octave_db.iter().fold(highest, |m, &(d, _)| m.max(d));
            if octave_db.iter().any(|&(_, octave)| octave) {
                let known = SOUND_THE_OCTAVE.contains(&(name, key));
                (if known { &mut known_off } else { &mut off }).push(format!("{name} {key}: {}", octave_db.iter().map(|(d, octave)| format!("{d:+.0}{}", if *octave { " (octave)" } else { "" })).collect::<Vec<_>>().join(" ")));
            }
        }
    }
    println!("{notes} repeated notes, the second harmonic at most {highest:+.1} dB over the fundamental; sounding the octave: {off:?}, and the known {known_off:?}");
    assert!(off.is_empty(), "a repeated note sounds the octave above: {off:?}");
}

/// With String Weight at 100 %, every key from each string instrument's lowest string to
/// three octaves above slips once a period at velocity 90 (`ROSIN_PHRASES=full`: 40 and 127
/// too). A note that slips twice a period is periodic at its period, so the periodicity
/// measure passes it, yet it sounds an octave up, its second harmonic 10 to 13 dB over its
/// fundamental: with one bow force for a whole set (String Weight 0, the default), the
/// viola's C string, the cello's C and G strings and the violin's G string do (29 keys of
/// 148 at velocity 90), under the lower Schelleng bound of their heavier strings. The
/// Matusiak preset is not asked: it keeps the paper's bowing of several slips a period
/// rather than a Helmholtz one (`docs/physics.md`, *The Matusiak set*), and at beta 0.16
/// with 2.6 N the counter reads two slips a period on most keys below E4 (three to five on
/// six of them) and one on most above.
#[test]
fn with_string_weight_every_string_of_every_set_slips_once_a_period() {
    let velocities: &[f64] = if full_matrix() { &[40.0, 90.0, 127.0] } else { &[90.0] };
    let mut off = Vec::new();
    let (mut keys, mut keys_at_90, mut off_at_90) = (0, 0, 0);
    for (name, controls) in string_instruments().into_iter().filter(|(n, _)| !n.starts_with("Matusiak")) {
        let lowest = string_set(controls.string_set).strings[0].open_key;
        let weighted = Controls { string_weight_percent: 100.0, ..controls };
        for &velocity in velocities {
            for key in lowest..=lowest + 36 {
                let slips = slips_per_period(&weighted, key, velocity / 127.0);
                keys += 1;
                keys_at_90 += usize::from(velocity == 90.0);
                if (slips - 1.0).abs() > 0.05 {
                    off.push(format!("{name} {key} at {velocity:.0}: {slips:.2}"));
                    off_at_90 += usize::from(velocity == 90.0);
                }
            }
        }
        // With one force for every string, for the record.
        if velocities.len() == 1 && controls.string_set >= 1.0 && controls.string_set <= 4.0 {
            let unweighted = Controls { string_weight_percent: 0.0, ..controls };
            let twice = (lowest..=lowest + 36).filter(|&k| (slips_per_period(&unweighted, k, 90.0 / 127.0) - 1.0).abs() > 0.05).count();
            println!("{name}: {twice} keys slip more than once a period at String Weight 0");
        }
    }
    println!("String Weight 100 %: {} of {keys} keys do not slip once a period: {off:?}", off.len());
    // Measured: 1 of 296 at velocity 90, the Willemsen steel string's A4 (0.90; 0 of 296
    // before the ear timed each slip at its middle, 2 until it believed no period more than
    // 5 % off: the violin's A#4, twice, and that A4, 0.85). The full matrix, 9 of 888 (11
    // until the violin's preset bowed at 0.33 N instead of 0.35, 14 until a soft note
    // pressed with at least 80 % of Bow Force, 22 before the ear timed each slip at its
    // middle, and 18 before the 5 %): at velocity 40 the cello's E2 (C#2 to F2 before the
    // 80 %; three times before its preset's bristles went from 3e4 to 1.2e4 N/m, when the
    // count was 20), the Ghost Cello's A#3 and the Willemsen string's A4; at 127 the
    // viola's C3 to E3 and that A4 (and the violin's G3 and C4 at 0.35 N), the weight too
    // heavy there. A slip counts if the string runs back at half the bow's speed or more
    // (`SLIP_PEAK_RATIO`): bow noise that only halts it is not one.
    assert!(off_at_90 * 100 <= keys_at_90, "{off_at_90} of {keys_at_90} keys at velocity 90 do not slip once a period: {off:?}");
    assert!(off.len() * 40 <= keys, "{} of {keys} keys do not slip once a period: {off:?}", off.len());
}

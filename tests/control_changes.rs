//! Control changes while a note sounds are click-free: what a producer draws in an automation
//! lane must never click. Measured as the phrase tests measure note changes: the loudest 3 ms
//! above 6 kHz from 10 ms before a change to 80 ms after it, against the median of the steady
//! stretches on either side.

mod common;

use common::listen::click_band_energy;
use rosin_engine::controls::Controls;
use rosin_engine::voices::{Engine, NoteEvent};

const RATE_HZ: f64 = 48_000.0;
const BLOCK: usize = 256;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// High-band energy this far below the sound's own mean square is masked by it: not a
/// click. It matters only for a dull sound with next to nothing above 6 kHz (the drum, whose
/// band sits about 107 dB under its level, where a gain ramp's corner shows 24 dB above the
/// band and still 83 dB under the note); a string's band is 20 to 40 dB under its level.
const MASKED_BELOW_SOUND_DB: f64 = 60.0;

/// The bursts (dB over the steady parts around) at each of `changes`, sample indices: the
/// loudest 3 ms above 6 kHz around the change over the louder of the steady sound before it
/// and after it (or [`MASKED_BELOW_SOUND_DB`] under that sound's whole level, if higher). A
/// change that leaves the band louder (a brighter body) is a step, not a click; a click
/// stands out above both.
fn bursts_db(signal: &[f32], changes: &[usize]) -> Vec<f64> {
    let band = click_band_energy(signal, RATE_HZ);
    let ms = |t: f64| (t * 1e-3 * RATE_HZ) as usize;
    let mean_square = |part: &[f32]| part.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>() / part.len() as f64;
    changes
        .iter()
        .map(|&at| {
            let (before_part, after_part) = (at - ms(250.0)..at - ms(20.0), at + ms(150.0)..at + ms(400.0));
            let before = median(band[before_part.clone()].to_vec());
            let after = median(band[after_part.clone()].to_vec());
            let sound = mean_square(&signal[before_part]).max(mean_square(&signal[after_part]));
            let masked = sound * 10f64.powf(-MASKED_BELOW_SOUND_DB / 10.0);
            let burst = band[at - ms(10.0)..at + ms(80.0)].iter().fold(0.0f64, |m, &v| m.max(v));
            10.0 * (burst / before.max(after).max(masked).max(1e-30)).log10()
        })
        .collect()
}

/// A body mixed at 0 % is not heard, so it rests unticked (the drum presets mix none of it);
/// raising the mix while a note sounds brings it in from rest without a click, lowering it
/// to 0 puts it back to rest, and raising it again brings it back: the body is heard each
/// time it is mixed (the sound differs from the dry one's), and the dry stretches are the
/// dry render to the bit.
#[test]
fn a_body_mixed_at_zero_rests_and_comes_back_without_a_click() {
    for key in [43u8, 67] {
        let render = |mixes: &[f64]| {
            let mut controls = Controls { body_mix_percent: mixes[0], ..Controls::default() };
            let mut engine = Engine::new(RATE_HZ);
            engine.set_controls(&controls);
            engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity: 0.7 });
            let (mut out, mut changes, mut buffer) = (Vec::new(), Vec::new(), vec![0.0f32; BLOCK]);
            for (i, &mix) in mixes.iter().enumerate() {
                if i > 0 {
                    changes.push(out.len());
                }
                controls.body_mix_percent = mix;
                engine.set_controls(&controls);
                for _ in 0..(if i == 0 { 1.5 } else { 0.6 } * RATE_HZ) as usize / BLOCK {
                    engine.render(&mut buffer);
                    out.extend_from_slice(&buffer);
                }
            }
            (out, changes)
        };
        let mixes = [0.0, 60.0, 0.0, 60.0];
        let (out, changes) = render(&mixes);
        let (dry, _) = render(&[0.0; 4]);
        let bursts = bursts_db(&out, &changes);
        println!("key {key}: bursts at the mix changes {:?} dB", bursts.iter().map(|b| format!("{b:+.1}")).collect::<Vec<_>>());
        for (b, burst) in bursts.iter().enumerate() {
            assert!(*burst <= 6.0, "key {key}: the body mix change {b} bursts {burst:+.1} dB above the steady note");
        }
        // Each stretch after its ramp (50 ms): mixed, it differs from the dry sound by more
        // than -20 dB of it; dry, it is the dry render.
        let starts: Vec<usize> = std::iter::once(0).chain(changes.iter().copied()).collect();
        for (i, &mix) in mixes.iter().enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(out.len());
            let part = starts[i] + (0.05 * RATE_HZ) as usize..end;
            let energy = |x: &mut dyn Iterator<Item = f64>| x.map(|v| v * v).sum::<f64>();
            let difference = energy(&mut out[part.clone()].iter().zip(&dry[part.clone()]).map(|(&a, &b)| a as f64 - b as f64));
            let level = energy(&mut dry[part].iter().map(|&b| b as f64));
            let difference_db = 10.0 * (difference / level).log10();
            if mix > 0.0 {
                assert!(difference_db > -20.0, "key {key}: stretch {i}, mixed at {mix} %, differs from the dry sound by only {difference_db:.1} dB");
            } else {
                assert_eq!(difference, 0.0, "key {key}: stretch {i}, dry, should be the dry render to the bit");
            }
        }
    }
}

/// Changing the body model while a note sounds through it (Body Mix 60 %) crossfades from
/// the old body to the new: no click. It used to silence the resonator at once.
#[test]
fn changing_the_body_while_a_note_sounds_does_not_click() {
    for key in [43u8, 55, 67] {
        let mut controls = Controls::default();
        controls.body_mix_percent = 60.0;
        let mut engine = Engine::new(RATE_HZ);
        engine.set_controls(&controls);
        engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity: 0.7 });
        let mut out = Vec::new();
        let mut changes = Vec::new();
        let mut buffer = vec![0.0f32; BLOCK];
        for (i, body) in [0.0, 1.0, 2.0, 3.0, 0.0, 2.0].into_iter().enumerate() {
            if i > 0 {
                changes.push(out.len());
            }
            controls.body = body;
            engine.set_controls(&controls);
            let blocks = if i == 0 { (1.5 * RATE_HZ) as usize / BLOCK } else { (0.6 * RATE_HZ) as usize / BLOCK };
            for _ in 0..blocks {
                engine.render(&mut buffer);
                out.extend_from_slice(&buffer);
            }
        }
        let bursts = bursts_db(&out, &changes);
        println!("key {key}: bursts at the body changes {:?} dB", bursts.iter().map(|b| format!("{b:+.1}")).collect::<Vec<_>>());
        for (b, burst) in bursts.iter().enumerate() {
            assert!(*burst <= 6.0, "key {key}: the body change {b} bursts {burst:+.1} dB above the steady note");
        }
    }
}

/// Every control a producer may automate while a string note sounds, swept across its whole
/// range as a DAW's automation lane draws it (default to the top over 0.3 s, held, down to
/// the bottom over 0.3 s, held, then a jump back to the default), each change measured as
/// above. A bow pressed to the top goes raucous, as a real one does; what is measured is
/// a burst above both the sound before and after, not a change of colour. The controls read
/// only when a note starts (strings, engine, string stiffness), the drum's, and the
/// structural ones (instrument, play mode, pad layout, MPE and bend ranges) are not swept
/// here: they take effect on the next note; the body has its own test above. The bristle
/// stiffness, swept down to 1e3 N/m and back, clicked by 20 dB before the bristles kept their
/// force through a change of stiffness (`FrictionContact::rescale_bristles`).
#[test]
fn automating_any_control_across_its_range_under_a_held_note_does_not_click() {
    let skipped = ["instrument", "play_mode", "pad_layout", "mpe", "pitch_bend_range", "mpe_bend_range", "string_set", "string_engine", "string_stiffness", "body"];
    let ids: Vec<&str> = rosin_engine::controls::ALL.iter().map(|s| s.id).filter(|id| !skipped.contains(id) && !id.starts_with("drum_")).collect();
    let worst = worst_burst_sweeping(&ids, Controls::default(), 55);
    println!("worst: {} {:+.1} dB", worst.0, worst.1);
    assert!(worst.1 <= 6.0, "automating {} bursts {:+.1} dB above the note around it", worst.0, worst.1);
}

/// The same for the friction drum: every drum control a producer may automate while a drum
/// note sounds (its resolution and friction law are read when a note starts), and the bow's
/// force, speed, noise and output gain, which the drum reads too, under a held C4.
#[test]
fn automating_any_drum_control_under_a_held_drum_note_does_not_click() {
    let at_note_on = ["drum_quality", "drum_friction_model"];
    let mut ids: Vec<&str> = rosin_engine::controls::ALL.iter().map(|s| s.id).filter(|id| id.starts_with("drum_") && !at_note_on.contains(id)).collect();
    ids.extend(["bow_force", "bow_velocity", "output_gain"]);
    let worst = worst_burst_sweeping(&ids, Controls { instrument: 1.0, ..Controls::default() }, 60);
    println!("worst: {} {:+.1} dB", worst.0, worst.1);
    assert!(worst.1 <= 6.0, "automating {} bursts {:+.1} dB above the drum note around it", worst.0, worst.1);
}

/// Sweeps each of `ids` from its default to the top, down to the bottom and back, under
/// `key` held with `base`; returns the control with the loudest burst, and that burst.
fn worst_burst_sweeping(ids: &[&str], base: Controls, key: u8) -> (String, f64) {
    use rosin_engine::controls::{self, Taper};
    let mut worst = (String::new(), f64::MIN);
    for spec in ids.iter().filter_map(|id| controls::find(id)) {
        let mut controls = base;
        let mut engine = Engine::new(RATE_HZ);
        engine.set_controls(&controls);
        engine.handle_event(&NoteEvent::NoteOn { note: common::note_id(key), velocity: 0.7 });
        let run = |out: &mut Vec<f32>, engine: &mut Engine, controls: &mut Controls, seconds: f64, from: f64, to: f64| {
            let blocks = ((seconds * RATE_HZ) as usize / BLOCK).max(1);
            for b in 0..blocks {
                let t = (b + 1) as f64 / blocks as f64;
                let value = match spec.taper {
                    Taper::Log => from * (to / from).powf(t),
                    _ => from + (to - from) * t,
                };
                controls.set(spec.id, if spec.is_stepped() { value.round() } else { value });
                engine.set_controls(controls);
                let mut buffer = [0.0f32; BLOCK];
                engine.render(&mut buffer);
                out.extend_from_slice(&buffer);
            }
        };
        let mut out = Vec::new();
        run(&mut out, &mut engine, &mut controls, 1.0, spec.default, spec.default);
        let mut changes = vec![out.len()];
        run(&mut out, &mut engine, &mut controls, 0.3, spec.default, spec.max);
        run(&mut out, &mut engine, &mut controls, 0.5, spec.max, spec.max);
        changes.push(out.len());
        run(&mut out, &mut engine, &mut controls, 0.3, spec.max, spec.min);
        run(&mut out, &mut engine, &mut controls, 0.5, spec.min, spec.min);
        changes.push(out.len());
        run(&mut out, &mut engine, &mut controls, 0.5, spec.default, spec.default);
        let bursts = bursts_db(&out, &changes);
        let loudest = bursts.iter().copied().fold(f64::MIN, f64::max);
        println!("{:20} bursts {:?} dB", spec.id, bursts.iter().map(|b| format!("{b:+.1}")).collect::<Vec<_>>());
        assert!(out.iter().all(|s| s.is_finite()), "{}: not finite", spec.id);
        if loudest > worst.1 {
            worst = (spec.id.to_string(), loudest);
        }
    }
    worst
}

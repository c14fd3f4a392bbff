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

/// The bursts (dB over the steady parts around) at each of `changes`, sample indices: the
/// loudest 3 ms above 6 kHz around the change over the louder of the steady sound before it
/// and after it. A change that leaves the band louder (a brighter body) is a step, not a
/// click; a click stands out above both.
fn bursts_db(signal: &[f32], changes: &[usize]) -> Vec<f64> {
    let band = click_band_energy(signal, RATE_HZ);
    let ms = |t: f64| (t * 1e-3 * RATE_HZ) as usize;
    changes
        .iter()
        .map(|&at| {
            let before = median(band[at - ms(250.0)..at - ms(20.0)].to_vec());
            let after = median(band[at + ms(150.0)..at + ms(400.0)].to_vec());
            let burst = band[at - ms(10.0)..at + ms(80.0)].iter().fold(0.0f64, |m, &v| m.max(v));
            10.0 * (burst / before.max(after).max(1e-30)).log10()
        })
        .collect()
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

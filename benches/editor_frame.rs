//! The editor's frame, and what an open editor costs the audio thread (issue 19).
//!
//! - Criterion times one frame of each page (string, membrane, lab) drawn without a window
//!   (`rosin::editor::headless`): egui's layout of every panel and view and its tessellation,
//!   everything but the GPU, at the default size with eight strings and a drum sounding.
//! - The summary renders that busy engine, publishing its view snapshot as the plugin does,
//!   alternately with and without an editor drawing at 60 frames a second on another thread
//!   from the same triple buffer, and prints how much the open editor raises the audio
//!   thread's time (issue 19 allows 1 %).
//!
//! `cargo bench --bench editor_frame`.

mod common;

use common::busy_engine;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use rosin::editor::headless::HeadlessEditor;
use rosin::params::RosinParams;
use rosin_engine::view::snapshot::{capture, ViewSnapshot, VIEW_RATE_HZ};
use rosin_engine::view::triple_buffer::{triple_buffer, TripleReader, TripleWriter};
use rosin_engine::voices::Engine;

const SIZE: (f32, f32) = (1040.0, 660.0);


fn busy_view() -> TripleReader<ViewSnapshot> {
    let engine = busy_engine();
    let (mut writer, reader) = triple_buffer(ViewSnapshot::default());
    writer.publish(|view| capture(&engine, view));
    reader
}

fn frames(c: &mut Criterion) {
    for page in ["string", "membrane", "lab"] {
        let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), busy_view(), SIZE);
        editor.show(page);
        editor.frame(1.0 / 60.0);
        c.bench_function(&format!("editor_frame_{page}"), |b| b.iter(|| black_box(editor.frame(1.0 / 60.0))));
    }
}

/// Renders `blocks` blocks of the busy engine as the plugin's process() does, publishing
/// the view snapshot at [`VIEW_RATE_HZ`]; returns the seconds it took.
fn render(engine: &mut Engine, writer: &mut TripleWriter<ViewSnapshot>, blocks: usize) -> f64 {
    let mut block = vec![0.0f32; common::BLOCK];
    let samples_per_view = (common::RATE / VIEW_RATE_HZ) as usize;
    let mut to_capture = 0usize;
    let start = Instant::now();
    for _ in 0..blocks {
        engine.render(black_box(&mut block));
        if to_capture > common::BLOCK {
            to_capture -= common::BLOCK;
        } else {
            to_capture = samples_per_view;
            writer.publish(|view| capture(engine, view));
        }
    }
    start.elapsed().as_secs_f64()
}

fn summary() {
    let mut engine = busy_engine();
    let (mut writer, reader) = triple_buffer(ViewSnapshot::default());
    let drawing = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let editor = {
        let (drawing, stop) = (drawing.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut editor = HeadlessEditor::new(Arc::new(RosinParams::default()), reader, SIZE);
            let mut frame_s = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if !drawing.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
                let start = Instant::now();
                editor.frame(1.0 / 60.0);
                let spent = start.elapsed();
                frame_s.push(spent.as_secs_f64());
                std::thread::sleep(Duration::from_secs_f64(1.0 / 60.0).saturating_sub(spent));
            }
            frame_s
        })
    };
    // Alternate closed and open editor, 1 s of audio each, and compare the medians.
    let blocks = (common::RATE / common::BLOCK as f64) as usize;
    let (mut closed, mut open) = (Vec::new(), Vec::new());
    render(&mut engine, &mut writer, blocks);
    for _ in 0..15 {
        drawing.store(false, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
        closed.push(render(&mut engine, &mut writer, blocks));
        drawing.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
        open.push(render(&mut engine, &mut writer, blocks));
    }
    stop.store(true, Ordering::Relaxed);
    let mut frame_s = editor.join().expect("the editor thread");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (closed_s, open_s) = (median(&mut closed), median(&mut open));
    let frames = frame_s.len();
    let frame_median_s = median(&mut frame_s);
    println!("\nThe editor at {} x {}, eight strings and a full-resolution drum sounding:", SIZE.0, SIZE.1);
    println!("  a frame: {:.3} ms (the median of {frames} frames drawn at 60 a second beside the audio thread): {:.1} % of the editor's thread", frame_median_s * 1e3, 100.0 * frame_median_s * 60.0);
    println!("  audio thread: {:.1} ms a second of audio with the editor closed, {:.1} ms with it open: {:+.2} % (issue 19 allows 1 %)", closed_s * 1e3, open_s * 1e3, 100.0 * (open_s / closed_s - 1.0));
}

criterion_group!(benches, frames);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}

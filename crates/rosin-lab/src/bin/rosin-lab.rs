//! `rosin-lab`: PNG figures of Rosin's physics for researchers. The numbers come from
//! [`rosin_lab`] (which the tests check); this file parses the command line and draws.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use rosin_lab::bow_point::{bow_point_trace, BowPointSettings};
use rosin_lab::energy::{energy_trace, EnergySettings};
use rosin_lab::guettler::{guettler_grid, GuettlerGrid, GuettlerSettings, PERFECT_TRANSIENT_S};
use rosin_lab::hifi::{hifi_trace, HiFiTrace, HIFI_SAMPLE_RATE_HZ};
use rosin_lab::hysteresis::{all_loops, HysteresisLoop, HysteresisSettings};
use rosin_lab::{model_key, parse_model, Bowing, STRING_FREQUENCY_HZ};
use rosin_physics::bow::contact::{hyperbolic_law_for, FrictionModel};
use rosin_physics::bow::lumped::LumpedParams;

const USAGE: &str = "usage: rosin-lab FIGURE [options]

Computes a figure of Rosin's physics and writes it as a PNG file. Every string but
hifi-bow's is G3 at 44.1 kHz with the bristle stiffness s0 = 1e5 N/m, s1 = 0.001 sqrt(s0)
and no bow noise.

figures:
  hysteresis   friction force against relative velocity for every friction model, in
               steady Helmholtz motion; prints each loop's area (the integral of f dv
               over a period)
  bow-point    the bow point's velocity and displacement over a few periods
               (willemsen2019 Figs. 8-9)
  energy       the lumped model's relative energy error per step over one second, and
               its stored energy (matusiak2025 Fig. 7)
  guettler     transient length over bow force and bow acceleration (a Guettler diagram),
               one run per cell, in parallel
  hifi-bow     matusiak2025's high-fidelity bow on its Table 2 string (98 Hz, bow 1 cm
               wide, torsion): each contact point's relative velocity over the last
               periods, and a WAV of the bridge force to listen to
  all          every figure above

options:
  -o, --out DIR          where the PNG files go (default: docs/figures)
      --size WxH         image size in pixels (default: 1200x800)
  -m, --model NAME       friction model of bow-point and guettler: dupont, refined,
                         hyperbolic or dahl (default: dupont)
      --force N          bow force for hysteresis and bow-point (default: 6)
      --velocity M/S     bow velocity for hysteresis and bow-point, the final bow speed
                         for guettler (default: 0.1)
      --position BETA    bow-bridge distance as a fraction of the length (default: 0.18)
      --grid N           guettler cells along each axis, 2 to 200 (default: 24)
      --seconds S        guettler run length, 0.1 to 10 s (default: 0.5); hifi-bow's
                         run length (default: 2)
      --points M         hifi-bow's contact points across the bow, 1 to 4 (default: 4)
  -h, --help             show this help";

/// Prints a line to stdout; a closed pipe (`rosin-lab --help | head`) is not an error.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

const FONT: &str = "sans-serif";

/// Text and line sizes are given for the default 1200x800 image and scaled with it.
static SCALE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();

fn px(size: u32) -> u32 {
    ((size as f64 * SCALE.get().copied().unwrap_or(1.0)).round() as u32).max(1)
}

fn font(size: u32) -> (&'static str, u32) {
    (FONT, px(size))
}
#[derive(Clone, Copy, Debug, PartialEq)]
enum Figure {
    Hysteresis,
    BowPoint,
    Energy,
    Guettler,
    HiFiBow,
}

impl Figure {
    const ALL: [Figure; 5] = [Figure::Hysteresis, Figure::BowPoint, Figure::Energy, Figure::Guettler, Figure::HiFiBow];

    fn name(self) -> &'static str {
        match self {
            Figure::Hysteresis => "hysteresis",
            Figure::BowPoint => "bow-point",
            Figure::Energy => "energy",
            Figure::Guettler => "guettler",
            Figure::HiFiBow => "hifi-bow",
        }
    }
}

struct Options {
    figures: Vec<Figure>,
    out: PathBuf,
    size: (u32, u32),
    model: FrictionModel,
    bowing: Bowing,
    grid: usize,
    run_s: Option<f64>,
    contact_points: usize,
}

fn number(option: &str, text: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|_| format!("{option} '{text}' is not a number"))?;
    if !range.contains(&value) {
        return Err(format!("{option} {text} is outside {} to {}", range.start(), range.end()));
    }
    Ok(value)
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options { figures: Vec::new(), out: PathBuf::from("docs/figures"), size: (1200, 800), model: FrictionModel::ElastoPlastic, bowing: Bowing::default(), grid: 24, run_s: None, contact_points: 4 };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "-h" | "--help" => {
                say!("{USAGE}");
                return Ok(None);
            }
            "-o" | "--out" => options.out = PathBuf::from(value(&arg)?),
            "--size" => {
                let v = value(&arg)?;
                let parsed = v.split_once('x').and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
                options.size = parsed.filter(|&(w, h)| (300..=8000).contains(&w) && (200..=8000).contains(&h)).ok_or_else(|| format!("--size '{v}' is not WIDTHxHEIGHT from 300x200 to 8000x8000"))?;
            }
            "-m" | "--model" => {
                let v = value(&arg)?;
                options.model = parse_model(&v).ok_or_else(|| format!("unknown friction model '{v}' (dupont, refined, hyperbolic or dahl)"))?;
            }
            "--force" => options.bowing.normal_force_n = number(&arg, &value(&arg)?, 0.01..=20.0)?,
            "--velocity" => options.bowing.bow_velocity_mps = number(&arg, &value(&arg)?, 0.01..=0.5)?,
            "--position" => options.bowing.bow_position = number(&arg, &value(&arg)?, 0.02..=0.5)?,
            "--grid" => {
                let v = value(&arg)?;
                options.grid = v.parse().ok().filter(|g| (2..=200).contains(g)).ok_or_else(|| format!("--grid '{v}' is not an integer from 2 to 200"))?;
            }
            "--seconds" => options.run_s = Some(number(&arg, &value(&arg)?, 0.1..=10.0)?),
            "--points" => options.contact_points = number(&arg, &value(&arg)?, 1.0..=4.0)?.round() as usize,
            "all" => options.figures.extend(Figure::ALL),
            _ if arg.starts_with('-') => return Err(format!("unknown option '{arg}'")),
            _ => match Figure::ALL.into_iter().find(|f| f.name() == arg) {
                Some(figure) => options.figures.push(figure),
                None => return Err(format!("unknown figure '{arg}' (hysteresis, bow-point, energy, guettler, hifi-bow or all)")),
            },
        }
    }
    if options.figures.is_empty() {
        return Err("no figure named".into());
    }
    let mut seen = Vec::new();
    options.figures.retain(|f| if seen.contains(f) { false } else { seen.push(*f); true });
    Ok(Some(options))
}

/// Turns any drawing error into the message the user sees.
trait OrMessage<T> {
    fn or_message(self, what: &str) -> Result<T, String>;
}

impl<T, E: std::fmt::Display> OrMessage<T> for Result<T, E> {
    fn or_message(self, what: &str) -> Result<T, String> {
        self.map_err(|e| format!("{what}: {e}"))
    }
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

fn model_colour(model: FrictionModel) -> RGBColor {
    match model {
        FrictionModel::ElastoPlastic => RGBColor(31, 100, 180),
        FrictionModel::PassiveRefined => RGBColor(40, 140, 60),
        FrictionModel::Hyperbolic => RGBColor(210, 90, 20),
        FrictionModel::Dahl => RGBColor(130, 60, 160),
    }
}

/// A polyline as separate segments: plotters joins a thick polyline with unbounded mitres,
/// which draw long spikes where a loop turns back on itself.
fn segments(points: impl IntoIterator<Item = (f64, f64)>, style: impl Into<ShapeStyle>) -> Vec<PathElement<(f64, f64)>> {
    let style = style.into();
    let points: Vec<(f64, f64)> = points.into_iter().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    points.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], style)).collect()
}

type Chart<'a, 'b> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A tick label without float noise or a "-0".
fn tick(value: &f64) -> String {
    if value.abs() < 1e-9 {
        return "0".into();
    }
    if value.abs() < 1e-3 || value.abs() >= 1e6 {
        return format!("{value:.1e}");
    }
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn draw_axes(chart: &mut Chart, x_desc: &str, y_desc: &str) -> Result<(), String> {
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(font(15))
        .axis_desc_style(font(17))
        .light_line_style(WHITE.mix(0.0))
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()
        .or_message("drawing the axes")
}

/// `(min, max)` of the finite values, widened by `pad` of the span on each side.
fn padded_range(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (lo, hi) = values.filter(|v| v.is_finite()).fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (-1.0, 1.0);
    }
    let span = (hi - lo).max(1e-12 * hi.abs().max(1e-300));
    (lo - pad * span, hi + pad * span)
}

fn hysteresis_figure(root: &Area, loops: &[HysteresisLoop], bowing: &Bowing) -> Result<(), String> {
    let title = format!("Friction force against relative velocity on a bowed G3 string, {} N at {} m/s, bow at {} of the length", bowing.normal_force_n, bowing.bow_velocity_mps, bowing.bow_position);
    let body = root.titled(&title, font(26)).or_message("drawing the title")?;
    let law = hyperbolic_law_for(&rosin_lab::lab_friction());
    for (panel, l) in body.split_evenly((2, 2)).iter().zip(loops) {
        let colour = model_colour(l.model);
        // Each panel has its own scale: the loops differ several times in size.
        let (v_lo, v_hi) = padded_range(l.samples.iter().map(|s| s.contact_velocity_mps), 0.06);
        let (f_lo, f_hi) = padded_range(l.samples.iter().map(|s| s.force_n), 0.1);
        let caption = if l.periods > 0 { format!("{}: loop area {:+.4} N·m/s", l.model.name(), l.loop_area_n_mps) } else { format!("{}: no Helmholtz motion", l.model.name()) };
        let mut chart = ChartBuilder::on(panel)
            .caption(caption, font(20))
            .margin(px(12))
            .x_label_area_size(px(48))
            .y_label_area_size(px(60))
            .build_cartesian_2d(v_lo..v_hi, f_lo..f_hi)
            .or_message("building a chart")?;
        draw_axes(&mut chart, "relative velocity at the friction interface v (m/s)", "friction force f (N)")?;
        if l.model == FrictionModel::Hyperbolic {
            // The law's sliding branches, under the samples.
            let fn_n = bowing.normal_force_n;
            let law_style = ShapeStyle::from(&BLACK.mix(0.35)).stroke_width(px(3));
            let branch = |from: f64, to: f64| (0..=400).map(move |i| from + (to - from) * i as f64 / 400.0).map(move |v| (v, v.signum() * law.coefficient(v) * fn_n)).filter(|(_, f)| (f_lo..=f_hi).contains(f)).collect::<Vec<_>>();
            chart.draw_series(segments(branch(v_lo, -1e-9), law_style)).or_message("drawing the law")?.label("law: sgn(v) mu(|v|) fN").legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], law_style));
            chart.draw_series(segments(branch(1e-9, v_hi), law_style)).or_message("drawing the law")?;
        }
        let points: Vec<(f64, f64)> = l.samples.iter().map(|s| (s.contact_velocity_mps, s.force_n)).collect();
        chart.draw_series(segments(points.iter().copied(), colour.stroke_width(px(2)))).or_message("drawing a loop")?.label(format!("{} periods of {:.2} ms", l.periods, l.period_s * 1e3)).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], colour.stroke_width(px(2))));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, px(2), colour.filled()))).or_message("drawing the samples")?;
        chart.configure_series_labels().position(SeriesLabelPosition::UpperLeft).label_font(font(15)).background_style(WHITE.mix(0.85)).border_style(BLACK.mix(0.4)).draw().or_message("drawing the legend")?;
    }
    Ok(())
}

fn bow_point_figure(root: &Area, model: FrictionModel, bowing: &Bowing) -> Result<(), String> {
    let trace = bow_point_trace(model, &BowPointSettings { bowing: *bowing, ..BowPointSettings::default() });
    let title = format!("Bow point of a bowed G3 string, {}, {} N at {} m/s, bow at {} of the length", model.name(), bowing.normal_force_n, bowing.bow_velocity_mps, bowing.bow_position);
    let body = root.titled(&title, font(26)).or_message("drawing the title")?;
    let (upper, lower) = body.split_vertically(body.dim_in_pixel().1 / 2);
    let t_ms: Vec<f64> = trace.time_s.iter().map(|t| t * 1e3).collect();
    let (t0, t1) = (t_ms[0], *t_ms.last().unwrap_or(&(t_ms[0] + 1.0)));
    let colour = model_colour(model);

    let (v_lo, v_hi) = padded_range(trace.velocity_mps.iter().copied().chain([0.0, trace.bow_velocity_mps]), 0.08);
    let mut chart = ChartBuilder::on(&upper).caption("velocity", font(20)).margin(px(12)).x_label_area_size(px(45)).y_label_area_size(px(70)).build_cartesian_2d(t0..t1, v_lo..v_hi).or_message("building a chart")?;
    draw_axes(&mut chart, "time (ms)", "velocity (m/s)")?;
    let bow_style = ShapeStyle::from(&BLACK.mix(0.6)).stroke_width(px(1));
    chart.draw_series(DashedLineSeries::new([(t0, trace.bow_velocity_mps), (t1, trace.bow_velocity_mps)], px(8), px(5), bow_style)).or_message("drawing the bow")?.label("bow velocity").legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], bow_style));
    chart.draw_series(segments(t_ms.iter().copied().zip(trace.velocity_mps.iter().copied()), colour.stroke_width(px(2)))).or_message("drawing the velocity")?.label("string at the bow").legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], colour.stroke_width(px(2))));
    chart.configure_series_labels().position(SeriesLabelPosition::LowerLeft).label_font(font(15)).background_style(WHITE.mix(0.85)).border_style(BLACK.mix(0.4)).draw().or_message("drawing the legend")?;

    let displacement_mm: Vec<f64> = trace.displacement_m.iter().map(|u| u * 1e3).collect();
    let (u_lo, u_hi) = padded_range(displacement_mm.iter().copied(), 0.08);
    let mut chart = ChartBuilder::on(&lower).caption("displacement", font(20)).margin(px(12)).x_label_area_size(px(45)).y_label_area_size(px(70)).build_cartesian_2d(t0..t1, u_lo..u_hi).or_message("building a chart")?;
    draw_axes(&mut chart, "time (ms)", "displacement (mm)")?;
    chart.draw_series(segments(t_ms.iter().copied().zip(displacement_mm), colour.stroke_width(px(2)))).or_message("drawing the displacement")?;
    Ok(())
}

fn energy_figure(root: &Area) -> Result<f64, String> {
    let settings = EnergySettings::default();
    let trace = energy_trace(LumpedParams::matusiak2025(), &settings);
    let eps = f64::EPSILON;
    let worst = trace.worst_relative_error();
    let title = format!("Energy balance of matusiak2025's bowed lumped mass, fN {} N, bow to {} m/s at {} m/s²", settings.normal_force_n, settings.bow_speed_mps, settings.bow_acceleration_mps2);
    let body = root.titled(&title, font(26)).or_message("drawing the title")?;
    let (upper, lower) = body.split_vertically(body.dim_in_pixel().1 / 2);
    let t1 = *trace.time_s.last().unwrap_or(&1.0);

    let bound = (worst / eps * 1.5).max(2.0);
    let caption = format!("(H^(n+1) − H^n + k(Q + P)) / H^(n+1) per step: largest {worst:.2e} = {:.1} ε", worst / eps);
    let mut chart = ChartBuilder::on(&upper).caption(caption, font(20)).margin(px(12)).x_label_area_size(px(45)).y_label_area_size(px(70)).build_cartesian_2d(0.0..t1, -bound..bound).or_message("building a chart")?;
    draw_axes(&mut chart, "time (s)", "relative error (units of ε = 2.2e-16)")?;
    // One band per millisecond: 44,100 scattered dots would hide the pattern (and not compress).
    let envelope = trace.error_envelope((settings.sample_rate_hz / 1000.0).round() as usize);
    let band = RGBColor(150, 185, 225);
    chart
        .draw_series(envelope.iter().map(|b| Rectangle::new([(b.time_s - 5e-4, b.min / eps), (b.time_s + 5e-4, b.max / eps)], band.filled())))
        .or_message("drawing the error")?
        .label("smallest to largest, per ms")
        .legend(move |(x, y)| Rectangle::new([(x, y - px(5) as i32), (x + px(24) as i32, y + px(5) as i32)], band.filled()));
    let rms = RGBColor(20, 60, 130);
    chart.draw_series(segments(envelope.iter().map(|b| (b.time_s, b.rms / eps)), rms.stroke_width(px(2)))).or_message("drawing the error")?.label("rms, per ms").legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], rms.stroke_width(px(2))));
    chart.configure_series_labels().position(SeriesLabelPosition::UpperRight).label_font(font(15)).background_style(WHITE.mix(0.85)).border_style(BLACK.mix(0.4)).draw().or_message("drawing the legend")?;

    let energy_mj: Vec<f64> = trace.energy_j.iter().map(|h| h * 1e3).collect();
    let (_, h_hi) = padded_range(energy_mj.iter().copied(), 0.05);
    let mut chart = ChartBuilder::on(&lower).caption("stored energy H (mass, bow hair, bristle)", font(20)).margin(px(12)).x_label_area_size(px(45)).y_label_area_size(px(70)).build_cartesian_2d(0.0..t1, 0.0..h_hi).or_message("building a chart")?;
    draw_axes(&mut chart, "time (s)", "H (mJ)")?;
    chart.draw_series(segments(trace.time_s.iter().copied().zip(energy_mj), RGBColor(40, 140, 60).stroke_width(px(2)))).or_message("drawing the energy")?;
    Ok(worst)
}

/// White up to the "perfect" transient, then darker the longer it takes.
fn transient_colour(transient_s: Option<f64>, run_s: f64) -> RGBColor {
    match transient_s {
        None => RGBColor(200, 50, 40),
        Some(t) if t <= PERFECT_TRANSIENT_S => WHITE,
        Some(t) => {
            let x = ((t - PERFECT_TRANSIENT_S) / (run_s - PERFECT_TRANSIENT_S)).clamp(0.0, 1.0);
            let grey = (215.0 - 195.0 * x) as u8;
            RGBColor(grey, grey, grey.saturating_add(12))
        }
    }
}

fn guettler_figure(root: &Area, grid: &GuettlerGrid) -> Result<(), String> {
    let s = &grid.settings;
    let title = format!("Guettler diagram, G3, {}: bow from rest to {} m/s, at {} of the length", s.model.name(), s.bow_speed_mps, s.bow_position);
    let body = root.titled(&title, font(26)).or_message("drawing the title")?;
    let width = body.dim_in_pixel().0;
    let (main, side) = body.split_horizontally(width.saturating_sub(px(170)));
    let step = |values: &[f64]| if values.len() > 1 { values[1] - values[0] } else { 1.0 };
    let (da, df) = (step(&grid.accelerations_mps2), step(&grid.forces_n));
    let a_range = (grid.accelerations_mps2[0] - da / 2.0)..(grid.accelerations_mps2[grid.accelerations_mps2.len() - 1] + da / 2.0);
    let f_range = (grid.forces_n[0] - df / 2.0)..(grid.forces_n[grid.forces_n.len() - 1] + df / 2.0);
    let caption = format!("transient length: white ≤ {:.0} ms (\"perfect\"), darker longer, red never within {} s", PERFECT_TRANSIENT_S * 1e3, s.run_s);
    let mut chart = ChartBuilder::on(&main).caption(caption, font(19)).margin(px(12)).x_label_area_size(px(50)).y_label_area_size(px(65)).build_cartesian_2d(a_range, f_range).or_message("building a chart")?;
    chart.configure_mesh().disable_mesh().x_desc("bow acceleration (m/s²)").y_desc("bow force (N)").label_style(font(15)).axis_desc_style(font(17)).x_label_formatter(&tick).y_label_formatter(&tick).draw().or_message("drawing the axes")?;
    let cells = grid.forces_n.iter().enumerate().flat_map(|(i, &f)| grid.accelerations_mps2.iter().enumerate().map(move |(j, &a)| (i, j, f, a)));
    let mut rectangles = Vec::new();
    for (i, j, f, a) in cells {
        let corners = [(a - da / 2.0, f - df / 2.0), (a + da / 2.0, f + df / 2.0)];
        rectangles.push(Rectangle::new(corners, transient_colour(grid.at(i, j), s.run_s).filled()));
        rectangles.push(Rectangle::new(corners, BLACK.mix(0.12)));
    }
    chart.draw_series(rectangles).or_message("drawing the cells")?;

    // The colour bar: transient length from 0 to the run length, and the "never" swatch.
    let (bar, key) = side.split_vertically(side.dim_in_pixel().1.saturating_sub(px(110)));
    let run_ms = s.run_s * 1e3;
    let mut scale = ChartBuilder::on(&bar).margin_top(px(40)).margin_bottom(px(10)).margin_right(px(70)).x_label_area_size(px(0)).y_label_area_size(px(60)).build_cartesian_2d(0.0..1.0, 0.0..run_ms).or_message("building the colour bar")?;
    scale.configure_mesh().disable_mesh().disable_x_axis().y_desc("transient (ms)").label_style(font(14)).axis_desc_style(font(16)).y_label_formatter(&tick).draw().or_message("drawing the colour bar")?;
    let slices = 100;
    scale
        .draw_series((0..slices).map(|i| {
            let (lo, hi) = (run_ms * i as f64 / slices as f64, run_ms * (i + 1) as f64 / slices as f64);
            Rectangle::new([(0.0, lo), (1.0, hi)], transient_colour(Some(0.5 * (lo + hi) / 1e3), s.run_s).filled())
        }))
        .or_message("drawing the colour bar")?;
    scale.draw_series([Rectangle::new([(0.0, 0.0), (1.0, run_ms)], BLACK.mix(0.5))]).or_message("drawing the colour bar")?;
    let (x, y) = (px(60) as i32, px(10) as i32);
    key.draw(&Rectangle::new([(x, y), (x + px(40) as i32, y + px(30) as i32)], transient_colour(None, s.run_s).filled())).or_message("drawing the key")?;
    key.draw(&Text::new("never", (x, y + px(40) as i32), font(16))).or_message("drawing the key")?;
    Ok(())
}

/// Checks that `dir` exists (or can be made) and takes files, before any long computation.
fn hifi_figure(root: &Area, trace: &HiFiTrace) -> Result<(), String> {
    let title = format!("matusiak2025's high-fidelity bow, Table 2 string: M = {} points over 1 cm, with torsion", trace.contact_points);
    let body = root.titled(&title, font(26)).or_message("drawing the title")?;
    let t_ms: Vec<f64> = trace.time_s.iter().map(|t| t * 1e3).collect();
    let (t0, t1) = (t_ms[0], *t_ms.last().unwrap_or(&(t_ms[0] + 1.0)));
    let (v_lo, v_hi) = padded_range(trace.relative_velocity_mps.iter().flat_map(|v| v[..trace.contact_points].to_vec()).chain([0.0]), 0.08);
    let caption = format!("relative velocity of each contact point ({:.2} slips per period)", trace.slips_per_period());
    let mut chart = ChartBuilder::on(&body).caption(caption, font(20)).margin(px(12)).x_label_area_size(px(45)).y_label_area_size(px(70)).build_cartesian_2d(t0..t1, v_lo..v_hi).or_message("building a chart")?;
    draw_axes(&mut chart, "time (ms)", "relative velocity (m/s)")?;
    let colours = [RGBColor(31, 95, 170), RGBColor(200, 90, 20), RGBColor(40, 140, 60), RGBColor(120, 60, 150)];
    for m in 0..trace.contact_points {
        let colour = colours[m];
        chart
            .draw_series(segments(t_ms.iter().copied().zip(trace.relative_velocity_mps.iter().map(|v| v[m])), colour.stroke_width(px(2))))
            .or_message("drawing a point")?
            .label(format!("point {}", m + 1))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + px(24) as i32, y)], colour.stroke_width(px(2))));
    }
    chart.configure_series_labels().position(SeriesLabelPosition::LowerLeft).label_font(font(15)).background_style(WHITE.mix(0.85)).border_style(BLACK.mix(0.4)).draw().or_message("drawing the legend")?;
    Ok(())
}

/// The bridge force as 16-bit mono, normalised to -1 dBFS peak after removing its mean.
fn write_wav(path: &Path, force_n: &[f64], sample_rate_hz: f64) -> Result<(), String> {
    let mean = force_n.iter().sum::<f64>() / force_n.len().max(1) as f64;
    let peak = force_n.iter().fold(0.0f64, |m, f| m.max((f - mean).abs())).max(1e-30);
    let spec = hound::WavSpec { channels: 1, sample_rate: sample_rate_hz as u32, bits_per_sample: 16, sample_format: hound::SampleFormat::Int };
    let mut writer = hound::WavWriter::create(path, spec).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let scale = 0.89 * i16::MAX as f64 / peak;
    for f in force_n {
        writer.write_sample(((f - mean) * scale).round() as i16).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    writer.finalize().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    say!("wrote {}", path.display());
    Ok(())
}

fn prepare_out_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the output directory {}: {e}", dir.display()))?;
    let probe = dir.join(".rosin-lab-write-test");
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write to the output directory {}: {e}", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Draws one figure into `path`.
fn draw_png(path: &Path, size: (u32, u32), draw: impl FnOnce(&Area) -> Result<(), String>) -> Result<(), String> {
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).or_message("drawing")?;
    draw(&root)?;
    root.present().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    say!("wrote {}", path.display());
    Ok(())
}

fn run(options: &Options) -> Result<(), String> {
    prepare_out_dir(&options.out)?;
    let _ = SCALE.set((options.size.0 as f64 / 1200.0).min(options.size.1 as f64 / 800.0));
    register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT).map_err(|_| "the bundled font cannot be read".to_string())?;
    let model = options.model;
    for &figure in &options.figures {
        match figure {
            Figure::Hysteresis => {
                let loops = all_loops(&HysteresisSettings { bowing: options.bowing, ..HysteresisSettings::default() });
                for l in &loops {
                    let (lo, hi) = l.period_areas_n_mps.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &a| (lo.min(a), hi.max(a)));
                    say!("{:<30} loop area {:+.4} N·m/s per period (single periods {lo:+.4} to {hi:+.4}; {} periods of {:.2} ms, G3 nominal {:.2} ms)", l.model.name(), l.loop_area_n_mps, l.periods, l.period_s * 1e3, 1e3 / STRING_FREQUENCY_HZ);
                }
                draw_png(&options.out.join("hysteresis.png"), options.size, |root| hysteresis_figure(root, &loops, &options.bowing))?;
            }
            Figure::BowPoint => draw_png(&options.out.join(format!("bow-point-{}.png", model_key(model))), options.size, |root| bow_point_figure(root, model, &options.bowing))?,
            Figure::Energy => {
                let mut worst = 0.0;
                draw_png(&options.out.join("energy.png"), options.size, |root| energy_figure(root).map(|w| worst = w))?;
                say!("energy: largest relative error per step {worst:.3e} ({:.1} machine epsilons)", worst / f64::EPSILON);
            }
            Figure::Guettler => {
                let settings = GuettlerSettings { model, grid: options.grid, run_s: options.run_s.unwrap_or(0.5), bow_speed_mps: options.bowing.bow_velocity_mps, bow_position: options.bowing.bow_position, ..GuettlerSettings::default() };
                let cells = (settings.grid * settings.grid) as u64;
                let bar = ProgressBar::new(cells);
                bar.set_style(ProgressStyle::with_template("guettler {bar:40} {pos}/{len} runs, {elapsed} elapsed, about {eta} left").unwrap_or_else(|_| ProgressStyle::default_bar()));
                let started = Instant::now();
                let grid = guettler_grid(&settings, &|| bar.inc(1));
                bar.finish_and_clear();
                let helmholtz = grid.transient_s.iter().filter(|t| t.is_some()).count();
                let perfect = grid.transient_s.iter().filter(|t| t.is_some_and(|t| t <= PERFECT_TRANSIENT_S)).count();
                say!("guettler: {cells} runs of {} s in {:.1} s on {} threads; {helmholtz} reach Helmholtz motion, {perfect} within {:.0} ms", settings.run_s, started.elapsed().as_secs_f64(), rayon::current_num_threads(), PERFECT_TRANSIENT_S * 1e3);
                draw_png(&options.out.join(format!("guettler-{}.png", model_key(model))), options.size, |root| guettler_figure(root, &grid))?;
            }
            Figure::HiFiBow => {
                let trace = hifi_trace(options.contact_points, options.run_s.unwrap_or(2.0), 4);
                say!("hifi-bow: M = {}, {:.2} slips per period at the central point, {} Newton fallbacks", trace.contact_points, trace.slips_per_period(), trace.fallbacks);
                let stem = format!("hifi-bow-m{}", trace.contact_points);
                draw_png(&options.out.join(format!("{stem}.png")), options.size, |root| hifi_figure(root, &trace))?;
                write_wav(&options.out.join(format!("{stem}.wav")), &trace.bridge_force_n, HIFI_SAMPLE_RATE_HZ)?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(options)) => match run(&options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("rosin-lab: {message}");
                ExitCode::from(2)
            }
        },
        Err(message) => {
            eprintln!("rosin-lab: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

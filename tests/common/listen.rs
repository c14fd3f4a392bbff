//! What a listener hears in a rendered phrase, as numbers: how periodic each note is at its
//! period, how far it is from its pitch, its level, and the bursts of energy above 6 kHz
//! that a click or a raucous change leaves at a note change.
#![allow(dead_code)]

use rosin_engine::controls::Controls;
use rosin_engine::render::{render, Timeline, TimelineItem};
use rosin_engine::voice::NoteId;
use rosin_engine::voices::{Engine, NoteEvent, NotePattern};

/// The band a click shows in.
pub const CLICK_BAND_HZ: f64 = 6_000.0;
/// The window a click's energy is measured over.
pub const CLICK_WINDOW_S: f64 = 0.003;

/// One note of a phrase: its key and the samples it sounds (from its note-on to the next
/// note-on, or to its note-off).
#[derive(Clone, Copy, Debug)]
pub struct PhraseNote {
    pub key: f64,
    pub start: usize,
    pub end: usize,
    /// How long the note takes to settle after its start (s): the attack, or a legato
    /// glide. 150 ms unless the phrase says otherwise.
    pub settle_s: f64,
}

impl PhraseNote {
    /// The steady part: past the attack or the change (the larger of its settling time and
    /// a third of the note), up to 30 ms before it ends.
    pub fn steady(&self, sample_rate_hz: f64) -> std::ops::Range<usize> {
        let length = self.end - self.start;
        let settle = ((self.settle_s * sample_rate_hz) as usize).max(length / 3);
        let tail = (0.030 * sample_rate_hz) as usize;
        (self.start + settle).min(self.end)..self.end.saturating_sub(tail).max(self.start + settle).min(self.end)
    }
}

/// A phrase to render: its timeline, the notes as they should sound, and its length.
pub struct Phrase {
    pub timeline: Timeline,
    pub notes: Vec<PhraseNote>,
    pub length: usize,
}

/// The notes of a major scale over two octaves from `lowest`.
pub fn two_octave_scale(lowest: u8) -> Vec<u8> {
    let steps = [0u8, 2, 4, 5, 7, 9, 11];
    let mut keys: Vec<u8> = (0..2).flat_map(|octave| steps.iter().map(move |s| lowest + 12 * octave + s)).collect();
    keys.push(lowest + 24);
    keys
}

/// Notes one after another, each held `note_s`; with `overlap_s` > 0 the next note starts
/// that long before the last one's note-off (legato). `mod_wheel` is sent first (0..1).
pub fn melody(keys: &[u8], note_s: f64, overlap_s: f64, velocity: f64, mod_wheel: f64, sample_rate_hz: f64) -> Phrase {
    let at = |s: f64| (s * sample_rate_hz).round() as u64;
    let mut timeline = Timeline::default();
    timeline.push(0, TimelineItem::Note(NoteEvent::ControlChange { channel: 0, cc: 1, value: mod_wheel }));
    let lead_in = 0.01;
    let mut notes = Vec::new();
    for (i, &key) in keys.iter().enumerate() {
        let id = NoteId { channel: 0, note: key, voice_id: None };
        let start = lead_in + note_s * i as f64;
        timeline.push(at(start), TimelineItem::Note(NoteEvent::NoteOn { note: id, velocity }));
        timeline.push(at(start + note_s + overlap_s), TimelineItem::Note(NoteEvent::NoteOff { pattern: NotePattern::exact(id) }));
        notes.push(PhraseNote { key: key as f64, start: at(start) as usize, end: at(start + note_s) as usize, settle_s: 0.150 });
    }
    let length = at(lead_in + note_s * keys.len() as f64 + 0.3) as usize;
    Phrase { timeline, notes, length }
}

/// Notes that sound together from `start_s` for `held_s`.
pub fn chord(keys: &[u8], start_s: f64, held_s: f64, velocity: f64, sample_rate_hz: f64, timeline: &mut Timeline) {
    let at = |s: f64| (s * sample_rate_hz).round() as u64;
    for &key in keys {
        let id = NoteId { channel: 0, note: key, voice_id: None };
        timeline.push(at(start_s), TimelineItem::Note(NoteEvent::NoteOn { note: id, velocity }));
        timeline.push(at(start_s + held_s), TimelineItem::Note(NoteEvent::NoteOff { pattern: NotePattern::exact(id) }));
    }
}

/// Renders `phrase` with `controls` through a fresh engine at `sample_rate_hz`.
pub fn render_phrase(phrase: &Phrase, controls: &Controls, sample_rate_hz: f64) -> Vec<f32> {
    render_phrase_take(phrase, controls, sample_rate_hz, 0)
}

/// [`render_phrase`], as another take: every note's bow noise drawn anew
/// (`Engine::set_take`; take 0 is the default).
pub fn render_phrase_take(phrase: &Phrase, controls: &Controls, sample_rate_hz: f64, take: u64) -> Vec<f32> {
    let mut engine = Engine::new(sample_rate_hz);
    engine.set_take(take);
    let mut controls = *controls;
    render(&mut engine, &mut controls, &phrase.timeline, phrase.length as u64, 256)
}

/// A 4th-order Butterworth high-pass at `cutoff_hz` (two biquads, bilinear transform).
pub fn highpass(signal: &[f32], sample_rate_hz: f64, cutoff_hz: f64) -> Vec<f64> {
    let mut out: Vec<f64> = signal.iter().map(|&s| s as f64).collect();
    for q in [0.541_196_100_146_197, 1.306_562_964_876_376_6] {
        let w = (std::f64::consts::PI * cutoff_hz / sample_rate_hz).tan();
        let norm = 1.0 / (1.0 + w / q + w * w);
        let (b0, b1, b2) = (norm, -2.0 * norm, norm);
        let (a1, a2) = (2.0 * (w * w - 1.0) * norm, (1.0 - w / q + w * w) * norm);
        let (mut x1, mut x2, mut y1, mut y2) = (0.0, 0.0, 0.0, 0.0);
        for v in out.iter_mut() {
            let x = *v;
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
            (x2, x1, y2, y1) = (x1, x, y1, y);
            *v = y;
        }
    }
    out
}

/// The mean square above [`CLICK_BAND_HZ`] over the [`CLICK_WINDOW_S`] ending at each sample.
pub fn click_band_energy(signal: &[f32], sample_rate_hz: f64) -> Vec<f64> {
    let high = highpass(signal, sample_rate_hz, CLICK_BAND_HZ);
    let window = ((CLICK_WINDOW_S * sample_rate_hz) as usize).max(1);
    let mut sum = 0.0;
    let mut out = Vec::with_capacity(high.len());
    for i in 0..high.len() {
        sum += high[i] * high[i];
        if i >= window {
            sum -= high[i - window] * high[i - window];
        }
        out.push(sum.max(0.0) / window as f64);
    }
    out
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Normalised correlation of `x[a..a+n]` with `x[b..b+n]`.
fn correlation(x: &[f32], a: usize, b: usize, n: usize) -> f64 {
    let (mut dot, mut ea, mut eb) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (p, q) = (x[a + i] as f64, x[b + i] as f64);
        dot += p * q;
        ea += p * p;
        eb += q * q;
    }
    dot / (ea * eb).sqrt().max(1e-300)
}

/// The best lag within `lo..=hi` for the window at `start`, refined between lags by a
/// parabola: `(lag, correlation)`.
fn best_lag(signal: &[f32], start: usize, window: usize, lo: usize, hi: usize) -> (f64, f64) {
    let mut best = (lo, f64::MIN);
    for lag in lo..=hi {
        let r = correlation(signal, start, start + lag, window);
        if r > best.1 {
            best = (lag, r);
        }
    }
    let (lag, r) = best;
    if lag > lo && lag < hi {
        let (a, c) = (correlation(signal, start, start + lag - 1, window), correlation(signal, start, start + lag + 1, window));
        let denominator = a - 2.0 * r + c;
        if denominator < 0.0 {
            let shift = 0.5 * (a - c) / denominator;
            return (lag as f64 + shift, r - 0.25 * (a - c) * shift);
        }
    }
    (lag as f64, r)
}

/// A pitch that swings more than this over a note is vibrato (the mod wheel's is 18 to 60
/// cents deep either way); less is a steady note, measured over many periods.
const VIBRATO_SWING_CENTS: f64 = 12.0;

/// How far from the nominal period the period is looked for: 6.5 %, 109 cents, past the
/// deepest vibrato Rosin plays (100 cents either way).
const LAG_REACH: f64 = 0.065;

/// The centre of a vibrato, in the unit of `values`: the constant of the sinusoid (at the
/// rate, from 1.5 to 10.5 Hz, that fits best) fitted by least squares to `values` at
/// `times_s`, the share of the values' variance the sinusoid explains, and its rate. Unlike the
/// midpoint of the swing or the mean, the centre does not move with where the window starts
/// and ends in the vibrato's cycle.
fn vibrato_centre(times_s: &[f64], values: &[f64]) -> (f64, f64, f64) {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let variance: f64 = values.iter().map(|y| (y - mean).powi(2)).sum();
    let mut best = (f64::INFINITY, f64::NAN, 0.0);
    let mut rate_hz = 1.5;
    while rate_hz <= 10.5 {
        let w = std::f64::consts::TAU * rate_hz;
        // Normal equations of y = a + b sin(wt) + d cos(wt).
        let mut m = [[0.0f64; 3]; 3];
        let mut v = [0.0f64; 3];
        for (&t, &y) in times_s.iter().zip(values) {
            let basis = [1.0, (w * t).sin(), (w * t).cos()];
            for i in 0..3 {
                v[i] += basis[i] * y;
                for j in 0..3 {
                    m[i][j] += basis[i] * basis[j];
                }
            }
        }
        if let Some(coefficients) = solve3(m, v) {
            let residual: f64 = times_s
                .iter()
                .zip(values)
                .map(|(&t, &y)| (y - coefficients[0] - coefficients[1] * (w * t).sin() - coefficients[2] * (w * t).cos()).powi(2))
                .sum();
            if residual < best.0 {
                best = (residual, coefficients[0], rate_hz);
            }
        }
        rate_hz += 0.05;
    }
    (best.1, 1.0 - best.0 / variance.max(1e-300), best.2)
}

/// How much of a wavering pitch track's variance a sinusoid must explain for its centre to
/// be read as the pitch.
const VIBRATO_FIT: f64 = 0.7;
/// How much it must explain for the track to be a vibrato however short.
const CLEAR_VIBRATO_FIT: f64 = 0.9;

/// `m x = v` for a 3x3 system, by Gaussian elimination with partial pivoting.
fn solve3(mut m: [[f64; 3]; 3], mut v: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for row in col + 1..3 {
            let factor = m[row][col] / m[col][col];
            for k in col..3 {
                m[row][k] -= factor * m[col][k];
            }
            v[row] -= factor * v[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        x[row] = (v[row] - (row + 1..3).map(|k| m[row][k] * x[k]).sum::<f64>()) / m[row][row];
    }
    Some(x)
}

/// How periodic `signal` is at the period of `f0_hz`, and the frequency it repeats at:
/// the normalised autocorrelation at one period (found within [`LAG_REACH`] of the nominal
/// one, so a vibrato as deep as the *Vibrato Depth* control goes counts as periodic, and
/// refined between lags by a parabola), over windows of four periods, median; the frequency
/// from the median period, refined over as many whole periods as fit in half the signal,
/// or the centre of its vibrato (read from each window's fundamental where the fundamental
/// carries the note, else from each window's period). Periodicity 1.0 is periodic; a double
/// slip or a raucous note falls well below.
pub fn periodicity_and_pitch(signal: &[f32], sample_rate_hz: f64, f0_hz: f64) -> (f64, f64) {
    let period = sample_rate_hz / f0_hz;
    let window = ((4.0 * period) as usize).max((0.010 * sample_rate_hz) as usize);
    let (lo, hi) = (((period * (1.0 - LAG_REACH)).floor() as usize).max(2), (period * (1.0 + LAG_REACH)).ceil() as usize + 1);
    let (mut values, mut lags) = (Vec::new(), Vec::new());
    let mut start = 0;
    while start + window + hi + 2 <= signal.len() {
        let (lag, r) = best_lag(signal, start, window, lo, hi);
        values.push(r.min(1.0));
        lags.push(lag);
        start += window / 2;
    }
    if values.is_empty() {
        return (0.0, f64::NAN);
    }
    let periodicity = median(&mut values);
    // A pitch that moves is read at its centre, in one of two ways:
    // - a vibrato that a sinusoid describes (it explains CLEAR_VIBRATO_FIT of the per-window
    //   pitch's variance, swings more than VIBRATO_SWING_CENTS, and makes at least one whole
    //   cycle in what is heard): the centre of that sinusoid, however few cycles those are;
    // - a pitch that wavers otherwise (a drum's random waver, a vibrato heard with its
    //   onset), told by the per-window pitch smoothed over five windows (ten periods, so the
    //   estimate's own scatter is not taken for a swing) swinging more than
    //   VIBRATO_SWING_CENTS between its 5th and 95th percentiles and crossing its middle at
    //   least three times (a pitch that only drifts, an ear still settling, does not): the
    //   fitted sinusoid's centre if it explains VIBRATO_FIT of it, else the mean pitch (in
    //   cents) of the windows.
    let hop = window / 2;
    let times_s: Vec<f64> = (0..lags.len()).map(|i| (i * hop + window / 2) as f64 / sample_rate_hz).collect();
    // Each window's pitch is its fundamental's (the phase it turns through) where the
    // fundamental can be followed through every window: a window's best lag can jump
    // between neighbouring peaks of the correlation when an inharmonic partial beats against
    // the harmonics (a stiff steel string), and a track of such jumps reads as a waver or
    // biases a vibrato's centre. The note's track is one or the other, never a mix of the two.
    let fundamental: Option<Vec<f64>> = fundamental_periods(signal, sample_rate_hz, f0_hz, window, hop, lags.len()).into_iter().collect();
    let cents: Vec<f64> = fundamental.as_ref().unwrap_or(&lags).iter().map(|lag| 1200.0 * lag.log2()).collect();
    let swing_cents = |values: &[f64]| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let percentile = |p: f64| sorted[((sorted.len() - 1) as f64 * p).round() as usize];
        (percentile(0.05), percentile(0.95))
    };
    if cents.len() >= 8 {
        let (centre, explained, rate_hz) = vibrato_centre(&times_s, &cents);
        let (low, high) = swing_cents(&cents);
        let cycles = rate_hz * (times_s[times_s.len() - 1] - times_s[0] + window as f64 / sample_rate_hz);
        if explained >= CLEAR_VIBRATO_FIT && high - low > VIBRATO_SWING_CENTS && cycles >= 1.0 {
            return (periodicity, sample_rate_hz / (centre / 1200.0).exp2());
        }
        let track: Vec<f64> = cents.windows(5).map(|w| w.iter().sum::<f64>() / 5.0).collect();
        if track.len() >= 8 {
            let (low, high) = swing_cents(&track);
            let middle = 0.5 * (low + high);
            let crossings = track.windows(2).filter(|w| (w[0] - middle).signum() != (w[1] - middle).signum()).count();
            if crossings >= 3 && high - low > VIBRATO_SWING_CENTS {
                let mean = cents.iter().sum::<f64>() / cents.len() as f64;
                let read = if explained >= VIBRATO_FIT { centre } else { mean };
                return (periodicity, sample_rate_hz / (read / 1200.0).exp2());
            }
        }
    }
    (periodicity, sample_rate_hz / repeat_period(signal, median(&mut lags)))
}

/// The period (samples) of `signal`'s fundamental in each of `count` windows of `window`
/// samples, `hop` apart: the phase it turns through over the window, heard through a
/// heterodyne at `f0_hz` and two moving averages one nominal period long (which null every
/// other harmonic), over as much of the window as the averages have settled on (at least
/// half). `None` where that is too little, or the fundamental is too weak to follow.
fn fundamental_periods(signal: &[f32], sample_rate_hz: f64, f0_hz: f64, window: usize, hop: usize, count: usize) -> Vec<Option<f64>> {
    let length = (sample_rate_hz / f0_hz).round().max(1.0) as usize;
    let w = std::f64::consts::TAU * f0_hz / sample_rate_hz;
    let base: Vec<(f64, f64)> = signal.iter().enumerate().map(|(n, &x)| (x as f64 * (w * n as f64).cos(), -(x as f64) * (w * n as f64).sin())).collect();
    let average = |input: &[(f64, f64)]| -> Vec<(f64, f64)> {
        let mut out = vec![(0.0, 0.0); input.len()];
        let mut sum = (0.0, 0.0);
        for (n, &(re, im)) in input.iter().enumerate() {
            sum = (sum.0 + re, sum.1 + im);
            if n >= length {
                sum = (sum.0 - input[n - length].0, sum.1 - input[n - length].1);
            }
            out[n] = (sum.0 / length as f64, sum.1 / length as f64);
        }
        out
    };
    let z = average(&average(&base));
    let (settled, delay) = (2 * length, length - 1);
    let power = |range: std::ops::Range<usize>| range.clone().map(|n| z[n].0 * z[n].0 + z[n].1 * z[n].1).sum::<f64>() / range.len().max(1) as f64;
    (0..count)
        .map(|i| {
            // The window's own samples, as far as the averages have settled on them.
            let (from, to) = ((i * hop + delay).max(settled), (i * hop + window + delay).min(z.len()));
            if to < from + window / 2 {
                return None;
            }
            // The fundamental's share of the window's own power (a sinusoid's baseband is half
            // its power; the averages lag the signal by `delay`). Against the whole note's
            // mean power, a note still swelling as its steady part began had its quieter
            // first windows refused, and was read from the best lags instead.
            let window_power = signal[from - delay..to - delay].iter().map(|&x| (x as f64).powi(2)).sum::<f64>() / (to - from) as f64;
            if 2.0 * power(from..to) < FOLLOWED_FUNDAMENTAL_SHARE * window_power {
                return None;
            }
            let turned: f64 = (from + 1..to).map(|n| {
                let (a, b) = (z[n - 1], z[n]);
                (a.0 * b.1 - a.1 * b.0).atan2(a.0 * b.0 + a.1 * b.1)
            }).sum();
            let hz = f0_hz + turned / (std::f64::consts::TAU * (to - from - 1) as f64) * sample_rate_hz;
            (hz > 0.0).then(|| sample_rate_hz / hz)
        })
        .collect()
}

/// The least share of a window's power a note's fundamental must carry to be followed (a
/// sawtooth's is 0.61).
const FOLLOWED_FUNDAMENTAL_SHARE: f64 = 0.4;

/// The period `signal` repeats at over many periods, from an estimate `period`. The lag's
/// error is divided by the periods' count: the count doubles at each step, each search
/// spanning a quarter of a period either way around the last estimate, so an error of a few
/// tenths of a sample per period never jumps to the neighbouring multiple.
fn repeat_period(signal: &[f32], period: f64) -> f64 {
    let mut found = period;
    let most = ((signal.len() as f64 * 0.5) / found).floor();
    let mut periods = 2.0;
    while periods <= most {
        let centre = found * periods;
        let reach = (0.25 * found).max(3.0);
        let span = signal.len() - (centre + reach + 2.0) as usize;
        let (lag, _) = best_lag(signal, 0, span, (centre - reach) as usize, (centre + reach).ceil() as usize);
        found = lag / periods;
        if periods == most {
            break;
        }
        periods = (periods * 2.0).min(most);
    }
    found
}

/// How periodic `signal` is at the period of `f0_hz` (see [`periodicity_and_pitch`]).
pub fn periodicity(signal: &[f32], sample_rate_hz: f64, f0_hz: f64) -> f64 {
    periodicity_and_pitch(signal, sample_rate_hz, f0_hz).0
}

/// How far the second harmonic of a note at `f0_hz` stands over its fundamental (dB): each
/// the largest magnitude of a Hann-windowed DFT of `signal` within 1.5 % of the harmonic's
/// frequency. A bowed note in Helmholtz motion reads about -15 to +12 dB through a body or
/// none; one that sounds the octave above, slipping twice a period with its two slips alike
/// or in its second mode, reads 35 to 55 dB: the motion is periodic at the note's period
/// too, so [`periodicity`] passes it.
pub fn octave_over_fundamental_db(signal: &[f32], sample_rate_hz: f64, f0_hz: f64) -> f64 {
    let n = signal.len();
    let window: Vec<f64> = (0..n).map(|i| signal[i] as f64 * (0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos())).collect();
    let magnitude = |hz: f64| {
        let step = std::f64::consts::TAU * hz / sample_rate_hz;
        let (re, im) = window.iter().enumerate().fold((0.0, 0.0), |(re, im), (i, x)| (re + x * (step * i as f64).cos(), im - x * (step * i as f64).sin()));
        (re * re + im * im).sqrt()
    };
    let harmonic = |h: f64| (-15..=15).map(|j| magnitude(h * f0_hz * (1.0 + 0.001 * j as f64))).fold(0.0, f64::max);
    20.0 * (harmonic(2.0).max(1e-30) / harmonic(1.0).max(1e-30)).log10()
}

/// What one note of a phrase sounded like.
#[derive(Clone, Copy, Debug)]
pub struct NoteReport {
    pub key: f64,
    pub periodicity: f64,
    pub cents: f64,
    pub rms_db: f64,
}

/// What a change from one note to the next sounded like: the loudest 3 ms above 6 kHz
/// from 10 ms before the change to 80 ms after, over the same reading taken in the steady
/// part of the brighter of the two notes (dB). A click stands out above both notes; a dull
/// note followed by a bright one is a step, which the two notes together would read as a
/// burst of half the step.
///
/// The steady reading is like for like: the loudest 3 ms of a span as long as the change's
/// ([`CHANGE_SPAN_S`]), typical over the note (the median of such spans). A low note's band
/// pulses once a period, at each slip, so the loudest 3 ms of any span stands above the
/// median 3 ms; against that median, a change that did not happen (a span in the middle of
/// one held note) read +1 to +3.5 dB on the string presets' notes, and this reads within
/// about 1 dB of nothing (`tests/listener.rs`).
#[derive(Clone, Copy, Debug)]
pub struct ChangeReport {
    pub from_key: f64,
    pub to_key: f64,
    pub burst_db: f64,
}

pub struct PhraseReport {
    pub notes: Vec<NoteReport>,
    pub changes: Vec<ChangeReport>,
    pub peak_dbfs: f64,
}

/// Listens to a rendered phrase.
pub fn listen(signal: &[f32], sample_rate_hz: f64, notes: &[PhraseNote]) -> PhraseReport {
    let band = click_band_energy(signal, sample_rate_hz);
    let mut reports = Vec::new();
    for note in notes {
        let steady = note.steady(sample_rate_hz);
        let part = &signal[steady.clone()];
        let f0 = rosin_physics::string::tuning::midi_key_to_hz(note.key);
        let (periodicity, measured) = periodicity_and_pitch(part, sample_rate_hz, f0);
        reports.push(NoteReport { key: note.key, periodicity, cents: super::cents(measured, f0), rms_db: super::db(super::rms(part)) });
    }
    // Each note's steady reading, once: a note is on both sides of a change.
    let span = (CHANGE_SPAN_S * sample_rate_hz) as usize;
    let steady_peaks: Vec<f64> = notes.iter().map(|note| typical_span_peak(&band[note.steady(sample_rate_hz)], span)).collect();
    let mut changes = Vec::new();
    for (i, pair) in notes.windows(2).enumerate() {
        let (a, b) = (pair[0], pair[1]);
        let reference = steady_peaks[i].max(steady_peaks[i + 1]);
        let from = b.start.saturating_sub((CHANGE_BEFORE_S * sample_rate_hz) as usize);
        let burst = loudest(&band[from..(from + span).min(band.len())]);
        changes.push(ChangeReport { from_key: a.key, to_key: b.key, burst_db: 10.0 * (burst / reference.max(1e-30)).log10() });
    }
    PhraseReport { notes: reports, changes, peak_dbfs: super::db(super::peak(signal) as f64) }
}

/// A note change is listened to from this long before it...
const CHANGE_BEFORE_S: f64 = 0.010;
/// ...over this long in all (to 80 ms after it).
const CHANGE_SPAN_S: f64 = 0.090;

/// The loudest value of `band` over a span of `span` samples, typical over `band`: the
/// median over spans starting every 2.5 ms (the loudest of all where `band` is shorter than
/// a span).
fn typical_span_peak(band: &[f64], span: usize) -> f64 {
    if band.len() <= span {
        return loudest(band);
    }
    let hop = (span / 36).max(1);
    let mut peaks: Vec<f64> = (0..=band.len() - span).step_by(hop).map(|i| loudest(&band[i..i + span])).collect();
    median(&mut peaks)
}

/// The largest of `values` (0 when there are none; they are energies, never negative).
fn loudest(values: &[f64]) -> f64 {
    values.iter().fold(0.0f64, |m, &v| m.max(v))
}

/// The straight line through `(x, y)` by least squares, and the largest distance of a
/// point from it.
pub fn straight_line_deviation(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    points.iter().map(|p| (p.1 - (my + slope * (p.0 - mx))).abs()).fold(0.0, f64::max)
}

/// When a note speaks: the start (s) of the first run of windows of four periods, each
/// periodic (correlation at the period of at least `threshold`), that lasts
/// [`SPEAKING_RUN_S`]; `None` if no run does. A dip later on (a moment of double slipping)
/// is the steady part's periodicity's concern, not the attack's.
pub fn speaking_time_s(signal: &[f32], sample_rate_hz: f64, f0_hz: f64, threshold: f64) -> Option<f64> {
    let period = sample_rate_hz / f0_hz;
    let window = ((4.0 * period) as usize).max((0.010 * sample_rate_hz) as usize);
    let hop = (period as usize).max(1);
    let (lo, hi) = (((period * (1.0 - LAG_REACH)).floor() as usize).max(2), (period * (1.0 + LAG_REACH)).ceil() as usize + 1);
    let run = (SPEAKING_RUN_S * sample_rate_hz) as usize;
    let mut settled_from = None;
    let mut start = 0;
    while start + window + hi + 2 <= signal.len() {
        let energy: f64 = signal[start..start + window].iter().map(|&s| (s as f64) * (s as f64)).sum();
        let periodic = energy > 1e-12 && best_lag(signal, start, window, lo, hi).1 >= threshold;
        match (periodic, settled_from) {
            (true, None) => settled_from = Some(start),
            (true, Some(from)) if start + window - from >= run => return Some(from as f64 / sample_rate_hz),
            (false, Some(_)) => settled_from = None,
            _ => {}
        }
        start += hop;
    }
    settled_from.map(|s| s as f64 / sample_rate_hz)
}

/// How long a note must stay periodic to have spoken.
pub const SPEAKING_RUN_S: f64 = 0.1;

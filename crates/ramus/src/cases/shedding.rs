//! Vortex-shedding analysis of force-coefficient series (paper, section "Flow Past a Square Cylinder"):
//! the "sinusoidal fit applied to C_L to estimate f_s", and the mean of a coefficient over whole periods.
//!
//! The fit is a least-squares sine with a floating mean (generalised Lomb–Scargle), not an FFT: it accepts
//! non-uniform sampling, and on a window of only two or three periods it resolves the frequency far below
//! the `1/T` bin width of a discrete spectrum.

use std::f64::consts::{PI, TAU};

/// Fewest samples accepted by [`fit_sine`].
const MIN_SAMPLES: usize = 8;
/// Fewest periods in the window for a fit to count as an oscillation.
const MIN_PERIODS: f64 = 1.5;
/// Periodogram grid points per main-lobe width `1/T`, so the true peak lies within one step of the best one.
const OVERSAMPLE: f64 = 5.0;
/// The grid's phases advance by rotation; recompute them exactly this often to bound the rounding drift.
const RESEED: usize = 256;

/// Result of fitting the dominant sinusoid of a signal.
///
/// `y(t) ≈ mean + amplitude · sin(2π frequency t + phase)`, with `t` the caller's (absolute) times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SineFit {
    /// Frequency in inverse time units of `t`.
    pub frequency: f64,
    /// Amplitude (≥ 0).
    pub amplitude: f64,
    /// Phase in `[-π, π)` at `t = 0`.
    pub phase: f64,
    /// Mean (offset) of the fit.
    pub mean: f64,
    /// `frequency · (t_last − t_first)`: how many periods the window holds.
    pub periods: f64,
}

/// Why a series could not be analysed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ShedError {
    /// `t` and `y` differ in length.
    #[error("times and values differ in length: {times} times but {values} values")]
    LengthMismatch {
        /// Length of `t`.
        times: usize,
        /// Length of `y`.
        values: usize,
    },
    /// Too few samples for the analysis.
    #[error("too few samples: {got} given, at least {min} needed")]
    TooFewSamples {
        /// Samples given.
        got: usize,
        /// Samples needed.
        min: usize,
    },
    /// `t[index] <= t[index - 1]`.
    #[error("times are not strictly increasing at index {index}: t[{index}] = {time} after {previous}")]
    NotIncreasing {
        /// First offending index.
        index: usize,
        /// `t[index]`.
        time: f64,
        /// `t[index - 1]`.
        previous: f64,
    },
    /// A NaN or infinite time or value.
    #[error("non-finite value {value} in {series} at index {index}")]
    NonFinite {
        /// `"t"` or `"y"`.
        series: &'static str,
        /// First offending index.
        index: usize,
        /// The value there.
        value: f64,
    },
    /// A frequency or period count that is not finite and positive.
    #[error("invalid {name} = {value}: must be finite and > 0")]
    InvalidParameter {
        /// The argument.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// Constant signal, negligible amplitude, or fewer than 1.5 periods of the best frequency in the window.
    #[error("no oscillation: {reason}")]
    NoOscillation {
        /// What was found instead, in words.
        reason: String,
    },
}

/// Fits `y(t) ≈ mean + a sin(2π f t) + b cos(2π f t)` by least squares.
///
/// `f` maximises the least-squares periodogram on a grid from `1/T` to the Nyquist frequency of the mean
/// sample spacing (`T = t_last − t_first`), then golden-section search minimises the residual within one
/// grid step of the best point. Cost is `O(N²)` for `N` samples (the grid has about `2.5 N` points).
pub fn fit_sine(t: &[f64], y: &[f64]) -> Result<SineFit, ShedError> {
    validate(t, y, MIN_SAMPLES)?;
    let n = t.len();
    let span = t[n - 1] - t[0];
    // Centred times and values keep the normal equations well conditioned (e.g. t ≈ 240, mean ≫ amplitude).
    let t_mid = 0.5 * (t[0] + t[n - 1]);
    let tau: Vec<f64> = t.iter().map(|&ti| ti - t_mid).collect();
    let y_mean = y.iter().sum::<f64>() / n as f64;
    let (lo, hi) = y.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if hi - lo <= 1e-12 * lo.abs().max(hi.abs()) {
        return Err(no_oscillation(format!("the signal is constant ({y_mean})")));
    }
    let yc: Vec<f64> = y.iter().map(|&v| v - y_mean).collect();

    let f_min = 1.0 / span;
    let f_max = (n - 1) as f64 / (2.0 * span);
    let df = 1.0 / (OVERSAMPLE * span);
    let f_grid = scan(&tau, &yc, f_min, f_max, df)
        .ok_or_else(|| no_oscillation("no frequency gives a well-posed sine fit".into()))?;

    let mut buf = Vec::with_capacity(n);
    let lo_f = (f_grid - df).max(f_min);
    let hi_f = (f_grid + df).min(f_max);
    let f = golden_min(|f| lsq_at(&tau, &yc, f, &mut buf).map_or(f64::INFINITY, |fit| fit.rss), lo_f, hi_f);
    let fit = lsq_at(&tau, &yc, f, &mut buf)
        .ok_or_else(|| no_oscillation("the refined frequency gives an ill-posed sine fit".into()))?;

    let amplitude = fit.a.hypot(fit.b);
    let mean = y_mean + fit.offset;
    let periods = f * span;
    if !(amplitude.is_finite() && mean.is_finite()) {
        return Err(no_oscillation(format!("the fit is not finite (amplitude {amplitude}, mean {mean})")));
    }
    if amplitude <= 1e-9 * mean.abs() {
        return Err(no_oscillation(format!("amplitude {amplitude:e} is negligible next to the mean {mean}")));
    }
    if periods < MIN_PERIODS {
        return Err(no_oscillation(format!(
            "the window holds only {periods:.3} periods of the best frequency {f} (at least {MIN_PERIODS} needed)"
        )));
    }
    // a sin x + b cos x = A sin(x + atan2(b, a)); shift the phase from centred to absolute time.
    let phase = wrap_phase(fit.b.atan2(fit.a) - TAU * f * t_mid);
    Ok(SineFit { frequency: f, amplitude, phase, mean, periods })
}

/// Mean of `y` over the last `periods` periods of `frequency`: the samples with `t ≥ t_last − periods/frequency`.
///
/// Averaging over whole periods (pass a whole number, e.g. `fit.periods.floor()`) removes the oscillation's
/// bias from the mean, e.g. for a mean drag coefficient. Falls back to the whole window when it is shorter.
pub fn mean_over_periods(t: &[f64], y: &[f64], frequency: f64, periods: f64) -> Result<f64, ShedError> {
    validate(t, y, 1)?;
    for (name, value) in [("frequency", frequency), ("periods", periods)] {
        if !(value.is_finite() && value > 0.0) {
            return Err(ShedError::InvalidParameter { name, value });
        }
    }
    let t_last = t[t.len() - 1];
    let window = periods / frequency;
    // Tolerance so that a sample exactly on the cut (up to rounding of the times) is kept.
    let cut = t_last - window - 1e-12 * (t_last.abs() + window);
    let start = if t[0] >= cut { 0 } else { t.partition_point(|&ti| ti < cut) };
    let tail = &y[start..];
    Ok(tail.iter().sum::<f64>() / tail.len() as f64)
}

/// Strouhal number `St = f D / U` from a lift-coefficient series `cl` at times `t` in units of `D/U` (so
/// `St = f`), with the fit it comes from.
pub fn strouhal(t: &[f64], cl: &[f64]) -> Result<(f64, SineFit), ShedError> {
    let fit = fit_sine(t, cl)?;
    Ok((fit.frequency, fit))
}

fn no_oscillation(reason: String) -> ShedError {
    ShedError::NoOscillation { reason }
}

fn validate(t: &[f64], y: &[f64], min: usize) -> Result<(), ShedError> {
    if t.len() != y.len() {
        return Err(ShedError::LengthMismatch { times: t.len(), values: y.len() });
    }
    if t.len() < min {
        return Err(ShedError::TooFewSamples { got: t.len(), min });
    }
    for (series, values) in [("t", t), ("y", y)] {
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ShedError::NonFinite { series, index, value });
        }
    }
    match t.windows(2).position(|w| w[1] <= w[0]) {
        Some(i) => Err(ShedError::NotIncreasing { index: i + 1, time: t[i + 1], previous: t[i] }),
        None => Ok(()),
    }
}

/// Least-squares sine at one frequency: `yc ≈ offset + a sin(2π f τ) + b cos(2π f τ)`.
struct Lsq {
    a: f64,
    b: f64,
    offset: f64,
    rss: f64,
}

/// Solves the 2×2 normal equations of the mean-removed columns; `None` when they are (near) singular.
/// Returns `(a, b)`.
fn solve2(ss: f64, cc: f64, sc: f64, ys: f64, yc: f64, n: f64) -> Option<(f64, f64)> {
    // Columns ~N/2 in norm normally; tiny ones (f → 0, or Nyquist on a uniform grid) carry only rounding.
    if ss <= 1e-9 * n || cc <= 1e-9 * n {
        return None;
    }
    let det = ss * cc - sc * sc;
    if det <= 1e-9 * ss * cc {
        return None;
    }
    Some(((cc * ys - sc * yc) / det, (ss * yc - sc * ys) / det))
}

/// Exact fit at `f` with the residual summed directly, so it stays accurate down to a perfect fit
/// (the golden-section search needs that resolution near the minimum).
fn lsq_at(tau: &[f64], yc: &[f64], f: f64, buf: &mut Vec<(f64, f64)>) -> Option<Lsq> {
    let n = tau.len() as f64;
    buf.clear();
    buf.extend(tau.iter().map(|&x| (TAU * f * x).sin_cos()));
    let (s_mean, c_mean) = buf.iter().fold((0.0, 0.0), |(s, c), &(si, ci)| (s + si, c + ci));
    let (s_mean, c_mean) = (s_mean / n, c_mean / n);
    let (mut ss, mut cc, mut sc, mut ys, mut yc_) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&(s, c), &v) in buf.iter().zip(yc) {
        let (s, c) = (s - s_mean, c - c_mean);
        ss += s * s;
        cc += c * c;
        sc += s * c;
        ys += v * s;
        yc_ += v * c;
    }
    let (a, b) = solve2(ss, cc, sc, ys, yc_, n)?;
    let rss = buf.iter().zip(yc).map(|(&(s, c), &v)| (v - a * (s - s_mean) - b * (c - c_mean)).powi(2)).sum();
    Some(Lsq { a, b, offset: -a * s_mean - b * c_mean, rss })
}

/// Frequency of the largest least-squares periodogram power on the grid `f_min + k df ≤ f_max`.
fn scan(tau: &[f64], yc: &[f64], f_min: f64, f_max: f64, df: f64) -> Option<f64> {
    let n = tau.len() as f64;
    let steps = ((f_max - f_min) / df).floor() as usize;
    let step: Vec<(f64, f64)> = tau.iter().map(|&x| (TAU * df * x).sin_cos()).collect();
    let mut sc_now: Vec<(f64, f64)> = vec![(0.0, 1.0); tau.len()];
    let mut best: Option<(f64, f64)> = None;
    for k in 0..=steps {
        let f = f_min + k as f64 * df;
        if k % RESEED == 0 {
            sc_now.iter_mut().zip(tau).for_each(|(p, &x)| *p = (TAU * f * x).sin_cos());
        } else {
            // sin/cos of (θ + δ) from those of θ and δ: no transcendental calls inside the grid.
            for (p, &(sd, cd)) in sc_now.iter_mut().zip(&step) {
                *p = (p.0 * cd + p.1 * sd, p.1 * cd - p.0 * sd);
            }
        }
        let mut sums = [0.0; 7]; // Σs, Σc, Σss, Σcc, Σsc, Σys, Σyc
        for (&(s, c), &v) in sc_now.iter().zip(yc) {
            sums[0] += s;
            sums[1] += c;
            sums[2] += s * s;
            sums[3] += c * c;
            sums[4] += s * c;
            sums[5] += v * s;
            sums[6] += v * c;
        }
        let [s1, c1, s2, c2, sc, ys, yc_] = sums;
        // yc has zero mean, so centring the columns leaves Σys and Σyc unchanged.
        let (ss, cc, sc) = (s2 - s1 * s1 / n, c2 - c1 * c1 / n, sc - s1 * c1 / n);
        if let Some((a, b)) = solve2(ss, cc, sc, ys, yc_, n) {
            let power = a * ys + b * yc_;
            if best.is_none_or(|(_, p)| power > p) {
                best = Some((f, power));
            }
        }
    }
    best.map(|(f, _)| f)
}

/// Minimiser of `g` on `[a, b]` by golden-section search, to near machine precision.
fn golden_min(mut g: impl FnMut(f64) -> f64, mut a: f64, mut b: f64) -> f64 {
    const INV_PHI: f64 = 0.618_033_988_749_894_9;
    let (mut x1, mut x2) = (b - INV_PHI * (b - a), a + INV_PHI * (b - a));
    let (mut g1, mut g2) = (g(x1), g(x2));
    for _ in 0..200 {
        if b - a <= 4.0 * f64::EPSILON * b.abs() {
            break;
        }
        if g1 <= g2 {
            (b, x2, g2) = (x2, x1, g1);
            x1 = b - INV_PHI * (b - a);
            g1 = g(x1);
        } else {
            (a, x1, g1) = (x1, x2, g2);
            x2 = a + INV_PHI * (b - a);
            g2 = g(x2);
        }
    }
    if g1 <= g2 {
        x1
    } else {
        x2
    }
}

fn wrap_phase(p: f64) -> f64 {
    (p + PI).rem_euclid(TAU) - PI
}

#[cfg(test)]
mod tests {
    //! All signals are analytic (exact sums of sines), so the tolerances are accuracy targets of the fit,
    //! not statistical bounds.
    use super::*;

    const F: f64 = 0.147;

    /// `t = 224 + 0.05 i` over `[224, 240]`: about 2.35 periods of `F`.
    fn times() -> Vec<f64> {
        (0..=320).map(|i| 224.0 + 0.05 * i as f64).collect()
    }

    fn sine(t: &[f64], f: f64, amp: f64, phase: f64, mean: f64) -> Vec<f64> {
        t.iter().map(|&x| mean + amp * (TAU * f * x + phase).sin()).collect()
    }

    /// Errors of frequency, amplitude, phase and mean against the exact sine.
    fn errors_of(fit: &SineFit, f: f64, amp: f64, phase: f64, mean: f64) -> [f64; 4] {
        let e = [fit.frequency - f, fit.amplitude - amp, wrap_phase(fit.phase - phase), fit.mean - mean];
        e.map(f64::abs)
    }

    #[test]
    fn short_window_precision() {
        let t = times();
        let (st, fit) = strouhal(&t, &sine(&t, F, 0.3, 0.4, 0.01)).unwrap();
        let [ef, ea, ep, em] = errors_of(&fit, F, 0.3, 0.4, 0.01);
        eprintln!("short window: df={ef:e} dA={ea:e} dphase={ep:e} dmean={em:e}");
        assert_eq!(st, fit.frequency);
        assert!(ef < 1e-6 && ea < 1e-6 && ep < 1e-6 && em < 1e-6, "{fit:?}");
        assert!((fit.periods - F * 16.0).abs() < 1e-5);
    }

    #[test]
    fn non_uniform_sampling() {
        // Mean spacing 0.05 with a deterministic jitter of up to ±40 % of it.
        let mut state = 12345u64;
        let t: Vec<f64> = (0..=320)
            .map(|i| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                224.0 + 0.05 * (i as f64 + 0.8 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5))
            })
            .collect();
        let fit = fit_sine(&t, &sine(&t, F, 0.3, 0.4, 0.01)).unwrap();
        let [ef, ea, ep, em] = errors_of(&fit, F, 0.3, 0.4, 0.01);
        eprintln!("non-uniform: df={ef:e} dA={ea:e} dphase={ep:e} dmean={em:e}");
        assert!(ef < 1e-6 && ea < 1e-6 && ep < 1e-6 && em < 1e-6, "{fit:?}");
    }

    #[test]
    fn second_harmonic_keeps_fundamental() {
        // A single-sine fit leaks the harmonic into f: over 2.35 periods the bias reaches 1.3e-3 for the
        // worst harmonic phase, so check all phases on ~5.9 periods (t in [200, 240]).
        let t: Vec<f64> = (0..=800).map(|i| 200.0 + 0.05 * i as f64).collect();
        let mut worst: f64 = 0.0;
        for k in 0..16 {
            let p2 = TAU * k as f64 / 16.0;
            let y: Vec<f64> = t
                .iter()
                .map(|&x| 0.01 + 0.3 * (TAU * F * x + 0.4).sin() + 0.06 * (2.0 * TAU * F * x + p2).sin())
                .collect();
            worst = worst.max((fit_sine(&t, &y).unwrap().frequency - F).abs());
        }
        eprintln!("second harmonic: worst df={worst:e}");
        assert!(worst < 1e-3, "frequency error {worst:e}");
    }

    #[test]
    fn drag_like_signal_gives_double_frequency() {
        let t = times();
        let fit = fit_sine(&t, &sine(&t, 2.0 * F, 0.02, -0.7, 1.4)).unwrap();
        let [ef, ea, ep, em] = errors_of(&fit, 2.0 * F, 0.02, -0.7, 1.4);
        eprintln!("drag-like 2f: df={ef:e} dA={ea:e} dphase={ep:e} dmean={em:e}");
        assert!(ef < 1e-6 && ea < 1e-6 && ep < 1e-6 && em < 1e-6, "{fit:?}");
    }

    #[test]
    fn small_amplitude_on_large_mean() {
        let t = times();
        let fit = fit_sine(&t, &sine(&t, F, 1e-4, 0.4, 1.5)).unwrap();
        let [ef, ea, ep, em] = errors_of(&fit, F, 1e-4, 0.4, 1.5);
        eprintln!("small amplitude: df={ef:e} dA={ea:e} dphase={ep:e} dmean={em:e}");
        assert!(ef < 1e-6 && ea < 1e-9 && ep < 1e-6 && em < 1e-6, "{fit:?}");
    }

    #[test]
    fn mean_over_whole_periods() {
        // Two periods of f = 0.25 at the end of [0, 10], spacing 0.05: the sine averages out, up to the
        // duplicated end sample of the closed window (bias ≤ amplitude / samples).
        let t: Vec<f64> = (0..=200).map(|i| 0.05 * i as f64).collect();
        let y = sine(&t, 0.25, 1.0, 0.3, 2.0);
        let m = mean_over_periods(&t, &y, 0.25, 2.0).unwrap();
        eprintln!("mean over 2 periods: dmean={:e}", (m - 2.0).abs());
        assert!((m - 2.0).abs() < 1.0 / 160.0);
        // More periods than the window holds: the whole window.
        assert_eq!(mean_over_periods(&t, &y, 0.25, 5.0).unwrap(), y.iter().sum::<f64>() / y.len() as f64);
        assert_eq!(mean_over_periods(&[1.0], &[3.0], 0.25, 2.0).unwrap(), 3.0);
    }

    #[test]
    fn errors() {
        use ShedError::*;
        let (t, msg) = (times(), |e: ShedError| e.to_string());
        let y = sine(&t, F, 0.3, 0.4, 0.01);
        assert_eq!(fit_sine(&t, &y[..10]), Err(LengthMismatch { times: 321, values: 10 }));
        assert!(msg(LengthMismatch { times: 321, values: 10 }).contains("321 times but 10 values"));
        assert_eq!(fit_sine(&t[..7], &y[..7]), Err(TooFewSamples { got: 7, min: 8 }));

        let mut bad = t.clone();
        bad[5] = bad[4];
        let e = fit_sine(&bad, &y).unwrap_err();
        assert!(matches!(e, NotIncreasing { index: 5, .. }) && msg(e.clone()).contains("index 5"), "{e}");
        bad[5] = f64::NAN;
        assert!(matches!(fit_sine(&bad, &y), Err(NonFinite { series: "t", index: 5, .. })));
        let mut bad = y.clone();
        bad[7] = f64::INFINITY;
        let e = fit_sine(&t, &bad).unwrap_err();
        assert!(matches!(e, NonFinite { series: "y", index: 7, .. }) && msg(e.clone()).contains("index 7"), "{e}");

        let no_osc = |r: Result<SineFit, ShedError>| matches!(r, Err(NoOscillation { .. }));
        assert!(no_osc(fit_sine(&t, &vec![0.7; t.len()])) && no_osc(fit_sine(&t, &vec![0.0; t.len()])));
        assert!(no_osc(strouhal(&t, &vec![1.0; t.len()]).map(|r| r.1)));
        // 1.2 periods of f = 0.075 in the 16-unit window.
        let e = fit_sine(&t, &sine(&t, 0.075, 0.3, 0.4, 0.0)).unwrap_err();
        assert!(matches!(e, NoOscillation { .. }) && msg(e.clone()).contains("periods"), "{e}");

        assert_eq!(mean_over_periods(&[], &[], 0.1, 1.0), Err(TooFewSamples { got: 0, min: 1 }));
        assert!(matches!(mean_over_periods(&t, &y, 0.0, 1.0), Err(InvalidParameter { name: "frequency", .. })));
        assert!(matches!(mean_over_periods(&t, &y, 0.1, f64::NAN), Err(InvalidParameter { name: "periods", .. })));
        assert!(matches!(mean_over_periods(&t, &y[1..], 0.1, 1.0), Err(LengthMismatch { times: 321, values: 320 })));
    }
}

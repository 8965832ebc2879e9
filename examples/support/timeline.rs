//! `--kernel-timeline N`: when each kernel of a run's last `N` root steps ran on the GPU
//! (`Forest::record_kernel_timeline`), written to `OUT/kernel_timeline.csv`, for seeing
//! where a latency-bound root step spends its time. The timeline is switched on `2N` root
//! steps before the end, so that the kernels it reloads (with their probes) are compiled
//! and the graphs captured again before the `N` steps it keeps.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Result};
use ramus::backend::timeline::MAX_RECORDS;
use ramus::{Dim, Float, Forest, PoolStorage, VelocitySet};

/// Records per root step at most: two per kernel launch, for a few hundred launches
/// (an adaptation's included).
const RECORDS_PER_STEP: usize = 2048;

/// The file the timeline is written to.
pub const TIMELINE_FILE: &str = "kernel_timeline.csv";

/// The recording of a run's last root steps (`None`: not asked for).
pub struct KernelTimeline {
    steps: u64,
    on_at: u64,
    kept_from: u64,
    on: bool,
}

impl KernelTimeline {
    /// The last `steps` of a run of `total` root steps; an error if the run is shorter
    /// than the warm-up and the recording together.
    pub fn new(steps: u64, total: u64) -> Result<Self> {
        if steps == 0 || 2 * steps > total {
            bail!("invalid kernel_timeline = {steps}: 1 to {} (half the run's {total} root steps)", total / 2);
        }
        Ok(KernelTimeline { steps, on_at: total - 2 * steps, kept_from: total - steps, on: false })
    }

    /// The most root steps to advance from `done` before the recording needs a turn.
    pub fn limit(&self, done: u64) -> u64 {
        [self.on_at, self.kept_from].into_iter().filter(|&b| b > done).map(|b| b - done).min().unwrap_or(u64::MAX)
    }

    /// At a chunk boundary: switches the timeline on, or drops what the warm-up recorded.
    pub fn at<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        &mut self,
        forest: &mut Forest<D, Q, F, S>,
    ) -> Result<()> {
        let done = forest.steps();
        if done == self.on_at && !self.on {
            // At most what a timeline holds; the lost records past it are reported.
            let records = (RECORDS_PER_STEP as u64 * self.steps).min(MAX_RECORDS as u64) as usize;
            self.on = forest.record_kernel_timeline(Some(records))?;
            if !self.on {
                println!("kernel timeline: not recorded (the CPU backend)");
            }
        } else if done == self.kept_from && self.on {
            forest.kernel_timeline()?;
        }
        Ok(())
    }

    /// At the end of the run: writes `out/kernel_timeline.csv` (one row per CTA record,
    /// times in µs from the first start) and prints its span per root step.
    pub fn finish<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
        self,
        forest: &mut Forest<D, Q, F, S>,
        out: &Path,
    ) -> Result<()> {
        if !self.on || forest.steps() < self.kept_from + self.steps {
            return Ok(());
        }
        let Some(t) = forest.kernel_timeline()? else { return Ok(()) };
        forest.record_kernel_timeline(None)?;
        let origin = t.spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
        let us = |ns: u64| (ns - origin.min(ns)) as f64 * 1e-3;
        let mut csv = String::from("kernel,cta,ctas,start_us,waited_us,end_us\n");
        for s in &t.spans {
            let opt = |v: Option<u64>| v.map_or(String::new(), |v| format!("{:.3}", us(v)));
            let (start, waited, end) = (us(s.start_ns), opt(s.waited_ns), opt(s.end_ns));
            writeln!(csv, "{},{},{},{start:.3},{waited},{end}", s.kernel, s.cta, s.ctas)?;
        }
        super::write_file(&out.join(TIMELINE_FILE), csv.as_bytes())?;
        let end = t.spans.iter().filter_map(|s| s.end_ns).max().unwrap_or(origin);
        let launches = t.spans.iter().filter(|s| s.cta == 0).count();
        println!(
            "kernel timeline: {} launches over the last {} root steps, {:.1} µs per root step from the first start to the last end{} ({})",
            launches,
            self.steps,
            us(end) / self.steps as f64,
            if t.overflowed { "; records lost past the capacity" } else { "" },
            out.join(TIMELINE_FILE).display()
        );
        Ok(())
    }
}

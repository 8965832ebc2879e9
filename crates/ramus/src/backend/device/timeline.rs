//! Switching the kernel timeline ([`crate::backend::timeline`]) on and off, and reading it.

use super::super::timeline::{KernelSpan, Timeline};
use super::Device;
use crate::error::Result;

/// What a kernel timeline holds when read ([`Device::kernel_timeline`]).
#[derive(Clone, Debug, Default)]
pub struct KernelTimeline {
    /// The first and the last CTA of each kernel launched since the timeline was switched
    /// on or last read, in the order they started recording.
    pub spans: Vec<KernelSpan>,
    /// Whether more CTAs recorded than the timeline holds (the spans past its capacity
    /// are lost).
    pub overflowed: bool,
}

impl Device {
    /// Switches the kernel timeline on, holding up to `records` CTA records (two per kernel
    /// launch), or off (`None`). Kernels loaded while it is on carry its probes: switching
    /// drops the loaded kernels and the cached CUDA graphs, so the next launches load
    /// (JIT-compile) their kernels again. Results stay bitwise the same; the timings move
    /// a little (a probe costs thread 0 of two CTAs per launch an atomic and a few
    /// stores). Returns whether the timeline is on: always `false` on the CPU; an error
    /// for `records` outside 1 to [`crate::backend::timeline::MAX_RECORDS`].
    pub fn record_kernel_timeline(&self, records: Option<usize>) -> Result<bool> {
        let Device::Cuda(c) = self else { return Ok(false) };
        self.synchronize()?;
        let timeline = records.map(|n| Timeline::new(&c.stream, n)).transpose()?;
        let on = timeline.is_some();
        // The same lock order as `CudaDevice::function`: the kernels, then the timeline.
        let mut functions = c.functions.lock().unwrap_or_else(|p| p.into_inner());
        c.graphs.clear();
        functions.clear();
        *c.timeline.lock().unwrap_or_else(|p| p.into_inner()) = timeline;
        Ok(on)
    }

    /// Waits for the queued work, then returns the timeline's records and empties it;
    /// `None` while it is off (and on the CPU).
    pub fn kernel_timeline(&self) -> Result<Option<KernelTimeline>> {
        let Device::Cuda(c) = self else { return Ok(None) };
        self.synchronize()?;
        let mut timeline = c.timeline.lock().unwrap_or_else(|p| p.into_inner());
        let Some(t) = timeline.as_mut() else { return Ok(None) };
        let (spans, overflowed) = t.read(&c.stream)?;
        Ok(Some(KernelTimeline { spans, overflowed }))
    }
}

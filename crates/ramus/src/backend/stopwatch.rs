//! The one stopwatch of the host code: laps of device work that wait for the device only
//! while profiling, so that an unprofiled run queues its launches without a
//! synchronisation between the parts it times (a lap's time then reads zero and costs
//! nothing). Each lap also counts the launches and waits of its part (CUDA), which needs
//! no synchronisation and so is exact in unprofiled runs too.

use std::time::{Duration, Instant};

use super::{Device, DeviceCounters};
use crate::error::Result;

/// Laps of device work on `device` (see the module documentation).
pub(crate) struct Stopwatch {
    device: Device,
    profile: bool,
    start: Instant,
    last: Instant,
    /// The device's counters at the end of the previous lap (`None` on the CPU).
    counted: Option<DeviceCounters>,
}

/// One part of the work between two laps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lap {
    /// Its wall time (zero unless profiling).
    pub time: Duration,
    /// Its kernel launches, graph launches and waits, not counting the profiling's own
    /// wait at the end of the lap (zero on the CPU).
    pub submissions: DeviceCounters,
}

impl From<Lap> for (Duration, DeviceCounters) {
    fn from(l: Lap) -> Self {
        (l.time, l.submissions)
    }
}

impl Stopwatch {
    /// Starts now; the caller decides whether the device is idle at this point.
    pub(crate) fn new(device: Device, profile: bool) -> Self {
        let now = Instant::now();
        let counted = device.counters();
        Stopwatch { device, profile, start: now, last: now, counted }
    }

    /// The part since the previous lap: its time after waiting for the device (zero, and
    /// no wait, when not profiling) and its submissions.
    pub(crate) fn lap(&mut self) -> Result<Lap> {
        let submissions = self.submitted();
        if !self.profile {
            return Ok(Lap { time: Duration::ZERO, submissions });
        }
        self.device.synchronize()?;
        // The profiling's wait belongs to no part.
        self.counted = self.device.counters();
        let now = Instant::now();
        let time = now - self.last;
        self.last = now;
        Ok(Lap { time, submissions })
    }

    /// Submissions since the previous lap; the next lap counts from here.
    fn submitted(&mut self) -> DeviceCounters {
        let now = self.device.counters();
        let d = match (now, self.counted) {
            (Some(now), Some(then)) => now - then,
            _ => DeviceCounters::default(),
        };
        self.counted = now;
        d
    }

    /// Wall time since the start, without waiting for the device (work still queued is
    /// not counted).
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Wall time since the start, after waiting for the device.
    pub(crate) fn total(&self) -> Result<Duration> {
        self.device.synchronize()?;
        Ok(self.start.elapsed())
    }
}

//! The one stopwatch of the host code: laps of device work that wait for the device only
//! while profiling, so that an unprofiled run queues its launches without a
//! synchronisation between the parts it times (a lap then reads zero and costs nothing).

use std::time::{Duration, Instant};

use super::Device;
use crate::error::Result;

/// Laps of device work on `device` (see the module documentation).
pub(crate) struct Stopwatch {
    device: Device,
    profile: bool,
    start: Instant,
    last: Instant,
}

impl Stopwatch {
    /// Starts now; the caller decides whether the device is idle at this point.
    pub(crate) fn new(device: Device, profile: bool) -> Self {
        let now = Instant::now();
        Stopwatch { device, profile, start: now, last: now }
    }

    /// The time since the previous lap, after waiting for the device; zero (and no wait)
    /// when not profiling.
    pub(crate) fn lap(&mut self) -> Result<Duration> {
        if !self.profile {
            return Ok(Duration::ZERO);
        }
        self.device.synchronize()?;
        let now = Instant::now();
        let d = now - self.last;
        self.last = now;
        Ok(d)
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

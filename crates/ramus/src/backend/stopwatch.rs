//! The one stopwatch of the host code: laps of device work that wait for the device only
//! while profiling, so that an unprofiled run queues its launches without a
//! synchronisation between the parts it times (a lap's time then reads zero and costs
//! nothing). Each lap also counts the launches and waits of its part (CUDA), which needs
//! no synchronisation and so is exact in unprofiled runs too.

use std::time::{Duration, Instant};

use super::device::TimingEvent;
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
    /// The host's time blocked in waits then ([`Device::waited`]).
    waited: Option<Duration>,
}

/// What one part of the work cost (a lap of the stopwatch, or the sum of several): the
/// figures of [`crate::Timings`], [`crate::amr::AdaptReport`] and [`crate::amr::HookTimes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lap {
    /// Wall time, measured after a device synchronisation; zero unless profiling (see
    /// [`crate::Forest::set_profiling`], [`crate::amr::AdaptWorkspace::profile`]).
    pub time: Duration,
    /// Kernel launches, graph launches and host waits (CUDA; zero on the CPU backend,
    /// which submits nothing), counted whether profiling or not; the profiling's own
    /// waits are not counted.
    pub submissions: DeviceCounters,
    /// Of the part's wall time, the host's time blocked in those waits (CUDA; measured
    /// whether profiling or not, the profiling's own waits excluded): what the host could
    /// not overlap with the device's work.
    pub waited: Duration,
}

impl std::ops::AddAssign for Lap {
    fn add_assign(&mut self, rhs: Self) {
        self.time += rhs.time;
        self.submissions += rhs.submissions;
        self.waited += rhs.waited;
    }
}

impl std::iter::Sum for Lap {
    fn sum<I: Iterator<Item = Lap>>(iter: I) -> Lap {
        iter.fold(Lap::default(), |mut acc, l| {
            acc += l;
            acc
        })
    }
}

impl Stopwatch {
    /// Starts now; the caller decides whether the device is idle at this point.
    pub(crate) fn new(device: Device, profile: bool) -> Self {
        let now = Instant::now();
        let (counted, waited) = (device.counters(), device.waited());
        Stopwatch { device, profile, start: now, last: now, counted, waited }
    }

    /// The part since the previous lap: its time after waiting for the device (zero, and
    /// no wait, when not profiling) and its submissions.
    pub(crate) fn lap(&mut self) -> Result<Lap> {
        let (submissions, waited) = self.submitted();
        if !self.profile {
            return Ok(Lap { time: Duration::ZERO, submissions, waited });
        }
        self.device.synchronize()?;
        // The profiling's wait belongs to no part.
        (self.counted, self.waited) = (self.device.counters(), self.device.waited());
        let now = Instant::now();
        let time = now - self.last;
        self.last = now;
        Ok(Lap { time, submissions, waited })
    }

    /// Submissions and time blocked in waits since the previous lap; the next lap counts
    /// from here.
    fn submitted(&mut self) -> (DeviceCounters, Duration) {
        let (now, waited) = (self.device.counters(), self.device.waited());
        let d = match (now, self.counted) {
            (Some(now), Some(then)) => now - then,
            _ => DeviceCounters::default(),
        };
        let w = match (waited, self.waited) {
            (Some(now), Some(then)) => now.saturating_sub(then),
            _ => Duration::ZERO,
        };
        (self.counted, self.waited) = (now, waited);
        (d, w)
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

/// A span of device work that starts with the device idle and ends where the work
/// queued before [`Self::close`] ends, on the host's clock: a part of the run (an
/// adaptation) can end its accounting there without waiting for that work, so that the
/// host queues the next part (records the next root steps' graph) while it runs.
pub(crate) struct DeviceSpan {
    start: Instant,
    /// On CUDA, an event recorded at `start` (the device idle, so its clock and the
    /// host's agree there).
    event: Option<TimingEvent>,
}

/// A [`DeviceSpan`] closed behind its work; its end is known once the device has run
/// that work (after a later synchronisation).
pub(crate) struct ClosedSpan {
    start: Instant,
    end: SpanEnd,
}

enum SpanEnd {
    /// The CPU's work was done when the span closed.
    Host(Instant),
    /// The events at the start and behind the span's work.
    Events(TimingEvent, TimingEvent),
}

impl DeviceSpan {
    /// Starts now; the caller has just synchronised the device.
    pub(crate) fn start(device: &Device) -> Result<Self> {
        let event = device.timing_event()?;
        Ok(DeviceSpan { start: Instant::now(), event })
    }

    /// Closes the span behind the work queued so far, without waiting for it.
    pub(crate) fn close(self, device: &Device) -> Result<ClosedSpan> {
        let end = match (self.event, device.timing_event()?) {
            (Some(first), Some(last)) => SpanEnd::Events(first, last),
            _ => SpanEnd::Host(Instant::now()),
        };
        Ok(ClosedSpan { start: self.start, end })
    }
}

impl ClosedSpan {
    /// The span's length, from its start to the end of its device work, and that end on
    /// the host's clock. Waits for that work if it still runs (callers read it after a
    /// synchronisation).
    pub(crate) fn measure(&self) -> Result<(Duration, Instant)> {
        let length = match &self.end {
            SpanEnd::Host(end) => end.saturating_duration_since(self.start),
            SpanEnd::Events(first, last) => first.until(last)?,
        };
        Ok((length, self.start + length))
    }
}

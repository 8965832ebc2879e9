//! Counts of what the host asked of a CUDA device: kernel launches, graph launches and
//! waits. A launch-bound run (a small 2D forest on many levels, a small adaptation) costs
//! the host a few µs per launch and a round trip per wait, whatever the kernels do; these
//! counts say how many of each a part of the run paid ([`crate::Timings`]).

use std::ops::Sub;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::Device;

/// How often the host submitted work to a CUDA device or waited for it, since the device
/// was opened ([`Device::counters`]); the difference of two readings ([`Sub`]) counts
/// what happened between them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// Kernels launched one by one (`cuLaunchKernel`), including those launched while a
    /// new CUDA graph was being captured.
    pub kernel_launches: u64,
    /// CUDA graphs launched (root steps replayed from a cached graph or newly captured).
    pub graph_launches: u64,
    /// Of those, graphs of a new mesh state that were not captured: a cached graph of the
    /// same kernels got the new launches' sizes and arguments node by node
    /// ([`Device::set_graph_updates`]).
    pub graph_updates: u64,
    /// Uploads, writes, fills and device-to-device copies queued on the stream: driver
    /// calls that cost the host about as much as a launch (read-backs are `host_waits`).
    pub copies: u64,
    /// Times the host waited for the device to finish its queued work: synchronisations
    /// and read-backs of device memory.
    pub host_waits: u64,
}

impl Sub for DeviceCounters {
    type Output = DeviceCounters;

    /// The counts from reading `rhs` to reading `self` (zero where `rhs` is the later).
    fn sub(self, rhs: Self) -> Self {
        DeviceCounters {
            kernel_launches: self.kernel_launches.saturating_sub(rhs.kernel_launches),
            graph_launches: self.graph_launches.saturating_sub(rhs.graph_launches),
            graph_updates: self.graph_updates.saturating_sub(rhs.graph_updates),
            copies: self.copies.saturating_sub(rhs.copies),
            host_waits: self.host_waits.saturating_sub(rhs.host_waits),
        }
    }
}

impl std::ops::AddAssign for DeviceCounters {
    fn add_assign(&mut self, rhs: Self) {
        self.kernel_launches += rhs.kernel_launches;
        self.graph_launches += rhs.graph_launches;
        self.graph_updates += rhs.graph_updates;
        self.copies += rhs.copies;
        self.host_waits += rhs.host_waits;
    }
}

/// The live counters of one CUDA device (relaxed atomics: counts, not synchronisation).
#[derive(Default)]
pub(crate) struct Counters {
    kernels: AtomicU64,
    graphs: AtomicU64,
    updates: AtomicU64,
    copies: AtomicU64,
    waits: AtomicU64,
    /// Nanoseconds the host spent blocked in those waits.
    waited: AtomicU64,
}

/// One wait for the device in progress: adds the host's time blocked in it to the
/// counters when dropped ([`Counters::wait`]).
#[must_use = "the wait is timed until this is dropped"]
pub(crate) struct Waiting<'a> {
    counters: &'a Counters,
    since: Instant,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let ns = u64::try_from(self.since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.counters.waited.fetch_add(ns, Ordering::Relaxed);
    }
}

impl Counters {
    /// `n` kernels launched.
    pub fn kernels(&self, n: usize) {
        self.kernels.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// One graph launched.
    pub fn graph(&self) {
        self.graphs.fetch_add(1, Ordering::Relaxed);
    }

    /// One graph updated in place (and then launched: [`Self::graph`] too).
    pub fn update(&self) {
        self.updates.fetch_add(1, Ordering::Relaxed);
    }

    /// One copy or fill queued.
    pub fn copy(&self) {
        self.copies.fetch_add(1, Ordering::Relaxed);
    }

    /// One wait for the device, timed until the returned guard is dropped.
    pub fn wait(&self) -> Waiting<'_> {
        self.waits.fetch_add(1, Ordering::Relaxed);
        Waiting { counters: self, since: Instant::now() }
    }

    fn read(&self) -> DeviceCounters {
        DeviceCounters {
            kernel_launches: self.kernels.load(Ordering::Relaxed),
            graph_launches: self.graphs.load(Ordering::Relaxed),
            graph_updates: self.updates.load(Ordering::Relaxed),
            copies: self.copies.load(Ordering::Relaxed),
            host_waits: self.waits.load(Ordering::Relaxed),
        }
    }
}

impl Device {
    /// What the host has asked of this device since it was opened: kernel launches, graph
    /// launches and waits. `None` on the CPU backend, whose kernels run in the calling
    /// thread (nothing is submitted, nothing waited for).
    pub fn counters(&self) -> Option<DeviceCounters> {
        match self {
            Device::Cpu => None,
            Device::Cuda(c) => Some(c.counters.read()),
        }
    }

    /// Host time spent blocked in the waits of [`DeviceCounters::host_waits`] since the
    /// device was opened: time in which the host had nothing queued to submit. `None` on
    /// the CPU backend.
    pub fn waited(&self) -> Option<Duration> {
        match self {
            Device::Cpu => None,
            Device::Cuda(c) => Some(Duration::from_nanos(c.counters.waited.load(Ordering::Relaxed))),
        }
    }
}

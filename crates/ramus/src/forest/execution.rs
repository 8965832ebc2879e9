//! How a forest runs on its device: the switches that change how the same steps are
//! executed (never their results: bitwise the same either way), and the figures of the
//! run so far (timings, AMR-aware and virtual MLUPS, the device's counters).

use std::time::Duration;

use ramus_kernels::{Dim, VelocitySet};

use super::Forest;
use crate::backend::{Backend, DeviceCounters, KernelTimeline};
use crate::error::Result;
use crate::solver::Timings;
use crate::variants::{BulkSteps, PairedCells};
use crate::{Float, PoolStorage};

impl<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>> Forest<D, Q, F, S> {
    /// Timing breakdown and AMR-aware update counts (see [`Timings`]).
    pub fn timings(&self) -> &Timings {
        &self.solver.timings
    }

    /// Clears the timings (e.g. after a warm-up).
    pub fn reset_timings(&mut self) {
        self.solver.timings = Timings::new(self.mesh.max_levels());
    }

    /// Times every routine per level and every adaptation step separately: synchronises
    /// the device after each, which slows small launches down. Off by default.
    pub fn set_profiling(&mut self, on: bool) {
        self.solver.profile = on;
    }

    /// Runs the kernel launches of each root step, or of two from an even count when
    /// nothing is due between them ([`Self::advance`]), on CUDA as one CUDA graph,
    /// captured the first time those launches occur and replayed while they recur
    /// (between two adaptations, a root step's launches depend only on its parity). Results are
    /// bitwise those of launching one kernel at a time; what it saves is the launch
    /// overhead of small, many-level forests. On by default; off while profiling; no
    /// effect on the CPU. [`Timings::graph_captures`] and [`Timings::graph_replays`]
    /// count the root steps run each way.
    pub fn set_launch_graphs(&mut self, on: bool) {
        self.solver.launch_graphs = on;
        if !on {
            self.device.clear_graphs();
        }
    }

    /// Lets the GPU run the routines of a root step that touch disjoint data at the same
    /// time, as branches of the root step's CUDA graph ([`Self::set_launch_graphs`]):
    /// each level's step alongside the finer levels' steps, the ghost interpolations and
    /// averagings of different levels alongside each other (what each routine reads and
    /// writes: `solver::hazards` in the source). The longest chain of dependent routines
    /// in a root step on four levels is then 16 (linear interpolation; 18 cubic) of the
    /// 29. Results are bitwise the same either way. On by default; no effect on the CPU,
    /// without graphs or while profiling.
    pub fn set_concurrent_levels(&mut self, on: bool) {
        self.solver.concurrent_levels = on;
    }

    /// Averages a level into its parents at the end of the first of its two steps and
    /// interpolates the parents into its ghost cells at the start of the second in one
    /// launch (`ramus_kernels::exchange`), one routine less on the critical path per pair
    /// of steps; bitwise the same results. On by default, on both backends (off: two
    /// launches, for comparing).
    pub fn set_fused_exchanges(&mut self, on: bool) {
        self.solver.fused_exchanges = on;
    }

    /// Which AA steps take two cells per thread ([`PairedCells`]; the default,
    /// [`PairedCells::Measured`], where that measured faster). Bitwise the same results
    /// either way, on both backends.
    pub fn set_paired_cells(&mut self, paired: PairedCells) {
        self.solver.paired_cells = paired;
    }

    /// Which AA steps step the blocks without boundary flags in a kernel of their own,
    /// compiled without the boundary logic, and the other blocks from a list
    /// ([`BulkSteps`]; the default, [`BulkSteps::Measured`], where that measured faster).
    /// Rebuilds the work lists. Bitwise the same results either way, on both backends.
    pub fn set_bulk_steps(&mut self, bulk: BulkSteps) -> Result<()> {
        self.solver.bulk_steps = bulk;
        self.solver.rebuild_schedule(&self.mesh)
    }

    /// Lets a new mesh state's root step update a cached CUDA graph of the same kernels
    /// and dependencies in place instead of capturing a new one (see
    /// [`crate::backend::Device::set_graph_updates`]; bitwise the same results). On by default where the
    /// driver supports it; returns whether it is on now (`false` on the CPU).
    pub fn set_graph_updates(&mut self, on: bool) -> bool {
        self.device.set_graph_updates(on)
    }

    /// Launches the kernels on CUDA with programmatic dependent launch (see
    /// [`crate::backend::Device::set_dependent_launches`]: the next kernel's start overlaps the end of the
    /// one before it; bitwise the same results). On by default on GPUs of compute
    /// capability 9.0 and later; returns whether it is on now (`false` on the CPU and on
    /// earlier GPUs).
    pub fn set_dependent_launches(&mut self, on: bool) -> bool {
        self.device.set_dependent_launches(on)
    }

    /// Wall-clock time spent stepping in [`Self::advance`] (adaptation excluded).
    pub fn stepping_time(&self) -> Duration {
        self.solver.timings.stepping
    }

    /// AMR-aware million lattice updates per second of the stepping so far (paper, eq.
    /// for `MLUPS_inst`; on a uniform grid the usual MLUPS).
    pub fn mlups(&self) -> f64 {
        self.solver.timings.mlups()
    }

    /// "Virtual" (finest-equivalent) million lattice updates per second, as waLBerla and
    /// Neon report it: the updates a uniform grid at the finest level now in use would
    /// need for the root steps taken (`root cells · 2^{(D+1) l_max}` per root step), per
    /// second of stepping. Above [`Self::mlups`] when the finest level covers part of the
    /// domain: the figure says what the refinement saves, not what the GPU does.
    pub fn virtual_mlups(&self) -> f64 {
        let finest = self.mesh.blocks_per_level().iter().rposition(|&b| b > 0).unwrap_or(0);
        let root: f64 = self.cells()[..D::D].iter().map(|&c| c as f64).product();
        let per_step = root * 2f64.powi(((D::D + 1) * finest) as i32);
        let t = self.solver.timings.stepping.as_secs_f64();
        if t > 0.0 {
            per_step * self.solver.timings.root_steps as f64 / t / 1e6
        } else {
            0.0
        }
    }

    /// The backend actually in use (never `Auto`).
    pub fn backend(&self) -> Backend {
        self.device.backend()
    }

    /// Name of the device running the forest.
    pub fn device_name(&self) -> String {
        self.device.name()
    }

    /// What the host has asked of the forest's device so far: kernel launches, graph
    /// launches and waits (`None` on the CPU backend; see [`crate::backend::Device::counters`], and the
    /// stepping's and adaptations' shares in [`Self::timings`]).
    pub fn device_counters(&self) -> Option<DeviceCounters> {
        self.device.counters()
    }

    /// Switches the kernel timeline on (up to `records` CTA records, two per kernel
    /// launch) or off (`None`): when the first and the last CTA of each kernel start,
    /// pass their wait for the kernel before them and end, on the GPU's clock, to see
    /// where a latency-bound root step spends its time (see
    /// [`crate::backend::Device::record_kernel_timeline`]; the kernels load again, so run a
    /// few root steps before the ones to read). Returns whether it is on (`false` on the
    /// CPU). The results stay bitwise the same.
    pub fn record_kernel_timeline(&mut self, records: Option<usize>) -> Result<bool> {
        self.device.record_kernel_timeline(records)
    }

    /// The kernel timeline's records since it was switched on or last read, emptying it
    /// (waits for the device); `None` while it is off.
    pub fn kernel_timeline(&mut self) -> Result<Option<KernelTimeline>> {
        self.device.kernel_timeline()
    }
}

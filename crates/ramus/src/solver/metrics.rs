//! Performance metrics of the multi-level solver (paper, section "Solver Performance").

use std::time::Duration;

use crate::amr::ADAPT_STEPS;
use crate::backend::{DeviceCounters, Lap};

/// Wall time of the grid routines of one level (measured only while profiling, see
/// [`crate::Forest::set_profiling`]: each routine is then followed by a device
/// synchronisation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LevelTimes {
    /// Coarse → fine interpolation into this level's ghost cells.
    pub interpolate: Duration,
    /// Fused collision and streaming of this level.
    pub stream_collide: Duration,
    /// Fine → coarse averaging from this level into its parents.
    pub average: Duration,
}

/// What the adaptations cost, summed over all of them: the wall time of each, and by
/// part its time and submissions to the device ([`Lap`]). The parts' times are measured
/// only while profiling (see [`crate::Forest::set_profiling`]: each part is then followed
/// by a device synchronisation, which the unprofiled run avoids) and zero otherwise; their
/// kernel launches, graph launches and host waits (CUDA; zero on the CPU) are counted
/// either way: what to fuse or keep on the device to make a small adaptation cheaper.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdaptTimes {
    /// Adaptations performed.
    pub count: u64,
    /// Wall time of the adaptations: each from its start, the device synchronised, to
    /// the end of its last device work (CUDA: timed by events, without waiting for it,
    /// while the host records the next root steps; see [`Timings::stepping`]).
    pub wall: Duration,
    /// Pre-synchronisation: averaging up, then interpolating to ghosts (paper: "global
    /// averaging ... Next, interpolation"), and averaging the parents about to be coarsened.
    pub synchronize: Lap,
    /// Refinement criterion and marking.
    pub criterion: Lap,
    /// The mesh routine (Preparation and steps 1–8), see [`crate::amr::Mesh::adapt_with`]:
    /// the sum of `mesh_steps`.
    pub mesh: Lap,
    /// Filling new children by interpolation, rebuilding the work lists and refreshing
    /// the relinked parents.
    pub fill: Lap,
    /// Of `fill`'s time: the solid cells of every active block and the wall distances of
    /// the blocks next to them (built-in shapes, STL bodies; only while profiling).
    pub geometry: Duration,
    /// Per step of the mesh routine ([`ADAPT_STEPS`]).
    pub mesh_steps: [(&'static str, Lap); 9],
    /// Kernel launches, graph launches and host waits of the adaptations as a whole:
    /// those of the parts and the wait before each adaptation (in
    /// [`crate::Forest::advance`] none after it; [`crate::Forest::adapt`] waits after it,
    /// uncounted).
    pub submissions: DeviceCounters,
    /// Of `wall`, the host's time blocked in those waits (CUDA; zero on the CPU backend):
    /// the rest is the host's own work (launches, recording, bookkeeping) while the
    /// device may idle.
    pub waited: Duration,
}

impl AdaptTimes {
    /// Total wall time of the adaptations.
    pub fn total(&self) -> Duration {
        self.wall
    }

    /// The sum of the parts (`synchronize`, `criterion`, `mesh`, `fill`).
    pub fn parts(&self) -> Lap {
        [self.synchronize, self.criterion, self.mesh, self.fill].into_iter().sum()
    }

    pub(crate) fn new() -> Self {
        AdaptTimes { mesh_steps: ADAPT_STEPS.map(|n| (n, Lap::default())), ..Default::default() }
    }
}

/// Timing breakdown of a forest since construction (or [`crate::Forest::reset_timings`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    /// Wall time of the time stepping (all levels, grid communication included;
    /// adaptation excluded), device synchronised at the end of each `advance`. After an
    /// adaptation it counts from the end of the adaptation's device work (or from when
    /// the host returned from it, if later): the host's recording of the next root
    /// steps while the adaptation's last kernels run is in neither.
    pub stepping: Duration,
    /// Per level (only while profiling).
    pub levels: Vec<LevelTimes>,
    /// Adaptation (see [`AdaptTimes::wall`]).
    pub adapt: AdaptTimes,
    /// Lattice updates counted by the paper's AMR-aware formula (see [`amr_updates`]),
    /// summed over the root steps taken.
    pub updates: f64,
    /// Root steps taken.
    pub root_steps: u64,
    /// Wall time of the stability guard's checks (see [`crate::config::Guard`]), device
    /// synchronised before and after each; not part of `stepping`.
    pub guard: Duration,
    /// Checks the stability guard made.
    pub guard_checks: u64,
    /// Root steps whose launches ran as a new CUDA graph (see
    /// [`crate::Forest::set_launch_graphs`]): captured, or a cached graph of the same
    /// kernels updated in place for them. Counted per root step, also where one graph
    /// holds two ([`crate::Forest::advance`]); [`crate::backend::DeviceCounters::graph_launches`] counts
    /// the graphs.
    pub graph_captures: u64,
    /// Root steps whose launches ran as a cached CUDA graph.
    pub graph_replays: u64,
    /// Host time of the root steps that captured a new graph (their recording, the
    /// capture, its instantiation or update, the launch): part of `stepping` where the
    /// adaptation's last kernels do not hide it (see [`Self::stepping`]).
    pub graph_capture_time: Duration,
    /// Kernel launches, graph launches and host waits of the stepping (as `stepping`:
    /// adaptations and guard checks excluded; CUDA, zero on the CPU backend).
    pub stepping_submissions: DeviceCounters,
    /// Of `stepping`, the host's time blocked in those waits: the device still running
    /// root steps the host had queued (CUDA; zero on the CPU backend). Close to
    /// `stepping`: the device is the bound; small: the host's submissions are.
    pub stepping_waited: Duration,
}

impl Timings {
    pub(crate) fn new(levels: usize) -> Self {
        Timings { levels: vec![LevelTimes::default(); levels], adapt: AdaptTimes::new(), ..Default::default() }
    }

    /// AMR-aware million lattice updates per second of the stepping (paper, eq. for
    /// `MLUPS_inst`, over all steps taken): updates / stepping time.
    pub fn mlups(&self) -> f64 {
        let s = self.stepping.as_secs_f64();
        if s > 0.0 {
            self.updates / s / 1e6
        } else {
            0.0
        }
    }

    /// Million lattice updates per second including the adaptation time.
    pub fn mlups_with_adaptation(&self) -> f64 {
        let s = (self.stepping + self.adapt.total()).as_secs_f64();
        if s > 0.0 {
            self.updates / s / 1e6
        } else {
            0.0
        }
    }

    /// Fraction of the run time (stepping + adaptation) spent adapting.
    pub fn adaptation_share(&self) -> f64 {
        let a = self.adapt.total().as_secs_f64();
        let total = a + self.stepping.as_secs_f64();
        if total > 0.0 {
            a / total
        } else {
            0.0
        }
    }
}

impl Timings {
    /// Fraction of the run time (stepping + adaptation + guard) spent in the stability
    /// guard's checks.
    pub fn guard_share(&self) -> f64 {
        let g = self.guard.as_secs_f64();
        let total = g + self.adapt.total().as_secs_f64() + self.stepping.as_secs_f64();
        if total > 0.0 {
            g / total
        } else {
            0.0
        }
    }
}

/// Lattice updates of one root step (paper, eq. for `MLUPS_inst`):
/// `Σ_L 2^L (N_L − N_{L+1}/N_c)`, with `N_L` the cells of level `L` (`cells[L]`) and
/// `N_c = 2^D` children per block: blocks with children count as not advanced.
pub fn amr_updates(cells: &[usize], children: usize) -> f64 {
    let mut u = 0.0;
    for (l, &n) in cells.iter().enumerate() {
        let next = cells.get(l + 1).copied().unwrap_or(0) as f64;
        u += (1u64 << l) as f64 * (n as f64 - next / children as f64);
    }
    u
}

#[cfg(test)]
mod tests {
    #[test]
    fn amr_updates_follow_the_paper() {
        // Uniform grid: N cells per step.
        assert_eq!(super::amr_updates(&[4096], 4), 4096.0);
        // 2D, one root block of 16 cells refined: 4 children of 16 cells each; the parent
        // is not counted, its children step twice.
        assert_eq!(super::amr_updates(&[16 * 4, 16 * 4], 4), 16.0 * 4.0 - 16.0 + 2.0 * 64.0);
    }
}

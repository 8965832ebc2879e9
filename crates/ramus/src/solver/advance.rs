//! The recursive time advance over the levels and the grid communication it calls (paper,
//! sections "Grid Advancement" and "Grid Communication").
//!
//! One call of [`Solver::advance_level`] on level `L`:
//! 1. interpolate level `L` into the ghost cells of level `L + 1`;
//! 2. collide and stream level `L` (time step `Δt/2^L`);
//! 3. advance level `L + 1` twice (recursively);
//! 4. average level `L + 1` into its parents on level `L`.
//!
//! **AA layouts.** A level is in the natural layout after an even number of its own steps
//! and in the swapped one after an odd number. Levels `L ≥ 1` take two steps per step of
//! their parent level, so at every communication point they are in the natural layout;
//! level `L` itself is read (interpolation) and written (averaging) in whatever layout its
//! step count gives: the `ODD` kernel variants. Every block of a level steps, leaves and
//! parents alike: parent cells under the ghost layer evolve on the coarse level and feed
//! the coarse leaves next to the refined region, and every parent cell a cubic
//! interpolation reads stays current.
//!
//! **Order.** Launched directly, the routines run in this order. In a root step recorded
//! as a CUDA graph each waits only for the routines whose data it touches
//! ([`super::hazards`]): a level's step runs alongside the finer levels' steps, and the
//! exchanges of different levels alongside each other where their blocks are disjoint.

use std::time::{Duration, Instant};

use ramus_kernels::average::{AverageToParents, AVERAGE_INTERFACE, AVERAGE_NOT_GHOST};
use ramus_kernels::exchange::{exchange_parents, AverageInterpolate, ExchangeArgs, EXCHANGE_CTA};
use ramus_kernels::interpolate::{
    coarse_to_fine_factor, fine_to_coarse_factor, CommArgs, GhostArgs, InterpolateChildren, InterpolateGhosts,
    RescaleParents,
};
use ramus_kernels::les::LesTransfer;
use ramus_kernels::mrt::MrtTransfer;
use ramus_kernels::{Dim, VelocitySet};

use super::hazards::{Hazards, Task};
use super::obstacles::walls;
use super::schedule::Schedule;
use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::graph::Replay;
use crate::backend::{Buffer, Device, DeviceSlice, DeviceSliceMut, Views};
use crate::config::Interpolation;
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

/// Linear samples (ghost-block cells × `2^D`) from which the ghost exchange rescales the
/// parents in a separate pass; below it one kernel does both (launch-bound regime, e.g.
/// 2D forests of a few thousand blocks).
pub(crate) const TWO_PASS_SAMPLES: usize = 1 << 20;

/// The blocks a grid-communication routine works on.
#[derive(Clone, Copy)]
pub(crate) enum Blocks<'a> {
    /// The ghost blocks of a level (its work list).
    Ghosts(usize),
    /// The parents of a level's ghost blocks (its work list).
    Parents(usize),
    /// A level's blocks whose children's ghost layers the last adaptation may have
    /// changed ([`super::schedule::Schedule::relinked`]).
    Relinked(usize),
    /// A list the caller holds.
    Given(DeviceSlice<'a, u32>),
}

/// What a transfer between two levels applies to each sample: the rescaling factors of
/// the even and odd non-equilibrium parts (MRT: of the shear moments and the odd
/// ghosts, and those of the bulk and even-ghost moments in `mrt`) and the momentum shift
/// (see [`CommArgs`]).
#[derive(Clone, Copy)]
pub(crate) struct Transfer<F> {
    factor: f64,
    factor_odd: f64,
    shift: [F; 3],
    les: LesTransfer<F>,
    mrt: MrtTransfer<F>,
}

/// The per-cell eddy viscosities of a gradient LES model (no array otherwise).
pub(super) fn eddy_view<F: Float>(gradient_les: bool, eddy: &mut Buffer<F>) -> DeviceSliceMut<'_, F> {
    if gradient_les {
        eddy.view_mut()
    } else {
        DeviceSliceMut::none()
    }
}

/// Communication arguments between a coarse level and the next finer one, for `list`.
fn comm_args<'a, D: Dim, F: Float, P>(
    mesh: &'a Mesh<D>,
    (f, eddy): (DeviceSliceMut<'a, P>, DeviceSliceMut<'a, F>),
    (onb, solid): (DeviceSlice<'a, u32>, DeviceSlice<'a, u64>),
    list: DeviceSlice<'a, u32>,
    transfer: Transfer<F>,
    masked: bool,
) -> CommArgs<F, P, Views<'a>> {
    let pool = mesh.arrays();
    CommArgs {
        f,
        eddy,
        nbr: pool.nbr.view(),
        onb,
        solid,
        parent: pool.parent.view(),
        child: pool.child.view(),
        cell_mask: pool.cell_mask.view(),
        list,
        factor: F::from_f64(transfer.factor),
        factor_odd: F::from_f64(transfer.factor_odd),
        shift: transfer.shift,
        les: transfer.les,
        mrt: transfer.mrt,
        masked: masked as u32,
        status: pool.status.view(),
        mark: pool.mark.view(),
    }
}

/// The block list `blocks` names.
fn list<'a>(schedule: &'a Schedule, blocks: Blocks<'a>) -> Result<DeviceSlice<'a, u32>> {
    match blocks {
        Blocks::Ghosts(l) => schedule.ids(&schedule.levels[l].ghosts),
        Blocks::Parents(l) => schedule.ids(&schedule.levels[l].parents),
        Blocks::Relinked(l) => schedule.relinked.get(l).map_or(Ok(DeviceSlice::none()), |r| schedule.ids(r)),
        Blocks::Given(list) => Ok(list),
    }
}

/// Which routine a timed launch belongs to.
#[derive(Clone, Copy)]
pub(super) enum Routine {
    Interpolate,
    StreamCollide,
    Average,
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// The transfer from level `l` to `l + 1`: factors `τ_F/(2τ_C)` of each part's
    /// relaxation time (see [`ramus_kernels::interpolate::scale_neq`]) and the momentum
    /// shift `(F_C − F_F)/2` of a body force ([`Self::momentum_shift`]).
    fn coarse_to_fine(&self, l: usize) -> Transfer<F> {
        Transfer {
            factor: coarse_to_fine_factor(self.taus[l], self.taus[l + 1]),
            factor_odd: coarse_to_fine_factor(self.taus_odd[l], self.taus_odd[l + 1]),
            shift: self.momentum_shift(l, l + 1),
            les: self.les_transfer(l, l + 1),
            mrt: self.mrt_transfer(l, l + 1),
        }
    }

    /// The transfer from level `l + 1` to `l`: the inverse factors of
    /// [`Self::coarse_to_fine`].
    fn fine_to_coarse(&self, l: usize) -> Transfer<F> {
        Transfer {
            factor: fine_to_coarse_factor(self.taus[l], self.taus[l + 1]),
            factor_odd: fine_to_coarse_factor(self.taus_odd[l], self.taus_odd[l + 1]),
            shift: self.momentum_shift(l + 1, l),
            les: self.les_transfer(l + 1, l),
            mrt: self.mrt_transfer(l + 1, l),
        }
    }

    /// MRT's bulk and even-ghost factors of a transfer from level `s` to level `t`,
    /// `τ_t/(2τ_s)` to the finer level and `2τ_t/τ_s` to the coarser of each group
    /// (see [`ramus_kernels::mrt`]); zero (no MRT) for the other operators.
    fn mrt_transfer(&self, s: usize, t: usize) -> MrtTransfer<F> {
        if self.taus_bulk.is_empty() {
            return MrtTransfer::default();
        }
        let factor = |taus: &[f64]| {
            if t > s {
                coarse_to_fine_factor(taus[s], taus[t])
            } else {
                fine_to_coarse_factor(taus[t], taus[s])
            }
        };
        MrtTransfer {
            bulk: F::from_f64(factor(&self.taus_bulk)),
            even: F::from_f64(factor(&self.taus_even)),
            odd_source: F::from_f64(self.taus_odd[s]),
            odd_target: F::from_f64(self.taus_odd[t]),
        }
    }

    /// The LES fields of a transfer from level `s` to level `t` (see
    /// [`ramus_kernels::les::les_factors`] and [`ramus_kernels::les::LesTransfer`]);
    /// all zero without LES.
    fn les_transfer(&self, s: usize, t: usize) -> LesTransfer<F> {
        if self.les_c2 == 0.0 && !self.gradient_les {
            return LesTransfer::default();
        }
        LesTransfer {
            eddy: F::from_f64(if self.gradient_les { 1.0 } else { 0.0 }),
            c2: F::from_f64(self.les_c2),
            tau_source: F::from_f64(self.taus[s]),
            tau_target: F::from_f64(self.taus[t]),
            magic_source: self.params[s].magic,
            magic_target: self.params[t].magic,
            ratio: F::from_f64(if t > s { 0.5 } else { 2.0 }),
        }
    }

    /// `(F_s − F_t)/2` of the body forces of levels `s` and `t` (see
    /// [`ramus_kernels::interpolate::shift_momentum`]).
    fn momentum_shift(&self, s: usize, t: usize) -> [F; 3] {
        let (a, b) = (self.params[s].force, self.params[t].force);
        let half = F::from_f64(0.5);
        [(a[0] - b[0]) * half, (a[1] - b[1]) * half, (a[2] - b[2]) * half]
    }

    /// `count` root steps of every level ([`Self::advance_level`] on level 0, `count`
    /// times; `odd`: the root level has taken an odd number of steps before the first).
    /// On CUDA, unless profiling or switched off ([`crate::Forest::set_launch_graphs`]),
    /// their launches run as one CUDA graph, in which each routine waits only for the
    /// routines whose data it touches ([`super::hazards`]; unless
    /// [`crate::Forest::set_concurrent_levels`] is off), also across the root steps: the
    /// next root step's first routines need not wait for the graph before to end.
    pub fn advance_roots(&mut self, mesh: &Mesh<Q::Dim>, odd: bool, count: u64) -> Result<()> {
        let parity = |k: u64| odd ^ (k % 2 == 1);
        if self.profile || !self.launch_graphs {
            return (0..count).try_for_each(|k| self.advance_level(mesh, 0, parity(k)));
        }
        let dev = mesh.device();
        let start = Instant::now();
        // SAFETY: the advance frees no buffer: the solver's and the mesh's buffers live
        // across it, and a buffer it (re)allocates is allocated through the device, which
        // issues the recorded launches first.
        let ((), replay) = unsafe {
            dev.replayed(|| {
                let none = dev.dependencies();
                self.hazards = (self.concurrent_levels && none.of_recording()).then(|| Hazards::new(none));
                let advanced = (0..count).try_for_each(|k| self.advance_level(mesh, 0, parity(k)));
                self.hazards = None;
                advanced
            })
        }?;
        match replay {
            Replay::Replayed => self.timings.graph_replays += count,
            Replay::Captured => {
                self.timings.graph_captures += count;
                self.timings.graph_capture_time += start.elapsed();
            }
            Replay::Direct => {}
        }
        Ok(())
    }

    /// Advances level `l` by one of its steps, recursing into finer levels; `odd`: level
    /// `l` has taken an odd number of steps (swapped AA layout). Each routine names what
    /// it reads and writes ([`super::hazards`]).
    pub fn advance_level(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        self.advance(mesh, l, odd, false, false)
    }

    /// [`Self::advance_level`] where the first step of a pair of level `l` may leave its
    /// averaging (`defer`) to the second, which does it in one launch with its
    /// interpolation (`pending`; [`Self::exchange`]).
    fn advance(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool, pending: bool, defer: bool) -> Result<()> {
        let finer = self.has_finer(mesh, l);
        let cubic = self.interpolation == Interpolation::Cubic;
        if finer && pending {
            self.tracked(mesh, Task::Exchange { l, cubic }, |s| s.exchange(mesh, l))?;
        } else if finer {
            let task = Task::Interpolate { l, two_pass: self.two_pass_ghosts(l) };
            self.tracked(mesh, task, |s| s.interpolate_ghosts(mesh, l, odd))?;
        }
        self.tracked(mesh, Task::Step { l }, |s| s.stream_collide(mesh, l, odd))?;
        if finer {
            // Level `l + 1`'s two steps: the first's averaging and the second's
            // interpolation in one launch where that is exact.
            let fuse = self.fused_exchanges && self.has_finer(mesh, l + 1) && !self.two_pass_ghosts(l + 1);
            self.advance(mesh, l + 1, false, false, fuse)?;
            self.advance(mesh, l + 1, true, fuse, false)?;
            if !defer {
                self.tracked(mesh, Task::Average { l, cubic }, |s| s.average_interfaces(mesh, l, !odd))?;
            }
        }
        Ok(())
    }

    /// Whether level `l` has a finer level with blocks.
    fn has_finer(&self, mesh: &Mesh<Q::Dim>, l: usize) -> bool {
        l + 1 < mesh.max_levels() && mesh.blocks_per_level()[l + 1] > 0
    }

    /// Runs `task` by `f` after the recorded tasks it must wait for (after all before it
    /// when nothing tracks the hazards).
    fn tracked(&mut self, mesh: &Mesh<Q::Dim>, task: Task, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let dev = mesh.device();
        if let Some(h) = &self.hazards {
            dev.set_dependencies(&h.before(task));
        }
        f(self)?;
        if let Some(h) = &mut self.hazards {
            h.after(task, &dev.dependencies());
        }
        Ok(())
    }

    /// Interpolates level `l` (in layout `odd`) into the ghost cells of level `l + 1`: the
    /// parents' cells are split (and rescaled) once into the scratch buffer, then sampled. Small
    /// exchanges, where launches cost more than the arithmetic, take the one-pass kernel
    /// instead (bitwise the same values).
    pub fn interpolate_ghosts(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        if self.schedule.levels[l + 1].ghosts.len == 0 {
            return Ok(());
        }
        if !self.two_pass_ghosts(l) {
            return self.interpolate(mesh, Blocks::Ghosts(l + 1), l, odd, true);
        }
        let t = self.start();
        self.two_pass(mesh, Blocks::Parents(l), Blocks::Ghosts(l + 1), l, odd, true)?;
        self.stop(mesh, t, l + 1, Routine::Interpolate)
    }

    /// Whether the ghost interpolation from level `l` takes two passes (through the
    /// scratch; see [`TWO_PASS_SAMPLES`]).
    fn two_pass_ghosts(&self, l: usize) -> bool {
        let samples = self.schedule.levels[l + 1].ghosts.len * <Q::Dim as Dim>::BLOCK_CELLS;
        samples * <Q::Dim as Dim>::CHILDREN >= TWO_PASS_SAMPLES
    }

    /// Interpolation in two passes: every cell of the level-`l` `parents` (layout `odd`)
    /// split and rescaled once into the scratch, then the level-`l + 1` `children` (all
    /// children of those parents) sampled from it: ghost cells only (`masked`) or every
    /// cell. The same values as [`Self::interpolate`]. An error if the scratch (sized at
    /// the last rebuild of the work lists, or by the caller) does not hold every parent.
    pub(crate) fn two_pass(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        parents: Blocks<'_>,
        children: Blocks<'_>,
        l: usize,
        odd: bool,
        masked: bool,
    ) -> Result<()> {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let factor = self.coarse_to_fine(l);
        let dev = mesh.device();
        let parents = list(&self.schedule, parents)?;
        let n_p = parents.len();
        let (onb, solid) = walls(&self.solids, mesh);
        let mut f = self.f.view_mut();
        let mut eddy = eddy_view(self.gradient_les, &mut self.eddy);
        let mut slot = self.slot.view_mut();
        let mut scratch = self.scratch.view_mut();
        let args = GhostArgs::<F, S::Elem, Views> {
            comm: comm_args(mesh, (f.reborrow(), eddy.reborrow()), (onb, solid), parents, factor, masked),
            slot: slot.reborrow(),
            scratch: scratch.reborrow(),
        };
        // SAFETY: the parents are active blocks of level `l` with children; the launch
        // checks that the scratch holds `n_p` split blocks.
        unsafe {
            if odd {
                dev.launch::<RescaleParents<Q, F, S, true>>(n_p * m, args)?
            } else {
                dev.launch::<RescaleParents<Q, F, S, false>>(n_p * m, args)?
            }
        }
        let children = list(&self.schedule, children)?;
        let n_c = children.len();
        let comm = comm_args(mesh, (f, eddy), (onb, solid), children, factor, masked);
        let args = GhostArgs::<F, S::Elem, Views> { comm, slot, scratch };
        // SAFETY: the children are level-`l + 1` blocks whose parents were just split into
        // the scratch (their `slot`s).
        unsafe {
            match self.interpolation {
                Interpolation::Linear => dev.launch::<InterpolateGhosts<Q, F, S, false>>(n_c * m, args),
                Interpolation::Cubic => dev.launch::<InterpolateGhosts<Q, F, S, true>>(n_c * m, args),
            }
        }
    }

    /// Interpolates into the level-`l + 1` `blocks`, rescaling every sample: ghost cells
    /// only (`masked`) or every cell (new children).
    pub fn interpolate(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        blocks: Blocks<'_>,
        l: usize,
        odd: bool,
        masked: bool,
    ) -> Result<()> {
        let factor = self.coarse_to_fine(l);
        let t = self.start();
        let list = list(&self.schedule, blocks)?;
        let items = list.len() * <Q::Dim as Dim>::BLOCK_CELLS;
        let fe = (self.f.view_mut(), eddy_view(self.gradient_les, &mut self.eddy));
        let args = comm_args(mesh, fe, walls(&self.solids, mesh), list, factor, masked);
        let dev = mesh.device();
        // SAFETY: the blocks are level-`l + 1` blocks with active parents.
        unsafe {
            match (self.interpolation, odd) {
                (Interpolation::Linear, false) => {
                    dev.launch::<InterpolateChildren<Q, F, S, false, false>>(items, args)?
                }
                (Interpolation::Linear, true) => {
                    dev.launch::<InterpolateChildren<Q, F, S, true, false>>(items, args)?
                }
                (Interpolation::Cubic, false) => {
                    dev.launch::<InterpolateChildren<Q, F, S, false, true>>(items, args)?
                }
                (Interpolation::Cubic, true) => dev.launch::<InterpolateChildren<Q, F, S, true, true>>(items, args)?,
            }
        }
        self.stop(mesh, t, l + 1, Routine::Interpolate)
    }

    /// Averages level `l + 1` into the parents on level `l` and interpolates them into the
    /// ghosts of level `l + 1`, in one launch (`ramus_kernels::exchange`): what
    /// [`Self::average_interfaces`] then the one-pass [`Self::interpolate_ghosts`] do
    /// between level `l`'s two steps of a coarse step (level `l` in the swapped layout),
    /// with the same values.
    fn exchange(&mut self, mesh: &Mesh<Q::Dim>, l: usize) -> Result<()> {
        let n = self.schedule.levels[l].parents.len;
        if n == 0 {
            return Ok(());
        }
        let t = self.start();
        let (average, interpolate) = (self.fine_to_coarse(l), self.coarse_to_fine(l));
        let cubic = self.interpolation == Interpolation::Cubic;
        let list = list(&self.schedule, Blocks::Parents(l))?;
        let fe = (self.f.view_mut(), eddy_view(self.gradient_les, &mut self.eddy));
        let mut comm = comm_args(mesh, fe, walls(&self.solids, mesh), list, average, false);
        comm.masked = if cubic { AVERAGE_NOT_GHOST } else { AVERAGE_INTERFACE };
        let args = ExchangeArgs::<F, S::Elem, Views> {
            comm,
            n: u32::try_from(n).map_err(|_| Error::invalid("parents of a level", n, "at most 2^32 - 1"))?,
            factor: F::from_f64(interpolate.factor),
            factor_odd: F::from_f64(interpolate.factor_odd),
            shift: interpolate.shift,
            les: interpolate.les,
            mrt: interpolate.mrt,
        };
        let dev = mesh.device();
        let grid = u32::try_from(n.div_ceil(exchange_parents::<Q>()))
            .map_err(|_| Error::invalid("parents of a level", n, "fewer CTAs than 2^32"))?;
        // SAFETY: the parents are level-`l` blocks with children, level `l` in the swapped
        // layout, level `l + 1` in the natural one (between their steps); one CTA of
        // `EXCHANGE_CTA` threads per `exchange_parents` parents on CUDA.
        unsafe {
            match (dev, cubic) {
                (Device::Cpu, false) => dev.launch::<AverageInterpolate<Q, F, S, false>>(n, args)?,
                (Device::Cpu, true) => dev.launch::<AverageInterpolate<Q, F, S, true>>(n, args)?,
                (Device::Cuda(_), false) => {
                    dev.launch_cta::<AverageInterpolate<Q, F, S, false>>(grid, EXCHANGE_CTA, 0, n, args)?
                }
                (Device::Cuda(_), true) => {
                    dev.launch_cta::<AverageInterpolate<Q, F, S, true>>(grid, EXCHANGE_CTA, 0, n, args)?
                }
            }
        }
        self.stop(mesh, t, l + 1, Routine::Interpolate)
    }

    /// Averages level `l + 1` into the parents on level `l` (in layout `odd`) whose
    /// children have ghost cells: the interface parents for linear interpolation (the
    /// paper), every coarse cell not under a ghost cell for cubic (it reads them all).
    fn average_interfaces(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        if self.schedule.levels[l].parents.len == 0 {
            return Ok(());
        }
        let mode = match self.interpolation {
            Interpolation::Linear => AVERAGE_INTERFACE,
            Interpolation::Cubic => AVERAGE_NOT_GHOST,
        };
        self.average(mesh, Blocks::Parents(l), l, odd, mode)
    }

    /// Averages into the level-`l` parents `blocks` (`mode`: an `AVERAGE_*` of
    /// [`ramus_kernels::average`]).
    pub fn average(&mut self, mesh: &Mesh<Q::Dim>, blocks: Blocks<'_>, l: usize, odd: bool, mode: u32) -> Result<()> {
        let factor = self.fine_to_coarse(l);
        let t = self.start();
        let list = list(&self.schedule, blocks)?;
        let items = list.len() * <Q::Dim as Dim>::BLOCK_CELLS;
        let fe = (self.f.view_mut(), eddy_view(self.gradient_les, &mut self.eddy));
        let mut args = comm_args(mesh, fe, walls(&self.solids, mesh), list, factor, false);
        args.masked = mode;
        let dev = mesh.device();
        // SAFETY: the blocks are level-`l` blocks with children.
        unsafe {
            if odd {
                dev.launch::<AverageToParents<Q, F, S, true>>(items, args)?
            } else {
                dev.launch::<AverageToParents<Q, F, S, false>>(items, args)?
            }
        }
        self.stop(mesh, t, l + 1, Routine::Average)
    }

    pub(super) fn start(&self) -> Option<Instant> {
        self.profile.then(Instant::now)
    }

    /// Books the time since `t` (profiling only, after a synchronisation).
    pub(super) fn stop(&mut self, mesh: &Mesh<Q::Dim>, t: Option<Instant>, l: usize, r: Routine) -> Result<()> {
        if let Some(t) = t {
            mesh.device().synchronize()?;
            let dt: Duration = t.elapsed();
            let lt = &mut self.timings.levels[l];
            match r {
                Routine::Interpolate => lt.interpolate += dt,
                Routine::StreamCollide => lt.stream_collide += dt,
                Routine::Average => lt.average += dt,
            }
        }
        Ok(())
    }
}

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

use std::time::{Duration, Instant};

use ramus_kernels::average::{AverageToParents, AVERAGE_INTERFACE, AVERAGE_NOT_GHOST};
use ramus_kernels::interpolate::{
    coarse_to_fine_factor, fine_to_coarse_factor, CommArgs, GhostArgs, InterpolateChildren, InterpolateGhosts,
    RescaleParents,
};
use ramus_kernels::launch::Kernel;
use ramus_kernels::registry::Entry;
use ramus_kernels::stream::{StreamArgs, StreamCollide};
use ramus_kernels::{Dim, VelocitySet};

use super::state::Solver;
use crate::amr::Mesh;
use crate::config::Interpolation;
use crate::error::Result;
use crate::Float;

/// Linear samples (ghost-block cells × `2^D`) from which the ghost exchange rescales the
/// parents in a separate pass; below it one kernel does both (launch-bound regime, e.g.
/// 2D forests of a few thousand blocks).
pub(crate) const TWO_PASS_SAMPLES: usize = 1 << 20;

/// Which routine a timed launch belongs to.
#[derive(Clone, Copy)]
enum Routine {
    Interpolate,
    StreamCollide,
    Average,
}

impl<Q: VelocitySet, F: Float> Solver<Q, F> {
    /// Advances level `l` by one of its steps, recursing into finer levels; `odd`: level
    /// `l` has taken an odd number of steps (swapped AA layout).
    pub fn advance_level(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let finer = l + 1 < mesh.max_levels() && mesh.blocks_per_level()[l + 1] > 0;
        if finer {
            self.interpolate_ghosts(mesh, l, odd)?;
        }
        self.stream_collide(mesh, l, odd)?;
        if finer {
            self.advance_level(mesh, l + 1, false)?;
            self.advance_level(mesh, l + 1, true)?;
            self.average_interfaces(mesh, l, !odd)?;
        }
        Ok(())
    }

    /// One AA step over every block of level `l`.
    fn stream_collide(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let n = mesh.blocks_per_level()[l] * <Q::Dim as Dim>::BLOCK_CELLS;
        if n == 0 {
            return Ok(());
        }
        let dev = mesh.device();
        let ids = dev.cptr(&mesh.id_sets()[l])?;
        let (onb, solid) = self.walls(mesh)?;
        let args = StreamArgs {
            f: dev.ptr(&mut self.f)?,
            nbr: dev.cptr(mesh.arrays().nbr)?,
            onb,
            solid,
            ids,
            params: self.params[l],
        };
        let t = self.start();
        // SAFETY: the pool holds every block ID of the mesh; the list holds `n / 4^D`
        // active blocks whose links point to active blocks or are sentinels.
        unsafe {
            if odd {
                dev.launch::<StreamCollide<Q, F, true>>(n, args)?
            } else {
                dev.launch::<StreamCollide<Q, F, false>>(n, args)?
            }
        };
        self.stop(mesh, t, l, Routine::StreamCollide)
    }

    /// Communication arguments between level `l` (coarse, its parameters) and `l + 1`.
    fn comm_args(&mut self, mesh: &Mesh<Q::Dim>, list: *const u32, factor: f64, masked: bool) -> Result<CommArgs<F>> {
        let dev = mesh.device();
        let (onb, solid) = self.walls(mesh)?;
        Ok(CommArgs {
            f: dev.ptr(&mut self.f)?,
            nbr: dev.cptr(mesh.arrays().nbr)?,
            onb,
            solid,
            parent: dev.cptr(mesh.arrays().parent)?,
            child: dev.cptr(mesh.arrays().child)?,
            cell_mask: dev.cptr(mesh.arrays().cell_mask)?,
            list,
            factor: F::from_f64(factor),
            masked: masked as u32,
        })
    }

    /// Interpolates level `l` (in layout `odd`) into the ghost cells of level `l + 1`: the
    /// parents' cells are split (and rescaled) once into the scratch buffer, then sampled. Small
    /// exchanges, where launches cost more than the arithmetic, take the one-pass kernel
    /// instead (bitwise the same values).
    pub fn interpolate_ghosts(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let (n_g, n_p) = (self.schedule.levels[l + 1].ghosts.len, self.schedule.levels[l].parents.len);
        if n_g == 0 {
            return Ok(());
        }
        if n_g * m * <Q::Dim as Dim>::CHILDREN < TWO_PASS_SAMPLES {
            let list = mesh.device().cptr(&self.schedule.levels[l + 1].ghosts.ids)?;
            return self.interpolate(mesh, list, n_g, l, odd, true);
        }
        let parents = mesh.device().cptr(&self.schedule.levels[l].parents.ids)?;
        let ghosts = mesh.device().cptr(&self.schedule.levels[l + 1].ghosts.ids)?;
        let t = self.start();
        // SAFETY: the parent list holds `n_p` blocks of level `l` (every parent of a ghost
        // block on level `l + 1`), the scratch `n_p` split blocks (sized at the last
        // rebuild); the ghost list holds `n_g` blocks.
        unsafe { self.two_pass(mesh, parents, n_p, ghosts, n_g, l, odd, true)? };
        self.stop(mesh, t, l + 1, Routine::Interpolate)
    }

    /// Interpolation in two passes: every cell of the `n_p` level-`l` `parents` (layout
    /// `odd`) split and rescaled once into the scratch, then the `n_c` level-`l + 1`
    /// `children` (all children of those parents) sampled from it: ghost cells only
    /// (`masked`) or every cell. The same values as [`Self::interpolate`].
    ///
    /// # Safety
    /// The lists hold `n_p` and `n_c` active blocks; the scratch holds `n_p` split blocks.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn two_pass(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        parents: *const u32,
        n_p: usize,
        children: *const u32,
        n_c: usize,
        l: usize,
        odd: bool,
        masked: bool,
    ) -> Result<()> {
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let factor = coarse_to_fine_factor(self.taus[l], self.taus[l + 1]);
        let comm = self.comm_args(mesh, parents, factor, masked)?;
        let dev = mesh.device();
        let mut args = GhostArgs { comm, slot: dev.ptr(&mut self.slot)?, scratch: dev.ptr(&mut self.scratch)? };
        if odd {
            dev.launch::<RescaleParents<Q, F, true>>(n_p * m, args)?
        } else {
            dev.launch::<RescaleParents<Q, F, false>>(n_p * m, args)?
        }
        args.comm.list = children;
        match self.interpolation {
            Interpolation::Linear => dev.launch::<InterpolateGhosts<Q, F, false>>(n_c * m, args),
            Interpolation::Cubic => dev.launch::<InterpolateGhosts<Q, F, true>>(n_c * m, args),
        }
    }

    /// Interpolates into the `n` level-`l + 1` blocks of `list`, rescaling every sample:
    /// ghost cells only (`masked`) or every cell (new children).
    pub fn interpolate(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        list: *const u32,
        n: usize,
        l: usize,
        odd: bool,
        masked: bool,
    ) -> Result<()> {
        let factor = coarse_to_fine_factor(self.taus[l], self.taus[l + 1]);
        let args = self.comm_args(mesh, list, factor, masked)?;
        let items = n * <Q::Dim as Dim>::BLOCK_CELLS;
        let t = self.start();
        // SAFETY: `list` holds `n` blocks of level `l + 1`, whose parents are active.
        unsafe {
            match (self.interpolation, odd) {
                (Interpolation::Linear, false) => {
                    self.launch::<InterpolateChildren<Q, F, false, false>>(mesh, items, args)?
                }
                (Interpolation::Linear, true) => {
                    self.launch::<InterpolateChildren<Q, F, true, false>>(mesh, items, args)?
                }
                (Interpolation::Cubic, false) => {
                    self.launch::<InterpolateChildren<Q, F, false, true>>(mesh, items, args)?
                }
                (Interpolation::Cubic, true) => {
                    self.launch::<InterpolateChildren<Q, F, true, true>>(mesh, items, args)?
                }
            }
        }
        self.stop(mesh, t, l + 1, Routine::Interpolate)
    }

    /// Averages level `l + 1` into the parents on level `l` (in layout `odd`) whose
    /// children have ghost cells: the interface parents for linear interpolation (the
    /// paper), every coarse cell not under a ghost cell for cubic (it reads them all).
    fn average_interfaces(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let p = &self.schedule.levels[l].parents;
        let n = p.len;
        if n == 0 {
            return Ok(());
        }
        let list = mesh.device().cptr(&p.ids)?;
        let mode = match self.interpolation {
            Interpolation::Linear => AVERAGE_INTERFACE,
            Interpolation::Cubic => AVERAGE_NOT_GHOST,
        };
        self.average(mesh, list, n, l, odd, mode)
    }

    /// Averages into the `n` level-`l` parents of `list` (`mode`: an `AVERAGE_*` of
    /// [`ramus_kernels::average`]).
    pub fn average(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        list: *const u32,
        n: usize,
        l: usize,
        odd: bool,
        mode: u32,
    ) -> Result<()> {
        let factor = fine_to_coarse_factor(self.taus[l], self.taus[l + 1]);
        let mut args = self.comm_args(mesh, list, factor, false)?;
        args.masked = mode;
        let items = n * <Q::Dim as Dim>::BLOCK_CELLS;
        let t = self.start();
        // SAFETY: `list` holds `n` blocks of level `l` with children.
        unsafe {
            if odd {
                self.launch::<AverageToParents<Q, F, true>>(mesh, items, args)?
            } else {
                self.launch::<AverageToParents<Q, F, false>>(mesh, items, args)?
            }
        }
        self.stop(mesh, t, l + 1, Routine::Average)
    }

    /// # Safety
    /// As for [`crate::backend::Device::launch`].
    unsafe fn launch<K: Kernel<Args = CommArgs<F>> + Entry>(
        &self,
        mesh: &Mesh<Q::Dim>,
        n: usize,
        args: CommArgs<F>,
    ) -> Result<()> {
        mesh.device().launch::<K>(n, args)
    }

    fn start(&self) -> Option<Instant> {
        self.profile.then(Instant::now)
    }

    /// Books the time since `t` (profiling only, after a synchronisation).
    fn stop(&mut self, mesh: &Mesh<Q::Dim>, t: Option<Instant>, l: usize, r: Routine) -> Result<()> {
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

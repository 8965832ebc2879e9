//! The collide-and-stream step of one level (paper, section "Lattice Boltzmann Solver";
//! the fused in-place AA step of `ramus_kernels::stream`) and which kernel runs it: the
//! plain step, two cells per thread ([`crate::PairedCells`]), the gradient LES step, or
//! the bulk kernel over the blocks without boundary flags with the plain step over the
//! list of the others ([`crate::BulkSteps`]). Every choice gives the same values.

use ramus_kernels::collision::{Bgk, Collision as Operator, Trt};
use ramus_kernels::eddy::{CellVelocity, VelocityArgs};
use ramus_kernels::mrt::Mrt;
use ramus_kernels::pairs::StreamCollidePairs;
use ramus_kernels::regularized::Rr;
use ramus_kernels::stream::{StreamArgs, StreamCollide, StreamCollideBulk, StreamCollideGradient};
use ramus_kernels::{Dim, VelocitySet};

use super::advance::{eddy_view, Routine};
use super::obstacles::walls;
use super::profiles::profile_views;
use super::state::Solver;
use crate::amr::Mesh;
use crate::backend::{Device, DeviceSlice, Views};
use crate::config::Collision;
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

/// How a level's step runs: one kernel over its ID set (`Plain`, `Paired`, `Gradient`), or
/// the bulk kernel over it and the plain one over its boundary blocks (`Bulk`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Paired,
    Gradient,
    Bulk,
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// One AA step over every block of level `l`.
    pub(super) fn stream_collide(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool) -> Result<()> {
        let n = mesh.blocks_per_level()[l] * <Q::Dim as Dim>::BLOCK_CELLS;
        if n == 0 {
            return Ok(());
        }
        let t = self.start();
        let ids = mesh.id_sets()[l].slice(..mesh.blocks_per_level()[l])?;
        if self.gradient_les {
            self.cell_velocities(mesh, l, odd, ids)?;
        }
        let boundary = self.schedule.levels[l].boundary;
        let smagorinsky = ramus_kernels::les::has_les(&self.params[l]);
        let kind = if self.gradient_les {
            Kind::Gradient
        } else if self.paired_cells.takes::<Q, F, S>(odd, n, smagorinsky) {
            Kind::Paired
        } else if self.schedule.has_boundary && self.bulk_steps.takes::<Q, F, S>(odd, n, boundary.len > 0) {
            Kind::Bulk
        } else {
            Kind::Plain
        };
        // SAFETY: the ID set's blocks are active and their links point to active blocks or
        // are sentinels; see `launch_step` for the rest.
        unsafe { self.launch_step(mesh, l, kind, odd, false)? };
        if kind == Kind::Bulk && boundary.len > 0 {
            // The blocks the bulk kernel skipped, listed from the flags it read (the work
            // lists are rebuilt whenever the flags change: after an adaptation, a restart).
            // SAFETY: as above; the list holds active blocks of this level.
            unsafe { self.launch_step(mesh, l, Kind::Plain, odd, true)? };
        }
        // Curved or moving walls: Bouzidi's values replace the step's half-way ones
        // before anything reads the level.
        self.wall_pass(mesh, l, !odd)?;
        self.stop(mesh, t, l, Routine::StreamCollide)
    }

    /// The velocities the gradient LES model differentiates (`ramus_kernels::eddy`), of
    /// the blocks `ids` of level `l`.
    fn cell_velocities(&mut self, mesh: &Mesh<Q::Dim>, l: usize, odd: bool, ids: DeviceSlice<'_, u32>) -> Result<()> {
        let dev = mesh.device();
        let n = ids.len() * <Q::Dim as Dim>::BLOCK_CELLS;
        let (onb, solid) = walls(&self.solids, mesh);
        let args = VelocityArgs::<F, S::Elem, Views> {
            f: self.f.view_mut(),
            nbr: mesh.arrays().nbr.view(),
            onb,
            solid,
            ids,
            vel: self.vel.view_mut(),
            force: self.params[l].force,
        };
        // SAFETY: as for the step; the velocity buffer holds every pool block.
        unsafe {
            if odd {
                dev.launch::<CellVelocity<Q, F, S, true>>(n, args)
            } else {
                dev.launch::<CellVelocity<Q, F, S, false>>(n, args)
            }
        }
    }

    /// Launches the step of `kind` over the blocks of level `l`: its ID set, or with
    /// `boundary` its boundary blocks' work list (for `Kind::Bulk`, the bulk kernel: the
    /// blocks with boundary flags are left alone).
    ///
    /// # Safety
    /// The pool holds every block ID of the mesh; the blocks stepped are active and
    /// their links point to active blocks or are sentinels; under a gradient model the
    /// velocity and eddy buffers hold every pool block and the velocities are the level's
    /// current ones ([`Self::cell_velocities`]); with a profiled face the profile table
    /// has a row index for every pool block (`Profiles::slot`) and the rows it names.
    unsafe fn launch_step(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        l: usize,
        kind: Kind,
        odd: bool,
        boundary: bool,
    ) -> Result<()> {
        let dev = mesh.device();
        let ids = if boundary {
            self.schedule.ids(&self.schedule.levels[l].boundary)?
        } else {
            mesh.id_sets()[l].slice(..mesh.blocks_per_level()[l])?
        };
        let n = ids.len() * <Q::Dim as Dim>::BLOCK_CELLS;
        let (onb, solid) = walls(&self.solids, mesh);
        let vel = if self.gradient_les { self.vel.view() } else { DeviceSlice::none() };
        let (profile_slot, profile_u) = profile_views(&self.profiles);
        let args = StreamArgs::<F, S::Elem, Views> {
            f: self.f.view_mut(),
            nbr: mesh.arrays().nbr.view(),
            onb,
            solid,
            ids,
            params: self.params[l],
            vel,
            eddy: eddy_view(self.gradient_les, &mut self.eddy),
            cell_mask: mesh.arrays().cell_mask.view(),
            profile_slot,
            profile_u,
            blocks: u32::try_from(ids.len())
                .map_err(|_| Error::invalid("blocks of a level", ids.len(), "at most 2^32 - 1"))?,
        };
        // SAFETY: the caller's contract. Paired cells access two elements at even pool
        // indices at once: the pool is a whole device allocation (aligned to 256 bytes), so
        // those accesses are aligned.
        unsafe {
            match self.collision {
                Collision::Bgk => launch::<Q, F, S, Bgk>(dev, kind, odd, n, args),
                Collision::Trt { .. } => launch::<Q, F, S, Trt>(dev, kind, odd, n, args),
                Collision::RecursiveRegularized => launch::<Q, F, S, Rr>(dev, kind, odd, n, args),
                Collision::Mrt { .. } => launch::<Q, F, S, Mrt>(dev, kind, odd, n, args),
            }
        }
    }
}

/// Launches the step kernel of `kind` with collision operator `C` for parity `odd` over the
/// `n` cells of `args`' blocks (two per thread for `Kind::Paired`).
///
/// # Safety
/// As for [`Solver::launch_step`].
unsafe fn launch<Q: VelocitySet, F: Float, S: PoolStorage<F>, C: Operator>(
    dev: &Device,
    kind: Kind,
    odd: bool,
    n: usize,
    args: StreamArgs<F, S::Elem, Views<'_>>,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        match (kind, odd) {
            (Kind::Plain, false) => dev.launch::<StreamCollide<Q, F, S, C, false>>(n, args),
            (Kind::Plain, true) => dev.launch::<StreamCollide<Q, F, S, C, true>>(n, args),
            (Kind::Bulk, false) => dev.launch::<StreamCollideBulk<Q, F, S, C, false>>(n, args),
            (Kind::Bulk, true) => dev.launch::<StreamCollideBulk<Q, F, S, C, true>>(n, args),
            (Kind::Paired, false) => dev.launch::<StreamCollidePairs<Q, F, S, C, false>>(n / 2, args),
            (Kind::Paired, true) => dev.launch::<StreamCollidePairs<Q, F, S, C, true>>(n / 2, args),
            (Kind::Gradient, false) => dev.launch::<StreamCollideGradient<Q, F, S, C, false>>(n, args),
            (Kind::Gradient, true) => dev.launch::<StreamCollideGradient<Q, F, S, C, true>>(n, args),
        }
    }
}

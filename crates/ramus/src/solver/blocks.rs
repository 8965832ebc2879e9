//! The lattice Boltzmann solution as [`BlockData`] of the mesh: what each hook of an
//! adaptation does to the distributions (paper, sections "Refinement and Coarsening" and
//! "Grid Communication"), and how a checkpoint stores them.

use std::ops::Range;

use ramus_kernels::{Dim, VelocitySet};

use super::state::Solver;
use super::sync::SyncScratch;
use crate::amr::{AdaptStage, BlockData, Mesh, RefinedBlocks, RelinkedBlocks};
use crate::error::{Error, Result};
use crate::{Float, PoolStorage};

/// The solver and its synchronisation temporaries, lent to an adaptation.
pub(crate) struct SolverBlocks<'a, Q: VelocitySet, F: Float, S: PoolStorage<F>> {
    pub solver: &'a mut Solver<Q, F, S>,
    pub sync: &'a mut SyncScratch,
}

/// Whether the root level has taken an odd number of steps (the AA parity of the pool).
fn root_odd(stage: AdaptStage) -> bool {
    stage.steps % 2 == 1
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> BlockData<Q::Dim> for SolverBlocks<'_, Q, F, S> {
    /// Averages the candidates for coarsening into their parents
    /// ([`Solver::average_coarsening`]).
    fn before_coarsen(&mut self, mesh: &Mesh<Q::Dim>, stage: AdaptStage) -> Result<()> {
        self.solver.average_coarsening(mesh, root_odd(stage))
    }

    /// Marks the new children's solid cells (the boundary flags the work lists read),
    /// rebuilds the per-level work lists with the relinked parents' lists (one compaction,
    /// one read-back: before the fill is queued, so that the fill and the averaging run
    /// while the next root steps are recorded) and the inlet profiles of the new
    /// boundary blocks.
    fn after_connectivity(&mut self, mesh: &Mesh<Q::Dim>, relinked: RelinkedBlocks<'_>, _: AdaptStage) -> Result<()> {
        self.solver.geometry_timed(mesh, |s| s.update_solids(mesh))?;
        self.solver.rebuild_schedule_with(mesh, Some(relinked))?;
        self.solver.update_profiles(mesh)
    }

    /// Fills the new children by interpolation from their parents
    /// ([`Solver::fill_children`]; their solid cells are marked).
    fn fill_new_children(&mut self, mesh: &Mesh<Q::Dim>, refined: RefinedBlocks<'_>, stage: AdaptStage) -> Result<()> {
        self.solver.fill_children(mesh, refined.parents, refined.offsets, root_odd(stage), self.sync)
    }

    /// Averages the relinked parents ([`Solver::average_relinked_parents`]; listed by
    /// [`Self::after_connectivity`]).
    fn after_relink(&mut self, mesh: &Mesh<Q::Dim>, _: RelinkedBlocks<'_>, stage: AdaptStage) -> Result<()> {
        self.solver.average_relinked_parents(mesh, root_odd(stage))
    }

    /// The shifted populations of the blocks as stored ([`crate::PoolStorage`]), as raw
    /// native-endian bytes; under a gradient LES model each block's populations are
    /// followed by its cells' eddy viscosities in `F` (the transfers read them before the
    /// cells collide again).
    fn serialize(&self, mesh: &Mesh<Q::Dim>, blocks: Range<usize>) -> Result<Vec<u8>> {
        let per = per_block::<Q>();
        let f: Vec<S::Elem> = mesh.device().read(&self.solver.f, blocks.start * per..blocks.end * per)?;
        let pops: &[u8] = bytemuck::cast_slice(&f);
        if !self.solver.gradient_les {
            return Ok(pops.to_vec());
        }
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let nu: Vec<F> = mesh.device().read(&self.solver.eddy, blocks.start * m..blocks.end * m)?;
        let cells: &[u8] = bytemuck::cast_slice(&nu);
        let (pb, cb) = (per * std::mem::size_of::<S::Elem>(), m * std::mem::size_of::<F>());
        let mut out = Vec::with_capacity(blocks.len() * (pb + cb));
        for (p, c) in pops.chunks_exact(pb).zip(cells.chunks_exact(cb)) {
            out.extend_from_slice(p);
            out.extend_from_slice(c);
        }
        Ok(out)
    }

    /// Writes the populations back, then the solid cells and work lists that follow
    /// from the restored mesh.
    fn deserialize(&mut self, mesh: &Mesh<Q::Dim>, blocks: Range<usize>, bytes: &[u8]) -> Result<()> {
        let per = per_block::<Q>();
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let pb = per * std::mem::size_of::<S::Elem>();
        let cb = if self.solver.gradient_les { m * std::mem::size_of::<F>() } else { 0 };
        let expected = blocks.len() * (pb + cb);
        if bytes.len() != expected {
            return Err(Error::invalid(
                "checkpoint",
                format!("{} bytes of block data", bytes.len()),
                format!("{expected} bytes for {} blocks", blocks.len()),
            ));
        }
        let mut f = vec![S::Elem::default(); blocks.len() * per];
        let mut nu = vec![F::default(); if cb > 0 { blocks.len() * m } else { 0 }];
        {
            let (fb, nb) =
                (bytemuck::cast_slice_mut::<S::Elem, u8>(&mut f), bytemuck::cast_slice_mut::<F, u8>(&mut nu));
            for (k, block) in bytes.chunks_exact(pb + cb).enumerate() {
                fb[k * pb..(k + 1) * pb].copy_from_slice(&block[..pb]);
                if cb > 0 {
                    nb[k * cb..(k + 1) * cb].copy_from_slice(&block[pb..]);
                }
            }
        }
        mesh.device().write(&mut self.solver.f, blocks.start * per, &f)?;
        if self.solver.gradient_les {
            mesh.device().write(&mut self.solver.eddy, blocks.start * m, &nu)?;
        }
        self.solver.update_solids(mesh)?;
        self.solver.update_profiles(mesh)?;
        self.solver.rebuild_schedule(mesh)
    }
}

/// Populations per block.
fn per_block<Q: VelocitySet>() -> usize {
    Q::Q * <Q::Dim as Dim>::BLOCK_CELLS
}

//! Synchronising all levels between root steps, and filling new blocks (paper, solver
//! section "Adaptive Mesh Refinement": "a global averaging procedure is performed over
//! the entire grid hierarchy starting with the second-finest level and ascending to L = 0
//! ... Next, interpolation is performed to ghost cells on all levels in the opposite
//! direction").

use ramus_kernels::average::{AVERAGE_ALL, AVERAGE_COARSENING, AVERAGE_NOT_GHOST};
use ramus_kernels::schedule::{ExpandArgs, ExpandChildren, SELECT_PARENTS};
use ramus_kernels::{Dim, VelocitySet};

use super::advance::{Blocks, TWO_PASS_SAMPLES};
use super::by_level::ByLevel;
use super::state::Solver;
use crate::amr::workspace::ensure;
use crate::amr::Mesh;
use crate::backend::primitives as prim;
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::Result;
use crate::{Float, PoolStorage};

/// Refined parents filled per two-pass chunk at most (bounds the scratch it may grow:
/// `(Q + 5) 4^D` values per parent).
const FILL_CHUNK: usize = 8192;

/// The blocks with children, packed level by level (`counts[l]` of level `l`, listed in
/// [`SyncScratch::by_level`]), while a read of the solution synchronises the pool.
pub(crate) struct SavedParents<F, P> {
    counts: Vec<usize>,
    f: Buffer<P>,
    eddy: Buffer<F>,
}

/// Device temporaries of the synchronisation and the criterion.
pub(crate) struct SyncScratch {
    pub list: Buffer<u32>,
    pub by_level: ByLevel,
}

impl SyncScratch {
    pub fn new(dev: &crate::backend::Device) -> Self {
        SyncScratch { list: Buffer::Host(Vec::new()), by_level: ByLevel::new(dev) }
    }
}

impl<Q: VelocitySet, F: Float, S: PoolStorage<F>> Solver<Q, F, S> {
    /// Brings every level to the state of the current root step, at a root-step boundary
    /// (`root_odd`: the root level has taken an odd number of steps): averages every
    /// parent from its children (cells under ghosts excepted, whose coarse values are the
    /// valid ones), finest first, then interpolates every ghost layer, coarsest first.
    /// Afterwards every cell of every active block (leaf or not) holds valid data.
    ///
    /// This changes the run: the step averages only the interface cells of a parent
    /// (linear interpolation) and lets its other cells evolve on the coarse level, from
    /// where they reach the interface cells the next coarse step reads. A read of the
    /// solution therefore brackets it with [`Self::save_parents`] and
    /// [`Self::restore_parents`]. (The ghost layers it refills are refilled by the next
    /// step before anything reads them.)
    pub fn synchronize(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        let levels = mesh.max_levels();
        let odd = |l: usize| l == 0 && root_odd;
        for l in (0..levels.saturating_sub(1)).rev() {
            // The whole ID set: the averaging kernel skips blocks without children.
            if mesh.blocks_per_level()[l + 1] > 0 {
                let list = mesh.id_sets()[l].slice(..mesh.blocks_per_level()[l])?;
                self.average(mesh, Blocks::Given(list), l, odd(l), AVERAGE_NOT_GHOST)?;
            }
        }
        for l in 0..levels.saturating_sub(1) {
            if mesh.blocks_per_level()[l + 1] > 0 {
                self.interpolate_ghosts(mesh, l, odd(l))?;
            }
        }
        Ok(())
    }

    /// Packs every block with children (the blocks [`Self::synchronize`] averages into:
    /// populations, and eddy viscosities under a gradient LES model) into a new buffer,
    /// so that a read of the solution leaves the run bitwise as it was
    /// ([`Self::restore_parents`]). `s.by_level` keeps the lists until then.
    pub fn save_parents(&mut self, mesh: &Mesh<Q::Dim>, s: &mut SyncScratch) -> Result<SavedParents<F, S::Elem>> {
        let dev = mesh.device();
        let levels = mesh.max_levels();
        let built = |l: usize| l + 1 < levels && mesh.blocks_per_level()[l + 1] > 0;
        s.by_level.rebuild(mesh, SELECT_PARENTS, 0, built)?;
        let counts: Vec<usize> = (0..levels).map(|l| s.by_level.len(l)).collect();
        let total: usize = counts.iter().sum();
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let mut saved = SavedParents {
            counts,
            f: dev.zeros(total * Q::Q * m)?,
            eddy: if self.gradient_les { dev.zeros(total * m)? } else { Buffer::Host(Vec::new()) },
        };
        self.move_parents(mesh, s, &mut saved, false)?;
        Ok(saved)
    }

    /// Unpacks what [`Self::save_parents`] packed (the lists in `s` unchanged since).
    pub fn restore_parents(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        s: &SyncScratch,
        mut saved: SavedParents<F, S::Elem>,
    ) -> Result<()> {
        self.move_parents(mesh, s, &mut saved, true)
    }

    fn move_parents(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        s: &SyncScratch,
        saved: &mut SavedParents<F, S::Elem>,
        unpack: bool,
    ) -> Result<()> {
        let dev = mesh.device();
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let mut start = 0;
        for (l, &c) in saved.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let list = s.by_level.level(l)?;
            let end = start + c;
            // SAFETY: the lists hold distinct active block IDs of the pool (compacted from
            // the levels' ID sets), and nothing changes them before the work is done.
            unsafe {
                let packed = saved.f.slice_mut(start * Q::Q * m..end * Q::Q * m)?;
                prim::pack_blocks(dev, self.f.view_mut(), list, Q::Q * m, packed, unpack)?;
                if self.gradient_les {
                    let packed = saved.eddy.slice_mut(start * m..end * m)?;
                    prim::pack_blocks(dev, self.eddy.view_mut(), list, m, packed, unpack)?;
                }
            }
            start = end;
        }
        Ok(())
    }

    /// Interpolates every ghost layer, coarsest first, at a root-step boundary: before the
    /// criterion (ghost cells of leaves count) and the mesh routine (ghosts that become
    /// interior cells, and leaves that are refined, must hold current data).
    pub fn refresh_ghosts(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        for l in 0..mesh.max_levels().saturating_sub(1) {
            if mesh.blocks_per_level()[l + 1] > 0 {
                self.interpolate_ghosts(mesh, l, l == 0 && root_odd)?;
            }
        }
        Ok(())
    }

    /// Averages the candidates for coarsening (`REFINED` parents whose children all ask
    /// for it; every cell not under a ghost cell), finest first, so that a parent that
    /// becomes a leaf carries its children's solution (its children are leaves, so they
    /// are current). Other parents step with their level and
    /// need no averaging for the mesh to change: this replaces the paper's global
    /// averaging before adaptation with the part of it that matters.
    ///
    /// One launch per level with children, over its whole ID set: the kernel picks the
    /// candidates itself ([`AVERAGE_COARSENING`]), where listing them first cost a
    /// flagging launch, a compaction and a read-back in every adaptation.
    pub fn average_coarsening(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        let levels = mesh.max_levels();
        for l in (0..levels.saturating_sub(1)).rev() {
            // Levels without children have no candidates.
            if mesh.blocks_per_level()[l + 1] > 0 {
                let list = mesh.id_sets()[l].slice(..mesh.blocks_per_level()[l])?;
                self.average(mesh, Blocks::Given(list), l, l == 0 && root_odd, AVERAGE_COARSENING)?;
            }
        }
        Ok(())
    }

    /// After an adapt (ghosts refreshed before it, no step since) and the rebuild of the
    /// work lists with its relinked blocks ([`Self::rebuild_schedule_with`]): averages
    /// every cell of those parents, finest first: the blocks whose children's ghost
    /// layers the adapt may have changed ([`RelinkedBlocks`]).
    ///
    /// Why: the coarse cells under ghost cells feed the interpolation and are never
    /// averaged, only stepped on their level. Where the adapt created ghost cells, those
    /// coarse cells lay under interior fine cells and were not kept current (the paper's
    /// global averaging before adaptation covers them; this covers them at a fraction of
    /// its cost). The fine cells hold current data: interior ones evolved, ghost ones were
    /// just interpolated, new children just filled (for linear interpolation averaging is
    /// its exact inverse there, so those coarse cells keep their values).
    pub fn average_relinked_parents(&mut self, mesh: &Mesh<Q::Dim>, root_odd: bool) -> Result<()> {
        for l in (0..self.schedule.relinked.len()).rev() {
            if self.schedule.relinked[l].len > 0 {
                self.average(mesh, Blocks::Relinked(l), l, l == 0 && root_odd, AVERAGE_ALL)?;
            }
        }
        Ok(())
    }

    /// Fills every cell of the children of the parents just refined by interpolation from
    /// their parents, at a root-step boundary. `parents` groups them by the level of their
    /// children: level `l`'s are `parents[offsets[l] .. offsets[l + 1]]` (see
    /// [`crate::amr::AdaptWorkspace`]); empty `offsets`: nothing to fill. One launch lists
    /// the children of every level, then each level's are interpolated.
    pub fn fill_children(
        &mut self,
        mesh: &Mesh<Q::Dim>,
        parents: &Buffer<u32>,
        offsets: &[usize],
        root_odd: bool,
        s: &mut SyncScratch,
    ) -> Result<()> {
        let dev = mesh.device();
        let nc = <Q::Dim as Dim>::CHILDREN;
        let m = <Q::Dim as Dim>::BLOCK_CELLS;
        let last = offsets.len().saturating_sub(1).min(mesh.max_levels());
        if last <= 1 || offsets[last] == offsets[1] {
            return Ok(());
        }
        // Every new child in one launch: parent `offsets[1] + p` has children
        // `children[p N_c ..]`, level by level as the parents.
        let base = offsets[1];
        let all = expand(mesh, parents.slice(base..offsets[last])?, s)?;
        for l in 1..last {
            let n = offsets[l + 1] - offsets[l];
            if n == 0 {
                continue;
            }
            let odd = l == 1 && root_odd;
            let first = parents.slice(offsets[l]..offsets[l + 1])?;
            let at = (offsets[l] - base) * nc;
            if n * m * nc < TWO_PASS_SAMPLES {
                let children = all.slice(at..at + n * nc)?;
                self.interpolate(mesh, Blocks::Given(children), l - 1, odd, false)?;
                continue;
            }
            // Many children: rescale each parent cell once (as the ghost exchange), in
            // chunks that fit the scratch, grown to a useful size if needed.
            let per = ramus_kernels::interpolate::split_values::<Q>() * m;
            let want = n.min(FILL_CHUNK);
            if self.scratch.len() < want * per || matches!((dev, &self.scratch), (Device::Cuda(_), Buffer::Host(_))) {
                self.scratch = dev.zeros(want * per)?;
            }
            let chunk = self.scratch.len() / per;
            let mut start = 0;
            while start < n {
                let cnt = chunk.min(n - start);
                let list = first.slice(start..start + cnt)?;
                let children = all.slice(at + start * nc..at + (start + cnt) * nc)?;
                // `cnt` refined parents of level `l - 1` and their `cnt N_c` children; the
                // scratch holds `chunk ≥ cnt` split blocks.
                self.two_pass(mesh, Blocks::Given(list), Blocks::Given(children), l - 1, odd, false)?;
                start += cnt;
            }
        }
        Ok(())
    }
}

/// The `N_c` children of each block of `parents` into `s.list`, returned as a view.
/// Queued after the previous user of the list (one stream), so reusing it is safe.
fn expand<'s, D: Dim>(
    mesh: &Mesh<D>,
    parents: DeviceSlice<'_, u32>,
    s: &'s mut SyncScratch,
) -> Result<DeviceSlice<'s, u32>> {
    let dev = mesh.device();
    let n = parents.len() * D::CHILDREN;
    ensure(dev, &mut s.list, n)?;
    let args = ExpandArgs::<Views> { parents, child: mesh.arrays().child.view(), out: s.list.slice_mut(..n)? };
    // SAFETY: the parents are blocks with children (IDs of the pool); the launch checks
    // that the output holds their children.
    unsafe { dev.launch::<ExpandChildren<D>>(n, args)? };
    s.list.slice(..n)
}

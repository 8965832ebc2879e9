//! Mesh hooks for block data: what an adaptation calls on the data stored per block, so
//! that the mesh drives every field through refinement, coarsening and checkpoints
//! instead of its owner orchestrating the steps by hand.
//!
//! The pattern of AMReX's `AmrCore` (`MakeNewLevelFromCoarse`, `RemakeLevel`), p4est's
//! `p4est_replace_t` and waLBerla's `BlockDataHandling` (data that knows how to refine,
//! coarsen and serialise itself): [`Mesh::adapt_blocks`] runs the paper's routine
//! (section "Refinement and Coarsening", [`Mesh::adapt_with`]) and calls each
//! [`BlockData`] before and after it. The lattice Boltzmann solution is one
//! implementation (`crate::solver::blocks`); a second field on the same forest (a
//! passive scalar, a temperature) is a second implementation, not a copy of the solver's
//! plumbing. Block IDs are the pool's (data are indexed by block ID like the mesh
//! arrays), so a field is a pool of `capacity` blocks, and serialising a range of IDs is
//! what a checkpoint does now and what migrating blocks between ranks will do later.

use std::ops::Range;

use ramus_kernels::Dim;

use super::{AdaptReport, AdaptWorkspace, Mesh};
use crate::backend::stopwatch::Stopwatch;
use crate::backend::{Buffer, DeviceSlice, Lap};
use crate::error::Result;

/// Where in the run an adaptation happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdaptStage {
    /// Root steps done: the time of the data (e.g. the parity of an in-place AA stream).
    pub steps: u64,
}

/// The blocks refined by an adaptation, grouped by the level of their new children:
/// level `l`'s children have the parents `parents[offsets[l] .. offsets[l + 1]]`
/// (ascending IDs within a level; `offsets` is empty when nothing was refined). The
/// children of a parent `p` are `child[p] .. child[p] + 2^D` ([`Mesh::arrays`]).
#[derive(Clone, Copy)]
pub struct RefinedBlocks<'a> {
    /// Refined blocks, grouped by level.
    pub parents: &'a Buffer<u32>,
    /// Offset of each level in `parents` (`max_levels + 1` entries, or none).
    pub offsets: &'a [usize],
}

/// The blocks with children whose ghost layers an adaptation may have changed (the
/// minimal map's parents, except those just refined), per level, ascending within a
/// level: level `l`'s are [`Self::level`]`(l)`, `ranges[l] = (offset, count)` of `ids`.
#[derive(Clone, Copy)]
pub struct RelinkedBlocks<'a> {
    /// Every level's block IDs, one level after the other.
    pub ids: &'a Buffer<u32>,
    /// Per level (all but the finest), where its list lies in `ids`: `(offset, count)`.
    pub ranges: &'a [(usize, usize)],
}

impl<'a> RelinkedBlocks<'a> {
    /// Number of levels listed.
    pub fn levels(&self) -> usize {
        self.ranges.len()
    }

    /// Level `l`'s blocks (empty past the levels listed).
    pub fn level(&self, l: usize) -> Result<DeviceSlice<'a, u32>> {
        let (offset, count) = self.ranges.get(l).copied().unwrap_or((0, 0));
        self.ids.slice(offset..offset + count)
    }
}

/// Data stored per block of a [`Mesh`], updated by the adaptation through these hooks
/// (see the module documentation). Every hook runs on the mesh's device, in the order
/// `before_coarsen` → the mesh routine → `fill_new_children` → `after_relink`; the mesh
/// is read-only to them.
pub trait BlockData<D: Dim> {
    /// Before the mesh routine, with the marks set: make the parents that may be
    /// coarsened hold their children's data (they become leaves; their children's IDs
    /// are freed).
    fn before_coarsen(&mut self, mesh: &Mesh<D>, stage: AdaptStage) -> Result<()>;

    /// After the mesh routine: give the new children of `refined` their data (from their
    /// parents).
    fn fill_new_children(&mut self, mesh: &Mesh<D>, refined: RefinedBlocks<'_>, stage: AdaptStage) -> Result<()>;

    /// After the new children are filled: rebuild what depends on the connectivity, and
    /// update the parents of `relinked` whose children's ghost layers changed.
    fn after_relink(&mut self, mesh: &Mesh<D>, relinked: RelinkedBlocks<'_>, stage: AdaptStage) -> Result<()>;

    /// The data of the blocks with IDs in `blocks`, as bytes (block after block in ID
    /// order; the layout is the implementation's). Checkpoints store `0 .. high_water`.
    fn serialize(&self, mesh: &Mesh<D>, blocks: Range<usize>) -> Result<Vec<u8>>;

    /// Restores what [`Self::serialize`] wrote for `blocks` (the mesh already restored),
    /// and rebuilds any data derived from it; an error if `bytes` does not have the
    /// length `blocks` needs.
    fn deserialize(&mut self, mesh: &Mesh<D>, blocks: Range<usize>, bytes: &[u8]) -> Result<()>;
}

/// What the block-data hooks of one [`Mesh::adapt_blocks`] cost, all fields together:
/// wall time (zero unless [`AdaptWorkspace::profile`] is set) and submissions to the
/// device (CUDA; counted whether profiling or not).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HookTimes {
    /// [`BlockData::before_coarsen`].
    pub before_coarsen: Lap,
    /// [`BlockData::fill_new_children`], with the mesh's list of relinked parents.
    pub fill_new_children: Lap,
    /// [`BlockData::after_relink`].
    pub after_relink: Lap,
}

impl<D: Dim> Mesh<D> {
    /// Adapts the mesh to its marks ([`Self::adapt_with`]) and carries every field of
    /// `data` through it with the [`BlockData`] hooks. If the routine fails (a full pool:
    /// [`crate::Error::OutOfMemory`] for "the block pool", forest unchanged), the fields
    /// keep their data (`before_coarsen` only averaged children into their parents).
    pub fn adapt_blocks(
        &mut self,
        ws: &mut AdaptWorkspace,
        data: &mut [&mut dyn BlockData<D>],
        stage: AdaptStage,
    ) -> Result<(AdaptReport, HookTimes)> {
        let mut watch = Stopwatch::new(self.device.clone(), ws.profile);
        let mut times = HookTimes::default();
        for d in data.iter_mut() {
            d.before_coarsen(self, stage)?;
        }
        times.before_coarsen = watch.lap()?;
        let report = self.adapt_with(ws)?;
        // The mesh routine times and counts its own steps (the report); this lap only
        // moves the stopwatch's base past it.
        watch.lap()?;
        {
            let (parents, offsets) = ws.refined_by_level();
            let refined = RefinedBlocks { parents, offsets };
            for d in data.iter_mut() {
                d.fill_new_children(self, refined, stage)?;
            }
        }
        self.relinked_parents(ws)?;
        times.fill_new_children = watch.lap()?;
        let relinked = RelinkedBlocks { ids: &ws.relinked_ids, ranges: &ws.relinked_ranges };
        for d in data.iter_mut() {
            d.after_relink(self, relinked, stage)?;
        }
        times.after_relink = watch.lap()?;
        Ok((report, times))
    }
}

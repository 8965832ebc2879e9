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

use ramus_kernels::amr::args::RelinkedParentsArgs;
use ramus_kernels::amr::build::RelinkedParents;
use ramus_kernels::Dim;

use super::workspace::run;
use super::{AdaptReport, AdaptWorkspace, Mesh};
use crate::backend::primitives::{compact_segments, Scratch};
use crate::backend::stopwatch::Stopwatch;
use crate::backend::{Buffer, DeviceSlice, DeviceSliceMut, Lap, Views};
use crate::error::{Error, Result};

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

/// The blocks with children whose ghost layers an adaptation may have changed: the
/// minimal map's blocks with children, except those just refined (their children were
/// filled from them), per level (all but the finest). They come unlisted: one flag per
/// level and map block says whether that block is on that level's list, so that a
/// [`BlockData`] can compact them together with lists of its own, with one read-back
/// for all ([`Self::flag`]; the solver builds them with its work lists), or list them
/// on their own ([`Self::lists`]: a compaction and a read-back).
#[derive(Clone, Copy)]
pub struct RelinkedBlocks<'a> {
    /// The adapt's minimal map (ascending IDs).
    map: DeviceSlice<'a, u32>,
    /// The blocks it refined (ascending IDs): the first `refined_count`.
    refined: DeviceSlice<'a, u32>,
    refined_count: usize,
    /// Levels with lists: all but the finest.
    levels: usize,
}

impl<'a> RelinkedBlocks<'a> {
    /// The relinked blocks of the last adapt on `ws` (its map and refined blocks), on a
    /// mesh of `max_levels` levels.
    pub(crate) fn of(ws: &'a AdaptWorkspace, max_levels: usize) -> Result<Self> {
        Ok(RelinkedBlocks {
            map: ws.map.slice(..ws.relinked)?,
            refined: ws.to_refine.view(),
            refined_count: ws.n_refined,
            levels: max_levels.saturating_sub(1),
        })
    }

    /// Number of levels with lists: all but the finest, none after an adapt without a
    /// map (nothing marked).
    pub fn levels(&self) -> usize {
        if self.map.is_empty() {
            0
        } else {
            self.levels
        }
    }

    /// Flags per level: level `l`'s are items `l · per_level() .. (l + 1) · per_level()`
    /// of [`Self::flag`].
    pub fn per_level(&self) -> usize {
        self.map.len()
    }

    /// Items that [`Self::flag`] writes: [`Self::levels`] × [`Self::per_level`].
    pub fn items(&self) -> usize {
        self.levels() * self.per_level()
    }

    /// For every item `i` (level `l = i / per_level()`, map block `b = map[i mod
    /// per_level()]`): `ids[i] = b`, and `flags[i] = 1` if `b` is on level `l`, has
    /// children and was not just refined, else 0. Compacting each level's items (e.g.
    /// with [`crate::backend::primitives::compact_segments`]) lists its relinked blocks
    /// in ascending order. One launch for every level; an error if `ids` or `flags`
    /// hold fewer than [`Self::items`] or more than 2³² are needed.
    pub fn flag<D: Dim>(
        &self,
        mesh: &Mesh<D>,
        ids: DeviceSliceMut<'_, u32>,
        flags: DeviceSliceMut<'_, u32>,
    ) -> Result<()> {
        let total = self.items();
        if total == 0 {
            return Ok(());
        }
        if total > u32::MAX as usize {
            return Err(Error::invalid("relinked blocks × levels", total, "fewer than 2^32 (u32 indices)"));
        }
        if ids.len() < total || flags.len() < total {
            return Err(Error::invalid(
                "relinked flag outputs",
                format!("{} ids, {} flags", ids.len(), flags.len()),
                format!("at least {total} each (levels × map blocks)"),
            ));
        }
        let pool = mesh.arrays();
        let a = RelinkedParentsArgs::<Views<'_>> {
            level: pool.level.view(),
            status: pool.status.view(),
            map: self.map,
            refined: self.refined,
            refined_count: self.refined_count as i32,
            per_level: self.per_level() as u32,
            ids,
            valid: flags,
        };
        run::<RelinkedParents<D>>(mesh.device(), total, a)
    }

    /// Every level's list, compacted here (buffers allocated for this call, one
    /// read-back): for a [`BlockData`] without a compaction of its own to share.
    pub fn lists<D: Dim>(&self, mesh: &Mesh<D>) -> Result<RelinkedLists> {
        let dev = mesh.device();
        let total = self.items();
        let mut lists = RelinkedLists { ids: dev.zeros(total.max(1))?, ranges: vec![(0, 0); self.levels()] };
        if total == 0 {
            return Ok(lists);
        }
        let (mut values, mut flags) = (dev.zeros::<u32>(total)?, dev.zeros::<u32>(total)?);
        self.flag(mesh, values.view_mut(), flags.view_mut())?;
        let starts: Vec<usize> = (0..self.levels()).map(|l| l * self.per_level()).collect();
        let mut scratch = Scratch::new(dev);
        lists.ranges = compact_segments(dev, &mut scratch, &flags, &values, total, &mut lists.ids, &starts)?;
        Ok(lists)
    }
}

/// The relinked blocks of every level, listed ([`RelinkedBlocks::lists`]).
pub struct RelinkedLists {
    /// Every level's block IDs, one level after the other.
    pub ids: Buffer<u32>,
    /// Per level (all but the finest), where its list lies in `ids`: `(offset, count)`.
    pub ranges: Vec<(usize, usize)>,
}

impl RelinkedLists {
    /// Number of levels listed.
    pub fn levels(&self) -> usize {
        self.ranges.len()
    }

    /// Level `l`'s blocks, ascending (empty past the levels listed).
    pub fn level(&self, l: usize) -> Result<DeviceSlice<'_, u32>> {
        let (offset, count) = self.ranges.get(l).copied().unwrap_or((0, 0));
        self.ids.slice(offset..offset + count)
    }
}

/// Data stored per block of a [`Mesh`], updated by the adaptation through these hooks
/// (see the module documentation). Every hook runs on the mesh's device, in the order
/// `before_coarsen` → the mesh routine → `after_connectivity` → `fill_new_children` →
/// `after_relink`; the mesh is read-only to them.
pub trait BlockData<D: Dim> {
    /// Before the mesh routine, with the marks set: make the parents that may be
    /// coarsened hold their children's data (they become leaves; their children's IDs
    /// are freed).
    fn before_coarsen(&mut self, mesh: &Mesh<D>, stage: AdaptStage) -> Result<()>;

    /// After the mesh routine, before any data is filled: rebuild what depends only on the
    /// new connectivity (work lists, boundary data; `relinked` is the list that
    /// [`Self::after_relink`] gets). Whatever this reads back from the device waits for
    /// the mesh routine only, not for the fill's work, which is queued after it and then
    /// runs while the caller goes on (the solver's work lists: its next root steps are
    /// recorded meanwhile). Nothing by default.
    fn after_connectivity(&mut self, mesh: &Mesh<D>, relinked: RelinkedBlocks<'_>, stage: AdaptStage) -> Result<()> {
        let _ = (mesh, relinked, stage);
        Ok(())
    }

    /// After the mesh routine: give the new children of `refined` their data (from their
    /// parents).
    fn fill_new_children(&mut self, mesh: &Mesh<D>, refined: RefinedBlocks<'_>, stage: AdaptStage) -> Result<()>;

    /// After the new children are filled: update the parents of `relinked` whose
    /// children's ghost layers changed (and rebuild what depends on the connectivity, if
    /// [`Self::after_connectivity`] did not).
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
    /// [`BlockData::after_connectivity`].
    pub after_connectivity: Lap,
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
    ///
    /// The hooks' work is queued behind the mesh routine's without a wait, and none
    /// follows it: the report's `elapsed` is the host's time up to the hooks, and the
    /// caller waits for the device when it needs to.
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
        // No wait between the mesh routine and the hooks: they queue behind it.
        let report = self.adapt_queued(ws, false)?;
        // The mesh routine times and counts its own steps (the report); this lap only
        // moves the stopwatch's base past it.
        watch.lap()?;
        let relinked = RelinkedBlocks::of(ws, self.spec.max_levels)?;
        for d in data.iter_mut() {
            d.after_connectivity(self, relinked, stage)?;
        }
        times.after_connectivity = watch.lap()?;
        {
            let (parents, offsets) = ws.refined_by_level();
            let refined = RefinedBlocks { parents, offsets };
            for d in data.iter_mut() {
                d.fill_new_children(self, refined, stage)?;
            }
        }
        times.fill_new_children = watch.lap()?;
        for d in data.iter_mut() {
            d.after_relink(self, relinked, stage)?;
        }
        times.after_relink = watch.lap()?;
        Ok((report, times))
    }
}

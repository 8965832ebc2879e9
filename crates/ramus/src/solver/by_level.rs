//! Blocks of every level picked by one [`FlagBlocks`] selector (the parents that a read
//! of the solution saves), built as [`super::schedule`]
//! builds its lists: one flagging launch over every level (flags and block IDs), one
//! compaction of all levels ([`prim::compact_segments`]) and one read-back for every
//! level's length, where a compaction per level took four launches and a copy.

use ramus_kernels::schedule::{FlagArgs, FlagBlocks, SELECT_OBSTACLE_LEAVES, SELECT_WALL_BLOCKS};
use ramus_kernels::Dim;

use crate::amr::workspace::ensure;
use crate::amr::Mesh;
use crate::backend::primitives::{self as prim, Scratch};
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::{Error, Result};

/// Per-level lists of picked blocks, in ID-set order, in one buffer.
pub(crate) struct ByLevel {
    /// Every level's list, one after the other.
    ids: Buffer<u32>,
    /// `(offset, length)` of each level's list in `ids`.
    ranges: Vec<(usize, usize)>,
    /// The compaction's input: a flag and the block ID per block of the chosen levels.
    flags: Buffer<u32>,
    values: Buffer<u32>,
    scratch: Scratch,
}

impl ByLevel {
    pub fn new(dev: &Device) -> Self {
        ByLevel {
            ids: Buffer::Host(Vec::new()),
            ranges: Vec::new(),
            flags: Buffer::Host(Vec::new()),
            values: Buffer::Host(Vec::new()),
            scratch: Scratch::new(dev),
        }
    }

    /// Number of blocks in level `l`'s list (0 for a level not built).
    pub fn len(&self, l: usize) -> usize {
        self.ranges.get(l).map_or(0, |r| r.1)
    }

    /// Level `l`'s list.
    pub fn level(&self, l: usize) -> Result<DeviceSlice<'_, u32>> {
        let (offset, len) = self.ranges.get(l).copied().unwrap_or((0, 0));
        self.ids.slice(offset..offset + len)
    }

    /// Rebuilds the lists: level `l`'s holds the blocks of its ID set that `which` (a
    /// `SELECT_*` of [`ramus_kernels::schedule`], with `level_of`) picks, for the levels
    /// `l` with `chosen(l)`; the other levels' lists are empty.
    pub fn rebuild<D: Dim>(
        &mut self,
        mesh: &Mesh<D>,
        which: u32,
        level_of: i32,
        chosen: impl Fn(usize) -> bool,
    ) -> Result<()> {
        if which == SELECT_OBSTACLE_LEAVES || which == SELECT_WALL_BLOCKS {
            return Err(Error::invalid("selector", which, "one that needs no boundary flags"));
        }
        let dev = mesh.device();
        let levels = mesh.max_levels();
        let counts: Vec<usize> = (0..levels).map(|l| if chosen(l) { mesh.blocks_per_level()[l] } else { 0 }).collect();
        self.ranges = vec![(0, 0); levels];
        // Level `l`'s blocks begin at `off[l]`.
        let mut off = vec![0; levels + 1];
        for l in 0..levels {
            off[l + 1] = off[l] + counts[l];
        }
        let n = off[levels];
        if n == 0 {
            return Ok(());
        }
        if n > u32::MAX as usize {
            return Err(Error::invalid("blocks in the per-level lists", n, "fewer than 2^32 (u32 indices)"));
        }
        for buf in [&mut self.flags, &mut self.values, &mut self.ids] {
            ensure(dev, buf, n)?;
        }
        let pool = mesh.arrays();
        let args = FlagArgs::<Views> {
            sets: mesh.level_sets(&chosen)?,
            block_mask: pool.block_mask.view(),
            status: pool.status.view(),
            level: pool.level.view(),
            level_of,
            onb: DeviceSlice::none(),
            flags: self.flags.slice_mut(..n)?,
            values: self.values.slice_mut(..n)?,
            select: which,
        };
        // SAFETY: the ID sets hold active IDs of the pool; the selectors that read `onb`
        // are refused above.
        unsafe { dev.launch::<FlagBlocks>(n, args)? };
        self.ranges = prim::compact_segments(
            dev,
            &mut self.scratch,
            &self.flags,
            &self.values,
            n,
            &mut self.ids,
            &off[..levels],
        )?;
        Ok(())
    }
}

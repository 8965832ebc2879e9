//! The per-level work lists of the recursive advance (paper, section "Grid Advancement"),
//! rebuilt on the device after every adapt from the levels' ID sets by flagging and
//! compaction, with one read-back for all their lengths. Routines that touch only some
//! kinds of block but run once per adaptation (criterion, synchronisation) take whole ID
//! sets instead, their kernels skipping the other blocks.

use ramus_kernels::schedule::{
    FlagLists, FlagListsArgs, LISTS, LIST_BOUNDARY, LIST_GHOSTS, LIST_OBSTACLE, LIST_PARENTS, LIST_WALLS,
};
use ramus_kernels::Dim;

use crate::amr::workspace::ensure;
use crate::amr::{Mesh, RelinkedBlocks};
use crate::backend::primitives::{self as prim, Scratch};
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::{Error, Result};

/// Where one list lies in [`Schedule`]'s buffer of all lists.
#[derive(Clone, Copy, Default)]
pub(crate) struct List {
    offset: usize,
    pub len: usize,
}

/// The lists of one level. Every block of a level collides and streams (its ID set):
/// parents too, so that the coarse cells under the ghost layer, which feed the coarse
/// leaves next door, and every cell a cubic interpolation reads evolve with the level.
#[derive(Default)]
pub(crate) struct LevelLists {
    /// Blocks with ghost cells (filled from the level above).
    pub ghosts: List,
    /// Blocks with a child that has ghost cells (averaged from the level below after
    /// every step of this level).
    pub parents: List,
    /// Leaves next to solid cells (the force on an obstacle is summed over them); empty
    /// without obstacles.
    pub obstacle: List,
    /// Blocks of any status next to solid cells (the wall pass of curved or moving walls
    /// works on them); empty unless that pass runs.
    pub walls: List,
    /// Blocks with boundary flags (a link that leaves the fluid, a solid cell): the ones a
    /// bulk step skips and a plain step over this list takes
    /// (`ramus_kernels::stream::bulk_faster`); empty unless a step is split so.
    pub boundary: List,
}

impl LevelLists {
    /// The lists with their `LIST_*` bits, in the bits' order.
    fn lists(&mut self) -> [(&mut List, u32); LISTS] {
        [
            (&mut self.ghosts, LIST_GHOSTS),
            (&mut self.parents, LIST_PARENTS),
            (&mut self.obstacle, LIST_OBSTACLE),
            (&mut self.walls, LIST_WALLS),
            (&mut self.boundary, LIST_BOUNDARY),
        ]
    }
}

/// Work lists of every level.
pub(crate) struct Schedule {
    pub levels: Vec<LevelLists>,
    /// After an adaptation, the blocks whose children's ghost layers it may have changed,
    /// per level ([`RelinkedBlocks`], compacted with the work lists); empty otherwise.
    pub relinked: Vec<List>,
    /// Whether the lists hold each level's boundary blocks ([`LevelLists::boundary`]):
    /// a bulk step needs them to step those blocks at all.
    pub has_boundary: bool,
    /// Every list, one after the other (grouped by kind, then level).
    ids: Buffer<u32>,
    /// The compaction's input: flags and block IDs, one segment per kind of list.
    flags: Buffer<u32>,
    values: Buffer<u32>,
    scratch: Scratch,
}

impl Schedule {
    pub fn new(dev: &Device, levels: usize) -> Self {
        Schedule {
            levels: (0..levels).map(|_| LevelLists::default()).collect(),
            relinked: Vec::new(),
            has_boundary: false,
            ids: Buffer::Host(Vec::new()),
            flags: Buffer::Host(Vec::new()),
            values: Buffer::Host(Vec::new()),
            scratch: Scratch::new(dev),
        }
    }

    /// The block IDs of `list`, one of this schedule's.
    pub fn ids(&self, list: &List) -> Result<DeviceSlice<'_, u32>> {
        self.ids.slice(list.offset..list.offset + list.len)
    }

    /// Rebuilds every list from the mesh's ID sets, statuses and block masks, and the
    /// solver's boundary flags `onb` (`None`: no obstacles, no obstacle lists, and the
    /// mesh's flags are the step's); the wall lists only with `walls` (the wall pass runs);
    /// the boundary lists only with `boundary` (a step is split into bulk and boundary
    /// blocks); and, after an adaptation, the
    /// relinked blocks' lists ([`Self::relinked`]). One flagging launch over every level
    /// writes every kind of work list at once ([`FlagLists`]), one more the relinked
    /// blocks' flags behind them ([`RelinkedBlocks::flag`]), then one compaction builds
    /// them all and one read-back gives their offsets and lengths: a handful of launches
    /// however many levels and lists.
    pub fn rebuild<D: Dim>(
        &mut self,
        mesh: &Mesh<D>,
        onb: Option<&Buffer<u32>>,
        walls: bool,
        boundary: bool,
        relinked: Option<RelinkedBlocks<'_>>,
    ) -> Result<()> {
        let dev = mesh.device();
        let counts = mesh.blocks_per_level();
        let levels = self.levels.len();
        let kinds = match (onb, walls) {
            (None, _) => LIST_GHOSTS | LIST_PARENTS,
            (Some(_), false) => LIST_GHOSTS | LIST_PARENTS | LIST_OBSTACLE,
            (Some(_), true) => LIST_GHOSTS | LIST_PARENTS | LIST_OBSTACLE | LIST_WALLS,
        } | if boundary { LIST_BOUNDARY } else { 0 };
        let segments = kinds.count_ones() as usize;
        let stride: usize = counts[..levels].iter().sum();
        let n_lists = segments * stride;
        let n_relinked = relinked.map_or(0, |r| r.items());
        let n = n_lists + n_relinked;
        self.levels.iter_mut().for_each(|l| *l = LevelLists::default());
        self.relinked.clear();
        self.has_boundary = boundary;
        if n == 0 {
            return Ok(());
        }
        if n > u32::MAX as usize {
            return Err(Error::invalid("blocks in the work lists", n, "fewer than 2^32 (u32 indices)"));
        }
        for buf in [&mut self.flags, &mut self.values, &mut self.ids] {
            ensure(dev, buf, n)?;
        }
        // Level `l`'s items begin at `off[l]` in every segment.
        let mut off = vec![0; levels + 1];
        for l in 0..levels {
            off[l + 1] = off[l] + counts[l];
        }
        if stride > 0 {
            let pool = mesh.arrays();
            let args = FlagListsArgs::<Views> {
                sets: mesh.level_sets(|l| l < levels)?,
                block_mask: pool.block_mask.view(),
                status: pool.status.view(),
                // The flags the step reads: the solver's with obstacles, else the mesh's.
                onb: onb.map_or(if boundary { pool.onb.view() } else { DeviceSlice::none() }, Buffer::view),
                lists: kinds,
                stride: stride as u32,
                flags: self.flags.view_mut(),
                values: self.values.view_mut(),
            };
            // SAFETY: the ID sets hold active IDs of the pool; `onb` holds a flag per pool block
            // (or is empty, and then read by no list).
            unsafe { dev.launch::<FlagLists>(stride, args)? };
        }
        // Kind `k`'s level `l` begins at `k * stride + off[l]`: segment `k * levels + l`;
        // the relinked blocks' level `l` at `n_lists + l * per_level`, after them.
        let mut starts: Vec<usize> =
            (0..segments).flat_map(|k| off[..levels].iter().map(move |&o| k * stride + o)).collect();
        if let Some(r) = relinked.filter(|r| r.items() > 0) {
            let (values, flags) = (self.values.slice_mut(n_lists..n)?, self.flags.slice_mut(n_lists..n)?);
            r.flag(mesh, values, flags)?;
            starts.extend((0..r.levels()).map(|l| n_lists + l * r.per_level()));
        }
        let ranges =
            prim::compact_segments(dev, &mut self.scratch, &self.flags, &self.values, n, &mut self.ids, &starts)?;
        // One range per start, in the starts' order: kind, then level, then the relinked
        // blocks by level.
        let mut ranges = ranges.into_iter();
        let mut by_level: Vec<_> = self.levels.iter_mut().map(LevelLists::lists).collect();
        for k in 0..LISTS {
            for lists in by_level.iter_mut() {
                let (list, bit) = &mut lists[k];
                if kinds & *bit != 0 {
                    if let Some((offset, len)) = ranges.next() {
                        **list = List { offset, len };
                    }
                }
            }
        }
        self.relinked = ranges.map(|(offset, len)| List { offset, len }).collect();
        Ok(())
    }
}

//! The per-level work lists of the recursive advance (paper, section "Grid Advancement"),
//! rebuilt on the device after every adapt from the levels' ID sets by flagging and
//! compaction, with one read-back for all their lengths. Routines that touch only some
//! kinds of block but run once per adaptation (criterion, synchronisation) take whole ID
//! sets instead, their kernels skipping the other blocks.

use ramus_kernels::schedule::{
    FlagArgs, FlagBlocks, SELECT_CHILD_GHOSTS, SELECT_GHOSTS, SELECT_OBSTACLE_LEAVES, SELECT_WALL_BLOCKS,
};
use ramus_kernels::Dim;

use crate::amr::workspace::ensure;
use crate::amr::Mesh;
use crate::backend::primitives::{self as prim, Scratch};
use crate::backend::{Buffer, Device, DeviceSlice, Views};
use crate::error::Result;

/// A device list of block IDs and its length.
pub(crate) struct List {
    pub ids: Buffer<u32>,
    pub len: usize,
}

impl List {
    fn new() -> Self {
        List { ids: Buffer::Host(Vec::new()), len: 0 }
    }
}

/// Lists per level.
const LISTS: usize = 4;

/// The lists of one level. Every block of a level collides and streams (its ID set):
/// parents too, so that the coarse cells under the ghost layer, which feed the coarse
/// leaves next door, and every cell a cubic interpolation reads evolve with the level.
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
}

impl LevelLists {
    fn new() -> Self {
        LevelLists { ghosts: List::new(), parents: List::new(), obstacle: List::new(), walls: List::new() }
    }

    fn lists(&mut self) -> [(&mut List, u32); LISTS] {
        [
            (&mut self.ghosts, SELECT_GHOSTS),
            (&mut self.parents, SELECT_CHILD_GHOSTS),
            (&mut self.obstacle, SELECT_OBSTACLE_LEAVES),
            (&mut self.walls, SELECT_WALL_BLOCKS),
        ]
    }
}

/// Work lists of every level.
pub(crate) struct Schedule {
    pub levels: Vec<LevelLists>,
    flags: Buffer<u32>,
    counts: Buffer<u64>,
    scratch: Scratch,
}

impl Schedule {
    pub fn new(dev: &Device, levels: usize) -> Self {
        Schedule {
            levels: (0..levels).map(|_| LevelLists::new()).collect(),
            flags: Buffer::Host(Vec::new()),
            counts: Buffer::Host(Vec::new()),
            scratch: Scratch::new(dev),
        }
    }

    /// Rebuilds every list from the mesh's ID sets, statuses and block masks, and the
    /// solver's boundary flags `onb` (`None`: no obstacles, no obstacle lists); the wall
    /// lists only with `walls` (the wall pass runs).
    pub fn rebuild<D: Dim>(&mut self, mesh: &Mesh<D>, onb: Option<&Buffer<u32>>, walls: bool) -> Result<()> {
        let dev = mesh.device();
        let slots = LISTS * self.levels.len();
        if self.counts.len() < slots || matches!((dev, &self.counts), (Device::Cuda(_), Buffer::Host(_))) {
            self.counts = dev.zeros(slots)?;
        }
        // Empty lists are known on the host: their slots are neither written nor read.
        let mut built = vec![false; slots];
        for (l, lists) in self.levels.iter_mut().enumerate() {
            let n = mesh.blocks_per_level()[l];
            for (k, (list, which)) in lists.lists().into_iter().enumerate() {
                let slot = LISTS * l + k;
                list.len = 0;
                let solid_list = which == SELECT_OBSTACLE_LEAVES || which == SELECT_WALL_BLOCKS;
                if n == 0 || (solid_list && onb.is_none()) || (which == SELECT_WALL_BLOCKS && !walls) {
                    continue;
                }
                flag(mesh, mesh.id_sets()[l].slice(..n)?, which, 0, onb, &mut self.flags)?;
                ensure(dev, &mut list.ids, n)?;
                prim::compact_deferred(
                    dev,
                    &mut self.scratch,
                    &self.flags,
                    &mesh.id_sets()[l],
                    n,
                    &mut list.ids,
                    &mut self.counts,
                    slot,
                )?;
                built[slot] = true;
            }
        }
        let last = built.iter().rposition(|&b| b).map_or(0, |s| s + 1);
        let counts = dev.read(&self.counts, 0..last)?;
        for (l, lists) in self.levels.iter_mut().enumerate() {
            for (k, (list, _)) in lists.lists().into_iter().enumerate() {
                let slot = LISTS * l + k;
                if built[slot] {
                    list.len = counts[slot] as usize;
                }
            }
        }
        Ok(())
    }
}

/// Writes `flags[i] = 1` for the blocks of `ids` picked by `which` (a `SELECT_*` of
/// [`ramus_kernels::schedule`], with `level_of` for `SELECT_LEVEL`).
pub(crate) fn flag<D: Dim>(
    mesh: &Mesh<D>,
    ids: DeviceSlice<'_, u32>,
    which: u32,
    level_of: i32,
    onb: Option<&Buffer<u32>>,
    flags: &mut Buffer<u32>,
) -> Result<()> {
    let dev = mesh.device();
    let n = ids.len();
    ensure(dev, flags, n)?;
    let pool = mesh.arrays();
    let args = FlagArgs::<Views> {
        ids,
        block_mask: pool.block_mask.view(),
        status: pool.status.view(),
        level: pool.level.view(),
        level_of,
        child: pool.child.view(),
        mark: pool.mark.view(),
        onb: match onb {
            Some(b) => b.view(),
            None => DeviceSlice::none(),
        },
        flags: flags.view_mut(),
        select: which,
    };
    // SAFETY: `ids` holds `n` active IDs of the pool; `flags` holds `n` items.
    unsafe { dev.launch::<FlagBlocks>(n, args) }
}

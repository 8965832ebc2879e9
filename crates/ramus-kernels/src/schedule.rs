//! Work lists of the multi-level solver (paper, section "Grid Advancement"): which blocks
//! of a level take part in interpolation, averaging and the refinement criterion. Built
//! on the device after every adapt from a level's ID set by flagging and compaction.

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::level_sets::LevelSets;
use crate::amr::{status, BLOCK_CHILD_HAS_GHOSTS, BLOCK_HAS_GHOSTS};
use crate::kernel_args;
use crate::lattice::Dim;
use crate::launch::Kernel;

/// [`FlagBlocks`] selector: blocks with ghost cells (targets of interpolation).
pub const SELECT_GHOSTS: u32 = 0;
/// [`FlagBlocks`] selector: blocks with a child that has ghost cells (targets of the
/// per-step averaging).
pub const SELECT_CHILD_GHOSTS: u32 = 1;
/// [`FlagBlocks`] selector: leaves.
pub const SELECT_LEAVES: u32 = 2;
/// [`FlagBlocks`] selector: blocks with children.
pub const SELECT_PARENTS: u32 = 3;
/// [`FlagBlocks`] selector: blocks on level `FlagArgs::level_of`.
pub const SELECT_LEVEL: u32 = 4;
/// [`FlagBlocks`] selector: leaves flagged [`crate::stream::ONB_SOLID`] in `FlagArgs::onb`
/// (the blocks the force on an obstacle is summed over).
pub const SELECT_OBSTACLE_LEAVES: u32 = 6;
/// [`FlagBlocks`] selector: blocks of any status flagged [`crate::stream::ONB_SOLID`] in
/// `FlagArgs::onb` (the blocks the wall pass of [`crate::curved`] works on).
pub const SELECT_WALL_BLOCKS: u32 = 7;

kernel_args! {
    /// Arguments of [`FlagBlocks`].
    pub struct FlagArgs {
        /// The blocks to flag: the chosen levels' ID sets, item `i` their `i`-th block.
        pub sets: args LevelSets<M>,
        /// Per-block masks of the pool.
        pub block_mask: ref u32,
        /// Per-block statuses of the pool.
        pub status: ref i32,
        /// Per-block levels of the pool.
        pub level: ref i32,
        /// The level [`SELECT_LEVEL`] picks.
        pub level_of: val i32,
        /// The solver's per-block flags ([`SELECT_OBSTACLE_LEAVES`]; may be null otherwise).
        pub onb: ref u32,
        /// One flag per item.
        pub flags: mut u32,
        /// The block of each item: the compaction's values next to the flags (written
        /// here, where a copy per level cost a driver call).
        pub values: mut u32,
        /// `SELECT_*`.
        pub select: val u32,
    }
}

/// `flags[i] = 1` if item `i`'s block `b` ([`LevelSets::block`]) is selected (see the
/// `SELECT_*` constants), and `values[i] = b`: every level in one launch.
pub struct FlagBlocks;

impl Kernel for FlagBlocks {
    type Args = FlagArgs;

    fn max_items(l: &FlagArgs<Lens>) -> Option<usize> {
        Some(l.sets.items().min(l.flags).min(l.values))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &FlagArgs) {
        let b = a.sets.block(i).2 as usize;
        *a.values.add(i) = b as u32;
        let mask = *a.block_mask.add(b);
        let s = *a.status.add(b);
        let yes = match a.select {
            SELECT_GHOSTS => mask & BLOCK_HAS_GHOSTS != 0,
            SELECT_CHILD_GHOSTS => mask & BLOCK_CHILD_HAS_GHOSTS != 0,
            SELECT_LEAVES => s == status::UNREFINED,
            SELECT_PARENTS => status::has_children(s),
            SELECT_LEVEL => *a.level.add(b) == a.level_of,
            SELECT_OBSTACLE_LEAVES => s == status::UNREFINED && *a.onb.add(b) & crate::stream::ONB_SOLID != 0,
            SELECT_WALL_BLOCKS => *a.onb.add(b) & crate::stream::ONB_SOLID != 0,
            _ => false,
        };
        *a.flags.add(i) = yes as u32;
    }
}

/// [`FlagLists`] list bit: blocks with ghost cells ([`SELECT_GHOSTS`]).
pub const LIST_GHOSTS: u32 = 1;
/// [`FlagLists`] list bit: blocks with a child that has ghost cells ([`SELECT_CHILD_GHOSTS`]).
pub const LIST_PARENTS: u32 = 2;
/// [`FlagLists`] list bit: leaves next to solid cells ([`SELECT_OBSTACLE_LEAVES`]).
pub const LIST_OBSTACLE: u32 = 4;
/// [`FlagLists`] list bit: blocks of any status next to solid cells ([`SELECT_WALL_BLOCKS`]).
pub const LIST_WALLS: u32 = 8;
/// [`FlagLists`] list bit: blocks with boundary flags (`onb` not zero: a link that leaves
/// the fluid or a solid cell), the ones a bulk step skips
/// ([`crate::stream::StreamCollideBulk`]).
pub const LIST_BOUNDARY: u32 = 16;
/// Number of `LIST_*` bits.
pub const LISTS: usize = 5;

kernel_args! {
    /// Arguments of [`FlagLists`].
    pub struct FlagListsArgs {
        /// Every level's ID set: item `i` is their `i`-th block.
        pub sets: args LevelSets<M>,
        /// Per-block masks of the pool.
        pub block_mask: ref u32,
        /// Per-block statuses of the pool.
        pub status: ref i32,
        /// The step's per-block flags (read only with [`LIST_OBSTACLE`], [`LIST_WALLS`] or
        /// [`LIST_BOUNDARY`]).
        pub onb: ref u32,
        /// The lists built (`LIST_*` bits); the `k`-th set bit owns segment `k`.
        pub lists: val u32,
        /// Items per segment (the blocks of all levels).
        pub stride: val u32,
        /// One flag per item of every segment.
        pub flags: mut u32,
        /// The block ID of every item of every segment.
        pub values: mut u32,
    }
}

/// Flags every level's blocks for every list at once, in a layout of one segment per list,
/// each holding all levels' ID sets one after the other: item `i` (block `b`,
/// [`LevelSets::block`]) writes `flags[k * stride + i]` (is `b` in list `k`?) and `b`
/// beside it, so that one compaction of all segments builds every list of every level, in
/// ID-set order, as [`FlagBlocks`] and one compaction per list and level did.
pub struct FlagLists;

impl Kernel for FlagLists {
    type Args = FlagListsArgs;

    fn max_items(l: &FlagListsArgs<Lens>) -> Option<usize> {
        let stride = l.stride as usize;
        let segments = (l.lists & 0x1F).count_ones() as usize;
        let reads_onb = l.lists & (LIST_OBSTACLE | LIST_WALLS | LIST_BOUNDARY) != 0;
        let fits = segments * stride <= l.flags.min(l.values) && !(reads_onb && l.onb == 0);
        Some(if fits { l.sets.items().min(stride) } else { 0 })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &FlagListsArgs) {
        let b = a.sets.block(i).2;
        let mask = *a.block_mask.add(b as usize);
        let leaf = *a.status.add(b as usize) == status::UNREFINED;
        let onb = if a.lists & (LIST_OBSTACLE | LIST_WALLS | LIST_BOUNDARY) != 0 { *a.onb.add(b as usize) } else { 0 };
        let solid = a.lists & (LIST_OBSTACLE | LIST_WALLS) != 0 && onb & crate::stream::ONB_SOLID != 0;
        let mut at = i;
        // Written out per list (no run-time indexed local array, which would live in local
        // memory on the GPU).
        let mut put = |bit: u32, yes: bool| {
            if a.lists & bit != 0 {
                *a.flags.add(at) = yes as u32;
                *a.values.add(at) = b;
                at += a.stride as usize;
            }
        };
        put(LIST_GHOSTS, mask & BLOCK_HAS_GHOSTS != 0);
        put(LIST_PARENTS, mask & BLOCK_CHILD_HAS_GHOSTS != 0);
        put(LIST_OBSTACLE, leaf && solid);
        put(LIST_WALLS, solid);
        put(LIST_BOUNDARY, onb != 0);
    }
}

kernel_args! {
    /// Arguments of [`ExpandChildren`].
    pub struct ExpandArgs {
        /// Parent blocks.
        pub parents: ref u32,
        /// First child of each block of the pool.
        pub child: ref i32,
        /// `2^D` children per parent, in parent order.
        pub out: mut u32,
    }
}

/// `out[i] = child[parents[i / 2^D]] + i mod 2^D`: the children of a list of parents (e.g.
/// the blocks just created by refinement, to be filled by interpolation).
pub struct ExpandChildren<D>(PhantomData<D>);

impl<D: Dim> Kernel for ExpandChildren<D> {
    type Args = ExpandArgs;

    fn max_items(l: &ExpandArgs<Lens>) -> Option<usize> {
        Some((l.parents * D::CHILDREN).min(l.out))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ExpandArgs) {
        let nc = D::CHILDREN;
        let q = *a.parents.add(i / nc) as usize;
        *a.out.add(i) = (*a.child.add(q) + (i % nc) as i32) as u32;
    }
}

//! Forest metadata and the kernels of the refinement-and-coarsening routine (paper,
//! section "Adaptive Mesh Refinement").
//!
//! # Data (one slot per block ID in a preallocated pool of `N` blocks)
//!
//! | array | size | meaning |
//! |---|---|---|
//! | `level` | N | grid level, `-1` for inactive slots |
//! | `origin` | 3N | lower corner, integer [`units`] (block-major: `origin[3b + a]`) |
//! | `status` | N | refinement status, [`status`] codes |
//! | `mark` | N | user request for this adapt: [`MARK_NONE`], [`MARK_REFINE`], [`MARK_COARSEN`] |
//! | `parent` | N | parent ID, `-1` for root blocks and inactive slots |
//! | `child` | N | first child ID (children are `child + k`, `k < 2^D`), `-1` if none |
//! | `nbr` | 3^D N | neighbour links, `nbr[b 3^D + k]` (see [`crate::block`]); centre = `b` |
//! | `nbr_child` | 3^D N | first child of each neighbour, [`NO_CHILD`] if it has none, the link's sentinel if there is no neighbour |
//! | `onb` | N | 1 if any `nbr` link of the block is negative |
//! | `block_mask` | N | [`BLOCK_HAS_GHOSTS`] / [`BLOCK_CHILD_HAS_GHOSTS`] bits |
//! | `cell_mask` | 4^D N | per cell: [`CELL_INTERIOR`], [`CELL_INTERFACE`], [`CELL_GHOST`] |
//!
//! Child `k` of a block sits at `(k & 1, (k >> 1) & 1, k >> 2)` halves of the parent
//! (x fastest, as cells in a block). Neighbour links use the offsets of
//! [`crate::block::link_index`].
//!
//! # Sentinels in `nbr` / `nbr_child`
//! - [`crate::block::N_SKIP`] (`-1`): no block at this level there — the region is
//!   covered by a coarser leaf (a coarse–fine interface);
//! - [`NO_CHILD`] (`-2`, `nbr_child` only): the neighbour exists but is a leaf;
//! - [`crate::block::boundary_link`] (`≤ -3`): outside the domain across the encoded wall
//!   faces (periodic faces wrap instead).

pub mod status {
    //! Refinement status of a block (paper, table `tab:amr_data_struct`, `cblock_ID_ref`).

    /// Free pool slot.
    pub const INACTIVE: i32 = -1;
    /// A leaf.
    pub const UNREFINED: i32 = 0;
    /// Has children, all leaves: may be coarsened.
    pub const REFINED: i32 = 1;
    /// Has children, at least one refined: coarsening it would orphan grandchildren.
    pub const REFINED_WITH_CHILD: i32 = 2;
    /// Has children and is never coarsened (frozen by the wall-distance rule).
    pub const REFINED_PERMANENT: i32 = 3;
    /// Transient, inside `adapt`: leaf to be refined.
    pub const MARKED_REFINE: i32 = 4;
    /// Transient, inside `adapt`: refined block whose children are to be removed.
    pub const MARKED_COARSEN: i32 = 5;
    /// Transient, inside `adapt`: child just created.
    pub const NEW: i32 = 6;
    /// Transient, inside `adapt`: child being removed.
    pub const REMOVE: i32 = 7;

    /// Whether a block with this status has children.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub const fn has_children(s: i32) -> bool {
        matches!(s, REFINED | REFINED_WITH_CHILD | REFINED_PERMANENT | MARKED_COARSEN)
    }
}

/// Whether block `b` is a candidate for coarsening, as the mesh routine's Preparation
/// decides: `REFINED` (its `children` children all leaves, not frozen) and every child
/// marked [`MARK_COARSEN`]. (2:1 balance may still revert it; no other block is coarsened.)
///
/// # Safety
/// `b` a block of the pool that `status`, `child` and `mark` describe.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn coarsening_candidate(
    status: *const i32,
    child: *const i32,
    mark: *const i32,
    b: usize,
    children: usize,
) -> bool {
    // SAFETY: the caller's contract; a `REFINED` block's children are blocks of the pool.
    unsafe {
        if *status.add(b) != status::REFINED {
            return false;
        }
        let c = *child.add(b) as usize;
        let mut all = true;
        for k in 0..children {
            all &= *mark.add(c + k) == MARK_COARSEN;
        }
        all
    }
}

/// `nbr_child` value of a neighbour that exists and has no children.
pub const NO_CHILD: i32 = -2;

/// No request for this block.
pub const MARK_NONE: i32 = 0;
/// Refine this leaf (ignored on non-leaves, at the level limit, or where 2:1 balance
/// forbids it).
pub const MARK_REFINE: i32 = 1;
/// Coarsen this leaf into its parent: honoured only when every sibling asks too, the
/// parent is not permanent, and 2:1 balance allows it.
pub const MARK_COARSEN: i32 = -1;

/// Cell far from any coarse–fine interface.
pub const CELL_INTERIOR: u8 = 0;
/// Third or fourth cell layer from a coarser region: averaged to the parent.
pub const CELL_INTERFACE: u8 = 1;
/// First or second cell layer next to a coarser region: filled by interpolation.
pub const CELL_GHOST: u8 = 2;

/// `block_mask` bit: the block has ghost or interface cells.
pub const BLOCK_HAS_GHOSTS: u32 = 1;
/// `block_mask` bit: a child of the block has ghost or interface cells.
pub const BLOCK_CHILD_HAS_GHOSTS: u32 = 2;

/// Levels a forest may have (0 … `MAX_LEVELS − 1`).
pub const MAX_LEVELS: usize = 12;

pub mod units {
    //! Integer coordinates: one unit is the width of a cell on the finest possible level
    //! (`MAX_LEVELS − 1`), so every block corner is an exact integer.

    use super::MAX_LEVELS;

    /// Width of a cell on the root level, in units.
    pub const ROOT_CELL: i32 = 1 << (MAX_LEVELS - 1);

    /// Width of a cell on `level`, in units.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub const fn cell(level: i32) -> i32 {
        ROOT_CELL >> level
    }

    /// Width of a block (4 cells) on `level`, in units.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub const fn block(level: i32) -> i32 {
        4 * cell(level)
    }
}

/// Position `(k & 1, (k >> 1) & 1, k >> 2)` of child `k` within its parent.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub const fn child_position(k: usize) -> [i32; 3] {
    [(k & 1) as i32, ((k >> 1) & 1) as i32, (k >> 2) as i32]
}

/// Refine this leaf and freeze the refinement: the block becomes
/// [`status::REFINED_PERMANENT`] instead of `REFINED` (set by the wall-distance rule with
/// freezing; otherwise treated as [`MARK_REFINE`]).
pub const MARK_REFINE_FREEZE: i32 = 2;

pub mod args;
pub mod build;
pub mod connect;
pub mod level_sets;
pub mod mark;
pub mod remove;
pub mod select;

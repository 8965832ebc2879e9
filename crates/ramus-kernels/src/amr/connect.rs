//! Kernels of the last step of the refinement-and-coarsening routine (paper, section
//! "Refinement and Coarsening": Update Connectivity and Designate Ghosts; section "Grid
//! Communication" for the ghost and interface cell layers).
//!
//! Connectivity runs in separate launches so that no item reads what another item of the
//! same launch writes: (1) `nbr_child` of the minimal map from the final `child`/`status`;
//! (2) `nbr` of the children of refined map blocks from their parents' `nbr_child` only;
//! (3) `nbr_child` and `onb` of those children from their new links; (4) masks.
//!
//! The link kernels run one item per link (block `i / N_nb`, link `i mod N_nb`), each
//! following one chain of loads; the mask kernel reads a block's links once, as bits in
//! the order of [`crate::block::link_index`].

use super::args::{amr_kernel, BlockList, Gather, NeighbourChildrenArgs};
use super::{status, BLOCK_CHILD_HAS_GHOSTS, BLOCK_HAS_GHOSTS, CELL_GHOST, CELL_INTERFACE, CELL_INTERIOR, NO_CHILD};
use crate::block::{link_index, link_offset, N_SKIP};
use crate::lattice::Dim;

/// `nbr_child` value of link `n`: the neighbour's first child, [`NO_CHILD`] for a leaf,
/// or the link's own sentinel.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn link_child(p: &super::args::Pool, n: i32) -> i32 {
    if n < 0 {
        n
    } else if status::has_children(*p.status.add(n as usize)) {
        *p.child.add(n as usize)
    } else {
        NO_CHILD
    }
}

amr_kernel!(
    /// Recomputes `nbr_child` of the blocks of `blocks` from their links and the final
    /// `child`/`status` of their neighbours: item `i` is link `i mod N_nb` of block
    /// `blocks[i / N_nb]`, so each item follows one chain of loads (a per-block loop
    /// serialised 27 chains behind its own stores: ~12 µs for one CTA, BENCHMARKS.md,
    /// fifteenth session). With `with_onb == 1` the block's first item also writes `onb`
    /// (any negative link).
    NeighbourChildren, NeighbourChildrenArgs, items(l) = l.blocks * D::NEIGHBORS, |i, a| {
        let p = &a.pool;
        let nb = D::NEIGHBORS;
        let (b, k) = (*a.blocks.add(i / nb) as usize, i % nb);
        let n = *p.nbr.add(b * nb + k);
        *p.nbr_child.add(b * nb + k) = link_child(p, n);
        if a.with_onb == 1 && k == 0 {
            let mut onb = false;
            for k in 0..nb {
                onb |= *p.nbr.add(b * nb + k) < 0;
            }
            *p.onb.add(b) = onb as u32;
        }
    }
);

amr_kernel!(
    /// Children of the refined blocks of `blocks`: `ids[i N_c + k] = child + k` and
    /// `valid = 1`, or `valid = 0` for leaves.
    GatherChildren, Gather, items(l) = l.blocks.min(l.ids / D::CHILDREN).min(l.valid / D::CHILDREN), |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        let nc = D::CHILDREN;
        let refined = status::has_children(*p.status.add(b));
        let c = *p.child.add(b);
        for k in 0..nc {
            *a.ids.add(i * nc + k) = if refined { (c as usize + k) as u32 } else { 0 };
            *a.valid.add(i * nc + k) = refined as u32;
        }
    }
);

amr_kernel!(
    /// **Update Connectivity**. Item `i` is link `j = i mod N_nb` of block `y = blocks[i /
    /// N_nb]` (the children of refined map blocks, and the map itself; root blocks are
    /// skipped, their links are fixed): link `j` (offset `o`) of child position `c0` is
    /// `q = c0 + o ∈ {-1..2}^D`, in the parent's neighbour `O = floor(q / 2)` at child
    /// position `q mod 2`: the parent's `nbr_child[O]` plus that child index if it is a
    /// child ID; `N_SKIP` if the neighbour is a leaf (or missing); else the boundary
    /// sentinel, passed down. Reads only the parent's `nbr_child` (a parent may itself be a
    /// child whose `nbr` this launch rewrites).
    ChildLinks, BlockList, items(l) = l.blocks * D::NEIGHBORS, |i, a| {
        let p = &a.pool;
        let nb = D::NEIGHBORS;
        let (y, j) = (*a.blocks.add(i / nb) as usize, i % nb);
        let q = *p.parent.add(y);
        if q < 0 {
            // A root block: its links never change.
            return;
        }
        let q = q as usize;
        let k = y as i32 - *p.child.add(q);
        let [ox, oy, oz] = link_offset(j, D::D);
        let (qx, qy, qz) = ((k & 1) + ox, ((k >> 1) & 1) + oy, (k >> 2) + oz);
        // Arithmetic shift and `& 1` are floor division and modulo by 2 for -1..2.
        let big = link_index([qx >> 1, qy >> 1, qz >> 1], D::D);
        let c = (qx & 1) + 2 * (qy & 1) + 4 * (qz & 1);
        let v = *p.nbr_child.add(q * nb + big);
        *p.nbr.add(y * nb + j) = if v >= 0 {
            v + c
        } else if v == NO_CHILD {
            N_SKIP
        } else {
            v
        };
    }
);

/// Class of cell `(x, y, z)` of a block whose [`N_SKIP`] links are the bits `skip` (link-index
/// order). Toward an `N_SKIP` direction `o` the cell's layer is the max over the crossed
/// axes of its distance to that face, edge or corner (1-based: `4 − x` toward `+1`, `x + 1`
/// toward `−1`); layers 1–2 are ghost cells, 3–4 interface cells, and ghost wins over
/// interface over interior. Every layer is at most 4 (blocks are 4 cells wide), so any
/// `N_SKIP` link makes the cell at least an interface cell; a layer is at most 2 exactly
/// when each crossed axis points to the side of the block the cell lies in (`x ≤ 1`:
/// `−1`, `x ≥ 2`: `+1`). The cell is therefore a ghost cell iff one of the `2^D − 1`
/// directions made of those sides is `N_SKIP`: a few bit tests instead of a loop over
/// `3^D` directions (which made the mask launch compute-bound: BENCHMARKS.md,
/// thirty-ninth session).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn cell_class<D: Dim>(skip: u32, x: i32, y: i32, z: i32) -> u8 {
    if skip == 0 {
        return CELL_INTERIOR;
    }
    let side = |c: i32| if c <= 1 { -1 } else { 1 };
    let s = [side(x), side(y), if D::D == 3 { side(z) } else { 0 }];
    let mut near = 0u32;
    for k in 1..(1usize << D::D) {
        let o =
            [if k & 1 != 0 { s[0] } else { 0 }, if k & 2 != 0 { s[1] } else { 0 }, if k & 4 != 0 { s[2] } else { 0 }];
        near |= 1 << link_index(o, D::D);
    }
    if skip & near != 0 {
        CELL_GHOST
    } else {
        CELL_INTERFACE
    }
}

/// Block `b`'s [`N_SKIP`] links as bits in link-index order (bit `j`: link `j` leads to
/// a coarser region), read by independent loads so that the loop over directions that
/// uses them loads nothing.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn skip_bits<D: Dim>(p: &super::args::Pool, b: usize) -> u32 {
    let mut s = 0u32;
    for k in 0..D::NEIGHBORS {
        s |= ((*p.nbr.add(b * D::NEIGHBORS + k) == N_SKIP) as u32) << k;
    }
    s
}

/// Whether a child of the refined block `b` has an [`N_SKIP`] link, from `b`'s own
/// `nbr_child`: [`ChildLinks`] derives each child link from the entry of `b`'s
/// neighbour in that direction, and gives `N_SKIP` exactly where that entry is
/// [`NO_CHILD`] (a leaf neighbour) or `N_SKIP` (none on `b`'s level); every direction of
/// `b` is some child's. One block's links instead of its `2^D` children's.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn children_skip<D: Dim>(p: &super::args::Pool, b: usize) -> bool {
    let mut s = false;
    for k in 0..D::NEIGHBORS {
        let v = *p.nbr_child.add(b * D::NEIGHBORS + k);
        s |= v == NO_CHILD || v == N_SKIP;
    }
    s
}

amr_kernel!(
    /// **Designate Ghosts**. Item `i` over `blocks` × `4^D` cells: the cell's class from
    /// its block's `N_SKIP` links (`cell_class`: ghost cells in the two layers next to a
    /// coarser region, interface cells in the next two, interior cells otherwise).
    /// The block's first cell also writes the block mask: [`BLOCK_HAS_GHOSTS`] if the block
    /// has a non-interior cell (exactly when one of its links is `N_SKIP`),
    /// [`BLOCK_CHILD_HAS_GHOSTS`] if a child has (`children_skip`) — derived from links,
    /// not from other items' masks, so the launch has no read/write overlap, and one launch
    /// instead of two. Each item loads its block's links once, as bits (`skip_bits`),
    /// with independent loads: a loop of dependent loads per cell and the first cell's
    /// loop over its children's links took 45 % of this launch's time in the 3D cavity
    /// (BENCHMARKS.md, thirty-ninth session).
    Masks, BlockList, items(l) = l.blocks * D::BLOCK_CELLS, |i, a| {
        let p = &a.pool;
        let m = D::BLOCK_CELLS;
        let b = *a.blocks.add(i / m) as usize;
        let t = i & (m - 1);
        let skip = skip_bits::<D>(p, b);
        let v = cell_class::<D>(skip, (t & 3) as i32, ((t >> 2) & 3) as i32, (t >> 4) as i32);
        *p.cell_mask.add(b * m + t) = v;
        if t == 0 {
            let mut mask = if skip != 0 { BLOCK_HAS_GHOSTS } else { 0 };
            if status::has_children(*p.status.add(b)) && children_skip::<D>(p, b) {
                mask |= BLOCK_CHILD_HAS_GHOSTS;
            }
            *p.block_mask.add(b) = mask;
        }
    }
);

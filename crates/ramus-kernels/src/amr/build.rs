//! Kernels of the middle steps of the refinement-and-coarsening routine (paper, section
//! "Refinement and Coarsening"): Build / Reset Children, Coarsen and Refine Blocks in ID
//! Sets, and Finalize Ref. IDs (branch/leaf statuses).
//!
//! Items over "blocks × children" decode `i` as block `i / N_c`, child `i % N_c`; `N_c`
//! is a power of two, so these are shifts.

use super::args::{
    amr_kernel, AppendChildrenArgs, BlockList, Gather, PerBlock, PushGapsArgs, RelinkedParentsArgs, ResetRemovedArgs,
};
use super::{child_position, status, units, MARK_NONE, MARK_REFINE_FREEZE};
use crate::block::N_SKIP;

amr_kernel!(
    /// **Build / Reset Children**, new children. Item `i` over `blocks` (to refine) ×
    /// `N_c`: child `k` of `b` gets level + 1, origin = parent origin + position(k) × block
    /// width on the child level, status `NEW`, parent `b`, no children, no mark. Links and
    /// masks are set in S8.
    BuildChildren, BlockList, items(l) = l.blocks * D::CHILDREN, |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i / D::CHILDREN) as usize;
        let k = i & (D::CHILDREN - 1);
        let c = (*p.child.add(b) as usize) + k;
        let l = *p.level.add(b) + 1;
        let w = units::block(l);
        let pos = child_position(k);
        *p.level.add(c) = l;
        *p.origin.add(3 * c) = *p.origin.add(3 * b) + pos[0] * w;
        *p.origin.add(3 * c + 1) = *p.origin.add(3 * b + 1) + pos[1] * w;
        *p.origin.add(3 * c + 2) = *p.origin.add(3 * b + 2) + pos[2] * w;
        *p.status.add(c) = status::NEW;
        *p.parent.add(c) = b as i32;
        *p.child.add(c) = -1;
        *p.mark.add(c) = MARK_NONE;
    }
);

amr_kernel!(
    /// **Build / Reset Children**, removed children. Item `i` over `blocks` (to
    /// coarsen) × `N_c`: the child's status becomes `REMOVE` (the per-block flag that S5
    /// uses to pull it from its ID set).
    MarkRemoved, BlockList, items(l) = l.blocks * D::CHILDREN, |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i / D::CHILDREN) as usize;
        let c = (*p.child.add(b) as usize) + (i & (D::CHILDREN - 1));
        *p.status.add(c) = status::REMOVE;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**: `out[i] = 1` if ID-set entry `blocks[i]` is being
    /// removed (status `REMOVE`), for `remove_if`.
    FlagRemoved, PerBlock, items(l) = l.blocks.min(l.out), |i, a| {
        *a.out.add(i) = (*a.pool.status.add(*a.blocks.add(i) as usize) == status::REMOVE) as u32;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**, gap set. Item `i` over `groups` × `N_c`: group `g`
    /// (first child `first_children[g]`) goes to gap slots `base + (groups − 1 − g) N_c ..`,
    /// in descending ID order, so that taking gaps from the end yields group 0 first, each
    /// group ascending and contiguous (what S2 relies on).
    PushGaps, PushGapsArgs, items(l) = if l.gaps < l.base.max(0) as usize + l.groups.max(0) as usize * D::CHILDREN { 0 } else { l.first_children.min(l.groups.max(0) as usize) * D::CHILDREN }, |i, a| {
        let nc = D::CHILDREN;
        let g = i / nc;
        let j = i & (nc - 1);
        let slot = a.base as usize + (a.groups as usize - 1 - g) * nc + j;
        *a.gaps.add(slot) = *a.first_children.add(g) + (nc - 1 - j) as u32;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**, reset. Item `i` over groups × `N_c` × `4^D`: cell
    /// `i % 4^D` of block `first_children[i / (N_c 4^D)] + (i / 4^D) % N_c`, which returns
    /// to the free state of a fresh pool (level −1, `INACTIVE`, no parent/children, links
    /// `N_SKIP`, zero origin and masks). Each cell clears its own mask, the block's first
    /// `3^D` cells one link each, its first cell the rest: one item per block wrote about
    /// a hundred words one after another (24–43 µs per launch in the 3D cavity,
    /// BENCHMARKS.md, thirty-ninth session).
    ResetRemoved, ResetRemovedArgs, items(l) = l.first_children * D::CHILDREN * D::BLOCK_CELLS, |i, a| {
        let p = &a.pool;
        let m = D::BLOCK_CELLS;
        let t = i & (m - 1);
        let j = i / m;
        let c = (*a.first_children.add(j / D::CHILDREN) as usize) + (j & (D::CHILDREN - 1));
        *p.cell_mask.add(c * m + t) = 0;
        let nb = D::NEIGHBORS;
        if t < nb {
            *p.nbr.add(c * nb + t) = N_SKIP;
            *p.nbr_child.add(c * nb + t) = N_SKIP;
        }
        if t == 0 {
            *p.level.add(c) = -1;
            *p.origin.add(3 * c) = 0;
            *p.origin.add(3 * c + 1) = 0;
            *p.origin.add(3 * c + 2) = 0;
            *p.status.add(c) = status::INACTIVE;
            *p.mark.add(c) = MARK_NONE;
            *p.parent.add(c) = -1;
            *p.child.add(c) = -1;
            *p.onb.add(c) = 0;
            *p.block_mask.add(c) = 0;
        }
    }
);

amr_kernel!(
    /// **Refine Blocks in ID Sets**. Item `i` over (parents `parents[first ..]` of one
    /// level) × `N_c`: `id_set[len + i]` = child `i % N_c` of parent `parents[first + i / N_c]`.
    AppendChildren, AppendChildrenArgs, items(l) = (l.parents.saturating_sub(l.first.max(0) as usize) * D::CHILDREN).min(l.id_set.saturating_sub(l.len.max(0) as usize)), |i, a| {
        let q = *a.parents.add(a.first as usize + i / D::CHILDREN) as usize;
        let c = *a.pool.child.add(q) as usize + (i & (D::CHILDREN - 1));
        *a.id_set.add(a.len as usize + i) = c as u32;
    }
);

amr_kernel!(
    /// **Finalize Ref. IDs**, refined blocks. Item `i` over the refined blocks: the block
    /// becomes `REFINED` (`REFINED_PERMANENT` if its mark asked for a frozen refinement) and
    /// its new children become leaves.
    FinalizeRefined, BlockList, items(l) = l.blocks, |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        let frozen = *p.mark.add(b) == MARK_REFINE_FREEZE;
        *p.status.add(b) = if frozen { status::REFINED_PERMANENT } else { status::REFINED };
        let c = *p.child.add(b) as usize;
        for k in 0..D::CHILDREN {
            *p.status.add(c + k) = status::UNREFINED;
        }
    }
);

amr_kernel!(
    /// **Finalize Ref. IDs**, coarsened blocks: leaves again, without children.
    FinalizeCoarsened, BlockList, items(l) = l.blocks, |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        *p.status.add(b) = status::UNREFINED;
        *p.child.add(b) = -1;
    }
);

amr_kernel!(
    /// Parents of the marked blocks `blocks`: `ids[i] = parent`, `valid[i] = 1` if there is
    /// one (root blocks have none).
    GatherParents, Gather, items(l) = l.blocks.min(l.ids).min(l.valid), |i, a| {
        let q = *a.pool.parent.add(*a.blocks.add(i) as usize);
        *a.ids.add(i) = if q >= 0 { q as u32 } else { 0 };
        *a.valid.add(i) = (q >= 0) as u32;
    }
);

amr_kernel!(
    /// After an adapt, over the minimal map once per level (one launch for all levels):
    /// item `i` takes `q = map[i % per_level]` and level `l = i / per_level`;
    /// `ids[i] = q`, `valid[i] = 1` if `q` is on level `l`, has children and is not among
    /// the blocks just refined (`refined[..refined_count]`, ascending). Only children of
    /// map blocks change their ghost layers (blocks appear or vanish one level below the
    /// marked blocks, whose neighbours form the map), and the children of a block just
    /// refined were filled from it.
    RelinkedParents, RelinkedParentsArgs, items(l) = if l.refined < l.refined_count.max(0) as usize || l.map < l.per_level as usize || l.per_level == 0 { 0 } else { l.ids.min(l.valid) }, |i, a| {
        let per = a.per_level as usize;
        let q = *a.map.add(i % per);
        let level = (i / per) as i32;
        let mut keep = *a.level.add(q as usize) == level && status::has_children(*a.status.add(q as usize));
        if keep {
            // Binary search of the refined blocks.
            let (mut lo, mut hi) = (0usize, a.refined_count as usize);
            while lo < hi {
                let mid = (lo + hi) >> 1;
                if *a.refined.add(mid) < q {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            keep = !(lo < a.refined_count as usize && *a.refined.add(lo) == q);
        }
        *a.ids.add(i) = q;
        *a.valid.add(i) = keep as u32;
    }
);

amr_kernel!(
    /// **Finalize Ref. IDs**, branch/leaf relations. Item `i` over distinct parents:
    /// `out[i]` = `REFINED_WITH_CHILD` if some child has children (coarsening the block
    /// first would orphan them), `REFINED` if all children are leaves; permanent blocks
    /// stay permanent. Written to `status` by a second launch ([`super::select::WriteStatus`])
    /// because a parent may also be a child another item reads.
    BranchStatus, PerBlock, items(l) = l.blocks.min(l.out), |i, a| {
        let p = &a.pool;
        let q = *a.blocks.add(i) as usize;
        let s = *p.status.add(q);
        let mut out = s;
        if s == status::REFINED || s == status::REFINED_WITH_CHILD {
            let c = *p.child.add(q) as usize;
            let mut branch = false;
            for k in 0..D::CHILDREN {
                branch |= status::has_children(*p.status.add(c + k));
            }
            out = if branch { status::REFINED_WITH_CHILD } else { status::REFINED };
        }
        *a.out.add(i) = out as u32;
    }
);

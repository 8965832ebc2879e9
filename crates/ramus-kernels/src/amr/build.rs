//! Kernels of the middle steps of the refinement-and-coarsening routine (paper, section
//! "Refinement and Coarsening"): Build / Reset Children, Coarsen and Refine Blocks in ID
//! Sets, and Finalize Ref. IDs (branch/leaf statuses).
//!
//! Items over "blocks × children" decode `i` as block `i / N_c`, child `i % N_c`; `N_c`
//! is a power of two, so these are shifts.

use super::args::{amr_kernel, ListArgs};
use super::{child_position, status, units, MARK_NONE, MARK_REFINE_FREEZE};
use crate::block::N_SKIP;

amr_kernel!(
    /// **Build / Reset Children**, new children. Item `i` over `list` (blocks to refine) ×
    /// `N_c`: child `k` of `b` gets level + 1, origin = parent origin + position(k) × block
    /// width on the child level, status `NEW`, parent `b`, no children, no mark. Links and
    /// masks are set in S8.
    BuildChildren, ListArgs, items(l) = l.list * D::CHILDREN, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i / D::CHILDREN) as usize;
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
    /// **Build / Reset Children**, removed children. Item `i` over `list` (blocks to
    /// coarsen) × `N_c`: the child's status becomes `REMOVE` (the per-block flag that S5
    /// uses to pull it from its ID set).
    MarkRemoved, ListArgs, items(l) = l.list * D::CHILDREN, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i / D::CHILDREN) as usize;
        let c = (*p.child.add(b) as usize) + (i & (D::CHILDREN - 1));
        *p.status.add(c) = status::REMOVE;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**: `out[i] = 1` if ID-set entry `list[i]` is being
    /// removed (status `REMOVE`), for `remove_if`.
    FlagRemoved, ListArgs, items(l) = l.list.min(l.out), |i, a| {
        *a.out.add(i) = (*a.pool.status.add(*a.list.add(i) as usize) == status::REMOVE) as u32;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**, gap set. Item `i` over `b` groups × `N_c`: group `g`
    /// (first child `aux[g]`) goes to gap slots `a + (b − 1 − g) N_c ..`, in descending ID
    /// order, so that taking gaps from the end yields group 0 first, each group ascending
    /// and contiguous (what S2 relies on).
    PushGaps, ListArgs, items(l) = if l.out < l.a.max(0) as usize + l.b.max(0) as usize * D::CHILDREN { 0 } else { l.aux.min(l.b.max(0) as usize) * D::CHILDREN }, |i, a| {
        let nc = D::CHILDREN;
        let g = i / nc;
        let j = i & (nc - 1);
        let slot = a.a as usize + (a.b as usize - 1 - g) * nc + j;
        *a.out.add(slot) = *a.aux.add(g) + (nc - 1 - j) as u32;
    }
);

amr_kernel!(
    /// **Coarsen Blocks in ID Sets**, reset. Item `i` over groups × `N_c`: block
    /// `aux[i / N_c] + i % N_c` returns to the free state of a fresh pool (level −1,
    /// `INACTIVE`, no parent/children, links `N_SKIP`, zero origin and masks).
    ResetRemoved, ListArgs, items(l) = l.aux * D::CHILDREN, |i, a| {
        let p = &a.pool;
        let c = (*a.aux.add(i / D::CHILDREN) as usize) + (i & (D::CHILDREN - 1));
        *p.level.add(c) = -1;
        *p.origin.add(3 * c) = 0;
        *p.origin.add(3 * c + 1) = 0;
        *p.origin.add(3 * c + 2) = 0;
        *p.status.add(c) = status::INACTIVE;
        *p.mark.add(c) = MARK_NONE;
        *p.parent.add(c) = -1;
        *p.child.add(c) = -1;
        let nb = D::NEIGHBORS;
        for k in 0..nb {
            *p.nbr.add(c * nb + k) = N_SKIP;
            *p.nbr_child.add(c * nb + k) = N_SKIP;
        }
        *p.onb.add(c) = 0;
        *p.block_mask.add(c) = 0;
        for t in 0..D::BLOCK_CELLS {
            *p.cell_mask.add(c * D::BLOCK_CELLS + t) = 0;
        }
    }
);

amr_kernel!(
    /// **Refine Blocks in ID Sets**. Item `i` over (parents `aux[a ..]` of one level) ×
    /// `N_c`: `out[b + i]` = child `i % N_c` of parent `aux[a + i / N_c]` (`out` is the ID
    /// set of the children's level, `b` its current length).
    AppendChildren, ListArgs, items(l) = (l.aux.saturating_sub(l.a.max(0) as usize) * D::CHILDREN).min(l.out.saturating_sub(l.b.max(0) as usize)), |i, a| {
        let q = *a.aux.add(a.a as usize + i / D::CHILDREN) as usize;
        let c = *a.pool.child.add(q) as usize + (i & (D::CHILDREN - 1));
        *a.out.add(a.b as usize + i) = c as u32;
    }
);

amr_kernel!(
    /// **Finalize Ref. IDs**, refined blocks. Item `i` over the refined blocks: the block
    /// becomes `REFINED` (`REFINED_PERMANENT` if its mark asked for a frozen refinement) and
    /// its new children become leaves.
    FinalizeRefined, ListArgs, items(l) = l.list, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i) as usize;
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
    FinalizeCoarsened, ListArgs, items(l) = l.list, |i, a| {
        let p = &a.pool;
        let b = *a.list.add(i) as usize;
        *p.status.add(b) = status::UNREFINED;
        *p.child.add(b) = -1;
    }
);

amr_kernel!(
    /// Parents of the marked blocks `list`: `out[i] = parent`, `out2[i] = 1` if there is
    /// one (root blocks have none).
    GatherParents, ListArgs, items(l) = l.list.min(l.out).min(l.out2), |i, a| {
        let q = *a.pool.parent.add(*a.list.add(i) as usize);
        *a.out.add(i) = if q >= 0 { q as u32 } else { 0 };
        *a.out2.add(i) = (q >= 0) as u32;
    }
);

amr_kernel!(
    /// After an adapt, over the minimal map `list`: `out[i] = list[i]`, `out2[i] = 1` if
    /// the block is on level `a`, has children and is not among the blocks just refined
    /// (`aux[..b]`, ascending). Only children of map blocks change their ghost layers
    /// (blocks appear or vanish one level below the marked blocks, whose neighbours form
    /// the map), and the children of a block just refined were filled from it.
    RelinkedParents, ListArgs, items(l) = if l.aux < l.b.max(0) as usize { 0 } else { l.list.min(l.out).min(l.out2) }, |i, a| {
        let p = &a.pool;
        let q = *a.list.add(i);
        let mut keep = *p.level.add(q as usize) == a.a && status::has_children(*p.status.add(q as usize));
        if keep {
            // Binary search of the refined blocks.
            let (mut lo, mut hi) = (0usize, a.b as usize);
            while lo < hi {
                let mid = (lo + hi) >> 1;
                if *a.aux.add(mid) < q {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            keep = !(lo < a.b as usize && *a.aux.add(lo) == q);
        }
        *a.out.add(i) = q;
        *a.out2.add(i) = keep as u32;
    }
);

amr_kernel!(
    /// **Finalize Ref. IDs**, branch/leaf relations. Item `i` over distinct parents:
    /// `out[i]` = `REFINED_WITH_CHILD` if some child has children (coarsening the block
    /// first would orphan them), `REFINED` if all children are leaves; permanent blocks
    /// stay permanent. Written to `status` by a second launch ([`super::select::WriteStatus`])
    /// because a parent may also be a child another item reads.
    BranchStatus, ListArgs, items(l) = l.list.min(l.out), |i, a| {
        let p = &a.pool;
        let q = *a.list.add(i) as usize;
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

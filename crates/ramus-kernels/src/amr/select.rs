//! Kernels of the first steps of the refinement-and-coarsening routine (paper, section
//! "Refinement and Coarsening"): Preparation, Minimal Map, Map Gaps to Marked Blocks and
//! Enforcement of 2:1 Balancing, plus small list utilities used by every step.
//!
//! Each work item writes only the locations of its own block (or its own list slot), and
//! reads nothing another item of the same launch writes: the kernels are deterministic and
//! race-free on both backends. (`Sanitize`'s two counters are atomic adds, whose sums do
//! not depend on the order; the order of the blocks it lists does, and the host sorts
//! them.)

use core::sync::atomic::{AtomicU32, Ordering};

use super::args::{
    amr_kernel, AssignChildrenArgs, BlockList, Gather, LevelGroupsArgs, LevelKeysArgs, LevelOffsetsArgs, PerBlock,
    SanitizeArgs, SetValue, WriteValues,
};
use super::{status, MARK_COARSEN, MARK_NONE, MARK_REFINE, MARK_REFINE_FREEZE, NO_CHILD};
use crate::block::N_SKIP;
use crate::primitives::{sliced_counts, Cta};

/// Whether a mark asks for refinement.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub const fn is_refine_mark(m: i32) -> bool {
    m == MARK_REFINE || m == MARK_REFINE_FREEZE
}

amr_kernel!(
    /// **Preparation** (sanitize the marks). Item `i`, block `b = active[i]`:
    /// `refine[i] = 1` if `b` is a leaf marked for refinement below the level limit
    /// `max_levels` whose same-level neighbours all exist (2:1: no `N_SKIP` link —
    /// the children would touch a region two levels coarser); `coarsen[i] = 1` if `b` is
    /// `REFINED` (all children leaves, not permanent) and every child is marked
    /// [`MARK_COARSEN`]. Statuses are not touched, so a refused adapt leaves the forest as
    /// it was.
    /// Each flag set is counted in `counts` (refine, coarsen) with an atomic add, and the
    /// first `listed_max` of each kind are listed in `listed_refine` / `listed_coarsen` at
    /// the slot the add returns (less the counter's `base`: the counters are not zeroed
    /// between adapts, which would cost a launch).
    Sanitize, SanitizeArgs, items(l) = if l.counts < 2 || l.listed_refine.min(l.listed_coarsen) < l.listed_max as usize {
        0
    } else {
        l.active.min(l.refine).min(l.coarsen)
    }, |i, a| {
        let p = &a.pool;
        let b = *a.active.add(i) as usize;
        let s = *p.status.add(b);
        let mut refine = 0u32;
        let mut coarsen = 0u32;
        if s == status::UNREFINED && is_refine_mark(*p.mark.add(b)) && *p.level.add(b) + 1 < a.max_levels {
            let mut ok = true;
            for k in 0..D::NEIGHBORS {
                ok &= *p.nbr.add(b * D::NEIGHBORS + k) != N_SKIP;
            }
            refine = ok as u32;
        } else if s == status::REFINED {
            let c = *p.child.add(b) as usize;
            let mut all = true;
            for k in 0..D::CHILDREN {
                all &= *p.status.add(c + k) == status::UNREFINED && *p.mark.add(c + k) == MARK_COARSEN;
            }
            coarsen = all as u32;
        }
        *a.refine.add(i) = refine;
        *a.coarsen.add(i) = coarsen;
        if refine | coarsen != 0 {
            // SAFETY: `counts` holds two aligned u32 that only atomics touch during the
            // launch. The flags exclude each other: `coarsen` picks the slot.
            let n = AtomicU32::from_ptr(a.counts.add(coarsen as usize)).fetch_add(1, Ordering::Relaxed);
            let slot = n.wrapping_sub(if coarsen != 0 { a.base_coarsen } else { a.base_refine });
            if slot < a.listed_max {
                let list = if coarsen != 0 { a.listed_coarsen } else { a.listed_refine };
                *list.add(slot as usize) = b as u32;
            }
        }
    }
);

amr_kernel!(
    /// `status[blocks[i]] = values[i]` (distinct IDs).
    WriteStatus, WriteValues, items(l) = l.blocks.min(l.values), |i, a| {
        *a.pool.status.add(*a.blocks.add(i) as usize) = *a.values.add(i) as i32;
    }
);

amr_kernel!(
    /// `mark[blocks[i]] = value` for active blocks (distinct IDs).
    SetMark, SetValue, items(l) = l.blocks, |i, a| {
        let b = *a.blocks.add(i) as usize;
        if *a.pool.status.add(b) != status::INACTIVE {
            *a.pool.mark.add(b) = a.value;
        }
    }
);

amr_kernel!(
    /// `mark[blocks[i]] = values[i]` for active blocks (distinct IDs).
    WriteMark, WriteValues, items(l) = l.blocks.min(l.values), |i, a| {
        let b = *a.blocks.add(i) as usize;
        if *a.pool.status.add(b) != status::INACTIVE {
            *a.pool.mark.add(b) = *a.values.add(i) as i32;
        }
    }
);

amr_kernel!(
    /// `mark[blocks[i]] = MARK_NONE`: the marks are consumed by one adapt.
    ClearMarks, BlockList, items(l) = l.blocks, |i, a| {
        *a.pool.mark.add(*a.blocks.add(i) as usize) = MARK_NONE;
    }
);

amr_kernel!(
    /// `out[i] = 1` if `blocks[i]` is a leaf, else 0.
    FlagLeaves, PerBlock, items(l) = l.blocks.min(l.out), |i, a| {
        *a.out.add(i) = (*a.pool.status.add(*a.blocks.add(i) as usize) == status::UNREFINED) as u32;
    }
);

amr_kernel!(
    /// Leaf geometry for the host: `out[4i..4i+4] = (level, origin)` of `blocks[i]`.
    Geometry, PerBlock, items(l) = l.blocks.min(l.out / 4), |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        *a.out.add(4 * i) = *p.level.add(b) as u32;
        *a.out.add(4 * i + 1) = *p.origin.add(3 * b) as u32;
        *a.out.add(4 * i + 2) = *p.origin.add(3 * b + 1) as u32;
        *a.out.add(4 * i + 3) = *p.origin.add(3 * b + 2) as u32;
    }
);

amr_kernel!(
    /// **Minimal Map**, first pass. Item `i` copies link `k = i mod 3^D` of the marked
    /// block `blocks[i / 3^D]` (the centre one is the block itself) to `ids[i]`, with
    /// `valid = 1` for valid IDs and 0 for sentinels (compacted, sorted and made unique by
    /// the host with the primitives). One link per item: no item waits on a chain of loads.
    GatherNeighbours, Gather, items(l) = (l.blocks * D::NEIGHBORS).min(l.ids).min(l.valid), |i, a| {
        let nb = D::NEIGHBORS;
        let b = *a.blocks.add(i / nb) as usize;
        let n = *a.pool.nbr.add(b * nb + i % nb);
        *a.ids.add(i) = if n >= 0 { n as u32 } else { 0 };
        *a.valid.add(i) = (n >= 0) as u32;
    }
);

amr_kernel!(
    /// **Map Gaps to Marked Blocks**. Item `i` over the blocks to refine (ascending IDs):
    /// `child[to_refine[i]]` = its first child, `gaps[gap_count − 1 − i N_c]`: gaps are
    /// taken from the end (smallest free IDs first), and each group of `N_c` read
    /// backwards is contiguous and ascending. Also sets the block's status to
    /// `MARKED_REFINE` (the Preparation's marking, which nothing reads before this step:
    /// one launch less).
    AssignChildren, AssignChildrenArgs, items(l) = l.to_refine.min(l.gaps.min(l.gap_count.max(0) as usize).div_ceil(D::CHILDREN)), |i, a| {
        let b = *a.to_refine.add(i) as usize;
        *a.pool.child.add(b) = *a.gaps.add(a.gap_count as usize - 1 - i * D::CHILDREN) as i32;
        *a.pool.status.add(b) = status::MARKED_REFINE;
    }
);

amr_kernel!(
    /// **Map Gaps to Marked Blocks**, connectivity. Item `i` is link `i mod N_nb` of the
    /// map block `blocks[i / N_nb]`: a link to a block marked for refinement gets
    /// `nbr_child` = that block's new first child. Writes only the item's own `nbr_child`
    /// entry; one link per item, so that no item waits on 27 chains of loads.
    MapRefinedNeighbours, BlockList, items(l) = l.blocks * D::NEIGHBORS, |i, a| {
        let p = &a.pool;
        let nb = D::NEIGHBORS;
        let e = *a.blocks.add(i / nb) as usize * nb + i % nb;
        let n = *p.nbr.add(e);
        if n >= 0 && *p.status.add(n as usize) == status::MARKED_REFINE {
            *p.nbr_child.add(e) = *p.child.add(n as usize);
        }
    }
);

amr_kernel!(
    /// **Enforcement of 2:1 Balancing** (b). Item `i` over the blocks marked for coarsening:
    /// a child violates if any of its `nbr_child` is a child ID (a neighbour of the child —
    /// itself included — has or will get children, which would then touch a block two
    /// levels coarser). If any child violates, the block stays `REFINED` and
    /// `out[i] = 0`; else it becomes `MARKED_COARSEN` and `out[i] = 1`.
    CheckCoarsen, PerBlock, items(l) = l.blocks.min(l.out), |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        let c = *p.child.add(b) as usize;
        let nb = D::NEIGHBORS;
        let mut violated = false;
        for k in 0..D::CHILDREN * nb {
            violated |= *p.nbr_child.add(c * nb + k) >= 0;
        }
        // The Preparation's `MARKED_COARSEN`, which nothing reads before this step, is
        // set here (one launch less) where the coarsening holds.
        *p.status.add(b) = if violated { status::REFINED } else { status::MARKED_COARSEN };
        *a.out.add(i) = (!violated) as u32;
    }
);

amr_kernel!(
    /// **Enforcement of 2:1 Balancing**, connectivity. Item `i` over the blocks that will be
    /// coarsened: each neighbour (centre excluded: S4/S5 still need the block's children)
    /// records that the block loses its children (`nbr_child` toward it = `NO_CHILD`). Two
    /// items never write the same entry: the entry of neighbour `n` in direction `d` names
    /// the single block `nbr[n][d]`.
    UnmapCoarsened, BlockList, items(l) = l.blocks, |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        let nb = D::NEIGHBORS;
        let centre = nb / 2;
        for k in 0..nb {
            let n = *p.nbr.add(b * nb + k);
            if k != centre && n >= 0 {
                *p.nbr_child.add(n as usize * nb + (nb - 1 - k)) = NO_CHILD;
            }
        }
    }
);

/// Sort key of block `b` in [`LevelKeys`] and [`LevelGroups`]: the level of its children.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn level_key(p: &super::args::Pool, b: usize) -> u32 {
    (*p.level.add(b) + 1) as u32
}

/// Sorted value of block `b` in [`LevelKeys`] and [`LevelGroups`]: its first child if
/// `first_child == 1`, else the block itself.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn level_value(p: &super::args::Pool, b: usize, first_child: u32) -> u32 {
    if first_child == 1 {
        *p.child.add(b) as u32
    } else {
        b as u32
    }
}

amr_kernel!(
    /// Sort keys by level: `keys[i] = level[blocks[i]] + 1` (the level of the children) and
    /// `values[i] = child[blocks[i]]` if `first_child == 1`, else `blocks[i]`.
    LevelKeys, LevelKeysArgs, items(l) = l.blocks.min(l.keys).min(l.values), |i, a| {
        let p = &a.pool;
        let b = *a.blocks.add(i) as usize;
        *a.keys.add(i) = level_key(p, b);
        *a.values.add(i) = level_value(p, b, a.first_child);
    }
);

/// What item `i` of [`LevelGroups`] counts over the blocks `j = first, first + step, …`
/// below `count`: for a block (`i < count`, key `k`), the blocks that precede it in a
/// stable sort by key; for offset `l = i − count`, the blocks with a key below `l`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn level_group_count(a: &LevelGroupsArgs, i: usize, first: usize, step: usize) -> u64 {
    let p = &a.pool;
    let n = a.count as usize;
    let key = |j: usize| level_key(p, *a.blocks.add(j) as usize);
    let (k, block) = if i < n { (key(i), true) } else { ((i - n) as u32, false) };
    let mut c = 0u64;
    let mut j = first;
    while j < n {
        let kj = key(j);
        c += (kj < k || (block && kj == k && j < i)) as u64;
        j += step;
    }
    c
}

/// Writes item `i` of [`LevelGroups`] from its count `c` ([`level_group_count`] over all
/// blocks): the block's value at its rank, or the offset.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn level_group_write(a: &LevelGroupsArgs, i: usize, c: u64) {
    let n = a.count as usize;
    if i < n {
        *a.values.add(c as usize) = level_value(&a.pool, *a.blocks.add(i) as usize, a.first_child);
    } else {
        *a.offsets.add(i - n) = c as u32;
    }
}

amr_kernel!(
    /// [`LevelKeys`], a stable sort by key and [`LevelOffsets`] in one launch, for short
    /// lists (O(count²) loads, where the three steps cost up to five launches and copies).
    /// Item `i < count`: block `blocks[i]` with key `k` = the level of its children goes
    /// to `values[r]`, `r` = the blocks with a smaller key or an equal key and a smaller
    /// index (the position a stable sort gives it); item `count + l`: `offsets[l]` = the
    /// blocks with key below `l`. The same output as the three steps. On CUDA
    /// [`level_groups_cooperative`] counts with several threads per item.
    LevelGroups, LevelGroupsArgs, items(l) = if l.blocks < l.count as usize || l.values < l.count as usize || l.offsets < l.levels as usize {
        0
    } else {
        l.count as usize + l.levels as usize
    }, |i, a| {
        let c = level_group_count(a, i, 0, 1);
        level_group_write(a, i, c);
    }
);

/// [`LevelGroups`] on a CUDA CTA of [`RANK_CTA`](crate::primitives::RANK_CTA) threads, as
/// [`crate::primitives::rank_sort_cooperative`] ([`sliced_counts`]): 16 consecutive
/// threads count for one item, each over every 16th block, and the first of them adds
/// the partial counts from shared memory and writes. One thread per item looped over all
/// blocks, two loads deep each: 53–56 µs per launch of 4 CTAs in the 3D cavity
/// (BENCHMARKS.md, thirty-ninth session). Counts are integer sums: the output equals
/// [`LevelGroups`]'s.
///
/// # Safety
/// Launched with [`RANK_CTA`](crate::primitives::RANK_CTA) threads per CTA, `⌈(count +
/// levels) / RANK_ITEMS⌉` CTAs ([`RANK_ITEMS`](crate::primitives::RANK_ITEMS)) and
/// [`RANK_SHARED_BYTES`](crate::primitives::RANK_SHARED_BYTES) of shared memory; the
/// arguments as [`LevelGroups`] takes them.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn level_groups_cooperative<C: Cta>(cta: &C, a: &LevelGroupsArgs) {
    // SAFETY (both closures): the caller's contract, for items below `count + levels`.
    let count = |i: usize, first: usize, step: usize| unsafe { level_group_count(a, i, first, step) };
    let write = |i: usize, c: u64| unsafe { level_group_write(a, i, c) };
    sliced_counts(cta, a.count as usize + a.levels as usize, count, write);
}

amr_kernel!(
    /// Item `l` (`0 ..= MAX_LEVELS`): `offsets[l]` = first index of `keys[0..count]` (ascending
    /// keys) with key `≥ l`, by binary search. Differences of consecutive entries are the
    /// per-level counts.
    LevelOffsets, LevelOffsetsArgs, items(l) = if l.keys < l.count.max(0) as usize { 0 } else { l.offsets }, |i, a| {
        let (mut lo, mut hi) = (0usize, a.count as usize);
        while lo < hi {
            let mid = (lo + hi) >> 1;
            if (*a.keys.add(mid) as usize) < i {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        *a.offsets.add(i) = lo as u32;
    }
);

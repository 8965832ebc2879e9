//! The adapt's block lists: the counts of one adaptation, and the distinct blocks of a
//! gathered list (the minimal map of step 1, the parents of step 7, the blocks step 8
//! relinks), ranked in one launch when short, flagged and compacted when long, their
//! lengths left on the device where the launches over them can read them.

use ramus_kernels::distinct::DISTINCT_MAX;

use super::workspace::{ensure, AdaptWorkspace, ListLen};
use crate::backend::primitives as prim;
use crate::backend::{Buffer, Device};
use crate::error::{Error, Result};

/// Block counts of one adaptation, filled in step by step.
pub(super) struct Counts {
    /// IDs handed out before the adaptation (the high-water mark then): the
    /// Preparation's items, among them every active block.
    pub(super) handed_out: usize,
    /// Leaves to refine (`ws.to_refine`).
    pub(super) refine: usize,
    /// Parents marked for coarsening (`ws.to_coarsen`).
    pub(super) coarsen: usize,
    /// The high-water mark after the adaptation.
    pub(super) high_water: usize,
    /// Length of the minimal map (S1, `ws.map`): known, or on the device until S5.
    pub(super) map_len: ListLen,
    /// Blocks of the minimal map, known from S5 on.
    pub(super) map: usize,
    /// Parents coarsened after the 2:1 check (S3, `ws.coarsened`).
    pub(super) coarsened: usize,
}

impl Counts {
    /// All marked blocks ([`Self::marked_list`]).
    pub(super) fn marked(&self) -> usize {
        self.refine + self.coarsen
    }

    /// The list of all marked blocks: `to_refine` or `to_coarsen` when the other is empty,
    /// else `marked` (which then holds both, in that order).
    pub(super) fn marked_list<'a>(
        &self,
        to_refine: &'a Buffer<u32>,
        to_coarsen: &'a Buffer<u32>,
        marked: &'a Buffer<u32>,
    ) -> &'a Buffer<u32> {
        match (self.refine, self.coarsen) {
            (_, 0) => to_refine,
            (0, _) => to_coarsen,
            _ => marked,
        }
    }
}

/// Where [`distinct`] leaves its result, and what it takes besides `ws.gathered`.
#[derive(Clone, Copy)]
pub(super) enum Target {
    /// `ws.map` (S1).
    Map,
    /// `ws.set` (S7).
    Set,
    /// `ws.set`, with the first `m` blocks of `ws.map` joining the list (S8).
    SetWithMap(usize),
}

/// Slots of `ws.counts`: the S5 removal's (0), the distinct parents of S7, the distinct
/// blocks S8 relinks, the minimal map of S1, the Preparation's sorted requests (whose
/// counts are known: written, not read).
pub(super) const SLOT_PARENTS: usize = 1;
pub(super) const SLOT_RELINKED: usize = 2;
pub(super) const SLOT_MAP: usize = 3;
pub(super) const SLOT_REQUESTS: usize = 4;
pub(super) const COUNT_SLOTS: usize = 5;

/// The blocks a [`Gathered`] list is gathered for.
#[derive(Clone, Copy)]
pub(super) enum Blocks {
    /// The marked blocks ([`Counts::marked_list`]).
    Marked,
    /// The minimal map (`ws.map`).
    Map,
}

/// The items of a [`distinct`]: gathered from `table` for `count` blocks ([`prim::Gather`]:
/// `per` items each, invalid where the entry is negative). A short list is gathered by the
/// deduplicating launch itself; a long one must be in `ws.gathered` / `ws.gathered_valid`
/// already (the caller's gather kernel, run when [`short_list`] says no).
#[derive(Clone, Copy)]
pub(super) struct Gathered<'t> {
    pub(super) blocks: Blocks,
    pub(super) count: usize,
    pub(super) table: &'t Buffer<i32>,
    pub(super) gather: prim::Gather,
    /// The caller's [`short_list`] decision, taken once: true, [`distinct`] gathers the
    /// items in its one launch; false, the caller has gathered them, and `distinct`
    /// flags and compacts. One value for both, so they cannot disagree.
    pub(super) short: bool,
}

impl Gathered<'_> {
    /// Items gathered.
    pub(super) fn items(&self) -> usize {
        self.count
            * match self.gather {
                prim::Gather::Entries { per } | prim::Gather::Children { per } => per,
            }
    }
}

/// Whether [`distinct`] ranks `items` (plus `m` map blocks) in one launch, which gathers
/// them itself; otherwise the caller gathers them into `ws.gathered` first.
pub(super) fn short_list(ws: &AdaptWorkspace, items: usize, m: usize) -> bool {
    items + m <= ws.distinct_short_max.min(DISTINCT_MAX)
}

/// The distinct valid items of `list` (with [`Target::SetWithMap`], and the map's first
/// blocks), ascending, into `ws.map` or `ws.set`. A list of at most
/// [`AdaptWorkspace::distinct_short_max`] items is gathered and ranked in one launch
/// ([`prim::distinct_short_gathered`], no pass over the ID range); a longer one, gathered
/// into `ws.gathered` by the caller, is flagged in `ws.seen` and compacted. Its count is
/// left on the device (in `ws.counts[slot]`) when the launches over the list, `per` items
/// per entry, stay within [`AdaptWorkspace::counted_max_items`] for the list's bound,
/// else read back: small adapts save a host–device round trip per list, large ones launch
/// no mass of idle items.
///
/// # Safety
/// Every valid item and every map block taken must be below `range`, and `ws.seen` must
/// hold at least `range` flags (see [`prim::mark_seen`]); the table holds every entry the
/// blocks index (see [`prim::distinct_short_gathered`]).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn distinct(
    dev: &Device,
    ws: &mut AdaptWorkspace,
    (list, marked): (Gathered<'_>, &Counts),
    range: usize,
    target: Target,
    slot: usize,
    per: usize,
) -> Result<ListLen> {
    let n = list.items();
    let m = match target {
        Target::SetWithMap(m) => m,
        Target::Map | Target::Set => 0,
    };
    let bound = range.min(n + m);
    let counted = bound.saturating_mul(per) <= ws.counted_max_items;
    let AdaptWorkspace {
        map,
        set,
        gathered,
        gathered_valid,
        scratch,
        counts,
        seen,
        to_refine,
        to_coarsen,
        marked: all,
        ..
    } = ws;
    let (out, map): (&mut Buffer<u32>, Option<&Buffer<u32>>) = match target {
        Target::Map => (map, None),
        Target::Set => (set, None),
        Target::SetWithMap(_) => (set, Some(&*map)),
    };
    let extra = map.filter(|_| m > 0).map(|b| (b, m));
    if list.short {
        let blocks = match (list.blocks, map) {
            (Blocks::Marked, _) => marked.marked_list(to_refine, to_coarsen, all),
            (Blocks::Map, Some(map)) => map,
            (Blocks::Map, None) => return Err(Error::invalid("distinct blocks", "the map", "with Target::SetWithMap")),
        };
        ensure(dev, out, n + m)?;
        // SAFETY: the caller's contract.
        unsafe {
            prim::distinct_short_gathered(
                dev,
                scratch,
                (blocks, list.count),
                (list.table, list.gather),
                extra,
                out,
                (counts, slot),
            )?
        };
        return Ok(if counted {
            ListLen::OnDevice { bound, slot }
        } else {
            ListLen::Known(dev.get(counts, slot)? as usize)
        });
    }
    if let Some((map, m)) = extra {
        // SAFETY: the caller's contract.
        unsafe { prim::mark_seen(dev, seen, map, None, m)? };
    }
    // SAFETY: the caller's contract.
    unsafe { prim::mark_seen(dev, seen, gathered, Some(gathered_valid), n)? };
    if !counted {
        ensure(dev, out, bound)?;
        return Ok(ListLen::Known(prim::take_seen(dev, scratch, seen, range, out)?));
    }
    ensure(dev, out, range)?;
    prim::take_seen_deferred(dev, scratch, seen, range, out, Some((counts, slot)))?;
    Ok(ListLen::OnDevice { bound, slot })
}

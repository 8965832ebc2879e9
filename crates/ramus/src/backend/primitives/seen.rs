//! Sorted distinct block IDs without sorting: flag the IDs in an array indexed by ID
//! ([`mark_seen`], any number of lists), then compact the flag indices ([`take_seen`]),
//! which also clears the flags. The output is exactly "sort, then unique" of the flagged
//! IDs, for O(items + range) work in a handful of launches, where a radix sort of block
//! IDs costs a scan and a scatter per key bit. The AMR routine uses it for its
//! deduplicated neighbourhoods (paper, steps 1, 7 and 8) with `range` = the highest ID
//! handed out, which follows the active blocks, not the pool capacity. A short list
//! (small adapts) is ranked instead ([`distinct_short`]), which never touches the range.

use ramus_kernels::distinct as d;
use ramus_kernels::primitives as k;

use super::{check, grow, scan_into_scratch, scanned, total, Buffer, Device, Error, Result, Scratch, NONZERO};
use crate::backend::slice::{DeviceSlice, Views};

/// Sets `seen[ids[i]] = 1` for `i < n` (only where `valid[i] != 0`, when given); an ID may
/// appear any number of times. Queued, no read-back. The buffers are checked (same
/// device, `ids` and `valid` hold `n` items), the IDs are not (a device pass and a
/// read-back per call).
///
/// # Safety
/// Every flagged ID (`ids[i]` for `i < n` where `valid[i] != 0`, or all of them without
/// `valid`) must be below `seen.len()`, and `ids`/`valid` must not change until the work
/// is done (CPU: on return; CUDA: at the next synchronising call); a larger ID writes out
/// of bounds.
pub unsafe fn mark_seen(
    dev: &Device,
    seen: &mut Buffer<u32>,
    ids: &Buffer<u32>,
    valid: Option<&Buffer<u32>>,
    n: usize,
) -> Result<()> {
    check(dev, ids, n, "mark_seen ids")?;
    if let Some(v) = valid {
        check(dev, v, n, "mark_seen flags")?;
    }
    check(dev, seen, 0, "mark_seen seen")?;
    if n == 0 {
        return Ok(());
    }
    let args = k::MarkSeenArgs::<Views> {
        ids: ids.slice(..n)?,
        valid: match valid {
            Some(v) => v.slice(..n)?,
            None => DeviceSlice::none(),
        },
        seen: seen.view_mut(),
    };
    // SAFETY: `ids` (and `valid`) hold `n` items (checked); the caller keeps every flagged
    // ID below `seen.len()`.
    unsafe { dev.launch::<k::MarkSeen>(n, args) }
}

/// Writes the `i < range` with `seen[i] != 0`, ascending, to `out[..count]`, resets those
/// flags to zero, and returns `count` (one read-back). `out` must hold at least `count`
/// items: size it for the number of items flagged, which bounds `count`.
pub fn take_seen(
    dev: &Device,
    scratch: &mut Scratch,
    seen: &mut Buffer<u32>,
    range: usize,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    check(dev, seen, range, "take_seen seen")?;
    if range == 0 {
        return Ok(0);
    }
    let plan = scan_into_scratch(dev, scratch, seen, range, NONZERO)?;
    let count = total(dev, scratch, &plan)? as usize;
    check(dev, out, count, "take_seen output")?;
    // SAFETY: `seen` holds `range` items and the scan covers them; `out` holds `count`.
    unsafe { launch_take(dev, seen, range, scanned(scratch, &plan)?, out)? };
    Ok(count)
}

/// Queues the kernel that lists and clears the flags after their scan (`offsets`: the
/// scanned tile totals, `local`: the tile-local part).
///
/// # Safety
/// The scan covers `seen[..range]`; `out` holds the flagged count.
unsafe fn launch_take(
    dev: &Device,
    seen: &mut Buffer<u32>,
    range: usize,
    (local, offsets): (DeviceSlice<'_, u32>, DeviceSlice<'_, u64>),
    out: &mut Buffer<u32>,
) -> Result<()> {
    let args = k::TakeSeenArgs::<Views> { flags: seen.slice_mut(..range)?, local, offsets, out: out.view_mut() };
    dev.launch::<k::TakeSeen>(range, args)
}

/// [`take_seen`] without the read-back: the count is left on the device in
/// `counts.0[counts.1]` when given (nothing is written without it), and `out` must hold
/// `range` items.
pub fn take_seen_deferred(
    dev: &Device,
    scratch: &mut Scratch,
    seen: &mut Buffer<u32>,
    range: usize,
    out: &mut Buffer<u32>,
    counts: Option<(&mut Buffer<u64>, usize)>,
) -> Result<()> {
    check(dev, seen, range, "take_seen seen")?;
    check(dev, out, range, "take_seen output")?;
    if let Some((counts, slot)) = &counts {
        check(dev, counts, slot.saturating_add(1), "take_seen counts")?;
    }
    if range == 0 {
        return match counts {
            Some((counts, slot)) => dev.write(counts, slot, &[0]),
            None => Ok(()),
        };
    }
    let plan = scan_into_scratch(dev, scratch, seen, range, NONZERO)?;
    // SAFETY: `seen` and `out` hold `range` items and the scan covers them.
    unsafe { launch_take(dev, seen, range, scanned(scratch, &plan)?, out)? };
    match counts {
        Some((counts, slot)) => {
            dev.copy_range(scratch.sums.as_ref().expect("scan allocated the sums"), plan.total_at(), 1, counts, slot)
        }
        None => Ok(()),
    }
}

/// The sorted distinct values of a short list, without a flag array: the items are
/// `ids[i]` for `i < n` where `valid` is `None` or `valid[i] != 0`, then `extra.0[..m]`
/// (`extra = (buffer, m)`), at most [`DISTINCT_MAX`](d::DISTINCT_MAX) in all; their sorted
/// distinct values go to `out[..count]`, and `count` is left on the device in
/// `counts.0[counts.1]`. One launch of one CTA and O((n + m)²) work
/// ([`ramus_kernels::distinct`]), no read-back: for the lists of a few hundred IDs of small
/// adapts, where [`mark_seen`] + [`take_seen`] would take five launches over the whole ID
/// range. The result is the same as theirs. `out` must hold `n + m` items.
pub fn distinct_short(
    dev: &Device,
    scratch: &mut Scratch,
    (ids, valid, n): (&Buffer<u32>, Option<&Buffer<u32>>, usize),
    extra: Option<(&Buffer<u32>, usize)>,
    out: &mut Buffer<u32>,
    counts: (&mut Buffer<u64>, usize),
) -> Result<()> {
    check(dev, ids, n, "distinct_short ids")?;
    if let Some(v) = valid {
        check(dev, v, n, "distinct_short flags")?;
    }
    let valid = match valid {
        Some(v) => v.slice(..n)?,
        None => DeviceSlice::none(),
    };
    let items = Items { ids: ids.slice(..n)?, valid, table: DeviceSlice::none(), per: 1, children: false, n };
    // SAFETY: without a table the launch checks every buffer the kernel reads.
    unsafe { launch_distinct(dev, scratch, items, extra, out, counts) }
}

/// What a gathered [`distinct_short_gathered`] reads for each of its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gather {
    /// `per` entries of the table per block: `table[b per + k]` (a block's links, or
    /// with `per = 1` one entry such as its parent).
    Entries {
        /// Entries per block.
        per: usize,
    },
    /// The block's children: `table[b] + k` for `k < per` (`table`: first children).
    Children {
        /// Children per block.
        per: usize,
    },
}

/// [`distinct_short`] of items gathered from `table` for the blocks `blocks[..n]`
/// ([`Gather`]; an entry `< 0` is no item): the gather kernel and its list of
/// `n × per` items are saved. At most [`DISTINCT_MAX`](d::DISTINCT_MAX) items with `extra`.
///
/// # Safety
/// `table` holds every entry that the IDs in `blocks[..n]` index (`b per + per` entries
/// for [`Gather::Entries`], `b + 1` for [`Gather::Children`]): the launch checks the
/// buffers' lengths, not the IDs in them.
pub unsafe fn distinct_short_gathered(
    dev: &Device,
    scratch: &mut Scratch,
    (blocks, n): (&Buffer<u32>, usize),
    (table, gather): (&Buffer<i32>, Gather),
    extra: Option<(&Buffer<u32>, usize)>,
    out: &mut Buffer<u32>,
    counts: (&mut Buffer<u64>, usize),
) -> Result<()> {
    let (per, children) = match gather {
        Gather::Entries { per } => (per, false),
        Gather::Children { per } => (per, true),
    };
    if per == 0 || per > u32::MAX as usize {
        return Err(Error::invalid("distinct_short_gathered per", per, "1 to 2^32 - 1"));
    }
    check(dev, blocks, n, "distinct_short_gathered blocks")?;
    let items = Items {
        ids: blocks.slice(..n)?,
        valid: DeviceSlice::none(),
        table: table.view(),
        per,
        children,
        n: n.checked_mul(per).ok_or_else(|| Error::invalid("distinct_short_gathered n × per", n, "fewer items"))?,
    };
    // SAFETY: the caller's contract covers the table's entries.
    unsafe { launch_distinct(dev, scratch, items, extra, out, counts) }
}

/// The first part of a short distinct's list: `n` items.
struct Items<'a> {
    ids: DeviceSlice<'a, u32>,
    valid: DeviceSlice<'a, u32>,
    table: DeviceSlice<'a, i32>,
    per: usize,
    children: bool,
    n: usize,
}

/// One launch of the short distinct (or the count 0 for an empty list).
///
/// # Safety
/// With a table, it holds every entry the blocks in `items.ids` index.
unsafe fn launch_distinct(
    dev: &Device,
    scratch: &mut Scratch,
    items: Items<'_>,
    extra: Option<(&Buffer<u32>, usize)>,
    out: &mut Buffer<u32>,
    (counts, slot): (&mut Buffer<u64>, usize),
) -> Result<()> {
    let n = items.n;
    let m = extra.map_or(0, |(_, m)| m);
    let len = n.checked_add(m).filter(|&l| l <= d::DISTINCT_MAX).ok_or_else(|| {
        Error::invalid("distinct_short n + m", format!("{n} + {m}"), format!("at most {} items", d::DISTINCT_MAX))
    })?;
    if let Some((e, m)) = extra {
        check(dev, e, m, "distinct_short extra")?;
    }
    check(dev, out, len, "distinct_short output")?;
    check(dev, counts, slot.saturating_add(1), "distinct_short counts")?;
    if len == 0 {
        return dev.write(counts, slot, &[0]);
    }
    let repeat = grow(dev, &mut scratch.local, len)?;
    let args = d::DistinctArgs::<Views> {
        ids: items.ids,
        valid: items.valid,
        table: items.table,
        per: items.per as u32,
        children: items.children as u32,
        extra: match extra {
            Some((e, m)) if m > 0 => e.slice(..m)?,
            _ => DeviceSlice::none(),
        },
        repeat: repeat.slice_mut(..len)?,
        out: out.slice_mut(..len)?,
        count: counts.slice_mut(slot..slot + 1)?,
        n: n as u32,
        m: m as u32,
    };
    // SAFETY: the slices hold the `n + m ≤ DISTINCT_MAX` items the kernel reads and the
    // `n + m` it may write (the launch checks them; a table's entries are the caller's);
    // distinct values have distinct ranks.
    unsafe {
        match dev {
            Device::Cpu => dev.launch::<d::DistinctSerial>(1, args),
            Device::Cuda(_) => {
                dev.launch_cta::<d::DistinctSerial>(1, d::DISTINCT_CTA, d::DISTINCT_SHARED_BYTES, 1, args)
            }
        }
    }
}

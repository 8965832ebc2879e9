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
    (counts, slot): (&mut Buffer<u64>, usize),
) -> Result<()> {
    let m = extra.map_or(0, |(_, m)| m);
    let len = n.checked_add(m).filter(|&l| l <= d::DISTINCT_MAX).ok_or_else(|| {
        Error::invalid("distinct_short n + m", format!("{n} + {m}"), format!("at most {} items", d::DISTINCT_MAX))
    })?;
    check(dev, ids, n, "distinct_short ids")?;
    if let Some(v) = valid {
        check(dev, v, n, "distinct_short flags")?;
    }
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
        ids: ids.slice(..n)?,
        valid: match valid {
            Some(v) => v.slice(..n)?,
            None => DeviceSlice::none(),
        },
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
    // `n + m` it may write (the launch checks them); distinct values have distinct ranks.
    unsafe {
        match dev {
            Device::Cpu => dev.launch::<d::DistinctSerial>(1, args),
            Device::Cuda(_) => {
                dev.launch_cta::<d::DistinctSerial>(1, d::DISTINCT_CTA, d::DISTINCT_SHARED_BYTES, 1, args)
            }
        }
    }
}

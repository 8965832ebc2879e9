//! Sorted distinct block IDs without sorting: flag the IDs in an array indexed by ID
//! ([`mark_seen`], any number of lists), then compact the flag indices ([`take_seen`]),
//! which also clears the flags. The output is exactly "sort, then unique" of the flagged
//! IDs, for O(items + range) work in a handful of launches, where a radix sort of block
//! IDs costs a scan and a scatter per key bit. The AMR routine uses it for its
//! deduplicated neighbourhoods (paper, steps 1, 7 and 8) with `range` = the highest ID
//! handed out, which follows the active blocks, not the pool capacity.

use ramus_kernels::primitives as k;

use super::{check, scan_into_scratch, scanned, total, Buffer, Device, Result, Scratch, NONZERO};
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

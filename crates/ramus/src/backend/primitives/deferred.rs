//! Compactions that leave their count on the device instead of reading it back, so that
//! a caller can queue several and read all counts with one synchronisation, or skip the
//! read-back where the host knows the count already.

use super::{
    check, compact_values, grow, k, scan_into_scratch, scanned, word_size, Buffer, Device, Elem, Error, Result,
    Scratch, Views, NONZERO, ZERO,
};

/// Stream compaction like [`compact`](super::compact), without reading the count back: `out` must hold
/// `n` items, and the count is left on the device in `counts[slot]`, so that a caller
/// can read several counts with one read-back (each read-back is a device
/// synchronisation).
#[allow(clippy::too_many_arguments)]
pub fn compact_deferred<T: Elem>(
    dev: &Device,
    scratch: &mut Scratch,
    flags: &Buffer<u32>,
    values: &Buffer<T>,
    n: usize,
    out: &mut Buffer<T>,
    counts: &mut Buffer<u64>,
    slot: usize,
) -> Result<()> {
    check(dev, flags, n, "compact_deferred flags")?;
    check(dev, values, n, "compact_deferred values")?;
    check(dev, out, n, "compact_deferred output")?;
    check(dev, counts, slot.saturating_add(1), "compact_deferred counts")?;
    if n == 0 {
        return dev.write(counts, slot, &[0]);
    }
    word_size::<T>()?;
    let plan = scan_into_scratch(dev, scratch, flags, n, NONZERO)?;
    let (flags, values) = (flags.slice(..n)?, values.slice(..n)?);
    // SAFETY: the scratch holds the scan of `flags`; `out` holds `n` >= the count.
    unsafe { compact_values(dev, flags, values, scanned(scratch, &plan)?, out.view_mut(), NONZERO)? };
    dev.copy_range(scratch.sums.as_ref().expect("scan allocated the sums"), plan.total_at(), 1, counts, slot)
}

/// One compaction of `n` items cut into segments, without reading anything back: keeps
/// `values[i]` where `flags[i] != 0`, `i < n`, in order, at the front of `out` (which must
/// hold `n` items), and leaves in `at[s]` the number kept before position `starts[s]`
/// (`s < m`; positions ascending, at most `n`) and in `at[m]` the total. Segment `s`, the
/// items from `starts[s]` to the next start, thus lands at `out[at[s]..at[s + 1]]`: many
/// lists built with one scan and one read-back (`at[..=m]`) for all their offsets and
/// lengths, where [`compact_deferred`] takes a scan per list.
#[allow(clippy::too_many_arguments)]
pub fn compact_segmented<T: Elem>(
    dev: &Device,
    scratch: &mut Scratch,
    flags: &Buffer<u32>,
    values: &Buffer<T>,
    n: usize,
    out: &mut Buffer<T>,
    starts: &Buffer<u32>,
    m: usize,
    at: &mut Buffer<u64>,
) -> Result<()> {
    check(dev, flags, n, "compact_segmented flags")?;
    check(dev, values, n, "compact_segmented values")?;
    check(dev, out, n, "compact_segmented output")?;
    check(dev, starts, m, "compact_segmented starts")?;
    check(dev, at, m.saturating_add(1), "compact_segmented counts")?;
    if n == 0 {
        return dev.write(at, 0, &vec![0; m + 1]);
    }
    word_size::<T>()?;
    let plan = scan_into_scratch(dev, scratch, flags, n, NONZERO)?;
    let (flags, values) = (flags.slice(..n)?, values.slice(..n)?);
    let (local, offsets) = scanned(scratch, &plan)?;
    // SAFETY: the scratch holds the scan of `flags`; `out` holds `n` >= the count.
    unsafe { compact_values(dev, flags, values, (local, offsets), out.view_mut(), NONZERO)? };
    let sums = scratch.sums.as_ref().expect("scan allocated the sums");
    let args = k::ScanAtArgs::<Views> {
        at: starts.slice(..m)?,
        m: m as u64,
        local: local.slice(..n)?,
        offsets,
        total: sums.slice(plan.total_at()..plan.total_at() + 1)?,
        n: n as u64,
        out: at.view_mut(),
    };
    // SAFETY: the kernel reads `local` and `offsets` only below `n` (the launch checks they
    // cover it), any other position reads the total.
    unsafe { dev.launch::<k::ScanAt>(m + 1, args) }
}

/// [`compact_segmented`] for a caller that wants the segments on the host: segment `s`
/// begins at `starts[s]` (ascending, at most `n`; the last one ends at `n`), and the
/// result's `s`-th `(offset, length)` says where its kept items lie in `out`. The starts
/// and counts live in `scratch`: one write, the compaction and one read-back (a device
/// synchronisation) for every segment, however many.
pub fn compact_segments<T: Elem>(
    dev: &Device,
    scratch: &mut Scratch,
    flags: &Buffer<u32>,
    values: &Buffer<T>,
    n: usize,
    out: &mut Buffer<T>,
    starts: &[usize],
) -> Result<Vec<(usize, usize)>> {
    let m = starts.len();
    if m == 0 {
        return Ok(Vec::new());
    }
    if starts.windows(2).any(|w| w[0] > w[1]) || starts[m - 1] > n {
        return Err(Error::invalid(
            "compact_segments starts",
            format!("{starts:?}"),
            format!("ascending, at most n = {n}"),
        ));
    }
    let host: Vec<u32> = starts.iter().map(|&s| s as u32).collect();
    // Out of the scratch while the compaction borrows it, back in even on an error.
    let (mut s_buf, mut at_buf) = (scratch.starts.take(), scratch.at.take());
    let mut run = || -> Result<Vec<u64>> {
        let starts = grow(dev, &mut s_buf, m)?;
        dev.write(starts, 0, &host)?;
        let at = grow(dev, &mut at_buf, m + 1)?;
        compact_segmented(dev, scratch, flags, values, n, out, starts, m, at)?;
        dev.read(at, 0..m + 1)
    };
    let at = run();
    (scratch.starts, scratch.at) = (s_buf, at_buf);
    Ok(at?.windows(2).map(|w| (w[0] as usize, (w[1] - w[0]) as usize)).collect())
}

/// [`remove_if`](super::remove_if) without reading the count back: keeps the `values[i]`
/// with `remove[i] == 0`, `i < n`, in order, at the front of `values`, and leaves their
/// number on the device in `counts[slot]`.
pub fn remove_if_deferred(
    dev: &Device,
    scratch: &mut Scratch,
    values: &mut Buffer<u32>,
    remove: &Buffer<u32>,
    n: usize,
    counts: &mut Buffer<u64>,
    slot: usize,
) -> Result<()> {
    check(dev, values, n, "remove_if values")?;
    check(dev, remove, n, "remove_if flags")?;
    check(dev, counts, slot.saturating_add(1), "remove_if counts")?;
    if n == 0 {
        return dev.write(counts, slot, &[0]);
    }
    let copy = grow(dev, &mut scratch.keys, n)?;
    dev.copy(values, n, copy, 0)?;
    let plan = scan_into_scratch(dev, scratch, remove, n, ZERO)?;
    let copy = scratch.keys.as_ref().expect("grown above").slice(..n)?;
    // SAFETY: the scratch holds the scan of `remove`; `values` holds `n` >= the count.
    unsafe { compact_values(dev, remove.slice(..n)?, copy, scanned(scratch, &plan)?, values.view_mut(), ZERO)? };
    dev.copy_range(scratch.sums.as_ref().expect("scan allocated the sums"), plan.total_at(), 1, counts, slot)
}

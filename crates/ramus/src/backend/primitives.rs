//! Device-parallel primitives of the AMR routine (paper, section "Refinement and
//! Coarsening", which uses Thrust's `count_if`, exclusive scan, `copy_if`,
//! `sort_by_key`, `unique`, `scatter`, `remove_if` and `reduce`).
//!
//! Every primitive takes the [`Device`], a [`Scratch`] of reusable temporaries where it
//! needs any, and `n`, the number of valid leading elements (buffers may be longer).
//! All are deterministic: the CPU and the CUDA backend give the same output bit for bit,
//! and the order-keeping ones (compaction, `remove_if`, `unique`, the stable sort) keep
//! the input order.
//!
//! # How
//! One pipeline for both backends, written against [`Device::launch`] with the kernels of
//! [`ramus_kernels::primitives`]:
//! - **scan**: tiles of [`TILE`] = 2048 items. A tile pass writes the tile-local exclusive
//!   scan and one `u64` total per tile (CUDA: the cooperative kernel `prim_scan_tiles_*`,
//!   256 threads × 8 items in shared memory; CPU: one rayon work item per tile); the tile
//!   totals are scanned by the same pass, recursively, until one tile is left, and the
//!   offsets are added back top-down. Items are mapped on load by a predicate (value,
//!   `!= 0`, `== 0`, one key bit, run head), so compaction and the radix sort scan their
//!   flags without materialising them.
//! - **compaction** (`compact*`, `remove_if`, `unique`): scan of the predicate, then one
//!   scatter kernel that adds the tile offset itself. The count is read back to the host
//!   before the scatter, which checks that the output buffer is long enough.
//! - **sort**: LSD radix sort, one key bit per pass: scan of "bit is 0", then a stable
//!   split scatter into ping-pong buffers (no host round trip between passes).
//! - **reductions**: the up-sweep of the scan only (sum, or max).
//!
//! Sums are `u32`: [`exclusive_scan`] wraps modulo 2³² (documented), while the totals it
//! and [`reduce_sum`] return are exact `u64` (tile totals are kept in `u64`).
//!
//! Each call that returns a count or a total reads one `u64` back from the device (a
//! synchronisation); [`sort_by_key`] and [`scatter`] queue their work without one.
//!
//! Every function checks what it can check cheaply on the host (the buffers' device and
//! lengths, `n`) and returns [`Error::InvalidParameter`] otherwise. The two whose
//! contract is about the *values* in a buffer, [`scatter`] (distinct indices below the
//! output's length) and [`mark_seen`] (IDs below the flag array's length), are `unsafe`:
//! checking the values would cost a device pass and a read-back per call.
//! [`Scratch`] keeps the temporaries between calls, so repeated calls allocate nothing
//! once it has grown to the largest `n`.

use ramus_kernels::primitives::{self as k, ScanArgs, ScanIn, ScanOut, SCAN_CTA, SCAN_SHARED_BYTES, TILE};
use ramus_kernels::registry::Entry;

use super::device::{Buffer, Device, Elem};
use super::slice::{DeviceSlice, DeviceSliceMut, Views};
use crate::error::{Error, Result};

mod deferred;
mod pack;
mod seen;
mod sort;
pub use deferred::{compact_deferred, compact_segmented, compact_segments, remove_if_deferred};
pub use pack::pack_blocks;
pub use seen::{distinct_short, distinct_short_gathered, mark_seen, take_seen, take_seen_deferred, Gather};
pub(crate) use sort::launch_sliced;
pub use sort::{scatter, sort_by_key};

/// Inputs up to this size are sorted on CUDA by [`RankSort`](k::RankSort) (one launch,
/// O(n²) work spread over [`RANK_SLICES`](k::RANK_SLICES) threads per item)
/// instead of the radix sort (two launches per key bit, ~0.2 ms for 21 bits).
const RANK_SORT_MAX: usize = 8192;

/// Reusable temporaries of the primitives, grown on demand and never shrunk.
///
/// Belongs to one device: passing it with another device replaces its buffers.
pub struct Scratch {
    /// Tile totals of every scan level.
    sums: Option<Buffer<u64>>,
    /// Tile-local scan of the level-0 items.
    local: Option<Buffer<u32>>,
    /// Ping-pong keys of the sort; the copy of `remove_if`.
    keys: Option<Buffer<u32>>,
    /// Ping-pong values of the sort.
    values: Option<Buffer<u32>>,
    /// Segment starts and the counts at them ([`compact_segments`]).
    starts: Option<Buffer<u32>>,
    at: Option<Buffer<u64>>,
}

impl Scratch {
    /// Empty temporaries for `dev` (allocated at first use).
    pub fn new(_dev: &Device) -> Scratch {
        Scratch { sums: None, local: None, keys: None, values: None, starts: None, at: None }
    }

    /// Bytes currently held.
    pub fn bytes(&self) -> usize {
        fn b<T>(x: &Option<Buffer<T>>) -> usize {
            x.as_ref().map_or(0, |x| x.len() * std::mem::size_of::<T>())
        }
        b(&self.sums) + b(&self.local) + b(&self.keys) + b(&self.values) + b(&self.starts) + b(&self.at)
    }
}

/// Whether `buf` lives on `dev`'s side.
fn same_device<T>(dev: &Device, buf: &Buffer<T>) -> bool {
    matches!((dev, buf), (Device::Cpu, Buffer::Host(_)) | (Device::Cuda(_), Buffer::Cuda { .. }))
}

/// `slot` with room for at least `n` elements on `dev`.
fn grow<'a, T: Elem>(dev: &Device, slot: &'a mut Option<Buffer<T>>, n: usize) -> Result<&'a mut Buffer<T>> {
    let ok = matches!(slot, Some(b) if same_device(dev, b) && b.len() >= n);
    if !ok {
        let old = slot.as_ref().filter(|b| same_device(dev, b)).map_or(0, |b| b.len());
        let len = n.max(old + old / 2).max(64);
        *slot = None; // free the old one first
        *slot = Some(dev.zeros(len)?);
    }
    Ok(slot.as_mut().expect("just allocated"))
}

/// Checks that a caller's buffer belongs to `dev` and holds at least `n` elements.
fn check<T>(dev: &Device, buf: &Buffer<T>, n: usize, what: &'static str) -> Result<()> {
    if !same_device(dev, buf) {
        return Err(Error::invalid(
            what,
            "a buffer of another device",
            format!("a buffer of the {} device", dev.backend()),
        ));
    }
    if n > u32::MAX as usize {
        return Err(Error::invalid("n", n, "at most 2^32 - 1 (u32 indices)"));
    }
    if buf.len() < n {
        return Err(Error::invalid(
            what,
            format!("a buffer of {} elements", buf.len()),
            format!("at least n = {n} elements"),
        ));
    }
    Ok(())
}

/// Sizes of the scan levels: `(offset in the sums buffer, count)` of the tile totals of
/// level 0 (the input), level 1 (those totals), ...; the last entry is the single grand
/// total. Every entry but the last is scanned in place (becoming tile offsets).
struct Plan {
    levels: [(usize, usize); 8],
    depth: usize,
    sums_len: usize,
}

impl Plan {
    fn new(n: usize) -> Plan {
        let mut levels = [(0, 0); 8];
        let mut depth = 0;
        let mut len = n;
        let mut off = 0;
        loop {
            let m = len.div_ceil(TILE).max(1);
            levels[depth] = (off, m);
            depth += 1;
            off += m;
            // Stop once a single total is left and the input's offsets (level 1) exist.
            if m == 1 && depth >= 2 {
                break;
            }
            len = m;
        }
        Plan { levels, depth, sums_len: off }
    }

    /// Offset of the grand total in the sums buffer.
    fn total_at(&self) -> usize {
        self.levels[self.depth - 1].0
    }
}

/// Predicate applied to the `u32` items on load (see `ramus_kernels::primitives::MODE_*`).
#[derive(Clone, Copy)]
struct Pred {
    shift: u32,
    mask: u32,
    mode: u32,
}

const VALUE: Pred = Pred { shift: 0, mask: u32::MAX, mode: k::MODE_VALUE };
const NONZERO: Pred = Pred { shift: 0, mask: u32::MAX, mode: k::MODE_NONZERO };
const ZERO: Pred = Pred { shift: 0, mask: u32::MAX, mode: k::MODE_ZERO };
const HEAD: Pred = Pred { shift: 0, mask: u32::MAX, mode: k::MODE_HEAD };

/// One tile pass over `tiles` tiles.
///
/// # Safety
/// As for [`Device::launch`] (the slices are checked; the pass reads and writes only them).
unsafe fn tile_pass<I: ScanIn, O: ScanOut>(dev: &Device, tiles: usize, args: ScanArgs<I, O, Views<'_>>) -> Result<()>
where
    k::ScanTileSerial<I, O>: Entry,
{
    match dev {
        Device::Cpu => dev.launch::<k::ScanTileSerial<I, O>>(tiles, args),
        Device::Cuda(_) => {
            let grid = u32::try_from(tiles).map_err(|_| Error::invalid("n", args.n, "fewer than 2^42 items"))?;
            dev.launch_cta::<k::ScanTileSerial<I, O>>(grid, SCAN_CTA, SCAN_SHARED_BYTES, tiles, args)
        }
    }
}

/// Scans the predicate of `input` (`n ≥ 1` items): the tile-local exclusive scan into
/// `local` (unless [`DeviceSliceMut::none`]), all tile totals into `sums` as laid out by
/// `plan`; with `offsets`, level 1 ends up holding the global offset of every level-0
/// tile (so item `i`'s exclusive prefix is `local[i] + sums[i >> 11]`), and the grand
/// total sits at `plan.total_at()`.
#[allow(clippy::too_many_arguments)]
fn scan(
    dev: &Device,
    plan: &Plan,
    mut sums: DeviceSliceMut<'_, u64>,
    input: DeviceSlice<'_, u32>,
    local: DeviceSliceMut<'_, u32>,
    pred: Pred,
    op: u32,
    offsets: bool,
) -> Result<()> {
    let lv = &plan.levels[..plan.depth];
    let args = ScanArgs::<u32, u32, Views> {
        n: input.len() as u64,
        input,
        output: local,
        sums: sums.reborrow().slice_mut(lv[0].0..)?,
        shift: pred.shift,
        mask: pred.mask,
        mode: pred.mode,
        op,
    };
    // SAFETY: the scan reads and writes only its slices (checked by the launch).
    unsafe { tile_pass(dev, lv[0].1, args)? };
    for j in 1..lv.len() {
        // Level `j - 1`'s totals are scanned (in place, for the offsets) into level `j`,
        // which starts where they end.
        let (off, count) = lv[j - 1];
        let (head, tail) = sums.reborrow().split_at(lv[j].0)?;
        let data = head.slice_mut(off..off + count)?;
        let (input, output) = if offsets { data.in_place() } else { (data.into_ref(), DeviceSliceMut::none()) };
        let args = ScanArgs::<u64, u64, Views> {
            input,
            output,
            sums: tail,
            n: count as u64,
            shift: 0,
            mask: u32::MAX,
            mode: k::MODE_VALUE,
            op,
        };
        // SAFETY: as above.
        unsafe { tile_pass(dev, lv[j].1, args)? };
    }
    if offsets {
        // Top-down: level j's tiles get level j+1's (final) offsets; a level of one tile
        // needs none.
        for j in (1..lv.len()).rev() {
            let (off, count) = lv[j - 1];
            if count > TILE {
                let (head, tail) = sums.reborrow().split_at(lv[j].0)?;
                let args = k::AddOffsetsArgs::<u64, Views> {
                    data: head.slice_mut(off..off + count)?,
                    offsets: tail.into_ref(),
                };
                // SAFETY: item `i` adds `offsets[i >> 11]` to `data[i]`, both checked.
                unsafe { dev.launch::<k::AddOffsets<u64>>(count, args)? };
            }
        }
    }
    Ok(())
}

/// Scans the predicate of `input[..n]` into the scratch buffers (see [`scan`]): the tile
/// sums in `s.sums` (level-0 offsets from `plan.levels[0].0`), the tile-local scan in
/// `s.local`.
fn scan_into_scratch(dev: &Device, s: &mut Scratch, input: &Buffer<u32>, n: usize, pred: Pred) -> Result<Plan> {
    let plan = Plan::new(n);
    grow(dev, &mut s.sums, plan.sums_len)?;
    grow(dev, &mut s.local, n)?;
    let (sums, local) = (s.sums.as_mut().expect("grown"), s.local.as_mut().expect("grown"));
    scan(dev, &plan, sums.view_mut(), input.slice(..n)?, local.slice_mut(..n)?, pred, k::OP_SUM, true)?;
    Ok(plan)
}

/// The scratch's tile-local scan and level-0 tile offsets after [`scan_into_scratch`].
fn scanned<'a>(s: &'a Scratch, plan: &Plan) -> Result<(DeviceSlice<'a, u32>, DeviceSlice<'a, u64>)> {
    let local = s.local.as_ref().expect("scan allocated the local scan").view();
    let sums = s.sums.as_ref().expect("scan allocated the sums").slice(plan.levels[0].0..)?;
    Ok((local, sums))
}

/// Reads the grand total of the last scan.
fn total(dev: &Device, s: &Scratch, plan: &Plan) -> Result<u64> {
    dev.get(s.sums.as_ref().expect("scan allocated the sums"), plan.total_at())
}

/// Up-sweep only: the `op`-reduction of the predicate of `input[..n]`.
fn reduce(
    dev: &Device,
    s: &mut Scratch,
    input: &Buffer<u32>,
    n: usize,
    pred: Pred,
    op: u32,
    what: &'static str,
) -> Result<u64> {
    check(dev, input, n, what)?;
    if n == 0 {
        return Ok(0);
    }
    let plan = Plan::new(n);
    let sums = grow(dev, &mut s.sums, plan.sums_len)?;
    scan(dev, &plan, sums.view_mut(), input.slice(..n)?, DeviceSliceMut::none(), pred, op, false)?;
    total(dev, s, &plan)
}

/// Exclusive prefix sum: `output[i] = Σ_{j<i} input[j]` for `i < n`, wrapping modulo
/// 2³² like `u32::wrapping_add`. Returns the exact total `Σ_{j<n} input[j]` as `u64`.
pub fn exclusive_scan(
    dev: &Device,
    scratch: &mut Scratch,
    input: &Buffer<u32>,
    n: usize,
    output: &mut Buffer<u32>,
) -> Result<u64> {
    check(dev, input, n, "exclusive_scan input")?;
    check(dev, output, n, "exclusive_scan output")?;
    if n == 0 {
        return Ok(0);
    }
    let plan = Plan::new(n);
    let sums = grow(dev, &mut scratch.sums, plan.sums_len)?;
    let mut out = output.slice_mut(..n)?;
    scan(dev, &plan, sums.view_mut(), input.slice(..n)?, out.reborrow(), VALUE, k::OP_SUM, true)?;
    if plan.levels[0].1 > 1 {
        let args = k::AddOffsetsArgs::<u32, Views> { data: out, offsets: sums.slice(plan.levels[0].0..)? };
        // SAFETY: item `i` adds `offsets[i >> 11]` to `data[i]`, both checked.
        unsafe { dev.launch::<k::AddOffsets<u32>>(n, args)? };
    }
    total(dev, scratch, &plan)
}

/// Stream compaction of indices: writes the `i < n` with `flags[i] != 0`, ascending, to
/// `out[..count]` and returns `count` (`out` needs at least `count` elements).
pub fn compact_indices(
    dev: &Device,
    scratch: &mut Scratch,
    flags: &Buffer<u32>,
    n: usize,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    check(dev, flags, n, "compact_indices flags")?;
    if n == 0 {
        return Ok(0);
    }
    let plan = scan_into_scratch(dev, scratch, flags, n, NONZERO)?;
    let count = total(dev, scratch, &plan)? as usize;
    check(dev, out, count, "compact_indices output")?;
    let p = NONZERO;
    let (local, offsets) = scanned(scratch, &plan)?;
    let args = k::CompactIndicesArgs::<Views> {
        flags: flags.slice(..n)?,
        local,
        offsets,
        out: out.view_mut(),
        shift: p.shift,
        mask: p.mask,
        mode: p.mode,
    };
    // SAFETY: `flags` has `n` items (checked), the scan covers them, `out` holds `count`.
    unsafe { dev.launch::<k::CompactIndices>(n, args)? };
    Ok(count)
}

/// Launches the value-compaction kernel for the element size of `T`: keeps
/// `values[i]`, `i < values.len()`, where predicate `p` of `flags[i]` holds, at
/// `out[offsets[i >> 11] + local[i]]`.
///
/// # Safety
/// `local` and `offsets` must be the scan of `flags` under `p` (they give every kept item
/// a distinct slot below the count), and `out` must hold that count.
unsafe fn compact_values<T: Elem>(
    dev: &Device,
    flags: DeviceSlice<'_, u32>,
    values: DeviceSlice<'_, T>,
    scan: (DeviceSlice<'_, u32>, DeviceSlice<'_, u64>),
    out: DeviceSliceMut<'_, T>,
    p: Pred,
) -> Result<()> {
    let n = values.len();
    macro_rules! go {
        ($w:ty) => {
            dev.launch::<k::CompactValues<$w>>(
                n,
                k::CompactValuesArgs::<$w, Views> {
                    flags,
                    values: values.cast::<$w>()?,
                    local: scan.0,
                    offsets: scan.1,
                    out: out.cast::<$w>()?,
                    shift: p.shift,
                    mask: p.mask,
                    mode: p.mode,
                },
            )
        };
    }
    match word_size::<T>()? {
        1 => go!(u8),
        4 => go!(u32),
        _ => go!(u64),
    }
}

/// Size of `T` if the data-moving kernels handle it (1, 4 or 8 bytes, naturally aligned).
fn word_size<T>() -> Result<usize> {
    let s = std::mem::size_of::<T>();
    if matches!(s, 1 | 4 | 8) && std::mem::align_of::<T>() == s {
        Ok(s)
    } else {
        Err(Error::invalid("element type", std::any::type_name::<T>(), "an element of 1, 4 or 8 bytes"))
    }
}

/// Shared body of the value compactions: keeps `values[i]` where the predicate of
/// `flags[i]` holds (`flags` and `values` of one length, checked by the callers).
fn compact_by<T: Elem>(
    dev: &Device,
    s: &mut Scratch,
    flags: &Buffer<u32>,
    values: Values<'_, T>,
    out: &mut Buffer<T>,
    pred: Pred,
    what: &'static str,
) -> Result<usize> {
    word_size::<T>()?;
    let n = values.len();
    let plan = scan_into_scratch(dev, s, flags, n, pred)?;
    let count = total(dev, s, &plan)? as usize;
    check(dev, out, count, what)?;
    let values = match values {
        Values::Buffer(v) => v,
        Values::Copy(_) => s.keys.as_ref().expect("remove_if copied the values").slice(..n)?.cast::<T>()?,
    };
    // SAFETY: the scratch holds the scan of `flags` under `pred`; `out` holds `count`.
    unsafe { compact_values(dev, flags.slice(..n)?, values, scanned(s, &plan)?, out.view_mut(), pred)? };
    Ok(count)
}

/// The values a compaction keeps from.
enum Values<'a, T> {
    /// A caller's slice.
    Buffer(DeviceSlice<'a, T>),
    /// The first `n` values of the scratch's copy (`remove_if` compacts a buffer into
    /// itself through it).
    Copy(usize),
}

impl<T> Values<'_, T> {
    fn len(&self) -> usize {
        match self {
            Values::Buffer(v) => v.len(),
            Values::Copy(n) => *n,
        }
    }
}

/// Stream compaction (`copy_if`): writes the `values[i]` with `flags[i] != 0`, `i < n`,
/// in order, to `out[..count]` and returns `count`. `T` must be 1, 4 or 8 bytes (every
/// [`Elem`] of ramus is).
pub fn compact<T: Elem>(
    dev: &Device,
    scratch: &mut Scratch,
    flags: &Buffer<u32>,
    values: &Buffer<T>,
    n: usize,
    out: &mut Buffer<T>,
) -> Result<usize> {
    check(dev, flags, n, "compact flags")?;
    check(dev, values, n, "compact values")?;
    if n == 0 {
        return Ok(0);
    }
    compact_by(dev, scratch, flags, Values::Buffer(values.slice(..n)?), out, NONZERO, "compact output")
}

/// `remove_if`: keeps the `values[i]` with `remove[i] == 0`, `i < n`, in order, at the
/// front of `values` (through a scratch copy) and returns their number. Elements past
/// the new length (up to `n`) keep their old contents.
pub fn remove_if(
    dev: &Device,
    scratch: &mut Scratch,
    values: &mut Buffer<u32>,
    remove: &Buffer<u32>,
    n: usize,
) -> Result<usize> {
    check(dev, values, n, "remove_if values")?;
    check(dev, remove, n, "remove_if flags")?;
    if n == 0 {
        return Ok(0);
    }
    let copy = grow(dev, &mut scratch.keys, n)?;
    dev.copy(values, n, copy, 0)?;
    compact_by(dev, scratch, remove, Values::Copy(n), values, ZERO, "remove_if values")
}

/// `unique` on sorted input: writes the first element of each run of equal values of
/// `sorted[..n]` to `out[..count]` and returns `count`.
pub fn unique(
    dev: &Device,
    scratch: &mut Scratch,
    sorted: &Buffer<u32>,
    n: usize,
    out: &mut Buffer<u32>,
) -> Result<usize> {
    check(dev, sorted, n, "unique input")?;
    if n == 0 {
        return Ok(0);
    }
    compact_by(dev, scratch, sorted, Values::Buffer(sorted.slice(..n)?), out, HEAD, "unique output")
}

/// Number of `i < n` with `flags[i] != 0` (`count_if`).
pub fn count_nonzero(dev: &Device, scratch: &mut Scratch, flags: &Buffer<u32>, n: usize) -> Result<usize> {
    Ok(reduce(dev, scratch, flags, n, NONZERO, k::OP_SUM, "count_nonzero flags")? as usize)
}

/// Exact sum of `values[..n]`.
pub fn reduce_sum(dev: &Device, scratch: &mut Scratch, values: &Buffer<u32>, n: usize) -> Result<u64> {
    reduce(dev, scratch, values, n, VALUE, k::OP_SUM, "reduce_sum values")
}

/// Maximum of `values[..n]`; 0 for `n = 0`.
pub fn reduce_max(dev: &Device, scratch: &mut Scratch, values: &Buffer<u32>, n: usize) -> Result<u32> {
    Ok(reduce(dev, scratch, values, n, VALUE, k::OP_MAX, "reduce_max values")? as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_levels() {
        let p = Plan::new(1);
        assert_eq!(&p.levels[..p.depth], &[(0, 1), (1, 1)]);
        let p = Plan::new(TILE);
        assert_eq!(&p.levels[..p.depth], &[(0, 1), (1, 1)]);
        let p = Plan::new(TILE + 1);
        assert_eq!(&p.levels[..p.depth], &[(0, 2), (2, 1)]);
        let p = Plan::new(10_000_000);
        assert_eq!(&p.levels[..p.depth], &[(0, 4883), (4883, 3), (4886, 1)]);
        assert_eq!(p.sums_len, 4887);
        let p = Plan::new(TILE * TILE + 1);
        assert_eq!(&p.levels[..p.depth], &[(0, TILE + 1), (TILE + 1, 2), (TILE + 3, 1)]);
    }
}

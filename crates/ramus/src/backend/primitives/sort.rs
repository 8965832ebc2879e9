//! The data-moving primitives by key and by index: the stable radix sort
//! ([`sort_by_key`]) and [`scatter`] (see the parent module for how they work).

use ramus_kernels::primitives as k;

use ramus_kernels::launch::Kernel;
use ramus_kernels::memory::Family;

use super::*;
use crate::backend::slice::Views;

/// Stable ascending sort of the pairs `(keys[i], values[i])`, `i < n`, by the low
/// `key_bits` bits of the key (`≤ 32`; higher key bits are ignored for the order but
/// kept in the data). LSD radix sort, one bit per pass.
pub fn sort_by_key(
    dev: &Device,
    scratch: &mut Scratch,
    keys: &mut Buffer<u32>,
    values: &mut Buffer<u32>,
    n: usize,
    key_bits: u32,
) -> Result<()> {
    check(dev, keys, n, "sort_by_key keys")?;
    check(dev, values, n, "sort_by_key values")?;
    if key_bits > 32 {
        return Err(Error::invalid("key_bits", key_bits, "at most 32"));
    }
    if n <= 1 || key_bits == 0 {
        return Ok(());
    }
    if matches!(dev, Device::Cuda(_)) && n <= RANK_SORT_MAX {
        // One launch instead of a scan and a scatter per key bit. A stable sort's output
        // is unique, so this agrees exactly with the radix sort the CPU runs.
        grow(dev, &mut scratch.keys, n)?;
        grow(dev, &mut scratch.values, n)?;
        let (tmp_k, tmp_v) = (scratch.keys.as_mut().expect("grown"), scratch.values.as_mut().expect("grown"));
        let mask = if key_bits == 32 { u32::MAX } else { (1u32 << key_bits) - 1 };
        let args = k::RankSortArgs::<Views> {
            keys_in: keys.slice(..n)?,
            values_in: values.slice(..n)?,
            keys_out: tmp_k.slice_mut(..n)?,
            values_out: tmp_v.slice_mut(..n)?,
            n: n as u32,
            mask,
        };
        // SAFETY: keys and values hold `n` items, the scratch pair was grown to `n`.
        unsafe { launch_sliced::<k::RankSort>(dev, n, args)? };
        dev.copy(scratch.keys.as_ref().expect("grown"), n, keys, 0)?;
        dev.copy(scratch.values.as_ref().expect("grown"), n, values, 0)?;
        return Ok(());
    }
    let plan = Plan::new(n);
    grow(dev, &mut scratch.sums, plan.sums_len)?;
    grow(dev, &mut scratch.local, n)?;
    grow(dev, &mut scratch.keys, n)?;
    grow(dev, &mut scratch.values, n)?;
    let Scratch { sums, local, keys: tmp_k, values: tmp_v, .. } = scratch;
    let (sums, local) = (sums.as_mut().expect("grown"), local.as_mut().expect("grown"));
    let (tmp_k, tmp_v) = (tmp_k.as_mut().expect("grown"), tmp_v.as_mut().expect("grown"));
    for bit in 0..key_bits {
        // Ping-pong: even bits read the caller's pair, odd bits the scratch pair.
        let (src_k, src_v, dst_k, dst_v) = if bit % 2 == 0 {
            (&*keys, &*values, &mut *tmp_k, &mut *tmp_v)
        } else {
            (&*tmp_k, &*tmp_v, &mut *keys, &mut *values)
        };
        let pred = Pred { shift: bit, mask: 1, mode: k::MODE_ZERO };
        scan(dev, &plan, sums.view_mut(), src_k.slice(..n)?, local.slice_mut(..n)?, pred, k::OP_SUM, true)?;
        let args = k::SplitArgs::<Views> {
            keys_in: src_k.slice(..n)?,
            values_in: src_v.slice(..n)?,
            local: local.slice(..n)?,
            offsets: sums.slice(plan.levels[0].0..)?,
            zeros: sums.slice(plan.total_at()..)?,
            keys_out: dst_k.slice_mut(..n)?,
            values_out: dst_v.slice_mut(..n)?,
            bit,
        };
        // SAFETY: the split writes item `i` to its scanned slot, a permutation of `..n`.
        unsafe { dev.launch::<k::SplitScatter>(n, args)? };
    }
    if key_bits % 2 == 1 {
        // The result is in the scratch pair.
        dev.copy(scratch.keys.as_ref().expect("grown"), n, keys, 0)?;
        dev.copy(scratch.values.as_ref().expect("grown"), n, values, 0)?;
    }
    Ok(())
}

/// Launches `n` items of a kernel whose CUDA entry counts each item with
/// [`RANK_SLICES`](k::RANK_SLICES) threads ([`k::sliced_counts`]: the rank sort, the
/// level groups): `⌈n / RANK_ITEMS⌉` CTAs of [`RANK_CTA`](k::RANK_CTA) threads with
/// [`RANK_SHARED_BYTES`](k::RANK_SHARED_BYTES) of shared memory; on the CPU one work
/// item per item.
///
/// # Safety
/// As for [`Device::launch`] of `n` items of `K`.
pub(crate) unsafe fn launch_sliced<K: Kernel + Entry>(
    dev: &Device,
    n: usize,
    args: <K::Args as Family>::With<Views<'_>>,
) -> Result<()> {
    // SAFETY: the caller's contract; the grid, CTA and shared memory are the
    // cooperative entry's.
    unsafe {
        match dev {
            Device::Cpu => dev.launch::<K>(n, args),
            Device::Cuda(_) => {
                let grid = u32::try_from(n.div_ceil(k::RANK_ITEMS))
                    .map_err(|_| Error::invalid("launch size", n, "at most 2^31 CTAs"))?;
                dev.launch_cta::<K>(grid, k::RANK_CTA, k::RANK_SHARED_BYTES, n, args)
            }
        }
    }
}

/// `out[indices[i]] = values[i]` for `i < n`. `T` must be 1, 4 or 8 bytes. The buffers
/// are checked (same device, `values` and `indices` hold `n` items), the indices are not:
/// checking them would cost a pass over the indices and a read-back on the device.
///
/// # Safety
/// The first `n` indices must be distinct and below `out.len()`, and `indices` must not
/// change until the work is done (CPU: on return; CUDA: at the next synchronising call).
/// An index past the end writes out of bounds, and two equal indices race (undefined
/// behaviour on the CPU, an unspecified winner on the GPU).
pub unsafe fn scatter<T: Elem>(
    dev: &Device,
    values: &Buffer<T>,
    indices: &Buffer<u32>,
    n: usize,
    out: &mut Buffer<T>,
) -> Result<()> {
    check(dev, values, n, "scatter values")?;
    check(dev, indices, n, "scatter indices")?;
    check(dev, out, 0, "scatter output")?;
    if n == 0 {
        return Ok(());
    }
    macro_rules! go {
        ($w:ty) => {
            dev.launch::<k::Scatter<$w>>(
                n,
                k::ScatterArgs::<$w, Views> {
                    values: values.slice(..n)?.cast::<$w>()?,
                    indices: indices.slice(..n)?,
                    out: out.view_mut().cast::<$w>()?,
                },
            )
        };
    }
    // SAFETY: `values`/`indices` hold `n` items (checked); the caller guarantees that the
    // indices are distinct and below `out.len()`.
    unsafe {
        match word_size::<T>()? {
            1 => go!(u8),
            4 => go!(u32),
            _ => go!(u64),
        }
    }
}

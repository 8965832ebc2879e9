//! Sorted distinct block IDs without sorting, the per-element kernels: [`MarkSeen`] flags
//! listed IDs in an array indexed by ID, [`TakeSeen`] lists the flagged ones in ascending
//! order and clears them. The host side is `ramus::backend::primitives::seen`.

use core::sync::atomic::{AtomicU32, Ordering};

use super::{position, TILE_SHIFT};
use crate::launch::Kernel;
use crate::memory::Lens;

crate::kernel_args! {
    /// Flags listed IDs in a per-ID array: `seen[ids[i]] = 1` where `valid` is null or
    /// `valid[i] != 0`.
    pub struct MarkSeenArgs {
        pub ids: ref u32,
        pub valid: ref u32,
        pub seen: mut u32,
    }
}

/// First half of a sort-free "sort, then unique" of block IDs: flags every listed ID in
/// an array indexed by ID; [`TakeSeen`] then lists the flagged IDs in ascending order.
/// The result equals the sorted distinct values, with O(n + range) work and no key passes.
pub struct MarkSeen;

impl Kernel for MarkSeen {
    type Args = MarkSeenArgs;

    fn max_items(l: &MarkSeenArgs<Lens>) -> Option<usize> {
        Some(if l.valid == 0 { l.ids } else { l.ids.min(l.valid) })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &MarkSeenArgs) {
        if a.valid.is_null() || *a.valid.add(i) != 0 {
            // Several items may name one ID: atomic (relaxed) stores make those
            // concurrent writes of the same value race-free; they compile to plain stores.
            let p = a.seen.add(*a.ids.add(i) as usize);
            AtomicU32::from_ptr(p).store(1, Ordering::Relaxed);
        }
    }
}

crate::kernel_args! {
    /// Lists and clears the flagged IDs: `out[pos(i)] = i`, `flags[i] = 0` where
    /// `flags[i] != 0` (`local`/`offsets`: the scan of `flags[i] != 0`).
    pub struct TakeSeenArgs {
        pub flags: mut u32,
        pub local: ref u32,
        pub offsets: ref u64,
        pub out: mut u32,
    }
}

/// Second half of the sort-free unique ([`MarkSeen`]): a compaction of the flag indices
/// that also resets the flags, so the flag array is all zeros again for the next use.
pub struct TakeSeen;

impl Kernel for TakeSeen {
    type Args = TakeSeenArgs;

    fn max_items(l: &TakeSeenArgs<Lens>) -> Option<usize> {
        Some(l.flags.min(l.local).min(l.offsets << TILE_SHIFT))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &TakeSeenArgs) {
        if *a.flags.add(i) != 0 {
            *a.out.add(position(a.local, a.offsets, i)) = i as u32;
            *a.flags.add(i) = 0;
        }
    }
}

//! Packing the data of listed blocks into a contiguous buffer and back: the unit of block
//! data the host moves as a whole. Today it saves the cells that a read of the solution
//! overwrites ([`crate::average`] into every parent) and restores them after the read;
//! migrating blocks between processes will pack and unpack the same way.
//!
//! A block's values are contiguous in every per-block array (`words` of them: `Q·4^D`
//! populations, `4^D` eddy viscosities), so one item moves one word.

use crate::launch::Kernel;
use crate::memory::Lens;
use crate::primitives::Word;

crate::kernel_args! {
    /// `packed[i·words + k] ↔ pool[list[i]·words + k]` for `k < words`.
    pub struct PackArgs<T> {
        pub pool: mut T,
        pub list: ref u32,
        pub packed: mut T,
        pub words: val u32,
    }
}

/// Copies the listed blocks of `pool` into `packed` (`UNPACK = false`) or back
/// (`UNPACK = true`). The IDs of `list` must be distinct blocks of the pool.
pub struct PackBlocks<T, const UNPACK: bool>(core::marker::PhantomData<T>);

impl<T: Word, const UNPACK: bool> Kernel for PackBlocks<T, UNPACK> {
    type Args = PackArgs<T>;

    fn max_items(l: &PackArgs<T, Lens>) -> Option<usize> {
        Some(l.list.checked_mul(l.words as usize)?.min(l.packed))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &PackArgs<T>) {
        let w = a.words as usize;
        let (slot, k) = (i / w, i % w);
        let at = *a.list.add(slot) as usize * w + k;
        if UNPACK {
            *a.pool.add(at) = *a.packed.add(i);
        } else {
            *a.packed.add(i) = *a.pool.add(at);
        }
    }
}

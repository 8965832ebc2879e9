//! Packing listed blocks of a per-block array into a contiguous buffer and back
//! ([`ramus_kernels::pack`]).

use ramus_kernels::pack as k;

use super::*;
use crate::backend::slice::Views;

/// Copies the `words` values of each block of `list` from `pool` into `packed`, in list
/// order (`unpack = false`), or from `packed` back into `pool` (`unpack = true`). `T` must
/// be 2, 4 or 8 bytes; `packed` must hold `list.len() · words` values (checked).
///
/// # Safety
/// The IDs of `list` must be distinct and below `pool.len() / words`, and `list` must not
/// change until the work is done (CPU: on return; CUDA: at the next synchronising call).
pub unsafe fn pack_blocks<T: Elem>(
    dev: &Device,
    pool: DeviceSliceMut<'_, T>,
    list: DeviceSlice<'_, u32>,
    words: usize,
    packed: DeviceSliceMut<'_, T>,
    unpack: bool,
) -> Result<()> {
    let n =
        list.len().checked_mul(words).filter(|&n| n <= packed.len()).ok_or_else(|| {
            Error::invalid("packed blocks", packed.len(), format!("{} blocks of {words}", list.len()))
        })?;
    let words = u32::try_from(words).map_err(|_| Error::invalid("words per block", words, "at most 2^32 - 1"))?;
    if n == 0 {
        return Ok(());
    }
    macro_rules! go {
        ($w:ty) => {{
            let args = k::PackArgs::<$w, Views> { pool: pool.cast::<$w>()?, list, packed: packed.cast::<$w>()?, words };
            if unpack {
                dev.launch::<k::PackBlocks<$w, true>>(n, args)
            } else {
                dev.launch::<k::PackBlocks<$w, false>>(n, args)
            }
        }};
    }
    // SAFETY: `packed` holds the `n` items (checked); the caller guarantees that the IDs
    // are distinct blocks of the pool.
    unsafe {
        // Its own sizes (the pool of 16-bit storage is 2 bytes), not `word_size`'s.
        match (std::mem::size_of::<T>(), std::mem::align_of::<T>()) {
            (2, 2) => go!(u16),
            (4, 4) => go!(u32),
            (8, 8) => go!(u64),
            _ => Err(Error::invalid("element type", std::any::type_name::<T>(), "an element of 2, 4 or 8 bytes")),
        }
    }
}

//! PTX entry points of the parallel primitives (see `crate::primitives`).
//!
//! Element kernels come from [`kernel_entries!`]; the tile pass of the scan is the
//! cooperative `scan_tile_cooperative` on a CUDA CTA ([`Nv`]): one CTA of `SCAN_CTA` = 256
//! threads per tile of 2048 items, `SCAN_SHARED_BYTES` of dynamic shared memory, launched
//! by the host with `Device::launch_cta`.

use super::{thread_index, Nv};
use crate::primitives::{
    scan_tile_cooperative, AddOffsets, CompactIndices, CompactValues, MarkSeen, RankSort, ScanArgs, Scatter,
    SplitScatter, TakeSeen,
};

kernel_entries!(
    prim_add_offsets_u32 => AddOffsets<u32>,
    prim_add_offsets_u64 => AddOffsets<u64>,
    prim_compact_indices => CompactIndices,
    prim_compact_b1 => CompactValues<u8>,
    prim_compact_b4 => CompactValues<u32>,
    prim_compact_b8 => CompactValues<u64>,
    prim_scatter_b1 => Scatter<u8>,
    prim_scatter_b4 => Scatter<u32>,
    prim_scatter_b8 => Scatter<u64>,
    prim_split_scatter => SplitScatter,
    prim_rank_sort => RankSort,
    prim_mark_seen => MarkSeen,
    prim_take_seen => TakeSeen,
);

/// Tile pass over a `u32` input (mapped by the predicate), `u32` output.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn prim_scan_tiles_u32(args: ScanArgs<u32, u32>) {
    scan_tile_cooperative(&Nv, &args)
}

/// Tile pass over `u64` tile totals (in place), `u64` output.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn prim_scan_tiles_u64(args: ScanArgs<u64, u64>) {
    scan_tile_cooperative(&Nv, &args)
}

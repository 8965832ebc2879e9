//! Per-element kernels of the device-parallel primitives (exclusive scan, stream
//! compaction, radix sort, unique, scatter, reductions) used by the AMR routine; the
//! host side is `ramus::backend::primitives`.
//!
//! # Scan layout (both backends)
//! The input is cut into tiles of [`TILE`] items. A tile pass ([`ScanArgs`]) writes the
//! *tile-local* exclusive scan of the (predicate-mapped) items and one `u64` total per
//! tile; the tile totals are scanned the same way, recursively, until one tile is left.
//! Consumers (compaction, split scatter) then add the scanned tile offset themselves:
//! `global[i] = local[i] + offsets[i >> TILE_SHIFT]`. On CUDA the tile pass is the
//! cooperative kernel `prim_scan_tiles_*` of `crate::registry` (256 threads × 8 items, shared memory); on the CPU
//! it is [`ScanTileSerial`], one work item per tile. Both compute the same integers, so
//! every primitive is bitwise identical on the two backends.
//!
//! Element kernels that only move data ([`Scatter`], [`CompactValues`]) are instantiated
//! per element *size* ([`Word`]: `u8`, `u32`, `u64`); the host reinterprets any element
//! type of that size.

use crate::memory::Lens;

use crate::launch::Kernel;

mod seen;
pub use seen::{MarkSeen, MarkSeenArgs, TakeSeen, TakeSeenArgs};

/// log2 of [`TILE`].
pub const TILE_SHIFT: u32 = 11;
/// Items per scan tile.
pub const TILE: usize = 1 << TILE_SHIFT;
/// Threads per CTA of the cooperative CUDA tile scan.
pub const SCAN_CTA: u32 = 256;
/// Items per thread of the cooperative CUDA tile scan (`SCAN_CTA * SCAN_ITEMS == TILE`).
pub const SCAN_ITEMS: u32 = 8;
/// `u64` slots of shared memory the cooperative tile scan uses: the padded tile
/// (one pad slot per 8 items) followed by the 256 thread totals.
pub const SCAN_SHARED_WORDS: usize = TILE + TILE / 8 + SCAN_CTA as usize;
const _: () = assert!(SCAN_CTA as usize * SCAN_ITEMS as usize == TILE && SCAN_ITEMS == 8);
/// Dynamic shared memory of the cooperative tile scan, in bytes.
pub const SCAN_SHARED_BYTES: u32 = (SCAN_SHARED_WORDS * 8) as u32;

/// Predicate mode: the item is `(x >> shift) & mask`.
pub const MODE_VALUE: u32 = 0;
/// Predicate mode: 1 if `(x >> shift) & mask != 0`, else 0.
pub const MODE_NONZERO: u32 = 1;
/// Predicate mode: 1 if `(x >> shift) & mask == 0`, else 0.
pub const MODE_ZERO: u32 = 2;
/// Predicate mode: 1 if `i == 0` or `x[i] != x[i - 1]` (run heads of a sorted array).
pub const MODE_HEAD: u32 = 3;

/// Combining operation: wrapping `u64` sum.
pub const OP_SUM: u32 = 0;
/// Combining operation: maximum (identity 0).
pub const OP_MAX: u32 = 1;

/// Predicate of item `i` of a `u32` array (see the `MODE_*` constants).
///
/// # Safety
/// `x` must be valid for reading item `i` (and `i - 1` for [`MODE_HEAD`]).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn predicate(x: *const u32, i: usize, shift: u32, mask: u32, mode: u32) -> u32 {
    let v = *x.add(i);
    if mode == MODE_HEAD {
        (i == 0 || v != *x.add(i - 1)) as u32
    } else {
        let b = (v >> shift) & mask;
        if mode == MODE_NONZERO {
            (b != 0) as u32
        } else if mode == MODE_ZERO {
            (b == 0) as u32
        } else {
            b
        }
    }
}

/// `a ⊕ b` for [`OP_SUM`] / [`OP_MAX`].
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub fn combine(op: u32, a: u64, b: u64) -> u64 {
    if op == OP_SUM {
        a.wrapping_add(b)
    } else if a > b {
        a
    } else {
        b
    }
}

/// Element type of a scan input.
pub trait ScanIn: Copy + crate::memory::ArgBytes + 'static {
    /// Item `i` as the scan sees it (`u32`: mapped by the predicate; `u64`: as is).
    ///
    /// # Safety
    /// As for [`predicate`].
    unsafe fn load(p: *const Self, i: usize, shift: u32, mask: u32, mode: u32) -> u64;
}

impl ScanIn for u32 {
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn load(p: *const u32, i: usize, shift: u32, mask: u32, mode: u32) -> u64 {
        predicate(p, i, shift, mask, mode) as u64
    }
}

impl ScanIn for u64 {
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn load(p: *const u64, i: usize, _: u32, _: u32, _: u32) -> u64 {
        *p.add(i)
    }
}

/// Element type of a scan output (`u32` output wraps).
pub trait ScanOut: Copy + crate::memory::ArgBytes + 'static {
    /// Truncating conversion.
    fn from_u64(v: u64) -> Self;
    /// Widening conversion.
    fn to_u64(self) -> u64;
}

impl ScanOut for u32 {
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn from_u64(v: u64) -> u32 {
        v as u32
    }
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn to_u64(self) -> u64 {
        self as u64
    }
}

impl ScanOut for u64 {
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn from_u64(v: u64) -> u64 {
        v
    }
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn to_u64(self) -> u64 {
        self
    }
}

crate::kernel_args! {
    /// One tile pass of the scan: for every tile `t` of `input[..n]`, the tile-local
    /// exclusive `op`-scan of the loaded items into `output` (skipped if `output` is
    /// null; may equal `input`), and the tile's total into `sums[t]`.
    pub struct ScanArgs<I, O> {
        pub input: ref I,
        pub output: mut O,
        pub sums: mut u64,
        pub n: val u64,
        pub shift: val u32,
        pub mask: val u32,
        pub mode: val u32,
        pub op: val u32,
    }
}

/// The tile pass on the CPU: work item `t` scans tile `t` serially (CUDA runs the
/// cooperative kernel `prim_scan_tiles_*` instead, with the same result).
pub struct ScanTileSerial<I, O>(core::marker::PhantomData<(I, O)>);

impl<I: ScanIn, O: ScanOut> Kernel for ScanTileSerial<I, O> {
    type Args = ScanArgs<I, O>;

    fn max_items(l: &ScanArgs<I, O, Lens>) -> Option<usize> {
        Some(if (l.input as u64) < l.n || (l.output != 0 && (l.output as u64) < l.n) { 0 } else { l.sums })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(t: usize, a: &ScanArgs<I, O>) {
        let n = a.n as usize;
        let start = t << TILE_SHIFT;
        let end = if start + TILE < n { start + TILE } else { n };
        let mut acc = 0u64;
        let mut i = start;
        while i < end {
            let v = I::load(a.input, i, a.shift, a.mask, a.mode);
            if !a.output.is_null() {
                *a.output.add(i) = O::from_u64(acc);
            }
            acc = combine(a.op, acc, v);
            i += 1;
        }
        *a.sums.add(t) = acc;
    }
}

/// The view of one CTA that the cooperative kernels (the tile scan, the vorticity
/// criterion of [`crate::criterion`]) need: on CUDA the thread and block indices,
/// `__syncthreads` and the dynamic shared memory (`crate::ptx`); a test can emulate a CTA
/// with host threads and a barrier to run the very same code.
pub trait Cta {
    /// Thread index in the CTA.
    fn thread(&self) -> usize;
    /// CTA index in the grid (the scan: the tile).
    fn block(&self) -> usize;
    /// Barrier of all threads of the CTA, ordering their shared-memory accesses.
    fn sync(&self);
    /// The CTA's shared memory, as many `u64`s as the kernel's launch reserves
    /// ([`SCAN_SHARED_WORDS`] for the scan).
    fn shared(&self) -> *mut u64;
}

/// Padded tile items in shared memory; the thread totals follow.
const PADDED: usize = TILE + TILE / 8;

/// Shared-memory slot of tile item `j`: one pad slot per 8 items, so that a thread reading
/// its items `8t..8t+8` (stride 9 slots) does not hit its neighbours' banks.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn pad(j: usize) -> usize {
    j + (j >> 3)
}

/// Inclusive scan under `op` ([`combine`]) of the `threads` words `totals[..threads]`
/// of the CTA's shared memory, in place (Hillis–Steele: log₂ `threads` rounds of two
/// barriers).
///
/// # Safety
/// Called by every thread of a CTA of `threads` threads; `totals` holds `threads` words
/// of its shared memory.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn cta_inclusive_scan<C: Cta>(cta: &C, totals: *mut u64, threads: usize, op: u32) {
    let t = cta.thread();
    let mut d = 1;
    while d < threads {
        let mut x = *totals.add(t);
        if t >= d {
            x = combine(op, *totals.add(t - d), x);
        }
        cta.sync();
        *totals.add(t) = x;
        cta.sync();
        d <<= 1;
    }
}

/// The cooperative tile pass (see [`ScanArgs`]), run by each of the [`SCAN_CTA`] threads
/// of CTA `b`, which scans tile `b`:
///
/// 1. coalesced load of the tile (item `k·256 + t` by thread `t`) into shared memory,
///    items past `n` as the identity 0;
/// 2. thread `t` scans items `8t..8t+8` serially in place, keeping its total;
/// 3. Hillis–Steele inclusive scan of the 256 thread totals;
/// 4. coalesced write of `thread prefix ⊕ item prefix`, and the tile total.
///
/// Every thread reaches every [`Cta::sync`] (no early exit); loops have constant or
/// uniform trip counts and index shared memory, never a local array.
///
/// # Safety
/// Launched with exactly [`SCAN_CTA`] threads per CTA, one CTA per tile, and
/// [`SCAN_SHARED_BYTES`] of shared memory; pointers as for [`ScanArgs`].
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn scan_tile_cooperative<C: Cta, I: ScanIn, O: ScanOut>(cta: &C, a: &ScanArgs<I, O>) {
    const CTA: usize = SCAN_CTA as usize;
    const ITEMS: usize = SCAN_ITEMS as usize;
    let smem = cta.shared();
    let totals = smem.add(PADDED);
    let t = cta.thread();
    let tile = cta.block();
    let base = tile * TILE;
    let n = a.n as usize;
    let op = a.op;

    let mut k = 0;
    while k < ITEMS {
        let j = k * CTA + t;
        let idx = base + j;
        let v = if idx < n { I::load(a.input, idx, a.shift, a.mask, a.mode) } else { 0 };
        *smem.add(pad(j)) = v;
        k += 1;
    }
    cta.sync();

    let mut acc = 0u64;
    let mut k = 0;
    while k < ITEMS {
        let p = smem.add(pad(t * ITEMS + k));
        let v = *p;
        *p = acc;
        acc = combine(op, acc, v);
        k += 1;
    }
    *totals.add(t) = acc;
    cta.sync();

    cta_inclusive_scan(cta, totals, CTA, op);

    if t == 0 {
        *a.sums.add(tile) = *totals.add(CTA - 1);
    }
    if !a.output.is_null() {
        let mut k = 0;
        while k < ITEMS {
            let j = k * CTA + t;
            let idx = base + j;
            if idx < n {
                let owner = j >> 3; // j / ITEMS
                let before = if owner == 0 { 0 } else { *totals.add(owner - 1) };
                *a.output.add(idx) = O::from_u64(combine(op, before, *smem.add(pad(j))));
            }
            k += 1;
        }
    }
}

crate::kernel_args! {
    /// `data[i] += offsets[i >> TILE_SHIFT]` (wrapping) for `i < n`.
    pub struct AddOffsetsArgs<O> {
        pub data: mut O,
        pub offsets: ref u64,
    }
}

/// Adds scanned tile offsets to a tile-local scan.
pub struct AddOffsets<O>(core::marker::PhantomData<O>);

impl<O: ScanOut> Kernel for AddOffsets<O> {
    type Args = AddOffsetsArgs<O>;

    fn max_items(l: &AddOffsetsArgs<O, Lens>) -> Option<usize> {
        Some(l.data.min(l.offsets << TILE_SHIFT))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &AddOffsetsArgs<O>) {
        let p = a.data.add(i);
        *p = O::from_u64((*p).to_u64().wrapping_add(*a.offsets.add(i >> TILE_SHIFT)));
    }
}

/// Global position of item `i` from the tile-local scan and the scanned tile offsets.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub(crate) unsafe fn position(local: *const u32, offsets: *const u64, i: usize) -> usize {
    ((*local.add(i) as u64).wrapping_add(*offsets.add(i >> TILE_SHIFT)) as u32) as usize
}

crate::kernel_args! {
    /// Stream compaction of indices: `out[pos(i)] = i` where the predicate of `flags[i]`
    /// holds (`local`/`offsets`: the scan of that predicate).
    pub struct CompactIndicesArgs {
        pub flags: ref u32,
        pub local: ref u32,
        pub offsets: ref u64,
        pub out: mut u32,
        pub shift: val u32,
        pub mask: val u32,
        pub mode: val u32,
    }
}

/// Writes the indices whose predicate holds to their compacted positions.
pub struct CompactIndices;

impl Kernel for CompactIndices {
    type Args = CompactIndicesArgs;

    fn max_items(l: &CompactIndicesArgs<Lens>) -> Option<usize> {
        Some(l.flags.min(l.local).min(l.offsets << TILE_SHIFT))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &CompactIndicesArgs) {
        if predicate(a.flags, i, a.shift, a.mask, a.mode) != 0 {
            *a.out.add(position(a.local, a.offsets, i)) = i as u32;
        }
    }
}

/// A plain element of a given size (1, 4 or 8 bytes), for data-moving kernels.
pub trait Word: Copy + crate::memory::ArgBytes + 'static {}
impl Word for u8 {}
impl Word for u16 {}
impl Word for u32 {}
impl Word for u64 {}

crate::kernel_args! {
    /// Stream compaction of values: `out[pos(i)] = values[i]` where the predicate of
    /// `flags[i]` holds.
    pub struct CompactValuesArgs<T> {
        pub flags: ref u32,
        pub values: ref T,
        pub local: ref u32,
        pub offsets: ref u64,
        pub out: mut T,
        pub shift: val u32,
        pub mask: val u32,
        pub mode: val u32,
    }
}

/// Writes the values whose predicate holds to their compacted positions.
pub struct CompactValues<T>(core::marker::PhantomData<T>);

impl<T: Word> Kernel for CompactValues<T> {
    type Args = CompactValuesArgs<T>;

    fn max_items(l: &CompactValuesArgs<T, Lens>) -> Option<usize> {
        Some(l.flags.min(l.values).min(l.local).min(l.offsets << TILE_SHIFT))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &CompactValuesArgs<T>) {
        if predicate(a.flags, i, a.shift, a.mask, a.mode) != 0 {
            *a.out.add(position(a.local, a.offsets, i)) = *a.values.add(i);
        }
    }
}

crate::kernel_args! {
    /// Arguments of [`ScanAt`].
    pub struct ScanAtArgs {
        /// Positions to evaluate the exclusive scan at; any value is safe (one at or past
        /// `n` reads the total).
        pub at: ref u32,
        /// Number of positions (`out` gets one more item: the total).
        pub m: val u64,
        /// Tile-local exclusive scan of the `n` items.
        pub local: ref u32,
        /// Global offset of every tile of the `n` items.
        pub offsets: ref u64,
        /// The grand total (one item).
        pub total: ref u64,
        /// Items scanned.
        pub n: val u64,
        /// `out[s]`: the exclusive scan at `at[s]`, `s < m`; `out[m]`: the total.
        pub out: mut u64,
    }
}

/// The exclusive scan of `n` items evaluated at given positions, and the total after them:
/// where the segments of one compaction (e.g. a list per level and kind) begin in its
/// output, so that one read-back gives every segment's offset and length.
pub struct ScanAt;

impl Kernel for ScanAt {
    type Args = ScanAtArgs;

    fn max_items(l: &ScanAtArgs<Lens>) -> Option<usize> {
        let n = usize::try_from(l.n).ok()?;
        let m = usize::try_from(l.m).ok()?;
        let scanned = l.local >= n && l.offsets >= n.div_ceil(TILE) && l.total >= 1 && l.at >= m;
        Some(if scanned { m.checked_add(1)?.min(l.out) } else { 0 })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ScanAtArgs) {
        let p = if (i as u64) < a.m { *a.at.add(i) as u64 } else { a.n };
        *a.out.add(i) = if p < a.n {
            (*a.local.add(p as usize) as u64).wrapping_add(*a.offsets.add((p >> TILE_SHIFT) as usize))
        } else {
            *a.total
        };
    }
}

crate::kernel_args! {
    /// `out[indices[i]] = values[i]`.
    pub struct ScatterArgs<T> {
        pub values: ref T,
        pub indices: ref u32,
        pub out: mut T,
    }
}

/// Scatter through an index map (indices distinct).
pub struct Scatter<T>(core::marker::PhantomData<T>);

impl<T: Word> Kernel for Scatter<T> {
    type Args = ScatterArgs<T>;

    fn max_items(l: &ScatterArgs<T, Lens>) -> Option<usize> {
        Some(l.values.min(l.indices))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &ScatterArgs<T>) {
        *a.out.add(*a.indices.add(i) as usize) = *a.values.add(i);
    }
}

crate::kernel_args! {
    /// One stable split of an LSD radix sort on bit `bit`: items whose bit is 0 keep
    /// their order at the front, the others follow. `local`/`offsets` are the scan of
    /// "bit is 0", `zeros` points at its total.
    pub struct SplitArgs {
        pub keys_in: ref u32,
        pub values_in: ref u32,
        pub local: ref u32,
        pub offsets: ref u64,
        pub zeros: ref u64,
        pub keys_out: mut u32,
        pub values_out: mut u32,
        pub bit: val u32,
    }
}

crate::kernel_args! {
    /// Stable rank sort of `n` (key, value) pairs by `key & mask`.
    pub struct RankSortArgs {
        pub keys_in: ref u32,
        pub values_in: ref u32,
        pub keys_out: mut u32,
        pub values_out: mut u32,
        pub n: val u32,
        pub mask: val u32,
    }
}

/// Stable sort of a small input in one launch: item `i` counts the items that must
/// precede it (smaller key, or equal key and smaller index) and writes itself there.
/// O(n²) work, O(1) launches: for the few-dozen-element sorts of small adapts, where a
/// radix sort's passes would cost one launch each.
pub struct RankSort;

impl Kernel for RankSort {
    type Args = RankSortArgs;

    fn max_items(l: &RankSortArgs<Lens>) -> Option<usize> {
        Some((l.n as usize).min(l.keys_in).min(l.values_in).min(l.keys_out).min(l.values_out))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &RankSortArgs) {
        let k = *a.keys_in.add(i) & a.mask;
        let mut rank = 0usize;
        for j in 0..a.n as usize {
            let kj = *a.keys_in.add(j) & a.mask;
            rank += (kj < k || (kj == k && j < i)) as usize;
        }
        *a.keys_out.add(rank) = *a.keys_in.add(i);
        *a.values_out.add(rank) = *a.values_in.add(i);
    }
}

/// Threads per CTA of [`rank_sort_cooperative`].
pub const RANK_CTA: u32 = 256;
/// Threads that count one item's rank in [`rank_sort_cooperative`], each over every
/// `RANK_SLICES`-th key.
pub const RANK_SLICES: usize = 16;
/// Items per CTA of [`rank_sort_cooperative`].
pub const RANK_ITEMS: usize = RANK_CTA as usize / RANK_SLICES;
/// Shared memory of [`rank_sort_cooperative`]: one partial rank (`u64`) per thread.
pub const RANK_SHARED_BYTES: u32 = RANK_CTA * 8;

/// [`RankSort`] on a CUDA CTA of [`RANK_CTA`] threads: [`RANK_SLICES`] consecutive threads
/// count the rank of one item, each over every `RANK_SLICES`-th key (a warp reads
/// consecutive keys), and the first of them adds their partial counts from shared memory
/// and writes the item. One thread per item looped over all `n` keys: a few dozen warps
/// for the whole GPU, each `n` loads long (0.13 ms for 2 560 items on an H200,
/// BENCHMARKS.md, thirty-ninth session). Ranks are integer sums, so the output equals
/// [`RankSort`]'s.
///
/// # Safety
/// Launched with [`RANK_CTA`] threads per CTA, `⌈n / RANK_ITEMS⌉` CTAs and
/// [`RANK_SHARED_BYTES`] of shared memory; pointers as for [`RankSort`].
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn rank_sort_cooperative<C: Cta>(cta: &C, a: &RankSortArgs) {
    let n = a.n as usize;
    // SAFETY (both closures): the caller's contract; `i < n`, and `r < n` is a rank.
    let key = |j: usize| unsafe { *a.keys_in.add(j) } & a.mask;
    let rank = |i: usize, first: usize, step: usize| {
        let k = key(i);
        let mut rank = 0u64;
        let mut j = first;
        while j < n {
            let kj = key(j);
            rank += (kj < k || (kj == k && j < i)) as u64;
            j += step;
        }
        rank
    };
    let write = |i: usize, r: u64| unsafe {
        *a.keys_out.add(r as usize) = *a.keys_in.add(i);
        *a.values_out.add(r as usize) = *a.values_in.add(i);
    };
    sliced_counts(cta, n, rank, write);
}

/// The counting pattern of [`rank_sort_cooperative`] and
/// [`crate::amr::select::level_groups_cooperative`] on a CTA of [`RANK_CTA`] threads:
/// item `i = block · RANK_ITEMS + thread / RANK_SLICES` (below `items`) is counted by its
/// [`RANK_SLICES`] consecutive threads, each calling `count(i, slice, RANK_SLICES)` (a
/// partial count over every `RANK_SLICES`-th key from `slice`); the first of them adds the
/// partial counts from shared memory and calls `write(i, total)`.
///
/// # Safety
/// Called by every thread of a CTA of [`RANK_CTA`] threads with [`RANK_SHARED_BYTES`] of
/// shared memory; `count` and `write` safe to call for every item below `items`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn sliced_counts<C: Cta>(
    cta: &C,
    items: usize,
    count: impl Fn(usize, usize, usize) -> u64,
    write: impl Fn(usize, u64),
) {
    let partial = cta.shared();
    let th = cta.thread();
    let i = cta.block() * RANK_ITEMS + th / RANK_SLICES;
    *partial.add(th) = if i < items { count(i, th % RANK_SLICES, RANK_SLICES) } else { 0 };
    cta.sync();
    if th.is_multiple_of(RANK_SLICES) && i < items {
        let mut total = 0u64;
        for s in 0..RANK_SLICES {
            total += *partial.add(th + s);
        }
        write(i, total);
    }
}

/// Stable split scatter of (key, value) pairs by one key bit.
pub struct SplitScatter;

impl Kernel for SplitScatter {
    type Args = SplitArgs;

    fn max_items(l: &SplitArgs<Lens>) -> Option<usize> {
        Some(if l.zeros == 0 {
            0
        } else {
            l.keys_in.min(l.values_in).min(l.local).min(l.offsets << TILE_SHIFT).min(l.keys_out).min(l.values_out)
        })
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SplitArgs) {
        let k = *a.keys_in.add(i);
        let before = position(a.local, a.offsets, i); // zeros before i
        let p = if (k >> a.bit) & 1 == 0 {
            before
        } else {
            // ones before i = i - before; they follow all zeros.
            (*a.zeros as usize) + i - before
        };
        *a.keys_out.add(p) = k;
        *a.values_out.add(p) = *a.values_in.add(i);
    }
}

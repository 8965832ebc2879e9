//! Sorted distinct values of a short list by ranks: "sort, then unique" in one launch of
//! one CTA and no per-ID array. The host side is
//! `ramus::backend::primitives::distinct_short`.
//!
//! The AMR routine deduplicates block lists (paper, steps 1, 7 and 8) by flagging IDs in
//! an array indexed by ID and compacting it ([`crate::primitives::MarkSeen`]): O(items +
//! range) work in five launches, where the range is every ID handed out. For the few
//! dozen or hundred IDs of a small adapt the range and the launches dominate; ranking
//! each item against all others costs O(items²) work but one launch:
//!
//! 1. an item is a *repeat* if it is invalid or an earlier item holds the same value;
//! 2. every non-repeat writes its value at its rank among the non-repeats (how many of
//!    them are smaller), and the largest one writes the count.
//!
//! On CUDA one CTA of [`DISTINCT_CTA`] threads does both passes on a copy of the list in
//! shared memory ([`distinct_cooperative`]); on the CPU [`DistinctSerial`] does them in
//! one work item, with the repeat flags in a buffer. The output is unique (the sorted
//! distinct values), so both equal the flag-array path's whatever the input order.

use crate::launch::Kernel;
use crate::memory::Lens;
use crate::primitives::Cta;

/// The longest list of one launch: the shared memory holds its values and flags.
pub const DISTINCT_MAX: usize = 2048;
/// Threads of the CTA of [`distinct_cooperative`].
pub const DISTINCT_CTA: u32 = 1024;
/// Shared memory of [`distinct_cooperative`]: a `u64` value and a `u64` flag per item.
pub const DISTINCT_SHARED_BYTES: u32 = (DISTINCT_MAX * 16) as u32;

/// The value of no item (an invalid one): above every `u32`.
const NONE: u64 = u64::MAX;

crate::kernel_args! {
    /// A short list and its sorted distinct values: the items are `ids[i]` for `i < n`
    /// where `valid` is null or `valid[i] != 0`, then `extra[j]` for `j < m`, all valid
    /// (`n + m ≤ DISTINCT_MAX`); the distinct values go to `out[..count]`.
    ///
    /// With a `table` (then `valid` is null), the first `n` items are gathered from it
    /// instead, `per` for each of the blocks `ids[..n / per]`: item `i` of block
    /// `b = ids[i / per]`, `k = i mod per`, reads `t = table[b per + k]`
    /// (`children == 0`: a block's links, or its parent with `per = 1`) or
    /// `t = table[b]` and takes `t + k` (`children == 1`: first child, then the others);
    /// it is valid where `t ≥ 0`. The gather kernel and its list are saved.
    pub struct DistinctArgs {
        pub ids: ref u32,
        pub valid: ref u32,
        pub table: ref i32,
        pub per: val u32,
        pub children: val u32,
        pub extra: ref u32,
        /// Per item, 1 if it is a repeat (the CPU's pass; unused on CUDA, may be empty).
        pub repeat: mut u32,
        pub out: mut u32,
        /// One `u64`: the number of distinct values.
        pub count: mut u64,
        pub n: val u32,
        pub m: val u32,
    }
}

/// Item `j` of the list (see [`DistinctArgs`]), [`NONE`] if invalid.
///
/// # Safety
/// `j < n + m`; `ids` (and `valid`, unless null) hold `n` items, or `n / per` with a
/// `table`, which holds every entry those blocks index; `extra` holds `m` items.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn item(a: &DistinctArgs, j: usize) -> u64 {
    let n = a.n as usize;
    if j >= n {
        *a.extra.add(j - n) as u64
    } else if !a.table.is_null() {
        let per = a.per as usize;
        let (b, k) = (*a.ids.add(j / per) as usize, j % per);
        let children = a.children != 0;
        let t = *a.table.add(if children { b } else { b * per + k });
        if t >= 0 {
            (t as u64) + if children { k as u64 } else { 0 }
        } else {
            NONE
        }
    } else if a.valid.is_null() || *a.valid.add(j) != 0 {
        *a.ids.add(j) as u64
    } else {
        NONE
    }
}

/// How many non-repeats lie below and above `v`, and how many there are, given the
/// values and the non-repeat flags of the `len` items.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn rank(len: usize, v: u64, value: impl Fn(usize) -> u64, first: impl Fn(usize) -> bool) -> (usize, usize, usize) {
    let (mut below, mut above, mut distinct) = (0, 0, 0);
    let mut j = 0;
    while j < len {
        // Branch-free: iterations can overlap.
        let counts = first(j) as usize;
        let w = value(j);
        below += counts & (w < v) as usize;
        above += counts & (w > v) as usize;
        distinct += counts;
        j += 1;
    }
    (below, above, distinct)
}

/// Whether the value `v` of item `i` is a repeat: invalid, or held by an earlier item.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn repeats(i: usize, v: u64, value: impl Fn(usize) -> u64) -> bool {
    let mut repeat = v == NONE;
    let mut j = 0;
    while j < i {
        repeat |= value(j) == v;
        j += 1;
    }
    repeat
}

/// Writes item `i`'s value at its rank if it is a non-repeat (and the count if it is the
/// largest); item 0 writes a count of 0 if every item is a repeat. Exactly one item writes
/// the count.
///
/// # Safety
/// `out` holds `len` items, `count` one.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn place(a: &DistinctArgs, i: usize, len: usize, value: impl Fn(usize) -> u64, first: impl Fn(usize) -> bool) {
    let is_first = first(i);
    if !is_first && i != 0 {
        return;
    }
    let v = value(i);
    let (below, above, distinct) = rank(len, v, &value, &first);
    if is_first {
        *a.out.add(below) = v as u32;
        if above == 0 {
            *a.count = distinct as u64;
        }
    } else if distinct == 0 {
        *a.count = 0;
    }
}

/// The short distinct on the CPU: one work item runs both passes over the list.
pub struct DistinctSerial;

impl Kernel for DistinctSerial {
    type Args = DistinctArgs;

    fn max_items(l: &DistinctArgs<Lens>) -> Option<usize> {
        let (n, m) = (l.n as usize, l.m as usize);
        let listed = if l.table == 0 {
            l.ids >= n && (l.valid == 0 || l.valid >= n)
        } else {
            // The table's entries are indexed by block IDs, which no length bounds: the
            // host function that passes a table is `unsafe`.
            l.per >= 1 && l.ids >= n.div_ceil(l.per as usize) && l.valid == 0
        };
        let holds = listed && l.extra >= m;
        let fits = n + m <= DISTINCT_MAX && l.repeat >= n + m && l.out >= n + m && l.count >= 1;
        Some((holds && fits) as usize)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(_: usize, a: &DistinctArgs) {
        let len = a.n as usize + a.m as usize;
        let value = |j| item(a, j);
        for i in 0..len {
            *a.repeat.add(i) = repeats(i, value(i), value) as u32;
        }
        let first = |j| *a.repeat.add(j) == 0;
        for i in 0..len {
            place(a, i, len, value, first);
        }
    }
}

/// The short distinct on CUDA, run by each of the [`DISTINCT_CTA`] threads of the one CTA:
/// the values are copied into shared memory, then each thread takes items `t`, `t + CTA`,
/// … through both passes, with a barrier between them. Every thread reaches every
/// [`Cta::sync`].
///
/// # Safety
/// Launched with one CTA of [`DISTINCT_CTA`] threads and [`DISTINCT_SHARED_BYTES`] of
/// shared memory; pointers as for [`DistinctArgs`] (`repeat` is not used).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn distinct_cooperative<C: Cta>(cta: &C, a: &DistinctArgs) {
    const CTA: usize = DISTINCT_CTA as usize;
    let values = cta.shared();
    let flags = values.add(DISTINCT_MAX);
    let t = cta.thread();
    let len = a.n as usize + a.m as usize;
    let mut i = t;
    while i < len {
        *values.add(i) = item(a, i);
        i += CTA;
    }
    cta.sync();
    let value = |j| *values.add(j);
    let mut i = t;
    while i < len {
        *flags.add(i) = !repeats(i, value(i), value) as u64;
        i += CTA;
    }
    cta.sync();
    let first = |j| *flags.add(j) != 0;
    let mut i = t;
    while i < len {
        place(a, i, len, value, first);
        i += CTA;
    }
}

//! **Coarsen Blocks in ID Sets** for a short ID set in one launch of one CTA (paper,
//! section "Refinement and Coarsening", step 5): the entries whose block has status
//! [`status::REMOVE`] leave the set, the others keep their order (a stable compaction in
//! place). The general path flags the entries ([`super::build::FlagRemoved`]) and
//! compacts them with a scan over the whole set: three to five launches and two copies
//! per level, each a few µs of the host's time whatever the set's size. For the sets of
//! a small forest one CTA walks the set in chunks instead ([`remove_cooperative`]); on
//! the CPU one work item walks it serially ([`RemoveSerial`]). Both keep the same
//! entries in the same order, so they agree with the general path bit for bit.

use super::args::RemoveArgs;
use super::status;
use crate::launch::Kernel;
use crate::memory::Lens;
use crate::primitives::{cta_inclusive_scan, Cta, OP_SUM};

/// Threads of the CTA of [`remove_cooperative`].
pub const REMOVE_CTA: u32 = 512;
/// Entries per thread and chunk: a chunk is `REMOVE_CTA · REMOVE_ITEMS` entries.
const ITEMS: usize = 8;
/// Entries of one chunk.
const CHUNK: usize = REMOVE_CTA as usize * ITEMS;
/// Shared memory of [`remove_cooperative`]: a chunk's entries and the thread totals, as
/// `u64` words.
pub const REMOVE_SHARED_WORDS: usize = CHUNK + REMOVE_CTA as usize;
/// [`REMOVE_SHARED_WORDS`] in bytes (36 KiB: under the 48 KiB a launch gets without
/// opting in).
pub const REMOVE_SHARED_BYTES: u32 = (REMOVE_SHARED_WORDS * 8) as u32;
/// The longest ID set the host hands to this kernel: eight chunks, a few tens of µs on
/// one SM, below the general path's launches (BENCHMARKS.md, twenty-fifth session).
pub const REMOVE_SHORT_MAX: usize = 8 * CHUNK;

/// Bit 32 of a staged entry: the entry stays.
const KEEP: u64 = 1 << 32;

/// Whether ID-set entry `id` stays.
///
/// # Safety
/// `status` holds block `id`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn keeps(a: &RemoveArgs, id: u32) -> bool {
    *a.pool.status.add(id as usize) != status::REMOVE
}

/// The removal on the CPU: one work item walks the set.
pub struct RemoveSerial;

impl Kernel for RemoveSerial {
    type Args = RemoveArgs;

    fn max_items(l: &RemoveArgs<Lens>) -> Option<usize> {
        Some((l.id_set >= l.n as usize) as usize)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(_: usize, a: &RemoveArgs) {
        let mut out = 0;
        for i in 0..a.n as usize {
            let id = *a.id_set.add(i);
            if keeps(a, id) {
                *a.id_set.add(out) = id;
                out += 1;
            }
        }
    }
}

/// The removal on CUDA, run by each of the [`REMOVE_CTA`] threads of the one CTA, chunk by
/// chunk: the chunk's entries and whether each stays go to shared memory (coalesced), each
/// thread counts the stayers among its eight consecutive entries, a Hillis–Steele scan
/// of the thread counts gives each thread where its stayers go, and each writes them
/// there. A chunk's entries are all staged before any is written, and they go to
/// positions no later than their own, so the chunks after it are still unread and intact.
/// Every thread reaches every [`Cta::sync`] (the trip counts are uniform).
///
/// # Safety
/// Launched with one CTA of [`REMOVE_CTA`] threads and [`REMOVE_SHARED_BYTES`] of shared
/// memory; `id_set` holds `n` entries, each a block of `pool`.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn remove_cooperative<C: Cta>(cta: &C, a: &RemoveArgs) {
    const CTA: usize = REMOVE_CTA as usize;
    let staged = cta.shared();
    let totals = staged.add(CHUNK);
    let t = cta.thread();
    let n = a.n as usize;
    let mut base = 0;
    let mut out = 0;
    while base < n {
        let mut k = 0;
        while k < ITEMS {
            let i = base + k * CTA + t;
            *staged.add(k * CTA + t) = if i < n {
                let id = *a.id_set.add(i);
                id as u64 | if keeps(a, id) { KEEP } else { 0 }
            } else {
                0
            };
            k += 1;
        }
        cta.sync();
        let mut mine = 0;
        let mut k = 0;
        while k < ITEMS {
            mine += (*staged.add(t * ITEMS + k) >> 32) as usize;
            k += 1;
        }
        *totals.add(t) = mine as u64;
        cta.sync();
        cta_inclusive_scan(cta, totals, CTA, OP_SUM);
        let mut at = out + if t == 0 { 0 } else { *totals.add(t - 1) as usize };
        let mut k = 0;
        while k < ITEMS {
            let e = *staged.add(t * ITEMS + k);
            if e & KEEP != 0 {
                *a.id_set.add(at) = e as u32;
                at += 1;
            }
            k += 1;
        }
        out += *totals.add(CTA - 1) as usize;
        base += CHUNK;
        // The next chunk overwrites the staged entries and the totals.
        cta.sync();
    }
}

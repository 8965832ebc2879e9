//! Device temporaries of `adapt` and the marking functions, and the launch plumbing they
//! share.

use ramus_kernels::counted::{Counted, CountedArgs};
use ramus_kernels::launch::Kernel;
use ramus_kernels::memory::Family;
use ramus_kernels::registry::Entry;
use ramus_kernels::Dim;

use super::Mesh;
use crate::backend::primitives::Scratch;
use crate::backend::{Backend, Buffer, Device, Views};
use crate::error::Result;

/// Reusable device temporaries of [`Mesh::adapt_with`]: keep one alive across adapts to
/// avoid reallocating them (they grow on demand and never shrink). All sizes follow the
/// numbers of active and marked blocks, never the pool capacity.
pub struct AdaptWorkspace {
    pub(crate) scratch: Scratch,
    /// Active IDs (all ID sets concatenated; the marking functions' list).
    pub(crate) active: Buffer<u32>,
    /// The IDs 0, 1, 2, … up to at least the high-water mark: the items of the
    /// Preparation and of clearing the marks, which read every ID handed out instead of
    /// the ID sets gathered into one list (written once, when it grows).
    pub(crate) pool_ids: Buffer<u32>,
    /// Per-item flags (Preparation: refine requests of the active blocks; S3: kept
    /// coarsenings; S5: removed IDs of an ID set).
    pub(crate) flags: Buffer<u32>,
    /// Preparation: coarsening requests of the active blocks.
    pub(crate) coarsen_flags: Buffer<u32>,
    /// Preparation: the first blocks flagged for refinement and for coarsening, unsorted.
    pub(crate) listed_refine: Buffer<u32>,
    pub(crate) listed_coarsen: Buffer<u32>,
    /// Leaves to refine (also the leaf list of the marking functions), ascending IDs.
    pub(crate) to_refine: Buffer<u32>,
    /// Parents marked for coarsening, ascending IDs.
    pub(crate) to_coarsen: Buffer<u32>,
    /// The parents of `to_coarsen` that S3 kept: coarsened.
    pub(crate) coarsened: Buffer<u32>,
    /// All marked blocks (`to_refine` then `to_coarsen`) of an adapt that both refines
    /// and coarsens (otherwise the one request list is read in its place).
    pub(crate) marked: Buffer<u32>,
    /// Gathered candidate IDs (neighbours, parents, children) and their validity flags.
    pub(crate) gathered: Buffer<u32>,
    pub(crate) gathered_valid: Buffer<u32>,
    /// Sort keys and values.
    pub(crate) keys: Buffer<u32>,
    pub(crate) vals: Buffer<u32>,
    /// The minimal map (sorted, unique).
    pub(crate) map: Buffer<u32>,
    /// Distinct parents / blocks whose masks are recomputed.
    pub(crate) set: Buffer<u32>,
    /// Per-ID flags of the sort-free deduplications (all zero between uses), sized to
    /// the high-water mark of handed-out IDs.
    pub(crate) seen: Buffer<u32>,
    /// Per-level offsets (`MAX_LEVELS + 1`, twice).
    pub(crate) off: Buffer<u32>,
    /// The blocks refined by the last adapt, grouped by their children's level (parent-ID
    /// order within a level), and the offset of each level in it (`max_levels + 1`).
    pub(crate) refined: Buffer<u32>,
    pub(crate) refined_offsets: Vec<usize>,
    /// Counts left on the device by deferred compactions, read together.
    pub(crate) counts: Buffer<u64>,
    /// The Preparation's counters of blocks flagged for refinement and for coarsening,
    /// which run on from adapt to adapt, and their values after the last adapt read them
    /// (`None`: not known, e.g. a read-back failed; they are zeroed before the next use).
    pub(crate) flagged: Buffer<u32>,
    pub(crate) flagged_base: Option<[u32; 2]>,
    /// Blocks of the last adapt's minimal map (`map`), whose children are the blocks
    /// that can change ghost layers.
    pub(crate) relinked: usize,
    /// Blocks the last adapt refined (the first entries of `r`).
    pub(crate) n_refined: usize,
    /// Time every step separately ([`super::AdaptReport::per_step`]): synchronises the
    /// device after each step, which adds to small adapts. Off by default.
    pub profile: bool,
    /// The most items a launch over a list whose length stays on the device may have
    /// (default [`COUNTED_MAX_ITEMS`]): a list of steps 1, 7 and 8 whose upper bound gives
    /// more is counted by a read-back instead, which costs a host–device round trip but no
    /// items that do nothing. 0 reads every length back. The forest is the same either way.
    pub counted_max_items: usize,
    /// The longest list (items gathered, before deduplication) that steps 1, 7 and 8
    /// deduplicate by ranking its items against each other (default
    /// [`DISTINCT_SHORT_MAX`]; [`crate::backend::primitives::distinct_short`]: one launch,
    /// O(items²) work, at most [`ramus_kernels::distinct::DISTINCT_MAX`] items whatever
    /// this says) instead of flagging them in a per-ID array and compacting it (five
    /// launches, O(items + IDs handed out) work). 0 always flags. The forest is the same
    /// either way.
    pub distinct_short_max: usize,
    /// The longest list of refined or coarsened blocks that is grouped by level in one
    /// launch (default [`LEVEL_GROUPS_MAX`]; O(blocks²) loads) instead of by keys, a sort
    /// and a search of the offsets (two to five launches and copies). 0 always sorts.
    /// The forest is the same either way.
    pub level_groups_max: usize,
    /// The backend the buffers live on (see [`AdaptWorkspace::adopt`]).
    backend: Backend,
}

impl AdaptWorkspace {
    /// Empty temporaries on `dev`.
    pub fn new(dev: &Device) -> Result<Self> {
        // Nothing is allocated here (empty host vectors until `ensure` allocates on first use), so
        // that an adapt without marks stays cheap even with a fresh workspace.
        let z = || Buffer::Host(Vec::new());
        Ok(AdaptWorkspace {
            scratch: Scratch::new(dev),
            profile: false,
            counted_max_items: COUNTED_MAX_ITEMS,
            distinct_short_max: DISTINCT_SHORT_MAX,
            level_groups_max: LEVEL_GROUPS_MAX,
            backend: dev.backend(),
            counts: Buffer::Host(Vec::new()),
            flagged: z(),
            flagged_base: None,
            relinked: 0,
            n_refined: 0,
            active: z(),
            pool_ids: z(),
            flags: z(),
            coarsen_flags: z(),
            listed_refine: z(),
            listed_coarsen: z(),
            to_refine: z(),
            to_coarsen: z(),
            coarsened: z(),
            marked: z(),
            gathered: z(),
            gathered_valid: z(),
            keys: z(),
            vals: z(),
            map: z(),
            set: z(),
            seen: z(),
            off: z(),
            refined: z(),
            refined_offsets: Vec::new(),
        })
    }
}

impl AdaptWorkspace {
    /// Makes the workspace usable on `dev`: one made for another backend (a CUDA
    /// workspace passed to a CPU mesh, or the reverse) is replaced by a fresh one, so that
    /// no kernel receives the address of a buffer of the other side.
    pub(crate) fn adopt(&mut self, dev: &Device) -> Result<()> {
        if self.backend != dev.backend() {
            let (profile, counted, short, groups) =
                (self.profile, self.counted_max_items, self.distinct_short_max, self.level_groups_max);
            *self = AdaptWorkspace::new(dev)?;
            (self.profile, self.counted_max_items, self.distinct_short_max, self.level_groups_max) =
                (profile, counted, short, groups);
        }
        Ok(())
    }

    /// Makes [`Self::pool_ids`] hold the IDs `0 .. n` at least (grown to a power of two,
    /// so that a growing forest rewrites it a few times only).
    pub(crate) fn ensure_pool_ids(&mut self, dev: &Device, n: usize) -> Result<()> {
        if !holds(dev, &self.pool_ids, n) {
            let len = n.next_power_of_two().max(256);
            let ids = u32::try_from(len - 1)
                .map_err(|_| crate::error::Error::invalid("block IDs handed out", n, "at most 2^31"))?;
            self.pool_ids = dev.upload(&(0..=ids).collect::<Vec<u32>>())?;
        }
        Ok(())
    }

    /// The blocks the last adapt refined, grouped by the level of their children, and the
    /// offset of each level in that list: level `l`'s new children have the parents
    /// `list[offsets[l] .. offsets[l + 1]]` (`offsets` is empty if nothing was refined).
    pub(crate) fn refined_by_level(&self) -> (&Buffer<u32>, &[usize]) {
        (&self.refined, &self.refined_offsets)
    }
}

/// Makes `buf` hold at least `n` elements (contents are not kept when it grows).
pub(crate) fn ensure(dev: &Device, buf: &mut Buffer<u32>, n: usize) -> Result<()> {
    if !holds(dev, buf, n) {
        *buf = dev.zeros(n.next_power_of_two().max(256))?;
    }
    Ok(())
}

/// Whether `buf` lives on `dev`'s backend and holds at least `n` elements.
pub(crate) fn holds<T>(dev: &Device, buf: &Buffer<T>, n: usize) -> bool {
    let native = matches!((dev, buf), (Device::Cpu, Buffer::Host(_)) | (Device::Cuda(_), Buffer::Cuda { .. }));
    native && buf.len() >= n
}

/// Bits needed for sort keys below `n`.
pub(crate) fn key_bits(n: usize) -> u32 {
    (usize::BITS - n.leading_zeros()).clamp(1, 32)
}

/// Views of every pool array of a mesh (`$m`), for one launch. A macro, not a method, so
/// that the borrow is of the pool's fields only: the same launch may take other fields of
/// the mesh (the gap set, an ID set) as further arguments.
macro_rules! pool_views {
    ($m:expr) => {
        ramus_kernels::amr::args::Pool {
            level: $m.level.view_mut(),
            origin: $m.origin.view_mut(),
            status: $m.status.view_mut(),
            mark: $m.mark.view_mut(),
            parent: $m.parent.view_mut(),
            child: $m.child.view_mut(),
            nbr: $m.nbr.view_mut(),
            nbr_child: $m.nbr_child.view_mut(),
            onb: $m.onb.view_mut(),
            block_mask: $m.block_mask.view_mut(),
            cell_mask: $m.cell_mask.view_mut(),
        }
    };
}
pub(crate) use pool_views;

/// The argument struct `$s` of an AMR kernel (in `ramus_kernels::amr::args`) with the pool
/// of mesh `$m` and the named lists and scalars given.
macro_rules! amr_args {
    ($m:expr, $s:ident { $($f:ident : $v:expr),* $(,)? }) => {
        ramus_kernels::amr::args::$s::<crate::backend::Views<'_>> {
            pool: crate::amr::workspace::pool_views!($m),
            $($f: $v),*
        }
    };
}
pub(crate) use amr_args;

/// Runs `n` items of the AMR kernel `K` (instantiated for the mesh's dimension by the
/// caller) on `dev`.
pub(crate) fn run<K: Kernel + Entry>(dev: &Device, n: usize, args: <K::Args as Family>::With<Views<'_>>) -> Result<()> {
    // SAFETY: the pool arrays hold `capacity` blocks and every ID the AMR kernels follow
    // (list entries, links) is an ID of the pool, by the forest's invariants
    // (`crate::amr::check`); the lists' lengths are checked against `n` by the launch.
    unsafe { dev.launch::<K>(n, args) }
}

/// Default of [`AdaptWorkspace::counted_max_items`]: 2^18 items, about 2000 CTAs of which
/// those past the count exit at once (an upper bound of 4096 blocks of a 3D list per cell).
pub const COUNTED_MAX_ITEMS: usize = 1 << 18;

/// Default of [`AdaptWorkspace::distinct_short_max`]: 512 items (the 27-neighbour lists of
/// up to 18 marked blocks in 3D, the 9-neighbour lists of 56 in 2D), where the one-CTA
/// ranking takes a few µs (measured on an H100, BENCHMARKS.md, fifteenth session).
pub const DISTINCT_SHORT_MAX: usize = 512;

/// Default of [`AdaptWorkspace::level_groups_max`]: 4096 blocks (about 3 · 10⁷ loads,
/// mostly cache hits, spread over 16 threads per item by the cooperative CUDA entry),
/// where one launch still beats the sort's five launches and copies.
pub const LEVEL_GROUPS_MAX: usize = 4096;

/// The length of a list that a compaction built on the device: read back, or left in a
/// slot of `ws.counts` with an upper bound for the launches over the list.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ListLen {
    Known(usize),
    OnDevice { bound: usize, slot: usize },
}

/// Runs `per` items of the AMR kernel `K` for every entry of a list of length `len`: `K`
/// over `n · per` items when the length is known, else [`Counted<K>`] over `bound · per`
/// items, which runs those below the count in `counts[slot]` (read on the device).
pub(crate) fn run_list<'a, K>(
    dev: &Device,
    counts: &'a Buffer<u64>,
    len: ListLen,
    per: usize,
    args: <K::Args as Family>::With<Views<'a>>,
) -> Result<()>
where
    K: Kernel + Entry,
    Counted<K>: Entry,
{
    match len {
        ListLen::Known(n) => run::<K>(dev, n * per, args),
        ListLen::OnDevice { bound, slot } => {
            let a = CountedArgs::<K::Args, Views<'a>> {
                count: counts.slice(slot..slot + 1)?,
                per: per as u64,
                inner: args,
            };
            // The count was written by the compaction of the list, at most `bound`: the
            // items that run are those of `K` over the list.
            run::<Counted<K>>(dev, bound * per, a)
        }
    }
}

impl<D: Dim> Mesh<D> {
    /// Concatenates the ID sets into `ws.active`; returns the number of active blocks.
    pub(crate) fn gather_active(&self, ws: &mut AdaptWorkspace) -> Result<usize> {
        let n: usize = self.id_counts.iter().sum();
        ensure(&self.device, &mut ws.active, n)?;
        let mut off = 0;
        for (ids, &m) in self.id_sets.iter().zip(&self.id_counts) {
            self.device.copy(ids, m, &mut ws.active, off)?;
            off += m;
        }
        Ok(n)
    }
}

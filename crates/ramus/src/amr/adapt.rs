//! The refinement-and-coarsening routine (paper, section "Refinement and Coarsening"):
//! a preparation step and eight steps, all on the device through the kernels of
//! [`ramus_kernels::amr`] and the primitives of [`crate::backend::primitives`].
//!
//! The host only reads scalar counts back (primitive return values and the per-level
//! offsets of the sorted level keys, `max_levels + 1` integers), never block arrays. Work
//! is proportional to the active blocks (the Preparation scan of the ID sets, the ID-set
//! removal of the affected levels, and the per-ID flags that sort and deduplicate block
//! lists, which span the IDs handed out so far) and to the marked blocks and their
//! neighbourhoods (every other step works on compacted lists), never to the pool
//! capacity. Every kernel is deterministic and race-free, so the CPU and CUDA backends
//! build identical forests.

use std::time::Duration;

use ramus_kernels::amr::build::{
    AppendChildren, BranchStatus, BuildChildren, FinalizeCoarsened, FinalizeRefined, FlagRemoved, GatherParents,
    MarkRemoved, PushGaps, RelinkedParents, ResetRemoved,
};
use ramus_kernels::amr::connect::{BlockMasks, CellMasks, ChildLinks, GatherChildren, NeighbourChildren};
use ramus_kernels::amr::select::{
    AssignChildren, CheckCoarsen, ClearMarks, GatherNeighbours, LevelKeys, LevelOffsets, MapRefinedNeighbours,
    Sanitize, SetStatus, UnmapCoarsened, WriteStatus,
};
use ramus_kernels::amr::status;
use ramus_kernels::Dim;

use super::workspace::{ensure, key_bits, AdaptWorkspace};
use super::{metadata_bytes_per_block, Mesh};
use crate::backend::primitives as prim;
use crate::backend::stopwatch::Stopwatch;
use crate::backend::{Buffer, Device};
use crate::error::{Error, Result};

/// Names of the timed steps, in order (paper: Preparation, then steps 1–8).
pub const ADAPT_STEPS: [&str; 9] = ["Pre", "S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"];

/// What one [`Mesh::adapt`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptReport {
    /// Blocks refined (each gained `2^D` children).
    pub refined: usize,
    /// Blocks coarsened (each lost its children).
    pub coarsened: usize,
    /// Wall time of each step ([`ADAPT_STEPS`]), measured after a device synchronisation;
    /// zero unless [`AdaptWorkspace::profile`] is set.
    pub per_step: [(&'static str, Duration); 9],
    /// Wall time of the whole call, the device synchronised at its end.
    pub elapsed: Duration,
}

impl AdaptReport {
    /// Wall time of the whole call.
    pub fn total(&self) -> Duration {
        self.elapsed
    }
}

/// Per-step times of one adapt ([`Stopwatch`] laps: zero unless profiling).
struct Clock {
    watch: Stopwatch,
    steps: [(&'static str, Duration); 9],
}

impl Clock {
    fn new(dev: Device, profile: bool) -> Self {
        let mut steps = [("", Duration::ZERO); 9];
        for (s, n) in steps.iter_mut().zip(ADAPT_STEPS) {
            s.0 = n;
        }
        Clock { watch: Stopwatch::new(dev, profile), steps }
    }

    fn lap(&mut self, step: usize) -> Result<()> {
        self.steps[step].1 = self.watch.lap()?;
        Ok(())
    }

    /// The report, after waiting for the device.
    fn report(self, refined: usize, coarsened: usize) -> Result<AdaptReport> {
        Ok(AdaptReport { refined, coarsened, per_step: self.steps, elapsed: self.watch.total()? })
    }
}

impl<D: Dim> Mesh<D> {
    /// Applies the marks (refine / coarsen requests, see [`Mesh::mark_blocks`] and the other
    /// marking functions) with temporaries allocated for this call; see [`Self::adapt_with`].
    pub fn adapt(&mut self) -> Result<AdaptReport> {
        let mut ws = AdaptWorkspace::new(&self.device)?;
        self.adapt_with(&mut ws)
    }

    /// Applies the marks, refining and coarsening all levels at once while keeping the
    /// forest 2:1 balanced; clears every mark. Refinement requests that would break 2:1
    /// balance (a same-level neighbour missing) or exceed `max_levels` are ignored;
    /// coarsening happens only where all siblings ask, the parent is `REFINED`, and no
    /// sibling touches a block that has or gets children (otherwise it is reverted).
    ///
    /// If the gap set cannot hold the new children, returns [`Error::OutOfMemory`] for
    /// "the block pool" with the forest unchanged (marks cleared).
    pub fn adapt_with(&mut self, ws: &mut AdaptWorkspace) -> Result<AdaptReport> {
        let dev = self.device.clone();
        ws.adopt(&dev)?;
        let mut clock = Clock::new(dev.clone(), ws.profile);
        let nc = D::CHILDREN;
        let nb = D::NEIGHBORS;

        // Preparation: sanitize the marks, count the requests.
        ws.refined_offsets.clear();
        ws.relinked = 0;
        let n_act = self.gather_active(ws)?;
        ensure(&dev, &mut ws.fa, n_act)?;
        ensure(&dev, &mut ws.fb, n_act)?;
        let mut a = self.args(dev.cptr(&ws.active));
        a.out = dev.ptr(&mut ws.fa);
        a.out2 = dev.ptr(&mut ws.fb);
        a.a = self.spec.max_levels as i32;
        self.run::<Sanitize<D>>(n_act, a)?;
        // The flagged IDs in ascending order (children are assigned in this order in S2,
        // independent of ID-set order), both counts left on the device: one read-back.
        // Every active ID is below the high-water mark.
        let range = self.high_water;
        ensure(&dev, &mut ws.seen, range)?;
        ensure(&dev, &mut ws.r, range)?;
        ensure(&dev, &mut ws.c, range)?;
        if ws.counts.len() < 2 || matches!((&dev, &ws.counts), (Device::Cuda(_), Buffer::Host(_))) {
            ws.counts = dev.zeros(2)?;
        }
        // SAFETY: `ws.active` holds the active IDs, all below the high-water mark `range`,
        // which `ws.seen` was just made to hold; nothing changes the lists meanwhile.
        unsafe { prim::mark_seen(&dev, &mut ws.seen, &ws.active, Some(&ws.fa), n_act)? };
        prim::take_seen_deferred(&dev, &mut ws.scratch, &mut ws.seen, range, &mut ws.r, &mut ws.counts, 0)?;
        // SAFETY: as above.
        unsafe { prim::mark_seen(&dev, &mut ws.seen, &ws.active, Some(&ws.fb), n_act)? };
        prim::take_seen_deferred(&dev, &mut ws.scratch, &mut ws.seen, range, &mut ws.c, &mut ws.counts, 1)?;
        let counts = dev.read(&ws.counts, 0..2)?;
        let (n_r, n_c) = (counts[0] as usize, counts[1] as usize);
        if n_r + n_c == 0 {
            self.clear_marks(ws, n_act)?;
            clock.lap(0)?;
            return clock.report(0, 0);
        }
        let taken = n_r * nc;
        if taken > self.gap_count {
            // Nothing has been written yet but the marks: the forest stays valid.
            self.clear_marks(ws, n_act)?;
            let per = metadata_bytes_per_block::<D>(self.spec.max_levels) as u64;
            return Err(Error::OutOfMemory {
                what: "the block pool".into(),
                needed: taken as u64 * per,
                available: self.gap_count as u64 * per,
            });
        }
        // Every ID in play is below the high-water mark after this adapt: the ID flags of
        // the deduplications (S1, S7, S8) span only that range.
        let high_water = self.high_water.max(self.capacity - (self.gap_count - taken));
        // The never used IDs S2 takes get their free state (the pool is allocated zeroed).
        self.prepare_ids(high_water)?;
        ensure(&dev, &mut ws.seen, high_water)?;
        self.set_status(dev.cptr(&ws.r), n_r, status::MARKED_REFINE)?;
        self.set_status(dev.cptr(&ws.c), n_c, status::MARKED_COARSEN)?;
        let n_k = n_r + n_c;
        ensure(&dev, &mut ws.k, n_k)?;
        dev.copy(&ws.r, n_r, &mut ws.k, 0)?;
        dev.copy(&ws.c, n_c, &mut ws.k, n_r)?;
        clock.lap(0)?;

        // S1 Minimal Map: the marked blocks and their same-level neighbours, sorted, unique.
        ensure(&dev, &mut ws.t1, n_k * nb)?;
        ensure(&dev, &mut ws.t2, n_k * nb)?;
        let mut a = self.args(dev.cptr(&ws.k));
        a.out = dev.ptr(&mut ws.t1);
        a.out2 = dev.ptr(&mut ws.t2);
        self.run::<GatherNeighbours<D>>(n_k, a)?;
        // SAFETY: the gathered neighbours are active blocks (invalid links are flagged off
        // in `t2`), below `high_water`, which `ws.seen` holds.
        let n_m = unsafe { distinct(&dev, ws, n_k * nb, 0, high_water, Target::Map)? };
        clock.lap(1)?;

        // S2 Map Gaps to Marked Blocks: first children from the end of the gap set, then
        // the map's links to refined blocks record them in `nbr_child`.
        if n_r > 0 {
            let gaps = dev.cptr(&self.gaps);
            let mut a = self.args(dev.cptr(&ws.r));
            a.aux = gaps;
            a.a = self.gap_count as i32;
            self.run::<AssignChildren<D>>(n_r, a)?;
            let a = self.args(dev.cptr(&ws.map));
            self.run::<MapRefinedNeighbours<D>>(n_m, a)?;
        }
        self.high_water = high_water;
        clock.lap(2)?;

        // S3 Enforcement of 2:1 Balancing: revert coarsenings next to (future) children,
        // then tell the neighbours of the rest that their children go.
        let mut n_c2 = 0;
        if n_c > 0 {
            let mut a = self.args(dev.cptr(&ws.c));
            a.out = dev.ptr(&mut ws.fa);
            self.run::<CheckCoarsen<D>>(n_c, a)?;
            ensure(&dev, &mut ws.c2, n_c)?;
            n_c2 = prim::compact(&dev, &mut ws.scratch, &ws.fa, &ws.c, n_c, &mut ws.c2)?;
            let a = self.args(dev.cptr(&ws.c2));
            self.run::<UnmapCoarsened<D>>(n_c2, a)?;
        }
        clock.lap(3)?;

        // S4 Build / Reset Children.
        let a = self.args(dev.cptr(&ws.r));
        self.run::<BuildChildren<D>>(n_r * nc, a)?;
        let a = self.args(dev.cptr(&ws.c2));
        self.run::<MarkRemoved<D>>(n_c2 * nc, a)?;
        clock.lap(4)?;

        // Coarsened and refined blocks grouped by their children's level (S5, S6, and the
        // solver's filling of new children), one read-back for both.
        let (off_c, off_r) = self.level_keys(ws, n_c2, n_r)?;

        // S5 Coarsen Blocks in ID Sets. The gaps S2 took are already copied into `child`,
        // so the freed groups overwrite them: the gap set ends at `base` + freed.
        let base = self.gap_count - taken;
        if n_c2 > 0 {
            for l in 0..self.spec.max_levels {
                let cnt = off_c[l + 1] - off_c[l];
                if cnt > 0 {
                    let m = self.id_counts[l];
                    ensure(&dev, &mut ws.fa, m)?;
                    let mut a = self.args(dev.cptr(&self.id_sets[l]));
                    a.out = dev.ptr(&mut ws.fa);
                    self.run::<FlagRemoved<D>>(m, a)?;
                    // The children of the `cnt` coarsened blocks leave: the new count is
                    // known, so the one left on the device (slot 0) is not read.
                    prim::remove_if_deferred(
                        &dev,
                        &mut ws.scratch,
                        &mut self.id_sets[l],
                        &ws.fa,
                        m,
                        &mut ws.counts,
                        0,
                    )?;
                    self.id_counts[l] = m - cnt * nc;
                }
            }
            let gaps = dev.ptr(&mut self.gaps);
            let mut a = self.args(std::ptr::null());
            a.aux = dev.cptr(&ws.vals);
            a.out = gaps;
            a.a = base as i32;
            a.b = n_c2 as i32;
            self.run::<PushGaps<D>>(n_c2 * nc, a)?;
            let mut a = self.args(std::ptr::null());
            a.aux = dev.cptr(&ws.vals);
            self.run::<ResetRemoved<D>>(n_c2 * nc, a)?;
        }
        self.gap_count = base + n_c2 * nc;
        clock.lap(5)?;

        // S6 Refine Blocks in ID Sets: children of each level's parents, in parent-ID order
        // (the sort is stable), appended to the ID set of the children's level.
        for l in 1..self.spec.max_levels {
            let cnt = off_r[l + 1] - off_r[l];
            if cnt > 0 {
                let ids = dev.ptr(&mut self.id_sets[l]);
                let mut a = self.args(std::ptr::null());
                a.aux = dev.cptr(&ws.refined);
                a.out = ids;
                a.a = off_r[l] as i32;
                a.b = self.id_counts[l] as i32;
                self.run::<AppendChildren<D>>(cnt * nc, a)?;
                self.id_counts[l] += cnt * nc;
            }
        }
        ws.refined_offsets = off_r;
        clock.lap(6)?;

        // S7 Finalize Ref. IDs, then branch/leaf statuses of the marked blocks' parents.
        let a = self.args(dev.cptr(&ws.r));
        self.run::<FinalizeRefined<D>>(n_r, a)?;
        let a = self.args(dev.cptr(&ws.c2));
        self.run::<FinalizeCoarsened<D>>(n_c2, a)?;
        let mut a = self.args(dev.cptr(&ws.k));
        a.out = dev.ptr(&mut ws.t1);
        a.out2 = dev.ptr(&mut ws.t2);
        self.run::<GatherParents<D>>(n_k, a)?;
        // SAFETY: the parents of marked blocks are active, below `high_water` (`ws.seen`
        // holds that many flags).
        let n_p = unsafe { distinct(&dev, ws, n_k, 0, high_water, Target::Set)? };
        let mut a = self.args(dev.cptr(&ws.set));
        a.out = dev.ptr(&mut ws.t1);
        self.run::<BranchStatus<D>>(n_p, a)?;
        let mut a = self.args(dev.cptr(&ws.set));
        a.aux = dev.cptr(&ws.t1);
        self.run::<WriteStatus<D>>(n_p, a)?;
        clock.lap(7)?;

        // S8 Update Connectivity and Designate Ghosts.
        let a = self.args(dev.cptr(&ws.map));
        self.run::<NeighbourChildren<D>>(n_m, a)?;
        ensure(&dev, &mut ws.t1, n_m * nc)?;
        ensure(&dev, &mut ws.t2, n_m * nc)?;
        let mut a = self.args(dev.cptr(&ws.map));
        a.out = dev.ptr(&mut ws.t1);
        a.out2 = dev.ptr(&mut ws.t2);
        self.run::<GatherChildren<D>>(n_m, a)?;
        // The map and the children of its refined blocks, sorted and distinct. Links are
        // recomputed for all of them from their parents' `nbr_child`, which is current
        // (untouched, or refreshed just above for map blocks): for blocks whose links did
        // not change this rewrites the same values.
        // SAFETY: map blocks and their children (new ones included) are below the new
        // `high_water`, which `ws.seen` holds.
        let n_s = unsafe {
            prim::mark_seen(&dev, &mut ws.seen, &ws.map, None, n_m)?;
            distinct(&dev, ws, n_m * nc, n_m, high_water, Target::Set)?
        };
        let a = self.args(dev.cptr(&ws.set));
        self.run::<ChildLinks<D>>(n_s, a)?;
        let mut a = self.args(dev.cptr(&ws.set));
        a.a = 1;
        self.run::<NeighbourChildren<D>>(n_s, a)?;
        let a = self.args(dev.cptr(&ws.set));
        self.run::<CellMasks<D>>(n_s * D::BLOCK_CELLS, a)?;
        let a = self.args(dev.cptr(&ws.set));
        self.run::<BlockMasks<D>>(n_s, a)?;
        self.clear_marks(ws, n_act)?;
        ws.relinked = n_m;
        ws.n_refined = n_r;
        clock.lap(8)?;

        clock.report(n_r, n_c2)
    }

    /// The blocks whose children's ghost layers the last [`Self::adapt_with`] on `ws` may
    /// have changed, per level, ascending: level `l`'s are
    /// `ws.parents_by_level[l][..counts[l]]` for the returned `counts` (one read-back).
    /// These are the blocks of the minimal map that have children, except those just
    /// refined (their children were filled from them), see
    /// [`ramus_kernels::amr::build::RelinkedParents`].
    pub(crate) fn relinked_parents(&mut self, ws: &mut AdaptWorkspace) -> Result<Vec<usize>> {
        let dev = self.device.clone();
        let levels = self.spec.max_levels.saturating_sub(1);
        let n = ws.relinked;
        if n == 0 || levels == 0 {
            return Ok(vec![0; levels]);
        }
        if ws.level_counts.len() < levels || matches!((&dev, &ws.level_counts), (Device::Cuda(_), Buffer::Host(_))) {
            ws.level_counts = dev.zeros(levels)?;
        }
        ws.parents_by_level.resize_with(levels, || Buffer::Host(Vec::new()));
        ensure(&dev, &mut ws.t1, n)?;
        ensure(&dev, &mut ws.t2, n)?;
        for l in 0..levels {
            let mut a = self.args(dev.cptr(&ws.map));
            a.aux = dev.cptr(&ws.r);
            a.out = dev.ptr(&mut ws.t1);
            a.out2 = dev.ptr(&mut ws.t2);
            a.a = l as i32;
            a.b = ws.n_refined as i32;
            self.run::<RelinkedParents<D>>(n, a)?;
            ensure(&dev, &mut ws.parents_by_level[l], n)?;
            let out = &mut ws.parents_by_level[l];
            prim::compact_deferred(&dev, &mut ws.scratch, &ws.t2, &ws.t1, n, out, &mut ws.level_counts, l)?;
        }
        Ok(dev.read(&ws.level_counts, 0..levels)?.into_iter().map(|c| c as usize).collect())
    }

    fn set_status(&mut self, list: *const u32, n: usize, s: i32) -> Result<()> {
        let mut a = self.args(list);
        a.a = s;
        self.run::<SetStatus<D>>(n, a)
    }

    /// Clears the marks of the (pre-adapt) active blocks listed in `ws.active`.
    fn clear_marks(&mut self, ws: &AdaptWorkspace, n_act: usize) -> Result<()> {
        let a = self.args(self.device.cptr(&ws.active));
        self.run::<ClearMarks<D>>(n_act, a)
    }

    /// Groups blocks by the level of their children, keeping their order within a level
    /// (stable sort): the `n_c2` coarsened blocks of `ws.c2` into `ws.vals` as their first
    /// children, and the `n_r` refined blocks of `ws.r` into `ws.refined`. Returns the
    /// offsets of each level in the two (`max_levels + 1` each), read back together.
    fn level_keys(&mut self, ws: &mut AdaptWorkspace, n_c2: usize, n_r: usize) -> Result<(Vec<usize>, Vec<usize>)> {
        let dev = self.device.clone();
        let m = self.spec.max_levels + 1;
        ensure(&dev, &mut ws.off, 2 * m)?;
        let level_bits = key_bits(ramus_kernels::amr::MAX_LEVELS);
        for (coarsen, n) in [(true, n_c2), (false, n_r)] {
            ensure(&dev, &mut ws.keys, n)?;
            let (list, vals) = if coarsen { (&ws.c2, &mut ws.vals) } else { (&ws.r, &mut ws.refined) };
            ensure(&dev, vals, n)?;
            let mut a = self.args(dev.cptr(list));
            a.out = dev.ptr(&mut ws.keys);
            a.out2 = dev.ptr(vals);
            a.a = coarsen as i32;
            self.run::<LevelKeys<D>>(n, a)?;
            prim::sort_by_key(&dev, &mut ws.scratch, &mut ws.keys, vals, n, level_bits)?;
            let mut a = self.args(std::ptr::null());
            a.aux = dev.cptr(&ws.keys);
            a.out = dev.ptr(&mut ws.off).wrapping_add(if coarsen { 0 } else { m });
            a.a = n as i32;
            self.run::<LevelOffsets<D>>(m, a)?;
        }
        let off: Vec<usize> = dev.read(&ws.off, 0..2 * m)?.into_iter().map(|x| x as usize).collect();
        Ok((off[..m].to_vec(), off[m..].to_vec()))
    }
}

/// Where [`distinct`] leaves its result.
enum Target {
    Map,
    Set,
}

/// Flags the valid entries of `ws.t1[..n]` (flags in `ws.t2`), all below `range`, in
/// `ws.seen` (which may hold `before` other flags) and writes the distinct flagged IDs,
/// ascending, to `ws.map` or `ws.set`; returns their count (one read-back).
///
/// # Safety
/// Every valid entry of `ws.t1[..n]` must be below `range`, and `ws.seen` must hold at
/// least `range` flags (see [`prim::mark_seen`]).
unsafe fn distinct(
    dev: &Device,
    ws: &mut AdaptWorkspace,
    n: usize,
    before: usize,
    range: usize,
    target: Target,
) -> Result<usize> {
    // SAFETY: the caller's contract.
    unsafe { prim::mark_seen(dev, &mut ws.seen, &ws.t1, Some(&ws.t2), n)? };
    let out = match target {
        Target::Map => &mut ws.map,
        Target::Set => &mut ws.set,
    };
    ensure(dev, out, range.min(n + before))?;
    prim::take_seen(dev, &mut ws.scratch, &mut ws.seen, range, out)
}

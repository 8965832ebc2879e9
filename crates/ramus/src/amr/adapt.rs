//! The refinement-and-coarsening routine (paper, section "Refinement and Coarsening"):
//! a preparation step and eight steps, all on the device through the kernels of
//! [`ramus_kernels::amr`] and the primitives of [`crate::backend::primitives`].
//!
//! The host only reads scalar counts back (primitive return values and the per-level
//! offsets of the sorted level keys, `max_levels + 1` integers), never block arrays; the
//! lists of steps 1, 7 and 8 of small adapts keep their lengths on the device, where the
//! launches over them read them ([`ramus_kernels::counted`]), and step 5 reads the minimal
//! map's with its own: two read-backs for a small adapt (the Preparation's and step 5's). Work
//! is proportional to the active blocks (the Preparation scan of the ID sets, the ID-set
//! removal of the affected levels, and the per-ID flags that sort and deduplicate long
//! block lists, which span the IDs handed out so far; short lists are ranked instead) and
//! to the marked blocks and their neighbourhoods (every other step works on compacted
//! lists), never to the pool capacity. Every kernel is deterministic and race-free, so the
//! CPU and CUDA backends build identical forests.

use std::time::Duration;

use ramus_kernels::amr::build::{
    BranchStatus, BuildChildren, FinalizeCoarsened, FinalizeRefined, GatherParents, MarkRemoved,
};
use ramus_kernels::amr::connect::{ChildLinks, GatherChildren, Masks, NeighbourChildren};
use ramus_kernels::amr::select::{
    AssignChildren, CheckCoarsen, ClearMarks, GatherNeighbours, MapRefinedNeighbours, Sanitize, UnmapCoarsened,
    WriteStatus,
};
use ramus_kernels::distinct::DISTINCT_MAX;
use ramus_kernels::Dim;

use super::lists::{
    distinct, short_list, Blocks, Counts, Gathered, Target, COUNT_SLOTS, SLOT_MAP, SLOT_PARENTS, SLOT_RELINKED,
    SLOT_REQUESTS,
};
use super::workspace::{amr_args, ensure, holds, run, run_list, AdaptWorkspace, ListLen};
use super::{metadata_bytes_per_block, Mesh};
use crate::backend::primitives as prim;
use crate::backend::stopwatch::Stopwatch;
use crate::backend::{Buffer, Device, Lap};
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
    /// Each step ([`ADAPT_STEPS`]) by name: its wall time, measured after a device
    /// synchronisation and zero unless [`AdaptWorkspace::profile`] is set, and its
    /// kernel launches, graph launches and host waits (CUDA; zero on the CPU), counted
    /// whether profiling or not.
    pub per_step: [(&'static str, Lap); 9],
    /// Wall time of the whole call, the device synchronised at its end
    /// ([`Mesh::adapt_with`]; from [`Mesh::adapt_blocks`], the host's time up to the
    /// hooks, the device's work still queued).
    pub elapsed: Duration,
}

impl AdaptReport {
    /// Wall time of the whole call.
    pub fn total(&self) -> Duration {
        self.elapsed
    }
}

/// The steps of one adapt ([`Stopwatch`] laps: times zero unless profiling).
struct Clock {
    watch: Stopwatch,
    steps: [(&'static str, Lap); 9],
}

impl Clock {
    fn new(dev: Device, profile: bool) -> Self {
        Clock { watch: Stopwatch::new(dev, profile), steps: ADAPT_STEPS.map(|n| (n, Lap::default())) }
    }

    fn lap(&mut self, step: usize) -> Result<()> {
        self.steps[step].1 = self.watch.lap()?;
        Ok(())
    }

    /// The report, after waiting for the device if `wait` (else `elapsed` is the host's
    /// time, the device's work still queued).
    fn report(self, refined: usize, coarsened: usize, wait: bool) -> Result<AdaptReport> {
        let elapsed = if wait { self.watch.total()? } else { self.watch.elapsed() };
        Ok(AdaptReport { refined, coarsened, per_step: self.steps, elapsed })
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
        self.adapt_queued(ws, true)
    }

    /// [`Self::adapt_with`], waiting for the device at the end only if `wait`: the block
    /// data's hooks queue their work behind the mesh routine's ([`Self::adapt_blocks`],
    /// whose caller waits once after them), so the report's `elapsed` is then the host's
    /// time.
    pub(crate) fn adapt_queued(&mut self, ws: &mut AdaptWorkspace, wait: bool) -> Result<AdaptReport> {
        let dev = self.device.clone();
        ws.adopt(&dev)?;
        let mut clock = Clock::new(dev, ws.profile);
        let Some(mut n) = self.preparation(ws)? else {
            clock.lap(0)?;
            return clock.report(0, 0, wait);
        };
        clock.lap(0)?;
        self.minimal_map(ws, &mut n)?;
        clock.lap(1)?;
        self.map_gaps_to_marked_blocks(ws, &n)?;
        clock.lap(2)?;
        self.enforce_balance(ws, &mut n)?;
        clock.lap(3)?;
        self.build_children(ws, &n)?;
        clock.lap(4)?;
        // Coarsened and refined blocks grouped by their children's level (S5, S6, and the
        // block data's filling of new children), one read-back for both.
        let (off_c, off_r) = self.level_keys(ws, &mut n)?;
        self.coarsen_id_sets(ws, &n, &off_c)?;
        clock.lap(5)?;
        self.refine_id_sets(ws, &off_r)?;
        ws.refined_offsets = off_r;
        clock.lap(6)?;
        self.finalize_ids(ws, &n)?;
        clock.lap(7)?;
        self.update_connectivity(ws, &n)?;
        clock.lap(8)?;
        clock.report(n.refine, n.coarsened, wait)
    }

    /// Preparation: sanitizes the marks and lists the requests: the leaves to refine in
    /// `ws.to_refine`, the parents to coarsen in `ws.to_coarsen`, both ascending, and all
    /// of them in `ws.marked` if there are both ([`Counts::marked_list`]); hands out fresh
    /// IDs if needed. `None` (marks cleared) if
    /// there is nothing to do; [`Error::OutOfMemory`] (marks cleared, forest unchanged) if
    /// the gap set cannot hold the new children.
    fn preparation(&mut self, ws: &mut AdaptWorkspace) -> Result<Option<Counts>> {
        let dev = self.device.clone();
        ws.refined_offsets.clear();
        ws.relinked = 0;
        // The items are the IDs below the high-water mark, in ID order: every active block
        // is one of them, the others are free (`INACTIVE`) and Sanitize flags none of them.
        // Reading the IDs in place, instead of the levels' ID sets gathered into one list,
        // saves a copy per level in every adapt; the request lists come out ascending
        // either way, so the forest does not depend on it.
        let n_act = self.high_water;
        ws.ensure_pool_ids(&dev, n_act)?;
        ensure(&dev, &mut ws.flags, n_act)?;
        ensure(&dev, &mut ws.coarsen_flags, n_act)?;
        // Sanitize counts on from the counters' last values (a zeroing memset would be one
        // more driver call in every adapt); they are zeroed only when those are not known.
        let base = match ws.flagged_base.take() {
            Some(base) if holds(&dev, &ws.flagged, 2) => base,
            _ => {
                ensure(&dev, &mut ws.flagged, 2)?;
                dev.fill_bytes(&mut ws.flagged, 0, 2, 0)?;
                [0, 0]
            }
        };
        // Requests this short are sorted from Sanitize's lists (one launch) instead of
        // compacted out of the flags of every ID handed out (a scan and a compaction).
        let listed_max = ws.distinct_short_max.min(DISTINCT_MAX).min(n_act);
        ensure(&dev, &mut ws.listed_refine, listed_max)?;
        ensure(&dev, &mut ws.listed_coarsen, listed_max)?;
        let a = amr_args!(
            self,
            SanitizeArgs {
                active: ws.pool_ids.slice(..n_act)?,
                refine: ws.flags.view_mut(),
                coarsen: ws.coarsen_flags.view_mut(),
                counts: ws.flagged.view_mut(),
                listed_refine: ws.listed_refine.view_mut(),
                listed_coarsen: ws.listed_coarsen.view_mut(),
                base_refine: base[0],
                base_coarsen: base[1],
                listed_max: listed_max as u32,
                max_levels: self.spec.max_levels as i32,
            }
        );
        run::<Sanitize<D>>(&dev, n_act, a)?;
        // The one read-back of the Preparation, right after the first kernel: an adapt
        // without marks ends here (two launches and this read), and one that cannot
        // fit its children fails before anything but the marks is written.
        let flagged = dev.read(&ws.flagged, 0..2)?;
        ws.flagged_base = Some([flagged[0], flagged[1]]);
        let n_r = flagged[0].wrapping_sub(base[0]) as usize;
        let n_c = flagged[1].wrapping_sub(base[1]) as usize;
        if n_r + n_c == 0 {
            self.clear_marks(ws, n_act)?;
            return Ok(None);
        }
        let taken = n_r * D::CHILDREN;
        if taken > self.gap_count {
            self.clear_marks(ws, n_act)?;
            let per = metadata_bytes_per_block::<D>(self.spec.max_levels) as u64;
            return Err(Error::OutOfMemory {
                what: "the block pool".into(),
                needed: taken as u64 * per,
                available: self.gap_count as u64 * per,
            });
        }
        // The flagged IDs in ascending order (children are assigned in this order in S2,
        // independent of ID-set order); the lists hold `n_r` and `n_c` IDs (their counts,
        // left on the device, are not read). Every active ID is below the high-water mark.
        let range = self.high_water;
        ensure(&dev, &mut ws.seen, range)?;
        ensure(&dev, &mut ws.to_refine, range)?;
        ensure(&dev, &mut ws.to_coarsen, range)?;
        if ws.counts.len() < COUNT_SLOTS || matches!((&dev, &ws.counts), (Device::Cuda(_), Buffer::Host(_))) {
            ws.counts = dev.zeros(COUNT_SLOTS)?;
        }
        // An empty list needs no pass (a refinement-only or coarsening-only adapt).
        for coarsen in [false, true] {
            let (count, listed, flags, out) = if coarsen {
                (n_c, &ws.listed_coarsen, &mut ws.coarsen_flags, &mut ws.to_coarsen)
            } else {
                (n_r, &ws.listed_refine, &mut ws.flags, &mut ws.to_refine)
            };
            if count == 0 {
                continue;
            } else if count <= listed_max {
                let counted = (&mut ws.counts, SLOT_REQUESTS);
                prim::distinct_short(&dev, &mut ws.scratch, (listed, None, count), None, out, counted)?;
            } else {
                // Sanitize's items are the IDs: its flags are the per-ID flags that the
                // compaction lists ascending (and clears).
                prim::take_seen_deferred(&dev, &mut ws.scratch, flags, range, out, None)?;
            }
        }
        // Every ID in play is below the high-water mark after this adapt: the ID flags of
        // the deduplications (S1, S7, S8) span only that range.
        let high_water = self.high_water.max(self.capacity - (self.gap_count - taken));
        // The never used IDs S2 takes get their free state (the pool is allocated zeroed).
        self.prepare_ids(high_water)?;
        ensure(&dev, &mut ws.seen, high_water)?;
        // The statuses MARKED_REFINE and MARKED_COARSEN are set by the first kernels that
        // run over the two lists (S2's AssignChildren, S3's CheckCoarsen): nothing reads
        // them before, and the launches are saved.
        // A refinement-only or coarsening-only adapt reads its one request list in place
        // of `ws.marked` ([`Counts::marked_list`]): no copies.
        if n_r > 0 && n_c > 0 {
            ensure(&dev, &mut ws.marked, n_r + n_c)?;
            dev.copy(&ws.to_refine, n_r, &mut ws.marked, 0)?;
            dev.copy(&ws.to_coarsen, n_c, &mut ws.marked, n_r)?;
        }
        Ok(Some(Counts {
            handed_out: n_act,
            refine: n_r,
            coarsen: n_c,
            high_water,
            map_len: ListLen::Known(0),
            map: 0,
            coarsened: 0,
        }))
    }

    /// S1 Minimal Map: the marked blocks and their same-level neighbours, sorted, unique,
    /// into `ws.map`. A small map's length stays on the device until S5 reads it with its
    /// own counts (`n.map_len`); a large one's is read here.
    fn minimal_map(&mut self, ws: &mut AdaptWorkspace, n: &mut Counts) -> Result<()> {
        let dev = self.device.clone();
        let items = n.marked() * D::NEIGHBORS;
        let short = short_list(ws, items, 0);
        if !short {
            ensure(&dev, &mut ws.gathered, items)?;
            ensure(&dev, &mut ws.gathered_valid, items)?;
            let AdaptWorkspace { to_refine, to_coarsen, marked, gathered, gathered_valid, .. } = &mut *ws;
            let marked = n.marked_list(to_refine, to_coarsen, marked);
            let a = amr_args!(
                self,
                Gather { blocks: marked.view(), ids: gathered.view_mut(), valid: gathered_valid.view_mut() }
            );
            run::<GatherNeighbours<D>>(&dev, items, a)?;
        }
        let list = Gathered {
            blocks: Blocks::Marked,
            count: n.marked(),
            table: &self.nbr,
            gather: prim::Gather::Entries { per: D::NEIGHBORS },
            short,
        };
        // SAFETY: the neighbours are active blocks (invalid links are negative), below
        // `high_water`, which `ws.seen` holds; `nbr` holds N_nb links per pool block.
        let map_len = unsafe { distinct(&dev, ws, (list, n), n.high_water, Target::Map, SLOT_MAP, D::NEIGHBORS)? };
        n.map_len = map_len;
        if let ListLen::Known(m) = n.map_len {
            n.map = m;
        }
        Ok(())
    }

    /// S2 Map Gaps to Marked Blocks: first children from the end of the gap set, then the
    /// map's links to refined blocks record them in `nbr_child`.
    fn map_gaps_to_marked_blocks(&mut self, ws: &mut AdaptWorkspace, n: &Counts) -> Result<()> {
        let dev = self.device.clone();
        if n.refine > 0 {
            let a = amr_args!(
                self,
                AssignChildrenArgs {
                    to_refine: ws.to_refine.view(),
                    gaps: self.gaps.view(),
                    gap_count: self.gap_count as i32,
                }
            );
            run::<AssignChildren<D>>(&dev, n.refine, a)?;
            let a = amr_args!(self, BlockList { blocks: ws.map.view() });
            run_list::<MapRefinedNeighbours<D>>(&dev, &ws.counts, n.map_len, D::NEIGHBORS, a)?;
        }
        self.high_water = n.high_water;
        Ok(())
    }

    /// S3 Enforcement of 2:1 Balancing: reverts coarsenings next to (future) children,
    /// then tells the neighbours of the rest (`ws.coarsened`) that their children go.
    fn enforce_balance(&mut self, ws: &mut AdaptWorkspace, n: &mut Counts) -> Result<()> {
        let dev = self.device.clone();
        if n.coarsen > 0 {
            let a = amr_args!(self, PerBlock { blocks: ws.to_coarsen.view(), out: ws.flags.view_mut() });
            run::<CheckCoarsen<D>>(&dev, n.coarsen, a)?;
            ensure(&dev, &mut ws.coarsened, n.coarsen)?;
            n.coarsened =
                prim::compact(&dev, &mut ws.scratch, &ws.flags, &ws.to_coarsen, n.coarsen, &mut ws.coarsened)?;
            let a = amr_args!(self, BlockList { blocks: ws.coarsened.view() });
            run::<UnmapCoarsened<D>>(&dev, n.coarsened, a)?;
        }
        Ok(())
    }

    /// S4 Build / Reset Children: the new children's metadata; the children of coarsened
    /// blocks marked for removal.
    fn build_children(&mut self, ws: &mut AdaptWorkspace, n: &Counts) -> Result<()> {
        let dev = self.device.clone();
        let a = amr_args!(self, BlockList { blocks: ws.to_refine.view() });
        run::<BuildChildren<D>>(&dev, n.refine * D::CHILDREN, a)?;
        let a = amr_args!(self, BlockList { blocks: ws.coarsened.view() });
        run::<MarkRemoved<D>>(&dev, n.coarsened * D::CHILDREN, a)
    }

    /// S7 Finalize Ref. IDs: the statuses of refined and coarsened blocks, then the
    /// branch/leaf statuses of the marked blocks' parents.
    fn finalize_ids(&mut self, ws: &mut AdaptWorkspace, n: &Counts) -> Result<()> {
        let dev = self.device.clone();
        let a = amr_args!(self, BlockList { blocks: ws.to_refine.view() });
        run::<FinalizeRefined<D>>(&dev, n.refine, a)?;
        let a = amr_args!(self, BlockList { blocks: ws.coarsened.view() });
        run::<FinalizeCoarsened<D>>(&dev, n.coarsened, a)?;
        // `ws.gathered` also takes BranchStatus's output below, one per distinct parent.
        ensure(&dev, &mut ws.gathered, n.marked())?;
        ensure(&dev, &mut ws.gathered_valid, n.marked())?;
        let short = short_list(ws, n.marked(), 0);
        if !short {
            let AdaptWorkspace { to_refine, to_coarsen, marked, gathered, gathered_valid, .. } = &mut *ws;
            let marked = n.marked_list(to_refine, to_coarsen, marked);
            let a = amr_args!(
                self,
                Gather { blocks: marked.view(), ids: gathered.view_mut(), valid: gathered_valid.view_mut() }
            );
            run::<GatherParents<D>>(&dev, n.marked(), a)?;
        }
        let list = Gathered {
            blocks: Blocks::Marked,
            count: n.marked(),
            table: &self.parent,
            gather: prim::Gather::Entries { per: 1 },
            short,
        };
        // SAFETY: the parents of marked blocks are active, below `high_water` (`ws.seen`
        // holds that many flags); `parent` holds one entry per pool block.
        let n_p = unsafe { distinct(&dev, ws, (list, n), n.high_water, Target::Set, SLOT_PARENTS, 1)? };
        let a = amr_args!(self, PerBlock { blocks: ws.set.view(), out: ws.gathered.view_mut() });
        run_list::<BranchStatus<D>>(&dev, &ws.counts, n_p, 1, a)?;
        let a = amr_args!(self, WriteValues { blocks: ws.set.view(), values: ws.gathered.view() });
        run_list::<WriteStatus<D>>(&dev, &ws.counts, n_p, 1, a)
    }

    /// S8 Update Connectivity and Designate Ghosts: `nbr_child` of the map, then links and
    /// cell/block masks of the map blocks and their children; clears the marks.
    fn update_connectivity(&mut self, ws: &mut AdaptWorkspace, n: &Counts) -> Result<()> {
        let dev = self.device.clone();
        let nc = D::CHILDREN;
        let a = amr_args!(self, NeighbourChildrenArgs { blocks: ws.map.view(), with_onb: 0 });
        run::<NeighbourChildren<D>>(&dev, n.map * D::NEIGHBORS, a)?;
        // The children of map blocks with children: after S7 a block's `child` is
        // negative exactly when it is a leaf (the forest's invariant), so the short path
        // gathers `child + k` where `child ≥ 0`, as [`GatherChildren`] does by status.
        let short = short_list(ws, n.map * nc, n.map);
        if !short {
            ensure(&dev, &mut ws.gathered, n.map * nc)?;
            ensure(&dev, &mut ws.gathered_valid, n.map * nc)?;
            let a = amr_args!(
                self,
                Gather { blocks: ws.map.view(), ids: ws.gathered.view_mut(), valid: ws.gathered_valid.view_mut() }
            );
            run::<GatherChildren<D>>(&dev, n.map, a)?;
        }
        let list = Gathered {
            blocks: Blocks::Map,
            count: n.map,
            table: &self.child,
            gather: prim::Gather::Children { per: nc },
            short,
        };
        // The map and the children of its refined blocks, sorted and distinct. Links are
        // recomputed for all of them from their parents' `nbr_child`, which is current
        // (untouched, or refreshed just above for map blocks): for blocks whose links did
        // not change this rewrites the same values.
        // SAFETY: map blocks and their children (new ones included) are below the new
        // `high_water`, which `ws.seen` holds; `child` holds one entry per pool block.
        let n_s = unsafe {
            distinct(&dev, ws, (list, n), n.high_water, Target::SetWithMap(n.map), SLOT_RELINKED, D::BLOCK_CELLS)?
        };
        let a = amr_args!(self, BlockList { blocks: ws.set.view() });
        run_list::<ChildLinks<D>>(&dev, &ws.counts, n_s, D::NEIGHBORS, a)?;
        let a = amr_args!(self, NeighbourChildrenArgs { blocks: ws.set.view(), with_onb: 1 });
        run_list::<NeighbourChildren<D>>(&dev, &ws.counts, n_s, D::NEIGHBORS, a)?;
        let a = amr_args!(self, BlockList { blocks: ws.set.view() });
        run_list::<Masks<D>>(&dev, &ws.counts, n_s, D::BLOCK_CELLS, a)?;
        self.clear_marks(ws, n.handed_out)?;
        ws.relinked = n.map;
        ws.n_refined = n.refine;
        Ok(())
    }

    /// Clears the marks of the IDs below the pre-adapt high-water mark `n_act` (the
    /// active blocks among them; the others' marks are already clear).
    fn clear_marks(&mut self, ws: &AdaptWorkspace, n_act: usize) -> Result<()> {
        let dev = self.device.clone();
        let a = amr_args!(self, BlockList { blocks: ws.pool_ids.slice(..n_act)? });
        run::<ClearMarks<D>>(&dev, n_act, a)
    }
}

//! Which grid routines of a recorded root step must wait for which (paper, sections "Grid
//! Advancement" and "Grid Communication"): each routine names the parts of the levels it
//! reads and writes, and waits only for the routines before it that write what it touches
//! or read what it writes (read-after-write, write-after-read and write-after-write
//! hazards, as a task-graph runtime tracks them). The root step's CUDA graph then runs
//! independent routines as concurrent branches ([`crate::backend::graph`]).
//!
//! The parts of a level are disjoint sets of blocks:
//! - [`Part::Parents`]: blocks with children;
//! - [`Part::Ghosts`]: blocks with ghost cells (a link to a coarser region). 2:1 balance
//!   gives such a block no children: a leaf with a link to a coarser region is never
//!   refined (`ramus_kernels::amr::select::Sanitize`), and a coarsening that would give a
//!   refined block such a link is refused (`CheckCoarsen`);
//! - [`Part::Rest`]: the other blocks.
//!
//! What the routines touch (`L` the level, every routine of one level in one layout):
//! - collide and stream `L` (with its wall pass and a gradient model's velocities): reads
//!   and writes all of `L` (links stay on the level; the per-block velocities, eddy
//!   viscosities and the level's wall rows go with the blocks);
//! - interpolate `L` into the ghosts of `L + 1`: reads the parents of `L` (linear: a
//!   quadrant of the parent, cubic: its `4^D` cells), writes the ghosts of `L + 1`; in two
//!   passes also the scratch (the split parents and their slots), shared by every level;
//! - average `L + 1` into `L`: writes the parents of `L`; reads the interface cells of
//!   `L + 1` (linear: only blocks with ghosts have them) or every cell of `L + 1` not
//!   under a ghost (cubic).
//!
//! On four levels (linear) the longest chain of dependent routines is 16 of the 29: the
//! finest level's eight steps and the exchanges around them; every coarser routine runs
//! alongside. With the averaging and interpolation between a level's two steps fused
//! ([`Task::Exchange`]) it is 14 of 26.

use ramus_kernels::amr::MAX_LEVELS;

use crate::backend::graph::Dependencies;

/// A set of blocks of one level (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Parents,
    Ghosts,
    Rest,
}

/// What a routine reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Region {
    /// Populations (and per-block or per-cell data that goes with them) of a part of a
    /// level.
    Level(usize, Part),
    /// The two-pass interpolation's scratch and slots.
    Scratch,
}

impl Region {
    /// Every part of level `l`.
    pub fn level(l: usize) -> [Region; 3] {
        [Region::Level(l, Part::Parents), Region::Level(l, Part::Ghosts), Region::Level(l, Part::Rest)]
    }

    /// Its slot in [`Hazards`]; levels are below [`MAX_LEVELS`] (a forest has no others).
    fn index(self) -> usize {
        match self {
            Region::Scratch => 0,
            Region::Level(l, p) => 1 + 3 * l.min(MAX_LEVELS - 1) + p as usize,
        }
    }
}

/// A routine of the advance, by what it touches (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Task {
    /// Level `l` interpolated into the ghosts of `l + 1` (`two_pass`: through the scratch).
    Interpolate { l: usize, two_pass: bool },
    /// Level `l` collided and streamed.
    Step { l: usize },
    /// Level `l + 1` averaged into the parents of `l` (`cubic`: every cell not under a
    /// ghost).
    Average { l: usize, cubic: bool },
    /// [`Task::Average`] then [`Task::Interpolate`] (one pass) in one launch.
    Exchange { l: usize, cubic: bool },
}

/// At most three regions.
type Regions = [Option<Region>; 3];

impl Task {
    /// What the task reads and what it writes.
    fn touches(self) -> (Regions, Regions) {
        let some = |r: [Region; 3]| r.map(Some);
        match self {
            Task::Interpolate { l, two_pass } => (
                [Some(Region::Level(l, Part::Parents)), None, None],
                [Some(Region::Level(l + 1, Part::Ghosts)), two_pass.then_some(Region::Scratch), None],
            ),
            Task::Step { l } => (some(Region::level(l)), some(Region::level(l))),
            Task::Average { l, cubic } => (
                if cubic { some(Region::level(l + 1)) } else { [Some(Region::Level(l + 1, Part::Ghosts)), None, None] },
                [Some(Region::Level(l, Part::Parents)), None, None],
            ),
            // The interpolation reads the parents the averaging writes, and writes the
            // ghosts it (linear) reads: both are in the write set.
            Task::Exchange { l, cubic } => (
                if cubic { some(Region::level(l + 1)) } else { [Some(Region::Level(l + 1, Part::Ghosts)), None, None] },
                [Some(Region::Level(l, Part::Parents)), Some(Region::Level(l + 1, Part::Ghosts)), None],
            ),
        }
    }
}

/// The last writers and the readers since of every region, in one recording.
pub(crate) struct Hazards {
    /// No launch, of this recording: where every union starts.
    none: Dependencies,
    written: [Dependencies; REGIONS],
    read: [Dependencies; REGIONS],
}

/// Regions of a forest: the scratch and three parts of each possible level.
const REGIONS: usize = 1 + 3 * MAX_LEVELS;

impl Hazards {
    /// No hazards yet, for the recording `none` (from [`crate::backend::Device::dependencies`]
    /// before its first launch).
    pub fn new(none: Dependencies) -> Self {
        Hazards { written: std::array::from_fn(|_| none.clone()), read: std::array::from_fn(|_| none.clone()), none }
    }

    /// What `task` must wait for: the last writer of each region it touches, and the
    /// readers since of what it writes.
    pub fn before(&self, task: Task) -> Dependencies {
        let (reads, writes) = task.touches();
        let mut d = self.none.clone();
        for r in reads.iter().chain(&writes).flatten() {
            d.join(&self.written[r.index()]);
        }
        for w in writes.iter().flatten() {
            d.join(&self.read[w.index()]);
        }
        d
    }

    /// Records that `task` ended with the launches `end`.
    pub fn after(&mut self, task: Task, end: &Dependencies) {
        let (reads, writes) = task.touches();
        for r in reads.iter().flatten().filter(|r| !writes.contains(&Some(**r))) {
            self.read[r.index()].join(end);
        }
        for w in writes.iter().flatten() {
            self.written[w.index()] = end.clone();
            self.read[w.index()] = self.none.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::graph::{GraphCache, Issue};

    /// Records the tasks of one root step on `levels` levels in the advance's order
    /// (`Solver::advance`; `fused`: with fused exchanges), one launch each, with or
    /// without hazard tracking; returns each launch's task and dependencies.
    fn record(levels: usize, cubic: bool, fused: bool, tracked: bool) -> (Vec<Task>, Vec<Vec<u32>>) {
        record_roots(1, levels, cubic, fused, tracked)
    }

    /// [`record`] for `roots` root steps in one recording (`Solver::advance_roots`).
    fn record_roots(
        roots: usize,
        levels: usize,
        cubic: bool,
        fused: bool,
        tracked: bool,
    ) -> (Vec<Task>, Vec<Vec<u32>>) {
        fn advance(
            l: usize,
            levels: usize,
            (cubic, fused): (bool, bool),
            pd: (bool, bool),
            run: &mut impl FnMut(Task),
        ) {
            let (pending, defer) = pd;
            let finer = l + 1 < levels;
            if finer && pending {
                run(Task::Exchange { l, cubic });
            } else if finer {
                run(Task::Interpolate { l, two_pass: false });
            }
            run(Task::Step { l });
            if finer {
                let fuse = fused && l + 2 < levels;
                advance(l + 1, levels, (cubic, fused), (false, fuse), run);
                advance(l + 1, levels, (cubic, fused), (fuse, false), run);
                if !defer {
                    run(Task::Average { l, cubic });
                }
            }
        }
        let cache = GraphCache::default();
        assert!(cache.begin());
        let mut hazards = tracked.then(|| Hazards::new(cache.dependencies()));
        let mut tasks = Vec::new();
        let mut run = |task| {
            if let Some(h) = &hazards {
                cache.set_dependencies(&h.before(task));
            }
            let issue: Issue = Box::new(|_| Ok(()));
            assert!(cache.record("task", |_| {}, issue).is_none());
            tasks.push(task);
            if let Some(h) = &mut hazards {
                h.after(task, &cache.dependencies());
            }
        };
        for _ in 0..roots {
            advance(0, levels, (cubic, fused), (false, false), &mut run);
        }
        (tasks, cache.recorded_dependencies())
    }

    /// The longest chain of dependent launches.
    fn critical_path(deps: &[Vec<u32>]) -> usize {
        let mut depth = Vec::with_capacity(deps.len());
        for d in deps {
            depth.push(1 + d.iter().map(|&k| depth[k as usize]).max().unwrap_or(0));
        }
        depth.into_iter().max().unwrap_or(0)
    }

    /// Whether launch `a` is ordered before launch `b` (a path of dependencies).
    fn ordered(deps: &[Vec<u32>], a: usize, b: usize) -> bool {
        let mut reach = vec![false; b + 1];
        reach[a] = true;
        for k in a + 1..=b {
            reach[k] = deps[k].iter().any(|&d| d as usize >= a && reach[d as usize]);
        }
        reach[b]
    }

    /// Without tracking a root step is a chain of all `2^(L+1) − 3` tasks; with it the
    /// longest chain is `2^L` (linear) and `18` on four levels (cubic), 14 and 16 with
    /// fused exchanges; every pair of tasks that touch a common region, one of them
    /// writing it, stays ordered as in the advance.
    #[test]
    fn a_root_step_keeps_every_hazard_and_shortens_the_chain() {
        let cases = [
            (1, false, false, 1),
            (2, false, false, 4),
            (3, false, false, 8),
            (4, false, false, 16),
            (4, true, false, 18),
            (3, false, true, 7),
            (4, false, true, 14),
            (4, true, true, 16),
        ];
        for (levels, cubic, fused, want) in cases {
            let (tasks, chain) = record(levels, cubic, fused, false);
            let all = if fused { tasks.len() } else { (1 << (levels + 1)) - 3 };
            assert_eq!(critical_path(&chain), all, "untracked, {levels} levels");
            let (tasks, deps) = record(levels, cubic, fused, true);
            assert_eq!(critical_path(&deps), want, "{levels} levels, cubic {cubic}, fused {fused}");
            assert_hazards_ordered(&tasks, &deps);
        }
    }

    /// Every pair of tasks that touch a common region, one of them writing it, is ordered
    /// as recorded.
    fn assert_hazards_ordered(tasks: &[Task], deps: &[Vec<u32>]) {
        for b in 0..tasks.len() {
            let (rb, wb) = tasks[b].touches();
            for a in 0..b {
                let (ra, wa) = tasks[a].touches();
                let meets = |x: &Regions, y: &Regions| x.iter().flatten().any(|r| y.contains(&Some(*r)));
                if meets(&wa, &rb) || meets(&wa, &wb) || meets(&ra, &wb) {
                    assert!(ordered(deps, a, b), "{:?} ({a}) before {:?} ({b})", tasks[a], tasks[b]);
                }
            }
        }
    }

    /// Two root steps in one recording (`Solver::advance_roots`): every hazard within and
    /// across them stays ordered. The longest chain is the two root steps' end to end
    /// (the second's interpolations need the first's averagings) except where the cubic
    /// exchanges leave slack: what a pair saves is the graph boundary, not routines.
    #[test]
    fn two_root_steps_in_one_recording_keep_every_hazard() {
        let cases = [
            (1, false, false, 2),
            (2, false, false, 8),
            (4, false, false, 32),
            (4, false, true, 28),
            (4, true, true, 30),
        ];
        for (levels, cubic, fused, want) in cases {
            let (tasks, deps) = record_roots(2, levels, cubic, fused, true);
            assert_eq!(tasks.len(), 2 * record(levels, cubic, fused, true).0.len());
            assert_hazards_ordered(&tasks, &deps);
            assert_eq!(critical_path(&deps), want, "{levels} levels, cubic {cubic}, fused {fused}");
        }
    }
}

//! Launch-free sub-cycling on CUDA (issue "performance to the limit", item 3): the
//! kernel launches of a section (a root step, or two: `Forest::advance` records two root
//! steps from an even count together when nothing is due between them) are *recorded*
//! instead of issued, and the recorded sequence runs as one CUDA graph. A graph is
//! captured the first time a sequence occurs and replayed for as long as the same
//! sequence recurs — between two adaptations the launches of a root step depend only on
//! its parity, so one graph of a pair serves a whole adaptation interval. A launch-bound
//! run (small 2D forests, many levels) then pays one graph launch per two root steps
//! instead of some sixty kernel launches, and the second root step's first routines may
//! start before the first's last ones end.
//!
//! **Why replay is exact.** A recorded launch keeps its kernel name, grid, item count and
//! the exact bytes of its arguments ([`ramus_kernels::memory::ArgBytes`]: every pointer
//! and every scalar). A cached graph is replayed only when the whole new sequence equals
//! the captured one byte for byte, so it runs the very launches that would have been
//! issued, in the same order on the same stream: results are bitwise those of direct
//! launches, and a buffer that moved or a parameter that changed (a new force, a new
//! inflow, a new mesh) simply makes a new capture. Nothing has to be invalidated by hand.
//!
//! **What may happen while recording.** Only launches are deferred. Any other device
//! operation of the recording thread (a copy, a read-back, an allocation, a
//! synchronisation) first issues the pending launches directly and ends the recording
//! ([`GraphCache::flush`]), so stream order is never changed; such a step simply runs
//! without a graph. The CPU backend runs every launch at once.
//!
//! **New mesh states.** An adaptation changes the launches' sizes and arguments but rarely
//! their kernels and dependencies: the least recently used graph of the same kernels and
//! dependencies (one of an earlier mesh state) then gets the new parameters node
//! by node (`cuGraphExecKernelNodeSetParams_v2`) instead of a capture and an update of
//! the whole graph.
//!
//! **Branches.** A recorded launch depends, by default, on the launch recorded before it
//! (a chain, as on a stream). A caller that knows which earlier launches a launch must
//! wait for (because it reads or writes their data) may say so instead
//! ([`GraphCache::dependencies`], [`GraphCache::set_dependencies`]): launches that do not
//! depend on each other become branches of the graph, which the GPU may run at the same
//! time. The dependencies are part of the replay key; a launch issued directly (no graph)
//! runs in recording order, which satisfies every dependency.
//!
//! **Joins.** A dependent launch (programmatic dependent launch: its CTAs may start before
//! the kernel before them ends) captured after several nodes gets a programmatic edge from
//! each, and the driver then starts it only after they have all ended, even when all but
//! one ended long before (measured with the kernel timeline). So a launch with several
//! dependencies is captured after the latest recorded of them alone where no other launch
//! would start early behind that one ([`early_predecessors`]; on a root step's finest
//! chain, the step that ends last), and the edges from the others are added to the
//! captured graph as full edges: the node still waits for every one of them, and may
//! start early behind the one it follows. Measured on an H200 (BENCHMARKS.md,
//! thirty-fourth session): A1L stepping 3 % and its cubic variant 2 % shorter, A3L
//! unchanged, results bitwise the same.

mod cache;
mod exec;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use cudarc::driver::sys;
use cudarc::driver::CudaStream;

use self::cache::Cache;
use self::exec::{capture, instantiate, Exec};
use super::device::{Counters, MeshWrites};
use crate::error::Result;

/// Where a recorded launch goes.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// Issued on a stream (directly, or into a capture), along with the operations that
    /// may write the mesh before it there ([`MeshWrites`]).
    Stream(&'a Arc<CudaStream>, &'a MeshWrites),
    /// Its parameters given to a kernel node of an executable graph in place.
    Node { exec: sys::CUgraphExec, node: sys::CUgraphNode },
}

/// A deferred launch: issues the kernel on a stream or sets a graph node to it (any number
/// of times: a failed update in place is followed by a capture).
pub(crate) type Issue = Box<dyn Fn(Target<'_>) -> Result<()> + Send>;

/// How the launches of a recorded section ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replay {
    /// Directly, one launch at a time (the CPU backend, graphs switched off, nothing
    /// recorded, or a non-launch operation ended the recording).
    Direct,
    /// As a cached graph.
    Replayed,
    /// As a new graph (kept for the next time the sequence occurs): captured, or a cached
    /// graph of the same kernels and dependencies given the new parameters in place.
    Captured,
}

/// The launches recorded so far in a section.
struct Recording {
    /// Tells recordings apart ([`Dependencies`] of an ended one are ignored).
    id: u64,
    thread: ThreadId,
    names: Vec<&'static str>,
    key: Vec<u8>,
    /// The dependencies' part of `key`: two sequences of the same kernels and topology
    /// differ only in the nodes' parameters.
    topo: Vec<u8>,
    issues: Vec<Issue>,
    /// The launches each recorded launch depends on: `deps[ends[k - 1]..ends[k]]` for
    /// launch `k` (indices into `issues`).
    deps: Vec<u32>,
    ends: Vec<u32>,
    /// The launches the next recorded launch depends on.
    tail: Vec<u32>,
}

impl Recording {
    /// The launches launch `k` depends on.
    fn deps(&self, k: usize) -> &[u32] {
        deps_of(&self.deps, &self.ends, k)
    }

    /// Whether every launch depends on exactly the one before it (a stream's order).
    fn is_chain(&self) -> bool {
        (0..self.issues.len()).all(|k| match self.deps(k) {
            [] => k == 0,
            [d] => *d as usize + 1 == k,
            _ => false,
        })
    }
}

/// The launches launch `k` depends on, in the flat form of [`Recording::deps`].
fn deps_of<'a>(deps: &'a [u32], ends: &[u32], k: usize) -> &'a [u32] {
    let start = if k == 0 { 0 } else { ends[k - 1] as usize };
    &deps[start..ends[k] as usize]
}

/// Per recorded launch (dependencies `deps[ends[k - 1]..ends[k]]`), the dependency whose
/// node it is captured after alone, over an edge that may be programmatic, the others
/// becoming full edges added after the capture ("Joins"); `None`: captured after all of
/// them (one or none: its only predecessor; several: a join). A launch's candidate is its
/// latest recorded dependency, and a join is split only if no other launch has the same
/// candidate: a launch that several launches would start early behind keeps them all as
/// before (measured: on an H200, split joins sharing a candidate made the cubic A1L
/// cavity 3–5 % slower: its level-1 exchange started only behind the finest steps).
fn early_predecessors(deps: &[u32], ends: &[u32]) -> Vec<Option<u32>> {
    let latest: Vec<Option<u32>> = (0..ends.len()).map(|k| deps_of(deps, ends, k).iter().copied().max()).collect();
    let mut claims = vec![0u32; ends.len()];
    for d in latest.iter().flatten() {
        claims[*d as usize] += 1;
    }
    (0..ends.len())
        .map(|k| {
            let d = latest[k]?;
            (deps_of(deps, ends, k).len() > 1 && claims[d as usize] == 1).then_some(d)
        })
        .collect()
}

/// Recorded launches that later launches depend on: what [`GraphCache::dependencies`]
/// gives and [`GraphCache::set_dependencies`] takes. The default is of no recording and
/// without effect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    recording: Option<u64>,
    launches: Vec<u32>,
}

impl Dependencies {
    /// Whether these are of a recording (else the calls that take them do nothing).
    pub fn of_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Adds `other`'s launches (of the same recording; another recording's are ignored).
    pub fn join(&mut self, other: &Dependencies) {
        if self.recording.is_none() {
            self.recording = other.recording;
        }
        if other.recording != self.recording {
            return;
        }
        for &k in &other.launches {
            if let Err(at) = self.launches.binary_search(&k) {
                self.launches.insert(at, k);
            }
        }
    }
}

/// The recording in progress (at most one, owned by one thread) and the cached graphs of
/// one CUDA device.
#[derive(Default)]
pub(crate) struct GraphCache {
    recording: Mutex<Option<Recording>>,
    cached: Mutex<Cache<Exec>>,
    /// The id of the next recording.
    next_id: std::sync::atomic::AtomicU64,
}

impl GraphCache {
    /// Starts recording the launches of the calling thread; `false` if a recording is
    /// already in progress (then the caller's launches join it or, from another thread,
    /// run directly).
    pub fn begin(&self) -> bool {
        let mut r = self.recording.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_some() {
            return false;
        }
        *r = Some(Recording {
            id: self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            thread: std::thread::current().id(),
            names: Vec::new(),
            key: Vec::new(),
            topo: Vec::new(),
            issues: Vec::new(),
            deps: Vec::new(),
            ends: Vec::new(),
            tail: Vec::new(),
        });
        true
    }

    /// The calling thread's recording, if it records.
    fn with_own<R>(&self, f: impl FnOnce(&mut Recording) -> R) -> Option<R> {
        let mut r = self.recording.lock().unwrap_or_else(|p| p.into_inner());
        match r.as_mut() {
            Some(rec) if rec.thread == std::thread::current().id() => Some(f(rec)),
            _ => None,
        }
    }

    /// The launches the next launch recorded by the calling thread will depend on (empty
    /// if it does not record).
    pub fn dependencies(&self) -> Dependencies {
        self.with_own(|rec| Dependencies { recording: Some(rec.id), launches: rec.tail.clone() }).unwrap_or_default()
    }

    /// Makes the next launch recorded by the calling thread depend on exactly `deps`
    /// (given by [`Self::dependencies`] in this recording, possibly joined; empty: on
    /// nothing). No effect if `deps` is of another recording or of none.
    pub fn set_dependencies(&self, deps: &Dependencies) {
        self.with_own(|rec| {
            if deps.recording == Some(rec.id) {
                rec.tail.clone_from(&deps.launches);
            }
        });
    }

    /// Each recorded launch's dependencies so far (tests of the callers' graphs).
    #[cfg(test)]
    pub fn recorded_dependencies(&self) -> Vec<Vec<u32>> {
        self.with_own(|rec| (0..rec.issues.len()).map(|k| rec.deps(k).to_vec()).collect()).unwrap_or_default()
    }

    /// Whether the calling thread is recording (its launches go to [`Self::record`]; only
    /// this thread can start or end its recording, so the answer holds until it does).
    pub fn records_here(&self) -> bool {
        self.with_own(|_| ()).is_some()
    }

    /// Records a launch of the calling thread if it is recording (the launch is then
    /// issued by [`Self::end`] or [`Self::flush`]); gives `issue` back otherwise.
    /// `key` writes the launch's configuration and argument bytes.
    pub fn record(&self, name: &'static str, key: impl FnOnce(&mut Vec<u8>), issue: Issue) -> Option<Issue> {
        let mut r = self.recording.lock().unwrap_or_else(|p| p.into_inner());
        match r.as_mut() {
            Some(rec) if rec.thread == std::thread::current().id() => {
                rec.names.push(name);
                key(&mut rec.key);
                // The dependencies are part of the sequence: the same launches in another
                // graph topology are another graph.
                for v in [&[rec.tail.len() as u32][..], &rec.tail].concat() {
                    rec.key.extend_from_slice(&v.to_ne_bytes());
                    rec.topo.extend_from_slice(&v.to_ne_bytes());
                }
                rec.deps.extend_from_slice(&rec.tail);
                rec.ends.push(rec.deps.len() as u32);
                rec.tail.clear();
                rec.tail.push(rec.issues.len() as u32);
                rec.issues.push(issue);
                None
            }
            _ => Some(issue),
        }
    }

    /// Ends the calling thread's recording, if any, issuing its pending launches directly
    /// on `stream`: what every non-launch operation does first, so that it comes after
    /// them in stream order.
    pub fn flush(&self, stream: &Arc<CudaStream>, mesh: &MeshWrites, counters: &Counters) -> Result<()> {
        match self.take_own() {
            Some(rec) => {
                counters.kernels(rec.issues.len());
                rec.issues.iter().try_for_each(|issue| issue(Target::Stream(stream, mesh)))
            }
            None => Ok(()),
        }
    }

    /// Ends the calling thread's recording and runs what it recorded on `stream`: the
    /// cached graph of the same sequence if there is one, else a graph captured now (and
    /// cached). `direct`: issue the launches one by one instead (an error path). The
    /// launches issued (also into a capture) and the graph launched go to `counters`.
    ///
    /// `nodes`: the driver can name a capture's nodes and set their parameters; a graph
    /// of the same kernels and dependencies as the new sequence is then updated in place
    /// instead of capturing one ([`Cache::reuse`]).
    ///
    /// `mesh`: the stream's [`MeshWrites`], which the launches issued directly follow; a
    /// graph launched unsettles it (its last kernels may still run).
    pub fn end(
        &self,
        stream: &Arc<CudaStream>,
        mesh: &MeshWrites,
        direct: bool,
        nodes: bool,
        counters: &Counters,
    ) -> Result<Replay> {
        let Some(rec) = self.take_own() else { return Ok(Replay::Direct) };
        if direct || rec.issues.is_empty() {
            counters.kernels(rec.issues.len());
            rec.issues.iter().try_for_each(|issue| issue(Target::Stream(stream, mesh)))?;
            return Ok(Replay::Direct);
        }
        mesh.unsettle();
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(exec) = cached.find(&rec.names, &rec.key) {
            counters.graph();
            exec.launch()?;
            return Ok(Replay::Replayed);
        }
        let branched = !rec.is_chain();
        let Recording { names, key, topo, issues, deps, ends, .. } = rec;
        if nodes {
            if let Some(exec) =
                cached.reuse(&names, &topo, key.clone(), |exec| exec.source.is_some(), |exec| exec.set(&issues))
            {
                counters.update();
                counters.graph();
                exec.launch()?;
                return Ok(Replay::Captured);
            }
        }
        counters.kernels(issues.len());
        let (graph, graph_nodes) = capture(stream, &issues, branched.then_some((&deps[..], &ends[..])), nodes)?;
        let mut made = false;
        let exec = cached.insert(
            names,
            topo,
            key,
            |exec| exec.update(&graph),
            || {
                made = true;
                instantiate(stream, &graph)
            },
        )?;
        if made {
            exec.source = graph_nodes.map(|n| (graph, n));
        }
        counters.graph();
        exec.launch()?;
        Ok(Replay::Captured)
    }

    /// Takes the recording if the calling thread is the one recording (another thread's
    /// recording stays).
    fn take_own(&self) -> Option<Recording> {
        let mut r = self.recording.lock().unwrap_or_else(|p| p.into_inner());
        match r.as_ref() {
            Some(rec) if rec.thread == std::thread::current().id() => r.take(),
            _ => None,
        }
    }

    /// Drops every cached graph.
    pub fn clear(&self) {
        self.cached.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dependencies a level's step and its finer levels' steps could record (an
    /// interpolation, then the coarse step and the two fine steps as branches from it,
    /// then the averaging after both), and the key that tells the topologies apart.
    #[test]
    fn dependencies_set_by_the_caller_are_recorded_and_keyed() {
        let cache = GraphCache::default();
        let noop = || -> Issue { Box::new(|_| Ok(())) };
        let record = |name| assert!(cache.record(name, |k| k.push(0), noop()).is_none());
        let run = |branches: bool| {
            assert!(cache.begin());
            record("interpolate");
            let fork = cache.dependencies();
            record("coarse step");
            let mut coarse = cache.dependencies();
            if branches {
                cache.set_dependencies(&fork);
            }
            record("fine step");
            record("fine step");
            if branches {
                coarse.join(&cache.dependencies());
                cache.set_dependencies(&coarse);
            }
            record("average");
            cache.take_own().expect("recording")
        };
        let chain = run(false);
        assert!(chain.is_chain());
        let branched = run(true);
        assert!(!branched.is_chain());
        let deps: Vec<&[u32]> = (0..5).map(|k| branched.deps(k)).collect();
        assert_eq!(deps, [&[][..], &[0], &[0], &[2], &[1, 3]]);
        // The averaging, a join, is captured after the second fine step (its latest
        // dependency, on the finer chain) alone; its edge from the coarse step is added
        // as a full edge. The other launches have one predecessor or none.
        let after = early_predecessors(&branched.deps, &branched.ends);
        assert_eq!(after, [None, None, None, None, Some(3)]);
        // The candidate is the latest dependency in whatever order they are listed; a
        // join whose candidate is another launch's candidate too stays a join.
        let (deps, ends) = ([0, 0, 2, 1, 3, 0, 1, 3], [0, 1, 2, 4, 6, 8]);
        assert_eq!(early_predecessors(&deps, &ends[..5]), [None, None, None, Some(2), Some(3)]);
        assert_eq!(early_predecessors(&deps, &ends), [None, None, None, Some(2), None, None]);
        assert_ne!(chain.key, branched.key, "the topology is part of the replay key");
        assert_eq!(chain.names, branched.names);
        // Dependencies of an ended recording, or of none, do nothing in the next one.
        assert!(cache.begin());
        record("step");
        cache.set_dependencies(&Dependencies { recording: Some(branched.id), launches: vec![] });
        cache.set_dependencies(&Dependencies::default());
        record("step");
        let rec = cache.take_own().expect("recording");
        assert!(rec.is_chain());
        // Nothing recorded: nothing to depend on.
        assert_eq!(cache.dependencies(), Dependencies::default());
        let mut d = Dependencies::default();
        d.join(&Dependencies { recording: Some(3), launches: vec![4, 1] });
        d.join(&Dependencies { recording: Some(3), launches: vec![2, 4] });
        d.join(&Dependencies { recording: Some(5), launches: vec![0] });
        assert_eq!(d, Dependencies { recording: Some(3), launches: vec![1, 2, 4] });
    }
}

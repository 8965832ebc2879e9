//! Launch-free sub-cycling on CUDA (issue "performance to the limit", item 3): the
//! kernel launches of one root step are *recorded* instead of issued, and the recorded
//! sequence runs as one CUDA graph. A graph is captured the first time a sequence occurs
//! and replayed for as long as the same sequence recurs — between two adaptations the
//! launches of a root step depend only on its parity, so two graphs serve a whole
//! adaptation interval. A launch-bound run (small 2D forests, many levels) then pays one
//! graph launch per root step instead of some thirty kernel launches.
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

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::CudaStream;

use super::cuda::driver_error;
use super::device::Counters;
use crate::error::{Error, Result};

/// Graphs kept: the two root-step parities of the current mesh state and of the one
/// before (a mesh whose adaptation changed nothing reuses its graphs).
const CACHED_GRAPHS: usize = 4;

/// The most recently used graphs never updated for a new sequence: the two parities of
/// the mesh state in use.
const CURRENT: usize = 2;

/// Where a recorded launch goes.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// Issued on a stream (directly, or into a capture).
    Stream(&'a Arc<CudaStream>),
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

/// The executable graphs of the last launch sequences, most recently used first, each
/// with the sequence it runs (kernel names and the bytes of `device::launch::launch_key` and the
/// arguments).
struct Cache<G> {
    entries: VecDeque<Entry<G>>,
}

/// A cached graph and the sequence it runs: its kernels, its dependencies' bytes
/// ([`Recording::topo`]) and the whole key.
struct Entry<G> {
    names: Vec<&'static str>,
    topo: Vec<u8>,
    key: Vec<u8>,
    graph: G,
}

impl<G> Default for Cache<G> {
    fn default() -> Self {
        Cache { entries: VecDeque::new() }
    }
}

impl<G> Cache<G> {
    /// The graph of exactly this sequence, now the most recently used.
    fn find(&mut self, names: &[&'static str], key: &[u8]) -> Option<&G> {
        let k = self.entries.iter().position(|e| e.names == names && e.key == key)?;
        let hit = self.entries.remove(k)?;
        self.entries.push_front(hit);
        self.entries.front().map(|e| &e.graph)
    }

    /// Gives the least recently used graph that runs the same kernels with the same
    /// dependencies and can be updated in place (`usable`) the parameters of the new
    /// sequence (`set`), and makes it the most recently used under `key`. The graphs of
    /// the mesh state in use are candidates too: a new sequence of the same kernels means
    /// a new mesh state, and a mesh state that comes back replays ([`Self::find`]) before
    /// anything is updated. `None` if there is no such graph or `set` fails (that graph,
    /// perhaps half updated, is dropped).
    fn reuse(
        &mut self,
        names: &[&'static str],
        topo: &[u8],
        key: Vec<u8>,
        usable: impl Fn(&G) -> bool,
        set: impl FnOnce(&mut G) -> bool,
    ) -> Option<&G> {
        let k = (0..self.entries.len()).rev().find(|&k| {
            let e = &self.entries[k];
            e.names == names && e.topo == topo && usable(&e.graph)
        })?;
        let mut hit = self.entries.remove(k)?;
        if !set(&mut hit.graph) {
            return None;
        }
        hit.key = key;
        self.entries.push_front(hit);
        self.entries.front().map(|e| &e.graph)
    }

    /// Adds the graph of a new sequence as the most recently used: while the cache is
    /// not full a new one (`make`); then the least recently used graph with as many
    /// launches outside the [`CURRENT`] most recent ones (those of the mesh state in use),
    /// if `update` can give it the new sequence's parameters in place (a new mesh state
    /// changes list lengths and sizes but rarely the number of launches, and an update is
    /// cheaper than an instantiation), else a new one replacing the least recently used.
    fn insert(
        &mut self,
        names: Vec<&'static str>,
        topo: Vec<u8>,
        key: Vec<u8>,
        mut update: impl FnMut(&mut G) -> bool,
        make: impl FnOnce() -> Result<G>,
    ) -> Result<&mut G> {
        let full = self.entries.len() >= CACHED_GRAPHS;
        let same_length =
            (CURRENT..self.entries.len()).rev().find(|&k| full && self.entries[k].names.len() == names.len());
        let updated = same_length.filter(|&k| update(&mut self.entries[k].graph)).and_then(|k| self.entries.remove(k));
        let graph = match updated {
            Some(e) => e.graph,
            None => make()?,
        };
        self.entries.push_front(Entry { names, topo, key, graph });
        self.entries.truncate(CACHED_GRAPHS);
        Ok(&mut self.entries[0].graph)
    }

    fn clear(&mut self) {
        self.entries.clear();
    }
}

/// An instantiated CUDA graph, destroyed on drop. (cudarc's `CudaGraph` cannot be built
/// from an executable graph that was updated in place, which [`GraphCache::end`] does.)
struct Exec {
    exec: sys::CUgraphExec,
    stream: Arc<CudaStream>,
    /// The graph it was instantiated from and that graph's kernel nodes in launch order,
    /// through which [`Self::set`] updates it in place (`None` after [`Self::update`],
    /// or where the driver cannot name the nodes).
    source: Option<(Captured, Vec<sys::CUgraphNode>)>,
}

// SAFETY: CUDA graph objects must not be used by two threads at once; every use of this
// one happens under the `GraphCache` mutex.
unsafe impl Send for Exec {}

impl Exec {
    fn launch(&self) -> Result<()> {
        self.stream.context().bind_to_thread().map_err(|e| driver_error("launching a CUDA graph", e))?;
        // SAFETY: a live executable graph of this stream's context.
        unsafe { result::graph::launch(self.exec, self.stream.cu_stream()) }
            .map_err(|e| driver_error("launching a CUDA graph", e))
    }

    /// Gives this executable graph the parameters of `graph`, which must have the same
    /// topology (as many kernel nodes, the same edges); `false` if the driver refuses.
    fn update(&mut self, graph: &Captured) -> bool {
        // SAFETY: both handles are live; the driver checks that the topologies match and
        // leaves the executable graph unchanged if they do not.
        let mut info = std::mem::MaybeUninit::<sys::CUgraphExecUpdateResultInfo>::zeroed();
        let updated =
            unsafe { sys::cuGraphExecUpdate_v2(self.exec, graph.0, info.as_mut_ptr()) == sys::CUresult::CUDA_SUCCESS };
        if updated {
            self.source = None;
        }
        updated
    }

    /// Gives each kernel node the parameters of the launch of the same position in
    /// `issues` (the same kernels, grids and arguments may differ): no capture, no
    /// comparison of two graphs. `false` if the nodes are not known or the driver refuses
    /// one (the graph may then be half updated: drop it).
    fn set(&mut self, issues: &[Issue]) -> bool {
        let Some((_, nodes)) = &self.source else { return false };
        nodes.len() == issues.len()
            && issues.iter().zip(nodes).all(|(issue, &node)| issue(Target::Node { exec: self.exec, node }).is_ok())
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        // SAFETY: owned, live, destroyed once; a launch in flight keeps its own resources.
        let _ = unsafe { result::graph::exec_destroy(self.exec) };
    }
}

/// A captured (not instantiated) graph, destroyed on drop.
struct Captured(sys::CUgraph);

impl Drop for Captured {
    fn drop(&mut self) {
        // SAFETY: owned, live, destroyed once.
        let _ = unsafe { result::graph::destroy(self.0) };
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
    pub fn flush(&self, stream: &Arc<CudaStream>, counters: &Counters) -> Result<()> {
        match self.take_own() {
            Some(rec) => {
                counters.kernels(rec.issues.len());
                rec.issues.iter().try_for_each(|issue| issue(Target::Stream(stream)))
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
    pub fn end(&self, stream: &Arc<CudaStream>, direct: bool, nodes: bool, counters: &Counters) -> Result<Replay> {
        let Some(rec) = self.take_own() else { return Ok(Replay::Direct) };
        if direct || rec.issues.is_empty() {
            counters.kernels(rec.issues.len());
            rec.issues.iter().try_for_each(|issue| issue(Target::Stream(stream)))?;
            return Ok(Replay::Direct);
        }
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

/// Captures `issues`, in order, into a graph on `stream` (thread-local capture: other
/// threads' CUDA calls are not affected). `deps`: the recording's dependencies
/// ([`Recording::deps`]) when they are not a chain; each launch's node then depends on
/// those launches' nodes alone. `nodes`: also return the kernel nodes in launch order.
/// The capture is always ended, also when a launch fails.
fn capture(
    stream: &Arc<CudaStream>,
    issues: &[Issue],
    deps: Option<(&[u32], &[u32])>,
    nodes: bool,
) -> Result<(Captured, Option<Vec<sys::CUgraphNode>>)> {
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(|e| driver_error("beginning a CUDA graph capture", e))?;
    let issued = if deps.is_none() && !nodes {
        issues.iter().try_for_each(|issue| issue(Target::Stream(stream))).map(|()| None)
    } else {
        issue_tracked(stream, issues, deps).map(Some)
    };
    // SAFETY: the stream is live and capturing (begun above, on this thread).
    let graph = unsafe { result::stream::end_capture(stream.cu_stream()) };
    let graph_nodes = issued?;
    let graph = graph.map_err(|e| driver_error("capturing a CUDA graph", e))?;
    if graph.is_null() {
        return Err(Error::Cuda {
            context: "capturing a CUDA graph".into(),
            message: "the capture produced no graph".into(),
        });
    }
    Ok((Captured(graph), graph_nodes))
}

/// Issues `issues` into the capture of `stream`, each after setting the stream's capture
/// dependencies to the nodes of the launches it depends on (`deps[ends[k - 1]..ends[k]]`;
/// `None`: the launch before it, the stream's own order), and returns the node each added.
fn issue_tracked(
    stream: &Arc<CudaStream>,
    issues: &[Issue],
    deps: Option<(&[u32], &[u32])>,
) -> Result<Vec<sys::CUgraphNode>> {
    let failed = |e| driver_error("capturing a CUDA graph with branches", e);
    let mut nodes: Vec<sys::CUgraphNode> = Vec::with_capacity(issues.len());
    let mut these: Vec<sys::CUgraphNode> = Vec::new();
    for (k, issue) in issues.iter().enumerate() {
        if let Some((deps, ends)) = deps {
            these.clear();
            these.extend(deps_of(deps, ends, k).iter().map(|&d| nodes[d as usize]));
            // SAFETY: the stream is capturing on this thread; `these` are nodes of its
            // graph (added by earlier launches of this capture); no edge data (default
            // edges; a launch's own attributes still apply).
            unsafe {
                sys::cuStreamUpdateCaptureDependencies_v2(
                    stream.cu_stream(),
                    these.as_mut_ptr(),
                    std::ptr::null(),
                    these.len(),
                    sys::CUstreamUpdateCaptureDependencies_flags_enum::CU_STREAM_SET_CAPTURE_DEPENDENCIES as u32,
                )
            }
            .result()
            .map_err(failed)?;
        }
        issue(Target::Stream(stream))?;
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let mut added: *const sys::CUgraphNode = std::ptr::null();
        let mut n = 0usize;
        // SAFETY: as above; the driver returns the capture's dependency set, valid until
        // the next call on the stream: after a kernel launch, that kernel's node alone.
        unsafe {
            sys::cuStreamGetCaptureInfo_v3(
                stream.cu_stream(),
                &mut status,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut added,
                std::ptr::null_mut(),
                &mut n,
            )
        }
        .result()
        .map_err(failed)?;
        if n != 1 || added.is_null() {
            return Err(Error::Cuda {
                context: "capturing a CUDA graph with branches".into(),
                message: format!("launch {k} left {n} nodes in the capture's dependency set, not 1"),
            });
        }
        // SAFETY: `added` points at `n` = 1 node (checked above).
        nodes.push(unsafe { *added });
    }
    Ok(nodes)
}

/// Instantiates `graph` for launches on `stream`.
fn instantiate(stream: &Arc<CudaStream>, graph: &Captured) -> Result<Exec> {
    // SAFETY: a live captured graph; the executable graph is owned by the returned `Exec`.
    let exec = unsafe { result::graph::instantiate(graph.0, CUgraphInstantiate_flags(0)) }
        .map_err(|e| driver_error("instantiating a CUDA graph", e))?;
    Ok(Exec { exec, stream: stream.clone(), source: None })
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

    /// A new sequence of the kernels and dependencies of a cached graph updates that graph
    /// in place, least recently used first, only graphs that can be (`usable`); a failed
    /// update drops the graph.
    #[test]
    fn graphs_of_the_same_kernels_are_updated_in_place() {
        let mut cache = Cache::<u32>::default();
        for (k, name) in ["even", "odd", "even", "odd"].into_iter().enumerate() {
            let made = cache.insert(vec![name], vec![1], vec![k as u8], |_| false, || Ok(k as u32)).unwrap();
            assert_eq!(*made, k as u32);
        }
        let usable = |g: &u32| *g != 0;
        // Most recent first: odd 3, even 2, odd 1, even 0. Graph 0 cannot be updated in
        // place: a new even sequence takes graph 2.
        let set = cache.reuse(&["even"], &[1], vec![9], usable, |g| {
            *g += 10;
            true
        });
        assert_eq!(set.copied(), Some(12));
        assert_eq!(cache.find(&["even"], &[9]).copied(), Some(12));
        // Another topology: none.
        assert!(cache.reuse(&["odd"], &[2], vec![8], usable, |_| true).is_none());
        let len = cache.entries.len();
        assert!(cache.reuse(&["odd"], &[1], vec![6], usable, |_| false).is_none());
        assert_eq!(cache.entries.len(), len - 1, "a failed update drops the graph");
        // Odd 1 was dropped: odd 3 is next.
        assert_eq!(cache.reuse(&["odd"], &[1], vec![5], usable, |_| true).copied(), Some(3));
    }

    /// The cache's policy over root steps: two parities per mesh state, a new state every
    /// 32 steps, levels (launches) added over the first states; graphs are numbered as
    /// made, updates counted.
    #[test]
    fn two_parities_per_mesh_state_replay_after_their_first_step() {
        let mut cache = Cache::<(u32, u32)>::default();
        let (mut made, mut updates, mut hits) = (0u32, 0u32, 0u32);
        for state in 0..10u8 {
            // Levels appear over the first states: sequences of 1, 2, then 3 launches.
            let launches = 1 + state.min(2) as usize;
            for step in 0..32u8 {
                let names = vec![if step % 2 == 0 { "even" } else { "odd" }; launches];
                let key = vec![state, step % 2];
                if cache.find(&names, &key).is_some() {
                    hits += 1;
                    continue;
                }
                cache
                    .insert(
                        names,
                        Vec::new(),
                        key,
                        |g| {
                            g.1 += 1;
                            updates += 1;
                            true
                        },
                        || {
                            made += 1;
                            Ok((made, 0))
                        },
                    )
                    .unwrap();
            }
        }
        assert_eq!(hits, 10 * 30, "every step but the first two of a state replays");
        // States 0–2 make their graphs, and so does state 3's first (the only graphs of
        // three launches are the current pair's); every later one updates a graph of the
        // state before.
        assert_eq!((made, updates), (7, 13));
        assert_eq!(cache.entries.len(), CACHED_GRAPHS);
    }
}

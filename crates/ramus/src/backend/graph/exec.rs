//! The driver's graph objects behind [`super::GraphCache`]: a stream capture of recorded
//! launches (with their dependencies as branches), its instantiation, and the updates of
//! an executable graph in place.

use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::CudaStream;

use super::{deps_of, early_predecessors, Issue, Target};
use crate::backend::cuda::driver_error;
use crate::backend::device::MeshWrites;
use crate::error::{Error, Result};

/// An instantiated CUDA graph, destroyed on drop. (cudarc's `CudaGraph` cannot be built
/// from an executable graph that was updated in place, which [`super::GraphCache::end`] does.)
pub(super) struct Exec {
    exec: sys::CUgraphExec,
    stream: Arc<CudaStream>,
    /// The graph it was instantiated from and that graph's kernel nodes in launch order,
    /// through which [`Self::set`] updates it in place (`None` after [`Self::update`],
    /// or where the driver cannot name the nodes).
    pub(super) source: Option<(Captured, Vec<sys::CUgraphNode>)>,
}

// SAFETY: CUDA graph objects must not be used by two threads at once; every use of this
// one happens under the `GraphCache` mutex.
unsafe impl Send for Exec {}

impl Exec {
    pub(super) fn launch(&self) -> Result<()> {
        self.stream.context().bind_to_thread().map_err(|e| driver_error("launching a CUDA graph", e))?;
        // SAFETY: a live executable graph of this stream's context.
        unsafe { result::graph::launch(self.exec, self.stream.cu_stream()) }
            .map_err(|e| driver_error("launching a CUDA graph", e))
    }

    /// Gives this executable graph the parameters of `graph`, which must have the same
    /// topology (as many kernel nodes, the same edges); `false` if the driver refuses.
    pub(super) fn update(&mut self, graph: &Captured) -> bool {
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
    pub(super) fn set(&mut self, issues: &[Issue]) -> bool {
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
pub(super) struct Captured(sys::CUgraph);

impl Drop for Captured {
    fn drop(&mut self) {
        // SAFETY: owned, live, destroyed once.
        let _ = unsafe { result::graph::destroy(self.0) };
    }
}

/// Captures `issues`, in order, into a graph on `stream` (thread-local capture: other
/// threads' CUDA calls are not affected). `deps`: the recording's dependencies
/// ([`super::Recording::deps`]) when they are not a chain; each launch's node then depends on
/// those launches' nodes alone. `nodes`: also return the kernel nodes in launch order.
/// The capture is always ended, also when a launch fails.
pub(super) fn capture(
    stream: &Arc<CudaStream>,
    issues: &[Issue],
    deps: Option<(&[u32], &[u32])>,
    nodes: bool,
) -> Result<(Captured, Option<Vec<sys::CUgraphNode>>)> {
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(|e| driver_error("beginning a CUDA graph capture", e))?;
    // A graph's launch waits for everything before it: its first kernels may start early.
    let mesh = MeshWrites::capture(deps.is_some());
    let issued = if deps.is_none() && !nodes {
        issues.iter().try_for_each(|issue| issue(Target::Stream(stream, &mesh))).map(|()| None)
    } else {
        issue_tracked(stream, &mesh, issues, deps).map(Some)
    };
    // SAFETY: the stream is live and capturing (begun above, on this thread).
    let graph = unsafe { result::stream::end_capture(stream.cu_stream()) };
    let issued = issued?;
    let graph = graph.map_err(|e| driver_error("capturing a CUDA graph", e))?;
    if graph.is_null() {
        return Err(Error::Cuda {
            context: "capturing a CUDA graph".into(),
            message: "the capture produced no graph".into(),
        });
    }
    let graph = Captured(graph);
    let Some((graph_nodes, joins)) = issued else { return Ok((graph, None)) };
    if !joins.from.is_empty() {
        // SAFETY: a live graph, not being captured any more; `from` and `to` hold as many
        // of its nodes; no edge data: full edges.
        unsafe {
            sys::cuGraphAddDependencies_v2(
                graph.0,
                joins.from.as_ptr(),
                joins.to.as_ptr(),
                std::ptr::null(),
                joins.from.len(),
            )
        }
        .result()
        .map_err(|e| driver_error("adding the full edges of a CUDA graph's joins", e))?;
    }
    Ok((graph, Some(graph_nodes)))
}

/// Edges a capture leaves to be added afterwards: from each `from[i]` to `to[i]`.
#[derive(Default)]
struct Edges {
    from: Vec<sys::CUgraphNode>,
    to: Vec<sys::CUgraphNode>,
}

/// Issues `issues` into the capture of `stream`, each after setting the stream's capture
/// dependencies to the nodes of the launches it depends on (`deps[ends[k - 1]..ends[k]]`;
/// `None`: the launch before it, the stream's own order), or to its early predecessor's
/// alone ([`early_predecessors`]), and returns the node each added and the edges from
/// the dependencies left out, to be added as full edges after the capture ([`super`],
/// "Joins").
fn issue_tracked(
    stream: &Arc<CudaStream>,
    mesh: &MeshWrites,
    issues: &[Issue],
    deps: Option<(&[u32], &[u32])>,
) -> Result<(Vec<sys::CUgraphNode>, Edges)> {
    let failed = |e| driver_error("capturing a CUDA graph with branches", e);
    let mut nodes: Vec<sys::CUgraphNode> = Vec::with_capacity(issues.len());
    let mut joins = Edges::default();
    let mut these: Vec<sys::CUgraphNode> = Vec::new();
    let early = deps.map(|(deps, ends)| early_predecessors(deps, ends)).unwrap_or_default();
    for (k, issue) in issues.iter().enumerate() {
        let mut all: &[u32] = &[];
        let mut after = None;
        if let Some((deps, ends)) = deps {
            all = deps_of(deps, ends, k);
            after = early[k];
            these.clear();
            match after {
                Some(d) => these.push(nodes[d as usize]),
                None => these.extend(all.iter().map(|&d| nodes[d as usize])),
            }
            // SAFETY: the stream is capturing on this thread; `these` are nodes of its
            // graph (added by earlier launches of this capture); no edge data (default
            // edges; a launch's own attributes still apply: a dependent launch's edge is
            // programmatic).
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
        issue(Target::Stream(stream, mesh))?;
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
        let node = unsafe { *added };
        if after.is_some() {
            for &d in all.iter().filter(|&&d| Some(d) != after) {
                joins.from.push(nodes[d as usize]);
                joins.to.push(node);
            }
        }
        nodes.push(node);
    }
    Ok((nodes, joins))
}

/// Instantiates `graph` for launches on `stream`.
pub(super) fn instantiate(stream: &Arc<CudaStream>, graph: &Captured) -> Result<Exec> {
    // SAFETY: a live captured graph; the executable graph is owned by the returned `Exec`.
    let exec = unsafe { result::graph::instantiate(graph.0, CUgraphInstantiate_flags(0)) }
        .map_err(|e| driver_error("instantiating a CUDA graph", e))?;
    Ok(Exec { exec, stream: stream.clone(), source: None })
}

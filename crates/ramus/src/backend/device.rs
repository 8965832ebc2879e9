//! Device memory and kernel launch on either backend.
//!
//! [`Device`] runs any [`Kernel`] of the device crate: through rayon on the CPU, or by
//! launching its PTX entry point, [`Entry::ENTRY`] from the kernel registry, on the GPU. [`Buffer`] is the matching storage: a `Vec`
//! on the CPU, device memory on the GPU. The AMR routine and the primitives are written
//! once against this interface.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PinnedHostSlice, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

use ramus_kernels::launch::Kernel;
use ramus_kernels::memory::{Family, Rebuild};
use ramus_kernels::registry::Entry;

use super::cuda::{check_driver, driver_error, open_context, ptx_to_load};
use super::graph::{GraphCache, Issue, Replay, Target};
use super::ptx::PtxModules;
use super::slice::{ToLens, ToRaw, Views};
use super::Backend;
use crate::error::{Error, Result};

mod branches;
mod buffers;
mod checks;
mod counters;
mod early;
mod erased;
mod launch;
mod readback;
mod timeline;

pub use counters::DeviceCounters;
pub use timeline::KernelTimeline;

use checks::{check_launch_size, checked_range, mismatch};
pub(crate) use counters::Counters;
pub(crate) use early::MeshWrites;
use erased::{run_cpu, RawArgs, Site};
use launch::{issue_launch, launch_key, set_node};

/// An element type buffers can hold.
pub trait Elem: bytemuck::Pod + DeviceRepr + ValidAsZeroBits + Send + Sync + Default {}
impl Elem for u8 {}
impl Elem for u16 {}
impl Elem for u32 {}
impl Elem for i32 {}
impl Elem for u64 {}
impl Elem for f32 {}
impl Elem for f64 {}

/// The CUDA side of a [`Device`].
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The kernels' PTX, one module per entry point, loaded (JIT-compiled) at first use.
    ptx: PtxModules,
    /// Each loaded kernel, and whether it reads the mesh before its wait
    /// ([`super::ptx::Module::reads_mesh_early`]).
    functions: Mutex<HashMap<String, (CudaFunction, bool)>>,
    name: String,
    /// Page-locked staging memory for small reads (the scalar counts of the AMR routine):
    /// a copy from device memory into pinned memory avoids the driver's bounce buffer.
    staging: Mutex<PinnedHostSlice<u64>>,
    /// The launches being recorded and the captured graphs ([`Device::replayed`]).
    graphs: GraphCache,
    /// Launches and waits so far ([`Device::counters`]).
    counters: Counters,
    /// Whether the kernels' modules begin with the instructions of programmatic dependent
    /// launch (compute capability 9.0 or later: [`super::ptx::PtxModules::module`]).
    dependent: bool,
    /// Whether kernels are launched with programmatic stream serialisation (only if
    /// `dependent`; [`Device::set_dependent_launches`]).
    dependent_launches: AtomicBool,
    /// Whether a kernel that may write the mesh may still run on `stream`: a kernel that
    /// reads the mesh before its wait then starts after it ([`MeshWrites`]).
    mesh_writes: MeshWrites,
    /// Whether the driver can capture graphs with branches ([`Device::dependencies`]).
    branches: bool,
    /// Whether the driver can also set a captured graph's kernel nodes in place (a new
    /// mesh state's root step without a capture: [`super::graph::GraphCache::end`]).
    node_updates: bool,
    /// Whether new mesh states update cached graphs in place (at most `node_updates`;
    /// [`Device::set_graph_updates`]).
    graph_updates: AtomicBool,
    /// The kernel timeline, while on ([`Device::record_kernel_timeline`]): the modules
    /// loaded meanwhile carry its probes.
    timeline: Mutex<Option<super::timeline::Timeline>>,
    /// Timing events no longer in use ([`TimingEvent`]), kept for reuse: creating one
    /// is a driver allocation, on the adaptation's path.
    spare_events: Mutex<Vec<cudarc::driver::CudaEvent>>,
}

/// A timing event recorded on a device's stream ([`Device::timing_event`]); returned to
/// the device for reuse when dropped.
pub(crate) struct TimingEvent {
    /// Taken out only by `Drop`, which hands it back to the device.
    event: std::mem::ManuallyDrop<cudarc::driver::CudaEvent>,
    device: Arc<CudaDevice>,
}

impl TimingEvent {
    /// The time from this event to `end`, a later one; waits for both.
    pub(crate) fn until(&self, end: &TimingEvent) -> Result<std::time::Duration> {
        let ms = self.event.elapsed_ms(&end.event).map_err(|e| driver_error("reading a timing event", e))?;
        Ok(std::time::Duration::from_secs_f64(f64::from(ms.max(0.0)) * 1e-3))
    }
}

impl Drop for TimingEvent {
    fn drop(&mut self) {
        // SAFETY: `event` is not used again: this is the end of `self`.
        let event = unsafe { std::mem::ManuallyDrop::take(&mut self.event) };
        let mut spare = self.device.spare_events.lock().unwrap_or_else(|p| p.into_inner());
        if spare.len() < 4 {
            spare.push(event);
        }
    }
}

/// Bytes of [`CudaDevice::staging`].
const STAGING_BYTES: usize = 4096;

/// Where kernels run and buffers live.
#[derive(Clone)]
pub enum Device {
    /// Host memory, rayon.
    Cpu,
    /// An NVIDIA GPU.
    Cuda(Arc<CudaDevice>),
}

/// Memory on a [`Device`].
pub enum Buffer<T> {
    /// Host memory of the CPU backend.
    Host(Vec<T>),
    /// Device memory; `len` may be 0 while the allocation holds one element (the driver
    /// does not allocate zero bytes). A `len` above the allocation's counts as the
    /// allocation's length (see [`Buffer::len`]).
    Cuda {
        /// The allocation.
        slice: CudaSlice<T>,
        /// Elements in use.
        len: usize,
    },
}

impl<T> Buffer<T> {
    /// Number of elements. For device memory never more than the allocation holds, even
    /// where `len` was set larger: every range check of [`Device`] and of the primitives
    /// goes through this, so a wrong `len` cannot make them touch memory past the end.
    pub fn len(&self) -> usize {
        match self {
            Buffer::Host(v) => v.len(),
            Buffer::Cuda { slice, len } => (*len).min(slice.len()),
        }
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Device {
    /// The device for `backend` (`Auto`: CUDA if usable, else the CPU).
    pub fn new(backend: Backend) -> Result<Self> {
        match backend {
            Backend::Cpu => Ok(Device::Cpu),
            Backend::Cuda => Ok(Device::Cuda(Arc::new(CudaDevice::open()?))),
            Backend::Auto => match CudaDevice::open() {
                Ok(d) => Ok(Device::Cuda(Arc::new(d))),
                Err(Error::CudaUnavailable(why)) => {
                    tracing::info!("CUDA unavailable ({why}); using the CPU backend");
                    Ok(Device::Cpu)
                }
                Err(e) => Err(e),
            },
        }
    }

    /// The backend (never `Auto`).
    pub fn backend(&self) -> Backend {
        match self {
            Device::Cpu => Backend::Cpu,
            Device::Cuda(_) => Backend::Cuda,
        }
    }

    /// Human-readable device name.
    pub fn name(&self) -> String {
        match self {
            Device::Cpu => super::cpu::device_name(),
            Device::Cuda(c) => c.name.clone(),
        }
    }

    /// Runs items `0..n` of kernel `K` (on CUDA: its registered entry point, which must not
    /// be cooperative; see [`Self::launch_cta`]), with arguments built from device slices
    /// ([`super::slice`]). Checked here, with an error instead of a launch: every slice
    /// belongs to this device, and `n` is within what the slices' lengths allow
    /// ([`Kernel::max_items`]).
    ///
    /// # Safety
    /// What the checks cannot see: the values the kernel follows (block IDs in lists, links
    /// in the pool) must stay within the arrays they index, as `K` documents; the borrows
    /// keep the buffers alive until this returns, and a buffer dropped later is freed in
    /// stream order (CUDA) after the launch.
    pub unsafe fn launch<K: Kernel + Entry>(&self, n: usize, args: <K::Args as Family>::With<Views<'_>>) -> Result<()> {
        let args = self.lower::<K>(n, &args)?;
        // SAFETY: the caller's contract; `args` are `K`'s, checked for `n` items.
        unsafe { self.launch_site(&Site::of::<K>(), n, &RawArgs::new(&args)) }
    }

    /// [`Self::launch`] past the argument lowering, for any kernel type (compiled once).
    ///
    /// # Safety
    /// As for [`Self::launch`]; `args` are `site`'s kernel's, checked for `n` items.
    unsafe fn launch_site(&self, site: &Site, n: usize, args: &RawArgs) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        match self {
            Device::Cpu => {
                // Through the registry's host entry point, compiled once in `ramus-kernels`
                // (not again in every crate that launches the kernel).
                // SAFETY: the caller's contract.
                unsafe { run_cpu(site.cpu, n, args) };
                Ok(())
            }
            Device::Cuda(c) => {
                let name = site.entry;
                if site.cooperative {
                    return Err(Error::Cuda {
                        context: format!("launching {name}"),
                        message: "a cooperative entry point: launch it with `launch_cta`".into(),
                    });
                }
                let func = c.function(name)?;
                let grid = n.div_ceil(site.threads as usize);
                let grid = u32::try_from(grid).map_err(|_| Error::invalid("launch size", n, "at most 2^31 CTAs"))?;
                let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (site.threads, 1, 1), shared_mem_bytes: 0 };
                // SAFETY: the caller's contract (this function's).
                unsafe { c.submit(site, func, cfg, Some(n as u64), args) }
            }
        }
    }

    /// Launches the cooperative entry point registered for `K` (the CPU counterpart of a
    /// cooperative kernel such as the block scan) with an explicit grid, CTA size and
    /// dynamic shared memory; its single parameter is `K::Args`. CUDA only.
    ///
    /// # Safety
    /// As for [`Self::launch`], for the items the cooperative kernel covers with `grid` CTAs.
    pub unsafe fn launch_cta<K: Kernel + Entry>(
        &self,
        grid: u32,
        cta: u32,
        shared_bytes: u32,
        items: usize,
        args: <K::Args as Family>::With<Views<'_>>,
    ) -> Result<()> {
        let args = self.lower::<K>(items, &args)?;
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (cta, 1, 1), shared_mem_bytes: shared_bytes };
        // SAFETY: the caller's contract; `args` are `K`'s, checked for `items` items.
        unsafe { self.launch_cta_site(&Site::of::<K>(), cfg, &RawArgs::new(&args)) }
    }

    /// [`Self::launch_cta`] past the argument lowering, for any kernel type.
    ///
    /// # Safety
    /// As for [`Self::launch_cta`]; `args` are `site`'s kernel's.
    unsafe fn launch_cta_site(&self, site: &Site, cfg: LaunchConfig, args: &RawArgs) -> Result<()> {
        let name = site.entry;
        if !site.cooperative {
            return Err(Error::Cuda {
                context: format!("launching {name}"),
                message: "not a cooperative entry point: launch it with `launch`".into(),
            });
        }
        match self {
            Device::Cpu => {
                Err(Error::Cuda { context: format!("launching {name}"), message: "not a CUDA device".into() })
            }
            Device::Cuda(c) => {
                if cfg.grid_dim.0 == 0 {
                    return Ok(());
                }
                let func = c.function(name)?;
                // SAFETY: the caller's contract (this function's).
                unsafe { c.submit(site, func, cfg, None, args) }
            }
        }
    }

    /// The raw arguments of `args` for a launch of `n` items of `K`: every slice checked
    /// to be on this device, `n` checked against [`Kernel::max_items`].
    fn lower<K: Kernel + Entry>(&self, n: usize, args: &<K::Args as Family>::With<Views<'_>>) -> Result<K::Args> {
        let raw = args.raw(&mut ToRaw { device: self })?;
        check_launch_size(n, K::max_items(&args.rebuild(&mut ToLens)?), K::ENTRY)?;
        Ok(raw)
    }

    /// Free memory of the device in bytes (on the CPU: what this process may still
    /// allocate, within the machine's available memory, its cgroup limit and `ulimit -v`;
    /// see [`super::memory::host_available_memory`]).
    pub fn free_memory(&self) -> Result<usize> {
        match self {
            Device::Cpu => Ok(super::memory::host_available_memory()),
            Device::Cuda(c) => {
                let (free, _) = c.ctx.mem_get_info().map_err(|e| driver_error("querying device memory", e))?;
                Ok(free)
            }
        }
    }

    /// Runs `f` with this thread's launches on this device recorded, then runs them as one
    /// CUDA graph: the cached one if the same launches (kernels, sizes, argument bytes) were
    /// captured before, else one captured now ([`super::graph`]). Results are bitwise those
    /// of launching directly; a non-launch operation inside `f` issues what was recorded
    /// and ends the recording. On the CPU, or nested in another recording, `f` just runs.
    /// If `f` fails, what it recorded is issued directly and its error returned.
    ///
    /// # Safety
    /// No buffer that a launch recorded in `f` uses may be dropped in `f` before that launch
    /// is issued (when `f` returns, or at `f`'s next non-launch operation on this device):
    /// a buffer's free is queued on the stream at once, so it would come before the
    /// launch that reads it.
    pub(crate) unsafe fn replayed<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, Replay)> {
        let Device::Cuda(c) = self else { return Ok((f()?, Replay::Direct)) };
        if !c.graphs.begin() {
            return Ok((f()?, Replay::Direct));
        }
        match f() {
            Ok(r) => Ok((
                r,
                c.graphs.end(&c.stream, &c.mesh_writes, false, c.graph_updates.load(Ordering::Relaxed), &c.counters)?,
            )),
            Err(e) => {
                // The launches before the error run as they would have without recording;
                // the error that stopped `f` is the one to report.
                let _ = c.graphs.end(&c.stream, &c.mesh_writes, true, false, &c.counters);
                Err(e)
            }
        }
    }

    /// Launches kernels with programmatic stream serialisation (programmatic dependent
    /// launch): each kernel's CTAs may start while the kernel before it ends, and wait
    /// for it before their first instruction (the step kernels: after reading the mesh,
    /// and only behind kernels that do not write it; `device/early.rs`), so the launch
    /// latency between dependent kernels overlaps the work; results are bitwise the same. On by default where the
    /// GPU supports it (compute capability 9.0 and later); the cached CUDA graphs are
    /// dropped when it changes. Returns whether it is on now: always `false` on the CPU
    /// and on earlier GPUs.
    pub fn set_dependent_launches(&self, on: bool) -> bool {
        match self {
            Device::Cpu => false,
            Device::Cuda(c) => {
                let on = on && c.dependent;
                if c.dependent_launches.swap(on, Ordering::Relaxed) != on {
                    c.graphs.clear();
                }
                on
            }
        }
    }

    /// Lets a new mesh state's root step reuse a cached CUDA graph of the same kernels and
    /// dependencies, its kernel nodes given the new sizes and arguments in place
    /// (`cuGraphExecKernelNodeSetParams`), instead of capturing and instantiating a new
    /// graph: less host time after each adaptation, bitwise the same results. On by
    /// default where the driver has the calls (CUDA 12.3 and later); returns whether it
    /// is on now (always `false` on the CPU). Graphs captured while it was off are not
    /// updated in place later.
    pub fn set_graph_updates(&self, on: bool) -> bool {
        match self {
            Device::Cpu => false,
            Device::Cuda(c) => {
                let on = on && c.node_updates;
                c.graph_updates.store(on, Ordering::Relaxed);
                on
            }
        }
    }

    /// Whether kernels are launched with programmatic stream serialisation (see
    /// [`Self::set_dependent_launches`]).
    pub fn dependent_launches(&self) -> bool {
        matches!(self, Device::Cuda(c) if c.dependent_launches.load(Ordering::Relaxed))
    }

    /// Drops the CUDA graphs this device keeps (they hold no memory of the forest; a new
    /// mesh state makes new ones anyway). A no-op on the CPU.
    pub(crate) fn clear_graphs(&self) {
        if let Device::Cuda(c) = self {
            c.graphs.clear();
        }
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        match self {
            Device::Cpu => Ok(()),
            Device::Cuda(c) => {
                c.flush()?;
                let _waiting = c.counters.wait();
                c.stream.synchronize().map_err(|e| driver_error("synchronising", e))
            }
        }
    }

    /// A timing event recorded behind the work queued so far (`None` on the CPU, whose
    /// work is done when its call returns): [`super::stopwatch::DeviceSpan`] reads when
    /// that work ended without waiting for it.
    pub(crate) fn timing_event(&self) -> Result<Option<TimingEvent>> {
        match self {
            Device::Cpu => Ok(None),
            Device::Cuda(c) => {
                c.flush()?;
                let spare = c.spare_events.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let event = match spare {
                    Some(e) => e,
                    None => {
                        let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
                        c.ctx.new_event(timing).map_err(|e| driver_error("creating a timing event", e))?
                    }
                };
                event.record(&c.stream).map_err(|e| driver_error("recording a timing event", e))?;
                Ok(Some(TimingEvent { event: std::mem::ManuallyDrop::new(event), device: c.clone() }))
            }
        }
    }
}

impl CudaDevice {
    fn open() -> Result<Self> {
        let ctx = open_context()?;
        let name = ctx.name().map_err(|e| driver_error("reading the device name", e))?;
        // One stream: no need for cudarc's per-buffer event tracking, which would record
        // an event every time a kernel argument's address is taken.
        // SAFETY: all work of this device is issued on its one stream.
        unsafe { ctx.disable_event_tracking() };
        // A stream of its own: the legacy default stream cannot be captured into a graph.
        let stream = ctx.new_stream().map_err(|e| driver_error("creating a stream", e))?;
        let ptx = PtxModules::parse(ptx_to_load()?)?;
        // Programmatic dependent launch: Hopper (9.0) and later, a driver with
        // `cuLaunchKernelEx`, and PTX whose modules can declare sm_90.
        let (major, _) = ctx.compute_capability().map_err(|e| driver_error("reading the compute capability", e))?;
        let dependent = major >= 9 && check_driver(&["cuLaunchKernelEx"]).is_ok() && ptx.dependent_ready();
        // Graph branches set the capture's dependencies, read its nodes and add the full
        // edges of its joins (CUDA 12.3+).
        let branches = check_driver(&[
            "cuStreamUpdateCaptureDependencies_v2",
            "cuStreamGetCaptureInfo_v3",
            "cuGraphAddDependencies_v2",
        ])
        .is_ok();
        let node_updates = branches && check_driver(&["cuGraphExecKernelNodeSetParams_v2"]).is_ok();
        // SAFETY: plain page-locked allocation (default flags: cached, readable by the host).
        let staging = unsafe { ctx.alloc_pinned_with_flags::<u64>(STAGING_BYTES / 8, 0) }
            .map_err(|e| driver_error("allocating pinned staging memory", e))?;
        Ok(CudaDevice {
            ctx,
            stream,
            ptx,
            functions: Mutex::new(HashMap::new()),
            name,
            staging: Mutex::new(staging),
            graphs: GraphCache::default(),
            counters: Counters::default(),
            dependent,
            dependent_launches: AtomicBool::new(dependent),
            mesh_writes: MeshWrites::stream(),
            branches,
            node_updates,
            graph_updates: AtomicBool::new(node_updates),
            timeline: Mutex::new(None),
            spare_events: Mutex::new(Vec::new()),
        })
    }

    /// The kernel `name`, loaded at its first use, and whether it reads the mesh before
    /// its wait ([`super::ptx::Module::reads_mesh_early`]).
    fn function(&self, name: &str) -> Result<(CudaFunction, bool)> {
        let mut cache = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = cache.get(name) {
            return Ok(f.clone());
        }
        let timeline = self.timeline.lock().unwrap_or_else(|p| p.into_inner());
        let probe = timeline.as_ref().map(|t| t.probe(&self.stream, name));
        let m = self.ptx.module(name, self.dependent, probe.as_ref()).ok_or_else(|| Error::Cuda {
            context: format!("loading kernel {name}"),
            message: "the PTX has no such entry point".into(),
        })?;
        let module = self
            .ctx
            .load_module(Ptx::from_src(m.text))
            .map_err(|e| driver_error(&format!("loading kernel {name}"), e))?;
        // The function keeps its module alive.
        let f = module.load_function(name).map_err(|e| driver_error(&format!("loading kernel {name}"), e))?;
        cache.insert(name.to_string(), (f.clone(), m.reads_mesh_early));
        Ok((f, m.reads_mesh_early))
    }

    /// Launches `func` with `cfg`, now or recorded ([`Self::issue`]): the data-parallel
    /// wrapper's parameters `(count, args)` when `count` is given, a cooperative kernel's
    /// `(args)` otherwise. The recording's key is the configuration, the count (0 for a
    /// cooperative kernel) and the argument bytes.
    ///
    /// # Safety
    /// As for [`Device::launch`], for the launch as built.
    unsafe fn submit(
        &self,
        site: &Site,
        func: (CudaFunction, bool),
        cfg: LaunchConfig,
        count: Option<u64>,
        args: &RawArgs,
    ) -> Result<()> {
        let name = site.entry;
        let (func, early) = func;
        let writes = site.writes_mesh;
        let dependent = self.dependent_launches.load(Ordering::Relaxed);
        if !self.graphs.records_here() {
            // Issued now: nothing to keep, nothing to allocate.
            self.counters.kernels(1);
            let dependent = self.mesh_writes.admit(dependent, early, writes);
            // SAFETY: the caller's contract (this function's).
            return unsafe { issue_launch(&self.stream, &func, (cfg, dependent), count, args.first(), name) };
        }
        let key = |k: &mut Vec<u8>| {
            launch_key(k, &cfg, count.unwrap_or(0));
            // SAFETY: `args` are `site`'s kernel's (the caller's contract).
            unsafe { site.key(args, k) };
        };
        let a = args.to_owned();
        // SAFETY: the caller's contract (this function's), for the launch as recorded.
        let issue: Issue = Box::new(move |target| match target {
            // SAFETY: the caller's contract (this function's), for the launch as recorded.
            Target::Stream(stream, mesh) => unsafe {
                issue_launch(stream, &func, (cfg, mesh.admit(dependent, early, writes)), count, a.first(), name)
            },
            // SAFETY: as above; the node is one of a graph captured from a launch of the
            // same kernel (`GraphCache::end` updates only graphs of the same kernels).
            Target::Node { exec, node } => unsafe { set_node(exec, node, &func, cfg, count, a.first(), name) },
        });
        self.issue(name, key, issue)
    }

    /// Issues a launch now, or records it while this thread records ([`Device::replayed`]).
    fn issue(&self, name: &'static str, key: impl FnOnce(&mut Vec<u8>), issue: Issue) -> Result<()> {
        match self.graphs.record(name, key, issue) {
            None => Ok(()),
            Some(issue) => {
                self.counters.kernels(1);
                issue(Target::Stream(&self.stream, &self.mesh_writes))
            }
        }
    }

    /// Issues the launches this thread has recorded and ends its recording: the first step
    /// of every operation other than a launch, so that it stays behind them in stream order.
    fn flush(&self) -> Result<()> {
        self.graphs.flush(&self.stream, &self.mesh_writes, &self.counters)?;
        // The operation that follows may write the mesh.
        self.mesh_writes.unsettle();
        Ok(())
    }

    /// Identifies the context, for checking where a [`Buffer`]'s memory lives.
    pub(crate) fn context_id(&self) -> usize {
        Arc::as_ptr(&self.ctx) as usize
    }

    fn check_free(&self, bytes: usize, what: &str) -> Result<()> {
        let (free, _) = self.ctx.mem_get_info().map_err(|e| driver_error("querying device memory", e))?;
        if bytes > free {
            return Err(Error::OutOfMemory { what: what.into(), needed: bytes as u64, available: free as u64 });
        }
        Ok(())
    }
}

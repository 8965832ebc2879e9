//! The driver calls that start a kernel: a launch on a stream (with or without
//! programmatic stream serialisation) and the update of a cached graph's kernel node, with
//! the same parameters; and the configuration part of a launch's replay key.

use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};

use super::erased::Word;
use crate::backend::cuda::driver_error;
use crate::error::Result;

/// Launches `func` on `stream`: the data-parallel wrapper's parameters `(count, args)`
/// when `count` is given, a cooperative kernel's `(args)` otherwise, `args` being the first
/// word of the argument struct (the driver copies the parameter's size from there).
/// `dependent`: with programmatic stream serialisation (`cuLaunchKernelEx`), so that the
/// kernel's CTAs may start before the kernel before it ends; they wait for it first
/// ([`crate::backend::ptx::PtxModules::module`]); otherwise `cuLaunchKernel` with the same
/// parameters.
///
/// # Safety
/// As for [`super::Device::launch`], for the launch as built; `dependent` only for a function
/// loaded from a module with the instructions of programmatic dependent launch.
pub(super) unsafe fn issue_launch(
    stream: &Arc<CudaStream>,
    func: &CudaFunction,
    (cfg, dependent): (LaunchConfig, bool),
    count: Option<u64>,
    args: &Word,
    name: &str,
) -> Result<()> {
    with_params(count, args, |params| {
        let failed = |e| driver_error(&format!("launching {name}"), e);
        stream.context().bind_to_thread().map_err(failed)?;
        let (g, b) = (cfg.grid_dim, cfg.block_dim);
        if dependent {
            let mut attr = sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                pad: [0; 4],
                // SAFETY: a plain-data union, zeroed, then its one field in use set.
                value: unsafe { std::mem::zeroed() },
            };
            attr.value.programmaticStreamSerializationAllowed = 1;
            let config = sys::CUlaunchConfig {
                gridDimX: g.0,
                gridDimY: g.1,
                gridDimZ: g.2,
                blockDimX: b.0,
                blockDimY: b.1,
                blockDimZ: b.2,
                sharedMemBytes: cfg.shared_mem_bytes,
                hStream: stream.cu_stream(),
                attrs: &mut attr,
                numAttrs: 1,
            };
            // SAFETY: the caller's contract; `params` point at the parameters, alive for the
            // call (the driver copies them); `attr` outlives the call.
            unsafe { sys::cuLaunchKernelEx(&config, func.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) }
                .result()
                .map_err(failed)
        } else {
            // The same parameters through `cuLaunchKernel` (present in every driver), so that
            // the two settings differ only by the attribute: no launch builder, no allocation.
            // SAFETY: as above.
            unsafe {
                sys::cuLaunchKernel(
                    func.cu_function(),
                    g.0,
                    g.1,
                    g.2,
                    b.0,
                    b.1,
                    b.2,
                    cfg.shared_mem_bytes,
                    stream.cu_stream(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()
            .map_err(failed)
        }
    })
}

/// Runs `f` with the kernel parameters of a launch: the data-parallel wrapper's
/// `(count, args)` when `count` is given, a cooperative kernel's `(args)` alone; the
/// pointers are valid during `f` (the driver copies what they point at).
fn with_params<R>(count: Option<u64>, args: &Word, f: impl FnOnce(&mut [*mut std::ffi::c_void]) -> R) -> R {
    let n = count.unwrap_or(0);
    let mut params: [*mut std::ffi::c_void; 2] =
        [&n as *const u64 as *mut std::ffi::c_void, args as *const Word as *mut std::ffi::c_void];
    f(if count.is_some() { &mut params[..] } else { &mut params[1..] })
}

/// Gives the kernel node `node` of the executable graph `exec` the launch of `func` with
/// `cfg` and the parameters of [`issue_launch`].
///
/// # Safety
/// As for [`issue_launch`]; `node` a kernel node of the graph `exec` was instantiated
/// from, of a launch of `func`.
pub(super) unsafe fn set_node(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    func: &CudaFunction,
    cfg: LaunchConfig,
    count: Option<u64>,
    args: &Word,
    name: &str,
) -> Result<()> {
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    with_params(count, args, |params| {
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: func.cu_function(),
            gridDimX: g.0,
            gridDimY: g.1,
            gridDimZ: g.2,
            blockDimX: b.0,
            blockDimY: b.1,
            blockDimZ: b.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        // SAFETY: the caller's contract; the driver copies the parameters during the call.
        unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node, &p) }
            .result()
            .map_err(|e| driver_error(&format!("updating a graph node of {name}"), e))
    })
}

/// The configuration part of a launch's replay key: grid, CTA, shared memory, item count.
pub(super) fn launch_key(k: &mut Vec<u8>, cfg: &LaunchConfig, count: u64) {
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    for v in [g.0, g.1, g.2, b.0, b.1, b.2, cfg.shared_mem_bytes] {
        k.extend_from_slice(&v.to_ne_bytes());
    }
    k.extend_from_slice(&count.to_ne_bytes());
}

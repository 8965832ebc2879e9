//! PTX entry points (built only for `nvptx64`; see `cargo xtask ptx`).
//!
//! Each entry point is a thin wrapper that maps CUDA thread `i` to work item `i` of a
//! [`crate::launch::Kernel`] and calls the same generic function the CPU backend calls.
//! Kernels that exist per (velocity set, precision) or per dimension are instantiated
//! here by [`kernel_entries!`]; names follow `<kernel>_<suffix>`.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _syncthreads, _thread_idx_x};
use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;

use crate::lattice::{D2Q9, D3Q19, D3Q27};
use crate::primitives::Cta;
use crate::stream::StreamCollide;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}

/// Global thread index.
#[inline(always)]
unsafe fn thread_index() -> usize {
    (_block_idx_x() as usize) * (_block_dim_x() as usize) + _thread_idx_x() as usize
}

/// The current CUDA CTA.
pub(crate) struct Nv;

impl Cta for Nv {
    #[inline(always)]
    fn thread(&self) -> usize {
        // SAFETY: reads a special register.
        unsafe { _thread_idx_x() as usize }
    }
    #[inline(always)]
    fn block(&self) -> usize {
        // SAFETY: reads a special register.
        unsafe { _block_idx_x() as usize }
    }
    #[inline(always)]
    fn sync(&self) {
        // SAFETY: every thread of the CTA reaches every call (see `scan_tile_cooperative`).
        unsafe { _syncthreads() }
    }
    #[inline(always)]
    fn shared(&self) -> *mut u64 {
        gpu_launch_sized_workgroup_mem::<u64>()
    }
}

/// Entry points of data-parallel [`crate::launch::Kernel`]s: thread `i` runs item `i < n`.
/// The entry name must be `<Kernel::NAME>_<Kernel::SUFFIX>` (or `NAME` if the suffix is
/// empty); the host looks kernels up by that name.
macro_rules! kernel_entries {
    ($($entry:ident => $k:ty),* $(,)?) => {$(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $entry(n: u64, args: <$k as $crate::launch::Kernel>::Args) {
            let i = thread_index();
            if i < n as usize {
                <$k as $crate::launch::Kernel>::run(i, &args)
            }
        }
    )*};
}

kernel_entries! {
    stream_collide_even_d2q9_f32 => StreamCollide<D2Q9, f32, false>,
    stream_collide_odd_d2q9_f32 => StreamCollide<D2Q9, f32, true>,
    stream_collide_even_d2q9_f64 => StreamCollide<D2Q9, f64, false>,
    stream_collide_odd_d2q9_f64 => StreamCollide<D2Q9, f64, true>,
    stream_collide_even_d3q19_f32 => StreamCollide<D3Q19, f32, false>,
    stream_collide_odd_d3q19_f32 => StreamCollide<D3Q19, f32, true>,
    stream_collide_even_d3q19_f64 => StreamCollide<D3Q19, f64, false>,
    stream_collide_odd_d3q19_f64 => StreamCollide<D3Q19, f64, true>,
    stream_collide_even_d3q27_f32 => StreamCollide<D3Q27, f32, false>,
    stream_collide_odd_d3q27_f32 => StreamCollide<D3Q27, f32, true>,
    stream_collide_even_d3q27_f64 => StreamCollide<D3Q27, f64, false>,
    stream_collide_odd_d3q27_f64 => StreamCollide<D3Q27, f64, true>,
}

// Entry points of the AMR routine and the parallel primitives, one file each.
mod amr;
mod comm;
mod criterion;
mod guard;
mod obstacle;
mod primitives;

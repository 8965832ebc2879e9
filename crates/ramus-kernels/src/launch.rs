//! Data-parallel kernels that both backends run from this one source.
//!
//! A [`Kernel`] is a function of a work-item index `i` and an argument struct of raw
//! pointers and scalars. The CPU backend calls [`Kernel::run`] for every `i < n` through
//! rayon; the CUDA backend launches the PTX entry point that [`crate::registry`] generates
//! for it (named by its [`crate::registry::Entry`] impl), one thread per item, with the
//! same argument struct passed by value. A kernel must therefore be correct for any order and any concurrency of its items: each item writes
//! locations no other item touches (the AMR and solver steps are written that way, which
//! also makes them deterministic on both backends).

use crate::memory::{Family, Lens};

/// Items `start..end` of a kernel on the host, its `Args` passed by address: the CPU
/// backend's entry point for one registered kernel (see [`crate::registry::Entry::cpu_run`]).
///
/// # Safety
/// `args` points to the kernel's `Args`, valid as [`Kernel::run`] requires for every item
/// of the range.
#[cfg(not(target_arch = "nvptx64"))]
pub type CpuRun = unsafe fn(start: usize, end: usize, args: *const ());

/// [`CpuRun`] for `K`, each item through `item` (`K::run`, instantiated by the caller). The
/// registry instantiates it for every registered kernel in a static table of this crate,
/// so the kernels are compiled for the host once, here, instead of again in every crate
/// that launches them (release builds do not share generic instances between crates).
///
/// # Safety
/// As [`CpuRun`]; `item` runs item `i` of `K` as [`Kernel::run`] does.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub unsafe fn run_items<K: Kernel>(start: usize, end: usize, args: *const (), item: unsafe fn(usize, &K::Args)) {
    // SAFETY: the caller passes the address of a `K::Args` (the contract of `CpuRun`).
    let args = unsafe { &*args.cast::<K::Args>() };
    for i in start..end {
        // SAFETY: the caller's contract covers every item of the range.
        unsafe { item(i, args) }
    }
}

/// Where a kernel's reads of the mesh end and its reads of what the kernels before it
/// write begin: with programmatic dependent launch (CUDA, compute capability 9.0 on) the
/// host puts the wait for the kernel before it here (`griddepcontrol.wait`) instead of at
/// the top of the entry, so that the ID list, the links, the flags and the masks a thread
/// follows to its populations are loaded while that kernel still runs. Above the call a
/// kernel may read only the mesh (see [`Kernel::WRITES_MESH`]) and write nothing; every
/// path to a read or write of anything else passes a call, and so does every thread of a
/// launch, one with nothing to do too: a kernel none of whose threads waits may end
/// before the kernel before it, and let the kernels after it start on that kernel's
/// unfinished writes. Elsewhere (the CPU, older GPUs) it orders the memory accesses around
/// it and nothing more.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub fn wait_for_prior_kernels() {
    // A comment in the PTX that the host's module builder replaces; an `asm!` with no
    // `nomem` keeps the compiler from moving memory accesses across it.
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a PTX comment, no instruction.
    unsafe {
        core::arch::asm!("// ramus.wait_for_prior_kernels", options(nostack, preserves_flags))
    };
}

/// A data-parallel kernel.
pub trait Kernel {
    /// Arguments, passed by value: a [`crate::kernel_args!`] struct in its raw form
    /// (`#[repr(C)]`, raw pointers and scalars only); the host builds its
    /// [`Family::With`] form over device slices.
    type Args: Family;
    /// CUDA threads per CTA (a tuning choice; items map to threads one to one).
    const THREADS: u32 = 256;
    /// Whether the kernel may write the mesh: the ID sets and block lists, neighbour, parent
    /// and child links, block flags and cell masks, which a kernel may read before it
    /// waits for the kernels before it ([`wait_for_prior_kernels`]). `true` unless the
    /// kernel declares otherwise, as the stepping's kernels do (they write populations,
    /// eddy viscosities, scratch and its slots): the CUDA backend lets such a kernel start
    /// early only behind kernels that do not write the mesh.
    const WRITES_MESH: bool = true;

    /// One work item.
    ///
    /// # Safety
    /// The pointers in `args` must be valid for what the kernel reads and writes, for
    /// every item of the launch.
    unsafe fn run(i: usize, args: &Self::Args);

    /// The most items a launch may have, given the lengths of the argument arrays (in
    /// elements; scalars as passed): the host's launch refuses more. `None` where the
    /// item count is not bounded by an array's length (e.g. items over a range the kernel
    /// computes); the arrays indexed through block IDs (the pool) are bounded by the
    /// mesh's own invariants, not here.
    fn max_items(lens: &<Self::Args as Family>::With<Lens>) -> Option<usize> {
        let _ = lens;
        None
    }
}

/// Declares a kernel argument struct, generic over the [`Memory`](crate::memory::Memory)
/// its arrays live in (default [`Raw`](crate::memory::Raw): what kernels read). Each field
/// says what it is: `ref T` (an array the kernel reads), `mut T` (an array it writes),
/// `val T` (a scalar or plain value, passed as is), `args S<.., M>` (a nested argument
/// struct). Generates the `#[repr(C)]` struct, `Copy`/`Send`/`Sync` and
/// [`ArgBytes`](crate::memory::ArgBytes) for its raw form, and
/// [`Family`] / [`Rebuild`](crate::memory::Rebuild), through which
/// the host lowers its slices to raw pointers and to lengths.
#[macro_export]
macro_rules! kernel_args {
    (
        $(#[$m:meta])*
        pub struct $name:ident $(<$($g:ident),*>)? {
            $($(#[$fm:meta])* pub $f:ident : $kind:tt $t:ty),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[repr(C)]
        pub struct $name<$($($g,)*)? M: $crate::memory::Memory = $crate::memory::Raw> {
            $($(#[$fm])* pub $f: $crate::kernel_args!(@ty $kind $t)),*
        }

        impl<$($($g: Copy,)*)?> Clone for $name<$($($g,)*)? $crate::memory::Raw> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<$($($g: Copy,)*)?> Copy for $name<$($($g,)*)? $crate::memory::Raw> {}
        // SAFETY: plain data; the pointers are dereferenced only inside kernels, whose
        // contract makes concurrent items touch disjoint locations.
        unsafe impl<$($($g,)*)?> Send for $name<$($($g,)*)? $crate::memory::Raw> {}
        unsafe impl<$($($g,)*)?> Sync for $name<$($($g,)*)? $crate::memory::Raw> {}

        impl<$($($g: Copy + $crate::memory::ArgBytes + 'static,)*)?> $crate::memory::Family for $name<$($($g,)*)? $crate::memory::Raw> {
            type With<M: $crate::memory::Memory> = $name<$($($g,)*)? M>;
        }

        impl<$($($g: Copy + $crate::memory::ArgBytes,)*)?> $crate::memory::ArgBytes for $name<$($($g,)*)? $crate::memory::Raw> {
            #[inline]
            fn arg_bytes<W: FnMut(&[u8])>(&self, w: &mut W) {
                $($crate::memory::ArgBytes::arg_bytes(&self.$f, w);)*
            }
        }

        impl<$($($g: Copy + $crate::memory::ArgBytes + 'static,)*)? M: $crate::memory::Memory> $crate::memory::Rebuild<M> for $name<$($($g,)*)? M> {
            type Raw = $name<$($($g,)*)? $crate::memory::Raw>;
            fn rebuild<N: $crate::memory::Memory, C: $crate::memory::Lower<M, N>>(
                &self,
                c: &mut C,
            ) -> Result<$name<$($($g,)*)? N>, C::Error> {
                Ok($name { $($f: $crate::kernel_args!(@lower $kind self c $f)),* })
            }
            fn raw<C: $crate::memory::Lower<M, $crate::memory::Raw>>(&self, c: &mut C) -> Result<Self::Raw, C::Error> {
                self.rebuild(c)
            }
        }
    };
    (@ty ref $t:ty) => { <M as $crate::memory::Memory>::Ref<$t> };
    (@ty mut $t:ty) => { <M as $crate::memory::Memory>::Mut<$t> };
    (@ty val $t:ty) => { $t };
    (@ty args $t:ty) => { $t };
    (@lower ref $s:ident $c:ident $f:ident) => { $c.by_ref(stringify!($f), &$s.$f)? };
    (@lower mut $s:ident $c:ident $f:ident) => { $c.by_mut(stringify!($f), &$s.$f)? };
    (@lower val $s:ident $c:ident $f:ident) => { $s.$f };
    (@lower args $s:ident $c:ident $f:ident) => { $crate::memory::Rebuild::rebuild(&$s.$f, $c)? };
}

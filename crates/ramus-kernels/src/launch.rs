//! Data-parallel kernels that both backends run from this one source.
//!
//! A [`Kernel`] is a function of a work-item index `i` and an argument struct of raw
//! pointers and scalars. The CPU backend calls [`Kernel::run`] for every `i < n` through
//! rayon; the CUDA backend launches the PTX entry point that [`crate::registry`] generates
//! for it (named by its [`crate::registry::Entry`] impl), one thread per item, with the
//! same argument struct passed by value. A kernel must therefore be correct for any order and any concurrency of its items: each item writes
//! locations no other item touches (the AMR and solver steps are written that way, which
//! also makes them deterministic on both backends).

/// A data-parallel kernel.
pub trait Kernel {
    /// Arguments, passed by value: `#[repr(C)]`, raw pointers and scalars only.
    type Args: Copy + Send + Sync;
    /// CUDA threads per CTA (a tuning choice; items map to threads one to one).
    const THREADS: u32 = 256;

    /// One work item.
    ///
    /// # Safety
    /// The pointers in `args` must be valid for what the kernel reads and writes, for
    /// every item of the launch.
    unsafe fn run(i: usize, args: &Self::Args);
}

/// Declares a `#[repr(C)]` kernel argument struct that may cross threads (its raw pointers
/// are only dereferenced by kernels, under the launch's contract).
#[macro_export]
macro_rules! kernel_args {
    ($(#[$m:meta])* pub struct $name:ident $(<$($g:ident),*>)? { $($(#[$fm:meta])* pub $f:ident : $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name $(<$($g),*>)? { $($(#[$fm])* pub $f: $t),* }
        // SAFETY: plain data; the pointers are dereferenced only inside kernels, whose
        // contract makes concurrent items touch disjoint locations.
        unsafe impl $(<$($g),*>)? Send for $name $(<$($g),*>)? {}
        unsafe impl $(<$($g),*>)? Sync for $name $(<$($g),*>)? {}
    };
}

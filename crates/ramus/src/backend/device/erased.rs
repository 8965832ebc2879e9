//! A launch with the kernel's type erased: what [`Device::launch`](super::Device::launch)
//! needs from `K` as plain values ([`Site`]) and `K::Args` as bytes ([`RawArgs`]), so that
//! the launch itself is one function, compiled once. Generic per kernel type stay only
//! the argument lowering and these two small conversions: a `launch::<K>` per kernel type
//! (about 440 in each example binary) was a fifth of every binary's host code.

use std::mem::{align_of, size_of, MaybeUninit};

use cudarc::driver::DeviceRepr;
use rayon::prelude::*;

use ramus_kernels::launch::{CpuRun, Kernel};
use ramus_kernels::memory::ArgBytes;
use ramus_kernels::registry::Entry;

/// Items per call of a kernel's host entry point on the CPU backend (rayon's unit of
/// work; the smallest share a thread takes, as `with_min_len(1024)` was before).
const CPU_CHUNK: usize = 1024;

/// A kernel type's launch, as values: its registry entry, CTA size and host entry point,
/// and how to read the bytes of its arguments for a recording's key.
#[derive(Clone, Copy)]
pub(super) struct Site {
    /// [`Entry::ENTRY`].
    pub entry: &'static str,
    /// [`Entry::COOPERATIVE`].
    pub cooperative: bool,
    /// [`Kernel::THREADS`].
    pub threads: u32,
    /// [`Kernel::WRITES_MESH`].
    pub writes_mesh: bool,
    /// [`Entry::cpu_run`].
    pub cpu: CpuRun,
    /// [`ArgBytes`] of the `K::Args` at the address given.
    key: unsafe fn(*const (), &mut Vec<u8>),
}

impl Site {
    pub fn of<K: Kernel + Entry>() -> Self {
        Site {
            entry: K::ENTRY,
            cooperative: K::COOPERATIVE,
            threads: K::THREADS,
            writes_mesh: K::WRITES_MESH,
            cpu: K::cpu_run(),
            key: key_of::<K::Args>,
        }
    }

    /// Appends the argument bytes of `args` (see [`ArgBytes`]) to `k`.
    ///
    /// # Safety
    /// `args` holds the arguments of this site's kernel (made by [`RawArgs::new`] from its
    /// `K::Args`).
    pub unsafe fn key(&self, args: &RawArgs, k: &mut Vec<u8>) {
        // SAFETY: the caller's contract.
        unsafe { (self.key)(args.as_ptr(), k) }
    }
}

/// [`ArgBytes`] of the `A` at `args`.
///
/// # Safety
/// `args` points to an `A`.
unsafe fn key_of<A: ArgBytes>(args: *const (), k: &mut Vec<u8>) {
    // SAFETY: the caller's contract.
    unsafe { &*args.cast::<A>() }.arg_bytes(&mut |b| k.extend_from_slice(b));
}

/// Words of [`RawArgs`]: the largest argument struct of the registry fits (checked at
/// compile time by [`RawArgs::new`]; those with [`Shapes`](ramus_kernels::shape::Shapes)
/// are about 1 KiB); CUDA allows 4 KiB of parameters.
const ARG_WORDS: usize = 256;

/// A word of a kernel's raw argument struct, possibly padding (never read as a number).
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(super) struct Word(MaybeUninit<u64>);

// SAFETY: plain bytes; a launch passes the address of the first word of a struct's words
// as the parameter's, and the driver copies the kernel's parameter size from there.
unsafe impl DeviceRepr for Word {}

/// A kernel's raw argument struct as words: the `#[repr(C)]` struct the PTX entry point
/// takes by value, copied with its padding (left uninitialised: nothing reads it as
/// numbers; the key reads the fields through [`Site::key`]). Lives on the stack; a launch
/// issued now passes its address, a recorded one keeps [`Self::to_owned`].
pub(super) struct RawArgs {
    words: [Word; ARG_WORDS],
    len: usize,
}

impl RawArgs {
    pub fn new<A: Copy>(args: &A) -> Self {
        const {
            assert!(size_of::<A>() <= ARG_WORDS * 8 && align_of::<A>() <= align_of::<Word>());
        }
        let mut raw = RawArgs { words: [Word(MaybeUninit::uninit()); ARG_WORDS], len: size_of::<A>().div_ceil(8) };
        // SAFETY: `A` fits (asserted above); the bytes are copied as `MaybeUninit`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (args as *const A).cast::<u8>(),
                raw.words.as_mut_ptr().cast::<u8>(),
                size_of::<A>(),
            )
        };
        raw
    }

    /// The address of the struct: a `*const A` of the `A` it was made from.
    pub fn as_ptr(&self) -> *const () {
        self.words.as_ptr().cast()
    }

    /// The first word: the struct's address as a launch parameter.
    pub fn first(&self) -> &Word {
        &self.words[0]
    }

    /// A copy of the words that hold the struct, for a launch issued later (recorded):
    /// inline up to [`INLINE_WORDS`], in the launch closure's own allocation.
    pub fn to_owned(&self) -> OwnedArgs {
        let words = &self.words[..self.len.max(1)];
        if words.len() <= INLINE_WORDS {
            let mut inline = [Word(MaybeUninit::uninit()); INLINE_WORDS];
            inline[..words.len()].copy_from_slice(words);
            OwnedArgs::Inline(inline)
        } else {
            OwnedArgs::Boxed(words.into())
        }
    }
}

/// Words [`OwnedArgs`] keeps inline: every argument struct but those with
/// [`Shapes`](ramus_kernels::shape::Shapes).
const INLINE_WORDS: usize = 32;

/// A recorded launch's copy of its argument words ([`RawArgs::to_owned`]).
// Inline on purpose: it lives in the launch closure's box, so the common sizes need no
// allocation of their own.
#[allow(clippy::large_enum_variant)]
pub(super) enum OwnedArgs {
    Inline([Word; INLINE_WORDS]),
    Boxed(Box<[Word]>),
}

impl OwnedArgs {
    /// The first word: the struct's address as a launch parameter.
    pub fn first(&self) -> &Word {
        match self {
            OwnedArgs::Inline(w) => &w[0],
            OwnedArgs::Boxed(w) => &w[0],
        }
    }
}

/// Runs items `0..n` of a kernel's host entry point on rayon's pool, in ranges of
/// [`CPU_CHUNK`] items. Not generic over the kernel, so that rayon's job machinery is
/// compiled once, not again for every kernel type in every crate that launches one (it
/// was about a fifth of each example's and test binary's code).
///
/// # Safety
/// `args` holds the arguments `run` expects, and every item of `0..n` is valid for them
/// (the contract of [`CpuRun`]).
pub(super) unsafe fn run_cpu(run: CpuRun, n: usize, args: &RawArgs) {
    let at = args.as_ptr() as usize;
    (0..n.div_ceil(CPU_CHUNK)).into_par_iter().for_each(|c| {
        let start = c * CPU_CHUNK;
        // SAFETY: this function's contract; `args` outlives `for_each`.
        unsafe { run(start, (start + CPU_CHUNK).min(n), at as *const ()) }
    });
}

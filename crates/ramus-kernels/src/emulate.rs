//! A CTA emulated with host threads, for tests of the cooperative kernels (host only).
//!
//! The cooperative kernels ([`crate::primitives::scan_tile_cooperative`], the vorticity
//! criterion's CUDA entries) are written against [`Cta`]: thread and block indices,
//! `__syncthreads` and the dynamic shared memory. [`run_ctas`] runs such a kernel body on
//! as many host threads as the CTA has, with a barrier for `__syncthreads` and a shared
//! array filled with garbage before every CTA, so a test can compare the exact code of the
//! CUDA entries with the serial CPU kernels on a machine without a GPU. Not part of the
//! API: tests of both crates use it (`ramus-kernels/tests/criterion.rs`,
//! `ramus/tests/primitives.rs`).

extern crate std;

use core::sync::atomic::{AtomicUsize, Ordering};
use std::vec;

use crate::primitives::Cta;

/// The pattern the shared memory holds before each CTA (no kernel may read before writing).
pub const GARBAGE: u64 = 0x5555_5555_5555_5555;

/// `__syncthreads` of the emulated CTA: its threads yield until the last one arrives.
/// (`std::sync::Barrier` wakes all threads through one condition variable at every
/// crossing: on two cores that made a 128-thread test take 11 s.)
pub struct Barrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl Barrier {
    /// A barrier for `threads` threads.
    pub fn new(threads: usize) -> Self {
        Self { threads, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    /// Waits until all `threads` threads have called `wait` in this generation.
    pub fn wait(&self) {
        let g = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            while self.generation.load(Ordering::Acquire) == g {
                std::thread::yield_now();
            }
        }
    }
}

/// One thread's view of the emulated CTA.
pub struct EmulatedCta<'a> {
    thread: usize,
    block: usize,
    barrier: &'a Barrier,
    shared: *mut u64,
}

impl Cta for EmulatedCta<'_> {
    fn thread(&self) -> usize {
        self.thread
    }
    fn block(&self) -> usize {
        self.block
    }
    fn sync(&self) {
        self.barrier.wait();
    }
    fn shared(&self) -> *mut u64 {
        self.shared
    }
}

/// Runs CTAs `0..ctas` of `threads` threads one after another, calling `body` on every
/// thread of each, with `shared_words` words of shared memory set to [`GARBAGE`] before
/// each CTA. The host threads are spawned once (spawning them per CTA made the criterion
/// test take 15 s on two cores).
pub fn run_ctas<B>(threads: usize, shared_words: usize, ctas: usize, body: B)
where
    B: Fn(&EmulatedCta<'_>) + Sync,
{
    let mut shared = vec![GARBAGE; shared_words];
    // Raw address: the threads share the array, ordered by the barrier (as on a GPU).
    let base = shared.as_mut_ptr() as usize;
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        for thread in 0..threads {
            let (barrier, body) = (&barrier, &body);
            s.spawn(move || {
                for block in 0..ctas {
                    if thread == 0 {
                        // SAFETY: `shared_words` words at `base`, alive for the scope; every
                        // other thread waits at the barrier below and no kernel touches the
                        // array until it has passed it.
                        unsafe { core::slice::from_raw_parts_mut(base as *mut u64, shared_words) }.fill(GARBAGE);
                    }
                    barrier.wait();
                    body(&EmulatedCta { thread, block, barrier, shared: base as *mut u64 });
                    // Every thread is done with this CTA's shared memory before the refill.
                    barrier.wait();
                }
            });
        }
    });
}

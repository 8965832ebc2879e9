//! Launches whose item count lives on the device (issue "Performance to the limit", item 3:
//! counts kept on the device so that launches read their sizes instead of waiting for
//! read-backs).
//!
//! The adapt routine builds lists whose lengths a compaction leaves on the device. To
//! launch a kernel over such a list without reading the length back, the host launches
//! [`Counted<K>`] over an upper bound of the items; item `i` runs `K`'s item `i` only if
//! `i < count · per`, with `count` read on the device. Both backends run this one source,
//! so the items that run, and hence the results, are those of `K` launched over exactly
//! `count · per` items.

use core::marker::PhantomData;

use crate::launch::Kernel;
use crate::memory::{ArgBytes, Family, Lower, Memory, Raw, Rebuild};

/// Arguments of [`Counted<K>`] over memory `M`: `K`'s own (`inner`), and where its count is.
pub struct CountedArgs<A: Family, M: Memory = Raw> {
    /// The list length: one element, written by an earlier launch (e.g. a compaction).
    pub count: M::Ref<u64>,
    /// Items per listed element (e.g. the cells of a block: `BLOCK_CELLS`).
    pub per: u64,
    /// The wrapped kernel's arguments.
    pub inner: A::With<M>,
}

/// The raw form of [`CountedArgs`]: what kernels read.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CountedRaw<A> {
    /// See [`CountedArgs::count`].
    pub count: *const u64,
    /// See [`CountedArgs::per`].
    pub per: u64,
    /// See [`CountedArgs::inner`].
    pub inner: A,
}

// SAFETY: plain data; the pointer is only read, inside kernels.
unsafe impl<A: Send> Send for CountedRaw<A> {}
unsafe impl<A: Sync> Sync for CountedRaw<A> {}

impl<A: ArgBytes> ArgBytes for CountedRaw<A> {
    fn arg_bytes<W: FnMut(&[u8])>(&self, w: &mut W) {
        self.count.arg_bytes(w);
        self.per.arg_bytes(w);
        self.inner.arg_bytes(w);
    }
}

impl<A: Family> Family for CountedRaw<A> {
    type With<M: Memory> = CountedArgs<A, M>;
}

impl<A: Family, M: Memory> Rebuild<M> for CountedArgs<A, M> {
    type Raw = CountedRaw<A>;
    fn rebuild<N: Memory, C: Lower<M, N>>(&self, c: &mut C) -> Result<CountedArgs<A, N>, C::Error> {
        Ok(CountedArgs { count: c.by_ref("count", &self.count)?, per: self.per, inner: self.inner.rebuild(c)? })
    }
    fn raw<C: Lower<M, Raw>>(&self, c: &mut C) -> Result<CountedRaw<A>, C::Error> {
        Ok(CountedRaw { count: c.by_ref("count", &self.count)?, per: self.per, inner: self.inner.raw(c)? })
    }
}

/// `K` over the first `count · per` items of a launch, `count` read on the device.
pub struct Counted<K>(PhantomData<K>);

impl<K: Kernel> Kernel for Counted<K> {
    type Args = CountedRaw<K::Args>;
    const THREADS: u32 = K::THREADS;

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &Self::Args) {
        // SAFETY: the launch checked that `count` holds an element (`max_items`).
        let n = unsafe { *a.count }.saturating_mul(a.per);
        if (i as u64) < n {
            // SAFETY: the caller's contract covers every item of the launch, and the items
            // that run are a prefix of them.
            unsafe { K::run(i, &a.inner) }
        }
    }

    /// `K`'s bound, and none without a count element.
    fn max_items(lens: &CountedArgs<K::Args, crate::memory::Lens>) -> Option<usize> {
        if lens.count == 0 {
            return Some(0);
        }
        K::max_items(&lens.inner)
    }
}

//! Kernel arguments shared by the kernels of the adapt routine and the marking functions.
//!
//! Every AMR kernel gets the whole pool ([`Pool`]) plus one list of block IDs to work on
//! (the paper's "secondary mode of access": one work item per listed block, or per listed
//! block and child) and a few list/scalar slots whose meaning each kernel documents. One
//! argument struct for all of them keeps the host side and the PTX entry list short.

crate::kernel_args! {
    /// Pointers to every per-block array of the pool (layouts in [`crate::amr`]).
    pub struct Pool {
        pub level: mut i32,
        pub origin: mut i32,
        pub status: mut i32,
        pub mark: mut i32,
        pub parent: mut i32,
        pub child: mut i32,
        pub nbr: mut i32,
        pub nbr_child: mut i32,
        pub onb: mut u32,
        pub block_mask: mut u32,
        pub cell_mask: mut u8,
    }
}

crate::kernel_args! {
    /// Arguments of the list kernels of the adapt routine (see each kernel for the slots).
    pub struct ListArgs {
        pub pool: args Pool<M>,
        /// The block IDs the items work on.
        pub list: ref u32,
        /// A second input list.
        pub aux: ref u32,
        /// First output list.
        pub out: mut u32,
        /// Second output list.
        pub out2: mut u32,
        /// Scalar slots.
        pub a: val i32,
        pub b: val i32,
    }
}

crate::kernel_args! {
    /// Arguments of the geometric marking kernels ([`super::mark`]).
    pub struct MarkArgs {
        pub pool: args Pool<M>,
        /// Active block IDs.
        pub list: ref u32,
        /// Region kind ([`super::mark::REGION_BOX`], ...) or the wall-face mask.
        pub kind: val u32,
        /// Mark to set (region kernels); 1 to freeze (wall-distance kernel).
        pub mark: val i32,
        /// Region parameters in root cells: box `min`, `max`; sphere `center`, `radius` (in
        /// `p[3]`); wall distance in `p[0]`, domain size in `p[3..6]`.
        pub p: val [f64; 6],
    }
}

/// Declares a kernel generic over the dimension with [`ListArgs`] (or another argument
/// type); its PTX entries are registered in [`crate::registry`]. `items(l) = expr` is
/// [`Kernel::max_items`](crate::launch::Kernel::max_items): the most items the argument
/// lengths `l` allow.
macro_rules! amr_kernel {
    (
        $(#[$m:meta])* $name:ident, $args:ident, items($l:ident) = $items:expr,
        |$i:ident, $a:ident| $body:block
    ) => {
        $(#[$m])*
        pub struct $name<D>(core::marker::PhantomData<D>);
        impl<D: $crate::lattice::Dim> $crate::launch::Kernel for $name<D> {
            type Args = $args;
            #[inline(always)]
            unsafe fn run($i: usize, $a: &$args) $body
            fn max_items($l: &$args<$crate::memory::Lens>) -> Option<usize> {
                Some($items)
            }
        }
    };
}
pub(crate) use amr_kernel;

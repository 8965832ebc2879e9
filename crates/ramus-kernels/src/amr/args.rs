//! Kernel arguments shared by the kernels of the adapt routine and the marking functions.
//!
//! Every AMR kernel gets the whole pool ([`Pool`]) plus the lists it works on (the paper's
//! "secondary mode of access": one work item per listed block, or per listed block and
//! child). Each struct names its lists and scalars; kernels with the same inputs share one
//! (e.g. [`BlockList`]), each step with its own inputs has its own (e.g. [`SanitizeArgs`]).

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
    /// A list of blocks: kernels that read and write only the pool at the listed blocks
    /// (and their children or neighbours, as each kernel documents).
    pub struct BlockList {
        pub pool: args Pool<M>,
        /// The block IDs the items work on.
        pub blocks: ref u32,
    }
}

crate::kernel_args! {
    /// One value for every listed block ([`super::select::SetMark`]).
    pub struct SetValue {
        pub pool: args Pool<M>,
        /// The blocks (distinct IDs).
        pub blocks: ref u32,
        /// The mark code they get.
        pub value: val i32,
    }
}

crate::kernel_args! {
    /// One value per listed block ([`super::select::WriteStatus`],
    /// [`super::select::WriteMark`]).
    pub struct WriteValues {
        pub pool: args Pool<M>,
        /// The blocks (distinct IDs).
        pub blocks: ref u32,
        /// The code for `blocks[i]` (as `u32`).
        pub values: ref u32,
    }
}

crate::kernel_args! {
    /// A per-block output: a flag, a status or the geometry of each listed block, as the
    /// kernel documents (e.g. [`super::select::FlagLeaves`], [`super::build::BranchStatus`]).
    pub struct PerBlock {
        pub pool: args Pool<M>,
        /// The blocks.
        pub blocks: ref u32,
        /// What each block yields, at the kernel's stride.
        pub out: mut u32,
    }
}

crate::kernel_args! {
    /// An ID set from which the blocks of status `REMOVE` leave, in place and in order
    /// ([`super::remove::RemoveSerial`]).
    pub struct RemoveArgs {
        pub pool: args Pool<M>,
        /// The ID set: its first `n` entries.
        pub id_set: mut u32,
        pub n: val u32,
    }
}

crate::kernel_args! {
    /// Related blocks of the listed ones (neighbours, parents, children), as IDs and
    /// validity flags for a compaction ([`super::select::GatherNeighbours`],
    /// [`super::build::GatherParents`], [`super::connect::GatherChildren`]).
    pub struct Gather {
        pub pool: args Pool<M>,
        /// The blocks.
        pub blocks: ref u32,
        /// Gathered IDs (0 where invalid).
        pub ids: mut u32,
        /// 1 where `ids` holds a block, else 0.
        pub valid: mut u32,
    }
}

crate::kernel_args! {
    /// **Preparation** ([`super::select::Sanitize`]).
    pub struct SanitizeArgs {
        pub pool: args Pool<M>,
        /// The active blocks.
        pub active: ref u32,
        /// `1` where the block will be refined.
        pub refine: mut u32,
        /// `1` where the block will be coarsened.
        pub coarsen: mut u32,
        /// The blocks flagged for refinement and for coarsening, added to `counts[0]`
        /// and `counts[1]`, so that an adapt without marks ends after one read-back.
        /// The counters run on from adapt to adapt (no zeroing launch): this adapt's
        /// flags are counted from `base_refine` and `base_coarsen` (their values before
        /// the launch), modulo 2³².
        pub counts: mut u32,
        pub base_refine: val u32,
        pub base_coarsen: val u32,
        /// The first `listed_max` blocks flagged for refinement and for coarsening, in no
        /// particular order (the atomic adds'): a short request is sorted from there
        /// instead of compacted out of all active blocks. May be empty with
        /// `listed_max = 0`.
        pub listed_refine: mut u32,
        pub listed_coarsen: mut u32,
        pub listed_max: val u32,
        /// The forest's level limit.
        pub max_levels: val i32,
    }
}

crate::kernel_args! {
    /// **Map Gaps to Marked Blocks** ([`super::select::AssignChildren`]).
    pub struct AssignChildrenArgs {
        pub pool: args Pool<M>,
        /// The blocks to refine, ascending.
        pub to_refine: ref u32,
        /// The gap set (free IDs, taken from the end).
        pub gaps: ref u32,
        /// Its length.
        pub gap_count: val i32,
    }
}

crate::kernel_args! {
    /// Sort keys by the level of the children ([`super::select::LevelKeys`]).
    pub struct LevelKeysArgs {
        pub pool: args Pool<M>,
        /// The blocks.
        pub blocks: ref u32,
        /// The key of each: the level of its children.
        pub keys: mut u32,
        /// The value of each: its first child (`first_child == 1`) or itself.
        pub values: mut u32,
        /// 1: the values are the first children.
        pub first_child: val u32,
    }
}

crate::kernel_args! {
    /// Blocks grouped by the level of their children in one launch
    /// ([`super::select::LevelGroups`]).
    pub struct LevelGroupsArgs {
        pub pool: args Pool<M>,
        /// The blocks.
        pub blocks: ref u32,
        /// How many of `blocks` count.
        pub count: val u32,
        /// Grouped by level (stable): each block's first child (`first_child == 1`) or
        /// the block itself.
        pub values: mut u32,
        /// 1: the values are the first children.
        pub first_child: val u32,
        /// First index of each level in `values`, `levels` of them.
        pub offsets: mut u32,
        /// How many of `offsets` are written (`max_levels + 1`).
        pub levels: val u32,
    }
}

crate::kernel_args! {
    /// Per-level offsets in sorted keys ([`super::select::LevelOffsets`]).
    pub struct LevelOffsetsArgs {
        /// Level keys, ascending.
        pub keys: ref u32,
        /// How many of `keys` count.
        pub count: val i32,
        /// First index of each level, `MAX_LEVELS + 1` of them.
        pub offsets: mut u32,
    }
}

crate::kernel_args! {
    /// **Coarsen Blocks in ID Sets**, gap set ([`super::build::PushGaps`]).
    pub struct PushGapsArgs {
        /// The first child of each removed group.
        pub first_children: ref u32,
        /// How many groups.
        pub groups: val i32,
        /// The gap set.
        pub gaps: mut u32,
        /// Where the groups go in it (its length before them).
        pub base: val i32,
    }
}

crate::kernel_args! {
    /// Children to reset to the free state ([`super::build::ResetRemoved`]).
    pub struct ResetRemovedArgs {
        pub pool: args Pool<M>,
        /// The first child of each removed group.
        pub first_children: ref u32,
    }
}

crate::kernel_args! {
    /// **Refine Blocks in ID Sets** ([`super::build::AppendChildren`]).
    pub struct AppendChildrenArgs {
        pub pool: args Pool<M>,
        /// The refined parents, grouped by level.
        pub parents: ref u32,
        /// The first parent of this level in `parents`.
        pub first: val i32,
        /// The ID set of the children's level.
        pub id_set: mut u32,
        /// Its current length (where the children go).
        pub len: val i32,
    }
}

crate::kernel_args! {
    /// Parents whose children were relinked ([`super::build::RelinkedParents`]).
    pub struct RelinkedParentsArgs {
        /// Per-block levels of the pool.
        pub level: ref i32,
        /// Per-block statuses of the pool.
        pub status: ref i32,
        /// The minimal map.
        pub map: ref u32,
        /// The blocks just refined, ascending.
        pub refined: ref u32,
        /// How many of `refined` count.
        pub refined_count: val i32,
        /// Blocks of the minimal map (its first `per_level` entries): the items of one
        /// level; item `i` asks for level `i / per_level`.
        pub per_level: val u32,
        /// `map[i % per_level]`.
        pub ids: mut u32,
        /// 1 where `map[i % per_level]` is such a parent on level `i / per_level`.
        pub valid: mut u32,
    }
}

crate::kernel_args! {
    /// `nbr_child` (and optionally `onb`) of listed blocks
    /// ([`super::connect::NeighbourChildren`]).
    pub struct NeighbourChildrenArgs {
        pub pool: args Pool<M>,
        /// The blocks.
        pub blocks: ref u32,
        /// 1: also recompute `onb`.
        pub with_onb: val u32,
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

/// Declares a kernel generic over the dimension with one of the argument structs above;
/// its PTX entries are registered in [`crate::registry`]. `items(l) = expr` is
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
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            unsafe fn run($i: usize, $a: &$args) $body
            fn max_items($l: &$args<$crate::memory::Lens>) -> Option<usize> {
                Some($items)
            }
        }
    };
}
pub(crate) use amr_kernel;

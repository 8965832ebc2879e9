//! The kernel registry: the one list of every kernel instantiation that has a PTX entry
//! point, and the only place where entry-point names are written.
//!
//! The `registry!` invocation at the end of this file expands, from each line, into
//! - an [`Entry`] impl on every target, whose [`Entry::ENTRY`] is the entry point's name:
//!   what the host's `Device::launch` / `Device::launch_cta` look up in the PTX module;
//! - on `target_arch = "nvptx64"` only, the `extern "ptx-kernel"` entry point itself (thread
//!   `i < n` runs item `i` of the [`Kernel`](crate::launch::Kernel), or the given
//!   cooperative body);
//! - on the host, a static table of [`run_items`](crate::launch::run_items) by variant,
//!   which [`Entry::cpu_run`] reads: the CPU backend's entry points, compiled once in this
//!   crate instead of in every crate that launches a kernel (release builds do not share
//!   generic instances across crates; the table cut the test suite's build by 40 %);
//! - its names in [`ENTRIES`], against which a test of the host crate checks the committed
//!   PTX in both directions (every registered name has its `.entry`, every `.entry` is
//!   registered).
//!
//! # Groups, variants and names
//! Lines sit in *groups*. A group names its type parameters with their bounds and lists
//! its *variants*, one per instantiation: `d3q19_f32: L = D3Q19, F = f32;`. Each line of
//! the group is compiled for every variant and its entry point is named
//! `<line name>_<variant>`, e.g. `stream_collide_odd_d3q19_f32_bgk`; the lines of the group
//! without parameters (`plain`) are named as written. The variant's name must be the
//! `NAME`s of its types joined by `_` (checked at compile time), and on the host the
//! generic impl finds the variant of `L`, `F` by those `NAME`s: a kernel instantiated for
//! a combination no variant lists fails to compile where its `ENTRY` is used.
//!
//! # Adding a kernel
//! One line in the group of its type parameters, after the kernel's type exists:
//! ```text
//! my_kernel_even => MyKernel<L, F, false>;
//! ```
//! gives `my_kernel_even_d2q9_f32` … `my_kernel_even_d3q27_f64` in the PTX and
//! `<MyKernel<L, F, false> as Entry>::ENTRY` on the host; then run `cargo xtask ptx`. A
//! cooperative kernel (one CTA works together; the host launches it with
//! `Device::launch_cta`) is registered against its CPU counterpart, with the entry's body
//! after the type; its single parameter has the counterpart's `Kernel::Args` type:
//! ```text
//! vorticity_mark_even => VorticityMarkSerial<L, F, false>
//!     |args| vorticity_mark_cooperative::<Nv, L, F, false>(&Nv, &args);
//! ```
//!
//! # Adding a variant axis
//! A new axis (a storage precision, a collision model) is a type parameter of the
//! kernels it applies to, whose types carry a `NAME` through their trait. The storage of
//! the pool ([`Storage`], `NAME` empty for [`Native`], `"f16"` for [`Half`]) was added so:
//! 1. in the group header, add the parameter: `lattice (L: VelocitySet, F: Real, S: Storage<F>)`;
//! 2. give every variant the new type, and add the new combinations: `d3q19_f32: L =
//!    D3Q19, F = f32, S = Native;` … `d3q19_f32_f16: L = D3Q19, F = f32, S = Half;` (an
//!    empty `NAME` leaves the existing names as they were);
//! 3. in the lines, pass `S` to the kernel types: `stream_collide_odd => StreamCollide<L, F, S, C, true>;`;
//!    kernels of the group that do not take the parameter move to a group without it
//!    (`geometry` below).
//!
//! If the axis applies to a few kernels only, or to a subset of the combinations (a
//! collision model `C: Collision` for `stream_collide` alone), add a group instead:
//! ```text
//! collision (L: VelocitySet, F: Real, C: Collision) [
//!     d2q9_f32_bgk: L = D2Q9, F = f32, C = Bgk;
//!     d2q9_f32_mrt: L = D2Q9, F = f32, C = Mrt;
//! ] {
//!     stream_collide_even => StreamCollide<L, F, C, false>;
//! }
//! ```
//! Either way the host code stays generic over the group's parameters
//! (`Device::launch::<StreamCollide<Q, F, C, true>>` for any `Q`, `F`, `C`) and every name
//! follows from the group; `cargo xtask ptx` then writes the new entries. (A const
//! parameter outside the group, like the parity `ODD`, is one line per value: the host
//! launches it with a literal, or a generic caller bounds it with
//! `where StreamCollide<Q, F, C, ODD>: Entry`.)

use crate::amr::remove::RemoveSerial;
use crate::amr::{build::*, connect::*, mark::*, select::*};
use crate::average::AverageToParents;
use crate::collision::{Bgk, Collision, Trt};
use crate::counted::Counted;
use crate::criterion::VorticityMarkSerial;
use crate::curved::{CurvedWall, LinkDistance};
use crate::distinct::DistinctSerial;
use crate::eddy::CellVelocity;
use crate::exchange::AverageInterpolate;
use crate::guard::GuardCheck;
use crate::interpolate::{InterpolateChildren, InterpolateGhosts, RescaleParents};
use crate::lattice::{Dim, VelocitySet, D2, D2Q9, D3, D3Q19, D3Q27};
use crate::mrt::Mrt;
use crate::obstacle::{MarkObstacleDistance, ObstacleForce, SolidFlags, SolidMask};
use crate::pack::PackBlocks;
use crate::pairs::StreamCollidePairs;
use crate::primitives::{
    AddOffsets, CompactIndices, CompactValues, MarkSeen, RankSort, ScanAt, ScanTileSerial, Scatter, SplitScatter,
    TakeSeen,
};
use crate::readout::CellMoments;
use crate::real::Real;
use crate::regularized::Rr;
use crate::schedule::{ExpandChildren, FlagBlocks, FlagLists};
use crate::storage::{Half, Native, Storage};
use crate::stream::{StreamCollide, StreamCollideBulk, StreamCollideGradient};
use crate::surface::{MarkSurfaceDistance, SurfaceLinkDistance, SurfaceSolid};
#[cfg(target_arch = "nvptx64")]
use crate::{
    amr::remove::remove_cooperative, amr::select::level_groups_cooperative, criterion::vorticity_mark_cooperative,
    distinct::distinct_cooperative, exchange::average_interpolate_cooperative, primitives::rank_sort_cooperative,
    primitives::scan_tile_cooperative, ptx::Nv,
};

/// A registered kernel instantiation: the name of its PTX entry point.
pub trait Entry {
    /// Name of the PTX entry point. For a cooperative entry (registered against its CPU
    /// counterpart, see [`Self::COOPERATIVE`]) the host launches it with
    /// `Device::launch_cta`, the counterpart itself only on the CPU.
    const ENTRY: &'static str;
    /// Whether the entry point is a cooperative kernel (one parameter, the kernel's
    /// `Args`; explicit grid, CTA size and shared memory) rather than the data-parallel
    /// wrapper (`n`, `Args`; thread `i < n` runs item `i`).
    const COOPERATIVE: bool;
    /// Position of the instantiation among its group's variants (0 in the plain group).
    #[doc(hidden)]
    const VARIANT: usize;

    /// The host's entry point: [`run_items`](crate::launch::run_items) of this kernel
    /// (the CPU counterpart, for a cooperative entry), from the registry's static table.
    #[cfg(not(any(target_arch = "nvptx64", test)))]
    fn cpu_run() -> crate::launch::CpuRun;
}

/// Every registered entry-point name.
pub fn entries() -> impl Iterator<Item = &'static str> {
    ENTRIES.iter().flat_map(|g| g.iter()).flat_map(|l| l.iter()).copied()
}

/// Index of the variant named `parts` joined by `_` among `variants`; a compile-time
/// error where an `ENTRY` needs it for a combination no variant lists.
#[doc(hidden)]
pub const fn variant_index(parts: &[&str], variants: &[&str]) -> usize {
    let mut v = 0;
    while v < variants.len() {
        if is_joined(variants[v], parts) {
            return v;
        }
        v += 1;
    }
    panic!("kernel instantiated for a combination that no variant of its registry group lists")
}

/// Whether `name` is the non-empty `parts` joined by `_` (an empty `NAME`, such as the
/// native storage's, leaves the names of the other variants as they were).
#[doc(hidden)]
pub const fn is_joined(name: &str, parts: &[&str]) -> bool {
    let s = name.as_bytes();
    let mut at = 0;
    let mut p = 0;
    while p < parts.len() {
        if parts[p].is_empty() {
            p += 1;
            continue;
        }
        if at > 0 {
            if at >= s.len() || s[at] != b'_' {
                return false;
            }
            at += 1;
        }
        let part = parts[p].as_bytes();
        let mut j = 0;
        while j < part.len() {
            if at >= s.len() || s[at] != part[j] {
                return false;
            }
            at += 1;
            j += 1;
        }
        p += 1;
    }
    at == s.len()
}

/// Expands the registry (see the module docs): `group (params) [variants] { lines }`, the
/// group without parameters written `group () [] { lines }`. A line is
/// `name => Type;` (data-parallel) or `name => Type |args| body;` (cooperative).
macro_rules! registry {
    ($($(#[$doc:meta])* $group:ident $params:tt $variants:tt $lines:tt)*) => {
        $(
            $(#[$doc])*
            #[allow(non_upper_case_globals)]
            mod $group {
                registry!(@names $params $variants $lines);
                #[cfg(not(any(target_arch = "nvptx64", test)))]
                registry!(@cpu $params $variants $lines);
                #[cfg(target_arch = "nvptx64")]
                registry!(@ptx $params $variants $lines);
            }
            registry!(@check $params $variants);
            registry!(@impls $group $params $variants $lines);
        )*

        /// Every registered entry-point name, by group and line (see [`entries`]).
        pub const ENTRIES: &[&[&[&str]]] = &[$($group::ALL),*];
    };

    // Names: one `const <line name>: &[&str]` per line (by variant), and `ALL`.
    (@names $params:tt $variants:tt { $($name:ident => $k:ty $(|$a:ident| $body:expr)?;)* }) => {
        $(registry!(@line_names $name $params $variants);)*
        pub(super) const ALL: &[&[&str]] = &[$($name),*];
    };
    (@line_names $name:ident () []) => {
        pub(super) const $name: &[&str] = &[stringify!($name)];
    };
    (@line_names $name:ident $params:tt [$($v:ident : $($p:ident = $t:ty),+;)*]) => {
        pub(super) const $name: &[&str] = &[$(concat!(stringify!($name), "_", stringify!($v))),*];
    };

    // Every variant's name is its types' `NAME`s joined by `_`.
    (@check () []) => {};
    (@check $params:tt [$($v:ident : $($p:ident = $t:ty),+;)*]) => {
        const _: () = {$({
            $(type $p = $t;)+
            assert!(
                is_joined(stringify!($v), registry!(@key $params)),
                concat!("registry variant `", stringify!($v), "` is not its types' NAMEs joined by `_`")
            );
        })*};
    };
    (@key ($($p:ident : $b:path),+)) => { &[$(<$p as $b>::NAME),+] };

    // `Entry` impls: concrete for the plain group, generic over the group's parameters
    // (finding the variant by the parameters' `NAME`s) otherwise.
    (@impls $group:ident $params:tt $variants:tt { $($name:ident => $k:ty $(|$a:ident| $body:expr)?;)* }) => {
        $(registry!(@impl $group $name $params $variants [$k] $($a)?);)*
    };
    (@impl $group:ident $name:ident () [] [$k:ty] $($a:ident)?) => {
        impl Entry for $k {
            const ENTRY: &'static str = $group::$name[0];
            const COOPERATIVE: bool = registry!(@cooperative $($a)?);
            const VARIANT: usize = 0;
            #[cfg(not(any(target_arch = "nvptx64", test)))]
            fn cpu_run() -> $crate::launch::CpuRun {
                $group::cpu::$name[0]
            }
        }
    };
    (
        @impl $group:ident $name:ident ($($p:ident : $b:path),+) [$($v:ident : $($vp:ident = $t:ty),+;)*]
        [$k:ty] $($a:ident)?
    ) => {
        impl<$($p: $b),+> Entry for $k {
            const ENTRY: &'static str = $group::$name[Self::VARIANT];
            const COOPERATIVE: bool = registry!(@cooperative $($a)?);
            const VARIANT: usize = variant_index(&[$(<$p as $b>::NAME),+], &[$(stringify!($v)),*]);
            #[cfg(not(any(target_arch = "nvptx64", test)))]
            fn cpu_run() -> $crate::launch::CpuRun {
                $group::cpu::$name[Self::VARIANT]
            }
        }
    };
    (@cooperative) => { false };
    (@cooperative $a:ident) => { true };

    // Host entry points: per line, one `static` table of `run_items` by variant, so that
    // every kernel is compiled for the host in this crate (see `crate::launch::run_items`).
    // Left out of this crate's own unit tests, which launch nothing and would compile
    // every kernel a second time.
    (@cpu $params:tt $variants:tt { $($name:ident => $k:ty $(|$a:ident| $body:expr)?;)* }) => {
        pub(super) mod cpu {
            #[allow(unused_imports)]
            use super::super::*;
            use $crate::launch::CpuRun;
            $(registry!(@cpu_line $name [$k] $params $variants);)*
        }
    };
    // Each line's instances go through functions of a module of its own: rustc places a
    // generic instance in the code-generation unit of its function's module, so the
    // kernels compile in parallel instead of in one unit. The item is a call, not inlined
    // into the item loop: LLVM then optimises each kernel body once, not again as a loop
    // body it tries to vectorise (a quarter less compile time, about one call per cell).
    (@cpu_line $name:ident [$k:ty] () []) => {
        registry!(@cpu_module $name);
        pub(in super::super) static $name: &[CpuRun] = &[$name::run::<$k>];
    };
    (@cpu_line $name:ident [$k:ty] $params:tt [$($v:ident : $($vp:ident = $t:ty),+;)*]) => {
        registry!(@cpu_module $name);
        pub(in super::super) static $name: &[CpuRun] = &[$({
            $(type $vp = $t;)+
            $name::run::<$k>
        }),*];
    };
    (@cpu_module $name:ident) => {
        mod $name {
            /// [`run_items`](crate::launch::run_items) of `K`, instantiated here.
            pub(super) unsafe fn run<K: $crate::launch::Kernel>(start: usize, end: usize, args: *const ()) {
                // SAFETY: the contract of `CpuRun`, passed on.
                unsafe { $crate::launch::run_items::<K>(start, end, args, item::<K>) }
            }

            /// Item `i` of `K`, kept out of the item loop.
            #[inline(never)]
            unsafe fn item<K: $crate::launch::Kernel>(i: usize, args: &K::Args) {
                // SAFETY: the contract of `CpuRun`, for this item.
                unsafe { K::run(i, args) }
            }
        }
    };

    // PTX entry points: one module per variant with its type aliases.
    (@ptx () [] $lines:tt) => {
        mod entries {
            use super::super::*;
            registry!(@entries [] $lines);
        }
    };
    (@ptx $params:tt [$($v:ident : $($p:ident = $t:ty),+;)*] $lines:tt) => {$(
        mod $v {
            use super::super::*;
            $(type $p = $t;)+
            registry!(@entries [$v] $lines);
        }
    )*};
    (@entries $v:tt { $($name:ident => $k:ty $(|$a:ident| $body:expr)?;)* }) => {
        $(registry!(@entry $v $name [$k] $(|$a| $body)?);)*
    };
    (@entry $v:tt $name:ident [$k:ty]) => {
        registry!(@export $v $name {
            pub unsafe extern "ptx-kernel" fn $name(n: u64, args: <$k as $crate::launch::Kernel>::Args) {
                let i = $crate::ptx::thread_index();
                if i < n as usize {
                    <$k as $crate::launch::Kernel>::run(i, &args)
                }
            }
        });
    };
    (@entry $v:tt $name:ident [$k:ty] |$a:ident| $body:expr) => {
        registry!(@export $v $name {
            pub unsafe extern "ptx-kernel" fn $name($a: <$k as $crate::launch::Kernel>::Args) {
                $body
            }
        });
    };
    (@export [] $name:ident { $f:item }) => {
        #[no_mangle]
        $f
    };
    (@export [$v:ident] $name:ident { $f:item }) => {
        #[export_name = concat!(stringify!($name), "_", stringify!($v))]
        $f
    };
}

registry! {
    /// Per (velocity set, precision, storage).
    lattice (L: VelocitySet, F: Real, S: Storage<F>) [
        d2q9_f32: L = D2Q9, F = f32, S = Native;
        d2q9_f64: L = D2Q9, F = f64, S = Native;
        d3q19_f32: L = D3Q19, F = f32, S = Native;
        d3q19_f64: L = D3Q19, F = f64, S = Native;
        d3q27_f32: L = D3Q27, F = f32, S = Native;
        d3q27_f64: L = D3Q27, F = f64, S = Native;
        d2q9_f32_f16: L = D2Q9, F = f32, S = Half;
        d3q19_f32_f16: L = D3Q19, F = f32, S = Half;
        d3q27_f32_f16: L = D3Q27, F = f32, S = Half;
    ] {
        // Grid communication (`crate::interpolate`, `crate::average`) by coarse-level parity.
        interpolate_linear_even => InterpolateChildren<L, F, S, false, false>;
        interpolate_cubic_even => InterpolateChildren<L, F, S, false, true>;
        interpolate_linear_odd => InterpolateChildren<L, F, S, true, false>;
        interpolate_cubic_odd => InterpolateChildren<L, F, S, true, true>;
        average_even => AverageToParents<L, F, S, false>;
        average_odd => AverageToParents<L, F, S, true>;
        // The averaging and the ghost interpolation between a level's two steps, one
        // launch (`crate::exchange`): `EXCHANGE_CTA` threads, no shared memory.
        average_interpolate_linear => AverageInterpolate<L, F, S, false>
            |args| average_interpolate_cooperative::<Nv, L, F, S, false>(&Nv, &args);
        average_interpolate_cubic => AverageInterpolate<L, F, S, true>
            |args| average_interpolate_cooperative::<Nv, L, F, S, true>(&Nv, &args);
        rescale_parents_even => RescaleParents<L, F, S, false>;
        rescale_parents_odd => RescaleParents<L, F, S, true>;
        interpolate_ghosts_linear => InterpolateGhosts<L, F, S, false>;
        interpolate_ghosts_cubic => InterpolateGhosts<L, F, S, true>;
        // The stability guard (`crate::guard`).
        guard_check_even => GuardCheck<L, F, S, false>;
        guard_check_odd => GuardCheck<L, F, S, true>;
        // Cell velocities for the gradient LES models (`crate::eddy`).
        cell_velocity_even => CellVelocity<L, F, S, false>;
        cell_velocity_odd => CellVelocity<L, F, S, true>;
        // Moments for reading the solution on the host (`crate::readout`).
        cell_moments_even => CellMoments<L, F, S, false>;
        cell_moments_odd => CellMoments<L, F, S, true>;
        // Momentum-exchange forces (`crate::obstacle`).
        obstacle_force => ObstacleForce<L, F, S>;
        // Curved and moving walls (`crate::curved`): wall distances, the pass after a step.
        link_distance => LinkDistance<L, F, S>;
        curved_wall_even => CurvedWall<L, F, S, false>;
        curved_wall_odd => CurvedWall<L, F, S, true>;
        // The cooperative vorticity criterion (`crate::criterion`): `CRITERION_CTA` threads
        // and `CRITERION_SHARED_BYTES` of shared memory per CTA.
        vorticity_mark_even => VorticityMarkSerial<L, F, S, false>
            |args| vorticity_mark_cooperative::<Nv, L, F, S, false>(&Nv, &args);
        vorticity_mark_odd => VorticityMarkSerial<L, F, S, true>
            |args| vorticity_mark_cooperative::<Nv, L, F, S, true>(&Nv, &args);
    }

    /// Per (velocity set, precision), for kernels that do not touch the pool.
    geometry (L: VelocitySet, F: Real) [
        d2q9_f32: L = D2Q9, F = f32;
        d2q9_f64: L = D2Q9, F = f64;
        d3q19_f32: L = D3Q19, F = f32;
        d3q19_f64: L = D3Q19, F = f64;
        d3q27_f32: L = D3Q27, F = f32;
        d3q27_f64: L = D3Q27, F = f64;
    ] {
        // Wall distances to a triangle surface (`crate::surface`).
        surface_link_distance => SurfaceLinkDistance<L, F>;
    }

    /// Per (velocity set, precision, storage, collision operator).
    collision (L: VelocitySet, F: Real, S: Storage<F>, C: Collision) [
        d2q9_f32_bgk: L = D2Q9, F = f32, S = Native, C = Bgk;
        d2q9_f32_trt: L = D2Q9, F = f32, S = Native, C = Trt;
        d2q9_f32_rr: L = D2Q9, F = f32, S = Native, C = Rr;
        d2q9_f32_mrt: L = D2Q9, F = f32, S = Native, C = Mrt;
        d2q9_f64_bgk: L = D2Q9, F = f64, S = Native, C = Bgk;
        d2q9_f64_trt: L = D2Q9, F = f64, S = Native, C = Trt;
        d2q9_f64_rr: L = D2Q9, F = f64, S = Native, C = Rr;
        d2q9_f64_mrt: L = D2Q9, F = f64, S = Native, C = Mrt;
        d3q19_f32_bgk: L = D3Q19, F = f32, S = Native, C = Bgk;
        d3q19_f32_trt: L = D3Q19, F = f32, S = Native, C = Trt;
        d3q19_f32_rr: L = D3Q19, F = f32, S = Native, C = Rr;
        d3q19_f32_mrt: L = D3Q19, F = f32, S = Native, C = Mrt;
        d3q19_f64_bgk: L = D3Q19, F = f64, S = Native, C = Bgk;
        d3q19_f64_trt: L = D3Q19, F = f64, S = Native, C = Trt;
        d3q19_f64_rr: L = D3Q19, F = f64, S = Native, C = Rr;
        d3q19_f64_mrt: L = D3Q19, F = f64, S = Native, C = Mrt;
        d3q27_f32_bgk: L = D3Q27, F = f32, S = Native, C = Bgk;
        d3q27_f32_trt: L = D3Q27, F = f32, S = Native, C = Trt;
        d3q27_f32_rr: L = D3Q27, F = f32, S = Native, C = Rr;
        d3q27_f32_mrt: L = D3Q27, F = f32, S = Native, C = Mrt;
        d3q27_f64_bgk: L = D3Q27, F = f64, S = Native, C = Bgk;
        d3q27_f64_trt: L = D3Q27, F = f64, S = Native, C = Trt;
        d3q27_f64_rr: L = D3Q27, F = f64, S = Native, C = Rr;
        d3q27_f64_mrt: L = D3Q27, F = f64, S = Native, C = Mrt;
        d2q9_f32_f16_bgk: L = D2Q9, F = f32, S = Half, C = Bgk;
        d2q9_f32_f16_trt: L = D2Q9, F = f32, S = Half, C = Trt;
        d2q9_f32_f16_rr: L = D2Q9, F = f32, S = Half, C = Rr;
        d2q9_f32_f16_mrt: L = D2Q9, F = f32, S = Half, C = Mrt;
        d3q19_f32_f16_bgk: L = D3Q19, F = f32, S = Half, C = Bgk;
        d3q19_f32_f16_trt: L = D3Q19, F = f32, S = Half, C = Trt;
        d3q19_f32_f16_rr: L = D3Q19, F = f32, S = Half, C = Rr;
        d3q19_f32_f16_mrt: L = D3Q19, F = f32, S = Half, C = Mrt;
        d3q27_f32_f16_bgk: L = D3Q27, F = f32, S = Half, C = Bgk;
        d3q27_f32_f16_trt: L = D3Q27, F = f32, S = Half, C = Trt;
        d3q27_f32_f16_rr: L = D3Q27, F = f32, S = Half, C = Rr;
        d3q27_f32_f16_mrt: L = D3Q27, F = f32, S = Half, C = Mrt;
    ] {
        // Fused stream and collide, even and odd AA steps (`crate::stream`).
        stream_collide_even => StreamCollide<L, F, S, C, false>;
        stream_collide_odd => StreamCollide<L, F, S, C, true>;
        // The same over blocks without boundary flags only (`crate::stream::bulk_faster`).
        stream_collide_bulk_even => StreamCollideBulk<L, F, S, C, false>;
        stream_collide_bulk_odd => StreamCollideBulk<L, F, S, C, true>;
        // The same under a gradient LES model (`crate::eddy`).
        stream_collide_grad_even => StreamCollideGradient<L, F, S, C, false>;
        stream_collide_grad_odd => StreamCollideGradient<L, F, S, C, true>;
        // Two cells per thread (`crate::pairs`).
        stream_collide_pairs_even => StreamCollidePairs<L, F, S, C, false>;
        stream_collide_pairs_odd => StreamCollidePairs<L, F, S, C, true>;
    }

    /// Per dimension.
    dim (D: Dim) [
        d2: D = D2;
        d3: D = D3;
    ] {
        // The adapt routine (`crate::amr`): selection and marks.
        amr_sanitize => Sanitize<D>;
        amr_write_status => WriteStatus<D>;
        amr_set_mark => SetMark<D>;
        amr_write_mark => WriteMark<D>;
        amr_clear_marks => ClearMarks<D>;
        amr_flag_leaves => FlagLeaves<D>;
        amr_geometry => Geometry<D>;
        amr_gather_neighbours => GatherNeighbours<D>;
        amr_assign_children => AssignChildren<D>;
        amr_map_refined_neighbours => MapRefinedNeighbours<D>;
        amr_check_coarsen => CheckCoarsen<D>;
        amr_unmap_coarsened => UnmapCoarsened<D>;
        amr_level_keys => LevelKeys<D>;
        amr_level_offsets => LevelOffsets<D>;
        // Cooperative: `RANK_CTA` threads per `RANK_ITEMS` items (`crate::amr::select`).
        amr_level_groups => LevelGroups<D> |args| level_groups_cooperative(&Nv, &args);
        // Building and removing blocks.
        amr_build_children => BuildChildren<D>;
        amr_mark_removed => MarkRemoved<D>;
        amr_flag_removed => FlagRemoved<D>;
        amr_push_gaps => PushGaps<D>;
        amr_reset_removed => ResetRemoved<D>;
        amr_append_children => AppendChildren<D>;
        amr_finalize_refined => FinalizeRefined<D>;
        amr_finalize_coarsened => FinalizeCoarsened<D>;
        amr_gather_parents => GatherParents<D>;
        amr_relinked_parents => RelinkedParents<D>;
        amr_branch_status => BranchStatus<D>;
        // Connectivity and ghost designation.
        amr_neighbour_children => NeighbourChildren<D>;
        amr_gather_children => GatherChildren<D>;
        amr_child_links => ChildLinks<D>;
        amr_masks => Masks<D>;
        // The same over lists whose lengths stay on the device (`crate::counted`).
        amr_map_refined_neighbours_counted => Counted<MapRefinedNeighbours<D>>;
        amr_branch_status_counted => Counted<BranchStatus<D>>;
        amr_write_status_counted => Counted<WriteStatus<D>>;
        amr_child_links_counted => Counted<ChildLinks<D>>;
        amr_neighbour_children_counted => Counted<NeighbourChildren<D>>;
        amr_masks_counted => Counted<Masks<D>>;
        // Geometric marking.
        amr_mark_region => MarkRegion<D>;
        amr_mark_wall_distance => MarkWallDistance<D>;
        // Work lists of the recursive advance (`crate::schedule`).
        expand_children => ExpandChildren<D>;
        // Obstacles (`crate::obstacle`).
        solid_mask => SolidMask<D>;
        solid_flags => SolidFlags<D>;
        mark_obstacle_distance => MarkObstacleDistance<D>;
        // Triangle surfaces (`crate::surface`).
        surface_solid => SurfaceSolid<D>;
        mark_surface_distance => MarkSurfaceDistance<D>;
    }

    /// Without type parameters: the names are written in full.
    plain () [] {
        flag_blocks => FlagBlocks;
        flag_lists => FlagLists;
        // Parallel primitives (`crate::primitives`); data-moving kernels per element size.
        prim_add_offsets_u32 => AddOffsets<u32>;
        prim_add_offsets_u64 => AddOffsets<u64>;
        prim_compact_indices => CompactIndices;
        prim_compact_b1 => CompactValues<u8>;
        prim_compact_b4 => CompactValues<u32>;
        prim_compact_b8 => CompactValues<u64>;
        prim_scan_at => ScanAt;
        prim_scatter_b1 => Scatter<u8>;
        prim_scatter_b4 => Scatter<u32>;
        prim_scatter_b8 => Scatter<u64>;
        prim_split_scatter => SplitScatter;
        // Block data (`crate::pack`), per element size.
        pack_blocks_b2 => PackBlocks<u16, false>;
        pack_blocks_b4 => PackBlocks<u32, false>;
        pack_blocks_b8 => PackBlocks<u64, false>;
        unpack_blocks_b2 => PackBlocks<u16, true>;
        unpack_blocks_b4 => PackBlocks<u32, true>;
        unpack_blocks_b8 => PackBlocks<u64, true>;
        // The short sort (`crate::primitives::rank_sort_cooperative`): `RANK_CTA` threads
        // per `RANK_ITEMS` items, `RANK_SHARED_BYTES` of shared memory.
        prim_rank_sort => RankSort |args| rank_sort_cooperative(&Nv, &args);
        prim_mark_seen => MarkSeen;
        prim_take_seen => TakeSeen;
        // The cooperative tile pass of the scan: `SCAN_CTA` threads per tile of `TILE`
        // items, `SCAN_SHARED_BYTES` of shared memory.
        prim_scan_tiles_u32 => ScanTileSerial<u32, u32> |args| scan_tile_cooperative(&Nv, &args);
        prim_scan_tiles_u64 => ScanTileSerial<u64, u64> |args| scan_tile_cooperative(&Nv, &args);
        // The short distinct (`crate::distinct`): one CTA of `DISTINCT_CTA` threads,
        // `DISTINCT_SHARED_BYTES` of shared memory.
        prim_distinct_short => DistinctSerial |args| distinct_cooperative(&Nv, &args);
        // Step 5 on a short ID set (`crate::amr::remove`): one CTA of `REMOVE_CTA`
        // threads, `REMOVE_SHARED_BYTES` of shared memory.
        amr_remove_short => RemoveSerial |args| remove_cooperative(&Nv, &args);
    }
}

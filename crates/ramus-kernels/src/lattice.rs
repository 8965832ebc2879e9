//! Velocity sets (paper, section "Lattice Boltzmann Method", figure `fig:p0_velocitysets`).
//!
//! Each set is a zero-sized marker type carrying its velocities, weights and opposite
//! directions as constants, so one generic collide/stream serves every lattice. The
//! dimension is a type too ([`D2`], [`D3`]): [`VelocitySet::Dim`] ties a set to its
//! dimension, so a `Forest<D2, D3Q19, _>` does not compile.
//!
//! Directions are ordered rest first, then opposite pairs `(2k-1, 2k)`, so the opposite
//! of an odd direction `i` is `i + 1`.

/// Spatial dimension as a type (the nalgebra/parry way of choosing 2D or 3D).
pub trait Dim: Copy + Send + Sync + Default + core::fmt::Debug + 'static {
    /// Number of spatial dimensions.
    const D: usize;
    /// Lower-case name, `"d2"` or `"d3"` (the dimension's key in the kernel registry).
    const NAME: &'static str;
    /// Children of a block: `2^D` (the paper's `N_c`).
    const CHILDREN: usize;
    /// Cells in a cell-block: `4^D` (paper: `M_b` with `N_{b,x} = 4`).
    const BLOCK_CELLS: usize;
    /// Neighbour links per block: `3^D` (a full surrounding halo, self included).
    const NEIGHBORS: usize;
}

/// Two dimensions (quadtrees).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct D2;
/// Three dimensions (octrees).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct D3;

impl Dim for D2 {
    const D: usize = 2;
    const NAME: &'static str = "d2";
    const CHILDREN: usize = 4;
    const BLOCK_CELLS: usize = 16;
    const NEIGHBORS: usize = 9;
}
impl Dim for D3 {
    const D: usize = 3;
    const NAME: &'static str = "d3";
    const CHILDREN: usize = 8;
    const BLOCK_CELLS: usize = 64;
    const NEIGHBORS: usize = 27;
}

/// A discrete velocity set `DdQq`.
pub trait VelocitySet: Copy + Send + Sync + Default + core::fmt::Debug + 'static {
    /// The dimension this set lives in.
    type Dim: Dim;
    /// Number of discrete velocities.
    const Q: usize;
    /// Lower-case name, e.g. `"d3q19"` (the set's key in the kernel registry).
    const NAME: &'static str;
    /// Velocities `c_i` (third component 0 in 2D).
    const C: &'static [[i32; 3]];
    /// Weights `w_i`.
    const W: &'static [f64];
    /// Per-cell distribution storage, `[F; Q]` (kept in registers by the kernels).
    type Pop<F: Copy + Default>: Copy
        + Default
        + core::ops::Index<usize, Output = F>
        + core::ops::IndexMut<usize, Output = F>
        + AsRef<[F]>
        + AsMut<[F]>;

    /// Calls `f(0), f(1), …, f(Q-1)` as straight-line code.
    ///
    /// After inlining every index is a constant, which keeps `Pop` arrays in registers
    /// on the GPU (a run-time loop index sends them to local memory).
    fn unroll<G: FnMut(usize)>(f: G);

    /// Opposite direction `ī` with `c_ī = -c_i`.
    #[inline(always)]
    fn opposite(i: usize) -> usize {
        if i == 0 {
            0
        } else if i % 2 == 1 {
            i + 1
        } else {
            i - 1
        }
    }
}

/// Squared lattice speed of sound, `c_s^2 = 1/3`.
pub const CS2: f64 = 1.0 / 3.0;

macro_rules! velocity_set {
    ($(#[$doc:meta])* $name:ident, $dim:ty, $q:literal, $str:literal, [$($i:literal)*], $c:expr, $w:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name;
        impl VelocitySet for $name {
            type Dim = $dim;
            const Q: usize = $q;
            const NAME: &'static str = $str;
            const C: &'static [[i32; 3]] = &$c;
            const W: &'static [f64] = &$w;
            type Pop<F: Copy + Default> = [F; $q];
            #[inline(always)]
            fn unroll<G: FnMut(usize)>(mut f: G) {
                $( f($i); )*
            }
        }
    };
}

const W9_0: f64 = 4.0 / 9.0;
const W9_1: f64 = 1.0 / 9.0;
const W9_2: f64 = 1.0 / 36.0;

velocity_set!(
    /// D2Q9: rest, 4 axis, 4 diagonal velocities.
    D2Q9, D2, 9, "d2q9", [0 1 2 3 4 5 6 7 8],
    [
        [0, 0, 0],
        [1, 0, 0], [-1, 0, 0],
        [0, 1, 0], [0, -1, 0],
        [1, 1, 0], [-1, -1, 0],
        [1, -1, 0], [-1, 1, 0],
    ],
    [W9_0, W9_1, W9_1, W9_1, W9_1, W9_2, W9_2, W9_2, W9_2]
);

const W19_0: f64 = 1.0 / 3.0;
const W19_1: f64 = 1.0 / 18.0;
const W19_2: f64 = 1.0 / 36.0;

velocity_set!(
    /// D3Q19: rest, 6 face and 12 edge velocities.
    D3Q19, D3, 19, "d3q19", [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18],
    [
        [0, 0, 0],
        [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1],
        [1, 1, 0], [-1, -1, 0], [1, 0, 1], [-1, 0, -1], [0, 1, 1], [0, -1, -1],
        [1, -1, 0], [-1, 1, 0], [1, 0, -1], [-1, 0, 1], [0, 1, -1], [0, -1, 1],
    ],
    [
        W19_0,
        W19_1, W19_1, W19_1, W19_1, W19_1, W19_1,
        W19_2, W19_2, W19_2, W19_2, W19_2, W19_2,
        W19_2, W19_2, W19_2, W19_2, W19_2, W19_2,
    ]
);

const W27_0: f64 = 8.0 / 27.0;
const W27_1: f64 = 2.0 / 27.0;
const W27_2: f64 = 1.0 / 54.0;
const W27_3: f64 = 1.0 / 216.0;

velocity_set!(
    /// D3Q27: the D3Q19 velocities plus the 8 corner velocities.
    D3Q27, D3, 27, "d3q27",
    [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26],
    [
        [0, 0, 0],
        [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1],
        [1, 1, 0], [-1, -1, 0], [1, 0, 1], [-1, 0, -1], [0, 1, 1], [0, -1, -1],
        [1, -1, 0], [-1, 1, 0], [1, 0, -1], [-1, 0, 1], [0, 1, -1], [0, -1, 1],
        [1, 1, 1], [-1, -1, -1], [1, 1, -1], [-1, -1, 1],
        [1, -1, 1], [-1, 1, -1], [-1, 1, 1], [1, -1, -1],
    ],
    [
        W27_0,
        W27_1, W27_1, W27_1, W27_1, W27_1, W27_1,
        W27_2, W27_2, W27_2, W27_2, W27_2, W27_2,
        W27_2, W27_2, W27_2, W27_2, W27_2, W27_2,
        W27_3, W27_3, W27_3, W27_3, W27_3, W27_3, W27_3, W27_3,
    ]
);

//! Triangle surfaces (STL bodies) on the device (issue "Geometry for real flows", item 2):
//! which cells are solid, where links cross the surface, and which blocks lie near it.
//!
//! **Acceleration structure.** The surface is snapped to a cube of `2^QUANTUM_BITS`
//! quanta per side over its bounding box (the vertices as integers), and its triangles
//! are binned into columns of a (y, z) grid: per column, the triangles whose (y, z)
//! bounding box meets it (a CSR list, [`Surface::start`] and [`Surface::items`], built
//! on the host: the geometry is static). A column is `2^shift` quanta wide.
//!
//! **Inside or outside, exactly.** A point is inside when a ray from it along +x crosses
//! the surface an odd number of times. The point is snapped to the same quanta and the
//! test runs in integers, exactly: the projected edge functions of each triangle of the
//! point's column (`i64`, at most `2^57` in size) decide whether the ray meets it, and
//! ties — the ray through an edge or a vertex, the point on the surface — are broken by
//! simulation of simplicity (Edelsbrunner & Mücke, ACM Trans. Graph. 9 (1990) 66): the
//! point is taken as moved by `(−ε', ε, ε²)` with `ε' ≫ ε`, the same for every triangle,
//! so a ray through a shared edge counts on exactly one side of it and the parity is
//! that of a ray in general position. Both backends compute the same integers: the
//! voxelisation is the same on CPU and CUDA, and right for any closed surface, convex or
//! not. (A cell whose centre lies within one quantum — `extent · 2^−18` — of the surface
//! may fall on either side: the surface is the snapped one.)
//!
//! **Link crossings** (the wall distance `q` of [`crate::curved`]) are found in `f64` by
//! the Möller–Trumbore segment–triangle test against the snapped triangles of the
//! columns the link's projection passes through; the nearest crossing wins.
//!
//! **Near-surface refinement** ([`MarkSurfaceDistance`]): the paper's wall-distance rule
//! with the distance from a block to the bounding boxes of the triangles of the columns
//! near it, a lower bound of the distance to the surface (it refines at least the blocks
//! the exact distance would).

use crate::memory::Lens;
use core::marker::PhantomData;

use crate::amr::args::Pool;
use crate::amr::units;
use crate::curved::{wall_index, NO_SHAPE};
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::obstacle::{cell_centre, mark_near, scaled};
use crate::real::Real;

/// Quanta per side of the snapped cube, as a power of two: `2^18` keeps every product of
/// the exact inside test below `2^57`.
pub const QUANTUM_BITS: u32 = 18;
/// Quanta per side of the snapped cube.
pub const QUANTA: i64 = 1 << QUANTUM_BITS;

/// Where the snapped cube lies and how its columns are laid out (passed by value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SurfaceGrid {
    /// Lower corner of the cube (root cells).
    pub lo: [f64; 3],
    /// Side of a quantum (root cells).
    pub quantum: f64,
    /// Columns per side: `(QUANTA >> shift) + 1`.
    pub columns: u32,
    /// A column is `2^shift` quanta wide.
    pub shift: u32,
    /// Number of triangles (0: no surface).
    pub triangles: u32,
}

crate::memory::arg_bytes_by_field!(SurfaceGrid: lo, quantum, columns, shift, triangles);

kernel_args! {
    /// A closed triangle surface, snapped and binned (see the module documentation).
    pub struct Surface {
        /// Per triangle its three vertices, `x y z` each, in quanta from the cube's
        /// lower corner (9 values).
        pub vertex: ref i32,
        /// Per column (`y_column · columns + z_column`) the first of its entries in
        /// `items`; `columns² + 1` values.
        pub start: ref u32,
        /// Triangle indices, column after column.
        pub items: ref u32,
        pub grid: val SurfaceGrid,
    }
}

impl Surface {
    /// The point `x` (root cells) in quanta, if it lies in the cube.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn snap(&self, x: [f64; 3]) -> Option<[i64; 3]> {
        let g = &self.grid;
        let mut p = [0i64; 3];
        for a in 0..3 {
            let s = (x[a] - g.lo[a]) / g.quantum;
            // Not `!(0 ≤ s ≤ QUANTA)`: a NaN is outside as well.
            if !(s >= 0.0 && s <= QUANTA as f64) {
                return None;
            }
            p[a] = (s + 0.5) as i64;
        }
        Some(p)
    }

    /// Vertex `v` of triangle `t`, in quanta.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn vertex(&self, t: usize, v: usize) -> [i64; 3] {
        let at = 9 * t + 3 * v;
        [*self.vertex.add(at) as i64, *self.vertex.add(at + 1) as i64, *self.vertex.add(at + 2) as i64]
    }

    /// The entries of column `(cy, cz)`.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn column(&self, cy: i64, cz: i64) -> (usize, usize) {
        let c = (cy * self.grid.columns as i64 + cz) as usize;
        (*self.start.add(c) as usize, *self.start.add(c + 1) as usize)
    }

    /// Whether `x` (root cells) lies inside the surface: the parity of the crossings of
    /// the ray along +x, exactly (see the module documentation).
    ///
    /// # Safety
    /// The arrays hold the surface `grid` describes.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub unsafe fn contains(&self, x: [f64; 3]) -> bool {
        if self.grid.triangles == 0 {
            return false;
        }
        let Some(p) = self.snap(x) else { return false };
        let (first, end) = self.column(p[1] >> self.grid.shift, p[2] >> self.grid.shift);
        let mut inside = false;
        for e in first..end {
            let t = *self.items.add(e) as usize;
            let v = [self.vertex(t, 0), self.vertex(t, 1), self.vertex(t, 2)];
            // The vertices relative to the point, projected on (y, z).
            let r = v.map(|v| [v[1] - p[1], v[2] - p[2]]);
            let e0 = edge(r[1], r[2]);
            let e1 = edge(r[2], r[0]);
            let e2 = edge(r[0], r[1]);
            let s = [side(e0, r[1], r[2]), side(e1, r[2], r[0]), side(e2, r[0], r[1])];
            if !(s[0] == s[1] && s[1] == s[2] && s[0] != 0) {
                continue;
            }
            // The crossing's x relative to the point, times `det`: ahead (or at the
            // point, which is taken as moved back by ε') if it has the sign of `det`.
            let det = e0 + e1 + e2;
            let ahead = e0 * (v[0][0] - p[0]) + e1 * (v[1][0] - p[0]) + e2 * (v[2][0] - p[0]);
            if (det > 0 && ahead >= 0) || (det < 0 && ahead <= 0) {
                inside = !inside;
            }
        }
        inside
    }

    /// Fraction `q ∈ [0, 1]` of the segment from `x` to `x + d` (root cells) at its first
    /// crossing of the surface, if any (Möller & Trumbore, J. Graph. Tools 2 (1997) 21).
    ///
    /// # Safety
    /// As [`Self::contains`].
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub unsafe fn crossing(&self, x: [f64; 3], d: [f64; 3]) -> Option<f64> {
        let g = &self.grid;
        if g.triangles == 0 {
            return None;
        }
        // The columns the segment's (y, z) projection passes through, in order (a 2D
        // grid walk, Amanatides & Woo, Eurographics 1987): a link crosses a few columns,
        // not the whole box of them. Triangles are binned one quantum beyond their box
        // (`SurfaceBuffers`), which covers the rounding of this walk.
        let wcol = (1i64 << g.shift) as f64;
        let start = [(x[1] - g.lo[1]) / g.quantum, (x[2] - g.lo[2]) / g.quantum];
        let delta = [d[1] / g.quantum, d[2] / g.quantum];
        let last = g.columns as i64 - 1;
        let mut col = [0i64; 2];
        let mut step = [0i64; 2];
        let mut next = [f64::INFINITY; 2];
        let mut span = [f64::INFINITY; 2];
        for a in 0..2 {
            let c = start[a] / wcol;
            // `as` saturates, and a NaN becomes 0: the walk stays bounded either way.
            col[a] = if c >= 0.0 { c as i64 } else { c as i64 - 1 };
            if delta[a] > 0.0 {
                step[a] = 1;
                next[a] = ((col[a] + 1) as f64 * wcol - start[a]) / delta[a];
                span[a] = wcol / delta[a];
            } else if delta[a] < 0.0 {
                step[a] = -1;
                next[a] = (col[a] as f64 * wcol - start[a]) / delta[a];
                span[a] = -wcol / delta[a];
            }
        }
        let mut best = f64::INFINITY;
        // At most this many columns (the projection's length in columns, plus the ends).
        let most = (delta[0].abs() / wcol + delta[1].abs() / wcol) as usize + 3;
        for _ in 0..most {
            if col[0] >= 0 && col[0] <= last && col[1] >= 0 && col[1] <= last {
                let (first, end) = self.column(col[0], col[1]);
                for e in first..end {
                    let t = *self.items.add(e) as usize;
                    let v = [0, 1, 2]
                        .map(|k| self.vertex(t, k).map(|c| c as f64))
                        .map(|v| [g.lo[0] + v[0] * g.quantum, g.lo[1] + v[1] * g.quantum, g.lo[2] + v[2] * g.quantum]);
                    if let Some(s) = segment_triangle(x, d, v) {
                        if s < best {
                            best = s;
                        }
                    }
                }
            }
            if next[0] > 1.0 && next[1] > 1.0 {
                break;
            }
            let a = if next[0] < next[1] { 0 } else { 1 };
            col[a] += step[a];
            next[a] += span[a];
        }
        (best <= 1.0).then_some(best)
    }

    /// Whether a triangle's bounding box lies within `r` (root cells) of the box
    /// `[lo, lo + w]`.
    ///
    /// # Safety
    /// As [`Self::contains`].
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub unsafe fn near(&self, lo: [f64; 3], w: f64, r: f64) -> bool {
        let g = &self.grid;
        if g.triangles == 0 {
            return false;
        }
        // The grown box in quanta (not rounded inward).
        let mut b = [[0.0f64; 2]; 3];
        for a in 0..3 {
            b[a] = [(lo[a] - r - g.lo[a]) / g.quantum - 1.0, (lo[a] + w + r - g.lo[a]) / g.quantum + 1.0];
            if !(b[a][1] >= 0.0 && b[a][0] <= QUANTA as f64) {
                return false;
            }
        }
        let col = |a: usize, k: usize| (b[a][k].clamp(0.0, QUANTA as f64) as i64) >> g.shift;
        let r2 = r * r;
        for cy in col(1, 0)..=col(1, 1) {
            for cz in col(2, 0)..=col(2, 1) {
                let (first, end) = self.column(cy, cz);
                for e in first..end {
                    let t = *self.items.add(e) as usize;
                    let v = [self.vertex(t, 0), self.vertex(t, 1), self.vertex(t, 2)];
                    let mut d2 = 0.0;
                    for a in 0..3 {
                        let tlo = g.lo[a] + v[0][a].min(v[1][a]).min(v[2][a]) as f64 * g.quantum;
                        let thi = g.lo[a] + v[0][a].max(v[1][a]).max(v[2][a]) as f64 * g.quantum;
                        let gap = (tlo - (lo[a] + w)).max(lo[a] - thi).max(0.0);
                        d2 += gap * gap;
                    }
                    if d2 < r2 {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// The 2D cross product `a × b` of two projected vertices relative to the point: the
/// edge function of the edge `a → b` (twice the signed area of the point and the edge).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn edge(a: [i64; 2], b: [i64; 2]) -> i64 {
    a[0] * b[1] - a[1] * b[0]
}

/// The sign of the edge function `e = edge(a, b)` at the point moved by `(ε, ε²)` in
/// (y, z): `e + ε (a − b)_z − ε² (a − b)_y`. Antisymmetric in `(a, b)`, so the two
/// triangles of an edge see the point on opposite sides of it; 0 only for a degenerate
/// edge.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn side(e: i64, a: [i64; 2], b: [i64; 2]) -> i64 {
    if e != 0 {
        e.signum()
    } else if a[1] != b[1] {
        (a[1] - b[1]).signum()
    } else {
        (b[0] - a[0]).signum()
    }
}

/// Parameter `s ∈ [0, 1]` where the segment `x + s d` meets triangle `v`, if it does
/// (barycentric coordinates allowed `1e-9` outside, so that a segment through an edge
/// meets one of its triangles despite rounding).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn segment_triangle(x: [f64; 3], d: [f64; 3], v: [[f64; 3]; 3]) -> Option<f64> {
    const SLACK: f64 = 1e-9;
    let e1 = sub(v[1], v[0]);
    let e2 = sub(v[2], v[0]);
    let pv = cross(d, e2);
    let det = dot(e1, pv);
    if det == 0.0 {
        return None;
    }
    let inv = 1.0 / det;
    let tv = sub(x, v[0]);
    let u = dot(tv, pv) * inv;
    if !(-SLACK..=1.0 + SLACK).contains(&u) {
        return None;
    }
    let qv = cross(tv, e1);
    let w = dot(d, qv) * inv;
    if w < -SLACK || u + w > 1.0 + SLACK {
        return None;
    }
    let s = dot(e2, qv) * inv;
    (0.0..=1.0).contains(&s).then_some(s)
}

#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

kernel_args! {
    /// Arguments of [`SurfaceSolid`].
    pub struct SurfaceSolidArgs {
        /// Blocks to work on (the active blocks).
        pub list: ref u32,
        pub level: ref i32,
        pub origin: ref i32,
        /// Per-block solid masks: the surface's cells are or-ed in.
        pub solid: mut u64,
        pub surface: args Surface<M>,
    }
}

/// Item `i`: the cells of block `list[i]` whose centre lies inside the surface are added
/// to its solid mask (after the built-in shapes wrote it).
pub struct SurfaceSolid<D>(PhantomData<D>);

impl<D: Dim> Kernel for SurfaceSolid<D> {
    type Args = SurfaceSolidArgs;

    fn max_items(l: &SurfaceSolidArgs<Lens>) -> Option<usize> {
        Some(l.list)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SurfaceSolidArgs) {
        let b = *a.list.add(i) as usize;
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let level = *a.level.add(b);
        let mut mask = 0u64;
        for t in 0..D::BLOCK_CELLS {
            if a.surface.contains(cell_centre(o, level, t)) {
                mask |= 1 << t;
            }
        }
        *a.solid.add(b) |= mask;
    }
}

kernel_args! {
    /// Arguments of [`SurfaceLinkDistance`].
    pub struct SurfaceLinkArgs<F> {
        pub level: ref i32,
        pub origin: ref i32,
        /// The level's wall list and its first row of the wall table
        /// ([`crate::curved::WallArgs`]).
        pub list: ref u32,
        pub row0: val u32,
        /// Per wall link: `q` ([`crate::curved::NO_WALL`] for other links).
        pub q: mut F,
        /// Per wall link: the built-in shape it meets, or [`NO_SHAPE`].
        pub shape: ref u8,
        pub surface: args Surface<M>,
    }
}

/// Item `i`: cell `i mod 4^D` of block `list[i / 4^D]`: each of its wall links that met
/// no built-in shape ([`crate::curved::LinkDistance`] left `q = ½` and [`NO_SHAPE`]) and
/// crosses the surface takes `q` at the first crossing. Runs after
/// [`crate::curved::LinkDistance`], for interpolated walls.
pub struct SurfaceLinkDistance<L, F>(PhantomData<(L, F)>);

impl<L: VelocitySet, F: Real> Kernel for SurfaceLinkDistance<L, F> {
    type Args = SurfaceLinkArgs<F>;

    fn max_items(l: &SurfaceLinkArgs<F, Lens>) -> Option<usize> {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        Some((l.list * m).min(l.q / L::Q).min(l.shape / L::Q))
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SurfaceLinkArgs<F>) {
        let m = <L::Dim as Dim>::BLOCK_CELLS;
        let (j, t) = (i / m, i & (m - 1));
        let b = *a.list.add(j) as usize;
        let row = a.row0 as usize + j;
        let level = *a.level.add(b);
        let o = [*a.origin.add(3 * b), *a.origin.add(3 * b + 1), *a.origin.add(3 * b + 2)];
        let centre = cell_centre(o, level, t);
        let w = units::cell(level) as f64 / units::ROOT_CELL as f64;
        for k in 1..L::Q {
            let at = wall_index::<L>(row, k, t);
            if *a.q.add(at) >= F::ZERO && *a.shape.add(at) == NO_SHAPE {
                if let Some(q) = a.surface.crossing(centre, scaled(L::C[k], w)) {
                    *a.q.add(at) = F::from_f64(q);
                }
            }
        }
    }
}

kernel_args! {
    /// Arguments of [`MarkSurfaceDistance`].
    pub struct SurfaceMarkArgs {
        pub pool: args Pool<M>,
        /// Active block IDs.
        pub list: ref u32,
        pub surface: args Surface<M>,
        /// `d_spec` in root cells: a block on level `L` is near if within `d_spec / 2^L`.
        pub distance: val f64,
        /// Nonzero: freeze the refinement.
        pub freeze: val u32,
    }
}

/// The paper's wall-distance rule toward the surface, as
/// [`crate::obstacle::MarkObstacleDistance`] toward the built-in shapes (with the
/// distance to the triangles' bounding boxes, see the module documentation).
pub struct MarkSurfaceDistance<D>(PhantomData<D>);

impl<D: Dim> Kernel for MarkSurfaceDistance<D> {
    type Args = SurfaceMarkArgs;

    fn max_items(l: &SurfaceMarkArgs<Lens>) -> Option<usize> {
        Some(l.list)
    }

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &SurfaceMarkArgs) {
        let b = *a.list.add(i) as usize;
        mark_near(&a.pool, b, a.distance, a.freeze != 0, |lo, w, d| a.surface.near(lo, w, d));
    }
}

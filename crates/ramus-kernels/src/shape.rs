//! The built-in solid shapes: which points they hold, how far a block is from them, where
//! a lattice link crosses their surface and how fast that surface moves.
//!
//! Coordinates are in root cells (a root cell is 1.0); velocities in lattice units, which
//! are the same on every level (`Δx_L/Δt_L = 1`), and angular velocities in radians per
//! root step. Every shape is closed. A shape flagged [`SHAPE_OUTSIDE`] is solid *outside*
//! its surface: a container (the outer wall of a Taylor–Couette cell).

/// Built-in shapes a forest may hold (user geometry beyond these is evaluated on the host).
pub const MAX_SHAPES: usize = 8;
/// Shape kind: axis-aligned box `p[0..3]` … `p[3..6]`.
pub const SHAPE_BOX: u32 = 0;
/// Shape kind: sphere (disc in 2D), centre `p[0..3]`, radius `p[3]`.
pub const SHAPE_SPHERE: u32 = 1;
/// Shape kind: circular cylinder, centre `p[0..3]`, radius `p[3]`, axis `p[4]` (0, 1, 2:
/// x, y, z), half-length `p[5]` along the axis (in 2D a cylinder along z is a disc).
pub const SHAPE_CYLINDER: u32 = 2;
/// Flag or-ed into a kind: the solid is everything outside the shape.
pub const SHAPE_OUTSIDE: u32 = 0x100;

/// Up to [`MAX_SHAPES`] built-in shapes (`count` used), passed by value to the kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shapes {
    pub count: u32,
    /// `SHAPE_*`, with [`SHAPE_OUTSIDE`] for a container.
    pub kind: [u32; MAX_SHAPES],
    /// Nonzero if some shape moves (its walls then carry [`Shapes::velocity`]).
    pub moving: u32,
    pub p: [[f64; 6]; MAX_SHAPES],
    /// Per shape: its translation velocity (0..3) and angular velocity (3..6) about its
    /// centre ([`Shapes::centre`]); the shape itself does not move on the grid (a rotating
    /// body of revolution, or a wall sliding along itself).
    pub motion: [[f64; 6]; MAX_SHAPES],
}

crate::memory::arg_bytes_by_field!(Shapes: count, kind, moving, p, motion);

/// The interval `[s_in, s_out]` of a line's parameter inside a shape; empty if
/// `s_in > s_out`.
type Interval = (f64, f64);

const EMPTY: Interval = (1.0, 0.0);
const ALL: Interval = (f64::NEG_INFINITY, f64::INFINITY);

#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn meet(a: Interval, b: Interval) -> Interval {
    (a.0.max(b.0), a.1.min(b.1))
}

/// Where the line `p + s d` lies in the slab `[lo, hi]` of one axis.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn slab(p: f64, d: f64, lo: f64, hi: f64) -> Interval {
    if d == 0.0 {
        if p >= lo && p <= hi {
            ALL
        } else {
            EMPTY
        }
    } else {
        let (t1, t2) = ((lo - p) / d, (hi - p) / d);
        (t1.min(t2), t1.max(t2))
    }
}

/// Where the line `p + s d` lies in the ball of radius `r` about `c`, over the axes set in
/// `axes` (bit `a`): a sphere, or the disc across a cylinder's axis.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn ball(p: [f64; 3], d: [f64; 3], c: [f64; 3], r: f64, axes: u32) -> Interval {
    let (mut a, mut b, mut e2) = (0.0, 0.0, 0.0);
    for ax in 0..3 {
        if (axes >> ax) & 1 != 0 {
            let e = p[ax] - c[ax];
            a += d[ax] * d[ax];
            b += e * d[ax];
            e2 += e * e;
        }
    }
    // `e2 − r² ≤ 0` exactly when `e2 ≤ r²`: the point test of the cell masks.
    let k = e2 - r * r;
    if a == 0.0 {
        // Parallel to a cylinder's axis: inside everywhere or nowhere.
        return if k <= 0.0 { ALL } else { EMPTY };
    }
    let disc = b * b - a * k;
    if disc < 0.0 {
        return EMPTY;
    }
    let s = sqrt(disc);
    ((-b - s) / a, (-b + s) / a)
}

/// `√x` in `no_std` (Newton from the exponent-halved guess; the same operations on every
/// backend, exact to round-off for the distances compared here).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub fn sqrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let mut y = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..6 {
        y = 0.5 * (y + x / y);
    }
    y
}

/// Bit mask of the first `dim` axes.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
const fn axes_of(dim: usize) -> u32 {
    (1 << dim) - 1
}

/// The axis of a cylinder parameter set, as a bit.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn cylinder_axis(p: &[f64; 6]) -> u32 {
    if p[4] == 0.0 {
        1
    } else if p[4] == 1.0 {
        2
    } else {
        4
    }
}

impl Shapes {
    /// Kind and parameters of shape `k`, picked with constant indices: a run-time index
    /// into the parameter array would copy it to local memory on the GPU.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn shape(&self, k: usize) -> (u32, [f64; 6]) {
        let (mut kind, mut p) = (SHAPE_BOX, [0.0; 6]);
        for j in 0..MAX_SHAPES {
            if j == k {
                kind = self.kind[j];
                p = self.p[j];
            }
        }
        (kind, p)
    }

    /// The motion of shape `k` (constant indices, as [`Self::shape`]).
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn motion_of(&self, k: usize) -> [f64; 6] {
        let mut m = [0.0; 6];
        for j in 0..MAX_SHAPES {
            if j == k {
                m = self.motion[j];
            }
        }
        m
    }

    /// The centre of shape `k`: a sphere's or cylinder's centre, a box's midpoint.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn centre(&self, k: usize) -> [f64; 3] {
        let (kind, p) = self.shape(k);
        if kind & !SHAPE_OUTSIDE == SHAPE_BOX {
            [0.5 * (p[0] + p[3]), 0.5 * (p[1] + p[4]), 0.5 * (p[2] + p[5])]
        } else {
            [p[0], p[1], p[2]]
        }
    }

    /// Where the line `x + s d` lies in shape `k` (its closed inside, whatever the
    /// [`SHAPE_OUTSIDE`] flag), over the first `dim` axes.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    fn interval(&self, k: usize, x: [f64; 3], d: [f64; 3], dim: usize) -> Interval {
        let (kind, p) = self.shape(k);
        let axes = axes_of(dim);
        let base = kind & !SHAPE_OUTSIDE;
        if base == SHAPE_BOX {
            let mut s = ALL;
            for a in 0..3 {
                if (axes >> a) & 1 != 0 {
                    s = meet(s, slab(x[a], d[a], p[a], p[a + 3]));
                }
            }
            s
        } else if base == SHAPE_SPHERE {
            ball(x, d, [p[0], p[1], p[2]], p[3], axes)
        } else {
            let along = cylinder_axis(&p);
            let mut s = ball(x, d, [p[0], p[1], p[2]], p[3], axes & !along);
            for a in 0..3 {
                if (along >> a) & 1 != 0 && (axes >> a) & 1 != 0 {
                    s = meet(s, slab(x[a], d[a], p[a] - p[5], p[a] + p[5]));
                }
            }
            s
        }
    }

    /// Whether point `x` lies in shape `k`'s solid (`dim` axes compared).
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn contains_one(&self, k: usize, x: [f64; 3], dim: usize) -> bool {
        let (kind, _) = self.shape(k);
        // The zero-length segment at `x`: every interval test reduces to the point test.
        let (lo, hi) = self.interval(k, x, [0.0; 3], dim);
        let inside = lo <= hi;
        inside != (kind & SHAPE_OUTSIDE != 0)
    }

    /// Whether point `x` lies in any shape's solid.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn contains(&self, x: [f64; 3], dim: usize) -> bool {
        let mut any = false;
        // Constant indices (unrolled): kernel parameters stay in parameter space.
        for k in 0..MAX_SHAPES {
            if (k as u32) < self.count {
                any |= self.contains_one(k, x, dim);
            }
        }
        any
    }

    /// The fraction `q ∈ [0, 1]` of the link from the fluid point `x` to `x + d` at which
    /// it first enters a shape's solid, and that shape (the interpolated bounce-back's
    /// wall distance, [`crate::curved`]); `None` if no shape's solid meets the link (the
    /// solid cell comes from user geometry).
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn link_wall(&self, x: [f64; 3], d: [f64; 3], dim: usize) -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for k in 0..MAX_SHAPES {
            if (k as u32) < self.count {
                let (kind, _) = self.shape(k);
                let (s_in, s_out) = self.interval(k, x, d, dim);
                let hit = if kind & SHAPE_OUTSIDE != 0 {
                    // The solid starts where the link leaves the shape; a fluid point is
                    // inside it (round-off aside: then the wall is at the point).
                    if s_in > s_out || s_out < 0.0 {
                        Some(0.0)
                    } else if s_out <= 1.0 {
                        Some(s_out)
                    } else {
                        None
                    }
                } else if s_in <= s_out && s_in <= 1.0 && s_out >= 0.0 {
                    Some(s_in.max(0.0))
                } else {
                    None
                };
                if let Some(q) = hit {
                    let closer = match best {
                        Some((b, _)) => q < b,
                        None => true,
                    };
                    if closer {
                        best = Some((q.min(1.0), k));
                    }
                }
            }
        }
        best
    }

    /// The velocity of shape `k`'s surface at point `x`: `U + Ω × (x − centre)`.
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn velocity(&self, k: usize, x: [f64; 3]) -> [f64; 3] {
        let m = self.motion_of(k);
        let c = self.centre(k);
        let r = [x[0] - c[0], x[1] - c[1], x[2] - c[2]];
        [m[0] + m[4] * r[2] - m[5] * r[1], m[1] + m[5] * r[0] - m[3] * r[2], m[2] + m[3] * r[1] - m[4] * r[0]]
    }

    /// Distance from the box `[lo, lo + w]` to the nearest shape's solid (0 if they
    /// overlap).
    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    pub fn distance(&self, lo: [f64; 3], w: f64, dim: usize) -> f64 {
        let mut best = f64::INFINITY;
        for k in 0..MAX_SHAPES {
            if (k as u32) < self.count {
                let (kind, p) = self.shape(k);
                let d = if kind & SHAPE_OUTSIDE != 0 {
                    outside_distance(kind & !SHAPE_OUTSIDE, &p, lo, w, dim)
                } else {
                    inside_distance(kind, &p, lo, w, dim)
                };
                best = best.min(d);
            }
        }
        best
    }
}

/// Distance from the box `[lo, lo + w]` to a shape (0 if they overlap).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn inside_distance(kind: u32, p: &[f64; 6], lo: [f64; 3], w: f64, dim: usize) -> f64 {
    let axes = axes_of(dim);
    // Gap between the block's interval and the shape's on an axis (for the round part of
    // a shape: from its centre).
    let gap = |a: usize, s_lo: f64, s_hi: f64| (s_lo - (lo[a] + w)).max(lo[a] - s_hi).max(0.0);
    let (mut round, mut flat) = (0.0, 0.0);
    for a in 0..3 {
        if (axes >> a) & 1 != 0 {
            if kind == SHAPE_BOX {
                let g = gap(a, p[a], p[a + 3]);
                flat += g * g;
            } else if kind == SHAPE_CYLINDER && (cylinder_axis(p) >> a) & 1 != 0 {
                let g = gap(a, p[a] - p[5], p[a] + p[5]);
                flat += g * g;
            } else {
                let g = gap(a, p[a], p[a]);
                round += g * g;
            }
        }
    }
    if kind == SHAPE_BOX {
        sqrt(flat)
    } else if kind == SHAPE_SPHERE {
        (sqrt(round) - p[3]).max(0.0)
    } else {
        let r = (sqrt(round) - p[3]).max(0.0);
        sqrt(r * r + flat)
    }
}

/// Distance from the box `[lo, lo + w]` to the solid outside a shape (0 if the box pokes
/// out of it).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
fn outside_distance(kind: u32, p: &[f64; 6], lo: [f64; 3], w: f64, dim: usize) -> f64 {
    let axes = axes_of(dim);
    // Room between the block and the shape's faces on an axis (negative: outside).
    let room = |a: usize, s_lo: f64, s_hi: f64| (lo[a] - s_lo).min(s_hi - (lo[a] + w));
    let (mut far, mut least) = (0.0, f64::INFINITY);
    for a in 0..3 {
        if (axes >> a) & 1 != 0 {
            if kind == SHAPE_BOX {
                least = least.min(room(a, p[a], p[a + 3]));
            } else if kind == SHAPE_CYLINDER && (cylinder_axis(p) >> a) & 1 != 0 {
                least = least.min(room(a, p[a] - p[5], p[a] + p[5]));
            } else {
                // The block's farthest point from the centre on this axis.
                let e = (lo[a] - p[a]).abs().max((lo[a] + w - p[a]).abs());
                far += e * e;
            }
        }
    }
    if kind != SHAPE_BOX {
        least = least.min(p[3] - sqrt(far));
    }
    least.max(0.0)
}

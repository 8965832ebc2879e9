//! The interpolants as weights of the coarse samples (Lagrange form; see the parent
//! module's docs for the geometry and why not the paper's monomial coefficients): linear
//! over the `2^D` cells around a child's quadrant or octant, cubic over all `4^D` cells of
//! the parent.

use super::CUBIC_WEIGHTS;
use crate::amr::child_position;
use crate::block::{cell_coords, cell_index};
use crate::lattice::{Dim, VelocitySet};
use crate::real::Real;

/// Local coordinate `s = I/2 − 1/4` of fine cell `I` (0..3) in the linear unit cell.
/// Exact in binary floating point.
#[inline(always)]
fn linear_s<F: Real>(fine: i32) -> F {
    F::from_f64(0.5) * F::from_f64(fine as f64) - F::from_f64(0.25)
}

/// Linear interpolation weights (paper, "Linear Interpolation"): calls `f(j, w)` for the
/// `2^D` coarse cells `j = 2cp + {0,1}^D` of the parent (`cp = child_position(k)`) with
/// their weights for fine cell `t` of child `k`: `Π_a (corner_a ? s_a : 1 − s_a)`, the
/// multilinear interpolant through the corners (see [`crate::interpolate`] for its monomial form).
#[inline(always)]
pub fn linear_weights<D: Dim, F: Real>(k: usize, t: usize, mut f: impl FnMut(usize, F)) {
    let cp = child_position(k);
    let x = cell_coords(t);
    let (sx, sy, sz) = (linear_s::<F>(x[0]), linear_s::<F>(x[1]), linear_s::<F>(x[2]));
    // 2^D corners; scalar selects only, no run-time-indexed arrays.
    for n in 0..D::CHILDREN {
        let e = child_position(n);
        let mut w = if e[0] == 1 { sx } else { F::ONE - sx };
        w *= if e[1] == 1 { sy } else { F::ONE - sy };
        if D::D == 3 {
            w *= if e[2] == 1 { sz } else { F::ONE - sz };
        }
        f(cell_index([2 * cp[0] + e[0], 2 * cp[1] + e[1], 2 * cp[2] + e[2]]), w);
    }
}

/// Linear interpolation of populations (the paper's form): fine cell `t` of child `k`
/// from `coarse(j)`, the population of the parent's coarse cell `j` (see
/// [`linear_weights`]).
#[inline(always)]
pub fn interpolate_linear<L: VelocitySet, F: Real, G: FnMut(usize) -> L::Pop<F>>(
    k: usize,
    t: usize,
    coarse: G,
) -> L::Pop<F> {
    interpolate_populations::<L, F, false, G>(k, t, coarse)
}

/// Cubic Lagrange weights at nodes 0, 1, 2, 3 for the coordinate `s`.
const fn lagrange4(s: f64) -> [f64; 4] {
    [
        -(s - 1.0) * (s - 2.0) * (s - 3.0) / 6.0,
        s * (s - 2.0) * (s - 3.0) / 2.0,
        -s * (s - 1.0) * (s - 3.0) / 2.0,
        s * (s - 1.0) * (s - 2.0) / 6.0,
    ]
}

/// The rows of [`CUBIC_WEIGHTS`].
pub(super) const fn cubic_table() -> [[f64; 4]; 8] {
    let mut w = [[0.0; 4]; 8];
    let mut k = 0;
    while k < 8 {
        // k = 4 cp + I: s = 2 cp + I/2 − 1/4 = k/2 − 1/4.
        w[k] = lagrange4(k as f64 * 0.5 - 0.25);
        k += 1;
    }
    w
}

/// Cubic interpolation weights (paper, "Cubic Interpolation"): calls `f(j, w)` for all
/// `4^D` coarse cells of the parent with their tensor-product cubic Lagrange weights for
/// fine cell `t` of child `k`.
#[inline(always)]
pub fn cubic_weights<D: Dim, F: Real>(k: usize, t: usize, mut f: impl FnMut(usize, F)) {
    let cp = child_position(k);
    let x = cell_coords(t);
    let kk = [(4 * cp[0] + x[0]) as usize, (4 * cp[1] + x[1]) as usize, (4 * cp[2] + x[2]) as usize];
    // A run-time loop over the 4^D samples (unrolling 64 inlined cell loads would bloat
    // the PTX); weights come from the global table.
    for j in 0..D::BLOCK_CELLS {
        let c = cell_coords(j);
        let mut w = CUBIC_WEIGHTS[kk[0]][c[0] as usize] * CUBIC_WEIGHTS[kk[1]][c[1] as usize];
        if D::D == 3 {
            w *= CUBIC_WEIGHTS[kk[2]][c[2] as usize];
        }
        f(j, F::from_f64(w));
    }
}

/// Cubic interpolation of populations (the paper's form): fine cell `t` of child `k`
/// from `coarse(j)` for all `4^D` coarse cells of the parent (see [`cubic_weights`]).
#[inline(always)]
pub fn interpolate_cubic<L: VelocitySet, F: Real, G: FnMut(usize) -> L::Pop<F>>(
    k: usize,
    t: usize,
    coarse: G,
) -> L::Pop<F> {
    interpolate_populations::<L, F, true, G>(k, t, coarse)
}

/// The weights of the linear (`CUBIC = false`, [`linear_weights`]) or cubic
/// ([`cubic_weights`]) scheme.
#[inline(always)]
pub fn weights<D: Dim, F: Real, const CUBIC: bool>(k: usize, t: usize, f: impl FnMut(usize, F)) {
    if CUBIC {
        cubic_weights::<D, F>(k, t, f)
    } else {
        linear_weights::<D, F>(k, t, f)
    }
}

/// Weighted sum of the populations `coarse(j)` with the scheme's weights.
#[inline(always)]
fn interpolate_populations<L: VelocitySet, F: Real, const CUBIC: bool, G: FnMut(usize) -> L::Pop<F>>(
    k: usize,
    t: usize,
    mut coarse: G,
) -> L::Pop<F> {
    let mut acc = L::Pop::<F>::default();
    weights::<L::Dim, F, CUBIC>(k, t, |j, w| {
        let h = coarse(j);
        L::unroll(
            #[inline(always)]
            |i| acc[i] += w * h[i],
        );
    });
    acc
}

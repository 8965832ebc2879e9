//! In-place streaming fused with collision: the AA pattern (paper, section "Streaming").
//!
//! The paper streams in a separate pass (its block-based esoteric twist), which reads and
//! writes every distribution twice per step. The AA pattern (Bailey et al. 2009) keeps the
//! paper's key property — one distribution array, no second copy — and fuses streaming
//! with collision so that each step reads and writes every value exactly once:
//!
//! - **even step** (after an even number of steps; natural layout): cell `x` reads `f_i`
//!   from its own slot `i`, collides, and writes `f*_i` to its own slot `ī`;
//! - **odd step** (swapped layout): cell `x` gathers `f_i` from slot `ī` of `x − c_i`,
//!   collides, and scatters `f*_i` to slot `i` of `x + c_i`, which restores the natural
//!   layout.
//!
//! Every memory location is read and written by the same cell within a step, so a step
//! is race-free in place. Walls need work only in the odd step, where a link leaves the
//! level: half-way bounce-back with a wall velocity (paper eq. "Known u_w", ρ_w = 1),
//! `f_ī(x) = f*_i(x) − 2 w_i ρ_w (c_i·u_w)/c_s²`, lands in the cell's own slot.

use crate::block::{self, boundary_faces, cell_coords, link_face, Target};
use crate::collide::{bgk, c_dot};
use crate::lattice::{Dim, VelocitySet};
use crate::real::Real;

/// Parameters shared by all cells of one launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepParams<F> {
    /// Relaxation rate `ω = Δt/τ` of the level.
    pub omega: F,
    /// Wall velocity of each domain face, in the order of [`crate::block::face`].
    pub wall_u: [[F; 3]; 6],
}

// SAFETY: `#[repr(C)]` and only `F` fields, so no padding; `F: Pod`.
unsafe impl<F: Real> bytemuck::Zeroable for StepParams<F> {}
unsafe impl<F: Real> bytemuck::Pod for StepParams<F> {}

/// Raw view of the distribution pool and the neighbour links.
#[derive(Clone, Copy, Debug)]
pub struct Field<F> {
    /// Distributions: slot `i` of global cell `g` at `f[i * capacity + g]`.
    pub f: *mut F,
    /// Neighbour links, `3^D` per block.
    pub nbr: *const i32,
    /// Cell capacity of the pool (stride between direction slots).
    pub capacity: usize,
}

/// Bounce-back momentum term `2 w_i ρ_w (c_i·u_w)/c_s²` with `ρ_w = 1` for a link that
/// leaves the level through `link` (zero for [`block::N_SKIP`]).
#[inline(always)]
fn wall_term<L: VelocitySet, F: Real>(p: &StepParams<F>, link: i32, i: usize) -> F {
    let faces = boundary_faces(link);
    if faces == 0 {
        return F::ZERO;
    }
    let face = link_face(faces);
    // Select with constant indices: a run-time index into the parameter array would
    // copy it to local memory on the GPU for every thread.
    let mut u = [F::ZERO; 3];
    for k in 0..6 {
        if k == face {
            u = p.wall_u[k];
        }
    }
    F::from_f64(6.0 * L::W[i]) * c_dot(L::C[i], u)
}

#[inline(always)]
fn neg(c: [i32; 3]) -> [i32; 3] {
    [-c[0], -c[1], -c[2]]
}

#[inline(always)]
unsafe fn target<L: VelocitySet>(fld_nbr: *const i32, b: usize, x: [i32; 3], d: [i32; 3]) -> Target {
    block::resolve(
        fld_nbr,
        b,
        x,
        d,
        <L::Dim as Dim>::D,
        <L::Dim as Dim>::BLOCK_CELLS,
        <L::Dim as Dim>::NEIGHBORS,
    )
}

/// Pre-collision populations of cell `t` of block `b`, for a state reached after an even
/// (`ODD = false`) or odd (`ODD = true`) number of steps.
///
/// # Safety
/// `fld` must describe live allocations that hold block `b` and all its linked blocks.
#[inline(always)]
pub unsafe fn load<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
) -> L::Pop<F> {
    let g = b * <L::Dim as Dim>::BLOCK_CELLS + t;
    let x = cell_coords(t);
    let mut f = L::Pop::<F>::default();
    L::unroll(
        #[inline(always)]
        |i| {
            let ib = L::opposite(i);
            f[i] = if !ODD || i == 0 {
                *fld.f.add(i * fld.capacity + g)
            } else {
                match target::<L>(fld.nbr, b, x, neg(L::C[i])) {
                    Target::Cell(s) => *fld.f.add(ib * fld.capacity + s),
                    // f*_ī went into the wall last step and came back as f_i.
                    Target::Outside(link) => {
                        *fld.f.add(i * fld.capacity + g) + wall_term::<L, F>(p, link, i)
                    }
                }
            };
        },
    );
    f
}

/// Writes post-collision populations of cell `t` of block `b` (see [`load`] for `ODD`).
///
/// # Safety
/// As for [`load`].
#[inline(always)]
pub unsafe fn store<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
    f: &L::Pop<F>,
) {
    let g = b * <L::Dim as Dim>::BLOCK_CELLS + t;
    let x = cell_coords(t);
    L::unroll(
        #[inline(always)]
        |i| {
            let ib = L::opposite(i);
            if !ODD || i == 0 {
                *fld.f.add(ib * fld.capacity + g) = f[i];
            } else {
                match target::<L>(fld.nbr, b, x, L::C[i]) {
                    Target::Cell(d) => *fld.f.add(i * fld.capacity + d) = f[i],
                    Target::Outside(link) => {
                        *fld.f.add(ib * fld.capacity + g) = f[i] - wall_term::<L, F>(p, link, i)
                    }
                }
            }
        },
    );
}

/// One fused collide-and-stream step of cell `t` in block `b`.
///
/// # Safety
/// As for [`load`]; no other cell of the same step may be processed concurrently with a
/// different `ODD`, and the step must cover all cells of the level before the next starts.
#[inline(always)]
pub unsafe fn stream_collide<L: VelocitySet, F: Real, const ODD: bool>(
    fld: &Field<F>,
    p: &StepParams<F>,
    b: usize,
    t: usize,
) {
    let mut f = load::<L, F, ODD>(fld, p, b, t);
    bgk::<L, F>(&mut f, p.omega);
    store::<L, F, ODD>(fld, p, b, t, &f);
}

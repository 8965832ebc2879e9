//! The step kernels over an ID set: their arguments, which cell each item takes
//! ([`step_cell`]), and the plain and gradient-LES entries of [`super::stream_collide`].

use core::marker::PhantomData;

use super::{stream_collide, Field, StepParams};
use crate::collision::Collision;
use crate::eddy::EddyField;
use crate::kernel_args;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::memory::Lens;
use crate::profile::ProfileTable;
use crate::real::Real;
use crate::storage::Storage;

kernel_args! {
    /// Arguments of [`StreamCollide`].
    pub struct StreamArgs<F, P> {
        /// Distribution pool ([`Storage::Elem`]).
        pub f: mut P,
        /// Neighbour links.
        pub nbr: ref i32,
        /// Per-block boundary flags ([`super::ONB_LINKS`], [`super::ONB_SOLID`]).
        pub onb: ref u32,
        /// Per-block solid-cell masks (see [`Field::solid`]).
        pub solid: ref u64,
        /// Blocks to advance (an ID set); which item takes which cell: [`step_cell`].
        pub ids: ref u32,
        /// Relaxation rate and face conditions.
        pub params: val StepParams<F>,
        /// Cell velocities of the level, pool-indexed, under a gradient LES model
        /// ([`crate::eddy::EddyField::vel`]; unread otherwise, may be empty).
        pub vel: ref F,
        /// Per-cell eddy viscosities, written under a gradient LES model
        /// ([`crate::eddy::EddyField::eddy`]; may be empty otherwise).
        pub eddy: mut F,
        /// The mesh's per-cell masks, read under a gradient LES model
        /// ([`crate::eddy::EddyField::cell_mask`]).
        pub cell_mask: ref u8,
        /// Per block, its row of `profile_u` ([`crate::profile::ProfileTable::slot`]; read
        /// only for profiled faces, may be empty otherwise).
        pub profile_slot: ref u32,
        /// Wall velocities of the profiled faces ([`crate::profile::ProfileTable::u`]).
        pub profile_u: ref F,
        /// Blocks in `ids` (the step's items are their `blocks · 4^D` cells; see
        /// [`step_cell`]).
        pub blocks: val u32,
    }
}

/// Which cell item `i` of a step over `blocks` blocks takes: the index in the ID set of
/// its block, and the cell in that block.
///
/// Items `4^D k` to `4^D (k + 1) − 1` are the cells of block `k` in order, so a warp (32
/// items) holds two consecutive blocks whole in 2D, one block's two cell layers in 3D.
/// With `layered` (3D only; [`layered_pairs`]) every 128 items hold two consecutive
/// blocks instead, and warp `w` of them the cell layer `z = w` of both (lanes 0–15 the
/// first block's, 16–31 the second's): where the two are neighbours along `x` (the rows
/// of a uniform grid), the odd step's gathers across their shared face fall into sectors
/// that the same warp's own cells read. The last block of an odd count takes its own 64
/// items. Either way a bijection of `0..blocks · 4^D` onto the cells, so the results do
/// not depend on it.
#[inline(always)]
pub fn step_cell<D: Dim>(i: usize, blocks: usize, layered: bool) -> (usize, usize) {
    let m = D::BLOCK_CELLS;
    let pair = i / (2 * m);
    if !layered || D::D == 2 || 2 * pair + 1 >= blocks {
        return (i / m, i & (m - 1)); // m is a power of two: a shift and a mask
    }
    let j = i & (2 * m - 1);
    let (layer, lane) = (j >> 5, j & 31);
    (2 * pair + (lane >> 4), (layer << 4) | (lane & 15))
}

/// The most items of a step ([`Kernel::max_items`]): the cells of its `blocks` blocks,
/// and none at all if `blocks` claims more than `ids` holds, as [`step_cell`] would then
/// read past the ID set.
fn step_items<D: Dim>(l: &StreamArgs<impl Copy, impl Copy, Lens>) -> Option<usize> {
    let blocks = l.blocks as usize;
    Some(if blocks <= l.ids { blocks * D::BLOCK_CELLS } else { 0 })
}

/// Whether the step of lattice `L` with storage `S` gives each warp one cell layer of two
/// blocks ([`step_cell`]): where that measured faster on the uniform 256³ grid (H200,
/// BENCHMARKS.md, twenty-eighth session). D3Q27 with every storage (f32 +3.9 %, f64
/// +1.8 %, f16 +1.6 %: its odd step moves about a fifth fewer sectors per warp) and
/// D3Q19 with f64 (+0.7 %); not D3Q19 f32 (+0.3 %, within the spread) nor D3Q19 with
/// 16-bit storage (−12 %).
#[inline(always)]
pub fn layered_pairs<L: VelocitySet, F: Real, S: Storage<F>>() -> bool {
    <L::Dim as Dim>::D == 3 && (L::Q == 27 || S::BYTES == 8)
}

impl<F: Real, P> StreamArgs<F, P> {
    /// The pool and mesh arrays, the gradient LES fields and the profile table these
    /// arguments point to (what [`stream_collide`] takes).
    #[inline(always)]
    pub fn views(&self) -> (Field<P>, EddyField<F>, ProfileTable<F>) {
        (
            Field { f: self.f, nbr: self.nbr, onb: self.onb, solid: self.solid },
            EddyField { vel: self.vel, eddy: self.eddy, cell_mask: self.cell_mask },
            ProfileTable { slot: self.profile_slot, u: self.profile_u },
        )
    }
}

/// Whether the step of lattice `L` with storage `S`, even (`odd = false`) or odd, runs as
/// two launches: [`StreamCollideBulk`] over the level's ID set (its blocks without
/// boundary flags) and [`StreamCollide`] over the blocks with flags. Where that measured
/// faster (H200, BENCHMARKS.md, forty-fourth session; `--bulk-steps off|measured|all` of
/// one binary): with 16-bit storage, the D3Q19 odd step (95 registers instead of 128, no
/// spill; the uniform 256³ grid +7.6 % with BGK, +20 % with TRT; the 3D AMR cavity A3L
/// +0.5 %) and both D3Q27 steps (uniform +4.1 %). Not where it lost or gained nothing:
/// D3Q19 f32 (uniform ±0, A3L −4.1 %: its odd step is capped at 96 registers either
/// way, and the second launch costs), the D3Q19 f16 even step (−2 %), D3Q27 f32 (−5 %),
/// f64 (−0.2 to −1.7 %), D2Q9 f32 per cell (−1.4 %); nor D2Q9 with 16-bit storage (+4 %
/// per cell, not measured beside the paired even step its large levels take).
#[inline(always)]
pub fn bulk_faster<L: VelocitySet, F: Real, S: Storage<F>>(odd: bool) -> bool {
    match (<L::Dim as Dim>::D, L::Q, S::BYTES) {
        (3, 19, 2) => odd,
        (3, 27, 2) => true,
        _ => false,
    }
}

/// Cells of a level from which a step that [`bulk_faster`] names takes two launches when
/// some of its blocks have boundary flags (with none, the bulk kernel alone steps every
/// block at any size). Smaller levels are bound by launch latency, not by the step's
/// occupancy (thirty-third session), and keep one launch: the threshold of the two-cell
/// step ([`crate::pairs::PAIRED_MIN_CELLS`]), not measured on its own.
pub const BULK_MIN_CELLS: usize = crate::pairs::PAIRED_MIN_CELLS;

/// One fused collide-and-stream step over the cells of the blocks in an ID set with the
/// collision operator `C`: even (`ODD = false`) or odd AA step; with `GRAD` under a
/// gradient LES model (WALE, Vreman: [`crate::eddy`]); with `BULK` only the blocks
/// without boundary flags (the others are skipped). Launched as [`StreamCollide`],
/// [`StreamCollideGradient`] and [`StreamCollideBulk`].
pub struct Step<L, F, S, C, const ODD: bool, const GRAD: bool, const BULK: bool = false>(PhantomData<(L, F, S, C)>);

/// The plain step ([`Step`] without a gradient LES model).
pub type StreamCollide<L, F, S, C, const ODD: bool> = Step<L, F, S, C, ODD, false, false>;

/// The step under a gradient LES model, a kernel of its own so that the plain step keeps
/// its registers. The host launches it after [`crate::eddy::CellVelocity`] has written the
/// level's velocities.
pub type StreamCollideGradient<L, F, S, C, const ODD: bool> = Step<L, F, S, C, ODD, true, false>;

/// The plain step of the blocks without boundary flags ([`crate::stream::ONB_LINKS`],
/// [`crate::stream::ONB_SOLID`]): the other blocks of its ID set are skipped, for a
/// [`StreamCollide`] over a list of them ([`bulk_faster`]). Bitwise the plain step on
/// the blocks it steps.
pub type StreamCollideBulk<L, F, S, C, const ODD: bool> = Step<L, F, S, C, ODD, false, true>;

impl<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool, const GRAD: bool, const BULK: bool> Kernel
    for Step<L, F, S, C, ODD, GRAD, BULK>
{
    type Args = StreamArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &StreamArgs<F, S::Elem, Lens>) -> Option<usize> {
        step_items::<L::Dim>(l)
    }
    /// 2 cell-blocks in 3D, 8 in 2D: measured best on the H100 (BENCHMARKS.md).
    const THREADS: u32 = 128;

    #[inline(always)]
    unsafe fn run(i: usize, a: &StreamArgs<F, S::Elem>) {
        let (k, t) = step_cell::<L::Dim>(i, a.blocks as usize, layered_pairs::<L, F, S>());
        let b = *a.ids.add(k) as usize;
        let (fld, les, tab) = a.views();
        stream_collide::<L, F, S, C, ODD, GRAD, true, BULK>(&fld, &a.params, &les, &tab, b, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::{D2, D3};

    /// Every cell of every block is taken by exactly one item, whatever the number of
    /// blocks; in 3D each warp of a full pair holds one layer of both blocks.
    #[test]
    fn step_items_cover_every_cell_once() {
        fn check<D: Dim>() {
            let m = D::BLOCK_CELLS;
            for (blocks, layered) in (0..=7).flat_map(|b| [(b, false), (b, true)]) {
                let mut seen = [[false; 64]; 7];
                for i in 0..blocks * m {
                    let (k, t) = step_cell::<D>(i, blocks, layered);
                    assert!(k < blocks && t < m, "{} item {i} of {blocks}: ({k}, {t})", D::D);
                    assert!(!seen[k][t], "{} item {i} of {blocks}: ({k}, {t}) twice", D::D);
                    seen[k][t] = true;
                }
            }
        }
        check::<D2>();
        check::<D3>();
        // 3D, two full pairs: warp 5 is the second pair's layer z = 1.
        for lane in 0..32 {
            let (k, t) = step_cell::<D3>(5 * 32 + lane, 4, true);
            assert_eq!(step_cell::<D3>(5 * 32 + lane, 4, false), (2, 32 + lane));
            assert_eq!((k, t), (2 + lane / 16, 16 + lane % 16));
        }
        // The fifth block of five takes its own items, in order.
        assert_eq!(step_cell::<D3>(4 * 64 + 37, 5, true), (4, 37));
    }

    /// A launch may cover the cells of the blocks it names, and none if it names more
    /// blocks than its ID set holds (the mapping would read past it).
    #[test]
    fn step_items_are_bounded_by_the_id_set() {
        use crate::collision::Bgk;
        use crate::lattice::{D2Q9, D3Q27};
        use crate::storage::Native;
        let lens = |ids: usize, blocks: u32| StreamArgs::<f32, f32, Lens> {
            f: 0,
            nbr: 0,
            onb: 0,
            solid: 0,
            ids,
            params: StepParams::default(),
            vel: 0,
            eddy: 0,
            cell_mask: 0,
            profile_slot: 0,
            profile_u: 0,
            blocks,
        };
        type Odd27 = StreamCollide<D3Q27, f32, Native, Bgk, true>;
        type Even9 = StreamCollideGradient<D2Q9, f32, Native, Bgk, false>;
        assert_eq!(Odd27::max_items(&lens(5, 5)), Some(5 * 64));
        assert_eq!(Odd27::max_items(&lens(5, 3)), Some(3 * 64));
        assert_eq!(Odd27::max_items(&lens(5, 6)), Some(0));
        assert_eq!(Even9::max_items(&lens(7, 7)), Some(7 * 16));
        assert_eq!(Even9::max_items(&lens(7, 8)), Some(0));
    }
}

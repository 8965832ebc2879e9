//! The fused AA step with two cells per thread (issue "Performance to the limit", item 2:
//! more bytes per memory instruction).
//!
//! The step is latency-bound: a warp keeps too few bytes in flight for the copy bandwidth
//! (BENCHMARKS.md, eleventh and thirteenth sessions), above all with 16-bit storage, where
//! each load of [`crate::stream::StreamCollide`] brings 64 bytes per warp. Here a thread
//! takes the cells `t` and `t + 1` (`t` even: the same row of the block) and reads and
//! writes their two populations of a direction with one access of twice the width
//! wherever they lie side by side: every direction of the even step, and in the odd step
//! every direction without an `x` component, whose two neighbours are again side by side
//! in one block (the same link). The other directions are two accesses, as before.
//!
//! Each cell's arithmetic is [`crate::stream`]'s, in the same order, and every value is
//! stored with the same pool index as rounding salt ([`Storage::narrow`]): the pool is
//! bitwise that of [`crate::stream::StreamCollide`]. Blocks with boundary flags take the
//! per-cell path ([`stream_collide`]) for both cells.

use core::marker::PhantomData;

use crate::block::cell_coords;
use crate::collision::Collision;
use crate::eddy::EddyField;
use crate::lattice::{Dim, VelocitySet};
use crate::launch::Kernel;
use crate::memory::Lens;
use crate::profile::ProfileTable;
use crate::real::Real;
use crate::storage::Storage;
use crate::stream::{odd_links, pool_index, stream_collide, wrapped, Field, StepParams, StreamArgs};

/// Cells of a level from which [`measured_faster`] pairs them: between the two sizes
/// measured (BENCHMARKS.md, twenty-sixth session), the 2D AMR cavity's levels of at most
/// 76 k cells (25 % slower paired: latency-bound steps with half the threads, whose
/// blocks with boundary flags step their two cells one after the other) and the uniform
/// 2048² grid's 4.2 M (16 % faster).
pub const PAIRED_MIN_CELLS: usize = 1 << 20;

/// Whether two cells per thread ([`StreamCollidePairs`]) measured faster than one for
/// the even (`odd = false`) or odd AA step of a level of `cells` cells of lattice `L`
/// with storage `S`, on an H200 (BENCHMARKS.md, twenty-sixth and twenty-seventh
/// sessions): D2Q9 on levels of at least [`PAIRED_MIN_CELLS`] cells, the even step with
/// every storage, the odd one with native storage, for every collision operator (uniform
/// 2048² grid, both steps paired: f32 +16 % BGK, +17 % TRT, +12 % MRT, +17 % RR; f64
/// +3 to +10 %; 16-bit storage the even step alone: +6 % BGK), but not under the
/// Smagorinsky model (`smagorinsky`: [`crate::les::has_les`]), which pairing slows by 5
/// to 8 %. Not the 3D lattices: their uniform 256³ grids gain 0–3 % from the even step
/// and the 3D AMR cavity loses 5 %; their odd step needs 168–255 registers for two cells
/// and loses up to 6 % (D3Q27 f32: +0.4 %).
pub fn measured_faster<L: VelocitySet, F: Real, S: Storage<F>>(odd: bool, cells: usize, smagorinsky: bool) -> bool {
    <L::Dim as Dim>::D == 2
        && cells >= PAIRED_MIN_CELLS
        && !smagorinsky
        && (!odd || S::BYTES == core::mem::size_of::<F>())
}

/// Two adjacent pool elements read or written with one access of twice the width.
pub trait Paired: Copy {
    /// Reads `p[0]` and `p[1]`.
    ///
    /// # Safety
    /// `p` and `p + 1` in bounds; on the GPU `p` aligned to twice the element's size.
    unsafe fn load2(p: *const Self) -> (Self, Self);
    /// Writes `a` to `p[0]` and `b` to `p[1]`.
    ///
    /// # Safety
    /// As for [`Self::load2`].
    unsafe fn store2(p: *mut Self, a: Self, b: Self);
}

macro_rules! paired {
    ($t:ty, $two:ident, $align:literal) => {
        /// Two elements aligned to their joint size (one vector access on the GPU).
        #[repr(C, align($align))]
        #[derive(Clone, Copy)]
        struct $two([$t; 2]);

        impl Paired for $t {
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            unsafe fn load2(p: *const Self) -> (Self, Self) {
                // The host's pool is a `Vec` of the element: not aligned to the pair.
                #[cfg(not(target_arch = "nvptx64"))]
                let v = core::ptr::read_unaligned(p as *const $two);
                #[cfg(target_arch = "nvptx64")]
                let v = *(p as *const $two);
                (v.0[0], v.0[1])
            }
            #[cfg_attr(target_arch = "nvptx64", inline(always))]
            #[cfg_attr(not(target_arch = "nvptx64"), inline)]
            unsafe fn store2(p: *mut Self, a: Self, b: Self) {
                #[cfg(not(target_arch = "nvptx64"))]
                core::ptr::write_unaligned(p as *mut $two, $two([a, b]));
                #[cfg(target_arch = "nvptx64")]
                {
                    *(p as *mut $two) = $two([a, b]);
                }
            }
        }
    };
}

paired!(u16, TwoU16, 4);
paired!(f32, TwoF32, 8);
paired!(f64, TwoF64, 16);

/// Loads pool elements `k` and `k + 1` widened ([`Storage::widen`]).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn get2<F: Real, S: Storage<F>>(f: *const S::Elem, k: usize) -> (F, F) {
    let (a, b) = <S::Elem as Paired>::load2(f.add(k));
    (S::widen(a), S::widen(b))
}

/// Stores `a` at pool index `k` and `b` at `k + 1`, each rounded with its own index.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn put2<F: Real, S: Storage<F>>(f: *mut S::Elem, k: usize, a: F, b: F) {
    <S::Elem as Paired>::store2(f.add(k), S::narrow(a, k), S::narrow(b, k + 1));
}

/// Stores `x` at pool index `k` ([`crate::stream::put`]).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn put<F: Real, S: Storage<F>>(f: *mut S::Elem, k: usize, x: F) {
    *f.add(k) = S::narrow(x, k);
}

/// The odd step's links of cell `t0 + 1`: those of `t0` ([`odd_links`]) for directions
/// without an `x` component (the same neighbour block), resolved again for the others.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn second_links<L: VelocitySet, P>(fld: &Field<P>, b: usize, t0: usize, l0: &L::Pop<i32>) -> L::Pop<i32> {
    let mut l1 = *l0;
    let x1 = cell_coords(t0 + 1);
    let all = odd_links::<L, P>(fld, b, x1, false);
    L::unroll(
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        #[cfg_attr(not(target_arch = "nvptx64"), inline)]
        |i| {
            if L::C[i][0] != 0 {
                l1[i] = all[i];
            }
        },
    );
    l1
}

/// Pre-collision populations of cells `t0` and `t0 + 1` of a block without boundary
/// flags ([`crate::stream::load`] with `WALLS = false`).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn load_pair<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t0: usize,
    l0: &L::Pop<i32>,
    l1: &L::Pop<i32>,
) -> (L::Pop<F>, L::Pop<F>) {
    let x0 = cell_coords(t0);
    let x1 = cell_coords(t0 + 1);
    let mut h0 = L::Pop::<F>::default();
    let mut h1 = L::Pop::<F>::default();
    L::unroll(
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        #[cfg_attr(not(target_arch = "nvptx64"), inline)]
        |i| {
            let c = L::C[i];
            let back = [-c[0], -c[1], -c[2]];
            if !ODD || i == 0 {
                (h0[i], h1[i]) = get2::<F, S>(fld.f, pool_index::<L>(b, i, t0));
            } else if c[0] == 0 {
                // Slot ī of x − c_i for both cells: side by side in one block.
                (h0[i], h1[i]) =
                    get2::<F, S>(fld.f, pool_index::<L>(l0[i] as usize, L::opposite(i), wrapped(x0, back)));
            } else {
                let ib = L::opposite(i);
                h0[i] = S::widen(*fld.f.add(pool_index::<L>(l0[i] as usize, ib, wrapped(x0, back))));
                h1[i] = S::widen(*fld.f.add(pool_index::<L>(l1[i] as usize, ib, wrapped(x1, back))));
            }
        },
    );
    (h0, h1)
}

/// Writes the post-collision populations of cells `t0` and `t0 + 1` of a block without
/// boundary flags ([`crate::stream::store`] with `WALLS = false`).
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
unsafe fn store_pair<L: VelocitySet, F: Real, S: Storage<F>, const ODD: bool>(
    fld: &Field<S::Elem>,
    b: usize,
    t0: usize,
    (l0, l1): (&L::Pop<i32>, &L::Pop<i32>),
    h0: &L::Pop<F>,
    h1: &L::Pop<F>,
) {
    let x0 = cell_coords(t0);
    let x1 = cell_coords(t0 + 1);
    L::unroll(
        #[cfg_attr(target_arch = "nvptx64", inline(always))]
        #[cfg_attr(not(target_arch = "nvptx64"), inline)]
        |i| {
            let ib = L::opposite(i);
            let c = L::C[i];
            if !ODD || i == 0 {
                put2::<F, S>(fld.f, pool_index::<L>(b, ib, t0), h0[i], h1[i]);
            } else if c[0] == 0 {
                // Slot i of x + c_i = x − c_ī, through the link resolved for ī.
                put2::<F, S>(fld.f, pool_index::<L>(l0[ib] as usize, i, wrapped(x0, c)), h0[i], h1[i]);
            } else {
                put::<F, S>(fld.f, pool_index::<L>(l0[ib] as usize, i, wrapped(x0, c)), h0[i]);
                put::<F, S>(fld.f, pool_index::<L>(l1[ib] as usize, i, wrapped(x1, c)), h1[i]);
            }
        },
    );
}

/// One fused collide-and-stream step of cells `t0` and `t0 + 1` (`t0` even) of block `b`
/// ([`stream_collide`] for each, without a gradient LES model). As there, the even
/// step's own slots and the odd step's links are loaded before the block's flags.
///
/// It waits for the kernel before at the top of its entry, not after its mesh reads
/// ([`crate::launch::wait_for_prior_kernels`]): it runs on levels of a million cells and
/// more, where no kernel overlaps another's end, and the mesh reads before the wait
/// slowed the uniform 2048² grid (BENCHMARKS.md, thirtieth session: D2Q9 f32/f16 −2 to
/// −5 %).
///
/// # Safety
/// As for [`stream_collide`]; on the GPU the pool is aligned to twice its element.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline)]
pub unsafe fn stream_collide_pair<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    les: &EddyField<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t0: usize,
) {
    let none = L::Pop::<i32>::default();
    let (own0, own1) = if ODD {
        (L::Pop::<F>::default(), L::Pop::<F>::default())
    } else {
        load_pair::<L, F, S, false>(fld, b, t0, &none, &none)
    };
    let l0 = if ODD { odd_links::<L, _>(fld, b, cell_coords(t0), false) } else { none };
    let l1 = if ODD { second_links::<L, _>(fld, b, t0, &l0) } else { none };
    // Uniform across the cells of a block: no divergence on the GPU.
    if *fld.onb.add(b) == 0 {
        let (mut h0, mut h1) = if ODD { load_pair::<L, F, S, true>(fld, b, t0, &l0, &l1) } else { (own0, own1) };
        C::collide::<L, F>(&mut h0, p);
        C::collide::<L, F>(&mut h1, p);
        return store_pair::<L, F, S, ODD>(fld, b, t0, (&l0, &l1), &h0, &h1);
    }
    step_cell::<L, F, S, C, ODD>(fld, p, les, tab, b, t0);
    step_cell::<L, F, S, C, ODD>(fld, p, les, tab, b, t0 + 1);
}

// The per-cell path (blocks with boundary flags) is one copy out of line on the host,
// called twice: inlined twice, it made the pair kernels' host entry points the largest
// part of the kernels crate's host code and build time. Inlined on the GPU.

/// [`stream_collide`] of one of the pair's cells.
///
/// # Safety
/// As for [`stream_collide`].
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(never))]
unsafe fn step_cell<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool>(
    fld: &Field<S::Elem>,
    p: &StepParams<F>,
    les: &EddyField<F>,
    tab: &ProfileTable<F>,
    b: usize,
    t: usize,
) {
    stream_collide::<L, F, S, C, ODD, false, false, false>(fld, p, les, tab, b, t);
}

/// [`crate::stream::StreamCollide`] with two cells per item ([`stream_collide_pair`]):
/// item `i` is cells `2 (i mod 4^D/2)` and the next of block `ids[i / (4^D/2)]`.
pub struct StreamCollidePairs<L, F, S, C, const ODD: bool>(PhantomData<(L, F, S, C)>);

impl<L: VelocitySet, F: Real, S: Storage<F>, C: Collision, const ODD: bool> Kernel
    for StreamCollidePairs<L, F, S, C, ODD>
{
    type Args = StreamArgs<F, S::Elem>;
    const WRITES_MESH: bool = false;

    fn max_items(l: &StreamArgs<F, S::Elem, Lens>) -> Option<usize> {
        Some(l.ids * (<L::Dim as Dim>::BLOCK_CELLS / 2))
    }
    const THREADS: u32 = 128;

    #[cfg_attr(target_arch = "nvptx64", inline(always))]
    #[cfg_attr(not(target_arch = "nvptx64"), inline)]
    unsafe fn run(i: usize, a: &StreamArgs<F, S::Elem>) {
        let half = <L::Dim as Dim>::BLOCK_CELLS / 2;
        let b = *a.ids.add(i / half) as usize;
        let (fld, les, tab) = a.views();
        stream_collide_pair::<L, F, S, C, ODD>(&fld, &a.params, &les, &tab, b, 2 * (i % half));
    }
}

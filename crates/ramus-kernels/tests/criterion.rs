//! The cooperative vorticity criterion (the code of the CUDA entries, run here on an
//! emulated CTA: 128 host threads, a barrier for `__syncthreads`, a shared array) writes
//! the same marks as the serial CPU kernel, in both AA layouts, on a grid of blocks with
//! walls, periodic links and a block that is not a leaf, its blocks on two levels of one
//! launch.

use ramus_kernels::amr::level_sets::LevelSets;
use ramus_kernels::amr::{status, MARK_COARSEN, MARK_NONE, MARK_REFINE, MAX_LEVELS};
use ramus_kernels::block::{boundary_link, face, link_offset};
use ramus_kernels::collide::{equilibrium_dir, usq_term};
use ramus_kernels::criterion::{
    vorticity_mark_cooperative, CriterionArgs, VorticityMarkSerial, CRITERION_CTA, CRITERION_SHARED_BYTES,
};
use ramus_kernels::emulate::run_ctas;
use ramus_kernels::launch::Kernel;
use ramus_kernels::memory::Raw;
use ramus_kernels::stream::pool_index;
use ramus_kernels::{Dim, Native, VelocitySet, D2Q9, D3Q19, D3Q27};

/// Blocks per axis.
const B: usize = 3;
/// Untouched-mark sentinel.
const UNSET: i32 = 77;

/// A `B^D` grid of blocks, periodic in x (and z), with walls on the y faces when `walls`
/// (else periodic there too); equilibrium populations of a sine velocity field.
struct Grid {
    f: Vec<f64>,
    nbr: Vec<i32>,
    onb: Vec<u32>,
    status: Vec<i32>,
    n: usize,
}

fn grid<L: VelocitySet>(walls: bool) -> Grid {
    let d = <L::Dim as Dim>::D;
    let nb = <L::Dim as Dim>::NEIGHBORS;
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let n = B.pow(d as u32);
    let pos = |b: usize| [b % B, (b / B) % B, b / (B * B)];
    let mut nbr = vec![0; n * nb];
    for b in 0..n {
        for k in 0..nb {
            let o = link_offset(k, d);
            let p = pos(b);
            let mut q = [0usize; 3];
            let mut wall = 0u32;
            for a in 0..d {
                let c = p[a] as i32 + o[a];
                if walls && a == 1 && !(0..B as i32).contains(&c) {
                    wall |= 1 << face(a, c >= B as i32);
                }
                q[a] = c.rem_euclid(B as i32) as usize;
            }
            nbr[b * nb + k] = if wall != 0 { boundary_link(wall) } else { (q[0] + B * q[1] + B * B * q[2]) as i32 };
        }
    }
    let onb = nbr.chunks(nb).map(|l| l.iter().any(|&v| v < 0) as u32).collect();
    let mut status = vec![status::UNREFINED; n];
    status[4] = status::REFINED;
    let mut f = vec![0.0; n * L::Q * m];
    let side = (4 * B) as f64;
    for b in 0..n {
        let amp = 0.05;
        for t in 0..m {
            let x = [4 * pos(b)[0] + (t & 3), 4 * pos(b)[1] + ((t >> 2) & 3), 4 * pos(b)[2] + (t >> 4)];
            let s = |a: usize| (2.0 * std::f64::consts::PI * (x[a] as f64 + 0.5) / side).sin();
            let u = [amp * s(1), amp * s(2), if d == 3 { amp * s(0) } else { 0.0 }];
            let usq = usq_term(u);
            for i in 0..L::Q {
                f[pool_index::<L>(b, i, t)] = equilibrium_dir::<L, f64>(i, 1.0, u, usq);
            }
        }
    }
    Grid { f, nbr, onb, status, n }
}

/// The blocks `list` as the sets of two levels: the first `split` on level 2, the rest on
/// level 3 (the others empty), so that one launch covers blocks of two levels. With
/// `max_levels = 4` the rule's marks differ between them (level 3 cannot refine; below
/// the finest level a level's marks would not change with it, the desired level moving
/// with the scale `2^l`).
fn sets(list: &[u32], split: usize) -> LevelSets<Raw> {
    let mut start = [list.len() as u32; MAX_LEVELS + 1];
    (start[0], start[1], start[2], start[3]) = (0, 0, 0, split as u32);
    let none = std::ptr::null();
    LevelSets {
        set0: none,
        set1: none,
        set2: list.as_ptr(),
        set3: list[split..].as_ptr(),
        set4: none,
        set5: none,
        set6: none,
        set7: none,
        set8: none,
        set9: none,
        set10: none,
        set11: none,
        start,
    }
}

fn args<F>(g: &mut Grid, f: *mut F, mark: &mut [i32], length: F, sets: LevelSets<Raw>) -> CriterionArgs<F, F> {
    CriterionArgs {
        f,
        nbr: g.nbr.as_ptr(),
        onb: g.onb.as_ptr(),
        solid: std::ptr::null(),
        sets,
        status: g.status.as_ptr(),
        mark: mark.as_mut_ptr(),
        length,
        max_levels: 4,
        n_start: -3.0,
        n_inc: 1.0,
    }
}

fn check<L: VelocitySet, const ODD: bool>(walls: bool) {
    let mut g = grid::<L>(walls);
    let list: Vec<u32> = (0..g.n as u32).collect();
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let mut seen = [false; 3];
    let mut differ = false;
    // Reference lengths over several powers of two: blocks cross the thresholds.
    for k in (-16..4).step_by(2) {
        let scale = (4 * B) as f64 * 2f64.powf(k as f64 * 0.5);
        for single in [false, true] {
            let mut f32s: Vec<f32> = g.f.iter().map(|&x| x as f32).collect();
            let half = g.n / 2;
            let mut serial = vec![UNSET; g.n];
            let mut coop = vec![UNSET; g.n];
            // Every block on level 2, every block on level 3 (serial): what each half of
            // the two-level launches must reproduce.
            let mut on1 = vec![UNSET; g.n];
            let mut on2 = vec![UNSET; g.n];
            let runs =
                [(&mut serial, false, half), (&mut coop, true, half), (&mut on1, false, g.n), (&mut on2, false, 0)];
            for (marks, cooperative, split) in runs {
                macro_rules! go {
                    ($f:expr, $s:expr) => {{
                        let a = args(&mut g, $f, marks, $s, sets(&list, split));
                        if cooperative {
                            run_cooperative::<L, _, ODD>(&a, g.n * m);
                        } else {
                            for i in 0..g.n {
                                // SAFETY: arrays for `n` blocks.
                                unsafe { VorticityMarkSerial::<L, _, Native, ODD>::run(i, &a) };
                            }
                        }
                    }};
                }
                if single {
                    go!(f32s.as_mut_ptr(), scale as f32)
                } else {
                    let p = g.f.as_mut_ptr();
                    go!(p, scale)
                }
            }
            assert_eq!(serial, coop, "{} ODD = {ODD} walls = {walls} f32 = {single} scale = {scale}", L::NAME);
            assert_eq!(serial[4], UNSET, "a block that is not a leaf got a mark");
            assert_eq!((&serial[..half], &serial[half..]), (&on1[..half], &on2[half..]), "levels of one launch");
            differ |= on1 != on2;
            for (s, kind) in seen.iter_mut().zip([MARK_REFINE, MARK_NONE, MARK_COARSEN]) {
                *s |= serial.contains(&kind);
            }
        }
    }
    assert_eq!(seen, [true; 3], "{}: every kind of mark occurs at some scale", L::NAME);
    assert!(differ, "{}: the level changes some mark at some scale", L::NAME);
}

/// Runs the cooperative kernel over `items` cells, CTA by CTA, with garbage in shared memory.
fn run_cooperative<L: VelocitySet, F: ramus_kernels::Real, const ODD: bool>(a: &CriterionArgs<F, F>, items: usize)
where
    CriterionArgs<F, F>: Sync,
{
    let (threads, words) = (CRITERION_CTA as usize, CRITERION_SHARED_BYTES as usize / 8);
    run_ctas(threads, words, items.div_ceil(threads), |cta| {
        // SAFETY: the CTA size, the shared size, arrays for the listed blocks.
        unsafe { vorticity_mark_cooperative::<_, L, F, Native, ODD>(cta, a) };
    });
}

#[test]
fn cooperative_criterion_matches_serial() {
    check::<D2Q9, false>(true);
    check::<D2Q9, true>(false);
    check::<D3Q19, false>(true);
    check::<D3Q19, true>(false);
    check::<D3Q27, false>(true);
}

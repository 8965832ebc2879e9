//! `store_cell` is the inverse of `load_cell` in both AA layouts, and touches only the
//! locations that cell's `load_cell` reads.

use ramus_kernels::block::{boundary_link, face, link_index, link_offset};
use ramus_kernels::stream::{load_cell, store_cell, Field, ONB_SOLID};
use ramus_kernels::{Dim, Native, VelocitySet, D2Q9, D3Q19, D3Q27};

/// A 2×2(×2) block grid, periodic in x, walls elsewhere (moving y_max wall), links built
/// by hand.
fn links<D: Dim>() -> (Vec<i32>, Vec<u32>, usize) {
    let n = if D::D == 3 { 8 } else { 4 };
    let pos = |b: usize| [b & 1, (b >> 1) & 1, b >> 2];
    let mut links = vec![0; n * D::NEIGHBORS];
    for b in 0..n {
        for k in 0..D::NEIGHBORS {
            let o = link_offset(k, D::D);
            let p = pos(b);
            let mut q = [0i32; 3];
            let mut walls = 0u32;
            for a in 0..3 {
                let c = p[a] as i32 + o[a];
                q[a] = if a == 0 {
                    c.rem_euclid(2)
                } else if a < D::D && !(0..2).contains(&c) {
                    walls |= 1 << face(a, c >= 2);
                    0
                } else {
                    c
                };
            }
            links[b * D::NEIGHBORS + k] = if walls != 0 { boundary_link(walls) } else { q[0] + 2 * q[1] + 4 * q[2] };
        }
        assert_eq!(links[b * D::NEIGHBORS + link_index([0; 3], D::D)], b as i32);
    }
    let onb = links.chunks(D::NEIGHBORS).map(|l| l.iter().any(|&v| v < 0) as u32).collect();
    (links, onb, n)
}

/// With `solids`, every block is flagged [`ONB_SOLID`] and a fixed pseudo-random third of
/// the cells is solid: store_cell leaves solid cells alone, load_cell gives them the rest
/// state, and fluid cells next to them read and write their own slots.
fn check<L: VelocitySet>(solids: bool) {
    let (nbr, mut onb, n) = links::<L::Dim>();
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let solid: Vec<u64> =
        (0..n as u64).map(|b| if solids { 0x9249_2492_4924_9249u64.rotate_left(b as u32) } else { 0 }).collect();
    if solids {
        onb.iter_mut().for_each(|f| *f |= ONB_SOLID);
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    for odd in [false, true] {
        for b in 0..n {
            for t in (0..m).step_by(3) {
                let mut f: Vec<f64> = (0..n * L::Q * m).map(|_| rand()).collect();
                let before = f.clone();
                let mut h = L::Pop::<f64>::default();
                for i in 0..L::Q {
                    h[i] = rand();
                }
                let fld = Field { f: f.as_mut_ptr(), nbr: nbr.as_ptr(), onb: onb.as_ptr(), solid: solid.as_ptr() };
                let is_solid = (solid[b] >> t) & 1 != 0;
                // SAFETY: the pool holds all `n` blocks, the links point into it.
                let got = unsafe {
                    if odd {
                        store_cell::<L, f64, Native, true>(&fld, b, t, &h);
                        load_cell::<L, f64, Native, true>(&fld, b, t)
                    } else {
                        store_cell::<L, f64, Native, false>(&fld, b, t, &h);
                        load_cell::<L, f64, Native, false>(&fld, b, t)
                    }
                };
                let changed = f.iter().zip(&before).filter(|(a, b)| a != b).count();
                if is_solid {
                    assert_eq!(changed, 0, "{} solid cell written", L::NAME);
                    assert!((0..L::Q).all(|i| got[i] == 0.0), "{} solid cell not at rest", L::NAME);
                    continue;
                }
                for i in 0..L::Q {
                    assert!((got[i] - h[i]).abs() <= 1e-15, "{} odd={odd} b={b} t={t} i={i}", L::NAME);
                }
                // Exactly Q locations changed: the ones this cell's load reads.
                assert_eq!(changed, L::Q, "{} odd={odd} b={b} t={t}", L::NAME);
            }
        }
    }
}

#[test]
fn store_cell_inverts_load_cell() {
    for solids in [false, true] {
        check::<D2Q9>(solids);
        check::<D3Q19>(solids);
        check::<D3Q27>(solids);
    }
}

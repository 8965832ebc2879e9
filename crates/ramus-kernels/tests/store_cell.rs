//! `store_cell` is the inverse of `load_cell` in both AA layouts, and touches only the
//! locations that cell's `load_cell` reads.

use ramus_kernels::block::{boundary_link, face, link_index, link_offset};
use ramus_kernels::stream::{load_cell, store_cell, Field, StepParams};
use ramus_kernels::{Dim, VelocitySet, D2Q9, D3Q19, D3Q27};

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
            links[b * D::NEIGHBORS + k] =
                if walls != 0 { boundary_link(walls) } else { (q[0] + 2 * q[1] + 4 * q[2]) as i32 };
        }
        assert_eq!(links[b * D::NEIGHBORS + link_index([0; 3], D::D)], b as i32);
    }
    let onb = links.chunks(D::NEIGHBORS).map(|l| l.iter().any(|&v| v < 0) as u32).collect();
    (links, onb, n)
}

fn check<L: VelocitySet>() {
    let (nbr, onb, n) = links::<L::Dim>();
    let m = <L::Dim as Dim>::BLOCK_CELLS;
    let mut params = StepParams::<f64> { omega: 1.0, wall_u: [[0.0; 3]; 6] };
    params.wall_u[3] = [0.05, 0.0, 0.01];
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
                let fld = Field { f: f.as_mut_ptr(), nbr: nbr.as_ptr(), onb: onb.as_ptr() };
                // SAFETY: the pool holds all `n` blocks, the links point into it.
                let got = unsafe {
                    if odd {
                        store_cell::<L, f64, true>(&fld, &params, b, t, &h);
                        load_cell::<L, f64, true>(&fld, &params, b, t)
                    } else {
                        store_cell::<L, f64, false>(&fld, &params, b, t, &h);
                        load_cell::<L, f64, false>(&fld, &params, b, t)
                    }
                };
                for i in 0..L::Q {
                    assert!((got[i] - h[i]).abs() <= 1e-15, "{} odd={odd} b={b} t={t} i={i}", L::NAME);
                }
                // Exactly Q locations changed: the ones this cell's load reads.
                let changed = f.iter().zip(&before).filter(|(a, b)| a != b).count();
                assert_eq!(changed, L::Q, "{} odd={odd} b={b} t={t}", L::NAME);
            }
        }
    }
}

#[test]
fn store_cell_inverts_load_cell() {
    check::<D2Q9>();
    check::<D3Q19>();
    check::<D3Q27>();
}

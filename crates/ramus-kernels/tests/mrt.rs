//! The MRT operator (`ramus_kernels::mrt`): conservation, the BGK and TRT limits, each
//! moment group relaxing at its own rate, Guo's body force, LES, the per-group
//! rescaling of grid transfers, and (D2Q9) agreement with the textbook matrix form
//! `f ← f − M⁻¹ S M (f − f^eq)` (d'Humières 1992; Lallemand & Luo, Phys. Rev. E 61
//! (2000) 6546) in the weighted-orthogonal Hermite basis. Tolerances: round-off of
//! `f64` sums of ~30 terms of size ≤ 1e-2 (1e-15 absolute), and 1e-16 for quantities
//! of size ≤ 1e-3.

// Index loops over axes and directions, as in the formulas.
#![allow(clippy::needless_range_loop)]

use ramus_kernels::collide::{bgk, equilibrium, moments};
use ramus_kernels::collision::{trt, Bgk, Collision, Trt};
use ramus_kernels::les::{les_rates, les_tau};
use ramus_kernels::mrt::{les_odd_tau, mrt, scale_neq_mrt, Mrt, Rates};
use ramus_kernels::stream::StepParams;
use ramus_kernels::{VelocitySet, D2Q9, D3Q19, D3Q27};

/// An equilibrium plus a deterministic perturbation in every moment group.
fn sample<L: VelocitySet>() -> L::Pop<f64> {
    let mut h = equilibrium::<L, f64>(1.02, [0.04, -0.03, if L::Q == 9 { 0.0 } else { 0.02 }]);
    for i in 0..L::Q {
        h[i] += 1e-3 * ((i * 7 % 11) as f64 - 5.0) * L::W[i];
    }
    h
}

fn opp(i: usize) -> usize {
    if i == 0 {
        0
    } else if i % 2 == 1 {
        i + 1
    } else {
        i - 1
    }
}

/// The groups of a massless non-equilibrium part `n`, computed directly from their
/// definitions: the deviatoric second moment, the trace, the even ghosts `n⁺ − P₂ n`
/// (with `P₂ n = w (c c − I/3):Π 9/2`, the weighted projection on the second-order
/// Hermite polynomials) and the odd part (its first moment is zero here, so all ghosts).
struct Groups {
    dev: [[f64; 3]; 3],
    trace: f64,
    even: Vec<f64>,
    odd: Vec<f64>,
}

fn groups<L: VelocitySet>(n: &[f64]) -> Groups {
    let d = if L::Q == 9 { 2.0 } else { 3.0 };
    let mut pi = [[0.0; 3]; 3];
    for (c, &v) in L::C.iter().zip(n) {
        for a in 0..3 {
            for b in 0..3 {
                pi[a][b] += (c[a] * c[b]) as f64 * v;
            }
        }
    }
    let trace = pi[0][0] + pi[1][1] + pi[2][2];
    let mut dev = pi;
    for a in 0..3 {
        dev[a][a] -= if (a as f64) < d { trace / d } else { 0.0 };
    }
    let (mut even, mut odd) = (vec![0.0; L::Q], vec![0.0; L::Q]);
    for i in 0..L::Q {
        let c = L::C[i].map(f64::from);
        let mut cpc = 0.0;
        for a in 0..3 {
            for b in 0..3 {
                cpc += c[a] * c[b] * pi[a][b];
            }
        }
        let p2 = L::W[i] * 4.5 * (cpc - trace / 3.0);
        even[i] = 0.5 * (n[i] + n[opp(i)]) - p2;
        odd[i] = 0.5 * (n[i] - n[opp(i)]);
    }
    Groups { dev, trace, even, odd }
}

fn neq<L: VelocitySet>(h: &L::Pop<f64>, heq: &L::Pop<f64>) -> Vec<f64> {
    (0..L::Q).map(|i| h[i] - heq[i]).collect()
}

/// Conservation, the relaxation of every group at its own rate, and the BGK and TRT
/// limits.
fn relaxation<L: VelocitySet>() {
    let name = L::NAME;
    let h0 = sample::<L>();
    let (rho0, u0) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho0, u0);
    let r = Rates { shear: 1.0 / 0.8, bulk: 1.19, odd: 1.2, even: 1.4 };
    let mut h = h0;
    let (rho, u) = mrt::<L, f64, false>(&mut h, r, [0.0; 3]);
    assert_eq!((rho, u), (rho0, u0), "{name}: returns the pre-collision moments");
    let (rho1, u1) = moments::<L, f64>(&h);
    assert!((rho1 - rho0).abs() <= 1e-15, "{name}: mass {rho1} vs {rho0}");
    for a in 0..3 {
        assert!((u1[a] - u0[a]).abs() <= 1e-15, "{name}: momentum {a}: {} vs {}", u1[a], u0[a]);
    }
    let (b, a) = (groups::<L>(&neq::<L>(&h0, &heq)), groups::<L>(&neq::<L>(&h, &heq)));
    assert!(b.trace.abs() > 1e-4, "{name}: the sample has a bulk part");
    assert!((a.trace - (1.0 - r.bulk) * b.trace).abs() <= 1e-16, "{name}: trace {} vs {}", a.trace, b.trace);
    for x in 0..3 {
        for y in 0..3 {
            let want = (1.0 - r.shear) * b.dev[x][y];
            assert!((a.dev[x][y] - want).abs() <= 1e-16, "{name}: Π_dev {x}{y}: {} vs {want}", a.dev[x][y]);
        }
    }
    let size = |v: &[f64]| v.iter().map(|x| x.abs()).fold(0.0, f64::max);
    assert!(size(&b.even) > 1e-5 && size(&b.odd) > 1e-5, "{name}: the sample has ghosts of both parities");
    for i in 0..L::Q {
        let (we, wo) = ((1.0 - r.even) * b.even[i], (1.0 - r.odd) * b.odd[i]);
        assert!((a.even[i] - we).abs() <= 1e-16, "{name}: even ghost {i}: {} vs {we}", a.even[i]);
        assert!((a.odd[i] - wo).abs() <= 1e-16, "{name}: odd ghost {i}: {} vs {wo}", a.odd[i]);
    }
    // Every rate ω: BGK; bulk and even ghosts at ω, odd at ω⁻: TRT (to round-off).
    let w = r.shear;
    let (mut x, mut y) = (h0, h0);
    mrt::<L, f64, false>(&mut x, Rates { shear: w, bulk: w, odd: w, even: w }, [0.0; 3]);
    bgk::<L, f64>(&mut y, w);
    for i in 0..L::Q {
        assert!((x[i] - y[i]).abs() <= 1e-16, "{name}: MRT(ω, ω, ω, ω) vs BGK at {i}: {} vs {}", x[i], y[i]);
    }
    let (mut x, mut y) = (h0, h0);
    mrt::<L, f64, false>(&mut x, Rates { shear: w, bulk: w, odd: 1.0 / 1.3, even: w }, [0.0; 3]);
    trt::<L, f64>(&mut y, w, 1.0 / 1.3);
    for i in 0..L::Q {
        assert!((x[i] - y[i]).abs() <= 1e-16, "{name}: MRT vs TRT at {i}: {} vs {}", x[i], y[i]);
    }
}

#[test]
fn mrt_conserves_and_relaxes_each_group_at_its_rate() {
    relaxation::<D2Q9>();
    relaxation::<D3Q19>();
    relaxation::<D3Q27>();
}

/// Guo's body force with MRT (Guo & Zheng, Int. J. Comput. Fluid Dyn. 22 (2008) 465):
/// mass conserved, the momentum `Σ h c` gains exactly `F`, the returned velocity is
/// `u + F/(2ρ)`; with every rate equal it is forced BGK, with TRT's rates forced TRT; the
/// second moment gains `(1 − ω/2)` of the source's deviatoric part and `(1 − ω_b/2)` of
/// its trace `2 u·F`.
fn forced<L: VelocitySet>() {
    let name = L::NAME;
    let force = [2e-4, -1e-4, if L::Q == 9 { 0.0 } else { 3e-4 }];
    let h0 = sample::<L>();
    let (rho0, u_raw) = moments::<L, f64>(&h0);
    let p = StepParams::<f64> {
        omega: 1.0 / 0.8,
        omega_minus: 1.2,
        omega_bulk: 1.19,
        omega_even: 1.4,
        force,
        ..Default::default()
    };
    let mut h = h0;
    let (rho, u) = Mrt::collide::<L, f64>(&mut h, &p);
    assert_eq!(rho, rho0, "{name}");
    for a in 0..3 {
        let want = u_raw[a] + 0.5 * force[a] / rho0;
        assert!((u[a] - want).abs() <= 1e-16, "{name}: returned u_{a} {} vs {want}", u[a]);
    }
    let (rho1, u1) = moments::<L, f64>(&h);
    assert!((rho1 - rho0).abs() <= 1e-15, "{name}: mass {rho1} vs {rho0}");
    for a in 0..3 {
        let gained = rho1 * u1[a] - rho0 * u_raw[a];
        assert!((gained - force[a]).abs() <= 1e-15, "{name}: momentum gain {gained} vs F = {}", force[a]);
    }
    // The trace of Π about the forced equilibrium: (1 − ω_b) tr Π + (1 − ω_b/2) 2 u·F.
    let heq = equilibrium::<L, f64>(rho, u);
    let (b, a) = (groups::<L>(&neq::<L>(&h0, &heq)), groups::<L>(&neq::<L>(&h, &heq)));
    let uf = u[0] * force[0] + u[1] * force[1] + u[2] * force[2];
    let want = (1.0 - p.omega_bulk) * b.trace + (1.0 - 0.5 * p.omega_bulk) * 2.0 * uf;
    assert!((a.trace - want).abs() <= 1e-16, "{name}: forced trace {} vs {want}", a.trace);
    // BGK and TRT limits.
    let w = p.omega;
    for (kind, wm) in [("bgk", w), ("trt", 1.0 / 1.3)] {
        let q = StepParams::<f64> { omega_minus: wm, omega_bulk: w, omega_even: w, ..p };
        let (mut x, mut y) = (h0, h0);
        Mrt::collide::<L, f64>(&mut x, &q);
        if kind == "bgk" {
            Bgk::collide::<L, f64>(&mut y, &q);
        } else {
            Trt::collide::<L, f64>(&mut y, &q);
        }
        for i in 0..L::Q {
            assert!((x[i] - y[i]).abs() <= 1e-16, "{name}: forced MRT vs {kind} at {i}: {} vs {}", x[i], y[i]);
        }
    }
}

#[test]
fn mrt_guo_forcing_adds_the_force() {
    forced::<D2Q9>();
    forced::<D3Q19>();
    forced::<D3Q27>();
}

/// LES: the shear rate is the cell's Smagorinsky rate (`les_tau`, the rate of
/// `les_rates`), the odd ghosts keep the level's `(τ_o − ½)/(τ₀ − ½)` per cell, the bulk
/// and even ghosts the level's rates.
fn les<L: VelocitySet>() {
    let h0 = sample::<L>();
    let p = StepParams::<f64> {
        omega: 1.0 / 0.56,
        omega_minus: 1.2,
        omega_bulk: 1.19,
        omega_even: 1.4,
        smagorinsky: 0.17 * 0.17,
        ..Default::default()
    };
    let shear = les_rates::<L, f64>(&h0, &p).0;
    let tau = les_tau::<L, f64>(&h0, &p);
    assert_eq!(shear, 1.0 / tau);
    assert!(shear < p.omega, "{}: the eddy viscosity lowers the shear rate", L::NAME);
    let tau_odd = 0.5 + (1.0 / 1.2 - 0.5) * (tau - 0.5) / (0.56 - 0.5);
    let odd = 1.0 / tau_odd;
    assert!((odd - 1.0 / les_odd_tau(tau, 0.56, 1.0 / 1.2)).abs() <= 1e-15, "{}: odd rate", L::NAME);
    let (mut x, mut y) = (h0, h0);
    Mrt::collide::<L, f64>(&mut x, &p);
    let odd = 1.0 / les_odd_tau(tau, 1.0 / p.omega, 1.0 / p.omega_minus);
    mrt::<L, f64, false>(&mut y, Rates { shear, bulk: 1.19, odd, even: 1.4 }, [0.0; 3]);
    assert!((0..L::Q).all(|i| x[i].to_bits() == y[i].to_bits()), "{}: LES shear and odd rates", L::NAME);
}

#[test]
fn mrt_smagorinsky_sets_the_shear_and_odd_rates() {
    les::<D2Q9>();
    les::<D3Q19>();
    les::<D3Q27>();
}

/// The per-group rescaling of grid transfers: each group by its own factor; equal
/// factors are the plain product (to round-off).
fn rescaling<L: VelocitySet>() {
    let name = L::NAME;
    let h0 = sample::<L>();
    let (rho, u) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho, u);
    let n0 = neq::<L>(&h0, &heq);
    let mut p = L::Pop::<f64>::default();
    p.as_mut().copy_from_slice(&n0);
    let f = Rates { shear: 0.7, bulk: 0.9, odd: 0.55, even: 0.5 };
    scale_neq_mrt::<L, f64>(&mut p, f);
    let (b, a) = (groups::<L>(&n0), groups::<L>(p.as_ref()));
    assert!((a.trace - f.bulk * b.trace).abs() <= 1e-17, "{name}: trace");
    for x in 0..3 {
        for y in 0..3 {
            assert!((a.dev[x][y] - f.shear * b.dev[x][y]).abs() <= 1e-17, "{name}: Π_dev {x}{y}");
        }
    }
    for i in 0..L::Q {
        assert!((a.even[i] - f.even * b.even[i]).abs() <= 1e-17, "{name}: even ghost {i}");
        assert!((a.odd[i] - f.odd * b.odd[i]).abs() <= 1e-17, "{name}: odd ghost {i}");
    }
    let mut p = L::Pop::<f64>::default();
    p.as_mut().copy_from_slice(&n0);
    scale_neq_mrt::<L, f64>(&mut p, Rates { shear: 0.7, bulk: 0.7, odd: 0.7, even: 0.7 });
    for i in 0..L::Q {
        assert!((p[i] - 0.7 * n0[i]).abs() <= 1e-18, "{name}: equal factors at {i}");
    }
}

#[test]
fn mrt_rescales_each_group_by_its_factor() {
    rescaling::<D2Q9>();
    rescaling::<D3Q19>();
    rescaling::<D3Q27>();
}

/// D2Q9 against the matrix form `h ← h − M⁻¹ S M (h − h^eq)` with the weighted-orthogonal
/// Hermite basis written out: `1, c_x, c_y, c_x² − c_y², c_x c_y, c² − 2/3, (c_x² − 1/3)
/// c_y, (c_y² − 1/3) c_x, (c_x² − 1/3)(c_y² − 1/3)` and `S = diag(0, 0, 0, ω, ω, ω_b,
/// ω_o, ω_o, ω_e)`; `M⁻¹` by Gauss–Jordan elimination.
#[test]
fn mrt_d2q9_matches_the_matrix_form() {
    type L = D2Q9;
    let h0 = sample::<L>();
    let (rho, u) = moments::<L, f64>(&h0);
    let heq = equilibrium::<L, f64>(rho, u);
    let r = Rates { shear: 1.0 / 0.52, bulk: 1.19, odd: 1.2, even: 1.4 };
    let phi = |c: [i32; 3]| {
        let (x, y) = (c[0] as f64, c[1] as f64);
        let t = 1.0 / 3.0;
        [
            1.0,
            x,
            y,
            x * x - y * y,
            x * y,
            x * x + y * y - 2.0 * t,
            (x * x - t) * y,
            (y * y - t) * x,
            (x * x - t) * (y * y - t),
        ]
    };
    let s = [0.0, 0.0, 0.0, r.shear, r.shear, r.bulk, r.odd, r.odd, r.even];
    let mut m = [[0.0; 9]; 9];
    for i in 0..9 {
        let row = phi(L::C[i]);
        for k in 0..9 {
            m[k][i] = row[k];
        }
    }
    // Gauss–Jordan inverse of M.
    let mut a = m;
    let mut inv = [[0.0; 9]; 9];
    for (k, row) in inv.iter_mut().enumerate() {
        row[k] = 1.0;
    }
    for col in 0..9 {
        let piv = (col..9).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs())).unwrap();
        a.swap(col, piv);
        inv.swap(col, piv);
        let d = a[col][col];
        for k in 0..9 {
            a[col][k] /= d;
            inv[col][k] /= d;
        }
        for row in 0..9 {
            if row != col {
                let f = a[row][col];
                for k in 0..9 {
                    a[row][k] -= f * a[col][k];
                    inv[row][k] -= f * inv[col][k];
                }
            }
        }
    }
    let n: Vec<f64> = (0..9).map(|i| h0[i] - heq[i]).collect();
    let mn: Vec<f64> = (0..9).map(|k| s[k] * (0..9).map(|i| m[k][i] * n[i]).sum::<f64>()).collect();
    let mut h = h0;
    mrt::<L, f64, false>(&mut h, r, [0.0; 3]);
    for i in 0..9 {
        let want = h0[i] - (0..9).map(|k| inv[i][k] * mn[k]).sum::<f64>();
        assert!((h[i] - want).abs() <= 1e-15, "direction {i}: {} vs the matrix form {want}", h[i]);
    }
}

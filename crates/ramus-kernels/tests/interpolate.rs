//! Grid communication (paper, section "Grid Communication"): rescaling, linear and cubic
//! interpolation, averaging, and the kernels that apply them to a pool.

#![allow(clippy::needless_range_loop)] // index loops mirror the cell/child numbering

use ramus_kernels::amr::{child_position, status, CELL_GHOST, CELL_INTERFACE, CELL_INTERIOR, MARK_COARSEN, MARK_NONE};
use ramus_kernels::average::{average, average_eddy, covering_child, AverageToParents};
use ramus_kernels::average::{AVERAGE_COARSENING, AVERAGE_INTERFACE, AVERAGE_NOT_GHOST};
use ramus_kernels::block::{cell_coords, link_index, link_offset, N_SKIP};
use ramus_kernels::collide::moments;
use ramus_kernels::interpolate::{
    coarse_to_fine_factor, fine_tau, fine_to_coarse_factor, interpolate_acc, interpolate_cubic, interpolate_linear,
    interpolate_split, join, rescale, split, split_for, CommArgs, InterpolateChildren, Split,
};
use ramus_kernels::interpolate::{split_values, GhostArgs, InterpolateGhosts, RescaleParents};
use ramus_kernels::launch::Kernel;
use ramus_kernels::les::LesTransfer;
use ramus_kernels::registry::Entry;
use ramus_kernels::stream::{load_cell, store_cell, Field};
use ramus_kernels::Native;
use ramus_kernels::{Dim, VelocitySet, D2Q9, D3Q19, D3Q27};

/// Deterministic uniform numbers in [-0.5, 0.5).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
    /// A shifted population near equilibrium: ρ ≈ 1 ± 0.05, |u| ≲ 0.05, some neq part.
    fn pop<L: VelocitySet>(&mut self) -> L::Pop<f64> {
        let mut h = L::Pop::<f64>::default();
        for i in 0..L::Q {
            h[i] = 0.2 * L::W[i] * self.next();
        }
        h
    }
}

fn max_diff<L: VelocitySet>(a: &L::Pop<f64>, b: &L::Pop<f64>) -> f64 {
    (0..L::Q).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max)
}

/// Fine cell `t` of child `k`, in the coordinates where coarse cell `j` of the parent has
/// its centre at `cell_coords(j)`: `2cp + I/2 − 1/4` (z stays 0 in 2D).
fn fine_pos(k: usize, t: usize, dim: usize) -> [f64; 3] {
    let cp = child_position(k);
    let x = cell_coords(t);
    let mut p = [0.0; 3];
    for a in 0..dim {
        p[a] = 2.0 * cp[a] as f64 + 0.5 * x[a] as f64 - 0.25;
    }
    p
}

fn coarse_pos(j: usize) -> [f64; 3] {
    let c = cell_coords(j);
    [c[0] as f64, c[1] as f64, c[2] as f64]
}

fn rescale_check<L: VelocitySet>() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..200 {
        let h = rng.pop::<L>();
        let mut same = h;
        rescale::<L, f64>(&mut same, 1.0);
        assert!(max_diff::<L>(&same, &h) <= 1e-15, "{}: factor 1 is not the identity", L::NAME);
        let (rho, u) = moments::<L, f64>(&h);
        for factor in [0.25, 0.6, 1.7, 2.5] {
            let mut g = h;
            rescale::<L, f64>(&mut g, factor);
            let (rho2, u2) = moments::<L, f64>(&g);
            assert!((rho2 - rho).abs() <= 1e-15, "{}: mass", L::NAME);
            for a in 0..3 {
                assert!((rho2 * u2[a] - rho * u[a]).abs() <= 1e-15, "{}: momentum", L::NAME);
            }
            rescale::<L, f64>(&mut g, 1.0 / factor);
            assert!(max_diff::<L>(&g, &h) <= 1e-15, "{}: rescale(1/a) ∘ rescale(a) ≠ id", L::NAME);
        }
    }
}

#[test]
fn rescale_is_conservative_and_invertible() {
    rescale_check::<D2Q9>();
    rescale_check::<D3Q19>();
    rescale_check::<D3Q27>();
    // The factors are mutual inverses, and τ_F follows from equal viscosity.
    let (tc, tf) = (0.8, fine_tau(0.8));
    assert!((tf - 1.1).abs() < 1e-15);
    assert!((coarse_to_fine_factor(tc, tf) * fine_to_coarse_factor(tc, tf) - 1.0).abs() < 1e-15);
}

/// Per-component polynomial field `Σ α_{i,abc} X^a Y^b Z^c` with exponents below `deg + 1`
/// per axis (none in z for 2D); `X = (x − 1.5)/1.75` keeps values O(1) on [−0.25, 3.25].
struct Field3 {
    deg: usize,
    dim: usize,
    coef: Vec<f64>,
}
impl Field3 {
    fn new(q: usize, deg: usize, dim: usize, rng: &mut Rng) -> Self {
        Field3 { deg, dim, coef: (0..q * 64).map(|_| rng.next()).collect() }
    }
    fn eval(&self, i: usize, p: [f64; 3]) -> f64 {
        let x = p.map(|v| (v - 1.5) / 1.75);
        let nz = if self.dim == 3 { self.deg + 1 } else { 1 };
        let mut s = 0.0;
        for c in 0..nz {
            for b in 0..=self.deg {
                for a in 0..=self.deg {
                    s += self.coef[i * 64 + a + 4 * b + 16 * c]
                        * x[0].powi(a as i32)
                        * x[1].powi(b as i32)
                        * x[2].powi(c as i32);
                }
            }
        }
        s
    }
    fn pop<L: VelocitySet>(&self, p: [f64; 3]) -> L::Pop<f64> {
        let mut h = L::Pop::<f64>::default();
        for i in 0..L::Q {
            h[i] = self.eval(i, p);
        }
        h
    }
}

fn exactness_check<L: VelocitySet>() {
    let d = <L::Dim as Dim>::D;
    let mut rng = Rng(0x0bad_cafe_dead_beef);
    for cubic in [false, true] {
        for _ in 0..3 {
            let field = Field3::new(L::Q, if cubic { 3 } else { 1 }, d, &mut rng);
            for k in 0..<L::Dim as Dim>::CHILDREN {
                for t in 0..<L::Dim as Dim>::BLOCK_CELLS {
                    let coarse = |j: usize| field.pop::<L>(coarse_pos(j));
                    let got = if cubic {
                        interpolate_cubic::<L, f64, _>(k, t, coarse)
                    } else {
                        interpolate_linear::<L, f64, _>(k, t, coarse)
                    };
                    let want = field.pop::<L>(fine_pos(k, t, d));
                    let err = max_diff::<L>(&got, &want);
                    assert!(err <= 1e-12, "{} cubic={cubic} k={k} t={t}: error {err:e}", L::NAME);
                }
            }
        }
    }
}

#[test]
fn interpolation_reproduces_polynomials() {
    // Linear: any multilinear field; cubic: any bi/tricubic field; every fine cell of
    // every child position.
    exactness_check::<D2Q9>();
    exactness_check::<D3Q19>();
    exactness_check::<D3Q27>();
}

fn average_inverts_check<L: VelocitySet>() {
    let d = <L::Dim as Dim>::D;
    let (m, nc) = (<L::Dim as Dim>::BLOCK_CELLS, <L::Dim as Dim>::CHILDREN);
    let mut rng = Rng(0x5eed_5eed_5eed_5eed);
    let a = coarse_to_fine_factor(0.7, fine_tau(0.7));
    // Linear scheme: averaging undoes interpolation for ANY coarse data (so in particular
    // a linear field), with the rescalings undoing each other.
    let coarse: Vec<_> = (0..m).map(|_| rng.pop::<L>()).collect();
    let fine: Vec<Vec<_>> = (0..nc)
        .map(|k| {
            (0..m).map(|t| interpolate_split::<L, f64, false, _>(k, t, |j| split::<L, f64>(&coarse[j], a, a))).collect()
        })
        .collect();
    for j in 0..m {
        let back =
            average::<L, f64, _>(j, 1.0 / a, 1.0 / a, [0.0; 3], &Default::default(), &Default::default(), |k, t| {
                fine[k][t]
            });
        let err = max_diff::<L>(&back, &coarse[j]);
        assert!(err <= 1e-13, "{} linear j={j}: error {err:e}", L::NAME);
    }
    // Cubic scheme on a field whose density, momentum and non-equilibrium part are linear:
    // exact, so the means are the centres.
    let field = Field3::new(L::Q + 4, 1, d, &mut rng);
    let lin = |i: usize, p: [f64; 3]| {
        field.coef[i * 64]
            + field.coef[i * 64 + 1] * p[0]
            + field.coef[i * 64 + 4] * p[1]
            + if d == 3 { field.coef[i * 64 + 16] * p[2] } else { 0.0 }
    };
    let pop = |p: [f64; 3]| {
        let mut s = Split::<L::Pop<f64>, f64>::default();
        for i in 0..L::Q {
            s.neq[i] = 0.01 * L::W[i] * lin(i, p);
        }
        // Project out the mass and momentum of the neq part (linearly: h_i −= w_i (M + 3
        // J·c_i) removes M = Σ h_i and J = Σ h_i c_i), so that `split ∘ join` is the
        // identity and every component stays linear in the position.
        let mut mass = 0.0;
        let mut mom = [0.0; 3];
        for i in 0..L::Q {
            mass += s.neq[i];
            for a in 0..3 {
                mom[a] += s.neq[i] * L::C[i][a] as f64;
            }
        }
        for i in 0..L::Q {
            let c = L::C[i];
            s.neq[i] -= L::W[i] * (mass + 3.0 * (mom[0] * c[0] as f64 + mom[1] * c[1] as f64 + mom[2] * c[2] as f64));
        }
        s.rho = 1.0 + 0.05 * lin(L::Q, p);
        for a in 0..d {
            s.j[a] = 0.02 * lin(L::Q + 1 + a, p);
        }
        s
    };
    let proj = |p: [f64; 3]| {
        let s = pop(p);
        let back = split::<L, f64>(&join::<L, f64>(&s), 1.0, 1.0);
        assert!(max_diff::<L>(&back.neq, &s.neq) <= 1e-15 && (back.rho - s.rho).abs() <= 1e-15, "split ∘ join");
        back
    };
    let fine: Vec<Vec<_>> = (0..nc)
        .map(|k| (0..m).map(|t| interpolate_split::<L, f64, true, _>(k, t, |j| proj(coarse_pos(j)))).collect())
        .collect();
    for j in 0..m {
        let back =
            average::<L, f64, _>(j, 1.0, 1.0, [0.0; 3], &Default::default(), &Default::default(), |k, t| fine[k][t]);
        let want = join::<L, f64>(&proj(coarse_pos(j)));
        let err = max_diff::<L>(&back, &want);
        assert!(err <= 1e-13, "{} cubic j={j}: error {err:e}", L::NAME);
    }
}

#[test]
fn averaging_inverts_interpolation() {
    average_inverts_check::<D2Q9>();
    average_inverts_check::<D3Q19>();
    average_inverts_check::<D3Q27>();
}

/// Transfer arguments that only carry factors (the pointers are not read by
/// [`split_for`]).
fn transfer_args(les: LesTransfer<f64>) -> CommArgs<f64, f64> {
    CommArgs {
        f: std::ptr::null_mut(),
        nbr: std::ptr::null(),
        onb: std::ptr::null(),
        parent: std::ptr::null(),
        child: std::ptr::null(),
        cell_mask: std::ptr::null(),
        list: std::ptr::null(),
        factor: 1.0,
        factor_odd: 1.0,
        shift: [0.0; 3],
        les,
        mrt: Default::default(),
        masked: 0,
        solid: std::ptr::null(),
        eddy: std::ptr::null_mut(),
        status: std::ptr::null(),
        mark: std::ptr::null(),
    }
}

/// The population of `L` with the first `Q` values of `v`.
fn pop_of<L: VelocitySet>(v: &[f64; 27]) -> L::Pop<f64> {
    let mut p = L::Pop::<f64>::default();
    for i in 0..L::Q {
        p[i] = v[i];
    }
    p
}

fn eddy_round_trip_check<L: VelocitySet>() {
    let (m, nc) = (<L::Dim as Dim>::BLOCK_CELLS, <L::Dim as Dim>::CHILDREN);
    let mut rng = Rng(0xedd1_5eed_0bad_cafe);
    let (tau_c, magic) = (0.53, 3.0 / 16.0);
    let tau_f = fine_tau(tau_c);
    for magic in [0.0, magic] {
        let down = LesTransfer {
            tau_source: tau_c,
            tau_target: tau_f,
            magic_source: magic,
            magic_target: magic,
            ratio: 0.5,
            eddy: 1.0,
            ..Default::default()
        };
        let up = LesTransfer { tau_source: tau_f, tau_target: tau_c, ratio: 2.0, ..down };
        let nu = 0.031;
        let coarse: Vec<_> = (0..m).map(|_| rng.pop::<L>()).collect();
        let a = transfer_args(down);
        // Coarse → fine with the eddy viscosity the cells carry (uniform: the linear
        // scheme's averaging then inverts the interpolation exactly, factors included).
        let fine: Vec<Vec<_>> = (0..nc)
            .map(|k| {
                (0..m)
                    .map(|t| {
                        let acc =
                            interpolate_acc::<L, f64, false, _>(k, t, |j| split_for::<L, f64, _>(&coarse[j], nu, &a));
                        (join::<L, f64>(&acc), acc.nu)
                    })
                    .collect()
            })
            .collect();
        for j in 0..m {
            let (back, back_nu) =
                average_eddy::<L, f64, _>(j, 1.0, 1.0, [0.0; 3], &up, &Default::default(), |k, t| fine[k][t]);
            let err = max_diff::<L>(&back, &coarse[j]);
            assert!(err <= 1e-13, "{} eddy j={j}: error {err:e}", L::NAME);
            assert!((back_nu - nu).abs() <= 1e-16, "{} eddy viscosity {back_nu} after the round trip", L::NAME);
        }
        // The fine cells carry half the coarse eddy viscosity (Δt halves), and the factor
        // is k τ_t/τ_s with the total relaxation times: the BGK factor when ν_t = 0.
        assert!((fine[0][0].1 - nu / 2.0).abs() <= 1e-17);
        let zero = [0.0; 27];
        let (even, _) = ramus_kernels::les::les_factors::<L, f64>(&pop_of::<L>(&zero), 1.0, 0.0, &down);
        assert_eq!(even, coarse_to_fine_factor(tau_c, tau_f));
    }
}

#[test]
fn eddy_viscosity_transfers_invert_each_other() {
    eddy_round_trip_check::<D2Q9>();
    eddy_round_trip_check::<D3Q19>();
    eddy_round_trip_check::<D3Q27>();
}

#[test]
fn covering_child_matches_child_geometry() {
    // Coarse cell j lies in child j/2 (per axis), over fine cells 2 (j mod 2) + {0, 1}.
    for j in 0..64 {
        let (k, t0) = covering_child(j);
        let c = cell_coords(j);
        let cp = child_position(k);
        let f = cell_coords(t0);
        for a in 0..3 {
            assert_eq!(cp[a], c[a] / 2);
            assert_eq!(f[a], 2 * (c[a] % 2));
        }
    }
}

/// A periodic 2×2(×2) root grid (blocks `0..n`) whose block 0 has children
/// `n..n + 2^D` (links of the children: only the centre; they are read in the natural
/// layout only).
struct Pool {
    n: usize,
    nbr: Vec<i32>,
    onb: Vec<u32>,
    parent: Vec<i32>,
    child: Vec<i32>,
    mask: Vec<u8>,
    status: Vec<i32>,
    mark: Vec<i32>,
    f: Vec<f64>,
}

fn pool<L: VelocitySet>() -> Pool {
    let dd = <L::Dim as Dim>::D;
    let (nb, m, nc) = (<L::Dim as Dim>::NEIGHBORS, <L::Dim as Dim>::BLOCK_CELLS, <L::Dim as Dim>::CHILDREN);
    let n = nc; // 2^D roots
    let total = n + nc;
    let mut nbr = vec![N_SKIP; total * nb];
    for b in 0..n {
        let p = child_position(b);
        for k in 0..nb {
            let o = link_offset(k, dd);
            let q: Vec<i32> = (0..3).map(|a| (p[a] + o[a]).rem_euclid(2)).collect();
            nbr[b * nb + k] = q[0] + 2 * q[1] + 4 * q[2];
        }
    }
    for c in n..total {
        nbr[c * nb + link_index([0; 3], dd)] = c as i32;
    }
    let onb = (0..total).map(|b| (b >= n) as u32).collect();
    let mut parent = vec![-1; total];
    let mut child = vec![-1; total];
    child[0] = n as i32;
    for c in n..total {
        parent[c] = 0;
    }
    // Block 0 `REFINED` (its children leaves), nothing marked.
    let mut status = vec![status::UNREFINED; total];
    status[0] = status::REFINED;
    let (mask, mark, f) = (vec![CELL_INTERIOR; total * m], vec![MARK_NONE; total], vec![0.0; total * L::Q * m]);
    Pool { n, nbr, onb, parent, child, mask, status, mark, f }
}

impl Pool {
    fn field(&mut self) -> Field<f64> {
        Field { f: self.f.as_mut_ptr(), nbr: self.nbr.as_ptr(), onb: self.onb.as_ptr(), solid: std::ptr::null() }
    }
    fn args(&mut self, list: &[u32], factor: f64, masked: bool) -> CommArgs<f64, f64> {
        CommArgs {
            f: self.f.as_mut_ptr(),
            nbr: self.nbr.as_ptr(),
            onb: self.onb.as_ptr(),
            parent: self.parent.as_ptr(),
            child: self.child.as_ptr(),
            cell_mask: self.mask.as_ptr(),
            list: list.as_ptr(),
            factor,
            factor_odd: factor,
            shift: [0.0; 3],
            les: Default::default(),
            mrt: Default::default(),
            masked: masked as u32,
            solid: std::ptr::null(),
            eddy: std::ptr::null_mut(),
            status: self.status.as_ptr(),
            mark: self.mark.as_ptr(),
        }
    }
    /// Cell `t` of block `b` in layout `ODD`.
    fn get<L: VelocitySet, const ODD: bool>(&mut self, b: usize, t: usize) -> L::Pop<f64> {
        let fld = self.field();
        // SAFETY: the pool holds every block and its links point into it.
        unsafe { load_cell::<L, f64, Native, ODD>(&fld, b, t) }
    }
    fn put<L: VelocitySet, const ODD: bool>(&mut self, b: usize, t: usize, h: &L::Pop<f64>) {
        let fld = self.field();
        // SAFETY: as in `get`.
        unsafe { store_cell::<L, f64, Native, ODD>(&fld, b, t, h) }
    }
}

/// Items `0..items` of `K` through the registry's host entry point (`Entry::cpu_run`), the
/// one the CPU backend launches: compiled once in the library, not again in this test.
fn run_all<K: Kernel + Entry>(items: usize, args: &K::Args) {
    // SAFETY: `args` is a `K::Args` whose pointers name a live pool holding every block
    // the items touch (the contract of `CpuRun`).
    unsafe { K::cpu_run()(0, items, args as *const K::Args as *const ()) }
}

fn kernel_check<L: VelocitySet, const ODD: bool, const CUBIC: bool>()
where
    InterpolateChildren<L, f64, Native, ODD, CUBIC>: Entry,
    RescaleParents<L, f64, Native, ODD>: Entry,
    InterpolateGhosts<L, f64, Native, CUBIC>: Entry,
    AverageToParents<L, f64, Native, ODD>: Entry,
{
    let (m, nc) = (<L::Dim as Dim>::BLOCK_CELLS, <L::Dim as Dim>::CHILDREN);
    let name = format!("{} odd={ODD} cubic={CUBIC}", L::NAME);
    let mut rng = Rng(0xfeed_f00d_1234_4321 ^ (ODD as u64) ^ ((CUBIC as u64) << 1));
    let mut pl = pool::<L>();
    let n = pl.n;
    let a = coarse_to_fine_factor(0.9, fine_tau(0.9));
    // Coarse state, written in the coarse level's layout.
    let coarse: Vec<Vec<_>> = (0..n).map(|_| (0..m).map(|_| rng.pop::<L>()).collect()).collect();
    for b in 0..n {
        for t in 0..m {
            pl.put::<L, ODD>(b, t, &coarse[b][t]);
        }
    }
    let sample = |j: usize| split::<L, f64>(&coarse[0][j], a, a);
    let expect = |k: usize, t: usize| interpolate_split::<L, f64, CUBIC, _>(k, t, sample);
    let children: Vec<u32> = (n..n + nc).map(|c| c as u32).collect();

    // All cells of new children.
    let args = pl.args(&children, a, false);
    run_all::<InterpolateChildren<L, f64, Native, ODD, CUBIC>>(nc * m, &args);
    for k in 0..nc {
        for t in 0..m {
            let err = max_diff::<L>(&pl.get::<L, false>(n + k, t), &expect(k, t));
            assert!(err <= 1e-15, "{name}: interpolate k={k} t={t}: {err:e}");
        }
    }
    for b in 0..n {
        for t in 0..m {
            assert!(max_diff::<L>(&pl.get::<L, ODD>(b, t), &coarse[b][t]) <= 1e-15, "{name}: coarse changed");
        }
    }

    // Ghost cells only: the others keep their value.
    let marker = rng.pop::<L>();
    for k in 0..nc {
        for t in 0..m {
            pl.mask[(n + k) * m + t] = if (t + k) % 3 == 0 { CELL_GHOST } else { CELL_INTERFACE };
            pl.put::<L, false>(n + k, t, &marker);
        }
    }
    let args = pl.args(&children, a, true);
    run_all::<InterpolateChildren<L, f64, Native, ODD, CUBIC>>(nc * m, &args);
    for k in 0..nc {
        for t in 0..m {
            let want = if (t + k) % 3 == 0 { expect(k, t) } else { marker };
            assert!(max_diff::<L>(&pl.get::<L, false>(n + k, t), &want) <= 1e-15, "{name}: masked k={k} t={t}");
        }
    }

    // The two-pass ghost exchange (rescale the parent once, then sample) writes exactly
    // what the one-pass kernel wrote.
    let one_pass: Vec<Vec<_>> = (0..nc).map(|k| (0..m).map(|t| pl.get::<L, false>(n + k, t)).collect()).collect();
    for k in 0..nc {
        for t in 0..m {
            pl.put::<L, false>(n + k, t, &marker);
        }
    }
    let total = pl.parent.len();
    let mut slot = vec![u32::MAX; total];
    let mut scratch = vec![0.0f64; split_values::<L>() * m];
    let parents = [0u32];
    let mut g = GhostArgs { comm: pl.args(&parents, a, true), slot: slot.as_mut_ptr(), scratch: scratch.as_mut_ptr() };
    run_all::<RescaleParents<L, f64, Native, ODD>>(m, &g);
    g.comm.list = children.as_ptr();
    run_all::<InterpolateGhosts<L, f64, Native, CUBIC>>(nc * m, &g);
    assert_eq!(slot[0], 0, "{name}: parent slot recorded");
    for k in 0..nc {
        for t in 0..m {
            let got = pl.get::<L, false>(n + k, t);
            assert!(max_diff::<L>(&got, &one_pass[k][t]) == 0.0, "{name}: two-pass ghost k={k} t={t}");
        }
    }

    // Averaging all coarse cells of the parent.
    let fine: Vec<Vec<_>> = (0..nc).map(|_| (0..m).map(|_| rng.pop::<L>()).collect()).collect();
    for k in 0..nc {
        for t in 0..m {
            pl.put::<L, false>(n + k, t, &fine[k][t]);
        }
    }
    let b_fac = 1.0 / a;
    let parents = [0u32];
    let args = pl.args(&parents, b_fac, false);
    run_all::<AverageToParents<L, f64, Native, ODD>>(m, &args);
    let averaged: Vec<_> = (0..m)
        .map(|j| {
            average::<L, f64, _>(j, b_fac, b_fac, [0.0; 3], &Default::default(), &Default::default(), |k, t| fine[k][t])
        })
        .collect();
    for j in 0..m {
        let err = max_diff::<L>(&pl.get::<L, ODD>(0, j), &averaged[j]);
        assert!(err <= 1e-15, "{name}: average j={j}: {err:e}");
    }
    for b in 1..n {
        for t in 0..m {
            assert!(
                max_diff::<L>(&pl.get::<L, ODD>(b, t), &coarse[b][t]) <= 1e-15,
                "{name}: other coarse block changed"
            );
        }
    }

    // Masked modes. Groups per coarse cell: all-interface, all-ghost, all-interior, or
    // interface mixed with interior.
    let cat = |j: usize| j % 4;
    for j in 0..m {
        let (k, t0) = covering_child(j);
        for e in 0..nc {
            let p = child_position(e);
            let t = t0 + (p[0] + 4 * p[1] + 16 * p[2]) as usize;
            pl.mask[(n + k) * m + t] = match (cat(j), e) {
                (0, _) => CELL_INTERFACE,
                (1, _) => CELL_GHOST,
                (2, _) => CELL_INTERIOR,
                (_, 0) => CELL_INTERFACE,
                _ => CELL_INTERIOR,
            };
        }
    }
    for (mode, name_m) in [(AVERAGE_NOT_GHOST, "not-ghost"), (AVERAGE_INTERFACE, "interface")] {
        for j in 0..m {
            pl.put::<L, ODD>(0, j, &coarse[0][j]);
        }
        let mut args = pl.args(&parents, b_fac, true);
        args.masked = mode;
        run_all::<AverageToParents<L, f64, Native, ODD>>(m, &args);
        for j in 0..m {
            let written = match mode {
                AVERAGE_NOT_GHOST => cat(j) != 1,
                _ => cat(j) == 0 || cat(j) == 3,
            };
            let want = if written { averaged[j] } else { coarse[0][j] };
            assert!(max_diff::<L>(&pl.get::<L, ODD>(0, j), &want) <= 1e-15, "{name}: {name_m} average j={j}");
        }
    }

    // Candidates for coarsening only, over every root (only block 0 has children): as
    // "not-ghost" where block 0 is `REFINED` and all its children ask, else nothing.
    let roots: Vec<u32> = (0..n as u32).collect();
    let cases = [
        ("no marks", status::REFINED, 0),
        ("one child does not ask", status::REFINED, nc - 1),
        ("all ask", status::REFINED, nc),
        ("grandchildren", status::REFINED_WITH_CHILD, nc),
    ];
    for (case, st, asking) in cases {
        for b in 0..n {
            for j in 0..m {
                pl.put::<L, ODD>(b, j, &coarse[b][j]);
            }
        }
        pl.status[0] = st;
        for k in 0..nc {
            pl.mark[n + k] = if k < asking { MARK_COARSEN } else { MARK_NONE };
        }
        let mut args = pl.args(&roots, b_fac, true);
        args.masked = AVERAGE_COARSENING;
        run_all::<AverageToParents<L, f64, Native, ODD>>(n * m, &args);
        let candidate = st == status::REFINED && asking == nc;
        for b in 0..n {
            for j in 0..m {
                let want = if b == 0 && candidate && cat(j) != 1 { averaged[j] } else { coarse[b][j] };
                let err = max_diff::<L>(&pl.get::<L, ODD>(b, j), &want);
                assert!(err <= 1e-15, "{name}: coarsening ({case}) b={b} j={j}: {err:e}");
            }
        }
    }
    pl.status[0] = status::REFINED;
    pl.mark.iter_mut().for_each(|k| *k = MARK_NONE);
}

/// The four (parity, interpolation) variants of a lattice: a macro, so that each call
/// names concrete kernels the registry has an entry for.
macro_rules! kernel_checks {
    ($l:ty) => {
        kernel_check::<$l, false, false>();
        kernel_check::<$l, true, false>();
        kernel_check::<$l, false, true>();
        kernel_check::<$l, true, true>();
    };
}

#[test]
fn kernels_match_pure_functions() {
    kernel_checks!(D2Q9);
    kernel_checks!(D3Q19);
    kernel_checks!(D3Q27);
}

/// Entry-point names follow `<line>_<lattice>_<precision>` (crate::registry).
#[test]
fn kernel_names() {
    assert_eq!(
        <InterpolateChildren<D3Q19, f32, Native, true, true> as Entry>::ENTRY,
        "interpolate_cubic_odd_d3q19_f32"
    );
    assert_eq!(
        <InterpolateChildren<D2Q9, f64, Native, false, false> as Entry>::ENTRY,
        "interpolate_linear_even_d2q9_f64"
    );
    assert_eq!(<AverageToParents<D3Q27, f64, Native, true> as Entry>::ENTRY, "average_odd_d3q27_f64");
    assert_eq!(<AverageToParents<D3Q27, f64, Native, false> as Entry>::ENTRY, "average_even_d3q27_f64");
}

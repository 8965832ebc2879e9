//! CPU-versus-CUDA agreement of the multi-level solver with dynamic adaptation, on a GPU
//! machine (`#[ignore]`d; `scripts/gpu-check.sh run` runs it with `--ignored`).
//!
//! Acceptance (issue "Multi-level LBM"): a multi-level run with dynamic adaptation gives
//! the same leaves and fields on CUDA and CPU within the foundation's tolerances
//! (max |Δf| ≤ 1e-12 for f64, ≤ 1e-5 for f32). Both backends run the same kernel source
//! without FMA contraction, so they are expected to agree bitwise.

use ramus::cases::cavity::Cavity;
use ramus::{
    Backend, Collision, Criterion, Dim, Float, Forest, Half, Interpolation, Les, MagicLevels, Native, PoolStorage,
    Real, Refinement, VelocitySet, D2, D2Q9, D3, D3Q19, D3Q27,
};

fn tolerance<F: Real>() -> f64 {
    if F::NAME == "f64" {
        1e-12
    } else {
        1e-5
    }
}

/// The operator, body force and subgrid model of a run.
#[derive(Clone, Copy)]
struct Physics {
    collision: Collision,
    force: [f64; 3],
    les: Les,
}

/// A lid-driven cavity with `levels` levels adapting every 8 root steps on vorticity,
/// started from a swirl so that refinement happens from the first adaptation.
fn run<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    backend: Backend,
    n: usize,
    levels: usize,
    steps: u64,
    interp: Interpolation,
    ph: Physics,
) -> (Vec<S::Elem>, ramus::amr::MeshSnapshot, ramus::LeafCells, Vec<usize>) {
    let Physics { collision, force, les } = ph;
    let cavity = Cavity { dim: D::D as u32, n, re: 400.0, lid: 0.1 };
    let refinement = Refinement {
        levels,
        interpolation: interp,
        every: 8,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    let config = cavity
        .forest_config(backend)
        .expect("cavity")
        .refinement(refinement)
        .collision(collision)
        .body_force(force)
        .les(les);
    let mut forest = Forest::<D, Q, F, S>::new(config).expect("forest");
    assert_eq!(forest.backend(), backend);
    let c = n as f64 / 2.0;
    forest
        .initialize(|x| {
            let (dx, dy) = (x[0] - c, x[1] - c);
            let g = (-(dx * dx + dy * dy) / (0.05 * c * c)).exp();
            (1.0, [-0.05 * dy / c * g, 0.05 * dx / c * g, 0.0])
        })
        .expect("initialize");
    forest.advance(steps).expect("advance");
    let f = forest.distributions().expect("distributions");
    let snap = forest.mesh().snapshot().expect("snapshot");
    let cells = forest.leaf_cells().expect("leaf cells");
    (f, snap, cells, forest.blocks_per_level())
}

fn compare<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    n: usize,
    levels: usize,
    steps: u64,
    interp: Interpolation,
) {
    compare_with::<D, Q, F, S>(n, levels, steps, interp, Collision::Bgk);
}

fn compare_with<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    n: usize,
    levels: usize,
    steps: u64,
    interp: Interpolation,
    collision: Collision,
) {
    compare_forced::<D, Q, F, S>(n, levels, steps, interp, collision, [0.0; 3]);
}

fn compare_forced<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    n: usize,
    levels: usize,
    steps: u64,
    interp: Interpolation,
    collision: Collision,
    force: [f64; 3],
) {
    compare_les::<D, Q, F, S>(n, levels, steps, interp, collision, force, Les::None);
}

fn compare_les<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    n: usize,
    levels: usize,
    steps: u64,
    interp: Interpolation,
    collision: Collision,
    force: [f64; 3],
    les: Les,
) {
    let ph = Physics { collision, force, les };
    let (fc, sc, cc, bc) = run::<D, Q, F, S>(Backend::Cpu, n, levels, steps, interp, ph);
    let (fg, sg, cg, bg) = run::<D, Q, F, S>(Backend::Cuda, n, levels, steps, interp, ph);
    let name =
        format!("{} {}{} levels {levels} {interp:?} {collision:?} force {force:?} {les:?}", Q::NAME, F::NAME, S::NAME);
    assert_eq!(bc, bg, "{name}: blocks per level differ");
    assert!(bc.iter().filter(|&&b| b > 0).count() == levels, "{name}: every level in use ({bc:?})");
    assert_eq!(sc.leaves(), sg.leaves(), "{name}: leaves differ");
    assert_eq!(sc.id_sets, sg.id_sets, "{name}: ID sets differ");
    assert_eq!(sc.gaps, sg.gaps, "{name}: gap sets differ");
    // Distributions of the active blocks.
    let per = Q::Q * D::BLOCK_CELLS;
    let (mut max_abs, mut bitwise) = (0.0f64, 0usize);
    for &b in sc.id_sets.iter().flatten() {
        let r = b as usize * per..(b as usize + 1) * per;
        for (x, y) in fc[r.clone()].iter().zip(&fg[r]) {
            let (x, y) = (S::widen(*x), S::widen(*y));
            assert!(x.to_f64().is_finite() && y.to_f64().is_finite(), "{name}: non-finite value");
            max_abs = max_abs.max((x.to_f64() - y.to_f64()).abs());
            bitwise += (x.to_f64().to_bits() != y.to_f64().to_bits()) as usize;
        }
    }
    let du =
        cc.u.iter()
            .zip(&cg.u)
            .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f64::max))
            .fold(0.0, f64::max);
    let drho = cc.rho.iter().zip(&cg.rho).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!(
        "{name}: blocks per level {bc:?}, {} leaf cells; max |Δf| = {max_abs:.3e} ({bitwise} values not bitwise equal), \
         max |Δρ| = {drho:.3e}, max |Δu| = {du:.3e}",
        cc.len()
    );
    let tol = tolerance::<F>();
    assert!(max_abs <= tol, "{name}: max |Δf| = {max_abs:e} > {tol:e}");
    assert!(drho <= tol && du <= tol, "{name}: fields differ");
    assert_eq!(bitwise, 0, "{name}: CPU and CUDA are expected to agree bitwise");
}

#[test]
#[ignore = "needs a CUDA device"]
fn d2q9_f64_three_levels_linear() {
    compare::<D2, D2Q9, f64, Native>(64, 3, 96, Interpolation::Linear);
}

#[test]
#[ignore = "needs a CUDA device"]
fn d2q9_f32_four_levels_cubic() {
    compare::<D2, D2Q9, f32, Native>(64, 4, 96, Interpolation::Cubic);
}

#[test]
#[ignore = "needs a CUDA device"]
fn d3q19_f32_three_levels_linear() {
    compare::<D3, D3Q19, f32, Native>(16, 3, 48, Interpolation::Linear);
}

#[test]
#[ignore = "needs a CUDA device"]
fn d3q19_f64_three_levels_cubic() {
    compare::<D3, D3Q19, f64, Native>(16, 3, 48, Interpolation::Cubic);
}

/// Large enough that the ghost exchange takes the two-pass path (parents rescaled once
/// into a scratch buffer, then sampled) on the finer levels.
#[test]
#[ignore = "needs a CUDA device"]
fn d3q19_f32_three_levels_two_pass_ghosts() {
    compare::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Linear);
}

/// TRT (issue "Collision models"): the operator and the parity-wise rescaling of the grid
/// transfers, with Λ constant per level (default) and with τ⁻ following the levels
/// diffusively.
#[test]
#[ignore = "needs a CUDA device"]
fn trt_d2q9_f64_three_levels_linear() {
    compare_with::<D2, D2Q9, f64, Native>(64, 3, 96, Interpolation::Linear, Collision::trt());
}

#[test]
#[ignore = "needs a CUDA device"]
fn trt_d3q19_f32_three_levels_cubic_diffusive_magic() {
    let trt = Collision::Trt { magic: Collision::TRT_MAGIC, levels: MagicLevels::Diffusive };
    compare_with::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Cubic, trt);
}

/// The recursive regularized operator (issue "Collision models"), on every lattice (its
/// third-order terms differ: D3Q19 couples pairs, D3Q27 has `xyz`).
#[test]
#[ignore = "needs a CUDA device"]
fn rr_d2q9_f32_four_levels_cubic() {
    compare_with::<D2, D2Q9, f32, Native>(64, 4, 96, Interpolation::Cubic, Collision::RecursiveRegularized);
}

#[test]
#[ignore = "needs a CUDA device"]
fn rr_d3q19_f32_three_levels_linear() {
    compare_with::<D3, D3Q19, f32, Native>(16, 3, 48, Interpolation::Linear, Collision::RecursiveRegularized);
}

#[test]
#[ignore = "needs a CUDA device"]
fn rr_d3q27_f64_three_levels_cubic() {
    compare_with::<D3, D3Q27, f64, Native>(16, 3, 48, Interpolation::Cubic, Collision::RecursiveRegularized);
}

/// MRT (issue "Collision models"): the operator and the per-group rescaling of the grid
/// transfers (`mrt::scale_neq_mrt`) on every lattice, both interpolations, the two-pass
/// ghost exchange, a body force and the Smagorinsky model.
#[test]
#[ignore = "needs a CUDA device"]
fn mrt_d2q9_f32_four_levels_cubic() {
    compare_with::<D2, D2Q9, f32, Native>(64, 4, 96, Interpolation::Cubic, Collision::mrt());
}

#[test]
#[ignore = "needs a CUDA device"]
fn mrt_d3q19_f32_three_levels_two_pass_ghosts() {
    compare_with::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Linear, Collision::mrt());
}

#[test]
#[ignore = "needs a CUDA device"]
fn mrt_d3q27_f64_three_levels_cubic() {
    compare_with::<D3, D3Q27, f64, Native>(16, 3, 48, Interpolation::Cubic, Collision::mrt());
}

#[test]
#[ignore = "needs a CUDA device"]
fn forced_mrt_d3q19_f64_three_levels_cubic() {
    compare_forced::<D3, D3Q19, f64, Native>(16, 3, 48, Interpolation::Cubic, Collision::mrt(), [1e-6, 0.0, 2e-6]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn smagorinsky_mrt_d3q27_f32_three_levels_linear() {
    let les = Les::Smagorinsky { constant: Les::SMAGORINSKY };
    compare_les::<D3, D3Q27, f32, Native>(16, 3, 48, Interpolation::Linear, Collision::mrt(), [0.0; 3], les);
}

/// A body force (Guo's scheme, the transfers' momentum shift) with each operator.
#[test]
#[ignore = "needs a CUDA device"]
fn forced_every_operator_d2q9_f32_three_levels() {
    for collision in [Collision::Bgk, Collision::trt(), Collision::RecursiveRegularized, Collision::mrt()] {
        compare_forced::<D2, D2Q9, f32, Native>(64, 3, 96, Interpolation::Linear, collision, [2e-6, -1e-6, 0.0]);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn forced_rr_d3q19_f64_three_levels_cubic() {
    compare_forced::<D3, D3Q19, f64, Native>(
        16,
        3,
        48,
        Interpolation::Cubic,
        Collision::RecursiveRegularized,
        [1e-6, 0.0, 2e-6],
    );
}

/// The Smagorinsky model with each operator (per-cell relaxation times, the transfers'
/// per-cell factors), 2D and 3D, both precisions.
#[test]
#[ignore = "needs a CUDA device"]
fn smagorinsky_every_operator_d2q9_f32_three_levels() {
    let les = Les::Smagorinsky { constant: Les::SMAGORINSKY };
    for collision in [Collision::Bgk, Collision::trt(), Collision::RecursiveRegularized, Collision::mrt()] {
        compare_les::<D2, D2Q9, f32, Native>(64, 3, 96, Interpolation::Linear, collision, [0.0; 3], les);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn smagorinsky_rr_d3q27_f64_three_levels_cubic() {
    let les = Les::Smagorinsky { constant: Les::SMAGORINSKY };
    compare_les::<D3, D3Q27, f64, Native>(
        16,
        3,
        48,
        Interpolation::Cubic,
        Collision::RecursiveRegularized,
        [0.0; 3],
        les,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn smagorinsky_trt_d3q19_f32_three_levels_two_pass_ghosts() {
    let les = Les::Smagorinsky { constant: Les::SMAGORINSKY };
    compare_les::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Linear, Collision::trt(), [0.0; 3], les);
}

/// WALE and Vreman (finite-difference velocity gradients, eddy viscosities carried by
/// the transfers) with each operator, 2D and 3D, both precisions, with a body force.
#[test]
#[ignore = "needs a CUDA device"]
fn gradient_les_every_operator_d2q9_f64_three_levels() {
    for les in [Les::Wale { constant: Les::WALE }, Les::Vreman { constant: Les::VREMAN }] {
        for collision in [Collision::Bgk, Collision::trt(), Collision::RecursiveRegularized, Collision::mrt()] {
            compare_les::<D2, D2Q9, f64, Native>(64, 3, 96, Interpolation::Linear, collision, [0.0; 3], les);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn wale_rr_d3q27_f32_three_levels_cubic_forced() {
    let les = Les::Wale { constant: Les::WALE };
    compare_les::<D3, D3Q27, f32, Native>(
        16,
        3,
        48,
        Interpolation::Cubic,
        Collision::RecursiveRegularized,
        [1e-6, 0.0, 0.0],
        les,
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn vreman_trt_d3q19_f32_three_levels_two_pass_ghosts() {
    let les = Les::Vreman { constant: Les::VREMAN };
    compare_les::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Linear, Collision::trt(), [0.0; 3], les);
}

/// WALE on MRT in 3D (the odd ghosts' per-cell rates with a gradient model), cubic.
#[test]
#[ignore = "needs a CUDA device"]
fn wale_mrt_d3q19_f32_three_levels_cubic() {
    let les = Les::Wale { constant: Les::WALE };
    compare_les::<D3, D3Q19, f32, Native>(32, 3, 32, Interpolation::Cubic, Collision::mrt(), [0.0; 3], les);
}

/// 16-bit storage (issue "Performance to the limit"): every operator, the grid transfers
/// (interpolation, averaging, both ghost paths), the criterion and the gradient LES models
/// read and write the pool through the storage; both backends round to nearest even.
#[test]
#[ignore = "needs a CUDA device"]
fn f16_storage_every_operator_d2q9_four_levels_cubic() {
    for collision in [Collision::Bgk, Collision::trt(), Collision::RecursiveRegularized, Collision::mrt()] {
        compare_with::<D2, D2Q9, f32, Half>(64, 4, 96, Interpolation::Cubic, collision);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn f16_storage_d3q19_three_levels_two_pass_ghosts_forced_smagorinsky() {
    let les = Les::Smagorinsky { constant: Les::SMAGORINSKY };
    compare_les::<D3, D3Q19, f32, Half>(32, 3, 32, Interpolation::Linear, Collision::Bgk, [1e-6, 0.0, 2e-6], les);
}

#[test]
#[ignore = "needs a CUDA device"]
fn f16_storage_wale_trt_d3q27_three_levels_cubic() {
    let les = Les::Wale { constant: Les::WALE };
    compare_les::<D3, D3Q27, f32, Half>(16, 3, 48, Interpolation::Cubic, Collision::trt(), [0.0; 3], les);
}

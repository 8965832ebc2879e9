//! CPU-versus-CUDA agreement of the flow past a square cylinder: velocity inlet and far
//! field, pressure outlet, a solid obstacle on every level, frozen and adaptive refinement,
//! and the momentum-exchange force (`#[ignore]`d; `scripts/gpu-check.sh run` runs it with
//! `--ignored` on a GPU machine). Both backends run the same kernel source without FMA
//! contraction, so they are expected to agree bitwise; the tolerances are the
//! foundation's (1e-12 for f64, 1e-5 for f32).

use ramus::cases::cylinder::{Body, Cylinder};
use ramus::{Backend, Boundary, Face, Float, Forest, Half, Interpolation, Native, PoolStorage, Walls, D2, D2Q9};

/// The inlet of a run: the case's uniform one, or a channel (resting walls on y) with a
/// parabolic inlet profile on every level (`ramus_kernels::profile`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Inlet {
    Uniform,
    Parabolic,
    /// Uniform, with a circular cylinder under interpolated bounce-back
    /// (`ramus_kernels::curved`), rotating when `true` (the moving-wall term).
    Curved(bool),
}

/// The pool (as stored), the ID sets and the force and torque samples of a run.
type Run<E> = (Vec<E>, Vec<Vec<u32>>, Vec<[f64; 3]>);

fn run<F: Float, S: PoolStorage<F>>(backend: Backend, interp: Interpolation, inlet: Inlet) -> Run<S::Elem> {
    // Re 50: root 128 is refused at Re 100 (cases::cylinder::MAX_CELL_REYNOLDS).
    let mut case = Cylinder { root: 128, levels: 3, re: 50.0, interpolation: interp, ..Cylinder::default() };
    if let Inlet::Curved(_) = inlet {
        case.shape = Body::Circle;
        case.walls = Walls::Interpolated;
    }
    let mut config = case.forest_config(backend).expect("config");
    if inlet == Inlet::Curved(true) {
        // Surface speed U_0 (ω D/2 = U_0).
        config.obstacles[0].angular_velocity = [0.0, 0.0, 2.0 * case.u0 / case.diameter()];
    }
    if inlet == Inlet::Parabolic {
        config = config
            .boundary(Face::XMin, Boundary::parabolic([1.5 * case.u0, 0.0, 0.0]))
            .boundary(Face::YMin, Boundary::NO_SLIP)
            .boundary(Face::YMax, Boundary::NO_SLIP);
    }
    let mut forest = Forest::<D2, D2Q9, F, S>::new(config).expect("forest");
    assert_eq!(forest.backend(), backend);
    forest.initialize(|x| case.initial_state(x)).expect("init");
    let mut forces = Vec::new();
    for _ in 0..10 {
        forest.advance(16).expect("advance");
        forces.push(forest.force(Some(0)).expect("force"));
        forces.push(forest.torque(0).expect("torque"));
    }
    let snap = forest.mesh().snapshot().expect("snapshot");
    (forest.distributions().expect("f"), snap.id_sets, forces)
}

fn compare<F: Float, S: PoolStorage<F>>(interp: Interpolation, inlet: Inlet) {
    // 16-bit storage: bitwise (both backends round to nearest even).
    let tol = if !S::NAME.is_empty() {
        0.0
    } else if F::NAME == "f64" {
        1e-12
    } else {
        1e-5
    };
    let (fc, ic, gc) = run::<F, S>(Backend::Cpu, interp, inlet);
    let (fg, ig, gg) = run::<F, S>(Backend::Cuda, interp, inlet);
    let name = format!("cylinder {}{} {interp:?} {inlet:?} inlet", F::NAME, S::NAME);
    assert_eq!(ic, ig, "{name}: ID sets differ");
    let per = 9 * 16;
    let mut max_abs = 0.0f64;
    for &b in ic.iter().flatten() {
        let r = b as usize * per..(b as usize + 1) * per;
        for (x, y) in fc[r.clone()].iter().zip(&fg[r]) {
            let (x, y) = (S::widen(*x), S::widen(*y));
            assert!(x.to_f64().is_finite(), "{name}: non-finite value");
            max_abs = max_abs.max((x.to_f64() - y.to_f64()).abs());
        }
    }
    let df =
        gc.iter().zip(&gg).map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f64::max)).fold(0.0, f64::max);
    println!(
        "{name}: blocks {:?}, max |Δf| = {max_abs:.3e}, max |ΔF| = {df:.3e}, F = {:?}",
        ic.iter().map(Vec::len).collect::<Vec<_>>(),
        gc.last()
    );
    assert!(max_abs <= tol, "{name}: max |Δf| = {max_abs:.3e} above {tol:e}");
    assert!(df <= tol, "{name}: max |ΔF| = {df:.3e} above {tol:e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cylinder_cpu_and_cuda_agree() {
    compare::<f64, Native>(Interpolation::Linear, Inlet::Uniform);
    compare::<f64, Native>(Interpolation::Cubic, Inlet::Uniform);
    compare::<f32, Native>(Interpolation::Linear, Inlet::Uniform);
}

/// A parabolic inlet (channel walls on y) on three adaptive levels: the per-link wall
/// velocities of the profile table, re-evaluated at every adaptation, bitwise the same.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cylinder_parabolic_inlet_cpu_and_cuda_agree() {
    compare::<f64, Native>(Interpolation::Linear, Inlet::Parabolic);
    compare::<f32, Native>(Interpolation::Cubic, Inlet::Parabolic);
}

/// A circular cylinder with interpolated bounce-back on three adaptive levels, at rest
/// and rotating: the wall distances computed on the device at every adaptation, the wall
/// pass after every step of every level, and the force and torque from the populations
/// the pass kept, bitwise the same.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cylinder_curved_walls_cpu_and_cuda_agree() {
    compare::<f64, Native>(Interpolation::Linear, Inlet::Curved(false));
    compare::<f64, Native>(Interpolation::Cubic, Inlet::Curved(true));
    compare::<f32, Native>(Interpolation::Cubic, Inlet::Curved(true));
}

/// 16-bit storage: the step, the wall pass (it reads and writes the pool), the force and
/// torque, with adaptation, bitwise the same.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cylinder_f16_storage_cpu_and_cuda_agree() {
    compare::<f32, Half>(Interpolation::Cubic, Inlet::Curved(true));
    compare::<f32, Half>(Interpolation::Linear, Inlet::Parabolic);
}

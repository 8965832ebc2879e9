//! 16-bit storage of the populations (`ramus::Half`, issue "Performance to the limit") on
//! the paper's two validation cases, on a GPU machine (`#[ignore]`d; `scripts/gpu-check.sh
//! run` runs it with `--ignored`). Bitwise CPU ≡ CUDA with this storage is checked in
//! `gpu`, `gpu_multilevel` and `gpu_cylinder`; here the question is accuracy.
//!
//! Acceptance (from the issue): the 2D cavity at Re = 1000 (root 128², 4 levels, the
//! vorticity criterion N_start = −2, N_inc = 1) within 0.015 U_lid of Ghia et al. (1982,
//! J. Comput. Phys. 48(3):387-411, Tables I and II in `tests/data/`), and the square
//! cylinder at Re = 100 (root 256, 4 levels, to t = 240 D/U_0) with C_D within 1 % and St
//! within 0.002 of the same run with f32 storage; mass drift reported. The f32 runs are
//! made here too, so that both figures come from one machine and one binary.

use ramus::cases::cavity::Cavity;
use ramus::cases::cylinder::Cylinder;
use ramus::cases::shedding::{mean_over_periods, strouhal};
use ramus::{Backend, Criterion, Forest, Half, Interpolation, Native, PoolStorage, Refinement, D2, D2Q9};

use crate::cavity_ghia::{max_deviation, read_column};

/// The tolerance on |u − u_Ghia| and |v − v_Ghia| for 16-bit storage, in U_lid.
const GHIA_TOL: f64 = 0.015;

/// Re = 1000 cavity, root 128², 4 levels, lid 0.1, 30 lid passes (the f64 run of
/// BENCHMARKS.md "Ghia et al. (1982), Re = 1000, on the GPU"): the largest deviations
/// from Ghia's u and v and the relative mass drift.
fn cavity_re1000<S: PoolStorage<f32>>() -> (f64, f64, f64) {
    let cavity = Cavity { dim: 2, n: 128, re: 1000.0, lid: 0.1 };
    let refinement = Refinement {
        levels: 4,
        interpolation: Interpolation::Linear,
        every: 32,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    let config = cavity.forest_config(Backend::Cuda).expect("config").refinement(refinement);
    let mut forest = Forest::<D2, D2Q9, f32, S>::new(config).expect("forest");
    let mass0 = forest.leaf_cells().expect("cells").mass(2).expect("mass");
    forest.advance(cavity.steps_for_passes(30.0)).expect("advance");
    let cells = forest.leaf_cells().expect("cells");
    let drift = cells.mass(2).expect("mass") / mass0 - 1.0;
    let lines = cavity.centerlines(&forest.fields().expect("fields")).expect("centerlines");
    let u_ref = read_column("ghia1982_u_vertical_centerline.csv", "u_Re1000");
    let v_ref = read_column("ghia1982_v_horizontal_centerline.csv", "v_Re1000");
    let (du, _) = max_deviation(&lines.u, &u_ref, &[]);
    let (dv, _) = max_deviation(&lines.v, &v_ref, &[]);
    println!(
        "cavity Re 1000, root 128, 4 levels, f32{}: max |u - u_Ghia| = {du:.4}, max |v - v_Ghia| = {dv:.4} U_lid, \
         mass drift {drift:.2e}, blocks per level {:?}, {:.0} MLUPS",
        if S::NAME.is_empty() { String::new() } else { format!(" with {} storage", S::NAME) },
        forest.blocks_per_level(),
        forest.mlups()
    );
    (du, dv, drift)
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn f16_storage_amr_cavity_re1000_matches_ghia() {
    let (du, dv, _) = cavity_re1000::<Half>();
    let (du32, dv32, _) = cavity_re1000::<Native>();
    println!("f16 − f32 storage: Δu {:+.4}, Δv {:+.4} U_lid", du - du32, dv - dv32);
    assert!(du <= GHIA_TOL && dv <= GHIA_TOL, "f16 storage: u {du:.4}, v {dv:.4} above {GHIA_TOL} U_lid");
}

/// Re = 100 square cylinder, root 256, 4 levels, linear interpolation, height 32 D, to
/// t = 240 D/U_0 (BENCHMARKS.md "Flow past a square cylinder"): C_D over the whole
/// shedding periods of the last 16 D/U_0 and St from the lift, sampled every 16 root
/// steps (the cylinder example's procedure).
fn cylinder_re100<S: PoolStorage<f32>>() -> (f64, f64) {
    let case = Cylinder { root: 256, levels: 4, interpolation: Interpolation::Linear, ..Cylinder::default() };
    let mut forest =
        Forest::<D2, D2Q9, f32, S>::new(case.forest_config(Backend::Cuda).expect("config")).expect("forest");
    forest.initialize(|x| case.initial_state(x)).expect("init");
    let (end, window) = (240.0, 16.0);
    let steps = case.steps_for(end);
    let (mut t, mut cd, mut cl) = (Vec::new(), Vec::new(), Vec::new());
    let mut done = 0;
    while done < steps {
        forest.advance(16).expect("advance");
        done += 16;
        if case.time(done) >= end - window {
            let (d, l) = case.coefficients(forest.force(Some(0)).expect("force"));
            t.push(case.time(done));
            cd.push(d);
            cl.push(l);
        }
    }
    let (st, fit) = strouhal(&t, &cl).expect("the lift oscillates");
    let mean = mean_over_periods(&t, &cd, fit.frequency, fit.periods.floor().max(1.0)).expect("whole periods");
    println!(
        "cylinder Re 100, root 256, 4 levels, f32{}: C_D {mean:.4}, St {st:.4}, {:.0} MLUPS",
        if S::NAME.is_empty() { String::new() } else { format!(" with {} storage", S::NAME) },
        forest.mlups()
    );
    (mean, st)
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn f16_storage_cylinder_matches_f32_storage() {
    let (cd, st) = cylinder_re100::<Half>();
    let (cd32, st32) = cylinder_re100::<Native>();
    assert!((cd / cd32 - 1.0).abs() <= 0.01, "C_D {cd:.4} with f16 storage, {cd32:.4} with f32: more than 1 % apart");
    assert!((st - st32).abs() <= 0.002, "St {st:.4} with f16 storage, {st32:.4} with f32: more than 0.002 apart");
}

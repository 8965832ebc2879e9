//! The sphere in a uniform stream at Re 100 and Re 300 (`ramus::cases::obstacle`, the
//! `obstacle` example's set-up), once as the built-in sphere and once as an STL of the
//! same sphere (an icosphere of 81,920 triangles), both with interpolated walls
//! (`#[ignore]`d: 3D runs of 10^6–10^7 cells; `scripts/gpu-check.sh run` runs them on
//! the GPU machine, about two minutes).
//!
//! Reference: Johnson & Patel, "Flow past a sphere up to a Reynolds number of 300",
//! J. Fluid Mech. 378 (1999) 19–70: steady axisymmetric flow at Re 100 with
//! C_D = 1.087; at Re 300 an unsteady planar-symmetric wake with mean C_D = 0.656
//! (their Table 1 and §5). Asserted: the mean C_D within 3 % of theirs (the issue's
//! tolerance; the channel of 8 D × 8 D with the free stream on its sides blocks 1.2 % of
//! the cross-section, which raises the drag by about 2 %), and the STL sphere within 1 %
//! of the built-in one; the solid volume (the `obstacle` example's `solid_volume`) within
//! 2 % of π/6 D³ on the example's default grid (Re 100) and at Re 300.

use ramus::cases::obstacle::{Body, ObstacleFlow};
use ramus::stl::SurfaceMesh;
use ramus::{Backend, Forest, D3, D3Q19};

/// Root steps between force samples.
const SAMPLE: u64 = 16;

/// Mean (C_D, C_L) over the last `window` of `time` (both in D/U_0), and the volume of
/// the solid leaf cells in D³ (the example's `solid_volume`).
fn mean_coefficients(case: &ObstacleFlow, time: f64, window: f64) -> (f64, f64, f64) {
    let config = case.forest_config(Backend::Cuda).expect("config");
    let mut forest = Forest::<D3, D3Q19, f32>::new(config).expect("forest");
    forest.initialize(|x| case.initial_state(x)).expect("init");
    let cells = forest.leaf_cells().expect("cells");
    let solid: f64 =
        (0..cells.len()).filter(|&k| cells.solid[k] && !cells.ghost[k]).map(|k| cells.width[k].powi(3)).sum();
    let volume = solid / case.diameter().powi(3);
    let (steps, from) = (case.steps_for(time), case.steps_for(time - window));
    let (mut sum, mut n) = ([0.0; 3], 0);
    while forest.steps() < steps {
        forest.advance(SAMPLE.min(steps - forest.steps())).expect("advance");
        if forest.steps() >= from {
            let c = case.coefficients(forest.force(None).expect("force"));
            for a in 0..3 {
                sum[a] += c[a];
            }
            n += 1;
        }
    }
    (sum[0] / n as f64, sum[1] / n as f64, volume)
}

fn sphere_at(re: f64, root: usize, levels: usize, time: f64, window: f64, reference: f64) {
    let dir = std::env::temp_dir().join(format!("ramus-gpu-sphere-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let stl = dir.join("icosphere6.stl");
    SurfaceMesh::icosphere(6).write(&stl).expect("write");
    let case = ObstacleFlow { re, root, levels, ..ObstacleFlow::default() };
    let (cd, cl, volume) = mean_coefficients(&case, time, window);
    let stl_case = ObstacleFlow { body: Body::Stl { path: stl }, ..case.clone() };
    let (cd_stl, cl_stl, volume_stl) = mean_coefficients(&stl_case, time, window);
    println!(
        "sphere Re {re} (root {root}, {levels} levels, D = {} finest cells): C_D built-in {cd:.4} (C_L {cl:+.4}), \
         STL {cd_stl:.4} (C_L {cl_stl:+.4}); Johnson & Patel (1999) {reference}: {:+.2} %, {:+.2} %; \
         solid volume {volume:.4}, {volume_stl:.4} D³",
        case.diameter() * (1 << (levels - 1)) as f64,
        100.0 * (cd / reference - 1.0),
        100.0 * (cd_stl / reference - 1.0)
    );
    assert!((cd / reference - 1.0).abs() < 0.03, "Re {re}: built-in C_D {cd} against {reference}");
    assert!((cd_stl / reference - 1.0).abs() < 0.03, "Re {re}: STL C_D {cd_stl} against {reference}");
    assert!((cd_stl / cd - 1.0).abs() < 0.01, "Re {re}: STL C_D {cd_stl} against the built-in {cd}");
    // The issue: the STL sphere's solid volume within 2 % of π/6 D³ (here on both grids).
    let sixth = std::f64::consts::PI / 6.0;
    for v in [volume, volume_stl] {
        assert!((v / sixth - 1.0).abs() < 0.02, "Re {re}: solid volume {v} D³ against π/6");
    }
}

#[test]
#[ignore = "needs a CUDA device; run by scripts/gpu-check.sh"]
fn sphere_re100_drag() {
    // The example's default grid: root 64 (D = 8 root cells), 3 levels (D = 32 finest).
    sphere_at(100.0, 64, 3, 40.0, 10.0, 1.087);
}

#[test]
#[ignore = "needs a CUDA device; run by scripts/gpu-check.sh"]
fn sphere_re300_drag() {
    // Root 128 (D = 16 root cells: root τ = 0.508; at root 64 BGK diverges near the
    // outlet), 2 levels (D = 32 finest); about 4 shedding periods averaged.
    sphere_at(300.0, 128, 2, 80.0, 30.0, 0.656);
}

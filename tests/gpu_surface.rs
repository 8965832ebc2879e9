//! CPU-versus-CUDA agreement of STL bodies (`ramus_kernels::surface`): the voxelisation
//! of a non-convex body (a torus) on two levels refined toward it, and a channel flow
//! past an STL sphere with interpolated walls (wall distances from the triangles) on
//! three levels: solid cells, distributions and forces (`#[ignore]`d; `scripts/gpu-check.sh
//! run` runs it with `--ignored` on a GPU machine). The voxelisation is integer
//! arithmetic and the rest the same kernel source without FMA contraction: bitwise.

use ramus::stl::SurfaceMesh;
use ramus::{Backend, Float, SurfaceBody, Walls};

use crate::stl::{binary, file, surface_forest, torus};

#[test]
#[ignore = "needs a CUDA device; run by scripts/gpu-check.sh"]
fn torus_voxelisation_cpu_and_cuda_agree() {
    let path = file("gpu-torus.stl", &binary(&torus(1.0, 0.4, 96, 48)));
    let body = || SurfaceBody::new(&path, [16.0, 16.0, 16.0], 22.0);
    let mut cpu = surface_forest::<f64>(Backend::Cpu, [32, 32, 32], 3, Walls::Staircase, body(), 0.0);
    let mut gpu = surface_forest::<f64>(Backend::Cuda, [32, 32, 32], 3, Walls::Staircase, body(), 0.0);
    assert_eq!(gpu.backend(), Backend::Cuda);
    let (a, b) = (cpu.leaf_cells().expect("cells"), gpu.leaf_cells().expect("cells"));
    assert_eq!(a.center, b.center, "the meshes differ");
    let solid = a.solid.iter().filter(|&&s| s).count();
    assert!(solid > 1000, "{solid} solid cells");
    assert_eq!(a.solid, b.solid, "the solid cells differ");
    println!("torus (9216 triangles), 3 levels: {} leaf cells, {solid} solid, CPU = CUDA", a.center.len());
}

fn sphere_run<F: Float>(backend: Backend, path: &std::path::Path) -> (Vec<F>, Vec<bool>, Vec<[f64; 3]>) {
    let body = SurfaceBody::new(path, [16.0, 16.0, 16.0], 8.0);
    let mut forest = surface_forest::<F>(backend, [64, 32, 32], 3, Walls::Interpolated, body, 0.05);
    forest.initialize(|_| (1.0, [0.05, 0.0, 0.0])).expect("init");
    let mut forces = Vec::new();
    for _ in 0..4 {
        forest.advance(16).expect("advance");
        forces.push(forest.force(None).expect("force"));
    }
    let solid = forest.leaf_cells().expect("cells").solid;
    (forest.distributions().expect("f"), solid, forces)
}

fn compare_sphere<F: Float>() {
    let dir = std::env::temp_dir().join(format!("ramus-gpu-surface-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("sphere.stl");
    SurfaceMesh::icosphere(4).write(&path).expect("write");
    let (fc, sc, gc) = sphere_run::<F>(Backend::Cpu, &path);
    let (fg, sg, gg) = sphere_run::<F>(Backend::Cuda, &path);
    assert_eq!(sc, sg, "STL sphere {}: solid cells differ", F::NAME);
    let max = fc.iter().zip(&fg).map(|(a, b)| (a.to_f64() - b.to_f64()).abs()).fold(0.0, f64::max);
    assert_eq!(max, 0.0, "STL sphere {}: max |Δf| = {max:e}", F::NAME);
    assert_eq!(gc, gg, "STL sphere {}: forces differ", F::NAME);
    println!("STL sphere {}, 3 levels, interpolated walls: max |Δf| = 0, forces {:?}", F::NAME, gc.last());
}

#[test]
#[ignore = "needs a CUDA device; run by scripts/gpu-check.sh"]
fn stl_sphere_walls_cpu_and_cuda_agree() {
    compare_sphere::<f64>();
    compare_sphere::<f32>();
}

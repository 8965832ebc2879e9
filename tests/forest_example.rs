//! The `forest` example's code path on the CPU (paper, section "Adaptive Mesh Refinement"):
//! refine around a circle/sphere, coarsen half of it, check the forest, write the leaves as
//! VTU, and validate the written file independently of the mesh (cell count, leaf volumes
//! adding up to the box, 2:1 balance across faces, edges and corners of the written cells).

#[path = "../examples/forest.rs"]
#[allow(dead_code)]
mod forest;

use ramus::output::read_vtu;

fn run(dim: u32, levels: usize, root: usize) {
    let out = std::env::temp_dir().join(format!("ramus-forest-example-{}-{dim}d", std::process::id()));
    let args = forest::Args {
        dim,
        levels,
        out: out.clone(),
        backend: "cpu".into(),
        root,
        capacity: None,
        run: Default::default(),
    };
    let summary = forest::run(&args).unwrap_or_else(|e| panic!("{dim}D: {e:#}"));
    println!("{}", summary.line(&args));
    let f = read_vtu(out.join("forest.vtu")).unwrap();
    let leaves: usize = summary.leaves.iter().sum();
    assert_eq!(f.cells(), leaves);
    let side = root as f64;
    f.validate_leaf_tiling(dim as usize, [side, side, side]).unwrap_or_else(|e| panic!("{dim}D: {e}"));
    // Refined to the finest level near the surface; coarsened on the right half only.
    assert!(summary.leaves[levels - 1] > 0, "{:?}", summary.leaves);
    let levels_of = &f.cell_data["level"];
    let finest_right =
        f.boxes().iter().zip(levels_of).any(|((lo, _), &l)| lo[0] >= side / 2.0 && l as usize == levels - 1);
    assert!(!finest_right, "finest leaves left in x > 0.5 after coarsening");
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn forest_example_2d() {
    run(2, 4, 32);
}

#[test]
fn forest_example_3d() {
    run(3, 3, 16);
}

#[test]
fn bad_arguments_are_errors() {
    let mut args = forest::Args {
        dim: 4,
        levels: 3,
        out: std::env::temp_dir(),
        backend: "cpu".into(),
        root: 16,
        capacity: None,
        run: Default::default(),
    };
    assert!(forest::run(&args).unwrap_err().to_string().contains("dim"));
    args.dim = 2;
    args.root = 10;
    assert!(forest::run(&args).unwrap_err().to_string().contains("root"));
    args.root = 16;
    args.backend = "tpu".into();
    assert!(forest::run(&args).unwrap_err().to_string().contains("backend"));
}

//! Checkpoint/restart (issue "Trustworthy runs"): a run continued from a checkpoint is
//! bitwise the uninterrupted run, with adaptation between the checkpoint and the end, in
//! 2D and 3D; damaged or foreign files give named errors.

use ramus::cases::cavity::Cavity;
use ramus::{
    Backend, CheckpointProblem, Criterion, Error, Float, Forest, ForestConfig, Half, Les, Native, PoolStorage,
    Refinement, VelocitySet,
};
use ramus::{Dim, D2, D2Q9, D3, D3Q19};

fn amr_cavity(dim: u32, n: usize, levels: usize) -> ForestConfig {
    let cavity = Cavity { dim, n, re: 400.0, lid: 0.1 };
    let refinement = Refinement {
        levels,
        every: 8,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    cavity.forest_config(Backend::Cpu).expect("config").refinement(refinement)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ramus-checkpoint-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("checkpoint.ramus")
}

/// Distributions equal bit for bit; pools of different capacity must agree on the common
/// prefix and hold nothing beyond it.
fn assert_same_pool<F: Float, S: PoolStorage<F>>(a: &[S::Elem], b: &[S::Elem]) {
    let n = a.len().min(b.len());
    let bits = |x: &[S::Elem]| -> Vec<u64> { x.iter().map(|v| S::widen(*v).to_f64().to_bits()).collect() };
    assert!(bits(&a[..n]) == bits(&b[..n]), "distributions differ");
    for rest in [&a[n..], &b[n..]] {
        assert!(rest.iter().all(|x| S::widen(*x).to_f64() == 0.0), "pool tail beyond the common part is not empty");
    }
}

fn restart_is_bitwise<D: Dim, Q: VelocitySet<Dim = D>, F: Float, S: PoolStorage<F>>(
    config: ForestConfig,
    total: u64,
    name: &str,
) {
    let path = scratch(name);
    let mut whole = Forest::<D, Q, F, S>::new(config.clone()).expect("forest");
    whole.advance(total).expect("uninterrupted run");

    let mut first = Forest::<D, Q, F, S>::new(config).expect("forest");
    first.advance(total / 2).expect("first half");
    let blocks_at_checkpoint = first.blocks_per_level();
    first.checkpoint_with(&path, b"example state").expect("checkpoint");
    drop(first);
    let (mut second, user) = Forest::<D, Q, F, S>::restart_with(&path, Backend::Cpu).expect("restart");
    assert_eq!(user, b"example state");
    assert_eq!(second.steps(), total / 2);
    second.advance(total - total / 2).expect("second half");

    assert_ne!(blocks_at_checkpoint, whole.blocks_per_level(), "the mesh adapted after the checkpoint");
    assert_eq!(second.steps(), whole.steps());
    assert_eq!(second.blocks_per_level(), whole.blocks_per_level());
    assert_same_pool::<F, S>(&whole.distributions().unwrap(), &second.distributions().unwrap());
    let (a, b) = (whole.leaf_cells().unwrap(), second.leaf_cells().unwrap());
    assert_eq!(a, b, "leaf cells (outputs) differ");
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn restart_continues_a_2d_amr_run_bitwise() {
    restart_is_bitwise::<D2, D2Q9, f64, Native>(amr_cavity(2, 32, 3), 160, "2d");
}

/// Under a gradient LES model the cells carry their eddy viscosities, which the grid
/// transfers read before the cells collide again (the first ghost exchange after the
/// restart): the checkpoint stores them with the populations.
#[test]
fn restart_continues_a_2d_amr_wale_run_bitwise() {
    let config = amr_cavity(2, 32, 3).les(Les::Wale { constant: Les::WALE });
    restart_is_bitwise::<D2, D2Q9, f64, Native>(config, 160, "2d-wale");
}

/// 16-bit storage (`ramus::Half`): the checkpoint holds the stored bit patterns, so the
/// run continues bitwise; a native forest refuses the file by name, and vice versa.
#[test]
fn restart_continues_a_2d_amr_run_with_f16_storage_bitwise() {
    restart_is_bitwise::<D2, D2Q9, f32, Half>(amr_cavity(2, 32, 3), 160, "2d-f16");
}

#[test]
fn f16_and_native_checkpoints_are_told_apart() {
    let path = scratch("f16-kind");
    let mut half = Forest::<D2, D2Q9, f32, Half>::new(amr_cavity(2, 16, 2)).expect("forest");
    half.advance(4).expect("advance");
    half.checkpoint(&path).expect("checkpoint");
    match Forest::<D2, D2Q9, f32>::restart(&path, Backend::Cpu) {
        Err(Error::Checkpoint { problem: CheckpointProblem::WrongForest { found, expected }, .. }) => {
            assert!(found.contains("f16 storage") && !expected.contains("storage"), "{found} / {expected}");
        }
        Err(e) => panic!("expected WrongForest, got {e}"),
        Ok(_) => panic!("an f16-storage checkpoint restarted with f32 storage"),
    }
    let mut native = Forest::<D2, D2Q9, f32>::new(amr_cavity(2, 16, 2)).expect("forest");
    native.checkpoint(&path).expect("checkpoint");
    assert!(matches!(
        Forest::<D2, D2Q9, f32, Half>::restart(&path, Backend::Cpu),
        Err(Error::Checkpoint { problem: CheckpointProblem::WrongForest { .. }, .. })
    ));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// A parabolic inlet (x_min) and an outlet (x_max) on the adapting cavity: the restart
/// re-evaluates the inlet's per-link wall velocities (`ramus_kernels::profile`) for the
/// restored blocks, so the run continues bitwise.
#[test]
fn restart_continues_a_2d_amr_run_with_a_parabolic_inlet_bitwise() {
    use ramus::{Boundary, Face};
    let config = amr_cavity(2, 32, 3)
        .boundary(Face::XMin, Boundary::parabolic([0.05, 0.0, 0.0]))
        .boundary(Face::XMax, Boundary::OUTLET);
    restart_is_bitwise::<D2, D2Q9, f64, Native>(config, 160, "2d-inlet");
}

/// A rotating disc under interpolated bounce-back in the adapting cavity: the restart
/// recomputes the wall distances for the restored blocks (`ramus_kernels::curved`), and
/// the force needs a step after it (the populations the wall pass keeps), then matches.
#[test]
fn restart_continues_a_2d_amr_run_with_curved_walls_bitwise() {
    use ramus::{Obstacle, Shape, Walls};
    let disc = Obstacle::from(Shape::circle([20.0, 13.0, 0.0], 4.3)).rotating([0.0, 0.0, 0.01]);
    let config = amr_cavity(2, 32, 3).obstacle(disc).walls(Walls::Interpolated);
    restart_is_bitwise::<D2, D2Q9, f64, Native>(config.clone(), 160, "2d-curved");

    let path = scratch("2d-curved-force");
    let mut whole = Forest::<D2, D2Q9, f64>::new(config.clone()).expect("forest");
    whole.advance(81).expect("run");
    let mut first = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    first.advance(80).expect("first part");
    first.checkpoint(&path).expect("checkpoint");
    let mut second = Forest::<D2, D2Q9, f64>::restart(&path, Backend::Cpu).expect("restart");
    let e = second.force(Some(0)).expect_err("no step since the restart");
    assert!(matches!(e, Error::InvalidParameter { field: "force", .. }), "{e}");
    second.advance(1).expect("one step");
    assert_eq!(second.force(Some(0)).unwrap(), whole.force(Some(0)).unwrap());
    assert_eq!(second.torque(0).unwrap(), whole.torque(0).unwrap());
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

#[test]
fn restart_continues_a_3d_amr_run_bitwise() {
    restart_is_bitwise::<D3, D3Q19, f32, Native>(amr_cavity(3, 16, 3), 64, "3d");
}

fn checkpoint_problem(r: Result<Forest<D2, D2Q9, f64>, Error>) -> CheckpointProblem {
    match r {
        Err(Error::Checkpoint { problem, .. }) => problem,
        Err(e) => panic!("expected a checkpoint error, got {e}"),
        Ok(_) => panic!("expected a checkpoint error, got a forest"),
    }
}

#[test]
fn damaged_and_foreign_checkpoints_give_named_errors() {
    let path = scratch("damaged");
    let mut forest = Forest::<D2, D2Q9, f64>::new(amr_cavity(2, 16, 2)).expect("forest");
    forest.advance(20).expect("advance");
    forest.checkpoint(&path).expect("checkpoint");
    let good = std::fs::read(&path).unwrap();
    let restart = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        Forest::<D2, D2Q9, f64>::restart(&path, Backend::Cpu)
    };
    assert!(restart(&good).is_ok(), "the intact file restarts");

    let mut corrupted = good.clone();
    let mid = corrupted.len() / 2;
    corrupted[mid] ^= 0x10;
    assert_eq!(checkpoint_problem(restart(&corrupted)), CheckpointProblem::Corrupted);

    assert_eq!(checkpoint_problem(restart(&good[..good.len() - 1000])), CheckpointProblem::Truncated);
    assert_eq!(checkpoint_problem(restart(&good[..10])), CheckpointProblem::Truncated);

    let mut version = good.clone();
    version[8] = 99;
    assert!(matches!(checkpoint_problem(restart(&version)), CheckpointProblem::Version { found: 99, supported: 1 }));

    assert_eq!(checkpoint_problem(restart(b"not a checkpoint at all")), CheckpointProblem::NotACheckpoint);

    std::fs::write(&path, &good).unwrap();
    match Forest::<D2, D2Q9, f32>::restart(&path, Backend::Cpu) {
        Err(Error::Checkpoint { problem: CheckpointProblem::WrongForest { .. }, .. }) => {}
        Err(e) => panic!("expected WrongForest, got {e}"),
        Ok(_) => panic!("an f64 checkpoint restarted as f32"),
    }
    let missing = path.with_file_name("missing.ramus");
    assert!(matches!(Forest::<D2, D2Q9, f64>::restart(&missing, Backend::Cpu), Err(Error::Io { .. })));
    std::fs::remove_dir_all(path.parent().unwrap()).ok();
}

/// An STL body (a torus) with interpolated walls in the adapting 3D cavity: the restart
/// reads the surface again, voxelises the restored blocks and recomputes their wall
/// distances on the device (`ramus_kernels::surface`), so the run continues bitwise.
#[test]
fn restart_continues_a_3d_amr_run_with_an_stl_body_bitwise() {
    use crate::stl::{binary, file, torus};
    let path = file("checkpoint-torus.stl", &binary(&torus(1.0, 0.4, 32, 16)));
    let body = ramus::SurfaceBody::new(&path, [8.0, 7.0, 8.0], 8.0);
    let config = amr_cavity(3, 16, 3).surface(body).walls(ramus::Walls::Interpolated);
    restart_is_bitwise::<D3, D3Q19, f32, Native>(config, 32, "3d-stl");
}

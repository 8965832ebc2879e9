//! The multi-level `Forest` API a user embedding the library relies on: frozen wall
//! refinement at construction, a user criterion, sampling and leaf output, timings, and
//! configurations loaded from TOML.

use ramus::Mark;
use ramus::{Backend, Face, Forest, ForestConfig, Refinement, WallRefinement, D2, D2Q9, D3, D3Q19, D3Q27};

fn box2(levels: usize) -> ForestConfig {
    ForestConfig::new([32, 32, 0]).levels(levels).backend(Backend::Cpu)
}

#[test]
fn frozen_wall_refinement_at_construction() {
    // d_spec = 4 root cells: level-L blocks closer than 4 / 2^L to y = 0 refine.
    let config = box2(3).refinement(Refinement {
        levels: 3,
        walls: Some(WallRefinement { faces: vec![Face::YMin], distance: 4.0, obstacles: false }),
        ..Refinement::default()
    });
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    let blocks = forest.blocks_per_level();
    assert!(blocks[1] > 0 && blocks[2] > 0, "refined toward the wall: {blocks:?}");
    let cells = forest.leaf_cells().expect("cells");
    for i in 0..cells.len() {
        if cells.level[i] == 2 {
            assert!(cells.center[i][1] < 4.0, "level-2 cell at y = {} is not near the wall", cells.center[i][1]);
        }
    }
    // Frozen: coarsening everything leaves the wall refinement in place.
    forest.adapt_with(|_| Mark::Coarsen).expect("adapt");
    assert_eq!(forest.blocks_per_level(), blocks, "frozen blocks were coarsened");
}

#[test]
fn user_criterion_refines_and_coarsens_during_advance() {
    let mut config = box2(2);
    config.refinement.every = 4;
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    // Refine the left half until step 8, then ask for coarsening everywhere.
    forest
        .set_user_criterion(|g, step| {
            if step < 8 && g.origin[0] < 16.0 && g.level == 0 {
                Mark::Refine
            } else if step >= 8 {
                Mark::Coarsen
            } else {
                Mark::None
            }
        })
        .expect("a forest that adapts accepts a user criterion");
    forest.advance(4).expect("advance");
    assert_eq!(forest.blocks_per_level(), vec![64, 128], "left half refined");
    assert_eq!(forest.leaves_per_level(), vec![32, 128]);
    assert_eq!(forest.cells_per_level(), vec![32 * 16, 128 * 16]);
    forest.advance(8).expect("advance");
    assert_eq!(forest.blocks_per_level(), vec![64, 0], "coarsened again at step 8");
    let t = forest.timings();
    assert_eq!(t.root_steps, 12);
    assert!(t.adapt.count >= 3 && t.updates > 0.0 && t.mlups() > 0.0);
    assert!(t.adaptation_share() > 0.0 && t.adaptation_share() < 1.0);
}

/// While profiling, every part of an adaptation is timed (a `Lap` each): the mesh routine
/// is the sum of its steps, the parts fit inside the adaptations' wall time, and the CPU
/// backend submits nothing.
#[test]
fn profiled_adaptation_parts_add_up() {
    let mut config = box2(2);
    config.refinement.every = 2;
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    forest
        .set_user_criterion(|g, step| if step % 4 == 0 && g.level == 0 { Mark::Refine } else { Mark::Coarsen })
        .expect("user criterion");
    forest.set_profiling(true);
    forest.advance(8).expect("advance");
    let a = forest.timings().adapt;
    assert!(a.count >= 4, "{a:?}");
    let steps: ramus::backend::Lap = a.mesh_steps.iter().map(|s| s.1).sum();
    assert_eq!(steps, a.mesh, "the mesh routine is the sum of its steps");
    assert!(a.mesh.time > std::time::Duration::ZERO, "the mesh routine timed: {a:?}");
    let parts = a.parts();
    assert!(parts.time > std::time::Duration::ZERO && parts.time <= a.wall, "{parts:?} within {:?}", a.wall);
    assert_eq!(parts.submissions, Default::default(), "the CPU backend submits nothing");
}

#[test]
fn sample_and_leaf_cells_reproduce_a_linear_field() {
    // A linear velocity field is represented exactly by equilibrium initialisation and
    // by multilinear sampling on any level.
    let config = box2(3);
    let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    forest
        .adapt_with(|g| if g.origin[0] >= 8.0 && g.origin[0] < 24.0 { Mark::Refine } else { Mark::None })
        .expect("adapt");
    let field = |p: [f64; 3]| (1.0, [0.01 * p[1] / 32.0, 0.002 * p[0] / 32.0, 0.0]);
    forest.initialize(field).expect("initialize");
    let cells = forest.leaf_cells().expect("cells");
    assert_eq!(cells.len(), forest.cell_count());
    for i in 0..cells.len() {
        let want = field(cells.center[i]).1;
        assert!((cells.u[i][0] - want[0]).abs() < 1e-12 && (cells.u[i][1] - want[1]).abs() < 1e-12);
    }
    let mass = cells.mass(2).expect("mass");
    assert!((mass - 32.0 * 32.0).abs() < 1e-9, "mass {mass}");
    let points = [[3.3, 7.1, 0.0], [16.0, 16.0, 0.0], [20.2, 30.9, 0.0]];
    for (p, (rho, u)) in points.iter().zip(forest.sample(&points).expect("sample")) {
        let want = field(*p).1;
        assert!((rho - 1.0).abs() < 1e-12);
        assert!((u[0] - want[0]).abs() < 1e-12 && (u[1] - want[1]).abs() < 1e-12, "sample at {p:?}: {u:?} vs {want:?}");
    }
}

#[test]
fn toml_configuration_builds_a_refined_3d_forest() {
    let text = r#"
        cells = [16, 16, 16]
        boundaries = [{ kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
                      { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
                      { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0.05, 0, 0] }]
        fluid = { kind = "reynolds", re = 100, velocity = 0.05, length = 16 }
        backend = "cpu"
        [refinement]
        levels = 2
        interpolation = "cubic"
        every = 16
        criterion = { kind = "vorticity", n_start = -3, n_inc = 1 }
        walls = { faces = ["z_max"], distance = 2 }
    "#;
    let config = ForestConfig::from_toml(text).expect("parses");
    assert_eq!(config.refinement.interpolation, ramus::Interpolation::Cubic);
    let mut forest = Forest::<D3, D3Q19, f32>::new(config).expect("forest");
    assert!(forest.blocks_per_level()[1] > 0, "lid refinement");
    forest.advance(20).expect("advance");
    let cells = forest.leaf_cells().expect("cells");
    assert!(cells.u.iter().flatten().all(|u| u.is_finite()));
}

/// The README's mesh snippet, as written (64³ root cells, 5 levels, the default pool:
/// the full hierarchy capped at 256 MiB, touched only where blocks are used). Prints its
/// wall time (under a second on two cores is the aim; measured, not asserted).
#[test]
fn readme_mesh_snippet_runs() {
    use ramus::amr::{check, AdaptWorkspace, Capacity, Mesh, MeshSpec, Region};
    use ramus::backend::Device;
    use ramus::Boundary;
    let t = std::time::Instant::now();
    let spec =
        MeshSpec { cells: [64; 3], boundaries: [Boundary::NO_SLIP; 6], max_levels: 5, capacity: Capacity::default() };
    let mut mesh = Mesh::<D3>::new(Device::new(Backend::Cpu).unwrap(), spec, 0).unwrap();
    let mut ws = AdaptWorkspace::new(mesh.device()).unwrap();
    mesh.mark_region(Region::SphereSurface { center: [32.0; 3], radius: 10.0 }, Mark::Refine).unwrap();
    let report = mesh.adapt_with(&mut ws).unwrap();
    check(&mesh.snapshot().unwrap()).expect("a valid forest");
    println!("README mesh snippet: {report:?}, {:.3} s", t.elapsed().as_secs_f64());
    assert!(mesh.blocks_per_level()[1] > 0);
}

/// Reading the solution (any `host_solution` read: leaf cells, samples, the blocks of
/// every level) between root steps must not change the run: the read brings parents and
/// ghost layers up to date for itself only. Outputs at different times, probes and series
/// would otherwise make runs incomparable (found in the eighth session: a read after step
/// 32 of this cavity changed the populations at step 64 by up to 1.4e-3).
fn reads_leave_the_run_unchanged(config: ForestConfig, reads: &[u64], total: u64) {
    let mut plain = Forest::<D2, D2Q9, f64>::new(config.clone()).expect("forest");
    plain.advance(total).expect("run without reads");
    let mut read = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
    for &at in reads {
        read.advance(at - read.steps()).expect("run");
        read.leaf_cells().expect("leaf cells");
        read.sample(&[[5.5, 30.5, 0.5]]).expect("sample");
        read.active_blocks().expect("blocks");
    }
    read.advance(total - read.steps()).expect("run after the reads");
    assert!(read.blocks_per_level()[2] > 0, "the run refined to level 2: {:?}", read.blocks_per_level());
    assert_eq!(plain.blocks_per_level(), read.blocks_per_level(), "the mesh followed another path");
    let bits = |f: Vec<f64>| f.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    let (a, b) = (bits(plain.distributions().unwrap()), bits(read.distributions().unwrap()));
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert_eq!(differ, 0, "{differ} populations differ after reads at steps {reads:?}");
}

fn cavity(interpolation: ramus::Interpolation) -> ForestConfig {
    use ramus::cases::cavity::Cavity;
    use ramus::Criterion;
    let refinement = Refinement {
        levels: 3,
        every: 8,
        interpolation,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    let cavity = Cavity { dim: 2, n: 32, re: 400.0, lid: 0.1 };
    cavity.forest_config(Backend::Cpu).expect("config").refinement(refinement)
}

#[test]
fn reading_the_solution_mid_run_leaves_an_adaptive_run_unchanged() {
    // Reads after even and odd root steps, between and right after adaptations (every 8).
    reads_leave_the_run_unchanged(cavity(ramus::Interpolation::Linear), &[8, 13, 32, 33], 64);
}

#[test]
fn reading_the_solution_mid_run_leaves_a_static_run_unchanged() {
    // Refinement toward the lid, no adaptation: only the reads could differ.
    let config = cavity(ramus::Interpolation::Linear).refinement(Refinement {
        levels: 3,
        walls: Some(WallRefinement { faces: vec![Face::YMax], distance: 4.0, obstacles: false }),
        ..Refinement::default()
    });
    reads_leave_the_run_unchanged(config, &[5, 32], 48);
}

#[test]
fn reading_the_solution_mid_run_leaves_a_cubic_wale_run_unchanged() {
    use ramus::Les;
    let config = cavity(ramus::Interpolation::Cubic).les(Les::Wale { constant: Les::WALE });
    reads_leave_the_run_unchanged(config, &[9, 32], 48);
}

/// The averaging and the ghost interpolation between a level's two steps in one launch
/// (`Forest::set_fused_exchanges`, on by default) give the distributions of the two
/// separate launches bit for bit: 2D cavity on four adaptive levels, linear and cubic.
#[test]
fn fused_exchanges_are_bitwise_the_two_launches() {
    use ramus::cases::cavity::Cavity;
    use ramus::{Criterion, Interpolation};
    for interpolation in [Interpolation::Linear, Interpolation::Cubic] {
        let run = |fused: bool| {
            let cavity = Cavity { dim: 2, n: 32, re: 400.0, lid: 0.1 };
            let refinement = Refinement {
                levels: 4,
                every: 16,
                interpolation,
                criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
                ..Refinement::default()
            };
            let config = cavity.forest_config(Backend::Cpu).expect("config").refinement(refinement);
            let mut forest = Forest::<D2, D2Q9, f64>::new(config).expect("forest");
            forest.set_fused_exchanges(fused);
            forest.advance(96).expect("run");
            assert_eq!(forest.blocks_per_level().len(), 4);
            assert!(forest.blocks_per_level()[3] > 0, "{interpolation:?}: the fourth level is in use");
            forest.distributions().expect("pool").iter().map(|x| x.to_bits()).collect::<Vec<u64>>()
        };
        assert!(run(true) == run(false), "{interpolation:?}: fused and separate exchanges differ");
    }
}

/// Two cells per thread (`Forest::set_paired_cells`: `ramus_kernels::pairs`) give the
/// distributions of one cell per thread bit for bit: cavities on adaptive levels (walls:
/// the blocks with boundary flags take the per-cell path, the others the paired one),
/// every step paired, with native and 16-bit storage, in 2D and 3D, with every collision
/// operator (BGK also with the Smagorinsky model, which relaxes each cell at its own rate
/// in the same step).
#[test]
fn paired_cells_are_bitwise_one_cell_per_thread() {
    use ramus::cases::cavity::Cavity;
    use ramus::{Collision, Criterion, Half, Les, Native, PairedCells, PoolStorage, VelocitySet};

    fn run<Q: VelocitySet, F: ramus::Float, S: PoolStorage<F>>(
        dim: u32,
        (collision, les): (Collision, Les),
        paired: PairedCells,
    ) -> Vec<u8> {
        let (n, levels, steps) = if dim == 2 { (32, 3, 64) } else { (16, 2, 12) };
        let cavity = Cavity { dim, n, re: 400.0, lid: 0.1 };
        let refinement = Refinement {
            levels,
            every: 8,
            criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
            ..Refinement::default()
        };
        let config = cavity.forest_config(Backend::Cpu).expect("config").refinement(refinement);
        let mut forest = Forest::<Q::Dim, Q, F, S>::new(config.collision(collision).les(les)).expect("forest");
        forest.set_paired_cells(paired);
        // An odd number of root steps: both AA layouts are stepped and the state ends odd.
        forest.advance(steps + 1).expect("run");
        assert!(forest.blocks_per_level()[levels - 1] > 0, "{dim}D: the finest level is in use");
        bytemuck::cast_slice(&forest.distributions().expect("pool")).to_vec()
    }
    fn check<Q: VelocitySet, F: ramus::Float, S: PoolStorage<F>>(dim: u32, model: (Collision, Les)) {
        let (one, two) = (run::<Q, F, S>(dim, model, PairedCells::Off), run::<Q, F, S>(dim, model, PairedCells::All));
        assert!(
            one == two,
            "{dim}D, Q = {}, {} {:?}: paired differs from one cell per thread",
            Q::Q,
            model.0.name(),
            model.1
        );
    }
    let bgk = (Collision::Bgk, Les::None);
    check::<D2Q9, f32, Native>(2, bgk);
    check::<D2Q9, f64, Native>(2, bgk);
    check::<D2Q9, f32, Half>(2, bgk);
    check::<D3Q19, f32, Native>(3, bgk);
    check::<D3Q19, f32, Half>(3, bgk);
    check::<D3Q27, f32, Native>(3, bgk);
    for model in [
        (Collision::trt(), Les::None),
        (Collision::mrt(), Les::None),
        (Collision::RecursiveRegularized, Les::None),
        (Collision::Bgk, Les::Smagorinsky { constant: Les::SMAGORINSKY }),
    ] {
        check::<D2Q9, f32, Native>(2, model);
        check::<D2Q9, f32, Half>(2, model);
        check::<D3Q19, f32, Native>(3, model);
    }
    check::<D3Q27, f64, Native>(3, (Collision::mrt(), Les::None));
}

/// The bulk steps (`Forest::set_bulk_steps`: the blocks without boundary flags in a
/// kernel compiled without the boundary logic, the others in the plain step over their
/// work list) give the distributions of the single plain step bit for bit: cavities on
/// adaptive levels (walls, the levels' interfaces and, in one case, an obstacle's solid
/// cells flag blocks; the lists follow every adaptation), every step split, every lattice
/// and storage, every collision operator; a periodic box (no boundary block: the bulk
/// kernel alone).
#[test]
fn bulk_steps_are_bitwise_the_plain_step() {
    use ramus::cases::cavity::Cavity;
    use ramus::{BulkSteps, Collision, Criterion, Half, Native, PoolStorage, Shape, VelocitySet};

    #[derive(Clone, Copy, Debug)]
    enum Case {
        Cavity,
        Obstacle,
        Periodic,
    }
    fn run<Q: VelocitySet, F: ramus::Float, S: PoolStorage<F>>(
        dim: u32,
        case: Case,
        collision: Collision,
        bulk: BulkSteps,
    ) -> Vec<u8> {
        let (n, levels, steps) = if dim == 2 { (32, 3, 48) } else { (16, 2, 12) };
        let mut config = Cavity { dim, n, re: 400.0, lid: 0.1 }.forest_config(Backend::Cpu).expect("config");
        match case {
            Case::Cavity => {}
            Case::Obstacle => {
                let c = n as f64 / 2.0;
                config = config.obstacle(Shape::circle([c, c, if dim == 3 { c } else { 0.0 }], n as f64 / 8.0));
            }
            Case::Periodic => {
                for face in Face::ALL {
                    config = config.boundary(face, ramus::Boundary::Periodic);
                }
            }
        }
        let refinement = Refinement {
            levels,
            every: 8,
            criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
            ..Refinement::default()
        };
        let mut forest =
            Forest::<Q::Dim, Q, F, S>::new(config.refinement(refinement).collision(collision)).expect("forest");
        forest.set_bulk_steps(bulk).expect("bulk steps");
        // An odd number of root steps: both AA layouts are stepped and the state ends odd.
        forest.advance(steps + 1).expect("run");
        bytemuck::cast_slice(&forest.distributions().expect("pool")).to_vec()
    }
    fn check<Q: VelocitySet, F: ramus::Float, S: PoolStorage<F>>(dim: u32, case: Case, collision: Collision) {
        let plain = run::<Q, F, S>(dim, case, collision, BulkSteps::Off);
        let split = run::<Q, F, S>(dim, case, collision, BulkSteps::All);
        assert!(plain == split, "{dim}D, Q = {}, {case:?}, {}: the bulk steps differ", Q::Q, collision.name());
    }
    for case in [Case::Cavity, Case::Obstacle, Case::Periodic] {
        check::<D2Q9, f32, Native>(2, case, Collision::Bgk);
        check::<D3Q19, f32, Native>(3, case, Collision::Bgk);
    }
    check::<D2Q9, f64, Native>(2, Case::Cavity, Collision::Bgk);
    check::<D2Q9, f32, Half>(2, Case::Cavity, Collision::trt());
    check::<D3Q19, f32, Half>(3, Case::Cavity, Collision::Bgk);
    check::<D3Q19, f32, Half>(3, Case::Obstacle, Collision::Bgk);
    check::<D3Q27, f32, Native>(3, Case::Cavity, Collision::mrt());
    check::<D3Q27, f32, Half>(3, Case::Cavity, Collision::RecursiveRegularized);
    check::<D3Q19, f64, Native>(3, Case::Cavity, Collision::trt());
}

//! Every configuration error is reported as a named error, never a panic: each test
//! checks the variant and that the message names the field at fault, so a user reading
//! only the message knows what to change.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ramus::cases::cavity::Cavity;
use ramus::{
    Backend, Boundary, Error, Face, Fluid, Forest, ForestConfig, LatticeKind, Precision, D2, D2Q9, D3, D3Q19, D3Q27,
};

/// Asserts `result` is `Error::InvalidParameter` for `field`, and that the message names it.
#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, Error>, field: &str) {
    match result {
        Err(e @ Error::InvalidParameter { field: f, .. }) => {
            assert_eq!(f, field, "wrong field in {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(field), "message {msg:?} does not name the field {field:?}");
        }
        other => panic!("expected InvalidParameter {{ field: {field:?} }}, got {other:?}"),
    }
}

/// Asserts `result` is `Error::UnknownOption` for `field`, naming the field and the value.
#[track_caller]
fn assert_unknown<T: std::fmt::Debug>(result: Result<T, Error>, field: &str, value: &str) {
    match result {
        Err(e @ Error::UnknownOption { field: f, .. }) => {
            assert_eq!(f, field, "wrong field in {e:?}");
            let msg = e.to_string();
            assert!(msg.contains(field), "message {msg:?} does not name the field {field:?}");
            assert!(msg.contains(value), "message {msg:?} does not quote the value {value:?}");
        }
        other => panic!("expected UnknownOption {{ field: {field:?} }}, got {other:?}"),
    }
}

fn cavity(n: usize, re: f64, lid: f64) -> Cavity {
    Cavity { dim: 2, n, re, lid }
}

fn cavity_config(c: &Cavity) -> Result<ForestConfig, Error> {
    c.forest_config(Backend::Cpu)
}

// ---- Cavity parameters ----

#[test]
fn valid_cavity_is_accepted() {
    // Guards the tests below against passing because everything is rejected.
    let config = cavity_config(&cavity(32, 100.0, 0.1)).expect("valid cavity");
    Forest::<D2, D2Q9, f64>::new(config).expect("forest from a valid cavity");
    let config = Cavity { dim: 3, n: 8, re: 10.0, lid: 0.1 }.forest_config(Backend::Cpu).expect("valid 3D cavity");
    Forest::<D3, D3Q19, f64>::new(config).expect("3D forest from a valid cavity");
}

#[test]
fn cavity_n_not_multiple_of_4() {
    assert_invalid(cavity_config(&cavity(30, 100.0, 0.1)), "n");
}

#[test]
fn cavity_n_too_small() {
    assert_invalid(cavity_config(&cavity(4, 100.0, 0.1)), "n");
    assert_invalid(cavity_config(&cavity(0, 100.0, 0.1)), "n");
}

#[test]
fn cavity_re_zero() {
    assert_invalid(cavity_config(&cavity(32, 0.0, 0.1)), "re");
}

#[test]
fn cavity_re_negative() {
    assert_invalid(cavity_config(&cavity(32, -5.0, 0.1)), "re");
}

#[test]
fn cavity_re_not_finite() {
    assert_invalid(cavity_config(&cavity(32, f64::NAN, 0.1)), "re");
    assert_invalid(cavity_config(&cavity(32, f64::INFINITY, 0.1)), "re");
}

#[test]
fn cavity_lid_too_fast() {
    assert_invalid(cavity_config(&cavity(32, 100.0, 0.3)), "lid");
    assert_invalid(cavity_config(&cavity(32, 100.0, 0.5)), "lid");
}

#[test]
fn cavity_lid_not_positive() {
    assert_invalid(cavity_config(&cavity(32, 100.0, 0.0)), "lid");
    assert_invalid(cavity_config(&cavity(32, 100.0, -0.1)), "lid");
    assert_invalid(cavity_config(&cavity(32, 100.0, f64::NAN)), "lid");
}

#[test]
fn cavity_tau_too_close_to_half() {
    // ν = U n / Re = 0.1 · 8 / 10⁶ gives τ = 0.5000024 ≤ 0.5 + 1e-3.
    assert_invalid(cavity_config(&cavity(8, 1e6, 0.1)), "tau");
    // Just below the threshold: ν = 3e-4 gives τ = 0.5009.
    assert_invalid(cavity_config(&cavity(8, 0.1 * 8.0 / 3e-4, 0.1)), "tau");
}

#[test]
fn cavity_unknown_dimension() {
    assert_invalid(Cavity { dim: 4, n: 32, re: 100.0, lid: 0.1 }.forest_config(Backend::Cpu), "dim");
    assert_invalid(Cavity { dim: 1, n: 32, re: 100.0, lid: 0.1 }.forest_config(Backend::Cpu), "dim");
}

// ---- Run-time choices: lattice, precision, backend ----

#[test]
fn lattice_in_wrong_dimension() {
    for (dim, name) in [(2, "d3q19"), (2, "d3q27"), (3, "d2q9")] {
        match LatticeKind::for_dimension(dim, name) {
            Err(e @ Error::UnsupportedLattice { .. }) => {
                let Error::UnsupportedLattice { dim: d, lattice, .. } = &e else { unreachable!() };
                assert_eq!(*d, dim, "dimension in {e:?}");
                assert_eq!(lattice, name, "lattice in {e:?}");
                let msg = e.to_string();
                assert!(msg.contains("lattice"), "message {msg:?} does not say 'lattice'");
                assert!(msg.contains(name), "message {msg:?} does not name {name}");
                assert!(msg.contains(&format!("{dim}D")), "message {msg:?} does not name the dimension");
            }
            other => panic!("for_dimension({dim}, {name:?}): expected UnsupportedLattice, got {other:?}"),
        }
    }
    // The valid combinations, for contrast.
    assert_eq!(LatticeKind::for_dimension(2, "d2q9").unwrap(), LatticeKind::D2Q9);
    assert_eq!(LatticeKind::for_dimension(3, "D3Q19").unwrap(), LatticeKind::D3Q19);
    assert_eq!(LatticeKind::for_dimension(3, "d3q27").unwrap(), LatticeKind::D3Q27);
}

#[test]
fn lattice_dimension_out_of_range() {
    assert_invalid(LatticeKind::for_dimension(4, "d3q19"), "dim");
    assert_invalid(LatticeKind::for_dimension(1, "d2q9"), "dim");
}

#[test]
fn lattice_unknown_name() {
    assert_unknown("d2q7".parse::<LatticeKind>(), "lattice", "d2q7");
    assert_unknown(LatticeKind::for_dimension(3, "d3q15"), "lattice", "d3q15");
    assert_unknown("".parse::<LatticeKind>(), "lattice", "");
}

#[test]
fn precision_unknown() {
    assert_unknown("f16".parse::<Precision>(), "precision", "f16");
    assert_unknown("double".parse::<Precision>(), "precision", "double");
    assert_eq!("F64".parse::<Precision>().unwrap(), Precision::F64);
}

#[test]
fn backend_unknown() {
    assert_unknown("opencl".parse::<Backend>(), "backend", "opencl");
    assert_eq!("cpu".parse::<Backend>().unwrap(), Backend::Cpu);
}

// ---- ForestConfig ----

fn box_config(cells: [usize; 3]) -> ForestConfig {
    ForestConfig::new(cells).backend(Backend::Cpu)
}

#[test]
fn forest_cells_not_multiple_of_4() {
    assert_invalid(box_config([30, 32, 0]).validate(2), "cells");
    assert_invalid(box_config([32, 30, 0]).validate(2), "cells");
    // The third axis counts in 3D only.
    assert!(box_config([32, 32, 0]).validate(2).is_ok());
    assert_invalid(box_config([32, 32, 30]).validate(3), "cells");
    assert_invalid(box_config([32, 32, 0]).validate(3), "cells");
}

#[test]
fn forest_body_force_out_of_range() {
    for force in [[0.02, 0.0, 0.0], [f64::NAN, 0.0, 0.0], [0.0, f64::INFINITY, 0.0]] {
        assert_invalid(box_config([16, 16, 16]).body_force(force).validate(3), "body_force");
    }
    // A z component in 2D.
    assert_invalid(box_config([16, 16, 0]).body_force([0.0, 0.0, 1e-5]).validate(2), "body_force");
    assert!(box_config([16, 16, 16]).body_force([1e-5, 0.0, 1e-5]).validate(3).is_ok());
}

#[test]
fn forest_les_constant_out_of_range() {
    for constant in [0.0, -0.2, f64::NAN, 2.0] {
        let c = box_config([16, 16, 16]).les(ramus::Les::Smagorinsky { constant });
        assert_invalid(c.validate(3), "les.constant");
    }
}

#[test]
fn forest_cells_too_few() {
    assert_invalid(box_config([4, 32, 0]).validate(2), "cells");
}

#[test]
fn forest_periodic_face_opposite_wall() {
    let c = box_config([16, 16, 16]).boundary(Face::XMin, Boundary::Periodic);
    assert_invalid(c.validate(2), "boundaries");
    let c = box_config([16, 16, 16]).boundary(Face::YMax, Boundary::Periodic);
    assert_invalid(c.validate(2), "boundaries");
    let c = box_config([16, 16, 16]).boundary(Face::ZMin, Boundary::Periodic);
    assert_invalid(c.validate(3), "boundaries");
    // In 2D the z faces do not exist, so their boundaries are not checked.
    assert!(c.validate(2).is_ok());
}

#[test]
fn forest_wall_too_fast() {
    for velocity in [[0.3, 0.0, 0.0], [0.0, -0.5, 0.0], [0.25, 0.25, 0.0], [f64::NAN, 0.0, 0.0]] {
        let c = box_config([16, 16, 16]).boundary(Face::YMax, Boundary::moving_wall(velocity));
        assert_invalid(c.validate(2), "wall velocity");
    }
    let c = box_config([16, 16, 16]).boundary(Face::YMax, Boundary::moving_wall([0.29, 0.0, 0.0]));
    assert!(c.validate(2).is_ok(), "0.29 is below the limit");
}

#[test]
fn forest_fluid_invalid() {
    assert_invalid(box_config([16, 16, 0]).fluid(Fluid::Viscosity { nu: 0.0 }).validate(2), "nu");
    assert_invalid(box_config([16, 16, 0]).fluid(Fluid::Viscosity { nu: -1.0 }).validate(2), "nu");
    assert_invalid(box_config([16, 16, 0]).fluid(Fluid::Viscosity { nu: 1e-5 }).validate(2), "tau");
    let reynolds = |re, velocity, length| box_config([16, 16, 0]).fluid(Fluid::Reynolds { re, velocity, length });
    assert_invalid(reynolds(0.0, 0.1, 16.0).validate(2), "re");
    assert_invalid(reynolds(100.0, 0.0, 16.0).validate(2), "velocity");
    assert_invalid(reynolds(100.0, 0.1, -1.0).validate(2), "length");
}

// ---- Forest::new ----

/// Configurations that must be rejected, with the field at fault.
fn invalid_configs() -> Vec<(ForestConfig, &'static str)> {
    let base = || box_config([16, 16, 16]);
    vec![
        (box_config([30, 16, 16]), "cells"),
        (box_config([16, 4, 16]), "cells"),
        (base().fluid(Fluid::Reynolds { re: 0.0, velocity: 0.1, length: 16.0 }), "re"),
        (base().fluid(Fluid::Reynolds { re: -5.0, velocity: 0.1, length: 16.0 }), "re"),
        (base().fluid(Fluid::Reynolds { re: 1e6, velocity: 0.1, length: 16.0 }), "tau"),
        (base().fluid(Fluid::Viscosity { nu: f64::INFINITY }), "nu"),
        (base().boundary(Face::XMax, Boundary::Periodic), "boundaries"),
        (base().boundary(Face::YMax, Boundary::moving_wall([0.3, 0.0, 0.0])), "wall velocity"),
    ]
}

/// `Forest::new` returns the error instead of panicking (or allocating first).
fn forest_new_rejects<F: FnMut(ForestConfig) -> Result<(), Error>>(label: &str, dim: usize, mut new: F) {
    for (config, field) in invalid_configs() {
        let result = catch_unwind(AssertUnwindSafe(|| new(config.clone())));
        let result = result.unwrap_or_else(|_| panic!("{label}: Forest::new panicked on {config:?}"));
        assert_invalid(result, field);
    }
    // A 3D forest also checks the third axis.
    if dim == 3 {
        let result = catch_unwind(AssertUnwindSafe(|| new(box_config([16, 16, 0]))))
            .unwrap_or_else(|_| panic!("{label}: Forest::new panicked on cells [16, 16, 0]"));
        assert_invalid(result, "cells");
    }
}

#[test]
fn forest_new_returns_err_never_panics() {
    forest_new_rejects("D2Q9 f64", 2, |c| Forest::<D2, D2Q9, f64>::new(c).map(drop));
    forest_new_rejects("D2Q9 f32", 2, |c| Forest::<D2, D2Q9, f32>::new(c).map(drop));
    forest_new_rejects("D3Q19 f64", 3, |c| Forest::<D3, D3Q19, f64>::new(c).map(drop));
    forest_new_rejects("D3Q27 f32", 3, |c| Forest::<D3, D3Q27, f32>::new(c).map(drop));
}

// ---- Refinement ----

fn refined(f: impl FnOnce(&mut ramus::Refinement)) -> ForestConfig {
    let mut c = box_config([16, 16, 16]);
    c.refinement.levels = 3;
    f(&mut c.refinement);
    c
}

#[test]
fn refinement_levels_out_of_range() {
    assert_invalid(refined(|r| r.levels = 0).validate(2), "levels");
    assert_invalid(refined(|r| r.levels = 13).validate(3), "levels");
    assert!(refined(|r| r.levels = 12).validate(2).is_ok());
}

#[test]
fn refinement_criterion_parameters() {
    use ramus::Criterion::Vorticity;
    let v = |n_start, n_inc, length| refined(move |r| r.criterion = Vorticity { n_start, n_inc, length });
    assert_invalid(v(f64::NAN, 1.0, None).validate(2), "n_start");
    assert_invalid(v(-3.0, f64::INFINITY, None).validate(2), "n_inc");
    assert_invalid(v(-3.0, 1.0, Some(0.0)).validate(2), "criterion.length");
    assert!(v(-3.0, 1.0, Some(16.0)).validate(2).is_ok());
}

#[test]
fn refinement_wall_distance_and_faces() {
    let walls = |faces: Vec<Face>, distance| {
        refined(move |r| r.walls = Some(ramus::WallRefinement { faces, distance, obstacles: false }))
    };
    assert_invalid(walls(vec![Face::XMin], -1.0).validate(2), "walls.distance");
    assert_invalid(walls(vec![Face::ZMax], 2.0).validate(2), "walls.faces");
    assert!(walls(vec![Face::ZMax], 2.0).validate(3).is_ok());
}

#[test]
fn refinement_capacity() {
    use ramus::amr::Capacity;
    assert_invalid(refined(|r| r.capacity = Some(Capacity::Blocks { blocks: 0 })).validate(2), "capacity.blocks");
    let frac = |fraction| refined(move |r| r.capacity = Some(Capacity::FreeMemoryFraction { fraction }));
    assert_invalid(frac(0.0).validate(2), "capacity.fraction");
    assert_invalid(frac(1.5).validate(2), "capacity.fraction");
    // A pool smaller than the root grid is out of memory, named as such.
    let c = box_config([16, 16, 0]).refinement(ramus::Refinement {
        levels: 2,
        capacity: Some(Capacity::Blocks { blocks: 3 }),
        ..Default::default()
    });
    assert!(matches!(Forest::<D2, D2Q9, f64>::new(c), Err(Error::OutOfMemory { .. })));
}

#[test]
fn refinement_interpolation_unknown() {
    assert_unknown(ramus::Interpolation::parse("quadratic"), "interp", "quadratic");
    assert_eq!(ramus::Interpolation::parse("cubic").unwrap(), ramus::Interpolation::Cubic);
}

#[test]
fn toml_configuration_errors_name_the_problem() {
    // Unknown criterion kind.
    let e = ForestConfig::from_toml("cells = [16, 16, 1]\n[refinement]\ncriterion = { kind = \"q\" }");
    assert_invalid(e, "configuration");
    // Missing required field.
    assert_invalid(ForestConfig::from_toml("[refinement]\nlevels = 2"), "configuration");
    // Missing file.
    assert_invalid(ForestConfig::from_toml_file("/nonexistent/ramus.toml"), "configuration file");
    // A full file parses, and its values are then validated.
    let text = r#"
        cells = [32, 32, 1]
        boundaries = [{ kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
                      { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0.1, 0, 0] },
                      { kind = "periodic" }, { kind = "periodic" }]
        fluid = { kind = "reynolds", re = 100, velocity = 0.1, length = 32 }
        backend = "cpu"
        [refinement]
        levels = 0
    "#;
    let c = ForestConfig::from_toml(text).expect("parses");
    assert_invalid(c.validate(2), "levels");
}

/// A mark out of range no longer reaches the forest: criteria return [`ramus::Mark`] (an
/// integer does not compile, see the `compile_fail` example on `Forest::adapt_with`), and
/// a device code converts only if it is a mark.
#[test]
fn user_criterion_mark_out_of_range() {
    assert_eq!(ramus::Mark::from_code(7), None);
    let c = box_config([16, 16, 0]).levels(2);
    let mut forest = Forest::<D2, D2Q9, f64>::new(c).expect("forest");
    assert!(forest.adapt_with(|_| ramus::Mark::None).is_ok());
}

// --- Open boundaries and obstacles (issue: flow past a square cylinder) ---

#[test]
fn inlet_speed_too_fast() {
    let c = box_config([16, 16, 0]).boundary(Face::XMin, Boundary::velocity([0.3, 0.0, 0.0]));
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "inlet velocity");
}

#[test]
fn outlet_density_out_of_range() {
    let c = box_config([16, 16, 0]).boundary(Face::XMax, Boundary::Pressure { density: 1.5 });
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "outlet density");
}

#[test]
fn obstacle_outside_domain() {
    let c = box_config([16, 16, 0]).obstacle(ramus::Shape::square([15.0, 8.0, 0.0], 4.0));
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "obstacle position");
    let c = box_config([16, 16, 0]).obstacle(ramus::Shape::circle([8.0, -1.0, 0.0], 2.0));
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "obstacle position");
}

#[test]
fn obstacle_degenerate() {
    let c = box_config([16, 16, 0]).obstacle(ramus::Shape::Box { min: [4.0, 4.0, 0.0], max: [4.0, 6.0, 0.0] });
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "obstacle box");
    let c = box_config([16, 16, 0]).obstacle(ramus::Shape::circle([8.0, 8.0, 0.0], 0.0));
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "obstacle sphere");
}

#[test]
fn obstacle_motion_and_cylinder() {
    // A surface speed of 0.3 or more (here ω r = 0.5 · 2 = 1).
    let fast = ramus::Obstacle::from(ramus::Shape::circle([8.0, 8.0, 0.0], 2.0)).rotating([0.0, 0.0, 0.5]);
    assert_invalid(Forest::<D2, D2Q9, f64>::new(box_config([16, 16, 0]).obstacle(fast)).map(|_| ()), "obstacle motion");
    // In 2D only rotation about z.
    let tilted = ramus::Obstacle::from(ramus::Shape::circle([8.0, 8.0, 0.0], 2.0)).rotating([0.01, 0.0, 0.0]);
    assert_invalid(
        Forest::<D2, D2Q9, f64>::new(box_config([16, 16, 0]).obstacle(tilted)).map(|_| ()),
        "obstacle motion",
    );
    let nan = ramus::Obstacle { velocity: [f64::NAN, 0.0, 0.0], ..ramus::Shape::circle([8.0, 8.0, 0.0], 2.0).into() };
    assert_invalid(Forest::<D2, D2Q9, f64>::new(box_config([16, 16, 0]).obstacle(nan)).map(|_| ()), "obstacle motion");
    let flat = ramus::Shape::Cylinder { center: [8.0; 3], radius: 2.0, axis: ramus::Axis::X, length: 0.0 };
    assert_invalid(
        Forest::<D3, D3Q19, f64>::new(box_config([16, 16, 16]).obstacle(flat)).map(|_| ()),
        "obstacle cylinder",
    );
    let wide = ramus::Shape::Cylinder { center: [8.0; 3], radius: 9.0, axis: ramus::Axis::Y, length: 4.0 };
    assert_invalid(
        Forest::<D3, D3Q19, f64>::new(box_config([16, 16, 16]).obstacle(wide)).map(|_| ()),
        "obstacle position",
    );
    // Along its axis it may run through the domain.
    let long = ramus::Shape::Cylinder { center: [8.0; 3], radius: 2.0, axis: ramus::Axis::Y, length: 40.0 };
    assert!(Forest::<D3, D3Q19, f64>::new(box_config([16, 16, 16]).obstacle(long)).is_ok());
}

#[test]
fn walls_and_obstacles_from_toml() {
    let text = r#"
        cells = [16, 16, 0]
        boundaries = [{ kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
                      { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
                      { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] }]
        walls = "interpolated"
        fluid = { kind = "viscosity", nu = 0.1 }
        [[obstacles]]
        shape = { kind = "sphere", center = [8.0, 8.0, 0.0], radius = 2.0 }
        angular_velocity = [0.0, 0.0, 0.01]
        [[obstacles]]
        shape = { kind = "cylinder", center = [8.0, 8.0, 0.0], radius = 7.0, length = 1.0 }
        outside = true
    "#;
    let c = ramus::ForestConfig::from_toml(text).expect("valid case");
    assert_eq!(c.walls, ramus::Walls::Interpolated);
    assert!(c.obstacles[1].outside && c.obstacles[0].moves());
    assert_eq!(
        c.obstacles[1].shape,
        ramus::Shape::Cylinder { center: [8.0, 8.0, 0.0], radius: 7.0, axis: ramus::Axis::Z, length: 1.0 }
    );
    let bad = text.replace("walls = \"interpolated\"", "walls = \"bouzidi\"");
    assert!(ramus::ForestConfig::from_toml(&bad).is_err(), "unknown wall rule");
    let bad = text.replace("outside = true", "inside = true");
    assert!(ramus::ForestConfig::from_toml(&bad).is_err(), "unknown obstacle key");
}

#[test]
fn too_many_obstacles() {
    let mut c = box_config([64, 64, 0]);
    for k in 0..=ramus::kernels::obstacle::MAX_SHAPES {
        c = c.obstacle(ramus::Shape::circle([4.0 + 6.0 * k as f64, 8.0, 0.0], 1.0));
    }
    assert_invalid(Forest::<D2, D2Q9, f64>::new(c).map(|_| ()), "obstacles");
}

#[test]
fn force_on_unknown_obstacle() {
    let c = box_config([16, 16, 0]).obstacle(ramus::Shape::circle([8.0, 8.0, 0.0], 2.0));
    let mut forest = Forest::<D2, D2Q9, f64>::new(c).expect("forest");
    assert_invalid(forest.force(Some(1)), "obstacle");
}

#[test]
fn cylinder_parameters() {
    use ramus::cases::cylinder::Cylinder;
    let ok = Cylinder { root: 128, levels: 2, re: 50.0, ..Cylinder::default() };
    assert!(ok.forest_config(Backend::Cpu).is_ok());
    // Issue "Trustworthy runs": root 128 at Re 100 (cell Reynolds number 25) diverged with
    // exit 0 and C_D = 3.3e212; such grids are refused, naming why.
    let e = Cylinder { re: 100.0, ..ok.clone() }.forest_config(Backend::Cpu).expect_err("Re/D = 25 is refused");
    assert!(e.to_string().contains("cell Reynolds number") && e.to_string().contains("root >= 256"), "{e}");
    assert!(Cylinder { root: 256, re: 100.0, ..ok.clone() }.forest_config(Backend::Cpu).is_ok());
    assert_invalid(Cylinder { root: 100, ..ok.clone() }.forest_config(Backend::Cpu), "root");
    assert_invalid(Cylinder { height: 15.5, ..ok.clone() }.forest_config(Backend::Cpu), "height");
    assert_invalid(Cylinder { u0: 0.3, ..ok.clone() }.forest_config(Backend::Cpu), "u0");
    assert_invalid(Cylinder { re: -1.0, ..ok.clone() }.forest_config(Backend::Cpu), "re");
}

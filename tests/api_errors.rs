//! The public API answers bad arguments with named errors, never a panic (issue
//! "Trustworthy runs", item 5): each test reproduces one finding of the probe that found
//! eleven panics and several pieces of nonsense accepted silently.

use std::path::PathBuf;

use ramus::amr::{Capacity, Mesh, MeshSpec};
use ramus::backend::Device;
use ramus::cases::cavity::{Cavity, Profile};
use ramus::cases::cylinder::Cylinder;
use ramus::output::{read_vtu, write_leaf_cells_vtu};
use ramus::{Backend, Boundary, Criterion, Error, Face, Forest, ForestConfig, Refinement, D2, D2Q9};

#[track_caller]
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, Error>, field: &str) {
    match result {
        Err(Error::InvalidParameter { field: f, .. }) if f == field => {}
        other => panic!("expected InvalidParameter {{ field: {field:?} }}, got {other:?}"),
    }
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ramus-api-errors-{}-{name}", std::process::id()))
}

fn cavity_config() -> ForestConfig {
    Cavity { dim: 2, n: 16, re: 100.0, lid: 0.05 }.forest_config(Backend::Cpu).expect("a valid cavity")
}

#[test]
fn device_copies_out_of_range_are_errors() {
    let dev = Device::new(Backend::Cpu).unwrap();
    let mut a = dev.upload(&[1u32, 2, 3, 4]).unwrap();
    let mut b = dev.zeros::<u32>(2).unwrap();
    assert_invalid(dev.read(&a, 2..9), "read range");
    assert_invalid(dev.write(&mut a, 3, &[7, 8]), "write range");
    assert_invalid(dev.get(&a, 4), "index");
    assert_invalid(dev.copy(&a, 5, &mut b, 0), "copy source range");
    assert_invalid(dev.copy(&a, 4, &mut b, 0), "copy target range");
    assert_invalid(dev.copy(&b, 2, &mut a, usize::MAX), "copy target range");
    assert_eq!(dev.read(&a, 1..3).unwrap(), vec![2, 3]);
    let c = dev.upload(&[5u64, 6]).unwrap();
    assert_invalid(dev.read_pair(&a, 0..2, &c, 1..3), "read range");
    assert_invalid(dev.read_pair(&a, 3..5, &c, 0..1), "read range");
    assert_eq!(dev.read_pair(&a, 1..3, &c, 1..2).unwrap(), (vec![2, 3], vec![6]));
    assert_invalid(dev.fill_bytes(&mut a, 3, 2, 0xFF), "fill range");
    dev.fill_bytes(&mut a, 1, 2, 0xFF).unwrap();
    assert_eq!(dev.download(&a).unwrap(), vec![1, u32::MAX, u32::MAX, 4]);
}

#[test]
fn output_functions_reject_bad_arguments_and_files() {
    let cells = Forest::<D2, D2Q9, f64>::new(cavity_config()).unwrap().leaf_cells().unwrap();
    let path = temp("cells.vtu");
    assert_invalid(write_leaf_cells_vtu(&path, 4, &cells), "dim");
    let mut ragged = cells.clone();
    ragged.rho.pop();
    assert_invalid(write_leaf_cells_vtu(&path, 2, &ragged), "leaf cells");
    assert_invalid(ragged.mass(2), "leaf cells");
    assert_invalid(cells.mass(5), "dim");
    // A points array that is not of 3-vectors is a named error, not an index panic.
    write_leaf_cells_vtu(&path, 2, &cells).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("format=\"ascii\">").unwrap() + "format=\"ascii\">".len();
    let broken = format!("{}0.5 {}", &text[..at], &text[at..]);
    std::fs::write(&path, broken).unwrap();
    match read_vtu(&path) {
        Err(Error::Io { .. }) => {}
        other => panic!("expected Error::Io for a malformed file, got {other:?}"),
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn profiles_and_fields_out_of_range_are_errors() {
    let one = Profile { coords: vec![0.5], values: vec![1.0] };
    assert_invalid(one.at(0.5), "profile");
    let none = Profile { coords: vec![], values: vec![] };
    assert_invalid(none.at(0.5), "profile");
    let ragged = Profile { coords: vec![0.0, 1.0], values: vec![1.0] };
    assert_invalid(ragged.at(0.5), "profile");
    let line = Profile { coords: vec![0.0, 1.0], values: vec![0.0, 2.0] };
    assert_eq!(line.at(0.25).unwrap(), 0.5);
    let fields = Forest::<D2, D2Q9, f64>::new(cavity_config()).unwrap().fields().unwrap();
    assert!(fields.velocity(15, 15, 0).is_some());
    assert!(fields.velocity(16, 0, 0).is_none() && fields.density(0, 0, 1).is_none());
    assert_invalid(Cavity { dim: 2, n: 32, re: 100.0, lid: 0.05 }.centerlines(&fields), "fields");
}

/// τ is bounded above (ramus::config::MAX_TAU explains why): `--re 1e-300` gave τ = 2.4e300,
/// and the cylinder at Re = 1e-6 printed C_D = 178.
#[test]
fn relaxation_time_is_bounded_above() {
    assert_invalid(Cavity { dim: 2, n: 16, re: 1e-300, lid: 0.05 }.forest_config(Backend::Cpu), "tau");
    let cyl = Cylinder { root: 128, re: 1e-6, levels: 1, ..Cylinder::default() };
    assert_invalid(cyl.forest_config(Backend::Cpu), "tau");
    // τ = 2 is still allowed (ν = 1/2).
    assert!(Cavity { dim: 2, n: 16, re: 1.6, lid: 0.05 }.forest_config(Backend::Cpu).is_ok());
}

/// A wall velocity with a normal component pumped mass in (256 → 576 in 200 steps).
#[test]
fn wall_velocity_must_be_tangential() {
    let mut config = cavity_config();
    config.boundaries[Face::YMax.index()] = Boundary::Wall { velocity: [0.05, 0.01, 0.0] };
    assert_invalid(config.validate(2), "wall velocity");
    assert_invalid(Forest::<D2, D2Q9, f64>::new(config).map(|_| ()), "wall velocity");
}

#[test]
fn initial_states_are_checked() {
    let mut forest = Forest::<D2, D2Q9, f64>::new(cavity_config()).unwrap();
    assert_invalid(forest.initialize(|_| (f64::NAN, [0.0; 3])), "initial state");
    assert_invalid(forest.initialize(|_| (0.0, [0.0; 3])), "initial state");
    assert_invalid(forest.initialize(|_| (1.0, [0.7, 0.0, 0.0])), "initial state");
    assert!(forest.initialize(|_| (1.0, [0.05, 0.0, 0.0])).is_ok());
}

/// Adaptation that would silently never run: `every = 0` with a criterion, a user
/// criterion on a forest that never adapts.
#[test]
fn adaptation_that_never_runs_is_an_error() {
    let refinement = Refinement {
        levels: 3,
        every: 0,
        criterion: Criterion::Vorticity { n_start: -2.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    assert_invalid(cavity_config().refinement(refinement.clone()).validate(2), "refinement.every");
    let on_demand = Refinement { on_demand: true, ..refinement.clone() };
    assert!(cavity_config().refinement(on_demand).validate(2).is_ok());
    let never = Refinement { criterion: Criterion::None, ..refinement };
    let mut forest = Forest::<D2, D2Q9, f64>::new(cavity_config().refinement(never)).unwrap();
    assert_invalid(forest.set_user_criterion(|_, _| ramus::Mark::None), "refinement.every");
    let mut single = Forest::<D2, D2Q9, f64>::new(cavity_config()).unwrap();
    assert!(single.set_user_criterion(|_, _| ramus::Mark::None).is_err());
}

#[test]
fn mesh_specs_are_validated() {
    let spec = |cells: [usize; 3], boundaries: [Boundary; 6]| MeshSpec {
        cells,
        boundaries,
        max_levels: 2,
        capacity: Capacity::Blocks { blocks: 1000 },
    };
    let dev = || Device::new(Backend::Cpu).unwrap();
    let walls = [Boundary::NO_SLIP; 6];
    assert_invalid(Mesh::<D2>::new(dev(), spec([18, 16, 1], walls), 0).map(|_| ()), "cells");
    assert_invalid(Mesh::<D2>::new(dev(), spec([0, 16, 1], walls), 0).map(|_| ()), "cells");
    let mut one_sided = walls;
    one_sided[Face::XMin.index()] = Boundary::Periodic;
    assert_invalid(Mesh::<D2>::new(dev(), spec([16, 16, 1], one_sided), 0).map(|_| ()), "boundaries");
    let full = MeshSpec { capacity: Capacity::FreeMemoryFraction { fraction: 1.0 }, ..spec([16, 16, 1], walls) };
    assert_invalid(Mesh::<D2>::new(dev(), full, 0).map(|_| ()), "capacity.fraction");
    assert!(Mesh::<D2>::new(dev(), spec([16, 16, 1], walls), 0).is_ok());
}

/// A broken or incomplete `libcuda.so` is a clean `CudaUnavailable`, printed by the
/// example without a panic message or backtrace (the probe does not rely on unwinding).
#[test]
fn broken_cuda_driver_is_a_clean_error() {
    let dir = temp("fake-cuda");
    std::fs::create_dir_all(&dir).unwrap();
    // Not a shared object at all.
    std::fs::write(dir.join("libcuda.so"), b"not an ELF file").unwrap();
    std::fs::write(dir.join("libcuda.so.1"), b"not an ELF file").unwrap();
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|p| p.parent()).unwrap().join("examples").join("cavity");
    let o = std::process::Command::new(&bin)
        .args(["--backend", "cuda", "--n", "16", "--steps", "1", "--out"])
        .arg(dir.join("out"))
        .env("LD_LIBRARY_PATH", &dir)
        .output()
        .expect("the cavity example (built by cargo test)");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("CUDA") && !err.contains("panicked") && !err.contains("backtrace"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

//! CPU-versus-CUDA agreement of the fused stream-collide step, on a GPU machine.
//!
//! Every test here needs a CUDA device and is `#[ignore]`d; `scripts/gpu-check.sh run`
//! runs them on the device machine with
//! `gpu-tests --ignored --nocapture --test-threads=1`, printing the figures.
//!
//! The same kernel source runs on both backends and neither side contracts `a*b + c`
//! into an FMA (see `shared/reference/toolchain-notes.md`), so the two are expected to
//! agree bitwise; the acceptance criterion is the looser max |Δf| ≤ 1e-12 (f64),
//! ≤ 1e-5 (f32).

use ramus::cases::cavity::Cavity;
use ramus::{
    Backend, Boundary, BulkSteps, Collision, Dim, Face, Fluid, Forest, ForestConfig, Half, Native, PairedCells,
    PoolStorage, VelocitySet, D2, D2Q9, D3, D3Q19, D3Q27,
};

/// Acceptance tolerance on max |f_cpu − f_cuda|: none for 16-bit storage (both backends
/// round to nearest even, `ramus_kernels::storage`, so any difference is a bug).
fn tolerance<F: ramus::Float, S: PoolStorage<F>>() -> f64 {
    if !S::NAME.is_empty() {
        0.0
    } else if F::NAME == "f64" {
        1e-12
    } else {
        1e-5
    }
}

/// A smooth, non-trivial initial state: density and all velocity components vary in
/// space (so every direction carries a different population), |u| ≤ 0.03.
fn initial_state(dim: usize) -> impl Fn([f64; 3]) -> (f64, [f64; 3]) {
    move |x: [f64; 3]| {
        let (a, b, c) = (0.21 * x[0], 0.17 * x[1], 0.13 * x[2]);
        let rho = 1.0 + 0.01 * (a + 2.0 * b).sin() + 0.005 * (c - a).cos();
        let mut u = [0.02 * (b + c).sin(), 0.015 * (a - c).cos(), 0.0];
        if dim == 3 {
            u[2] = 0.01 * (a + b + c).sin();
        }
        (rho, u)
    }
}

/// Outcome of one CPU-versus-CUDA comparison.
struct Comparison {
    values: usize,
    max_abs: f64,
    bitwise_different: usize,
    non_finite: usize,
    /// max |f_after − f_before| on the CPU: shows the run did something.
    max_change: f64,
    max_drho: f64,
    max_du: f64,
}

/// Runs `steps` steps of `config` from [`initial_state`] on the CPU and on CUDA (there
/// with `paired` cells per thread and `bulk` steps; the CPU with the defaults, which on
/// these grids are one cell per thread and the bulk steps where measured faster) and
/// compares the raw distribution pools and the macroscopic fields.
fn compare<D: Dim, Q: VelocitySet<Dim = D>, F: ramus::Float, S: PoolStorage<F>>(
    config: &ForestConfig,
    steps: u64,
    (paired, bulk): (PairedCells, BulkSteps),
) -> Comparison {
    let run = |backend: Backend| {
        let mut forest = Forest::<D, Q, F, S>::new(config.clone().backend(backend)).expect("building the forest");
        assert_eq!(forest.backend(), backend, "forest built on the wrong backend");
        if backend == Backend::Cuda {
            forest.set_paired_cells(paired);
            forest.set_bulk_steps(bulk).expect("bulk steps");
        }
        forest.initialize(initial_state(D::D)).expect("initialising");
        let before = forest.distributions().expect("downloading the initial state");
        forest.advance(steps).expect("advancing");
        assert_eq!(forest.steps(), steps);
        let after = forest.distributions().expect("downloading distributions");
        let fields = forest.fields().expect("computing fields");
        (before, after, fields)
    };
    // CUDA first: without a device the test fails at once.
    let (gpu_before, gpu, gpu_fields) = run(Backend::Cuda);
    let (before, cpu, cpu_fields) = run(Backend::Cpu);
    assert_eq!(cpu.len(), gpu.len(), "pool sizes differ");
    assert_eq!(before.len(), gpu_before.len());
    // The initial pools are computed on the host: identical by construction.
    assert!(
        before.iter().zip(&gpu_before).all(|(a, b)| S::widen(*a).to_f64().to_bits() == S::widen(*b).to_f64().to_bits()),
        "initial pools differ after upload/download"
    );

    let mut c = Comparison {
        values: cpu.len(),
        max_abs: 0.0,
        bitwise_different: 0,
        non_finite: 0,
        max_change: 0.0,
        max_drho: 0.0,
        max_du: 0.0,
    };
    for ((a, b), f0) in cpu.iter().zip(&gpu).zip(&before) {
        // f16 → f32 → f64 is exact, so comparing the f64 bits compares the stored bits.
        let (a, b, f0) = (S::widen(*a).to_f64(), S::widen(*b).to_f64(), S::widen(*f0).to_f64());
        if !(a.is_finite() && b.is_finite()) {
            c.non_finite += 1;
            continue;
        }
        if a.to_bits() != b.to_bits() {
            c.bitwise_different += 1;
        }
        c.max_abs = c.max_abs.max((a - b).abs());
        c.max_change = c.max_change.max((a - f0).abs());
    }
    for (k, (r0, r1)) in cpu_fields.rho.iter().zip(&gpu_fields.rho).enumerate() {
        c.max_drho = c.max_drho.max((r0 - r1).abs());
        for a in 0..3 {
            c.max_du = c.max_du.max((cpu_fields.u[k][a] - gpu_fields.u[k][a]).abs());
        }
    }
    c
}

/// One scenario of a lattice × precision test.
struct Scenario {
    name: &'static str,
    config: ForestConfig,
    steps: u64,
    /// CUDA's [`PairedCells`] (`All`: the two-cells-per-thread kernels against the CPU's
    /// one cell per thread).
    paired: PairedCells,
    /// CUDA's [`BulkSteps`] (`All`: every step split into the bulk kernel and the plain
    /// step over the boundary blocks, against the CPU's default).
    bulk: BulkSteps,
}

/// Cavity (all walls, moving lid) after an even and an odd number of steps; the cavity
/// with periodic x faces (wrapping links next to walls); a fully periodic box with
/// unequal sides (wrapping on every axis, no walls); the cavity and the box again with
/// every step two cells per thread on CUDA, with BGK and with the other collision
/// operators.
fn scenarios(dim: u32) -> Vec<Scenario> {
    let n = if dim == 2 { 64 } else { 32 };
    let cavity = Cavity { dim, n, re: 100.0, lid: 0.05 }.forest_config(Backend::Cpu).expect("cavity configuration");
    let x_periodic = cavity.clone().boundary(Face::XMin, Boundary::Periodic).boundary(Face::XMax, Boundary::Periodic);
    let box_cells = if dim == 2 { [64, 48, 0] } else { [32, 24, 16] };
    let mut periodic = ForestConfig::new(box_cells).fluid(Fluid::Viscosity { nu: 0.02 });
    for face in Face::ALL {
        periodic = periodic.boundary(face, Boundary::Periodic);
    }
    let (m, all) = (PairedCells::Measured, PairedCells::All);
    let b = BulkSteps::Measured;
    vec![
        Scenario { name: "cavity", config: cavity.clone(), steps: 100, paired: m, bulk: b },
        Scenario { name: "cavity", config: cavity.clone(), steps: 101, paired: m, bulk: b },
        Scenario { name: "cavity, periodic x", config: x_periodic, steps: 101, paired: m, bulk: b },
        Scenario { name: "periodic box", config: periodic.clone(), steps: 100, paired: m, bulk: b },
        Scenario { name: "periodic box", config: periodic.clone(), steps: 1, paired: m, bulk: b },
        Scenario { name: "cavity, paired", config: cavity.clone(), steps: 101, paired: PairedCells::All, bulk: b },
        Scenario {
            name: "periodic box, paired",
            config: periodic.clone(),
            steps: 100,
            paired: PairedCells::All,
            bulk: b,
        },
        Scenario {
            name: "cavity, TRT, paired",
            config: cavity.clone().collision(Collision::trt()),
            steps: 101,
            paired: all,
            bulk: b,
        },
        Scenario {
            name: "cavity, RR, paired",
            config: cavity.clone().collision(Collision::RecursiveRegularized),
            steps: 101,
            paired: all,
            bulk: b,
        },
        Scenario { name: "cavity, bulk", config: cavity, steps: 101, paired: m, bulk: BulkSteps::All },
        Scenario { name: "periodic box, bulk", config: periodic.clone(), steps: 100, paired: m, bulk: BulkSteps::All },
        Scenario {
            name: "periodic box, MRT, paired",
            config: periodic.collision(Collision::mrt()),
            steps: 101,
            paired: all,
            bulk: b,
        },
    ]
}

/// Runs every scenario, prints a line each, and fails (after printing all of them) if any
/// exceeds the tolerance or produced non-finite values.
fn check_lattice<D: Dim, Q: VelocitySet<Dim = D>, F: ramus::Float, S: PoolStorage<F>>() {
    let dim = D::D as u32;
    let tol = tolerance::<F, S>();
    let precision = if S::NAME.is_empty() { F::NAME.to_string() } else { format!("{}/{}", F::NAME, S::NAME) };
    let mut failures = Vec::new();
    for s in scenarios(dim) {
        let cells = s.config.cells;
        let grid = if dim == 2 {
            format!("{}x{}", cells[0], cells[1])
        } else {
            format!("{}x{}x{}", cells[0], cells[1], cells[2])
        };
        let c = compare::<D, Q, F, S>(&s.config, s.steps, (s.paired, s.bulk));
        let ok = c.non_finite == 0 && c.max_abs <= tol && c.max_change > 0.0;
        println!(
            "{} {} {:<20} {:>9} {:>4} steps: max|df| = {:.3e} (tol {:.0e}), bitwise different {}/{}, \
             non-finite {}, max|drho| = {:.3e}, max|du| = {:.3e}, max change = {:.3e}  {}",
            Q::NAME,
            precision,
            s.name,
            grid,
            s.steps,
            c.max_abs,
            tol,
            c.bitwise_different,
            c.values,
            c.non_finite,
            c.max_drho,
            c.max_du,
            c.max_change,
            if ok { "ok" } else { "FAIL" }
        );
        if !ok {
            failures.push(format!(
                "{} {} {} {} steps: max|df| = {:e}, non-finite {}, max change {:e}",
                Q::NAME,
                precision,
                s.name,
                s.steps,
                c.max_abs,
                c.non_finite,
                c.max_change
            ));
        }
    }
    assert!(failures.is_empty(), "CPU and CUDA disagree:\n{}", failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d2q9_f32() {
    check_lattice::<D2, D2Q9, f32, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d2q9_f64() {
    check_lattice::<D2, D2Q9, f64, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q19_f32() {
    check_lattice::<D3, D3Q19, f32, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q19_f64() {
    check_lattice::<D3, D3Q19, f64, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q27_f32() {
    check_lattice::<D3, D3Q27, f32, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q27_f64() {
    check_lattice::<D3, D3Q27, f64, Native>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d2q9_f16_storage() {
    check_lattice::<D2, D2Q9, f32, Half>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q19_f16_storage() {
    check_lattice::<D3, D3Q19, f32, Half>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cpu_cuda_agree_d3q27_f16_storage() {
    check_lattice::<D3, D3Q27, f32, Half>();
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn cuda_reports_device_and_auto_picks_it() {
    assert!(ramus::cuda_available(), "no usable CUDA device");
    let config = ForestConfig::new([16, 16, 0]);
    let cuda = Forest::<D2, D2Q9, f32>::new(config.clone().backend(Backend::Cuda)).expect("CUDA forest");
    let name = cuda.device_name();
    println!("CUDA device: {name}");
    assert_eq!(cuda.backend(), Backend::Cuda);
    assert!(!name.trim().is_empty(), "empty device name");
    assert!(!name.starts_with("CPU"), "CUDA forest reports a CPU device: {name}");
    let auto = Forest::<D2, D2Q9, f32>::new(config.backend(Backend::Auto)).expect("Auto forest");
    assert_eq!(auto.backend(), Backend::Cuda, "Backend::Auto did not pick CUDA on a GPU machine");
    assert_eq!(auto.device_name(), name);
}

#[test]
#[ignore = "needs a CUDA GPU: run by scripts/gpu-check.sh on the device"]
fn copy_bandwidth_is_plausible_and_oversize_is_out_of_memory() {
    let bw = ramus::backend::cuda::measure_copy_bandwidth(256 << 20).expect("measuring copy bandwidth");
    println!("device copy bandwidth (256 MiB buffers): {:.1} GB/s", bw / 1e9);
    // Any GPU of the last decade: 50 GB/s .. 20 TB/s.
    assert!((5e10..2e13).contains(&bw), "implausible copy bandwidth {bw:e} B/s");
    match ramus::backend::cuda::measure_copy_bandwidth(usize::MAX / 4) {
        Err(ramus::Error::OutOfMemory { needed, available, .. }) => {
            println!("oversize request: needs {needed} B, {available} B free -> OutOfMemory (ok)");
        }
        Err(e) => panic!("oversize request: expected OutOfMemory, got {e}"),
        Ok(bw) => panic!("oversize request succeeded ({bw:e} B/s)"),
    }
}

/// A kernel never receives the address of another device's buffer: `Device::launch`
/// refuses a slice of the other side with an error naming the argument (the CPU backend
/// used to get a null pointer for a CUDA buffer, and a CUDA launch a host address).
#[test]
#[ignore = "needs a CUDA device (scripts/gpu-check.sh run)"]
fn buffers_of_another_device_are_refused() {
    use ramus::backend::{Buffer, Device, Views};
    use ramus::kernels::primitives::{RankSort, RankSortArgs};
    let cuda = Device::new(Backend::Cuda).expect("a CUDA device");
    let on_gpu = cuda.upload(&[2u32, 1, 0]).expect("upload");
    let on_host = Buffer::Host(vec![2u32, 1, 0]);
    for (dev, foreign, name) in
        [(&Device::Cpu, &on_gpu, "CUDA buffer on the CPU"), (&cuda, &on_host, "host buffer on CUDA")]
    {
        let (mut ko, mut vo) = (dev.zeros::<u32>(3).unwrap(), dev.zeros::<u32>(3).unwrap());
        let local = dev.zeros::<u32>(3).unwrap();
        let args = RankSortArgs::<Views> {
            keys_in: foreign.view(),
            values_in: local.view(),
            keys_out: ko.view_mut(),
            values_out: vo.view_mut(),
            n: 3,
            mask: u32::MAX,
        };
        // SAFETY: refused before launching.
        let r = unsafe { dev.launch::<RankSort>(3, args) };
        match r {
            Err(ramus::Error::Cuda { context, .. }) => assert!(context.contains("keys_in"), "{name}: {context}"),
            other => panic!("{name}: expected an error naming keys_in, got {other:?}"),
        }
    }
    println!("buffers of another device: refused on both backends, naming the argument");
}

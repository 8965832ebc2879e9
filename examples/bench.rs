//! Throughput of the fused stream-collide step against the memory-bandwidth limit.
//!
//! ```text
//! cargo run --release --features benchmarks --example bench -- [--backend cuda|cpu] [--quick] [--steps N] [--out FILE]
//! ```
//!
//! Measures the copy bandwidth of the device once (device-to-device copies with CUDA
//! events, or a multi-threaded host copy for `--backend cpu`), then runs uniform fully
//! periodic grids (no walls; a small non-zero velocity field) — D2Q9 2048², D3Q19 256³,
//! D3Q27 256³, each in f32 and f64 — and reports
//!
//! - MLUPS = cells · steps / seconds / 10⁶ (median of `--reps` timed runs of `--steps`
//!   steps, after `--warmup` steps; `Forest::advance` synchronises at its end);
//! - the bandwidth limit: each update reads and writes `Q` values, so at most
//!   `copy_bandwidth / (2 · Q · sizeof(F))` updates per second;
//! - the fraction of the limit reached.
//!
//! The table (markdown) goes to stdout and, with `--out FILE`, to FILE. Errors print
//! `error: ...` and exit with status 2.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use ramus::{
    Backend, Boundary, Dim, Face, Fluid, Forest, ForestConfig, Half, LatticeKind, Native, PoolStorage, Precision,
    StorageKind, VelocitySet,
};
use ramus::{D2, D2Q9, D3, D3Q19, D3Q27};

#[path = "support/mod.rs"]
mod support;

#[derive(Parser, Debug, serde::Serialize, serde::Deserialize)]
#[command(about = "LBM throughput (MLUPS) against the device copy-bandwidth limit")]
struct Args {
    /// Backend to benchmark: cuda or cpu (auto picks CUDA when present).
    #[arg(long, default_value = "cuda")]
    backend: Backend,
    /// Smaller grids and fewer steps (a smoke test of the benchmark).
    #[arg(long)]
    quick: bool,
    /// Timed steps per run, for every case (rounded up to an even number). Default:
    /// 1000 (2D) / 200 (3D) on CUDA, fewer on the CPU and with --quick.
    #[arg(long)]
    steps: Option<u64>,
    /// Untimed steps before timing (rounded up to an even number).
    #[arg(long, default_value_t = 20)]
    warmup: u64,
    /// Timed runs per case; the median is reported.
    #[arg(long)]
    reps: Option<usize>,
    /// Cells per side of the 2D grid (default 2048 on CUDA).
    #[arg(long)]
    n2: Option<usize>,
    /// Cells per side of the 3D grids (default 256 on CUDA).
    #[arg(long)]
    n3: Option<usize>,
    /// Bytes per buffer of the copy-bandwidth measurement (default 1 GiB on CUDA).
    #[arg(long)]
    copy_bytes: Option<usize>,
    /// Also write the table (markdown) to this file.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Run only these cases, e.g. `--only d3q19-f32 --only d2q9` (prefix match on
    /// `<lattice>-<precision>[-f16]`, `-f16` for 16-bit storage of f32 arithmetic); all
    /// nine when absent.
    #[arg(long)]
    only: Vec<String>,
    /// Launch every kernel after the one before it has ended (no programmatic dependent
    /// launch; for comparing the two, see `Forest::set_dependent_launches`).
    #[arg(long)]
    no_dependent_launches: bool,
    /// Which AA steps take two cells per thread: measured (where that measured faster),
    /// all or off (for comparing; see `Forest::set_paired_cells`).
    #[arg(long, default_value = "measured")]
    paired_cells: String,
    /// Which AA steps step the blocks without boundary flags in a kernel of their own:
    /// measured (where that measured faster), all or off (for comparing; see
    /// `Forest::set_bulk_steps`).
    #[arg(long, default_value = "measured")]
    bulk_steps: String,
    #[command(flatten)]
    #[serde(flatten)]
    physics: support::CollisionFlags,
    #[command(flatten)]
    #[serde(skip)]
    run: support::RunFlags,
}

impl support::CaseArgs for Args {
    fn run_flags(&mut self) -> &mut support::RunFlags {
        &mut self.run
    }
}

/// Sizes and step counts in effect.
struct Plan {
    n2: usize,
    n3: usize,
    steps2: u64,
    steps3: u64,
    warmup: u64,
    reps: usize,
    copy_bytes: usize,
    collision: ramus::Collision,
    les: ramus::Les,
    dependent_launches: bool,
    paired_cells: ramus::PairedCells,
    bulk_steps: ramus::BulkSteps,
}

impl Plan {
    fn new(args: &Args, gpu: bool) -> anyhow::Result<Plan> {
        // (n2, n3, steps2, steps3, reps, copy bytes)
        let (n2, n3, steps2, steps3, reps, copy_bytes) = match (gpu, args.quick) {
            (true, false) => (2048, 256, 1000, 200, 3, 1 << 30),
            (true, true) => (1024, 128, 200, 100, 2, 256 << 20),
            (false, false) => (1024, 64, 100, 40, 3, 512 << 20),
            (false, true) => (256, 32, 40, 20, 1, 128 << 20),
        };
        let even = |s: u64| s + s % 2;
        Ok(Plan {
            n2: args.n2.unwrap_or(n2),
            n3: args.n3.unwrap_or(n3),
            steps2: even(args.steps.unwrap_or(steps2).max(2)),
            steps3: even(args.steps.unwrap_or(steps3).max(2)),
            warmup: even(args.warmup),
            reps: args.reps.unwrap_or(reps).max(1),
            copy_bytes: args.copy_bytes.unwrap_or(copy_bytes),
            dependent_launches: !args.no_dependent_launches,
            collision: ramus::Collision::Bgk,
            les: ramus::Les::None,
            paired_cells: args.paired_cells.parse()?,
            bulk_steps: args.bulk_steps.parse()?,
        })
    }
}

/// Result of one case.
struct Row {
    lattice: LatticeKind,
    precision: Precision,
    storage: StorageKind,
    grid: String,
    outcome: Result<Measured, String>,
}

struct Measured {
    mlups: f64,
    /// MLUPS of the even (local) and odd (neighbour) AA steps alone, from single synchronised steps.
    parity_mlups: [f64; 2],
    steps: u64,
    device: String,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// A fully periodic box of `n` cells per side with a small shear-wave velocity field.
fn run_case<D: Dim, Q: VelocitySet<Dim = D>, F: ramus::Float, S: PoolStorage<F>>(
    backend: Backend,
    n: usize,
    plan: &Plan,
    steps: u64,
) -> anyhow::Result<Measured> {
    let mut config = ForestConfig::new([n, n, n])
        .fluid(Fluid::Viscosity { nu: 0.02 })
        .collision(plan.collision)
        .les(plan.les)
        .backend(backend);
    for face in Face::ALL {
        config = config.boundary(face, Boundary::Periodic);
    }
    let mut forest = Forest::<D, Q, F, S>::new(config).context("building the forest")?;
    forest.set_dependent_launches(plan.dependent_launches);
    forest.set_paired_cells(plan.paired_cells);
    forest.set_bulk_steps(plan.bulk_steps).context("choosing the bulk steps")?;
    let k = 2.0 * std::f64::consts::PI / n as f64;
    let dim = D::D;
    forest
        .initialize(|x| {
            let mut u = [0.02 * (k * x[1]).sin(), 0.01 * (k * x[0]).sin(), 0.0];
            if dim == 3 {
                u[2] = 0.01 * (k * x[0] + k * x[1]).cos();
                u[0] += 0.01 * (k * x[2]).sin();
            }
            (1.0, u)
        })
        .context("initialising")?;
    forest.advance(plan.warmup).context("warm-up steps")?;
    let cells = forest.cell_count() as f64;
    let mut rates = Vec::with_capacity(plan.reps);
    for _ in 0..plan.reps {
        let start = Instant::now();
        forest.advance(steps).context("timed steps")?;
        let secs = start.elapsed().as_secs_f64();
        rates.push(cells * steps as f64 / secs / 1e6);
    }
    // Even and odd AA steps separately (one synchronised step each; the host round trip
    // of a few µs is small next to a step over a 256³ / 2048² grid).
    debug_assert_eq!(forest.steps() % 2, 0);
    let mut parity_secs = [0.0f64; 2];
    const PAIRS: usize = 10;
    for _ in 0..PAIRS {
        for secs in parity_secs.iter_mut() {
            let start = Instant::now();
            forest.advance(1).context("single step")?;
            *secs += start.elapsed().as_secs_f64();
        }
    }
    let parity_mlups = parity_secs.map(|s| cells * PAIRS as f64 / s / 1e6);
    // A diverged run would still be timed: check the result is finite.
    let mass = forest.fields().context("reading back the fields")?.mass();
    if !mass.is_finite() || (mass / cells - 1.0).abs() > 1e-3 {
        bail!("the run diverged or lost mass (mean density {})", mass / cells);
    }
    Ok(Measured { mlups: median(rates), parity_mlups, steps, device: forest.device_name() })
}

fn run_kind(
    backend: Backend,
    lattice: LatticeKind,
    (precision, storage): (Precision, StorageKind),
    plan: &Plan,
) -> Row {
    use LatticeKind::{D2Q9 as Q9, D3Q19 as Q19, D3Q27 as Q27};
    use Precision::{F32, F64};
    use StorageKind::{Native as N, F16};
    let (n, steps) = if lattice.dim() == 2 { (plan.n2, plan.steps2) } else { (plan.n3, plan.steps3) };
    let grid = if lattice.dim() == 2 { format!("{n}²") } else { format!("{n}³") };
    let outcome = match (lattice, precision, storage) {
        (Q9, F32, N) => run_case::<D2, D2Q9, f32, Native>(backend, n, plan, steps),
        (Q9, F32, F16) => run_case::<D2, D2Q9, f32, Half>(backend, n, plan, steps),
        (Q9, F64, N) => run_case::<D2, D2Q9, f64, Native>(backend, n, plan, steps),
        (Q19, F32, N) => run_case::<D3, D3Q19, f32, Native>(backend, n, plan, steps),
        (Q19, F32, F16) => run_case::<D3, D3Q19, f32, Half>(backend, n, plan, steps),
        (Q19, F64, N) => run_case::<D3, D3Q19, f64, Native>(backend, n, plan, steps),
        (Q27, F32, N) => run_case::<D3, D3Q27, f32, Native>(backend, n, plan, steps),
        (Q27, F32, F16) => run_case::<D3, D3Q27, f32, Half>(backend, n, plan, steps),
        (Q27, F64, N) => run_case::<D3, D3Q27, f64, Native>(backend, n, plan, steps),
        (_, F64, F16) => Err(anyhow::anyhow!("f16 storage needs f32 arithmetic")),
    };
    Row { lattice, precision, storage, grid, outcome: outcome.map_err(|e| format!("{e:#}")) }
}

/// The precision column: `f32`, `f64`, or `f32/f16` (f32 arithmetic, f16 storage).
fn precision_name(precision: Precision, storage: StorageKind) -> String {
    match storage {
        StorageKind::Native => precision.to_string(),
        s => format!("{precision}/{s}"),
    }
}

/// Host copy bandwidth (read + write counted), all threads copying disjoint chunks; the
/// median of 5 copies of `bytes`.
fn host_copy_bandwidth(bytes: usize) -> anyhow::Result<f64> {
    let words = (bytes / 8).max(1);
    let src = vec![1u64; words];
    let mut dst = vec![0u64; words];
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let chunk = words.div_ceil(threads);
    let mut rates = Vec::new();
    for rep in 0..6 {
        let start = Instant::now();
        std::thread::scope(|s| {
            for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(c));
            }
        });
        let secs = start.elapsed().as_secs_f64();
        if rep > 0 && secs > 0.0 {
            rates.push(2.0 * (words * 8) as f64 / secs);
        }
    }
    if dst[words - 1] != 1 {
        bail!("host copy check failed");
    }
    Ok(median(rates))
}

fn run(args: Args) -> anyhow::Result<bool> {
    let gpu = match args.backend {
        Backend::Cpu => false,
        Backend::Cuda => true,
        Backend::Auto => ramus::cuda_available(),
    };
    let backend = if gpu { Backend::Cuda } else { Backend::Cpu };
    let mut plan = Plan::new(&args, gpu)?;
    plan.collision = args.physics.collision()?;
    plan.les = args.physics.les()?;

    let gib = plan.copy_bytes as f64 / (1u64 << 30) as f64;
    let (bandwidth, how) = if gpu {
        eprintln!("measuring the device copy bandwidth ({gib:.2} GiB buffers)...");
        let bw = ramus::backend::cuda::measure_copy_bandwidth(plan.copy_bytes)
            .context("measuring the device copy bandwidth")?;
        (bw, format!("device-to-device copy of {gib:.2} GiB, CUDA events, median of 25"))
    } else {
        eprintln!("measuring the host copy bandwidth ({gib:.2} GiB buffers)...");
        (host_copy_bandwidth(plan.copy_bytes)?, format!("host copy of {gib:.2} GiB, all threads, median of 5"))
    };
    eprintln!("copy bandwidth: {:.1} GB/s (read + write)", bandwidth / 1e9);

    let kinds = [LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27];
    let precisions = [
        (Precision::F32, StorageKind::Native),
        (Precision::F64, StorageKind::Native),
        (Precision::F32, StorageKind::F16),
    ];
    let mut rows = Vec::new();
    for &lattice in &kinds {
        for &(precision, storage) in &precisions {
            let case = match storage {
                StorageKind::Native => format!("{lattice}-{precision}"),
                s => format!("{lattice}-{precision}-{s}"),
            };
            if !args.only.is_empty() && !args.only.iter().any(|o| case.starts_with(o.as_str())) {
                continue;
            }
            let row = run_kind(backend, lattice, (precision, storage), &plan);
            let name = precision_name(precision, storage);
            match &row.outcome {
                Ok(m) => eprintln!(
                    "{lattice} {name} {}: {:.0} MLUPS ({} steps x {} runs)",
                    row.grid, m.mlups, m.steps, plan.reps
                ),
                Err(e) => eprintln!("{lattice} {name} {}: error: {e}", row.grid),
            }
            rows.push(row);
        }
    }

    let device = rows
        .iter()
        .find_map(|r| r.outcome.as_ref().ok().map(|m| m.device.clone()))
        .unwrap_or_else(|| "(no case ran)".into());
    let mut md = String::new();
    writeln!(md, "Device: {device} (backend {backend})")?;
    writeln!(md, "Copy bandwidth: {:.1} GB/s ({how}; read + write counted)", bandwidth / 1e9)?;
    writeln!(
        md,
        "Fully periodic grids; {} warm-up steps, then the median of {} runs of {} (2D) / {} (3D) steps.",
        plan.warmup, plan.reps, plan.steps2, plan.steps3
    )?;
    writeln!(
        md,
        "Collision: {}, LES: {}. Limit = copy bandwidth / (2 · Q · bytes per stored population).",
        plan.collision.name(),
        plan.les.name()
    )?;
    writeln!(md, "Even/odd step: one AA step of each parity alone (host-synchronised), as a fraction of the limit.")?;
    writeln!(md)?;
    writeln!(md, "| lattice | precision | grid | MLUPS | limit MLUPS | fraction | even step | odd step |")?;
    writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|")?;
    let mut failed = false;
    for r in &rows {
        let bytes = r.storage.bytes(r.precision).unwrap_or(r.precision.bytes());
        let limit = bandwidth / (2.0 * r.lattice.q() as f64 * bytes as f64) / 1e6;
        match &r.outcome {
            Ok(m) => writeln!(
                md,
                "| {} | {} | {} | {:.0} | {:.0} | {:.1}% | {:.1}% | {:.1}% |",
                r.lattice,
                precision_name(r.precision, r.storage),
                r.grid,
                m.mlups,
                limit,
                100.0 * m.mlups / limit,
                100.0 * m.parity_mlups[0] / limit,
                100.0 * m.parity_mlups[1] / limit
            )?,
            Err(e) => {
                failed = true;
                writeln!(
                    md,
                    "| {} | {} | {} | error: {} | {:.0} | – | – | – |",
                    r.lattice,
                    precision_name(r.precision, r.storage),
                    r.grid,
                    e.replace('|', "/"),
                    limit
                )?
            }
        }
    }
    print!("{md}");
    if let Some(path) = &args.out {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        support::write_file(path, md.as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(!failed)
}

fn main() -> ExitCode {
    // `--config case.toml` may hold any of the flags (see examples/support); a benchmark
    // has no checkpoint to restart from.
    let args = match support::load_args::<Args>().and_then(|a: Args| {
        anyhow::ensure!(a.run.restart.is_none(), "--restart: the benchmark has no checkpoints");
        Ok(a)
    }) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e:#}");
            return std::process::ExitCode::from(support::EXIT_INVALID);
        }
    };
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: some cases failed (see the table)");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

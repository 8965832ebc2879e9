//! Benchmark of the refinement-and-coarsening routine (`Mesh::adapt`, paper section
//! "Refinement and Coarsening"): time of one adapt versus the number of inserted blocks,
//! with the per-step breakdown (Pre, S1 … S8), the fixed cost of small adapts, and the
//! dependence on pool capacity, and the host's cost of one launch (what each of a small
//! adapt's launches pays however little its kernel does: a one-block refinement makes 18
//! launches and two read-backs).
//!
//! ```text
//! cargo run --release --features benchmarks --example bench_adapt                       # CUDA, 3D, up to 10^6 inserted blocks
//! cargo run --release --features benchmarks --example bench_adapt -- --backend cpu --max-inserted 100000
//! ```
//!
//! Set-up: a 3D root grid of `root`³ blocks (default 64³ = 262,144 blocks, 256³ cells),
//! no-slip walls. Each measurement refines the first `k` root blocks (a slab, x fastest),
//! inserting `8k` children, then coarsens them back (not timed) so every size starts from
//! the same forest. Times are medians of `--reps` runs: "adapt ms" is the whole call
//! (device synchronised at its end); "profiled ms" and the step columns come from runs
//! with `AdaptWorkspace::profile`, which synchronises after every step.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use ramus::amr::{AdaptReport, AdaptWorkspace, Capacity, Mesh, MeshSpec, ADAPT_STEPS, DISTINCT_SHORT_MAX};
use ramus::backend::primitives::{distinct_short, Scratch};
use ramus::backend::{Device, DeviceCounters};
use ramus::Mark;
use ramus::{Backend, Boundary, D3};

#[path = "support/mod.rs"]
mod support;

#[derive(Parser, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[command(about = "Time Mesh::adapt against the number of inserted blocks (3D)")]
struct Args {
    /// auto, cpu or cuda.
    #[arg(long, default_value = "cuda")]
    backend: String,
    /// Root blocks per axis.
    #[arg(long, default_value_t = 64)]
    root: usize,
    /// Largest number of inserted blocks.
    #[arg(long, default_value_t = 1_000_000)]
    max_inserted: usize,
    /// Repetitions per size (median reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Longest list that steps 1, 7 and 8 deduplicate by ranks
    /// (`AdaptWorkspace::distinct_short_max`; 0: always by the per-ID flag array).
    #[arg(long, default_value_t = DISTINCT_SHORT_MAX)]
    distinct_short_max: usize,
    /// Launch every kernel after the one before it has ended (no programmatic dependent
    /// launch; see `Device::set_dependent_launches`).
    #[arg(long)]
    no_dependent_launches: bool,
    /// Also write the tables to this file.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    #[command(flatten)]
    #[serde(skip)]
    run: support::RunFlags,
}

impl support::CaseArgs for Args {
    fn run_flags(&mut self) -> &mut support::RunFlags {
        &mut self.run
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn new_mesh(device: &Device, root: usize, capacity: usize) -> Result<Mesh<D3>> {
    let spec = MeshSpec {
        cells: [4 * root; 3],
        boundaries: [Boundary::NO_SLIP; 6],
        max_levels: 4,
        capacity: Capacity::Blocks { blocks: capacity },
    };
    Mesh::<D3>::new(device.clone(), spec, 0).context("building the mesh")
}

/// Refines root blocks `0..k` (timed), then coarsens them back (not timed).
fn refine_and_reset(mesh: &mut Mesh<D3>, ws: &mut AdaptWorkspace, k: usize) -> Result<AdaptReport> {
    refine_and_reset_counted(mesh, ws, k).map(|(r, _)| r)
}

/// [`refine_and_reset`], with what the refining adapt asked of a CUDA device.
fn refine_and_reset_counted(
    mesh: &mut Mesh<D3>,
    ws: &mut AdaptWorkspace,
    k: usize,
) -> Result<(AdaptReport, Option<DeviceCounters>)> {
    let profile = ws.profile;
    let ids: Vec<u32> = (0..k as u32).collect();
    mesh.mark_blocks(&ids, Mark::Refine)?;
    let before = mesh.device().counters();
    let report = mesh.adapt_with(ws).context("refining")?;
    let counted = mesh.device().counters().zip(before).map(|(now, then)| now - then);
    anyhow::ensure!(report.refined == k, "expected {k} refinements, got {}", report.refined);
    let children: Vec<u32> = mesh.leaf_geometry()?.into_iter().filter(|g| g.level == 1).map(|g| g.id).collect();
    mesh.mark_blocks(&children, Mark::Coarsen)?;
    ws.profile = false;
    let back = mesh.adapt_with(ws).context("coarsening back");
    ws.profile = profile;
    let back = back?;
    anyhow::ensure!(back.coarsened == k, "expected {k} coarsenings, got {}", back.coarsened);
    Ok((report, counted))
}

/// Launches per [`launch_cost`] measurement: well below the driver's queue of pending
/// launches, so that issuing never waits for the device.
const LAUNCHES: usize = 200;

/// Per launch: the time to issue `n` launches of one CTA (a 27-ID [`distinct_short`],
/// whose arguments are checked as every launch's are) on an idle device, the time until
/// the device has run them all, and the time to issue them behind ~10 ms of queued work,
/// where the device cannot pace the host: the host's own cost (medians of 5 rounds).
fn launch_cost(device: &Device, n: usize) -> Result<[Duration; 3]> {
    let ids = device.upload(&(0..27u32).rev().collect::<Vec<_>>())?;
    let mut out = device.zeros::<u32>(27)?;
    let mut counts = device.zeros::<u64>(1)?;
    let long = device.upload(&(0..2048u32).collect::<Vec<_>>())?;
    let mut long_out = device.zeros::<u32>(2048)?;
    let mut long_counts = device.zeros::<u64>(1)?;
    let mut scratch = Scratch::new(device);
    let mut short = |s: &mut Scratch| distinct_short(device, s, (&ids, None, 27), None, &mut out, (&mut counts, 0));
    short(&mut scratch)?;
    device.synchronize()?;
    let (mut issued, mut done, mut behind) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..n {
            short(&mut scratch)?;
        }
        issued.push(t0.elapsed() / n as u32);
        device.synchronize()?;
        done.push(t0.elapsed() / n as u32);
        // A 2048-item ranking runs ~0.5 ms on one SM: 20 of them keep the device busy
        // while the short launches are issued.
        for _ in 0..20 {
            distinct_short(device, &mut scratch, (&long, None, 2048), None, &mut long_out, (&mut long_counts, 0))?;
        }
        let t0 = Instant::now();
        for _ in 0..n {
            short(&mut scratch)?;
        }
        behind.push(t0.elapsed() / n as u32);
        device.synchronize()?;
    }
    anyhow::ensure!(device.read(&counts, 0..1)?[0] == 27, "distinct_short of 27 distinct IDs counted wrong");
    Ok([median(issued), median(done), median(behind)])
}

fn run(args: &Args) -> Result<String> {
    let backend: Backend = args.backend.parse()?;
    let device = Device::new(backend)?;
    let dependent = device.set_dependent_launches(!args.no_dependent_launches);
    let n_root = args.root.pow(3);
    let mut md = String::new();
    writeln!(md, "Device: {} (backend {}; dependent launches {dependent})", device.name(), device.backend())?;
    writeln!(
        md,
        "Root grid {r}³ blocks ({n_root} blocks, {c}³ cells), D3, median of {} runs.",
        args.reps,
        r = args.root,
        c = 4 * args.root
    )?;
    writeln!(md)?;

    // Time versus inserted blocks.
    let capacity = n_root + args.max_inserted + 1024;
    let mut mesh = new_mesh(&device, args.root, capacity)?;
    let workspace = || -> Result<AdaptWorkspace> {
        let mut w = AdaptWorkspace::new(&device)?;
        w.distinct_short_max = args.distinct_short_max;
        Ok(w)
    };
    let mut ws = workspace()?;
    write!(md, "| inserted | refined | adapt ms | profiled ms |")?;
    for s in ADAPT_STEPS {
        write!(md, " {s} |")?;
    }
    writeln!(md)?;
    writeln!(md, "|{}", "---:|".repeat(4 + ADAPT_STEPS.len()))?;
    // Refined root blocks per measurement: one block (the fixed cost's breakdown), 20 and
    // 60 (step 1 lists 540 and 1620 neighbours: either side of the default
    // `distinct_short_max`, below `DISTINCT_MAX`), then 10^3 … 10^6 inserted blocks,
    // including the paper's 3.3·10^5 (41,250 refined blocks).
    let sizes: Vec<usize> = [1, 20, 60, 125, 500, 2_000, 8_000, 32_000, 41_250, 64_000, 125_000]
        .into_iter()
        .filter(|&k| 8 * k <= args.max_inserted && k <= n_root)
        .collect();
    // Warm-up (module load, JIT, workspace growth).
    if let Some(&largest) = sizes.last() {
        refine_and_reset(&mut mesh, &mut ws, largest)?;
    }
    for &k in &sizes {
        let mut totals = Vec::new();
        let mut profiled = Vec::new();
        let mut steps = vec![Vec::new(); ADAPT_STEPS.len()];
        for _ in 0..args.reps {
            ws.profile = false;
            totals.push(refine_and_reset(&mut mesh, &mut ws, k)?.total());
            ws.profile = true;
            let r = refine_and_reset(&mut mesh, &mut ws, k)?;
            profiled.push(r.total());
            for (s, (_, l)) in r.per_step.iter().enumerate() {
                steps[s].push(l.time);
            }
        }
        ws.profile = false;
        write!(md, "| {} | {} | {:.3} | {:.3} |", 8 * k, k, ms(median(totals)), ms(median(profiled)))?;
        for s in steps {
            write!(md, " {:.3} |", ms(median(s)))?;
        }
        writeln!(md)?;
        eprintln!("{} inserted done", 8 * k);
    }

    // Fixed cost: no marks (early exit), and one refined block.
    let mut empty = Vec::new();
    let mut one = Vec::new();
    let (mut empty_counts, mut one_counts) = (None, None);
    for _ in 0..args.reps.max(5) {
        let before = device.counters();
        empty.push(mesh.adapt_with(&mut ws)?.total());
        empty_counts = device.counters().zip(before).map(|(now, then)| now - then);
        let (report, counted) = refine_and_reset_counted(&mut mesh, &mut ws, 1)?;
        one.push(report.total());
        one_counts = counted.map(|c| (c, report.per_step.map(|(_, l)| l.submissions)));
    }
    writeln!(md)?;
    writeln!(
        md,
        "Fixed cost: adapt with no marks {:.3} ms; refining 1 block (8 inserted) {:.3} ms.",
        ms(median(empty)),
        ms(median(one))
    )?;
    if let (Some(e), Some((o, steps))) = (empty_counts, one_counts) {
        writeln!(
            md,
            "Submissions: adapt with no marks {} kernel launches, {} host waits; refining 1 block {} kernel \
             launches, {} host waits.",
            e.kernel_launches, e.host_waits, o.kernel_launches, o.host_waits
        )?;
        let by_step: Vec<String> =
            ADAPT_STEPS.iter().zip(steps).map(|(n, c)| format!("{n} {}/{}", c.kernel_launches, c.host_waits)).collect();
        writeln!(md, "Refining 1 block by step (kernel launches/waits): {}.", by_step.join(", "))?;
    }

    // The cost of one launch: short lists deduplicated one after the other (one CTA each).
    let [issue, done, behind] = launch_cost(&device, LAUNCHES)?;
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    writeln!(
        md,
        "Launch cost: {LAUNCHES} one-CTA launches (`distinct_short` of 27 IDs) take {:.2} µs each to issue on \
         an idle device and {:.2} µs each until done; {:.2} µs each to issue behind queued work (the host's own \
         cost).",
        us(issue),
        us(done),
        us(behind)
    )?;

    // Capacity independence: the same adapt in a pool 10x larger.
    let k = 125;
    let mut by_capacity = Vec::new();
    for cap in [capacity, 10 * capacity] {
        let mut m = new_mesh(&device, args.root, cap)?;
        let mut w = workspace()?;
        refine_and_reset(&mut m, &mut w, k)?;
        let t: Vec<Duration> =
            (0..args.reps).map(|_| refine_and_reset(&mut m, &mut w, k).map(|r| r.total())).collect::<Result<_>>()?;
        by_capacity.push((cap, median(t)));
    }
    writeln!(
        md,
        "Capacity: 1000 inserted blocks take {:.3} ms in a pool of {} blocks and {:.3} ms in a pool of {} blocks.",
        ms(by_capacity[0].1),
        by_capacity[0].0,
        ms(by_capacity[1].1),
        by_capacity[1].0
    )?;
    Ok(md)
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
    match run(&args) {
        Ok(md) => {
            print!("{md}");
            if let Some(path) = &args.out {
                if let Err(e) = support::write_file(path, md.as_bytes()) {
                    eprintln!("error: {e:#}");
                    return ExitCode::from(2);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

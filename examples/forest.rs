//! Adaptive forest around a circle (2D) or sphere (3D) (paper, section "Adaptive Mesh
//! Refinement": "Refinement and Coarsening").
//!
//! The unit box holds a root grid of `--root` cells per side (walls on every face). For
//! `levels − 1` rounds, the leaves that intersect the surface of a circle/sphere of radius
//! 0.15 centred in the box, or lie within one leaf width of it (see [`near_surface`]), are
//! marked for refinement (`Mesh::mark_with`) and the mesh is adapted; then the leaves in `x > 0.5` are
//! marked for coarsening and the mesh is adapted once more (one level comes off there). The
//! forest is validated with `ramus::amr::check`, written to `OUT/forest.vtu` (one cell per
//! leaf block, with `level` and `block_id`), and one summary line is printed.
//!
//! ```text
//! cargo run --release --example forest -- --dim 2 --levels 5 --out out/forest
//! cargo run --release --example forest -- --dim 3 --levels 4 --root 32 --backend cuda --out out/forest3
//! ```
//!
//! `--config case.toml` reads any of the flags from a file (flags override it); the run
//! writes the values it used to `OUT/config.toml`. The output folder is checked before
//! the mesh is built; files are written atomically.
//!
//! Exit status: 0 done, 2 invalid input, 1 a failed step (device, files, a forest that
//! fails its check).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Parser;
use ramus::amr::BlockGeometry;
use ramus::amr::{check, Capacity, Mesh, MeshSpec, Region};
use ramus::backend::Device;
use ramus::output::write_leaf_blocks_vtu;
use ramus::Mark;
use ramus::{Backend, Boundary, Dim, D2, D3};
use serde::{Deserialize, Serialize};

#[path = "support/mod.rs"]
mod support;

/// Radius of the circle/sphere, in box lengths.
pub const RADIUS: f64 = 0.15;

/// Adaptive forest around a circle or sphere, written as VTU.
#[derive(Parser, Debug, Clone, Serialize, Deserialize)]
#[command(about, long_about = None)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Spatial dimension: 2 or 3.
    #[arg(long, default_value_t = 2)]
    pub dim: u32,
    /// Grid levels (1 = root grid only).
    #[arg(long, default_value_t = 4)]
    pub levels: usize,
    /// Output folder (created if missing).
    #[arg(long, default_value = "out/forest")]
    pub out: PathBuf,
    /// Backend: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    pub backend: String,
    /// Root cells per side (a multiple of 4, at least 8).
    #[arg(long, default_value_t = 32)]
    pub root: usize,
    /// Pool size in blocks [default: an estimate from the sphere's surface].
    #[arg(long)]
    pub capacity: Option<usize>,
    #[command(flatten)]
    #[serde(skip)]
    pub run: support::RunFlags,
}

impl support::CaseArgs for Args {
    fn run_flags(&mut self) -> &mut support::RunFlags {
        &mut self.run
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Leaves per level.
    pub leaves: Vec<usize>,
    /// Active blocks per level (leaves and interior nodes).
    pub blocks: Vec<usize>,
    /// Adapt calls and their total time.
    pub adapts: usize,
    pub adapt_time: Duration,
    /// The file written.
    pub vtu: PathBuf,
    /// Device name.
    pub device: String,
}

impl Summary {
    /// The one-line report.
    pub fn line(&self, args: &Args) -> String {
        let per_level: Vec<String> =
            self.leaves.iter().zip(&self.blocks).enumerate().map(|(l, (a, b))| format!("L{l} {a}/{b}")).collect();
        format!(
            "forest {}D, root {}, {} levels on {}: leaves/blocks per level [{}], total {}/{}; {} adapts in {:.3} ms; wrote {}",
            args.dim,
            args.root,
            args.levels,
            self.device,
            per_level.join(", "),
            self.leaves.iter().sum::<usize>(),
            self.blocks.iter().sum::<usize>(),
            self.adapts,
            self.adapt_time.as_secs_f64() * 1e3,
            self.vtu.display()
        )
    }
}

#[allow(dead_code)]
fn main() -> ExitCode {
    let args = match support::load_args::<Args>() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(support::EXIT_INVALID);
        }
    };
    let device = match validate(&args) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(support::EXIT_INVALID);
        }
    };
    match run_on(&args, device) {
        Ok(summary) => {
            println!("{}", summary.line(&args));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(support::EXIT_FAILED)
        }
    }
}

/// Validates the arguments and runs the example (the integration test calls this too).
pub fn run(args: &Args) -> Result<Summary> {
    let device = validate(args)?;
    run_on(args, device)
}

/// Runs a validated case.
fn run_on(args: &Args, device: Device) -> Result<Summary> {
    match args.dim {
        2 => run_dim::<D2>(args, device),
        _ => run_dim::<D3>(args, device),
    }
}

/// Validates the arguments, prepares the output folder and opens the device.
fn validate(args: &Args) -> Result<Device> {
    if args.run.restart.is_some() {
        bail!("--restart: the forest example has no checkpoints (it builds its mesh in well under a second)");
    }
    if args.dim != 2 && args.dim != 3 {
        bail!("invalid dim = {}: 2 or 3", args.dim);
    }
    if args.root < 8 || args.root % 4 != 0 {
        bail!("invalid root = {}: a multiple of 4 (the block edge) and at least 8", args.root);
    }
    let max = ramus::kernels::amr::MAX_LEVELS;
    if args.levels < 1 || args.levels > max {
        bail!("invalid levels = {}: 1 to {max}", args.levels);
    }
    let backend: Backend = args.backend.parse()?;
    support::prepare_out(&args.out, &["forest.vtu", support::CASE_FILE])?;
    support::write_case_file(&args.out, args, "Adaptive forest (cargo run --release --example forest)")?;
    Ok(Device::new(backend)?)
}

/// Blocks the refinement around the surface needs, generously: `2^D` children for each
/// block within a few block widths of the surface, on every level, plus the root grid.
fn estimate_capacity(dim: usize, root: usize, levels: usize) -> usize {
    let roots = (root / 4).pow(dim as u32);
    let surface =
        if dim == 2 { 2.0 * std::f64::consts::PI * RADIUS } else { 4.0 * std::f64::consts::PI * RADIUS * RADIUS };
    let mut total = roots;
    let mut full = roots;
    for l in 1..levels {
        let width = 4.0 / (root as f64 * (1u64 << (l - 1)) as f64);
        let near = 6.0 * surface / width.powi(dim as i32 - 1);
        total += (1 << dim) * near.ceil() as usize;
        full = full.saturating_add(roots.saturating_mul(1usize << (dim * l).min(60)));
    }
    total.min(full)
}

/// Leaves within [`BAND`] of their own size of the sphere surface (root cells).
///
/// `adapt` refuses to refine a leaf that lacks a same-level neighbour (2:1 balance), so
/// marking only the leaves that cut the surface stalls after two levels: the next level
/// needs the neighbours of the cut leaves refined too. A band a block wide around the
/// surface, on each level, keeps every cut leaf refinable.
fn near_surface(dim: usize, g: &BlockGeometry, center: [f64; 3], radius: f64) -> bool {
    let (mut near, mut far) = (0.0f64, 0.0f64);
    for (a, &c) in center.iter().enumerate().take(dim) {
        let (lo, hi) = (g.origin[a], g.origin[a] + g.size);
        let d = c.clamp(lo, hi) - c;
        near += d * d;
        let e = (lo - c).abs().max((hi - c).abs());
        far += e * e;
    }
    let (near, far) = (near.sqrt(), far.sqrt());
    let distance = if near > radius {
        near - radius
    } else if far < radius {
        radius - far
    } else {
        0.0
    };
    distance <= BAND * g.size
}

/// Width of the refined band around the surface, in sizes of the leaf considered.
pub const BAND: f64 = 1.0;

fn run_dim<D: Dim>(args: &Args, device: Device) -> Result<Summary> {
    let dim = D::D;
    let capacity = args.capacity.unwrap_or_else(|| estimate_capacity(dim, args.root, args.levels));
    let spec = MeshSpec {
        cells: [args.root, args.root, if dim == 3 { args.root } else { 1 }],
        boundaries: [Boundary::NO_SLIP; 6],
        max_levels: args.levels,
        capacity: Capacity::Blocks { blocks: capacity },
    };
    let device_name = device.name();
    let mut mesh = Mesh::<D>::new(device, spec, 0).context("building the root grid")?;
    let mut adapt_time = Duration::ZERO;
    let mut adapts = 0;
    let mut adapt = |mesh: &mut Mesh<D>, what: &str| -> Result<()> {
        let t = Instant::now();
        mesh.adapt().with_context(|| format!("adapting ({what})"))?;
        mesh.device().synchronize()?;
        adapt_time += t.elapsed();
        adapts += 1;
        Ok(())
    };
    let n = args.root as f64;
    let center = [n / 2.0, n / 2.0, if dim == 3 { n / 2.0 } else { 0.0 }];
    for round in 1..args.levels {
        mesh.mark_with(|g| if near_surface(dim, &g, center, RADIUS * n) { Mark::Refine } else { Mark::None })?;
        adapt(&mut mesh, &format!("refinement round {round}"))?;
    }
    mesh.mark_region(Region::Box { min: [n / 2.0, 0.0, 0.0], max: [n, n, n] }, Mark::Coarsen)?;
    adapt(&mut mesh, "coarsening x > 0.5")?;

    let s = mesh.snapshot()?;
    check(&s).context("the adapted forest is invalid")?;
    let vtu = args.out.join("forest.vtu");
    write_leaf_blocks_vtu(&vtu, &s).with_context(|| format!("writing {}", vtu.display()))?;
    let mut leaves = vec![0; args.levels];
    let mut blocks = vec![0; args.levels];
    for (l, ids) in s.id_sets.iter().enumerate() {
        blocks[l] = ids.len();
        leaves[l] = ids.iter().filter(|&&b| s.child[b as usize] < 0).count();
    }
    Ok(Summary { leaves, blocks, adapts, adapt_time, vtu, device: device_name })
}

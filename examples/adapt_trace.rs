//! Per-adaptation timing of the issue's 3D AMR cavity benchmark (root 64³, 4 levels,
//! D3Q19 f32, Re = 1000, vorticity criterion N_start = −3, N_inc = 1): 16 adaptations,
//! 32 root steps apart, each printed with its wall time, blocks refined and coarsened,
//! and (with `--profile`, which synchronises after every part) the parts, the mesh
//! routine's steps and the per-level interpolation/averaging inside it.
//!
//! ```text
//! cargo run --release --features benchmarks --example adapt_trace -- [--profile]     # needs a CUDA GPU
//! ```
use ramus::backend::Backend;
use ramus::cases::cavity::Cavity;
use ramus::config::{Criterion, Interpolation, Refinement};
use ramus::{Forest, D3, D3Q19};

fn main() -> anyhow::Result<()> {
    let prof = std::env::args().any(|a| a == "--profile");
    let cavity = Cavity { dim: 3, n: 64, re: 1000.0, lid: 0.05 };
    let refinement = Refinement {
        levels: 4,
        interpolation: Interpolation::Linear,
        every: 0,
        on_demand: true,
        criterion: Criterion::Vorticity { n_start: -3.0, n_inc: 1.0, length: None },
        ..Refinement::default()
    };
    let config = cavity.forest_config(Backend::Cuda)?.refinement(refinement);
    let mut forest = Forest::<D3, D3Q19, f32>::new(config)?;
    forest.set_profiling(prof);
    let mut last = forest.timings().adapt;
    for k in 0..16 {
        let lv0 = forest.timings().levels.clone();
        let a = forest.adapt()?;
        let t = forest.timings().adapt;
        let lv1 = forest.timings().levels.clone();
        let lv: Vec<String> = lv1
            .iter()
            .zip(&lv0)
            .map(|(x, y)| {
                format!(
                    "i{:.3}/a{:.3}",
                    (x.interpolate - y.interpolate).as_secs_f64() * 1e3,
                    (x.average - y.average).as_secs_f64() * 1e3
                )
            })
            .collect();
        let d = |x: std::time::Duration, y: std::time::Duration| (x - y).as_secs_f64() * 1e3;
        let steps: Vec<String> = t
            .mesh_steps
            .iter()
            .zip(last.mesh_steps.iter())
            .map(|(a, b)| format!("{} {:.3}", a.0, d(a.1.time, b.1.time)))
            .collect();
        println!(
            "adapt {k}: wall {:.3} ms (sync {:.3}, crit {:.3}, mesh {:.3}, fill {:.3}) refined {} coarsened {} blocks {:?} | {}",
            d(t.wall, last.wall),
            d(t.synchronize.time, last.synchronize.time),
            d(t.criterion.time, last.criterion.time),
            d(t.mesh.time, last.mesh.time),
            d(t.fill.time, last.fill.time),
            a.refined,
            a.coarsened,
            forest.blocks_per_level(),
            steps.join(", ")
        );
        println!("   levels: {}", lv.join(" "));
        last = t;
        forest.advance(32)?;
    }
    Ok(())
}

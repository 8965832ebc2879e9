//! GPU tests of `Mesh::adapt` (ignored: they need an NVIDIA GPU; run with
//! `cargo test --release --features gpu-tests --test integration gpu_adapt:: -- --ignored --nocapture --test-threads=1`, or `scripts/gpu-check.sh run`).
//!
//! The same pseudo-random mark sequences run on `Device::Cpu` and `Device::Cuda`; every
//! kernel of the routine is deterministic and race-free, so the two forests must be
//! identical, IDs included, after every adapt.

use std::time::{Duration, Instant};

use ramus::amr::{check, AdaptWorkspace, Capacity, Mesh, MeshSnapshot, MeshSpec, Region};
use ramus::backend::{Backend, Device};
use ramus::Mark;
use ramus::{Boundary, Dim, D2, D3};

const P: Boundary = Boundary::Periodic;
const W: Boundary = Boundary::NO_SLIP;

fn mesh<D: Dim>(dev: Device, cells: [usize; 3], bc: [Boundary; 6], max_levels: usize, blocks: usize) -> Mesh<D> {
    let spec = MeshSpec { cells, boundaries: bc, max_levels, capacity: Capacity::Blocks { blocks } };
    Mesh::<D>::new(dev, spec, 0).unwrap()
}

fn cuda() -> Device {
    Device::new(Backend::Cuda).expect("a CUDA device")
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// Marks drawn from the CPU mesh's leaves: whole families coarsen, single leaves refine.
fn draw<D: Dim>(m: &mut Mesh<D>, seed: u64, round: u64) -> (Vec<u32>, Vec<u32>) {
    let (mut up, mut down) = (vec![], vec![]);
    for g in m.leaf_geometry().unwrap() {
        let p = g.origin.map(|x| (x / (2.0 * g.size)).floor() as u64);
        let fam = mix(seed ^ mix(round ^ mix(p[0] ^ mix(p[1] ^ mix(p[2] ^ (g.level as u64 * 977))))));
        if fam % 3 == 0 {
            down.push(g.id);
        } else if mix(fam ^ g.id as u64) % 3 == 0 {
            up.push(g.id);
        }
    }
    (up, down)
}

fn same(a: &MeshSnapshot, b: &MeshSnapshot, what: &str) {
    macro_rules! cmp {
        ($($f:ident),*) => {$(
            if a.$f != b.$f {
                let i = a.$f.iter().zip(&b.$f).position(|(x, y)| x != y);
                panic!("{what}: CPU and GPU differ in {} (lengths {} / {}, first index {:?})",
                    stringify!($f), a.$f.len(), b.$f.len(), i);
            }
        )*};
    }
    cmp!(level, origin, status, parent, child, nbr, nbr_child, onb, block_mask, cell_mask, id_sets, gaps);
    assert!(a == b, "{what}: snapshots differ");
}

fn cpu_equals_gpu<D: Dim>(cells: [usize; 3], bc: [Boundary; 6], seed: u64, rounds: u64) {
    let mut c = mesh::<D>(Device::Cpu, cells, bc, 5, 40_000);
    let mut g = mesh::<D>(cuda(), cells, bc, 5, 40_000);
    let mut ws = AdaptWorkspace::new(g.device()).unwrap();
    for round in 0..rounds {
        let (up, down) = draw(&mut c, seed, round);
        for m in [&mut c, &mut g] {
            m.mark_blocks(&up, Mark::Refine).unwrap();
            m.mark_blocks(&down, Mark::Coarsen).unwrap();
        }
        if round % 4 == 3 {
            for m in [&mut c, &mut g] {
                m.mark_region(Region::SphereSurface { center: [5.0, 7.0, 6.0], radius: 4.5 }, Mark::Refine).unwrap();
            }
        }
        let rc = c.adapt().unwrap();
        let rg = g.adapt_with(&mut ws).unwrap();
        assert_eq!((rc.refined, rc.coarsened), (rg.refined, rg.coarsened), "round {round}");
        let sc = c.snapshot().unwrap();
        let sg = g.snapshot().unwrap();
        // The checker on the forest downloaded from the GPU, then equality with the CPU's.
        check(&sg).unwrap_or_else(|v| panic!("GPU forest, round {round}: {v}"));
        same(&sc, &sg, &format!("{}D seed {seed} round {round}", D::D));
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cpu_and_gpu_build_identical_forests_2d() {
    for seed in 1..4 {
        cpu_equals_gpu::<D2>([32, 24, 1], [W; 6], seed, 16);
        cpu_equals_gpu::<D2>([16, 16, 1], [P, P, P, P, W, W], seed, 16);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn cpu_and_gpu_build_identical_forests_3d() {
    for seed in 1..3 {
        cpu_equals_gpu::<D3>([16, 16, 12], [W; 6], seed, 8);
        cpu_equals_gpu::<D3>([12, 8, 12], [P, P, W, W, P, P], seed, 8);
    }
}

/// Per-step timings on the GPU: a large uniform refinement, a sphere-surface refinement
/// and its coarsening, and the no-marks early return (target ≤ 0.3 ms).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn gpu_adapt_timings() {
    fn show(what: &str, r: &ramus::amr::AdaptReport) {
        let steps: Vec<String> =
            r.per_step.iter().map(|(n, l)| format!("{n} {:.3}", l.time.as_secs_f64() * 1e3)).collect();
        println!(
            "{what}: refined {} coarsened {} total {:.3} ms [{}]",
            r.refined,
            r.coarsened,
            r.total().as_secs_f64() * 1e3,
            steps.join(", ")
        );
    }
    let dev = cuda();
    println!("device: {}", dev.name());
    let mut m = mesh::<D3>(dev.clone(), [128, 128, 128], [W; 6], 4, 1 << 20);
    let mut ws = AdaptWorkspace::new(&dev).unwrap();
    ws.profile = true;
    // Warm up (module load, allocations).
    m.adapt_with(&mut ws).unwrap();
    let leaves = m.leaf_ids().unwrap();
    m.mark_blocks(&leaves, Mark::Refine).unwrap();
    let r = m.adapt_with(&mut ws).unwrap();
    show("uniform 32^3 roots -> level 1", &r);
    for i in 0..3 {
        m.mark_region(Region::SphereSurface { center: [64.0, 64.0, 64.0], radius: 30.0 + i as f64 }, Mark::Refine)
            .unwrap();
        let r = m.adapt_with(&mut ws).unwrap();
        show("sphere surface -> level 2", &r);
        let leaves = m.leaf_geometry().unwrap();
        let fine: Vec<u32> = leaves.iter().filter(|g| g.level == 2).map(|g| g.id).collect();
        m.mark_blocks(&fine, Mark::Coarsen).unwrap();
        let r = m.adapt_with(&mut ws).unwrap();
        show("coarsen level 2", &r);
    }
    let mut best = Duration::MAX;
    for _ in 0..20 {
        let t = Instant::now();
        m.adapt_with(&mut ws).unwrap();
        best = best.min(t.elapsed());
    }
    println!("no marks ({} active blocks): best of 20 {:.3} ms", m.active_blocks(), best.as_secs_f64() * 1e3);
}

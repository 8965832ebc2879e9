//! CPU tests of `Mesh::adapt` (paper, section "Refinement and Coarsening") and of the
//! marking functions. Every resulting forest is validated with the independent checker
//! `ramus::amr::check` (geometric links, tree, statuses, masks, 2:1 balance, ID/gap sets).

use ramus::amr::{check, AdaptWorkspace, Capacity, Mesh, MeshSnapshot, MeshSpec, Region, COUNTED_MAX_ITEMS};
use ramus::backend::Device;
use ramus::kernels::amr::{status, units};
use ramus::kernels::block::{link_index, N_SKIP};
use ramus::Mark;
use ramus::{Boundary, Dim, Error, Face, D2, D3};

const P: Boundary = Boundary::Periodic;
const W: Boundary = Boundary::NO_SLIP;

fn mesh<D: Dim>(cells: [usize; 3], boundaries: [Boundary; 6], max_levels: usize, blocks: usize) -> Mesh<D> {
    let spec = MeshSpec { cells, boundaries, max_levels, capacity: Capacity::Blocks { blocks } };
    Mesh::<D>::new(Device::Cpu, spec, 0).unwrap()
}

fn valid<D: Dim>(m: &Mesh<D>) -> MeshSnapshot {
    let s = m.snapshot().unwrap();
    if let Err(v) = check(&s) {
        panic!("invalid forest: {v}");
    }
    s
}

/// The leaf containing point `p` (root cells).
fn leaf_at<D: Dim>(m: &mut Mesh<D>, p: [f64; 3]) -> u32 {
    m.leaf_geometry()
        .unwrap()
        .into_iter()
        .find(|g| (0..D::D).all(|a| p[a] >= g.origin[a] && p[a] < g.origin[a] + g.size))
        .expect("a leaf covers every point")
        .id
}

/// Snapshot equality, reporting the first differing array instead of printing both.
fn same(a: &MeshSnapshot, b: &MeshSnapshot) {
    macro_rules! cmp {
        ($($f:ident),*) => {$(
            if a.$f != b.$f {
                let i = a.$f.iter().zip(&b.$f).position(|(x, y)| x != y);
                panic!("snapshots differ in {} (lengths {} / {}, first index {:?})",
                    stringify!($f), a.$f.len(), b.$f.len(), i);
            }
        )*};
    }
    cmp!(level, origin, status, parent, child, nbr, nbr_child, onb, block_mask, cell_mask, id_sets, gaps);
    assert_eq!(a, b);
}

fn leaves(s: &MeshSnapshot) -> usize {
    s.leaves().len()
}

#[test]
fn refine_one_block_2d() {
    let mut m = mesh::<D2>([16, 16, 1], [W; 6], 3, 64);
    let before = valid(&m);
    m.mark_blocks(&[5], Mark::Refine).unwrap();
    let r = m.adapt().unwrap();
    assert_eq!((r.refined, r.coarsened), (1, 0));
    let s = valid(&m);
    // First children come from the end of the gap set: the smallest free IDs, 16..20.
    assert_eq!(s.child[5], 16);
    assert_eq!(s.status[5], status::REFINED);
    assert_eq!(s.id_sets[1], vec![16, 17, 18, 19]);
    assert_eq!(s.gaps.len(), before.gaps.len() - 4);
    for k in 0..4 {
        assert_eq!(s.parent[16 + k], 5);
        assert_eq!(s.level[16 + k], 1);
    }
    assert_eq!(leaves(&s), 16 - 1 + 4);
    // Child 0 of block 5 (root position (1,1)) sits at its lower corner.
    assert_eq!(&s.origin[3 * 16..3 * 16 + 2], &[units::block(0), units::block(0)]);
    // Its -x neighbour is coarser: N_SKIP; its +x neighbour is sibling 17.
    assert_eq!(s.nbr[16 * 9 + link_index([-1, 0, 0], 2)], N_SKIP);
    assert_eq!(s.nbr[16 * 9 + link_index([1, 0, 0], 2)], 17);
    // The marks are consumed: a second adapt does nothing.
    let r = m.adapt().unwrap();
    assert_eq!((r.refined, r.coarsened), (0, 0));
    same(&m.snapshot().unwrap(), &s);
}

#[test]
fn refine_near_boundary_and_corner() {
    for &b in &[0u32, 1, 3, 15] {
        let mut m = mesh::<D2>([16, 16, 1], [W; 6], 3, 64);
        m.mark_blocks(&[b], Mark::Refine).unwrap();
        assert_eq!(m.adapt().unwrap().refined, 1);
        let s = valid(&m);
        let c = s.child[b as usize] as usize;
        assert!(s.onb[c] != 0);
    }
    let mut m = mesh::<D3>([8, 8, 8], [W; 6], 3, 64);
    m.mark_blocks(&[0], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    valid(&m);
    // The corner child 0 touches only its siblings and walls: it may refine. Child 7 (the
    // inner corner) touches coarser root blocks (N_SKIP): 2:1 forbids it.
    let c = m.snapshot().unwrap().child[0] as u32;
    m.mark_blocks(&[c + 7], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 0);
    m.mark_blocks(&[c], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    valid(&m);
}

#[test]
fn refine_twice_then_coarsen_back_restores_the_pool() {
    fn coarsen_all<D: Dim>(m: &mut Mesh<D>) {
        // 2:1 reversions may need more than one adapt per level.
        for _ in 0..8 {
            let leaves = m.leaf_ids().unwrap();
            m.mark_blocks(&leaves, Mark::Coarsen).unwrap();
            if m.adapt().unwrap().coarsened == 0 {
                break;
            }
            valid(m);
        }
    }
    fn run<D: Dim>(cells: [usize; 3], bc: [Boundary; 6]) {
        let mut m = mesh::<D>(cells, bc, 4, 2000);
        let root = valid(&m);
        let nc = 1usize << D::D;
        // Uniform refinement twice, uniform coarsening twice: each coarsening frees the
        // groups in the reverse order of their allocation, so even the gap order returns.
        for level in 0..2 {
            let leaves = m.leaf_ids().unwrap();
            m.mark_blocks(&leaves, Mark::Refine).unwrap();
            assert_eq!(m.adapt().unwrap().refined, leaves.len());
            let s = valid(&m);
            assert_eq!(s.id_sets[level + 1].len(), leaves.len() * nc);
        }
        for _ in 0..2 {
            let leaves = m.leaf_ids().unwrap();
            m.mark_blocks(&leaves, Mark::Coarsen).unwrap();
            assert_eq!(m.adapt().unwrap().coarsened, leaves.len() / nc);
            valid(&m);
        }
        same(&m.snapshot().unwrap(), &root);
        // Level 1 everywhere, then level 2 in a sphere, then coarsen everything: the same
        // pool and ID sets, the same free IDs (their order follows the coarsening rounds).
        let all = m.leaf_ids().unwrap();
        m.mark_blocks(&all, Mark::Refine).unwrap();
        m.adapt().unwrap();
        m.mark_region(Region::Sphere { center: [6.0, 6.0, 6.0], radius: 3.0 }, Mark::Refine).unwrap();
        let r = m.adapt().unwrap();
        assert!(r.refined > 0);
        let s2 = valid(&m);
        assert_eq!(s2.id_sets[2].len(), nc * r.refined);
        coarsen_all(&mut m);
        let mut s = m.snapshot().unwrap();
        let mut root_sorted = root.clone();
        s.gaps.sort_unstable();
        root_sorted.gaps.sort_unstable();
        same(&s, &root_sorted);
    }
    run::<D2>([16, 12, 1], [W; 6]);
    run::<D2>([16, 16, 1], [P, P, W, W, W, W]);
    run::<D3>([12, 12, 8], [W; 6]);
    run::<D3>([8, 8, 8], [P; 6]);
}

#[test]
fn refinement_next_to_a_coarser_region_is_ignored() {
    let mut m = mesh::<D2>([16, 16, 1], [W; 6], 4, 256);
    m.mark_blocks(&[5], Mark::Refine).unwrap();
    m.adapt().unwrap();
    let s = valid(&m);
    // Child 0 of block 5 touches coarse blocks 0, 1, 4: refining it would break 2:1.
    let c0 = s.child[5] as u32;
    // Child 3 (upper right) is also next to coarse blocks 6, 9, 10.
    m.mark_blocks(&[c0, c0 + 3], Mark::Refine).unwrap();
    let r = m.adapt().unwrap();
    assert_eq!(r.refined, 0);
    same(&m.snapshot().unwrap(), &s);
    // After refining the 3x3 root blocks around, the inner child may refine.
    m.mark_blocks(&[0, 1, 2, 4, 6, 8, 9, 10], Mark::Refine).unwrap();
    m.adapt().unwrap();
    valid(&m);
    m.mark_blocks(&[c0 + 3], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    let s = valid(&m);
    assert_eq!(s.status[5], status::REFINED_WITH_CHILD);
}

#[test]
fn coarsening_next_to_a_refined_region_is_reverted() {
    let mut m = mesh::<D2>([16, 16, 1], [W; 6], 4, 256);
    m.mark_blocks(&[0, 1, 2, 3, 4, 5, 6, 8, 9, 10], Mark::Refine).unwrap();
    m.adapt().unwrap();
    let s = valid(&m);
    let c5 = s.child[5] as u32;
    let c6 = s.child[6] as u32;
    // The children of block 5 have level-1 neighbours all round: they may refine.
    m.mark_blocks(&[c5, c5 + 1, c5 + 2, c5 + 3], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 4);
    let s = valid(&m);
    // Coarsening block 6 would put level 0 next to level 2: reverted.
    m.mark_blocks(&[c6, c6 + 1, c6 + 2, c6 + 3], Mark::Coarsen).unwrap();
    let r = m.adapt().unwrap();
    assert_eq!((r.refined, r.coarsened), (0, 0));
    same(&m.snapshot().unwrap(), &s);
    // Coarsening next to a block refined in the same adapt is reverted too: child 3 of
    // child 0 of block 5 touches child 0 of child 3 of block 5 at a corner.
    let d = s.child[(c5 + 3) as usize] as u32;
    let f = s.child[c5 as usize] as u32;
    m.mark_blocks(&[d, d + 1, d + 2, d + 3], Mark::Coarsen).unwrap();
    m.mark_blocks(&[f + 3], Mark::Refine).unwrap();
    let r = m.adapt().unwrap();
    assert_eq!((r.refined, r.coarsened), (1, 0));
    let s = valid(&m);
    assert_eq!(s.status[(c5 + 3) as usize], status::REFINED);
    assert_eq!(s.status[c5 as usize], status::REFINED_WITH_CHILD);
    assert_eq!(s.status[5], status::REFINED_WITH_CHILD);
    // Block 3 is away from the level-2 blocks: its coarsening goes through.
    let c3 = s.child[3] as u32;
    m.mark_blocks(&[c3, c3 + 1, c3 + 2, c3 + 3], Mark::Coarsen).unwrap();
    let r = m.adapt().unwrap();
    assert_eq!((r.refined, r.coarsened), (0, 1));
    let s = valid(&m);
    assert_eq!(s.status[3], status::UNREFINED);
}

#[test]
fn pool_full_leaves_the_mesh_unchanged() {
    let mut m = mesh::<D3>([8, 8, 8], [W; 6], 3, 8 + 12);
    let s = valid(&m);
    m.mark_blocks(&[0, 1], Mark::Refine).unwrap();
    match m.adapt() {
        Err(Error::OutOfMemory { what, .. }) => assert_eq!(what, "the block pool"),
        other => panic!("expected a pool-full error, got {other:?}"),
    }
    same(&m.snapshot().unwrap(), &s);
    // The marks were cleared; one refinement fits.
    assert_eq!(m.adapt().unwrap().refined, 0);
    m.mark_blocks(&[1], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    valid(&m);
}

#[test]
fn periodic_wrap_around() {
    // 2D: refine the blocks on both sides of the periodic x faces.
    let mut m = mesh::<D2>([16, 8, 1], [P, P, W, W, W, W], 3, 128);
    m.mark_blocks(&[0, 3, 4, 7], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 4);
    let s = valid(&m);
    let c0 = s.child[0];
    let c3 = s.child[3];
    // Child 0 of block 0 links across x_min to child 1 of block 3.
    assert_eq!(s.nbr[c0 as usize * 9 + link_index([-1, 0, 0], 2)], c3 + 1);
    assert_eq!(s.nbr[(c3 + 1) as usize * 9 + link_index([1, 0, 0], 2)], c0);
    // 3D fully periodic with two root blocks per axis: each block is its own neighbour's
    // neighbour on both sides.
    let mut m = mesh::<D3>([8, 8, 8], [P; 6], 3, 256);
    m.mark_blocks(&[0], Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    valid(&m);
    let all: Vec<u32> = (1..8).collect();
    m.mark_blocks(&all, Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 7);
    let s = valid(&m);
    assert!(s.onb.iter().zip(&s.status).all(|(&o, &st)| st == status::INACTIVE || o == 0));
    let leaves = m.leaf_ids().unwrap();
    m.mark_blocks(&leaves, Mark::Coarsen).unwrap();
    assert_eq!(m.adapt().unwrap().coarsened, 8);
    valid(&m);
}

#[test]
fn marking_functions() {
    let mut m = mesh::<D2>([16, 16, 1], [W; 6], 4, 1024);
    m.mark_region(Region::Box { min: [0.0, 0.0, 0.0], max: [4.0, 4.0, 1.0] }, Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 1);
    m.mark_region(Region::SphereSurface { center: [8.0, 8.0, 0.0], radius: 3.0 }, Mark::Refine).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 4);
    valid(&m);
    // Wall distance 4 at level 0, 2 at level 1, 1 at level 2: blocks touching y_min.
    let mut m = mesh::<D2>([16, 16, 1], [W; 6], 4, 1024);
    for _ in 0..4 {
        m.mark_wall_distance(&[Face::YMin], 4.0, true).unwrap();
        m.adapt().unwrap();
        valid(&m);
    }
    let per_level = m.leaves_per_level().unwrap();
    assert!(per_level[3] > 0, "{per_level:?}");
    // Frozen: coarsening requests are refused.
    let leaves = m.leaf_ids().unwrap();
    m.mark_blocks(&leaves, Mark::Coarsen).unwrap();
    let s = m.snapshot().unwrap();
    let perm = s.status.iter().filter(|&&x| x == status::REFINED_PERMANENT).count();
    assert!(perm > 0);
    m.adapt().unwrap();
    valid(&m);
    let s2 = m.snapshot().unwrap();
    assert_eq!(s2.status.iter().filter(|&&x| x == status::REFINED_PERMANENT).count(), perm);
    // mark_with: refine the leaves whose origin is at x = 0.
    let mut m = mesh::<D3>([8, 8, 8], [W; 6], 3, 512);
    m.mark_with(|g| if g.origin[0] == 0.0 { Mark::Refine } else { Mark::None }).unwrap();
    assert_eq!(m.adapt().unwrap().refined, 4);
    valid(&m);
    let id = leaf_at(&mut m, [1.0, 1.0, 1.0]);
    assert!(id >= 8);
}

/// A deterministic pseudo-random sequence of marks and adapts stays valid.
#[test]
fn random_sequences_stay_valid() {
    fn run<D: Dim>(cells: [usize; 3], bc: [Boundary; 6], seed: u64, rounds: usize) {
        let mut m = mesh::<D>(cells, bc, 4, 6000);
        let mix = |mut x: u64| {
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51afd7ed558ccd);
            x ^= x >> 33;
            x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
            x ^ (x >> 33)
        };
        let (mut refined, mut coarsened) = (0, 0);
        for round in 0..rounds as u64 {
            let (mut up, mut down) = (vec![], vec![]);
            for g in m.leaf_geometry().unwrap() {
                // Siblings share the draw for coarsening (keyed by the parent's corner), so
                // that whole families ask; refinement is drawn per leaf.
                let parent = g.origin.map(|x| (x / (2.0 * g.size)).floor() as u64);
                let fam =
                    mix(seed ^ mix(round ^ mix(parent[0] ^ mix(parent[1] ^ mix(parent[2] ^ (g.level as u64 * 977))))));
                if fam % 3 == 0 {
                    down.push(g.id);
                } else if mix(fam ^ g.id as u64) % 4 == 0 {
                    up.push(g.id);
                }
            }
            m.mark_blocks(&up, Mark::Refine).unwrap();
            m.mark_blocks(&down, Mark::Coarsen).unwrap();
            let r = m.adapt().unwrap();
            refined += r.refined;
            coarsened += r.coarsened;
            valid(&m);
        }
        assert!(refined > 0 && coarsened > 0, "refined {refined}, coarsened {coarsened}");
    }
    for seed in 1..4 {
        run::<D2>([16, 16, 1], [W; 6], seed, 12);
        run::<D2>([12, 8, 1], [P, P, P, P, W, W], seed, 12);
        run::<D3>([8, 8, 8], [W; 6], seed, 6);
        run::<D3>([8, 12, 8], [P, P, W, W, P, P], seed, 6);
    }
}

/// The lists of steps 1, 7 and 8 give the same forests whether their lengths stay on the
/// device (launches over an upper bound that read the count, `ramus_kernels::counted`) or
/// are read back (`AdaptWorkspace::counted_max_items = 0`), and whether they are
/// deduplicated by ranks where one launch can (`distinct_short_max = usize::MAX`,
/// `ramus_kernels::distinct`) or by a per-ID flag array (`distinct_short_max = 0`); and
/// the refined and coarsened blocks whether they are grouped by level in one launch
/// (`level_groups_max = usize::MAX`, `LevelGroups`) or by a sort (`level_groups_max = 0`):
/// five meshes under the same refinements and coarsenings stay bitwise equal, and valid.
#[test]
fn list_lengths_and_deduplications_build_the_same_forest() {
    fn run<D: Dim>(cells: [usize; 3], bc: [Boundary; 6]) {
        let m = usize::MAX;
        let ways =
            [(COUNTED_MAX_ITEMS, m, m), (COUNTED_MAX_ITEMS, 0, m), (0, m, m), (0, 0, m), (COUNTED_MAX_ITEMS, m, 0)];
        let mut meshes: Vec<_> = ways.iter().map(|_| mesh::<D>(cells, bc, 3, 4000)).collect();
        let mut spaces: Vec<_> = ways
            .iter()
            .map(|&(counted, short, groups)| {
                let mut w = AdaptWorkspace::new(&Device::Cpu).unwrap();
                (w.counted_max_items, w.distinct_short_max, w.level_groups_max) = (counted, short, groups);
                w
            })
            .collect();
        let (mut refined, mut coarsened) = (0, 0);
        for round in 0..6u32 {
            let geo = meshes[0].leaf_geometry().unwrap();
            // Refine every third leaf of the finest levels' first half, then coarsen back
            // whole families of level 2 every other round.
            let up: Vec<u32> = geo.iter().filter(|g| (g.id + round) % 3 == 0 && g.level < 2).map(|g| g.id).collect();
            let down: Vec<u32> =
                if round % 2 == 1 { geo.iter().filter(|g| g.level == 2).map(|g| g.id).collect() } else { vec![] };
            let mut reports = Vec::new();
            for (m, w) in meshes.iter_mut().zip(&mut spaces) {
                m.mark_blocks(&up, Mark::Refine).unwrap();
                m.mark_blocks(&down, Mark::Coarsen).unwrap();
                reports.push(m.adapt_with(w).unwrap());
            }
            let first = valid(&meshes[0]);
            for (m, r) in meshes.iter().zip(&reports).skip(1) {
                assert_eq!((r.refined, r.coarsened), (reports[0].refined, reports[0].coarsened));
                same(&first, &valid(m));
            }
            refined += reports[0].refined;
            coarsened += reports[0].coarsened;
        }
        assert!(refined > 0 && coarsened > 0, "refined {refined}, coarsened {coarsened}");
    }
    run::<D2>([32, 32, 1], [W; 6]);
    run::<D3>([8, 8, 8], [P, P, W, W, P, P]);
}

/// Per-step timings on the CPU backend (ignored: a benchmark; run with `--ignored
/// --nocapture` in release mode).
#[test]
#[ignore = "benchmark"]
fn cpu_adapt_timings() {
    fn show(what: &str, r: &ramus::amr::AdaptReport) {
        let steps: Vec<String> =
            r.per_step.iter().map(|(n, l)| format!("{n} {:.2}", l.time.as_secs_f64() * 1e3)).collect();
        println!(
            "{what}: refined {} coarsened {} total {:.2} ms [{}]",
            r.refined,
            r.coarsened,
            r.total().as_secs_f64() * 1e3,
            steps.join(", ")
        );
    }
    let mut m = mesh::<D3>([64, 64, 64], [W; 6], 4, 400_000);
    let leaves = m.leaf_ids().unwrap();
    m.mark_blocks(&leaves, Mark::Refine).unwrap();
    let mut ws = AdaptWorkspace::new(m.device()).unwrap();
    ws.profile = true;
    show("uniform 16^3 roots -> level 1", &m.adapt_with(&mut ws).unwrap());
    m.mark_region(Region::SphereSurface { center: [32.0; 3], radius: 20.0 }, Mark::Refine).unwrap();
    show("sphere surface -> level 2", &m.adapt_with(&mut ws).unwrap());
    let fine: Vec<u32> = m.leaf_geometry().unwrap().iter().filter(|g| g.level == 2).map(|g| g.id).collect();
    m.mark_blocks(&fine, Mark::Coarsen).unwrap();
    show("coarsen level 2", &m.adapt_with(&mut ws).unwrap());
    show("no marks", &m.adapt_with(&mut ws).unwrap());
    valid(&m);
}

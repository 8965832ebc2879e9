//! Tests of the forest checker (`ramus::amr::check`) and of the leaf-block VTU output.
//!
//! Valid refined forests come from a small reference builder written here, independently
//! of `Mesh::adapt`: it refines chosen leaves on a host snapshot, hands out IDs from the
//! end of the gap set (paper, "Data Structures"), derives links through the tree (a child's
//! neighbour is a child of its parent's neighbour) rather than geometrically as the checker
//! does, and marks ghost/interface cells by stencil reach (paper, "Grid Communication").

use ramus::amr::{check, Capacity, Mesh, MeshSnapshot, MeshSpec};
use ramus::backend::Device;
use ramus::kernels::amr::{
    child_position, status, units, BLOCK_CHILD_HAS_GHOSTS, BLOCK_HAS_GHOSTS, CELL_GHOST, CELL_INTERFACE,
};
use ramus::kernels::block::{cell_coords, link_index, link_offset, N_SKIP};
use ramus::output::{read_vtu, write_leaf_blocks_vtu};
use ramus::{Boundary, Dim, D2, D3};

const P: Boundary = Boundary::Periodic;
const W: Boundary = Boundary::NO_SLIP;

fn root<D: Dim>(cells: [usize; 3], boundaries: [Boundary; 6], max_levels: usize, blocks: usize) -> MeshSnapshot {
    let spec = MeshSpec { cells, boundaries, max_levels, capacity: Capacity::Blocks { blocks } };
    Mesh::<D>::new(Device::Cpu, spec, 0).unwrap().snapshot().unwrap()
}

/// Reference builder: refines leaves of a snapshot on the host.
struct Builder {
    s: MeshSnapshot,
    /// Refine coarser neighbours first so that 2:1 balance holds.
    balance: bool,
}

impl Builder {
    fn new(s: MeshSnapshot, balance: bool) -> Self {
        Builder { s, balance }
    }

    fn nb(&self) -> usize {
        self.s.neighbors()
    }

    fn origin(&self, b: usize) -> [i32; 3] {
        [self.s.origin[3 * b], self.s.origin[3 * b + 1], self.s.origin[3 * b + 2]]
    }

    /// The leaf containing the point `p` (units), by descent from the root grid.
    fn leaf_at(&self, p: [i32; 3]) -> usize {
        let w0 = units::block(0);
        let rb = self.s.root_blocks;
        let r = [p[0] / w0, p[1] / w0, p[2] / w0];
        let mut b = (r[0] + rb[0] as i32 * (r[1] + rb[1] as i32 * r[2])) as usize;
        while self.s.child[b] >= 0 {
            let o = self.origin(b);
            let half = units::block(self.s.level[b] + 1);
            let mut k = 0;
            for a in 0..self.s.dim {
                k |= (((p[a] - o[a]) >= half) as usize) << a;
            }
            b = self.s.child[b] as usize + k;
        }
        b
    }

    /// Neighbour links of every block above the root level, through the tree.
    fn update_links(&mut self) {
        let (nb, dim) = (self.nb(), self.s.dim);
        for l in 1..self.s.max_levels {
            for &b in &self.s.id_sets[l].clone() {
                let b = b as usize;
                let p = self.s.parent[b] as usize;
                let k = b - self.s.child[p] as usize;
                let pos = child_position(k);
                for j in 0..nb {
                    let o = link_offset(j, dim);
                    let c = [pos[0] + o[0], pos[1] + o[1], pos[2] + o[2]];
                    let po = [c[0].div_euclid(2), c[1].div_euclid(2), c[2].div_euclid(2)];
                    let kk = (c[0].rem_euclid(2) | c[1].rem_euclid(2) << 1 | c[2].rem_euclid(2) << 2) as i32;
                    let pn = self.s.nbr[p * nb + link_index(po, dim)];
                    self.s.nbr[b * nb + j] = if pn < N_SKIP {
                        pn // boundary: the child crosses the same walls
                    } else if pn >= 0 && self.s.child[pn as usize] >= 0 {
                        self.s.child[pn as usize] + kk
                    } else {
                        N_SKIP
                    };
                }
            }
        }
    }

    /// Refines leaf `b` (first its coarser neighbours if balancing).
    fn refine(&mut self, b: usize) {
        if self.s.child[b] >= 0 {
            return;
        }
        let (nb, dim, l) = (self.nb(), self.s.dim, self.s.level[b]);
        assert!(((l + 1) as usize) < self.s.max_levels, "refining past the level limit");
        if self.balance && l > 0 {
            self.update_links();
            let p = self.s.parent[b] as usize;
            let pos = child_position(b - self.s.child[p] as usize);
            for j in 0..nb {
                if self.s.nbr[b * nb + j] == N_SKIP {
                    let o = link_offset(j, dim);
                    let po =
                        [(pos[0] + o[0]).div_euclid(2), (pos[1] + o[1]).div_euclid(2), (pos[2] + o[2]).div_euclid(2)];
                    let coarse = self.s.nbr[p * nb + link_index(po, dim)];
                    assert!(coarse >= 0, "N_SKIP where the parent has no neighbour");
                    self.refine(coarse as usize);
                }
            }
        }
        let nc = 1 << dim;
        let ids: Vec<u32> = (0..nc).map(|_| self.s.gaps.pop().expect("pool full")).collect();
        let c0 = ids[0] as usize;
        assert!(ids.iter().enumerate().all(|(i, &id)| id as usize == c0 + i));
        let o = self.origin(b);
        let w = units::block(l + 1);
        for k in 0..nc {
            let c = c0 + k;
            let pos = child_position(k);
            self.s.level[c] = l + 1;
            for a in 0..3 {
                self.s.origin[3 * c + a] = o[a] + pos[a] * w;
            }
            self.s.status[c] = status::UNREFINED;
            self.s.parent[c] = b as i32;
            self.s.child[c] = -1;
            self.s.id_sets[(l + 1) as usize].push(c as u32);
        }
        self.s.child[b] = c0 as i32;
    }

    /// Refines the leaf containing `p` `times` times (descending into child `k` each time).
    fn refine_at(&mut self, p: [i32; 3], times: usize) -> &mut Self {
        for _ in 0..times {
            let b = self.leaf_at(p);
            if (self.s.level[b] + 1) as usize >= self.s.max_levels {
                break;
            }
            self.refine(b);
        }
        self
    }

    /// Derived data: links, `nbr_child`, `onb`, statuses, masks.
    fn finish(&mut self) -> MeshSnapshot {
        self.update_links();
        let (nb, dim, cells) = (self.nb(), self.s.dim, self.s.block_cells());
        let s = &mut self.s;
        let active: Vec<usize> = s.id_sets.iter().flatten().map(|&b| b as usize).collect();
        let mut has = vec![false; s.capacity];
        for &b in &active {
            for j in 0..nb {
                let n = s.nbr[b * nb + j];
                s.nbr_child[b * nb + j] = if n < 0 {
                    n
                } else if s.child[n as usize] >= 0 {
                    s.child[n as usize]
                } else {
                    -2
                };
            }
            s.onb[b] = s.nbr[b * nb..(b + 1) * nb].iter().any(|&n| n < 0) as u32;
            // A cell is a ghost if a stencil of reach 2 touches a coarser region, an
            // interface cell if one of reach 4 does.
            for t in 0..cells {
                let x = cell_coords(t);
                let reaches = |m: i32| {
                    let r = |a: usize| if a < dim { -m..=m } else { 0..=0 };
                    r(0).flat_map(|dx| r(1).flat_map(move |dy| r(2).map(move |dz| [dx, dy, dz]))).any(|d| {
                        let o: Vec<i32> = (0..3).map(|a| (x[a] + d[a]).div_euclid(4)).collect();
                        s.nbr[b * nb + link_index([o[0], o[1], o[2]], dim)] == N_SKIP
                    })
                };
                s.cell_mask[b * cells + t] = if reaches(2) {
                    CELL_GHOST
                } else if reaches(4) {
                    CELL_INTERFACE
                } else {
                    0
                };
            }
            has[b] = s.cell_mask[b * cells..(b + 1) * cells].iter().any(|&m| m != 0);
        }
        for &b in &active {
            let c = s.child[b];
            let kids = if c >= 0 { (c as usize..c as usize + (1 << dim)).collect() } else { vec![] };
            s.status[b] = if c < 0 {
                status::UNREFINED
            } else if kids.iter().any(|&k| s.child[k] >= 0) {
                status::REFINED_WITH_CHILD
            } else {
                status::REFINED
            };
            s.block_mask[b] = if has[b] { BLOCK_HAS_GHOSTS } else { 0 }
                | if kids.iter().any(|&k| has[k]) { BLOCK_CHILD_HAS_GHOSTS } else { 0 };
        }
        self.s.clone()
    }
}

/// Point `f` (fractions of the domain per axis) in units.
fn at(s: &MeshSnapshot, f: [f64; 3]) -> [i32; 3] {
    let mut p = [0; 3];
    for a in 0..s.dim {
        let e = (s.root_blocks[a] as i32 * units::block(0)) as f64;
        p[a] = ((f[a] * e) as i32).clamp(0, e as i32 - 1);
    }
    p
}

fn refined_2d(boundaries: [Boundary; 6], balance: bool) -> MeshSnapshot {
    let mut bld = Builder::new(root::<D2>([16, 12, 1], boundaries, 5, 600), balance);
    let s = bld.s.clone();
    bld.refine_at(at(&s, [0.0, 0.0, 0.0]), 4)
        .refine_at(at(&s, [0.99, 0.5, 0.0]), 3)
        .refine_at(at(&s, [0.5, 0.99, 0.0]), 2);
    bld.refine_at(at(&s, [0.45, 0.45, 0.0]), 3);
    bld.finish()
}

fn refined_3d(boundaries: [Boundary; 6], balance: bool) -> MeshSnapshot {
    let mut bld = Builder::new(root::<D3>([8, 12, 16], boundaries, 4, 4000), balance);
    let s = bld.s.clone();
    bld.refine_at(at(&s, [0.0, 0.99, 0.0]), 3)
        .refine_at(at(&s, [0.99, 0.0, 0.99]), 3)
        .refine_at(at(&s, [0.5, 0.5, 0.5]), 2);
    bld.finish()
}

fn expect_violation(s: &MeshSnapshot, rule: &str, needles: &[&str]) -> String {
    let e = check(s).expect_err("the checker accepted a broken forest");
    let msg = e.to_string();
    assert_eq!(e.rule, rule, "wrong rule in: {msg}");
    for n in needles {
        assert!(msg.contains(n), "message lacks '{n}': {msg}");
    }
    msg
}

#[test]
fn root_grids_pass() {
    let mut xper = [W; 6];
    xper[0] = P;
    xper[1] = P;
    for bc in [[W; 6], xper, [P; 6]] {
        check(&root::<D2>([16, 8, 1], bc, 3, 40)).unwrap();
        check(&root::<D2>([4, 12, 1], bc, 1, 3)).unwrap();
        check(&root::<D3>([8, 12, 4], bc, 3, 100)).unwrap();
    }
}

#[test]
fn refined_forests_pass() {
    let mut yper = [W; 6];
    yper[2] = P;
    yper[3] = P;
    for bc in [[W; 6], yper, [P; 6]] {
        let s = refined_2d(bc, true);
        assert!(!s.id_sets[4].is_empty() && s.cell_mask.contains(&CELL_GHOST));
        check(&s).unwrap_or_else(|e| panic!("2D {bc:?}: {e}"));
        let s = refined_3d(bc, true);
        assert!(!s.id_sets[3].is_empty());
        check(&s).unwrap_or_else(|e| panic!("3D {bc:?}: {e}"));
    }
}

/// A block of `s` with children that are all leaves, and one with a neighbour link.
fn refined_block(s: &MeshSnapshot) -> usize {
    s.id_sets.iter().flatten().map(|&b| b as usize).find(|&b| s.status[b] == status::REFINED).unwrap()
}

#[test]
fn mutations_are_reported() {
    for valid in [refined_2d([W; 6], true), refined_3d([P; 6], true)] {
        let nb = valid.neighbors();
        let deep = valid.id_sets[2][0] as usize;

        let mut s = valid.clone();
        let j = (0..nb).find(|&j| j != nb / 2 && s.nbr[deep * nb + j] >= 0).unwrap();
        s.nbr[deep * nb + j] ^= 1;
        expect_violation(&s, "links", &[&format!("block {deep}"), "nbr["]);

        let mut s = valid.clone();
        s.nbr_child[deep * nb + j] = -2 - (s.nbr_child[deep * nb + j] == -2) as i32;
        expect_violation(&s, "links", &[&format!("block {deep}"), "nbr_child["]);

        let mut s = valid.clone();
        s.onb[deep] ^= 1;
        expect_violation(&s, "links", &["onb"]);

        let mut s = valid.clone();
        let dup = s.id_sets[1][0];
        s.id_sets[1].push(dup);
        expect_violation(&s, "ID sets", &[&format!("block {dup}"), "already at id_sets[1][0]"]);

        let mut s = valid.clone();
        let lost = s.gaps.pop().unwrap();
        expect_violation(&s, "ID sets", &[&format!("block {lost}"), "membership", "missing gap"]);

        let mut s = valid.clone();
        let g = s.gaps[0] as usize;
        s.status[g] = status::UNREFINED;
        expect_violation(&s, "gap set", &[&format!("block {g}"), "INACTIVE", "UNREFINED"]);

        let mut s = valid.clone();
        let r = refined_block(&s);
        s.status[r] = status::REFINED_WITH_CHILD;
        expect_violation(&s, "tree", &[&format!("block {r}"), "status", "REFINED_WITH_CHILD"]);

        let mut s = valid.clone();
        let leaf = s.leaves()[0] as usize;
        s.status[leaf] = status::REFINED;
        expect_violation(&s, "tree", &[&format!("block {leaf}"), "UNREFINED"]);

        let mut s = valid.clone();
        let c = s.child[r] as usize + 1;
        s.parent[c] = r as i32 + 1;
        expect_violation(&s, "tree", &[&format!("block {c}")]);

        let mut s = valid.clone();
        let cells = s.block_cells();
        let b = (0..s.capacity).find(|&b| s.block_mask[b] & BLOCK_HAS_GHOSTS != 0 && s.level[b] >= 0).unwrap();
        s.cell_mask[b * cells + 5] = 0;
        expect_violation(&s, "cell masks", &[&format!("block {b}"), "cell_mask[5]", "CELL_INTERIOR"]);

        let mut s = valid.clone();
        s.block_mask[b] = 0;
        expect_violation(&s, "block masks", &[&format!("block {b}"), "block_mask"]);
    }
}

#[test]
fn unbalanced_forests_are_reported() {
    let s = refined_2d([W; 6], false);
    expect_violation(&s, "2:1 balance", &["touching leaf"]);
    let s = refined_3d([W; 6], false);
    expect_violation(&s, "2:1 balance", &["touching leaf"]);
    // Across a periodic face only: refine a corner leaf deeply, its wrapped neighbour not.
    let mut bld = Builder::new(root::<D2>([16, 16, 1], [P; 6], 4, 400), false);
    let p = at(&bld.s, [0.99, 0.99, 0.0]);
    bld.refine_at(p, 3);
    let s = bld.finish();
    let msg = expect_violation(&s, "2:1 balance", &["touching leaf"]);
    assert!(msg.contains("+1"), "{msg}");
}

/// A temporary path whose name ends in `name`, removed when it drops.
fn tmp(name: &str) -> tempfile::TempPath {
    tempfile::Builder::new().prefix("ramus-check-").suffix(&format!("-{name}")).tempfile().unwrap().into_temp_path()
}

#[test]
fn vtu_of_leaves_round_trips() {
    for (s, domain) in [(refined_2d([W; 6], true), [16.0, 12.0, 1.0]), (refined_3d([W; 6], true), [8.0, 12.0, 16.0])] {
        let path = tmp(&format!("leaves{}.vtu", s.dim));
        write_leaf_blocks_vtu(&path, &s).unwrap();
        let f = read_vtu(&path).unwrap();
        let leaves = s.leaves();
        assert_eq!(f.cells(), leaves.len());
        let ids: Vec<u32> = f.cell_data["block_id"].iter().map(|&v| v as u32).collect();
        assert_eq!(ids, leaves);
        let levels: Vec<i32> = leaves.iter().map(|&b| s.level[b as usize]).collect();
        assert_eq!(f.cell_data["level"], levels.iter().map(|&l| l as f64).collect::<Vec<_>>());
        f.validate_leaf_tiling(s.dim, domain).unwrap();
        let area: f64 = f.boxes().iter().map(|(lo, hi)| (0..s.dim).map(|a| hi[a] - lo[a]).product::<f64>()).sum();
        assert!((area - domain[..s.dim].iter().product::<f64>()).abs() < 1e-9);
    }
    // The validator sees a 2:1 violation in a written file.
    let s = refined_2d([W; 6], false);
    let path = tmp("unbalanced.vtu");
    write_leaf_blocks_vtu(&path, &s).unwrap();
    let err = read_vtu(&path).unwrap().validate_leaf_tiling(2, [16.0, 12.0, 1.0]).unwrap_err();
    assert!(err.contains("more than one level"), "{err}");
}

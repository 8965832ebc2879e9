//! A brute-force validator of a whole forest (paper, section "Adaptive Mesh Refinement":
//! "Data Structures", "Refinement and Coarsening" and the first paragraphs of "Grid
//! Communication" on ghost and interface cells).
//!
//! [`check`] recomputes every invariant of a [`MeshSnapshot`] from first principles —
//! geometry and the tree, never the `adapt` algorithm — and reports the first violation:
//!
//! 1. **ID sets and gap set** (paper, "Data Structures"): together they hold every ID
//!    `0..capacity` exactly once; ID-set entries are active, final-status blocks of their
//!    level; gap slots are `INACTIVE` with level `-1`.
//! 2. **Tree**: root blocks lie on the root lattice with parent `-1`; every other block is
//!    child `k` of its parent, where `k` is the [`child_position`] of its origin offset;
//!    children of a refined block are active and point back (no orphans); leaves have
//!    child `-1`; statuses match (`UNREFINED` iff leaf, `REFINED_WITH_CHILD` iff a child
//!    has children, `REFINED` iff all children are leaves, `REFINED_PERMANENT` accepted
//!    for any refined block); no two blocks share a level and origin.
//! 3. **Links**: each `nbr` link equals a geometric search over active blocks of the same
//!    level (periodic faces wrap; outside the domain across walls: [`boundary_link`];
//!    otherwise [`N_SKIP`]); `nbr_child` follows; `onb` is set iff a link is negative.
//! 4. **Masks** (paper, "Grid Communication"): the two cell layers next to an `N_SKIP`
//!    direction are ghost cells, the next two interface cells; block-mask bits follow.
//! 5. **Leaves**: 2:1 balance across faces, edges and corners (periodic faces included),
//!    and the leaves tile the domain (volumes add up, none nested in another).
//!
//! Cost: `O(n · 3^D · L)` hash look-ups for `n` blocks and `L` levels (the 2:1 test looks
//! up, for every leaf and every neighbour position, the coarser leaves that could cover it,
//! instead of comparing all pairs of leaves). Meant for tests and debugging, on the host.

use std::collections::HashMap;
use std::fmt;

use ramus_kernels::amr::{
    child_position, status, units, BLOCK_CHILD_HAS_GHOSTS, BLOCK_HAS_GHOSTS, CELL_GHOST, CELL_INTERFACE, CELL_INTERIOR,
    NO_CHILD,
};
use ramus_kernels::block::{boundary_link, cell_coords, face, link_offset, N_SKIP};

use super::MeshSnapshot;
use crate::config::Boundary;

/// The first broken invariant found by [`check`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Violation {
    /// Which group of invariants (e.g. `"ID sets"`, `"tree"`, `"links"`, `"2:1 balance"`).
    pub rule: &'static str,
    /// The block concerned, if any.
    pub block: Option<usize>,
    /// The field or relation (e.g. `nbr[+1,0,0]`, `status`, `cell_mask[5]`).
    pub field: String,
    /// What the invariant requires.
    pub expected: String,
    /// What the snapshot holds.
    pub found: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} violated", self.rule)?;
        if let Some(b) = self.block {
            write!(f, " at block {b}")?;
        }
        write!(f, ": {}: expected {}, found {}", self.field, self.expected, self.found)
    }
}

fn violation(
    rule: &'static str,
    block: Option<usize>,
    field: impl Into<String>,
    expected: impl fmt::Display,
    found: impl fmt::Display,
) -> Violation {
    Violation { rule, block, field: field.into(), expected: expected.to_string(), found: found.to_string() }
}

/// Name of a status code, for messages.
pub fn status_name(s: i32) -> String {
    let name = match s {
        status::INACTIVE => "INACTIVE",
        status::UNREFINED => "UNREFINED",
        status::REFINED => "REFINED",
        status::REFINED_WITH_CHILD => "REFINED_WITH_CHILD",
        status::REFINED_PERMANENT => "REFINED_PERMANENT",
        status::MARKED_REFINE => "MARKED_REFINE",
        status::MARKED_COARSEN => "MARKED_COARSEN",
        status::NEW => "NEW",
        status::REMOVE => "REMOVE",
        _ => return format!("unknown status {s}"),
    };
    format!("{name} ({s})")
}

/// Checks every invariant of the forest in `s` (see the module documentation); returns the
/// first violation, in the order ID sets, tree, links, masks, leaves.
pub fn check(s: &MeshSnapshot) -> Result<(), Violation> {
    let c = Ctx::new(s)?;
    let active = c.sets()?;
    c.tree(&active)?;
    let index = c.index(&active)?;
    c.links(&active, &index)?;
    c.masks(&active)?;
    c.leaves(&active, &index)
}

type Pos = [i64; 3];

struct Ctx<'a> {
    s: &'a MeshSnapshot,
    dim: usize,
    nb: usize,
    cells: usize,
    nc: usize,
    /// Domain extent per axis, in units (0 on unused axes).
    extent: Pos,
    periodic: [bool; 3],
}

impl<'a> Ctx<'a> {
    fn new(s: &'a MeshSnapshot) -> Result<Self, Violation> {
        if s.dim != 2 && s.dim != 3 {
            return Err(violation("shape", None, "dim", "2 or 3", s.dim));
        }
        let (dim, nb, cells, cap) = (s.dim, s.neighbors(), s.block_cells(), s.capacity);
        let lens: [(&str, usize, usize); 11] = [
            ("level", s.level.len(), cap),
            ("origin", s.origin.len(), 3 * cap),
            ("status", s.status.len(), cap),
            ("parent", s.parent.len(), cap),
            ("child", s.child.len(), cap),
            ("nbr", s.nbr.len(), nb * cap),
            ("nbr_child", s.nbr_child.len(), nb * cap),
            ("onb", s.onb.len(), cap),
            ("block_mask", s.block_mask.len(), cap),
            ("cell_mask", s.cell_mask.len(), cells * cap),
            ("id_sets.len()", s.id_sets.len(), s.max_levels),
        ];
        for (name, found, expected) in lens {
            if found != expected {
                return Err(violation("shape", None, format!("{name} length"), expected, found));
            }
        }
        let mut extent = [0i64; 3];
        let mut periodic = [false; 3];
        for a in 0..dim {
            extent[a] = s.root_blocks[a] as i64 * units::block(0) as i64;
            periodic[a] = s.boundaries[face(a, false)] == Boundary::Periodic;
        }
        Ok(Ctx { s, dim, nb, cells, nc: 1 << dim, extent, periodic })
    }

    fn origin(&self, b: usize) -> Pos {
        let o = &self.s.origin[3 * b..3 * b + 3];
        [o[0] as i64, o[1] as i64, o[2] as i64]
    }

    fn offset_name(&self, k: usize) -> String {
        let o = link_offset(k, self.dim);
        let parts: Vec<String> = o[..self.dim].iter().map(|v| format!("{v:+}")).collect();
        format!("[{}]", parts.join(","))
    }

    /// ID sets ∪ gap set = all IDs, disjoint; returns which slots are active.
    fn sets(&self) -> Result<Vec<bool>, Violation> {
        let s = self.s;
        let mut seen: Vec<Option<String>> = vec![None; s.capacity];
        let mut mark = |b: u32, place: String| -> Result<usize, Violation> {
            let b = b as usize;
            if b >= s.capacity {
                return Err(violation("ID sets", Some(b), place, format!("an ID below capacity {}", s.capacity), b));
            }
            if let Some(prev) = &seen[b] {
                return Err(violation(
                    "ID sets",
                    Some(b),
                    place,
                    "each ID exactly once in the ID sets and the gap set",
                    format!("block {b} already at {prev}"),
                ));
            }
            seen[b] = Some(place);
            Ok(b)
        };
        let mut active = vec![false; s.capacity];
        for (l, ids) in s.id_sets.iter().enumerate() {
            for (i, &id) in ids.iter().enumerate() {
                let b = mark(id, format!("id_sets[{l}][{i}]"))?;
                active[b] = true;
                if s.level[b] != l as i32 {
                    return Err(violation("ID sets", Some(b), format!("level (in id_sets[{l}])"), l, s.level[b]));
                }
                let st = s.status[b];
                let ok = matches!(
                    st,
                    status::UNREFINED | status::REFINED | status::REFINED_WITH_CHILD | status::REFINED_PERMANENT
                );
                if !ok {
                    return Err(violation(
                        "ID sets",
                        Some(b),
                        format!("status (in id_sets[{l}])"),
                        "an active final status (UNREFINED, REFINED, REFINED_WITH_CHILD, REFINED_PERMANENT)",
                        status_name(st),
                    ));
                }
            }
        }
        for (i, &id) in s.gaps.iter().enumerate() {
            let b = mark(id, format!("gaps[{i}]"))?;
            if s.status[b] != status::INACTIVE {
                return Err(violation(
                    "gap set",
                    Some(b),
                    format!("status (in gaps[{i}])"),
                    "INACTIVE (-1)",
                    status_name(s.status[b]),
                ));
            }
            if s.level[b] != -1 {
                return Err(violation("gap set", Some(b), format!("level (in gaps[{i}])"), -1, s.level[b]));
            }
        }
        if let Some(b) = seen.iter().position(|p| p.is_none()) {
            return Err(violation(
                "ID sets",
                Some(b),
                "membership",
                "every ID 0..capacity in an ID set or the gap set",
                format!("block {b} in neither (missing gap or lost block)"),
            ));
        }
        Ok(active)
    }

    /// Levels, origins, parent/child links and statuses.
    fn tree(&self, active: &[bool]) -> Result<(), Violation> {
        let s = self.s;
        let rule = "tree";
        for b in (0..s.capacity).filter(|&b| active[b]) {
            let l = s.level[b];
            let o = self.origin(b);
            for a in self.dim..3 {
                if o[a] != 0 {
                    return Err(violation(rule, Some(b), format!("origin[{a}] (unused axis)"), 0, o[a]));
                }
            }
            if l == 0 {
                if s.parent[b] != -1 {
                    return Err(violation(rule, Some(b), "parent (root block)", -1, s.parent[b]));
                }
                let w = units::block(0) as i64;
                for a in 0..self.dim {
                    if o[a] < 0 || o[a] >= self.extent[a] || o[a] % w != 0 {
                        return Err(violation(
                            rule,
                            Some(b),
                            format!("origin[{a}] (root block)"),
                            format!("a multiple of {w} in 0..{}", self.extent[a]),
                            o[a],
                        ));
                    }
                }
            } else {
                let p = s.parent[b];
                if p < 0 || p as usize >= s.capacity || !active[p as usize] {
                    return Err(violation(rule, Some(b), "parent", "an active block", p));
                }
                let p = p as usize;
                if s.level[p] != l - 1 {
                    return Err(violation(rule, Some(b), format!("level of parent {p}"), l - 1, s.level[p]));
                }
                if s.child[p] < 0 {
                    return Err(violation(
                        rule,
                        Some(b),
                        format!("child of parent {p}"),
                        "a first child ID",
                        s.child[p],
                    ));
                }
                let po = self.origin(p);
                let w = units::block(l) as i64;
                let mut half = [0i32; 3];
                for a in 0..self.dim {
                    let d = o[a] - po[a];
                    if d != 0 && d != w {
                        return Err(violation(
                            rule,
                            Some(b),
                            format!("origin[{a}] relative to parent {p}"),
                            format!("0 or {w}"),
                            d,
                        ));
                    }
                    half[a] = (d / w) as i32;
                }
                let k = (0..self.nc).find(|&k| child_position(k) == half).unwrap_or(0);
                if s.child[p] as usize + k != b {
                    return Err(violation(
                        rule,
                        Some(b),
                        format!("child[{p}] + {k} (child position of the origin)"),
                        b,
                        s.child[p] as usize + k,
                    ));
                }
            }
            let c = s.child[b];
            let st = s.status[b];
            if c == -1 {
                if st != status::UNREFINED {
                    return Err(violation(
                        rule,
                        Some(b),
                        "status (leaf, child = -1)",
                        status_name(status::UNREFINED),
                        status_name(st),
                    ));
                }
                continue;
            }
            if c < 0 || c as usize + self.nc > s.capacity {
                return Err(violation(
                    rule,
                    Some(b),
                    "child",
                    format!("-1 or a first child ID below {}", s.capacity - self.nc + 1),
                    c,
                ));
            }
            let mut grand = false;
            for k in 0..self.nc {
                let ck = c as usize + k;
                if !active[ck] {
                    return Err(violation(
                        rule,
                        Some(b),
                        format!("child {ck} (= child + {k})"),
                        "an active block",
                        "inactive (orphan link)",
                    ));
                }
                if s.parent[ck] != b as i32 {
                    return Err(violation(rule, Some(ck), "parent", b, s.parent[ck]));
                }
                grand |= s.child[ck] >= 0;
            }
            let want = if grand { status::REFINED_WITH_CHILD } else { status::REFINED };
            if st != want && st != status::REFINED_PERMANENT {
                return Err(violation(
                    rule,
                    Some(b),
                    "status",
                    format!(
                        "{} or REFINED_PERMANENT ({})",
                        status_name(want),
                        if grand { "a child has children" } else { "all children are leaves" }
                    ),
                    status_name(st),
                ));
            }
        }
        Ok(())
    }

    /// Map (level, origin) → ID over active blocks; two blocks in one place are a violation.
    fn index(&self, active: &[bool]) -> Result<HashMap<(i32, Pos), u32>, Violation> {
        let mut map = HashMap::new();
        for b in (0..self.s.capacity).filter(|&b| active[b]) {
            if let Some(prev) = map.insert((self.s.level[b], self.origin(b)), b as u32) {
                return Err(violation(
                    "tree",
                    Some(b),
                    "level and origin",
                    "a place of its own",
                    format!("same as block {prev}"),
                ));
            }
        }
        Ok(map)
    }

    /// Position `q` of level `l` wrapped across periodic faces, or the wall faces crossed.
    fn locate(&self, mut q: Pos) -> Result<Pos, u32> {
        let mut walls = 0;
        for a in 0..self.dim {
            let e = self.extent[a];
            if q[a] < 0 || q[a] >= e {
                if self.periodic[a] {
                    q[a] = q[a].rem_euclid(e);
                } else {
                    walls |= 1 << face(a, q[a] >= e);
                }
            }
        }
        if walls == 0 {
            Ok(q)
        } else {
            Err(walls)
        }
    }

    fn links(&self, active: &[bool], index: &HashMap<(i32, Pos), u32>) -> Result<(), Violation> {
        let s = self.s;
        for b in (0..s.capacity).filter(|&b| active[b]) {
            let l = s.level[b];
            let o = self.origin(b);
            let w = units::block(l) as i64;
            let mut any_negative = false;
            for k in 0..self.nb {
                let d = link_offset(k, self.dim);
                let q = [o[0] + d[0] as i64 * w, o[1] + d[1] as i64 * w, o[2] + d[2] as i64 * w];
                let expected = match self.locate(q) {
                    Err(walls) => boundary_link(walls),
                    Ok(q) => index.get(&(l, q)).map_or(N_SKIP, |&n| n as i32),
                };
                let found = s.nbr[b * self.nb + k];
                if found != expected {
                    let what = |v: i32| match v {
                        N_SKIP => "N_SKIP (-1)".to_string(),
                        v if v < -1 => format!("boundary_link(faces {:#b}) ({v})", -2 - v),
                        v => format!("block {v}"),
                    };
                    return Err(violation(
                        "links",
                        Some(b),
                        format!("nbr{}", self.offset_name(k)),
                        what(expected),
                        what(found),
                    ));
                }
                any_negative |= found < 0;
                let want_child = if found >= 0 {
                    let c = s.child[found as usize];
                    if c >= 0 {
                        c
                    } else {
                        NO_CHILD
                    }
                } else {
                    found
                };
                let got = s.nbr_child[b * self.nb + k];
                if got != want_child {
                    return Err(violation(
                        "links",
                        Some(b),
                        format!("nbr_child{}", self.offset_name(k)),
                        want_child,
                        got,
                    ));
                }
            }
            if s.onb[b] != any_negative as u32 {
                return Err(violation("links", Some(b), "onb (any nbr < 0)", any_negative as u32, s.onb[b]));
            }
        }
        Ok(())
    }

    /// Cell masks by the paper's definition, from the block's `N_SKIP` links.
    fn expected_cells(&self, b: usize) -> Vec<u8> {
        let mut m = vec![CELL_INTERIOR; self.cells];
        for k in 0..self.nb {
            if self.s.nbr[b * self.nb + k] != N_SKIP {
                continue;
            }
            let o = link_offset(k, self.dim);
            for (t, cell) in m.iter_mut().enumerate() {
                let x = cell_coords(t);
                let layer = (0..self.dim)
                    .filter(|&a| o[a] != 0)
                    .map(|a| if o[a] > 0 { 4 - x[a] } else { x[a] + 1 })
                    .max()
                    .unwrap_or(0);
                let want = match layer {
                    1 | 2 => CELL_GHOST,
                    3 | 4 => CELL_INTERFACE,
                    _ => CELL_INTERIOR,
                };
                *cell = (*cell).max(want);
            }
        }
        m
    }

    fn masks(&self, active: &[bool]) -> Result<(), Violation> {
        let s = self.s;
        let mut has = vec![false; s.capacity];
        for b in (0..s.capacity).filter(|&b| active[b]) {
            let want = self.expected_cells(b);
            let got = &s.cell_mask[b * self.cells..(b + 1) * self.cells];
            if let Some(t) = (0..self.cells).find(|&t| want[t] != got[t]) {
                let name = |v: u8| match v {
                    CELL_INTERIOR => "CELL_INTERIOR (0)".to_string(),
                    CELL_INTERFACE => "CELL_INTERFACE (1)".to_string(),
                    CELL_GHOST => "CELL_GHOST (2)".to_string(),
                    v => format!("unknown ({v})"),
                };
                let x = cell_coords(t);
                return Err(violation(
                    "cell masks",
                    Some(b),
                    format!("cell_mask[{t}] (cell {:?})", &x[..self.dim]),
                    name(want[t]),
                    name(got[t]),
                ));
            }
            has[b] = want.iter().any(|&v| v != CELL_INTERIOR);
        }
        for b in (0..s.capacity).filter(|&b| active[b]) {
            let c = s.child[b];
            let child_has = c >= 0 && (0..self.nc).any(|k| has[c as usize + k]);
            let want = if has[b] { BLOCK_HAS_GHOSTS } else { 0 } | if child_has { BLOCK_CHILD_HAS_GHOSTS } else { 0 };
            if s.block_mask[b] != want {
                return Err(violation(
                    "block masks",
                    Some(b),
                    "block_mask",
                    format!("{want:#b}"),
                    format!("{:#b}", s.block_mask[b]),
                ));
            }
        }
        Ok(())
    }

    /// 2:1 balance of touching leaves and exact tiling of the domain by the leaves.
    fn leaves(&self, active: &[bool], index: &HashMap<(i32, Pos), u32>) -> Result<(), Violation> {
        let s = self.s;
        let leaves: Vec<usize> = (0..s.capacity).filter(|&b| active[b] && s.child[b] < 0).collect();
        let is_leaf = |l: i32, q: Pos| index.get(&(l, q)).filter(|&&n| s.child[n as usize] < 0).copied();
        let align = |q: Pos, l: i32| {
            let w = units::block(l) as i64;
            [q[0].div_euclid(w) * w, q[1].div_euclid(w) * w, q[2].div_euclid(w) * w]
        };
        let mut volume: u128 = 0;
        for &b in &leaves {
            let l = s.level[b];
            let o = self.origin(b);
            let w = units::block(l) as u128;
            volume += w.pow(self.dim as u32);
            // Tiling: no coarser leaf contains this one.
            for lc in 0..l {
                if let Some(n) = is_leaf(lc, align(o, lc)) {
                    return Err(violation(
                        "tiling",
                        Some(b),
                        format!("overlap with leaf {n} (level {lc})"),
                        "disjoint leaves",
                        "nested leaves",
                    ));
                }
            }
            // 2:1: no leaf two or more levels coarser covers a neighbour position.
            let wl = units::block(l) as i64;
            for k in 0..self.nb {
                let d = link_offset(k, self.dim);
                let q = [o[0] + d[0] as i64 * wl, o[1] + d[1] as i64 * wl, o[2] + d[2] as i64 * wl];
                let Ok(q) = self.locate(q) else { continue };
                for lc in 0..l - 1 {
                    if let Some(n) = is_leaf(lc, align(q, lc)) {
                        return Err(violation(
                            "2:1 balance",
                            Some(b),
                            format!("leaf level next to offset {} (touching leaf {n})", self.offset_name(k)),
                            format!("at least {}", l - 1),
                            lc,
                        ));
                    }
                }
            }
        }
        let domain: u128 = (0..self.dim).map(|a| self.extent[a] as u128).product();
        if volume != domain {
            return Err(violation("tiling", None, "sum of leaf volumes (units^D)", domain, volume));
        }
        Ok(())
    }
}

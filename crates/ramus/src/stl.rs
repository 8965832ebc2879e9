//! STL surfaces (issue "Geometry for real flows", item 2): reading binary and ASCII STL,
//! checking that the surface bounds a solid, placing it in the domain, and the host's
//! reference inside/outside test.
//!
//! Reading is `stl_io`'s (both formats; vertices merged where their coordinates are
//! equal). The checks are written here because each problem needs its own named error
//! with where it is ([`StlProblem`]), which `stl_io`'s `validate` (an `io::Error`) does
//! not give: a surface must be **closed** (every edge shared by exactly two triangles),
//! **manifold** (no edge shared by more), free of **degenerate** triangles (zero area),
//! and **consistently oriented** (each shared edge run in opposite directions by its two
//! triangles). A closed, consistent surface whose normals point inwards (negative
//! enclosed volume) is repaired by flipping every triangle — the one repair made, as it
//! loses nothing.
//!
//! [`SurfaceMesh::contains`] is the generalized winding number (the solid angle of the
//! surface seen from the point, over 4π; Van Oosterom & Strackee, IEEE Trans. Biomed.
//! Eng. 30 (1983) 125, for each triangle's solid angle): 1 inside a closed surface, 0
//! outside, for any shape, convex or not. It visits every triangle: the reference the
//! device's voxelisation is checked against, not a fast path.

use std::collections::HashMap;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Why an STL surface was refused (see [`Error::Stl`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum StlProblem {
    /// Neither binary nor ASCII STL (or a truncated file).
    #[error("not a readable STL file: {0}")]
    NotStl(String),
    /// No triangles.
    #[error("no triangles")]
    Empty,
    /// A vertex coordinate is NaN or infinite.
    #[error("vertex {vertex} is not finite: {position:?}")]
    NonFinite {
        /// Index of the vertex (after merging equal ones).
        vertex: usize,
        /// Its coordinates.
        position: [f64; 3],
    },
    /// A triangle has zero area (repeated or collinear corners).
    #[error("triangle {triangle} is degenerate (zero area), corners {corners:?}")]
    Degenerate {
        /// Index of the triangle in the file.
        triangle: usize,
        /// Its corners.
        corners: [[f64; 3]; 3],
    },
    /// Edges that belong to one triangle only: the surface has holes.
    #[error("the surface is open: {edges} edges belong to one triangle only, e.g. from {example:?}")]
    Open {
        /// How many such edges.
        edges: usize,
        /// The end points of one of them.
        example: [[f64; 3]; 2],
    },
    /// Edges shared by more than two triangles.
    #[error("the surface is not manifold: {edges} edges are shared by more than two triangles, e.g. {example:?}")]
    NonManifold {
        /// How many such edges.
        edges: usize,
        /// The end points of one of them.
        example: [[f64; 3]; 2],
    },
    /// Two triangles run a shared edge in the same direction: their normals disagree.
    #[error(
        "the triangles are not consistently oriented: {edges} shared edges run the same way in both, e.g. {example:?}"
    )]
    Orientation {
        /// How many such edges.
        edges: usize,
        /// The end points of one of them.
        example: [[f64; 3]; 2],
    },
}

/// A closed triangulated surface: vertices and triangles of vertex indices, outward
/// normals by the right-hand rule.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceMesh {
    /// Vertex positions.
    pub vertices: Vec<[f64; 3]>,
    /// Corners of each triangle, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

impl SurfaceMesh {
    /// Reads a binary or ASCII STL file and checks it ([`Self::checked`]).
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut file = std::fs::File::open(path).map_err(|e| Error::Io {
            action: "reading",
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::from_reader(&mut file, path)
    }

    /// Reads STL from `reader` (`path` names it in errors) and checks it.
    pub fn from_reader(reader: &mut (impl Read + Seek), path: &Path) -> Result<Self> {
        let stl = |problem| Error::Stl { path: path.to_path_buf(), problem };
        let mesh = stl_io::read_stl(reader).map_err(|e| stl(StlProblem::NotStl(e.to_string())))?;
        let vertices = mesh.vertices.iter().map(|v| [v[0] as f64, v[1] as f64, v[2] as f64]).collect();
        let triangles = mesh.faces.iter().map(|f| f.vertices.map(|i| i as u32)).collect();
        SurfaceMesh { vertices, triangles }.checked(path)
    }

    /// The surface if it bounds a solid (see the module documentation), with inward
    /// normals flipped outward; else the first problem found, as [`Error::Stl`] naming
    /// `path`.
    pub fn checked(mut self, path: &Path) -> Result<Self> {
        let stl = |problem| Error::Stl { path: PathBuf::from(path), problem };
        if self.triangles.is_empty() {
            return Err(stl(StlProblem::Empty));
        }
        if let Some((vertex, &position)) =
            self.vertices.iter().enumerate().find(|(_, p)| p.iter().any(|c| !c.is_finite()))
        {
            return Err(stl(StlProblem::NonFinite { vertex, position }));
        }
        for (triangle, t) in self.triangles.iter().enumerate() {
            let corners = t.map(|i| self.vertices[i as usize]);
            let area2 = norm(cross(sub(corners[1], corners[0]), sub(corners[2], corners[0])));
            // Zero area to round-off of the longest edge's square.
            let longest = (0..3).map(|k| norm(sub(corners[(k + 1) % 3], corners[k]))).fold(0.0, f64::max);
            if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] || area2 <= 1e-12 * longest * longest {
                return Err(stl(StlProblem::Degenerate { triangle, corners }));
            }
        }
        // Per undirected edge: how many triangles use it, and the sum of its directions
        // (+1 when run from the lower to the higher vertex index, −1 the other way).
        let mut edges: HashMap<(u32, u32), (u32, i32)> = HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let e = edges.entry((a.min(b), a.max(b))).or_insert((0, 0));
                e.0 += 1;
                e.1 += if a < b { 1 } else { -1 };
            }
        }
        let ends = |&(a, b): &(u32, u32)| [self.vertices[a as usize], self.vertices[b as usize]];
        let pick = |keep: &dyn Fn(&(u32, i32)) -> bool| {
            let mut found: Vec<_> = edges.iter().filter(|(_, v)| keep(v)).map(|(k, _)| *k).collect();
            found.sort_unstable();
            found.first().map(|k| (found.len(), ends(k)))
        };
        if let Some((edges, example)) = pick(&|v| v.0 == 1) {
            return Err(stl(StlProblem::Open { edges, example }));
        }
        if let Some((edges, example)) = pick(&|v| v.0 > 2) {
            return Err(stl(StlProblem::NonManifold { edges, example }));
        }
        if let Some((edges, example)) = pick(&|v| v.1 != 0) {
            return Err(stl(StlProblem::Orientation { edges, example }));
        }
        if self.volume() < 0.0 {
            for t in &mut self.triangles {
                t.swap(1, 2);
            }
        }
        Ok(self)
    }

    /// The enclosed volume (divergence theorem; negative for inward normals).
    pub fn volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize]);
                dot(a, cross(b, c)) / 6.0
            })
            .sum()
    }

    /// Lower and upper corner of the bounding box.
    pub fn bounds(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &self.vertices {
            for a in 0..3 {
                lo[a] = lo[a].min(v[a]);
                hi[a] = hi[a].max(v[a]);
            }
        }
        (lo, hi)
    }

    /// The surface scaled uniformly so that its largest bounding-box extent is `extent`,
    /// with the box's centre moved to `center` (root cells).
    pub fn placed(&self, center: [f64; 3], extent: f64) -> Self {
        let (lo, hi) = self.bounds();
        let largest = (0..3).map(|a| hi[a] - lo[a]).fold(0.0, f64::max);
        let s = extent / largest;
        let mid = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])];
        let vertices = self.vertices.iter().map(|v| [0, 1, 2].map(|a| center[a] + s * (v[a] - mid[a]))).collect();
        SurfaceMesh { vertices, triangles: self.triangles.clone() }
    }

    /// The generalized winding number of the surface about `x`: 1 inside, 0 outside (to
    /// round-off; undefined on the surface).
    pub fn winding_number(&self, x: [f64; 3]) -> f64 {
        let mut omega = 0.0;
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| sub(self.vertices[i as usize], x));
            let (la, lb, lc) = (norm(a), norm(b), norm(c));
            let num = dot(a, cross(b, c));
            let den = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
            omega += 2.0 * num.atan2(den);
        }
        omega / (4.0 * std::f64::consts::PI)
    }

    /// Whether `x` lies inside the closed surface (winding number above ½).
    pub fn contains(&self, x: [f64; 3]) -> bool {
        self.winding_number(x) > 0.5
    }

    /// A sphere of diameter 1 about the origin: the regular icosahedron with each
    /// triangle split `level` times into four, its vertices pushed onto the sphere
    /// (`20·4^level` triangles, outward normals). Its volume falls short of π/6 by the
    /// chords' sag (0.2 % at level 4).
    pub fn icosphere(level: u32) -> Self {
        let phi = (1.0 + 5f64.sqrt()) / 2.0;
        let unit = |v: [f64; 3]| {
            let n = norm(v);
            v.map(|c| 0.5 * c / n)
        };
        let mut vertices: Vec<[f64; 3]> = [
            [-1.0, phi, 0.0],
            [1.0, phi, 0.0],
            [-1.0, -phi, 0.0],
            [1.0, -phi, 0.0],
            [0.0, -1.0, phi],
            [0.0, 1.0, phi],
            [0.0, -1.0, -phi],
            [0.0, 1.0, -phi],
            [phi, 0.0, -1.0],
            [phi, 0.0, 1.0],
            [-phi, 0.0, -1.0],
            [-phi, 0.0, 1.0],
        ]
        .map(unit)
        .to_vec();
        let mut triangles: Vec<[u32; 3]> = vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ];
        for _ in 0..level {
            let mut middle = HashMap::new();
            let mut split = |a: u32, b: u32, vertices: &mut Vec<[f64; 3]>| {
                *middle.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    let (p, q) = (vertices[a as usize], vertices[b as usize]);
                    vertices.push(unit([p[0] + q[0], p[1] + q[1], p[2] + q[2]]));
                    vertices.len() as u32 - 1
                })
            };
            let mut finer = Vec::with_capacity(4 * triangles.len());
            for &[a, b, c] in &triangles {
                let (ab, bc, ca) = (split(a, b, &mut vertices), split(b, c, &mut vertices), split(c, a, &mut vertices));
                finer.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
            }
            triangles = finer;
        }
        SurfaceMesh { vertices, triangles }
    }

    /// Writes the surface as binary STL (`stl_io`; f32 coordinates), atomically.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let v = |i: u32| stl_io::Vertex::new(self.vertices[i as usize].map(|c| c as f32));
        let triangles: Vec<stl_io::Triangle> = self
            .triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize]);
                let n = cross(sub(b, a), sub(c, a));
                let l = norm(n).max(f64::MIN_POSITIVE);
                stl_io::Triangle { normal: stl_io::Normal::new(n.map(|x| (x / l) as f32)), vertices: t.map(v) }
            })
            .collect();
        let mut bytes = Vec::new();
        stl_io::write_stl(&mut bytes, triangles.iter()).map_err(|e| Error::Io {
            action: "writing",
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        crate::output::atomic::write_atomic(path, &bytes)
    }
}

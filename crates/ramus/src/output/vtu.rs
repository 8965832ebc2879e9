//! VTK XML unstructured grids (`.vtu`, ASCII): one cell per leaf block (paper, section
//! "Adaptive Mesh Refinement", "Data Structures": leaves are the blocks without children).
//!
//! [`VtuWriter`] collects quads/hexahedra and named cell-data arrays and writes them;
//! [`write_leaf_blocks_vtu`] draws the leaves of a [`MeshSnapshot`] with `level` and
//! `block_id`. [`read_vtu`] parses such files back, and [`VtuFile::validate_leaf_tiling`]
//! checks that the cells tile a box and are 2:1 balanced (tests, example validation).
//!
//! Files are written atomically ([`crate::output::write_atomic`]: a reader never sees half
//! a file) and every function returns [`crate::Result`]: a bad argument or a malformed
//! file is an [`Error::InvalidParameter`] or an [`Error::Io`] naming the path, never a
//! panic.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use ramus_kernels::amr::{units, MAX_LEVELS};
use ramus_kernels::block::EDGE;

use super::write_atomic;
use crate::amr::MeshSnapshot;
use crate::error::{Error, Result};

/// VTK cell type of a quadrilateral.
pub const VTK_QUAD: u8 = 9;
/// VTK cell type of a hexahedron.
pub const VTK_HEXAHEDRON: u8 = 12;

/// One cell-data array.
#[derive(Clone, Debug, PartialEq)]
pub enum CellArray {
    /// One integer per cell (e.g. level).
    Int32(Vec<i32>),
    /// One number per cell (e.g. density).
    Float64(Vec<f64>),
    /// Three components per cell (e.g. velocity).
    Vector64(Vec<[f64; 3]>),
}

impl CellArray {
    fn len(&self) -> usize {
        match self {
            CellArray::Int32(v) => v.len(),
            CellArray::Float64(v) => v.len(),
            CellArray::Vector64(v) => v.len(),
        }
    }
}

/// Collects axis-aligned boxes (quads in 2D, hexahedra in 3D) and cell data, then writes
/// them as one VTK XML `UnstructuredGrid` piece.
#[derive(Clone, Debug)]
pub struct VtuWriter {
    dim: usize,
    points: Vec<[f64; 3]>,
    types: Vec<u8>,
    cell_data: Vec<(String, CellArray)>,
}

impl VtuWriter {
    /// An empty grid of dimension `dim` (2: quads with z = 0; 3: hexahedra); any other
    /// `dim` is an [`Error::InvalidParameter`].
    pub fn new(dim: usize) -> Result<Self> {
        if dim != 2 && dim != 3 {
            return Err(Error::invalid("dim", dim, "2 or 3 (quads or hexahedra)"));
        }
        Ok(VtuWriter { dim, points: Vec::new(), types: Vec::new(), cell_data: Vec::new() })
    }

    /// Number of cells added.
    pub fn cells(&self) -> usize {
        self.types.len()
    }

    /// Adds the box `lo..hi` (z ignored in 2D) as one cell; returns its index.
    pub fn add_box(&mut self, lo: [f64; 3], hi: [f64; 3]) -> usize {
        let corners2 = [[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]];
        if self.dim == 2 {
            self.points.extend(corners2.iter().map(|c| [c[0], c[1], 0.0]));
            self.types.push(VTK_QUAD);
        } else {
            for z in [lo[2], hi[2]] {
                self.points.extend(corners2.iter().map(|c| [c[0], c[1], z]));
            }
            self.types.push(VTK_HEXAHEDRON);
        }
        self.types.len() - 1
    }

    /// Attaches a cell-data array (one value per cell, written when the file is).
    pub fn cell_data(&mut self, name: &str, values: CellArray) -> &mut Self {
        self.cell_data.push((name.to_string(), values));
        self
    }

    fn corners(&self) -> usize {
        if self.dim == 2 {
            4
        } else {
            8
        }
    }

    /// The file's text; an [`Error::InvalidParameter`] if a cell-data array does not have
    /// one value per cell.
    pub fn render(&self) -> Result<String> {
        let n = self.cells();
        for (name, a) in &self.cell_data {
            if a.len() != n {
                return Err(Error::invalid(
                    "cell data",
                    format!("'{name}' with {} values", a.len()),
                    format!("one value per cell ({n})"),
                ));
            }
        }
        let mut s = String::new();
        let w = &mut s;
        let _ = writeln!(w, r#"<?xml version="1.0"?>"#);
        let _ = writeln!(
            w,
            r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
        );
        let _ = writeln!(w, "  <UnstructuredGrid>");
        let _ = writeln!(w, r#"    <Piece NumberOfPoints="{}" NumberOfCells="{n}">"#, self.points.len());
        let _ = writeln!(w, "      <Points>");
        let _ =
            writeln!(w, r#"        <DataArray type="Float64" Name="Points" NumberOfComponents="3" format="ascii">"#);
        for p in &self.points {
            let _ = writeln!(w, "          {} {} {}", p[0], p[1], p[2]);
        }
        let _ = writeln!(w, "        </DataArray>\n      </Points>\n      <Cells>");
        let nc = self.corners();
        let _ = writeln!(w, r#"        <DataArray type="Int64" Name="connectivity" format="ascii">"#);
        for c in 0..n {
            let ids: Vec<String> = (c * nc..(c + 1) * nc).map(|i| i.to_string()).collect();
            let _ = writeln!(w, "          {}", ids.join(" "));
        }
        let _ = writeln!(w, "        </DataArray>");
        let _ = writeln!(w, r#"        <DataArray type="Int64" Name="offsets" format="ascii">"#);
        write_values(w, (1..=n).map(|c| (c * nc).to_string()));
        let _ = writeln!(w, "        </DataArray>");
        let _ = writeln!(w, r#"        <DataArray type="UInt8" Name="types" format="ascii">"#);
        write_values(w, self.types.iter().map(|t| t.to_string()));
        let _ = writeln!(w, "        </DataArray>\n      </Cells>");
        let _ = writeln!(w, "      <CellData>");
        for (name, a) in &self.cell_data {
            let (ty, comps) = match a {
                CellArray::Int32(_) => ("Int32", 1),
                CellArray::Float64(_) => ("Float64", 1),
                CellArray::Vector64(_) => ("Float64", 3),
            };
            let _ = writeln!(
                w,
                r#"        <DataArray type="{ty}" Name="{name}" NumberOfComponents="{comps}" format="ascii">"#
            );
            match a {
                CellArray::Int32(v) => write_values(w, v.iter().map(|x| x.to_string())),
                CellArray::Float64(v) => write_values(w, v.iter().map(|x| format!("{x:e}"))),
                CellArray::Vector64(v) => {
                    write_values(w, v.iter().map(|x| format!("{:e} {:e} {:e}", x[0], x[1], x[2])))
                }
            }
            let _ = writeln!(w, "        </DataArray>");
        }
        let _ = writeln!(w, "      </CellData>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>");
        Ok(s)
    }

    /// Writes the file atomically (the parent folder must exist); an [`Error::Io`] naming
    /// the path if it cannot be written.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        write_atomic(path, self.render()?.as_bytes())
    }
}

fn write_values(w: &mut String, values: impl Iterator<Item = String>) {
    let v: Vec<String> = values.collect();
    for line in v.chunks(16) {
        let _ = writeln!(w, "          {}", line.join(" "));
    }
}

/// Writes every leaf cell of a solution (quads in 2D, hexahedra in 3D, root cell = 1.0)
/// with cell data `rho` (Float64), `u` (3 components), `level` and `solid` (Int32, 1 in
/// obstacles), for ParaView, atomically. A `dim` other than 2 or 3, or `cells` whose
/// vectors differ in length, is an [`Error::InvalidParameter`]; a file that cannot be
/// written an [`Error::Io`] naming the path.
pub fn write_leaf_cells_vtu(path: impl AsRef<Path>, dim: usize, cells: &crate::LeafCells) -> Result<()> {
    cells.check_lengths()?;
    let mut w = VtuWriter::new(dim)?;
    for (c, &h) in cells.center.iter().zip(&cells.width) {
        let half = 0.5 * h;
        w.add_box([c[0] - half, c[1] - half, c[2] - half], [c[0] + half, c[1] + half, c[2] + half]);
    }
    w.cell_data("rho", CellArray::Float64(cells.rho.clone()));
    w.cell_data("u", CellArray::Vector64(cells.u.clone()));
    w.cell_data("level", CellArray::Int32(cells.level.iter().map(|&l| l as i32).collect()));
    w.cell_data("solid", CellArray::Int32(cells.solid.iter().map(|&s| s as i32).collect()));
    w.write(path)
}

/// Writes one cell per leaf block of `s` (quads in 2D, hexahedra in 3D), in domain units
/// (a root-level cell is 1.0; a block of level `L` is `4 / 2^L` wide), with Int32 cell
/// data `level` and `block_id`, atomically. Leaves in ascending ID order. Errors as for
/// [`leaf_blocks_writer`] and [`VtuWriter::write`].
pub fn write_leaf_blocks_vtu(path: impl AsRef<Path>, s: &MeshSnapshot) -> Result<()> {
    leaf_blocks_writer(s)?.write(path)
}

/// The writer [`write_leaf_blocks_vtu`] uses, for adding further cell data before writing.
/// A snapshot of another dimension than 2 or 3, or whose arrays do not hold its leaves
/// (level and origin of each, a level below `MAX_LEVELS`), is an
/// [`Error::InvalidParameter`].
pub fn leaf_blocks_writer(s: &MeshSnapshot) -> Result<VtuWriter> {
    let mut w = VtuWriter::new(s.dim)?;
    let leaves = s.leaves();
    let scale = units::ROOT_CELL as f64;
    for &b in &leaves {
        let b = b as usize;
        let level = s.level.get(b).copied().filter(|l| (0..MAX_LEVELS as i32).contains(l));
        let (Some(level), true) = (level, 3 * b + 2 < s.origin.len()) else {
            return Err(Error::invalid(
                "snapshot",
                format!("leaf {b}: level {:?}, {} origin values", s.level.get(b), s.origin.len()),
                format!("arrays holding every leaf, levels 0 to {}", MAX_LEVELS - 1),
            ));
        };
        let width = units::block(level) as f64 / scale;
        let mut lo = [0.0; 3];
        let mut hi = [0.0; 3];
        for a in 0..s.dim {
            lo[a] = s.origin[3 * b + a] as f64 / scale;
            hi[a] = lo[a] + width;
        }
        w.add_box(lo, hi);
    }
    w.cell_data("level", CellArray::Int32(leaves.iter().map(|&b| s.level[b as usize]).collect()));
    w.cell_data("block_id", CellArray::Int32(leaves.iter().map(|&b| b as i32).collect()));
    Ok(w)
}

/// A `.vtu` file as parsed by [`read_vtu`]: the ASCII subset [`VtuWriter`] writes.
#[derive(Clone, Debug, Default)]
pub struct VtuFile {
    /// Point coordinates.
    pub points: Vec<[f64; 3]>,
    /// Point indices of the cells, cell after cell.
    pub connectivity: Vec<usize>,
    /// End of each cell's run in `connectivity`.
    pub offsets: Vec<usize>,
    /// VTK cell type of each cell ([`VTK_QUAD`], [`VTK_HEXAHEDRON`]).
    pub types: Vec<u8>,
    /// Cell-data arrays by name (values as `f64`; vectors flattened, components fastest).
    pub cell_data: BTreeMap<String, Vec<f64>>,
}

fn bad(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

/// Non-negative integers from a parsed array (an error naming the array otherwise).
fn integers(nums: &[f64], name: &str) -> std::io::Result<Vec<usize>> {
    nums.iter()
        .map(|&v| {
            if v >= 0.0 && v.fract() == 0.0 && v < usize::MAX as f64 {
                Ok(v as usize)
            } else {
                Err(bad(format!("'{v}' in {name} is not a non-negative integer")))
            }
        })
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')?;
    Some(&tag[i..i + j])
}

/// Parses an ASCII VTK XML unstructured grid (one piece, every `DataArray` named). A file
/// that cannot be read or is malformed (counts that disagree with the header, a points
/// array that is not of 3-vectors, offsets that decrease or connectivity past the points)
/// is an [`Error::Io`] naming the path and the problem.
pub fn read_vtu(path: impl AsRef<Path>) -> Result<VtuFile> {
    let path = path.as_ref();
    parse_vtu(path).map_err(|e| Error::io("reading", path, e))
}

fn parse_vtu(path: &Path) -> std::io::Result<VtuFile> {
    let text = std::fs::read_to_string(path)?;
    if !text.contains(r#"type="UnstructuredGrid""#) {
        return Err(bad("not a VTK UnstructuredGrid file"));
    }
    let piece = text.find("<Piece").ok_or_else(|| bad("no <Piece>"))?;
    let piece_tag = &text[piece..piece + text[piece..].find('>').ok_or_else(|| bad("unterminated <Piece>"))?];
    let count = |name: &str| -> std::io::Result<usize> {
        attr(piece_tag, name).and_then(|v| v.parse().ok()).ok_or_else(|| bad(format!("no {name}")))
    };
    let (n_points, n_cells) = (count("NumberOfPoints")?, count("NumberOfCells")?);
    let cell_data_at = text.find("<CellData>");
    let mut f = VtuFile::default();
    let mut rest = 0;
    while let Some(i) = text[rest..].find("<DataArray") {
        let start = rest + i;
        let tag_end = start + text[start..].find('>').ok_or_else(|| bad("unterminated <DataArray>"))?;
        let tag = &text[start..tag_end];
        let body_end = tag_end + text[tag_end..].find("</DataArray>").ok_or_else(|| bad("no </DataArray>"))?;
        let body = &text[tag_end + 1..body_end];
        rest = body_end;
        if attr(tag, "format") != Some("ascii") {
            return Err(bad("only ascii DataArrays are read"));
        }
        let name = attr(tag, "Name").ok_or_else(|| bad("unnamed DataArray"))?;
        let nums: Vec<f64> = body
            .split_whitespace()
            .map(|t| t.parse::<f64>().map_err(|_| bad(format!("bad number '{t}' in {name}"))))
            .collect::<std::io::Result<_>>()?;
        match name {
            "Points" => {
                if nums.len() % 3 != 0 {
                    return Err(bad(format!("{} point coordinates: not a whole number of 3-vectors", nums.len())));
                }
                f.points = nums.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
            }
            "connectivity" => f.connectivity = integers(&nums, name)?,
            "offsets" => f.offsets = integers(&nums, name)?,
            "types" => {
                f.types = integers(&nums, name)?
                    .into_iter()
                    .map(|t| u8::try_from(t).map_err(|_| bad(format!("cell type {t} is not a VTK cell type"))))
                    .collect::<std::io::Result<_>>()?;
            }
            _ if cell_data_at.is_some_and(|c| start > c) => {
                let comps: usize = attr(tag, "NumberOfComponents").and_then(|v| v.parse().ok()).unwrap_or(1);
                if nums.len() != n_cells * comps {
                    return Err(bad(format!("cell data '{name}': {} values for {n_cells} cells", nums.len())));
                }
                f.cell_data.insert(name.to_string(), nums);
            }
            _ => {}
        }
    }
    if f.points.len() != n_points || f.offsets.len() != n_cells || f.types.len() != n_cells {
        return Err(bad(format!(
            "counts: {} points (header {n_points}), {} offsets / {} types (header {n_cells} cells)",
            f.points.len(),
            f.offsets.len(),
            f.types.len()
        )));
    }
    if f.offsets.last().copied().unwrap_or(0) != f.connectivity.len()
        || f.offsets.windows(2).any(|w| w[0] > w[1])
        || f.connectivity.iter().any(|&p| p >= n_points)
    {
        return Err(bad("connectivity does not match offsets/points"));
    }
    Ok(f)
}

impl VtuFile {
    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.types.len()
    }

    /// Bounding box of each cell (lower, upper corner). Entries of a hand-made file that
    /// point nowhere (offsets or connectivity out of range) are skipped, so such a cell's
    /// box is empty (`+∞ … −∞`), not a panic.
    pub fn boxes(&self) -> Vec<([f64; 3], [f64; 3])> {
        (0..self.cells())
            .map(|c| {
                let from = if c == 0 { 0 } else { self.offsets.get(c - 1).copied().unwrap_or(0) };
                let to = self.offsets.get(c).copied().unwrap_or(from);
                let mut lo = [f64::INFINITY; 3];
                let mut hi = [f64::NEG_INFINITY; 3];
                for p in self.connectivity.get(from..to).unwrap_or(&[]).iter().filter_map(|&p| self.points.get(p)) {
                    for a in 0..3 {
                        lo[a] = lo[a].min(p[a]);
                        hi[a] = hi[a].max(p[a]);
                    }
                }
                (lo, hi)
            })
            .collect()
    }

    /// Checks that the cells are leaf blocks tiling the box `0..domain` (root cells per
    /// axis; z ignored in 2D): cell types of the dimension, widths `4 / 2^level` from the
    /// `level` cell data, volumes adding up to the domain, no two overlapping, and 2:1
    /// balance between cells that touch across a face, an edge or a corner (within the
    /// box; periodic wrap is not seen here). Sweep over x-sorted boxes: about `O(n log n)`
    /// for leaf grids. Returns the first problem found.
    pub fn validate_leaf_tiling(&self, dim: usize, domain: [f64; 3]) -> Result<(), String> {
        let want_type = if dim == 2 { VTK_QUAD } else { VTK_HEXAHEDRON };
        let levels = self.cell_data.get("level").ok_or("no 'level' cell data")?;
        if dim != 2 && dim != 3 {
            return Err(format!("dimension {dim}: 2 or 3"));
        }
        if levels.len() < self.cells() {
            return Err(format!("{} 'level' values for {} cells", levels.len(), self.cells()));
        }
        let boxes = self.boxes();
        let eps = 1e-9;
        let mut volume = 0.0;
        for (c, (lo, hi)) in boxes.iter().enumerate() {
            if self.types[c] != want_type {
                return Err(format!("cell {c}: type {} instead of {want_type}", self.types[c]));
            }
            let level = levels[c];
            if !(0.0..MAX_LEVELS as f64).contains(&level) || level.fract() != 0.0 {
                return Err(format!("cell {c}: level {level}, not 0 to {}", MAX_LEVELS - 1));
            }
            let width = EDGE as f64 / (1u64 << level as u32) as f64;
            let mut v = 1.0;
            for a in 0..dim {
                if (hi[a] - lo[a] - width).abs() > eps || lo[a] < -eps || hi[a] > domain[a] + eps {
                    return Err(format!("cell {c} (level {}): extent {:?}..{:?} on axis {a}", levels[c], lo, hi));
                }
                v *= width;
            }
            volume += v;
        }
        let total: f64 = domain[..dim].iter().product();
        if (volume - total).abs() > 1e-9 * total {
            return Err(format!("leaf volumes add up to {volume}, the domain is {total}"));
        }
        let mut order: Vec<usize> = (0..boxes.len()).collect();
        order.sort_by(|&i, &j| boxes[i].0[0].total_cmp(&boxes[j].0[0]));
        for (n, &i) in order.iter().enumerate() {
            let (lo, hi) = boxes[i];
            for &j in &order[n + 1..] {
                let (lo2, hi2) = boxes[j];
                if lo2[0] > hi[0] + eps {
                    break;
                }
                let touch = (0..dim).all(|a| lo[a] <= hi2[a] + eps && lo2[a] <= hi[a] + eps);
                if !touch {
                    continue;
                }
                let overlap = (0..dim).all(|a| lo[a] < hi2[a] - eps && lo2[a] < hi[a] - eps);
                if overlap {
                    return Err(format!("cells {i} and {j} overlap"));
                }
                if (levels[i] - levels[j]).abs() > 1.0 {
                    return Err(format!(
                        "cells {i} (level {}) and {j} (level {}) touch but differ by more than one level",
                        levels[i], levels[j]
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How [`write_leaf_cells_vtu_binary`] writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VtuOptions {
    /// Binary arrays: appended raw or base64, zlib or not.
    pub format: super::VtkFormat,
    /// One point per distinct corner, shared by the cells that meet there (a connected
    /// grid: ParaView's filters need no "Clean to Grid"); otherwise 2^D points per cell.
    pub shared_points: bool,
    /// Length of a root cell in the file's unit (1: lattice units; Δx in m for SI).
    pub length: f64,
    /// Multiplies velocities (1, or Δx/Δt in m/s).
    pub velocity: f64,
    /// Multiplies densities (1, or ρ₀ in kg/m³).
    pub density: f64,
}

impl Default for VtuOptions {
    fn default() -> Self {
        VtuOptions { format: Default::default(), shared_points: false, length: 1.0, velocity: 1.0, density: 1.0 }
    }
}

/// As [`write_leaf_cells_vtu`], with binary arrays (Float32 `rho`, `u`; UInt8 `level`,
/// `solid`) and optionally shared points: several times smaller and faster to write and to
/// read than ASCII. A non-finite value is an [`Error::NonFiniteOutput`] (nothing written).
pub fn write_leaf_cells_vtu_binary(
    path: impl AsRef<Path>,
    dim: usize,
    cells: &crate::LeafCells,
    options: VtuOptions,
) -> Result<()> {
    use super::vtk::{ArrayWriter, DataArray, Values};
    use std::collections::HashMap;
    cells.check_lengths()?;
    if dim != 2 && dim != 3 {
        return Err(Error::invalid("dim", dim, "2 or 3 (quads or hexahedra)"));
    }
    let corners = 1usize << dim;
    let mut points: Vec<f64> = Vec::new();
    let mut index: HashMap<[u64; 3], i64> = HashMap::new();
    let mut connectivity: Vec<i64> = Vec::with_capacity(cells.len() * corners);
    for (c, &h) in cells.center.iter().zip(&cells.width) {
        let half = 0.5 * h;
        // VTK's corner order: counter-clockwise in each z layer.
        for k in 0..corners {
            let (x, y, z) = ([0, 1, 1, 0][k % 4], [0, 0, 1, 1][k % 4], k / 4);
            let p = [
                c[0] + if x == 1 { half } else { -half },
                c[1] + if y == 1 { half } else { -half },
                if dim == 3 { c[2] + if z == 1 { half } else { -half } } else { 0.0 },
            ];
            let next = (points.len() / 3) as i64;
            // Scaled after the corners are found: in root cells they are dyadic (centre ±
            // half a power-of-two width), exact, so equal points have equal bits.
            let scaled = p.map(|x| x * options.length);
            let id = if options.shared_points {
                *index.entry(p.map(f64::to_bits)).or_insert_with(|| {
                    points.extend_from_slice(&scaled);
                    next
                })
            } else {
                points.extend_from_slice(&scaled);
                next
            };
            connectivity.push(id);
        }
    }
    let n = cells.len();
    let kind = if dim == 2 { VTK_QUAD } else { VTK_HEXAHEDRON };
    let mut w = ArrayWriter::new(options.format);
    let mut xml = String::new();
    let _ = writeln!(xml, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(xml, r#"<VTKFile type="UnstructuredGrid" version="1.0" {}>"#, w.file_attributes());
    let _ = writeln!(xml, "  <UnstructuredGrid>");
    let _ = writeln!(xml, r#"    <Piece NumberOfPoints="{}" NumberOfCells="{n}">"#, points.len() / 3);
    let _ = writeln!(xml, "      <Points>");
    w.array(&mut xml, "        ", &DataArray::vectors("Points", Values::Float64(points)))?;
    let _ = writeln!(xml, "      </Points>\n      <Cells>");
    let offsets: Vec<i64> = (1..=n as i64).map(|c| c * corners as i64).collect();
    w.array(&mut xml, "        ", &DataArray::scalars("connectivity", Values::Int64(connectivity)))?;
    w.array(&mut xml, "        ", &DataArray::scalars("offsets", Values::Int64(offsets)))?;
    w.array(&mut xml, "        ", &DataArray::scalars("types", Values::UInt8(vec![kind; n])))?;
    let _ = writeln!(xml, "      </Cells>\n      <CellData Scalars=\"rho\" Vectors=\"u\">");
    let rho = cells.rho.iter().map(|&r| (r * options.density) as f32).collect();
    let u = cells.u.iter().flat_map(|v| v.map(|x| (x * options.velocity) as f32)).collect();
    w.array(&mut xml, "        ", &DataArray::scalars("rho", Values::Float32(rho)))?;
    w.array(&mut xml, "        ", &DataArray::vectors("u", Values::Float32(u)))?;
    w.array(&mut xml, "        ", &DataArray::scalars("level", Values::UInt8(cells.level.clone())))?;
    let solid = cells.solid.iter().map(|&s| s as u8).collect();
    w.array(&mut xml, "        ", &DataArray::scalars("solid", Values::UInt8(solid)))?;
    let _ = writeln!(xml, "      </CellData>\n    </Piece>\n  </UnstructuredGrid>");
    write_atomic(path, &w.finish(xml))
}

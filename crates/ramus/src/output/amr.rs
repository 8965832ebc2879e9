//! VTK's overlapping-AMR format: a `.vthb` index and one `.vti` image per box, grouped by
//! level, that ParaView opens with its AMR reader (`vtkXMLUniformGridAMRReader`) and
//! shows level by level (the hierarchical files the reference code writes; paper,
//! section "Data Structures": every level keeps its blocks, parents included).
//!
//! The blocks of a level are merged into boxes (greedy: runs along x, then rows along y,
//! then slabs along z), so a level of thousands of blocks is a few files, not thousands.
//! Cells of blocks with children carry `vtkGhostType = 8` (`REFINEDCELL`: covered by a
//! finer level), so the reader shows each point of the domain once, on its finest level.
//!
//! Files are written atomically, the `.vti`s before the index: a reader never sees an
//! index that names a missing or half-written file.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ramus_kernels::block::cell_index;
use rayon::prelude::*;

use super::vtk::{ArrayWriter, DataArray, Values, VtkFormat};
use super::write_atomic;
use crate::error::{Error, Result};
use crate::solver::ActiveBlocks;

/// `vtkGhostType` of a cell covered by a finer level (`vtkDataSetAttributes::REFINEDCELL`).
pub const REFINED_CELL: u8 = 8;

/// Lengths and names of an AMR output.
#[derive(Clone, Debug, PartialEq)]
pub struct AmrOutput {
    /// Length of a root cell in the file's units (1 in lattice units, Δx in metres).
    pub root_cell: f64,
    /// Multiplies velocities (1 in lattice units, Δx/Δt in m/s).
    pub velocity: f64,
    /// Multiplies the vorticity given per root time step (1, or 1/Δt in 1/s).
    pub rate: f64,
    /// Maps a lattice density to the file's (identity, or ρ·ρ₀ in kg/m³).
    pub density: f64,
    /// The unit system, stated in each file (`lattice` or `SI`).
    pub units: &'static str,
    /// How the arrays are stored.
    pub format: VtkFormat,
}

impl Default for AmrOutput {
    fn default() -> Self {
        AmrOutput {
            root_cell: 1.0,
            velocity: 1.0,
            rate: 1.0,
            density: 1.0,
            units: "lattice",
            format: VtkFormat::default(),
        }
    }
}

/// One box of blocks of one level: lower block coordinates and size in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmrBox {
    /// Level.
    pub level: usize,
    /// Lower corner, in blocks of the level.
    pub lo: [u64; 3],
    /// Extent, in blocks.
    pub size: [u64; 3],
}

/// Covers the blocks of each level with boxes (see the module documentation); returns the
/// boxes level by level, and for each box its block indices into `blocks`, in the box's
/// cell order (x fastest).
pub fn boxes(blocks: &ActiveBlocks) -> Vec<(AmrBox, Vec<usize>)> {
    let mut by_level: Vec<HashMap<[u64; 3], usize>> = vec![HashMap::new(); blocks.max_levels.max(1)];
    for (i, (&l, c)) in blocks.level.iter().zip(&blocks.corner).enumerate() {
        let key = [c[0] / 4, c[1] / 4, c[2] / 4];
        if let Some(m) = by_level.get_mut(l as usize) {
            m.insert(key, i);
        }
    }
    let mut out = Vec::new();
    for (level, map) in by_level.iter().enumerate() {
        let mut keys: Vec<[u64; 3]> = map.keys().copied().collect();
        keys.sort_unstable_by_key(|k| (k[2], k[1], k[0]));
        let mut used: HashSet<[u64; 3]> = HashSet::new();
        let free = |k: [u64; 3], used: &HashSet<[u64; 3]>| map.contains_key(&k) && !used.contains(&k);
        for k in keys {
            if used.contains(&k) {
                continue;
            }
            let mut size = [1u64; 3];
            while free([k[0] + size[0], k[1], k[2]], &used) {
                size[0] += 1;
            }
            let nx = size[0];
            let row_free = |y: u64, z: u64, used: &HashSet<[u64; 3]>| (0..nx).all(|x| free([k[0] + x, y, z], used));
            while row_free(k[1] + size[1], k[2], &used) {
                size[1] += 1;
            }
            let ny = size[1];
            while (0..ny).all(|y| row_free(k[1] + y, k[2] + size[2], &used)) {
                size[2] += 1;
            }
            let mut ids = Vec::new();
            for z in 0..size[2] {
                for y in 0..size[1] {
                    for x in 0..size[0] {
                        let key = [k[0] + x, k[1] + y, k[2] + z];
                        used.insert(key);
                        ids.push(map[&key]);
                    }
                }
            }
            out.push((AmrBox { level, lo: k, size }, ids));
        }
    }
    out
}

/// Writes `blocks` as `<dir>/<name>.vthb` and `<dir>/<name>/level<L>_<k>.vti`; returns the
/// path of the index. `blocks` must pass [`ActiveBlocks::check`]. Cell data: `rho`, `u`, `vorticity` (|ω|), `level`, `solid`,
/// `vtkGhostType`. An [`Error::NonFiniteOutput`] (nothing of this output is indexed) if
/// a value is not finite; an [`Error::Io`] naming the path if a file cannot be written.
pub fn write_amr(dir: &Path, name: &str, blocks: &ActiveBlocks, out: &AmrOutput) -> Result<PathBuf> {
    blocks.check()?;
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).map_err(|e| Error::io("creating the folder", &sub, e))?;
    let d = blocks.dim;
    let boxes = boxes(blocks);
    let mut index = String::new();
    let _ = writeln!(index, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(
        index,
        r#"<VTKFile type="vtkOverlappingAMR" version="1.1" byte_order="LittleEndian" header_type="UInt64">"#
    );
    let grid = if d == 2 { "XY" } else { "XYZ" };
    let _ = writeln!(index, r#"  <!-- ramus: units {}, root cell {:e} -->"#, out.units, out.root_cell);
    let _ = writeln!(index, r#"  <vtkOverlappingAMR origin="0 0 0" grid_description="{grid}">"#);
    let mut level = usize::MAX;
    let mut k = 0usize;
    let mut files = Vec::with_capacity(boxes.len());
    for (b, ids) in &boxes {
        if b.level != level {
            if level != usize::MAX {
                let _ = writeln!(index, "    </Block>");
            }
            level = b.level;
            k = 0;
            let h = out.root_cell / (1u64 << level) as f64;
            let _ = writeln!(index, r#"    <Block level="{level}" spacing="{h:e} {h:e} {h:e}">"#);
        }
        let file = format!("level{level}_{k}.vti");
        files.push((sub.join(&file), b, ids));
        let mut ext = [0u64; 6];
        for a in 0..3 {
            ext[2 * a] = b.lo[a] * 4;
            ext[2 * a + 1] = if a < d { (b.lo[a] + b.size[a]) * 4 - 1 } else { 0 };
        }
        let _ = writeln!(
            index,
            r#"      <DataSet index="{k}" amr_box="{} {} {} {} {} {}" file="{name}/{file}"/>"#,
            ext[0], ext[1], ext[2], ext[3], ext[4], ext[5]
        );
        k += 1;
    }
    if level != usize::MAX {
        let _ = writeln!(index, "    </Block>");
    }
    let _ = writeln!(index, "  </vtkOverlappingAMR>\n</VTKFile>");
    // The boxes in parallel (each file is synced to disk before its rename: the syncs
    // overlap), then the index that names them.
    files.par_iter().try_for_each(|(path, b, ids)| write_box(path, b, ids, blocks, out))?;
    let path = dir.join(format!("{name}.vthb"));
    write_atomic(&path, index.as_bytes())?;
    Ok(path)
}

/// One box as a `.vti` image.
fn write_box(path: &Path, b: &AmrBox, ids: &[usize], blocks: &ActiveBlocks, out: &AmrOutput) -> Result<()> {
    let d = blocks.dim;
    let m = blocks.cells_per_block();
    let cells = [b.size[0] * 4, b.size[1] * 4, if d == 3 { b.size[2] * 4 } else { 1 }];
    let n = (cells[0] * cells[1] * cells[2]) as usize;
    let (mut rho, mut u, mut vort) = (Vec::with_capacity(n), Vec::with_capacity(3 * n), Vec::with_capacity(n));
    let (mut level, mut solid, mut ghost) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let nb = [b.size[0] as usize, b.size[1] as usize];
    for z in 0..cells[2] as usize {
        for y in 0..cells[1] as usize {
            for x in 0..cells[0] as usize {
                let blk = ids[(x / 4) + nb[0] * ((y / 4) + nb[1] * (z / 4))];
                let t = cell_index([(x % 4) as i32, (y % 4) as i32, (z % 4) as i32]);
                let c = blk * m + t;
                rho.push((blocks.rho[c] * out.density) as f32);
                u.extend(blocks.u[c].iter().map(|&v| (v * out.velocity) as f32));
                vort.push((blocks.vorticity[c] * out.rate) as f32);
                level.push(blocks.level[blk]);
                solid.push(blocks.solid[c] as u8);
                ghost.push(if blocks.refined[blk] { REFINED_CELL } else { 0 });
            }
        }
    }
    let h = out.root_cell / (1u64 << b.level) as f64;
    let origin: Vec<f64> = (0..3).map(|a| if a < d { (b.lo[a] * 4) as f64 * h } else { 0.0 }).collect();
    let mut w = ArrayWriter::new(out.format);
    let mut xml = String::new();
    let _ = writeln!(xml, r#"<?xml version="1.0"?>"#);
    let _ = writeln!(xml, r#"<VTKFile type="ImageData" version="1.0" {}>"#, w.file_attributes());
    let ext = format!("0 {} 0 {} 0 {}", cells[0], cells[1], if d == 3 { cells[2] } else { 0 });
    let _ = writeln!(
        xml,
        r#"  <ImageData WholeExtent="{ext}" Origin="{:e} {:e} {:e}" Spacing="{h:e} {h:e} {h:e}">"#,
        origin[0], origin[1], origin[2]
    );
    let _ = writeln!(xml, r#"    <Piece Extent="{ext}">"#);
    let _ = writeln!(xml, r#"      <CellData Scalars="rho" Vectors="u">"#);
    for a in [
        DataArray::scalars("rho", Values::Float32(rho)),
        DataArray::vectors("u", Values::Float32(u)),
        DataArray::scalars("vorticity", Values::Float32(vort)),
        DataArray::scalars("level", Values::UInt8(level)),
        DataArray::scalars("solid", Values::UInt8(solid)),
        DataArray::scalars("vtkGhostType", Values::UInt8(ghost)),
    ] {
        w.array(&mut xml, "        ", &a)?;
    }
    let _ = writeln!(xml, "      </CellData>\n    </Piece>\n  </ImageData>");
    write_atomic(path, &w.finish(xml))
}

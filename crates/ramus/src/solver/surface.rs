//! An STL body on the device (issue "Geometry for real flows", item 2): the snapped
//! triangles and their column bins of [`ramus_kernels::surface`], built once on the host
//! (the geometry is static) and read by the solid-mask, link-distance and refinement
//! kernels for the blocks of every level as they appear.

use ramus_kernels::surface::{Surface, SurfaceGrid, QUANTA};

use crate::backend::{Buffer, Device, Views};
use crate::error::{Error, Result};
use crate::stl::SurfaceMesh;

/// Target of triangles per column: columns per side ≈ `COLUMNS_PER_ROOT_TRIANGLE · √T`,
/// so that a column holds a few triangles of a closed body.
const COLUMNS_PER_ROOT_TRIANGLE: f64 = 1.0;
/// Most columns per side (the CSR offsets then take 16 MiB).
const MAX_COLUMNS: i64 = 2048;

/// The snapped, binned surface on the device.
pub(crate) struct SurfaceBuffers {
    vertex: Buffer<i32>,
    start: Buffer<u32>,
    items: Buffer<u32>,
    grid: SurfaceGrid,
}

impl SurfaceBuffers {
    /// Snaps `mesh` (root cells, checked closed) to the quanta of its bounding cube and
    /// bins its triangles into (y, z) columns.
    pub fn new(dev: &Device, mesh: &SurfaceMesh) -> Result<Self> {
        let (lo, hi) = mesh.bounds();
        let extent = (0..3).map(|a| hi[a] - lo[a]).fold(0.0, f64::max);
        if !(extent > 0.0 && extent.is_finite()) {
            return Err(Error::invalid("surface", format!("extent {extent}"), "a body of positive, finite size"));
        }
        let quantum = extent / QUANTA as f64;
        // As `Surface::snap` in the kernels: the same rounding for vertices and points.
        let snap = |x: [f64; 3]| -> [i64; 3] {
            let mut p = [0i64; 3];
            for a in 0..3 {
                p[a] = (((x[a] - lo[a]) / quantum + 0.5) as i64).clamp(0, QUANTA);
            }
            p
        };
        let target = (COLUMNS_PER_ROOT_TRIANGLE * (mesh.triangles.len() as f64).sqrt()).ceil() as i64;
        let target = target.clamp(8, MAX_COLUMNS);
        let shift = (0..=ramus_kernels::surface::QUANTUM_BITS).find(|&s| (QUANTA >> s) <= target).unwrap_or(0);
        let columns = (QUANTA >> shift) + 1;
        let snapped: Vec<[[i64; 3]; 3]> =
            mesh.triangles.iter().map(|t| t.map(|v| snap(mesh.vertices[v as usize]))).collect();
        // Per triangle, its column range on each axis: its integer (y, z) box grown by
        // one quantum, so that the link test's walk along the columns (in `f64`) cannot
        // miss it by rounding.
        let span = |t: &[[i64; 3]; 3], a: usize| {
            let min = (t[0][a].min(t[1][a]).min(t[2][a]) - 1).max(0);
            let max = (t[0][a].max(t[1][a]).max(t[2][a]) + 1).min(QUANTA);
            (min >> shift, max >> shift)
        };
        let mut count = vec![0u64; (columns * columns) as usize + 1];
        for t in &snapped {
            let ((y0, y1), (z0, z1)) = (span(t, 1), span(t, 2));
            for cy in y0..=y1 {
                for cz in z0..=z1 {
                    count[(cy * columns + cz) as usize + 1] += 1;
                }
            }
        }
        for c in 1..count.len() {
            count[c] += count[c - 1];
        }
        let total = count[count.len() - 1];
        if total > u32::MAX as u64 {
            return Err(Error::invalid(
                "surface",
                format!("{total} column entries"),
                "fewer than 2^32 (a surface with fewer or smaller triangles)",
            ));
        }
        let start: Vec<u32> = count.iter().map(|&c| c as u32).collect();
        let mut fill: Vec<u32> = start.clone();
        let mut items = vec![0u32; total as usize];
        for (k, t) in snapped.iter().enumerate() {
            let ((y0, y1), (z0, z1)) = (span(t, 1), span(t, 2));
            for cy in y0..=y1 {
                for cz in z0..=z1 {
                    let c = (cy * columns + cz) as usize;
                    items[fill[c] as usize] = k as u32;
                    fill[c] += 1;
                }
            }
        }
        let vertex: Vec<i32> = snapped.iter().flat_map(|t| t.iter().flat_map(|v| v.map(|c| c as i32))).collect();
        let grid = SurfaceGrid {
            lo,
            quantum,
            columns: columns as u32,
            shift,
            triangles: u32::try_from(mesh.triangles.len())
                .map_err(|_| Error::invalid("surface", mesh.triangles.len(), "fewer than 2^32 triangles"))?,
        };
        // An empty buffer would be a null view: keep one element.
        let items = if items.is_empty() { vec![0] } else { items };
        Ok(SurfaceBuffers {
            vertex: dev.upload(&vertex)?,
            start: dev.upload(&start)?,
            items: dev.upload(&items)?,
            grid,
        })
    }

    /// The surface as the kernels read it.
    pub fn views(&self) -> Surface<Views<'_>> {
        Surface { vertex: self.vertex.view(), start: self.start.view(), items: self.items.view(), grid: self.grid }
    }
}

//! Hierarchical AMR output (`.vthb` + `.vti`, VTK's overlapping-AMR XML format): the
//! index names every level with its spacing and one file per box, the boxes tile exactly
//! the forest's blocks of each level, and the binary payloads (appended or base64, raw
//! or zlib) decode to the forest's own values; a leaf-cell sample is found, unblanked,
//! where the leaf lies. No Python: the files are parsed here (`ramus::output::vtk`).
//! ParaView's reader itself is checked by `scripts/vtk_check.py` (see BENCHMARKS.md).

use std::path::Path;

use ramus::cases::cavity::Cavity;
use ramus::output::amr::{write_amr, AmrOutput, REFINED_CELL};
use ramus::output::vtk::{attribute, read_arrays, Compression, Encoding, Values, VtkFormat};
use ramus::{ActiveBlocks, Backend, Error, Face, Forest, Refinement, WallRefinement, D2, D2Q9, D3, D3Q19};

/// A cavity refined toward the lid and the bottom, advanced a few steps so that the
/// velocity (and the vorticity) is not uniform.
fn forest<D: ramus::Dim, Q: ramus::VelocitySet<Dim = D>>(dim: u32, n: usize) -> Forest<D, Q, f64> {
    let cavity = Cavity { dim, n, re: 100.0, lid: 0.1 };
    let lid = if dim == 2 { Face::YMax } else { Face::ZMax };
    let config = cavity.forest_config(Backend::Cpu).unwrap().levels(3).refinement(Refinement {
        levels: 3,
        walls: Some(WallRefinement { faces: vec![lid, Face::XMin], distance: 3.0, obstacles: false }),
        ..Refinement::default()
    });
    let mut f = Forest::<D, Q, f64>::new(config).unwrap();
    f.advance(20).unwrap();
    f
}

struct DataSet {
    level: usize,
    amr_box: [u64; 6],
    file: String,
}

/// The `<Block>`s (level, spacing) and `<DataSet>`s of a `.vthb`.
fn parse_index(path: &Path) -> (Vec<(usize, f64)>, Vec<DataSet>) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(r#"<VTKFile type="vtkOverlappingAMR""#), "{text}");
    let (mut levels, mut sets) = (Vec::new(), Vec::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with("<Block ") {
            let l: usize = attribute(line, "level").unwrap().parse().unwrap();
            let h: f64 = attribute(line, "spacing").unwrap().split(' ').next().unwrap().parse().unwrap();
            levels.push((l, h));
        } else if line.starts_with("<DataSet ") {
            let b: Vec<u64> = attribute(line, "amr_box").unwrap().split(' ').map(|x| x.parse().unwrap()).collect();
            sets.push(DataSet {
                level: levels.last().unwrap().0,
                amr_box: b.try_into().unwrap(),
                file: attribute(line, "file").unwrap().to_string(),
            });
        }
    }
    (levels, sets)
}

fn floats(v: &Values) -> Vec<f64> {
    (0..v.len()).map(|i| v.get(i).unwrap()).collect()
}

fn check<D: ramus::Dim, Q: ramus::VelocitySet<Dim = D>>(dim: usize, n: usize) {
    let mut f = forest::<D, Q>(dim as u32, n);
    let blocks: ActiveBlocks = f.active_blocks().unwrap();
    let per_level = f.blocks_per_level();
    assert!(per_level.iter().all(|&b| b > 0), "three levels in use: {per_level:?}");
    assert_eq!(blocks.len(), per_level.iter().sum::<usize>());
    let cells = f.leaf_cells().unwrap();
    let m = blocks.cells_per_block();
    for (encoding, compression) in [
        (Encoding::Appended, Compression::None),
        (Encoding::Appended, Compression::Zlib),
        (Encoding::Base64, Compression::None),
        (Encoding::Base64, Compression::Zlib),
    ] {
        let dir = tempdir(&format!("amr{dim}d-{encoding:?}-{compression:?}"));
        let out = AmrOutput { format: VtkFormat { encoding, compression }, ..AmrOutput::default() };
        let index = write_amr(dir.path(), "fields", &blocks, &out).unwrap();
        let (levels, sets) = parse_index(&index);
        assert_eq!(levels.len(), per_level.len(), "one <Block> per level");
        for (l, h) in &levels {
            assert_eq!(*h, 1.0 / (1u64 << l) as f64, "spacing of level {l}");
        }
        // The boxes of each level hold exactly that level's blocks, once each.
        let mut cells_per_level = vec![0u64; per_level.len()];
        // (level, global cell index) → (rho, ghost) from the files.
        let mut found = std::collections::HashMap::new();
        for s in &sets {
            let ext: Vec<u64> =
                (0..3).map(|a| if a < dim { s.amr_box[2 * a + 1] + 1 - s.amr_box[2 * a] } else { 1 }).collect();
            let ncell = ext.iter().product::<u64>();
            cells_per_level[s.level] += ncell;
            let bytes = std::fs::read(dir.path().join(&s.file)).unwrap();
            let arrays = read_arrays(&bytes).unwrap();
            let names: Vec<&str> = arrays.iter().map(|a| a.name.as_str()).collect();
            assert_eq!(names, ["rho", "u", "vorticity", "level", "solid", "vtkGhostType"]);
            for a in &arrays {
                assert_eq!(a.values.len() as u64, ncell * a.components as u64, "{} in {}", a.name, s.file);
                if let Some((lo, hi)) = a.range {
                    let v = floats(&a.values);
                    let (mn, mx) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                    assert_eq!((lo, hi), (mn, mx), "range of {}", a.name);
                }
            }
            assert!(floats(&arrays[3].values).iter().all(|&l| l as usize == s.level));
            let rho = floats(&arrays[0].values);
            let ghost = floats(&arrays[5].values);
            let mut i = 0;
            for z in 0..ext[2] {
                for y in 0..ext[1] {
                    for x in 0..ext[0] {
                        let g = [s.amr_box[0] + x, s.amr_box[2] + y, s.amr_box[4] + z];
                        assert!(found.insert((s.level, g), (rho[i], ghost[i])).is_none(), "cell {g:?} twice");
                        i += 1;
                    }
                }
            }
        }
        for (l, &b) in per_level.iter().enumerate() {
            assert_eq!(cells_per_level[l], (b * m) as u64, "cells of level {l}");
        }
        // Every leaf cell is in the files, unblanked, with its density (as f32).
        for i in 0..cells.len() {
            let l = cells.level[i] as usize;
            let w = cells.width[i];
            let g = [0, 1, 2].map(|a| if a < dim { (cells.center[i][a] / w - 0.5).round() as u64 } else { 0 });
            let (rho, ghost) = found[&(l, g)];
            assert_eq!(rho, cells.rho[i] as f32 as f64, "leaf cell {i} on level {l} at {g:?}");
            assert_eq!(ghost, 0.0, "leaf cell {i} blanked");
        }
        // Parents' cells are blanked: as many as the blocks with children hold.
        let blanked = found.values().filter(|v| v.1 == REFINED_CELL as f64).count();
        assert_eq!(blanked, blocks.refined.iter().filter(|&&r| r).count() * m);
        // The vorticity is not trivially zero.
        assert!(blocks.vorticity.iter().any(|&w| w > 1e-6));
    }
}

/// A fresh folder, removed with everything in it when the returned guard drops.
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("ramus-test-{name}-")).tempdir().unwrap()
}

#[test]
fn amr_files_2d_hold_every_level_and_round_trip() {
    check::<D2, D2Q9>(2, 32);
}

#[test]
fn amr_files_3d_hold_every_level_and_round_trip() {
    check::<D3, D3Q19>(3, 16);
}

/// A NaN is refused with a named error, and no index is written.
#[test]
fn non_finite_values_are_not_written() {
    let mut f = forest::<D2, D2Q9>(2, 16);
    let mut blocks = f.active_blocks().unwrap();
    blocks.rho[5] = f64::NAN;
    let dir = tempdir("nan");
    match write_amr(dir.path(), "fields", &blocks, &AmrOutput::default()) {
        Err(Error::NonFiniteOutput { array, .. }) => assert_eq!(array, "rho"),
        other => panic!("expected NonFiniteOutput, got {other:?}"),
    }
    assert!(!dir.path().join("fields.vthb").exists(), "an index was written for a refused output");
}

/// The binary leaf-cell `.vtu` (raw and zlib, shared points or not) decodes to the leaf
/// cells: every cell's corners are its box, and shared points leave one point per corner.
#[test]
fn binary_vtu_round_trips_with_and_without_shared_points() {
    use ramus::output::{write_leaf_cells_vtu_binary, VtuOptions};
    let mut f = forest::<D2, D2Q9>(2, 32);
    let cells = f.leaf_cells().unwrap();
    let dir = tempdir("vtu-binary");
    let mut counts = Vec::new();
    for shared_points in [false, true] {
        for compression in [Compression::None, Compression::Zlib] {
            let path = dir.path().join(format!("leaf-{shared_points}-{compression:?}.vtu"));
            let format = VtkFormat { encoding: Encoding::Appended, compression };
            let options = VtuOptions { format, shared_points, ..VtuOptions::default() };
            write_leaf_cells_vtu_binary(&path, 2, &cells, options).unwrap();
            let arrays = read_arrays(&std::fs::read(&path).unwrap()).unwrap();
            let get = |n: &str| arrays.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{n}"));
            let points = floats(&get("Points").values);
            let conn = floats(&get("connectivity").values);
            assert_eq!(conn.len(), 4 * cells.len());
            for i in 0..cells.len() {
                let (c, h) = (cells.center[i], cells.width[i]);
                for k in 0..4 {
                    let p = conn[4 * i + k] as usize;
                    for a in 0..2 {
                        let d = (points[3 * p + a] - c[a]).abs();
                        assert_eq!(d, 0.5 * h, "cell {i} corner {k} axis {a}");
                    }
                }
            }
            let rho = floats(&get("rho").values);
            assert!(rho.iter().zip(&cells.rho).all(|(a, &b)| *a == b as f32 as f64));
            counts.push(points.len() / 3);
        }
    }
    assert_eq!(counts[0], 4 * cells.len(), "unshared: four points per cell");
    assert!(counts[2] < cells.len() * 2, "shared: {} points for {} cells", counts[2], cells.len());
}

/// `read_arrays` is public: malformed input (cut anywhere, or a corrupted header word) is
/// an error, never a panic.
#[test]
fn malformed_files_are_errors_not_panics() {
    let mut f = forest::<D2, D2Q9>(2, 16);
    let blocks = f.active_blocks().unwrap();
    for (encoding, compression) in [(Encoding::Appended, Compression::Zlib), (Encoding::Base64, Compression::Zlib)] {
        let dir = tempdir(&format!("malformed-{encoding:?}"));
        let out = AmrOutput { format: VtkFormat { encoding, compression }, ..AmrOutput::default() };
        write_amr(dir.path(), "f", &blocks, &out).unwrap();
        let bytes = std::fs::read(dir.path().join("f/level0_0.vti")).unwrap();
        assert!(read_arrays(&bytes).is_ok());
        for cut in (0..bytes.len()).step_by(37) {
            let _ = read_arrays(&bytes[..cut]);
        }
        // A huge block count in the first header word.
        let marker = if encoding == Encoding::Appended { b"_".as_slice() } else { b"format=\"binary\">".as_slice() };
        let at = bytes.windows(marker.len()).position(|w| w == marker).unwrap() + marker.len();
        for k in 0..16 {
            let mut bad = bytes.clone();
            if at + k < bad.len() {
                bad[at + k] = if encoding == Encoding::Appended { 0xff } else { b'/' };
            }
            let _ = read_arrays(&bad);
        }
    }
}

/// Inconsistent `ActiveBlocks` (public fields) are refused, not a panic.
#[test]
fn inconsistent_blocks_are_refused() {
    let mut f = forest::<D2, D2Q9>(2, 16);
    let good = f.active_blocks().unwrap();
    let dir = tempdir("inconsistent");
    let mut a = good.clone();
    a.rho.pop();
    let mut b = good.clone();
    b.level[0] = 9;
    let mut c = good.clone();
    c.corner[0][0] += 1;
    for (what, bad) in [("rho", a), ("level", b), ("corner", c)] {
        match write_amr(dir.path(), "x", &bad, &AmrOutput::default()) {
            Err(Error::InvalidParameter { field, .. }) => assert!(field.contains("active blocks"), "{what}: {field}"),
            other => panic!("{what}: expected InvalidParameter, got {other:?}"),
        }
    }
}

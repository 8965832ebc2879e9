//! The compile-time variants named at run time: the lattice and the precision (for
//! command lines and configuration files). A `Forest<D, Q, F>` is chosen by types; these
//! enums name the combinations that exist and reject the rest with a named error.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use ramus_kernels::{Real, Storage, VelocitySet};

/// A velocity set, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatticeKind {
    /// [`crate::D2Q9`].
    D2Q9,
    /// [`crate::D3Q19`].
    D3Q19,
    /// [`crate::D3Q27`].
    D3Q27,
}

impl LatticeKind {
    /// The velocity set `name` in dimension `dim`, or a named error if that combination
    /// does not exist (e.g. `dim = 2, name = "d3q19"`).
    pub fn for_dimension(dim: u32, name: &str) -> Result<Self> {
        let kind: LatticeKind = name.parse()?;
        match dim {
            2 | 3 if kind.dim() == dim => Ok(kind),
            2 => Err(Error::UnsupportedLattice { dim, lattice: name.into(), allowed: "d2q9" }),
            3 => Err(Error::UnsupportedLattice { dim, lattice: name.into(), allowed: "d3q19, d3q27" }),
            _ => Err(Error::invalid("dim", dim, "2 or 3")),
        }
    }

    /// Spatial dimension of the set.
    pub fn dim(self) -> u32 {
        match self {
            LatticeKind::D2Q9 => 2,
            LatticeKind::D3Q19 | LatticeKind::D3Q27 => 3,
        }
    }

    /// Number of discrete velocities.
    pub fn q(self) -> usize {
        match self {
            LatticeKind::D2Q9 => 9,
            LatticeKind::D3Q19 => 19,
            LatticeKind::D3Q27 => 27,
        }
    }
}

impl FromStr for LatticeKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "d2q9" => Ok(LatticeKind::D2Q9),
            "d3q19" => Ok(LatticeKind::D3Q19),
            "d3q27" => Ok(LatticeKind::D3Q27),
            _ => Err(Error::UnknownOption { field: "lattice", value: s.into(), allowed: "d2q9, d3q19, d3q27" }),
        }
    }
}

impl fmt::Display for LatticeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LatticeKind::D2Q9 => "d2q9",
            LatticeKind::D3Q19 => "d3q19",
            LatticeKind::D3Q27 => "d3q27",
        })
    }
}

/// A floating-point precision, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f32` populations.
    F32,
    /// `f64` populations.
    F64,
}

impl Precision {
    /// Bytes per value.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

impl FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(Precision::F32),
            "f64" => Ok(Precision::F64),
            _ => Err(Error::UnknownOption { field: "precision", value: s.into(), allowed: "f32, f64" }),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        })
    }
}

/// A storage precision of the distribution pool, chosen at run time (the fourth type
/// parameter of [`crate::Forest`], see [`crate::PoolStorage`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageKind {
    /// The arithmetic precision itself ([`crate::Native`]).
    #[default]
    Native,
    /// IEEE binary16 of `f32` arithmetic ([`crate::Half`]).
    F16,
}

impl StorageKind {
    /// Bytes per stored population with arithmetic in `precision`, or a named error for a
    /// combination that does not exist (16-bit storage of `f64` arithmetic).
    pub fn bytes(self, precision: Precision) -> Result<usize> {
        match (self, precision) {
            (StorageKind::Native, p) => Ok(p.bytes()),
            (StorageKind::F16, Precision::F32) => Ok(2),
            (StorageKind::F16, Precision::F64) => {
                Err(Error::invalid("storage", "f16", "native with precision f64 (f16 storage needs f32 arithmetic)"))
            }
        }
    }
}

impl FromStr for StorageKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "native" => Ok(StorageKind::Native),
            "f16" => Ok(StorageKind::F16),
            _ => Err(Error::UnknownOption { field: "storage", value: s.into(), allowed: "native, f16" }),
        }
    }
}

impl fmt::Display for StorageKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StorageKind::Native => "native",
            StorageKind::F16 => "f16",
        })
    }
}

/// Which AA steps take two cells per thread (`ramus_kernels::pairs`: each direction's two
/// populations move with one memory access of twice the width where they lie side by
/// side; every collision operator, not under a gradient LES model, whose steps take one
/// cell per thread). Bitwise the same results whichever is chosen
/// ([`crate::Forest::set_paired_cells`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PairedCells {
    /// Where it measured faster ([`ramus_kernels::pairs::measured_faster`]): D2Q9 on
    /// levels of at least [`ramus_kernels::pairs::PAIRED_MIN_CELLS`] cells (the even
    /// step, and the odd one with native storage), without the Smagorinsky model.
    #[default]
    Measured,
    /// Every step (for measuring).
    All,
    /// No step: one cell per thread everywhere.
    Off,
}

impl PairedCells {
    /// Whether the even (`odd = false`) or odd AA step of a level of `cells` cells of
    /// lattice `L` with storage `S`, with the Smagorinsky model or not, takes two cells
    /// per thread.
    pub fn takes<L: VelocitySet, F: Real, S: Storage<F>>(self, odd: bool, cells: usize, smagorinsky: bool) -> bool {
        match self {
            PairedCells::Measured => ramus_kernels::pairs::measured_faster::<L, F, S>(odd, cells, smagorinsky),
            PairedCells::All => true,
            PairedCells::Off => false,
        }
    }
}

impl FromStr for PairedCells {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "measured" => Ok(PairedCells::Measured),
            "all" => Ok(PairedCells::All),
            "off" => Ok(PairedCells::Off),
            _ => Err(Error::UnknownOption { field: "paired_cells", value: s.into(), allowed: "measured, all, off" }),
        }
    }
}

impl fmt::Display for PairedCells {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PairedCells::Measured => "measured",
            PairedCells::All => "all",
            PairedCells::Off => "off",
        })
    }
}

/// Which AA steps run as two launches: a bulk kernel over the level's blocks without
/// boundary flags (no link that leaves the fluid, no solid cell; the boundary logic is
/// not compiled in, which frees registers), and the plain step over the list of the other
/// blocks (`ramus_kernels::stream::StreamCollideBulk`). A level without boundary blocks,
/// such as a periodic box, takes the bulk kernel alone. Every collision operator, not
/// under a gradient LES model nor with two cells per thread. Bitwise the same results
/// whichever is chosen ([`crate::Forest::set_bulk_steps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BulkSteps {
    /// Where it measured faster ([`ramus_kernels::stream::bulk_faster`]: with 16-bit
    /// storage the D3Q19 odd step and both D3Q27 steps), on levels
    /// without boundary blocks or of at least [`ramus_kernels::stream::BULK_MIN_CELLS`]
    /// cells.
    #[default]
    Measured,
    /// Every step of every level (for measuring and testing).
    All,
    /// No step: one launch of the plain step everywhere.
    Off,
}

impl BulkSteps {
    /// Whether the even (`odd = false`) or odd AA step of lattice `L` with storage `S`, on
    /// a level of `cells` cells of which some (`boundary`) or none have boundary flags,
    /// runs as a bulk and a boundary launch.
    pub fn takes<L: VelocitySet, F: Real, S: Storage<F>>(self, odd: bool, cells: usize, boundary: bool) -> bool {
        match self {
            BulkSteps::Measured => {
                ramus_kernels::stream::bulk_faster::<L, F, S>(odd)
                    && (!boundary || cells >= ramus_kernels::stream::BULK_MIN_CELLS)
            }
            BulkSteps::All => true,
            BulkSteps::Off => false,
        }
    }

    /// Whether some step of lattice `L` with storage `S` may take the bulk kernel: the
    /// work lists then hold each level's boundary blocks.
    pub fn needs_lists<L: VelocitySet, F: Real, S: Storage<F>>(self) -> bool {
        match self {
            BulkSteps::Measured => {
                ramus_kernels::stream::bulk_faster::<L, F, S>(false)
                    || ramus_kernels::stream::bulk_faster::<L, F, S>(true)
            }
            BulkSteps::All => true,
            BulkSteps::Off => false,
        }
    }
}

impl FromStr for BulkSteps {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "measured" => Ok(BulkSteps::Measured),
            "all" => Ok(BulkSteps::All),
            "off" => Ok(BulkSteps::Off),
            _ => Err(Error::UnknownOption { field: "bulk_steps", value: s.into(), allowed: "measured, all, off" }),
        }
    }
}

impl fmt::Display for BulkSteps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BulkSteps::Measured => "measured",
            BulkSteps::All => "all",
            BulkSteps::Off => "off",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_steps_parse_print_and_refuse_unknown_names() {
        for p in [BulkSteps::Measured, BulkSteps::All, BulkSteps::Off] {
            assert_eq!(p.to_string().parse::<BulkSteps>().expect("own name"), p);
        }
        let e = "some".parse::<BulkSteps>().expect_err("unknown name");
        assert!(e.to_string().contains("bulk_steps") && e.to_string().contains("measured, all, off"), "{e}");
    }

    #[test]
    fn measured_bulk_steps_where_they_measured_faster() {
        use ramus_kernels::stream::BULK_MIN_CELLS as MIN;
        use ramus_kernels::{Half, Native, D2Q9, D3Q19, D3Q27};
        let m = BulkSteps::Measured;
        // D3Q19: the odd step with 16-bit storage; on a level with boundary blocks only
        // from `MIN` cells, on one without at any size.
        assert!(m.takes::<D3Q19, f32, Half>(true, 1, false) && m.takes::<D3Q19, f32, Half>(true, MIN, true));
        assert!(!m.takes::<D3Q19, f32, Half>(true, MIN - 1, true));
        assert!(!m.takes::<D3Q19, f32, Half>(false, MIN, false) && !m.takes::<D3Q19, f64, Native>(true, MIN, false));
        assert!(!m.takes::<D3Q19, f32, Native>(true, 1, false));
        // D3Q27 with 16-bit storage, both steps; not with f32; not D2Q9.
        assert!(m.takes::<D3Q27, f32, Half>(false, MIN, true) && m.takes::<D3Q27, f32, Half>(true, 1, false));
        assert!(!m.takes::<D3Q27, f32, Native>(false, MIN, false) && !m.takes::<D3Q27, f32, Native>(true, MIN, false));
        assert!(!m.takes::<D2Q9, f32, Native>(true, 64 * MIN, false));
        assert!(m.needs_lists::<D3Q19, f32, Half>() && !m.needs_lists::<D3Q19, f32, Native>());
        assert!(!m.needs_lists::<D2Q9, f32, Half>());
        assert!(!m.needs_lists::<D3Q27, f64, Native>());
        assert!(
            BulkSteps::All.takes::<D2Q9, f64, Native>(false, 1, true)
                && BulkSteps::All.needs_lists::<D2Q9, f64, Native>()
        );
        assert!(!BulkSteps::Off.takes::<D3Q19, f32, Half>(true, 64 * MIN, false));
    }

    #[test]
    fn paired_cells_parse_print_and_refuse_unknown_names() {
        for p in [PairedCells::Measured, PairedCells::All, PairedCells::Off] {
            assert_eq!(p.to_string().parse::<PairedCells>().expect("own name"), p);
        }
        assert_eq!("ALL".parse::<PairedCells>().expect("any case"), PairedCells::All);
        let e = "both".parse::<PairedCells>().expect_err("unknown name");
        assert!(e.to_string().contains("paired_cells") && e.to_string().contains("measured, all, off"), "{e}");
    }

    #[test]
    fn measured_pairs_large_d2q9_levels_only() {
        use ramus_kernels::pairs::PAIRED_MIN_CELLS as MIN;
        use ramus_kernels::{Half, Native, D2Q9, D3Q19};
        let m = PairedCells::Measured;
        assert!(m.takes::<D2Q9, f32, Native>(false, MIN, false) && m.takes::<D2Q9, f32, Native>(true, MIN, false));
        assert!(m.takes::<D2Q9, f64, Native>(true, 4 * MIN, false));
        assert!(m.takes::<D2Q9, f32, Half>(false, MIN, false) && !m.takes::<D2Q9, f32, Half>(true, MIN, false));
        assert!(!m.takes::<D2Q9, f32, Native>(false, MIN - 1, false));
        assert!(!m.takes::<D2Q9, f32, Native>(false, MIN, true) && !m.takes::<D2Q9, f64, Native>(true, MIN, true));
        assert!(!m.takes::<D3Q19, f32, Native>(false, 64 * MIN, false));
        assert!(PairedCells::All.takes::<D3Q19, f32, Half>(true, 1, true));
        assert!(!PairedCells::Off.takes::<D2Q9, f32, Native>(false, 64 * MIN, false));
    }
}

//! Large-eddy simulation (see [`ramus_kernels::les`] for the model on the device).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The subgrid model of every level, added to any collision operator. The eddy viscosity
/// comes from each cell's own non-equilibrium stress (no velocity gradients, no
/// neighbours), with the filter width of the cell's level, so the total relaxation time
/// of each cell is level-consistent and the grid transfers rescale with it.
///
/// In a case file: `[les]` with `kind = "none"` or `kind = "smagorinsky"` (and `constant`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Les {
    /// Direct simulation: the molecular viscosity only.
    #[default]
    None,
    /// Smagorinsky (1963): `ν_t = (C Δ)² |S|`, `Δ` the cell size of the level.
    Smagorinsky {
        /// The Smagorinsky constant `C` ([`Les::SMAGORINSKY`] by default).
        constant: f64,
    },
}

impl Les {
    /// Default Smagorinsky constant, 0.17 (Lilly's estimate for isotropic turbulence;
    /// wall-bounded flows often use 0.1).
    pub const SMAGORINSKY: f64 = 0.17;
    /// Largest accepted constant.
    pub const MAX_CONSTANT: f64 = 1.0;

    /// The model named `name` (`none`, `smagorinsky`), with its default constant; an
    /// [`Error::InvalidParameter`] for `les` listing the names otherwise.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "none" => Ok(Les::None),
            "smagorinsky" => Ok(Les::Smagorinsky { constant: Self::SMAGORINSKY }),
            other => Err(Error::invalid("les", other, "none or smagorinsky (WALE and Vreman are not implemented yet)")),
        }
    }

    /// The model's name, as [`Self::parse`] accepts it.
    pub fn name(&self) -> &'static str {
        match self {
            Les::None => "none",
            Les::Smagorinsky { .. } => "smagorinsky",
        }
    }

    /// `C²` (0 without a model), what the kernels take.
    pub fn c2(&self) -> f64 {
        match *self {
            Les::None => 0.0,
            Les::Smagorinsky { constant } => constant * constant,
        }
    }

    /// Checks the constant.
    pub fn validate(&self) -> Result<()> {
        if let Les::Smagorinsky { constant } = *self {
            if !(constant.is_finite() && constant > 0.0 && constant <= Self::MAX_CONSTANT) {
                return Err(Error::invalid(
                    "les.constant",
                    constant,
                    format!("a finite Smagorinsky constant in (0, {}] (typically 0.1 to 0.2)", Self::MAX_CONSTANT),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_constants_and_case_files() {
        assert_eq!(Les::parse("none").unwrap(), Les::None);
        assert_eq!(Les::parse("smagorinsky").unwrap().name(), "smagorinsky");
        assert!((Les::parse("smagorinsky").unwrap().c2() - 0.0289).abs() < 1e-15);
        for bad in ["wale", "vreman", "dns"] {
            match Les::parse(bad) {
                Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "les"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        for constant in [0.0, -0.1, f64::NAN, 1.5] {
            match (Les::Smagorinsky { constant }).validate() {
                Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "les.constant"),
                other => panic!("C = {constant}: {other:?}"),
            }
        }
        #[derive(Deserialize)]
        struct Case {
            les: Les,
        }
        let c: Case = toml::from_str("[les]\nkind = \"smagorinsky\"\nconstant = 0.1\n").unwrap();
        assert_eq!(c.les, Les::Smagorinsky { constant: 0.1 });
        assert!(toml::from_str::<Case>("[les]\nkind = \"smagorinsky\"\nconstant = 0.1\ndelta = 1\n").is_err());
    }
}

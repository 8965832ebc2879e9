//! Large-eddy simulation (see [`ramus_kernels::les`] for the model on the device).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The subgrid model of every level, added to any collision operator. The filter width
/// is the cell size of each level, so the total relaxation time of each cell is
/// level-consistent and the grid transfers rescale with it.
///
/// Smagorinsky's eddy viscosity comes from each cell's own non-equilibrium stress (no
/// velocity gradients, no neighbours: [`ramus_kernels::les`]); WALE's and Vreman's need
/// the full velocity gradient, taken by finite differences of the cell velocities over
/// the neighbouring cells of the level ([`ramus_kernels::eddy`]), which costs one more
/// pass over the level per step and a velocity and an eddy-viscosity value per cell.
///
/// In a case file: `[les]` with `kind = "none"`, `"smagorinsky"`, `"wale"` or `"vreman"`
/// (and `constant`).
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
    /// WALE (Nicoud & Ducros 1999): `ν_t = (C_w Δ)² (S^d:S^d)^{3/2} / ((S:S)^{5/2} +
    /// (S^d:S^d)^{5/4})`; zero in pure shear and at walls.
    Wale {
        /// The WALE constant `C_w` ([`Les::WALE`] by default).
        constant: f64,
    },
    /// Vreman (2004): `ν_t = c √(B_β/(α:α))`; zero for every one-directional gradient
    /// (pure shear included).
    Vreman {
        /// Vreman's constant `c` ([`Les::VREMAN`] by default).
        constant: f64,
    },
}

impl Les {
    /// Default Smagorinsky constant, 0.17 (Lilly's estimate for isotropic turbulence;
    /// wall-bounded flows often use 0.1).
    pub const SMAGORINSKY: f64 = 0.17;
    /// Default WALE constant `C_w` = 0.5 (Nicoud & Ducros 1999 derive `C_w² ≈ 10.6 C_s²`,
    /// i.e. 0.55 for `C_s` = 0.17, from isotropic turbulence; 0.5 is their rounded value and
    /// the common default).
    pub const WALE: f64 = 0.5;
    /// Default Vreman constant `c` = 0.07 (Vreman 2004: `c ≈ 2.5 C_s²`, 0.07 for
    /// `C_s` = 0.17).
    pub const VREMAN: f64 = 0.07;
    /// Largest accepted constant.
    pub const MAX_CONSTANT: f64 = 1.0;

    /// The model named `name` (`none`, `smagorinsky`, `wale`, `vreman`), with its default
    /// constant; an [`Error::InvalidParameter`] for `les` listing the names otherwise.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "none" => Ok(Les::None),
            "smagorinsky" => Ok(Les::Smagorinsky { constant: Self::SMAGORINSKY }),
            "wale" => Ok(Les::Wale { constant: Self::WALE }),
            "vreman" => Ok(Les::Vreman { constant: Self::VREMAN }),
            other => Err(Error::invalid("les", other, "none, smagorinsky, wale or vreman")),
        }
    }

    /// The model's name, as [`Self::parse`] accepts it.
    pub fn name(&self) -> &'static str {
        match self {
            Les::None => "none",
            Les::Smagorinsky { .. } => "smagorinsky",
            Les::Wale { .. } => "wale",
            Les::Vreman { .. } => "vreman",
        }
    }

    /// The same model with constant `c` (unchanged for [`Les::None`]).
    pub fn with_constant(self, c: f64) -> Self {
        match self {
            Les::None => Les::None,
            Les::Smagorinsky { .. } => Les::Smagorinsky { constant: c },
            Les::Wale { .. } => Les::Wale { constant: c },
            Les::Vreman { .. } => Les::Vreman { constant: c },
        }
    }

    /// The model's constant (`None` for [`Les::None`]).
    pub fn constant(&self) -> Option<f64> {
        match *self {
            Les::None => None,
            Les::Smagorinsky { constant } | Les::Wale { constant } | Les::Vreman { constant } => Some(constant),
        }
    }

    /// Smagorinsky's `C²` (0 for every other model), what the kernels take.
    pub fn c2(&self) -> f64 {
        match *self {
            Les::Smagorinsky { constant } => constant * constant,
            _ => 0.0,
        }
    }

    /// Whether the model needs velocity gradients (WALE, Vreman).
    pub fn needs_gradients(&self) -> bool {
        matches!(self, Les::Wale { .. } | Les::Vreman { .. })
    }

    /// The gradient model's code and constant as the kernels take them
    /// ([`ramus_kernels::eddy`]: `C_w²` for WALE, `c` for Vreman); `(LES_NONE, 0)` for the
    /// others.
    pub fn gradient_model(&self) -> (u32, f64) {
        use ramus_kernels::eddy::{LES_NONE, LES_VREMAN, LES_WALE};
        match *self {
            Les::Wale { constant } => (LES_WALE, constant * constant),
            Les::Vreman { constant } => (LES_VREMAN, constant),
            _ => (LES_NONE, 0.0),
        }
    }

    /// Checks the constant.
    pub fn validate(&self) -> Result<()> {
        if let Some(constant) = self.constant() {
            if !(constant.is_finite() && constant > 0.0 && constant <= Self::MAX_CONSTANT) {
                let typical = match self {
                    Les::Wale { .. } => "typically 0.3 to 0.6",
                    Les::Vreman { .. } => "typically 0.025 to 0.1",
                    _ => "typically 0.1 to 0.2",
                };
                return Err(Error::invalid(
                    "les.constant",
                    constant,
                    format!("a finite {} constant in (0, {}] ({typical})", self.name(), Self::MAX_CONSTANT),
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
        assert_eq!(Les::parse("wale").unwrap(), Les::Wale { constant: Les::WALE });
        assert_eq!(Les::parse("vreman").unwrap().name(), "vreman");
        assert_eq!(Les::parse("wale").unwrap().c2(), 0.0);
        assert_eq!(Les::parse("vreman").unwrap().with_constant(0.05), Les::Vreman { constant: 0.05 });
        assert!(Les::parse("wale").unwrap().needs_gradients());
        assert!(!Les::parse("smagorinsky").unwrap().needs_gradients());
        for bad in ["sigma", "dns"] {
            match Les::parse(bad) {
                Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "les"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        for constant in [0.0, -0.1, f64::NAN, 1.5] {
            for model in [Les::Smagorinsky { constant }, Les::Wale { constant }, Les::Vreman { constant }] {
                match model.validate() {
                    Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "les.constant"),
                    other => panic!("{model:?}: {other:?}"),
                }
            }
        }
        #[derive(Deserialize)]
        struct Case {
            les: Les,
        }
        let c: Case = toml::from_str("[les]\nkind = \"smagorinsky\"\nconstant = 0.1\n").unwrap();
        assert_eq!(c.les, Les::Smagorinsky { constant: 0.1 });
        assert!(toml::from_str::<Case>("[les]\nkind = \"smagorinsky\"\nconstant = 0.1\ndelta = 1\n").is_err());
        let c: Case = toml::from_str("[les]\nkind = \"wale\"\nconstant = 0.325\n").unwrap();
        assert_eq!(c.les, Les::Wale { constant: 0.325 });
    }
}

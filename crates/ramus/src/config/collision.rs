//! The collision operator of a forest (see [`ramus_kernels::collision`] for the kernels).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How cells relax towards equilibrium. Every level uses the same operator, with the
/// level's relaxation times (paper, section "Collision": `τ_L − ½ = 2^L (τ_0 − ½)`), and
/// the grid transfers rescale the non-equilibrium part with the operator's own rates.
///
/// In a case file: `[collision]` with `kind = "bgk"`, `kind = "trt"` (and `magic`),
/// `kind = "mrt"` (and `bulk`, `odd`, `even`) or `kind = "rr"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Collision {
    /// Single relaxation time (the paper's operator).
    #[default]
    Bgk,
    /// Two relaxation times (Ginzburg, Verhaeghe & d'Humières 2008): the even
    /// non-equilibrium part relaxes with `τ⁺` (the viscosity's), the odd part with `τ⁻`
    /// from the magic parameter `Λ = (τ⁺ − ½)(τ⁻ − ½)`. At fixed `Λ` steady solutions,
    /// bounce-back wall positions included, do not depend on the viscosity; `Λ = 3/16`
    /// ([`Collision::TRT_MAGIC`]) puts a Poiseuille flow's bounce-back walls exactly
    /// half-way between cells. `levels` says how `τ⁻` follows the levels.
    Trt {
        /// The magic parameter `Λ > 0` of the root level.
        magic: f64,
        /// `τ⁻` of the finer levels (default [`MagicLevels::Constant`]).
        #[serde(default)]
        levels: MagicLevels,
    },
    /// Recursive regularized (Malaspinas 2015; Coreixas et al. 2017): the non-equilibrium
    /// part is rebuilt from its second-order moment (third order by recursion) before it
    /// relaxes with the viscosity's rate, which drops the ghost modes that make BGK
    /// unstable as `τ → ½`. The robust operator for high Reynolds numbers on refined
    /// grids: its non-equilibrium part is linear in `Π ∝ τ ∂u`, so the grid transfers
    /// rescale it with BGK's `τ_F/(2τ_C)` exactly (see [`ramus_kernels::regularized`] for
    /// the comparison with the cumulant and KBC operators).
    #[serde(rename = "rr")]
    RecursiveRegularized,
    /// Multiple relaxation times in a weighted-orthogonal Hermite moment basis, the same
    /// on D2Q9, D3Q19 and D3Q27 ([`ramus_kernels::mrt`] lists the basis): the shear
    /// moments relax with the viscosity's `ω = 1/τ`, the trace of the second-order
    /// moments with `bulk` (the bulk viscosity `(2/D) c_s² (1/ω_b − ½)`), the odd ghost
    /// moments (third order, and fifth on D3Q27) with `odd` and the even ones (fourth
    /// order and up) with `even`. The rates are the root level's: on finer levels
    /// `τ_b − ½` and `τ_o − ½` double per level like the viscosity's (the bulk viscosity
    /// is the same on every level, and the grid transfers, which rescale each group with
    /// its own `τ_F/(2τ_C)`, stay consistent to second order: a linear shear flow crosses
    /// the interfaces exactly), while the even ghosts keep their rate. Under LES the shear
    /// rate is each cell's and the odd ghosts keep `(τ_o − ½)/(τ − ½)` per cell. Defaults
    /// ([`Collision::mrt`]): d'Humières et al. (2002)'s D3Q19 rates of the moments of the
    /// same orders, 1.19, 1.2, 1.4.
    Mrt {
        /// `ω_b` of the root level, in (0, 2).
        #[serde(default = "default_bulk")]
        bulk: f64,
        /// `ω_o` of the root level, in (0, 2).
        #[serde(default = "default_odd")]
        odd: f64,
        /// `ω_e` of every level, in (0, 2).
        #[serde(default = "default_even")]
        even: f64,
    },
}

fn default_bulk() -> f64 {
    Collision::MRT_BULK
}
fn default_odd() -> f64 {
    Collision::MRT_ODD
}
fn default_even() -> f64 {
    Collision::MRT_EVEN
}

/// How TRT's `τ⁻` is chosen on levels `L ≥ 1`, whose `τ⁺ − ½ = 2^L (τ⁺_0 − ½)`.
///
/// The steady non-equilibrium part of TRT is, to second order in the lattice gradient
/// `∂ = c·∇` (expanding the streaming shift `e^∂` in even and odd parts),
/// `n⁺ = −τ⁺ ∂e⁻ + τ⁺(τ⁻ − ½) ∂²e⁺` and `n⁻ = −τ⁻ ∂e⁺ + τ⁻(τ⁺ − ½) ∂²e⁻`
/// (`e±`: the parity parts of the equilibrium; BGK is `τ⁺ = τ⁻`). A grid transfer
/// rescales `n⁺` by `τ⁺_F/(2τ⁺_C)` and `n⁻` by `τ⁻_F/(2τ⁻_C)` (∂ halves on the finer
/// level); the second-order terms follow the same factors only if `τ⁻ − ½` also doubles
/// per level.
///
/// Measured on the 2D cavity at Re 10 000 (root 128, 4 levels, f32, H100; BENCHMARKS.md):
/// with `Diffusive` TRT diverges within half a lid pass for Λ = 3/16 and 1/4 (the root's
/// τ⁺ = 0.5019 gives τ⁻_0 ≈ 98, and `Diffusive` multiplies τ⁻ − ½ by 8 on level 3), while
/// `Constant` with Λ = 3/16 runs 100 lid passes like BGK. Hence `Constant` is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MagicLevels {
    /// `τ⁻_L − ½ = 2^L (τ⁻_0 − ½)`, so `Λ_L = 4^L Λ`: every relaxation time follows the
    /// viscosity's scaling, and the transfers are consistent to second order as with
    /// BGK (a linear shear flow crosses the interfaces exactly). `Λ`'s wall property holds
    /// on the root level; on finer ones walls sit as with BGK of the same `Λ_L`, and a
    /// large `τ⁻` on fine levels costs stability at high Reynolds numbers.
    Diffusive,
    /// `Λ` on every level: bounce-back walls are placed as on the root level at every
    /// level, but the transfers scale TRT's second-order even term `τ⁺(τ⁻ − ½)∂²e⁺` by
    /// `τ⁺_F/(2τ⁺_C)` where it scales by a quarter of that: a shear flow crosses an
    /// interface with an error of order `Ma² (Δx ∇)²` (plane Couette flow at U = 0.05
    /// through a refined patch, `tests/multilevel.rs`: 1.3e-5 relative L2 for Λ = 3/16,
    /// against 6e-8 with [`MagicLevels::Diffusive`]). `τ⁻` shrinks on finer levels.
    #[default]
    Constant,
}

impl Collision {
    /// TRT's default magic parameter, `Λ = 3/16`.
    pub const TRT_MAGIC: f64 = 3.0 / 16.0;
    /// Largest accepted `Λ`: with `τ⁺` near ½ a large `Λ` puts `τ⁻` far above any
    /// stable value.
    pub const MAX_MAGIC: f64 = 10.0;

    /// MRT's default bulk rate on the root level (d'Humières et al. 2002: `s_e`).
    pub const MRT_BULK: f64 = 1.19;
    /// MRT's default odd-ghost rate on the root level (d'Humières et al. 2002: `s_q`).
    pub const MRT_ODD: f64 = 1.2;
    /// MRT's default even-ghost rate (d'Humières et al. 2002: `s_ε`, `s_π`).
    pub const MRT_EVEN: f64 = 1.4;

    /// TRT with `Λ = 3/16`.
    pub const fn trt() -> Self {
        Collision::Trt { magic: Self::TRT_MAGIC, levels: MagicLevels::Constant }
    }

    /// MRT with the default rates.
    pub const fn mrt() -> Self {
        Collision::Mrt { bulk: Self::MRT_BULK, odd: Self::MRT_ODD, even: Self::MRT_EVEN }
    }

    /// The operator named `name` (`bgk`, `trt`, `mrt`, `rr`), with default parameters; an
    /// [`Error::InvalidParameter`] for `collision` listing the names otherwise.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "bgk" => Ok(Collision::Bgk),
            "trt" => Ok(Collision::trt()),
            "mrt" => Ok(Collision::mrt()),
            "rr" => Ok(Collision::RecursiveRegularized),
            other => Err(Error::invalid("collision", other, "bgk, trt, mrt or rr")),
        }
    }

    /// The operator's name, as [`Self::parse`] accepts it.
    pub fn name(&self) -> &'static str {
        match self {
            Collision::Bgk => "bgk",
            Collision::Trt { .. } => "trt",
            Collision::Mrt { .. } => "mrt",
            Collision::RecursiveRegularized => "rr",
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<()> {
        if let Collision::Trt { magic, .. } = *self {
            if !(magic.is_finite() && magic > 0.0 && magic <= Self::MAX_MAGIC) {
                return Err(Error::invalid(
                    "collision.magic",
                    magic,
                    format!("a finite Λ in (0, {}] (3/16: exact bounce-back walls; 1/4: most stable)", Self::MAX_MAGIC),
                ));
            }
        }
        if let Collision::Mrt { bulk, odd, even } = *self {
            for (field, rate) in [("collision.bulk", bulk), ("collision.odd", odd), ("collision.even", even)] {
                if !(rate > 0.0 && rate < 2.0) {
                    return Err(Error::invalid(field, rate, "a relaxation rate in (0, 2)"));
                }
            }
        }
        Ok(())
    }

    /// The relaxation time of the odd non-equilibrium part of each level, for the
    /// levels' relaxation times `taus` (`τ⁺`; `taus[0]` the root's): TRT's `τ⁻` (see
    /// [`MagicLevels`]), MRT's odd-ghost `τ_o` (`τ_o − ½` doubling per level from the
    /// root's `1/odd`), `taus` itself for BGK and the regularized operator (one rate).
    pub fn odd_taus(&self, taus: &[f64]) -> Vec<f64> {
        match *self {
            Collision::Bgk | Collision::RecursiveRegularized => taus.to_vec(),
            Collision::Mrt { odd, .. } => diffusive(1.0 / odd, taus.len()),
            Collision::Trt { magic, levels } => {
                let odd = |t: f64| 0.5 + magic / (t - 0.5);
                match levels {
                    MagicLevels::Constant => taus.iter().map(|&t| odd(t)).collect(),
                    MagicLevels::Diffusive => {
                        let t0 = taus.first().map_or(0.5, |&t| odd(t));
                        (0..taus.len()).map(|l| 0.5 + (1u64 << l) as f64 * (t0 - 0.5)).collect()
                    }
                }
            }
        }
    }
}

/// `τ_L = ½ + 2^L (τ_0 − ½)` for `levels` levels.
fn diffusive(tau0: f64, levels: usize) -> Vec<f64> {
    (0..levels).map(|l| 0.5 + (1u64 << l) as f64 * (tau0 - 0.5)).collect()
}

impl Collision {
    /// MRT's relaxation times of the bulk and even-ghost moments on each of `levels`
    /// levels: `τ_b − ½` doubling per level from the root's `1/bulk`, `1/even` on every
    /// level (see [`Collision::Mrt`]); `None` for the other operators.
    pub fn mrt_taus(&self, levels: usize) -> Option<(Vec<f64>, Vec<f64>)> {
        match *self {
            Collision::Mrt { bulk, even, .. } => Some((diffusive(1.0 / bulk, levels), vec![1.0 / even; levels])),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_relaxation_times_per_level() {
        // Root τ⁺ = 0.6, two finer levels: τ⁺ = 0.7, 0.9.
        let taus = [0.6, 0.7, 0.9];
        assert_eq!(Collision::Bgk.odd_taus(&taus), taus.to_vec());
        // Λ = 3/16: τ⁻_0 = ½ + 0.1875/0.1 = 2.375.
        let d = Collision::Trt { magic: Collision::TRT_MAGIC, levels: MagicLevels::Diffusive }.odd_taus(&taus);
        let c = Collision::trt().odd_taus(&taus);
        for (l, (&tp, (&td, &tc))) in taus.iter().zip(d.iter().zip(&c)).enumerate() {
            // Diffusive: τ⁻ − ½ doubles per level like τ⁺ − ½; constant: Λ on every level.
            assert!((td - (0.5 + (1 << l) as f64 * 1.875)).abs() < 1e-12, "level {l}: {td}");
            assert!(((tp - 0.5) * (tc - 0.5) - 0.1875).abs() < 1e-12, "level {l}: {tc}");
        }
    }

    #[test]
    fn names_values_and_case_files() {
        assert_eq!(Collision::parse("trt").unwrap(), Collision::trt());
        assert_eq!(Collision::parse("bgk").unwrap().name(), "bgk");
        assert_eq!(Collision::parse("rr").unwrap(), Collision::RecursiveRegularized);
        assert_eq!(Collision::RecursiveRegularized.name(), "rr");
        assert_eq!(Collision::parse("mrt").unwrap(), Collision::mrt());
        assert_eq!(Collision::mrt().name(), "mrt");
        match Collision::parse("mrt2") {
            Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "collision"),
            other => panic!("{other:?}"),
        }
        for magic in [0.0, -1.0, f64::NAN, 11.0] {
            match (Collision::Trt { magic, levels: MagicLevels::Diffusive }).validate() {
                Err(Error::InvalidParameter { field, .. }) => assert_eq!(field, "collision.magic"),
                other => panic!("Λ = {magic}: {other:?}"),
            }
        }
        #[derive(Deserialize)]
        struct Case {
            collision: Collision,
        }
        let c: Case = toml::from_str("[collision]\nkind = \"trt\"\nmagic = 0.25\nlevels = \"constant\"\n").unwrap();
        assert_eq!(c.collision, Collision::Trt { magic: 0.25, levels: MagicLevels::Constant });
        let c: Case = toml::from_str("[collision]\nkind = \"trt\"\nmagic = 0.1875\n").unwrap();
        assert_eq!(c.collision, Collision::trt());
        assert!(toml::from_str::<Case>("[collision]\nkind = \"trt\"\nmagic = 0.1\nlambda = 1\n").is_err());
        let c: Case = toml::from_str("[collision]\nkind = \"rr\"\n").unwrap();
        assert_eq!(c.collision, Collision::RecursiveRegularized);
        let c: Case = toml::from_str("[collision]\nkind = \"mrt\"\n").unwrap();
        assert_eq!(c.collision, Collision::mrt());
        let c: Case = toml::from_str("[collision]\nkind = \"mrt\"\nodd = 1.9\n").unwrap();
        assert_eq!(c.collision, Collision::Mrt { bulk: 1.19, odd: 1.9, even: 1.4 });
        assert!(toml::from_str::<Case>("[collision]\nkind = \"mrt\"\nmagic = 0.1\n").is_err());
        for (field, c) in [
            ("collision.bulk", Collision::Mrt { bulk: 0.0, odd: 1.2, even: 1.4 }),
            ("collision.odd", Collision::Mrt { bulk: 1.0, odd: 2.0, even: 1.4 }),
            ("collision.even", Collision::Mrt { bulk: 1.0, odd: 1.2, even: f64::NAN }),
        ] {
            match c.validate() {
                Err(Error::InvalidParameter { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{c:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn mrt_relaxation_times_per_level() {
        // Root τ = 0.6: τ_b − ½ and τ_o − ½ double per level, τ_e stays.
        let taus = [0.6, 0.7, 0.9];
        let c = Collision::mrt();
        let odd = c.odd_taus(&taus);
        let (bulk, even) = c.mrt_taus(3).unwrap();
        for l in 0..3 {
            let k = (1 << l) as f64;
            assert!((odd[l] - (0.5 + k * (1.0 / 1.2 - 0.5))).abs() < 1e-12, "level {l}: τ_o {}", odd[l]);
            assert!((bulk[l] - (0.5 + k * (1.0 / 1.19 - 0.5))).abs() < 1e-12, "level {l}: τ_b {}", bulk[l]);
            assert_eq!(even[l], 1.0 / 1.4);
        }
        assert_eq!(Collision::Bgk.mrt_taus(3), None);
    }
}

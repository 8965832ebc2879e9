//! The physics flags every simulation example shares (`--collision`, `--magic`,
//! `--magic-levels`, `--les`, `--les-constant`), flattened into its arguments and case
//! file.

use anyhow::{bail, Result};
use ramus::{Collision, Les, MagicLevels};
use serde::{Deserialize, Serialize};

/// The collision operator (case-file keys of the same names).
#[derive(clap::Args, Serialize, Deserialize, Clone, Debug)]
pub struct CollisionFlags {
    /// Collision operator: bgk (the paper's single relaxation time), trt (two relaxation
    /// times), mrt (multiple relaxation times, default rates) or rr (recursive
    /// regularized, robust at high Reynolds numbers); see ramus::Collision.
    #[arg(long, default_value = "bgk")]
    pub collision: String,
    /// TRT's magic parameter Λ on the root level [default: 3/16].
    #[arg(long)]
    pub magic: Option<f64>,
    /// How TRT's τ⁻ follows the levels: constant (Λ on every level; the more stable) or
    /// diffusive (τ⁻ − ½ doubles per level: exact grid interfaces) [default: constant].
    #[arg(long)]
    pub magic_levels: Option<String>,
    /// Subgrid model: none, smagorinsky (eddy viscosity from each cell's stress), wale or
    /// vreman (from finite-difference velocity gradients); filter width = the cell size of
    /// each level; see ramus::Les.
    #[arg(long, default_value = "none")]
    pub les: String,
    /// The model's constant [default: smagorinsky C = 0.17, wale C_w = 0.5, vreman c = 0.07].
    #[arg(long)]
    pub les_constant: Option<f64>,
}

impl CollisionFlags {
    /// The operator, validated (`--magic` and `--magic-levels` only with TRT).
    pub fn collision(&self) -> Result<Collision> {
        let c = match Collision::parse(&self.collision)? {
            Collision::Trt { .. } => {
                let levels = match self.magic_levels.as_deref() {
                    None | Some("constant") => MagicLevels::Constant,
                    Some("diffusive") => MagicLevels::Diffusive,
                    Some(other) => bail!("invalid magic_levels = '{other}': allowed constant, diffusive"),
                };
                Collision::Trt { magic: self.magic.unwrap_or(Collision::TRT_MAGIC), levels }
            }
            other => {
                if self.magic.is_some() || self.magic_levels.is_some() {
                    bail!("invalid magic / magic_levels: TRT's parameters, given with collision = {}", other.name());
                }
                other
            }
        };
        c.validate()?;
        Ok(c)
    }

    /// The subgrid model, validated (`--les-constant` only with a model).
    pub fn les(&self) -> Result<Les> {
        let les = match (Les::parse(&self.les)?, self.les_constant) {
            (Les::None, Some(_)) => bail!("invalid les_constant: given with les = none"),
            (les, Some(constant)) => les.with_constant(constant),
            (les, None) => les,
        };
        les.validate()?;
        Ok(les)
    }
}

//! Grid-refinement settings of a [`crate::Forest`]: levels, interpolation order, pool
//! size, and when and how the mesh adapts (paper, solver section "Adaptive Mesh
//! Refinement").

use serde::{Deserialize, Serialize};

use crate::amr::Capacity;
use crate::config::Face;
use crate::error::{Error, Result};

/// Coarse → fine interpolation of the ghost cells (paper, "Linear Interpolation",
/// "Cubic Interpolation").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Multilinear, from the `2^D` coarse cells around the child (the paper's default).
    #[default]
    Linear,
    /// Tensor cubic Lagrange, from all `4^D` cells of the parent.
    Cubic,
}

impl Interpolation {
    /// Parses `linear` / `cubic`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "linear" => Ok(Interpolation::Linear),
            "cubic" => Ok(Interpolation::Cubic),
            _ => Err(Error::UnknownOption { field: "interp", value: s.into(), allowed: "linear, cubic" }),
        }
    }
}

/// What decides where the mesh is refined at each adaptation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Criterion {
    /// No automatic adaptation (a user criterion set with
    /// [`crate::Forest::set_user_criterion`] still applies).
    #[default]
    None,
    /// Vorticity magnitude with the paper's log₂ level rule (Algorithm "Refinement/
    /// Coarsening Criterion"): `ε = min(1, log₂|ω|)`, desired level `L_max − 1 − p` for
    /// the largest `p ∈ 1 … L_max − 1` with `ε < n_start − p · n_inc`. `|ω|` is in
    /// lattice velocity per `length` root cells (default: the domain's x extent), which
    /// reproduces the paper's units (domain length 1).
    Vorticity {
        /// `N_start` of the level rule.
        n_start: f64,
        /// `N_inc` of the level rule.
        n_inc: f64,
        /// Length unit of `|ω|` in root cells (`None`: the domain's x extent).
        #[serde(default)]
        length: Option<f64>,
    },
}

/// Refinement toward domain faces that never coarsens (the paper's wall-distance rule
/// with freezing): applied once, when the forest is built, level by level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallRefinement {
    /// Faces to refine toward.
    pub faces: Vec<Face>,
    /// Distance `d_spec` in root cells: a block on level `L` is refined while its distance
    /// to a face is below `d_spec / 2^L`.
    pub distance: f64,
    /// Refine toward the built-in obstacles and the STL body too, with the same rule (the
    /// paper refines around the cylinder and the outlet; for an STL body the distance is
    /// to its triangles' bounding boxes, [`ramus_kernels::surface::MarkSurfaceDistance`]).
    #[serde(default)]
    pub obstacles: bool,
}

/// Grid levels and adaptation of a [`crate::Forest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Refinement {
    /// Grid levels `L_max` (1: the uniform root grid).
    pub levels: usize,
    /// Interpolation of ghost cells and of new children.
    pub interpolation: Interpolation,
    /// Adapt every this many root steps in [`crate::Forest::advance`]. 0 (never in
    /// `advance`) needs [`Self::on_demand`] when there is something to adapt (more than one
    /// level and a criterion): otherwise the criterion would silently never run.
    pub every: u64,
    /// Adapt only when [`crate::Forest::adapt`] is called, never in `advance` (`every` must
    /// then be 0): e.g. to time adaptations one by one. Default: false.
    pub on_demand: bool,
    /// The criterion applied at each adaptation.
    pub criterion: Criterion,
    /// Frozen refinement toward faces, applied at construction.
    pub walls: Option<WallRefinement>,
    /// Block-pool size; `None`: [`Capacity::automatic`], room for the whole hierarchy the
    /// levels can reach, capped at a quarter of the memory the device can use (on the CPU
    /// the limits of the process: cgroup, `ulimit -v`; untouched until blocks are used).
    pub capacity: Option<Capacity>,
}

impl Default for Refinement {
    /// One level; linear interpolation; adaptation every 32 root steps (the paper's
    /// choice) once a criterion is set.
    fn default() -> Self {
        Refinement {
            levels: 1,
            interpolation: Interpolation::Linear,
            every: 32,
            on_demand: false,
            criterion: Criterion::None,
            walls: None,
            capacity: None,
        }
    }
}

impl Refinement {
    /// Checks the fields for a forest of dimension `dim`.
    pub fn validate(&self, dim: usize) -> Result<()> {
        let max = ramus_kernels::amr::MAX_LEVELS;
        if self.levels < 1 || self.levels > max {
            return Err(Error::invalid("levels", self.levels, format!("1 to {max} grid levels")));
        }
        if let Criterion::Vorticity { n_start, n_inc, length } = self.criterion {
            if !n_start.is_finite() {
                return Err(Error::invalid("n_start", n_start, "a finite number"));
            }
            if !n_inc.is_finite() {
                return Err(Error::invalid("n_inc", n_inc, "a finite number"));
            }
            if let Some(l) = length {
                if !(l.is_finite() && l > 0.0) {
                    return Err(Error::invalid("criterion.length", l, "a finite length > 0 (root cells)"));
                }
            }
        }
        if let Some(w) = &self.walls {
            if !(w.distance.is_finite() && w.distance > 0.0) {
                return Err(Error::invalid("walls.distance", w.distance, "a finite distance > 0 (root cells)"));
            }
            if let Some(f) = w.faces.iter().find(|f| f.axis() >= dim) {
                return Err(Error::invalid("walls.faces", f.name(), format!("faces of a {dim}D domain")));
            }
        }
        // A criterion that `advance` would never run: adaptation silently off. Frozen wall
        // refinement with `Criterion::None` and `every = 0` is a static refined mesh, and a
        // user criterion cannot be set with `every = 0` (`Forest::set_user_criterion`).
        if self.levels > 1 && self.every == 0 && self.criterion != Criterion::None && !self.on_demand {
            return Err(Error::invalid(
                "refinement.every",
                0,
                "at least 1 root step between adaptations when a criterion is set and levels > 1 (0 never \
                 adapts in Forest::advance); set on_demand = true to adapt only through Forest::adapt",
            ));
        }
        if self.on_demand && self.every != 0 {
            return Err(Error::invalid(
                "refinement.every",
                self.every,
                "0 with on_demand = true (on-demand adaptation never adapts in Forest::advance)",
            ));
        }
        match self.capacity {
            Some(c) => c.validate(),
            None => Ok(()),
        }
    }
}

//! Validated configuration of a [`crate::Forest`].
//!
//! Everything is chosen at run time (the reference code recompiles for every parameter).
//! All structs derive `serde`, so a configuration can be loaded from TOML.

use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::error::{Error, Result};

mod collision;
mod guard;
mod les;
mod obstacle;
mod profile;
mod refinement;
mod units;

pub use collision::{Collision, MagicLevels};
pub use guard::Guard;
pub use les::Les;
pub(crate) use obstacle::shapes;
pub use obstacle::{Axis, Obstacle, Shape, SurfaceBody, Walls};
pub use profile::{profile_velocity, Profile};
pub use refinement::{Criterion, Interpolation, Refinement, WallRefinement};
pub use units::{Scales, Units};

/// Wall and inlet speeds at or above this (lattice units) are rejected: the weakly
/// compressible LBM needs Ma = u/c_s ≪ 1, and 0.3 is Ma ≈ 0.52.
pub const MAX_WALL_SPEED: f64 = 0.3;

/// Outlet densities must lie within `1 ± MAX_DENSITY_OFFSET`: the pressure `c_s² (ρ − 1)`
/// of the weakly compressible model is only meaningful for small density changes.
pub const MAX_DENSITY_OFFSET: f64 = 0.1;

/// Relaxation times at or below `0.5 + TAU_MARGIN` are rejected: BGK is unstable as
/// τ → 1/2 (vanishing viscosity).
pub const TAU_MARGIN: f64 = 1e-3;

/// Root-level relaxation times above this are rejected (τ = 3ν + ½ in root lattice units).
///
/// BGK approximates the Navier–Stokes equations only while relaxation is fast compared
/// with the flow (Krüger et al. 2017, *The Lattice Boltzmann Method*, §4.2 on the
/// hydrodynamic limit): its mean free path is of the order of `c_s (τ − ½) Δt =
/// (τ − ½) Δx / √3`, i.e. a lattice Knudsen number `(τ − ½)/(√3 N)` for a flow feature of
/// `N` cells, and it exceeds a whole cell beyond `τ = ½ + √3 ≈ 2.2`. Walls degrade first:
/// with BGK the half-way bounce-back wall lies exactly half-way between nodes only at
/// `τ = ½ + √(3/16)`, and its position error grows like `(τ − ½)²` (Krüger et al. 2017,
/// §5.3.3), so at large τ the effective walls move into the fluid (a cavity at
/// `Re = 10⁻³⁰⁰` has τ ≈ 10³⁰⁰; the square cylinder at `Re = 10⁻⁶` gave `C_D = 178`).
/// The bound applies to the root level only: finer levels relax with
/// `τ_L − ½ = 2^L (τ_0 − ½)` by construction (the same viscosity on a finer grid), and
/// are as accurate as the root grid they refine. 2 keeps every configuration of the
/// tests and examples (the largest is τ = 1.5) and is what lower velocities or fewer
/// cells reach at the same Reynolds number.
pub const MAX_TAU: f64 = 2.0;

/// Largest accepted body force density `|F|` (root lattice units): the velocity a
/// resting fluid gains per step, `F/ρ`, stays far below the speed of sound, and a
/// channel of a few cells does not reach Ma ~ 1 in a few hundred steps.
pub const MAX_BODY_FORCE: f64 = 1e-2;

/// Largest normal component of a [`Boundary::Wall`] velocity (lattice units): walls are
/// impermeable, a normal part would pump mass through them (see [`ForestConfig::validate`]).
pub const WALL_NORMAL_TOLERANCE: f64 = 1e-12;

/// A face of the rectangular domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Face {
    /// `x = 0`.
    XMin,
    /// `x = ` the domain's length.
    XMax,
    /// `y = 0`.
    YMin,
    /// `y = ` the domain's height.
    YMax,
    /// `z = 0` (3D).
    ZMin,
    /// `z = ` the domain's depth (3D).
    ZMax,
}

impl Face {
    /// All six faces, in index order.
    pub const ALL: [Face; 6] = [Face::XMin, Face::XMax, Face::YMin, Face::YMax, Face::ZMin, Face::ZMax];

    /// Index of the face (`2 * axis + side`), as used by the kernels.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Axis normal to the face (0, 1, 2).
    pub fn axis(self) -> usize {
        self.index() / 2
    }

    /// Name used in messages (`x_min`, ...).
    pub fn name(self) -> &'static str {
        ["x_min", "x_max", "y_min", "y_max", "z_min", "z_max"][self.index()]
    }
}

/// Boundary condition of a domain face, on every level (paper, section "Lattice
/// Boltzmann Method"; the rules are in [`ramus_kernels::stream`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Boundary {
    /// Periodic: the opposite face must be periodic too.
    Periodic,
    /// Half-way bounce-back wall moving with `velocity` (lattice units; zero for no-slip).
    /// Second-order accurate for a wall half-way between cell centres.
    Wall {
        /// Wall velocity, tangential to the face (lattice units).
        velocity: [f64; 3],
    },
    /// Velocity inlet or far field: half-way bounce-back with the prescribed `velocity`
    /// (lattice units), which may cross the face, uniform or shaped by `profile` (each
    /// boundary cell of every level takes the profile's value at the face point in front
    /// of it). The same rule as a moving wall (second order in space for the tangential
    /// part; mass enters through the normal part with `ρ_w = 1`).
    Velocity {
        /// Inlet velocity (lattice units); with [`Profile::Parabolic`], the centreline
        /// (largest) value.
        velocity: [f64; 3],
        /// Shape across the face (default uniform; case files: `profile = "parabolic"`).
        #[serde(default)]
        profile: Profile,
    },
    /// Pressure outlet: anti-bounce-back with wall density `density` (1 for the paper's
    /// `p_w = 0`) and the boundary cell's own velocity as the wall velocity, which makes
    /// it first-order accurate (the paper refines the outlet to compensate).
    Pressure {
        /// Density at the face, `1 ± MAX_DENSITY_OFFSET` (default 1).
        #[serde(default = "unit_density")]
        density: f64,
    },
}

fn unit_density() -> f64 {
    1.0
}

impl Boundary {
    /// Resting no-slip wall.
    pub const NO_SLIP: Boundary = Boundary::Wall { velocity: [0.0; 3] };

    /// Wall moving tangentially with `velocity`.
    pub fn moving_wall(velocity: [f64; 3]) -> Self {
        Boundary::Wall { velocity }
    }

    /// Uniform velocity inlet or far field.
    pub fn velocity(velocity: [f64; 3]) -> Self {
        Boundary::Velocity { velocity, profile: Profile::Uniform }
    }

    /// Parabolic velocity inlet with centreline velocity `velocity` ([`Profile::Parabolic`]).
    pub fn parabolic(velocity: [f64; 3]) -> Self {
        Boundary::Velocity { velocity, profile: Profile::Parabolic }
    }

    /// Pressure outlet at the reference density (`ρ_w = 1`, `p_w = 0`).
    pub const OUTLET: Boundary = Boundary::Pressure { density: 1.0 };
}

/// Fluid properties, in lattice units of the root level (Δx = Δt = 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Fluid {
    /// Kinematic viscosity ν directly.
    Viscosity {
        /// ν in root lattice units.
        nu: f64,
    },
    /// Reynolds number `Re = U L / ν` with reference velocity `U` and length `L` (cells).
    Reynolds {
        /// Reynolds number.
        re: f64,
        /// Reference velocity `U` (lattice units).
        velocity: f64,
        /// Reference length `L` (root cells).
        length: f64,
    },
}

impl Fluid {
    /// Kinematic viscosity, validated to be positive and finite.
    pub fn viscosity(&self) -> Result<f64> {
        match *self {
            Fluid::Viscosity { nu } => {
                if nu.is_finite() && nu > 0.0 {
                    Ok(nu)
                } else {
                    Err(Error::invalid("nu", nu, "a finite viscosity > 0"))
                }
            }
            Fluid::Reynolds { re, velocity, length } => {
                if !(re.is_finite() && re > 0.0) {
                    return Err(Error::invalid("re", re, "a finite Reynolds number > 0"));
                }
                if !(velocity.is_finite() && velocity > 0.0) {
                    return Err(Error::invalid("velocity", velocity, "a finite reference velocity > 0"));
                }
                if !(length.is_finite() && length > 0.0) {
                    return Err(Error::invalid("length", length, "a finite reference length > 0"));
                }
                Ok(velocity * length / re)
            }
        }
    }

    /// BGK relaxation time of the root level, `τ = 3ν + 1/2`, validated against
    /// `1/2 + TAU_MARGIN < τ <= MAX_TAU` (see [`MAX_TAU`] for the upper bound).
    pub fn relaxation_time(&self) -> Result<f64> {
        let tau = 3.0 * self.viscosity()? + 0.5;
        if !(tau <= MAX_TAU) {
            return Err(Error::invalid(
                "tau",
                format!("{tau:.6e}"),
                format!(
                    "tau = 3 nu + 1/2 at most {MAX_TAU} on the root level (BGK leaves the hydrodynamic limit and \
                     bounce-back walls move at large tau); raise the Reynolds number, lower the viscosity or \
                     the velocity, or use fewer cells"
                ),
            ));
        }
        if tau <= 0.5 + TAU_MARGIN {
            return Err(Error::invalid(
                "tau",
                format!("{tau:.6}"),
                format!(
                    "tau = 3 nu + 1/2 must exceed {} (BGK is unstable as tau -> 1/2); \
                     at a given Reynolds number nu = U L / Re grows with the cells across L and \
                     with the lattice velocity U (within the Mach limit), or lower the Reynolds number",
                    0.5 + TAU_MARGIN
                ),
            ));
        }
        Ok(tau)
    }
}

/// Configuration of a [`crate::Forest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForestConfig {
    /// Root-level cells per axis (`cells[2]` is ignored in 2D); multiples of 4, at least 8.
    pub cells: [usize; 3],
    /// Boundary of each face, indexed by [`Face::index`].
    pub boundaries: [Boundary; 6],
    /// Fluid viscosity.
    pub fluid: Fluid,
    /// Collision operator (default: BGK, the paper's).
    #[serde(default)]
    pub collision: Collision,
    /// Body force density in root lattice units (default zero; the third component must
    /// be zero in 2D), e.g. a pressure gradient `−∇p` driving a periodic channel, or `ρg`.
    /// Applied on every level by Guo's scheme ([`ramus_kernels::collision`]), as `F/2^L`
    /// in the lattice units of level `L`; output velocities include its half-step part
    /// `F/(2ρ)`. Components must be finite with `|F| ≤` [`MAX_BODY_FORCE`].
    #[serde(default)]
    pub body_force: [f64; 3],
    /// Subgrid model (default none).
    #[serde(default)]
    pub les: Les,
    /// Where to run.
    #[serde(default)]
    pub backend: Backend,
    /// Grid levels and adaptation (default: the uniform root grid).
    #[serde(default)]
    pub refinement: Refinement,
    /// Solid obstacles (built-in shapes; see [`crate::Forest::with_solid`] for any other
    /// geometry).
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// A solid body from an STL file (3D; default none).
    #[serde(default)]
    pub surface: Option<SurfaceBody>,
    /// How links into the obstacles' solid cells bounce back (default: the staircase,
    /// half-way bounce-back).
    #[serde(default)]
    pub walls: Walls,
    /// The stability guard (default: every 100 root steps, Mach limit 1).
    #[serde(default)]
    pub guard: Guard,
}

impl ForestConfig {
    /// A box of `cells` with resting walls on every face, τ = 1, automatic backend.
    pub fn new(cells: [usize; 3]) -> Self {
        ForestConfig {
            cells,
            boundaries: [Boundary::NO_SLIP; 6],
            fluid: Fluid::Viscosity { nu: 1.0 / 6.0 },
            collision: Collision::Bgk,
            body_force: [0.0; 3],
            les: Les::None,
            backend: Backend::Auto,
            refinement: Refinement::default(),
            obstacles: Vec::new(),
            surface: None,
            walls: Walls::Staircase,
            guard: Guard::default(),
        }
    }

    /// Parses a configuration from TOML text (field names as in the struct), e.g.
    ///
    /// ```
    /// let config = ramus::ForestConfig::from_toml(r#"
    ///     cells = [64, 64, 1]
    ///     boundaries = [{ kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0, 0, 0] },
    ///                   { kind = "wall", velocity = [0, 0, 0] }, { kind = "wall", velocity = [0.1, 0, 0] },
    ///                   { kind = "periodic" }, { kind = "periodic" }]
    ///     fluid = { kind = "reynolds", re = 1000, velocity = 0.1, length = 64 }
    ///     [refinement]
    ///     levels = 3
    ///     criterion = { kind = "vorticity", n_start = -3, n_inc = 1 }
    /// "#)?;
    /// assert_eq!(config.refinement.levels, 3);
    /// # Ok::<(), ramus::Error>(())
    /// ```
    ///
    /// Values are checked when the forest is built ([`Self::validate`]).
    pub fn from_toml(text: &str) -> Result<Self> {
        toml::from_str(text).map_err(|e| Error::invalid("configuration", e.message().to_string(), e.to_string()))
    }

    /// The configuration as TOML text that [`Self::from_toml`] reads back unchanged (e.g.
    /// to record the configuration a run actually used).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).map_err(|e| Error::invalid("configuration", "not representable in TOML", e.to_string()))
    }

    /// Reads [`Self::from_toml`] from a file.
    pub fn from_toml_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid("configuration file", path.display(), format!("a readable TOML file ({e})")))?;
        Self::from_toml(&text)
    }

    /// Sets the grid levels and adaptation.
    pub fn refinement(mut self, refinement: Refinement) -> Self {
        self.refinement = refinement;
        self
    }

    /// Sets the number of grid levels.
    pub fn levels(mut self, levels: usize) -> Self {
        self.refinement.levels = levels;
        self
    }

    /// Sets the boundary of one face.
    pub fn boundary(mut self, face: Face, boundary: Boundary) -> Self {
        self.boundaries[face.index()] = boundary;
        self
    }

    /// Sets the fluid.
    pub fn fluid(mut self, fluid: Fluid) -> Self {
        self.fluid = fluid;
        self
    }

    /// Sets the body force density (root lattice units).
    pub fn body_force(mut self, force: [f64; 3]) -> Self {
        self.body_force = force;
        self
    }

    /// Sets the subgrid model.
    pub fn les(mut self, les: Les) -> Self {
        self.les = les;
        self
    }

    /// Sets the collision operator.
    pub fn collision(mut self, collision: Collision) -> Self {
        self.collision = collision;
        self
    }

    /// Adds a solid obstacle.
    pub fn obstacle(mut self, obstacle: impl Into<Obstacle>) -> Self {
        self.obstacles.push(obstacle.into());
        self
    }

    /// Sets the STL body.
    pub fn surface(mut self, surface: SurfaceBody) -> Self {
        self.surface = Some(surface);
        self
    }

    /// Sets the wall rule of the obstacles.
    pub fn walls(mut self, walls: Walls) -> Self {
        self.walls = walls;
        self
    }

    /// Sets the backend.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Checks every field for a forest of dimension `dim`; returns τ of the root level.
    ///
    /// Rejected, each with an [`Error::InvalidParameter`] naming the field: a dimension
    /// other than 2 or 3; cells that are no multiple of 4 or below 8 (the upper bound,
    /// [`crate::amr::MAX_CELLS`], is checked with the memory when the mesh is built); a
    /// periodic face whose
    /// opposite is not; wall or inlet speeds of [`MAX_WALL_SPEED`] or more; a
    /// [`Boundary::Wall`] velocity with a component normal to its face (walls are
    /// impermeable: only [`Boundary::Velocity`] inlets may push fluid through a face);
    /// outlet densities outside `1 ± MAX_DENSITY_OFFSET`; a body force that is not finite,
    /// exceeds [`MAX_BODY_FORCE`] or has a z component in 2D; the collision operator's and
    /// the subgrid model's parameters ([`Collision::validate`], [`Les::validate`]); the
    /// refinement, guard and obstacle values; a root τ outside `(½ + TAU_MARGIN, MAX_TAU]`.
    pub fn validate(&self, dim: usize) -> Result<f64> {
        if dim != 2 && dim != 3 {
            return Err(Error::invalid("dim", dim, "2 or 3"));
        }
        for a in 0..dim {
            let n = self.cells[a];
            if n < 8 || n % 4 != 0 {
                return Err(Error::invalid(
                    "cells",
                    format!("{n} (axis {a})"),
                    "a multiple of 4 (the block edge) and at least 8",
                ));
            }
        }
        for face in Face::ALL.iter().take(2 * dim) {
            let b = self.boundaries[face.index()];
            let opposite = self.boundaries[face.index() ^ 1];
            match b {
                Boundary::Periodic if opposite != Boundary::Periodic => {
                    return Err(Error::invalid(
                        "boundaries",
                        format!("{} periodic, opposite face not", face.name()),
                        "periodic faces come in opposite pairs",
                    ))
                }
                Boundary::Wall { velocity } | Boundary::Velocity { velocity, .. } => {
                    let normal = velocity[face.axis()];
                    if matches!(b, Boundary::Wall { .. }) && !(normal.abs() <= WALL_NORMAL_TOLERANCE) {
                        return Err(Error::invalid(
                            "wall velocity",
                            format!("{velocity:?} on face {} (normal component {normal})", face.name()),
                            format!(
                                "a velocity tangential to the face (component {} = 0): a wall is impermeable; \
                                 use Boundary::Velocity for an inlet",
                                ["x", "y", "z"][face.axis()]
                            ),
                        ));
                    }
                    let speed = velocity.iter().map(|v| v * v).sum::<f64>().sqrt();
                    if !(speed.is_finite() && speed < MAX_WALL_SPEED) {
                        let field = if matches!(b, Boundary::Wall { .. }) { "wall velocity" } else { "inlet velocity" };
                        return Err(Error::invalid(
                            field,
                            format!("|u| = {speed} on face {}", face.name()),
                            format!("a speed below {MAX_WALL_SPEED} (lattice units; Mach number constraint)"),
                        ));
                    }
                }
                Boundary::Pressure { density }
                    if !(density.is_finite() && (density - 1.0).abs() <= MAX_DENSITY_OFFSET) =>
                {
                    return Err(Error::invalid(
                        "outlet density",
                        format!("{density} on face {}", face.name()),
                        format!("a density within 1 ± {MAX_DENSITY_OFFSET} (weakly compressible model)"),
                    ));
                }
                _ => {}
            }
        }
        self.refinement.validate(dim)?;
        self.guard.validate()?;
        self.collision.validate()?;
        self.les.validate()?;
        let f = self.body_force;
        let magnitude = f.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(magnitude.is_finite() && magnitude <= MAX_BODY_FORCE) {
            return Err(Error::invalid(
                "body_force",
                format!("{f:?} (|F| = {magnitude})"),
                format!("finite components with |F| <= {MAX_BODY_FORCE} (root lattice units)"),
            ));
        }
        if dim == 2 && f[2] != 0.0 {
            return Err(Error::invalid("body_force", format!("{f:?}"), "a zero z component in 2D"));
        }
        if self.obstacles.len() > ramus_kernels::obstacle::MAX_SHAPES {
            return Err(Error::invalid(
                "obstacles",
                self.obstacles.len(),
                format!(
                    "at most {} built-in obstacles (use Forest::with_solid for more)",
                    ramus_kernels::obstacle::MAX_SHAPES
                ),
            ));
        }
        let size = [self.cells[0] as f64, self.cells[1] as f64, self.cells[2] as f64];
        for (k, o) in self.obstacles.iter().enumerate() {
            o.validate(k, &size[..dim])?;
        }
        if let Some(s) = &self.surface {
            s.validate(dim)?;
        }
        let tau = self.fluid.relaxation_time()?;
        // Finer levels relax with τ_L − ½ = 2^L (τ_0 − ½) (paper, "Collision"); it only
        // grows with L, so the root level bounds stability.
        Ok(tau)
    }
}

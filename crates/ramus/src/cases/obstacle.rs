//! Flow past a 3D body (issue "Geometry for real flows", item 4): the built-in sphere or
//! an STL body in a channel of square cross-section.
//!
//! The channel is `length · H` long and `H × H` across (`root` root cells across `H`);
//! the body is placed a quarter of the length downstream of the inlet on the centre line
//! and scaled so that its largest extent is `D = H/8` ([`crate::SurfaceBody`]; the
//! built-in sphere has diameter `D`). Uniform inlet `U_0` on the left (velocity
//! bounce-back), free stream `U_0` on the four sides, pressure outlet on the right;
//! `Re = U_0 D / ν`. Blocks within `D / 2^L` of the body are refined on every level `L`
//! and frozen (the paper's wall-distance rule); with `adapt`, the rest follows the
//! vorticity every 32 root steps (`N_start = −3`, `N_inc = −1`, as the square cylinder).
//!
//! Forces are reported as coefficients on the frontal area of a sphere of diameter `D`,
//! `C = F / (½ ρ_0 U_0² π D²/4)`, for any body: drag `C_D` along x, lift `C_L` along y,
//! side force `C_S` along z. Literature for the sphere in an unbounded uniform stream:
//! Johnson & Patel, J. Fluid Mech. 378 (1999) 19: steady axisymmetric flow at Re 100
//! with C_D = 1.087; at Re 300 an unsteady planar-symmetric wake with mean C_D = 0.656
//! (the channel's blockage, `π/256 ≈ 1.2 %` of the cross-section, raises the drag
//! slightly).

use std::f64::consts::PI;
use std::path::PathBuf;

use crate::backend::Backend;
use crate::config::{
    Boundary, Face, Fluid, ForestConfig, Interpolation, Shape, SurfaceBody, WallRefinement, Walls, MAX_WALL_SPEED,
};
use crate::error::{Error, Result};

/// The body in the channel.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Body {
    /// The built-in sphere of diameter `D` ([`Shape::Sphere`]).
    #[default]
    Sphere,
    /// A closed surface from an STL file, scaled to `D`.
    Stl {
        /// The file.
        path: PathBuf,
    },
}

/// The flow past a body in a channel (see the module documentation).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObstacleFlow {
    /// Root-level cells across the channel (a multiple of 32: `D = root/8` a multiple of 4).
    pub root: usize,
    /// Channel length in channel heights (`length · root` a multiple of 4).
    pub length: f64,
    /// Grid levels.
    pub levels: usize,
    /// Reynolds number `U_0 D / ν`.
    pub re: f64,
    /// Inlet speed (lattice units).
    pub u0: f64,
    /// Interpolation to ghost cells and new blocks.
    pub interpolation: Interpolation,
    /// Wall rule on the body.
    pub walls: Walls,
    /// Adapt the wake to the vorticity (else only the frozen refinement near the body).
    pub adapt: bool,
    /// The body.
    pub body: Body,
}

impl Default for ObstacleFlow {
    /// Root 64 (D = 8 root cells), length 4 H, 3 levels (D = 32 finest cells), Re 100,
    /// U_0 = 0.05, linear interpolation, interpolated walls, adaptive wake, the sphere.
    fn default() -> Self {
        ObstacleFlow {
            root: 64,
            length: 4.0,
            levels: 3,
            re: 100.0,
            u0: 0.05,
            interpolation: Interpolation::Linear,
            walls: Walls::Interpolated,
            adapt: true,
            body: Body::Sphere,
        }
    }
}

/// The body's largest extent is the channel height over this.
pub const HEIGHT_IN_D: f64 = 8.0;

impl ObstacleFlow {
    /// `D` in root cells.
    pub fn diameter(&self) -> f64 {
        self.root as f64 / HEIGHT_IN_D
    }

    /// Root cells per axis.
    pub fn cells(&self) -> [usize; 3] {
        [(self.length * self.root as f64).round() as usize, self.root, self.root]
    }

    /// Where the body's centre is (root cells).
    pub fn center(&self) -> [f64; 3] {
        let c = self.cells();
        [c[0] as f64 / 4.0, c[1] as f64 / 2.0, c[2] as f64 / 2.0]
    }

    /// The forest's configuration: checks the case's values.
    pub fn forest_config(&self, backend: Backend) -> Result<ForestConfig> {
        if self.root < 32 || self.root % 32 != 0 {
            return Err(Error::invalid("root", self.root, "a multiple of 32 (D = root/8 a multiple of 4 cells)"));
        }
        let along = self.length * self.root as f64;
        if !(self.length.is_finite() && self.length >= 1.0) || (along - along.round()).abs() > 1e-9 {
            return Err(Error::invalid("length", self.length, "at least 1 channel height, length · root whole"));
        }
        if !(self.re.is_finite() && self.re > 0.0) {
            return Err(Error::invalid("re", self.re, "a finite Reynolds number > 0"));
        }
        if !(self.u0.is_finite() && self.u0 > 0.0 && self.u0 < MAX_WALL_SPEED) {
            return Err(Error::invalid("u0", self.u0, format!("0 < u0 < {MAX_WALL_SPEED} (lattice units)")));
        }
        let d = self.diameter();
        let walls = WallRefinement { faces: vec![], distance: d, obstacles: true };
        let refinement = super::wake_refinement(self.levels, self.interpolation, self.adapt, self.root, walls);
        let stream = Boundary::velocity([self.u0, 0.0, 0.0]);
        let mut config = ForestConfig::new(self.cells())
            .boundary(Face::XMin, stream)
            .boundary(Face::XMax, Boundary::OUTLET)
            .boundary(Face::YMin, stream)
            .boundary(Face::YMax, stream)
            .boundary(Face::ZMin, stream)
            .boundary(Face::ZMax, stream)
            .fluid(Fluid::Reynolds { re: self.re, velocity: self.u0, length: d })
            .refinement(refinement)
            .walls(self.walls)
            .backend(backend);
        config = match &self.body {
            Body::Sphere => config.obstacle(Shape::Sphere { center: self.center(), radius: d / 2.0 }),
            Body::Stl { path } => config.surface(SurfaceBody::new(path, self.center(), d)),
        };
        config.validate(3)?;
        Ok(config)
    }

    /// Initial state: the free stream, with a small transverse kick (`v = U_0/10` in a
    /// Gaussian of width `D`, two diameters behind the body) that lets an unsteady wake
    /// break its symmetry early.
    pub fn initial_state(&self, x: [f64; 3]) -> (f64, [f64; 3]) {
        let d = self.diameter();
        let c = self.center();
        let r2 = ((x[0] - c[0] - 2.0 * d).powi(2) + (x[1] - c[1]).powi(2) + (x[2] - c[2]).powi(2)) / (d * d);
        (1.0, [self.u0, 0.1 * self.u0 * (-r2).exp(), 0.0])
    }

    /// Root steps for a time `t` in `D / U_0`.
    pub fn steps_for(&self, t: f64) -> u64 {
        (t * self.diameter() / self.u0).round() as u64
    }

    /// Time in `D / U_0` after `steps` root steps.
    pub fn time(&self, steps: u64) -> f64 {
        steps as f64 * self.u0 / self.diameter()
    }

    /// `C_D`, `C_L`, `C_S` of a force in root lattice units (see the module documentation).
    pub fn coefficients(&self, force: [f64; 3]) -> [f64; 3] {
        let d = self.diameter();
        let q = 0.5 * self.u0 * self.u0 * PI * d * d / 4.0;
        force.map(|f| f / q)
    }
}

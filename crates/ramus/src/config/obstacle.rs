//! Solid obstacles given as built-in shapes (paper, section "Flow Past a Square Cylinder"),
//! their motion, and the wall rule on their surfaces.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use ramus_kernels::obstacle::{Shapes, SHAPE_BOX, SHAPE_CYLINDER, SHAPE_OUTSIDE, SHAPE_SPHERE};

use super::MAX_WALL_SPEED;
use crate::error::{Error, Result};
use crate::stl::SurfaceMesh;

/// How links from fluid into the solid cells of obstacles bounce back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Walls {
    /// Half-way bounce-back: the wall lies half-way between the last fluid and the first
    /// solid cell centre, a staircase along a curved surface (first order there; second
    /// order for faces aligned with the cells). The paper's rule, and the default.
    #[default]
    Staircase,
    /// Interpolated bounce-back (Bouzidi et al. 2001, [`ramus_kernels::curved`]): each
    /// link's wall at its true distance along the link, second order on curved walls of
    /// the built-in shapes and of an STL body ([`SurfaceBody`]: the distance from its
    /// triangles, [`ramus_kernels::surface`]). Solid cells of user geometry
    /// ([`crate::Forest::with_solid`]) keep the staircase.
    Interpolated,
}

impl std::str::FromStr for Walls {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "staircase" => Ok(Walls::Staircase),
            "interpolated" => Ok(Walls::Interpolated),
            _ => Err(Error::invalid("walls", s, "staircase or interpolated")),
        }
    }
}

/// A lattice axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Along x.
    X,
    /// Along y.
    Y,
    /// Along z, the default: in 2D a cylinder along z is a disc.
    #[default]
    Z,
}

impl Axis {
    /// 0, 1, 2 for x, y, z.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A built-in solid shape, in root cells (the domain spans `[0, cells[a]]` on axis `a`;
/// z is ignored in 2D). A cell is solid when its centre lies inside (closed shapes), on
/// every level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Axis-aligned box from `min` to `max`.
    Box {
        /// Lower corner (root cells).
        min: [f64; 3],
        /// Upper corner (root cells).
        max: [f64; 3],
    },
    /// Sphere (disc in 2D).
    Sphere {
        /// Centre (root cells).
        center: [f64; 3],
        /// Radius (root cells).
        radius: f64,
    },
    /// Circular cylinder along an axis (in 2D, along z: a disc). It may be longer than
    /// the domain along its axis: a cylinder through the domain, also across periodic
    /// faces. (Other shapes must lie inside the domain: they are not repeated across a
    /// periodic face.)
    Cylinder {
        /// Centre (root cells).
        center: [f64; 3],
        /// Radius (root cells).
        radius: f64,
        /// Its axis (default z).
        #[serde(default)]
        axis: Axis,
        /// Length along the axis (root cells; ignored for z in 2D).
        length: f64,
    },
}

/// A solid obstacle: a shape, which side of it is solid, and how its surface moves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    /// Its shape.
    pub shape: Shape,
    /// The solid is outside the shape: a container (the outer cylinder of a
    /// Taylor–Couette cell). Default false.
    #[serde(default)]
    pub outside: bool,
    /// Velocity of the surface (lattice units, the same on every level; default zero).
    /// The shape does not move on the grid: a translation is a wall sliding along itself.
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Angular velocity about the shape's centre (radians per root step; default zero):
    /// a rotating cylinder or sphere. Only `z` in 2D.
    #[serde(default)]
    pub angular_velocity: [f64; 3],
}

impl From<Shape> for Obstacle {
    fn from(shape: Shape) -> Self {
        Obstacle { shape, outside: false, velocity: [0.0; 3], angular_velocity: [0.0; 3] }
    }
}

impl Obstacle {
    /// The solid outside `shape` (a container).
    pub fn outside(shape: Shape) -> Self {
        Obstacle { outside: true, ..shape.into() }
    }

    /// The same obstacle rotating about its centre with `omega` (radians per root step).
    pub fn rotating(self, omega: [f64; 3]) -> Self {
        Obstacle { angular_velocity: omega, ..self }
    }

    /// Whether its surface moves.
    pub fn moves(&self) -> bool {
        self.velocity != [0.0; 3] || self.angular_velocity != [0.0; 3]
    }

    /// Checks the shape ([`Shape::validate`]) and the motion: finite, no velocity out of
    /// the plane in 2D, and a surface speed below [`MAX_WALL_SPEED`] everywhere.
    pub fn validate(&self, k: usize, size: &[f64]) -> Result<()> {
        self.shape.validate(k, size)?;
        let name = format!("obstacles[{k}]");
        let (u, w) = (self.velocity, self.angular_velocity);
        if u.iter().chain(&w).any(|v| !v.is_finite()) {
            return Err(Error::invalid(
                "obstacle motion",
                format!("{name}: velocity {u:?}, angular_velocity {w:?}"),
                "finite components",
            ));
        }
        if size.len() == 2 && (u[2] != 0.0 || w[0] != 0.0 || w[1] != 0.0) {
            return Err(Error::invalid(
                "obstacle motion",
                format!("{name}: velocity {u:?}, angular_velocity {w:?}"),
                "in 2D, zero velocity along z and rotation about z only",
            ));
        }
        // The fastest surface point is at most the shape's reach from its centre away.
        let speed = |v: [f64; 3]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let top = speed(u) + speed(w) * self.shape.reach(size.len());
        if top >= MAX_WALL_SPEED {
            return Err(Error::invalid(
                "obstacle motion",
                format!("{name}: surface speed up to {top}"),
                format!("a surface speed below {MAX_WALL_SPEED} (lattice units)"),
            ));
        }
        Ok(())
    }
}

impl Shape {
    /// Axis-aligned square (2D) or cube of side `side` centred at `center`.
    pub fn square(center: [f64; 3], side: f64) -> Self {
        let h = side / 2.0;
        Shape::Box { min: center.map(|c| c - h), max: center.map(|c| c + h) }
    }

    /// Circle (2D) or sphere.
    pub fn circle(center: [f64; 3], radius: f64) -> Self {
        Shape::Sphere { center, radius }
    }

    /// The largest distance from the shape's centre to a point of it (over `dim` axes).
    fn reach(&self, dim: usize) -> f64 {
        match *self {
            Shape::Box { min, max } => (0..dim).map(|a| (max[a] - min[a]).powi(2) / 4.0).sum::<f64>().sqrt(),
            Shape::Sphere { radius, .. } => radius,
            Shape::Cylinder { radius, axis, length, .. } => {
                if axis.index() < dim {
                    (radius * radius + length * length / 4.0).sqrt()
                } else {
                    radius
                }
            }
        }
    }

    /// Checks that the shape is finite, not empty and inside the domain `size` (root cells,
    /// one entry per axis); `k` is its index, for messages.
    pub fn validate(&self, k: usize, size: &[f64]) -> Result<()> {
        let name = format!("obstacles[{k}]");
        let (lo, hi): (Vec<f64>, Vec<f64>) = match *self {
            Shape::Box { min, max } => {
                for a in 0..size.len() {
                    if !(min[a].is_finite() && max[a].is_finite() && min[a] < max[a]) {
                        return Err(Error::invalid(
                            "obstacle box",
                            format!("{name}: min {:?}, max {:?}", &min[..size.len()], &max[..size.len()]),
                            "finite corners with min < max on every axis",
                        ));
                    }
                }
                (min[..size.len()].to_vec(), max[..size.len()].to_vec())
            }
            Shape::Cylinder { center, radius, axis, length } => {
                let dim = size.len();
                let along = axis.index() < dim;
                if !(radius.is_finite() && radius > 0.0)
                    || center[..dim].iter().any(|c| !c.is_finite())
                    || (along && !(length.is_finite() && length > 0.0))
                {
                    return Err(Error::invalid(
                        "obstacle cylinder",
                        format!("{name}: centre {:?}, radius {radius}, length {length}", &center[..dim]),
                        "a finite centre, a finite radius > 0 and a finite length > 0",
                    ));
                }
                // Along its axis a cylinder may run through the domain (and across a
                // periodic face, where the infinite cylinder is its own image).
                let a = axis.index();
                let lo = |b: usize| if b == a { (center[b] - length / 2.0).max(0.0) } else { center[b] - radius };
                let hi = |b: usize| if b == a { (center[b] + length / 2.0).min(size[b]) } else { center[b] + radius };
                ((0..dim).map(lo).collect(), (0..dim).map(hi).collect())
            }
            Shape::Sphere { center, radius } => {
                if !(radius.is_finite() && radius > 0.0) || center[..size.len()].iter().any(|c| !c.is_finite()) {
                    return Err(Error::invalid(
                        "obstacle sphere",
                        format!("{name}: centre {:?}, radius {radius}", &center[..size.len()]),
                        "a finite centre and a finite radius > 0",
                    ));
                }
                (
                    center[..size.len()].iter().map(|c| c - radius).collect(),
                    center[..size.len()].iter().map(|c| c + radius).collect(),
                )
            }
        };
        for a in 0..size.len() {
            if lo[a] < 0.0 || hi[a] > size[a] {
                return Err(Error::invalid(
                    "obstacle position",
                    format!("{name} spans [{}, {}] on axis {a}", lo[a], hi[a]),
                    format!("inside the domain [0, {}] (root cells)", size[a]),
                ));
            }
        }
        Ok(())
    }
}

/// A closed triangle surface read from an STL file (binary or ASCII), scaled and placed
/// in the domain: a solid body on every level, voxelised on the device
/// ([`ramus_kernels::surface`]), with interpolated walls (q from the triangles) under
/// [`Walls::Interpolated`] and refinement toward it with
/// [`crate::config::WallRefinement::obstacles`]. 3D only; at rest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurfaceBody {
    /// The STL file (read when the forest is built and at a restart).
    pub path: PathBuf,
    /// Where the centre of its bounding box goes (root cells).
    pub center: [f64; 3],
    /// Its largest bounding-box extent after uniform scaling (root cells).
    pub extent: f64,
}

impl SurfaceBody {
    /// The body in `path`, its bounding box centred at `center`, scaled to `extent`.
    pub fn new(path: impl Into<PathBuf>, center: [f64; 3], extent: f64) -> Self {
        SurfaceBody { path: path.into(), center, extent }
    }

    /// Checks the placement: 3D, a finite centre, a finite extent > 0.
    pub fn validate(&self, dim: usize) -> Result<()> {
        if dim != 3 {
            return Err(Error::invalid("surface", format!("a {dim}D lattice"), "a 3D lattice (STL bodies are 3D)"));
        }
        if self.center.iter().any(|c| !c.is_finite()) || !(self.extent.is_finite() && self.extent > 0.0) {
            return Err(Error::invalid(
                "surface",
                format!("center {:?}, extent {}", self.center, self.extent),
                "a finite centre and a finite extent > 0 (root cells)",
            ));
        }
        Ok(())
    }

    /// Reads, checks ([`SurfaceMesh::checked`]) and places the surface, and checks that it
    /// lies inside the domain `size` (root cells).
    pub fn load(&self, size: [f64; 3]) -> Result<SurfaceMesh> {
        let mesh = SurfaceMesh::read(&self.path)?.placed(self.center, self.extent);
        let (lo, hi) = mesh.bounds();
        for a in 0..3 {
            if lo[a] < 0.0 || hi[a] > size[a] {
                return Err(Error::invalid(
                    "surface position",
                    format!("{} spans [{}, {}] on axis {a}", self.path.display(), lo[a], hi[a]),
                    format!("inside the domain [0, {}] (root cells)", size[a]),
                ));
            }
        }
        Ok(mesh)
    }
}

/// The kernels' view of the obstacles.
pub(crate) fn shapes(obstacles: &[Obstacle]) -> Shapes {
    let mut s = Shapes::default();
    for (k, o) in obstacles.iter().enumerate().take(ramus_kernels::obstacle::MAX_SHAPES) {
        let (kind, p) = match o.shape {
            Shape::Box { min, max } => (SHAPE_BOX, [min[0], min[1], min[2], max[0], max[1], max[2]]),
            Shape::Sphere { center: c, radius } => (SHAPE_SPHERE, [c[0], c[1], c[2], radius, 0.0, 0.0]),
            Shape::Cylinder { center: c, radius, axis, length } => {
                (SHAPE_CYLINDER, [c[0], c[1], c[2], radius, axis.index() as f64, length / 2.0])
            }
        };
        s.kind[k] = kind | if o.outside { SHAPE_OUTSIDE } else { 0 };
        s.p[k] = p;
        let (u, w) = (o.velocity, o.angular_velocity);
        s.motion[k] = [u[0], u[1], u[2], w[0], w[1], w[2]];
        s.moving |= o.moves() as u32;
        s.count = k as u32 + 1;
    }
    s
}

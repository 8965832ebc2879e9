//! Solid obstacles given as built-in shapes (paper, section "Flow Past a Square Cylinder").

use serde::{Deserialize, Serialize};

use ramus_kernels::obstacle::{Shapes, SHAPE_BOX, SHAPE_SPHERE};

use crate::error::{Error, Result};

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
}

/// A solid obstacle.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    /// Its shape.
    pub shape: Shape,
}

impl From<Shape> for Obstacle {
    fn from(shape: Shape) -> Self {
        Obstacle { shape }
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

/// The kernels' view of the obstacles.
pub(crate) fn shapes(obstacles: &[Obstacle]) -> Shapes {
    let mut s = Shapes::default();
    for (k, o) in obstacles.iter().enumerate().take(ramus_kernels::obstacle::MAX_SHAPES) {
        let (kind, p) = match o.shape {
            Shape::Box { min, max } => (SHAPE_BOX, [min[0], min[1], min[2], max[0], max[1], max[2]]),
            Shape::Sphere { center: c, radius } => (SHAPE_SPHERE, [c[0], c[1], c[2], radius, 0.0, 0.0]),
        };
        s.kind[k] = kind;
        s.p[k] = p;
        s.count = k as u32 + 1;
    }
    s
}

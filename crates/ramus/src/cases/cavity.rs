//! Lid-driven cavity (paper, section "Lid-Driven Cavity").
//!
//! Unit box of `n` cells per side; no-slip walls; the lid moves with `+x` velocity
//! `lid` (lattice units): the face `y = 1` in 2D, `z = 1` in 3D. `Re = U_lid n / ν`.

use crate::backend::Backend;
use crate::config::{Boundary, Face, Fluid, ForestConfig, MAX_WALL_SPEED};
use crate::error::{Error, Result};

/// Parameters of a lid-driven cavity.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cavity {
    /// 2 or 3.
    pub dim: u32,
    /// Cells per side (multiple of 4, at least 8).
    pub n: usize,
    /// Reynolds number `U_lid n / ν`.
    pub re: f64,
    /// Lid speed in lattice units (below 0.3).
    pub lid: f64,
}

impl Cavity {
    /// Validates the parameters (naming the field at fault) and builds the forest
    /// configuration.
    pub fn forest_config(&self, backend: Backend) -> Result<ForestConfig> {
        if self.dim != 2 && self.dim != 3 {
            return Err(Error::invalid("dim", self.dim, "2 or 3"));
        }
        if self.n < 8 || self.n % 4 != 0 {
            return Err(Error::invalid("n", self.n, "a multiple of 4 (the block edge) and at least 8"));
        }
        if !(self.re.is_finite() && self.re > 0.0) {
            return Err(Error::invalid("re", self.re, "a finite Reynolds number > 0"));
        }
        if !(self.lid.is_finite() && self.lid > 0.0 && self.lid < MAX_WALL_SPEED) {
            return Err(Error::invalid(
                "lid",
                self.lid,
                format!(
                    "0 < lid < {MAX_WALL_SPEED} (lattice units; the weakly compressible LBM needs a small Mach number)"
                ),
            ));
        }
        let lid_face = if self.dim == 2 { Face::YMax } else { Face::ZMax };
        let config = ForestConfig::new([self.n; 3])
            .boundary(lid_face, Boundary::moving_wall([self.lid, 0.0, 0.0]))
            .fluid(Fluid::Reynolds { re: self.re, velocity: self.lid, length: self.n as f64 })
            .backend(backend);
        config.validate(self.dim as usize)?;
        Ok(config)
    }

    /// Root-level time steps for `passes` lid passes (`passes · n / U_lid`).
    pub fn steps_for_passes(&self, passes: f64) -> u64 {
        (passes * self.n as f64 / self.lid).ceil() as u64
    }
}

/// A velocity profile along a line: coordinates in `[0, 1]` and a velocity component
/// divided by the lid speed. The wall end points (where half-way bounce-back puts the
/// walls, exactly at 0 and 1) are included.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Positions along the line, ascending, in `[0, 1]`.
    pub coords: Vec<f64>,
    /// Velocity component / `U_lid` at each position.
    pub values: Vec<f64>,
}

impl Profile {
    /// Linear interpolation at `s ∈ [0, 1]` (constant beyond the end points). A profile
    /// of fewer than two points, or whose `coords` and `values` differ in length, is an
    /// [`Error::InvalidParameter`].
    pub fn at(&self, s: f64) -> Result<f64> {
        let n = self.coords.len();
        if n != self.values.len() {
            return Err(Error::invalid(
                "profile",
                format!("{n} coordinates and {} values", self.values.len()),
                "one value per coordinate",
            ));
        }
        if n < 2 {
            return Err(Error::invalid("profile", format!("{n} points"), "at least 2 points to interpolate between"));
        }
        let k = self.coords.partition_point(|&c| c < s).clamp(1, n - 1);
        let (c0, c1) = (self.coords[k - 1], self.coords[k]);
        let w = if c1 > c0 { ((s - c0) / (c1 - c0)).clamp(0.0, 1.0) } else { 0.0 };
        Ok(self.values[k - 1] * (1.0 - w) + self.values[k] * w)
    }
}

/// The cavity's two centreline profiles.
#[derive(Clone, Debug, PartialEq)]
pub struct Centerlines {
    /// `u/U_lid` along the vertical centreline: against `y` in 2D (x = 0.5), `z` in 3D
    /// (x = y = 0.5).
    pub u: Profile,
    /// 2D: `v/U_lid` against `x` on y = 0.5. 3D: `w/U_lid` against `x` on y = z = 0.5.
    pub v: Profile,
}

impl Cavity {
    /// Centreline profiles from point samples of the velocity (e.g. [`crate::Forest::sample`]
    /// on a refined forest): `points_per_side` points at the centres of a uniform
    /// subdivision of each centreline, plus the wall end points. `sample` maps points (root
    /// cells) to velocities. With `points_per_side = n` on a uniform grid this gives the
    /// same profiles as [`Self::centerlines`].
    pub fn centerlines_sampled<E>(
        &self,
        points_per_side: usize,
        mut sample: impl FnMut(&[[f64; 3]]) -> std::result::Result<Vec<[f64; 3]>, E>,
    ) -> std::result::Result<Centerlines, E> {
        let n = self.n as f64;
        // 2 or 3 (`forest_config` rejects the rest; kept in range here, not a panic).
        let dim = (self.dim as usize).clamp(2, 3);
        let normal = dim - 1;
        let mut line = |along: usize, comp: usize, wall_hi: f64| -> std::result::Result<Profile, E> {
            let coords: Vec<f64> = (0..points_per_side).map(|s| (s as f64 + 0.5) / points_per_side as f64).collect();
            let points: Vec<[f64; 3]> = coords
                .iter()
                .map(|&c| {
                    let mut p = [0.0; 3];
                    for a in 0..dim {
                        p[a] = if a == along { c * n } else { 0.5 * n };
                    }
                    p
                })
                .collect();
            let u = sample(&points)?;
            let mut profile = Profile { coords: vec![0.0], values: vec![0.0] };
            for (c, v) in coords.iter().zip(&u) {
                profile.coords.push(*c);
                profile.values.push(v[comp] / self.lid);
            }
            profile.coords.push(1.0);
            profile.values.push(wall_hi);
            Ok(profile)
        };
        Ok(Centerlines { u: line(normal, 0, 1.0)?, v: line(0, normal, 0.0)? })
    }

    /// Centreline profiles of `fields` (cells averaged across the centre planes: `n` is
    /// even, so the centre lies between two cells). Fields of another grid than this
    /// cavity's root grid (`n` cells per side, `dim` axes) are an
    /// [`Error::InvalidParameter`].
    pub fn centerlines(&self, fields: &crate::Fields) -> Result<Centerlines> {
        let n = self.n;
        let want = if self.dim == 3 { [n, n, n] } else { [n, n, 1] };
        if (self.dim != 2 && self.dim != 3)
            || n < 2
            || fields.dims != want
            || Some(fields.u.len()) != n.checked_pow(self.dim)
        {
            return Err(Error::invalid(
                "fields",
                format!("a grid of {:?} cells with {} velocities", fields.dims, fields.u.len()),
                format!("the cavity's root grid, {want:?} cells"),
            ));
        }
        let h = n / 2;
        let dim = self.dim as usize;
        // Vertical axis (lid normal) and the component along it.
        let normal = dim - 1;
        let mid = [h - 1, h];
        let mean = |along: usize, s: usize, comp: usize| -> f64 {
            let mut sum = 0.0;
            let mut count = 0.0;
            let others: Vec<usize> = (0..dim).filter(|&a| a != along).collect();
            let combos: Vec<[usize; 2]> = if others.len() == 1 {
                mid.iter().map(|&m| [m, 0]).collect()
            } else {
                mid.iter().flat_map(|&m0| mid.iter().map(move |&m1| [m0, m1])).collect()
            };
            for c in combos {
                let mut idx = [0usize; 3];
                idx[along] = s;
                for (k, &a) in others.iter().enumerate() {
                    idx[a] = c[k];
                }
                // In range: the grid's size was checked above.
                sum += fields.velocity(idx[0], idx[1], idx[2]).map_or(f64::NAN, |u| u[comp]);
                count += 1.0;
            }
            sum / count / self.lid
        };
        let profile = |along: usize, comp: usize, wall_hi: f64| {
            let mut coords = vec![0.0];
            let mut values = vec![0.0];
            for s in 0..n {
                coords.push((s as f64 + 0.5) / n as f64);
                values.push(mean(along, s, comp));
            }
            coords.push(1.0);
            values.push(wall_hi);
            Profile { coords, values }
        };
        Ok(Centerlines { u: profile(normal, 0, 1.0), v: profile(0, normal, 0.0) })
    }
}

//! Velocity profiles of inlet faces ([`super::Boundary::Velocity`]): uniform or parabolic
//! from the configuration; any function of position through
//! [`crate::Forest::set_inlet_profile`].

use serde::{Deserialize, Serialize};

use super::{Boundary, Face};

/// The shape of a velocity inlet across its face.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Profile {
    /// The same velocity at every point of the face.
    #[default]
    Uniform,
    /// Fully developed laminar profile: the inlet velocity is the centreline (largest)
    /// value, multiplied by `4 s (1 − s)` (`s` the position across the face in units of
    /// the domain width) along every axis of the face whose faces are not periodic — the
    /// Poiseuille profile of a plane channel (one such axis; mean velocity 2/3 of the
    /// peak), and the usual product approximation of a rectangular duct's (two axes; the
    /// duct's exact profile, a series, develops downstream).
    Parabolic,
}

/// The velocity of the inlet on `face` at point `x` (root cells) for a domain of `cells`
/// root cells with `boundaries` in `dim` dimensions: `velocity` scaled by `profile`.
pub fn profile_velocity(
    profile: Profile,
    velocity: [f64; 3],
    face: Face,
    x: [f64; 3],
    cells: [usize; 3],
    boundaries: &[Boundary; 6],
    dim: usize,
) -> [f64; 3] {
    match profile {
        Profile::Uniform => velocity,
        Profile::Parabolic => {
            let mut scale = 1.0;
            for a in 0..dim {
                if a == face.axis() || boundaries[2 * a] == Boundary::Periodic {
                    continue;
                }
                let s = x[a] / cells[a] as f64;
                scale *= 4.0 * s * (1.0 - s);
            }
            velocity.map(|v| v * scale)
        }
    }
}

//! PTX entry points of the obstacle kernels (see `crate::obstacle`), named after
//! `Kernel::NAME` / `Kernel::SUFFIX`.

use super::thread_index;
use crate::lattice::{D2, D2Q9, D3, D3Q19, D3Q27};
use crate::obstacle::{MarkObstacleDistance, ObstacleForce, SolidFlags, SolidMask};

kernel_entries!(
    solid_mask_d2 => SolidMask<D2>,
    solid_mask_d3 => SolidMask<D3>,
    solid_flags_d2 => SolidFlags<D2>,
    solid_flags_d3 => SolidFlags<D3>,
    mark_obstacle_distance_d2 => MarkObstacleDistance<D2>,
    mark_obstacle_distance_d3 => MarkObstacleDistance<D3>,
    obstacle_force_d2q9_f32 => ObstacleForce<D2Q9, f32>,
    obstacle_force_d2q9_f64 => ObstacleForce<D2Q9, f64>,
    obstacle_force_d3q19_f32 => ObstacleForce<D3Q19, f32>,
    obstacle_force_d3q19_f64 => ObstacleForce<D3Q19, f64>,
    obstacle_force_d3q27_f32 => ObstacleForce<D3Q27, f32>,
    obstacle_force_d3q27_f64 => ObstacleForce<D3Q27, f64>,
);

//! PTX entry points of the grid-communication kernels (see `crate::interpolate` and
//! `crate::average`): per (velocity set, precision) and coarse-level AA parity, named
//! `interpolate_<linear|cubic>_<even|odd>_<suffix>` and `average_<even|odd>_<suffix>`
//! after `Kernel::NAME` / `Kernel::SUFFIX`.

use super::thread_index;
use crate::average::AverageToParents;
use crate::interpolate::{InterpolateChildren, InterpolateGhosts, RescaleParents};
use crate::lattice::{D2, D2Q9, D3, D3Q19, D3Q27};
use crate::schedule::{ExpandChildren, FlagBlocks};

kernel_entries!(
    interpolate_linear_even_d2q9_f32 => InterpolateChildren<D2Q9, f32, false, false>,
    interpolate_cubic_even_d2q9_f32 => InterpolateChildren<D2Q9, f32, false, true>,
    average_even_d2q9_f32 => AverageToParents<D2Q9, f32, false>,
    interpolate_linear_odd_d2q9_f32 => InterpolateChildren<D2Q9, f32, true, false>,
    interpolate_cubic_odd_d2q9_f32 => InterpolateChildren<D2Q9, f32, true, true>,
    average_odd_d2q9_f32 => AverageToParents<D2Q9, f32, true>,
    interpolate_linear_even_d2q9_f64 => InterpolateChildren<D2Q9, f64, false, false>,
    interpolate_cubic_even_d2q9_f64 => InterpolateChildren<D2Q9, f64, false, true>,
    average_even_d2q9_f64 => AverageToParents<D2Q9, f64, false>,
    interpolate_linear_odd_d2q9_f64 => InterpolateChildren<D2Q9, f64, true, false>,
    interpolate_cubic_odd_d2q9_f64 => InterpolateChildren<D2Q9, f64, true, true>,
    average_odd_d2q9_f64 => AverageToParents<D2Q9, f64, true>,
    interpolate_linear_even_d3q19_f32 => InterpolateChildren<D3Q19, f32, false, false>,
    interpolate_cubic_even_d3q19_f32 => InterpolateChildren<D3Q19, f32, false, true>,
    average_even_d3q19_f32 => AverageToParents<D3Q19, f32, false>,
    interpolate_linear_odd_d3q19_f32 => InterpolateChildren<D3Q19, f32, true, false>,
    interpolate_cubic_odd_d3q19_f32 => InterpolateChildren<D3Q19, f32, true, true>,
    average_odd_d3q19_f32 => AverageToParents<D3Q19, f32, true>,
    interpolate_linear_even_d3q19_f64 => InterpolateChildren<D3Q19, f64, false, false>,
    interpolate_cubic_even_d3q19_f64 => InterpolateChildren<D3Q19, f64, false, true>,
    average_even_d3q19_f64 => AverageToParents<D3Q19, f64, false>,
    interpolate_linear_odd_d3q19_f64 => InterpolateChildren<D3Q19, f64, true, false>,
    interpolate_cubic_odd_d3q19_f64 => InterpolateChildren<D3Q19, f64, true, true>,
    average_odd_d3q19_f64 => AverageToParents<D3Q19, f64, true>,
    interpolate_linear_even_d3q27_f32 => InterpolateChildren<D3Q27, f32, false, false>,
    interpolate_cubic_even_d3q27_f32 => InterpolateChildren<D3Q27, f32, false, true>,
    average_even_d3q27_f32 => AverageToParents<D3Q27, f32, false>,
    interpolate_linear_odd_d3q27_f32 => InterpolateChildren<D3Q27, f32, true, false>,
    interpolate_cubic_odd_d3q27_f32 => InterpolateChildren<D3Q27, f32, true, true>,
    average_odd_d3q27_f32 => AverageToParents<D3Q27, f32, true>,
    interpolate_linear_even_d3q27_f64 => InterpolateChildren<D3Q27, f64, false, false>,
    interpolate_cubic_even_d3q27_f64 => InterpolateChildren<D3Q27, f64, false, true>,
    average_even_d3q27_f64 => AverageToParents<D3Q27, f64, false>,
    interpolate_linear_odd_d3q27_f64 => InterpolateChildren<D3Q27, f64, true, false>,
    interpolate_cubic_odd_d3q27_f64 => InterpolateChildren<D3Q27, f64, true, true>,
    average_odd_d3q27_f64 => AverageToParents<D3Q27, f64, true>,
);

kernel_entries!(
    expand_children_d2 => ExpandChildren<D2>,
    expand_children_d3 => ExpandChildren<D3>,
    flag_blocks => FlagBlocks,
);

kernel_entries!(
    rescale_parents_even_d2q9_f32 => RescaleParents<D2Q9, f32, false>,
    rescale_parents_odd_d2q9_f32 => RescaleParents<D2Q9, f32, true>,
    interpolate_ghosts_linear_d2q9_f32 => InterpolateGhosts<D2Q9, f32, false>,
    interpolate_ghosts_cubic_d2q9_f32 => InterpolateGhosts<D2Q9, f32, true>,
    rescale_parents_even_d2q9_f64 => RescaleParents<D2Q9, f64, false>,
    rescale_parents_odd_d2q9_f64 => RescaleParents<D2Q9, f64, true>,
    interpolate_ghosts_linear_d2q9_f64 => InterpolateGhosts<D2Q9, f64, false>,
    interpolate_ghosts_cubic_d2q9_f64 => InterpolateGhosts<D2Q9, f64, true>,
    rescale_parents_even_d3q19_f32 => RescaleParents<D3Q19, f32, false>,
    rescale_parents_odd_d3q19_f32 => RescaleParents<D3Q19, f32, true>,
    interpolate_ghosts_linear_d3q19_f32 => InterpolateGhosts<D3Q19, f32, false>,
    interpolate_ghosts_cubic_d3q19_f32 => InterpolateGhosts<D3Q19, f32, true>,
    rescale_parents_even_d3q19_f64 => RescaleParents<D3Q19, f64, false>,
    rescale_parents_odd_d3q19_f64 => RescaleParents<D3Q19, f64, true>,
    interpolate_ghosts_linear_d3q19_f64 => InterpolateGhosts<D3Q19, f64, false>,
    interpolate_ghosts_cubic_d3q19_f64 => InterpolateGhosts<D3Q19, f64, true>,
    rescale_parents_even_d3q27_f32 => RescaleParents<D3Q27, f32, false>,
    rescale_parents_odd_d3q27_f32 => RescaleParents<D3Q27, f32, true>,
    interpolate_ghosts_linear_d3q27_f32 => InterpolateGhosts<D3Q27, f32, false>,
    interpolate_ghosts_cubic_d3q27_f32 => InterpolateGhosts<D3Q27, f32, true>,
    rescale_parents_even_d3q27_f64 => RescaleParents<D3Q27, f64, false>,
    rescale_parents_odd_d3q27_f64 => RescaleParents<D3Q27, f64, true>,
    interpolate_ghosts_linear_d3q27_f64 => InterpolateGhosts<D3Q27, f64, false>,
    interpolate_ghosts_cubic_d3q27_f64 => InterpolateGhosts<D3Q27, f64, true>,
);

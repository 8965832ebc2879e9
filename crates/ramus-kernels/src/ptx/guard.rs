//! PTX entry points of the stability guard ([`crate::guard::GuardCheck`]), per (velocity
//! set, precision) and AA parity.

use super::thread_index;
use crate::guard::GuardCheck;
use crate::lattice::{D2Q9, D3Q19, D3Q27};

kernel_entries!(
    guard_check_even_d2q9_f32 => GuardCheck<D2Q9, f32, false>,
    guard_check_odd_d2q9_f32 => GuardCheck<D2Q9, f32, true>,
    guard_check_even_d2q9_f64 => GuardCheck<D2Q9, f64, false>,
    guard_check_odd_d2q9_f64 => GuardCheck<D2Q9, f64, true>,
    guard_check_even_d3q19_f32 => GuardCheck<D3Q19, f32, false>,
    guard_check_odd_d3q19_f32 => GuardCheck<D3Q19, f32, true>,
    guard_check_even_d3q19_f64 => GuardCheck<D3Q19, f64, false>,
    guard_check_odd_d3q19_f64 => GuardCheck<D3Q19, f64, true>,
    guard_check_even_d3q27_f32 => GuardCheck<D3Q27, f32, false>,
    guard_check_odd_d3q27_f32 => GuardCheck<D3Q27, f32, true>,
    guard_check_even_d3q27_f64 => GuardCheck<D3Q27, f64, false>,
    guard_check_odd_d3q27_f64 => GuardCheck<D3Q27, f64, true>,
);

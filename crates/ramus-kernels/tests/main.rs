//! The kernels' tests against the pure functions and the paper's formulas, one module per
//! file of `tests/`, in one test binary (one link, and the generics the files share
//! compiled once). A file's tests: `cargo test --release -p ramus-kernels --test kernels
//! interpolate::`.

mod collision;
mod criterion;
mod interpolate;
mod lattice;
mod level_groups;
mod mrt;
mod remove;
mod store_cell;

//! The integration tests of the workspace, one module per file of `tests/`, in one test
//! binary: each binary would compile the forest and solver generics again (release builds
//! do not share generic instances across crates), so one binary instead of 26 keeps the
//! README's test command within its time. Run one file's tests with its module name as
//! the filter: `cargo test --release --test integration cavity_ghia::`.
//!
//! The `gpu*` modules need a CUDA device and are ignored; `scripts/gpu-check.sh run` runs
//! them module by module (`integration --ignored gpu_multilevel::`).

mod adaptive;
mod amr_output;
mod api_errors;
mod boundaries;
mod case_files;
mod cavity_ghia;
mod checkpoint;
mod config_errors;
mod couette;
mod cylinder;
mod example_runs;
mod forest_api;
mod forest_example;
mod gpu;
mod gpu_adapt;
mod gpu_cylinder;
mod gpu_multilevel;
mod gpu_primitives;
mod gpu_sphere;
mod gpu_storage;
mod gpu_surface;
mod gpu_taylor_green;
mod gpu_trust;
mod guard;
mod guide;
mod inlet_profile;
mod mass;
mod multilevel;
mod poiseuille;
mod shapes;
mod stl;
mod taylor_couette;
mod taylor_green;

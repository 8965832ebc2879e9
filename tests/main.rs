//! The integration tests of the workspace, one module per file of `tests/`, in one test
//! binary: each binary would compile the forest and solver generics again (release builds
//! do not share generic instances across crates), so one binary instead of 26 keeps the
//! README's test command within its time. Run one file's tests with its module name as
//! the filter: `cargo test --release --test integration cavity_ghia::`.
//!
//! The `gpu*` modules need a CUDA device: they are compiled only with the `gpu-tests`
//! feature (their forests of every lattice, precision and storage would add minutes to
//! the README's test command, which could only ignore them) and `#[ignore]`d;
//! `scripts/gpu-check.sh` builds them and runs them module by module
//! (`integration --ignored gpu_multilevel::`); CI's clippy checks them.

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
#[cfg(feature = "gpu-tests")]
mod gpu;
#[cfg(feature = "gpu-tests")]
mod gpu_adapt;
#[cfg(feature = "gpu-tests")]
mod gpu_cylinder;
#[cfg(feature = "gpu-tests")]
mod gpu_multilevel;
#[cfg(feature = "gpu-tests")]
mod gpu_primitives;
#[cfg(feature = "gpu-tests")]
mod gpu_sphere;
#[cfg(feature = "gpu-tests")]
mod gpu_storage;
#[cfg(feature = "gpu-tests")]
mod gpu_surface;
#[cfg(feature = "gpu-tests")]
mod gpu_taylor_green;
#[cfg(feature = "gpu-tests")]
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

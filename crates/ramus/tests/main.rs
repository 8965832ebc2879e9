//! The host crate's integration tests, one module per file, in one test binary (see the
//! workspace's `tests/main.rs` for why). One file's tests:
//! `cargo test -p ramus --release --test integration plots::`.

/// The seeded random numbers the property tests share.
#[path = "common/splitmix.rs"]
mod splitmix;

mod adapt;
mod backend;
mod block_data;
mod check;
mod forest_props;
mod plots;
mod primitives;
mod ptx;

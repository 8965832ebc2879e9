//! PTX entry points of the AMR routine's kernels (see `crate::amr`).

//! PTX entry points of the parallel primitives (see `crate::primitives`).

//! Ready-made set-ups of the paper's test cases (section "Validation and Case Studies").

pub mod cavity;
pub mod cylinder;
pub mod ghia;
pub mod shedding;

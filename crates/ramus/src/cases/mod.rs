//! Ready-made set-ups of the paper's test cases (section "Validation and Case Studies")
//! and of the validation cases beyond it (the Taylor–Green vortex).

pub mod cavity;
pub mod cylinder;
pub mod ghia;
pub mod obstacle;
pub mod shedding;
pub mod taylor_green;
pub mod taylor_green_dns;

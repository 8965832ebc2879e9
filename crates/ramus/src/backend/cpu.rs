//! CPU backend: kernels run through rayon over host memory (see [`super::Device`]).

/// "CPU (N threads)".
pub(crate) fn device_name() -> String {
    format!("CPU ({} threads)", rayon::current_num_threads())
}

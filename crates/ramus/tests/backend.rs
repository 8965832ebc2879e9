//! Backend selection: `Auto` falls back to the CPU, and asking for CUDA where no GPU can
//! be used is an error, never a panic or a hang.

use std::time::{Duration, Instant};

use ramus::{cuda_available, Backend, Error, Forest, ForestConfig, D2, D2Q9};

#[test]
fn cuda_without_a_gpu_is_a_clear_error() {
    if cuda_available() {
        eprintln!("a CUDA device is present: this test checks machines without one");
        return;
    }
    let start = Instant::now();
    let result = Forest::<D2, D2Q9, f32>::new(ForestConfig::new([16, 16, 0]).backend(Backend::Cuda));
    assert!(start.elapsed() < Duration::from_secs(10), "asking for CUDA took {:?}", start.elapsed());
    match result {
        Err(e @ Error::CudaUnavailable(_)) => assert!(e.to_string().contains("CUDA backend unavailable"), "{e}"),
        Err(e) => panic!("expected CudaUnavailable, got {e}"),
        Ok(_) => panic!("a CUDA forest was built although no CUDA device is usable"),
    }
}

#[test]
fn auto_falls_back_to_the_cpu() {
    let forest = Forest::<D2, D2Q9, f64>::new(ForestConfig::new([16, 16, 0])).expect("an Auto forest always builds");
    if !cuda_available() {
        assert_eq!(forest.backend(), Backend::Cpu);
    } else {
        assert_eq!(forest.backend(), Backend::Cuda);
    }
}

#[test]
fn backend_names_parse() {
    assert_eq!("cpu".parse::<Backend>().unwrap(), Backend::Cpu);
    assert_eq!("CUDA".parse::<Backend>().unwrap(), Backend::Cuda);
    assert_eq!("auto".parse::<Backend>().unwrap(), Backend::Auto);
    let e = "tpu".parse::<Backend>().unwrap_err();
    assert!(e.to_string().contains("backend"), "{e}");
}

/// Sizes no machine can hold are an error, not an abort in the allocator.
#[test]
fn huge_configurations_are_out_of_memory_errors() {
    use ramus::amr::{Capacity, Mesh, MeshSpec};
    use ramus::backend::Device;
    use ramus::{Boundary, D3};

    let forest = Forest::<D2, D2Q9, f64>::new(ForestConfig::new([1 << 22, 1 << 22, 0]).backend(Backend::Cpu));
    assert!(matches!(forest, Err(Error::OutOfMemory { .. })), "{:?}", forest.err());

    let spec = |cells, blocks| MeshSpec {
        cells,
        boundaries: [Boundary::NO_SLIP; 6],
        max_levels: 4,
        capacity: Capacity::Blocks { blocks },
    };
    let mesh = Mesh::<D3>::new(Device::Cpu, spec([16; 3], usize::MAX / 2), 0);
    assert!(matches!(mesh, Err(Error::OutOfMemory { .. })), "{:?}", mesh.err().map(|e| e.to_string()));
    let mesh = Mesh::<D3>::new(Device::Cpu, spec([1 << 20; 3], 1 << 20), 0);
    assert!(matches!(mesh, Err(Error::OutOfMemory { .. })), "{:?}", mesh.err().map(|e| e.to_string()));
}

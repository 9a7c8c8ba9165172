//! The driver's own copy, the device roofline's reference, on the default adapter.

use cartfuse::fusion::cube::driver_copy::wgpu_copy;

#[test]
fn the_driver_copy_counts_read_and_write_and_measures_a_bandwidth() {
    let copy = wgpu_copy(1 << 20).expect("the default adapter copies");
    assert_eq!(copy.bytes, 2 << 20);
    assert!(copy.call.contains("vkCmdCopyBuffer"), "{}", copy.call);
    assert!(
        copy.gbps.is_finite() && copy.gbps > 0.0,
        "bandwidth {}",
        copy.gbps
    );
}

#[test]
fn a_copy_of_nothing_is_refused() {
    let error = wgpu_copy(3).expect_err("3 bytes round down to none");
    assert!(error.contains("no bytes"), "{error}");
}

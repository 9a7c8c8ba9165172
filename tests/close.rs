//! Float slices compared within an absolute tolerance, element by element.

/// Asserts `a` and `b` have the same length and differ by at most `tolerance` everywhere;
/// the message names `what` and the first index that does not.
pub fn assert_close(what: &str, a: &[f32], b: &[f32], tolerance: f32) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= tolerance, "{what}[{i}]: {x} vs {y}");
    }
}

//! A measured bandwidth against the copy roof of the same run, in words: a share where it is
//! below the roof, and where it is above, why (the working set fits the last-level cache,
//! so it is served from cache, not memory), instead of a percentage over 100.

use super::table::bytes;

/// `gbps` against the copy roof `roof_gbps` (the faster copy) measured in the same run, for a step whose
/// working set is `working_set` bytes on a device whose last-level cache holds `cache`
/// bytes (`None`: unknown): `"87% of the 12.34 GB/s copy roof measured above"`, or
/// above the roof, the ratio and its reason.
pub fn share_of_copy(gbps: f64, roof_gbps: f64, working_set: f64, cache: Option<u64>) -> String {
    let roof = format!("the {roof_gbps:.2} GB/s copy roof measured above");
    let ratio = gbps / roof_gbps;
    if ratio <= 1.0 {
        return format!("{:.0}% of {roof}", 100.0 * ratio);
    }
    let why = match cache {
        Some(cache) if working_set <= cache as f64 => format!(
            "its {} working set fits the {} last-level cache, so it is read from the cache, \
             not from memory, and the copy roof (buffers far larger than the cache) does not \
             bound it",
            bytes(working_set),
            bytes(cache as f64)
        ),
        Some(cache) => format!(
            "although its {} working set is larger than the {} last-level cache: the copy \
             reference understates what this device moves",
            bytes(working_set),
            bytes(cache as f64)
        ),
        None => format!(
            "with a {} working set; the last-level cache's size is not known here, so whether \
             the cache serves it is not measured",
            bytes(working_set)
        ),
    };
    format!("above {roof} ({ratio:.2}x of it): {why}")
}

#[cfg(test)]
mod tests {
    use super::share_of_copy;

    #[test]
    fn below_the_roof_is_a_share() {
        assert_eq!(
            share_of_copy(8.7, 10.0, 1e9, Some(1 << 20)),
            "87% of the 10.00 GB/s copy roof measured above"
        );
    }

    #[test]
    fn above_the_roof_says_why_instead_of_a_share_over_100() {
        let cached = share_of_copy(12.7, 10.0, 4e6, Some(32 << 20));
        assert!(cached.starts_with("above the 10.00 GB/s copy roof measured above (1.27x"));
        assert!(
            cached.contains("fits the 33.554 MB last-level cache"),
            "{cached}"
        );
        assert!(!cached.contains('%'), "{cached}");
        let uncached = share_of_copy(12.7, 10.0, 4e9, Some(32 << 20));
        assert!(uncached.contains("understates"), "{uncached}");
        let unknown = share_of_copy(12.7, 10.0, 4e9, None);
        assert!(unknown.contains("not measured"), "{unknown}");
    }
}

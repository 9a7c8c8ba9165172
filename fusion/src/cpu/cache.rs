//! The host's last-level cache size, read from Linux's sysfs
//! (`/sys/devices/system/cpu/cpu0/cache/index*/`): the largest `size` among the cache
//! levels listed. `None` where sysfs does not say (other systems, some containers).

use std::path::Path;
use std::sync::OnceLock;

/// Bytes of the largest cache `cpu0` reports, if any (read once per process: every CPU
/// executor asks).
pub fn last_level_cache_bytes() -> Option<u64> {
    static BYTES: OnceLock<Option<u64>> = OnceLock::new();
    *BYTES.get_or_init(|| {
        let dir = Path::new("/sys/devices/system/cpu/cpu0/cache");
        (std::fs::read_dir(dir).ok()?)
            .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path().join("size")).ok())
            .filter_map(|size| parse_size(size.trim()))
            .max()
    })
}

/// `"32768K"`, `"1M"` or `"512"` (bytes) as bytes.
fn parse_size(text: &str) -> Option<u64> {
    let at = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(at);
    let scale = match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok().map(|v| v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("12Q"), None);
        assert_eq!(parse_size(""), None);
    }
}

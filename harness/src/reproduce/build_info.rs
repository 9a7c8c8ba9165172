//! What names the run in its report: the adapter's name, and the versions this binary was
//! built with.

/// The adapter's name from a device description `"NAME (TYPE, DRIVER INFO)"` (the format
/// of `cartfuse_fusion::device`), or the whole description when it has another form.
pub fn adapter_name(description: &str) -> &str {
    ["Cpu", "IntegratedGpu", "DiscreteGpu", "VirtualGpu", "Other"]
        .iter()
        .find_map(|kind| description.find(&format!(" ({kind}, ")))
        .map_or(description, |end| &description[..end])
}

/// The workspace's lock file, read at build time: the versions this binary was built with.
const CARGO_LOCK: &str = include_str!("../../../Cargo.lock");

/// Versions of this build: cartfuse's own (`CARGO_PKG_VERSION`) and the cubecl, burn and
/// wgpu packages resolved in `Cargo.lock` when it was compiled.
pub fn build_versions() -> Vec<(String, String)> {
    let mut versions = vec![(
        "cartfuse".to_string(),
        env!("CARGO_PKG_VERSION").to_string(),
    )];
    for package in ["cubecl", "burn", "wgpu"] {
        let found = locked_versions(CARGO_LOCK, package);
        if !found.is_empty() {
            versions.push((package.to_string(), found.join(" + ")));
        }
    }
    versions
}

/// Every version of `package` in a `Cargo.lock`.
fn locked_versions(lock: &str, package: &str) -> Vec<String> {
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    let mut found = Vec::new();
    while let Some(line) = lines.next() {
        if line.trim() == name
            && let Some(version) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
        {
            found.push(version.trim_matches('"').to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_the_lock_file() {
        let lock = "[[package]]\nname = \"burn\"\nversion = \"0.21.0\"\n\n[[package]]\nname = \"burn-ir\"\nversion = \"0.9.0\"\n";
        assert_eq!(locked_versions(lock, "burn"), ["0.21.0"]);
        let versions = build_versions();
        assert_eq!(
            versions[0],
            ("cartfuse".into(), env!("CARGO_PKG_VERSION").into())
        );
        assert!(versions.iter().any(|(name, _)| name == "cubecl"));
        assert!(versions.iter().any(|(name, _)| name == "burn"));
    }

    #[test]
    fn adapter_name_strips_type_and_driver() {
        assert_eq!(
            adapter_name(
                "llvmpipe (LLVM 19.1.7, 256 bits) (Cpu, llvmpipe Mesa 25.0.7 (LLVM 19.1.7))"
            ),
            "llvmpipe (LLVM 19.1.7, 256 bits)"
        );
        assert_eq!(adapter_name("CUDA device 0"), "CUDA device 0");
    }
}

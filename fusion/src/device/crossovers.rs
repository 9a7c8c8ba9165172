//! Crossovers measured on this machine, kept for the automatic device choice.
//!
//! `cartfuse crossover` times the CPU's host step against a device's and keeps, per device,
//! the smallest batch from which the device wins ([`keep`]); `auto` then picks the CPU below
//! it ([`super::FoundDevice::for_envs`]). They live in `crossovers.json` under
//! `$XDG_CACHE_HOME/cartfuse` (else `~/.cache/cartfuse`), keyed by runtime and adapter
//! ([`key`]), so a machine measured once chooses by its own numbers from then on.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::RuntimeKind;

/// What one crossover measurement found for one device.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeptCrossover {
    /// The device as the measurement named it.
    pub device: String,
    /// The plan timed on both sides.
    pub plan: String,
    /// The smallest batch from which the device's host step beat the CPU's at every larger
    /// size measured; `None` when it never did.
    pub host_from: Option<usize>,
    /// The largest batch measured.
    pub largest_measured: usize,
    /// When it was measured, in seconds since the Unix epoch.
    pub measured_at_unix_s: u64,
}

impl KeptCrossover {
    /// The smallest batch the device should step: `host_from`, or one past the largest
    /// measured when the device never won.
    pub fn min_envs(&self) -> usize {
        self.host_from.unwrap_or(self.largest_measured + 1)
    }
}

/// The file crossovers are kept in.
pub fn path() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("cartfuse").join("crossovers.json")
}

/// The key of a device: its runtime and its adapter's name (the part of a description
/// before any parenthesis), which `auto` knows without opening the device.
pub fn key(runtime: RuntimeKind, adapter: &str) -> String {
    let name = adapter.split(" (").next().unwrap_or(adapter).trim();
    format!("{runtime}: {name}")
}

fn read_all() -> BTreeMap<String, KeptCrossover> {
    std::fs::read_to_string(path())
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// The crossover kept for `key`, if one was measured.
pub fn kept(key: &str) -> Option<KeptCrossover> {
    read_all().remove(key)
}

/// Keeps `crossover` for `key` (replacing an earlier one) and returns the file's path.
pub fn keep(key: &str, crossover: KeptCrossover) -> std::io::Result<PathBuf> {
    let mut all = read_all();
    all.insert(key.to_owned(), crossover);
    let path = path();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
    std::fs::write(&path, text)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_keyed_by_runtime_and_adapter_name() {
        assert_eq!(
            key(
                RuntimeKind::Wgpu,
                "llvmpipe (LLVM 19.1.7, 256 bits) (Cpu, llvmpipe Mesa)"
            ),
            "wgpu: llvmpipe"
        );
        assert_eq!(
            key(RuntimeKind::Cuda, "CUDA device 0"),
            "cuda: CUDA device 0"
        );
        let kept = |host_from| KeptCrossover {
            device: "GPU".into(),
            plan: "fused".into(),
            host_from,
            largest_measured: 4096,
            measured_at_unix_s: 0,
        };
        assert_eq!(kept(Some(1024)).min_envs(), 1024);
        assert_eq!(kept(None).min_envs(), 4097);
    }
}

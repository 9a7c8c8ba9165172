//! Memory checked before it is taken: the bytes a batch's buffers need, against the memory
//! the process can still have.
//!
//! [`VecEnv::build`](crate::VecEnv::build) refuses a batch that would not fit
//! ([`EnvError::OutOfMemory`]) before it allocates anything, instead of being killed by the
//! kernel's OOM killer or aborting on a failed allocation halfway through.
//!
//! The host's available memory comes from `sysinfo` (Linux, macOS, Windows: the OS's own
//! "available" figure, which counts reclaimable caches), lowered to what a cgroup memory
//! limit (containers) and, on Unix, an address-space limit (`ulimit -v`) leave.

use sysinfo::{MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use crate::engine::{StepPlan, layout_for};
use crate::environment::{EpisodeOptions, GraphEnv};
use crate::error::EnvError;
use crate::graph::{StateLayout, reset_graph, step_graph};
use cartfuse_fusion::graph::{Graph, Shape};
use cartfuse_fusion::plan::{PlannedKernel, Slot};

/// Bytes one env's buffers take at the least under `plan`: one 32-bit word per lane and
/// component of every input and output of the step and reset graphs, a second buffer per
/// carried input (its next value), actions and outputs once per step of a call.
/// Intermediates a plan keeps in memory (`eager`'s) come on top.
pub fn bytes_per_env<E: GraphEnv>(env: &E, episode: &EpisodeOptions, plan: StepPlan) -> u64 {
    let layout = plan
        .strategy()
        .map_or(StateLayout::StructOfArrays, layout_for);
    let steps = u64::from(plan.steps_per_call());
    let step = step_graph(env, episode.autoreset, layout);
    let reset = reset_graph(env, layout);
    let words = |graph: &Graph, per_step: u64| {
        let width = |node| match graph.node(node).shape {
            Shape::Lanes => 1,
            Shape::Packed(k) => u64::from(k),
        };
        // A carried input (or a per-lane constant) is read once a call; the others
        // (actions) once per step.
        let inputs: u64 = (graph.inputs().iter())
            .map(
                |(id, _)| match PlannedKernel::is_per_step(graph, Slot::Input(*id)) {
                    true => width(*id) * per_step,
                    false => width(*id),
                },
            )
            .sum();
        let carried: u64 = graph.carries().iter().map(|c| width(c.input)).sum();
        let outputs: u64 = graph.outputs().iter().map(|o| width(o.node)).sum();
        inputs + carried + outputs * per_step
    };
    4 * (words(&step, steps) + words(&reset, 1))
}

/// The host memory this process can still take, in bytes.
pub fn host_available() -> u64 {
    let mut system = System::new();
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    let mut available = system.available_memory();
    if let Some(cgroup) = system.cgroup_limits() {
        available = available.min(cgroup.free_memory);
    }
    if let Some(limit) = address_space_limit() {
        let pid = Pid::from_u32(std::process::id());
        system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            false,
            ProcessRefreshKind::nothing().with_memory(),
        );
        let used = system.process(pid).map_or(0, |p| p.virtual_memory());
        available = available.min(limit.saturating_sub(used));
    }
    available
}

/// The soft address-space limit (`RLIMIT_AS`, `ulimit -v`), when one is set.
#[cfg(unix)]
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes the one struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    // `rlim_t` is `u64` here but not on every platform.
    #[allow(clippy::unnecessary_cast)]
    let bytes = limit.rlim_cur as u64;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(bytes)
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<u64> {
    None
}

/// An error when `num_envs` envs of `bytes_per_env` bytes each need more than `available`
/// bytes of `memory` (`"host memory"`, a device's name).
pub fn check(
    num_envs: usize,
    bytes_per_env: u64,
    available: u64,
    memory: &str,
) -> Result<(), EnvError> {
    let needed = (num_envs as u64).saturating_mul(bytes_per_env);
    if needed > available {
        return Err(EnvError::OutOfMemory {
            num_envs,
            needed,
            available,
            memory: memory.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::human_bytes;

    #[test]
    fn the_error_names_the_size_the_bytes_and_the_memory() {
        assert!(check(10, 100, 1000, "host memory").is_ok());
        let error = check(1_000_000_000, 104, 8 << 30, "host memory").unwrap_err();
        let message = error.to_string();
        for part in [
            "1000000000 envs",
            "104000000000 bytes",
            "8589934592 bytes",
            "host memory",
        ] {
            assert!(message.contains(part), "{message}");
        }
    }

    #[test]
    fn the_host_has_some_memory_and_less_than_everything() {
        let available = host_available();
        assert!(available > 0 && available < u64::MAX);
    }

    #[test]
    fn bytes_read_as_people_read_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 29), "1.50 GiB");
        assert_eq!(human_bytes(104_000_000_000), "96.9 GiB");
    }
}

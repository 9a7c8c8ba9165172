//! What a host step costs wgpu's queue: one submission, the step and its read's copy
//! together (`vendor/README.md`), counted on the calling thread, where wgpu's server runs
//! unless `CARTFUSE_DEVICE_THREAD=server` moves it to a thread of its own.

use cartfuse::env::{CartPole, EpisodeOptions, StepPlan, VecEnv};
use cartfuse::fusion::cubecl::Runtime;
use cartfuse::fusion::cubecl::device_handle::thread_choice::on_calling_thread;
use cartfuse::fusion::cubecl::wgpu::{WgpuRuntime, thread_submissions};

#[test]
fn a_host_step_under_fused_is_one_submission_to_the_queue() {
    if !on_calling_thread::<<WgpuRuntime as Runtime>::Server>() {
        eprintln!("skipped: wgpu's server runs on its own thread, where this thread cannot count");
        return;
    }
    let n = 16;
    let mut env = VecEnv::build(
        super::backend(),
        CartPole::default(),
        n,
        EpisodeOptions::default_for::<CartPole>(),
        StepPlan::default(),
    )
    .unwrap();
    env.reset(Some(0)).unwrap();
    let actions: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
    let mut owned = env.owned_outputs();
    let mut out = owned.as_host();
    // The first step allocates the actions' buffer and compiles the kernel.
    env.step_into(&actions, &mut out).unwrap();
    let before = thread_submissions();
    for _ in 0..10 {
        env.step_into(&actions, &mut out).unwrap();
    }
    assert_eq!(thread_submissions() - before, 10);
}

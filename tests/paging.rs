//! `fused-xK` past the largest buffer: on the runtime under test, told that its largest
//! buffer holds fewer than K steps of observations, a call runs over several launches and
//! gives the same bits as one launch.

use cartfuse::env::{CartPole, VecEnv};
use cartfuse::fusion::exec::Backend;
use cartfuse::fusion::exec::COPY_RANGE_KERNEL;
use cartfuse::fusion::plan::Strategy;
use cartfuse::{AutoresetMode, CartPoleConfig, EnvError, StepPlan};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{TestBackend, util};

fn env(
    max_buffer_bytes: Option<u64>,
    n: usize,
    k: u32,
    autoreset: AutoresetMode,
) -> VecEnv<CartPole, TestBackend> {
    let backend = match max_buffer_bytes {
        Some(bytes) => util::backend().with_max_buffer_bytes(bytes),
        None => util::backend(),
    };
    let config = CartPoleConfig {
        autoreset,
        max_episode_steps: 13,
        ..Default::default()
    };
    let plan = StepPlan::Graph(Strategy::FusedSteps(k));
    let mut env = VecEnv::build(backend, config.params, n, config.episode(), plan).unwrap();
    env.reset(Some(3)).unwrap();
    env
}

#[test]
fn a_paged_call_gives_the_bits_of_one_launch_and_counts_its_launches() {
    let (n, k) = (100, 10);
    for autoreset in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let mut whole = env(None, n, k, autoreset);
        // Room for 2 steps of [100, 4] f32 observations (3,200 bytes), not 5 (and for
        // one call's 1,000 actions): five launches of two steps per call.
        let mut paged = env(Some(4_000), n, k, autoreset);
        assert_eq!(paged.steps_per_call(), 10);
        let before = (whole.ledger().totals(), paged.ledger().totals());
        let mut rng = StdRng::seed_from_u64(9);
        for _ in 0..4 {
            let actions: Vec<u32> = (0..n * k as usize)
                .map(|_| rng.random_range(0..2))
                .collect();
            assert_eq!(paged.step(&actions).unwrap(), whole.step(&actions).unwrap());
        }
        assert_eq!(paged.state().unwrap(), whole.state().unwrap());
        assert_eq!(
            paged.elapsed_steps().unwrap(),
            whole.elapsed_steps().unwrap()
        );
        let whole_run = whole.ledger().totals().since(&before.0);
        let paged_run = paged.ledger().totals().since(&before.1);
        assert_eq!(whole_run.launches, 4);
        // Per call: five step launches and five copies of 2 x 100 actions.
        assert_eq!(paged_run.launches, 4 * 10);
        let copies = paged
            .ledger()
            .per_kernel()
            .into_iter()
            .find(|(name, _)| name == COPY_RANGE_KERNEL)
            .unwrap()
            .1;
        assert_eq!(copies.launches, 4 * 5);
        assert_eq!(copies.bytes_read, 4 * 4 * (n * k as usize) as u64);
        // Each launch moves what an unpaged fused-x2 launch moves (the state is loaded
        // and stored once a launch, so five times a call), plus the action copies.
        let mut two = env(None, n, 2, autoreset);
        let before_two = two.ledger().totals();
        two.step(&vec![0; 2 * n]).unwrap();
        let two_launch = two.ledger().totals().since(&before_two).bytes_moved();
        assert_eq!(
            paged_run.bytes_moved(),
            4 * (5 * two_launch + 2 * 4 * (n * k as usize) as u64)
        );
    }
}

#[test]
fn a_paged_output_is_no_single_device_buffer() {
    let mut env = env(Some(4_000), 100, 10, AutoresetMode::NextStep);
    let actions = env.upload_actions(&[1; 1000]).unwrap();
    let step = env.step_device(&actions).unwrap();
    assert_eq!(step.pages(cartfuse::env::engine::StepBuffer::Obs).len(), 5);
    let error = step.obs().unwrap_err();
    assert!(
        matches!(
            error,
            EnvError::PagedOutput {
                pages: 5,
                steps: 10,
                ..
            }
        ),
        "{error}"
    );
    assert!(
        error.to_string().contains("obs lies over 5 buffers"),
        "{error}"
    );
}

#[test]
fn envs_whose_actions_of_one_call_exceed_the_largest_buffer_are_refused() {
    let backend = util::backend().with_max_buffer_bytes(4_000);
    let config = CartPoleConfig::default();
    let plan = StepPlan::Graph(Strategy::FusedSteps(10));
    let error = VecEnv::build(backend, config.params, 101, config.episode(), plan)
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .starts_with("101 envs do not fit on this device: at most 100"),
        "{error}"
    );
}

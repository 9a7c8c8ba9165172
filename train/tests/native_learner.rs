//! The native learner against burn's: from the same weights and minibatches, the same
//! losses and the same weights after each gradient step (burn's autodiff, global-norm clip
//! and Adam are the oracle), within float rounding.

use burn::backend::{Autodiff, NdArray};
use burn::optim::AdamConfig;
use cartfuse_train::learner::{Learner, NetShape, StepSettings};
use cartfuse_train::minibatch::Minibatch;
use cartfuse_train::ppo::burn_step;
use cartfuse_train::{ActorCritic, PpoConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

type Burn = Autodiff<NdArray>;

/// A minibatch of `rows` plausible CartPole samples drawn from `seed`.
fn minibatch(rows: usize, seed: u64) -> Minibatch {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut uniform = |lo: f32, hi: f32| rng.random_range(lo..hi);
    let obs = (0..rows * 4).map(|_| uniform(-1.5, 1.5)).collect();
    let actions = (0..rows)
        .map(|_| u32::from(uniform(0.0, 1.0) < 0.5))
        .collect();
    // Old log-probabilities near log(1/2), so some ratios leave the clip range.
    let old_log_probs = (0..rows).map(|_| uniform(-1.2, -0.3)).collect();
    let advantages = (0..rows).map(|_| uniform(-2.0, 2.0)).collect();
    let targets = (0..rows).map(|_| uniform(0.0, 20.0)).collect();
    Minibatch {
        obs,
        actions,
        old_log_probs,
        advantages,
        targets,
    }
}

fn assert_close(what: &str, got: &[f32], want: &[f32], tolerance: f32) {
    assert_eq!(got.len(), want.len(), "{what}");
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / w.abs().max(1.0))
        // A NaN difference is the worst (`f32::max` would drop it and pass).
        .fold(
            0.0f32,
            |worst, e| if e > worst || e.is_nan() { e } else { worst },
        );
    assert!(worst <= tolerance, "{what}: worst difference {worst:e}");
}

#[test]
fn native_steps_follow_burns_steps() {
    // An entropy bonus, so every term of the loss is exercised.
    let config = PpoConfig {
        ent_coef: 0.01,
        ..PpoConfig::default()
    };
    let shape = NetShape::new(4, config.hidden, 2);
    let device = Default::default();
    let mut model = ActorCritic::<Burn>::new(4, 2, config.hidden, 11, &device);
    let mut optim = AdamConfig::new().with_epsilon(1e-5).init();
    let mut learner = Learner::from_seeds(shape, &[11]);
    assert_eq!(learner.params(0), model.params().unwrap());
    let lr = 1e-3;
    let settings = [StepSettings {
        learning_rate: lr as f32,
        clip_coef: config.clip_coef,
        ent_coef: config.ent_coef,
        vf_coef: config.vf_coef,
        max_grad_norm: config.max_grad_norm,
    }];
    for step in 0..5 {
        let batch = minibatch(256, step);
        let parts;
        (model, parts) = burn_step(model, &mut optim, &batch, (&config, lr), &device).unwrap();
        let losses = learner.step(&[(0, &batch)], &settings)[0];
        let got = [losses.policy_loss, losses.value_loss, losses.entropy];
        assert_close(&format!("losses of step {step}"), &got, &parts, 1e-5);
        // The value loss is large (targets up to 20), so the global-norm clip acts.
        assert!(losses.grad_norm > config.max_grad_norm, "{losses:?}");
        assert_close(
            &format!("weights after step {step}"),
            learner.params(0),
            &model.params().unwrap(),
            1e-5,
        );
    }
}

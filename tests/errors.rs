//! Every bad input returns its error; nothing panics.

use cartfuse::env::vec_env::max_envs;
use cartfuse::fusion::exec::Backend;
use cartfuse::{
    CartPoleConfig, CartPoleParams, CartPoleState, DeviceActions, EnvError,
    StepPlan,
};

use super::util;

#[test]
fn wrong_action_count_is_an_error() {
    let mut env = util::env(4, CartPoleConfig::default(), 0);
    let error = env.step(&[0, 1, 0]).unwrap_err();
    assert!(
        matches!(
            error,
            EnvError::WrongCount {
                expected: 4,
                found: 3,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(error.to_string(), "expected 4 actions (1 per env), got 3");
}

#[test]
fn action_outside_zero_one_is_an_error() {
    let mut env = util::env(4, CartPoleConfig::default(), 0);
    let error = env.step(&[0, 1, 2, 0]).unwrap_err();
    assert!(
        matches!(&error, EnvError::InvalidAction { env: 2, value, .. } if value == "2"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "action 2 of env 2 is not in the action space Discrete(2)"
    );
}

#[test]
fn device_resident_invalid_action_is_reported_under_every_plan() {
    for plan in util::single_step_plans() {
        invalid_device_action_is_reported(plan);
    }
}

fn invalid_device_action_is_reported(plan: StepPlan) {
    let mut env = util::env_with(4, CartPoleConfig::default(), plan, 0);
    let handle = env.backend().upload_u32(&[0u32, 1, 7, 1]);
    let actions = DeviceActions::from_buffer(handle);
    let error = env.step_device(&actions).unwrap().to_host().unwrap_err();
    assert!(matches!(error, EnvError::InvalidDeviceAction), "{error}");
    // The flag is cleared once reported: valid actions step cleanly again.
    let actions = env.upload_actions(&[0, 1, 0, 1]).unwrap();
    assert!(env.step_device(&actions).unwrap().to_host().is_ok());
}

#[test]
fn zero_envs_is_an_error() {
    let error = util::build(0, CartPoleConfig::default(), StepPlan::default())
        .err()
        .unwrap();
    assert!(matches!(error, EnvError::ZeroEnvs));
}

#[test]
fn more_envs_than_the_device_holds_is_an_error_before_allocating() {
    let (max, _) = max_envs::<CartPoleParams, _>(&util::backend());
    let error = util::build(max + 1, CartPoleConfig::default(), StepPlan::default())
        .err()
        .unwrap();
    match error {
        EnvError::TooManyEnvs {
            requested,
            max: m,
            ref limit,
        } => {
            assert_eq!(requested, max + 1);
            assert_eq!(m, max);
            assert!(!limit.is_empty());
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn invalid_params_are_an_error() {
    let config = CartPoleConfig {
        params: CartPoleParams {
            tau: -0.02,
            ..Default::default()
        },
        ..Default::default()
    };
    let error = util::build(4, config, StepPlan::default())
        .err()
        .unwrap();
    assert!(
        matches!(error, EnvError::InvalidParam { name: "tau", .. }),
        "{error}"
    );
}

#[test]
fn stepping_before_reset_is_an_error() {
    let mut env =
        util::build(2, CartPoleConfig::default(), StepPlan::default()).unwrap();
    assert!(matches!(env.step(&[0, 1]).unwrap_err(), EnvError::NotReset));
}

#[test]
fn bad_states_are_errors() {
    let mut env = util::env(2, CartPoleConfig::default(), 0);
    let nan = CartPoleState::from_array([0.0, f64::NAN, 0.0, 0.0]);
    assert!(matches!(
        env.set_state(&util::states(&[CartPoleState::default(), nan]))
            .unwrap_err(),
        EnvError::BadState { env: 1, .. }
    ));
    assert!(matches!(
        env.set_state(&util::states(&[CartPoleState::default()]))
            .unwrap_err(),
        EnvError::WrongCount { what: "states", .. }
    ));
    assert!(matches!(
        env.set_state(&[vec![0.0; 4], vec![0.0; 3]]).unwrap_err(),
        EnvError::BadState {
            env: 1,
            expected: 4,
            ..
        }
    ));
}

#[test]
fn a_device_action_buffer_of_the_wrong_length_is_an_error_under_every_plan() {
    for plan in util::single_step_plans() {
        let mut env = util::env_with(4, CartPoleConfig::default(), plan, 0);
        let short = DeviceActions::from_buffer(env.backend().upload_u32(&[0u32, 1, 1]));
        let error = env.step_device(&short).err().expect("3 actions for 4 envs");
        assert!(
            matches!(error, EnvError::WrongCount { found: 3, .. }),
            "{plan}: {error}"
        );
    }
}

//! Every environment by gymnasium id: the one place a new environment is registered.
//!
//! [`with_env!`](crate::with_env) runs a block generically for the environment an id names,
//! so the CLI, the harness and the bindings reach every environment without naming one.

/// gymnasium ids of every registered environment.
pub const ENV_IDS: &[&str] = &[
    "CartPole-v1",
    "MountainCar-v0",
    "Acrobot-v1",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
];

/// Runs `$body` with `$E` bound to the environment type `$id` names, or evaluates
/// `$unknown` when no environment has that id.
#[macro_export]
macro_rules! with_env {
    ($id:expr, |$E:ident| $body:expr, $unknown:expr) => {
        match $id {
            "CartPole-v1" => {
                type $E = $crate::cartpole::CartPole;
                $body
            }
            "MountainCar-v0" => {
                type $E = $crate::mountain_car::MountainCar;
                $body
            }
            "Acrobot-v1" => {
                type $E = $crate::acrobot::Acrobot;
                $body
            }
            "MountainCarContinuous-v0" => {
                type $E = $crate::mountain_car_continuous::MountainCarContinuous;
                $body
            }
            "Pendulum-v1" => {
                type $E = $crate::pendulum::Pendulum;
                $body
            }
            _ => $unknown,
        }
    };
}

/// Why an id names no environment.
pub fn unknown_env(id: &str) -> String {
    format!(
        "unknown environment `{id}`: expected one of {}",
        ENV_IDS.join(", ")
    )
}

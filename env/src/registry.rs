//! Every environment by gymnasium id: the one place a new environment is registered.
//!
//! The registry is one list of environment types (under `@registry` in [`with_env!`]); each
//! one's id is its [`GraphEnv::ID`](crate::GraphEnv::ID), so an id cannot be misspelt or
//! left out of a second list. [`with_env!`] runs a block generically for the environment an
//! id names, and [`ENV_IDS`] lists them, so the CLI, the harness and the bindings (and
//! through them the Python package) reach every environment without naming one.
//!
//! [`with_env!`]: crate::with_env

/// gymnasium ids of every registered environment, in registry order.
pub const ENV_IDS: &[&str] = crate::with_env!(@registry ids);

/// Runs `$body` with `$E` bound to the environment type whose [`GraphEnv::ID`] is `$id`, or
/// evaluates `$unknown` when no environment has that id.
///
/// [`GraphEnv::ID`]: crate::GraphEnv::ID
#[macro_export]
macro_rules! with_env {
    // The registry: one line per environment.
    (@registry $($then:tt)*) => {
        $crate::with_env!(@$($then)* ;
            $crate::cartpole::CartPole,
            $crate::mountain_car::MountainCar,
            $crate::acrobot::Acrobot,
            $crate::mountain_car_continuous::MountainCarContinuous,
            $crate::pendulum::Pendulum,
        )
    };
    (@ids ; $($T:ty,)*) => {
        &[$(<$T as $crate::GraphEnv>::ID),*]
    };
    (@dispatch $id:expr, $E:ident, $body:expr, $unknown:expr ; $($T:ty,)*) => {{
        let id: &str = $id;
        $(if id == <$T as $crate::GraphEnv>::ID {
            type $E = $T;
            $body
        } else)* {
            $unknown
        }
    }};
    ($id:expr, |$E:ident| $body:expr, $unknown:expr $(,)?) => {
        $crate::with_env!(@registry dispatch $id, $E, $body, $unknown)
    };
}

/// Why an id names no environment.
pub fn unknown_env(id: &str) -> String {
    format!(
        "unknown environment `{id}`: expected one of {}",
        ENV_IDS.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphEnv;

    #[test]
    fn every_id_names_its_own_type_once() {
        for (i, id) in ENV_IDS.iter().enumerate() {
            assert!(!ENV_IDS[..i].contains(id), "{id} registered twice");
            let found: Option<&str> = crate::with_env!(*id, |E| Some(<E as GraphEnv>::ID), None);
            assert_eq!(found, Some(*id));
        }
        assert_eq!(ENV_IDS.len(), 5);
        let unknown: Option<&str> = crate::with_env!("CartPole-v0", |E| Some(E::ID), None);
        assert_eq!(unknown, None);
        assert!(unknown_env("Nope-v0").contains("CartPole-v1, MountainCar-v0"));
    }
}

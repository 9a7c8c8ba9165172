//! What gymnasium's env of the same id takes besides the step: its constructor arguments
//! ([`Kwarg`], `gym.make(id, g=9.81)`) and the options of its `reset` ([`ResetOptions`],
//! `reset(options={"low": -0.1, "high": 0.1})`), declared once per environment so that the
//! Python package builds its classes and parses options from them.

/// The kind of value a constructor argument takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum KwargKind {
    /// `True` or `False` (carried as 1 or 0).
    Bool,
    /// A finite real number.
    Float,
}

/// One constructor argument of gymnasium's env (besides `render_mode`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kwarg {
    /// Its Python name.
    pub name: &'static str,
    /// What it takes.
    pub kind: KwargKind,
    /// gymnasium's default.
    pub default: f64,
}

/// How gymnasium's `reset(options=...)` of the environment bounds its reset draws: each
/// drawn component `k` is uniform in `[low_k, high_k)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetOptions {
    /// `low` and `high` bound every drawn component (CartPole, Acrobot, the mountain cars'
    /// position), through gymnasium's `maybe_parse_reset_bounds`.
    LowHigh,
    /// One option per drawn component bounding it symmetrically, `[-v, v)` (Pendulum's
    /// `x_init` and `y_init`).
    Symmetric(&'static [&'static str]),
}

impl ResetOptions {
    /// The option names, as Python reads them from `options`.
    pub fn names(self) -> Vec<&'static str> {
        match self {
            ResetOptions::LowHigh => vec!["low", "high"],
            ResetOptions::Symmetric(names) => names.to_vec(),
        }
    }
}

/// The checked `(low, high)` bounds of every drawn component of one reset, or an error
/// naming what is wrong (a count that is not `draws`, a bound that is not finite, or
/// `low > high`).
pub fn check_bounds(bounds: &[(f64, f64)], draws: usize) -> Result<(), String> {
    if bounds.len() != draws {
        return Err(format!(
            "expected {draws} (low, high) pairs, one per drawn state component, got {}",
            bounds.len()
        ));
    }
    for (k, &(low, high)) in bounds.iter().enumerate() {
        if !low.is_finite() || !high.is_finite() {
            return Err(format!(
                "bounds of component {k} must be finite, got ({low}, {high})"
            ));
        }
        if low > high {
            return Err(format!(
                "component {k}: the lower bound ({low}) must not exceed the higher ({high})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_counted_finite_and_ordered() {
        assert!(check_bounds(&[(-0.1, 0.1), (0.0, 0.0)], 2).is_ok());
        let count = check_bounds(&[(-0.1, 0.1)], 4).unwrap_err();
        assert!(count.contains("expected 4 (low, high) pairs"), "{count}");
        let nan = check_bounds(&[(f64::NAN, 0.1)], 1).unwrap_err();
        assert!(nan.contains("must be finite"), "{nan}");
        let order = check_bounds(&[(1.0, 0.0)], 1).unwrap_err();
        assert!(
            order.contains("(1) must not exceed the higher (0)"),
            "{order}"
        );
        assert_eq!(ResetOptions::LowHigh.names(), ["low", "high"]);
        assert_eq!(KwargKind::Bool.to_string(), "bool");
    }
}

//! Tests of [`super`].

use super::*;
use cartfuse_fusion::cpu::Cpu;
use cartfuse_fusion::plan::Strategy;

fn turns(plan: &[f64], reference: &[f64]) -> InTurns {
    InTurns {
        runtime: "cpu".into(),
        device: "a CPU".into(),
        num_envs: 64,
        plan: "fused".into(),
        reference: "hand-written".into(),
        plan_step_s: plan.to_vec(),
        reference_step_s: reference.to_vec(),
    }
}

#[test]
fn the_verdict_is_the_median_round() {
    // Rounds of ratio 2, 0.5, 1.0, 0.8, 1.25: sorted 0.5 0.8 1.0 1.25 2.0.
    let t = turns(&[1.0, 2.0, 1.0, 1.0, 0.8], &[2.0, 1.0, 1.0, 0.8, 1.0]);
    assert_eq!(
        t.ratio(),
        RoundRatio {
            median: 1.0,
            slowest_round: 0.5,
            fastest_round: 2.0,
            rounds: 5
        }
    );
    assert_eq!(t.ratio_range(), (0.5, 2.0));
    assert_eq!(t.plan_median_s(), 1.0);
    assert_eq!(t.reference_median_s(), 1.0);
    assert!(t.within(0.1));
    assert!(t.ratio().spread_covers(1.9) && !t.ratio().spread_covers(2.1));
    assert_eq!(t.ratio().text(), "1.00x (rounds 0.50-2.00x, 5 rounds)");
    // An even count takes the mean of the middle two: ratios 0.8 and 0.9 -> 0.85.
    let slow = turns(&[1.0, 1.0], &[0.8, 0.9]);
    assert!((slow.median_ratio() - 0.85).abs() < 1e-12);
    assert!(!slow.within(0.1));
    assert!(slow.within(0.2));
    // Rounds that do not pair up give no ratio.
    assert_eq!(RoundRatio::of(&[1.0], &[1.0, 2.0]), None);
    assert_eq!(RoundRatio::of(&[], &[]), None);
}

#[test]
fn slow_rounds_stop_at_twice_the_budget() {
    let settings = TurnsSettings::default_report();
    assert!(
        settings.another_round(8, 20.0),
        "min rounds within twice the budget"
    );
    assert!(!settings.another_round(5, 30.0), "past twice the budget");
    assert!(
        settings.another_round(2, 300.0),
        "never fewer than three rounds"
    );
    assert!(settings.another_round(40, 14.0) && !settings.another_round(40, 15.0));
    assert!(!settings.another_round(301, 1.0));
    // Without a budget the rounds asked for always run.
    assert!(TurnsSettings::exactly(9, 0.05).another_round(8, 1e6));
}

#[test]
fn the_order_rotates_and_turns_round() {
    let orders: Vec<Vec<usize>> = (0..6).map(|r| round_order(r, 3)).collect();
    assert_eq!(
        orders,
        [
            vec![0, 1, 2],
            vec![2, 1, 0],
            vec![1, 2, 0],
            vec![0, 2, 1],
            vec![2, 0, 1],
            vec![1, 0, 2]
        ]
    );
    // Every plan takes every position over the cycle.
    for plan in 0..3 {
        let mut positions: Vec<usize> = orders
            .iter()
            .map(|o| o.iter().position(|&p| p == plan).unwrap())
            .collect();
        positions.sort();
        assert_eq!(positions, [0, 0, 1, 1, 2, 2]);
    }
    assert_eq!(round_order(0, 2), [0, 1]);
    assert_eq!(round_order(1, 2), [1, 0]);
}

/// A plan whose calls take a known time (`actual_s`; sized as if `call_s`), recording
/// when it ran.
struct Fake {
    call_s: f64,
    actual_s: f64,
    log: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    id: usize,
}

impl Turn for Fake {
    fn time_repeat(&mut self, calls: u64, limit_s: f64) -> Result<(f64, u64), EnvError> {
        self.log.borrow_mut().push(self.id);
        // Calls slower than planned stop at the limit (at least one is made).
        let made = calls.min(((limit_s / self.actual_s) as u64).max(1));
        Ok((self.actual_s * made as f64, made))
    }
    fn calls_for(&self, seconds: f64) -> u64 {
        (seconds / self.call_s).ceil() as u64
    }
    fn steps_per_call(&self) -> usize {
        1
    }
}

#[test]
fn rounds_run_in_the_rotated_order_within_the_budget() {
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut fakes: Vec<Fake> = [1e-3, 2e-3, 4e-3]
        .iter()
        .enumerate()
        .map(|(id, &call_s)| Fake {
            call_s,
            actual_s: call_s,
            log: log.clone(),
            id,
        })
        .collect();
    let mut turns: Vec<&mut dyn Turn> = fakes.iter_mut().map(|f| f as &mut dyn Turn).collect();
    let mut seen = Vec::new();
    let rounds = run_rounds(&mut turns, &TurnsSettings::exactly(4, 0.01), |r| {
        seen.push(r)
    })
    .unwrap();
    assert_eq!(seen, [1, 2, 3, 4]);
    assert_eq!(rounds.step_s.len(), 3);
    assert!(rounds.step_s.iter().all(|s| s.len() == 4));
    assert!((rounds.step_s[2][0] - 4e-3).abs() < 1e-12);
    // 10 ms repeats: 10, 5 and 3 calls a round.
    assert_eq!(rounds.calls, [40, 20, 12]);
    assert_eq!(&log.borrow()[..6], &[0, 1, 2, 2, 1, 0]);
    // A budget no round can meet runs up to the round limit; no rounds is an error.
    let budget = TurnsSettings {
        budget_s: 1e9,
        max_rounds: 7,
        ..TurnsSettings::exactly(2, 0.01)
    };
    let rounds = run_rounds(&mut turns, &budget, |_| {}).unwrap();
    assert!(rounds.step_s.iter().all(|s| s.len() == 7));
    drop(turns);
    // A plan that slowed to 25 ms a call after its calls were sized (10 of 1 ms for a
    // 10 ms repeat) stops at the limit, 4 x 10 ms: one call of 25 ms, counted as such.
    fakes[0].actual_s = 0.025;
    let mut turns: Vec<&mut dyn Turn> = fakes.iter_mut().map(|f| f as &mut dyn Turn).collect();
    let rounds = run_rounds(&mut turns, &TurnsSettings::exactly(1, 0.01), |_| {}).unwrap();
    assert_eq!(rounds.calls[0], 1);
    assert_eq!(rounds.step_s[0], [0.025]);
    assert!(matches!(
        run_rounds(&mut turns, &TurnsSettings::exactly(0, 0.01), |_| {}),
        Err(EnvError::InvalidParam { name: "rounds", .. })
    ));
}

#[test]
fn plans_are_built_timed_and_profiled_in_turns() {
    let config = cartpole_next_step();
    let settings = TurnsSettings::exactly(3, 0.001);
    let t = time_in_turns(
        &Cpu::default(),
        config.params,
        config.episode(),
        (
            StepPlan::Graph(Strategy::FusedSteps(4)),
            StepPlan::HandWritten,
        ),
        128,
        &settings,
        |_| {},
    )
    .unwrap();
    assert_eq!(
        (t.plan.as_str(), t.reference.as_str()),
        ("fused-x4", "hand-written")
    );
    assert_eq!((t.plan_step_s.len(), t.reference_step_s.len()), (3, 3));
    assert!(t.ratio().median.is_finite() && t.ratio().median > 0.0);
    let timed = plans_in_turns(
        &Cpu::default(),
        config.params,
        config.episode(),
        &[
            StepPlan::Graph(Strategy::Eager),
            StepPlan::Graph(Strategy::Fused),
        ],
        64,
        &settings,
        |_| {},
    )
    .unwrap();
    let eager = timed[0].as_ref().unwrap();
    let fused = timed[1].as_ref().unwrap();
    assert_eq!(fused.profile.launches_per_step, 1.0);
    assert!(eager.profile.launches_per_step > 10.0);
    assert_eq!(eager.round_step_s.len(), 3);
    assert_eq!(
        fused.profile.step_s_median,
        median(fused.round_step_s.clone())
    );
}

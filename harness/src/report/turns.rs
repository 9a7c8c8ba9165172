//! `fused` against the hand-written kernel, from the rounds in turns of each device's plan
//! table: the table, and the sentences on the study's target (the generated kernel within
//! 10% of the hand-written one at every n), computed from the rounds of this run.

use crate::reproduce::Report;
use crate::turns::InTurns;

use super::commentary::speed;
use super::table::{Cell, Format, Shown, Table, col};

/// The target: `fused` at most this much slower than the hand-written kernel.
pub const TOLERANCE: f64 = 0.10;

/// Every comparison in turns: the median step of each plan, the median round's ratio and
/// its spread.
pub fn table(report: &Report) -> Table {
    let title = "fused against hand-written, timed in turns";
    let ratio = col("fused speed / hand-written (median round)", "");
    Table::of(title, "fused_vs_hand_written.csv", &report.in_turns)
        .col(col("device", "").shown(Shown::GroupBy), |t| {
            Cell::text(&t.device)
        })
        .num(col("n", ""), Format::Fixed(0), |t| t.num_envs as f64)
        .num(col("rounds", ""), Format::Fixed(0), |t| {
            t.plan_step_s.len() as f64
        })
        .num(col("fused time per step", "s"), Format::Seconds, |t| {
            t.plan_median_s()
        })
        .num(
            col("hand-written time per step", "s"),
            Format::Seconds,
            |t| t.reference_median_s(),
        )
        .num(ratio, Format::Ratio, |t| t.median_ratio())
        .num(col("slowest round", ""), Format::Ratio, |t| {
            t.ratio_range().0
        })
        .num(col("fastest round", ""), Format::Ratio, |t| {
            t.ratio_range().1
        })
        .col(col("within 10%", ""), |t| Cell::text(within_text(t)))
        .build()
}

/// `yes` or `no` by the median round, and `(rounds either side)` when the rounds spread
/// across the target.
fn within_text(turns: &InTurns) -> &'static str {
    let target = 1.0 - TOLERANCE;
    match (turns.within(TOLERANCE), turns.ratio().spread_covers(target)) {
        (true, false) => "yes",
        (true, true) => "yes (rounds either side)",
        (false, false) => "no",
        (false, true) => "no (rounds either side)",
    }
}

/// One sentence per device on the target, naming each size whose rounds fall on both sides
/// of it.
pub fn commentary(report: &Report) -> Vec<String> {
    let mut devices: Vec<&str> = Vec::new();
    for turns in &report.in_turns {
        if !devices.contains(&turns.device.as_str()) {
            devices.push(&turns.device);
        }
    }
    let mut out = Vec::new();
    for device in devices {
        let rows: Vec<&InTurns> = report
            .in_turns
            .iter()
            .filter(|t| t.device == device)
            .collect();
        let ratios: Vec<f64> = rows.iter().map(|t| t.median_ratio()).collect();
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let misses: Vec<String> = rows
            .iter()
            .filter(|t| !t.within(TOLERANCE))
            .map(|t| format!("n = {} ({})", t.num_envs, t.ratio().text()))
            .collect();
        let verdict = if misses.is_empty() {
            format!(
                "`fused` is within {:.0}% of the hand-written step or faster at every n \
                 measured",
                TOLERANCE * 100.0
            )
        } else {
            format!(
                "`fused` is more than {:.0}% slower than the hand-written step at {}",
                TOLERANCE * 100.0,
                misses.join(", ")
            )
        };
        out.push(format!(
            "**{device}**, each n timed in turns: {verdict}; its median rounds run from {} to \
             {} over n = {} to {}.",
            speed(low),
            speed(high),
            rows.first().map_or(0, |t| t.num_envs),
            rows.last().map_or(0, |t| t.num_envs),
        ));
        let either_side: Vec<String> = rows
            .iter()
            .filter(|t| t.ratio().spread_covers(1.0 - TOLERANCE))
            .map(|t| format!("n = {} ({})", t.num_envs, t.ratio().text()))
            .collect();
        if !either_side.is_empty() {
            out.push(format!(
                "On {device} the rounds fall on both sides of {:.2}x at {}: there the spread \
                 of the rounds is wider than the distance between the median and the target, \
                 and this run alone does not settle the verdict.",
                1.0 - TOLERANCE,
                either_side.join("; ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(device: &str, n: usize, plan: &[f64], reference: &[f64]) -> InTurns {
        InTurns {
            runtime: "wgpu".into(),
            device: device.into(),
            num_envs: n,
            plan: "fused".into(),
            reference: "hand-written".into(),
            plan_step_s: plan.to_vec(),
            reference_step_s: reference.to_vec(),
        }
    }

    #[test]
    fn the_verdict_names_each_miss_with_its_rounds() {
        let mut report = crate::report::commentary::test_report("Some GPU", [1.0; 9]);
        report.in_turns = vec![
            turns("Some GPU", 1, &[1.0, 1.0, 1.0], &[1.2, 1.0, 0.95]),
            turns("Some GPU", 4096, &[1.0, 1.0, 1.0], &[0.8, 0.85, 0.95]),
            turns("a CPU", 1, &[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]),
        ];
        let lines = commentary(&report);
        assert!(
            lines[0].contains(
                "more than 10% slower than the hand-written step at n = 4096 (0.85x (rounds \
                 0.80-0.95x, 3 rounds))"
            ),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("from 0.85x (slower) to 1.00x"),
            "{lines:?}"
        );
        // n = 4096's rounds run from 0.80x to 0.95x, across the 0.90x target.
        assert!(
            lines[1].starts_with("On Some GPU the rounds fall on both sides of 0.90x at n = 4096"),
            "{lines:?}"
        );
        let cpu = lines.iter().find(|l| l.starts_with("**a CPU**")).unwrap();
        assert!(cpu.contains("within 10% of the hand-written step or faster at every n"));
        assert!(!lines.iter().any(|l| l.starts_with("On a CPU")));
        let table = table(&report);
        assert_eq!(table.rows.len(), 3);
        assert_eq!(table.rows[1][8], Cell::text("no (rounds either side)"));
        assert_eq!(table.rows[0][8], Cell::text("yes"));
    }
}

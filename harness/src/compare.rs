//! Two `report.json` files from runs on the same machine, checked against each other
//! (`cartfuse compare-reports A B`): each factor of the device's ladder and of the CPU's plan
//! table agrees when its median in each run lies within the other run's rounds (slowest to
//! fastest round), that is, when the two medians differ by less than the spread each run
//! reports.

use serde::Deserialize;

use crate::turns::RoundRatio;

/// Why two reports could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A file is not a `report.json` of this version.
    #[error("{file} is not a cartfuse report.json with factors in turns: {source}")]
    Parse {
        /// Which file.
        file: String,
        /// What the parser said.
        source: serde_json::Error,
    },
    /// The two reports share no factor.
    #[error("the two reports have no factor in common (different sizes or sections?)")]
    Disjoint,
}

/// The factors of one `report.json`.
#[derive(Debug, Deserialize)]
struct Factors {
    ablation: Vec<Row>,
    /// `null` in a partial report written before the CPU side was measured.
    cpu: Option<CpuRows>,
}

impl Factors {
    /// The CPU's cells (none where the CPU side was not measured).
    fn cpu_cells(&self) -> &[Row] {
        self.cpu.as_ref().map_or(&[], |cpu| &cpu.cells)
    }
}

#[derive(Debug, Deserialize)]
struct CpuRows {
    cells: Vec<Row>,
}

#[derive(Debug, Deserialize)]
struct Row {
    row: String,
    num_envs: usize,
    rounds: usize,
    speedup_over_previous: Option<f64>,
    speedup_over_xla_default: Option<f64>,
    speedup_over_eager: Option<f64>,
    slowest_round: Spreads,
    fastest_round: Spreads,
}

#[derive(Debug, Deserialize)]
struct Spreads {
    over_previous: Option<f64>,
    over_xla_default: Option<f64>,
    over_eager: Option<f64>,
}

impl Row {
    /// `(name, factor)` of every factor this row has.
    fn factors(&self) -> Vec<(&'static str, RoundRatio)> {
        let take = |name, median: Option<f64>, slowest: Option<f64>, fastest: Option<f64>| {
            Some((
                name,
                RoundRatio {
                    median: median?,
                    slowest_round: slowest?,
                    fastest_round: fastest?,
                    rounds: self.rounds,
                },
            ))
        };
        let (s, f) = (&self.slowest_round, &self.fastest_round);
        [
            take(
                "vs previous",
                self.speedup_over_previous,
                s.over_previous,
                f.over_previous,
            ),
            take(
                "vs xla-default",
                self.speedup_over_xla_default,
                s.over_xla_default,
                f.over_xla_default,
            ),
            take(
                "vs eager",
                self.speedup_over_eager,
                s.over_eager,
                f.over_eager,
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// One factor in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorPair {
    /// `ablation` (the device's ladder) or `cpu` (the CPU's plan table).
    pub section: &'static str,
    /// The row.
    pub row: String,
    /// Env count.
    pub num_envs: usize,
    /// `vs previous`, `vs xla-default` or `vs eager`.
    pub factor: &'static str,
    /// In the first report.
    pub first: RoundRatio,
    /// In the second.
    pub second: RoundRatio,
}

impl FactorPair {
    /// Whether each run's median lies within the other's rounds.
    pub fn agrees(&self) -> bool {
        self.first.spread_covers(self.second.median) && self.second.spread_covers(self.first.median)
    }
}

fn parse(file: &str, text: &str) -> Result<Factors, CompareError> {
    serde_json::from_str(text).map_err(|source| CompareError::Parse {
        file: file.into(),
        source,
    })
}

/// Every factor present in both reports (`(name, JSON text)` each), ladder first.
pub fn compare(first: (&str, &str), second: (&str, &str)) -> Result<Vec<FactorPair>, CompareError> {
    let (a, b) = (parse(first.0, first.1)?, parse(second.0, second.1)?);
    let mut pairs = Vec::new();
    for (section, rows_a, rows_b) in [
        ("ablation", a.ablation.as_slice(), b.ablation.as_slice()),
        ("cpu", a.cpu_cells(), b.cpu_cells()),
    ] {
        for row_a in rows_a {
            let Some(row_b) = rows_b
                .iter()
                .find(|r| r.row == row_a.row && r.num_envs == row_a.num_envs)
            else {
                continue;
            };
            let factors_b = row_b.factors();
            for (factor, first) in row_a.factors() {
                if let Some((_, second)) = factors_b.iter().find(|(name, _)| *name == factor) {
                    pairs.push(FactorPair {
                        section,
                        row: row_a.row.clone(),
                        num_envs: row_a.num_envs,
                        factor,
                        first,
                        second: *second,
                    });
                }
            }
        }
    }
    if pairs.is_empty() {
        return Err(CompareError::Disjoint);
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(median: f64, slowest: f64, fastest: f64) -> String {
        serde_json::json!({
            "ablation": [{
                "row": "random precomputed", "num_envs": 64, "rounds": 21,
                "speedup_over_previous": median, "speedup_over_xla_default": median,
                "speedup_over_eager": null,
                "slowest_round": {"over_previous": slowest, "over_xla_default": slowest, "over_eager": null},
                "fastest_round": {"over_previous": fastest, "over_xla_default": fastest, "over_eager": null},
                "profile": {"Ok": {}},
            }],
            "cpu": {"cells": [{
                "row": "fused", "num_envs": 64, "rounds": 9,
                "speedup_over_previous": null, "speedup_over_xla_default": null,
                "speedup_over_eager": 3.0,
                "slowest_round": {"over_previous": null, "over_xla_default": null, "over_eager": 2.5},
                "fastest_round": {"over_previous": null, "over_xla_default": null, "over_eager": 3.5},
            }]},
        })
        .to_string()
    }

    #[test]
    fn medians_must_lie_within_each_others_rounds() {
        let pairs = compare(("a", &report(1.2, 1.0, 1.4)), ("b", &report(1.3, 1.1, 1.5))).unwrap();
        assert_eq!(pairs.len(), 3);
        assert_eq!(
            (pairs[0].section, pairs[0].factor, pairs[0].num_envs),
            ("ablation", "vs previous", 64)
        );
        assert!(pairs.iter().all(FactorPair::agrees));
        // 1.6 is past the first run's fastest round: the ladder factors disagree.
        let pairs = compare(("a", &report(1.2, 1.0, 1.4)), ("b", &report(1.6, 1.1, 1.7))).unwrap();
        assert!(!pairs[0].agrees() && !pairs[1].agrees());
        assert!(pairs[2].agrees(), "the CPU cell did not change");
        assert!(matches!(
            compare(("a", "{}"), ("b", &report(1.0, 1.0, 1.0))),
            Err(CompareError::Parse { file, .. }) if file == "a"
        ));
        // A partial report, written before the CPU side was measured: its ladder compares.
        let mut partial: serde_json::Value = serde_json::from_str(&report(1.2, 1.0, 1.4)).unwrap();
        partial["cpu"] = serde_json::Value::Null;
        let pairs = compare(("a", &partial.to_string()), ("b", &report(1.2, 1.0, 1.4))).unwrap();
        assert!(!pairs.is_empty() && pairs.iter().all(|p| p.section == "ablation"));
        let empty = serde_json::json!({"ablation": [], "cpu": {"cells": []}}).to_string();
        assert!(matches!(
            compare(("a", &empty), ("b", &empty)),
            Err(CompareError::Disjoint)
        ));
    }
}

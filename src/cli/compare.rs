//! `cartfuse compare-reports A B`: two runs' factors against each other's rounds.

use anyhow::Context;
use cartfuse::harness::compare::{FactorPair, compare};

use super::args::CompareReportsArgs;

/// Prints each factor that disagrees (every factor with `--all`) and a verdict per section;
/// fails when a factor of the ladder disagrees.
pub fn run(args: CompareReportsArgs) -> anyhow::Result<()> {
    let read = |path: &std::path::Path| {
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let (first, second) = (read(&args.first)?, read(&args.second)?);
    let (a, b) = (
        args.first.display().to_string(),
        args.second.display().to_string(),
    );
    let pairs = compare((&a, &first), (&b, &second))?;
    println!("factor | n | first: median (slowest-fastest, rounds) | second | agree");
    for pair in pairs.iter().filter(|p| args.all || !p.agrees()) {
        println!(
            "{} {} {} | {} | {} | {} | {}",
            pair.section,
            pair.row,
            pair.factor,
            pair.num_envs,
            pair.first.text(),
            pair.second.text(),
            if pair.agrees() { "yes" } else { "NO" }
        );
    }
    let mut ladder_fails = 0;
    for section in ["ablation", "cpu"] {
        let of: Vec<&FactorPair> = pairs.iter().filter(|p| p.section == section).collect();
        let fails = of.iter().filter(|p| !p.agrees()).count();
        println!(
            "{section}: {} of {} factors agree (each median within the other run's rounds)",
            of.len() - fails,
            of.len()
        );
        if section == "ablation" {
            ladder_fails = fails;
        }
    }
    anyhow::ensure!(
        ladder_fails == 0,
        "{ladder_fails} ladder factor(s) differ by more than the spread of their rounds"
    );
    Ok(())
}

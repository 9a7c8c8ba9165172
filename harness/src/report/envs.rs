//! The every-environment section (`reproduce --env all`): every plan of every environment on
//! each runtime, and where fusion pays most. Tables and sentences come from the run.

use crate::cells::Over;
use crate::studies::envs::{EnvCell, EnvStudy};
use crate::turns::RoundRatio;

use super::table::{Cell, Format, Shown, Table, col, ratio_cell};

fn profile(cell: Option<&EnvCell>) -> Option<&crate::profile::StepProfile> {
    cell.and_then(|c| c.cell.profile.as_ref().ok())
}

fn rate(cell: Option<&EnvCell>) -> Option<f64> {
    profile(cell).map(|p| p.env_steps_per_s)
}

/// Every plan of every environment at every size on every runtime.
pub fn plans(study: &EnvStudy) -> Table {
    let title = "Every environment under every plan";
    Table::of(title, "env_plans.csv", &study.cells)
        .col(col("environment", ""), |c| Cell::text(&c.env))
        .col(col("runtime", ""), |c| Cell::text(&c.runtime))
        .col(col("plan", ""), |c| Cell::text(&c.cell.row))
        .num(col("n", ""), Format::Fixed(0), |c| c.cell.num_envs as f64)
        .num(col("rounds", ""), Format::Fixed(0), |c| {
            c.cell.rounds as f64
        })
        .num(col("env-steps/s", "1/s"), Format::Si, |c| {
            c.cell.ran().map(|p| p.env_steps_per_s)
        })
        .num(col("launches per step", ""), Format::Fixed(1), |c| {
            c.cell.ran().map(|p| p.launches_per_step)
        })
        .num(col("bytes per env-step", "bytes"), Format::Fixed(0), |c| {
            c.cell.ran().map(|p| p.bytes_per_env_step)
        })
        .num(col("FLOPs per env-step", "FLOP"), Format::Fixed(0), |c| {
            c.flops_per_env_step
        })
        .num(col("achieved GFLOP/s", "GFLOP/s"), Format::Fixed(2), |c| {
            c.cell.ran().map(|p| p.gflops)
        })
        .factor(col("x eager", ""), |c| c.cell.factor(Over::Eager))
        .col(col("skipped", "").shown(Shown::WhenPresent), |c| {
            Cell::skipped(&c.cell.profile)
        })
        .build()
}

/// One environment on one runtime at one size: its eager and fused cells, its fastest plan.
struct Fusion<'s> {
    env: &'s str,
    runtime: &'s str,
    n: usize,
    eager: Option<&'s EnvCell>,
    fused: Option<&'s EnvCell>,
    best: Option<(&'s str, f64)>,
}

/// Fused against eager per environment: what fusion removes and what it buys.
pub fn fusion(study: &EnvStudy) -> Table {
    let mut rows = Vec::new();
    for runtime in study.runtimes() {
        for &n in &study.sizes {
            rows.extend(study.envs.iter().map(|env| Fusion {
                env,
                runtime,
                n,
                eager: study.cell(env, runtime, "eager", n),
                fused: study.cell(env, runtime, "fused", n),
                best: best(study, env, runtime, n),
            }));
        }
    }
    let title = "Where fusion pays: fused against eager per environment";
    Table::of(title, "env_fusion.csv", rows)
        .col(col("environment", ""), |r| Cell::text(r.env))
        .col(col("runtime", ""), |r| Cell::text(r.runtime))
        .num(col("n", ""), Format::Fixed(0), |r| r.n as f64)
        .num(col("eager launches per step", ""), Format::Fixed(0), |r| {
            profile(r.eager).map(|p| p.launches_per_step)
        })
        .num(
            col("eager bytes per env-step", "bytes"),
            Format::Fixed(0),
            |r| profile(r.eager).map(|p| p.bytes_per_env_step),
        )
        .num(
            col("fused bytes per env-step", "bytes"),
            Format::Fixed(0),
            |r| profile(r.fused).map(|p| p.bytes_per_env_step),
        )
        .num(col("FLOPs per env-step", "FLOP"), Format::Fixed(0), |r| {
            r.fused.map(|c| c.flops_per_env_step)
        })
        .col(
            col("fused x eager (median round; slowest-fastest)", ""),
            |r| ratio_cell(r.fused.and_then(|c| c.cell.factor(Over::Eager))),
        )
        .col(col("best plan", ""), |r| {
            r.best.map_or(Cell::Missing, |(plan, _)| Cell::text(plan))
        })
        .num(col("best env-steps/s", "1/s"), Format::Si, |r| {
            r.best.map(|b| b.1)
        })
        .build()
}

/// The fastest plan of `env` on `runtime` at `n`.
pub fn best<'a>(study: &'a EnvStudy, env: &str, runtime: &str, n: usize) -> Option<(&'a str, f64)> {
    study
        .cells
        .iter()
        .filter(|c| c.env == env && c.runtime == runtime && c.cell.num_envs == n)
        .filter_map(|c| rate(Some(c)).map(|r| (c.cell.row.as_str(), r)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Sentences from the run: on each runtime and size, the environment where fused gains the
/// most over eager, against CartPole, with the launches and bytes that explain it.
pub fn commentary(study: &EnvStudy) -> Vec<String> {
    let mut sentences = Vec::new();
    for runtime in study.runtimes() {
        for &n in &study.sizes {
            let gains: Vec<(&str, RoundRatio, &EnvCell, &EnvCell)> = study
                .envs
                .iter()
                .filter_map(|env| {
                    let fused = study.cell(env, runtime, "fused", n)?;
                    let eager = study.cell(env, runtime, "eager", n)?;
                    Some((env.as_str(), fused.cell.factor(Over::Eager)?, fused, eager))
                })
                .collect();
            let Some(top) = gains
                .iter()
                .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
            else {
                continue;
            };
            let (Ok(fused), Ok(eager)) = (&top.2.cell.profile, &top.3.cell.profile) else {
                continue;
            };
            let mut sentence = format!(
                "On {runtime} at n = {n}, fusion pays most on {}: fused is {} eager, which \
                 makes {:.0} launches and moves {:.0} bytes per env-step against fused's 1 \
                 launch and {:.0} bytes ({:.0} FLOPs per env-step)",
                top.0,
                top.1.text(),
                eager.launches_per_step,
                eager.bytes_per_env_step,
                fused.bytes_per_env_step,
                top.2.flops_per_env_step,
            );
            if let Some(cartpole) = gains.iter().find(|g| g.0 == "CartPole-v1" && g.0 != top.0) {
                sentence += &format!("; on CartPole-v1 fused is {} eager", cartpole.1.text());
                if cartpole.1.fastest_round >= top.1.slowest_round {
                    sentence += &format!(
                        " (the two spreads overlap: this run does not tell {} from CartPole-v1)",
                        top.0
                    );
                }
            }
            sentence.push('.');
            sentences.push(sentence);
        }
    }
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::AblationCell;

    fn cell(env: &str, plan: &str, step_s: &[f64], launches: f64, bytes: f64) -> EnvCell {
        let mut profile = crate::profile::test_profile(plan, 4096, step_s[0], launches);
        profile.bytes_per_env_step = bytes;
        EnvCell {
            env: env.into(),
            runtime: "cpu".into(),
            flops_per_env_step: 100.0,
            cell: AblationCell::new(plan, 4096, Ok(profile), step_s.to_vec()),
        }
    }

    #[test]
    fn commentary_names_the_environment_fusion_helps_most_against_cartpole() {
        let mut cells = vec![
            cell("CartPole-v1", "eager", &[2e-3, 2e-3, 2e-3], 40.0, 500.0),
            cell("CartPole-v1", "fused", &[1e-3, 1e-3, 0.5e-3], 1.0, 88.0),
            cell("Acrobot-v1", "eager", &[8e-3, 8e-3, 8e-3], 300.0, 4000.0),
            cell("Acrobot-v1", "fused", &[1e-3, 1e-3, 2e-3], 1.0, 100.0),
        ];
        for pair in cells.chunks_mut(2) {
            let eager = pair[0].cell.clone();
            pair[1].cell.set_factor(Over::Eager, Some(&eager));
        }
        let study = EnvStudy {
            envs: vec!["CartPole-v1".into(), "Acrobot-v1".into()],
            sizes: vec![4096],
            cells,
        };
        let sentences = commentary(&study);
        assert_eq!(sentences.len(), 1);
        assert!(
            sentences[0].starts_with("On cpu at n = 4096, fusion pays most on Acrobot-v1: fused is 8.00x (rounds 4.00-8.00x, 3 rounds) eager, which makes 300 launches and moves 4000 bytes"),
            "{}",
            sentences[0]
        );
        // CartPole's rounds (2x, 2x, 4x) reach into Acrobot's (4x to 8x).
        assert!(
            sentences[0].ends_with(
                "on CartPole-v1 fused is 2.00x (rounds 2.00-4.00x, 3 rounds) eager (the two \
                 spreads overlap: this run does not tell Acrobot-v1 from CartPole-v1)."
            ),
            "{}",
            sentences[0]
        );
        assert_eq!(best(&study, "Acrobot-v1", "cpu", 4096).unwrap().0, "fused");
        assert_eq!(fusion(&study).csv().lines().count(), 3);
        assert!(plans(&study).markdown().contains("| 8.00x (4.00-8.00) |"));
    }
}

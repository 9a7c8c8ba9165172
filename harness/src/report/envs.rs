//! The every-environment section (`reproduce --env all`): every plan of every environment on
//! each runtime, and where fusion pays most. Tables and sentences come from the run.

use crate::env_study::{EnvCell, EnvStudy};

use super::table::{Cell, Column, Format, Shown, Table};

fn profile(cell: Option<&EnvCell>) -> Option<&crate::profile::StepProfile> {
    cell.and_then(|c| c.profile.as_ref().ok())
}

fn rate(cell: Option<&EnvCell>) -> Option<f64> {
    cell.and_then(|c| c.profile.as_ref().ok())
        .map(|p| p.env_steps_per_s)
}

/// Every plan of every environment at every size on every runtime.
pub fn plans(study: &EnvStudy) -> Table {
    let mut table = Table::new(
        "Every environment under every plan",
        "env_plans.csv",
        vec![
            Column::new("environment", ""),
            Column::new("runtime", ""),
            Column::new("plan", ""),
            Column::new("n", ""),
            Column::new("env-steps/s", "1/s"),
            Column::new("launches per step", ""),
            Column::new("bytes per env-step", "bytes"),
            Column::new("FLOPs per env-step", "FLOP"),
            Column::new("achieved GFLOP/s", "GFLOP/s"),
            Column::new("x eager", ""),
            Column::new("skipped", "").shown(Shown::WhenPresent),
        ],
    );
    for cell in &study.cells {
        let p = cell.profile.as_ref().ok();
        table.push(vec![
            Cell::text(cell.env.clone()),
            Cell::text(cell.runtime.clone()),
            Cell::text(cell.plan.clone()),
            Cell::Number(cell.num_envs as f64, Format::Fixed(0)),
            Cell::number(p.map(|p| p.env_steps_per_s), Format::Si),
            Cell::number(p.map(|p| p.launches_per_step), Format::Fixed(1)),
            Cell::number(p.map(|p| p.bytes_per_env_step), Format::Fixed(0)),
            Cell::Number(cell.flops_per_env_step, Format::Fixed(0)),
            Cell::number(p.map(|p| p.gflops), Format::Fixed(2)),
            Cell::number(cell.speedup_over_eager, Format::Ratio),
            Cell::text(
                cell.profile
                    .as_ref()
                    .err()
                    .map_or(String::new(), |s| s.reason.clone()),
            ),
        ]);
    }
    table
}

/// Fused against eager per environment: what fusion removes and what it buys.
pub fn fusion(study: &EnvStudy) -> Table {
    let mut table = Table::new(
        "Where fusion pays: fused against eager per environment",
        "env_fusion.csv",
        vec![
            Column::new("environment", ""),
            Column::new("runtime", ""),
            Column::new("n", ""),
            Column::new("eager launches per step", ""),
            Column::new("eager bytes per env-step", "bytes"),
            Column::new("fused bytes per env-step", "bytes"),
            Column::new("FLOPs per env-step", "FLOP"),
            Column::new("fused x eager", ""),
            Column::new("best plan", ""),
            Column::new("best env-steps/s", "1/s"),
        ],
    );
    for runtime in study.runtimes() {
        for &n in &study.sizes {
            for env in &study.envs {
                let eager = study.cell(env, runtime, "eager", n);
                let fused = study.cell(env, runtime, "fused", n);
                let best = best(study, env, runtime, n);
                table.push(vec![
                    Cell::text(env.clone()),
                    Cell::text(runtime),
                    Cell::Number(n as f64, Format::Fixed(0)),
                    Cell::number(
                        profile(eager).map(|p| p.launches_per_step),
                        Format::Fixed(0),
                    ),
                    Cell::number(
                        profile(eager).map(|p| p.bytes_per_env_step),
                        Format::Fixed(0),
                    ),
                    Cell::number(
                        profile(fused).map(|p| p.bytes_per_env_step),
                        Format::Fixed(0),
                    ),
                    Cell::number(fused.map(|c| c.flops_per_env_step), Format::Fixed(0)),
                    Cell::number(fused.and_then(|c| c.speedup_over_eager), Format::Ratio),
                    best.map_or(Cell::Missing, |(plan, _)| Cell::text(plan)),
                    Cell::number(best.map(|b| b.1), Format::Si),
                ]);
            }
        }
    }
    table
}

/// The fastest plan of `env` on `runtime` at `n`.
pub fn best<'a>(study: &'a EnvStudy, env: &str, runtime: &str, n: usize) -> Option<(&'a str, f64)> {
    study
        .cells
        .iter()
        .filter(|c| c.env == env && c.runtime == runtime && c.num_envs == n)
        .filter_map(|c| rate(Some(c)).map(|r| (c.plan.as_str(), r)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Sentences from the run: on each runtime and size, the environment where fused gains the
/// most over eager, against CartPole, with the launches and bytes that explain it.
pub fn commentary(study: &EnvStudy) -> Vec<String> {
    let mut sentences = Vec::new();
    for runtime in study.runtimes() {
        for &n in &study.sizes {
            let gains: Vec<(&str, f64, &EnvCell, &EnvCell)> = study
                .envs
                .iter()
                .filter_map(|env| {
                    let fused = study.cell(env, runtime, "fused", n)?;
                    let eager = study.cell(env, runtime, "eager", n)?;
                    Some((env.as_str(), fused.speedup_over_eager?, fused, eager))
                })
                .collect();
            let Some(top) = gains.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let (Ok(fused), Ok(eager)) = (&top.2.profile, &top.3.profile) else {
                continue;
            };
            let mut sentence = format!(
                "On {runtime} at n = {n}, fusion pays most on {}: fused is {:.2}x eager, which \
                 makes {:.0} launches and moves {:.0} bytes per env-step against fused's 1 \
                 launch and {:.0} bytes ({:.0} FLOPs per env-step)",
                top.0,
                top.1,
                eager.launches_per_step,
                eager.bytes_per_env_step,
                fused.bytes_per_env_step,
                top.2.flops_per_env_step,
            );
            if let Some(cartpole) = gains.iter().find(|g| g.0 == "CartPole-v1" && g.0 != top.0) {
                sentence += &format!("; on CartPole-v1 fused is {:.2}x eager", cartpole.1);
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
    use crate::profile::StepProfile;

    fn cell(env: &str, plan: &str, step_s: f64, launches: f64, bytes: f64) -> EnvCell {
        EnvCell {
            env: env.into(),
            runtime: "cpu".into(),
            plan: plan.into(),
            num_envs: 4096,
            flops_per_env_step: 100.0,
            profile: Ok(StepProfile {
                plan: plan.into(),
                num_envs: 4096,
                steps_per_call: 1,
                calls_per_repeat: 10,
                step_s_median: step_s,
                step_s_min: step_s,
                step_s_max: step_s,
                env_steps_per_s: 4096.0 / step_s,
                launches_per_step: launches,
                bytes_per_env_step: bytes,
                gbps: 1.0,
                gflops: 1.0,
                compile_s: 0.0,
                launches_total: 1,
            }),
            speedup_over_eager: None,
        }
    }

    #[test]
    fn commentary_names_the_environment_fusion_helps_most_against_cartpole() {
        let mut cells = vec![
            cell("CartPole-v1", "eager", 2e-3, 40.0, 500.0),
            cell("CartPole-v1", "fused", 1e-3, 1.0, 88.0),
            cell("Acrobot-v1", "eager", 8e-3, 300.0, 4000.0),
            cell("Acrobot-v1", "fused", 1e-3, 1.0, 100.0),
        ];
        for i in 0..cells.len() {
            let eager = cells[i - i % 2].profile.as_ref().unwrap().step_s_median;
            let own = cells[i].profile.as_ref().unwrap().step_s_median;
            cells[i].speedup_over_eager = Some(eager / own);
        }
        let study = EnvStudy {
            envs: vec!["CartPole-v1".into(), "Acrobot-v1".into()],
            sizes: vec![4096],
            cells,
        };
        let sentences = commentary(&study);
        assert_eq!(sentences.len(), 1);
        assert!(
            sentences[0].starts_with("On cpu at n = 4096, fusion pays most on Acrobot-v1: fused is 8.00x eager, which makes 300 launches and moves 4000 bytes"),
            "{}",
            sentences[0]
        );
        assert!(
            sentences[0].ends_with("on CartPole-v1 fused is 2.00x eager."),
            "{}",
            sentences[0]
        );
        assert_eq!(best(&study, "Acrobot-v1", "cpu", 4096).unwrap().0, "fused");
        assert_eq!(fusion(&study).csv().lines().count(), 3);
    }
}

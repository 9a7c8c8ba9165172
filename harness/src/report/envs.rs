//! The every-environment section (`reproduce --env all`): every plan of every environment on
//! each runtime, and where fusion pays most. Tables and sentences come from the run.

use crate::cells::Over;
use crate::studies::envs::{EnvCell, EnvStudy};
use crate::turns::RoundRatio;

use super::table::{Cell, Column, Format, Shown, Table, factor_cells, factor_columns};

fn profile(cell: Option<&EnvCell>) -> Option<&crate::profile::StepProfile> {
    cell.and_then(|c| c.cell.profile.as_ref().ok())
}

fn rate(cell: Option<&EnvCell>) -> Option<f64> {
    profile(cell).map(|p| p.env_steps_per_s)
}

/// Every plan of every environment at every size on every runtime.
pub fn plans(study: &EnvStudy) -> Table {
    let mut columns = vec![
        Column::new("environment", ""),
        Column::new("runtime", ""),
        Column::new("plan", ""),
        Column::new("n", ""),
        Column::new("rounds", ""),
        Column::new("env-steps/s", "1/s"),
        Column::new("launches per step", ""),
        Column::new("bytes per env-step", "bytes"),
        Column::new("FLOPs per env-step", "FLOP"),
        Column::new("achieved GFLOP/s", "GFLOP/s"),
    ];
    columns.extend(factor_columns("x eager"));
    columns.push(Column::new("skipped", "").shown(Shown::WhenPresent));
    let mut table = Table::new(
        "Every environment under every plan",
        "env_plans.csv",
        columns,
    );
    for env_cell in &study.cells {
        let cell = &env_cell.cell;
        let p = cell.profile.as_ref().ok();
        let mut row = vec![
            Cell::text(env_cell.env.clone()),
            Cell::text(env_cell.runtime.clone()),
            Cell::text(cell.row.clone()),
            Cell::Number(cell.num_envs as f64, Format::Fixed(0)),
            Cell::Number(cell.rounds as f64, Format::Fixed(0)),
            Cell::number(p.map(|p| p.env_steps_per_s), Format::Si),
            Cell::number(p.map(|p| p.launches_per_step), Format::Fixed(1)),
            Cell::number(p.map(|p| p.bytes_per_env_step), Format::Fixed(0)),
            Cell::Number(env_cell.flops_per_env_step, Format::Fixed(0)),
            Cell::number(p.map(|p| p.gflops), Format::Fixed(2)),
        ];
        row.extend(factor_cells(cell.factor(Over::Eager)));
        row.push(Cell::text(
            cell.profile
                .as_ref()
                .err()
                .map_or(String::new(), |s| s.reason.clone()),
        ));
        table.push(row);
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
            Column::new("fused x eager (median round; slowest-fastest)", ""),
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
                    factor_cells(fused.and_then(|c| c.cell.factor(Over::Eager)))
                        .into_iter()
                        .next()
                        .expect("a median cell"),
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

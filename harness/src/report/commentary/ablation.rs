//! The sentences under the study's ablation: each rung against the one before, the launch
//! tax, the total and the hand-written kernel, from the run's own numbers.

use crate::reproduce::Report;
use crate::studies::ablation::ladder;

use super::super::table::seconds;
use super::{against_study, ends, fastest, in_turns, speed_in_turns, speed_or};

/// Factors the study reported for a row of the ladder (quoted, never measured here).
pub(crate) const STUDY_FACTORS: [(&str, f64); 4] = [
    ("random precomputed", 1.87),
    ("concat rule patched", 1.1),
    ("no concatenate", 3.41),
    ("fused-x10", 3.5),
];
/// The study's total over its baseline.
const STUDY_TOTAL: f64 = 10.56;
/// The study's hand-written CUDA kernel against its best XLA version.
const STUDY_HAND_WRITTEN: f64 = 2.7;

/// Sentences under the ablation tables. Every factor is the median of per-round ratios,
/// stated with its slowest and fastest round.
pub fn ablation(report: &Report) -> Vec<String> {
    let Some((small, large)) = ends(report) else {
        return Vec::new();
    };
    let device = &report.device_name;
    let (launch, source) = report.dispatch.launch_cost();
    let mut out = Vec::new();
    let baseline = ladder()[0].label;
    if let Some(p) = report.profile(baseline, small) {
        let (r_small, r_large) = (
            in_turns(report, baseline, "fused", small),
            in_turns(report, baseline, "fused", large),
        );
        let trend = match (r_small, r_large) {
            (Some(s), Some(l)) if s.slowest_round > l.fastest_round => format!(
                "; the gain is larger at n = {small}, where launches weigh most (the rounds \
                 of the two sizes do not overlap)"
            ),
            (Some(s), Some(l)) if s.median > l.median => format!(
                "; the median gain is larger at n = {small}, but the rounds of the two sizes \
                 overlap"
            ),
            (Some(_), Some(_)) => format!("; the gain is not larger at n = {small} here"),
            _ => String::new(),
        };
        let study_kernels = ladder()[0].study_launches.map_or(String::new(), |k| {
            format!(" (the study counted {k} kernels)")
        });
        out.push(format!(
            "**Launch tax.** A launch costs {} on {device} ({source}). At n = {small}, \
             {baseline} makes {:.1} launches per step{study_kernels} and a step takes {}; the \
             launches alone would take {} (*model*: launches x launch cost). {baseline} -> \
             fused is {} at n = {small} and {} at n = {large}{trend}.",
            seconds(launch),
            p.launches_per_step,
            seconds(p.step_s_median),
            seconds(p.launches_per_step * launch),
            speed_or(r_small),
            speed_or(r_large),
        ));
    }
    let rows = ladder();
    let graph_rows: Vec<&str> = rows
        .iter()
        .map(|r| r.label)
        .filter(|l| *l != "hand-written")
        .collect();
    for pair in rows.windows(2) {
        let (previous, row) = (pair[0].label, pair[1].label);
        if row == "hand-written" || row == "fused" {
            continue;
        }
        let at = |n| in_turns(report, previous, row, n);
        let shape = [large, small]
            .into_iter()
            .find_map(|n| Some((report.profile(previous, n)?, report.profile(row, n)?)));
        let mut sentence = format!(
            "**{row}** against {previous}: {} at n = {small}, {} at n = {large} on {device}",
            speed_or(at(small)),
            speed_or(at(large)),
        );
        if let Some((a, b)) = shape {
            sentence += &format!(
                "; launches/step {:.1} -> {:.1}, bytes/env-step {:.1} -> {:.1} (compulsory-traffic model)",
                a.launches_per_step,
                b.launches_per_step,
                a.bytes_per_env_step,
                b.bytes_per_env_step
            );
        }
        sentence.push('.');
        let study = STUDY_FACTORS.iter().find(|(label, _)| *label == row);
        if let (Some((_, factor)), Some(measured)) = (study, at(large)) {
            sentence += &format!(
                " The study reported {factor}x; this run is {} that at n = {large}{}.",
                against_study(measured.median, *factor),
                if measured.spread_covers(*factor) {
                    ", and the study's factor lies within this run's rounds"
                } else {
                    ", outside this run's rounds"
                }
            );
        }
        if let Some((a, b)) = shape {
            if row == "random precomputed" && b.launches_per_step < a.launches_per_step {
                sentence += &format!(
                    " Drawing ahead removes the custom call from the step: {:.1} fewer \
                     launches per step, the draw-ahead launches included.",
                    a.launches_per_step - b.launches_per_step
                );
            }
            if row == "horizontal"
                && device.to_lowercase().contains("llvmpipe")
                && at(large).is_some_and(|r| r.fastest_round < 1.0)
                && a.bytes_per_env_step == b.bytes_per_env_step
            {
                sentence += &format!(
                    " At n = {large} it is slower in every round while moving the same bytes; \
                     on llvmpipe this fits every part of a shared launch being evaluated under \
                     a mask (a hypothesis from these timings, not checked in llvmpipe's \
                     source)."
                );
            }
        }
        sentence += " Why, from launches, bytes and this device's costs: the next table.";
        out.push(sentence);
    }
    let best = |n| fastest(report, &graph_rows, n);
    let total = |n| {
        let (label, _) = best(n)?;
        Some((label, in_turns(report, baseline, label, n)?))
    };
    let total_text = |n| {
        total(n).map_or("not measured".into(), |(label, r)| {
            format!("{} ({label})", speed_in_turns(r))
        })
    };
    let mut sentence = format!(
        "**In total** (study {STUDY_TOTAL}x): {baseline} -> the fastest graph plan is {} at \
         n = {small} and {} at n = {large} on {device}",
        total_text(small),
        total_text(large)
    );
    if let Some((_, r)) = total(large) {
        sentence += &format!(
            ", {} the study's factor at n = {large}",
            against_study(r.median, STUDY_TOTAL)
        );
    }
    sentence.push('.');
    out.push(sentence);
    let hand = |n| in_turns(report, best(n)?.0, "hand-written", n);
    let hand_vs_fused = |n| in_turns(report, "fused", "hand-written", n);
    let all_rows: Vec<&str> = rows.iter().map(|r| r.label).collect();
    let overall = |n| fastest(report, &all_rows, n).map_or("not measured", |(l, _)| l);
    out.push(format!(
        "**Hand-written** (study: CUDA {STUDY_HAND_WRITTEN}x faster than the best XLA version): \
         against the fastest graph plan the hand-written kernel is {} at n = {small} and {} at \
         n = {large} on {device}. It branches on `done` and draws reset states only for lanes \
         that reset; so does the generated `fused` kernel, whose reset draws run under a guard \
         on the select's condition. Against `fused` alone it is {} at n = {small} and {} at \
         n = {large}. The fastest row by its median round is {} at n = {small} and {} at \
         n = {large}.",
        speed_or(hand(small)),
        speed_or(hand(large)),
        speed_or(hand_vs_fused(small)),
        speed_or(hand_vs_fused(large)),
        overall(small),
        overall(large),
    ));
    if let (Some(first), Some(last)) = (
        report.profile("fused", small),
        report.profile("fused", large),
    ) && small != large
    {
        out.push(format!(
            "**JIT compile.** Kernels are cached per program, so a row pays its compile at the \
             first size it runs (fused: {:.1} ms at n = {small}, {:.1} ms at n = {large}); the \
             break-even table uses the largest compile measured for each row.",
            first.compile_s * 1e3,
            last.compile_s * 1e3
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::test_profile;
    use crate::reproduce::{AblationCell, Skipped};
    use crate::studies::dispatch::DispatchTax;
    use crate::studies::roofline::DeviceRoofline;

    /// A report on `device` where each ladder row at the large size takes `large_times[i]`.
    pub(crate) fn report(device: &str, large_times: [f64; 9]) -> Report {
        let sizes = [1, 4096];
        // Three rounds per cell: the time, 0.9x and 1.1x of it.
        let cell = |row: &str, n: usize, t: Option<f64>| {
            AblationCell::new(
                row,
                n,
                t.map(|t| test_profile(row, n, t, 1.0)).ok_or(Skipped {
                    reason: "does not fit".into(),
                }),
                t.map_or(Vec::new(), |t| vec![t, 0.9 * t, 1.1 * t]),
            )
        };
        let mut ablation = Vec::new();
        for n in sizes {
            let mut at_n: Vec<AblationCell> = ladder()
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    let t = if n == 1 {
                        1e-3 / (i + 1) as f64
                    } else {
                        large_times[i]
                    };
                    cell(row.label, n, Some(t))
                })
                .collect();
            crate::studies::ablation::set_ladder_factors(&mut at_n);
            ablation.extend(at_n);
        }
        Report {
            envs: None,
            policy: Vec::new(),
            device: format!("{device} (DiscreteGpu, driver)"),
            device_name: device.into(),
            runtime: "wgpu".into(),
            versions: vec![],
            mode: crate::reproduce::ReproduceMode::Quick,
            turns: crate::turns::TurnsSettings::quick(),
            cpu_turns: crate::turns::TurnsSettings::quick(),
            elapsed_s: 61.0,
            stopped_at: None,
            cache_bytes: None,
            roofline: DeviceRoofline {
                copy_bytes: 1 << 20,
                copy_gbps: 10.0,
                fma_flops: 1,
                gflops: 1.0,
                ridge_flops_per_byte: 0.1,
                driver_copy: Err("not measured in this test".into()),
            },
            dispatch: DispatchTax {
                empty_launch_s: 1e-5,
                one_element_launch_s: 1e-5,
                fitted: None,
            },
            ablation,
            eager: sizes
                .iter()
                .map(|&n| cell("eager", n, Some(1e-2)))
                .collect(),
            workloads: vec![],
            tail: vec![],
            tail_shape: (1, 1),
            busy: vec![],
            break_even: vec![],
            burn: vec![],
            launch_probe_envs: None,
            launch_probe_failures: vec![],
            in_turns: vec![],
            cpu: Some(crate::studies::cpu::CpuStudy::made_up("a CPU", vec![])),
        }
    }

    #[test]
    fn sentences_follow_the_numbers_and_name_the_device() {
        // fused-x10 (index 7) twice as fast as fused (index 6) at n = 4096, then half as fast.
        let faster = ablation(&report(
            "Some GPU",
            [8.0, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.9],
        ));
        let slower = ablation(&report(
            "Some GPU",
            [8.0, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0, 2.0, 0.9],
        ));
        let line = |lines: &[String]| {
            lines
                .iter()
                .find(|l| l.starts_with("**fused-x10**"))
                .cloned()
                .unwrap()
        };
        assert!(
            line(&faster)
                .contains("2.00x (faster; rounds 2.00-2.00x of 3) at n = 4096 on Some GPU"),
            "{}",
            line(&faster)
        );
        assert!(line(&slower).contains("0.50x (slower; rounds 0.50-0.50x of 3) at n = 4096"));
        assert!(line(&faster).contains("below that at n = 4096"));
        let all = faster.join(" ");
        assert!(
            !all.contains("llvmpipe") && !all.contains("lavapipe"),
            "{all}"
        );
        assert!(all.contains(
            "The fastest row by its median round is hand-written at n = 1 and fused-x10 at n = 4096"
        ));
    }

    #[test]
    fn a_skipped_row_is_not_measured() {
        let mut r = report("Some GPU", [8.0, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.9]);
        for cell in r.ablation.iter_mut().filter(|c| c.row == "fused-x10") {
            cell.profile = Err(Skipped {
                reason: "does not fit".into(),
            });
        }
        let lines = ablation(&r);
        let line = lines
            .iter()
            .find(|l| l.starts_with("**fused-x10**"))
            .unwrap();
        assert!(
            line.contains("not measured at n = 1, not measured at n = 4096"),
            "{line}"
        );
    }
}

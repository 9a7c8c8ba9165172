//! The sentences under the study's ablation: each rung against the one before, the launch
//! tax, the total and the hand-written kernel, from the run's own numbers.

use crate::ablation::ladder;
use crate::reproduce::Report;

use super::super::table::seconds;
use super::{SAME, against_study, ends, fastest, ratio, speed, speed_or};

/// Factors the study reported for a row of the ladder (quoted, never measured here).
const STUDY_FACTORS: [(&str, f64); 4] = [
    ("random precomputed", 1.87),
    ("concat rule patched", 1.1),
    ("no concatenate", 3.41),
    ("fused-x10", 3.5),
];
/// The study's total over its baseline.
const STUDY_TOTAL: f64 = 10.56;
/// The study's hand-written CUDA kernel against its best XLA version.
const STUDY_HAND_WRITTEN: f64 = 2.7;

/// Sentences under the ablation tables.
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
            ratio(report, baseline, "fused", small),
            ratio(report, baseline, "fused", large),
        );
        let trend = match (r_small, r_large) {
            (Some(s), Some(l)) if s > l => {
                format!("; the gain is larger at n = {small}, where launches weigh most")
            }
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
        let at = |n| ratio(report, previous, row, n);
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
        sentence += &explained(report, (previous, row), (small, large), launch);
        let study = STUDY_FACTORS.iter().find(|(label, _)| *label == row);
        if let (Some((_, factor)), Some(measured)) = (study, at(large)) {
            sentence += &format!(
                " The study reported {factor}x; this run is {} that at n = {large}.",
                against_study(measured, *factor)
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
                && at(large).is_some_and(|r| r < 1.0 - SAME)
                && a.bytes_per_env_step == b.bytes_per_env_step
            {
                sentence += &format!(
                    " At n = {large} it is slower while moving the same bytes; on llvmpipe this \
                     fits every part of a shared launch being evaluated under a mask (a \
                     hypothesis from these timings, not checked in llvmpipe's source)."
                );
            }
        }
        out.push(sentence);
    }
    let best = |n| fastest(report, &graph_rows, n);
    let total = |n| {
        let (label, t) = best(n)?;
        Some((label, report.step_time(baseline, n)? / t))
    };
    let total_text = |n| {
        total(n).map_or("not measured".into(), |(label, r)| {
            format!("{} ({label})", speed(r))
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
            against_study(r, STUDY_TOTAL)
        );
    }
    sentence.push('.');
    out.push(sentence);
    let hand = |n| Some(best(n)?.1 / report.step_time("hand-written", n)?);
    let hand_vs_fused =
        |n| Some(report.step_time("fused", n)? / report.step_time("hand-written", n)?);
    let all_rows: Vec<&str> = rows.iter().map(|r| r.label).collect();
    let overall = |n| fastest(report, &all_rows, n).map_or("not measured", |(l, _)| l);
    out.push(format!(
        "**Hand-written** (study: CUDA {STUDY_HAND_WRITTEN}x faster than the best XLA version): \
         against the fastest graph plan the hand-written kernel is {} at n = {small} and {} at \
         n = {large} on {device}. It branches on `done` and draws reset states only for lanes \
         that reset; so does the generated `fused` kernel, whose reset draws run under a guard \
         on the select's condition. Against `fused` alone it is {} at n = {small} and {} at \
         n = {large}. The fastest row is {} at n = {small} and {} at n = {large}.",
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

/// What the launch and byte counts of `previous` -> `row` account for: at `small`, the
/// change in launches times the launch cost against the measured change in step time; at
/// `large`, the change in bytes against the change in time.
fn explained(
    report: &Report,
    (previous, row): (&str, &str),
    (small, large): (usize, usize),
    launch: f64,
) -> String {
    let mut out = String::new();
    if let (Some(a), Some(b)) = (report.profile(previous, small), report.profile(row, small)) {
        let launches = b.launches_per_step - a.launches_per_step;
        out += &format!(
            " At n = {small} the {:+.1} launches per step model {} per step (*model*: launches \
             x launch cost); the step changed by {} (measured).",
            launches,
            signed_seconds(launches * launch),
            signed_seconds(b.step_s_median - a.step_s_median),
        );
    }
    if let (Some(a), Some(b)) = (report.profile(previous, large), report.profile(row, large)) {
        out += &format!(
            " At n = {large} bytes per env-step go x{:.2} and time per step x{:.2}.",
            b.bytes_per_env_step / a.bytes_per_env_step,
            b.step_s_median / a.step_s_median,
        );
    }
    out
}

/// A signed duration: `+72.3 us`, `-1.2 ms`.
fn signed_seconds(value: f64) -> String {
    let sign = if value < 0.0 { "-" } else { "+" };
    format!("{sign}{}", seconds(value.abs()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dispatch::DispatchTax;
    use crate::profile::StepProfile;
    use crate::reproduce::{AblationCell, Skipped};
    use crate::roofline::DeviceRoofline;

    fn profile(plan: &str, n: usize, step_s: f64, launches: f64) -> StepProfile {
        StepProfile {
            plan: plan.into(),
            num_envs: n,
            steps_per_call: 1,
            calls_per_repeat: 10,
            step_s_median: step_s,
            step_s_min: step_s,
            step_s_max: step_s,
            env_steps_per_s: n as f64 / step_s,
            launches_per_step: launches,
            bytes_per_env_step: 88.0,
            gbps: 1.0,
            gflops: 1.0,
            compile_s: 0.01,
            launches_total: 100,
        }
    }

    /// A report on `device` where each ladder row at the large size takes `large_times[i]`.
    pub(crate) fn report(device: &str, large_times: [f64; 9]) -> Report {
        let sizes = [1, 4096];
        let cell = |row: &str, n: usize, t: Option<f64>| AblationCell {
            row: row.into(),
            num_envs: n,
            profile: t.map(|t| profile(row, n, t, 1.0)).ok_or(Skipped {
                reason: "does not fit".into(),
            }),
            speedup_over_previous: None,
            speedup_over_xla_default: None,
            speedup_over_eager: None,
        };
        let mut ablation = Vec::new();
        for (i, row) in ladder().iter().enumerate() {
            for n in sizes {
                let t = if n == 1 {
                    1e-3 / (i + 1) as f64
                } else {
                    large_times[i]
                };
                ablation.push(cell(row.label, n, Some(t)));
            }
        }
        Report {
            envs: None,
            policy: Vec::new(),
            device: format!("{device} (DiscreteGpu, driver)"),
            device_name: device.into(),
            runtime: "wgpu".into(),
            versions: vec![],
            quick: true,
            roofline: DeviceRoofline {
                copy_bytes: 1 << 20,
                copy_gbps: 10.0,
                fma_flops: 1,
                gflops: 1.0,
                ridge_flops_per_byte: 0.1,
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
            cpu: crate::cpu_study::CpuStudy {
                device: "a CPU".into(),
                simd: "avx2".into(),
                threads: 2,
                copy_gbps: 10.0,
                gflops: 100.0,
                cells: vec![],
            },
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
        assert!(line(&faster).contains("2.00x (faster) at n = 4096 on Some GPU"));
        assert!(line(&slower).contains("0.50x (slower) at n = 4096 on Some GPU"));
        assert!(line(&faster).contains("below that at n = 4096"));
        let all = faster.join(" ");
        assert!(
            !all.contains("llvmpipe") && !all.contains("lavapipe"),
            "{all}"
        );
        assert!(all.contains("The fastest row is hand-written at n = 1 and fused-x10 at n = 4096"));
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

    #[test]
    fn each_rung_says_what_its_launches_and_bytes_account_for() {
        let lines = ablation(&report(
            "Some GPU",
            [8.0, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.9],
        ));
        let line = lines
            .iter()
            .find(|l| l.starts_with("**random precomputed**"))
            .unwrap();
        // Every row makes 1 launch per step at both sizes in this report: 0 launches more
        // model no change, and the step took 1/2 - 1 ms = -0.5 ms at n = 1.
        assert!(
            line.contains("At n = 1 the +0.0 launches per step model +0.0 us per step"),
            "{line}"
        );
        assert!(
            line.contains("the step changed by -500.0 us (measured)"),
            "{line}"
        );
        assert!(
            line.contains("At n = 4096 bytes per env-step go x1.00 and time per step x0.50."),
            "{line}"
        );
    }
}

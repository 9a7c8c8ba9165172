//! The report's sentences, each computed from the numbers of the run it describes and naming
//! the device they were measured on: when a comparison flips, so does the sentence.

use crate::ablation::ladder;
use crate::reproduce::Report;

use super::table::{bytes, seconds};

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

/// Ratios within this distance of 1 are called "about the same" (timing noise).
const SAME: f64 = 0.03;

/// A speed ratio `t_before / t_after` in words: `1.52x (faster)`.
pub fn speed(ratio: f64) -> String {
    if (ratio - 1.0).abs() < SAME {
        format!("{ratio:.2}x (about the same speed)")
    } else if ratio > 1.0 {
        format!("{ratio:.2}x (faster)")
    } else {
        format!("{ratio:.2}x (slower)")
    }
}

fn speed_or(ratio: Option<f64>) -> String {
    ratio.map_or_else(|| "not measured".into(), speed)
}

/// `measured` against a factor the study reported.
fn against_study(measured: f64, study: f64) -> &'static str {
    if (measured / study - 1.0).abs() < SAME {
        "about equal to"
    } else if measured > study {
        "above"
    } else {
        "below"
    }
}

/// Time of `from` over time of `to` at `n`.
fn ratio(report: &Report, from: &str, to: &str, n: usize) -> Option<f64> {
    Some(report.step_time(from, n)? / report.step_time(to, n)?)
}

/// The fastest of `rows` at `n`: `(label, time)`.
fn fastest<'a>(report: &Report, rows: &[&'a str], n: usize) -> Option<(&'a str, f64)> {
    rows.iter()
        .filter_map(|row| report.step_time(row, n).map(|t| (*row, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

fn ends(report: &Report) -> Option<(usize, usize)> {
    let sizes = report.sizes();
    Some((*sizes.first()?, *sizes.last()?))
}

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

/// Sentences under the workload table.
pub fn workloads(report: &Report) -> Vec<String> {
    let device = &report.device_name;
    let copy = report.roofline.copy_gbps;
    let mut names: Vec<&str> = Vec::new();
    for point in &report.workloads {
        if !names.contains(&point.workload.as_str()) {
            names.push(&point.workload);
        }
    }
    names
        .into_iter()
        .filter_map(|name| {
            let size = report
                .workloads
                .iter()
                .filter(|w| w.workload == name)
                .map(|w| w.size_bytes)
                .max()?;
            let find = |plan: &str| {
                report
                    .workloads
                    .iter()
                    .find(|w| w.workload == name && w.size_bytes == size && w.profile.plan == plan)
                    .map(|w| &w.profile)
            };
            let (eager, fused) = (find("eager")?, find("fused")?);
            Some(format!(
                "**{name}** at {} MB: fused against eager is {} on {device}; fused moves \
                 {:.2} GB/s of compulsory traffic, {:.0}% of the {copy:.2} GB/s copy bandwidth \
                 measured above, at {:.2} FLOP/byte.",
                size >> 20,
                speed(eager.step_s_median / fused.step_s_median),
                fused.gbps,
                100.0 * fused.gbps / copy,
                fused.flops_per_step / fused.bytes_per_step,
            ))
        })
        .collect()
}

/// Sentences under the transformer-tail table.
pub fn tail(report: &Report) -> Vec<String> {
    let device = &report.device_name;
    report
        .tail
        .iter()
        .skip(1)
        .map(|t| {
            let agreement = if t.measured_saving_bytes == t.analytic_saving_bytes {
                "the ledger counts the same".to_string()
            } else {
                format!("the ledger counts {}", bytes(t.measured_saving_bytes))
            };
            format!(
                "**{}**: {} intermediates eliminated (from the plans), {} less traffic per step \
                 (compulsory-traffic model; {agreement}); against 4 kernels it is {} on {device}.",
                t.partition,
                t.eliminated_intermediates,
                bytes(t.analytic_saving_bytes),
                speed(t.speedup)
            )
        })
        .collect()
}

/// Sentences under the dispatch tables.
pub fn dispatch(report: &Report) -> Vec<String> {
    let device = &report.device_name;
    let mut out = vec![format!(
        "An empty launch costs {} on {device}; a 1-element launch {}.",
        seconds(report.dispatch.empty_launch_s),
        seconds(report.dispatch.one_element_launch_s)
    )];
    if let Some(fit) = &report.dispatch.fitted {
        let versus = if fit.per_launch_s > report.dispatch.empty_launch_s {
            "more than"
        } else {
            "no more than"
        };
        out.push(format!(
            "Step time against launches per step over the {} plans measured at n = {} fits \
             {} per launch plus {} per step (least squares; RMS residual {}; the point farthest \
             from the line is {}, {} {} it): a launch inside a step costs {versus} an empty \
             launch measured alone. The busy fractions and launch models here use the fitted \
             cost.",
            fit.points,
            fit.num_envs,
            seconds(fit.per_launch_s),
            seconds(fit.fixed_s),
            seconds(fit.rms_residual_s),
            fit.worst_plan,
            seconds(fit.worst_residual_s.abs()),
            if fit.worst_residual_s > 0.0 {
                "above"
            } else {
                "below"
            },
        ));
    }
    let busy = |plan: &str, n: usize| {
        report
            .busy
            .iter()
            .find(|b| b.plan == plan && b.num_envs == n)
            .map_or("not measured".into(), |b| {
                format!("{:.1}%", b.busy_fraction * 100.0)
            })
    };
    for n in report.sizes() {
        out.push(format!(
            "At n = {n}, eager's busy fraction is {} and fused's {} (*model*).",
            busy("eager", n),
            busy("fused", n)
        ));
    }
    if let Some((_, large)) = ends(report)
        && let Some(b) = report
            .break_even
            .iter()
            .find(|b| b.plan == "fused" && b.num_envs == large)
    {
        out.push(match b.steps {
            Some(steps) => format!(
                "fused pays back its {:.1} ms compile against {} after {steps:.1} steps at \
                 n = {large} on {device}.",
                b.compile_s * 1e3,
                b.against
            ),
            None => format!(
                "fused is not faster than {} at n = {large} on {device}, so its compile never \
                 pays back there.",
                b.against
            ),
        });
    }
    out
}

/// Sentences under the burn tables.
pub fn burn(report: &Report) -> Vec<String> {
    let Some((small, large)) = ends(report) else {
        return Vec::new();
    };
    let device = &report.device_name;
    let (launch, source) = report.dispatch.launch_cost();
    let mut out = Vec::new();
    let fused_launches = report
        .profile("fused", small)
        .map_or("not measured".into(), |p| {
            format!("{:.1}", p.launches_per_step)
        });
    if let Some(fusion) = report.burn_profile("burn wgpu fusion", small)
        && let (Some(blocks), Some(fused_ops), Some(unfused_ops)) = (
            fusion.fused_blocks_per_step,
            fusion.fused_ops_per_step,
            fusion.unfused_ops_per_step,
        )
    {
        let launches = match (fusion.launches_per_step, report.launch_probe_envs) {
            (Some(l), Some(n)) => {
                format!("the CubeCL log counts {l:.1} launches per step at n = {n}")
            }
            _ => "its launches were not counted".into(),
        };
        out.push(format!(
            "**What burn fused.** Once settled, burn runs {blocks:.1} fused kernels per step \
             holding {fused_ops:.1} ops, and {unfused_ops:.1} ops unfused ({}); {launches} \
             (cartfuse `fused`: {fused_launches}).",
            if fusion.unfused_ops.is_empty() {
                "none".to_string()
            } else {
                fusion.unfused_ops.join(", ")
            },
        ));
    }
    if let Some(fusion) = report.burn_profile("burn wgpu fusion", small)
        && let Some(launches) = fusion.launches_per_step
    {
        let launch_time = launches * launch;
        let cartfuse = report.step_time("fused", small).map_or(String::new(), |t| {
            format!(
                " cartfuse `fused` takes {} per step at the same n (burn / fused: {:.2}x).",
                seconds(t),
                fusion.step_s_median / t
            )
        });
        out.push(format!(
            "**Where burn's time goes.** At n = {small} a burn fusion step takes {} on {device}; \
             its launches account for about {} (*model*: launches x {source}), \
             leaving {} per step that the launch model does not explain.{cartfuse}",
            seconds(fusion.step_s_median),
            seconds(launch_time),
            seconds((fusion.step_s_median - launch_time).max(0.0)),
        ));
    }
    if let (Some(unfused), Some(eager)) = (
        report.burn_profile("burn wgpu unfused", large),
        report.profile("eager", large),
    ) {
        out.push(format!(
            "**Unfused.** burn's CubeCL backend without fusion launches {} kernels per step \
             (cartfuse eager: {:.1}) and takes {} per step at n = {large} on {device}, against \
             cartfuse eager's {}: cartfuse eager is {} against it.",
            unfused
                .launches_per_step
                .map_or("an uncounted number of".into(), |l| format!("{l:.1}")),
            eager.launches_per_step,
            seconds(unfused.step_s_median),
            seconds(eager.step_s_median),
            speed(unfused.step_s_median / eager.step_s_median),
        ));
    }
    let rows: Vec<&str> = ladder().iter().map(|r| r.label).collect();
    let faster: Vec<String> = report
        .sizes()
        .into_iter()
        .filter(|&n| {
            let best = fastest(report, &rows, n).map(|(_, t)| t);
            report
                .burn_time("burn ndarray", n)
                .zip(best)
                .is_some_and(|(b, best)| b < best)
        })
        .map(|n| n.to_string())
        .collect();
    if let (Some(ndarray), Some(fused)) = (
        report.burn_time("burn ndarray", large),
        report.step_time("fused", large),
    ) {
        out.push(format!(
            "**NdArray.** burn's NdArray backend runs on the host CPU, with no launches. It is \
             faster than every cartfuse plan on {device} at n = {}; at n = {large} it takes {} \
             per step, {:.2}x the time of cartfuse `fused`.",
            if faster.is_empty() {
                "no size measured".to_string()
            } else {
                faster.join(", ")
            },
            seconds(ndarray),
            ndarray / fused,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
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
    fn report(device: &str, large_times: [f64; 7]) -> Report {
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
        // fused-x10 (index 5) twice as fast as fused (index 4) at n = 4096, then half as fast.
        let faster = ablation(&report("Some GPU", [8.0, 4.0, 2.0, 2.0, 1.0, 0.5, 0.9]));
        let slower = ablation(&report("Some GPU", [8.0, 4.0, 2.0, 2.0, 1.0, 2.0, 0.9]));
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
        let mut r = report("Some GPU", [8.0, 4.0, 2.0, 2.0, 1.0, 0.5, 0.9]);
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
    fn speed_words_follow_the_ratio() {
        assert_eq!(speed(3.2), "3.20x (faster)");
        assert_eq!(speed(0.5), "0.50x (slower)");
        assert_eq!(speed(1.01), "1.01x (about the same speed)");
        assert_eq!(against_study(2.0, 1.87), "above");
        assert_eq!(against_study(1.0, 1.87), "below");
    }
}

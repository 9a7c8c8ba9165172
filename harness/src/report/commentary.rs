//! The report's sentences, each computed from the numbers of the run it describes and naming
//! the device they were measured on: when a comparison flips, so does the sentence.

pub(crate) mod ablation;

use crate::reproduce::Report;
use crate::studies::ablation::ladder;
use crate::turns::RoundRatio;

use super::roof::share_of_copy;
use super::table::{bytes, seconds};

pub(crate) use ablation::STUDY_FACTORS;
pub use ablation::ablation;

/// A report of made-up numbers for the report's tests.
#[cfg(test)]
pub(crate) use ablation::tests::report as test_report;

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

/// A factor taken round by round in words, with its spread: `1.52x (faster; rounds
/// 1.40-1.61x of 31)`; where the rounds fall on both sides of 1 while the median says
/// faster or slower, it says that the spread is wider than the difference.
pub fn speed_in_turns(ratio: RoundRatio) -> String {
    let words = if (ratio.median - 1.0).abs() < SAME {
        "about the same speed"
    } else if ratio.median > 1.0 {
        "faster"
    } else {
        "slower"
    };
    let mut text = format!(
        "{:.2}x ({words}; rounds {:.2}-{:.2}x of {}",
        ratio.median, ratio.slowest_round, ratio.fastest_round, ratio.rounds
    );
    if ratio.spread_covers(1.0) && (ratio.median - 1.0).abs() >= SAME {
        text += ", on both sides of 1: the spread is wider than the difference";
    }
    text.push(')');
    text
}

fn speed_or(ratio: Option<RoundRatio>) -> String {
    ratio.map_or_else(|| "not measured".into(), speed_in_turns)
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

/// Time of `from` over time of `to` at `n`, round by round (both rows of the device's
/// tables at `n`, timed in the same rounds).
pub fn in_turns(report: &Report, from: &str, to: &str, n: usize) -> Option<RoundRatio> {
    let rounds = |row: &str| {
        report
            .cell(row, n)
            .filter(|c| c.profile.is_ok())
            .map(|c| c.round_step_s.as_slice())
    };
    RoundRatio::of(rounds(from)?, rounds(to)?)
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

/// Sentences under the workload table.
pub fn workloads(report: &Report) -> Vec<String> {
    let device = &report.device_name;
    let copy = report.roofline.roof_gbps();
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
                 {:.2} GB/s of compulsory traffic, {}, at {:.2} FLOP/byte.",
                size >> 20,
                speed(eager.step_s_median / fused.step_s_median),
                fused.gbps,
                share_of_copy(fused.gbps, copy, fused.bytes_per_step, report.cache_bytes),
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
    let (fusion_name, unfused_name) = crate::studies::burn::BurnBackend::names_on(&report.runtime);
    if let Some(fusion) = report.burn_profile(fusion_name, small)
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
    if let Some(fusion) = report.burn_profile(fusion_name, small)
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
        report.burn_profile(unfused_name, large),
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

    #[test]
    fn speed_words_follow_the_ratio() {
        assert_eq!(speed(3.2), "3.20x (faster)");
        assert_eq!(speed(0.5), "0.50x (slower)");
        assert_eq!(speed(1.01), "1.01x (about the same speed)");
        assert_eq!(against_study(2.0, 1.87), "above");
        assert_eq!(against_study(1.0, 1.87), "below");
        let ratio = |median, slowest_round, fastest_round| RoundRatio {
            median,
            slowest_round,
            fastest_round,
            rounds: 9,
        };
        assert_eq!(
            speed_in_turns(ratio(1.5, 1.4, 1.6)),
            "1.50x (faster; rounds 1.40-1.60x of 9)"
        );
        assert_eq!(
            speed_in_turns(ratio(0.9, 0.8, 1.1)),
            "0.90x (slower; rounds 0.80-1.10x of 9, on both sides of 1: the spread is wider \
             than the difference)"
        );
        assert_eq!(
            speed_in_turns(ratio(1.01, 0.9, 1.1)),
            "1.01x (about the same speed; rounds 0.90-1.10x of 9)"
        );
    }
}

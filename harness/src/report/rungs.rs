//! Why each rung of the ladder gives the factor it gives on this device: a model beside the
//! measurement, rung by rung and size by size.
//!
//! The model prices a step as its launches times this device's launch cost plus its
//! compulsory bytes over the device's copy bandwidth (both measured in the run). A rung's
//! two limits bound what a change of launch cost against bandwidth can do to its factor:
//! if launches were the whole step the factor would be the ratio of launches, if bytes were,
//! the ratio of bytes. Where the measured factor (the median of per-round ratios, with its
//! spread) leaves the model, something else decides: compute, the runtime, or the cache when
//! the step's bytes fit in it. The study's factor is set against the limits too: between
//! them, the launch share of a step it needs says how far its device was from this one.

use crate::reproduce::Report;
use crate::studies::ablation::ladder;
use crate::turns::RoundRatio;

use super::commentary::{STUDY_FACTORS, in_turns, speed_in_turns};
use super::table::{Cell, Format, Table, bytes, col, seconds};

/// One rung at one size, modelled and measured.
#[derive(Debug, Clone, PartialEq)]
pub struct RungModel {
    /// The row before.
    pub previous: &'static str,
    /// The row.
    pub rung: &'static str,
    /// Env count.
    pub num_envs: usize,
    /// Launches per step, before and after.
    pub launches: (f64, f64),
    /// Compulsory bytes per step, before and after.
    pub bytes: (f64, f64),
    /// The factor if launches were the whole step: launches before / after.
    pub launch_limit: f64,
    /// The factor if bytes were the whole step: bytes before / after.
    pub bytes_limit: f64,
    /// The factor the model gives with this device's launch cost and bandwidth.
    pub model: f64,
    /// Launches' share of the modelled step before the change.
    pub launch_share: f64,
    /// Measured step time minus the modelled one, before and after (seconds).
    pub unexplained_s: (f64, f64),
    /// Whether the larger of the two steps' bytes fits the device's last-level cache
    /// (`None`: the cache size is not known).
    pub fits_cache: Option<bool>,
    /// The factor measured in turns.
    pub measured: RoundRatio,
    /// The study's factor for this rung, where it gave one.
    pub study: Option<f64>,
}

impl RungModel {
    /// The launch share of a step at which the model gives `factor`, if one between 0 and
    /// 1 does.
    pub fn launch_share_for(&self, factor: f64) -> Option<f64> {
        let (r_launch, r_bytes) = (1.0 / self.launch_limit, 1.0 / self.bytes_limit);
        if (r_launch - r_bytes).abs() < 1e-12 {
            return None;
        }
        let share = (1.0 / factor - r_bytes) / (r_launch - r_bytes);
        (0.0..=1.0).contains(&share).then_some(share)
    }

    /// What decides the measured factor, in words.
    pub fn decides(&self) -> String {
        let term = if self.launch_share >= 0.5 {
            "launch cost"
        } else if self.fits_cache == Some(true) {
            "bandwidth, from cache (the bytes fit the last-level cache)"
        } else {
            "bandwidth"
        };
        if self.measured.spread_covers(self.model) {
            format!("{term}: the model lies within the rounds")
        } else {
            let (before, after) = self.unexplained_s;
            format!(
                "{term} in the model, which misses: the steps took {} and {} beyond it \
                 (compute, the runtime, or a launch cost that differs from the fit)",
                signed_seconds(before),
                signed_seconds(after)
            )
        }
    }
}

/// A signed duration: `+72.3 us`, `-1.2 ms`.
fn signed_seconds(value: f64) -> String {
    let sign = if value < 0.0 { "-" } else { "+" };
    format!("{sign}{}", seconds(value.abs()))
}

/// Every consecutive pair of measured ladder rows at every size.
pub fn models(report: &Report) -> Vec<RungModel> {
    let (launch, _) = report.dispatch.launch_cost();
    let bandwidth = report.roofline.copy_gbps * 1e9;
    let rows = ladder();
    let mut out = Vec::new();
    for n in report.sizes() {
        for pair in rows.windows(2) {
            let (previous, rung) = (pair[0].label, pair[1].label);
            let (Some(a), Some(b), Some(measured)) = (
                report.profile(previous, n),
                report.profile(rung, n),
                in_turns(report, previous, rung, n),
            ) else {
                continue;
            };
            let bytes = (
                a.bytes_per_env_step * n as f64,
                b.bytes_per_env_step * n as f64,
            );
            let launches = (a.launches_per_step, b.launches_per_step);
            let modelled = |launches: f64, bytes: f64| launches * launch + bytes / bandwidth;
            let (t_a, t_b) = (modelled(launches.0, bytes.0), modelled(launches.1, bytes.1));
            out.push(RungModel {
                previous,
                rung,
                num_envs: n,
                launches,
                bytes,
                launch_limit: launches.0 / launches.1,
                bytes_limit: bytes.0 / bytes.1,
                model: t_a / t_b,
                launch_share: launches.0 * launch / t_a,
                unexplained_s: (a.step_s_median - t_a, b.step_s_median - t_b),
                fits_cache: report
                    .cache_bytes
                    .map(|cache| bytes.0.max(bytes.1) <= cache as f64),
                measured,
                study: STUDY_FACTORS
                    .iter()
                    .find(|(label, _)| *label == rung)
                    .map(|(_, f)| *f),
            });
        }
    }
    out
}

/// The table: every rung at every size, model beside measurement.
pub fn table(report: &Report) -> Table {
    let (launch, source) = report.dispatch.launch_cost();
    let model = format!(
        "model ({} a launch, {:.1} GB/s)",
        seconds(launch),
        report.roofline.copy_gbps
    );
    let share = format!("launch share of the step before ({source})");
    let title = "Why each rung gives its factor on this device";
    Table::of(title, "rungs.csv", models(report))
        .col(col("rung", ""), |m| {
            Cell::text(format!("{} -> {}", m.previous, m.rung))
        })
        .num(col("n", ""), Format::Fixed(0), |m| m.num_envs as f64)
        .col(col("launches/step before -> after", ""), |m| {
            Cell::text(format!("{:.1} -> {:.1}", m.launches.0, m.launches.1))
        })
        .col(col("bytes/step before -> after", ""), |m| {
            Cell::text(format!("{} -> {}", bytes(m.bytes.0), bytes(m.bytes.1)))
        })
        .num(col("launch-bound limit", ""), Format::Ratio, |m| {
            m.launch_limit
        })
        .num(col("bandwidth-bound limit", ""), Format::Ratio, |m| {
            m.bytes_limit
        })
        .num(col(model, ""), Format::Ratio, |m| m.model)
        .num(col(share, ""), Format::Percent, |m| m.launch_share)
        .factor(col("measured in turns", ""), |m| Some(m.measured))
        .num(col("study", ""), Format::Ratio, |m| m.study)
        .num(col("study needs launch share", ""), Format::Percent, |m| {
            m.study.and_then(|s| m.launch_share_for(s))
        })
        .col(col("what decides", ""), |m| Cell::text(m.decides()))
        .build()
}

/// One sentence per rung the study measured, at the smallest and the largest size.
pub fn commentary(report: &Report) -> Vec<String> {
    let models = models(report);
    let sizes = report.sizes();
    let (Some(&small), Some(&large)) = (sizes.first(), sizes.last()) else {
        return Vec::new();
    };
    let device = &report.device_name;
    let mut out = Vec::new();
    for (rung, study) in STUDY_FACTORS {
        let at = |n: usize| models.iter().find(|m| m.rung == rung && m.num_envs == n);
        let parts: Vec<String> = [small, large]
            .into_iter()
            .filter_map(&at)
            .map(|m| {
                format!(
                    "at n = {}: launches {:.1} -> {:.1}, bytes {} -> {}; limits {:.2}x \
                     (launches) and {:.2}x (bytes), the model {:.2}x with launches {:.0}% of \
                     the step, measured {}; {}",
                    m.num_envs,
                    m.launches.0,
                    m.launches.1,
                    bytes(m.bytes.0),
                    bytes(m.bytes.1),
                    m.launch_limit,
                    m.bytes_limit,
                    m.model,
                    m.launch_share * 100.0,
                    speed_in_turns(m.measured),
                    m.decides()
                )
            })
            .collect();
        let Some(first) = at(small).or_else(|| at(large)) else {
            continue;
        };
        let (low, high) = (
            first.launch_limit.min(first.bytes_limit),
            first.launch_limit.max(first.bytes_limit),
        );
        let versus = match first.launch_share_for(study) {
            Some(share) => format!(
                "the model gives the study's {study}x where launches are {:.0}% of the step \
                 (on {device} at n = {}: {:.0}%), so the difference is this device's balance \
                 of launch cost and bandwidth",
                share * 100.0,
                first.num_envs,
                first.launch_share * 100.0
            ),
            None if study > high => format!(
                "the study's {study}x is above both limits ({low:.2}x to {high:.2}x): no \
                 launch cost or bandwidth gives it with these launch and byte counts, so the \
                 difference is in the program XLA compiled, not in the device"
            ),
            None => format!(
                "the study's {study}x is below both limits ({low:.2}x to {high:.2}x): its \
                 step paid for something these counts do not model"
            ),
        };
        out.push(format!(
            "**{rung}** on {device}: {}. Against the study: {versus}.",
            parts.join("; ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rung_is_modelled_from_launches_bytes_and_the_device() {
        let mut report = crate::report::commentary::test_report(
            "Some GPU",
            [8.0, 4.0, 3.0, 2.0, 2.0, 2.0, 1.0, 0.5, 0.9],
        );
        // Launches 6 -> 3 for the first rung; bytes stay 88 per env-step.
        for cell in report.ablation.iter_mut() {
            if let Ok(p) = &mut cell.profile {
                p.launches_per_step = if cell.row == "xla-default" { 6.0 } else { 3.0 };
            }
        }
        report.cache_bytes = Some(1 << 20);
        let models = models(&report);
        let first = models
            .iter()
            .find(|m| m.rung == "random precomputed" && m.num_envs == 1)
            .unwrap();
        assert_eq!(first.launch_limit, 2.0);
        assert_eq!(first.bytes_limit, 1.0);
        // 6 launches x 10 us against 88 B / 10 GB/s: launches are nearly all of the step.
        assert!(first.launch_share > 0.99, "{}", first.launch_share);
        assert!((first.model - 2.0).abs() < 0.01, "{}", first.model);
        assert_eq!(first.fits_cache, Some(true));
        // The study's 1.87x: launches at 1/0.87 ... solved from the two limits.
        let share = first.launch_share_for(1.87).unwrap();
        assert!((share - (1.0 / 1.87 - 1.0) / (0.5 - 1.0)).abs() < 1e-12);
        assert_eq!(first.launch_share_for(3.0), None);
        assert!(
            first.decides().starts_with("launch cost"),
            "{}",
            first.decides()
        );
        let lines = commentary(&report);
        let line = lines
            .iter()
            .find(|l| l.starts_with("**random precomputed**"))
            .unwrap();
        assert!(
            line.contains("the model gives the study's 1.87x where launches are"),
            "{line}"
        );
        // "no concatenate" changes neither launches (3 -> 3) nor bytes: limits of 1x, so the
        // study's 3.41x is out of reach of any device balance.
        let flat = lines
            .iter()
            .find(|l| l.starts_with("**no concatenate**"))
            .unwrap();
        assert!(flat.contains("is above both limits"), "{flat}");
        assert_eq!(table(&report).rows.len(), models.len());
    }
}

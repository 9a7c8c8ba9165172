//! The roofline plot: each elementwise workload at its largest size, eager and fused, by
//! arithmetic intensity and achieved GFLOP/s, under the roof of the device's measured copy
//! bandwidth and peak.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{AXES, DrawResult, FONT, Point, SIZE, TICKS, chart_on, legend, palette, range_log};
use crate::reproduce::Report;

pub(super) fn roofline<DB: DrawingBackend>(
    report: &Report,
    area: &DrawingArea<DB, Shift>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let r = &report.roofline;
    // Points: (label, eager (AI, GFLOP/s), fused (AI, GFLOP/s)).
    let mut pairs: Vec<(String, Point, Point)> = Vec::new();
    let largest = report
        .workloads
        .iter()
        .map(|w| w.size_bytes)
        .max()
        .unwrap_or(0);
    for name in report
        .workloads
        .iter()
        .map(|w| w.workload.clone())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let point = |plan: &str| {
            report
                .workloads
                .iter()
                .find(|w| w.workload == name && w.size_bytes == largest && w.profile.plan == plan)
                .map(|w| {
                    (
                        w.profile.flops_per_step / w.profile.bytes_per_step,
                        w.profile.gflops,
                    )
                })
        };
        if let (Some(e), Some(f)) = (point("eager"), point("fused")) {
            pairs.push((name, e, f));
        }
    }
    if let (Some(first), Some(last)) = (report.tail.first(), report.tail.last()) {
        let p = |t: &crate::reproduce::TailRow| {
            (
                t.profile.flops_per_step / t.profile.bytes_per_step,
                t.profile.gflops,
            )
        };
        pairs.push((
            "transformer tail (4 -> 1 kernels)".into(),
            p(first),
            p(last),
        ));
    }
    let n = report.eager.last().map_or(0, |c| c.num_envs);
    let cart = |cell: Option<&crate::reproduce::AblationCell>| {
        cell.and_then(|c| c.profile.as_ref().ok())
            .map(|p| (p.gflops / p.gbps, p.gflops))
    };
    let fused = report
        .ablation
        .iter()
        .find(|c| c.row == "fused" && c.num_envs == n);
    if let (Some(e), Some(f)) = (cart(report.eager.last()), cart(fused)) {
        pairs.push((format!("CartPole n = {n} (eager -> fused)"), e, f));
    }
    let xs = range_log(
        pairs
            .iter()
            .flat_map(|(_, a, b)| [a.0, b.0])
            .chain([r.ridge_flops_per_byte]),
    );
    let ys = range_log(
        pairs
            .iter()
            .flat_map(|(_, a, b)| [a.1, b.1])
            .chain([r.gflops]),
    );
    let caption = format!("Roofline on {} (measured)", report.device);
    let mut chart = chart_on(area, caption, 75)
        .build_cartesian_2d(xs.clone().log_scale(), ys.clone().log_scale())?;
    chart
        .configure_mesh()
        .x_desc("arithmetic intensity (FLOP/byte)")
        .y_desc("achieved GFLOP/s")
        .label_style(TICKS)
        .axis_desc_style(AXES)
        .draw()?;
    let roof: Vec<(f64, f64)> = (0..=200)
        .map(|i| {
            let x = xs.start * (xs.end / xs.start).powf(i as f64 / 200.0);
            (x, (x * r.roof_gbps()).min(r.gflops))
        })
        .collect();
    chart
        .draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?
        .label(format!(
            "roof: {:.1} GB/s, {:.1} GFLOP/s",
            r.roof_gbps(),
            r.gflops
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (i, (label, eager, fused)) in pairs.iter().enumerate() {
        let color = palette(i);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![*eager, *fused],
                color.stroke_width(2),
            )))?
            .label(label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(std::iter::once(Circle::new(
            *eager,
            5,
            color.stroke_width(2),
        )))?;
        chart.draw_series(std::iter::once(TriangleMarker::new(
            *fused,
            8,
            color.filled(),
        )))?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    area.draw(&Text::new(
        "open circle: eager, triangle: fused (arrow from eager to fused)",
        (80, SIZE.1 as i32 - 22),
        (FONT, 14),
    ))?;
    Ok(())
}

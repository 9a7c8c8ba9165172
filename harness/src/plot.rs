//! Plots of a [`Report`], each written as SVG and PNG (text rendered with the embedded
//! `DejaVu Sans` font, so PNGs need no system fonts).

use std::path::Path;
use std::sync::Once;

use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::FontStyle;

use crate::reproduce::Report;
use crate::studies::ablation::ladder;

mod roofline;

use roofline::roofline;

type DrawResult = Result<(), Box<dyn std::error::Error>>;
/// `(arithmetic intensity, GFLOP/s)` of one roofline point.
type Point = (f64, f64);

const SIZE: (u32, u32) = (1100, 720);
const FONT: &str = "sans-serif";
/// Text of every figure: its caption, tick labels, axis descriptions and legend.
const CAPTION: (&str, u32) = (FONT, 24);
const TICKS: (&str, u32) = (FONT, 16);
const AXES: (&str, u32) = (FONT, 18);
const LEGEND: (&str, u32) = (FONT, 15);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is valid TrueType shipped by the `dejavu` crate.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

fn palette(index: usize) -> RGBColor {
    const COLORS: [RGBColor; 12] = [
        RGBColor(0x1f, 0x77, 0xb4),
        RGBColor(0xd6, 0x27, 0x28),
        RGBColor(0x2c, 0xa0, 0x2c),
        RGBColor(0xff, 0x7f, 0x0e),
        RGBColor(0x94, 0x67, 0xbd),
        RGBColor(0x8c, 0x56, 0x4b),
        RGBColor(0x17, 0xbe, 0xcf),
        RGBColor(0x7f, 0x7f, 0x7f),
        RGBColor(0xbc, 0xbd, 0x22),
        RGBColor(0xe3, 0x77, 0xc2),
        RGBColor(0x00, 0x00, 0x00),
        RGBColor(0x39, 0x3b, 0x79),
    ];
    COLORS[index % COLORS.len()]
}

/// Draws figure `$draw` of `$report` on a white page into `$dir/$stem.svg` and
/// `$dir/$stem.png`; evaluates to the PNG's file name.
macro_rules! both {
    ($dir:expr, $stem:expr, $report:expr, $draw:ident) => {{
        let svg = format!("{}.svg", $stem);
        let png = format!("{}.png", $stem);
        let path = $dir.join(&svg);
        let area = SVGBackend::new(&path, SIZE).into_drawing_area();
        area.fill(&WHITE)?;
        $draw($report, &area)?;
        area.present()?;
        let path = $dir.join(&png);
        let area = BitMapBackend::new(&path, SIZE).into_drawing_area();
        area.fill(&WHITE)?;
        $draw($report, &area)?;
        area.present()?;
        png
    }};
}

/// The chart every figure starts from: `caption` on top, the shared margin and label
/// areas (`y_labels` pixels for the y axis's labels).
fn chart_on<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: impl AsRef<str>,
    y_labels: u32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, CAPTION)
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(y_labels);
    builder
}

/// The legend every figure draws, at `position`.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(LEGEND)
        .draw()?;
    Ok(())
}

fn range_log(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 1.0..10.0;
    }
    lo / 2.0..hi * 2.0
}

/// Writes every plot of the report into `dir` and returns `(title, PNG file)` pairs.
pub fn write_plots(
    report: &Report,
    dir: &Path,
) -> Result<Vec<(String, String)>, Box<dyn std::error::Error>> {
    register_font();
    let written = vec![
        (
            "Roofline: every workload and plan, eager joined to fused".to_string(),
            both!(dir, "roofline", report, roofline),
        ),
        (
            "CartPole env-steps/s against n, every plan".to_string(),
            both!(dir, "env_steps", report, env_steps),
        ),
        (
            "The CPU runtime against the device and burn NdArray".to_string(),
            both!(dir, "cpu", report, cpu_throughput),
        ),
        (
            "The policy inside the rollout: collection env-steps/s against n".to_string(),
            both!(dir, "policy", report, policy_throughput),
        ),
        (
            "The ablation ladder: speedup over xla-default".to_string(),
            both!(dir, "ablation", report, ablation),
        ),
        (
            "Elementwise workloads: GB/s against size".to_string(),
            both!(dir, "workloads", report, workloads),
        ),
    ];
    Ok(written)
}

fn env_steps<DB: DrawingBackend>(report: &Report, area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let points = |cells: Vec<&crate::reproduce::AblationCell>| -> Vec<(f64, f64)> {
        cells
            .into_iter()
            .filter_map(|c| {
                c.profile
                    .as_ref()
                    .ok()
                    .map(|p| (c.num_envs as f64, p.env_steps_per_s))
            })
            .collect()
    };
    series.push(("eager".into(), points(report.eager.iter().collect())));
    for row in ladder() {
        series.push((
            row.label.into(),
            points(
                report
                    .ablation
                    .iter()
                    .filter(|c| c.row == row.label)
                    .collect(),
            ),
        ));
    }
    for &backend in crate::studies::burn::BurnBackend::ALL {
        let burn: Vec<(f64, f64)> = report
            .burn
            .iter()
            .filter(|b| b.backend == backend.name())
            .map(|b| (b.num_envs as f64, b.env_steps_per_s))
            .collect();
        if !burn.is_empty() {
            series.push((backend.name().into(), burn));
        }
    }
    throughput_chart(
        area,
        "CartPole-v1 throughput by plan (NextStep autoreset)",
        series,
    )
}

fn cpu_throughput<DB: DrawingBackend>(report: &Report, area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let Some(study) = &report.cpu else {
        return Err("the CPU side was not measured (a partial report has no plots)".into());
    };
    let caption = format!("CartPole-v1 on the CPU ({}) against the device", study.simd);
    throughput_chart(area, &caption, crate::report::cpu::series(report, study))
}

fn policy_throughput<DB: DrawingBackend>(
    report: &Report,
    area: &DrawingArea<DB, Shift>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    throughput_chart(
        area,
        "PPO's sample collection: burn policy + env step against the policy fused into the step",
        crate::report::policy::series(&report.policy),
    )
}

/// Env-steps/s against n on log axes, one line per series.
fn throughput_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    series: Vec<(String, Vec<(f64, f64)>)>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let xs = range_log(series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)));
    let ys = range_log(series.iter().flat_map(|(_, p)| p.iter().map(|p| p.1)));
    let mut chart =
        chart_on(area, caption, 85).build_cartesian_2d(xs.log_scale(), ys.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("parallel envs n")
        .y_desc("env-steps per second")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .label_style(TICKS)
        .axis_desc_style(AXES)
        .draw()?;
    for (i, (label, points)) in series.into_iter().enumerate() {
        let color = palette(i);
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    Ok(())
}

fn ablation<DB: DrawingBackend>(report: &Report, area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let rows = ladder();
    let sizes: Vec<usize> = report.eager.iter().map(|c| c.num_envs).collect();
    let value = |row: &str, n: usize| {
        report
            .ablation
            .iter()
            .find(|c| c.row == row && c.num_envs == n)
            .and_then(|c| c.speedup_over_xla_default)
    };
    let top = rows
        .iter()
        .flat_map(|r| sizes.iter().filter_map(|n| value(r.label, *n)))
        .fold(1.0f64, f64::max);
    let groups = sizes.len() as f64;
    let caption = "Ablation: time-per-step speedup over xla-default (log scale)";
    let mut chart = chart_on(area, caption, 75)
        .build_cartesian_2d(0.0..groups, (0.1f64..top * 10.0).log_scale())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("parallel envs")
        .y_desc("speedup over xla-default (x)")
        .label_style(TICKS)
        .axis_desc_style(AXES)
        .draw()?;
    for (g, n) in sizes.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.1));
        area.draw(&Text::new(format!("n = {n}"), (x - 30, y + 8), TICKS))?;
    }
    let width = 0.8 / rows.len() as f64;
    for (r, row) in rows.iter().enumerate() {
        let color = palette(r);
        let bars: Vec<Rectangle<(f64, f64)>> = sizes
            .iter()
            .enumerate()
            .filter_map(|(g, n)| {
                value(row.label, *n).map(|v| {
                    let x0 = g as f64 + 0.1 + r as f64 * width;
                    Rectangle::new([(x0, 0.1), (x0 + width * 0.9, v)], color.filled())
                })
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(row.label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

fn workloads<DB: DrawingBackend>(report: &Report, area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let names: Vec<String> = report.workloads.iter().fold(Vec::new(), |mut names, w| {
        if !names.contains(&w.workload) {
            names.push(w.workload.clone());
        }
        names
    });
    for name in &names {
        for plan in ["eager", "fused"] {
            let points = report
                .workloads
                .iter()
                .filter(|w| &w.workload == name && w.profile.plan == plan)
                .map(|w| (w.size_bytes as f64 / (1 << 20) as f64, w.profile.gbps))
                .collect();
            series.push((format!("{name} {plan}"), points));
        }
    }
    let xs = range_log(series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)));
    let ys = range_log(
        series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.1))
            .chain([report.roofline.roof_gbps()]),
    );
    let caption = "Elementwise workloads: achieved bandwidth";
    let mut chart =
        chart_on(area, caption, 75).build_cartesian_2d(xs.clone().log_scale(), ys.log_scale())?;
    chart
        .configure_mesh()
        .x_desc("working set of the fused kernel (MB)")
        .y_labels(12)
        .y_desc("achieved GB/s (compulsory bytes / time)")
        .label_style(TICKS)
        .axis_desc_style(AXES)
        .draw()?;
    let copy = report.roofline.roof_gbps();
    chart
        .draw_series(LineSeries::new(
            vec![(xs.start, copy), (xs.end, copy)],
            BLACK.stroke_width(2),
        ))?
        .label(format!("copy roof {copy:.1} GB/s"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (i, (label, points)) in series.into_iter().enumerate() {
        let color = palette(i / 2);
        let dashed = label.ends_with("eager");
        let style = if dashed {
            color.stroke_width(1)
        } else {
            color.stroke_width(3)
        };
        chart
            .draw_series(LineSeries::new(points.clone(), style))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )?;
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    Ok(())
}

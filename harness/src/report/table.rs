//! One table type for every table of the report, rendered to Markdown and to CSV from the
//! same column list. A table is defined once as its columns over its rows ([`Table::of`]):
//! each column's header, unit and where it appears beside the cell it takes from a row.

use std::fmt::Write as _;

use crate::error::Skipped;
use crate::turns::RoundRatio;

/// How a number is shown in Markdown (CSV always gets the raw value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    /// Fixed decimals, no unit.
    Fixed(usize),
    /// Fixed decimals followed by a unit, e.g. `1.23 GB/s`.
    FixedUnit(usize, &'static str),
    /// Three decimals with a k/M/G prefix.
    Si,
    /// Seconds, shown in s, ms or us.
    Seconds,
    /// Seconds, shown in ms with one decimal.
    Millis,
    /// A ratio, shown as `1.23x`.
    Ratio,
    /// A ratio taken round by round (the median round's), shown with the slowest and the
    /// fastest round: `1.23x (0.98-1.51)`.
    RatioSpread {
        /// The slowest round's ratio.
        slowest: f64,
        /// The fastest round's ratio.
        fastest: f64,
    },
    /// A fraction, shown as a percentage with one decimal.
    Percent,
    /// Bytes, shown in whole MiB (`4 MB`).
    Mebibytes,
    /// Bytes, shown with a k/M/G prefix.
    Bytes,
}

impl Format {
    /// Whether the Markdown text of a number carries its unit.
    fn shows_unit(self) -> bool {
        !matches!(self, Format::Fixed(_) | Format::Si)
    }

    /// The Markdown text of `value`.
    pub fn show(self, value: f64) -> String {
        match self {
            Format::Fixed(decimals) => format!("{value:.decimals$}"),
            Format::FixedUnit(decimals, unit) => format!("{value:.decimals$} {unit}"),
            Format::Si => si(value),
            Format::Seconds => seconds(value),
            Format::Millis => format!("{:.1} ms", value * 1e3),
            Format::Ratio => format!("{value:.2}x"),
            Format::RatioSpread { slowest, fastest } => {
                format!("{value:.2}x ({slowest:.2}-{fastest:.2})")
            }
            Format::Percent => format!("{:.1}%", value * 100.0),
            Format::Mebibytes => format!("{} MB", (value as u64) >> 20),
            Format::Bytes => bytes(value),
        }
    }
}

/// `value` with three decimals and a k/M/G prefix.
pub fn si(value: f64) -> String {
    let abs = value.abs();
    let (scaled, unit) = if abs >= 1e9 {
        (value / 1e9, "G")
    } else if abs >= 1e6 {
        (value / 1e6, "M")
    } else if abs >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{scaled:.3}{unit}")
}

/// Bytes with a k/M/G prefix: `9.437 MB`.
pub fn bytes(value: f64) -> String {
    let text = si(value);
    match text.strip_suffix(['k', 'M', 'G']) {
        Some(number) => format!("{number} {}B", &text[number.len()..]),
        None => format!("{text} B"),
    }
}

/// Seconds in s, ms or us.
pub fn seconds(value: f64) -> String {
    if value >= 1.0 {
        format!("{value:.3} s")
    } else if value >= 1e-3 {
        format!("{:.3} ms", value * 1e3)
    } else {
        format!("{:.1} us", value * 1e6)
    }
}

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A measured or derived number and how Markdown shows it.
    Number(f64, Format),
    /// Text.
    Text(String),
    /// Nothing to show: `-` in Markdown, empty in CSV.
    Missing,
}

impl Cell {
    /// A number, or [`Cell::Missing`] for `None`.
    pub fn number(value: Option<f64>, format: Format) -> Cell {
        value.map_or(Cell::Missing, |v| Cell::Number(v, format))
    }

    /// Text.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text(text.into())
    }

    /// Why a measurement was skipped (empty where it ran).
    pub fn skipped<P>(result: &Result<P, Skipped>) -> Cell {
        Cell::text(result.as_ref().err().map_or("", |s| s.reason.as_str()))
    }

    fn markdown(&self) -> String {
        match self {
            Cell::Number(value, format) => format.show(*value),
            Cell::Text(text) => text.replace('|', "\\|"),
            Cell::Missing => "-".into(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Number(value, _) => value.to_string(),
            Cell::Text(text) => csv_field(text),
            Cell::Missing => String::new(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Cell::Text(text) => text.is_empty(),
            Cell::Missing => true,
            Cell::Number(..) => false,
        }
    }
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The median round's `ratio` in Markdown beside its slowest and fastest round:
/// `1.23x (0.98-1.51)` (missing for `None`).
pub fn ratio_cell(ratio: Option<RoundRatio>) -> Cell {
    ratio.map_or(Cell::Missing, |r| {
        Cell::Number(
            r.median,
            Format::RatioSpread {
                slowest: r.slowest_round,
                fastest: r.fastest_round,
            },
        )
    })
}

/// Where a column appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Markdown and CSV.
    Always,
    /// CSV always; Markdown only when some cell of it is not empty.
    WhenPresent,
    /// CSV only (e.g. min and max beside a median).
    CsvOnly,
    /// CSV only; Markdown splits the table into one sub-table per value of this column.
    GroupBy,
}

/// One column: its name, the unit of its raw (CSV) values, and where it appears.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Name shown in both renderings.
    pub name: String,
    /// Unit of the raw values (empty for counts, ratios and text).
    pub unit: &'static str,
    /// Where it appears.
    pub shown: Shown,
}

impl Column {
    /// A column shown everywhere.
    pub fn new(name: impl Into<String>, unit: &'static str) -> Self {
        Self {
            name: name.into(),
            unit,
            shown: Shown::Always,
        }
    }

    /// The same column, shown as `shown` says.
    pub fn shown(mut self, shown: Shown) -> Self {
        self.shown = shown;
        self
    }

    fn csv_header(&self) -> String {
        if self.unit.is_empty() {
            csv_field(&self.name)
        } else {
            csv_field(&format!("{} ({})", self.name, self.unit))
        }
    }
}

/// A column shown everywhere: [`Column::new`], short for the columns of a [`TableOf`].
pub fn col(name: impl Into<String>, unit: &'static str) -> Column {
    Column::new(name, unit)
}

/// A table of measured quantities, one a row: its name, its value, and the unit of its raw
/// value (CSV only).
pub fn quantities(title: &str, file: &str, rows: Vec<(String, Cell, &'static str)>) -> Table {
    Table::of(title, file, rows)
        .col(col("quantity", ""), |q| Cell::text(&q.0))
        .col(col("measured", ""), |q| q.1.clone())
        .col(col("unit", "").shown(Shown::CsvOnly), |q| Cell::text(q.2))
        .build()
}

/// A table of the report: written once, rendered to Markdown and CSV.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Title (a Markdown heading is not part of the table).
    pub title: String,
    /// Name of the CSV file.
    pub file: String,
    /// Columns, in order.
    pub columns: Vec<Column>,
    /// Rows; each has one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table of `rows`, to be defined column by column ([`TableOf::col`]) and finished by
    /// [`TableOf::build`].
    pub fn of<'a, T>(
        title: impl Into<String>,
        file: impl Into<String>,
        rows: impl IntoIterator<Item = T>,
    ) -> TableOf<'a, T> {
        TableOf {
            table: Self {
                title: title.into(),
                file: file.into(),
                columns: Vec::new(),
                rows: Vec::new(),
            },
            rows: rows.into_iter().collect(),
            cells: Vec::new(),
        }
    }

    /// The table as CSV: every column, raw values.
    pub fn csv(&self) -> String {
        let mut out = self
            .columns
            .iter()
            .map(Column::csv_header)
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(Cell::csv).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// The table as Markdown; with a [`Shown::GroupBy`] column, one `### name = value`
    /// sub-table per value, in order of first appearance.
    pub fn markdown(&self) -> String {
        let Some(group) = self.columns.iter().position(|c| c.shown == Shown::GroupBy) else {
            return self.markdown_rows(&self.rows.iter().collect::<Vec<_>>());
        };
        let mut keys: Vec<String> = Vec::new();
        for row in &self.rows {
            let key = row[group].markdown();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let mut out = String::new();
        for key in keys {
            let rows: Vec<&Vec<Cell>> = self
                .rows
                .iter()
                .filter(|row| row[group].markdown() == key)
                .collect();
            let _ = write!(out, "### {} = {key}\n\n", self.columns[group].name);
            out.push_str(&self.markdown_rows(&rows));
            out.push('\n');
        }
        out
    }

    fn markdown_rows(&self, rows: &[&Vec<Cell>]) -> String {
        let visible: Vec<usize> = (0..self.columns.len())
            .filter(|&c| match self.columns[c].shown {
                Shown::Always => true,
                Shown::WhenPresent => rows.iter().any(|row| !row[c].is_empty()),
                Shown::CsvOnly | Shown::GroupBy => false,
            })
            .collect();
        let header = |c: usize| {
            let column = &self.columns[c];
            let shows_unit = rows.iter().any(|row| match row[c] {
                Cell::Number(_, format) => format.shows_unit(),
                _ => false,
            });
            if column.unit.is_empty() || shows_unit {
                column.name.clone()
            } else {
                format!("{} ({})", column.name, column.unit)
            }
        };
        let numeric = |c: usize| rows.iter().any(|row| matches!(row[c], Cell::Number(..)));
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(visible.iter().map(|&c| header(c)).collect());
        out.push_str(&format!(
            "|{}|\n",
            visible
                .iter()
                .map(|&c| if numeric(c) { "---:" } else { "---" })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for row in rows {
            out.push_str(&line(visible.iter().map(|&c| row[c].markdown()).collect()));
        }
        out
    }
}

/// A table of rows of `T` being defined column by column: each column once, with the cell it
/// takes from a row, so that the header list and the cells of every row cannot drift apart.
pub struct TableOf<'a, T> {
    table: Table,
    rows: Vec<T>,
    cells: Vec<CellOf<'a, T>>,
}

/// How a column takes its cell from a row of `T`.
type CellOf<'a, T> = Box<dyn Fn(&T) -> Cell + 'a>;

impl<'a, T> TableOf<'a, T> {
    /// Adds `column`, whose cell of a row is `cell(row)`.
    pub fn col(mut self, column: Column, cell: impl Fn(&T) -> Cell + 'a) -> Self {
        self.table.columns.push(column);
        self.cells.push(Box::new(cell));
        self
    }

    /// Adds `column` of numbers shown as `format` (`None`: missing).
    pub fn num<V: Into<Option<f64>>>(
        self,
        column: Column,
        format: Format,
        value: impl Fn(&T) -> V + 'a,
    ) -> Self {
        self.col(column, move |row| Cell::number(value(row).into(), format))
    }

    /// Adds the three columns of a factor taken round by round: `column`, the median round's
    /// (Markdown shows the slowest and the fastest round beside it, see [`ratio_cell`]), then
    /// its slowest and its fastest round (CSV only); all missing where `ratio` is `None`.
    pub fn factor(
        self,
        column: Column,
        ratio: impl Fn(&T) -> Option<RoundRatio> + Clone + 'a,
    ) -> Self {
        let (slowest, fastest) = (ratio.clone(), ratio.clone());
        let csv = |what: &str| col(format!("{}: {what} round", column.name), "");
        let (slowest_column, fastest_column) = (csv("slowest"), csv("fastest"));
        self.col(column, move |row| ratio_cell(ratio(row)))
            .num(
                slowest_column.shown(Shown::CsvOnly),
                Format::Ratio,
                move |row| slowest(row).map(|r| r.slowest_round),
            )
            .num(
                fastest_column.shown(Shown::CsvOnly),
                Format::Ratio,
                move |row| fastest(row).map(|r| r.fastest_round),
            )
    }

    /// The table: one row of cells per row, in order.
    pub fn build(self) -> Table {
        let Self {
            mut table,
            rows,
            cells,
        } = self;
        table.rows = rows
            .iter()
            .map(|row| cells.iter().map(|cell| cell(row)).collect())
            .collect();
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table::of("t", "t.csv", [1.0_f64, 2.0])
            .num(col("n", "").shown(Shown::GroupBy), Format::Fixed(0), |&n| n)
            .col(col("plan", ""), |_| Cell::text("fused, x"))
            .num(col("time/step", "s"), Format::Seconds, |_| 2e-3)
            .num(col("launches/step", ""), Format::Fixed(1), |_| None::<f64>)
            .num(
                col("min", "s").shown(Shown::CsvOnly),
                Format::Seconds,
                |_| 1e-3,
            )
            .col(col("note", "").shown(Shown::WhenPresent), |_| {
                Cell::text("")
            })
            .build()
    }

    #[test]
    fn csv_has_every_column_and_raw_values() {
        let csv = sample().csv();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("n,plan,time/step (s),launches/step,min (s),note")
        );
        assert_eq!(lines.next(), Some("1,\"fused, x\",0.002,,0.001,"));
    }

    #[test]
    fn markdown_groups_hides_and_marks_missing() {
        let md = sample().markdown();
        assert!(
            md.starts_with("### n = 1\n\n| plan | time/step | launches/step |\n|---|---:|---|\n")
        );
        assert!(md.contains("| fused, x | 2.000 ms | - |\n"));
        assert!(md.contains("### n = 2"));
        assert!(!md.contains("note") && !md.contains("min"));
    }

    #[test]
    fn a_table_of_rows_takes_each_cell_from_its_column() {
        let ratio = crate::turns::RoundRatio {
            median: 1.234,
            slowest_round: 0.98,
            fastest_round: 1.51,
            rounds: 9,
        };
        let rows = [("a|b", Some(ratio)), ("c", None)];
        let table = Table::of("t", "t.csv", &rows)
            .col(col("plan", ""), |row| Cell::text(row.0))
            .factor(col("vs eager", ""), |row| row.1)
            .build();
        assert_eq!(
            table.csv(),
            "plan,vs eager,vs eager: slowest round,vs eager: fastest round\n\
             a|b,1.234,0.98,1.51\nc,,,\n"
        );
        assert_eq!(
            table.markdown(),
            "| plan | vs eager |\n|---|---:|\n| a\\|b | 1.23x (0.98-1.51) |\n| c | - |\n"
        );
        assert_eq!(ratio_cell(None), Cell::Missing);
    }

    #[test]
    fn bytes_carry_their_prefix() {
        assert_eq!(bytes(9_437_184.0), "9.437 MB");
        assert_eq!(bytes(0.0), "0.000 B");
    }
}

//! PNG plots of latency against message size, one panel per operation and one line
//! per algorithm, and a panel of speedup against size, drawn with plotters' bitmap backend. Text uses the DejaVu Sans font
//! file when one is installed (Debian: fonts-dejavu-core); without it the plot is
//! drawn without any text and the caller is told.

use collectives::bench_csv::Row;
use crate::units::{fmt_size, trim_float};
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use std::path::Path;

const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Registers the first font found as "sans-serif"; false if there is none.
fn load_font() -> bool {
    for p in FONT_PATHS {
        if let Ok(bytes) = std::fs::read(p) {
            // plotters keeps fonts for the whole process.
            let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if register_font("sans-serif", FontStyle::Normal, leaked).is_ok() {
                return true;
            }
        }
    }
    false
}

/// A fixed colour per algorithm, so that every panel and every run agree.
fn algo_color(algo: &str) -> RGBAColor {
    let rgb = match algo {
        "mpi" => RGBColor(200, 30, 40),
        "cpr-p2p" => RGBColor(240, 140, 0),
        "c-coll" => RGBColor(30, 90, 200),
        "ring" => RGBColor(20, 150, 60),
        "rd" => RGBColor(130, 50, 170),
        "hier" => RGBColor(120, 80, 40),
        other => return Palette99::pick(other.len()).to_rgba(),
    };
    rgb.to_rgba()
}

/// The i-th operation's colour in the speedup panel (distinct on white).
fn op_color(i: usize) -> RGBAColor {
    const COLORS: [RGBColor; 7] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
    ];
    COLORS[i % COLORS.len()].to_rgba()
}

/// Whether the plot got its text.
#[derive(Debug, PartialEq, Eq)]
pub enum Labels {
    Drawn,
    NoFont,
}

/// Draws `rows` to `path`: one latency panel per operation (in `ops` order), then a
/// panel of the speedup of `compared` over `baseline` against size, one line per
/// operation; `title` goes on top.
pub fn latency_plot(path: &Path, title: &str, ops: &[String], rows: &[Row], baseline: &str, compared: &str) -> Result<Labels, String> {
    let text = load_font();
    let cols = (ops.len() + 1).min(3);
    let grid_rows = (ops.len() + 1).div_ceil(cols);
    let root = BitMapBackend::new(path, (1500, 50 + 450 * grid_rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| err(&x))?;
    let body = if text {
        let (top, body) = root.split_vertically(50);
        top.titled(title, ("sans-serif", 26)).map_err(|x| err(&x))?;
        body
    } else {
        root.clone()
    };
    let panels = body.split_evenly((grid_rows, cols));
    for (panel, op) in panels.iter().zip(ops) {
        latency_panel(panel, op, rows, text)?;
    }
    speedup_panel(&panels[ops.len()], ops, rows, baseline, compared, text)?;
    root.present().map_err(|x| err(&x))?;
    Ok(if text { Labels::Drawn } else { Labels::NoFont })
}

type Panel<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

fn err(e: &dyn std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// x of a row: log2 of its size in MiB, so that ticks fall on the measured powers of two.
fn size_x(r: &Row) -> f64 {
    (r.bytes as f64 / (1 << 20) as f64).log2()
}

/// The smallest and largest of `f` over `rows`.
fn span<'r>(rows: impl Iterator<Item = &'r Row>, f: impl Fn(&Row) -> f64) -> (f64, f64) {
    rows.fold((f64::MAX, f64::MIN), |(a, b), r| (a.min(f(r)), b.max(f(r))))
}

/// A size-axis label: `16M`, `1G`, and nothing between the powers of two.
fn size_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    fmt_size((2f64.powf(x.round()) * (1 << 20) as f64).round() as u64)
}

/// A latency-axis label from milliseconds: `500 us`, `20 ms`, `1.5 s`.
fn latency_label(ms: f64) -> String {
    match ms {
        m if m >= 1000.0 => format!("{} s", trim_float(m / 1000.0)),
        m if m >= 1.0 => format!("{} ms", trim_float(m)),
        m => format!("{} us", trim_float(m * 1000.0)),
    }
}

fn latency_panel(panel: &Panel, op: &str, rows: &[Row], text: bool) -> Result<(), String> {
    let mine: Vec<&Row> = rows.iter().filter(|r| r.op == op && r.lat_avg_us > 0.0).collect();
    if mine.is_empty() {
        return Ok(());
    }
    let ms = |r: &Row| r.lat_avg_us / 1e3;
    let (x0, x1) = span(mine.iter().copied(), size_x);
    let (y0, y1) = span(mine.iter().copied(), ms);
    // Whole decades, so that the log axis always has labelled powers of ten.
    let (y0, y1) = (10f64.powf(y0.log10().floor()), 10f64.powf(y1.log10().ceil().max(y0.log10().floor() + 1.0)));
    let mut builder = ChartBuilder::on(panel);
    builder.margin(12);
    if text {
        builder.caption(op, ("sans-serif", 22)).x_label_area_size(40).y_label_area_size(70);
    }
    let mut chart = builder.build_cartesian_2d(x0 - 0.3..x1 + 0.3, (y0..y1).log_scale()).map_err(|x| err(&x))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("message size")
            .y_desc("latency")
            .label_style(("sans-serif", 14))
            .x_labels((x1 - x0).round() as usize + 1)
            .x_label_formatter(&|v| size_label(*v))
            .y_labels(10)
            .y_label_formatter(&|v| latency_label(*v));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|x| err(&x))?;
    let mut algos: Vec<&str> = mine.iter().map(|r| r.algo.as_str()).collect();
    algos.sort_unstable();
    algos.dedup();
    for algo in &algos {
        let pts: Vec<(f64, f64)> = mine.iter().filter(|r| r.algo == *algo).map(|r| (size_x(r), ms(r))).collect();
        draw_line(&mut chart, pts, algo, algo_color(algo), text)?;
    }
    if text {
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    Ok(())
}

/// Speedup of `compared` over `baseline` per operation and size.
fn speedup_panel(panel: &Panel, ops: &[String], rows: &[Row], baseline: &str, compared: &str, text: bool) -> Result<(), String> {
    let lat = |op: &str, algo: &str, bytes: u64| rows.iter().find(|r| r.op == op && r.algo == algo && r.bytes == bytes && r.lat_avg_us > 0.0).map(|r| r.lat_avg_us);
    let lines: Vec<(&String, Vec<(f64, f64)>)> = ops
        .iter()
        .map(|op| {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| &r.op == op && r.algo == compared)
                .filter_map(|r| Some((size_x(r), lat(op, baseline, r.bytes)? / lat(op, compared, r.bytes)?)))
                .collect();
            (op, pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    if lines.is_empty() {
        return Ok(());
    }
    let all = || lines.iter().flat_map(|(_, pts)| pts.iter());
    let (x0, x1) = all().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let top = all().fold(1.0f64, |m, p| m.max(p.1)) * 1.15;
    let mut builder = ChartBuilder::on(panel);
    builder.margin(12);
    if text {
        builder.caption(format!("speedup of {compared} over {baseline}"), ("sans-serif", 22)).x_label_area_size(40).y_label_area_size(70);
    }
    let mut chart = builder.build_cartesian_2d(x0 - 0.3..x1 + 0.3, 0.0..top).map_err(|x| err(&x))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("message size")
            .y_desc("speedup")
            .label_style(("sans-serif", 14))
            .x_labels((x1 - x0).round() as usize + 1)
            .x_label_formatter(&|v| size_label(*v))
            .y_label_formatter(&|v| format!("{}x", trim_float(*v)));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|x| err(&x))?;
    // Break-even: below this line the compressed algorithm is slower.
    chart.draw_series(LineSeries::new([(x0 - 0.3, 1.0), (x1 + 0.3, 1.0)], BLACK.mix(0.5).stroke_width(1))).map_err(|x| err(&x))?;
    for (i, (op, pts)) in lines.into_iter().enumerate() {
        draw_line(&mut chart, pts, op, op_color(i), text)?;
    }
    if text {
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    }
    Ok(())
}

type Chart<'a, 'b, Y> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>;

/// One series: a line through `pts` (sorted by x here) with a dot on each point.
fn draw_line<'a, Y: Ranged<ValueType = f64>>(chart: &mut Chart<'a, 'a, Y>, mut pts: Vec<(f64, f64)>, name: &str, color: RGBAColor, text: bool) -> Result<(), String> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let series = chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(3))).map_err(|x| err(&x))?;
    if text {
        series.label(name.to_string()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
    }
    chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled()))).map_err(|x| err(&x))?;
    Ok(())
}

fn legend<'a, Y: Ranged<ValueType = f64>>(chart: &mut Chart<'a, 'a, Y>, at: SeriesLabelPosition) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|x| err(&x))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, algo: &str, mib: u64, ms: f64) -> Row {
        Row {
            op: op.into(),
            algo: algo.into(),
            codec: "szx-rel=1e-3".into(),
            ranks: 4,
            bytes: mib << 20,
            lat_avg_us: ms * 1e3,
            lat_min_us: ms * 1e3,
            lat_max_us: ms * 1e3,
            comp_ratio: 1.0,
            max_abs_err: Some(0.0),
            bound: 0.0,
            bound_ok: Some(true),
            comp_ratio_min: 1.0,
            comp_ratio_steps: 1.0,
            cpu_us: None,
            codec_work: None,
            host_steal: None,
        }
    }

    #[test]
    fn plot_writes_a_png_with_lines_in_it() {
        let rows: Vec<Row> = [16u64, 64, 256]
            .iter()
            .flat_map(|&s| [row("bcast", "mpi", s, s as f64 * 8.0), row("bcast", "c-coll", s, s as f64 * 2.0)])
            .collect();
        let path = std::env::temp_dir().join(format!("xtask-plot-{}.png", std::process::id()));
        let labels = latency_plot(&path, "test", &["bcast".to_string()], &rows, "mpi", "c-coll").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // Two panels (latency, speedup) side by side: 1500 x 500 pixels.
        assert_eq!(&bytes[16..24], &[0, 0, 5, 220, 0, 0, 1, 244]);
        // Lines and labels make a picture far from blank: compressed size well above
        // that of a white image (a few KB).
        assert!(bytes.len() > 20_000, "{} bytes, labels {labels:?}", bytes.len());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn axis_labels_read_as_sizes_and_durations() {
        assert_eq!(size_label(4.0), "16M");
        assert_eq!(size_label(10.0), "1G");
        assert_eq!(size_label(4.5), "");
        assert_eq!(latency_label(100.0), "100 ms");
        assert_eq!(latency_label(1000.0), "1 s");
        assert_eq!(latency_label(2500.0), "2.5 s");
        assert_eq!(latency_label(0.5), "500 us");
    }
}

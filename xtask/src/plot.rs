//! PNG plots of latency against message size, one panel per operation and one line
//! per algorithm, drawn with plotters' bitmap backend. Text uses the DejaVu Sans font
//! file when one is installed (Debian: fonts-dejavu-core); without it the plot is
//! drawn without any text and the caller is told.

use crate::bench_csv::Row;
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

/// Whether the plot got its text.
#[derive(Debug, PartialEq, Eq)]
pub enum Labels {
    Drawn,
    NoFont,
}

/// Draws `rows` (ops in `ops` order) to `path`; `title` goes on top.
pub fn latency_plot(path: &Path, title: &str, ops: &[String], rows: &[Row]) -> Result<Labels, String> {
    let text = load_font();
    let root = BitMapBackend::new(path, (1500, 950)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| format!("plot: {e}");
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let body = if text {
        let (top, body) = root.split_vertically(50);
        top.titled(title, ("sans-serif", 26)).map_err(|x| e(&x))?;
        body
    } else {
        root.clone()
    };
    let panels = body.split_evenly((2, 3));
    for (panel, op) in panels.iter().zip(ops) {
        let mine: Vec<&Row> = rows.iter().filter(|r| &r.op == op && r.lat_avg_us > 0.0).collect();
        if mine.is_empty() {
            continue;
        }
        // x is log2 of the size in MiB, so that ticks fall on the measured powers of two.
        let mb = |r: &Row| (r.bytes as f64 / (1 << 20) as f64).log2();
        let ms = |r: &Row| r.lat_avg_us / 1e3;
        let (x0, x1) = mine.iter().fold((f64::MAX, 0f64), |(a, b), r| (a.min(mb(r)), b.max(mb(r))));
        let (y0, y1) = mine.iter().fold((f64::MAX, 0f64), |(a, b), r| (a.min(ms(r)), b.max(ms(r))));
        let mut builder = ChartBuilder::on(panel);
        builder.margin(12);
        if text {
            builder.caption(op, ("sans-serif", 22)).x_label_area_size(40).y_label_area_size(60);
        }
        let mut chart = builder
            .build_cartesian_2d(x0 - 0.3..x1 + 0.3, (y0 / 1.5..y1 * 1.5).log_scale())
            .map_err(|x| e(&x))?;
        let mut mesh = chart.configure_mesh();
        if text {
            let ticks = (x1 - x0).round() as usize + 1;
            mesh.x_desc("message size (MiB)")
                .y_desc("latency (ms)")
                .label_style(("sans-serif", 14))
                .x_labels(ticks)
                .x_label_formatter(&|v| format!("{}", 2f64.powf(*v).round()))
                .y_label_formatter(&|v| format!("{v:.0}"));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw().map_err(|x| e(&x))?;
        let mut algos: Vec<&str> = mine.iter().map(|r| r.algo.as_str()).collect();
        algos.sort_unstable();
        algos.dedup();
        for algo in &algos {
            let color = algo_color(algo);
            let mut pts: Vec<(f64, f64)> = mine.iter().filter(|r| r.algo == *algo).map(|r| (mb(r), ms(r))).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let series = chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(3))).map_err(|x| e(&x))?;
            if text {
                let name = algo.to_string();
                series.label(name).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
            }
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 4, color.filled()))).map_err(|x| e(&x))?;
        }
        if text {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(|x| e(&x))?;
        }
    }
    root.present().map_err(|x| e(&x))?;
    Ok(if text { Labels::Drawn } else { Labels::NoFont })
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
            max_abs_err: 0.0,
            bound: 0.0,
            bound_ok: true,
        }
    }

    #[test]
    fn plot_writes_a_png_with_lines_in_it() {
        let rows: Vec<Row> = [16u64, 64, 256]
            .iter()
            .flat_map(|&s| [row("bcast", "mpi", s, s as f64 * 8.0), row("bcast", "c-coll", s, s as f64 * 2.0)])
            .collect();
        let path = std::env::temp_dir().join(format!("xtask-plot-{}.png", std::process::id()));
        let labels = latency_plot(&path, "test", &["bcast".to_string()], &rows).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // Lines and labels make a picture far from blank: compressed size well above
        // that of a white 1500x950 image (a few KB).
        assert!(bytes.len() > 20_000, "{} bytes, labels {labels:?}", bytes.len());
        std::fs::remove_file(&path).unwrap();
    }
}

//! The page's charts, SVG through plotters. Each carries its run's caption
//! under the title, so a chart from another run shows it.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{thousands, Run};

/// One command's rows in `benches/callgrind.sh` ("" when it has none).
pub struct Call {
    pub label: &'static str,
    pub module: &'static str,
    pub functions: &'static str,
    /// The plain script of `benches/lua/` (checks nothing).
    pub lua: &'static str,
    /// The scripts users run today (benches/peers/), cheapest first shown.
    pub peers: &'static [&'static str],
    /// redis-cell's `CL.THROTTLE` row (needs `RL_REDIS_CELL`).
    pub cell: Option<&'static str>,
}

const fn call(
    label: &'static str,
    module: &'static str,
    functions: &'static str,
    lua: &'static str,
    peers: &'static [&'static str],
) -> Call {
    Call {
        label,
        module,
        functions,
        lua,
        peers,
        cell: None,
    }
}

pub const CALLS: &[Call] = &[
    call(
        "RL.SLIDE, many keys",
        "slide",
        "fn_slide",
        "lua_slide",
        &["limits_moving"],
    ),
    call(
        "RL.SLIDE, hot key (denied)",
        "slide_hot",
        "fn_slide_hot",
        "lua_slide_hot",
        &["limits_moving_hot"],
    ),
    call(
        "RL.SLIDE, key full (denied)",
        "",
        "fn_slide_full",
        "",
        &["limits_moving_full"],
    ),
    call(
        "RL.BUCKETS, many keys",
        "buckets",
        "fn_buckets",
        "lua_buckets",
        &["upstash_sliding", "limits_sliding"],
    ),
    call(
        "RL.BUCKETS, hot key (denied)",
        "buckets_hot",
        "fn_buckets_hot",
        "lua_buckets_hot",
        &[],
    ),
    Call {
        label: "RL.THROTTLE",
        module: "throttle",
        functions: "fn_throttle",
        lua: "",
        peers: &["upstash_token"],
        cell: Some("cl_throttle"),
    },
    call(
        "RL.FIXED",
        "fixed",
        "fn_fixed",
        "",
        &["limits_fixed", "rlf_redis"],
    ),
    call(
        "RL.FIXED, blocked (denied)",
        "fixed_blocked",
        "fn_fixed_blocked",
        "",
        &[],
    ),
    call(
        "RL.THROTTLE, blocked (denied)",
        "throttle_blocked",
        "fn_throttle_blocked",
        "",
        &[],
    ),
    call("RL.COUNT", "count", "fn_count", "", &[]),
    call("RL.PEEK SLIDE", "peek", "fn_peek", "", &[]),
    call("RL.ALL SLIDE + THROTTLE", "all", "fn_all", "", &[]),
    call(
        "RL.REFUND SLIDE",
        "refund_slide",
        "fn_refund_slide",
        "",
        &[],
    ),
    call(
        "RL.REFUND BUCKETS",
        "refund_buckets",
        "fn_refund_buckets",
        "",
        &[],
    ),
    call(
        "RL.REFUND THROTTLE",
        "refund_throttle",
        "fn_refund_throttle",
        "",
        &[],
    ),
    call(
        "RL.REFUND FIXED",
        "refund_fixed",
        "fn_refund_fixed",
        "",
        &[],
    ),
    call(
        "RL.CHARGE SLIDE",
        "charge_slide",
        "fn_charge_slide",
        "",
        &[],
    ),
    call(
        "RL.CHARGE BUCKETS",
        "charge_buckets",
        "fn_charge_buckets",
        "",
        &[],
    ),
    call(
        "RL.CHARGE THROTTLE",
        "charge_throttle",
        "fn_charge_throttle",
        "",
        &[],
    ),
    call(
        "RL.CHARGE FIXED",
        "charge_fixed",
        "fn_charge_fixed",
        "",
        &[],
    ),
    call("RL.ACQUIRE", "acquire", "fn_acquire", "lua_acquire", &[]),
    call(
        "RL.RELEASE (id not held)",
        "release",
        "fn_release",
        "lua_release",
        &[],
    ),
];

/// A peer row's name on the page.
pub fn peer_name(row: &str) -> &'static str {
    match row {
        "limits_moving" | "limits_moving_hot" | "limits_moving_full" => "`limits` moving window",
        "limits_sliding" => "`limits` sliding window counter",
        "limits_fixed" => "`limits` fixed window",
        "rlf_redis" => "rate-limiter-flexible RateLimiterRedis",
        "upstash_sliding" => "upstash `slidingWindow`",
        "upstash_token" => "upstash `tokenBucket`",
        "rlr_express" => "rate-limit-redis",
        "redis_rate" => "go-redis/redis_rate GCRA script",
        "spring_gateway" => "Spring Cloud Gateway `request_rate_limiter.lua`",
        _ => "?",
    }
}

const SERIES: [(&str, RGBColor); 5] = [
    ("module", RGBColor(31, 119, 180)),
    ("function edition", RGBColor(255, 127, 14)),
    ("plain Lua script (benches/lua)", RGBColor(148, 103, 189)),
    (
        "the script users run (limits, upstash, ...)",
        RGBColor(140, 140, 140),
    ),
    ("redis-cell CL.THROTTLE", RGBColor(44, 160, 44)),
];

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// Instructions per call: for each command, a bar per edition and per
/// script it is compared with.
pub fn instructions(path: &Path, cost: &BTreeMap<String, u64>, run: &Run) {
    let bars: Vec<(&str, Vec<Option<u64>>)> = CALLS
        .iter()
        .map(|c| {
            let get = |row: &str| cost.get(row).copied();
            (
                c.label,
                vec![
                    get(c.module),
                    get(c.functions),
                    get(c.lua),
                    c.peers.iter().find_map(|p| get(p)),
                    c.cell.and_then(get),
                ],
            )
        })
        .collect();
    let max = bars
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .copied()
        .max()
        .unwrap_or(1) as f64;
    const ROW: u32 = 58;
    let height = 150 + ROW * bars.len() as u32;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let (title, body) = root.split_vertically(60);
    title
        .draw(&Text::new(
            "Instructions per call (callgrind, Redis 7.0; fewer is better)",
            (20, 10),
            font(20),
        ))
        .unwrap();
    title
        .draw(&Text::new(run.caption(), (20, 38), font(13)))
        .unwrap();
    let n = bars.len() as f64;
    let mut chart = ChartBuilder::on(&body)
        .margin_right(60)
        .margin_left(10)
        .x_label_area_size(30)
        .y_label_area_size(220)
        .build_cartesian_2d(0.0..max * 1.12, n..0.0)
        .unwrap();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(8)
        .x_max_light_lines(1)
        .x_label_formatter(&|x| format!("{}k", (*x / 1000.0).round()))
        .x_desc("instructions per call")
        .label_style(font(13))
        .draw()
        .unwrap();
    let slot = 0.8 / SERIES.len() as f64;
    for (i, (label, values)) in bars.iter().enumerate() {
        let top = i as f64 + 0.1;
        // The command's name, right-aligned against the axis.
        // backend_coord is in the whole image's pixels: draw on the root.
        let (x0, y0) = chart.backend_coord(&(0.0, i as f64 + 0.5));
        root.draw(&Text::new(
            label.to_string(),
            (x0 - 8, y0),
            font(13).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .unwrap();
        for (j, v) in values.iter().enumerate() {
            let Some(v) = v else { continue };
            let (y, color) = (top + j as f64 * slot, SERIES[j].1);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y), (*v as f64, y + slot * 0.9)],
                    color.filled(),
                )))
                .unwrap();
            chart
                .draw_series(std::iter::once(Text::new(
                    thousands(*v),
                    (*v as f64 + max * 0.005, y + slot * 0.45),
                    font(10).pos(Pos::new(HPos::Left, VPos::Center)),
                )))
                .unwrap();
        }
    }
    legend(&title, &SERIES.map(|(n, c)| (n, c)), 520);
    root.present().unwrap();
}

/// A legend of coloured squares, in the title area from `x`.
fn legend(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    items: &[(&str, RGBColor)],
    x: i32,
) {
    for (i, (name, color)) in items.iter().enumerate() {
        let (col, row) = (i as i32 % 2, i as i32 / 2);
        let (px, py) = (x + col * 240, 6 + row * 17);
        area.draw(&Rectangle::new(
            [(px, py), (px + 11, py + 11)],
            color.filled(),
        ))
        .unwrap();
        area.draw(&Text::new(name.to_string(), (px + 16, py), font(12)))
            .unwrap();
    }
}

const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// The sweep: one panel per axis (buckets read, entries removed, clauses),
/// a line per case through its medians, crosses at the maxima, and the
/// 0.5 ms and 1 ms lines.
pub fn worst(path: &Path, edition: &str, points: &[&Vec<String>], run: &Run) {
    let root = SVGBackend::new(path, (1200, 520)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let (title, body) = root.split_vertically(60);
    let name = if edition == "module" {
        "the module"
    } else {
        "the function edition"
    };
    title
        .draw(&Text::new(
            format!("Worst-case server time of one call, {name} (Redis 7.0, SLOWLOG)"),
            (20, 10),
            font(20),
        ))
        .unwrap();
    title
        .draw(&Text::new(
            format!("{}; line: median of 7 calls, ×: max", run.caption()),
            (20, 38),
            font(13),
        ))
        .unwrap();
    let panels = body.split_evenly((1, super::super::worst::sweep::AXES.len()));
    for (panel, (axis, what)) in panels.iter().zip(super::super::worst::sweep::AXES) {
        let mine: Vec<&&Vec<String>> = points.iter().filter(|r| r[2] == axis).collect();
        let num = |s: &str| s.parse::<f64>().unwrap_or(0.0);
        let x_max = mine.iter().map(|r| num(&r[4])).fold(1.0, f64::max);
        let y_max = mine.iter().map(|r| num(&r[6])).fold(1_100.0, f64::max) * 1.08;
        let mut chart = ChartBuilder::on(panel)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max)
            .unwrap();
        chart
            .configure_mesh()
            .x_desc(what)
            .y_desc("µs")
            .x_labels(6)
            .y_labels(8)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(RGBColor(242, 242, 242))
            .label_style(font(12))
            .draw()
            .unwrap();
        for (bound, label) in [(1_000.0, "1 ms"), (500.0, "0.5 ms")] {
            let red = RGBColor(214, 39, 40);
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, bound), (x_max * 1.05, bound)],
                    6,
                    4,
                    red.stroke_width(if bound > 600.0 { 2 } else { 1 }),
                ))
                .unwrap();
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (x_max * 1.04, bound),
                    font(11)
                        .color(&red)
                        .pos(Pos::new(HPos::Right, VPos::Bottom)),
                )))
                .unwrap();
        }
        let mut series: Vec<&str> = Vec::new();
        for r in &mine {
            if !series.contains(&r[3].as_str()) {
                series.push(&r[3]);
            }
        }
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64, f64)> = mine
                .iter()
                .filter(|r| r[3] == *s)
                .map(|r| (num(&r[4]), num(&r[5]), num(&r[6])))
                .collect();
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.0, p.1)),
                    color.stroke_width(2),
                ))
                .unwrap()
                .label(s.to_string())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.0, p.1), 3, color.filled())),
                )
                .unwrap();
            chart
                .draw_series(pts.iter().map(|p| Cross::new((p.0, p.2), 4, color)))
                .unwrap();
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .margin(8)
                .label_font(font(11))
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .draw()
                .unwrap();
        }
    }
    root.present().unwrap();
}

/// Memory per key: RL.SLIDE against its entries, RL.BUCKETS against its
/// buckets filled, each beside the Lua script's key, per server.
pub fn memory(path: &Path, rows: &[&Vec<String>], run: &Run) {
    let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
    root.fill(&WHITE).unwrap();
    let (title, body) = root.split_vertically(60);
    title
        .draw(&Text::new(
            "Memory per key (MEMORY USAGE), against what the key holds",
            (20, 10),
            font(20),
        ))
        .unwrap();
    title
        .draw(&Text::new(run.caption(), (20, 38), font(13)))
        .unwrap();
    let panels = body.split_evenly((1, 2));
    // memory.csv: server,kind,param,rl_bytes,lua_bytes
    for (panel, (kind, what)) in panels.iter().zip([
        ("slide", "RL.SLIDE entries"),
        ("buckets", "RL.BUCKETS buckets filled (1 request each)"),
    ]) {
        let mine: Vec<&&Vec<String>> = rows.iter().filter(|r| r[1] == kind).collect();
        let num = |s: &str| s.parse::<f64>().unwrap_or(0.0);
        let x_max = mine.iter().map(|r| num(&r[2])).fold(10.0, f64::max);
        let x_min = mine
            .iter()
            .map(|r| num(&r[2]))
            .fold(x_max, f64::min)
            .max(1.0);
        let y_max = mine
            .iter()
            .flat_map(|r| [num(&r[3]), num(&r[4])])
            .fold(100.0, f64::max);
        let y_min = mine
            .iter()
            .flat_map(|r| [num(&r[3]), num(&r[4])])
            .fold(y_max, f64::min)
            .max(1.0);
        let mut chart = ChartBuilder::on(panel)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(65)
            .build_cartesian_2d(
                (x_min * 0.8..x_max * 1.25).log_scale(),
                (y_min * 0.7..y_max * 1.4).log_scale(),
            )
            .unwrap();
        chart
            .configure_mesh()
            .x_desc(what)
            .y_desc("bytes per key")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| thousands(*y as u64))
            .light_line_style(RGBColor(242, 242, 242))
            .label_style(font(12))
            .draw()
            .unwrap();
        let mut servers: Vec<&str> = Vec::new();
        for r in &mine {
            if !servers.contains(&r[0].as_str()) {
                servers.push(&r[0]);
            }
        }
        for (i, server) in servers.iter().enumerate() {
            for (col, who, color) in [(3, "rl", PALETTE[0]), (4, "Lua script", PALETTE[3])] {
                let pts: Vec<(f64, f64)> = mine
                    .iter()
                    .filter(|r| r[0] == *server)
                    .map(|r| (num(&r[2]), num(&r[col])))
                    .collect();
                let style = color.stroke_width(2);
                let label = format!("{who}, {server}");
                if i == 0 {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), style))
                        .unwrap()
                        .label(label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(pts.clone(), 5, 4, style))
                        .unwrap()
                        .label(label)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 5, y)], style));
                }
                chart
                    .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
                    .unwrap();
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .margin(8)
            .label_font(font(11))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .draw()
            .unwrap();
    }
    root.present().unwrap();
}

//! Policy pane: the device policy (requiredMode, fullThreshold, partialThreshold) and
//! the selection policy (aggregate mode, elseMode, recommendation strategy). Every change
//! is saved as a new revision at once; below the fields, the selection's verdict counts,
//! how many targets flip per step of each threshold (`F ◂3 ▸0`: lowering
//! fullThreshold by 0.05 moves 3 targets, raising it none), and a histogram of target
//! scores with the thresholds drawn on it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde::Serialize;

use super::action::{Action, Changed};
use super::modal::{Modal, PromptFor};
use super::pane::{Ctx, Look, Pane};
use super::theme::{Theme, verdict_glyph};
use super::widgets::pane_block;
use crate::app::types::DeviceVerdict;
use crate::app::types::{
    AggregateMode, DevicePolicy, ElseMode, RecommendationStrategy, RequiredMode, SelectionPolicy,
    Verdict,
};

/// How much `←`/`→`/`-`/`+` move a threshold.
pub const STEP: f64 = 0.05;
/// Buckets of the score histogram (0.0–1.0).
pub const BUCKETS: usize = 10;

/// The pane's fields, in display order (`PromptFor::PolicyValue { field }` indexes this):
/// the one list of policy values (`PolicyField`).
pub use crate::app::types::PolicyField as Field;

pub const FIELDS: &[Field] = Field::ALL;

// The values each mode cycles through: listed by the enums themselves.
const REQUIRED_MODES: &[RequiredMode] = <RequiredMode as strum::VariantArray>::VARIANTS;
const AGGREGATE_MODES: &[AggregateMode] = <AggregateMode as strum::VariantArray>::VARIANTS;
const ELSE_MODES: &[ElseMode] = <ElseMode as strum::VariantArray>::VARIANTS;
const STRATEGIES: &[RecommendationStrategy] =
    <RecommendationStrategy as strum::VariantArray>::VARIANTS;

/// What the pane shows of a policy value.
trait Shown {
    /// The short label the pane shows.
    fn label(self) -> &'static str;
    fn threshold(self) -> bool;
    fn value(self, device: &DevicePolicy, selection: &SelectionPolicy) -> String;
}

impl Shown for Field {
    fn label(self) -> &'static str {
        match self {
            Field::RequiredMode => "required",
            Field::FullThreshold => "full ≥",
            Field::PartialThreshold => "partial ≥",
            Field::AggregateMode => "aggregate",
            Field::ElseMode => "else",
            Field::Strategy => "recommend",
        }
    }

    fn threshold(self) -> bool {
        matches!(self, Field::FullThreshold | Field::PartialThreshold)
    }

    fn value(self, device: &DevicePolicy, selection: &SelectionPolicy) -> String {
        match self {
            Field::RequiredMode => serde_name(&device.required_mode),
            Field::FullThreshold => format_threshold(device.full_threshold),
            Field::PartialThreshold => format_threshold(device.partial_threshold),
            Field::AggregateMode => serde_name(&selection.aggregate.mode),
            Field::ElseMode => serde_name(&selection.aggregate.else_mode),
            Field::Strategy => serde_name(&selection.recommendation.strategy),
        }
    }
}

#[derive(Debug, Default)]
pub struct State {
    /// Index into [`FIELDS`] of the highlighted field.
    pub field: usize,
    /// How many targets flip per step of each threshold, for the state it was counted
    /// on (a fingerprint of the selection's columns, overrides and policy): counted
    /// when that changes, not per frame.
    pub flips: std::cell::RefCell<Option<(u64, Flips)>>,
}

/// Targets that change verdict when a threshold moves one step: (lowered, raised) for
/// `fullThreshold`, then for `partialThreshold`; `None` where the step leaves 0..=1.
pub type Flips = [(Option<usize>, Option<usize>); 2];

/// What the flip counts depend on: the selection's columns (by identity), its
/// overrides and the device policy.
fn fingerprint(ws: &crate::app::workspace::Session) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ws.eval.selection.hash(&mut h);
    for c in &ws.eval.columns {
        (std::sync::Arc::as_ptr(c) as usize).hash(&mut h);
    }
    ws.eval.overrides.hash(&mut h);
    let d = &ws.page.device_policy;
    (d.full_threshold.to_bits(), d.partial_threshold.to_bits()).hash(&mut h);
    serde_name(&d.required_mode).hash(&mut h);
    for r in &ws.page.rules {
        (r.required, r.weight.to_bits()).hash(&mut h);
    }
    h.finish()
}

/// How many targets flip per step (±[`STEP`]) of each threshold.
fn flips(ws: &crate::app::workspace::Session) -> Flips {
    let d = &ws.page.device_policy;
    let mut asked = Vec::new();
    let mut at = Vec::new();
    for (field, now) in [
        (Field::FullThreshold, d.full_threshold),
        (Field::PartialThreshold, d.partial_threshold),
    ] {
        for steps in [-1, 1] {
            let next = step(now, steps);
            if next != now {
                at.push(Some(asked.len()));
                asked.push((field, next));
            } else {
                at.push(None);
            }
        }
    }
    let counts = ws.threshold_flips(&asked);
    let get = |i: usize| at[i].map(|k| counts[k]);
    [(get(0), get(1)), (get(2), get(3))]
}

/// An enum value's name in the page file (`ANY_REQUIRED_FAIL_IS_0`).
fn serde_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Rounds to 2 decimals.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A threshold moved by `steps` × 0.05, clamped to 0..=1 and rounded to 2 decimals.
pub fn step(value: f64, steps: i32) -> f64 {
    round2((value + f64::from(steps) * STEP).clamp(0.0, 1.0))
}

/// `0.40`, or the exact value when it has more than 2 decimals (`0.333`).
pub fn format_threshold(v: f64) -> String {
    if round2(v) == v {
        format!("{v:.2}")
    } else {
        format!("{v}")
    }
}

/// The device policy with `field` (a threshold) set to `value`, or why it can't be.
pub fn with_threshold(
    device: &DevicePolicy,
    field: Field,
    value: f64,
) -> Result<DevicePolicy, String> {
    if !value.is_finite() || !(0.0..=1.0).contains(&value) {
        return Err(format!(
            "{} must be between 0 and 1, got {value}",
            field.name()
        ));
    }
    let mut out = device.clone();
    match field {
        Field::FullThreshold => {
            if value < device.partial_threshold {
                return Err(format!(
                    "fullThreshold {} would be below partialThreshold {}: lower partialThreshold first",
                    format_threshold(value),
                    format_threshold(device.partial_threshold)
                ));
            }
            out.full_threshold = value;
        }
        Field::PartialThreshold => {
            if value > device.full_threshold {
                return Err(format!(
                    "partialThreshold {} would be above fullThreshold {}: raise fullThreshold first",
                    format_threshold(value),
                    format_threshold(device.full_threshold)
                ));
            }
            out.partial_threshold = value;
        }
        other => return Err(format!("{} is not a threshold", other.name())),
    }
    Ok(out)
}

/// The value after `current` in `values` (before it when `forward` is false), wrapping.
pub fn cycle<T: Copy + PartialEq>(values: &[T], current: T, forward: bool) -> T {
    let n = values.len();
    if n == 0 {
        return current;
    }
    let i = values.iter().position(|&v| v == current).unwrap_or(0);
    let j = if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    values[j]
}

/// The policies with enum field `field` cycled one step.
fn cycled(
    device: &DevicePolicy,
    selection: &SelectionPolicy,
    field: Field,
    forward: bool,
) -> (DevicePolicy, SelectionPolicy) {
    let (mut d, mut s) = (device.clone(), selection.clone());
    match field {
        Field::RequiredMode => d.required_mode = cycle(REQUIRED_MODES, d.required_mode, forward),
        Field::AggregateMode => {
            s.aggregate.mode = cycle(AGGREGATE_MODES, s.aggregate.mode, forward)
        }
        Field::ElseMode => {
            s.aggregate.else_mode = cycle(ELSE_MODES, s.aggregate.else_mode, forward)
        }
        Field::Strategy => {
            s.recommendation.strategy = cycle(STRATEGIES, s.recommendation.strategy, forward)
        }
        Field::FullThreshold | Field::PartialThreshold => {}
    }
    (d, s)
}

/// The policies with enum field `field` set from typed text (serde name, any case,
/// `-` or space for `_`), or why it can't be.
pub use crate::app::policy::parse_threshold;

/// Sets both policies and saves them at once (a typed value is one deliberate change).
fn save_now(
    ctx: &mut Ctx<'_>,
    device: DevicePolicy,
    selection: SelectionPolicy,
    what: String,
) -> Vec<Action> {
    match ctx.ws.set_policies(device, selection) {
        Ok(rev) => {
            ctx.status.info(format!("{what} · saved (revision {rev})"));
            vec![Action::Changed(Changed::POLICY)]
        }
        Err(e) => {
            ctx.status.app_error(&e);
            vec![]
        }
    }
}

/// Sets both policies in memory (verdicts move at once); they are saved as one
/// revision when the tuning pauses. The panes then see `Changed(POLICY)`.
fn save(
    ctx: &mut Ctx<'_>,
    device: DevicePolicy,
    selection: SelectionPolicy,
    what: String,
) -> Vec<Action> {
    match ctx.ws.tune_policies(device, selection) {
        Ok(()) => {
            ctx.status.info(format!("{what} · saving…"));
            vec![Action::Changed(Changed::POLICY)]
        }
        Err(e) => {
            ctx.status.app_error(&e);
            vec![]
        }
    }
}

/// Moves a threshold by `steps` × 0.05, or cycles an enum field.
fn adjust(state: &State, ctx: &mut Ctx<'_>, forward: bool) -> Vec<Action> {
    let field = FIELDS[state.field];
    let device = ctx.ws.page.device_policy.clone();
    let selection = ctx.ws.page.selection_policy.clone();
    if field.threshold() {
        let current = match field {
            Field::FullThreshold => device.full_threshold,
            _ => device.partial_threshold,
        };
        let next = step(current, if forward { 1 } else { -1 });
        if next == current {
            ctx.status.info(format!(
                "{} is already {}",
                field.name(),
                format_threshold(current)
            ));
            return vec![];
        }
        match with_threshold(&device, field, next) {
            Ok(d) => save(
                ctx,
                d,
                selection,
                format!("{} {}", field.name(), format_threshold(next)),
            ),
            Err(m) => {
                ctx.status.error(m);
                vec![]
            }
        }
    } else {
        let (d, s) = cycled(&device, &selection, field, forward);
        let value = field.value(&d, &s);
        if d == device && s == selection {
            ctx.status
                .info(format!("{} has only one value: {value}", field.name()));
            return vec![];
        }
        save(ctx, d, s, format!("{} {value}", field.name()))
    }
}

pub fn update(state: &mut State, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
    state.field = state.field.min(FIELDS.len() - 1);
    let field = FIELDS[state.field];
    match action {
        Action::Up => state.field = state.field.saturating_sub(1),
        Action::Down => state.field = (state.field + 1).min(FIELDS.len() - 1),
        Action::Home | Action::PageUp => state.field = 0,
        Action::End | Action::PageDown => state.field = FIELDS.len() - 1,
        Action::Left | Action::Decrease => return adjust(state, ctx, false),
        Action::Right | Action::Increase => return adjust(state, ctx, true),
        Action::Cycle if !field.threshold() => return adjust(state, ctx, true),
        Action::Cycle => ctx
            .status
            .info("Space cycles modes; on a threshold use ←/→ (±0.05) or Enter to type"),
        Action::Enter if field.threshold() => {
            let device = &ctx.ws.page.device_policy;
            let range = match field {
                Field::FullThreshold => {
                    format!("{} to 1", format_threshold(device.partial_threshold))
                }
                _ => format!("0 to {}", format_threshold(device.full_threshold)),
            };
            let now = field.value(device, &ctx.ws.page.selection_policy);
            *ctx.modal = Some(Modal::Prompt {
                title: format!("{} (now {now}; {range})", field.name()),
                input: Box::default(),
                purpose: PromptFor::PolicyValue { field: state.field },
            });
        }
        Action::Enter => return adjust(state, ctx, true),
        _ => {}
    }
    vec![]
}

/// A value typed for field `field` (from the prompt).
pub fn set_typed(state: &mut State, ctx: &mut Ctx<'_>, field: usize, text: &str) -> Vec<Action> {
    let Some(&f) = FIELDS.get(field) else {
        return vec![];
    };
    state.field = field;
    let device = ctx.ws.page.device_policy.clone();
    let selection = ctx.ws.page.selection_policy.clone();
    // The one parser of policy values, shared with `rulebench policy set`.
    let result = {
        let (mut d, mut s) = (device.clone(), selection.clone());
        crate::app::policy::set(&mut d, &mut s, f.name(), text).and_then(|()| {
            if f.threshold() {
                let v = match f {
                    Field::FullThreshold => d.full_threshold,
                    _ => d.partial_threshold,
                };
                with_threshold(&device, f, v).map(|d| (d, s))
            } else {
                Ok((d, s))
            }
        })
    };
    match result {
        Ok((d, s)) if d == device && s == selection => {
            ctx.status.info(format!(
                "{} unchanged ({})",
                f.name(),
                f.value(&device, &selection)
            ));
            vec![]
        }
        Ok((d, s)) => {
            let value = f.value(&d, &s);
            save_now(ctx, d, s, format!("{} {value}", f.name()))
        }
        Err(m) => {
            ctx.status.error(m);
            vec![]
        }
    }
}

/// The score bucket (of [`BUCKETS`] over 0.0–1.0) of a score; 1.0 goes in the last.
pub fn bucket_of(score: f64) -> usize {
    if score.is_nan() || score <= 0.0 {
        return 0;
    }
    // The small epsilon keeps 0.6 (= 3/5) in the 0.6 bucket despite float error.
    let b = (score * BUCKETS as f64 + 1e-9).floor() as usize;
    b.min(BUCKETS - 1)
}

/// Verdict counts (index = verdict) and the score histogram, in one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    pub counts: [usize; 3],
    pub buckets: [usize; BUCKETS],
}

pub fn summarize<'a>(devices: impl IntoIterator<Item = &'a DeviceVerdict>) -> Summary {
    let mut s = Summary::default();
    for d in devices {
        s.counts[usize::from(d.verdict.number())] += 1;
        s.buckets[bucket_of(d.score)] += 1;
    }
    s
}

/// The histogram plot column of a threshold, given `bw` columns per bucket (the plot
/// is `bw × BUCKETS + 1` columns; column `k × bw` is the boundary at score k/10).
fn threshold_column(t: f64, bw: usize) -> usize {
    let cols = bw * BUCKETS;
    ((t.clamp(0.0, 1.0) * cols as f64).round() as usize).min(cols)
}

const EIGHTHS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// The histogram as lines: a row of F/P labels, `height` rows of bars, an axis.
fn histogram_lines(
    buckets: &[usize; BUCKETS],
    device: &DevicePolicy,
    width: usize,
    height: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let bw = ((width.saturating_sub(1)) / BUCKETS).clamp(2, 6);
    let cols = bw * BUCKETS + 1;
    let fc = threshold_column(device.full_threshold, bw);
    let pc = threshold_column(device.partial_threshold, bw);
    let max = buckets.iter().copied().max().unwrap_or(0);
    // Bar heights in eighths of a row; a non-empty bucket shows at least one eighth.
    let heights: Vec<usize> = buckets
        .iter()
        .map(|&n| {
            if n == 0 || max == 0 {
                0
            } else {
                ((n * height * 8) as f64 / max as f64).round().max(1.0) as usize
            }
        })
        .collect();
    // Each column's score region: ≥ full, ≥ partial, below.
    let region = |c: usize| -> Style {
        if c >= fc {
            theme.pass()
        } else if c >= pc {
            theme.warn()
        } else {
            theme.fail()
        }
    };
    let marker_style = |c: usize| if c == fc { theme.pass() } else { theme.warn() };
    let mut lines = Vec::with_capacity(height + 2);
    // Labels: F and P above their columns (side by side when they coincide).
    let (pl, fl) = match (pc == fc, fc) {
        (true, 0) => (0, 1),
        (true, c) => (c - 1, c),
        (false, _) => (pc, fc),
    };
    lines.push(Line::from(
        (0..=pl.max(fl))
            .map(|i| {
                if i == fl {
                    Span::styled("F", theme.pass())
                } else if i == pl {
                    Span::styled("P", theme.warn())
                } else {
                    Span::raw(" ")
                }
            })
            .collect::<Vec<_>>(),
    ));
    for row in 0..height {
        let level = (height - 1 - row) * 8;
        let spans: Vec<Span> = (0..cols)
            .map(|c| {
                if c == fc || c == pc {
                    return Span::styled("│", marker_style(c));
                }
                if c % bw == 0 {
                    return Span::raw(" ");
                }
                let h = heights[(c / bw).min(BUCKETS - 1)];
                let fill = h.saturating_sub(level).min(8);
                Span::styled(EIGHTHS[fill], region(c))
            })
            .collect();
        lines.push(Line::from(spans));
    }
    // Axis: 0 · 0.5 · 1 under the boundary columns.
    let mut axis = vec![' '; cols];
    let mut put = |at: usize, text: &str| {
        for (i, ch) in text.chars().enumerate() {
            if let Some(slot) = axis.get_mut(at + i) {
                *slot = ch;
            }
        }
    };
    put(0, "0");
    put((cols / 2).saturating_sub(1), "0.5");
    put(cols.saturating_sub(1), "1");
    lines.push(Line::styled(
        axis.into_iter().collect::<String>(),
        theme.dim(),
    ));
    lines
}

fn render(frame: &mut Frame, area: Rect, state: &State, look: &Look<'_>) {
    let (theme, focused) = (look.theme, look.focused);
    let ws = &look.ws;
    let device = &ws.page.device_policy;
    let selection = &ws.page.selection_policy;
    let current = FIELDS[state.field.min(FIELDS.len() - 1)];
    let mut block = pane_block(
        &super::widgets::numbered(super::action::PaneId::Policy, "Policy"),
        theme,
        focused,
    );
    if focused {
        let hint = if current.threshold() {
            " ←→ ±0.05 · Enter type "
        } else {
            " ←→ Space Enter cycle "
        };
        block = block.title_bottom(Line::styled(hint, theme.dim()));
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let label_w = 10;
    let mut lines: Vec<Line> = FIELDS
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            let here = i == state.field;
            let value = super::widgets::fit(
                &f.value(device, selection),
                width.saturating_sub(label_w + 2),
            );
            let value_style = if here && focused {
                theme.selected()
            } else if f.threshold() {
                theme.title()
            } else {
                Style::default()
            };
            Line::from(vec![
                Span::styled(
                    if here { "▸" } else { " " },
                    if focused { theme.accent() } else { theme.dim() },
                ),
                Span::styled(format!("{:<w$}", f.label(), w = label_w), theme.dim()),
                Span::raw(" "),
                Span::styled(value, value_style),
            ])
        })
        .collect();
    let summary = summarize(&ws.eval.devices);
    let total: usize = summary.counts.iter().sum();
    let mut counts = vec![];
    for v in [Verdict::Full, Verdict::Partial, Verdict::None] {
        counts.push(Span::styled(
            format!(
                "{} {}",
                verdict_glyph(v),
                summary.counts[usize::from(v.number())]
            ),
            theme.verdict(v),
        ));
        counts.push(Span::raw("  "));
    }
    counts.push(Span::styled(format!("of {total} targets"), theme.dim()));
    lines.push(Line::from(counts));
    // Counted while the pane is focused (thresholds are being tuned): a frame elsewhere
    // does not pay for it.
    if total > 0 && focused {
        let key = fingerprint(ws);
        let mut cached = state.flips.borrow_mut();
        if cached.as_ref().is_none_or(|(k, _)| *k != key) {
            *cached = Some((key, flips(ws)));
        }
        let [(fd, fu), (pd, pu)] = cached.as_ref().expect("counted above").1;
        let n = |c: Option<usize>| c.map_or("–".to_owned(), |c| c.to_string());
        lines.push(Line::from(vec![
            Span::styled(format!("±{STEP} flips "), theme.dim()),
            Span::styled(format!("F ◂{} ▸{}", n(fd), n(fu)), theme.pass()),
            Span::raw("  "),
            Span::styled(format!("P ◂{} ▸{}", n(pd), n(pu)), theme.warn()),
        ]));
    }
    // The histogram takes what is left: a label row, the bars (up to 6 rows), the axis.
    let left = usize::from(inner.height).saturating_sub(lines.len());
    if total > 0 && left >= 3 && width >= 21 {
        let height = (left - 2).min(6);
        lines.extend(histogram_lines(
            &summary.buckets,
            device,
            width,
            height,
            theme,
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

impl Pane for State {
    fn id(&self) -> super::action::PaneId {
        super::action::PaneId::Policy
    }

    fn update(&mut self, ctx: &mut Ctx<'_>, action: &Action) -> Vec<Action> {
        update(self, ctx, action)
    }

    fn render(&self, frame: &mut Frame, area: Rect, look: &Look<'_>) {
        render(frame, area, self, look)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::types::Reason;

    #[test]
    fn stepping_rounds_and_clamps() {
        assert_eq!(step(0.4, 1), 0.45);
        assert_eq!(step(0.45, -1), 0.4);
        assert_eq!(step(0.95, 1), 1.0);
        assert_eq!(step(1.0, 1), 1.0);
        assert_eq!(step(0.02, -1), 0.0);
        assert_eq!(step(0.0, -1), 0.0);
        assert_eq!(step(0.333, 1), 0.38);
        // Twenty steps from 0 land exactly on the grid (no float drift).
        let mut v = 0.0;
        for i in 1..=20 {
            v = step(v, 1);
            assert_eq!(v, round2(f64::from(i) * 0.05));
        }
        assert_eq!(v, 1.0);
    }

    #[test]
    fn thresholds_keep_partial_at_most_full() {
        let d = DevicePolicy {
            required_mode: RequiredMode::AnyRequiredFailIs0,
            full_threshold: 0.5,
            partial_threshold: 0.5,
        };
        assert!(with_threshold(&d, Field::FullThreshold, 0.45).is_err());
        assert!(with_threshold(&d, Field::PartialThreshold, 0.55).is_err());
        assert_eq!(
            with_threshold(&d, Field::FullThreshold, 0.55)
                .unwrap()
                .full_threshold,
            0.55
        );
        assert_eq!(
            with_threshold(&d, Field::PartialThreshold, 0.2)
                .unwrap()
                .partial_threshold,
            0.2
        );
        let e = with_threshold(&d, Field::FullThreshold, 1.5).unwrap_err();
        assert!(e.contains("between 0 and 1"), "{e}");
        assert!(with_threshold(&d, Field::FullThreshold, f64::NAN).is_err());
    }

    #[test]
    fn typed_thresholds_parse() {
        assert_eq!(parse_threshold(" 0.85 "), Ok(0.85));
        assert_eq!(parse_threshold("85%"), Ok(0.85));
        assert!(parse_threshold("abc").unwrap_err().contains("not a number"));
        assert!(parse_threshold("").is_err());
        assert!(parse_threshold("inf").is_err());
        assert_eq!(format_threshold(0.4), "0.40");
        assert_eq!(format_threshold(0.333), "0.333");
    }

    #[test]
    fn enums_cycle_both_ways_and_wrap() {
        use RequiredMode as R;
        assert_eq!(
            cycle(REQUIRED_MODES, R::AnyRequiredFailIs0, true),
            R::AnyRequiredFailCapsAtPartial
        );
        assert_eq!(
            cycle(REQUIRED_MODES, R::IgnoreRequired, true),
            R::AnyRequiredFailIs0
        );
        assert_eq!(
            cycle(REQUIRED_MODES, R::AnyRequiredFailIs0, false),
            R::IgnoreRequired
        );
        assert_eq!(
            cycle(ELSE_MODES, ElseMode::None, true),
            ElseMode::AnyDevicePartialIsPartial
        );
        assert_eq!(
            cycle(
                STRATEGIES,
                RecommendationStrategy::HighestVerdictThenScore,
                true
            ),
            RecommendationStrategy::HighestVerdictThenScore
        );
        let (d, s) = cycled(
            &DevicePolicy::default(),
            &SelectionPolicy::default(),
            Field::AggregateMode,
            true,
        );
        assert_eq!(d, DevicePolicy::default());
        assert_eq!(s.aggregate.mode, AggregateMode::AllDevicesFullIsCompatible);
        assert_eq!(
            Field::AggregateMode.value(&d, &s),
            "ALL_DEVICES_FULL_IS_COMPATIBLE"
        );
    }

    #[test]
    fn enum_values_parse_through_the_one_policy_parser() {
        let (mut d, mut s) = (DevicePolicy::default(), SelectionPolicy::default());
        crate::app::policy::set(
            &mut d,
            &mut s,
            Field::RequiredMode.name(),
            "ignore-required",
        )
        .unwrap();
        assert_eq!(d.required_mode, RequiredMode::IgnoreRequired);
        crate::app::policy::set(&mut d, &mut s, Field::ElseMode.name(), "none").unwrap();
        assert_eq!(s.aggregate.else_mode, ElseMode::None);
        let e = crate::app::policy::set(&mut d, &mut s, Field::AggregateMode.name(), "most")
            .unwrap_err();
        assert!(e.contains("ANY_DEVICE_FULL_IS_COMPATIBLE"), "{e}");
        // Every field of the pane is a name the parser knows.
        for f in FIELDS {
            assert!(
                crate::app::policy::names().contains(&f.name()),
                "{}",
                f.name()
            );
        }
    }

    #[test]
    fn histogram_buckets() {
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(0.05), 0);
        assert_eq!(bucket_of(0.1), 1);
        assert_eq!(bucket_of(0.6), 6);
        assert_eq!(bucket_of(3.0 / 5.0), 6);
        assert_eq!(bucket_of(0.7), 7);
        assert_eq!(bucket_of(7.0 / 10.0), 7);
        assert_eq!(bucket_of(0.99), 9);
        assert_eq!(bucket_of(1.0), 9);
        assert_eq!(bucket_of(-0.1), 0);
        assert_eq!(bucket_of(f64::NAN), 0);
        for k in 0..10 {
            assert_eq!(bucket_of(f64::from(k) / 10.0), k as usize);
        }
        let dv = |verdict: u64, score| DeviceVerdict {
            verdict: Verdict::from_number(verdict).unwrap(),
            score,
            reason: Reason::Full,
        };
        let s = summarize(&[dv(2, 1.0), dv(2, 1.0), dv(1, 0.6), dv(0, 0.0), dv(0, 0.95)]);
        assert_eq!(s.counts, [2, 1, 2]);
        assert_eq!(s.buckets, [1, 0, 0, 0, 0, 0, 1, 0, 0, 3]);
    }

    #[test]
    fn threshold_columns_sit_on_bucket_boundaries() {
        assert_eq!(threshold_column(0.0, 4), 0);
        assert_eq!(threshold_column(0.4, 4), 16);
        assert_eq!(threshold_column(0.45, 4), 18);
        assert_eq!(threshold_column(1.0, 4), 40);
        assert_eq!(threshold_column(2.0, 4), 40);
    }
}

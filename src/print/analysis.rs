//! The analysis report (`rulebench analyze`) as text: one paragraph per finding with
//! its witness, then the rules the analysis over any row does not decide.

use crate::app::analysis::AnalysisReport;
use crate::app::text::sanitize;
use crate::app::types::Witness;

fn row(r: &crate::app::types::Row) -> String {
    sanitize(&serde_json::Value::Object(r.clone()).to_string())
}

fn witness(w: &Witness) -> String {
    let side = |key: &Option<String>, made: &Option<crate::app::types::Row>| match (key, made) {
        (Some(k), _) => sanitize(k),
        (None, Some(r)) => row(r),
        (None, None) => "—".to_owned(),
    };
    format!(
        "source {} × target {}: {}",
        side(&w.source_key, &w.source),
        side(&w.target_key, &w.target),
        sanitize(&w.shows)
    )
}

pub fn text(r: &AnalysisReport) -> String {
    let a = &r.analysis;
    let n = a.findings.len();
    let mut out = format!(
        "{} (revision {}): {n} finding{}; {} of {} rules decided over any row ({} made pairs evaluated)\n",
        sanitize(&r.page_id),
        r.revision,
        if n == 1 { "" } else { "s" },
        r.rules - a.unknown.len(),
        r.rules,
        a.pairs_evaluated
    );
    for f in &a.findings {
        let about = match (&f.rule, &f.other) {
            (Some(rule), Some(other)) => {
                format!(" rule {} (with {})", sanitize(rule), sanitize(other))
            }
            (Some(rule), None) => format!(" rule {}", sanitize(rule)),
            _ => String::new(),
        };
        let scope = if f.any_row { "any row" } else { "current rows" };
        out.push_str(&format!(
            "{}{about} [{scope}]: {}\n",
            f.kind.as_str(),
            sanitize(&f.message)
        ));
        for w in &f.witnesses {
            out.push_str(&format!("    witness: {}\n", witness(w)));
        }
    }
    if let Some(stopped) = &a.stopped {
        out.push_str(&format!("stopped: {}\n", sanitize(stopped)));
    }
    for u in &a.unknown {
        out.push_str(&format!(
            "unknown rule {}: {} (nothing is claimed over any row)\n",
            sanitize(&u.rule),
            sanitize(&u.why)
        ));
    }
    out
}

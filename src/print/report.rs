//! Assertion reports (`rulebench test`): text, one PASS/FAIL line per assertion, and
//! JUnit XML for CI.

use super::xml::xml;
use crate::app::text::sanitize;
use crate::app::types::Report;

/// The text report: one PASS / FAIL line per assertion with its claim or message.
pub fn text(report: &Report, stored: bool) -> String {
    let mut out = String::new();
    let at = if stored {
        format!("revision {}", report.revision)
    } else {
        "page file, in memory".to_owned()
    };
    out.push_str(&format!(
        "{} ({at}): {} assertion{}\n",
        sanitize(&report.page_id),
        report.results.len(),
        if report.results.len() == 1 { "" } else { "s" }
    ));
    for r in &report.results {
        let status = if r.passed { "PASS" } else { "FAIL" };
        let mut head = format!("{status}  {}", sanitize(&r.assertion_id));
        if let Some(d) = &r.description {
            head.push_str(&format!(" — {}", sanitize(d)));
        }
        out.push_str(&head);
        out.push('\n');
        let detail = match (&r.message, r.passed) {
            (Some(m), false) => m,
            _ => &r.claim,
        };
        out.push_str(&format!("      {}\n", sanitize(detail)));
        if let (true, Some(sha)) = (r.truncated, &r.actual_sha256) {
            out.push_str(&format!(
                "      actual samples truncated (sha256 of the full value: {sha})\n"
            ));
        }
    }
    out.push_str(&format!(
        "{} assertions: {} passed, {} failed\n",
        report.results.len(),
        report.passed,
        report.failed
    ));
    out
}

/// The JUnit XML report: one `testsuite` for the page, one `testcase` per assertion.
pub fn junit(report: &Report) -> String {
    junit_with(report, &[])
}

/// [`junit`] with the page's linked tables of expected outcomes: a `testsuite` each
/// (one `testcase` per row; a table that cannot be read, one errored case).
pub fn junit_with(report: &Report, linked: &[crate::app::expectations::LinkedRun]) -> String {
    let mut suites = vec![suite(report)];
    let (mut tests, mut failures, mut errors) = (report.results.len(), report.failed, 0);
    for run in linked {
        match (&run.report, &run.error) {
            (Some(r), _) => {
                tests += r.results.len();
                failures += r.failed;
                suites.push(super::expect::junit_suite(r));
            }
            (None, error) => {
                tests += 1;
                errors += 1;
                let file = xml(&run.file);
                suites.push(format!(
                    "  <testsuite name=\"{file}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    \
                     <testcase classname=\"{file}\" name=\"{file}\">\n      <error type=\"unreadable\" message=\"{}\"/>\n    </testcase>\n  </testsuite>\n",
                    xml(error.as_deref().unwrap_or("the table cannot be read"))
                ));
            }
        }
    }
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"rulebench\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n"
    ));
    for s in suites {
        out.push_str(&s);
    }
    out.push_str("</testsuites>\n");
    out
}

/// The assertions' `testsuite` element.
fn suite(report: &Report) -> String {
    let page = xml(&report.page_id);
    let mut out = format!(
        "  <testsuite name=\"{page}\" tests=\"{n}\" failures=\"{f}\" errors=\"0\" skipped=\"0\" timestamp=\"{at}\">\n    \
         <properties>\n      <property name=\"revision\" value=\"{rev}\"/>\n    </properties>\n",
        n = report.results.len(),
        f = report.failed,
        at = xml(&report.run_at),
        rev = report.revision,
    );
    for r in &report.results {
        let name = match &r.description {
            Some(d) => format!("{}: {d}", r.assertion_id),
            None => r.assertion_id.clone(),
        };
        out.push_str(&format!(
            "    <testcase classname=\"{page}\" name=\"{}\"",
            xml(&name)
        ));
        match (&r.message, r.passed) {
            (Some(m), false) => {
                out.push_str(&format!(
                    ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                    xml(&r.matcher),
                    xml(m),
                    xml(&format!("select {}\n{}", r.select, r.claim))
                ));
            }
            _ => out.push_str("/>\n"),
        }
    }
    out.push_str("  </testsuite>\n");
    out
}

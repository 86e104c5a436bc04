//! Authoring a page from the command line, many things at once: rules from a file of
//! one rule, an array or JSON Lines (`rule add`), assertions likewise (`assertion add`),
//! and a dataset's label, priority, summary and name (`dataset set`). Each call is
//! validated whole and stored as one revision, or refused whole.

use serde_json::Value;

use rulebench_core::assertions::Assertion;
use rulebench_core::diag::{Diagnostic, parse_json};
use rulebench_core::model::{Page, Rule, Side};
use rulebench_store as store;

use crate::{App, AppError, Result};

/// One item of a file of rules or assertions: its own text, and where it starts in the
/// file (1-based line and column), so that a diagnostic located in the item is located
/// in the file.
pub struct Item {
    pub text: String,
    pub line: usize,
    pub column: usize,
}

impl Item {
    /// A diagnostic located in this item, located in the file.
    fn in_file(&self, mut d: Diagnostic) -> Diagnostic {
        if let Some(line) = d.line {
            if line == 1
                && let Some(column) = d.column
            {
                d.column = Some(column + self.column - 1);
            }
            d.line = Some(line + self.line - 1);
        }
        d
    }

    /// An error of this item's, its diagnostics located in the file.
    fn error_in_file(&self, e: AppError) -> AppError {
        match e {
            AppError::Invalid {
                origin,
                diagnostics,
            } => AppError::Invalid {
                origin,
                diagnostics: diagnostics.into_iter().map(|d| self.in_file(d)).collect(),
            },
            other => other,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// The items of a file of one JSON object, an array of them, or JSON Lines, each with
/// where it starts in the file.
pub fn split_items(text: &str, origin: &str) -> Result<Vec<Item>> {
    let body = text.trim_start_matches('\u{feff}');
    let skipped = text.len() - body.len();
    let trimmed = body.trim_start();
    if trimmed.starts_with('[') {
        // Checked whole first (syntax, depth, big integers, with their place)…
        let _: Vec<Value> = parse_json(text).map_err(|d| AppError::Invalid {
            origin: origin.to_owned(),
            diagnostics: vec![*d],
        })?;
        // …then each element's own text, where it is in the file.
        let raw: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(body).map_err(|e| AppError::Usage(format!("{origin}: {e}")))?;
        return Ok(raw
            .into_iter()
            .map(|r| {
                let offset = r.get().as_ptr() as usize - body.as_ptr() as usize + skipped;
                let (line, column) = line_col(text, offset);
                Item {
                    text: r.get().to_owned(),
                    line,
                    column,
                }
            })
            .collect());
    }
    // JSON Lines: the first line is a whole object and more lines follow.
    let mut lines = trimmed.lines();
    let first = lines.next().unwrap_or_default().trim();
    let jsonl = serde_json::from_str::<Value>(first).is_ok_and(|v| v.is_object())
        && lines.any(|l| !l.trim().is_empty());
    if jsonl {
        return Ok(text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| Item {
                text: l.to_owned(),
                line: i + 1,
                column: 1,
            })
            .collect());
    }
    Ok(vec![Item {
        text: text.to_owned(),
        line: 1,
        column: 1,
    }])
}

/// What `rule add` saved: each rule with its warnings (located in the file) and the
/// file, and the revision.
#[derive(Debug, Clone)]
pub struct RulesAdded {
    pub rules: Vec<(Rule, Vec<Diagnostic>, String)>,
    pub revision: i64,
}

/// A dataset's settings (`dataset set`); `None` leaves one as it is, `Some("")` clears
/// the label or the priority.
#[derive(Debug, Clone, Default)]
pub struct DatasetSettings {
    pub name: Option<String>,
    pub label: Option<String>,
    /// A numeric field, or an infix expression over the row (`0 - target.cost`).
    pub priority: Option<String>,
    pub summary: Option<Vec<String>>,
}

impl App {
    /// Adds the rules of a file (one rule, an array, or JSON Lines; JSONLogic `logic`,
    /// an infix `expression` or `predicates`): every rule is checked against the page
    /// first and all are saved as one revision, or none. With `replace`, a rule whose
    /// id the page has already is overwritten in place.
    pub fn add_rules(
        &mut self,
        page_id: &str,
        text: &str,
        origin: &str,
        replace: bool,
    ) -> Result<RulesAdded> {
        let (page, _) = self.page(page_id)?;
        let mut rules: Vec<(Rule, Vec<Diagnostic>, String)> = Vec::new();
        for item in split_items(text, origin)? {
            let (members, warnings) =
                Self::parse_rules(&page, &item.text, origin).map_err(|e| item.error_in_file(e))?;
            let mut warnings: Vec<Diagnostic> =
                warnings.into_iter().map(|d| item.in_file(d)).collect();
            for rule in members {
                if let Some((first, _, _)) = rules.iter().find(|(r, _, _)| r.id == rule.id) {
                    return Err(AppError::Usage(format!(
                        "{origin}:{}: rule id `{}` is in the file twice (first as `{}`)",
                        item.line, rule.id, first.name
                    )));
                }
                // A family's warnings are said once, with its first member.
                rules.push((rule, std::mem::take(&mut warnings), origin.to_owned()));
            }
        }
        if rules.is_empty() {
            return Err(AppError::Usage(format!("{origin}: no rules in the file")));
        }
        let revision = self.save_rules(&page, rules.iter().map(|(r, _, _)| r), replace)?;
        Ok(RulesAdded { rules, revision })
    }

    /// Saves validated rules as one revision: each replaces the rule with its id (with
    /// `replace`; else that is an error) or is appended within the plan tier's limit.
    fn save_rules<'a>(
        &mut self,
        page: &Page,
        rules: impl Iterator<Item = &'a Rule> + Clone,
        replace: bool,
    ) -> Result<i64> {
        let limit = page.plan_tier().rule_limit();
        let ids: Vec<&str> = rules.clone().map(|r| r.id.as_str()).collect();
        let what = if ids.len() == 1 {
            format!("added rule {}", ids[0])
        } else {
            format!("added {} rules ({})", ids.len(), ids.join(", "))
        };
        // The families written: their members stored now that the new ones do not have
        // go (with `replace`; a family stored already is else refused).
        let mut families: Vec<&str> = Vec::new();
        for r in rules.clone() {
            if let Some(m) = &r.family
                && !families.contains(&m.family.id.as_str())
            {
                families.push(&m.family.id);
            }
        }
        self.store.change_checked(&page.id, &what, |tx, rev| {
            // Removed after the rules are written: an upsert of a rule whose position a
            // removal moved in this revision would log it twice.
            let mut gone: Vec<String> = Vec::new();
            // The family of each stored rule (read once when families are written: a
            // member is not read, and its family expanded, one by one).
            let stored_family: Option<std::collections::HashMap<String, Option<String>>> =
                if families.is_empty() {
                    None
                } else {
                    let stored = store::ops::rules(tx, &page.id)?;
                    for r in &stored {
                        let Some(m) = &r.family else { continue };
                        if !families.contains(&m.family.id.as_str()) {
                            continue;
                        }
                        if !replace {
                            return Err(AppError::RuleExists {
                                page: page.id.clone(),
                                rule: m.family.id.clone(),
                            });
                        }
                        if !ids.contains(&r.id.as_str()) {
                            gone.push(r.id.clone());
                        }
                    }
                    Some(
                        stored
                            .into_iter()
                            .map(|r| (r.id, r.family.map(|m| m.family.id.clone())))
                            .collect(),
                    )
                };
            // Where the last member of each family written so far went: a new member
            // goes right after it (a family stays together).
            let mut after: std::collections::HashMap<String, usize> = Default::default();
            for rule in rules {
                let (count, exists) = store::ops::rule_count(tx, &page.id, &rule.id)?;
                let family = rule.family.as_ref().map(|m| m.family.id.clone());
                let ord = if exists {
                    if !replace {
                        return Err(AppError::RuleExists {
                            page: page.id.clone(),
                            rule: rule.id.clone(),
                        });
                    }
                    match stored_family.as_ref().and_then(|s| s.get(&rule.id)) {
                        // A member of the same family: replaced in place.
                        Some(stored) if stored.is_some() && *stored == family => {}
                        // A member of another family, or a rule that is not one.
                        Some(Some(other)) => {
                            return Err(AppError::FamilyMember {
                                page: page.id.clone(),
                                rule: rule.id.clone(),
                                family: other.clone(),
                            });
                        }
                        Some(None) if family.is_some() => {
                            return Err(AppError::Usage(format!(
                                "rule `{}` of the family `{}` would replace the rule `{}` that is not of it: give the family another id, or remove that rule first",
                                rule.id,
                                family.as_deref().unwrap_or_default(),
                                rule.id
                            )));
                        }
                        _ => crate::app::refuse_member(tx, &page.id, &rule.id, Some(rule))?,
                    }
                    store::ops::rule_ord(tx, &page.id, &rule.id)?.unwrap_or(count)
                } else {
                    if let Some(limit) = limit
                        && count >= limit
                    {
                        return Err(AppError::RuleLimit { limit });
                    }
                    family
                        .as_ref()
                        .and_then(|f| after.get(f))
                        .map_or(count, |&last| last + 1)
                };
                store::ops::put_rule(tx, page, rule, ord, rev)?;
                if let Some(f) = family {
                    after.insert(f, ord);
                }
            }
            for id in &gone {
                store::ops::delete_rule(tx, &page.id, id, rev)?;
            }
            Ok(())
        })
    }

    /// Adds the assertions of a file (one, an array, or JSON Lines) as one revision;
    /// one whose id the page has already is refused unless `replace`.
    pub fn add_assertions(
        &mut self,
        page_id: &str,
        text: &str,
        origin: &str,
        replace: bool,
    ) -> Result<(Vec<Assertion>, i64)> {
        let mut new: Vec<Assertion> = Vec::new();
        for item in split_items(text, origin)? {
            let a: Assertion = parse_json(&item.text).map_err(|d| AppError::Invalid {
                origin: origin.to_owned(),
                diagnostics: vec![item.in_file(*d)],
            })?;
            new.push(a);
        }
        if new.is_empty() {
            return Err(AppError::Usage(format!(
                "{origin}: no assertions in the file"
            )));
        }
        let ((), saved, revision) = self.edit_assertions(page_id, "added assertions", |all| {
            for a in new {
                match all.iter().position(|b| !a.id.is_empty() && b.id == a.id) {
                    Some(_) if !replace => {
                        return Err(AppError::Usage(format!(
                            "assertion `{}` is on the page already (--replace overwrites it)",
                            a.id
                        )));
                    }
                    Some(i) => all[i] = a,
                    None => all.push(a),
                }
            }
            Ok(())
        })?;
        Ok((saved, revision))
    }

    /// Sets a dataset's name, label, priority or summary fields: checked against the
    /// rows (a field no row has is an error, with a did-you-mean) and stored as one
    /// revision.
    pub fn set_dataset(
        &mut self,
        page_id: &str,
        side: Side,
        settings: &DatasetSettings,
    ) -> Result<i64> {
        let (mut page, checked_at) = self.page(page_id)?;
        let schema = rulebench_core::validate::DatasetSchema::of(page.dataset(side));
        let known = |field: &str, flag: &str| -> Result<()> {
            if schema.fields.contains_key(field) {
                return Ok(());
            }
            let names: Vec<&str> = schema.fields.keys().map(String::as_str).collect();
            Err(AppError::Usage(format!(
                "{flag} `{field}`: no {} row has a field `{field}`{}",
                side.name(),
                rulebench_core::diag::did_you_mean(field, names.iter().copied())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_else(|| format!(" ({})", crate::some_of("fields", &names)))
            )))
        };
        let mut changed = Vec::new();
        let d = page.dataset_mut(side);
        if let Some(name) = &settings.name {
            if name.trim().is_empty() {
                return Err(AppError::Usage("--name is empty".into()));
            }
            d.name = name.clone();
            changed.push("name");
        }
        if let Some(label) = &settings.label {
            if label.is_empty() {
                d.label = None;
            } else {
                known(label, "--label")?;
                d.label = Some(label.clone());
            }
            changed.push("label");
        }
        if let Some(priority) = &settings.priority {
            if priority.is_empty() {
                d.priority = None;
            } else {
                // A field must be one the rows have; an expression is checked with the
                // page (its fields, and that it reads the target row only).
                if let Ok(rulebench_core::priority::Priority::Field(f)) =
                    rulebench_core::priority::read(priority, &Default::default())
                {
                    known(&f, "--priority")?;
                }
                d.priority = Some(priority.clone());
            }
            changed.push("priority");
        }
        if let Some(summary) = &settings.summary {
            for f in summary {
                known(f, "--summary")?;
            }
            d.summary = summary.clone();
            changed.push("summary");
        }
        if changed.is_empty() {
            return Err(AppError::Usage(
                "nothing to set (--name, --label, --priority, --summary)".into(),
            ));
        }
        let diags = rulebench_core::check::page(&page);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(AppError::Invalid {
                origin: format!("page `{page_id}` with the new {} settings", side.name()),
                diagnostics: diags,
            });
        }
        let what = format!("set the {} dataset's {}", side.name(), changed.join(", "));
        let set = page.dataset(side);
        // The stored metadata is read inside the change: what another writer changed
        // meanwhile (a reload's reading options, say) stays; only these settings move.
        // Checked against the page at `checked_at`: a page that moved on meanwhile (an
        // import that dropped the field) is not written over; the command is run again.
        self.store.change_checked(page_id, &what, |tx, rev| -> Result<()> {
            if rev != checked_at + 1 {
                return Err(AppError::Usage(format!(
                    "page `{page_id}` changed while the settings were checked (revision {checked_at} became {}): nothing was set; run the command again",
                    rev - 1
                )));
            }
            let mut meta = store::ops::dataset_meta(tx, page_id, side)?;
            if settings.name.is_some() {
                meta.name = set.name.clone();
            }
            if settings.label.is_some() {
                meta.label = set.label.clone();
            }
            if settings.priority.is_some() {
                meta.priority = set.priority.clone();
            }
            if settings.summary.is_some() {
                meta.summary = set.summary.clone();
            }
            Ok(store::ops::set_dataset_meta(tx, page_id, side, &meta)?)
        })
    }
}

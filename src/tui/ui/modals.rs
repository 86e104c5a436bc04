//! Dialogs and prompts: the keys a dialog takes while open, and what a finished prompt
//! does.

use ratatui::crossterm::event::KeyEvent;

use crate::tui::action::{Action, Changed};
use crate::tui::keymap::{self, Context};
use crate::tui::modal::{Modal, PromptFor};
use crate::tui::pane::Ctx;
use crate::tui::{dataset_pane, policy, rules, tests_pane};

use super::shell::*;

impl Ui {
    /// Copies the page's query in a dialect to the clipboard, or writes it to a file
    /// (`DIALECT [FILE]`): compiled off the key thread from the stored page.
    pub(super) fn sql_page(&mut self, text: &str) {
        use crate::app::types::Dialect;
        let mut words = text.split_whitespace();
        let Some(dialect) = words.next().and_then(Dialect::parse) else {
            self.status.error(format!(
                "`{}` is not a dialect: {}",
                crate::tui::theme::safe(text.trim()),
                crate::app::text::one_of(
                    &Dialect::ALL.iter().map(|d| d.name()).collect::<Vec<_>>()
                )
            ));
            return;
        };
        let file: Option<std::path::PathBuf> = {
            let rest: Vec<&str> = words.collect();
            (!rest.is_empty()).then(|| rest.join(" ").into())
        };
        self.status
            .info(format!("compiling the page to {} SQL…", dialect.name()));
        self.history_run(move |app, page, _| {
            let mut request = crate::app::sql::SqlRequest::new(dialect);
            request.all = true;
            HistoryDone::Sql(app.sql_query(&page, &request).and_then(|query| {
                let query = query.text;
                let lines = query.lines().count();
                match file {
                    Some(path) => {
                        app.export_file(&path, query.as_bytes())?;
                        Ok((
                            format!(
                                "exported the page as {} SQL to {} ({lines} lines; its data: rulebench sql {page} --dialect {} --data)",
                                dialect.name(),
                                crate::tui::theme::safe(&path.display().to_string()),
                                dialect.name()
                            ),
                            None,
                        ))
                    }
                    None => Ok((
                        format!(
                            "copied the page as {} SQL to the clipboard ({lines} lines, through the terminal: OSC 52)",
                            dialect.name()
                        ),
                        Some(query),
                    )),
                }
            }))
        });
    }

    pub(super) fn ask_about_orphans(&mut self) {
        let Screen::Page(p) = &self.screen else {
            return;
        };
        let names: Vec<String> =
            p.ws.orphans()
                .iter()
                .map(|r| format!("`{}`", r.name))
                .collect();
        if names.is_empty() {
            return;
        }
        self.modal = Some(Modal::Confirm {
            message: format!(
                "{} {} {} deleted elsewhere while you edited {}. Restore {} with your edits? y/n",
                if names.len() == 1 { "Rule" } else { "Rules" },
                names.join(", "),
                if names.len() == 1 { "was" } else { "were" },
                if names.len() == 1 { "it" } else { "them" },
                if names.len() == 1 { "it" } else { "them" },
            ),
            on_yes: Action::RestoreOrphans,
            on_no: Some(Action::DropOrphans),
        });
    }

    pub(super) fn modal_key(&mut self, key: KeyEvent) {
        use ratatui::crossterm::event::KeyCode as K;
        let Some(modal) = self.modal.take() else {
            return;
        };
        // A Ctrl- or Alt- chord is not a character to type into the palette or answer a
        // question with (Ctrl-U used to type `u`); prompts' text areas read chords
        // themselves.
        let chord = key.modifiers.intersects(
            ratatui::crossterm::event::KeyModifiers::CONTROL
                | ratatui::crossterm::event::KeyModifiers::ALT,
        ) && matches!(key.code, K::Char(_));
        use keymap::Dialog as D;
        // Unless the dialog binds the chord (a remapped key can be one).
        let dialog = match &modal {
            Modal::Help { .. } => Some(D::Help),
            Modal::Palette { .. } => Some(D::Palette),
            Modal::Confirm { .. } => Some(D::Confirm),
            Modal::History(_) => Some(D::History),
            Modal::Frequency(_) => Some(D::Frequency),
            Modal::Conflict(_) => Some(D::Conflict),
            _ => None,
        };
        let bound = dialog.is_some_and(|d| keymap::lookup(&key, &[Context::Dialog(d)]).is_some());
        if chord
            && !bound
            && !matches!(
                modal,
                Modal::Prompt { .. } | Modal::RuleForm(_) | Modal::Json(_)
            )
        {
            self.modal = Some(modal);
            return;
        }
        let action = |d: D| keymap::lookup(&key, &[Context::Dialog(d)]);
        match modal {
            Modal::Help {
                scroll,
                query: Some(mut query),
            } => {
                // Typing the search: characters go to it, Backspace takes one back,
                // Enter keeps it, Esc clears it.
                match key.code {
                    K::Esc => {
                        self.modal = Some(Modal::Help {
                            scroll: 0,
                            query: None,
                        })
                    }
                    K::Backspace => {
                        query.pop();
                        self.modal = Some(Modal::Help {
                            scroll: 0,
                            query: Some(query),
                        });
                    }
                    K::Char(c)
                        if !key.modifiers.intersects(
                            ratatui::crossterm::event::KeyModifiers::CONTROL
                                | ratatui::crossterm::event::KeyModifiers::ALT,
                        ) =>
                    {
                        query.push(c);
                        self.modal = Some(Modal::Help {
                            scroll: 0,
                            query: Some(query),
                        });
                    }
                    _ => {
                        // Other keys scroll the narrowed help as they scroll all of it.
                        let end = crate::tui::view::help_scroll_end(
                            self,
                            self.last_area.get(),
                            Some(&query),
                        );
                        let to = |s: u16| s.min(end);
                        let scroll = match action(D::Help) {
                            Some(Action::Down) => to(scroll + 1),
                            Some(Action::Up) => scroll.saturating_sub(1),
                            Some(Action::PageDown) => to(scroll + 10),
                            Some(Action::PageUp) => scroll.saturating_sub(10),
                            Some(Action::Home) => 0,
                            Some(Action::End) => end,
                            _ => scroll,
                        };
                        self.modal = Some(Modal::Help {
                            scroll,
                            query: Some(query),
                        });
                    }
                }
            }
            Modal::Help {
                scroll,
                query: None,
            } => {
                // As far as the help wrapped on this screen goes.
                let end = crate::tui::view::help_scroll_end(self, self.last_area.get(), None);
                let to = |s: u16| {
                    Some(Modal::Help {
                        scroll: s.min(end),
                        query: None,
                    })
                };
                match action(D::Help) {
                    Some(Action::Down) => self.modal = to(scroll + 1),
                    Some(Action::Up) => self.modal = to(scroll.saturating_sub(1)),
                    Some(Action::PageDown) => self.modal = to(scroll + 10),
                    Some(Action::PageUp) => self.modal = to(scroll.saturating_sub(10)),
                    Some(Action::Home) => self.modal = to(0),
                    Some(Action::End) => self.modal = to(end),
                    Some(Action::Find) => {
                        self.modal = Some(Modal::Help {
                            scroll: 0,
                            query: Some(String::new()),
                        })
                    }
                    _ => {}
                }
            }
            Modal::Palette {
                mut query,
                mut selected,
            } => {
                let entries = crate::tui::palette::entries(&query, &self.palette_facts());
                match (action(D::Palette), key.code) {
                    (Some(Action::Back), _) => {}
                    (Some(Action::Enter), _) => {
                        if let Some(e) = entries.get(selected)
                            && let Some(why) = &e.unavailable
                        {
                            self.status.error(format!("{}: {why}", e.label));
                        } else if let Some(e) = entries.get(selected) {
                            // Run the entry in its own pane, not the focused one.
                            if let Some(pane) = e.pane {
                                self.queue.push_back(Action::Focus(pane));
                            }
                            self.queue.push_back(e.action.clone());
                        }
                    }
                    (Some(Action::Up), _) => {
                        selected = selected.saturating_sub(1);
                        self.modal = Some(Modal::Palette { query, selected });
                    }
                    (Some(Action::Down), _) => {
                        selected = (selected + 1).min(entries.len().saturating_sub(1));
                        self.modal = Some(Modal::Palette { query, selected });
                    }
                    (Some(Action::DeleteBack), _) => {
                        query.pop();
                        self.modal = Some(Modal::Palette { query, selected: 0 });
                    }
                    (_, K::Char(c)) => {
                        query.push(c);
                        self.modal = Some(Modal::Palette { query, selected: 0 });
                    }
                    _ => self.modal = Some(Modal::Palette { query, selected }),
                }
            }
            Modal::Confirm {
                message,
                on_yes,
                on_no,
            } => match action(D::Confirm) {
                Some(Action::Answer(true)) => self.queue.push_back(on_yes),
                Some(Action::Answer(false)) => self.queue.extend(on_no),
                _ => {
                    self.modal = Some(Modal::Confirm {
                        message,
                        on_yes,
                        on_no,
                    })
                }
            },
            Modal::Prompt {
                title,
                mut input,
                purpose,
            } => match action(D::Prompt) {
                Some(Action::Back) => {
                    if purpose == PromptFor::FilterRules {
                        self.queue.push_back(Action::FilterRules(String::new()));
                    }
                    if purpose == PromptFor::FilterTargets {
                        self.queue.push_back(Action::FilterTargets(String::new()));
                    }
                    if purpose == PromptFor::FilterSources {
                        self.queue
                            .push_back(Action::FilterSources(String::new(), false));
                    }
                    if purpose == PromptFor::FilterPages {
                        self.queue.push_back(Action::FilterPages(String::new()));
                    }
                    if purpose == PromptFor::FilterDataset
                        && let Screen::Page(p) = &mut self.screen
                    {
                        p.dataset.search(&p.ws, "");
                    }
                }
                Some(Action::Enter) => self.prompt_done(purpose, input.lines().join("")),
                _ => {
                    input.input(key);
                    let text = input.lines().join("");
                    // Searches update as you type.
                    match purpose {
                        PromptFor::Find => self.queue.push_back(Action::FindText(text)),
                        PromptFor::FilterRules => self.queue.push_back(Action::FilterRules(text)),
                        PromptFor::FilterTargets => {
                            self.queue.push_back(Action::FilterTargets(text))
                        }
                        PromptFor::FilterSources => {
                            self.queue.push_back(Action::FilterSources(text, false))
                        }
                        PromptFor::FilterPages => self.queue.push_back(Action::FilterPages(text)),
                        PromptFor::FilterDataset => {
                            if let Screen::Page(p) = &mut self.screen {
                                p.dataset.search(&p.ws, &text);
                            }
                        }
                        _ => {}
                    }
                    self.modal = Some(Modal::Prompt {
                        title,
                        input,
                        purpose,
                    });
                }
            },
            Modal::Frequency(mut state) => {
                let Some(action) =
                    keymap::lookup(&key, &[Context::Dialog(keymap::Dialog::Frequency)])
                else {
                    self.modal = Some(Modal::Frequency(state));
                    return;
                };
                use crate::tui::frequency::Outcome;
                match state.key(&action) {
                    Outcome::Stay => self.modal = Some(Modal::Frequency(state)),
                    Outcome::Close => {}
                    Outcome::Only(only) => self.queue.push_back(Action::ShowOnly(only)),
                }
            }
            Modal::History(mut state) => {
                let Some(action) =
                    keymap::lookup(&key, &[Context::Dialog(keymap::Dialog::History)])
                else {
                    self.modal = Some(Modal::History(state));
                    return;
                };
                use crate::tui::history::Outcome;
                match state.key(&action) {
                    Outcome::Stay => self.modal = Some(Modal::History(state)),
                    Outcome::Close => {}
                    Outcome::StopComparing => self.queue.push_back(Action::StopComparing),
                    Outcome::Compare(baseline) => self.compare_with(*baseline),
                    Outcome::Load { revision, .. } => {
                        self.modal = Some(Modal::History(state));
                        self.history_run(move |app, page, selection| {
                            let detail = app
                                .revision_detail(&page, revision, selection.as_deref())
                                .map(Box::new);
                            HistoryDone::Detail(page, revision, detail)
                        });
                    }
                    Outcome::Restore { revision, item } => {
                        self.flush_saves();
                        let what = format!(
                            "restored {} from revision {revision}",
                            crate::tui::theme::safe(&item.label())
                        );
                        self.status.info(format!("{what}…"));
                        self.history_run(move |app, page, _| {
                            let done = app.restore(&page, revision, &item);
                            HistoryDone::Restored(page, what, done)
                        });
                    }
                }
            }
            Modal::Conflict(mut state) => match action(D::Conflict) {
                Some(Action::Resolve(choice)) => {
                    self.resolve_conflict(choice, state.conflict.what.clone())
                }
                Some(Action::Down) => {
                    state.scroll = state.scroll.saturating_add(1);
                    self.modal = Some(Modal::Conflict(state));
                }
                Some(Action::Up) => {
                    state.scroll = state.scroll.saturating_sub(1);
                    self.modal = Some(Modal::Conflict(state));
                }
                Some(Action::Back) => {
                    self.status.info(format!(
                        "{}: decided later; nothing is saved over theirs meanwhile",
                        state.conflict.what.describe()
                    ));
                    let raised = self.page().map_or(0, |p| p.ws.conflicts_raised());
                    self.conflict_deferred = Some((state.conflict.what.clone(), raised));
                }
                _ => self.modal = Some(Modal::Conflict(state)),
            },
            Modal::Json(mut state) => {
                if state.confirm_discard {
                    match key.code {
                        K::Char('y') | K::Char('Y') => {
                            self.status.info("dropped the edited assertion");
                        }
                        K::Char('n') | K::Char('N') | K::Esc => {
                            state.confirm_discard = false;
                            self.modal = Some(Modal::Json(state));
                        }
                        _ => self.modal = Some(Modal::Json(state)),
                    }
                    return;
                }
                match keymap::lookup(&key, &[Context::Dialog(keymap::Dialog::Json)]) {
                    Some(Action::Back) => {
                        if state.edited() {
                            state.confirm_discard = true;
                            self.modal = Some(Modal::Json(state));
                        }
                    }
                    Some(Action::SaveNow) => {
                        let Screen::Page(p) = &mut self.screen else {
                            return;
                        };
                        let mut ctx = Ctx {
                            ws: &mut p.ws,
                            status: &mut self.status,
                            modal: &mut self.modal,
                            focus: &mut p.focus,
                        };
                        match tests_pane::save_typed(
                            &mut ctx,
                            &state.text(),
                            state.replacing.clone(),
                            state.base.as_ref(),
                        ) {
                            Ok(follow) => self.queue.extend(follow),
                            Err(problems) => {
                                self.status.error(format!(
                                    "assertion not saved: {} problem(s), shown in the dialog",
                                    problems.len()
                                ));
                                state.problems = problems;
                                self.modal = Some(Modal::Json(state));
                            }
                        }
                    }
                    _ => {
                        state.textarea.input(key);
                        self.modal = Some(Modal::Json(state));
                    }
                }
            }
            Modal::RuleForm(mut form) => {
                if let Screen::Page(p) = &mut self.screen {
                    match rules::form_key(
                        &mut form,
                        action(D::RuleForm),
                        key,
                        &mut p.ws,
                        &mut self.status,
                    ) {
                        rules::FormResult::Open => self.modal = Some(Modal::RuleForm(form)),
                        rules::FormResult::Closed(follow) => self.queue.extend(follow),
                    }
                }
            }
        }
    }

    pub(super) fn prompt_done(&mut self, purpose: PromptFor, text: String) {
        match purpose {
            PromptFor::SaveAsPage => {
                if let Screen::Page(p) = &mut self.screen {
                    match p.ws.save_as_page(text.trim()) {
                        Ok(rev) => {
                            self.page_gone_asked = false;
                            self.status.info(format!(
                                "saved the page as `{}` (revision {rev}), your edits included",
                                crate::tui::theme::safe(text.trim())
                            ));
                            self.queue.push_back(Action::Changed(Changed::all()));
                        }
                        Err(e) => {
                            self.status.app_error(&e);
                            // Asked again: the edits are still here.
                            self.queue.push_back(Action::SaveAsPagePrompt);
                        }
                    }
                }
                self.restart_watcher();
            }
            PromptFor::FilterRules => self.queue.push_back(Action::FilterRules(text)),
            PromptFor::FilterTargets => self.queue.push_back(Action::FilterTargets(text)),
            PromptFor::Find => {
                // Kept for n / N; where typing left the cursor is the best match.
                self.find = text.trim().to_owned();
                if !self.find.is_empty() {
                    self.queue.push_back(Action::FindText(self.find.clone()));
                }
            }
            PromptFor::ExportMatrix => {
                let path = std::path::PathBuf::from(text.trim());
                if text.trim().is_empty() {
                    self.status.error("no file named: nothing exported");
                } else if path.exists() {
                    self.modal = Some(Modal::Confirm {
                        message: format!(
                            "{} exists. Overwrite it? y/n",
                            crate::tui::theme::safe(&path.display().to_string())
                        ),
                        on_yes: Action::ExportTo(path),
                        on_no: None,
                    });
                } else {
                    self.queue.push_back(Action::ExportTo(path));
                }
            }
            PromptFor::SqlPage => self.sql_page(&text),
            PromptFor::FilterSources => self.queue.push_back(Action::FilterSources(text, true)),
            PromptFor::FilterPages => self.queue.push_back(Action::FilterPages(text)),
            PromptFor::FilterDataset => {
                if let Screen::Page(p) = &mut self.screen {
                    p.dataset.search(&p.ws, &text);
                }
            }
            PromptFor::DatasetCell { side, row } => {
                if let Screen::Page(p) = &mut self.screen {
                    let (field, value) = match dataset_pane::parse_cell(&text) {
                        Ok(cell) => cell,
                        Err(message) => {
                            self.status.error(crate::tui::theme::safe(&message));
                            return;
                        }
                    };
                    let d = p.ws.page.dataset(side);
                    let known = d.rows.iter().any(|r| r.contains_key(&field))
                        || d.defaults.contains_key(&field);
                    let action = Action::SetCell {
                        side,
                        row,
                        field: field.clone(),
                        value,
                    };
                    if known {
                        self.queue.push_back(action);
                    } else {
                        // A typo (`needVision`) would silently make a new field: asked.
                        let names = d.field_names();
                        let hint = crate::app::text::did_you_mean(
                            &field,
                            names.iter().map(String::as_str),
                        )
                        .map(|s| format!(" Did you mean `{s}`?"))
                        .unwrap_or_default();
                        self.modal = Some(Modal::Confirm {
                            message: format!(
                                "No {} row has a field `{field}`.{hint} Create it? y/n",
                                side.name()
                            ),
                            on_yes: action,
                            on_no: None,
                        });
                    }
                }
            }
            PromptFor::AddRule => {
                let name = if text.trim().is_empty() {
                    "New rule".to_owned()
                } else {
                    text.trim().to_owned()
                };
                // The editor writes it (the focused pane takes the action).
                self.queue.extend([
                    Action::Focus(crate::tui::action::PaneId::Editor),
                    Action::NewRule(name),
                ]);
            }
            PromptFor::OverrideNote { target, value } => {
                if let Screen::Page(p) = &mut self.screen {
                    let note = (!text.trim().is_empty()).then(|| text.trim().to_owned());
                    match p.ws.set_override(target, Some((value, note))) {
                        Ok(rev) => {
                            self.status.info(format!("override set (revision {rev})"));
                            self.queue.push_back(Action::Changed(Changed::OVERRIDES));
                        }
                        Err(e) => self.status.app_error(&e),
                    }
                }
            }
            PromptFor::PolicyValue { field } => {
                if let Screen::Page(p) = &mut self.screen {
                    let mut ctx = Ctx {
                        ws: &mut p.ws,
                        status: &mut self.status,
                        modal: &mut self.modal,
                        focus: &mut p.focus,
                    };
                    let follow = policy::set_typed(&mut p.policy, &mut ctx, field, &text);
                    self.queue.extend(follow);
                }
            }
        }
    }
}

//! The house, checked. The layers are crates and Cargo keeps them (the fronts' manifest
//! names the app crate alone; the core's names no I/O crate): these tests check what
//! Cargo cannot say, that the core's dependency tree stays pure and that no two files
//! of one crate import each other, directly or around a ring.
//!
//! The cycle check parses every source file with `syn`, takes each `use` and each path
//! that starts with `crate`, `super`, `self` or a child module, resolves it to the file
//! that defines the module it names, and looks for strongly connected components in the
//! graph of files. Test modules (`#[cfg(test)]`) are left out: a test may look anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The crates of the workspace and the directory of their sources.
const CRATES: [(&str, &str); 4] = [
    ("rulebench-core", "crates/core/src"),
    ("rulebench-store", "crates/store/src"),
    ("rulebench-app", "crates/app/src"),
    ("rulebench", "src"),
];

/// What the core must never depend on, directly or through another crate.
const NOT_IN_THE_CORE: [&str; 8] = [
    "rusqlite",
    "ratatui",
    "crossterm",
    "notify",
    "directories",
    "clap",
    "indicatif",
    "tokio",
];

#[test]
fn the_core_depends_on_no_io_terminal_or_database_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(root)
        .args([
            "tree",
            "-p",
            "rulebench-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("datalogic-rs"), "not the core's tree: {tree}");
    for line in tree.lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        assert!(
            !NOT_IN_THE_CORE.contains(&name),
            "the core depends on {name}:\n{tree}"
        );
    }
}

#[test]
fn the_fronts_depend_on_the_app_crate_alone() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let deps = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a [dependencies] table");
    assert!(deps.contains("rulebench-app"), "{deps}");
    for below in [
        "rulebench-core",
        "rulebench-store",
        "rusqlite",
        "datalogic-rs",
    ] {
        assert!(
            !deps.contains(below),
            "the fronts' [dependencies] name {below}: reach it through a use case in the app crate"
        );
    }
}

/// A module path (`["tui", "ui"]`) and the file that defines it.
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

fn modules(src: &Path) -> Vec<Module> {
    fn walk(dir: &Path, src: &Path, out: &mut Vec<Module>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.push(Module {
                path: parts,
                file: path,
            });
        }
    }
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out
}

/// Every path a file names, resolved against its module (test modules left out).
struct Paths<'a> {
    here: &'a [String],
    /// Child modules of `here` (a leading child name is a relative path).
    children: BTreeSet<String>,
    found: Vec<Vec<String>>,
    /// Names brought in by `use`: what each stands for (`None`: outside the crate).
    bindings: Vec<(String, Option<Vec<String>>)>,
}

/// `#[cfg(test)]` exactly (`cfg(not(test))` and features named like tests are code).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "test")
    })
}

impl Paths<'_> {
    /// The absolute module path a path names, or `None` for one outside the crate.
    fn absolute(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.here.to_vec(),
            "super" => {
                let mut b = self.here.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    b.pop();
                    rest = &rest[1..];
                }
                b.extend(rest.iter().cloned());
                return Some(b);
            }
            name if self.children.contains(name) => {
                let mut b = self.here.to_vec();
                b.push(name.to_owned());
                b.extend(segments[1..].iter().cloned());
                return Some(b);
            }
            _ => return None,
        };
        base.extend(segments[1..].iter().cloned());
        Some(base)
    }

    fn resolve(&mut self, segments: &[String]) {
        if let Some(p) = self.absolute(segments) {
            self.found.push(p);
        }
    }

    /// A name a `use` brings into this module, and what it stands for.
    fn bind(&mut self, name: String, segments: &[String]) {
        let target = self.absolute(segments);
        self.bindings.push((name, target));
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.resolve(&full);
                if let Some(name) = full.last().cloned() {
                    self.bind(name, &full);
                }
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.resolve(&full);
                self.bind(r.rename.to_string(), &full);
            }
            syn::UseTree::Glob(_) => {
                let full = prefix.clone();
                self.resolve(&full);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test(&m.attrs) {
            return;
        }
        // An inline module is part of this file; its paths count for the file.
        syn::visit::visit_item_mod(self, m);
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_test(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.resolve(&segments);
        }
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Paths inside `format!` and friends: parse the tokens as expressions where
        // they are (best effort; a macro of items is rare here).
        if let Ok(args) = m.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for e in &args {
                self.visit_expr(e);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// The file → file import graph of one crate's sources. A path through a name another
/// module imports (a re-export, `use other as alias`) counts for the module that defines
/// it, not for the one that passes it on; a name from outside the crate counts for none.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    // `main.rs` is a crate of its own beside `lib.rs` (it reaches the library by name).
    let mods: Vec<Module> = modules(src)
        .into_iter()
        .filter(|m| m.file.file_name().is_none_or(|f| f != "main.rs"))
        .collect();
    let by_path: BTreeMap<Vec<String>, String> = mods
        .iter()
        .map(|m| {
            (
                m.path.clone(),
                m.file.strip_prefix(src).unwrap().display().to_string(),
            )
        })
        .collect();
    let mut found: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let mut bindings: BTreeMap<Vec<String>, BTreeMap<String, Option<Vec<String>>>> =
        BTreeMap::new();
    for m in &mods {
        let text = std::fs::read_to_string(&m.file).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", m.file.display()));
        let children = mods
            .iter()
            .filter(|c| c.path.len() == m.path.len() + 1 && c.path.starts_with(&m.path))
            .map(|c| c.path.last().unwrap().clone())
            .collect();
        let mut paths = Paths {
            here: &m.path,
            children,
            found: Vec::new(),
            bindings: Vec::new(),
        };
        paths.visit_file(&file);
        bindings
            .entry(m.path.clone())
            .or_default()
            .extend(paths.bindings);
        found.push((by_path[&m.path].clone(), paths.found));
    }
    // The file a path lands in, following imports (at most 16 hops).
    let land = |mut p: Vec<String>| -> Option<String> {
        for _ in 0..16 {
            let n = (0..=p.len())
                .rev()
                .find(|n| by_path.contains_key(&p[..*n]))?;
            let module = &p[..n];
            match p.get(n).and_then(|name| bindings.get(module)?.get(name)) {
                Some(Some(to)) => {
                    let mut next = to.clone();
                    next.extend(p[n + 1..].iter().cloned());
                    if next == p {
                        return by_path.get(module).cloned();
                    }
                    p = next;
                }
                Some(None) => return None,
                None => return by_path.get(module).cloned(),
            }
        }
        None
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (me, paths) in found {
        let out = edges.entry(me.clone()).or_default();
        for p in paths {
            if let Some(t) = land(p)
                && t != me
            {
                out.insert(t);
            }
        }
    }
    edges
}

/// The strongly connected components of more than one file (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on.insert(v);
        if let Some(ws) = s.edges.get(v) {
            for w in ws {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let l = s.low[w].min(s.low[v]);
                    s.low.insert(v, l);
                } else if s.on.contains(w) {
                    let l = s.index[w].min(s.low[v]);
                    s.low.insert(v, l);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The ring of a component, for the message: who imports whom inside it.
fn describe(edges: &BTreeMap<String, BTreeSet<String>>, comp: &[String]) -> String {
    comp.iter()
        .map(|f| {
            let inside: Vec<&str> = edges[f]
                .iter()
                .filter(|t| comp.contains(t))
                .map(String::as_str)
                .collect();
            format!("  {f} → {}", inside.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Files still in a cycle, per crate: a ratchet while the house is rebuilt (each step
/// lowers it; a new cycle fails). The goal is zero everywhere.
const STILL_IN_A_CYCLE: [(&str, usize); 4] = [
    ("rulebench-core", 0),
    ("rulebench-store", 0),
    ("rulebench-app", 0),
    ("rulebench", 0),
];

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut report = String::new();
    for (name, dir) in CRATES {
        let edges = graph(&root.join(dir));
        assert!(edges.len() > 3, "{name}: no sources under {dir}");
        let found = cycles(&edges);
        let files: usize = found.iter().map(Vec::len).sum();
        let allowed = STILL_IN_A_CYCLE
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, k)| *k);
        if files <= allowed {
            assert!(
                files == allowed,
                "{name}: {files} files in cycles now, fewer than {allowed}: lower STILL_IN_A_CYCLE"
            );
            continue;
        }
        for comp in found {
            report.push_str(&format!(
                "{name}: a cycle of {} files\n{}\n",
                comp.len(),
                describe(&edges, &comp)
            ));
        }
    }
    assert!(report.is_empty(), "import cycles:\n{report}");
}

#[test]
fn the_cycle_check_finds_a_ring() {
    // The checker itself: a ring of three files is found, a chain is not.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut edge = |a: &str, b: &str| {
        edges.entry(a.into()).or_default().insert(b.into());
        edges.entry(b.into()).or_default();
    };
    edge("a.rs", "b.rs");
    edge("b.rs", "c.rs");
    edge("c.rs", "a.rs");
    edge("c.rs", "d.rs");
    let found = cycles(&edges);
    assert_eq!(found, vec![vec!["a.rs", "b.rs", "c.rs"]]);
}

#[test]
fn the_app_crate_re_exports_core_types_and_no_core_function() {
    // `rulebench_app::types` is the door of the core's *types* to the fronts; a function
    // (or a whole module) of the core re-exported there would let a front run the core
    // past the use cases. Types and constants start with a capital letter.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/app/src/types.rs");
    let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
    fn names(tree: &syn::UseTree, out: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => names(&p.tree, out),
            syn::UseTree::Name(n) => out.push(n.ident.to_string()),
            syn::UseTree::Rename(r) => out.push(r.rename.to_string()),
            syn::UseTree::Glob(_) => out.push("*".into()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| names(t, out)),
        }
    }
    let mut found = Vec::new();
    for item in &file.items {
        match item {
            syn::Item::Use(u) => names(&u.tree, &mut found),
            syn::Item::Fn(f) => found.push(format!("fn {}", f.sig.ident)),
            _ => {}
        }
    }
    assert!(found.len() > 10, "{found:?}");
    let wrong: Vec<&String> = found
        .iter()
        .filter(|n| !n.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect();
    assert!(
        wrong.is_empty(),
        "crates/app/src/types.rs re-exports what is not a type or a constant: {wrong:?} \
         (a use case in the app crate instead)"
    );
}

#[test]
fn the_model_is_a_leaf_and_validation_does_not_lint() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let edges = graph(&root.join("crates/core/src"));
    // The page model is types: it imports no other file of the core.
    assert!(
        edges["model.rs"].is_empty(),
        "model.rs imports {:?}",
        edges["model.rs"]
    );
    // Validation and the lint are steps of their own; `check` composes them.
    assert!(
        !edges["validate.rs"].contains("lint.rs"),
        "{:?}",
        edges["validate.rs"]
    );
    assert!(
        !edges["lint.rs"].contains("validate.rs"),
        "{:?}",
        edges["lint.rs"]
    );
    assert!(edges["check.rs"].contains("lint.rs") && edges["check.rs"].contains("validate.rs"));
}

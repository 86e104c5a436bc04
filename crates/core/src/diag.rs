//! Diagnostics: what is wrong, where (JSON pointer, line:col), and a hint.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

mod code;
pub use code::Code;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding of validation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code for scripts: `json-syntax`, `unknown-operator`, `unknown-field`, …
    pub code: Code,
    pub message: String,
    /// JSON pointer into the document (`/rules/2/logic/or/0`).
    pub pointer: String,
    /// 1-based line and column in the source text, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            pointer: pointer.into(),
            line: None,
            column: None,
            hint: None,
        }
    }

    pub fn warning(code: Code, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, pointer, message)
        }
    }

    pub fn with_hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Prefixes the pointer (a rule's diagnostics inside a page).
    pub fn under(mut self, prefix: &str) -> Self {
        self.pointer = format!("{prefix}{}", self.pointer);
        self
    }

    /// Fills line:col from the text the pointer points into.
    /// Where a pointer the text does not spell (a rule id derived from its name, a
    /// default) points, the nearest enclosing value that it does is located instead.
    pub fn locate_in(self, text: &str) -> Self {
        if self.line.is_some() {
            return self;
        }
        let locator = Locator::new(text, [self.pointer.as_str()]);
        self.locate_with(&locator)
    }

    /// [`Diagnostic::locate_in`] with the places found by one scan of the text for
    /// many diagnostics ([`locate_all`]).
    pub fn locate_with(mut self, locator: &Locator<'_>) -> Self {
        if self.line.is_some() {
            return self;
        }
        let mut pointer = self.pointer.as_str();
        loop {
            if let Some((line, column)) = locator.locate(pointer) {
                self.line = Some(line);
                self.column = Some(column);
                return self;
            }
            match pointer.rfind('/') {
                Some(cut) if !pointer.is_empty() => pointer = &pointer[..cut],
                _ => return self,
            }
        }
    }

    /// A diagnostic for a JSON syntax error in `text`, its column counted in characters
    /// (serde_json counts bytes: `é` before the error would move it right).
    pub fn json_syntax_in(err: &serde_json::Error, text: &str) -> Self {
        let mut d = Self::json_syntax(err);
        if let (Some(line), Some(col)) = (d.line, d.column)
            && let Some(src) = text.lines().nth(line - 1)
        {
            let bytes = (col - 1).min(src.len());
            let mut cut = bytes;
            while !src.is_char_boundary(cut) {
                cut -= 1;
            }
            d.column = Some(src[..cut].chars().count() + 1);
        }
        d
    }

    /// A diagnostic for a JSON syntax error (columns as serde_json counts them: bytes).
    pub fn json_syntax(err: &serde_json::Error) -> Self {
        let message = err.to_string();
        // serde_json appends " at line L column C"; we report those separately.
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.clone(), |(m, _)| m.to_owned());
        let (code, what) = match err.classify() {
            serde_json::error::Category::Data => (Code::JsonShape, "unexpected content"),
            _ => (Code::JsonSyntax, "invalid JSON"),
        };
        // serde_json counts columns from 0 at the start of a line (an empty text is at
        // 1:0); columns here count from 1.
        Diagnostic {
            line: Some(err.line().max(1)),
            column: Some(err.column().max(1)),
            ..Diagnostic::error(code, "", format!("{what}: {message}"))
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}[{}]", self.code)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, " {l}:{c}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

/// The deepest a rule may nest.
pub const MAX_DEPTH: usize = 64;

/// The pointer of the first level of logic nested deeper than `limit` levels, counted
/// as rule validation counts them: an object (an operator) is a level, and so is an
/// array, except an operator's list of arguments (`{"!": [x]}` is one level above
/// `x`). Scalars are no level.
pub fn deeper_than(value: &serde_json::Value, limit: usize) -> Option<String> {
    use serde_json::Value;
    // (value, its level, its pointer)
    let mut stack = vec![(value, 1usize, String::new())];
    while let Some((v, depth, at)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => {
                if depth > limit {
                    return Some(at);
                }
                for (i, x) in items.iter().enumerate() {
                    stack.push((x, depth + 1, format!("{at}/{i}")));
                }
            }
            serde_json::Value::Object(map) => {
                if depth > limit {
                    return Some(at);
                }
                for (k, x) in map {
                    let member = format!("{at}/{}", pointer_token(k));
                    match x {
                        // An operator's arguments: each one a level below the operator.
                        Value::Array(args) => {
                            for (i, a) in args.iter().enumerate() {
                                stack.push((a, depth + 1, format!("{member}/{i}")));
                            }
                        }
                        other => stack.push((other, depth + 1, member)),
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Deepest nesting a JSON text may have before it is parsed at all (a guard for the
/// parser's stack; rules are held to [`crate::validate::MAX_DEPTH`] afterwards).
pub const MAX_TEXT_DEPTH: usize = 1024;

/// The largest integer compared exactly: 2^53 − 1 (JavaScript's `Number.MAX_SAFE_INTEGER`).
/// The engine compares numbers as 64-bit floats, so an integer literal beyond ±this in a
/// JSON input is refused (it would silently lose digits); in CSV such a cell is text.
pub const MAX_EXACT_INTEGER: u64 = (1 << 53) - 1;

/// What the lexical pre-scan of a JSON text found before parsing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextProblem {
    /// Nesting deeper than the limit given.
    TooDeep(usize),
    /// An integer literal beyond ±[`MAX_EXACT_INTEGER`] (the literal, shortened).
    BigInteger(String),
    /// A key written twice in one object (a reader keeps one without a word): the key
    /// (shortened, escaped), where the first one is, and the JSON pointer of the second.
    DuplicateKey {
        key: String,
        first: (usize, usize),
        pointer: String,
    },
}

impl TextProblem {
    /// The diagnostic code: `too-deep`, `big-integer` or `duplicate-key`.
    pub fn code(&self) -> Code {
        match self {
            TextProblem::TooDeep(_) => Code::TooDeep,
            TextProblem::BigInteger(_) => Code::BigInteger,
            TextProblem::DuplicateKey { .. } => Code::DuplicateKey,
        }
    }

    pub fn message(&self) -> String {
        match self {
            TextProblem::TooDeep(limit) => format!("JSON nests deeper than {limit} levels"),
            TextProblem::DuplicateKey {
                key,
                first: (line, column),
                ..
            } => format!(
                "duplicate key `{key}` in one object (the first at {line}:{column}): a reader would keep one of them without a word"
            ),
            TextProblem::BigInteger(literal) => format!(
                "integer {literal} is beyond ±{MAX_EXACT_INTEGER} (2^53 − 1) and would lose digits"
            ),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            TextProblem::TooDeep(_) => None,
            TextProblem::DuplicateKey { .. } => Some("keep one of the two".into()),
            TextProblem::BigInteger(literal) => Some(format!(
                "numbers are compared as 64-bit floats; keep an identifier exact as a string (\"{literal}\")"
            )),
        }
    }

    /// A located diagnostic at `line:column`.
    pub fn diagnostic(&self, line: usize, column: usize) -> Diagnostic {
        Diagnostic {
            line: Some(line),
            column: Some(column),
            ..Diagnostic::error(self.code(), self.pointer(), self.message()).with_hint(self.hint())
        }
    }

    /// The JSON pointer of the problem, where the scan knows it.
    pub fn pointer(&self) -> &str {
        match self {
            TextProblem::DuplicateKey { pointer, .. } => pointer,
            _ => "",
        }
    }
}

/// Parses JSON text; errors carry line:col. Nesting is limited to [`MAX_TEXT_DEPTH`]
/// (not serde_json's 128) so that the rule depth limit is reported by validation,
/// with a pointer, rather than as a syntax error; integer literals beyond
/// ±[`MAX_EXACT_INTEGER`] are refused (see [`prescan`]).
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Box<Diagnostic>> {
    // A byte-order mark opens many files saved on Windows: it is not JSON, and skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.starts_with('\u{feff}') {
        return Err(Box::new(Diagnostic {
            line: Some(1),
            column: Some(2),
            ..Diagnostic::error(
                Code::JsonSyntax,
                "",
                "a second byte-order mark (U+FEFF): one may open a file, not two",
            )
            .with_hint(Some(
                "save the file as UTF-8 with one byte-order mark or none".into(),
            ))
        }));
    }
    if let Some((line, column, problem)) = prescan(text, MAX_TEXT_DEPTH) {
        return Err(Box::new(problem.diagnostic(line, column)));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let syntax = |e: serde_json::Error| Box::new(Diagnostic::json_syntax_in(&e, text));
    let value = T::deserialize(&mut de).map_err(syntax)?;
    de.end().map_err(syntax)?;
    Ok(value)
}

/// Where a JSON text first nests deeper than `limit`, as line:col.
pub fn too_deep(text: &str, limit: usize) -> Option<(usize, usize)> {
    match prescan(text, limit) {
        Some((line, column, TextProblem::TooDeep(_))) => Some((line, column)),
        _ => None,
    }
}

/// One lexical pass over a JSON text before it is parsed: the first place it nests
/// deeper than `depth_limit` (a guard for the parser's stack), holds an integer literal
/// beyond ±[`MAX_EXACT_INTEGER`], or writes a key twice in one object, as line:col and
/// what. Literals with a fraction or an exponent are decimals, approximate by nature,
/// and pass. Every JSON text the project reads passes here ([`parse_json`], the dataset
/// readers), so a duplicate key is refused everywhere: rule logic, rows, predicates,
/// assertions' `expected`.
pub fn prescan(text: &str, depth_limit: usize) -> Option<(usize, usize, TextProblem)> {
    use std::borrow::Cow;
    use std::collections::HashMap;
    /// An open object or array: an object's keys so far (where each is) and the member
    /// being read; an array's element index.
    enum Frame<'t> {
        Object {
            keys: Keys<'t>,
            expect_key: bool,
            member: Option<Cow<'t, str>>,
        },
        Array(usize),
    }
    /// An object's keys with where each is: a list (rows have a dozen keys; a scan
    /// costs less than hashing), indexed once it grows.
    #[derive(Default)]
    struct Keys<'t> {
        list: Vec<(Cow<'t, str>, (usize, usize))>,
        index: Option<HashMap<Cow<'t, str>, usize>>,
    }
    impl<'t> Keys<'t> {
        fn get(&self, key: &str) -> Option<(usize, usize)> {
            match &self.index {
                Some(index) => index.get(key).map(|&i| self.list[i].1),
                None => self.list.iter().find(|(k, _)| k == key).map(|(_, at)| *at),
            }
        }
        fn insert(&mut self, key: Cow<'t, str>, at: (usize, usize)) {
            if let Some(index) = &mut self.index {
                index.insert(key.clone(), self.list.len());
            }
            self.list.push((key, at));
            if self.index.is_none() && self.list.len() > 24 {
                self.index = Some(
                    self.list
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect(),
                );
            }
        }
    }
    let mut frames: Vec<Frame<'_>> = Vec::new();
    // Key lists of closed objects, kept for the next ones (no allocation per row).
    type KeyList<'t> = Vec<(Cow<'t, str>, (usize, usize))>;
    let mut spare: Vec<KeyList<'_>> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    // Where the string being read opened (byte, line, col).
    let mut string_at = (0usize, 0usize, 0usize);
    let (mut line, mut col) = (1, 0);
    // The integer literal being read: its start (byte, line, col), and whether it stays
    // an integer (no `.`, `e`, `E`).
    let mut number: Option<(usize, usize, usize, bool)> = None;
    for (at, c) in text.char_indices() {
        col += 1;
        if c == '\n' {
            line += 1;
            col = 0;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    in_string = false;
                    let mut twice = None;
                    if let Some(Frame::Object {
                        keys,
                        expect_key,
                        member,
                    }) = frames.last_mut()
                        && *expect_key
                    {
                        *expect_key = false;
                        let raw = &text[string_at.0 + 1..at];
                        let key: Cow<'_, str> = if raw.contains('\\') {
                            match serde_json::from_str::<String>(&text[string_at.0..=at]) {
                                Ok(k) => Cow::Owned(k),
                                // Not a valid string: the parser says where.
                                Err(_) => Cow::Borrowed(raw),
                            }
                        } else {
                            Cow::Borrowed(raw)
                        };
                        match keys.get(&key) {
                            Some(first) => twice = Some((first, key)),
                            None => {
                                keys.insert(key.clone(), (string_at.1, string_at.2));
                                *member = Some(key);
                            }
                        }
                    }
                    if let Some((first, key)) = twice {
                        let mut pointer = String::new();
                        for frame in &frames[..frames.len() - 1] {
                            pointer.push('/');
                            match frame {
                                Frame::Object { member, .. } => pointer
                                    .push_str(&pointer_token(member.as_deref().unwrap_or(""))),
                                Frame::Array(i) => pointer.push_str(&i.to_string()),
                            }
                        }
                        pointer.push('/');
                        pointer.push_str(&pointer_token(&key));
                        let shown: String = key.chars().take(60).collect();
                        return Some((
                            string_at.1,
                            string_at.2,
                            TextProblem::DuplicateKey {
                                key: super::text::sanitize(&shown),
                                first,
                                pointer,
                            },
                        ));
                    }
                }
                _ => {}
            }
            continue;
        }
        if let Some((start, l, cl, integer)) = number {
            match c {
                '0'..='9' | '+' | '-' => continue,
                '.' | 'e' | 'E' => {
                    number = Some((start, l, cl, false));
                    continue;
                }
                _ => {
                    number = None;
                    if integer && let Some(p) = big_integer(&text[start..at]) {
                        return Some((l, cl, p));
                    }
                }
            }
        }
        match c {
            '"' => {
                in_string = true;
                string_at = (at, line, col);
            }
            '[' | '{' => {
                frames.push(if c == '{' {
                    Frame::Object {
                        keys: Keys {
                            list: spare.pop().unwrap_or_default(),
                            index: None,
                        },
                        expect_key: true,
                        member: None,
                    }
                } else {
                    Frame::Array(0)
                });
                if frames.len() > depth_limit {
                    return Some((line, col, TextProblem::TooDeep(depth_limit)));
                }
            }
            ']' | '}' => {
                if let Some(Frame::Object { keys, .. }) = frames.pop() {
                    let mut list = keys.list;
                    list.clear();
                    spare.push(list);
                }
            }
            ',' => match frames.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array(i)) => *i += 1,
                None => {}
            },
            '-' | '0'..='9' => number = Some((at, line, col, true)),
            _ => {}
        }
    }
    if let Some((start, l, cl, true)) = number
        && let Some(p) = big_integer(&text[start..])
    {
        return Some((l, cl, p));
    }
    None
}

/// Whether an integer literal is beyond ±[`MAX_EXACT_INTEGER`].
fn big_integer(literal: &str) -> Option<TextProblem> {
    let digits = literal.trim_start_matches('-').trim_start_matches('0');
    if digits.len() < 16 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() == 16 && digits.parse::<u64>().is_ok_and(|n| n <= MAX_EXACT_INTEGER) {
        return None;
    }
    let shown = if literal.len() > 40 {
        format!("{}…", &literal[..40])
    } else {
        literal.to_owned()
    };
    Some(TextProblem::BigInteger(shown))
}

/// Whether a JSON number read from text is exact: any decimal, or an integer
/// within ±[`MAX_EXACT_INTEGER`].
pub fn exact_number(n: &serde_json::Number) -> bool {
    if let Some(i) = n.as_i64() {
        i.unsigned_abs() <= MAX_EXACT_INTEGER
    } else if let Some(u) = n.as_u64() {
        u <= MAX_EXACT_INTEGER
    } else {
        true
    }
}

/// Escapes one JSON pointer token (`~` → `~0`, `/` → `~1`).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The row of `d` whose key, id or label is closest to `name` (or to its value, for
/// `field=value`): a did-you-mean, given as the row's key.
pub fn did_you_mean_row(d: &crate::model::Dataset, name: &str) -> Option<String> {
    let value = name.split_once('=').map_or(name, |(_, v)| v);
    // Every name of every row, with the key it stands for.
    let names: Vec<(String, usize)> = d
        .rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| [(d.row_key(r), i), (d.row_id(r), i), (d.row_label(r), i)])
        .collect();
    let closest = did_you_mean(name, names.iter().map(|(n, _)| n.as_str()))
        .or_else(|| did_you_mean(value, names.iter().map(|(n, _)| n.as_str())))?;
    let (_, row) = names.iter().find(|(n, _)| *n == closest)?;
    Some(d.row_key(&d.rows[*row]))
}

/// The closest candidate to `word`, if one is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            let d = strsim::damerau_levenshtein(&lower, &c.to_lowercase());
            (d, c)
        })
        .filter(|(d, c)| {
            *d <= (c.chars().count().max(word.chars().count()) / 3).max(1)
                || c.eq_ignore_ascii_case(word)
        })
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c.to_owned())
}

/// Finds the 1-based line:col where the value at `pointer` starts in JSON `text`.
/// For a pointer ending in an object key, points at that key. `None` when the text
/// does not parse that far.
pub fn locate(text: &str, pointer: &str) -> Option<(usize, usize)> {
    Locator::new(text, [pointer]).locate(pointer)
}

/// Locates every diagnostic of a list in `text` with one pass over it (not a pass
/// per diagnostic): a page with thousands of warnings costs what one costs.
pub fn locate_all(diags: Vec<Diagnostic>, text: &str) -> Vec<Diagnostic> {
    let unplaced = || diags.iter().filter(|d| d.line.is_none());
    if unplaced().next().is_none() {
        return diags;
    }
    let locator = Locator::new(text, unplaced().map(|d| d.pointer.as_str()));
    diags.into_iter().map(|d| d.locate_with(&locator)).collect()
}

/// Where the values at some JSON pointers (and at every prefix of them) start in one
/// text: found in a single scan that descends only where a pointer leads and skips
/// everything else, then turned into line:col through an index of line starts.
pub struct Locator<'t> {
    text: &'t str,
    /// Byte offset of each pointer found.
    offsets: HashMap<String, usize>,
    /// Byte offset of the start of each line (the first is 0).
    lines: Vec<usize>,
}

/// The pointers asked for, as a tree of reference tokens.
#[derive(Default)]
struct Wanted {
    children: HashMap<String, Wanted>,
    /// The pointer that ends here, when one does.
    pointer: Option<String>,
}

impl<'t> Locator<'t> {
    /// Scans `text` once for `pointers` and every prefix of each (a diagnostic whose
    /// exact place the text lacks is placed at its nearest ancestor).
    pub fn new<'p>(text: &'t str, pointers: impl IntoIterator<Item = &'p str>) -> Locator<'t> {
        let mut root = Wanted::default();
        for pointer in pointers {
            let Some(tokens) = tokens(pointer) else {
                continue;
            };
            let mut node = &mut root;
            node.pointer = Some(String::new());
            let mut prefix = String::new();
            for token in tokens {
                prefix.push('/');
                prefix.push_str(&token.replace('~', "~0").replace('/', "~1"));
                node = node.children.entry(token).or_default();
                node.pointer = Some(prefix.clone());
            }
        }
        let mut offsets = HashMap::new();
        let mut scanner = Scanner {
            bytes: text.as_bytes(),
            pos: 0,
        };
        scanner.ws();
        if root.pointer.is_some() {
            offsets.insert(String::new(), scanner.pos);
        }
        scanner.walk(&root, &mut offsets);
        let lines = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Locator {
            text,
            offsets,
            lines,
        }
    }

    /// The 1-based line:col of `pointer`, if it was asked for and the text has it.
    pub fn locate(&self, pointer: &str) -> Option<(usize, usize)> {
        let &offset = self.offsets.get(pointer)?;
        let line = self.lines.partition_point(|&start| start <= offset);
        let start = self.lines[line - 1];
        let column = self
            .text
            .get(start..offset)
            .map_or(0, |l| l.chars().count())
            + 1;
        Some((line, column))
    }
}

/// A pointer's reference tokens, unescaped (`None`: not a pointer).
fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(vec![]);
    }
    Some(
        pointer
            .strip_prefix('/')?
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// Consumes the value at the cursor, recording where the wanted members and items
    /// under it start: a member at its key, an item at its value. `None` where the text
    /// stops making sense (what was recorded before stays).
    fn walk(&mut self, wanted: &Wanted, out: &mut HashMap<String, usize>) -> Option<()> {
        self.ws();
        if wanted.children.is_empty() {
            return self.skip_value();
        }
        let mut child = |s: &mut Self, node: Option<&Wanted>, at: usize| -> Option<()> {
            match node {
                Some(node) => {
                    if let Some(p) = &node.pointer {
                        out.entry(p.clone()).or_insert(at);
                    }
                    s.walk(node, out)
                }
                None => s.skip_value(),
            }
        };
        match *self.bytes.get(self.pos)? {
            b'{' => {
                self.pos += 1;
                // A key met again (JSON allows it) is not looked into: a pointer names
                // the first member with its key, as a scan of its own would find it.
                let mut met: Vec<String> = Vec::new();
                loop {
                    self.ws();
                    if self.bytes.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        return Some(());
                    }
                    let key_at = self.pos;
                    let key = self.string()?;
                    self.ws();
                    if self.bytes.get(self.pos) != Some(&b':') {
                        return None;
                    }
                    self.pos += 1;
                    let node = wanted.children.get(&key).filter(|_| !met.contains(&key));
                    if node.is_some() {
                        met.push(key);
                    }
                    child(self, node, key_at)?;
                    self.ws();
                    match self.bytes.get(self.pos)? {
                        b',' => self.pos += 1,
                        b'}' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                let mut index = 0usize;
                loop {
                    self.ws();
                    if self.bytes.get(self.pos) == Some(&b']') {
                        self.pos += 1;
                        return Some(());
                    }
                    let at = self.pos;
                    child(self, wanted.children.get(&index.to_string()), at)?;
                    index += 1;
                    self.ws();
                    match self.bytes.get(self.pos)? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            _ => self.skip_value(),
        }
    }

    /// Moves past a string without decoding it.
    fn skip_string(&mut self) -> Option<()> {
        if self.bytes.get(self.pos) != Some(&b'"') {
            return None;
        }
        self.pos += 1;
        while let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => return Some(()),
                _ => {}
            }
        }
        None
    }

    /// Reads a string, decoded.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_string()?;
        let raw = std::str::from_utf8(&self.bytes[start..self.pos]).ok()?;
        serde_json::from_str(raw).ok()
    }

    fn skip_value(&mut self) -> Option<()> {
        self.ws();
        match *self.bytes.get(self.pos)? {
            b'"' => self.skip_string(),
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                loop {
                    self.ws();
                    match *self.bytes.get(self.pos)? {
                        b if b == close => {
                            self.pos += 1;
                            return Some(());
                        }
                        b',' | b':' => self.pos += 1,
                        _ => self.skip_value()?,
                    }
                }
            }
            _ => {
                while let Some(&b) = self.bytes.get(self.pos) {
                    if b == b',' || b == b'}' || b == b']' || b.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }
}

/// How deep a JSON value nests (a scalar: 0; `[1]`: 1; `{"a": [1]}`: 2).
pub fn value_depth(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match v {
            serde_json::Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            serde_json::Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Whether a row nests deeper than [`MAX_DEPTH`] levels (the row object is level 1):
/// the one nesting limit of rules and data, checked wherever a row comes in.
pub fn row_too_deep(row: &crate::model::Row) -> bool {
    row.values().any(|v| value_depth(v) + 1 > MAX_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_points_at_keys_and_items() {
        let text = "{\n  \"or\": [\n    {\"==\": [1, 2]},\n    {\"fooo\": 3}\n  ]\n}";
        assert_eq!(locate(text, ""), Some((1, 1)));
        assert_eq!(locate(text, "/or"), Some((2, 3)));
        assert_eq!(locate(text, "/or/1"), Some((4, 5)));
        assert_eq!(locate(text, "/or/1/fooo"), Some((4, 6)));
        assert_eq!(locate(text, "/or/0/==/1"), Some((3, 16)));
        assert_eq!(locate(text, "/nope"), None);
    }

    /// One scan for many diagnostics places each where a scan of its own would: keys,
    /// items, escaped tokens (`~1`), strings holding brackets and quotes, pointers the
    /// text lacks (placed at their nearest ancestor) and pointers past a syntax error.
    #[test]
    fn locate_all_places_each_diagnostic_as_locate_does() {
        let text = "{\n  \"a/b\": {\"x\": \"]}\\\"[\", \"y\": [10, {\"z\": 1}]},\n  \"rules\": [\n    {\"id\": \"é\", \"logic\": {\"==\": [1, 2]}},\n    {\"id\": \"two\"}\n  ],\n  \"bad\": [1, 2 3]\n}";
        let pointers = [
            "",
            "/a~1b",
            "/a~1b/x",
            "/a~1b/y/1/z",
            "/rules/0/logic/==/1",
            "/rules/1/id",
            "/rules/1/logic",
            "/rules/7",
            "/nope/deeper",
            "/bad/2",
            "not a pointer",
        ];
        let one_by_one: Vec<(Option<usize>, Option<usize>)> = pointers
            .iter()
            .map(|p| {
                let d = Diagnostic::warning(Code::Compile, *p, "m").locate_in(text);
                (d.line, d.column)
            })
            .collect();
        let all: Vec<(Option<usize>, Option<usize>)> = locate_all(
            pointers
                .iter()
                .map(|p| Diagnostic::warning(Code::Compile, *p, "m"))
                .collect(),
            text,
        )
        .into_iter()
        .map(|d| (d.line, d.column))
        .collect();
        assert_eq!(all, one_by_one);
        assert_eq!(locate(text, "/a~1b/y/1/z"), Some((2, 36)));
        assert_eq!(locate(text, "/rules/0/logic/==/1"), Some((4, 37)));
        assert_eq!(locate(text, "/rules/1/id"), Some((5, 6)));
        assert_eq!(
            all[6],
            (Some(5), Some(5)),
            "a member the text lacks: its parent"
        );
        assert_eq!(locate(text, "/bad/1"), Some((7, 14)));
        assert_eq!(locate(text, "/bad/2"), None, "past the syntax error");
        // A duplicated key: the first member is the one a pointer names.
        let dup = "{\"a\": {\"x\": 1}, \"a\": {\"y\": 2}}";
        assert_eq!(locate(dup, "/a/x"), Some((1, 8)));
        assert_eq!(locate(dup, "/a/y"), None);
        let d = Diagnostic::warning(Code::Compile, "/a/y", "m");
        let d = locate_all(vec![d], dup).remove(0);
        assert_eq!((d.line, d.column), (Some(1), Some(2)), "at the first `a`");
    }

    #[test]
    fn parse_json_allows_deep_rules_but_not_absurd_nesting() {
        let deep = format!("{}true{}", "[".repeat(200), "]".repeat(200));
        assert!(parse_json::<serde_json::Value>(&deep).is_ok());
        let absurd = format!(
            "{}{}",
            "[".repeat(MAX_TEXT_DEPTH + 1),
            "]".repeat(MAX_TEXT_DEPTH + 1)
        );
        let d = parse_json::<serde_json::Value>(&absurd).unwrap_err();
        assert_eq!(
            (d.code, d.line, d.column),
            (Code::TooDeep, Some(1), Some(MAX_TEXT_DEPTH + 1))
        );
        let d = parse_json::<serde_json::Value>("{\n  \"a\": [1,\n}").unwrap_err();
        assert_eq!((d.code, d.line), (Code::JsonSyntax, Some(3)));
        assert!(parse_json::<serde_json::Value>("[\"[[[\\\"\"]").is_ok());
    }

    #[test]
    fn prescan_refuses_a_key_written_twice_naming_both_places() {
        let dup = |t: &str| match prescan(t, MAX_TEXT_DEPTH) {
            Some((
                line,
                column,
                TextProblem::DuplicateKey {
                    key,
                    first,
                    pointer,
                },
            )) => Some((line, column, key, first, pointer)),
            _ => None,
        };
        assert_eq!(
            dup("{\"a\": [1, {\"b/c\": 1,\n \"b/c\": 2}]}"),
            Some((2, 2, "b/c".into(), (1, 12), "/a/1/b~1c".into()))
        );
        // The same key spelled with an escape is the same key.
        assert!(dup(r#"{"a": 1, "\u0061": 2}"#).is_some());
        // Keys of sibling and nested objects, values equal to keys, strings in arrays.
        assert_eq!(
            dup(r#"{"a": {"a": "a"}, "b": [{"a": 1}, {"a": 2}], "c": ["a", "a"]}"#),
            None
        );
        assert_eq!(dup(r#"{"a": "x\"a", "b": 1}"#), None);
        assert!(parse_json::<serde_json::Value>(r#"{"n": 1, "n": 100}"#).is_err());
    }

    #[test]
    fn prescan_refuses_integers_that_would_lose_digits() {
        let problem = |t: &str| prescan(t, MAX_TEXT_DEPTH);
        assert_eq!(
            problem("[9007199254740991, -9007199254740991, 1e300, 0.1]"),
            None
        );
        assert_eq!(problem("12345678901234567890.5"), None);
        assert_eq!(problem("{\"a\": \"9007199254740993\"}"), None);
        assert_eq!(
            problem("{\n  \"a\": 9007199254740992}"),
            Some((2, 8, TextProblem::BigInteger("9007199254740992".into())))
        );
        assert_eq!(
            problem("-9007199254740993"),
            Some((1, 1, TextProblem::BigInteger("-9007199254740993".into())))
        );
        assert_eq!(
            problem("[1,123456789012345678901234567890]").map(|p| p.1),
            Some(4)
        );
        let d = parse_json::<serde_json::Value>("[18446744073709551615]").unwrap_err();
        assert_eq!(
            (d.code, d.line, d.column),
            (Code::BigInteger, Some(1), Some(2))
        );
        assert!(d.hint.unwrap().contains("\"18446744073709551615\""));
        assert!(exact_number(&9_007_199_254_740_991u64.into()));
        assert!(!exact_number(&(-9_007_199_254_740_992i64).into()));
    }

    #[test]
    fn an_empty_text_is_an_error_at_1_1() {
        let d = parse_json::<serde_json::Value>("").unwrap_err();
        assert_eq!((d.line, d.column), (Some(1), Some(1)));
        let d = parse_json::<serde_json::Value>("{\n").unwrap_err();
        assert_eq!((d.line, d.column), (Some(2), Some(1)));
    }

    #[test]
    fn did_you_mean_finds_typos_only() {
        let fields = ["supportsStreaming", "supportsToolCalling", "provider"];
        assert_eq!(
            did_you_mean("supportStreaming", fields).as_deref(),
            Some("supportsStreaming")
        );
        assert_eq!(did_you_mean("zzz", fields), None);
    }
}

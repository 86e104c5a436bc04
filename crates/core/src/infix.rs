//! Infix rules: `target.supportsStreaming == true AND (source.maxLatencyMs <= 200 OR
//! target.tier in ['pro', 'max'])` compiles to JSONLogic, and JSONLogic that fits the
//! grammar prints back as infix (`parse(print(x)) == x`).
//!
//! ```text
//! expr    := or
//! or      := and ("OR" and)*
//! and     := not ("AND" not)*
//! not     := "NOT" not | compare
//! compare := value (op value)*        -- chains only for < <= (between forms)
//! op      := == != === !== < <= > >= | in | not in | not_in | contains | not contains
//!            | not_contains
//! value   := field | string | number | true | false | null | array | "(" expr ")"
//! field   := name ("." name)*          -- source.x, target.y
//! array   := "[" (value ("," value)*)? "]"
//! ```
//! Keywords are case-insensitive. Strings take '…' or "…".

use serde_json::{Map, Value, json};

use super::diag::did_you_mean;

/// A parse error: what, where (1-based line:col), and a hint.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{line}:{column}: {message}{}", hint.as_ref().map(|h| format!(" (hint: {h})")).unwrap_or_default())]
pub struct ParseError {
    /// What kind of mistake: `infix-syntax`, or `unknown-field` / `var-prefix` for a
    /// field the page does not have.
    pub code: crate::diag::Code,
    pub message: String,
    pub line: usize,
    pub column: usize,
    pub hint: Option<String>,
}

impl ParseError {
    /// The error with the offending line and a caret under the spot.
    pub fn render(&self, text: &str) -> String {
        let line = text.lines().nth(self.line - 1).unwrap_or("");
        let caret = " ".repeat(self.column.saturating_sub(1));
        let hint = self
            .hint
            .as_ref()
            .map(|h| format!("\n  hint: {h}"))
            .unwrap_or_default();
        format!(
            "{} at {}:{}\n  {line}\n  {caret}^{hint}",
            self.message, self.line, self.column
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Field(String),
    Str(String),
    Num(serde_json::Number),
    Kw(String),
    Op(&'static str),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    End,
}

impl Tok {
    /// Whether a value ends with this token (so a `-` after it is a minus).
    fn ends_value(&self) -> bool {
        match self {
            Tok::Field(_) | Tok::Str(_) | Tok::Num(_) | Tok::RParen | Tok::RBracket => true,
            Tok::Kw(k) => matches!(k.as_str(), "true" | "false" | "null"),
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    offset: usize,
}

const KEYWORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "in",
    "contains",
    "not_in",
    "not_contains",
    "true",
    "false",
    "null",
];

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |offset: usize, message: String, hint: Option<String>| {
        let (line, column) = line_col(text, offset);
        ParseError {
            code: crate::diag::Code::InfixSyntax,
            message,
            line,
            column,
            hint,
        }
    };
    while i < chars.len() {
        let (at, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..].iter().take(3).map(|(_, c)| *c).collect();
        let op = ["===", "!==", "==", "!=", "<=", ">=", "<", ">"]
            .into_iter()
            .find(|op| two.starts_with(op));
        if let Some(op) = op {
            out.push(Token {
                tok: Tok::Op(op),
                offset: at,
            });
            i += op.chars().count();
            continue;
        }
        match c {
            '=' => {
                // `=>` and `=<` are `>=` and `<=` written backwards.
                let meant = match chars.get(i + 1).map(|(_, c)| *c) {
                    Some('>') => ">=",
                    Some('<') => "<=",
                    _ => "==",
                };
                return Err(err(
                    at,
                    "`=` is not a comparison".into(),
                    Some(format!("did you mean `{meant}`?")),
                ));
            }
            '&' | '|' => {
                let word = if c == '&' { "AND" } else { "OR" };
                return Err(err(
                    at,
                    format!("`{c}` is not an operator"),
                    Some(format!("did you mean `{word}`?")),
                ));
            }
            '!' => {
                return Err(err(
                    at,
                    "`!` is not an operator".into(),
                    Some("did you mean `NOT` or `!=`?".into()),
                ));
            }
            '(' => out.push(Token {
                tok: Tok::LParen,
                offset: at,
            }),
            ')' => out.push(Token {
                tok: Tok::RParen,
                offset: at,
            }),
            '[' => out.push(Token {
                tok: Tok::LBracket,
                offset: at,
            }),
            ']' => out.push(Token {
                tok: Tok::RBracket,
                offset: at,
            }),
            ',' => out.push(Token {
                tok: Tok::Comma,
                offset: at,
            }),
            '\'' | '"' => {
                let quote = c;
                let mut s = String::new();
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        None => {
                            return Err(err(
                                at,
                                "unclosed string".into(),
                                Some(format!("add a closing {quote}")),
                            ));
                        }
                        Some((_, '\\')) => {
                            match chars.get(j + 1).map(|(_, c)| *c) {
                                Some('n') => s.push('\n'),
                                Some('t') => s.push('\t'),
                                Some('r') => s.push('\r'),
                                // `\u` not followed by `{` or a hex digit is a plain
                                // `u`, as before escapes were read (`'C:\users'`).
                                Some('u')
                                    if !chars.get(j + 2).is_some_and(|(_, c)| {
                                        *c == '{' || c.is_ascii_hexdigit()
                                    }) =>
                                {
                                    s.push('u')
                                }
                                Some('u') => {
                                    let (c, used) = unicode_escape(&chars[j..])
                                        .map_err(|message| err(chars[j].0, message, Some(
                                            "write a code point as \\u{1b} (1 to 6 hex digits) or \\u001b".into(),
                                        )))?;
                                    s.push(c);
                                    j += used;
                                    continue;
                                }
                                Some(other) => s.push(other),
                                None => return Err(err(at, "unclosed string".into(), None)),
                            }
                            j += 2;
                        }
                        Some((_, ch)) if *ch == quote => break,
                        Some((_, ch)) => {
                            s.push(*ch);
                            j += 1;
                        }
                    }
                }
                out.push(Token {
                    tok: Tok::Str(s),
                    offset: at,
                });
                i = j + 1;
                continue;
            }
            // Arithmetic: `-` right before a digit is a number's sign unless a value
            // ends just before it (`x -1` is x minus 1).
            '+' | '*' | '/' | '%' => out.push(Token {
                tok: Tok::Op(match c {
                    '+' => "+",
                    '*' => "*",
                    '/' => "/",
                    _ => "%",
                }),
                offset: at,
            }),
            '-' if !chars.get(i + 1).is_some_and(|(_, d)| d.is_ascii_digit())
                || out.last().is_some_and(|t: &Token| t.tok.ends_value()) =>
            {
                out.push(Token {
                    tok: Tok::Op("-"),
                    offset: at,
                })
            }
            c if c.is_ascii_digit()
                || (c == '-' && chars.get(i + 1).is_some_and(|(_, d)| d.is_ascii_digit())) =>
            {
                let mut j = i + 1;
                while j < chars.len()
                    && (chars[j].1.is_ascii_alphanumeric()
                        || matches!(chars[j].1, '.' | '+' | '-')
                            && matches!(chars[j - 1].1, 'e' | 'E')
                        || chars[j].1 == '.')
                {
                    j += 1;
                }
                let end = chars.get(j).map_or(text.len(), |(o, _)| *o);
                let raw = &text[at..end];
                let num: serde_json::Number = serde_json::from_str(raw)
                    .map_err(|_| err(at, format!("`{raw}` is not a number"), None))?;
                if let Some((_, _, problem)) = crate::diag::prescan(raw, 1) {
                    return Err(err(at, problem.message(), problem.hint()));
                }
                out.push(Token {
                    tok: Tok::Num(num),
                    offset: at,
                });
                i = j;
                continue;
            }
            c if c.is_alphabetic() || c == '_' || c == '$' => {
                let mut j = i;
                while j < chars.len()
                    && (chars[j].1.is_alphanumeric() || matches!(chars[j].1, '_' | '$' | '.' | '-'))
                {
                    j += 1;
                }
                let end = chars.get(j).map_or(text.len(), |(o, _)| *o);
                let word = &text[at..end];
                let lower = word.to_lowercase();
                if KEYWORDS.contains(&lower.as_str()) {
                    out.push(Token {
                        tok: Tok::Kw(lower),
                        offset: at,
                    });
                } else {
                    out.push(Token {
                        tok: Tok::Field(word.to_owned()),
                        offset: at,
                    });
                }
                i = j;
                continue;
            }
            other => return Err(err(at, format!("unexpected `{other}`"), None)),
        }
        i += 1;
    }
    out.push(Token {
        tok: Tok::End,
        offset: text.len(),
    });
    Ok(out)
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Field names a rule may use, for did-you-mean hints (`source.x`, `target.y`).
#[derive(Debug, Clone, Default)]
pub struct Fields(pub Vec<String>);

/// How deep parentheses, brackets and NOTs may nest (the parser recurses on them).
pub const MAX_NESTING: usize = 100;

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    fields: &'a Fields,
    /// Current nesting of `(`, `[` and NOT.
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn error_at(&self, offset: usize, message: String, hint: Option<String>) -> ParseError {
        let (line, column) = line_col(self.text, offset);
        ParseError {
            code: crate::diag::Code::InfixSyntax,
            message,
            line,
            column,
            hint,
        }
    }

    fn unexpected(&self, wanted: &str) -> ParseError {
        let t = &self.toks[self.pos];
        let found = match &t.tok {
            Tok::End => "the end".to_owned(),
            Tok::Field(f) => format!("`{f}`"),
            Tok::Str(s) => format!("'{s}'"),
            Tok::Num(n) => format!("`{n}`"),
            Tok::Kw(k) => format!("`{}`", k.to_uppercase()),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::Comma => "`,`".into(),
        };
        self.error_at(t.offset, format!("expected {wanted}, found {found}"), None)
    }

    /// Enters one more level of nesting (at `offset`), refusing past [`MAX_NESTING`].
    fn deeper(&mut self, offset: usize) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error_at(
                offset,
                format!("the expression nests deeper than {MAX_NESTING} levels"),
                Some("split it into simpler conditions".into()),
            ));
        }
        Ok(())
    }

    fn kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Kw(w) if w == k)
    }

    fn or(&mut self) -> Result<Value, ParseError> {
        let mut items = vec![self.and()?];
        while self.kw("or") {
            self.next();
            items.push(self.and()?);
        }
        Ok(join("or", items))
    }

    fn and(&mut self) -> Result<Value, ParseError> {
        let mut items = vec![self.not()?];
        while self.kw("and") {
            self.next();
            items.push(self.not()?);
        }
        Ok(join("and", items))
    }

    fn not(&mut self) -> Result<Value, ParseError> {
        if self.kw("not") {
            let t = self.next();
            self.deeper(t.offset)?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(op("!", vec![inner]));
        }
        self.compare()
    }

    fn compare(&mut self) -> Result<Value, ParseError> {
        let left = self.sum()?;
        let op = match self.peek().clone() {
            Tok::Op(op) if !matches!(op, "+" | "-" | "*" | "/" | "%") => {
                self.next();
                op.to_owned()
            }
            Tok::Kw(k) if k == "in" || k == "contains" => {
                self.next();
                k
            }
            // `not_in` / `not_contains`: the spellings of other rule languages.
            Tok::Kw(k) if k == "not_in" || k == "not_contains" => {
                self.next();
                k.replace('_', " ")
            }
            Tok::Kw(k) if k == "not" => {
                self.next();
                match self.peek().clone() {
                    Tok::Kw(k) if k == "in" || k == "contains" => {
                        self.next();
                        format!("not {k}")
                    }
                    _ => return Err(self.unexpected("`in` or `contains` after NOT")),
                }
            }
            _ => return Ok(left),
        };
        let right = self.sum()?;
        Ok(match op.as_str() {
            "in" => binary("in", left, right),
            "not in" => self::op("!", vec![binary("in", left, right)]),
            "contains" => binary("in", right, left),
            "not contains" => self::op("!", vec![binary("in", right, left)]),
            "<" | "<="
                if matches!(self.peek(), Tok::Op("<") | Tok::Op("<="))
                    && matches!(self.peek(), Tok::Op(o) if *o == op) =>
            {
                // Between: a < b < c (same operator).
                self.next();
                let third = self.sum()?;
                self::op(&op, vec![left, right, third])
            }
            _ => binary(&op, left, right),
        })
    }

    /// `a + b - c`: left to right; a run of `+` is one variadic `+` (as JSONLogic writes
    /// it), a parenthesised one stays apart.
    fn sum(&mut self) -> Result<Value, ParseError> {
        let mut acc = self.product()?;
        let mut plus_run = false;
        loop {
            match self.peek() {
                Tok::Op("+") => {
                    self.next();
                    let rhs = self.product()?;
                    if plus_run && let Some(Value::Array(items)) = acc.get_mut("+") {
                        items.push(rhs);
                    } else {
                        acc = binary("+", acc, rhs);
                        plus_run = true;
                    }
                }
                Tok::Op("-") => {
                    self.next();
                    let rhs = self.product()?;
                    acc = binary("-", acc, rhs);
                    plus_run = false;
                }
                _ => return Ok(acc),
            }
        }
    }

    /// `a * b / c % d`: left to right; a run of `*` is one variadic `*`.
    fn product(&mut self) -> Result<Value, ParseError> {
        let mut acc = self.unary()?;
        let mut times_run = false;
        loop {
            match self.peek() {
                Tok::Op("*") => {
                    self.next();
                    let rhs = self.unary()?;
                    if times_run && let Some(Value::Array(items)) = acc.get_mut("*") {
                        items.push(rhs);
                    } else {
                        acc = binary("*", acc, rhs);
                        times_run = true;
                    }
                }
                Tok::Op(op @ ("/" | "%")) => {
                    let op = *op;
                    self.next();
                    let rhs = self.unary()?;
                    acc = binary(op, acc, rhs);
                    times_run = false;
                }
                _ => return Ok(acc),
            }
        }
    }

    /// `-x`: a negation (a literal `-5` is a number already).
    fn unary(&mut self) -> Result<Value, ParseError> {
        if matches!(self.peek(), Tok::Op("-")) {
            let t = self.next();
            self.deeper(t.offset)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(op("-", vec![inner]));
        }
        self.value()
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        let t = self.next();
        match t.tok {
            Tok::Field(f) => {
                if f.split('.').any(str::is_empty) {
                    return Err(self.error_at(
                        t.offset,
                        format!("`{f}` is not a field name: it has an empty segment"),
                        Some("fields are written `source.x` or `target.x.y`".into()),
                    ));
                }
                let known = self.fields.0.is_empty()
                    || self
                        .fields
                        .0
                        .iter()
                        .any(|k| *k == f || f.starts_with(&format!("{k}.")));
                if !known {
                    let hint = did_you_mean(&f, self.fields.0.iter().map(String::as_str))
                        .map(|s| format!("did you mean `{s}`?"));
                    let (code, message) = if f.starts_with("source.") || f.starts_with("target.") {
                        (
                            crate::diag::Code::UnknownField,
                            format!("unknown field `{f}`"),
                        )
                    } else {
                        (
                            crate::diag::Code::VarPrefix,
                            format!(
                                "`{f}` is not a field: fields start with `source.` or `target.`"
                            ),
                        )
                    };
                    return Err(ParseError {
                        code,
                        ..self.error_at(t.offset, message, hint)
                    });
                }
                Ok(json!({"var": f}))
            }
            Tok::Str(s) => Ok(Value::String(s)),
            Tok::Num(n) => Ok(Value::Number(n)),
            Tok::Kw(k) if k == "true" => Ok(Value::Bool(true)),
            Tok::Kw(k) if k == "false" => Ok(Value::Bool(false)),
            Tok::Kw(k) if k == "null" => Ok(Value::Null),
            Tok::LParen => {
                self.deeper(t.offset)?;
                let inner = self.or()?;
                match self.peek() {
                    Tok::RParen => {
                        self.next();
                        self.depth -= 1;
                        Ok(inner)
                    }
                    _ => Err(ParseError {
                        code: crate::diag::Code::InfixSyntax,
                        hint: Some(format!(
                            "the `(` at {}:{} is not closed",
                            line_col(self.text, t.offset).0,
                            line_col(self.text, t.offset).1
                        )),
                        ..self.unexpected("`)`")
                    }),
                }
            }
            Tok::LBracket => {
                self.deeper(t.offset)?;
                let mut items = Vec::new();
                if matches!(self.peek(), Tok::RBracket) {
                    self.next();
                    self.depth -= 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.sum()?);
                    match self.peek() {
                        Tok::Comma => {
                            self.next();
                        }
                        Tok::RBracket => {
                            self.next();
                            self.depth -= 1;
                            return Ok(Value::Array(items));
                        }
                        // What stands there; at the end, the list is not closed.
                        end => {
                            let (line, column) = line_col(self.text, t.offset);
                            let hint = matches!(end, Tok::End)
                                .then(|| format!("the `[` at {line}:{column} is not closed"));
                            return Err(ParseError {
                                code: crate::diag::Code::InfixSyntax,
                                hint,
                                ..self.unexpected("`,` or `]`")
                            });
                        }
                    }
                }
            }
            other => {
                // At the end `next` stays put: point at the end, not at what came
                // before it.
                self.pos = if matches!(other, Tok::End) {
                    self.toks.len() - 1
                } else {
                    self.pos.saturating_sub(1)
                };
                Err(self.unexpected(
                    "a value (a field, a string, a number, true, false, null, [..] or (..))",
                ))
            }
        }
    }
}

/// `{op: [a, b]}`, built out of line (the parser's frames stay small: it recurses once
/// per level of nesting).
#[inline(never)]
fn binary(name: &str, a: Value, b: Value) -> Value {
    op(name, vec![a, b])
}

fn join(op: &str, mut items: Vec<Value>) -> Value {
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    json!({op: items})
}

/// Parses an infix expression into JSONLogic. `fields` (may be empty) enables
/// unknown-field errors with a did-you-mean.
pub fn parse(text: &str, fields: &Fields) -> Result<Value, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser {
        text,
        toks,
        pos: 0,
        fields,
        depth: 0,
    };
    let value = p.or()?;
    match p.peek() {
        Tok::End => Ok(value),
        Tok::RParen => Err(ParseError {
            code: crate::diag::Code::InfixSyntax,
            hint: Some("this `)` has no `(`".into()),
            ..p.unexpected("the end")
        }),
        _ => Err(p.unexpected("AND, OR or the end")),
    }
}

/// Why a JSONLogic value has no infix form.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no infix form: {0}")]
pub struct NoInfix(pub String);

/// Prints JSONLogic as infix, when it fits the grammar.
pub fn print(logic: &Value) -> Result<String, NoInfix> {
    print_prec(logic, 0)
}

// Precedence: or 1, and 2, not 3, compare 4, sum 5, product 6, negation 7, value 8.
fn print_prec(v: &Value, outer: u8) -> Result<String, NoInfix> {
    let wrap = |s: String, prec: u8| if prec < outer { format!("({s})") } else { s };
    match v {
        Value::Null => Ok("null".into()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) => Ok(quote(s)),
        Value::Array(items) => {
            let inner: Result<Vec<String>, NoInfix> =
                items.iter().map(|i| print_prec(i, 5)).collect();
            Ok(format!("[{}]", inner?.join(", ")))
        }
        Value::Object(map) if map.len() == 1 => {
            let (op, args) = map.iter().next().expect("one entry");
            let args: Vec<&Value> = match args {
                Value::Array(a) => a.iter().collect(),
                other => vec![other],
            };
            match (op.as_str(), args.as_slice()) {
                ("var", [Value::String(path)]) if is_field(path) => Ok(path.clone()),
                ("or" | "and", items) if items.len() >= 2 => {
                    let prec = if op == "or" { 1 } else { 2 };
                    let parts: Result<Vec<String>, NoInfix> =
                        items.iter().map(|i| print_prec(i, prec + 1)).collect();
                    Ok(wrap(
                        parts?.join(if op == "or" { " OR " } else { " AND " }),
                        prec,
                    ))
                }
                ("!", [inner]) => match inner {
                    Value::Object(m) if m.len() == 1 && m.contains_key("in") => {
                        let (a, b) = pair(&m["in"])?;
                        Ok(wrap(in_form(a, b, true)?, 4))
                    }
                    _ => Ok(wrap(format!("NOT {}", print_prec(inner, 3)?), 3)),
                },
                ("in", [a, b]) => Ok(wrap(in_form(a, b, false)?, 4)),
                ("==" | "!=" | "===" | "!==" | "<" | "<=" | ">" | ">=", [a, b]) => Ok(wrap(
                    format!("{} {op} {}", print_prec(a, 5)?, print_prec(b, 5)?),
                    4,
                )),
                ("+", items) if items.len() >= 2 => {
                    // A `+` first stays apart: `(a + b) + c` (a run is one `+`).
                    let first = if is_op(items[0], "+") { 6 } else { 5 };
                    let mut parts = vec![print_prec(items[0], first)?];
                    for i in &items[1..] {
                        parts.push(print_prec(i, 6)?);
                    }
                    Ok(wrap(parts.join(" + "), 5))
                }
                ("-", [a, b]) => Ok(wrap(
                    format!("{} - {}", print_prec(a, 5)?, print_prec(b, 6)?),
                    5,
                )),
                ("*", items) if items.len() >= 2 => {
                    let first = if is_op(items[0], "*") { 7 } else { 6 };
                    let mut parts = vec![print_prec(items[0], first)?];
                    for i in &items[1..] {
                        parts.push(print_prec(i, 7)?);
                    }
                    Ok(wrap(parts.join(" * "), 6))
                }
                ("/" | "%", [a, b]) => Ok(wrap(
                    format!("{} {op} {}", print_prec(a, 6)?, print_prec(b, 7)?),
                    6,
                )),
                // A negated number literal keeps a space (`-5` is the number, `- 5` its
                // negation); parentheses would nest one level deeper than the logic does,
                // so the deepest logic that parses would not parse once printed.
                ("-", [a]) => Ok(wrap(
                    match a {
                        Value::Number(n) => format!("- {n}"),
                        _ => format!("-{}", print_prec(a, 7)?),
                    },
                    7,
                )),
                ("<" | "<=", [a, b, c]) => Ok(wrap(
                    format!(
                        "{} {op} {} {op} {}",
                        print_prec(a, 5)?,
                        print_prec(b, 5)?,
                        print_prec(c, 5)?
                    ),
                    4,
                )),
                _ => Err(NoInfix(format!(
                    "`{op}` with {} argument(s) is outside the infix grammar",
                    args.len()
                ))),
            }
        }
        Value::Object(_) => Err(NoInfix("an object literal has no infix form".into())),
    }
}

/// Whether `v` is `{op: …}`.
fn is_op(v: &Value, op: &str) -> bool {
    matches!(v, Value::Object(m) if m.len() == 1 && m.contains_key(op))
}

fn pair(v: &Value) -> Result<(&Value, &Value), NoInfix> {
    match v {
        Value::Array(a) if a.len() == 2 => Ok((&a[0], &a[1])),
        _ => Err(NoInfix("`in` takes two arguments".into())),
    }
}

/// `{"in": [a, b]}`: `field contains 'x'` when a literal sits in a field, else `a in b`.
fn in_form(a: &Value, b: &Value, negated: bool) -> Result<String, NoInfix> {
    let is_var = |v: &Value| v.get("var").is_some();
    let not = if negated { "not " } else { "" };
    if !is_var(a) && is_var(b) && !a.is_array() {
        Ok(format!(
            "{} {not}contains {}",
            print_prec(b, 5)?,
            print_prec(a, 5)?
        ))
    } else {
        Ok(format!(
            "{} {not}in {}",
            print_prec(a, 5)?,
            print_prec(b, 5)?
        ))
    }
}

/// Whether a `var` path prints as a bare field: it must lex back as one field token
/// (a letter, `_` or `$`, then letters, digits, `_`, `$`, `-` and `.`; no empty
/// segment, so `source.tags.0` is one and `source.a.` is not) and not be a keyword.
fn is_field(path: &str) -> bool {
    path.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && path
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '-' | '.'))
        && !path.split('.').any(str::is_empty)
        && !KEYWORDS.contains(&path.to_lowercase().as_str())
}

/// A string literal that reads back as exactly `s`: quotes, backslashes, line breaks
/// and tabs escaped as usual, and every character a terminal could act on or hide
/// (controls, bidi, zero-width: [`crate::text::is_unsafe`]) as `\u{..}`, so the
/// text is safe to print and copy and parses to the same string.
fn quote(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if crate::text::is_unsafe(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Reads a `\u` escape at the start of `chars` (its backslash first): `\u{1b}` (1 to 6
/// hex digits) or `\u001b` (4, with a surrogate pair read as one code point). Returns
/// the character and how many characters the escape took.
fn unicode_escape(chars: &[(usize, char)]) -> Result<(char, usize), String> {
    let hex = |from: usize, n: usize| -> Option<u32> {
        let digits: String = chars.get(from..from + n)?.iter().map(|(_, c)| *c).collect();
        if digits.chars().all(|c| c.is_ascii_hexdigit()) {
            u32::from_str_radix(&digits, 16).ok()
        } else {
            None
        }
    };
    if chars.get(2).map(|(_, c)| *c) == Some('{') {
        let close = chars
            .iter()
            .skip(3)
            .take(7)
            .position(|(_, c)| *c == '}')
            .ok_or("`\\u{` without a closing `}` within 6 hex digits")?;
        let code = (close > 0)
            .then(|| hex(3, close))
            .flatten()
            .ok_or("`\\u{..}` holds 1 to 6 hex digits")?;
        let c =
            char::from_u32(code).ok_or_else(|| format!("`\\u{{{code:x}}}` is not a character"))?;
        return Ok((c, 4 + close));
    }
    let unit = hex(2, 4).ok_or("`\\u` is followed by 4 hex digits or `{..}`")?;
    if (0xD800..0xDC00).contains(&unit) {
        // A high surrogate: its low half must follow as `\uXXXX`.
        let low = (chars.get(6).map(|(_, c)| *c) == Some('\\')
            && chars.get(7).map(|(_, c)| *c) == Some('u'))
        .then(|| hex(8, 4))
        .flatten()
        .filter(|l| (0xDC00..0xE000).contains(l))
        .ok_or_else(|| format!("`\\u{unit:04x}` is half a surrogate pair"))?;
        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        return Ok((char::from_u32(code).expect("a pair is a character"), 12));
    }
    let c =
        char::from_u32(unit).ok_or_else(|| format!("`\\u{unit:04x}` is half a surrogate pair"))?;
    Ok((c, 6))
}

/// The body of the fuzz target `fuzz/fuzz_targets/infix_parse.rs` (and of a unit test
/// over a small corpus, so that stable toolchains run it too): any bytes that are UTF-8
/// either fail to parse with an error that renders, or parse to logic that prints back
/// as infix and parses again to the same logic. Panics when that does not hold.
pub fn fuzz_roundtrip(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let logic = match parse(text, &Fields::default()) {
        Ok(logic) => logic,
        Err(e) => {
            let _ = e.render(text);
            return;
        }
    };
    let printed = print(&logic)
        .unwrap_or_else(|e| panic!("{text:?} parses to {logic} but does not print: {e}"));
    let again = parse(&printed, &Fields::default()).unwrap_or_else(|e| {
        panic!(
            "{text:?} parses to {logic}, prints as {printed:?}, which does not parse: {}",
            e.render(&printed)
        )
    });
    assert_eq!(again, logic, "{text:?} prints as {printed:?}");
}

/// The fields of a page, for hints.
pub fn fields_of(page: &super::model::Page) -> Fields {
    fields_of_schema(&super::validate::Schema::of(page))
}

/// The fields a schema knows (no row is read: for the editor's every keystroke).
pub fn fields_of_schema(schema: &super::validate::Schema) -> Fields {
    let sides = [("source", &schema.source), ("target", &schema.target)];
    Fields(
        sides
            .iter()
            .flat_map(|(side, d)| d.coverage.keys().map(move |f| format!("{side}.{f}")))
            .collect(),
    )
}

/// A map helper used by callers building logic by hand.
pub fn op(name: &str, args: Vec<Value>) -> Value {
    let mut m = Map::new();
    m.insert(name.to_owned(), Value::Array(args));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Value {
        parse(text, &Fields::default()).unwrap_or_else(|e| panic!("{}", e.render(text)))
    }

    #[test]
    fn the_issue_example() {
        let v = p(
            "target.supportsStreaming == true AND (source.maxLatencyMs <= 200 OR target.tier in ['pro', 'max'])",
        );
        assert_eq!(
            v,
            json!({"and": [
                {"==": [{"var": "target.supportsStreaming"}, true]},
                {"or": [{"<=": [{"var": "source.maxLatencyMs"}, 200]},
                        {"in": [{"var": "target.tier"}, ["pro", "max"]]}]}]})
        );
        assert_eq!(
            print(&v).unwrap(),
            "target.supportsStreaming == true AND (source.maxLatencyMs <= 200 OR target.tier in ['pro', 'max'])"
        );
    }

    #[test]
    fn keywords_any_case_contains_not_and_between() {
        assert_eq!(
            p("source.country == target.country and not target.x"),
            json!({"and": [
            {"==": [{"var": "source.country"}, {"var": "target.country"}]}, {"!": [{"var": "target.x"}]}]})
        );
        assert_eq!(
            p("target.tags CONTAINS 'gpu'"),
            json!({"in": ["gpu", {"var": "target.tags"}]})
        );
        assert_eq!(
            p("target.tags not contains 'gpu'"),
            json!({"!": [{"in": ["gpu", {"var": "target.tags"}]}]})
        );
        assert_eq!(
            p("source.age not in [1, 2]"),
            json!({"!": [{"in": [{"var": "source.age"}, [1, 2]]}]})
        );
        assert_eq!(
            p("18 <= source.age <= 65"),
            json!({"<=": [18, {"var": "source.age"}, 65]})
        );
        assert_eq!(
            p("source.x == null OR source.y != -1.5e3"),
            json!({"or": [
            {"==": [{"var": "source.x"}, null]}, {"!=": [{"var": "source.y"}, -1.5e3]}]})
        );
        for text in [
            "target.tags contains 'gpu'",
            "target.tags not contains 'gpu'",
            "18 <= source.age <= 65",
            "NOT (source.a OR source.b)",
            "source.a AND source.b OR source.c",
        ] {
            assert_eq!(print(&p(text)).unwrap(), text);
        }
    }

    /// `[1, 2` ends where the list should close: the error points at the end, not at
    /// the last item; `=>` and `=<` hint at `>=` and `<=`.
    #[test]
    fn an_open_list_and_backwards_comparisons_are_named() {
        let e = parse("source.a == [1, 2", &Fields::default()).unwrap_err();
        assert_eq!((e.line, e.column), (1, 18), "{e:?}");
        assert!(e.message.contains("found the end"), "{}", e.message);
        assert_eq!(e.hint.as_deref(), Some("the `[` at 1:13 is not closed"));
        let e = parse("source.a in [1, 2 3]", &Fields::default()).unwrap_err();
        assert!(e.message.contains("found `3`"), "{}", e.message);
        assert_eq!(e.hint, None);
        for (text, meant) in [
            ("source.a => 1", ">="),
            ("source.a =< 1", "<="),
            ("source.a = 1", "=="),
        ] {
            let e = parse(text, &Fields::default()).unwrap_err();
            assert_eq!(e.hint, Some(format!("did you mean `{meant}`?")), "{text}");
        }
    }

    #[test]
    fn errors_say_where_with_a_caret_and_hints() {
        let e = parse("source.age = 18", &Fields::default()).unwrap_err();
        assert_eq!(
            (e.line, e.column, e.hint.as_deref()),
            (1, 12, Some("did you mean `==`?"))
        );
        assert_eq!(
            e.render("source.age = 18"),
            "`=` is not a comparison at 1:12\n  source.age = 18\n             ^\n  hint: did you mean `==`?"
        );
        let e = parse("(source.a == 1\n AND source.b == 2", &Fields::default()).unwrap_err();
        assert_eq!((e.line, e.column), (2, 19)); // the end of the text
        assert_eq!(e.hint.as_deref(), Some("the `(` at 1:1 is not closed"));
        let e = parse("source.name == 'bob", &Fields::default()).unwrap_err();
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 16, "unclosed string")
        );
        let fields = Fields(vec!["source.age".into(), "target.country".into()]);
        let e = parse("source.aeg >= 18", &fields).unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("did you mean `source.age`?"));
        let e = parse("age >= 18", &fields).unwrap_err();
        assert!(e.message.contains("fields start with"), "{e}");
        assert!(
            parse("source.a ==", &Fields::default())
                .unwrap_err()
                .message
                .starts_with("expected a value")
        );
    }

    #[test]
    fn fuzz_corpus_round_trips_and_deep_nesting_is_an_error() {
        let corpus: &[&str] = &[
            "",
            "source.a",
            "source.a.",
            "a..b",
            "source.x == 1e5",
            "source.x == -0",
            "source.x == 0.1 AND target.y != -1.5e-7",
            "source.x < target.y < 3",
            "(source.x < 1) < 2",
            "NOT NOT (source.a in [1, [2, 'x'], (source.b == 1)])",
            "'a' contains 'b' OR 'x' not contains source.y",
            "'it''s' == \"q\\\"uote\" AND source.s == 'tab\there\r'",
            "source.a-b == true and SOURCE.c",
            "[(source.a == 1)] == []",
            "(((((source.a)))))",
            "null == NULL AND TRUE",
            "source.and == source.or",
            "1 == 1 == 1",
            "source.x ==",
            "é == 'ü'",
            "$x.y_z == _a",
            "[",
            ")",
            "\u{0}",
        ];
        for text in corpus {
            fuzz_roundtrip(text.as_bytes());
        }
        fuzz_roundtrip(&[0xff, 0xfe]);
        let deep = format!("{}source.a{}", "(".repeat(5000), ")".repeat(5000));
        let e = parse(&deep, &Fields::default()).unwrap_err();
        assert!(e.message.contains("nests deeper than 100"), "{e}");
        assert_eq!((e.line, e.column), (1, 101));
        let nots = format!("{}source.a", "NOT ".repeat(5000));
        assert!(parse(&nots, &Fields::default()).is_err());
        let brackets = format!("source.a in {}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(parse(&brackets, &Fields::default()).is_err());
        let ok = format!("{}source.a{}", "(".repeat(100), ")".repeat(100));
        fuzz_roundtrip(ok.as_bytes());
        // Found by fuzzing: 100 negations of the literal `-0` parse, and once printed
        // (the innermost as `-(-0.0)`) nested one level too deep to parse again.
        let negations = format!("1*{}0", "-".repeat(101));
        fuzz_roundtrip(negations.as_bytes());
        fuzz_roundtrip(format!("{}5", "-".repeat(101)).as_bytes());
        fuzz_roundtrip(format!("{}(5)", "-".repeat(99)).as_bytes());
        assert_eq!(print(&json!({"-": [5]})).unwrap(), "- 5");
        assert_eq!(print(&json!({"-": [{"-": [-0.0]}]})).unwrap(), "-- -0.0");
    }

    #[test]
    fn arithmetic_with_precedence_and_round_trips() {
        let f = Fields::default();
        let cases: &[(&str, Value)] = &[
            (
                "target.a + 1 > 2",
                json!({">": [{"+": [{"var": "target.a"}, 1]}, 2]}),
            ),
            ("0 - target.cost", json!({"-": [0, {"var": "target.cost"}]})),
            (
                "target.a + target.b * 2 - 1",
                json!({"-": [{"+": [{"var": "target.a"}, {"*": [{"var": "target.b"}, 2]}]}, 1]}),
            ),
            ("1 + 2 + 3", json!({"+": [1, 2, 3]})),
            ("(1 + 2) + 3", json!({"+": [{"+": [1, 2]}, 3]})),
            ("1 - 2 - 3", json!({"-": [{"-": [1, 2]}, 3]})),
            ("1 - (2 - 3)", json!({"-": [1, {"-": [2, 3]}]})),
            (
                "2 * 3 * 4 / 5 % 6",
                json!({"%": [{"/": [{"*": [2, 3, 4]}, 5]}, 6]}),
            ),
            ("source.x -1", json!({"-": [{"var": "source.x"}, 1]})),
            (
                "-1 + -source.x",
                json!({"+": [-1, {"-": [{"var": "source.x"}]}]}),
            ),
            ("-(5)", json!({"-": [5]})),
            (
                "target.gpt-4 == 1",
                json!({"==": [{"var": "target.gpt-4"}, 1]}),
            ),
            (
                "target.a * 1000000 <= source.b",
                json!({"<=": [{"*": [{"var": "target.a"}, 1000000]}, {"var": "source.b"}]}),
            ),
            (
                "source.a in [1 + 1, 3]",
                json!({"in": [{"var": "source.a"}, [{"+": [1, 1]}, 3]]}),
            ),
        ];
        for (text, want) in cases {
            let got = parse(text, &f).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(&got, want, "{text}");
            let printed = print(&got).unwrap();
            assert_eq!(
                &parse(&printed, &f).unwrap(),
                want,
                "{text} printed as {printed}"
            );
        }
        // Printed forms read as people write them.
        assert_eq!(print(&json!({"+": [1, 2, 3]})).unwrap(), "1 + 2 + 3");
        assert_eq!(
            print(&json!({"-": [1, {"-": [2, 3]}]})).unwrap(),
            "1 - (2 - 3)"
        );
        assert_eq!(
            print(&json!({"*": [{"+": [1, 2]}, 3]})).unwrap(),
            "(1 + 2) * 3"
        );
        assert!(
            print(&json!({"+": ["5"]})).is_err(),
            "unary plus has no infix form"
        );
        // An operator with nothing after it is a located error.
        let e = parse("target.a +", &f).unwrap_err();
        assert_eq!((e.line, e.column), (1, 11), "{e}");
    }

    #[test]
    fn logic_outside_the_grammar_has_no_infix_form() {
        assert!(print(&json!({"map": [[1], {"var": ""}]})).is_err());
        assert!(print(&json!({"var": ["source.x", 1]})).is_err());
        assert!(print(&json!({"a": 1, "b": 2})).is_err());
    }
}

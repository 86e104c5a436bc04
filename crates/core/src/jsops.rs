//! JSONLogic operators with json-logic-js semantics (the reference implementation a web
//! stack runs), where datalogic-rs differs: comparisons and the between forms coerce as
//! JavaScript does instead of failing on arrays, booleans or objects; arithmetic goes
//! through `parseFloat` / `Number` (null + 1 is NaN for `+`, 1 for `-`); `min` / `max`
//! coerce; `cat` joins as `Array.prototype.join` (null is empty, an array is `1,2`);
//! `missing` counts null and `""` as missing; `!` / `!!` treat every object as truthy;
//! `in`, `substr`, `merge` and `===` follow the JavaScript functions. Values that
//! JavaScript would make NaN or ±Infinity stay NaN or infinite inside a rule (so
//! `{"<": [NaN, 1]}` is false, as there); a rule whose result is one is an error.

use datalogic_rs::bumpalo::Bump;
use datalogic_rs::operator::EvalContext;
use datalogic_rs::{ArenaExt, CustomOperator, DataValue};

/// The operators this module provides, by the name a rule uses and the name the engine
/// registers.
pub const OPERATORS: &[(&str, &str)] = &[
    ("<", "rulebench:<"),
    ("<=", "rulebench:<="),
    (">", "rulebench:>"),
    (">=", "rulebench:>="),
    ("+", "rulebench:+"),
    ("-", "rulebench:-"),
    ("*", "rulebench:*"),
    ("/", "rulebench:/"),
    ("%", "rulebench:%"),
    ("min", "rulebench:min"),
    ("max", "rulebench:max"),
    ("cat", "rulebench:cat"),
    ("substr", "rulebench:substr"),
    ("in", "rulebench:in"),
    ("merge", "rulebench:merge"),
    ("missing", "rulebench:missing"),
    ("missing_some", "rulebench:missing_some"),
    ("!", "rulebench:!"),
    ("!!", "rulebench:!!"),
    ("===", "rulebench:==="),
    ("!==", "rulebench:!=="),
];

/// The engine's name for a rule's operator, when this module replaces it.
pub fn engine_name(op: &str) -> Option<&'static str> {
    OPERATORS.iter().find(|(o, _)| *o == op).map(|(_, e)| *e)
}

/// The operator named `engine` (one of [`OPERATORS`]).
pub fn operator(engine: &str) -> Box<dyn CustomOperator> {
    Box::new(Js(OPERATORS
        .iter()
        .find(|(_, e)| *e == engine)
        .map(|(o, _)| *o)
        .expect("a known operator")))
}

struct Js(&'static str);

type V<'a> = DataValue<'a>;

/// JSONLogic's truthiness as json-logic-js has it: `[]` is falsy, every object truthy.
pub fn truthy(v: &V<'_>) -> bool {
    match v {
        V::Null => false,
        V::Bool(b) => *b,
        V::Number(n) => {
            let f = n.as_f64();
            f != 0.0 && !f.is_nan()
        }
        V::String(s) => !s.is_empty(),
        V::Array(items) => !items.is_empty(),
        _ => true,
    }
}

/// JavaScript's `Number` (ToNumber) of a JSON value.
pub fn to_number(v: &V<'_>) -> f64 {
    match v {
        V::Null => 0.0,
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Number(n) => n.as_f64(),
        V::String(s) => string_to_number(s),
        V::Array(_) => string_to_number(&to_string(v)),
        _ => f64::NAN,
    }
}

/// JavaScript's `Number(string)`: trimmed, empty is 0, a decimal (or hex, binary,
/// octal literal), else NaN.
fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if t.is_empty() {
        return 0.0;
    }
    match t {
        "Infinity" | "+Infinity" => return f64::INFINITY,
        "-Infinity" => return f64::NEG_INFINITY,
        _ => {}
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0b", 2),
        ("0B", 2),
        ("0o", 8),
        ("0O", 8),
    ] {
        if let Some(digits) = t.strip_prefix(prefix) {
            // `from_str_radix` takes a sign; JavaScript does not after the prefix.
            if digits.starts_with(['+', '-']) {
                return f64::NAN;
            }
            return u64::from_str_radix(digits, radix).map_or(f64::NAN, |n| n as f64);
        }
    }
    let decimal = t
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !decimal {
        return f64::NAN;
    }
    t.parse().unwrap_or(f64::NAN)
}

/// JavaScript's `parseFloat`: the longest decimal prefix of `String(v)` after leading
/// white space, else NaN.
pub fn parse_float(v: &V<'_>) -> f64 {
    let s = match v {
        V::Number(n) => return n.as_f64(),
        V::Null | V::Bool(_) | V::Object(_) => return f64::NAN,
        V::String(s) => std::borrow::Cow::Borrowed(*s),
        other => std::borrow::Cow::Owned(to_string(other)),
    };
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && matches!(b[i], b'+' | b'-') {
        i += 1;
    }
    if t[i..].starts_with("Infinity") {
        return if b.first() == Some(&b'-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut any = i > digits_start;
    if i < b.len() && b[i] == b'.' {
        let j = i + 1;
        let mut k = j;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > j || any {
            any = any || k > j;
            i = k;
        }
    }
    if !any {
        return f64::NAN;
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        let mut k = i + 1;
        if k < b.len() && matches!(b[k], b'+' | b'-') {
            k += 1;
        }
        let start = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > start {
            i = k;
        }
    }
    t[..i].parse().unwrap_or(f64::NAN)
}

/// JavaScript's `String(number)` for the numbers JSON data holds.
pub fn number_to_string(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if f == 0.0 {
        "0".into()
    } else if f.fract() == 0.0 && f.abs() < 1e21 {
        // The shortest digits that read back as `f`, padded with zeros (2^60 is
        // 1152921504606847000, not its exact 1152921504606846976): Rust's `Display`
        // writes them so, without an exponent.
        format!("{f}")
    } else {
        let s = format!("{f}");
        if f.abs() >= 1e21 || f.abs() < 1e-6 {
            // JavaScript writes these with an exponent (`1e+21`, `1e-7`).
            let e = format!("{f:e}");
            match e.split_once('e') {
                Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
                _ => e,
            }
        } else {
            s
        }
    }
}

/// JavaScript's `String(value)` (arrays join their items with commas, null and
/// undefined items are empty; objects are `[object Object]`).
pub fn to_string(v: &V<'_>) -> String {
    match v {
        V::Null => "null".into(),
        V::Bool(b) => b.to_string(),
        V::Number(n) => number_to_string(n.as_f64()),
        V::String(s) => (*s).to_owned(),
        V::Array(items) => items
            .iter()
            .map(|i| match i {
                V::Null => String::new(),
                other => to_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        _ => "[object Object]".into(),
    }
}

/// JavaScript's ToPrimitive with a number hint, for comparisons: arrays and objects
/// become their string.
fn primitive<'a>(v: &V<'a>) -> Prim<'a> {
    match v {
        V::Null => Prim::Num(0.0),
        V::Bool(b) => Prim::Num(f64::from(u8::from(*b))),
        V::Number(n) => Prim::Num(n.as_f64()),
        V::String(s) => Prim::Str(std::borrow::Cow::Borrowed(s)),
        other => Prim::Str(std::borrow::Cow::Owned(to_string(other))),
    }
}

enum Prim<'a> {
    Num(f64),
    Str(std::borrow::Cow<'a, str>),
}

/// JavaScript's `a < b` (with `or_equal`: `a <= b`).
pub fn less(a: &V<'_>, b: &V<'_>, or_equal: bool) -> bool {
    let ordered = |x: f64, y: f64| if or_equal { x <= y } else { x < y };
    // The common case first: two numbers.
    if let (V::Number(x), V::Number(y)) = (a, b) {
        return ordered(x.as_f64(), y.as_f64());
    }
    match (primitive(a), primitive(b)) {
        (Prim::Str(x), Prim::Str(y)) => {
            // UTF-16 code units, as JavaScript orders strings.
            let order = x.encode_utf16().cmp(y.encode_utf16());
            if or_equal {
                order.is_le()
            } else {
                order.is_lt()
            }
        }
        (x, y) => {
            let n = |p: Prim<'_>| match p {
                Prim::Num(f) => f,
                Prim::Str(s) => string_to_number(&s),
            };
            ordered(n(x), n(y))
        }
    }
}

/// JavaScript's `===` over JSON values: arrays and objects are never the same value.
pub fn strict_eq(a: &V<'_>, b: &V<'_>) -> bool {
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Number(x), V::Number(y)) => x.as_f64() == y.as_f64(),
        (V::String(x), V::String(y)) => x == y,
        _ => false,
    }
}

/// `var` as json-logic-js reads it: a dotted path (numbers as strings), null when
/// absent; the empty path is the data itself.
fn lookup<'a>(data: &'a V<'a>, key: &V<'_>) -> Option<&'a V<'a>> {
    let path = match key {
        V::Null => return Some(data),
        V::String("") => return Some(data),
        other => match other {
            V::String(s) => (*s).to_owned(),
            o => to_string(o),
        },
    };
    let mut cur = data;
    for seg in path.split('.') {
        cur = match cur {
            V::Object(pairs) => &pairs.iter().find(|(k, _)| *k == seg)?.1,
            V::Array(items) => items.get(seg.parse::<usize>().ok()?)?,
            V::String(_) if seg == "length" => return None,
            _ => return None,
        };
    }
    Some(cur)
}

/// The keys `missing` reports: those whose value is absent, null or `""`.
fn missing_keys<'a>(data: &V<'_>, keys: &[&'a V<'a>]) -> Vec<V<'a>> {
    keys.iter()
        .filter(|k| matches!(lookup(data, k), None | Some(V::Null) | Some(V::String(""))))
        .map(|k| **k)
        .collect()
}

/// JavaScript's `String.prototype.substr(start, length)` over characters.
fn substr(s: &str, start: f64, length: Option<f64>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let len = chars.len() as f64;
    let int = |f: f64| if f.is_nan() { 0.0 } else { f.trunc() };
    let mut start = int(start);
    if start < 0.0 {
        start = (len + start).max(0.0);
    }
    let start = start.min(len);
    let count = match length {
        None => len - start,
        Some(l) => int(l).max(0.0).min(len - start),
    };
    chars[start as usize..(start + count) as usize]
        .iter()
        .collect()
}

impl CustomOperator for Js {
    fn evaluate<'a>(
        &self,
        args: &[&'a DataValue<'a>],
        ctx: &mut EvalContext<'_, 'a>,
        arena: &'a Bump,
    ) -> datalogic_rs::Result<&'a DataValue<'a>> {
        static NULL: DataValue<'static> = DataValue::Null;
        let arg = |i: usize| -> &DataValue<'_> { args.get(i).copied().unwrap_or(&NULL) };
        let num = |f: f64| -> &'a DataValue<'a> { arena.alloc(DataValue::from_f64(f)) };
        // A missing argument is JavaScript's `undefined`: NaN as a number, so a
        // comparison with one is false.
        if matches!(self.0, "<" | "<=" | ">" | ">=") && args.len() < 2 {
            return Ok(arena.bool(false));
        }
        if matches!(self.0, "-" | "/" | "%") && args.len() < 2 - usize::from(self.0 == "-") {
            return Ok(arena.alloc(DataValue::from_f64(f64::NAN)));
        }
        Ok(match self.0 {
            "<" | "<=" => {
                let eq = self.0 == "<=";
                if args.len() >= 3 {
                    arena.bool(less(arg(0), arg(1), eq) && less(arg(1), arg(2), eq))
                } else {
                    arena.bool(less(arg(0), arg(1), eq))
                }
            }
            ">" => arena.bool(less(arg(1), arg(0), false)),
            ">=" => arena.bool(less(arg(1), arg(0), true)),
            // parseFloat of a number is the number: the running sum needs no parsing.
            "+" => num(args.iter().fold(0.0, |acc, v| acc + parse_float(v))),
            "*" => match args.split_first() {
                None => {
                    return Err(datalogic_rs::Error::invalid_arguments(
                        "* needs at least one argument",
                    ));
                }
                Some((first, [])) => first,
                Some((first, rest)) => num(rest
                    .iter()
                    .fold(parse_float(first), |acc, v| acc * parse_float(v))),
            },
            "-" => {
                if args.len() < 2 {
                    num(-to_number(arg(0)))
                } else {
                    num(to_number(arg(0)) - to_number(arg(1)))
                }
            }
            "/" => num(to_number(arg(0)) / to_number(arg(1))),
            "%" => num(to_number(arg(0)) % to_number(arg(1))),
            "min" | "max" => {
                let max = self.0 == "max";
                let mut acc = if max {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
                for v in args {
                    let n = to_number(v);
                    if n.is_nan() {
                        acc = f64::NAN;
                        break;
                    }
                    acc = if max { acc.max(n) } else { acc.min(n) };
                }
                num(acc)
            }
            "cat" => {
                let text: String = args
                    .iter()
                    .map(|v| match v {
                        DataValue::Null => String::new(),
                        other => to_string(other),
                    })
                    .collect();
                arena.string(&text)
            }
            "substr" => {
                let s = to_string(arg(0));
                let start = to_number(arg(1));
                let out = match args.get(2).map(|v| to_number(v)) {
                    Some(end) if end < 0.0 => {
                        let temp = substr(&s, start, None);
                        let n = temp.chars().count() as f64;
                        substr(&temp, 0.0, Some(n + end))
                    }
                    Some(end) => substr(&s, start, Some(end)),
                    None => substr(&s, start, None),
                };
                arena.string(&out)
            }
            "in" => {
                let (a, b) = (arg(0), arg(1));
                arena.bool(match b {
                    DataValue::String(s) if !s.is_empty() => s.contains(&to_string(a)),
                    DataValue::Array(items) => items.iter().any(|i| strict_eq(i, a)),
                    _ => false,
                })
            }
            "merge" => {
                let mut out: Vec<DataValue<'a>> = Vec::new();
                for v in args {
                    match v {
                        DataValue::Array(items) => out.extend(items.iter().copied()),
                        other => out.push(**other),
                    }
                }
                arena.array(&out)
            }
            "missing" => {
                let keys: Vec<&'a DataValue<'a>> = match args.first() {
                    Some(DataValue::Array(items)) => items.iter().collect(),
                    _ => args.to_vec(),
                };
                arena.array(&missing_keys(ctx.root_input(), &keys))
            }
            "missing_some" => {
                let need = to_number(arg(0));
                let options: Vec<&'a DataValue<'a>> = match args.get(1) {
                    Some(DataValue::Array(items)) => items.iter().collect(),
                    _ => vec![],
                };
                let missing = missing_keys(ctx.root_input(), &options);
                if (options.len() - missing.len()) as f64 >= need {
                    arena.array(&[])
                } else {
                    arena.array(&missing)
                }
            }
            "!" => arena.bool(!truthy(arg(0))),
            "!!" => arena.bool(truthy(arg(0))),
            "===" => arena.bool(strict_eq(arg(0), arg(1))),
            "!==" => arena.bool(!strict_eq(arg(0), arg(1))),
            other => unreachable!("not an operator of this module: {other}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_strings_convert_as_javascript_does() {
        fn s(x: &str) -> DataValue<'_> {
            DataValue::String(x)
        }
        assert_eq!(to_number(&s(" 3 ")), 3.0);
        assert_eq!(to_number(&s("")), 0.0);
        assert!(to_number(&s("3abc")).is_nan());
        assert_eq!(parse_float(&s("3abc")), 3.0);
        assert!(parse_float(&s("")).is_nan());
        assert!(parse_float(&DataValue::Null).is_nan());
        assert_eq!(parse_float(&s(" -2.5e1x")), -25.0);
        assert_eq!(number_to_string(2.5), "2.5");
        assert_eq!(number_to_string(100.0), "100");
        assert_eq!(number_to_string(1e21), "1e+21");
        // Past 2^53, JavaScript's shortest digits, not the exact integer.
        assert_eq!(number_to_string(2f64.powi(60)), "1152921504606847000");
        assert_eq!(number_to_string(-1e20), "-100000000000000000000");
        assert_eq!(number_to_string(9007199254740993.0), "9007199254740992");
        assert!(less(&DataValue::Bool(true), &DataValue::from_i64(2), false));
        assert!(!less(&s("abc"), &DataValue::from_i64(2), false));
        assert!(less(&s("10"), &s("9"), false), "strings compare as strings");
        assert_eq!(substr("openai", -2.0, None), "ai");
        assert_eq!(substr("openai", 1.0, Some(3.0)), "pen");
    }
}

//! Policy values by name, as people type them: the one parser of the command line
//! (`policy set PAGE fullThreshold=85%`) and the workbench (a typed value in the
//! Policy pane). Thresholds take a number from 0 to 1 or a percentage; modes take their
//! name in any case, with `-` or spaces for `_` (`any-required-fail-caps-at-partial`).

use serde_json::Value;

use rulebench_core::diag::did_you_mean;
use rulebench_core::model::{
    AggregateMode, DevicePolicy, ElseMode, RecommendationStrategy, RequiredMode, SelectionPolicy,
};

pub use rulebench_core::model::PolicyField;

/// The names of the policy values, in the order the workbench shows them.
pub fn names() -> Vec<&'static str> {
    PolicyField::ALL.iter().map(|f| f.name()).collect()
}

/// Parses a threshold: a number from 0 to 1, or a percentage (`85%`).
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), 100.0),
        None => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v / scale),
        _ if t.is_empty() => Err("no value typed".into()),
        _ => Err(format!(
            "`{}` is not a number (type e.g. 0.85 or 85%)",
            rulebench_core::text::sanitize(t)
        )),
    }
}

/// The names of a mode's values, as the page file writes them (listed from the enum).
fn names_of<T: strum::VariantArray + Copy + Into<&'static str>>() -> Vec<&'static str> {
    T::VARIANTS.iter().map(|v| (*v).into()).collect()
}

/// The values a policy field takes, for help texts: its modes' names, or `None` for a
/// threshold (a number).
pub fn mode_names(field: PolicyField) -> Option<Vec<&'static str>> {
    match field {
        PolicyField::RequiredMode => Some(names_of::<RequiredMode>()),
        PolicyField::AggregateMode => Some(names_of::<AggregateMode>()),
        PolicyField::ElseMode => Some(names_of::<ElseMode>()),
        PolicyField::Strategy => Some(names_of::<RecommendationStrategy>()),
        PolicyField::FullThreshold | PolicyField::PartialThreshold => None,
    }
}

/// A mode typed by a person: its name in any case, `-` or spaces for `_`.
fn mode<T>(text: &str) -> Result<T, String>
where
    T: strum::VariantArray + Copy + Into<&'static str> + std::str::FromStr,
{
    text.trim()
        .replace(['-', ' '], "_")
        .parse::<T>()
        .map_err(|_| crate::text::one_of(&names_of::<T>()))
}

/// Sets one policy value by name (`fullThreshold`, or with its object as in
/// `devicePolicy.fullThreshold`) from typed text. Ranges and the order of the
/// thresholds are checked afterwards, with the whole policy
/// (`core::validate::validate_device_policy`).
pub fn set(
    device: &mut DevicePolicy,
    selection: &mut SelectionPolicy,
    name: &str,
    text: &str,
) -> Result<(), String> {
    let name = name.trim();
    let short = name.rsplit('.').next().unwrap_or(name);
    let bad = |expected: &str| {
        format!(
            "policy {short}: `{}` is not {expected}",
            rulebench_core::text::sanitize(text.trim())
        )
    };
    let Ok(field) = short.parse::<PolicyField>() else {
        let names = names();
        let hint = did_you_mean(short, names.iter().copied())
            .map(|s| format!(" (hint: did you mean `{s}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "unknown policy `{}`{hint}; names: {}",
            rulebench_core::text::sanitize(name),
            names.join(", ")
        ));
    };
    match field {
        PolicyField::FullThreshold => {
            device.full_threshold = parse_threshold(text).map_err(|e| format!("{short}: {e}"))?
        }
        PolicyField::PartialThreshold => {
            device.partial_threshold = parse_threshold(text).map_err(|e| format!("{short}: {e}"))?
        }
        PolicyField::RequiredMode => device.required_mode = mode(text).map_err(|e| bad(&e))?,
        PolicyField::AggregateMode => selection.aggregate.mode = mode(text).map_err(|e| bad(&e))?,
        PolicyField::ElseMode => selection.aggregate.else_mode = mode(text).map_err(|e| bad(&e))?,
        PolicyField::Strategy => {
            selection.recommendation.strategy = mode(text).map_err(|e| bad(&e))?
        }
    }
    Ok(())
}

/// The values that differ between two pairs of policies.
pub fn changed(
    a: (&DevicePolicy, &SelectionPolicy),
    b: (&DevicePolicy, &SelectionPolicy),
) -> Vec<PolicyField> {
    PolicyField::ALL
        .iter()
        .copied()
        .filter(|f| field_value(*f, a) != field_value(*f, b))
        .collect()
}

/// Copies one value from one pair of policies to another.
pub fn copy(
    field: PolicyField,
    from: (&DevicePolicy, &SelectionPolicy),
    to: (&mut DevicePolicy, &mut SelectionPolicy),
) {
    let (d, s) = from;
    let (td, ts) = to;
    match field {
        PolicyField::RequiredMode => td.required_mode = d.required_mode,
        PolicyField::FullThreshold => td.full_threshold = d.full_threshold,
        PolicyField::PartialThreshold => td.partial_threshold = d.partial_threshold,
        PolicyField::AggregateMode => ts.aggregate.mode = s.aggregate.mode,
        PolicyField::ElseMode => ts.aggregate.else_mode = s.aggregate.else_mode,
        PolicyField::Strategy => ts.recommendation.strategy = s.recommendation.strategy,
    }
}

/// Values, as one JSON object by name (`{"fullThreshold": 0.9}`).
pub fn values(fields: &[PolicyField], policies: (&DevicePolicy, &SelectionPolicy)) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|f| (f.name().to_owned(), field_value(*f, policies)))
            .collect(),
    )
}

/// A policy value, as JSON.
pub fn field_value(field: PolicyField, (d, s): (&DevicePolicy, &SelectionPolicy)) -> Value {
    let v = match field {
        PolicyField::RequiredMode => serde_json::to_value(d.required_mode),
        PolicyField::FullThreshold => serde_json::to_value(d.full_threshold),
        PolicyField::PartialThreshold => serde_json::to_value(d.partial_threshold),
        PolicyField::AggregateMode => serde_json::to_value(s.aggregate.mode),
        PolicyField::ElseMode => serde_json::to_value(s.aggregate.else_mode),
        PolicyField::Strategy => serde_json::to_value(s.recommendation.strategy),
    };
    v.unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_modes_parse_as_typed() {
        let (mut d, mut s) = (DevicePolicy::default(), SelectionPolicy::default());
        set(&mut d, &mut s, "fullThreshold", "85%").unwrap();
        assert_eq!(d.full_threshold, 0.85);
        set(&mut d, &mut s, "devicePolicy.partialThreshold", " 0.3 ").unwrap();
        assert_eq!(d.partial_threshold, 0.3);
        set(
            &mut d,
            &mut s,
            "requiredMode",
            "any-required-fail-caps-at-partial",
        )
        .unwrap();
        assert_eq!(d.required_mode, RequiredMode::AnyRequiredFailCapsAtPartial);
        set(&mut d, &mut s, "elseMode", "none").unwrap();
        assert_eq!(s.aggregate.else_mode, ElseMode::None);
        assert!(set(&mut d, &mut s, "fullThreshold", "abc").is_err());
        assert!(set(&mut d, &mut s, "mode", "SOMETIMES").is_err());
        let e = set(&mut d, &mut s, "fullTreshold", "1").unwrap_err();
        assert!(e.contains("did you mean `fullThreshold`"), "{e}");
    }
}

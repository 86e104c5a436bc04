//! The small form for a rule's name, required flag, weight, category and `appliesWhen`
//! condition (a dialog).

use crate::app::types::Rule;

/// The small form for a rule's name, required flag, weight and category.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub rule: usize,
    pub name: String,
    pub required: bool,
    pub weight: String,
    pub category: String,
    /// Where the rule applies, as infix text (or JSONLogic); empty: everywhere.
    pub applies_when: String,
    /// 0 name, 1 required, 2 weight, 3 category, 4 applies when.
    pub field: usize,
    pub error: Option<String>,
}

/// How many fields the form has.
pub const FIELDS: usize = 5;

impl Form {
    /// The form for rule `i`, its condition shown as `condition` (the text the
    /// workspace gives it).
    pub fn of(i: usize, r: &Rule, condition: String) -> Form {
        Form {
            applies_when: condition,
            rule: i,
            name: r.name.clone(),
            required: r.required,
            weight: r.weight.to_string(),
            category: r.category.clone(),
            field: 0,
            error: None,
        }
    }
}

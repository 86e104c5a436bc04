//! The small form for a rule's name, required flag, weight and category (a dialog).

use crate::app::types::Rule;

/// The small form for a rule's name, required flag, weight and category.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub rule: usize,
    pub name: String,
    pub required: bool,
    pub weight: String,
    pub category: String,
    /// 0 name, 1 required, 2 weight, 3 category.
    pub field: usize,
    pub error: Option<String>,
}

impl Form {
    pub fn of(i: usize, r: &Rule) -> Form {
        Form {
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

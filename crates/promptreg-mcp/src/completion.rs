//! `completion/complete`: the values an argument may take (its schema's
//! `enum` or `const`, `true` and `false` for a boolean) or the examples
//! it declares, those that start with what the client typed.

use promptreg::Variable;
use rmcp::ErrorData;
use rmcp::model::{CompleteResult, CompletionInfo};
use serde_json::Value;

use crate::arguments::Declared;

/// The completions of `typed` for `variable` (`None`: an argument the
/// prompt does not declare, which has none).
pub(crate) fn complete(
    variable: Option<&Variable>,
    typed: &str,
) -> Result<CompleteResult, ErrorData> {
    let candidates: Vec<String> = variable.map(candidates).unwrap_or_default();
    let typed = typed.to_lowercase();
    let mut matching: Vec<String> = candidates
        .into_iter()
        .filter(|value| value.to_lowercase().starts_with(&typed))
        .collect();
    let total = matching.len();
    matching.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > matching.len();
    let info = CompletionInfo::with_pagination(matching, u32::try_from(total).ok(), has_more)
        .map_err(|why| ErrorData::internal_error(why, None))?;
    Ok(CompleteResult::new(info))
}

/// The values `variable` may take, or its examples, as a client sends
/// them: a string as it is, anything else as JSON; each once.
fn candidates(variable: &Variable) -> Vec<String> {
    let declared = Declared(variable);
    let values: Vec<Value> = match declared.choices() {
        Some(choices) => choices.into_iter().cloned().collect(),
        None if declared.shape() == Some("boolean") => vec![Value::Bool(true), Value::Bool(false)],
        None => declared.examples().into_iter().cloned().collect(),
    };
    let mut seen = Vec::with_capacity(values.len());
    for value in values {
        let text = match value {
            Value::String(text) => text,
            other => other.to_string(),
        };
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    seen
}

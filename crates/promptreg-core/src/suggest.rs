//! "Did you mean ...?": the nearest known name to a misspelt one.

/// The candidate closest to `name`, when one is close enough to be a likely
/// typo (Jaro-Winkler similarity of at least 0.8).
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// `did you mean `x`?`, when a candidate is close to `name`.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    nearest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// "Did you mean" for serde's own messages, `unknown field `x`, expected
/// one of `a`, `b`` and `unknown variant `x`, …`, which parsers that give
/// no structured error (TOML, some YAML) pass on as text. A number type
/// under another language's name (`integer`, `float`) gets `number`.
pub fn for_serde_message(message: &str) -> Option<String> {
    let rest = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?
        .1;
    let (name, rest) = rest.split_once('`')?;
    // `expected one of `a`, `b``, `expected `a` or `b``, or without the
    // backticks (serde-saphyr).
    let listed = rest.split_once("expected ")?.1;
    let listed = listed.strip_prefix("one of ").unwrap_or(listed);
    let expected: Vec<&str> = listed
        .split(',')
        .flat_map(|part| part.split(" or "))
        .map(|name| name.trim().trim_matches('`'))
        .filter(|name| !name.is_empty())
        .collect();
    let numeric = ["integer", "int", "float", "double", "decimal"];
    if expected.contains(&"number") && numeric.contains(&name) {
        return Some("did you mean `number`? It covers integers and decimals".to_owned());
    }
    did_you_mean(name, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_serde_messages() {
        let field =
            "unknown field `defualt_locale`, expected one of `name`, `default_locale`, `user`";
        assert_eq!(
            for_serde_message(field).as_deref(),
            Some("did you mean `default_locale`?")
        );
        let variant = "unknown variant `integer`, expected one of `string`, `number`, `boolean`";
        assert!(
            for_serde_message(variant)
                .unwrap()
                .starts_with("did you mean `number`?")
        );
        let typo = "unknown variant `strng`, expected `string` or `number`";
        assert_eq!(
            for_serde_message(typo).as_deref(),
            Some("did you mean `string`?")
        );
        let bare = "unknown variant `integer`, expected one of string, number, boolean";
        assert!(
            for_serde_message(bare)
                .unwrap()
                .starts_with("did you mean `number`?")
        );
        assert_eq!(for_serde_message("missing field `name`"), None);
    }

    #[test]
    fn finds_a_typo() {
        let ids = ["planner.system", "task.system", "translate.system"];
        assert_eq!(nearest("planer.system", ids), Some("planner.system"));
        assert_eq!(
            nearest("goal-runing", ["goal-running", "auditor"]),
            Some("goal-running")
        );
    }

    #[test]
    fn stays_silent_when_nothing_is_close() {
        assert_eq!(nearest("zzz", ["planner.system", "task.system"]), None);
        assert_eq!(nearest("x", []), None);
    }
}

//! "Did you mean ...?": the nearest known name to a misspelt one.

/// The candidate closest to `name`, when one is close enough to be a likely
/// typo (Jaro-Winkler similarity of at least 0.8).
pub(crate) fn nearest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// `did you mean `x`?`, when a candidate is close to `name`.
pub(crate) fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    nearest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! Every settings file in `tests/inputs/settings/` is checked against the
//! goal agent's declaration; each gets one snapshot of its diagnostics.
//! Adding a case is adding a file.

mod support;

use promptreg::config::check;
use support::{SETTINGS, Sandbox};

#[test]
fn settings_diagnostics() {
    insta::glob!("inputs/settings/*.jsonc", |path| {
        let text = std::fs::read(path).unwrap();
        let sandbox = Sandbox::new();
        sandbox.cwd_file(SETTINGS, &text);
        let diagnostics = check(&support::goal_agent_spec(), &sandbox.options());
        let report: Vec<String> = diagnostics
            .iter()
            .map(|d| {
                let at = d
                    .position
                    .map_or(String::new(), |p| format!("{}:{} ", p.line, p.column));
                let key = d.key_path.as_deref().unwrap_or("-");
                format!(
                    "{at}{} {:?} [{key}]\n  {}",
                    d.severity,
                    d.code,
                    sandbox.redact(&d.to_string())
                )
            })
            .collect();
        let report = if report.is_empty() {
            "(no diagnostics)".to_owned()
        } else {
            report.join("\n")
        };
        insta::assert_snapshot!(report);
    });
}

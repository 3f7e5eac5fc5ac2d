//! Every settings file in `tests/inputs/settings/` is checked against the
//! goal agent's declaration; each gets one snapshot of its diagnostics.
//! Adding a case is adding a file.

#![cfg(feature = "config")]

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
        let report = support::report(&diagnostics, |text| sandbox.redact(text));
        insta::assert_snapshot!(report);
    });
}

//! `promptreg check`: every problem of the pack (its prompt tests
//! included) and of the user's configuration, at once.

use promptreg::Diagnostic;
use promptreg::config::check;
use promptreg::pack::Pack;
use promptreg::testing::PromptTests;
use serde_json::json;

use super::Output;
use crate::cli::CheckArgs;
use crate::options::Session;
use crate::report::{self, FINDINGS, Failure};

pub fn run(session: &Session, args: &CheckArgs) -> Result<Output, Failure> {
    let dir = session.pack_dir()?;
    crate::options::ensure_pack(&dir)?;
    let (pack, mut diagnostics) = Pack::load_with_diagnostics(&dir);
    if let Some(pack) = pack {
        diagnostics.extend(registry_problems(session, &pack)?);
        diagnostics.extend(PromptTests::load_with_diagnostics(&pack).1);
        diagnostics.extend(check(pack.spec(), &session.load_options(&pack)));
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.iter().filter(|d| d.is_warning()).count();
    let failed = errors > 0 || (args.deny_warnings && warnings > 0);
    let code = if failed { FINDINGS } else { 0 };
    if session.args.json {
        let items: Vec<_> = diagnostics.iter().map(report::diagnostic_json).collect();
        let mut output =
            Output::json(&json!({ "errors": errors, "warnings": warnings, "diagnostics": items }));
        output.code = code;
        return Ok(output);
    }
    let mut text = report::render(&diagnostics, session.color, report::Wrap::stdout());
    text.push_str(&summary(errors, warnings));
    Ok(Output {
        code,
        ..Output::text(text)
    })
}

/// The registry's own problems once the pack is installed (ids with locale
/// variants but no default, such as `tool-x.ja.md` for a `tool-*`
/// pattern), except for keys the pack reported already as declared
/// without a default file.
fn registry_problems(session: &Session, pack: &Pack) -> Result<Vec<Diagnostic>, Failure> {
    let problems = session.host_registry(pack)?.problems();
    Ok(problems
        .into_iter()
        .filter(|p| pack.missing_default(&p.id).is_none())
        .map(|p| p.diagnostic)
        .collect())
}

fn summary(errors: usize, warnings: usize) -> String {
    if errors + warnings == 0 {
        return "no problems found\n".to_owned();
    }
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}\n",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

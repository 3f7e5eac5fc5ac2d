//! `promptreg test [ID...]`: the pack's prompt tests, run with the user's
//! configuration, so a user can see that an override still satisfies what
//! the application expects.

use promptreg::testing::{CaseResult, PromptTests};
use serde_json::json;

use super::Output;
use crate::cli::TestArgs;
use crate::options::Session;
use crate::report::{FINDINGS, Failure};
use crate::style::Paint;

pub fn run(session: &Session, args: &TestArgs) -> Result<Output, Failure> {
    if session.args.server.is_some() {
        return Err(Failure::usage(
            "`test` runs the tests of a pack folder or a baked bundle (--bundle FILE), not of --server: `promptreg bundle export` makes one",
        ));
    }
    if args.update && session.args.bundle.is_some() {
        return Err(Failure::usage(
            "--update writes snapshots into a pack folder: run it on the folder, not on --bundle",
        ));
    }
    let (pack, tests) = match crate::server_client::baked(&session.args)? {
        Some(baked) => {
            let tests = PromptTests::from_files(baked.pack(), baked.files());
            (baked.pack().clone(), tests)
        }
        None => {
            // `test --update` writes into the pack; `test` alone checks the
            // whole pack; `test ID` only those prompts.
            let pack = match (args.update, args.ids.is_empty()) {
                (true, _) => session.pack_to_write()?,
                (false, true) => session.pack()?,
                (false, false) => session.pack_for(&args.ids)?,
            };
            let tests = PromptTests::load(&pack);
            (pack, tests)
        }
    };
    let tests =
        tests.map_err(|e| Failure::stopped(e, "the test files have errors: no case was run"))?;
    if let Some(unknown) = args.ids.iter().find(|id| pack.prompt(id).is_none()) {
        return Err(Failure::usage(format!(
            "the pack has no prompt `{unknown}` to test"
        )));
    }
    let tests = tests.only(&args.ids);
    let registry = session.registry(&pack)?;
    let results = match args.update {
        true => tests.run_updating(&registry)?,
        false => tests.run(&registry),
    };
    let failed = results.iter().filter(|r| !r.passed()).count();
    let code = if failed > 0 { FINDINGS } else { 0 };
    let root = pack.root().display().to_string();
    let relative = |path: &std::path::Path| {
        let shown = path.display().to_string();
        shown
            .strip_prefix(&root)
            .map(|rest| rest.trim_start_matches('/').to_owned())
            .unwrap_or(shown)
    };
    if session.args.json {
        let cases: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "prompt": r.prompt,
                    "case": r.case,
                    "file": relative(&r.file),
                    "locale": r.locale,
                    "passed": r.passed(),
                    "failures": r.failures,
                    "updated": r.updated.iter().map(|p| relative(p)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut output = Output::json(&json!({
            "passed": results.len() - failed,
            "failed": failed,
            "cases": cases,
        }));
        output.code = code;
        return Ok(output);
    }
    let paint = Paint {
        color: session.color,
    };
    let mut text: String = results
        .iter()
        .map(|r| case_report(r, paint, &relative))
        .collect();
    text.push_str(&summary(results.len() - failed, failed));
    Ok(Output {
        code,
        ..Output::text(text)
    })
}

/// One case: a line with its verdict, then each failure with its diff.
fn case_report(
    result: &CaseResult,
    paint: Paint,
    relative: &dyn Fn(&std::path::Path) -> String,
) -> String {
    let verdict = match result.passed() {
        true => paint.added("pass"),
        false => paint.removed("FAIL"),
    };
    let mut out = format!(
        "{verdict} {} {} ({}, {})\n",
        result.prompt,
        result.case,
        result.locale,
        relative(&result.file)
    );
    for path in &result.updated {
        out.push_str(&format!("     snapshot written: {}\n", relative(path)));
    }
    for failure in &result.failures {
        out.push_str(&format!(
            "     {}: {}\n",
            paint.heading(&failure.expectation),
            promptreg::printable(&failure.message)
        ));
        if let Some(diff) = &failure.diff {
            // Line by line: a diff's own line breaks stay, anything else
            // that could steer a terminal is escaped.
            let safe: String = diff
                .lines()
                .map(|line| promptreg::printable(line).into_owned() + "\n")
                .collect();
            let diff: String = paint
                .diff(&safe)
                .lines()
                .map(|line| format!("       {line}").trim_end().to_owned() + "\n")
                .collect();
            out.push_str(&diff);
        }
    }
    out
}

fn summary(passed: usize, failed: usize) -> String {
    let cases = |n: usize| format!("{n} case{}", if n == 1 { "" } else { "s" });
    match failed {
        0 => format!("{} passed\n", cases(passed)),
        _ => format!("{} passed, {} failed\n", cases(passed), failed),
    }
}

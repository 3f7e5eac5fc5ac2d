//! One module per command; each returns its whole output, so nothing
//! reaches standard output before an error.

mod bundle;
mod check;
mod diff;
mod explain;
mod follow;
mod init;
mod keys;
mod l10n;
mod list;
mod mcp;
mod render;
mod resolve;
mod serve;
mod store;
mod test;
mod trust;
mod webhooks;

use std::io::IsTerminal;

use promptreg::pack::Pack;
use promptreg::{ErrorKind, Severity};

use crate::cli::{Cli, Command, RenderCommandArgs, SchemaOf};
use crate::options::Session;
use crate::report::Failure;

/// What a successful command prints, and its exit code.
pub struct Output {
    pub stdout: String,
    pub code: u8,
    /// The data `stdout` prints, for an output made by [`Output::json`]:
    /// what a watched render prints again as one line.
    pub json: Option<serde_json::Value>,
}

impl Output {
    pub fn text(stdout: String) -> Self {
        Output {
            stdout,
            code: 0,
            json: None,
        }
    }

    pub fn json(value: &serde_json::Value) -> Self {
        let mut stdout = serde_json::to_string_pretty(value).unwrap_or_default();
        stdout.push('\n');
        Output {
            json: Some(value.clone()),
            ..Output::text(stdout)
        }
    }

    /// A prompt's text, exactly; a newline is added only for a terminal.
    pub fn prompt(mut text: String) -> Self {
        if std::io::stdout().is_terminal() && !text.ends_with('\n') {
            text.push('\n');
        }
        Output::text(text)
    }
}

pub fn execute(cli: Cli) -> Result<Output, Failure> {
    let (args, command) = cli.resolve().map_err(Failure::usage)?;
    let session = Session::new(args)?;
    if session.args.server.is_some() {
        watches_no_server(&command)?;
    }
    match command {
        Command::List(_) => list::run(&session),
        Command::Render(args) => render::run(&session, &args),
        Command::Explain(args) => explain::run(&session, &args),
        Command::Check(args) => check::run(&session, &args),
        Command::Resolve(args) => resolve::run(&session, &args),
        Command::Diff(args) => diff::run(&session, &args),
        Command::Schema(args) => schema(&session, args.of),
        Command::Follow(args) => follow::run(&session, &args),
        Command::Test(args) => test::run(&session, &args),
        Command::Init(args) => init::run(&session, &args),
        Command::Store(args) => store::run(&session, &args),
        Command::Serve(args) => serve::run(&session, &args),
        Command::Mcp(args) => mcp::run(&session, &args),
        Command::Keys(args) => keys::run(&session, &args),
        Command::Webhooks(args) => webhooks::run(&session, &args),
        Command::Trust(args) => trust::run(&session, &args),
        Command::Bundle(args) => bundle::run(&session, &args),
        Command::L10n(args) => l10n::run(&session, &args),
        Command::Completions(args) => crate::complete::registration(args.shell)
            .map(Output::text)
            .map_err(Failure::usage),
    }
}

/// `--watch` follows local files: with `--server`, `follow` is the
/// command that prints again.
fn watches_no_server(command: &Command) -> Result<(), Failure> {
    match command {
        Command::Render(RenderCommandArgs { render: args, .. }) | Command::Explain(args)
            if args.watch =>
        {
            Err(Failure::usage(
                "--watch follows local files; to print again when a server's label moves, use `promptreg follow ID --server URL`",
            ))
        }
        _ => Ok(()),
    }
}

/// The failure of rendering `id` from `pack`: when the pack declares the
/// key but has no default file for it, the same diagnostic `check` gives
/// (as an error, since nothing can be shown), naming the manifest line and
/// the file that would hold the default; otherwise `err` as it is.
fn render_failure(pack: &Pack, id: &str, err: promptreg::Error) -> Failure {
    let lacks_body = matches!(
        err.kind(),
        ErrorKind::UnknownId | ErrorKind::NoPromptForLocale
    );
    match pack.missing_default(id) {
        Some(missing) if lacks_body => {
            let mut d = missing.clone();
            d.severity = Severity::Error;
            Failure::from(promptreg::Error::from_diagnostics(vec![d]))
        }
        _ => Failure::from(err),
    }
}

/// Histories read from `--history`, as the render calls take them.
fn history_slices(
    history: &[(String, Vec<promptreg::Message>)],
) -> Vec<(&str, &[promptreg::Message])> {
    history
        .iter()
        .map(|(name, messages)| (name.as_str(), messages.as_slice()))
        .collect()
}

fn schema(session: &Session, of: SchemaOf) -> Result<Output, Failure> {
    match of {
        SchemaOf::FrontMatter => return Ok(Output::json(&promptreg::pack::front_matter_schema())),
        SchemaOf::Tests => return Ok(Output::json(&promptreg::testing::test_file_schema())),
        SchemaOf::Settings => {}
    }
    let pack = session.pack()?;
    Ok(Output::json(
        promptreg::config::settings_schema(pack.spec()).as_value(),
    ))
}

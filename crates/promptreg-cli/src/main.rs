//! `promptreg`: list, render and explain the prompts of an application built
//! on promptreg, and check its users' configuration.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod complete;
mod options;
#[cfg(test)]
mod reference;
mod report;
mod server_client;
mod style;

fn main() -> ExitCode {
    complete::answer_the_shell();
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let json = cli.output.json;
    match commands::execute(cli) {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`promptreg list | head`) is not an error worth a message.
            let _ = stdout
                .write_all(output.stdout.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::from(output.code)
        }
        Err(failure) if json => {
            eprintln!("{}", failure.to_json());
            failure.exit_code()
        }
        Err(failure) => {
            eprintln!("{failure}");
            failure.exit_code()
        }
    }
}

/// A command line clap refuses: as clap prints it, or as JSON when `--json`
/// was asked for (help and version are not errors).
fn usage_error(e: clap::Error) -> ExitCode {
    let wants_json = std::env::args_os().any(|arg| arg == "--json");
    if !wants_json || !e.use_stderr() {
        e.exit();
    }
    // The first line says what is wrong; the rest is usage help for a person.
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let failure = report::Failure::usage(message);
    eprintln!("{}", failure.to_json());
    failure.exit_code()
}

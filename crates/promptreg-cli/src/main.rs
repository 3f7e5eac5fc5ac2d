//! `promptreg`: list, render and explain the prompts of an application built
//! on promptreg, and check its users' configuration.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod complete;
mod report;
mod session;
mod style;

fn main() -> ExitCode {
    complete::answer_the_shell();
    let cli = cli::Cli::parse();
    match commands::execute(cli) {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`promptreg list | head`) is not an error worth a message.
            let _ = stdout
                .write_all(output.stdout.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::from(output.code)
        }
        Err(failure) => {
            eprintln!("{failure}");
            failure.exit_code()
        }
    }
}

//! `promptreg`: list, render and explain the prompts of an application.

use std::process::ExitCode;

use clap::Parser;

/// List, render and explain the prompts of an application built on promptreg.
#[derive(Debug, Parser)]
#[command(name = "promptreg", version, about, long_about = None)]
struct Cli {}

fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}

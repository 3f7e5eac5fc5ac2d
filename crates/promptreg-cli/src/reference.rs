//! The reference pages of the book (`docs/src/reference/`) generated from
//! the code: the command line from the clap definitions (one page per
//! group of commands, each command with its usage, what it does and every
//! option it takes), the server's problem codes from `ProblemCode`, its
//! OpenAPI document, and the JSON Schemas `promptreg schema` prints.
//!
//! The test compares them with the committed files and fails when one is
//! stale; `PROMPTREG_UPDATE_DOCS=1 cargo test -p promptreg-cli --bin
//! promptreg reference` writes them again.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::cli::Cli;

/// A page of the reference: its file, title, what it covers and the
/// top-level commands it documents.
struct Group {
    file: &'static str,
    title: &'static str,
    intro: &'static str,
    commands: &'static [&'static str],
}

const GROUPS: &[Group] = &[
    Group {
        file: "pack.md",
        title: "Reading a pack",
        intro: "The commands that read a pack and the user's configuration: what the \
                application would send, where each part came from, and whether it is valid.",
        commands: &[
            "list", "render", "explain", "check", "diff", "test", "resolve", "schema",
        ],
    },
    Group {
        file: "setup.md",
        title: "Setting up",
        intro: "A user's prompt folder and settings, the trust of a project, and shell \
                completions.",
        commands: &["init", "trust", "completions"],
    },
    Group {
        file: "store.md",
        title: "promptreg store",
        intro: "Versions, labels, revisions, releases and signatures of packs in a store \
                (SQLite by default, PostgreSQL for several servers).",
        commands: &["store"],
    },
    Group {
        file: "keys.md",
        title: "promptreg keys",
        intro: "The API keys a server accepts.",
        commands: &["keys"],
    },
    Group {
        file: "webhooks.md",
        title: "promptreg webhooks",
        intro: "Webhooks of a store: what each hears, its signing secret, its delivery log.",
        commands: &["webhooks"],
    },
    Group {
        file: "serve.md",
        title: "promptreg serve, follow and mcp",
        intro: "Serving a store over HTTP (and MCP), following a label of a server from the \
                command line, and serving prompts to an MCP client over standard input and \
                output.",
        commands: &["serve", "follow", "mcp"],
    },
    Group {
        file: "bundle.md",
        title: "promptreg bundle",
        intro: "Baked bundles: a label's release as one file.",
        commands: &["bundle"],
    },
    Group {
        file: "l10n.md",
        title: "promptreg l10n",
        intro: "Translations: coverage per locale, stale variants, XLIFF and PO files.",
        commands: &["l10n"],
    },
];

/// The book's reference folder.
fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference")
}

/// Every generated file: its path under the reference folder and its text.
fn generated() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = command_line()
        .into_iter()
        .map(|(file, text)| (format!("cli/{file}"), text))
        .collect();
    files.push(("problems.md".to_owned(), problems()));
    let openapi = serde_json::to_value(promptreg_server::openapi()).expect("a JSON document");
    files.push(("http-api.md".to_owned(), http_api(&openapi)));
    files.push(("openapi.json".to_owned(), json(&openapi)));
    files.push((
        "schemas/front-matter.schema.json".to_owned(),
        json(&promptreg::pack::front_matter_schema()),
    ));
    files.push((
        "schemas/tests.schema.json".to_owned(),
        json(&promptreg::testing::test_file_schema()),
    ));
    files
}

fn json(value: &impl serde::Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a JSON document");
    text.push('\n');
    text
}

/// The page of the server's problem codes.
fn problems() -> String {
    let mut page = String::from(
        "# Problem codes\n\n\
         Every error of the HTTP API is a problem details document (RFC 9457, \
         `application/problem+json`) with a stable `code`, one of these; the OpenAPI \
         document lists them as an enum, so a client can match on them. \
         `type` is `urn:promptreg:problem:` followed by the code.\n\n\
         | code | meaning |\n|---|---|\n",
    );
    for code in promptreg_server::ProblemCode::ALL {
        let _ = writeln!(page, "| `{}` | {} |", code.as_str(), code.meaning());
    }
    page
}

/// The page of the HTTP API: every operation of the OpenAPI document, by tag.
fn http_api(openapi: &serde_json::Value) -> String {
    let mut page = String::from(
        "# The HTTP API\n\n\
         `promptreg serve` answers under `/v1`; its OpenAPI 3.1 document, served at \
         `/v1/openapi.json`, is [here](openapi.json) as this version generates it, with \
         every request and response schema. Errors are problem details with a stable \
         [code](problems.md); the change stream's events are described in \
         [Events](events.md). [Running the server](../server/serve.md) shows the API at \
         work.\n",
    );
    let tags = openapi["tags"].as_array().into_iter().flatten();
    for tag in tags {
        let name = tag["name"].as_str().unwrap_or_default();
        let _ = write!(
            page,
            "\n## {name}\n\n{}\n\n| operation | answers |\n|---|---|\n",
            tag["description"].as_str().unwrap_or_default()
        );
        let paths = openapi["paths"].as_object().into_iter().flatten();
        for (path, operations) in paths {
            let operations = operations.as_object().into_iter().flatten();
            for (method, operation) in operations {
                let tagged = operation["tags"].as_array().into_iter().flatten();
                if !tagged.into_iter().any(|t| t == name) {
                    continue;
                }
                let statuses: Vec<&str> = operation["responses"]
                    .as_object()
                    .into_iter()
                    .flat_map(|r| r.keys().map(String::as_str))
                    .collect();
                let _ = writeln!(
                    page,
                    "| `{} {path}` | {} |",
                    method.to_uppercase(),
                    statuses.join(", ")
                );
            }
        }
    }
    page
}

/// The pages of the command line reference: file name and text.
fn command_line() -> Vec<(String, String)> {
    let mut root = Cli::command();
    root.build();
    let mut pages = vec![("index.md".to_owned(), index(&root))];
    for group in GROUPS {
        let mut page = format!("# {}\n\n{}\n", group.title, group.intro);
        for name in group.commands {
            let command = root
                .find_subcommand(name)
                .unwrap_or_else(|| panic!("`{name}` is not a command"));
            write_command(&mut page, command, &format!("promptreg {name}"));
        }
        pages.push((group.file.to_owned(), page));
    }
    pages
}

/// The first page: the global options and where each command is.
fn index(root: &Command) -> String {
    let mut page = String::from(
        "# Command line reference\n\n\
         Generated from the definitions of `promptreg`'s options: what `--help` says, \
         page by page. The guide to the tool, with examples, is \
         [The promptreg tool](../../tool.md).\n\n```text\n",
    );
    page.push_str(&root.clone().render_usage().to_string());
    page.push_str("\n```\n\n| command | what it does | page |\n|---|---|---|\n");
    for command in visible(root) {
        let name = command.get_name();
        let group = GROUPS
            .iter()
            .find(|g| g.commands.contains(&name))
            .unwrap_or_else(|| panic!("`{name}` belongs to no page of the reference"));
        let anchor = anchor(&format!("promptreg {name}"));
        let _ = writeln!(
            page,
            "| `{name}` | {} | [{}]({}#{anchor}) |",
            prose(&about(command)),
            group.title,
            group.file
        );
    }
    page.push_str("\n## Global options\n");
    write_options(&mut page, root);
    page
}

/// `command`, then each of its subcommands, under `path`.
fn write_command(page: &mut String, command: &Command, path: &str) {
    let depth = path.split(' ').count().min(4);
    let _ = write!(page, "\n{} `{path}`\n\n", "#".repeat(depth));
    let text = command
        .get_long_about()
        .or(command.get_about())
        .map(ToString::to_string)
        .unwrap_or_default();
    if !text.is_empty() {
        let _ = writeln!(page, "{}\n", prose(text.trim_end()));
    }
    let _ = writeln!(
        page,
        "```text\n{}\n```",
        command.clone().render_usage().to_string().trim_end()
    );
    write_options(page, command);
    for sub in visible(command) {
        write_command(page, sub, &format!("{path} {}", sub.get_name()));
    }
}

/// The arguments and options of `command`, under their help headings.
fn write_options(page: &mut String, command: &Command) {
    let args: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    let mut headings: Vec<Option<&str>> = Vec::new();
    for arg in &args {
        let heading = arg.get_help_heading();
        if !headings.contains(&heading) {
            headings.push(heading);
        }
    }
    for heading in headings {
        let _ = writeln!(page, "\n{}:\n", heading.unwrap_or("Arguments and options"));
        for arg in args.iter().filter(|a| a.get_help_heading() == heading) {
            let _ = writeln!(page, "- `{}`{}", spelling(arg), details(arg));
        }
    }
}

/// How an argument is written: `--pack <DIR>`, `-m, --message <TEXT>`, `<ID>`.
fn spelling(arg: &Arg) -> String {
    let values = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = matches!(arg.get_action(), ArgAction::Set | ArgAction::Append);
    if arg.is_positional() {
        let many = matches!(arg.get_action(), ArgAction::Append);
        return match (arg.is_required_set(), many) {
            (true, false) => values,
            (true, true) => format!("{values}..."),
            (false, false) => format!("[{values}]"),
            (false, true) => format!("[{values}...]"),
        };
    }
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let names = names.join(", ");
    if takes_value {
        format!("{names} {values}")
    } else {
        names
    }
}

/// An argument's help, possible values, default and environment variable.
fn details(arg: &Arg) -> String {
    let mut text = String::new();
    if let Some(help) = arg.get_long_help().or(arg.get_help()) {
        let help = help.to_string();
        let _ = write!(text, ": {}", indent(&prose(help.trim_end())));
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| match v.get_help() {
            Some(help) => format!("`{}` ({})", v.get_name(), prose(&help.to_string())),
            None => format!("`{}`", v.get_name()),
        })
        .collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        let _ = write!(text, "\n  One of: {}.", values.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .filter(|v| !v.is_empty())
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        let _ = write!(text, "\n  Default: {}.", defaults.join(", "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(
            text,
            "\n  From the environment: `{}`.",
            env.to_string_lossy()
        );
    }
    text
}

/// `text` for Markdown: `<` and `>` outside code spans as entities, so a
/// `tests/<name>.toml` in a help text is not read as an HTML tag.
fn prose(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, piece)| match i % 2 {
            0 => piece.replace('<', "&lt;").replace('>', "&gt;"),
            _ => piece.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// Continuation lines of a list item.
fn indent(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("  {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim_start()
        .to_owned()
}

fn visible(command: &Command) -> impl Iterator<Item = &Command> {
    command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

fn about(command: &Command) -> String {
    command
        .get_about()
        .map(ToString::to_string)
        .unwrap_or_default()
}

/// The anchor mdBook gives a heading `` `text` ``: lower case, spaces as
/// dashes, other punctuation dropped.
fn anchor(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_command_line_reference_is_current() {
    let folder = folder();
    let update = std::env::var_os("PROMPTREG_UPDATE_DOCS").is_some();
    let files = generated();
    let mut stale = Vec::new();
    for (file, text) in &files {
        let path = folder.join(file);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    // A page of a command group that no longer exists.
    let mut committed: Vec<String> = std::fs::read_dir(folder.join("cli"))
        .map(|entries| {
            entries
                .filter_map(|e| Some(format!("cli/{}", e.ok()?.file_name().into_string().ok()?)))
                .collect()
        })
        .unwrap_or_default();
    committed.retain(|name| !files.iter().any(|(file, _)| file == name));
    assert!(
        stale.is_empty() && committed.is_empty(),
        "the book's generated reference is stale ({}; not generated: {}): run \
         `PROMPTREG_UPDATE_DOCS=1 cargo test -p promptreg-cli --bin promptreg reference` \
         and commit docs/src/reference/",
        stale.join(", "),
        committed.join(", ")
    );
}

#[test]
fn every_command_is_on_one_page() {
    let root = Cli::command();
    for command in visible(&root) {
        let pages = GROUPS
            .iter()
            .filter(|g| g.commands.contains(&command.get_name()))
            .count();
        assert_eq!(pages, 1, "`{}` is on {pages} pages", command.get_name());
    }
    assert_eq!(anchor("promptreg store push"), "promptreg-store-push");
}

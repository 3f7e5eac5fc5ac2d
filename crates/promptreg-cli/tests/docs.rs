//! Every console example in README.md and the book (docs/src/) is run and
//! its output compared with what the page shows, so the docs cannot drift
//! from the tool.
//!
//! The documented setup: a folder holding copies of the two example packs,
//! a `home/` and a `project/` whose settings set `goal-running` to mode
//! `override` and whose prompt file for it says "Delegate implementation to
//! a team.". `G` stands for `--pack goal-agent --home home --cwd project`,
//! and `HOME` is the sandbox's `home/`.
//!
//! Each ```` ```console ```` block runs in a fresh copy of the setup; its
//! `$ ` lines run in order through `sh`, with standard error after standard
//! output as a terminal shows them. In the expected text, a line `...`
//! stands for any number of lines and `[..]` for any text within a line
//! (a temporary path, say).

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{copy_dir, example};

/// One console block: where it is, its commands and what they print.
struct Example {
    place: String,
    steps: Vec<(String, Vec<String>)>,
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The console blocks of a Markdown file.
fn examples(file: &Path) -> Vec<Example> {
    let text = fs::read_to_string(file).unwrap();
    let name = file
        .strip_prefix(repository())
        .unwrap_or(file)
        .display()
        .to_string();
    let mut examples = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let mut example = Example {
            place: format!("{name}:{}", number + 1),
            steps: Vec::new(),
        };
        for (_, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            match line.strip_prefix("$ ") {
                Some(command) => example.steps.push((command.to_owned(), Vec::new())),
                None => match example.steps.last_mut() {
                    Some((_, expected)) => expected.push(line.to_owned()),
                    None => panic!("{}: output before any `$ ` line", example.place),
                },
            }
        }
        examples.push(example);
    }
    examples
}

/// The Markdown files under `dir`, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(markdown_files(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// A fresh copy of the documented setup.
fn setup() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for pack in ["goal-agent", "web-agent"] {
        copy_dir(&example(pack), &root.path().join(pack));
    }
    fs::create_dir_all(root.path().join("home")).unwrap();
    let prompts = root.path().join("project/.pi/pi-goal-xx/prompts");
    fs::create_dir_all(&prompts).unwrap();
    fs::write(
        root.path().join("project/.pi/pi-goal-xx-settings.json"),
        "{\n  \"prompts\": {\n    \"goal-running\": { \"mode\": \"override\" }\n  }\n}\n",
    )
    .unwrap();
    fs::write(
        prompts.join("goal-running.md"),
        "Delegate implementation to a team.\n",
    )
    .unwrap();
    root
}

/// Runs `command` in `dir` as the docs do.
fn run(dir: &Path, command: &str) -> Vec<String> {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_promptreg"));
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("{command} 2>&1"))
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir.join("home"))
        .env("G", "--pack goal-agent --home home --cwd project")
        .env("NO_COLOR", "1")
        .env_remove("PI_GOAL_SETTINGS_FILE")
        .env_remove("WEBAGENT_SETTINGS_FILE")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| l.trim_end().to_owned())
        .collect()
}

/// Whether `actual` is `expected`, where a `...` line stands for any
/// number of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual.split_first().is_some_and(|(line, more)| {
            line_matches(first.trim_end(), line) && matches(rest, more)
        }),
    }
}

/// Whether `line` is `expected`, where `[..]` stands for any text.
fn line_matches(expected: &str, line: &str) -> bool {
    let mut pieces = expected.split("[..]");
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    for (i, piece) in pieces.iter().enumerate() {
        if i + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[test]
fn the_console_examples_print_what_the_docs_show() {
    let mut files = vec![repository().join("README.md")];
    files.extend(markdown_files(&repository().join("docs/src")));
    let mut failures = Vec::new();
    let mut count = 0;
    for example in files.iter().flat_map(|f| examples(f)) {
        let dir = setup();
        for (command, expected) in &example.steps {
            count += 1;
            let actual = run(dir.path(), command);
            if !matches(expected, &actual) {
                failures.push(format!(
                    "{}: `$ {command}`\n--- the docs show\n{}\n--- it prints\n{}\n",
                    example.place,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(count >= 7, "only {count} documented commands were found");
}

#[test]
fn an_ellipsis_stands_for_any_number_of_lines() {
    let lines = |text: &str| -> Vec<String> { text.lines().map(str::to_owned).collect() };
    assert!(matches(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(matches(&lines("a\n...\nd"), &lines("a\nd")));
    assert!(matches(&lines("a\n..."), &lines("a\nb")));
    assert!(!matches(&lines("a\n...\nd"), &lines("a\nb")));
    assert!(!matches(&lines("a\nb"), &lines("a\nb\nc")));
    assert!(line_matches(
        "trusted [..]/project",
        "trusted /tmp/x/project"
    ));
    assert!(line_matches("[..] and [..]", "this and that"));
    assert!(!line_matches(
        "trusted [..]/project",
        "trusted /tmp/x/projects"
    ));
    assert!(!line_matches("exact", "exactly"));
}

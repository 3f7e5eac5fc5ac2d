//! The README's server examples (its `shell-session` blocks) run against a
//! server on loopback holding the goal-agent example pack, released to
//! `production`; `localhost:7878` is replaced by the server's address. In
//! the expected text, `...` stands for any lines and `[..]` for any text
//! within a line, as in the console examples of `promptreg-cli/tests/docs.rs`.

mod common;

use std::path::Path;
use std::process::Command;

use common::{TestServer, config, writer};
use promptreg_store::{Label, PackFiles, Store};

fn blocks(readme: &str) -> Vec<Vec<(String, Vec<String>)>> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```shell-session" {
            continue;
        }
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            match line.strip_prefix("$ ") {
                Some(command) => steps.push((command.to_owned(), Vec::new())),
                None => steps
                    .last_mut()
                    .expect("output after a `$ ` line")
                    .1
                    .push(line.to_owned()),
            }
        }
        blocks.push(steps);
    }
    blocks
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `actual` matches `expected`, where a line `...` stands for any lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, others)| line_matches(first, line) && matches(rest, others)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_server_examples_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = blocks(&readme);
    assert!(!blocks.is_empty(), "README.md has server examples");
    for steps in blocks {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("promptreg.db").to_str().unwrap())
            .await
            .unwrap();
        let files = PackFiles::read(root.join("examples/goal-agent")).unwrap();
        store.push(&files, &writer(), "first import").await.unwrap();
        store
            .release(
                "goal-agent",
                &Label::latest(),
                &Label::new("production").unwrap(),
                &writer(),
            )
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        for (command, expected) in steps {
            let line = command.replace("localhost:7878", &server.addr.to_string());
            let output = tokio::task::spawn_blocking(move || {
                Command::new("sh").arg("-c").arg(&line).output().unwrap()
            })
            .await
            .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let actual: Vec<&str> = stdout.lines().collect();
            assert!(
                matches(&expected, &actual),
                "README.md: `{command}` printed\n{stdout}\nexpected\n{}",
                expected.join("\n")
            );
        }
    }
}

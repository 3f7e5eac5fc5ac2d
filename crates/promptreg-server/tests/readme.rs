//! The server examples of the README and the book (their `shell-session`
//! blocks) run against a server on loopback holding the goal-agent example pack, released to
//! `production`; `localhost:7878` is replaced by the server's address. In
//! the expected text, `...` stands for any lines and `[..]` for any text
//! within a line, as in the console examples of `promptreg-cli/tests/docs.rs`.
//!
//! The examples that run `promptreg` itself find it beside this test's
//! binary, where the workspace's tests build it (it is built first when
//! missing); they run in an empty folder that is also `HOME`, so no real
//! configuration is read.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
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

/// The folder of the `promptreg` binary of this build (`target/debug`),
/// built first when it is not there yet.
fn tool_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/readme-HASH -> target/debug
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let tool = dir.join(format!("promptreg{}", std::env::consts::EXE_SUFFIX));
    if !tool.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let built = Command::new(cargo)
            .args(["build", "-p", "promptreg-cli", "--bin", "promptreg"])
            .status()
            .unwrap();
        assert!(
            built.success(),
            "building promptreg for the README examples"
        );
    }
    dir
}

/// `PATH` with the `promptreg` binary of this build first.
fn path_with_tool() -> OsString {
    let mut dirs = vec![tool_dir()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The Markdown files under `dir`, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_examples_of_the_docs_hold() {
    let path = path_with_tool();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = vec![root.join("README.md")];
    pages.extend(markdown_files(&root.join("docs/src")));
    let mut examples = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page
            .strip_prefix(&root)
            .unwrap_or(page)
            .display()
            .to_string();
        examples.extend(blocks(&text).into_iter().map(|steps| (name.clone(), steps)));
    }
    assert!(
        examples.iter().any(|(page, _)| page == "README.md"),
        "README.md has server examples"
    );
    for (page, steps) in examples {
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
                None,
                &writer(),
                "",
            )
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        for (command, expected) in steps {
            let line = command.replace("localhost:7878", &server.addr.to_string());
            let (path, home) = (path.clone(), dir.path().to_path_buf());
            let output = tokio::task::spawn_blocking(move || {
                Command::new("sh")
                    .arg("-c")
                    .arg(&line)
                    .current_dir(&home)
                    .env("HOME", &home)
                    .env("PATH", path)
                    .env_remove("PROMPTREG_KEY")
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            let actual: Vec<&str> = stdout.lines().collect();
            assert!(
                matches(&expected, &actual),
                "{page}: `{command}` printed\n{stdout}\nexpected\n{}",
                expected.join("\n")
            );
        }
    }
}

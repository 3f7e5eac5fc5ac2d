//! The server's layout, as ARCHITECTURE.md draws it: the web page and the
//! API share the store through `actions.rs` and never reach into each
//! other, and no source file outgrows one job.

use std::fs;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn files_under(folder: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(folder),
        &mut files,
    );
    files.sort();
    files
}

#[test]
fn no_web_module_imports_the_api() {
    for file in files_under("src/web") {
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("crate::api"),
            "{} reaches into the API: share the work through actions.rs",
            file.display()
        );
    }
}

#[test]
fn no_source_file_is_over_400_lines() {
    let long: Vec<String> = files_under("src")
        .into_iter()
        .filter_map(|file| {
            let lines = fs::read_to_string(&file).unwrap().lines().count();
            (lines > 400).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "split these by job: {long:?}");
}

#[test]
fn nothing_imports_the_server_that_runs_it() {
    // `serve.rs` builds the state and the router and runs them; modules
    // take the state from `state.rs`, so no circle of modules runs
    // through the server.
    for file in files_under("src") {
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains("crate::serve") && !text.contains("super::serve"),
            "{} imports serve.rs: take the state from state.rs",
            file.display()
        );
    }
}

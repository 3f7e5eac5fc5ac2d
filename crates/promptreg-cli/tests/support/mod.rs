//! What the tool's test files share: the example packs, copying them
//! into a sandbox, and `promptreg serve` as a process.

#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};

use insta_cmd::get_cargo_bin;

/// An example pack of the repository (`goal-agent`, `web-agent`).
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .canonicalize()
        .unwrap()
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

pub struct Served {
    pub child: Child,
    pub stderr: BufReader<ChildStderr>,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// The log line that named the address, as written.
    pub started: String,
    /// The store's folder, which holds the pack pushed as `goal-agent/`.
    pub dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        // A test that stopped the server itself has nothing left to stop.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `promptreg serve` over a store holding the goal-agent pack, on a free port.
pub fn serve(extra: &[&str]) -> Served {
    serve_logging(extra, "info")
}

/// As [`serve`], its log filtered by `RUST_LOG=filter`: a test making
/// many requests keeps the log it never reads from filling its pipe.
pub fn serve_logging(extra: &[&str], filter: &str) -> Served {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example("goal-agent"), &dir.path().join("goal-agent"));
    let pushed = Command::new(get_cargo_bin("promptreg"))
        .current_dir(dir.path())
        .args(["store", "push", "goal-agent"])
        .output()
        .unwrap();
    assert!(pushed.status.success(), "{pushed:?}");
    let mut child = Command::new(get_cargo_bin("promptreg"))
        .current_dir(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .env("RUST_LOG", filter)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server exited"
        );
        if let Some(rest) = line.split("http://").nth(1) {
            break rest.split('/').next().unwrap().to_owned();
        }
    };
    Served {
        child,
        stderr,
        addr,
        started: line,
        dir,
    }
}

//! The project's scripts find what cargo built wherever cargo puts it: a
//! user's `CARGO_TARGET_DIR` (or `build.target-dir`) moves `target/`.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn the_target_directory_comes_from_cargo() {
    let elsewhere = tempfile::tempdir().unwrap();
    let output = Command::new(root().join("scripts/target-dir.sh"))
        .env("CARGO_TARGET_DIR", elsewhere.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(Path::new(printed.trim()), elsewhere.path());
}

#[test]
fn no_script_assumes_target_is_beside_the_workspace() {
    let mut scripts: Vec<_> = std::fs::read_dir(root().join("scripts"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    scripts.push(root().join(".ci/run"));
    for script in scripts {
        let text = std::fs::read_to_string(&script).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split('#').next().unwrap_or_default();
            for assumed in [
                "target/debug",
                "target/release",
                "PWD/target",
                "=target/",
                "$PWD/$",
            ] {
                assert!(
                    !code.contains(assumed),
                    "{}:{}: `{assumed}`: ask scripts/target-dir.sh instead\n{line}",
                    script.display(),
                    n + 1
                );
            }
        }
    }
}

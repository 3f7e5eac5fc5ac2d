//! Signed releases and baked bundles from the tool: `store release --sign
//! KEYFILE` with a key `ssh-keygen` made (encrypted, its passphrase from
//! the environment), `--trust-key` on reads of a server, `bundle export`,
//! and `--bundle FILE` rendering with no server at all.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use insta_cmd::get_cargo_bin;
use support::{Served, serve};

const PASSPHRASE: &str = "correct horse";

/// Makes an encrypted Ed25519 key `name` (and `name.pub`) in `dir`.
fn new_key(dir: &Path, name: &str) {
    let made = Command::new("ssh-keygen")
        .args([
            "-q", "-t", "ed25519", "-N", PASSPHRASE, "-C", name, "-f", name,
        ])
        .current_dir(dir)
        .output()
        .expect("ssh-keygen (OpenSSH's client tools) is installed");
    assert!(made.status.success(), "{made:?}");
}

/// `promptreg ARGS` in the server's folder, no local configuration.
fn promptreg(served: &Served, args: &[&str]) -> Output {
    Command::new(get_cargo_bin("promptreg"))
        .current_dir(served.dir.path())
        .args(["--home", ".", "--cwd=", "--color", "never"])
        .args(args)
        .env("PROMPTREG_SIGNING_PASSPHRASE", PASSPHRASE)
        .env_remove("PROMPTREG_KEY")
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `attempt` until it succeeds, for at most ten seconds: the server learns
/// of a signature another process added from the store's events, at the
/// latest at its next poll of the store (five seconds).
fn eventually(mut attempt: impl FnMut() -> Output) -> Output {
    for _ in 0..100 {
        let out = attempt();
        if out.status.success() {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    attempt()
}

fn refused(out: Output) -> String {
    assert!(!out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_signed_release_is_read_with_trusted_keys_baked_and_rendered_with_no_server() {
    let mut served = serve(&[]);
    let dir = served.dir.path().to_path_buf();
    let dir = dir.as_path();
    new_key(dir, "releaser");
    new_key(dir, "stranger");
    let url = format!("http://{}", served.addr);
    let read = |extra: &[&str], args: &[&str]| {
        let mut all = vec!["--server", &url, "--pack", "goal-agent"];
        all.extend_from_slice(extra);
        all.extend_from_slice(args);
        promptreg(&served, &all)
    };

    // Unsigned: a reader that trusts a key refuses it and says why.
    ok(promptreg(
        &served,
        &["store", "release", "latest", "production"],
    ));
    let why = refused(read(&["--trust-key", "releaser.pub"], &["list"]));
    assert!(why.contains("is not signed"), "{why}");
    // A one-off read holds no earlier bundle: it says so, not that one
    // stays in force.
    assert!(
        why.contains("refused, and no earlier bundle is held to keep"),
        "{why}"
    );

    // Signed with the encrypted key: accepted; by another key: refused.
    ok(promptreg(
        &served,
        &["store", "sign", "production", "--sign", "releaser"],
    ));
    let listed = ok(eventually(|| {
        read(&["--trust-key", "releaser.pub"], &["list"])
    }));
    assert!(listed.contains("auditor"), "{listed}");
    let why = refused(read(&["--trust-key", "stranger.pub"], &["list"]));
    assert!(why.contains("not trusted here"), "{why}");

    // The signature in the store verifies with OpenSSH's own tool.
    let history = ok(promptreg(
        &served,
        &["--json", "store", "revisions", "production"],
    ));
    let revisions: serde_json::Value = serde_json::from_str(&history).unwrap();
    let newest = &revisions["revisions"][0];
    let signature = newest["signatures"][0]["signature"].as_str().unwrap();
    std::fs::write(dir.join("release.sig"), signature).unwrap();
    let public = std::fs::read_to_string(dir.join("releaser.pub")).unwrap();
    std::fs::write(dir.join("allowed"), format!("releaser {public}")).unwrap();
    let statement = format!(
        "promptreg release v1\npack goal-agent\nlabel production\nrevision {}\ndigest {}\n",
        newest["revision"],
        newest["digest"].as_str().unwrap()
    );
    let mut verify = Command::new("ssh-keygen")
        .args([
            "-Y",
            "verify",
            "-f",
            "allowed",
            "-I",
            "releaser",
            "-n",
            "promptreg-release",
        ])
        .args(["-s", "release.sig"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    verify
        .stdin
        .take()
        .unwrap()
        .write_all(statement.as_bytes())
        .unwrap();
    assert!(verify.wait().unwrap().success());

    // Baked: exported, then rendered with the server gone.
    let exported = ok(read(
        &["--trust-key", "releaser.pub"],
        &["bundle", "export", "-o", "prod.bundle"],
    ));
    assert!(exported.contains("signed by SHA256:"), "{exported}");
    served.child.kill().unwrap();
    served.child.wait().unwrap();
    let render = |extra: &[&str]| {
        let mut cmd = Command::new(get_cargo_bin("promptreg"));
        cmd.current_dir(dir)
            .args(["--home", ".", "--cwd=", "--color", "never"])
            .args(extra)
            .args(["render", "auditor", "--bundle", "prod.bundle"]);
        cmd.output().unwrap()
    };
    let text = String::from_utf8(render(&["--trust-key", "releaser.pub"]).stdout).unwrap();
    assert!(text.contains("auditor"), "{text}");
    let why = String::from_utf8(render(&["--trust-key", "stranger.pub"]).stderr).unwrap();
    assert!(why.contains("not trusted here"), "{why}");
    let test = Command::new(get_cargo_bin("promptreg"))
        .current_dir(dir)
        .args(["--home", ".", "--cwd=", "test", "--bundle", "prod.bundle"])
        .output()
        .unwrap();
    assert!(test.status.success(), "{test:?}");
}

#[test]
fn a_label_the_manifest_signs_refuses_an_unsigned_release_and_a_bad_key_file_is_named() {
    let served = serve(&[]);
    let dir = served.dir.path();
    let manifest = dir.join("goal-agent/promptreg.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{text}\n[release]\nsigned = [\"production\"]\n"),
    )
    .unwrap();
    ok(promptreg(
        &served,
        &["store", "push", "goal-agent", "-m", "signed releases"],
    ));
    let why = refused(promptreg(
        &served,
        &["store", "release", "latest", "production"],
    ));
    assert!(why.contains("moves only with a signature"), "{why}");

    std::fs::write(dir.join("notes.txt"), "not a key").unwrap();
    let why = refused(promptreg(
        &served,
        &[
            "store",
            "release",
            "latest",
            "production",
            "--sign",
            "notes.txt",
        ],
    ));
    assert!(
        why.contains("notes.txt is not an OpenSSH private key"),
        "{why}"
    );
    new_key(dir, "releaser");
    let locked = Command::new(get_cargo_bin("promptreg"))
        .current_dir(dir)
        .args([
            "store",
            "release",
            "latest",
            "production",
            "--sign",
            "releaser",
        ])
        .env_remove("PROMPTREG_SIGNING_PASSPHRASE")
        .output()
        .unwrap();
    let why = refused(locked);
    assert!(why.contains("is encrypted"), "{why}");
    let released = ok(promptreg(
        &served,
        &[
            "store",
            "release",
            "latest",
            "production",
            "--sign",
            "releaser",
        ],
    ));
    assert!(released.contains("production"), "{released}");
}

//! The tool against a server: `--server URL --pack NAME [--label L]
//! [--key K]` makes list, render, explain and diff read the label's
//! prompts; `follow` prints a prompt again when its label moves. The
//! server is `promptreg serve` as a process on a free loopback port.

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use insta_cmd::get_cargo_bin;
use support::{Served, serve};

/// Generous: the point is that it happens, not how fast.
const DEADLINE: Duration = Duration::from_secs(60);

/// A server whose store holds goal-agent, released to `production`.
fn released() -> Served {
    let served = serve(&[]);
    store(&served, &["release", "latest", "production"]);
    served
}

/// `promptreg store ARGS` on the server's store.
fn store(served: &Served, args: &[&str]) -> String {
    let out = Command::new(get_cargo_bin("promptreg"))
        .current_dir(served.dir.path())
        .arg("store")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "store {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `promptreg` with no local configuration, reading `served`'s goal-agent.
fn tool(served: &Served) -> Command {
    tool_in(served, "")
}

/// `promptreg` reading `served`'s goal-agent, with the project
/// configuration of folder `cwd` (empty for none).
fn tool_in(served: &Served, cwd: &str) -> Command {
    let mut cmd = Command::new(get_cargo_bin("promptreg"));
    cmd.current_dir(served.dir.path())
        .args(["--home", ".", &format!("--cwd={cwd}"), "--color", "never"])
        .args(["--server", &format!("http://{}", served.addr)])
        .args(["--pack", "goal-agent"])
        .env_remove("PROMPTREG_KEY");
    cmd
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// Rewrites the first line of goal-agent's `auditor` in the store's copy,
/// pushes it and moves `production` to the new version.
fn ship_auditor(served: &Served, first_words: &str, version: u64) {
    let file = served.dir.path().join("goal-agent/defaults/auditor.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replacen("You are an independent auditor", first_words, 1);
    std::fs::write(&file, text).unwrap();
    store(served, &["push", "goal-agent", "-m", "reworded"]);
    let (to, from) = (version.to_string(), (version - 1).to_string());
    store(
        served,
        &["label", "auditor", "production", &to, "--expect", &from],
    );
}

#[test]
fn render_explain_list_and_diff_read_the_servers_label() {
    let served = released();
    let local = std::fs::read_to_string(support::example("goal-agent").join("defaults/auditor.md"))
        .unwrap();
    let rendered = stdout(&run(tool(&served), &["render", "auditor"]));
    assert!(
        rendered.starts_with("You are an independent auditor."),
        "{rendered}"
    );
    assert!(local.contains(rendered.lines().next().unwrap()));

    ship_auditor(&served, "You are a strict auditor", 2);
    // The server learns of a move made by another process from the store's
    // event log, within its poll interval.
    let start = std::time::Instant::now();
    let rendered = loop {
        let rendered = stdout(&run(tool(&served), &["render", "auditor"]));
        if rendered.starts_with("You are a strict auditor.") || start.elapsed() > DEADLINE {
            break rendered;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        rendered.starts_with("You are a strict auditor."),
        "{rendered}"
    );
    // `latest` is the new version too; a label with no such pack fails.
    let latest = stdout(&run(
        tool(&served),
        &["--label", "latest", "render", "auditor"],
    ));
    assert_eq!(latest, rendered);

    // Each part names the server, pack, label, file and version.
    let explained = stdout(&run(tool(&served), &["explain", "auditor"]));
    let origin = format!(
        "http://{}/v1/packs/goal-agent/labels/production/defaults/auditor.md, version 2",
        served.addr
    );
    assert!(explained.contains(&origin), "{explained}");
    let explained = stdout(&run(tool(&served), &["--json", "explain", "auditor"]));
    let trace: serde_json::Value = serde_json::from_str(&explained).unwrap();
    assert_eq!(trace["parts"][0]["provenance"]["version"], 2, "{trace}");

    let listed = stdout(&run(tool(&served), &["list"]));
    assert!(
        listed.contains("Independent completion auditor"),
        "{listed}"
    );

    // `diff` keeps its meaning: the label's prompt against it with the
    // user's configuration, of which there is none here.
    let diff = stdout(&run(tool(&served), &["diff", "auditor"]));
    assert_eq!(diff, "auditor: the user's configuration changes nothing\n");
}

#[test]
fn the_users_configuration_applies_on_top_of_the_servers_label() {
    let served = released();
    let project = served.dir.path().join("project/.pi/pi-goal-xx/prompts");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("auditor.md"), "Be brief.\n").unwrap();
    std::fs::write(
        served
            .dir
            .path()
            .join("project/.pi/pi-goal-xx-settings.json"),
        r#"{ "prompts": { "auditor": { "mode": "append" } } }"#,
    )
    .unwrap();
    let out = run(tool_in(&served, "project"), &["render", "auditor"]);
    let rendered = stdout(&out);
    assert!(
        rendered.starts_with("You are an independent auditor."),
        "{rendered}"
    );
    // Appended before the pinned tail, as with a local pack.
    assert!(rendered.contains("\n\nBe brief.\n\n"), "{rendered}");
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let served = released();
    let addr = served.addr.clone();
    drop(served);
    let out = Command::new(get_cargo_bin("promptreg"))
        .args([
            "--home",
            ".",
            "--cwd=",
            "--server",
            &format!("http://{addr}"),
        ])
        .args(["--pack", "goal-agent", "render", "auditor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let error = stderr(&out);
    assert!(
        error.contains(&format!(
            "cannot read pack `goal-agent` at label `production` on http://{addr}"
        )),
        "{error}"
    );
    assert!(error.contains("refused"), "{error}");
}

#[test]
fn the_key_comes_from_the_option_or_the_environment_and_a_refusal_says_so() {
    let served = released();
    let created = Command::new(get_cargo_bin("promptreg"))
        .current_dir(served.dir.path())
        .args([
            "keys", "create", "app", "--scope", "read", "--admin", "--json",
        ])
        .output()
        .unwrap();
    let created: serde_json::Value =
        serde_json::from_slice(&stdout(&created).into_bytes()).unwrap();
    let secret = created["secret"].as_str().unwrap().to_owned();

    let refused = run(tool(&served), &["render", "auditor"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let error = stderr(&refused);
    assert!(error.contains("HTTP 401"), "{error}");
    assert!(error.contains("API key"), "{error}");

    let wrong = run(tool(&served), &["--key", "prk_wrong", "render", "auditor"]);
    assert!(stderr(&wrong).contains("HTTP 401"), "{wrong:?}");

    let by_option = stdout(&run(
        tool(&served),
        &["--key", &secret, "render", "auditor"],
    ));
    let mut cmd = tool(&served);
    cmd.env("PROMPTREG_KEY", &secret);
    let by_env = stdout(&run(cmd, &["render", "auditor"]));
    assert_eq!(by_option, by_env);
    assert!(by_env.starts_with("You are an independent auditor."));

    // An empty variable is no key, said as such.
    let mut cmd = tool(&served);
    cmd.env("PROMPTREG_KEY", "");
    let empty = run(cmd, &["render", "auditor"]);
    assert_eq!(empty.status.code(), Some(2), "{empty:?}");
    let error = stderr(&empty);
    assert!(
        error.contains("no key given; use --key or PROMPTREG_KEY"),
        "{error}"
    );
    assert!(!error.to_lowercase().contains("header"), "{error}");
}

#[test]
fn follow_prints_the_prompt_again_when_the_label_moves() {
    let served = released();
    let mut child = tool(&served)
        .args(["follow", "auditor", "--count", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first render is printed once the server has answered; the move
    // comes after it, so the second render must be the new text.
    let (lines, inbox) = mpsc::channel();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        let mut line = String::new();
        while out.read_line(&mut line).is_ok_and(|n| n > 0) {
            let _ = lines.send(std::mem::take(&mut line));
        }
    });
    let first = inbox.recv_timeout(DEADLINE).expect("the first render");
    assert!(
        first.starts_with("You are an independent auditor."),
        "{first}"
    );

    ship_auditor(&served, "You are a strict auditor", 2);
    let again = loop {
        let line = inbox
            .recv_timeout(DEADLINE)
            .expect("a render after the move");
        if line.starts_with("You are") {
            break line;
        }
    };
    assert!(again.starts_with("You are a strict auditor."), "{again}");
    // `--count 2`: it stops by itself after the second render.
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut news = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut news)
        .unwrap();
    assert!(
        news.contains("── the label moved; auditor is now version 2"),
        "{news}"
    );
}

#[test]
fn commands_that_read_no_server_refuse_it_and_follow_needs_one() {
    let served = released();
    let check = run(tool(&served), &["check"]);
    assert_eq!(check.status.code(), Some(2));
    assert!(
        stderr(&check).contains("`promptreg check` does not read a server"),
        "{check:?}"
    );
    let watch = run(tool(&served), &["render", "auditor", "--watch"]);
    assert!(stderr(&watch).contains("promptreg follow"), "{watch:?}");
    let no_pack = Command::new(get_cargo_bin("promptreg"))
        .args(["--server", "http://127.0.0.1:1", "render", "auditor"])
        .output()
        .unwrap();
    assert!(
        stderr(&no_pack).contains("--server needs --pack NAME"),
        "{no_pack:?}"
    );
    let local = Command::new(get_cargo_bin("promptreg"))
        .args([
            "--pack",
            &support::example("goal-agent").display().to_string(),
        ])
        .args(["follow", "auditor"])
        .output()
        .unwrap();
    assert_eq!(local.status.code(), Some(2));
    assert!(
        stderr(&local).contains("follow reads a server"),
        "{local:?}"
    );
}

/// A process the test started, stopped when the test ends, passed or not.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lines `from` writes, as they come.
fn lines(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (lines, inbox) = mpsc::channel();
    let mut from = BufReader::new(from);
    std::thread::spawn(move || {
        let mut line = String::new();
        while from.read_line(&mut line).is_ok_and(|n| n > 0) {
            let _ = lines.send(std::mem::take(&mut line));
        }
    });
    inbox
}

/// The next line from `inbox` that `wanted` accepts, within [`DEADLINE`],
/// with those before it.
fn until(inbox: &mpsc::Receiver<String>, wanted: impl Fn(&str) -> bool) -> (String, String) {
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut before = String::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = inbox
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no such line; before it:\n{before}"));
        if wanted(&line) {
            return (line, before);
        }
        before.push_str(&line);
    }
}

#[test]
fn follow_with_a_subject_prints_the_arm_of_a_split_the_subject_gets() {
    let served = released();
    let mut child = Running(
        tool(&served)
            .args(["follow", "auditor", "--subject", "alice", "--count", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (out, news) = (
        lines(child.0.stdout.take().unwrap()),
        lines(child.0.stderr.take().unwrap()),
    );
    let (first, _) = until(&out, |_| true);
    assert!(
        first.starts_with("You are an independent auditor."),
        "{first}"
    );
    let (arm, _) = until(&news, |l| l.contains("alice"));
    assert_eq!(arm, "── subject alice gets the label (no split runs)\n");

    // A candidate for every subject, the label itself unmoved.
    let file = served.dir.path().join("goal-agent/defaults/auditor.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replacen(
        "You are an independent auditor",
        "You are a strict auditor",
        1,
    );
    std::fs::write(&file, text).unwrap();
    store(&served, &["push", "goal-agent", "-m", "reworded"]);
    store(
        &served,
        &[
            "canary",
            "production",
            "--from",
            "latest",
            "--percent",
            "100",
        ],
    );
    let (again, _) = until(&out, |l| l.starts_with("You are"));
    assert!(again.starts_with("You are a strict auditor."), "{again}");
    let (arm, _) = until(&news, |l| l.contains("alice"));
    assert_eq!(
        arm,
        "── the split changed; subject alice gets split 1's candidate (100% of subjects)\n"
    );
    assert!(child.0.wait().unwrap().success());
}

#[test]
fn follow_prints_a_repeated_error_once_then_how_often_it_came_again() {
    let served = released();
    let created = store_keys(
        &served,
        &["create", "app", "--scope", "read", "--admin", "--json"],
    );
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    let secret = created["secret"].as_str().unwrap();
    let mut child = Running(
        tool(&served)
            .args(["--key", secret, "follow", "auditor"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (out, news) = (
        lines(child.0.stdout.take().unwrap()),
        lines(child.0.stderr.take().unwrap()),
    );
    until(&out, |l| l.starts_with("You are an independent auditor."));

    // A revoked key fails every read of the label and every reconnect,
    // again and again: each error is printed once, then counted.
    store_keys(&served, &["revoke", "app", "--admin"]);
    let so_far = |l: &str| l.contains("more times so far (the label cannot be read)");
    let (line, before) = until(&news, so_far);
    assert_eq!(
        line,
        "── the same error 4 more times so far (the label cannot be read)\n"
    );
    let refusals = |text: &str, of: &str| {
        text.lines()
            .filter(|l| l.contains(of) && l.contains("HTTP 401"))
            .count()
    };
    assert_eq!(refusals(&before, "/labels/production"), 1, "{before}");
    assert!(refusals(&before, "/v1/events") <= 1, "{before}");

    // Another error ends the count: what was not said yet is, then the
    // new error in full. The retries' waits double from 250 ms: the next
    // comes within 4 s.
    std::thread::sleep(Duration::from_secs(8));
    let addr = served.addr.clone();
    drop(served);
    let (line, before) = until(&news, |l| {
        l.contains("/labels/production") && l.contains("refused")
    });
    assert!(line.contains(&format!("GET http://{addr}/")), "{line}");
    let ended = before
        .lines()
        .find(|l| l.ends_with("more times (the label cannot be read)"))
        .unwrap_or_else(|| panic!("no count of the errors before:\n{before}"));
    let times: u64 = ended
        .trim_start_matches("── the same error ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(times > 4, "{ended}");
}

/// `promptreg keys ARGS` on the server's store.
fn store_keys(served: &Served, args: &[&str]) -> String {
    let out = Command::new(get_cargo_bin("promptreg"))
        .current_dir(served.dir.path())
        .arg("keys")
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "keys {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

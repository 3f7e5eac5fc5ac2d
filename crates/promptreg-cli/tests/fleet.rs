//! A release that waits for a real fleet: `promptreg follow` processes
//! report to `promptreg serve`; `store release --wait` returns once they
//! serve the new revision, or names those that do not; a follower killed
//! is shown offline and no longer waited for.

mod support;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use insta_cmd::get_cargo_bin;
use serde_json::Value;
use support::{Served, serve, serve_logging};

/// Generous: the point is that it happens, not how fast.
const DEADLINE: Duration = Duration::from_secs(60);

/// `promptreg store ARGS` on the server's store.
fn store(served: &Served, args: &[&str]) -> Output {
    Command::new(get_cargo_bin("promptreg"))
        .current_dir(served.dir.path())
        .args(["--color", "never", "store"])
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A follower of goal-agent's `production`, reporting every `interval`.
struct Follower(Child);

impl Follower {
    fn start(served: &Served, id: &str, interval: &str) -> Follower {
        let child = Command::new(get_cargo_bin("promptreg"))
            .current_dir(served.dir.path())
            .args(["--home", ".", "--cwd=", "--color", "never"])
            .args(["--server", &format!("http://{}", served.addr)])
            .args(["--pack", "goal-agent", "follow", "auditor"])
            .args([
                "--instance-id",
                id,
                "--instance-name",
                &format!("follower {id}"),
            ])
            .args(["--report-interval", interval])
            .env_remove("PROMPTREG_KEY")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Follower(child)
    }

    fn signal(&self, signal: &str) {
        let done = Command::new("kill")
            .args([signal, &self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(done.success());
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `store fleet production --json`, until `ready` holds of it.
fn fleet_until(served: &Served, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let fleet: Value =
            serde_json::from_str(&ok(store(served, &["--json", "fleet", "production"]))).unwrap();
        if ready(&fleet) {
            return fleet;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "not within {DEADLINE:?}: {what}\n{fleet:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn state_of<'a>(fleet: &'a Value, id: &str) -> &'a str {
    fleet["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["instance"] == id)
        .and_then(|i| i["state"].as_str())
        .unwrap_or("absent")
}

/// Rewords goal-agent's auditor in the store's copy and pushes it.
fn push_edit(served: &Served, words: &str) {
    let file = served.dir.path().join("goal-agent/defaults/auditor.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let text = text.replacen("You are", words, 1);
    std::fs::write(&file, text).unwrap();
    ok(store(served, &["push", "goal-agent", "-m", "reworded"]));
}

#[test]
fn a_release_waits_for_the_fleet_and_a_killed_follower_is_shown_offline() {
    // Its log of every request (hundreds of reports) is not read.
    let served = serve_logging(&[], "info,tower_http=warn");
    ok(store(&served, &["release", "latest", "production"]));
    let quick = ["a", "b"].map(|id| Follower::start(&served, id, "300ms"));
    // `slow` reports rarely: stopped, it stays among those reporting.
    let slow = Follower::start(&served, "slow", "1h");
    fleet_until(&served, "three followers on revision 1", |f| {
        f["served"][0]["revision"] == 1 && f["served"][0]["reporting"] == 3
    });

    // `slow` frozen: a release waits for it, and says so when time is up.
    slow.signal("-STOP");
    push_edit(&served, "You really are");
    let out = store(
        &served,
        &["release", "latest", "production", "--wait", "2s"],
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        text.contains("not live within 2s: 2 of 3 instances reporting serve revision 2"),
        "{text}"
    );
    let behind: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("INSTANCE"))
        .skip(1)
        .collect();
    assert_eq!(behind.len(), 1, "{text}");
    let words = |line: &str| {
        line.split_whitespace()
            .take(6)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        words(behind[0]),
        "slow follower slow r1 server online",
        "{text}"
    );

    // Thawed, it catches up: a pack rollback waits for all three.
    slow.signal("-CONT");
    let text = ok(store(
        &served,
        &["rollback", "--label", "production", "--wait", "60s"],
    ));
    assert!(
        text.ends_with("production: revision 3 live on 3 of 3 instances\n"),
        "{text}"
    );

    // `b` killed: offline after three intervals, and a wait goes on
    // without it.
    let [a, mut b] = quick;
    b.0.kill().unwrap();
    b.0.wait().unwrap();
    let fleet = fleet_until(&served, "b offline", |f| state_of(f, "b") == "offline");
    assert_eq!(
        (state_of(&fleet, "a"), state_of(&fleet, "slow")),
        ("online", "online")
    );
    let text = ok(store(
        &served,
        &[
            "label",
            "production",
            "--revision",
            "2",
            "--wait",
            "60s",
            "--reason",
            "again",
        ],
    ));
    assert!(
        text.ends_with(
            "production: revision 4 live on 2 of 3 instances; 1 on revision 3; 1 offline\n"
        ) || text.ends_with("production: revision 4 live on 2 of 3 instances; 1 offline\n"),
        "{text}"
    );
    let fleet = fleet_until(&served, "a and slow on revision 4", |f| {
        f["served"][0]["revision"] == 4 && f["served"][0]["online"] == 2
    });
    assert_eq!(
        (fleet["offline"].as_u64(), fleet["revision"].as_u64()),
        (Some(1), Some(4))
    );

    // The table, as people read it.
    let table = ok(store(&served, &["fleet", "production"]));
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("production: revision 4 live on 2 of 3 instances"),
        "{table}"
    );
    assert!(lines[1].starts_with("INSTANCE  NAME"), "{table}");
    assert!(
        lines[2].starts_with("a         follower a     r4        server  online"),
        "{table}"
    );
    assert!(
        lines[3].starts_with("b         follower b     r3        server  offline"),
        "{table}"
    );
    drop((a, slow));
}

/// Bad wait arguments are refused before anything moves.
#[test]
fn a_wait_ratio_outside_zero_to_one_is_refused() {
    let served = serve(&[]);
    let out = store(
        &served,
        &[
            "release",
            "latest",
            "production",
            "--wait",
            "1s",
            "--wait-ratio",
            "1.5",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stderr).unwrap();
    assert!(text.contains("`1.5` is not a share from 0 to 1"), "{text}");
    let out = store(
        &served,
        &["release", "latest", "production", "--wait", "soon"],
    );
    assert!(
        String::from_utf8(out.stderr).unwrap().contains("--wait"),
        "a duration"
    );
    let revisions = ok(store(&served, &["revisions", "latest"]));
    assert!(!revisions.contains("production"));
}

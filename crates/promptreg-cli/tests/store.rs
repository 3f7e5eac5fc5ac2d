//! `promptreg store …` from outside, on SQLite and (with
//! `PROMPTREG_TEST_DATABASE_URL`, see `scripts/postgres-for-tests.sh`) on
//! PostgreSQL, in a temporary folder with copies of the example packs.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use insta_cmd::get_cargo_bin;
use serde_json::Value;
use support::{copy_dir, example};
use tempfile::TempDir;

const DATABASE_URL_VAR: &str = "PROMPTREG_TEST_DATABASE_URL";

/// Stands for the PostgreSQL half of these tests: ignored, with how to run
/// them, where this crate was built without the variable (`build.rs`).
#[test]
#[cfg_attr(
    not(promptreg_postgres),
    ignore = "the PostgreSQL half of these tests is skipped: run scripts/postgres-for-tests.sh start and set PROMPTREG_TEST_DATABASE_URL"
)]
fn postgresql_half_of_these_tests() {
    assert!(std::env::var(DATABASE_URL_VAR).is_ok_and(|url| !url.is_empty()));
}

struct Sandbox {
    root: TempDir,
    /// `--database`: the default file, or a PostgreSQL schema of its own.
    database: Option<String>,
    name: &'static str,
}

impl Sandbox {
    fn cmd(&self) -> Command {
        let mut cmd = Command::new(get_cargo_bin("promptreg"));
        cmd.current_dir(self.root.path())
            .args(["--color", "never"])
            .env("USER", "ada")
            .env_remove("NO_COLOR");
        cmd
    }

    /// `promptreg store ARGS --database …`.
    fn store(&self, args: &[&str]) -> Output {
        let mut cmd = self.cmd();
        cmd.arg("store").args(args);
        if let Some(url) = &self.database {
            cmd.args(["--database", url]);
        }
        cmd.output().unwrap()
    }

    /// `promptreg keys ARGS --database …`.
    fn keys(&self, args: &[&str]) -> Output {
        let mut cmd = self.cmd();
        cmd.arg("keys").args(args);
        if let Some(url) = &self.database {
            cmd.args(["--database", url]);
        }
        cmd.output().unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.store(args);
        assert!(
            out.status.success(),
            "{}: store {args:?}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A comparison that finds differences: exit code 1, as diff(1)'s;
    /// what it printed.
    fn differs(&self, args: &[&str]) -> String {
        let out = self.store(args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}: store {args:?}: {out:?}",
            self.name
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Fails with exit code 2; the message.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.store(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}: store {args:?}: {out:?}",
            self.name
        );
        assert!(out.stdout.is_empty());
        String::from_utf8(out.stderr).unwrap()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }
}

/// A sandbox per database: SQLite always, PostgreSQL when configured (and
/// required under `CI=true`).
fn sandboxes(test: &str) -> Vec<Sandbox> {
    let mut out = vec![sandbox("sqlite", None)];
    match std::env::var(DATABASE_URL_VAR)
        .ok()
        .filter(|v| !v.is_empty())
    {
        Some(base) => out.push(sandbox("postgres", Some(postgres_schema(&base, test)))),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{DATABASE_URL_VAR} is not set under CI=true: `{test}` must run on PostgreSQL")
        }
        None => eprintln!("{test}: PostgreSQL skipped ({DATABASE_URL_VAR} is not set)"),
    }
    out
}

fn sandbox(name: &'static str, database: Option<String>) -> Sandbox {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("home")).unwrap();
    fs::create_dir_all(root.path().join("project")).unwrap();
    for pack in ["goal-agent", "web-agent"] {
        copy_dir(&example(pack), &root.path().join(pack));
    }
    Sandbox {
        root,
        database,
        name,
    }
}

/// A fresh schema of the test server; the URL that uses it.
fn postgres_schema(base: &str, test: &str) -> String {
    let schema = format!("cli_{test}_{}", std::process::id());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let pool = sqlx::PgPool::connect(base).await.unwrap();
            sqlx::raw_sql(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .execute(&pool)
            .await
            .unwrap();
            pool.close().await;
        });
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options[search_path]={schema}")
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn push_pull_is_byte_exact_and_idempotent() {
    for sb in sandboxes("round_trip") {
        // Every file of the pack format travels, its tests, their snapshots
        // and the context file they name too; the others are named as not
        // stored.
        fs::write(sb.path("goal-agent/defaults/notes.txt"), "to do\n").unwrap();
        let out = sb.ok(&["push", "goal-agent", "-m", "import"]);
        assert!(out.starts_with("pushed goal-agent to "), "{out}");
        assert!(out.contains("20 added, 0 changed"), "{out}");
        assert!(out.contains("  added     goal-running v1\n"), "{out}");
        assert!(out.contains("  added     @tests v1\n"), "{out}");
        let not_stored = "not stored, outside the pack format (a pull does not give them back): defaults/notes.txt\n";
        assert!(out.ends_with(not_stored), "{out}");
        let again = sb.ok(&["push", "goal-agent"]);
        assert!(
            again.contains("0 added, 0 changed, 0 restored, 0 removed, 20 unchanged\n"),
            "{again}"
        );
        assert_eq!(again.lines().count(), 2, "{again}");
        assert!(again.ends_with(not_stored), "{again}");
        let json: Value = serde_json::from_str(&sb.ok(&["push", "goal-agent", "--json"])).unwrap();
        assert_eq!(
            json["not_stored"],
            serde_json::json!(["defaults/notes.txt"])
        );
        sb.ok(&["pull", "copy", "--label", "latest"]);
        fs::remove_file(sb.path("goal-agent/defaults/notes.txt")).unwrap();
        assert_eq!(
            tree(&sb.path("copy")),
            tree(&sb.path("goal-agent")),
            "{}",
            sb.name
        );
        let err = sb.fails(&["pull", "copy"]);
        assert!(err.contains("copy is not empty"), "{err}");
    }
}

/// A folder pulled earlier does not undo what someone pushed since: its
/// push is refused naming each prompt that moved and by whom, unless
/// `--force`; a folder never taken from the store may only add prompts.
#[test]
fn a_push_from_a_stale_folder_is_refused_naming_what_moved() {
    for sb in sandboxes("stale_push") {
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["pull", "mine"]);
        sb.ok(&["pull", "theirs"]);
        fs::write(sb.path("theirs/defaults/goal-stale.md"), "Theirs.\n").unwrap();
        sb.ok(&["push", "theirs", "--author", "bob"]);
        append(&sb.path("mine/defaults/goal-drafting.md"), "Mine.\n");
        let err = sb.fails(&["push", "mine"]);
        assert!(
            err.contains("`goal-stale` is at v2 by bob (the files hold v1)"),
            "{}: {err}",
            sb.name
        );
        assert!(err.contains("--force"), "{err}");
        let latest = sb.ok(&["log", "goal-stale"]);
        assert!(
            latest.contains("v2 ") && latest.contains("[latest]"),
            "{latest}"
        );
        let drafting = sb.ok(&["log", "goal-drafting"]);
        assert!(!drafting.contains("v2 "), "nothing was written: {drafting}");
        // A folder never taken from this store changes nothing it has.
        copy_dir(&example("goal-agent"), &sb.path("fresh"));
        append(&sb.path("fresh/defaults/goal-drafting.md"), "Fresh.\n");
        let err = sb.fails(&["push", "fresh"]);
        assert!(
            err.contains("`goal-drafting` is at v1 by ada (the files hold none taken from it)"),
            "{err}"
        );
        // Forced, the folder wins; it then records what it pushed, so the
        // next push from it goes through.
        let out = sb.ok(&["push", "mine", "--force"]);
        assert!(out.contains("restored  goal-stale v1"), "{out}");
        append(&sb.path("mine/defaults/goal-drafting.md"), "Mine again.\n");
        sb.ok(&["push", "mine"]);
    }
}

fn append(file: &Path, text: &str) {
    let mut all = fs::read_to_string(file).unwrap();
    all.push_str(text);
    fs::write(file, all).unwrap();
}

/// A write to the pack stopped after its commit, one file still staged:
/// a push finishes it first, so the store gets the new file, not the old.
#[test]
fn a_push_finishes_a_stopped_write_to_the_pack_first() {
    for sb in sandboxes("push_recovers") {
        let variant = sb.path("goal-agent/defaults/auditor.ja.md");
        let new = fs::read_to_string(&variant)
            .unwrap()
            .replace("監査人", "監査役");
        fs::write(
            sb.path("goal-agent/defaults/.auditor.ja.md.promptreg-tmp"),
            &new,
        )
        .unwrap();
        fs::write(
            sb.path("goal-agent/.promptreg-journal"),
            "promptreg file set 1\ndefaults/auditor.ja.md\nend\n",
        )
        .unwrap();
        sb.ok(&["push", "goal-agent"]);
        assert_eq!(fs::read_to_string(&variant).unwrap(), new, "{}", sb.name);
        assert!(!sb.path("goal-agent/.promptreg-journal").exists());
        sb.ok(&["pull", "copy", "--label", "latest"]);
        let pulled = fs::read_to_string(sb.path("copy/defaults/auditor.ja.md")).unwrap();
        assert_eq!(pulled, new, "{}", sb.name);
    }
}

#[test]
fn revisions_list_each_change_to_a_label_with_what_it_changed() {
    for sb in sandboxes("revisions") {
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production", "--reason", "first"]);
        let stale = sb.path("goal-agent/defaults/goal-stale.md");
        fs::write(&stale, "Changed.\n").unwrap();
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);
        sb.ok(&["rollback", "goal-stale", "production"]);
        let out = sb.ok(&["revisions", "production"]);
        let heads: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
        assert_eq!(heads.len(), 3, "{}: {out}", sb.name);
        assert!(heads[0].contains("  production r3  "), "{out}");
        assert!(
            heads[0].contains("  rollback  ada  rollback from 2"),
            "{out}"
        );
        assert!(heads[1].contains("  release  ada  release latest"), "{out}");
        assert!(
            heads[2].ends_with("  release  ada  release latest: first"),
            "{out}"
        );
        assert!(out.contains("\n  goal-stale v2 -> v1\n"), "{out}");
        assert!(out.contains("\n  goal-stale v1 -> v2\n"), "{out}");
        // The first release changed every entry; the others one each.
        assert_eq!(out.lines().count(), 3 + 20 + 1 + 1, "{out}");

        let json: Value =
            serde_json::from_str(&sb.ok(&["revisions", "production", "--json"])).unwrap();
        let revisions = json["revisions"].as_array().unwrap();
        assert_eq!(revisions[0]["cause"], "rollback");
        assert_eq!(
            revisions[0]["digest"], revisions[2]["digest"],
            "back to the first state"
        );
        assert_eq!(
            revisions[1]["changes"],
            serde_json::json!([{ "id": "goal-stale", "from": 1, "to": 2 }])
        );
        assert_eq!(revisions[2]["entries"]["@tests"], 1);

        let err = sb.fails(&["revisions", "staging"]);
        assert!(
            err.contains("label `staging` of pack `goal-agent` has no revisions"),
            "{err}"
        );
    }
}

#[test]
fn a_whole_pack_rolls_back_is_pinned_pulled_and_compared_by_revision() {
    for sb in sandboxes("pack_rollback") {
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);
        let running = sb.path("goal-agent/defaults/goal-running.md");
        let stale = sb.path("goal-agent/defaults/goal-stale.md");
        let first = fs::read_to_string(&running).unwrap();
        fs::write(&running, format!("{first}Verify each task.\n")).unwrap();
        fs::write(&stale, "Changed.\n").unwrap();
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);

        // The history, a revision at a time: the second release moved two
        // prompts, one line and then its moves.
        let history = sb.ok(&["history"]);
        let at = history
            .find("production r2: 2 entries  ")
            .unwrap_or_else(|| panic!("{history}"));
        let mut lines = history[at..].lines();
        assert!(
            lines.next().unwrap().ends_with("  release latest"),
            "{history}"
        );
        assert_eq!(lines.next(), Some("  goal-running: v1 -> v2"), "{history}");
        assert_eq!(lines.next(), Some("  goal-stale: v1 -> v2"), "{history}");
        let out = sb.ok(&["rollback", "--label", "production", "--reason", "bad day"]);
        assert!(
            out.starts_with("production: r2 -> r3, restoring r1\n"),
            "{}: {out}",
            sb.name
        );
        assert_eq!(
            out.lines().count(),
            3,
            "two prompts moved back together: {out}"
        );
        assert!(out.contains("goal-running production: v2 -> v1"), "{out}");
        let err = sb.fails(&["rollback", "--label", "production"]);
        assert!(err.contains("stands on its first revision"), "{err}");

        let out = sb.ok(&["label", "production", "--revision", "2", "--expect", "3"]);
        assert!(
            out.starts_with("production: r3 -> r4, restoring r2\n"),
            "{out}"
        );
        let err = sb.fails(&["label", "production", "--revision", "1", "--expect", "3"]);
        assert!(err.contains("is at revision 4, not 3"), "{err}");
        let err = sb.fails(&["label", "production", "--revision", "9"]);
        assert!(
            err.contains("has no revision 9: its revisions are 1 to 4"),
            "{err}"
        );
        let same = sb.ok(&["label", "production", "--revision", "2"]);
        assert_eq!(same, "production already holds revision 2: nothing moved\n");

        let out = sb.ok(&["pull", "old", "--label", "production", "--revision", "1"]);
        assert!(
            out.starts_with("wrote goal-agent at production r1 to old: "),
            "{out}"
        );
        assert_eq!(
            fs::read_to_string(sb.path("old/defaults/goal-running.md")).unwrap(),
            first
        );
        let diff = sb.differs(&["diff", "--revision", "r1", "2", "--label", "production"]);
        assert!(
            diff.contains("--- defaults/goal-running.md (r1)\n+++ defaults/goal-running.md (r2)\n"),
            "{diff}"
        );
        assert!(diff.contains("+++ defaults/goal-stale.md (r2)"), "{diff}");
        assert!(!diff.contains("auditor"), "only files that differ: {diff}");
        let same = sb.ok(&["diff", "--revision", "2", "4", "--label", "production"]);
        assert_eq!(same, "production: r2 and r4 hold the same files\n");
        let err = sb.fails(&["diff", "--revision", "x", "2", "--label", "production"]);
        assert!(err.contains("`x` names no revision"), "{err}");

        // A revision by the start of its digest, as `store revisions` shows
        // it; one no revision has is named.
        let listed: serde_json::Value =
            serde_json::from_str(&sb.ok(&["--json", "revisions", "production"])).unwrap();
        let r1 = listed["revisions"].as_array().unwrap().last().unwrap()["digest"]
            .as_str()
            .unwrap()
            .to_owned();
        let out = sb.ok(&[
            "pull",
            "by-digest",
            "--label",
            "production",
            "--revision",
            &r1[..8],
        ]);
        assert!(
            out.starts_with("wrote goal-agent at production r3 to by-digest: "),
            "the newest revision holding that state: {out}"
        );
        let err = sb.fails(&[
            "pull",
            "none",
            "--label",
            "production",
            "--revision",
            "00000000",
        ]);
        assert!(
            err.contains("has no revision of digest `00000000`"),
            "{err}"
        );
        let err = sb.fails(&["label", "production", "--revision", "latest"]);
        assert!(err.contains("`latest` names no revision"), "{err}");

        // A release decided on revision 4 after another moved the label.
        fs::write(&stale, "Changed again.\n").unwrap();
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production", "--expect", "4"]);
        let err = sb.fails(&["release", "latest", "production", "--expect", "4"]);
        assert!(
            err.contains("label `production` is at revision 5, not 4 as expected"),
            "{err}"
        );
    }
}

#[test]
fn a_gated_label_refuses_a_failing_state_unless_an_admin_forces_it() {
    for sb in sandboxes("gates") {
        let manifest = sb.path("goal-agent/promptreg.toml");
        let text = fs::read_to_string(&manifest).unwrap();
        fs::write(
            &manifest,
            format!("{text}\n[release]\ngated = [\"production\"]\n"),
        )
        .unwrap();
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);
        let listed = sb.ok(&["revisions", "production", "--json"]);
        let json: Value = serde_json::from_str(&listed).unwrap();
        let tests = json["revisions"][0]["tests"].as_str().unwrap().to_owned();
        assert!(tests.ends_with("cases passed"), "{}: {tests}", sb.name);

        fs::write(
            sb.path("goal-agent/tests/strict.toml"),
            "prompt = \"auditor\"\n[[case]]\nname = \"strict\"\ncontains = \"never written\"\n",
        )
        .unwrap();
        sb.ok(&["push", "goal-agent"]);
        let err = sb.fails(&["release", "latest", "production"]);
        assert!(err.contains("label `production` is gated: 1 of "), "{err}");
        assert!(
            err.contains("FAIL auditor strict (en, tests/strict.toml)"),
            "{err}"
        );
        assert!(err.contains("contains"), "{err}");
        assert!(
            err.contains("an admin forces the move with --force --admin --reason TEXT"),
            "{err}"
        );
        let err = sb.fails(&["release", "latest", "production", "--force", "--admin"]);
        assert!(err.contains("needs a reason"), "{err}");
        let err = sb.fails(&[
            "release",
            "latest",
            "production",
            "--force",
            "--reason",
            "hotfix",
        ]);
        assert!(
            err.contains("needs the admin permission: run it with --admin"),
            "{err}"
        );
        sb.ok(&[
            "release",
            "latest",
            "production",
            "--force",
            "--admin",
            "--reason",
            "hotfix",
        ]);
        let listed = sb.ok(&["revisions", "production", "--json"]);
        let json: Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(json["revisions"][0]["forced"], true, "{listed}");
        assert!(
            json["revisions"][0]["tests"]
                .as_str()
                .unwrap()
                .ends_with("forced by an admin")
        );
    }
}

#[test]
fn a_label_that_keeps_its_contracts_refuses_a_breaking_release_unless_an_admin_forces_it() {
    for sb in sandboxes("stable_contract") {
        let manifest = sb.path("goal-agent/promptreg.toml");
        let text = fs::read_to_string(&manifest).unwrap();
        fs::write(
            &manifest,
            format!("{text}\n[release]\nstable_contract = [\"production\"]\n"),
        )
        .unwrap();
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);
        sb.ok(&["release", "latest", "staging"]);
        // The auditor's verdict is no longer an enum of PASS and FAIL: a
        // client that matched on it may break, and an application that
        // reads `tasks` may find none.
        let auditor = sb.path("goal-agent/defaults/auditor.md");
        let text = fs::read_to_string(&auditor).unwrap();
        let edited = text
            .replace("enum: [PASS, FAIL]", "enum: [PASS]")
            .replace("required: [verdict, tasks]", "required: [verdict]");
        assert_ne!(edited, text);
        fs::write(&auditor, edited).unwrap();
        sb.ok(&["push", "goal-agent"]);
        let err = sb.fails(&["release", "latest", "production"]);
        assert!(
            err.contains("label `production` keeps its prompts' contracts stable"),
            "{}: {err}",
            sb.name
        );
        assert!(
            err.contains(
                "auditor v1 -> v2: output `audit_verdict`, property `tasks` became optional"
            ),
            "{err}"
        );
        assert!(
            err.contains("property `verdict` value \"FAIL\" removed"),
            "{err}"
        );
        assert!(err.contains("(--force --admin --reason TEXT)"), "{err}");
        // One prompt moved by hand meets the same rule.
        let err = sb.fails(&["label", "auditor", "production", "2", "--expect", "1"]);
        assert!(err.contains("nothing moved"), "{err}");
        // A label that keeps nothing moves, and says what it broke.
        let out = sb.ok(&["release", "latest", "staging"]);
        assert!(
            out.contains("contract of auditor v1 -> v2: breaking: output `audit_verdict`, property `tasks` became optional"),
            "{out}"
        );
        let err = sb.fails(&[
            "release",
            "latest",
            "production",
            "--force",
            "--reason",
            "x",
        ]);
        assert!(err.contains("run it with --admin"), "{err}");
        let out = sb.ok(&[
            "release",
            "latest",
            "production",
            "--force",
            "--admin",
            "--reason",
            "the verdict is PASS or absent now",
        ]);
        assert!(
            out.contains("contract of auditor v1 -> v2: breaking"),
            "{out}"
        );
        let listed = sb.ok(&["revisions", "production"]);
        assert!(
            listed.contains("  breaking, forced: auditor v1 -> v2: output `audit_verdict`, property `tasks` became optional"),
            "{listed}"
        );
        let listed = sb.ok(&["revisions", "production", "--json"]);
        let json: Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(
            json["revisions"][0]["breaking"].as_array().map(Vec::len),
            Some(2),
            "{listed}"
        );
        assert_eq!(json["revisions"][1]["breaking"], serde_json::json!([]));
    }
}

/// The author `store log --json` shows for the newest version of `id`.
fn author_of(sb: &Sandbox, id: &str) -> Value {
    let out = sb
        .cmd()
        .args(["--json", "store", "log", id])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["versions"][0]["author"].clone()
}

#[test]
fn the_author_is_the_flag_then_user_then_the_login_name() {
    let sb = sandbox("sqlite", None);
    let login = Command::new("id").arg("-un").output().unwrap();
    let login = String::from_utf8(login.stdout).unwrap().trim().to_owned();
    // Without $USER (cron, containers): the login name, not `unknown`.
    let out = sb
        .cmd()
        .env_remove("USER")
        .env_remove("USERNAME")
        .env_remove("LOGNAME")
        .args(["store", "push", "goal-agent"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(author_of(&sb, "goal-running"), login.as_str());
    // `--author`, then PROMPTREG_AUTHOR, win over $USER.
    let stale = sb.path("goal-agent/defaults/goal-stale.md");
    fs::write(&stale, "The checkpoint is old.\n").unwrap();
    sb.ok(&["push", "goal-agent", "--author", "ci-bot"]);
    assert_eq!(author_of(&sb, "goal-stale"), "ci-bot");
    fs::write(&stale, "The checkpoint is older.\n").unwrap();
    let out = sb
        .cmd()
        .env("PROMPTREG_AUTHOR", "release-job")
        .args(["store", "push", "goal-agent"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(author_of(&sb, "goal-stale"), "release-job");
}

#[test]
fn labels_conflicts_rollback_diff_and_history() {
    for sb in sandboxes("labels") {
        sb.ok(&["push", "web-agent"]);
        let ja = sb.path("web-agent/defaults/webagent-narrator.system.ja.md");
        let text = fs::read_to_string(&ja).unwrap();
        fs::write(
            &ja,
            text.replacen("アシスタントです。", "アシスタントでございます。", 1),
        )
        .unwrap();
        let out = sb.ok(&["push", "web-agent", "-m", "politer Japanese"]);
        assert!(
            out.contains("  changed   webagent-narrator.system v2\n"),
            "{out}"
        );

        let id = "webagent-narrator.system";
        sb.ok(&[
            "label",
            id,
            "production",
            "1",
            "--expect",
            "none",
            "--reason",
            "first release",
        ]);
        let err = sb.fails(&["label", id, "production", "2", "--expect", "none"]);
        assert!(err.contains("label `production` of `webagent-narrator.system` points at version 1, not nothing as expected"), "{err}");
        assert!(err.contains("retry with --expect 1"), "{err}");
        sb.ok(&["label", id, "production", "2", "--expect", "1"]);

        let log = sb.ok(&["log", id]);
        assert!(
            log.contains("v2")
                && log.contains("[latest, production]")
                && log.contains("politer Japanese"),
            "{log}"
        );

        let json = sb.differs(&["diff", id, "1", "production", "--json"]);
        assert!(json.contains("\"changed\": true"), "{json}");
        let diff = sb.differs(&["diff", id, "1", "production", "--locale", "ja"]);
        assert!(
            diff.contains("--- defaults/webagent-narrator.system.ja.md (v1)"),
            "{diff}"
        );
        assert!(
            diff.contains("+あなたは") && diff.contains("でございます"),
            "{diff}"
        );
        assert!(!diff.contains("zh-TW"), "{diff}");
        let same = sb.ok(&["diff", id, "1", "2", "--locale", "zh-TW"]);
        assert!(
            same.contains("v1 and v2 have the same defaults/webagent-narrator.system.zh-TW.md"),
            "{same}"
        );
        // Versions as `store log` prints them.
        assert_eq!(
            sb.differs(&["diff", id, "v1", "v2"]),
            sb.differs(&["diff", id, "1", "2"])
        );

        let back = sb.ok(&["rollback", id, "production", "--reason", "too long"]);
        assert!(
            back.contains("production: v2 -> v1  ada  rollback from 2: too long"),
            "{back}"
        );
        // A second rollback would go back past the version the label was
        // created on.
        let past = sb.fails(&["rollback", id, "production"]);
        assert!(
            past.contains("back at version 1, where it was created"),
            "{past}"
        );

        let history = sb.ok(&["history", id]);
        let moves: Vec<&str> = history
            .lines()
            .filter(|l| l.contains("production"))
            .collect();
        assert_eq!(moves.len(), 3, "{history}");
        assert!(
            moves[0].ends_with("production r1: - -> v1  ada  first release"),
            "{history}"
        );

        let json: Value = serde_json::from_str(&{
            let mut cmd = sb.cmd();
            cmd.args(["--json", "store", "log", id]);
            if let Some(url) = &sb.database {
                cmd.args(["--database", url]);
            }
            String::from_utf8(cmd.output().unwrap().stdout).unwrap()
        })
        .unwrap();
        assert_eq!(json["versions"][0]["version"], 2);
        assert_eq!(json["versions"][1]["labels"][0], "production");
    }
}

#[test]
fn protected_labels_need_admin_and_releases_move_everything() {
    for sb in sandboxes("protected") {
        sb.ok(&["push", "goal-agent"]);
        let err = sb.fails(&["protect", "production"]);
        assert!(err.contains("needs --admin"), "{err}");
        sb.ok(&["protect", "production", "--admin"]);
        let err = sb.fails(&["release", "latest", "production"]);
        assert!(
            err.contains("ada may not move the protected label `production`: it needs the admin permission: run it with --admin"),
            "{err}"
        );
        let out = sb.ok(&["release", "latest", "production", "--admin"]);
        // Every entry moves: the manifest, the tests and 18 prompts.
        assert_eq!(out.lines().count(), 20, "{out}");
        sb.ok(&["pull", "prod", "--label", "production"]);
        let again = sb.ok(&["release", "latest", "production", "--admin"]);
        assert!(again.contains("nothing moved"), "{again}");
    }
}

#[test]
fn a_label_on_one_prompt_is_read_on_that_prompt_and_a_pull_at_it_says_why_not() {
    for sb in sandboxes("one_prompt_label") {
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["label", "goal-running", "staging", "1", "--expect", "none"]);
        let log = sb.ok(&["log", "goal-running"]);
        assert!(log.contains("staging"), "{log}");
        let diff = sb.ok(&["diff", "goal-running", "staging", "latest"]);
        assert_eq!(diff, "goal-running: v1 and v1 have the same files\n");
        let err = sb.fails(&["pull", "copy", "--label", "staging"]);
        assert!(
            err.contains("only `goal-running` carries")
                && err.contains("promptreg store release latest staging"),
            "{err}"
        );
        assert!(!sb.path("copy").exists(), "a refused pull writes nothing");
        let err = sb.fails(&["pull", "copy", "--label", "nowhere"]);
        assert!(err.contains("nothing carries it"), "{err}");
    }
}

#[test]
fn bad_input_is_one_clear_error_with_exit_code_2() {
    for sb in sandboxes("bad_input") {
        let err = sb.fails(&["log", "goal-running"]);
        assert!(
            err.contains("is empty: run `promptreg store push DIR` first"),
            "{err}"
        );
        // A pack failing check: its diagnostics, and nothing written.
        fs::write(sb.path("goal-agent/defaults/goal-runing.md"), "typo\n").unwrap();
        let err = sb.fails(&["push", "goal-agent"]);
        assert!(
            err.contains("goal-runing.md") && err.contains("did you mean `goal-running`?"),
            "{err}"
        );
        assert!(err.contains("nothing was pushed"), "{err}");
        assert!(sb.fails(&["log", "goal-running"]).contains("is empty"));
        fs::remove_file(sb.path("goal-agent/defaults/goal-runing.md")).unwrap();
        sb.ok(&["push", "goal-agent"]);
        for (args, expected) in [
            (
                &["log", "goal-runing"][..],
                "has no prompt `goal-runing` (did you mean `goal-running`?)",
            ),
            (
                &["label", "goal-running", "Prod", "1", "--expect", "none"],
                "invalid label `Prod`: `P` is not allowed",
            ),
            (
                &["label", "goal-running", "prod", "7", "--expect", "none"],
                "has no version 7",
            ),
            (
                &["label", "goal-running", "prod", "1", "--expect", "one"],
                "--expect one: expected the version number",
            ),
            (
                &["label", "goal-running", "latest", "1", "--expect", "1"],
                "label `latest` follows pushes",
            ),
            (
                &["diff", "goal-running", "1", "staging"],
                "has no label `staging`",
            ),
            (&["diff", "goal-running", "0", "1"], "invalid version `0`"),
            (
                &["rollback", "goal-running", "production"],
                "`goal-running` has no label `production` to roll back",
            ),
            (
                &["log", "goal-running", "--name", "web-agent"],
                "has no pack `web-agent`; it has `goal-agent`",
            ),
            (&["push", "nowhere"], "cannot read nowhere/promptreg.toml"),
        ] {
            let err = sb.fails(args);
            assert!(
                err.starts_with("error: ") && err.contains(expected),
                "{}: {args:?}: {err}",
                sb.name
            );
        }
    }
}

/// What the store does not keep: a NUL byte in a file (which `check`
/// refuses on disk) and a message past the limit; nothing is written.
#[test]
fn a_nul_byte_or_an_overlong_message_is_refused_by_push() {
    for sb in sandboxes("push_text") {
        let file = sb.path("goal-agent/defaults/goal-running.md");
        let text = fs::read(&file).unwrap();
        fs::write(&file, [&text[..], b"Run.\0\n"].concat()).unwrap();
        let err = sb.fails(&["push", "goal-agent"]);
        let named = format!(
            "goal-agent/defaults/goal-running.md` holds a NUL byte at byte offset {}",
            text.len() + 4
        );
        assert!(err.contains(&named), "{}: {err}", sb.name);
        fs::write(&file, &text).unwrap();
        let long = "m".repeat(5000);
        let err = sb.fails(&["push", "goal-agent", "-m", &long]);
        assert!(
            err.contains("the message is 5000 bytes long, more than the 4096"),
            "{}: {err}",
            sb.name
        );
        assert!(sb.fails(&["log", "goal-running"]).contains("is empty"));
    }
}

#[test]
fn a_file_that_is_not_a_database_is_named() {
    let sb = sandbox("sqlite", None);
    fs::write(
        sb.path("promptreg.db"),
        "not a database, just some text that is long enough\n".repeat(100),
    )
    .unwrap();
    let err = sb.fails(&["log", "goal-running"]);
    assert!(
        err.contains("promptreg.db is not a promptreg store"),
        "{err}"
    );
}

/// `kill -9` of a push at many points: afterwards the store opens, holds
/// whole versions only, and the push can be repeated.
#[test]
fn a_push_killed_midway_leaves_whole_versions_and_can_be_repeated() {
    for sb in sandboxes("killed_push") {
        write_big_pack(&sb.path("big"), 1500);
        let mut killed_midway = 0;
        for delay_ms in [5, 20, 40, 80, 120, 160, 240, 320] {
            killed_midway += usize::from(killed_after(&sb, &["push", "big"], delay_ms));
            // The store opens and every version is whole.
            let log = sb.store(&["log", "p0000"]);
            let text = String::from_utf8_lossy(&log.stderr);
            assert!(
                log.status.success() || text.contains("is empty"),
                "{}: after {delay_ms} ms: {text}",
                sb.name
            );
            verify(&sb);
            // Change one prompt for the next round, so pushes keep writing.
            fs::write(
                sb.path("big/defaults/p0000.md"),
                format!("Round {delay_ms}.\n"),
            )
            .unwrap();
        }
        assert!(
            killed_midway > 0,
            "{}: no push was still running when killed",
            sb.name
        );
        let out = sb.ok(&["push", "big"]);
        assert!(out.starts_with("pushed big"), "{out}");
        sb.ok(&["pull", "copy"]);
        assert_eq!(tree(&sb.path("copy")), tree(&sb.path("big")), "{}", sb.name);
        verify(&sb);
    }
}

/// `kill -9` of a release, and of a pack rollback, of 1,500 prompts at
/// many points: afterwards the label holds exactly its newest revision,
/// the state before or the state after, never a mix.
#[test]
fn a_release_or_pack_rollback_killed_midway_leaves_one_revision_in_force() {
    for sb in sandboxes("killed_release") {
        write_big_pack(&sb.path("big"), 1500);
        sb.ok(&["push", "big"]);
        sb.ok(&["release", "latest", "production"]);
        for i in 0..1500 {
            fs::write(
                sb.path(&format!("big/defaults/p{i:04}.md")),
                format!("Second {i}.\n"),
            )
            .unwrap();
        }
        sb.ok(&["push", "big"]);
        let mut killed_midway = 0;
        for delay_ms in [10, 40, 80, 120, 160, 240, 320, 480] {
            // Forward when production holds v1 everywhere, back otherwise.
            let at_first = newest_production(&sb).values().all(|&v| v == 1);
            let args: &[&str] = match at_first {
                true => &["release", "latest", "production"],
                false => &["rollback", "--label", "production"],
            };
            killed_midway += usize::from(killed_after(&sb, args, delay_ms));
            let newest = newest_production(&sb);
            let versions: std::collections::BTreeSet<u64> = newest
                .iter()
                .filter(|(e, _)| e.starts_with('p'))
                .map(|(_, &v)| v)
                .collect();
            assert_eq!(
                versions.len(),
                1,
                "{}: after {delay_ms} ms, a mix: {versions:?}",
                sb.name
            );
            // What the label serves is that revision, entry by entry.
            run_on_store(&sb, |store| async move {
                let production = promptreg_store::Label::new("production").unwrap();
                let newest = store.revisions("big", &production).await.unwrap()[0].number;
                assert_eq!(
                    store.checkout("big", &production).await.unwrap(),
                    store
                        .checkout_revision("big", &production, newest)
                        .await
                        .unwrap(),
                );
            });
        }
        assert!(
            killed_midway > 0,
            "{}: nothing was still running when killed",
            sb.name
        );
    }
}

/// Runs `store ARGS` and kills it (SIGKILL) after `delay_ms`: whether it
/// was still running then.
fn killed_after(sb: &Sandbox, args: &[&str], delay_ms: u64) -> bool {
    let mut cmd = sb.cmd();
    cmd.arg("store")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(url) = &sb.database {
        cmd.args(["--database", url]);
    }
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(delay_ms));
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    running
}

/// The entries of production's newest revision, with their versions.
fn newest_production(sb: &Sandbox) -> std::collections::BTreeMap<String, u64> {
    let listed: Value =
        serde_json::from_str(&sb.ok(&["--json", "revisions", "production"])).unwrap();
    serde_json::from_value(listed["revisions"][0]["entries"].clone()).unwrap()
}

/// Every version's files match its content address.
fn verify(sb: &Sandbox) {
    run_on_store(sb, |store| async move {
        if store.packs().await.unwrap().contains(&"big".to_owned()) {
            store.verify("big").await.unwrap();
        }
    });
}

/// Runs `check` on the sandbox's store, through the library.
fn run_on_store<F: std::future::Future<Output = ()>>(
    sb: &Sandbox,
    check: impl FnOnce(promptreg_store::Store) -> F,
) {
    let url = sb
        .database
        .clone()
        .unwrap_or_else(|| sb.path("promptreg.db").to_str().unwrap().to_owned());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            check(promptreg_store::Store::open(&url).await.unwrap()).await;
        });
}

fn keys_ok(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.keys(args);
    assert!(
        out.status.success(),
        "{}: keys {args:?}: {}",
        sb.name,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn keys_fail(sb: &Sandbox, args: &[&str]) -> String {
    let out = sb.keys(args);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}: keys {args:?}: {out:?}",
        sb.name
    );
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn keys_are_created_with_a_secret_shown_once_listed_and_revoked() {
    for sb in sandboxes("keys") {
        sb.ok(&["push", "goal-agent"]);
        let err = keys_fail(&sb, &["create", "ci", "--scope", "write"]);
        assert!(err.contains("creating an API key needs --admin"), "{err}");
        let out = keys_ok(
            &sb,
            &[
                "create",
                "ci",
                "--scope",
                "write",
                "--pack",
                "goal-agent",
                "--admin",
            ],
        );
        assert!(
            out.starts_with("created API key `ci` (write on pack goal-agent) in "),
            "{out}"
        );
        assert!(out.contains("will not be shown again"), "{out}");
        let secret = out
            .lines()
            .find(|l| l.starts_with("prk_"))
            .unwrap_or_else(|| panic!("no secret in {out}"))
            .to_owned();
        let json: Value = serde_json::from_str(&keys_ok(
            &sb,
            &["--json", "create", "reader", "--scope", "read", "--admin"],
        ))
        .unwrap();
        assert_eq!(json["key"]["scope"], "read", "{json}");
        assert_eq!(json["key"]["pack"], Value::Null, "{json}");
        assert!(json["secret"].as_str().unwrap().starts_with("prk_"));

        let list = keys_ok(&sb, &["list"]);
        assert!(
            list.starts_with("NAME             SCOPE  PACK          CREATED"),
            "a header row names the columns: {list}"
        );
        assert!(
            list.lines()
                .any(|l| l.starts_with("ci ") && l.contains("write") && l.contains("goal-agent")),
            "{list}"
        );
        assert!(
            list.lines()
                .any(|l| l.starts_with("reader ") && l.contains(" * ")),
            "{list}"
        );
        let listed = keys_ok(&sb, &["list", "--json"]);
        assert!(
            !listed.contains(&secret[4..]) && !listed.contains("secret"),
            "{listed}"
        );
        let listed: Value = serde_json::from_str(&listed).unwrap();
        assert_eq!(listed[0]["name"], "ci");
        assert_eq!(listed[0]["created_by"], "ada");
        assert_eq!(listed[0]["revoked_at"], Value::Null);

        for (args, expected) in [
            (
                &["create", "ci", "--scope", "read", "--admin"][..],
                "an API key named `ci` exists already",
            ),
            (
                &["create", "CI", "--scope", "read", "--admin"],
                "invalid API key name `CI`",
            ),
            (
                &["create", "x", "--scope", "owner", "--admin"],
                "invalid value 'owner'",
            ),
            (
                &[
                    "create", "x", "--scope", "read", "--pack", "nowhere", "--admin",
                ],
                "has no pack `nowhere`",
            ),
            (&["revoke", "ci"], "revoking an API key needs --admin"),
            (&["revoke", "nobody", "--admin"], "no API key `nobody`"),
        ] {
            let err = keys_fail(&sb, args);
            assert!(err.contains(expected), "{}: {args:?}: {err}", sb.name);
        }

        let secret_for_check = secret.clone();
        run_on_store(&sb, |store| async move {
            let key = store.authenticate(&secret_for_check).await.unwrap();
            assert_eq!(key.actor().name, "key:ci");
        });
        let out = keys_ok(&sb, &["revoke", "ci", "--admin"]);
        assert!(out.starts_with("API key `ci` is revoked (since "), "{out}");
        let list = keys_ok(&sb, &["list", "--pack", "web-agent"]);
        assert!(!list.contains("ci ") && list.contains("reader"), "{list}");
        let list = keys_ok(&sb, &["list"]);
        assert!(
            list.lines()
                .any(|l| l.starts_with("ci ") && l.contains("revoked 20")),
            "{list}"
        );
        run_on_store(&sb, |store| async move {
            let err = store.authenticate(&secret).await.unwrap_err();
            assert_eq!(err.kind(), promptreg_store::ErrorKind::KeyRevoked);
        });
    }
}

fn write_big_pack(dir: &Path, n: usize) {
    fs::create_dir_all(dir.join("defaults")).unwrap();
    let keys: Vec<String> = (0..n).map(|i| format!("\"p{i:04}\"")).collect();
    fs::write(
        dir.join("promptreg.toml"),
        format!(
            "name = \"big\"\nkeys = [{}]\n[user]\nprompts_dir = \".big/prompts\"\n",
            keys.join(", ")
        ),
    )
    .unwrap();
    for i in 0..n {
        fs::write(
            dir.join(format!("defaults/p{i:04}.md")),
            format!("You are assistant {i}.\n"),
        )
        .unwrap();
        fs::write(
            dir.join(format!("defaults/p{i:04}.ja.md")),
            format!("あなたはアシスタント{i}です。\n"),
        )
        .unwrap();
    }
}

#[test]
fn a_push_over_the_file_limits_names_the_limit_and_the_count_and_writes_nothing() {
    for sb in sandboxes("file_limits") {
        // `auditor` has its default and a Japanese variant.
        let err = sb.fails(&["push", "goal-agent", "--max-files-per-prompt", "1"]);
        assert!(
            err.contains("prompt `auditor` has 2 files, more than the limit of 1 file per prompt"),
            "{err}"
        );
        assert!(err.contains("--max-files-per-prompt"), "{err}");
        let err = sb.fails(&["push", "goal-agent", "--max-files-per-pack", "3"]);
        assert!(
            err.contains("files, more than the limit of 3 files per pack"),
            "{err}"
        );
        assert!(sb.fails(&["log", "goal-running"]).contains("is empty"));
        sb.ok(&["push", "goal-agent"]);
    }
}

/// `store canary`: a split starts from `latest`, its share changes, it is
/// shown, refused when a second starts, and promoted as production's next
/// revision; an abort leaves production as it was; bad shares and
/// revisions are refused naming what is valid.
#[test]
fn canary_starts_raises_shows_promotes_and_aborts_a_split() {
    for sb in sandboxes("canary") {
        sb.ok(&["push", "goal-agent"]);
        sb.ok(&["release", "latest", "production"]);
        let file = sb.path("goal-agent/defaults/auditor.md");
        let text = fs::read_to_string(&file).unwrap();
        fs::write(&file, text.replacen("You are", "You really are", 1)).unwrap();
        sb.ok(&["push", "goal-agent", "-m", "reworded"]);

        let started = sb.ok(&[
            "canary",
            "production",
            "--from",
            "latest",
            "--percent",
            "10",
            "--reason",
            "try it",
        ]);
        let first = started.lines().next().unwrap();
        assert_eq!(
            first, "production: 10% on latest r2 (split 1, running)",
            "{}: {started}",
            sb.name
        );
        assert!(started.contains("start 10%  ada  try it"), "{started}");
        let refused = sb.fails(&["canary", "production", "--from", "latest", "--percent", "5"]);
        assert!(
            refused.contains("runs split 1 already (10%, started by ada)"),
            "{refused}"
        );
        let raised = sb.ok(&["canary", "production", "--percent", "25.5", "--expect", "1"]);
        assert!(
            raised.starts_with("production: 25.5% on latest r2 (split 1, running)"),
            "{raised}"
        );
        let shown: Value =
            serde_json::from_str(&sb.ok(&["--json", "canary", "production"])).unwrap();
        assert_eq!(
            (shown["percent"].as_f64(), shown["state"].as_str()),
            (Some(25.5), Some("running"))
        );

        let promoted = sb.ok(&["canary", "production", "--promote", "--reason", "good"]);
        assert!(
            promoted.starts_with("production: 100% on latest r2 (split 1, promoted)"),
            "{promoted}"
        );
        assert!(
            promoted.contains("production is at revision 2"),
            "{promoted}"
        );
        let revisions = sb.ok(&["revisions", "production"]);
        assert!(
            revisions
                .lines()
                .next()
                .unwrap()
                .contains("production r2  "),
            "{revisions}"
        );
        assert!(
            revisions.contains(" promote  ada  promote split 1: good"),
            "{revisions}"
        );
        assert_eq!(
            sb.ok(&["canary", "production"]),
            "production: no split running (start one with --from LABEL --percent P)\n"
        );

        // An abort serves production's own state; bad input is refused.
        sb.ok(&["canary", "production", "--revision", "1", "--percent", "50"]);
        let aborted = sb.ok(&["canary", "production", "--abort", "--reason", "no"]);
        assert!(
            aborted.starts_with("production: 0% on production r1 (split 2, aborted)"),
            "{aborted}"
        );
        assert!(
            sb.ok(&["revisions", "production"])
                .lines()
                .next()
                .unwrap()
                .contains("production r2  ")
        );
        let late = sb.fails(&["canary", "production", "--promote", "--expect", "2"]);
        assert!(late.contains("split 2 was aborted by ada"), "{late}");
        let missing = sb.fails(&["canary", "production", "--revision", "9", "--percent", "5"]);
        assert!(
            missing.contains("no revision 9: its revisions are 1 to 2"),
            "{missing}"
        );
        let out = sb.store(&[
            "canary",
            "production",
            "--from",
            "latest",
            "--percent",
            "101",
        ]);
        let text = String::from_utf8(out.stderr).unwrap();
        assert!(
            text.contains("the share `101` is not a percentage from 0 to 100"),
            "{text}"
        );
        let share = sb.fails(&["canary", "production", "--from", "latest"]);
        assert!(
            share.contains("needs the share its candidate serves: --percent P"),
            "{share}"
        );
    }
}

//! `promptreg l10n`: recording a variant as current, coverage as data, and
//! what an export and an import refuse (the book's translations page runs the happy path).

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use insta_cmd::get_cargo_bin;
use serde_json::Value;
use support::{copy_dir, example};

/// A copy of the goal-agent pack, and `promptreg --pack` on it.
fn pack() -> (tempfile::TempDir, impl Fn(&[&str]) -> (i32, String, String)) {
    let root = tempfile::tempdir().unwrap();
    copy_dir(&example("goal-agent"), &root.path().join("goal-agent"));
    let dir = root.path().to_path_buf();
    let run = move |args: &[&str]| {
        let out = Command::new(get_cargo_bin("promptreg"))
            .current_dir(&dir)
            .args(["--pack", "goal-agent", "--home", ".", "--cwd="])
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    (root, run)
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from} not in {}", path.display());
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn mark_current_records_the_source_and_says_what_it_was() {
    let (root, run) = pack();
    let default = root.path().join("goal-agent/defaults/auditor.md");
    edit(
        &default,
        "independent auditor",
        "independent, strict auditor",
    );
    let (code, stdout, _) = run(&["--json", "l10n", "status", "--locale", "ja"]);
    assert_eq!(code, 0);
    let status: Value = serde_json::from_str(&stdout).unwrap();
    let ja = &status["locales"][0];
    assert_eq!(
        (ja["locale"].as_str(), ja["stale"].as_u64()),
        (Some("ja"), Some(1))
    );
    let auditor = ja["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["prompt"] == "auditor")
        .unwrap();
    assert_eq!(auditor["state"], "stale");
    assert_eq!(auditor["serves"], "ja");
    assert_eq!(auditor["step"], "exact");
    let (code, explained, stderr) = run(&["explain", "auditor", "--locale", "ja"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        explained.contains("locale variant `ja` (defaults/auditor.ja.md): the render locale `ja` [stale: its default changed since it was translated"),
        "{explained}"
    );

    let (code, stdout, stderr) = run(&["--json", "l10n", "mark-current", "auditor", "ja"]);
    assert_eq!(code, 0, "{stderr}");
    let marked: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(marked["was"], "stale");
    let (_, stdout, _) = run(&["--json", "check"]);
    let check: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(check["warnings"], 0, "{check}");

    // What cannot be marked, and why.
    let (code, _, stderr) = run(&["l10n", "mark-current", "goal-stale", "ja"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`goal-stale` has no `ja` variant; create"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["l10n", "mark-current", "nothing", "ja"]);
    assert!(
        code != 0 && stderr.contains("the pack has no prompt `nothing`"),
        "{stderr}"
    );
}

#[test]
fn an_import_for_another_locale_or_an_edited_source_writes_nothing() {
    let (root, run) = pack();
    let (code, xliff, stderr) = run(&["l10n", "export", "--locale", "ja", "--format", "xliff"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        xliff.contains("<ph id=\"1\" dataRef=\"d1\" disp=\"{{ goal_id }}\"/>"),
        "{xliff}"
    );
    let file = root.path().join("ja.xlf");
    let variant = root.path().join("goal-agent/defaults/goal-running.ja.md");
    let before = fs::read_to_string(&variant).unwrap();

    fs::write(&file, xliff.replace("trgLang=\"ja\"", "trgLang=\"zh-TW\"")).unwrap();
    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf", "--locale", "ja"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("this file translates into `zh-TW`, not `ja`"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");

    // A translator's tool that edits the source as well as the target.
    let edited = xliff.replacen(
        "You are working on an active goal.",
        "You work on a goal.",
        1,
    );
    fs::write(&file, edited).unwrap();
    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("unit `goal-running:body`: its source changed since the export, at character 5: the file has \"You work on a goal."),
        "{stderr}"
    );
    // Shown where they differ, not cut at a prefix they share.
    assert!(
        stderr.contains("the default now \"You are working on an active goal."),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&variant).unwrap(), before);

    // Not a translation file at all.
    fs::write(&file, "<xliff version=\"2.0\"><file").unwrap();
    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("ja.xlf"), "{stderr}");
}

#[test]
fn an_import_larger_than_the_limit_is_refused_unread() {
    let (root, run) = pack();
    let (code, xliff, stderr) = run(&["l10n", "export", "--locale", "ja", "--format", "xliff"]);
    assert_eq!(code, 0, "{stderr}");
    let variant = root.path().join("goal-agent/defaults/goal-running.ja.md");
    let before = fs::read_to_string(&variant).unwrap();
    // A translation that changes the variant, padded past 16 MiB.
    let translated = xliff.replacen("タスクリスト", "タスク一覧", 1);
    assert_ne!(translated, xliff);
    let padded = format!("{translated}{}", " ".repeat(16 * 1024 * 1024));
    fs::write(root.path().join("ja.xlf"), padded).unwrap();

    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("ja.xlf is larger than 16777216 bytes, the most `l10n import` reads: nothing was written; give `--max-file-size`"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&variant).unwrap(), before);

    let (code, stdout, stderr) = run(&["l10n", "import", "ja.xlf", "--max-file-size", "32MiB"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("goal-running.ja.md"), "{stdout}");
}

#[test]
fn an_import_warns_about_bidi_controls_in_a_translation() {
    let (root, run) = pack();
    let (code, xliff, stderr) = run(&["l10n", "export", "--locale", "ja", "--format", "xliff"]);
    assert_eq!(code, 0, "{stderr}");
    let translated = xliff.replacen("タスクリスト", "タスク\u{202e}リスト", 1);
    assert_ne!(translated, xliff);
    fs::write(root.path().join("ja.xlf"), translated).unwrap();
    let (code, stdout, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "the translation holds 1 bidirectional-text control character (the first U+202E)"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains('\u{202e}'), "{stdout}");
    let (_, check, _) = run(&["check"]);
    assert!(check.contains("bidirectional-text control"), "{check}");
}

/// The names a write to the pack folder stages or journals, left in it.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            found.extend(leftovers(&entry.path()));
        } else if name.contains("promptreg-tmp") || name.contains("promptreg-journal") {
            found.push(entry.path().display().to_string());
        }
    }
    found
}

/// Two translations changed in one file: auditor's and goal-running's.
fn edited_export(run: &impl Fn(&[&str]) -> (i32, String, String)) -> String {
    let (code, xliff, stderr) = run(&["l10n", "export", "--locale", "ja", "--format", "xliff"]);
    assert_eq!(code, 0, "{stderr}");
    let edited = xliff
        .replacen(
            "あなたは独立した監査人です",
            "あなたは独立した監査役です",
            1,
        )
        .replacen(
            "あなたはアクティブなゴールに",
            "あなたは進行中のゴールに",
            1,
        );
    assert_ne!(edited, xliff);
    edited
}

#[test]
fn an_import_that_cannot_write_every_file_writes_none() {
    let (root, run) = pack();
    let defaults = root.path().join("goal-agent/defaults");
    fs::write(root.path().join("ja.xlf"), edited_export(&run)).unwrap();
    let before: Vec<String> = ["auditor.ja.md", "goal-running.ja.md"]
        .iter()
        .map(|name| fs::read_to_string(defaults.join(name)).unwrap())
        .collect();
    // goal-running's new text cannot be staged: a folder holds the name.
    let blocker = defaults.join(".goal-running.ja.md.promptreg-tmp");
    fs::create_dir(&blocker).unwrap();
    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("nothing was changed"), "{stderr}");
    assert!(stderr.contains("then run the command again"), "{stderr}");
    assert!(
        stderr.contains(".goal-running.ja.md.promptreg-tmp"),
        "{stderr}"
    );
    fs::remove_dir(&blocker).unwrap();
    let after: Vec<String> = ["auditor.ja.md", "goal-running.ja.md"]
        .iter()
        .map(|name| fs::read_to_string(defaults.join(name)).unwrap())
        .collect();
    assert_eq!(after, before, "no variant file is new");
    assert_eq!(leftovers(root.path()), Vec::<String>::new());

    let (code, _, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_eq!(code, 0, "{stderr}");
    let auditor = fs::read_to_string(defaults.join("auditor.ja.md")).unwrap();
    let running = fs::read_to_string(defaults.join("goal-running.ja.md")).unwrap();
    assert!(auditor.contains("監査役"), "{auditor}");
    assert!(running.contains("進行中のゴール"), "{running}");
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

/// An import killed before its commit left a staged file and its pending
/// journal: the next import removes both and writes its own set.
#[test]
fn an_import_after_a_stopped_one_leaves_no_staged_file() {
    let (root, run) = pack();
    let dir = root.path().join("goal-agent");
    fs::write(root.path().join("ja.xlf"), edited_export(&run)).unwrap();
    fs::write(dir.join("defaults/.auditor.ja.md.promptreg-tmp"), "half").unwrap();
    fs::write(
        dir.join(".promptreg-journal.promptreg-tmp"),
        "promptreg file set 1\ndefaults/auditor.ja.md\ndefaults/goal-running.ja.md\nend\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["l10n", "import", "ja.xlf"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("note: undid an interrupted write"),
        "{stderr}"
    );
    assert!(
        stdout.contains("2 variant files of `ja` written"),
        "{stdout}"
    );
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

/// An import killed after its commit, one file renamed and one still
/// staged: the next command that writes the pack finishes it first.
#[test]
fn a_stopped_import_is_finished_by_the_next_write() {
    let (root, run) = pack();
    let dir = root.path().join("goal-agent");
    let auditor = dir.join("defaults/auditor.ja.md");
    let running = dir.join("defaults/goal-running.ja.md");
    let new_auditor = fs::read_to_string(&auditor)
        .unwrap()
        .replace("監査人", "監査役");
    let new_running = fs::read_to_string(&running)
        .unwrap()
        .replace("あなたはアクティブなゴールに", "あなたは進行中のゴールに");
    fs::write(&auditor, &new_auditor).unwrap();
    fs::write(
        dir.join("defaults/.goal-running.ja.md.promptreg-tmp"),
        &new_running,
    )
    .unwrap();
    fs::write(
        dir.join(".promptreg-journal"),
        "promptreg file set 1\ndefaults/auditor.ja.md\ndefaults/goal-running.ja.md\nend\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["l10n", "mark-current", "auditor", "ja"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("note: finished an interrupted write to goal-agent: 2 files written"),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(&running).unwrap(), new_running);
    assert!(fs::read_to_string(&auditor).unwrap().contains("監査役"));
    assert_eq!(leftovers(root.path()), Vec::<String>::new());
}

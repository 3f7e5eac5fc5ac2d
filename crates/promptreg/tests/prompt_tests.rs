//! Prompt tests read from a pack's `tests/` folder and run against a
//! registry: what each case reports, and what a test file may not say.

#![cfg(feature = "testing")]

mod support;

use std::path::Path;

use promptreg::pack::Pack;
use promptreg::testing::PromptTests;
use promptreg::{DiagnosticCode, PromptRegistry};

/// A pack with one template prompt, `greeting`, and the test file given.
fn pack_with_tests(root: &Path, tests: &str) -> Pack {
    support::write(
        &root.join("promptreg.toml"),
        "name = \"t\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".t\"\n",
    );
    support::write(
        &root.join("defaults/greeting.md"),
        "---\ntemplate: true\nvariables:\n  name:\n---\nHello {{ name }}!",
    );
    support::write(&root.join("tests/greeting.toml"), tests);
    Pack::load(root).unwrap()
}

fn problems(tests: &str) -> Vec<(DiagnosticCode, String, usize)> {
    let dir = tempfile::tempdir().unwrap();
    support::write(&dir.path().join("elsewhere.json"), "{}");
    let pack = pack_with_tests(&dir.path().join("pack"), tests);
    let (loaded, diagnostics) = PromptTests::load_with_diagnostics(&pack);
    assert!(loaded.is_none(), "an error loads no test");
    // The same files in memory give the same diagnostics.
    let files = files_of(pack.root());
    let in_memory = Pack::from_files(pack.root(), files.clone()).unwrap();
    let err = PromptTests::from_files(&in_memory, files.clone()).unwrap_err();
    assert_eq!(
        format!("{:?}", err.diagnostics()),
        format!("{diagnostics:?}"),
        "from memory as from the folder"
    );
    diagnostics
        .into_iter()
        .map(|d| (d.code, d.message, d.position.map_or(0, |p| p.line)))
        .collect()
}

/// Every file under `root`, by path in it, as text.
fn files_of(root: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
            }
        }
    }
    out.sort();
    out
}

/// The example packs' tests from memory give the results they give from
/// the folder, case by case, with nothing written.
#[test]
fn tests_from_memory_run_as_from_the_folder() {
    for name in ["goal-agent", "web-agent"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        let pack = Pack::load(&root).unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        let from_folder = PromptTests::load(&pack).unwrap().run(&registry);
        let files = files_of(&root);
        let in_memory = Pack::from_files(&root, files.clone()).unwrap();
        let from_memory = PromptTests::from_files(&in_memory, files.clone())
            .unwrap()
            .run(&registry);
        assert!(!from_folder.is_empty(), "{name}");
        assert_eq!(
            format!("{from_memory:?}"),
            format!("{from_folder:?}"),
            "{name}"
        );
    }
}

#[test]
fn a_missing_snapshot_fails_until_it_is_written_then_passes() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_with_tests(
        dir.path(),
        "prompt = \"greeting\"\n[[case]]\nname = \"ada\"\ncontext = { name = \"Ada\" }\nsnapshot = true\n",
    );
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let results = PromptTests::load(&pack).unwrap().run(&registry);
    assert_eq!(
        results[0].failures[0].message,
        "no snapshot yet: the file does not exist (write it with `promptreg test --update`, or `PromptTests::run_updating`)"
    );
    let updated = PromptTests::load(&pack)
        .unwrap()
        .run_updating(&registry)
        .unwrap();
    assert!(updated[0].passed());
    let snapshot = dir.path().join("tests/snapshots/greeting.ada.txt");
    assert_eq!(updated[0].updated, std::slice::from_ref(&snapshot));
    assert_eq!(std::fs::read_to_string(&snapshot).unwrap(), "Hello Ada!");
    assert!(PromptTests::load(&pack).unwrap().run(&registry)[0].passed());
}

/// The snapshots of one run are written all or none: one that cannot be
/// written leaves every snapshot as it was.
#[test]
fn snapshots_that_cannot_all_be_written_are_none_written() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_with_tests(
        dir.path(),
        "prompt = \"greeting\"\n[[case]]\nname = \"ada\"\ncontext = { name = \"Ada\" }\nsnapshot = true\n[[case]]\nname = \"bob\"\ncontext = { name = \"Bob\" }\nsnapshot = true\n",
    );
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let snapshots = dir.path().join("tests/snapshots");
    let blocker = snapshots.join(".greeting.bob.txt.promptreg-tmp");
    std::fs::create_dir_all(&blocker).unwrap();
    let tests = PromptTests::load(&pack).unwrap();
    let err = tests.run_updating(&registry).unwrap_err();
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert!(!snapshots.join("greeting.ada.txt").exists());
    std::fs::remove_dir(&blocker).unwrap();
    let results = tests.run_updating(&registry).unwrap();
    assert!(results.iter().all(|r| r.passed()));
    let names: Vec<_> = std::fs::read_dir(&snapshots)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names, ["greeting.ada.txt", "greeting.bob.txt"]);
}

#[test]
fn an_equals_that_differs_only_in_a_final_newline_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_with_tests(
        dir.path(),
        "prompt = \"greeting\"\n[[case]]\nname = \"ada\"\ncontext = { name = \"Ada\" }\nequals = \"Hello Ada!\\n\"\n",
    );
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let results = PromptTests::load(&pack).unwrap().run(&registry);
    assert_eq!(
        results[0].failures[0].message,
        "the text differs only in a final newline: the expected text ends with one, the rendered text does not"
    );
}

#[test]
fn a_chat_prompt_is_checked_as_role_headed_text_with_its_history_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    support::write(
        &root.join("promptreg.toml"),
        "name = \"t\"\nkeys = [\"support\"]\n[user]\nprompts_dir = \".t\"\n",
    );
    support::write(
        &root.join("defaults/support.md"),
        "---\nkind: chat\n---\n# system\nYou help with orders.\n\n# history: conversation\n",
    );
    let case = |roles: &str| {
        format!(
            "prompt = \"support\"\n[[case]]\nname = \"h\"\nhistory = [{{ role = \"user\", content = \"Hi\" }}]\nroles = {roles}\nequals = \"# system\\nYou help with orders.\\n\\n# user\\nHi\"\n"
        )
    };
    support::write(
        &root.join("tests/support.toml"),
        case(r#"["system", "user"]"#),
    );
    let pack = Pack::load(root).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let tests = PromptTests::load(&pack).unwrap();
    let history = tests.cases()[0].history.as_ref().unwrap();
    assert_eq!(
        (history.0.as_str(), history.1[0].content.as_str()),
        ("conversation", "Hi")
    );
    let results = tests.run(&registry);
    assert!(results[0].passed(), "{:?}", results[0].failures);

    support::write(&root.join("tests/support.toml"), case(r#"["system"]"#));
    let failed = PromptTests::load(&pack).unwrap().run(&registry);
    assert_eq!(
        failed[0].failures[0].message,
        r#"the roles are ["system", "user"], not ["system"]"#
    );

    // A history's role is checked as a role heading is, where it is written.
    let typo = case(r#"["system", "user"]"#).replace(r#"role = "user""#, r#"role = "usr""#);
    support::write(&root.join("tests/support.toml"), typo);
    let err = PromptTests::load(&pack).unwrap_err();
    let d = &err.diagnostics()[0];
    assert_eq!(d.message, "message 1 of `history` has unknown role `usr`");
    assert_eq!(d.suggestion.as_deref(), Some("did you mean `user`?"));
    assert_eq!(d.position.map(|p| p.line), Some(4), "{d:?}");
}

#[test]
fn each_problem_of_a_test_file_is_reported_at_its_line() {
    let found = problems(concat!(
        "prompt = \"greeting\"\n",
        "[[case]]\nname = \"a\"\ncontains = \"x\"\n",
        "[[case]]\nname = \"a\"\ncontains = \"y\"\n",
        "[[case]]\nname = \"quiet\"\nsnapshot = false\n",
        "[[case]]\nname = \"both\"\ncontext = {}\ncontext_file = \"c.json\"\ncontains = \"x\"\n",
        "[[case]]\nname = \"away\"\ncontext_file = \"../../elsewhere.json\"\ncontains = \"x\"\n",
        "[[case]]\nname = \"bad name!\"\ncontains = \"x\"\nlocale = \"en--US\"\n",
        "[[case]]\nname = \"gone\"\ncontext_file = \"gone.json\"\ncontains = \"x\"\n",
    ));
    let messages: Vec<&str> = found.iter().map(|(_, m, _)| m.as_str()).collect();
    assert_eq!(
        messages,
        [
            "two cases of this file are named `a`",
            "case `quiet` expects nothing",
            "a case gives `context` and `context_file`: one of them only",
            "the context file `../../elsewhere.json` is outside the pack",
            "case name `bad name!`: letters, digits, `-` and `_` only",
            "invalid locale `en--US` (invalid subtag): expected a BCP-47 tag such as `en`, `ja-JP` or `zh-Hant`",
            "the context file `gone.json` does not exist",
        ],
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .all(|(code, _, line)| *code == DiagnosticCode::PromptTest && *line > 0)
    );
}

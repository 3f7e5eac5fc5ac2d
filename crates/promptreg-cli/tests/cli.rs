//! The `promptreg` tool tested from outside, as a user runs it, on the two
//! example packs, in a temporary home and project.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};
use serde_json::Value;
use support::{copy_dir, example};
use tempfile::TempDir;

struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    /// A home, a project and copies of the example packs, side by side,
    /// so commands name them by relative paths.
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("home")).unwrap();
        fs::create_dir_all(root.path().join("project")).unwrap();
        for pack in ["goal-agent", "web-agent"] {
            copy_dir(&example(pack), &root.path().join(pack));
        }
        Sandbox { root }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn pack(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn cwd(&self) -> PathBuf {
        self.root.path().join("project")
    }

    fn write(&self, path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn local(&self, path: &str, text: &str) {
        self.write(&self.cwd().join(path), text);
    }

    fn global(&self, path: &str, text: &str) {
        self.write(&self.home().join(path), text);
    }

    /// `promptreg` with home and cwd in the sandbox, run from the sandbox
    /// (so no pack is found by walking up unless `--pack` says so).
    fn cmd(&self) -> Command {
        let mut cmd = Command::new(get_cargo_bin("promptreg"));
        cmd.current_dir(self.root.path())
            .args(["--home", "home", "--cwd", "project"])
            .env_remove("PI_GOAL_SETTINGS_FILE")
            .env_remove("WEBAGENT_SETTINGS_FILE")
            .env("NO_COLOR", "1");
        cmd
    }

    fn with_pack(&self, pack: &str) -> Command {
        let mut cmd = self.cmd();
        cmd.args(["--pack", pack]);
        cmd
    }

    fn settings(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(
            &regex_escape(&self.root.path().display().to_string()),
            "[sandbox]",
        );
        settings
    }
}

/// The pack's sample context, relative to the sandbox.
fn context(name: &str) -> String {
    format!("{name}/context.json")
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Runs and returns (exit code, stdout, stderr).
fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(cmd: &mut Command) -> Value {
    let (code, stdout, stderr) = run(cmd.arg("--json"));
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// A project that configures the goal agent: an override of goal-running,
/// an appended auditor rule, a Japanese auditor file under home.
fn configured() -> Sandbox {
    let s = Sandbox::new();
    s.local(
        ".pi/pi-goal-xx/prompts/goal-running.md",
        "Delegate implementation to a team.",
    );
    s.local(
        ".pi/pi-goal-xx/prompts/auditor.md",
        "Reject unless the verifier hash is present.",
    );
    s.global(
        ".pi/pi-goal-xx/prompts/auditor.ja.md",
        "検証ハッシュがなければ却下してください。",
    );
    s.local(
        ".pi/pi-goal-xx-settings.json",
        "{\n  // project rules\n  \"prompts\": {\n    \"goal-running\": { \"mode\": \"override\" },\n    \"tool-abort-goal\": { \"mode\": \"off\" }\n  }\n}\n",
    );
    s
}

// --- Help and version --------------------------------------------------------------

#[test]
fn version_and_help() {
    let s = Sandbox::new();
    let (code, stdout, _) = run(s.cmd().arg("--version"));
    assert_eq!(code, 0);
    assert_eq!(stdout, format!("promptreg {}\n", env!("CARGO_PKG_VERSION")));
    assert_cmd_snapshot!(Command::new(get_cargo_bin("promptreg")).arg("--help"));
}

#[test]
fn each_command_lists_only_the_options_it_uses() {
    let help = |args: &[&str]| {
        let (code, stdout, stderr) = run(Command::new(get_cargo_bin("promptreg"))
            .args(args)
            .arg("--help"));
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    let serve = help(&["serve"]);
    for absent in ["--locale", "--label", "--timeout", "--pack", "--server"] {
        assert!(
            !serve.contains(absent),
            "serve --help lists {absent}: {serve}"
        );
    }
    let push = help(&["store", "push"]);
    for absent in ["--pack ", "--name", "--admin", "--label", "--locale"] {
        assert!(
            !push.contains(absent),
            "store push --help lists {absent}: {push}"
        );
    }
    assert!(push.contains("--author"), "{push}");
    let render = help(&["render"]);
    for present in ["--pack", "--locale", "--server", "--ctx"] {
        assert!(
            render.contains(present),
            "render --help lacks {present}: {render}"
        );
    }
    assert!(help(&["store", "pull"]).contains("--label"));
    assert!(help(&["store", "diff"]).contains("--locale"));

    // Given before a command that does not take it, an option that would
    // change the result is refused, not ignored.
    let s = Sandbox::new();
    let (code, _, stderr) = run(s.cmd().args(["--locale", "ja", "serve"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("`--locale` is not an option of `promptreg serve`"),
        "{stderr}"
    );
    // Before or after the command, the same.
    let before = run(s
        .cmd()
        .args(["--pack", "goal-agent", "--locale", "ja", "list"]));
    let after = run(s
        .cmd()
        .args(["list", "--pack", "goal-agent", "--locale", "ja"]));
    assert_eq!(before, after);
    assert_eq!(before.0, 0, "{}", before.2);
}

// --- list ---------------------------------------------------------------------------------

#[test]
fn list_shows_descriptions_variants_and_layers() {
    let s = configured();
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("goal-agent").arg("list")));
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("web-agent").arg("list")));
}

#[test]
fn list_json() {
    let s = configured();
    let rows = json(s.with_pack("goal-agent").arg("list"));
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 18);
    let auditor = rows.iter().find(|r| r["id"] == "auditor").unwrap();
    assert_eq!(auditor["description"], "Independent completion auditor");
    let files = auditor["user"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["scope"], "global");
    assert_eq!(files[0]["locale"], "ja");
    let running = rows.iter().find(|r| r["id"] == "goal-running").unwrap();
    let settings = &running["user"]["settings"];
    assert_eq!(settings["settings"]["mode"], "override");
    assert_eq!(settings["source"]["key_path"], "prompts.goal-running");
    let narrators = json(s.with_pack("web-agent").arg("list"));
    let narrator = narrators
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "webagent-narrator.system")
        .unwrap();
    assert_eq!(narrator["locales"], serde_json::json!(["ja", "zh-TW"]));
    assert_eq!(narrator["model"]["model"], "gpt-4o-mini");
    assert_eq!(narrator["metadata"]["owner"], "web-agent");
    let planner = narrators
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "planner.system");
    assert!(
        planner.unwrap().get("model").is_none(),
        "no settings, no key"
    );
}

// --- render ---------------------------------------------------------------------------------

#[test]
fn render_prints_exactly_what_the_application_sends() {
    let s = configured();
    s.settings().bind(|| {
        assert_cmd_snapshot!(
            s.with_pack("goal-agent")
                .args(["render", "goal-running", "--ctx"])
                .arg(context("goal-agent"))
        );
        assert_cmd_snapshot!(
            s.with_pack("web-agent")
                .args([
                    "render",
                    "webagent-narrator.system",
                    "--locale=zh-TW",
                    "--ctx"
                ])
                .arg(context("web-agent"))
        );
    });
    // No trailing newline is added when not on a terminal.
    let (_, stdout, _) = run(s.with_pack("goal-agent").args(["render", "auditor"]));
    assert!(
        stdout.ends_with("one line per task with the evidence or what is missing."),
        "{stdout:?}"
    );
}

#[test]
fn a_context_that_is_not_an_object_or_is_missing_says_what_to_pass() {
    let s = Sandbox::new();
    s.write(&s.root.path().join("list.json"), "[1, 2]");
    let (code, _, stderr) =
        run(s
            .with_pack("goal-agent")
            .args(["render", "goal-running", "--ctx", "list.json"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("must be a JSON object of variables; got an array"),
        "{stderr}"
    );
    let (code, _, stderr) = run(s.with_pack("goal-agent").args(["render", "goal-running"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("needs variables"), "{stderr}");
    assert!(stderr.contains("--ctx FILE"), "{stderr}");
}

#[test]
fn render_reads_the_context_from_standard_input_and_prints_json() {
    let s = Sandbox::new();
    let value = json(
        s.with_pack("web-agent")
            .args([
                "render",
                "webagent-narrator.system",
                "--locale",
                "ja",
                "--ctx",
                "-",
            ])
            .stdin(fs::File::open(s.pack("web-agent").join("context.json")).unwrap()),
    );
    assert_eq!(value["id"], "webagent-narrator.system");
    assert_eq!(value["locale"], "ja");
    // A chat prompt: its messages, in OpenAI's shape.
    let messages = value["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("あなたはAcme Outdoorのサイト内")
    );
    // The Japanese variant sets `max_tokens` over the default's settings.
    let expected =
        serde_json::json!({ "model": "gpt-4o-mini", "temperature": 0.3, "max_tokens": 1200 });
    assert_eq!(value["model"], expected);
    assert_eq!(
        value["metadata"],
        serde_json::json!({ "owner": "web-agent" })
    );
}

#[test]
fn explain_json_carries_the_model_settings_of_the_locale() {
    let s = Sandbox::new();
    let explain = |locale: &str| {
        let mut cmd = s.with_pack("web-agent");
        cmd.args([
            "explain",
            "webagent-narrator.system",
            "--locale",
            locale,
            "--ctx",
        ])
        .arg(context("web-agent"));
        json(&mut cmd)
    };
    assert_eq!(explain("ja-JP")["model"]["max_tokens"], 1200);
    assert_eq!(explain("en")["model"]["max_tokens"], 800);
    assert_eq!(explain("en")["metadata"]["owner"], "web-agent");
}

#[test]
fn render_falls_back_to_english_for_french() {
    let s = Sandbox::new();
    let mut cmd = s.with_pack("web-agent");
    cmd.args([
        "--locale",
        "fr-CA",
        "render",
        "webagent-narrator.system",
        "--ctx",
    ])
    .arg(context("web-agent"));
    let (code, stdout, _) = run(&mut cmd);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("# system\nYou are the friendly assistant of Acme Outdoor"),
        "{stdout}"
    );
}

#[test]
fn a_locale_of_no_known_language_is_warned_about_and_its_variants_listed_as_never_used() {
    let s = Sandbox::new();
    let japanese = s.pack("goal-agent").join("defaults/auditor.ja.md");
    let misnamed = s.pack("goal-agent").join("defaults/auditor.jp.md");
    s.write(&misnamed, &fs::read_to_string(japanese).unwrap());

    let (code, stdout, stderr) = run(s
        .with_pack("goal-agent")
        .args(["--locale", "jp", "render", "auditor"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.is_empty());
    assert_eq!(
        stderr,
        "warning: locale `jp` (--locale) names no known language, so no variant of a known language matches it; did you mean `ja`?\n"
    );
    let (_, _, stderr) = run(s
        .with_pack("goal-agent")
        .args(["--locale", "ja", "render", "auditor"]));
    assert_eq!(stderr, "", "a known language is not warned about");

    let (_, list, _) = run(s.with_pack("goal-agent").arg("list"));
    assert!(
        list.contains("variants: ja, jp (never used: no known language)"),
        "{list}"
    );
    let rows = json(s.with_pack("goal-agent").arg("list"));
    let auditor = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "auditor")
        .unwrap();
    assert_eq!(
        auditor["never_used"],
        serde_json::json!(["jp"]),
        "{auditor}"
    );
}

// --- explain ---------------------------------------------------------------------------------

#[test]
fn explain_shows_every_part_and_where_it_came_from() {
    let s = configured();
    s.settings().bind(|| {
        assert_cmd_snapshot!(
            s.with_pack("goal-agent")
                .args(["explain", "goal-running", "--locale", "ja", "--ctx"])
                .arg(context("goal-agent"))
        );
        assert_cmd_snapshot!(
            s.with_pack("goal-agent")
                .args(["explain", "auditor", "--locale", "ja-JP"])
        );
        assert_cmd_snapshot!(
            s.with_pack("web-agent")
                .args([
                    "explain",
                    "webagent-narrator.system",
                    "--locale",
                    "zh-HK",
                    "--ctx"
                ])
                .arg(context("web-agent"))
        );
    });
}

#[test]
fn explain_json_names_the_locale_matching_step_of_every_variant() {
    let s = configured();
    let value = json(
        s.with_pack("web-agent")
            .args([
                "explain",
                "webagent-narrator.system",
                "--locale",
                "zh-HK",
                "--ctx",
            ])
            .arg(context("web-agent")),
    );
    let lookup: Vec<(&str, &str)> = value["lookup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap(), s["step"].as_str().unwrap()))
        .collect();
    assert_eq!(
        lookup,
        [
            ("zh-HK", "exact"),
            ("zh-Hant", "parent"),
            ("zh-Hant", "same-script"),
            ("en", "fallback")
        ]
    );
    let body = &value["messages"][0]["parts"][0];
    assert_eq!(body["origin"]["kind"], "override");
    assert_eq!(body["origin"]["locale"], "zh-TW");
    assert_eq!(body["origin"]["step"], "same-script");
    assert_eq!(body["provenance"]["source"], "pack");
    assert!(
        body["provenance"]["file"]
            .as_str()
            .unwrap()
            .ends_with("defaults/webagent-narrator.system.zh-TW.md"),
        "{body}"
    );

    let value = json(
        s.with_pack("goal-agent")
            .args(["explain", "goal-running", "--locale", "ja-JP", "--ctx"])
            .arg(context("goal-agent")),
    );
    let head = &value["parts"][0]["origin"];
    assert_eq!(head["kind"], "pinned-head");
    assert_eq!(head["translation"]["locale"], "ja");
    assert_eq!(head["translation"]["step"], "parent");
    let value = json(
        s.with_pack("goal-agent")
            .args(["explain", "goal-running", "--locale", "fr", "--ctx"])
            .arg(context("goal-agent")),
    );
    assert_eq!(
        value["parts"][0]["origin"]["translation"],
        serde_json::Value::Null
    );
}

#[test]
fn explain_json_gives_the_same_as_data() {
    let s = configured();
    let value = json(
        s.with_pack("goal-agent")
            .args(["explain", "goal-running", "--ctx"])
            .arg(context("goal-agent")),
    );
    let kinds: Vec<&str> = value["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["origin"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["pinned-head", "user", "pinned-tail"]);
    assert_eq!(value["parts"][1]["origin"]["replaces_body"], true);
    let user = &value["parts"][1]["provenance"];
    assert_eq!(user["source"], "user");
    assert_eq!(user["what"], "local file");
    assert_eq!(user["mode"], "override");
    assert_eq!(user["chosen_by"]["key_path"], "prompts.goal-running");
    assert_eq!(user["chosen_by"]["line"], 4);
    assert_eq!(
        value["parts"][1]["text"],
        "Delegate implementation to a team."
    );
    let text = value["text"].as_str().unwrap();
    let (start, end) = (
        value["parts"][1]["range"]["start"].as_u64().unwrap() as usize,
        value["parts"][1]["range"]["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[start..end], "Delegate implementation to a team.");
}

// --- chat prompts ----------------------------------------------------------------------------

/// The web agent's narrator (a chat prompt) with `args` after its id.
fn narrator(s: &Sandbox, args: &[&str]) -> Command {
    let mut cmd = s.with_pack("web-agent");
    cmd.args(["render", "webagent-narrator.system", "--ctx"])
        .arg(context("web-agent"))
        .args(args);
    cmd
}

#[test]
fn render_prints_a_chat_prompt_as_role_headed_text_with_its_history() {
    let s = Sandbox::new();
    let (code, stdout, stderr) = run(&mut narrator(&s, &["--history", "web-agent/history.json"]));
    assert_eq!(code, 0, "{stderr}");
    let headings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("# ")).collect();
    assert_eq!(headings, ["# system", "# user", "# assistant", "# user"]);
    assert!(
        stdout.ends_with("# user\nDo you have tents for four people?"),
        "{stdout}"
    );
    // The pinned block is in the system message, before the few-shot pair.
    let pin = stdout.find("Never invent prices").unwrap();
    assert!(pin < stdout.find("# user").unwrap(), "{stdout}");

    let value = json(&mut narrator(&s, &["--history", "web-agent/history.json"]));
    let last = value["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last,
        serde_json::json!({ "role": "user", "content": "Do you have tents for four people?" })
    );
    assert_eq!(value["model"]["model"], "gpt-4o-mini");
}

#[test]
fn a_bad_history_is_one_clear_error() {
    let s = Sandbox::new();
    s.write(&s.pack("web-agent/typo.json"), r#"{ "conversaton": [] }"#);
    s.write(&s.pack("web-agent/shape.json"), r#"[{ "role": "user" }]"#);
    s.write(
        &s.pack("web-agent/message.json"),
        r#"{ "conversation": [{ "role": "user" }] }"#,
    );
    let (code, _, stderr) = run(&mut narrator(&s, &["--history", "web-agent/typo.json"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("has no history placeholder `conversaton`")
            && stderr.contains("did you mean `conversation`?"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&mut narrator(&s, &["--history", "web-agent/shape.json"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("must be an object of placeholder names"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&mut narrator(&s, &["--history", "web-agent/message.json"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("missing field `content`"), "{stderr}");
    s.write(
        &s.pack("web-agent/role.json"),
        r#"{ "conversation": [{ "role": "usr", "content": "Hi" }] }"#,
    );
    // A text prompt takes no history: refused, as the server refuses it.
    let (code, _, stderr) = run(s.with_pack("web-agent").args([
        "render",
        "translate.system",
        "--history",
        "web-agent/history.json",
    ]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("has no history placeholder `conversation`"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&mut narrator(&s, &["--history", "web-agent/role.json"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("message 1 of history `conversation` has unknown role `usr`")
            && stderr.contains("did you mean `user`?"),
        "{stderr}"
    );
}

#[test]
fn explain_shows_each_message_of_a_chat_prompt_and_its_parts() {
    let s = Sandbox::new();
    s.settings().bind(|| {
        assert_cmd_snapshot!(
            s.with_pack("web-agent")
                .args([
                    "explain",
                    "webagent-narrator.system",
                    "--locale",
                    "ja",
                    "--ctx"
                ])
                .arg(context("web-agent"))
                .args(["--history", "web-agent/history.json"])
        );
    });
}

#[test]
fn list_marks_chat_prompts_and_shows_model_settings_briefly() {
    let s = Sandbox::new();
    let (code, stdout, _) = run(s.with_pack("web-agent").arg("list"));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("chat; default; variants: ja, zh-TW; model gpt-4o-mini (temperature 0.3, max_tokens 800)"),
        "{stdout}"
    );
    let rows = json(s.with_pack("web-agent").arg("list"));
    let kinds: Vec<(&str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == "webagent-narrator.system" || r["id"] == "planner.system")
        .map(|r| (r["id"].as_str().unwrap(), r["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("planner.system", "text"),
            ("webagent-narrator.system", "chat")
        ]
    );
}

#[test]
fn schema_front_matter_describes_kind_roles_and_model() {
    let s = Sandbox::new();
    // No pack needed: the front matter is the same for every pack.
    let schema = json(s.cmd().args(["schema", "front-matter"]));
    assert_eq!(
        schema["properties"]["kind"]["enum"],
        serde_json::json!(["text", "chat"])
    );
    assert_eq!(schema["properties"]["roles"]["type"], "array");
    assert_eq!(
        schema["properties"]["model"]["properties"]["temperature"]["maximum"],
        2
    );
    assert_eq!(schema["additionalProperties"], false);
}

// --- check ---------------------------------------------------------------------------------

#[test]
fn check_of_a_clean_configuration_exits_0() {
    let s = configured();
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("check"));
    assert_eq!((code, stdout.as_str()), (0, "no problems found\n"));
}

#[test]
fn check_prints_every_diagnostic_with_a_snippet_and_exits_1() {
    let s = Sandbox::new();
    s.local(
        ".pi/pi-goal-xx-settings.json",
        "{\n  \"prompts\": {\n    \"goal-runing\": { \"mode\": \"append\" },\n    \"auditor\": { \"mode\": \"overide\" }\n  },\n  \"auditorPrompt\": \"old\"\n}\n",
    );
    s.local(".pi/pi-goal-xx/prompts/auditr.md", "typo");
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("goal-agent").arg("check")));
    let value = {
        let out = s
            .with_pack("goal-agent")
            .args(["check", "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(value["errors"], 2);
    assert_eq!(value["warnings"], 2);
    assert_eq!(value["diagnostics"][0]["line"], 3);
    assert_eq!(
        value["diagnostics"][0]["suggestion"],
        "did you mean `goal-running`?"
    );
}

#[test]
fn warnings_alone_pass_unless_denied() {
    let s = Sandbox::new();
    s.local(".pi/pi-goal-xx/prompts/goal-runing.md", "typo");
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("check"));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("did you mean `goal-running.md`?"),
        "{stdout}"
    );
    assert!(stdout.ends_with("0 errors, 1 warning\n"), "{stdout}");
    let (code, ..) = run(s.with_pack("goal-agent").args(["check", "--deny-warnings"]));
    assert_eq!(code, 1);
}

#[test]
fn check_reports_pack_errors_too() {
    let s = Sandbox::new();
    let pack = s.pack("broken");
    s.write(
        &pack.join("promptreg.toml"),
        "name = \"x\"\nkeys = [\"a\"]\n[user]\nprompts_dir = \".x\"\n",
    );
    s.write(&pack.join("defaults/b.md"), "undeclared");
    s.write(
        &pack.join("defaults/a.md"),
        "---\ntemplate: true\n---\n{{ oops }",
    );
    let (code, stdout, _) = run(s.with_pack("broken").arg("check"));
    assert_eq!(code, 1);
    assert!(stdout.contains("template syntax error"), "{stdout}");
    assert!(
        stdout.contains("which promptreg.toml does not declare"),
        "{stdout}"
    );
}

/// A pack of three prompts, two of them broken: an unknown front matter
/// key in `chef.system`, a template syntax error in a variant of
/// `waiter.system`; a test file for `greeting` and one for `chef.system`.
fn kitchen(s: &Sandbox) -> PathBuf {
    let pack = s.pack("kitchen");
    s.write(
        &pack.join("promptreg.toml"),
        "name = \"kitchen\"\nkeys = [\"greeting\", \"chef.system\", \"waiter.system\"]\n[user]\nprompts_dir = \".kitchen\"\n",
    );
    s.write(
        &pack.join("defaults/greeting.md"),
        "Welcome to the kitchen.",
    );
    s.write(
        &pack.join("defaults/chef.system.md"),
        "---\ndescripton: the chef\n---\nYou cook.",
    );
    s.write(&pack.join("defaults/waiter.system.md"), "You serve.");
    s.write(
        &pack.join("defaults/waiter.system.fr.md"),
        "---\ntemplate: true\n---\nVous servez {{ oops }",
    );
    s.write(
        &pack.join("tests/greeting.toml"),
        "prompt = \"greeting\"\n[[case]]\nname = \"welcome\"\ncontains = \"Welcome\"\n",
    );
    s.write(
        &pack.join("tests/chef.toml"),
        "prompt = \"chef.system\"\n[[case]]\nname = \"cooks\"\ncontains = \"cook\"\n",
    );
    pack
}

#[test]
fn a_command_about_one_prompt_works_when_only_other_prompts_have_errors() {
    let s = Sandbox::new();
    kitchen(&s);
    s.settings().bind(|| {
        assert_cmd_snapshot!(s.with_pack("kitchen").args(["render", "greeting"]));
        assert_cmd_snapshot!(s.with_pack("kitchen").args(["test", "greeting"]));
    });
    let (code, stdout, stderr) = run(s.with_pack("kitchen").args(["explain", "greeting"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Welcome to the kitchen."), "{stdout}");
    assert!(
        stderr.contains("note: 2 other prompts have errors"),
        "{stderr}"
    );
    // JSON on standard output stays JSON.
    let out = json(s.with_pack("kitchen").args(["render", "greeting"]));
    assert_eq!(out["text"], "Welcome to the kitchen.");
}

#[test]
fn a_prompt_with_errors_of_its_own_and_whole_pack_commands_still_fail() {
    let s = Sandbox::new();
    kitchen(&s);
    s.settings().bind(|| {
        // The prompt named has the error: as before, every error of the pack.
        assert_cmd_snapshot!(s.with_pack("kitchen").args(["render", "chef.system"]));
    });
    // An error in one of its variants is its own too.
    let (code, _, stderr) = run(s.with_pack("kitchen").args(["explain", "waiter.system"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("template syntax error"), "{stderr}");
    for args in [
        &["check"][..],
        &["test"],
        &["list"],
        &["test", "greeting", "chef.system"],
    ] {
        let (code, stdout, stderr) = run(s.with_pack("kitchen").args(args));
        assert_ne!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(!stderr.contains("note:"), "{args:?}: {stderr}");
    }
}

#[test]
fn an_error_in_the_manifest_or_a_snippet_fails_every_prompt() {
    let s = Sandbox::new();
    let pack = kitchen(&s);
    s.write(&pack.join("snippets/sign-off.md"), "{% if %}");
    let (code, _, stderr) = run(s.with_pack("kitchen").args(["render", "greeting"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("sign-off.md"), "{stderr}");
    fs::remove_file(pack.join("snippets/sign-off.md")).unwrap();
    s.write(
        &pack.join("promptreg.toml"),
        "name = \"kitchen\"\nkeys = [\"greeting\", \"chef.system\", \"waiter.system\"]\nunknown = 1\n[user]\nprompts_dir = \".kitchen\"\n",
    );
    let (code, _, stderr) = run(s.with_pack("kitchen").args(["render", "greeting"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("note:"), "{stderr}");
}

#[test]
fn a_file_for_an_undeclared_id_is_noted_as_an_error_elsewhere() {
    let s = Sandbox::new();
    let pack = kitchen(&s);
    fs::remove_file(pack.join("defaults/chef.system.md")).unwrap();
    fs::remove_file(pack.join("defaults/waiter.system.fr.md")).unwrap();
    fs::remove_file(pack.join("tests/chef.toml")).unwrap();
    s.write(&pack.join("defaults/cook.system.md"), "A typo in the name.");
    let (code, stdout, stderr) = run(s.with_pack("kitchen").args(["render", "greeting"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "Welcome to the kitchen.");
    assert!(
        stderr.contains("note: other files of the pack have errors (promptreg check lists them)"),
        "{stderr}"
    );
}

#[test]
fn check_reports_prompt_test_errors_at_their_line() {
    let s = Sandbox::new();
    s.write(
        &s.pack("goal-agent/tests/auditor.toml"),
        "prompt = \"auditor\"\n[[case]]\nname = \"x\"\nmatches = \"(unclosed\"\n",
    );
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("check"));
    assert_eq!(code, 1);
    assert!(
        stdout.contains("`matches` pattern does not compile: unclosed group"),
        "{stdout}"
    );
    assert!(
        stdout.contains("goal-agent/tests/auditor.toml:4:12"),
        "{stdout}"
    );
}

#[test]
fn check_points_at_a_model_setting_of_the_wrong_type() {
    let s = Sandbox::new();
    let pack = s.pack("settings");
    s.write(
        &pack.join("promptreg.toml"),
        "name = \"x\"\nkeys = [\"a\"]\n[user]\nprompts_dir = \".x\"\n",
    );
    s.write(
        &pack.join("defaults/a.md"),
        "---\nmodel:\n  model: small\n  temperature: high\n---\nBody\n",
    );
    assert_cmd_snapshot!(s.with_pack("settings").arg("check"));
}

// --- resolve --------------------------------------------------------------------------------

fn resolve(s: &Sandbox, args: &[&str]) -> Value {
    let mut cmd = s.cmd();
    cmd.args(["resolve", "auditor", "--prompts-dir=.app/prompts", "--json"])
        .args(args);
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.lines().count(),
        1,
        "exactly one JSON object: {stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn resolve_follows_the_rule_for_every_mode() {
    let s = Sandbox::new();
    s.global(".app/prompts/auditor.md", "Global.");
    s.local(".app/prompts/auditor.md", "Local.");
    let expect = |final_text: &str, injected: Option<&str>, source: &str| serde_json::json!({ "final": final_text, "injected": injected, "source": source });
    for (mode, expected) in [
        ("override", expect("Local.", Some("Local."), "local")),
        ("append", expect("D\n\nLocal.", Some("Local."), "local")),
        (
            "global-local",
            expect("D\n\nLocal.", Some("Local."), "local"),
        ),
        ("local", expect("D\n\nLocal.", Some("Local."), "local")),
        (
            "global-local-merge",
            expect(
                "D\n\nGlobal.\n\nLocal.",
                Some("Global.\n\nLocal."),
                "merged",
            ),
        ),
        ("off", expect("D", None, "none")),
    ] {
        assert_eq!(
            resolve(&s, &["--default=D", &format!("--mode={mode}")]),
            expected,
            "{mode}"
        );
    }
    assert_eq!(
        resolve(&s, &["--default=D", "--mode=off", "--inline=Wins."]),
        expect("Wins.", Some("Wins."), "inline")
    );
    // `--cwd=` (empty): no local lookup.
    assert_eq!(
        resolve(&s, &["--default=D", "--cwd="]),
        expect("D\n\nGlobal.", Some("Global."), "global")
    );
}

#[test]
fn resolve_passes_texts_through_byte_for_byte() {
    let s = Sandbox::new();
    let odd = "--not-a-flag\n  ünïcödé 日本語\n";
    let value = resolve(&s, &["--default", odd]);
    assert_eq!(value["final"], odd);
    let value = resolve(&s, &["--default=", "--inline", "-x"]);
    assert_eq!(value["final"], "-x");
    let (code, stdout, _) =
        run(s
            .cmd()
            .args(["resolve", "auditor", "--prompts-dir=.p", "--default", odd]));
    assert_eq!((code, stdout.as_str()), (0, odd));
    let (code, stdout, _) =
        run(s
            .cmd()
            .args(["resolve", "auditor", "--prompts-dir=.p", "--default="]));
    assert_eq!((code, stdout.as_str()), (0, ""));
}

#[test]
fn resolve_takes_the_prompts_dir_from_the_pack_or_requires_it() {
    let s = Sandbox::new();
    s.local(
        ".pi/pi-goal-xx/prompts/auditor.md",
        "From the pack's directory.",
    );
    let mut cmd = s.with_pack("goal-agent");
    cmd.args(["resolve", "auditor", "--default=D"]);
    assert_eq!(run(&mut cmd).1, "D\n\nFrom the pack's directory.");
    let (code, stdout, stderr) = run(s.cmd().args(["resolve", "auditor", "--default=D"]));
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains("--prompts-dir"), "{stderr}");
}

// --- diff, schema, init, completions --------------------------------------------------------------

#[test]
fn diff_shows_what_the_user_configuration_changes() {
    let s = configured();
    s.settings().bind(|| {
        assert_cmd_snapshot!(
            s.with_pack("goal-agent")
                .args(["diff", "goal-running", "--ctx"])
                .arg(context("goal-agent"))
        );
        assert_cmd_snapshot!(s.with_pack("goal-agent").args(["diff", "goal-drafting"]));
    });
    // As diff(1): 1 when the texts differ, 0 when they are the same.
    let code = |id: &str| {
        let mut cmd = s.with_pack("goal-agent");
        cmd.args(["diff", id, "--json", "--ctx"])
            .arg(context("goal-agent"));
        run(&mut cmd).0
    };
    assert_eq!((code("goal-running"), code("goal-drafting")), (1, 0));
}

#[test]
fn schema_is_the_settings_json_schema() {
    let s = Sandbox::new();
    let schema = json(s.with_pack("goal-agent").arg("schema"));
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["properties"]["prompts"]["properties"]["goal-running"].is_object());
    assert_eq!(schema["properties"]["auditorPrompt"]["deprecated"], true);
}

#[test]
fn init_creates_a_valid_configuration_and_never_overwrites() {
    let s = Sandbox::new();
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("goal-agent").arg("init")));
    let settings = s.cwd().join(".pi/pi-goal-xx-settings.json");
    assert!(s.cwd().join(".pi/pi-goal-xx/prompts").is_dir());
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("check"));
    assert_eq!((code, stdout.as_str()), (0, "no problems found\n"));

    let before = fs::read_to_string(&settings).unwrap();
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").arg("init"));
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains("never overwrites"), "{stderr}");
    assert_eq!(fs::read_to_string(&settings).unwrap(), before);

    let (code, ..) = run(s.with_pack("goal-agent").args(["init", "--global"]));
    assert_eq!(code, 0);
    assert!(s.home().join(".pi/pi-goal-xx-settings.json").is_file());
}

/// `init` creates the prompts directory the library reads: home itself for
/// `~`, not a folder named `~` in the project.
#[test]
fn init_creates_the_prompts_dir_the_library_reads_for_tilde() {
    for (declared, under_home) in [("~", None), ("~/x", Some("x"))] {
        let s = Sandbox::new();
        let manifest = s.pack("goal-agent").join("promptreg.toml");
        let text = fs::read_to_string(&manifest).unwrap().replace(
            "prompts_dir = \".pi/pi-goal-xx/prompts/\"",
            &format!("prompts_dir = \"{declared}\""),
        );
        fs::write(&manifest, text).unwrap();
        let out = json(s.with_pack("goal-agent").arg("init"));
        let made = under_home.map_or(s.home(), |dir| s.home().join(dir));
        let reported = s.root.path().join(out["prompts_dir"].as_str().unwrap());
        assert_eq!(reported, made, "{declared}");
        assert!(made.is_dir(), "{declared}");
        assert!(!s.cwd().join("~").exists(), "{declared}");
    }
}

// --- trust ---------------------------------------------------------------------------------

/// A project whose auditor prompt file links to a file under home.
fn linked_outside() -> Sandbox {
    let s = Sandbox::new();
    s.global("notes.md", "Private notes.");
    s.local(
        ".pi/pi-goal-xx-settings.json",
        r#"{ "prompts": { "auditor": { "mode": "append" } } }"#,
    );
    let dir = s.cwd().join(".pi/pi-goal-xx/prompts");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(s.home().join("notes.md"), dir.join("auditor.md")).unwrap();
    s
}

#[test]
fn a_link_out_of_the_project_is_refused_with_the_command_that_trusts_it() {
    let s = linked_outside();
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(["render", "auditor"]));
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(!stderr.contains("Private notes."), "{stderr}");
    let root = s.cwd().canonicalize().unwrap();
    let command = format!("promptreg trust {}", root.display());
    assert!(stderr.contains(&command), "{stderr}");
    assert!(stderr.contains("notes.md"), "{stderr}");

    // The command it names, as a user would paste it.
    let (code, ..) = run(s.with_pack("goal-agent").args(["trust"]).arg(&root));
    assert_eq!(code, 0);
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(["render", "auditor"]));
    assert_eq!(code, 0, "{stderr}");
    // The user's block comes before the auditor's pinned answer format.
    assert!(
        stdout.contains("\n\nPrivate notes.\n\nAnswer PASS or FAIL"),
        "{stdout}"
    );
}

#[test]
fn a_file_setting_out_of_the_project_is_refused_at_the_setting() {
    let s = Sandbox::new();
    s.global("notes.md", "Private notes.");
    s.local(
        ".pi/pi-goal-xx-settings.json",
        "{\n  \"prompts\": {\n    \"auditor\": { \"file\": \"~/notes.md\" }\n  }\n}\n",
    );
    let (code, _, stderr) = run(s
        .with_pack("goal-agent")
        .args(["--json", "render", "auditor"]));
    assert_eq!(code, 2);
    let value: Value = serde_json::from_str(&stderr).unwrap();
    let error = &value["error"];
    assert_eq!(error["code"], "outside-project", "{value}");
    assert_eq!(error["key_path"], "prompts.auditor.file", "{value}");
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(3), Some(26)),
        "{value}"
    );
    assert!(
        error["file"]
            .as_str()
            .unwrap()
            .ends_with(".pi/pi-goal-xx-settings.json"),
        "{value}"
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("not read: this file `~/notes.md` is outside the project "),
        "{message}"
    );
    assert!(
        !message.contains(" in "),
        "one sentence, the location apart: {message}"
    );
}

#[test]
fn trust_adds_the_project_to_the_global_settings_once() {
    let s = Sandbox::new();
    let original =
        "{\n  // my own settings\n  \"prompts\": { \"auditor\": { \"mode\": \"append\" } },\n}\n";
    s.global(".pi/pi-goal-xx-settings.json", original);
    s.settings().bind(|| {
        assert_cmd_snapshot!(s.with_pack("goal-agent").arg("trust"));
        assert_cmd_snapshot!(s.with_pack("goal-agent").arg("trust"));
    });
    let text = fs::read_to_string(s.home().join(".pi/pi-goal-xx-settings.json")).unwrap();
    let root = s.cwd().canonicalize().unwrap();
    assert_eq!(
        text,
        format!(
            "{{\n  // my own settings\n  \"prompts\": {{ \"auditor\": {{ \"mode\": \"append\" }} }},\n  \"trustedProjects\": [\n    \"{}\"\n  ],\n}}\n",
            root.display()
        )
    );
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("check"));
    assert_eq!((code, stdout.as_str()), (0, "no problems found\n"));
}

#[test]
fn trust_json_and_an_explicit_folder() {
    let s = Sandbox::new();
    fs::create_dir_all(s.root.path().join("other/sub")).unwrap();
    let value = json(s.with_pack("goal-agent").args(["trust", "other"]));
    let root = s.root.path().join("other").canonicalize().unwrap();
    assert_eq!(value["root"], root.display().to_string());
    assert_eq!(value["entry"], root.display().to_string());
    assert_eq!(value["added"], true);
    assert_eq!(value["settings"], "home/.pi/pi-goal-xx-settings.json");
    // A folder below a trusted one is trusted already.
    let value = json(s.with_pack("goal-agent").args(["trust", "other/sub"]));
    assert_eq!(value["added"], false);
    assert_eq!(value["entry"], root.display().to_string());
}

#[test]
fn trust_refuses_a_missing_folder_and_a_broken_settings_file() {
    let s = Sandbox::new();
    let (code, _, stderr) = run(s.with_pack("goal-agent").args(["trust", "nowhere"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot trust nowhere"), "{stderr}");
    s.global(".pi/pi-goal-xx-settings.json", "{ \"prompts\": ");
    let (code, _, stderr) = run(s.with_pack("goal-agent").arg("trust"));
    assert_eq!(code, 2);
    assert!(stderr.contains("pi-goal-xx-settings.json"), "{stderr}");
    assert_eq!(
        fs::read_to_string(s.home().join(".pi/pi-goal-xx-settings.json")).unwrap(),
        "{ \"prompts\": "
    );
    let mut no_project = Command::new(get_cargo_bin("promptreg"));
    no_project.current_dir(s.root.path()).args([
        "--home",
        "home",
        "--cwd=",
        "--pack",
        "goal-agent",
        "trust",
    ]);
    let (code, _, stderr) = run(&mut no_project);
    assert_eq!(code, 2);
    assert!(stderr.contains("needs a project folder"), "{stderr}");
}

#[test]
fn explain_shows_where_a_linked_prompt_file_leads() {
    let s = Sandbox::new();
    s.local("rules/shared.md", "A shared rule.");
    s.local(
        ".pi/pi-goal-xx-settings.json",
        r#"{ "prompts": { "auditor": { "mode": "append" } } }"#,
    );
    let dir = s.cwd().join(".pi/pi-goal-xx/prompts");
    fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("../../../rules/shared.md", dir.join("auditor.md")).unwrap();
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(["explain", "auditor"]));
    assert_eq!(code, 0, "{stderr}");
    let target = s.cwd().join("rules/shared.md").canonicalize().unwrap();
    let line = format!(
        "── user local file project/.pi/pi-goal-xx/prompts/auditor.md → {}, mode append",
        target.display()
    );
    assert!(stdout.contains(&line), "{stdout}");

    let value = json(s.with_pack("goal-agent").args(["explain", "auditor"]));
    let user = &value["parts"][1]["provenance"];
    assert_eq!(user["target"], target.display().to_string());
    assert_eq!(user["file"], "project/.pi/pi-goal-xx/prompts/auditor.md");
}

#[test]
fn a_home_or_cwd_that_does_not_exist_is_an_error() {
    let s = Sandbox::new();
    s.local("a-file", "x");
    let bare = || {
        let mut cmd = Command::new(get_cargo_bin("promptreg"));
        cmd.current_dir(s.root.path())
            .args(["--pack", "goal-agent"]);
        cmd
    };
    for (args, expected) in [
        (
            ["--home", "hom", "--cwd", "project"],
            "error: --home hom: the folder does not exist",
        ),
        (
            ["--home", "home", "--cwd", "projet"],
            "error: --cwd projet: the folder does not exist",
        ),
        (
            ["--home", "home", "--cwd", "project/a-file"],
            "error: --cwd project/a-file: the folder is not a directory",
        ),
    ] {
        let (code, stdout, stderr) = run(bare().args(args).arg("list"));
        assert_eq!((code, stdout.as_str()), (2, ""), "{args:?}");
        assert_eq!(stderr.trim_end(), expected);
    }
    // `--cwd=` still means "no project".
    let (code, ..) = run(bare().args(["--home", "home", "--cwd=", "list"]));
    assert_eq!(code, 0);
}

/// What the shell gets when it asks for completions of `line` (fish's
/// protocol: one candidate a line, a tab before its description).
fn complete(s: &Sandbox, line: &[&str]) -> Vec<String> {
    let output = Command::new(get_cargo_bin("promptreg"))
        .current_dir(s.root.path())
        .env("COMPLETE", "fish")
        .arg("--")
        .args(line)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn completions_offer_modes_and_prompt_ids() {
    let s = Sandbox::new();
    assert_eq!(
        complete(&s, &["promptreg", "resolve", "auditor", "--mode", "glo"]),
        ["global-local", "global-local-merge"]
    );
    for command in ["render", "explain", "diff"] {
        assert_eq!(
            complete(
                &s,
                &["promptreg", "--pack", "goal-agent", command, "goal-t"]
            ),
            ["goal-tweak"],
            "{command}"
        );
    }
    let ids = complete(&s, &["promptreg", "--pack=web-agent", "render", ""]);
    assert!(ids.contains(&"planner.system".to_owned()), "{ids:?}");
}

#[test]
fn render_ends_with_a_newline_on_a_terminal_only() {
    let s = Sandbox::new();
    let (_, piped, _) = run(s.with_pack("goal-agent").args(["render", "auditor"]));
    assert!(!piped.ends_with('\n'), "piped output is byte for byte");
    // `script` runs the command on a pseudo-terminal.
    let binary = get_cargo_bin("promptreg");
    let line = format!(
        "{} --pack goal-agent --home home --cwd project render auditor; echo '<end>'",
        binary.display()
    );
    let output = Command::new("script")
        .current_dir(s.root.path())
        .args(["-qec", &line, "/dev/null"])
        .env("NO_COLOR", "1")
        .output()
        .expect("`script` (util-linux) runs a command on a terminal");
    let text = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    assert!(
        text.contains(&format!("{}\n<end>", piped.trim_end())),
        "{text:?}"
    );
}

#[test]
fn completions_for_each_shell() {
    let s = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let (code, stdout, _) = run(s.cmd().args(["completions", shell]));
        assert_eq!(code, 0);
        assert!(stdout.contains("promptreg"), "{shell}");
    }
}

// --- Bad input: one message on stderr, exit 2, nothing on stdout ----------------------------------

#[test]
fn bad_input_is_one_clear_error_with_exit_code_2() {
    let s = Sandbox::new();
    s.local("bad-context.json", "{ \"brand\": \"Acme\",\n  oops }");
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("invalid id", vec!["render".into(), "../x".into()]),
        ("unknown id", vec!["render".into(), "goal-runing".into()]),
        (
            "invalid locale",
            vec!["--locale=en--US".into(), "render".into(), "auditor".into()],
        ),
        (
            "context not JSON",
            vec![
                "render".into(),
                "auditor".into(),
                "--ctx".into(),
                "project/bad-context.json".into(),
            ],
        ),
        (
            "unreadable context",
            vec![
                "render".into(),
                "auditor".into(),
                "--ctx".into(),
                "project/missing.json".into(),
            ],
        ),
        (
            "missing required variable",
            vec!["render".into(), "goal-running".into()],
        ),
        (
            "invalid mode",
            vec![
                "resolve".into(),
                "auditor".into(),
                "--default=D".into(),
                "--mode=replace".into(),
            ],
        ),
        (
            "invalid resolve key",
            vec![
                "resolve".into(),
                "tool-../../x".into(),
                "--default=D".into(),
            ],
        ),
    ];
    let mut report = String::new();
    for (name, args) in cases {
        let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(&args));
        assert_eq!(code, 2, "{name}: {stderr}");
        assert_eq!(stdout, "", "{name}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "{name}: {stderr}"
        );
        report.push_str(&format!("--- {name}\n{stderr}"));
    }
    s.settings().bind(|| insta::assert_snapshot!(report));
}

#[test]
fn a_missing_pack_is_an_error() {
    let s = Sandbox::new();
    let (code, stdout, stderr) = run(s.cmd().arg("list"));
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(stderr.contains("no promptreg.toml in"), "{stderr}");
    let (code, _, stderr) = run(s.cmd().args(["--pack", "/nonexistent/pack", "render", "x"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("no pack at /nonexistent/pack"), "{stderr}");
}

#[test]
fn an_invalid_settings_file_stops_render_with_its_diagnostics() {
    let s = Sandbox::new();
    s.local(
        ".pi/pi-goal-xx-settings.json",
        "{ \"prompts\": { \"auditor\": { \"mode\": 3 } } }",
    );
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(["render", "auditor"]));
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert!(
        stderr.contains("expected a string, found a number at `prompts.auditor.mode`"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let s = Sandbox::new();
    let (code, stdout, _) = run(s.cmd().arg("frobnicate"));
    assert_eq!((code, stdout.as_str()), (2, ""));
    let (code, ..) = run(s.cmd().args(["--color=sometimes", "list"]));
    assert_eq!(code, 2);
}

// --- --watch ----------------------------------------------------------------------------------

/// Reads a child's stream line by line on a thread.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stream)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Starts `cmd` (a `--watch` command) with its output read line by line.
fn watching(
    cmd: &mut Command,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = lines_of(child.stdout.take().unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    (child, stdout, stderr)
}

/// Waits (with a generous deadline) for a line containing `needle`; the
/// lines before it.
fn wait_for(lines: &std::sync::mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return before,
            Ok(line) => before.push(line),
            Err(e) => panic!("no line with {needle:?}: {e}"),
        }
    }
}

#[test]
fn render_watch_prints_again_when_a_file_changes() {
    let s = Sandbox::new();
    s.local(".pi/pi-goal-xx/prompts/auditor.md", "First rule.");
    let (mut child, stdout, stderr) = watching(
        s.with_pack("goal-agent")
            .args(["render", "auditor", "--watch"]),
    );
    wait_for(&stdout, "First rule.");

    s.local(".pi/pi-goal-xx/prompts/auditor.md", "Second rule.");
    // A script splits the renders on the line holding only U+001E.
    let between = wait_for(&stdout, "Second rule.");
    assert!(
        between.iter().any(|line| line == "\u{1e}"),
        "no separator line before the second render: {between:?}"
    );
    wait_for(&stderr, "reloaded; changed: auditor");

    s.local(".pi/pi-goal-xx-settings.json", "{ broken");
    wait_for(&stderr, "the previous configuration stays in force");

    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn render_watch_json_reports_reloads_and_failures_as_json_lines() {
    let s = Sandbox::new();
    s.local(".pi/pi-goal-xx/prompts/auditor.md", "First rule.");
    let (mut child, stdout, stderr) = watching(
        s.with_pack("goal-agent")
            .args(["--json", "render", "auditor", "--watch"]),
    );
    // JSON Lines: each render is one compact object on its line.
    let first = stdout
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap();
    let render: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first}"));
    assert!(
        render["text"].as_str().unwrap().contains("First rule."),
        "{render}"
    );
    s.local(".pi/pi-goal-xx-settings.json", "{ broken");
    let line = stderr
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap();
    let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(event["event"], "failed", "{event}");
    assert_eq!(event["error"]["code"], "syntax", "{event}");
    s.local(".pi/pi-goal-xx-settings.json", "{}");
    let line = stderr
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap();
    let event: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(event["event"], "reloaded", "{event}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn render_watch_follows_the_pack_too() {
    let s = Sandbox::new();
    let (mut child, stdout, stderr) =
        watching(
            s.with_pack("goal-agent")
                .args(["render", "goal-stale", "--watch"]),
        );
    wait_for(&stdout, "");
    s.write(
        &s.pack("goal-agent").join("defaults/goal-stale.md"),
        "---\ndescription: Notice for a stale checkpoint\n---\nThe checkpoint is stale; ask before resuming.",
    );
    wait_for(&stdout, "ask before resuming");
    wait_for(&stderr, "reloaded; changed: goal-stale");
    child.kill().unwrap();
    child.wait().unwrap();
}

// --- A declared key without a default file ---------------------------------------------

/// The goal agent pack with only a Japanese variant for `goal-tweak` (its
/// `defaults/goal-tweak.md` is missing), and a Japanese variant for a
/// misspelt `tool-*` id that has no default.
fn pack_missing_a_default() -> Sandbox {
    let s = Sandbox::new();
    fs::remove_file(s.pack("goal-agent").join("defaults/goal-tweak.md")).unwrap();
    s.write(
        &s.pack("goal-agent").join("defaults/goal-tweak.ja.md"),
        "目標を調整します。",
    );
    s.write(
        &s.pack("goal-agent").join("defaults/tool-pause-gaol.ja.md"),
        "目標を一時停止します。",
    );
    s
}

#[test]
fn check_reports_a_declared_key_without_a_default_once() {
    let s = pack_missing_a_default();
    let out = s
        .with_pack("goal-agent")
        .args(["check", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "warnings alone pass");
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diagnostics = value["diagnostics"].as_array().unwrap();
    let missing = diagnostics
        .iter()
        .find(|d| d["code"] == "missing-default")
        .unwrap();
    assert_eq!(
        missing["message"],
        "key `goal-tweak` is declared but has no default file defaults/goal-tweak.md"
    );
    assert!(
        missing["file"]
            .as_str()
            .unwrap()
            .ends_with("promptreg.toml")
    );
    assert_eq!(missing["line"], 9);
    assert_eq!(missing["column"], 5);
    // The variant of an id that matches a pattern but has no default is a
    // registry problem, with the nearest default.
    let orphan = diagnostics
        .iter()
        .find(|d| d["code"] == "no-default")
        .unwrap();
    assert_eq!(
        orphan["message"],
        "`tool-pause-gaol` has overrides (ja) but no default is registered"
    );
    assert_eq!(orphan["suggestion"], "did you mean `tool-pause-goal`?");
    // `goal-tweak`'s variant makes it a registry problem too (an override
    // without a default); it is reported once.
    assert_eq!(value["warnings"], 2, "{value:#}");
}

#[test]
fn list_render_and_explain_agree_about_a_declared_key_without_a_default() {
    let s = pack_missing_a_default();
    let (code, stdout, _) = run(s.with_pack("goal-agent").arg("list"));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("declared, but no default file defaults/goal-tweak.md"),
        "{stdout}"
    );
    for command in ["render", "explain"] {
        let (code, stdout, stderr) = run(s.with_pack("goal-agent").args([command, "goal-tweak"]));
        assert_eq!(code, 2, "{command}: {stderr}");
        assert_eq!(stdout, "", "{command}");
        assert!(
            stderr.contains(
                "key `goal-tweak` is declared but has no default file defaults/goal-tweak.md"
            ),
            "{command}: {stderr}"
        );
        assert!(stderr.contains("promptreg.toml"), "{command}: {stderr}");
        assert!(!stderr.contains("unknown prompt id"), "{command}: {stderr}");
    }
    // In the variant's locale there is something to show.
    let (code, stdout, _) =
        run(s
            .with_pack("goal-agent")
            .args(["render", "goal-tweak", "--locale", "ja"]));
    assert_eq!(code, 0);
    assert_eq!(stdout, "目標を調整します。");
    // An id nobody declares is still an unknown id.
    let (code, _, stderr) = run(s.with_pack("goal-agent").args(["render", "goal-twaek"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unknown prompt id `goal-twaek`"),
        "{stderr}"
    );
}

// --- Hostile input: never a crash, never unbounded or raw output --------------------------------

const SETTINGS: &str = ".pi/pi-goal-xx-settings.json";

/// Runs `args` on the goal agent; asserts no panic and output of at most
/// `max` bytes on each stream, and returns (code, stdout, stderr).
fn bounded(s: &Sandbox, args: &[&str], max: usize) -> (i32, String, String) {
    let (code, stdout, stderr) = run(s.with_pack("goal-agent").args(args));
    assert!(
        !stderr.contains("panicked") && code != 101,
        "{args:?} crashed: {stderr}"
    );
    assert!(stdout.len() <= max, "{args:?}: {} bytes out", stdout.len());
    assert!(
        stderr.len() <= max,
        "{args:?}: {} bytes on stderr",
        stderr.len()
    );
    (code, stdout, stderr)
}

#[test]
fn an_error_past_column_65535_is_shown_not_a_crash() {
    let s = Sandbox::new();
    let inline = "A".repeat(70_000);
    s.local(
        SETTINGS,
        &format!(r#"{{"prompts":{{"goal-running":{{"inline":"{inline}","mode":"apend"}}}}}}"#),
    );
    let (code, stdout, _) = bounded(&s, &["check"], 3000);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("pi-goal-xx-settings.json:1:70048]"),
        "{stdout}"
    );
    assert!(stdout.contains("help: did you mean `append`?"), "{stdout}");
    for command in ["render", "explain"] {
        let (code, _, stderr) = bounded(&s, &[command, "goal-running"], 3000);
        assert_eq!(code, 2, "{command}");
        assert!(
            stderr.contains("invalid mode `apend`"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn render_watch_survives_a_minified_file_with_an_error_past_column_65535() {
    let s = Sandbox::new();
    s.local(".pi/pi-goal-xx/prompts/auditor.md", "First rule.");
    let (mut child, stdout, stderr) = watching(
        s.with_pack("goal-agent")
            .args(["render", "auditor", "--watch"]),
    );
    wait_for(&stdout, "First rule.");

    let inline = "A".repeat(70_000);
    s.local(
        SETTINGS,
        &format!(r#"{{"prompts":{{"auditor":{{"inline":"{inline}","mode":"apend"}}}}}}"#),
    );
    wait_for(&stderr, "the previous configuration stays in force");
    wait_for(&stderr, "invalid mode `apend`");

    // Still following: a fixed file is picked up.
    s.local(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "inline": "Fixed." } } }"#,
    );
    wait_for(&stdout, "Fixed.");
    assert!(child.try_wait().unwrap().is_none(), "the watcher exited");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_nul_byte_65536_characters_into_a_file_target_is_shown_not_a_crash() {
    let s = Sandbox::new();
    s.local("rules/goal.md", &format!("{}\0tail", "B".repeat(65_536)));
    s.local(
        SETTINGS,
        r#"{ "prompts": { "goal-running": { "file": "rules/goal.md" } } }"#,
    );
    let (code, stdout, _) = bounded(&s, &["check"], 3000);
    assert_eq!(code, 1);
    assert!(stdout.contains("NUL byte at byte offset 65536"), "{stdout}");
    assert!(stdout.contains("rules/goal.md:1:65537]"), "{stdout}");
    assert!(
        stdout.contains(r"\0tail"),
        "the NUL is shown escaped: {stdout}"
    );
    let (code, _, stderr) = bounded(&s, &["render", "goal-running"], 3000);
    assert_eq!(code, 2);
    assert!(stderr.contains("NUL byte"), "{stderr}");
}

#[test]
fn a_600_kb_line_shows_a_window_around_the_error() {
    let s = Sandbox::new();
    let filler = "x".repeat(600_000);
    s.local(
        SETTINGS,
        &format!(r#"{{ "$schema": "{filler}", "prompts": {{ "auditor": {{ "mode": 7 }} }} }}"#),
    );
    let (code, stdout, _) = bounded(&s, &["check"], 2000);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("expected a string, found a number"),
        "{stdout}"
    );
    assert!(stdout.contains("…"), "the line is cut: {stdout}");
}

#[test]
fn a_1_mb_key_is_cut_in_every_message() {
    let s = Sandbox::new();
    let key = "k".repeat(1_000_000);
    for settings in [
        format!(r#"{{ "{key}": 1 }}"#),
        format!(r#"{{ "prompts": {{ "{key}": {{}} }} }}"#),
        format!(r#"{{ "prompts": {{ "auditor": {{ "{key}": 2 }} }} }}"#),
        format!(r#"{{ "prompts": {{ "auditor": {{ "mode": "{key}" }} }} }}"#),
    ] {
        s.local(SETTINGS, &settings);
        let (code, stdout, _) = bounded(&s, &["check"], 4000);
        assert_eq!(code, 1);
        assert!(stdout.contains("kkk…"), "{stdout}");
        let (code, _, stderr) = bounded(&s, &["--json", "render", "auditor"], 4000);
        assert_eq!(code, 2);
        let error: Value = serde_json::from_str(&stderr).unwrap();
        assert!(error.to_string().contains("kkk…"), "{error}");
    }
}

#[test]
fn control_characters_in_a_file_name_are_escaped_everywhere() {
    let s = Sandbox::new();
    s.local(
        ".pi/pi-goal-xx/prompts/goal-running.\u{1b}]0;PWNED\u{7}.md",
        "Hi.",
    );
    s.local(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "file": "\u001b]0;PWNED\u0007.md" } } }"#,
    );
    let escaped = r"goal-running.\u{1b}]0;PWNED\u{7}.md";
    let (_, stdout, _) = bounded(&s, &["check"], 4000);
    assert!(stdout.contains(escaped), "{stdout}");
    let (_, stdout, _) = bounded(&s, &["--json", "check"], 8000);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let first = &report["diagnostics"][0];
    assert!(
        first["file"].as_str().unwrap().ends_with(escaped),
        "{report}"
    );
    let second = &report["diagnostics"][1];
    assert!(
        second["message"]
            .as_str()
            .unwrap()
            .contains(r"\u{1b}]0;PWNED\u{7}.md"),
        "{report}"
    );
    let (_, list, _) = bounded(&s, &["list"], 8000);
    assert!(list.contains(r"\u{1b}]0;PWNED\u{7}.md"), "{list}");
    let (_, explain, _) = bounded(&s, &["explain", "auditor"], 8000);
    for out in [stdout, list, explain] {
        assert!(
            !out.contains(['\u{1b}', '\u{7}']),
            "raw control character in {out}"
        );
    }
}

#[test]
fn json_errors_go_to_standard_error_as_json() {
    let s = Sandbox::new();
    let (code, stdout, stderr) =
        run(s
            .with_pack("goal-agent")
            .args(["--json", "render", "goal-runing"]));
    assert_eq!((code, stdout.as_str()), (2, ""));
    let error: Value = serde_json::from_str(&stderr).unwrap();
    assert_eq!(error["error"]["code"], "unknown-id");
    assert_eq!(
        error["error"]["message"],
        "unknown prompt id `goal-runing` (did you mean `goal-running`?)"
    );
    assert!(error["error"]["file"].is_null() && error.get("diagnostics").is_none());

    s.local(
        SETTINGS,
        "{\n  \"prompts\": { \"auditor\": { \"mode\": 3 } },\n  \"nope\": 1\n}\n",
    );
    let (code, _, stderr) = run(s
        .with_pack("goal-agent")
        .args(["--json", "render", "auditor"]));
    assert_eq!(code, 2);
    let error: Value = serde_json::from_str(&stderr).unwrap();
    let first = &error["error"];
    assert_eq!(first["code"], "wrong-type");
    assert_eq!(first["message"], "expected a string, found a number");
    assert!(first["file"].as_str().unwrap().ends_with(SETTINGS));
    assert_eq!(
        (first["line"].as_u64(), first["column"].as_u64()),
        (Some(2), Some(37))
    );
    assert_eq!(first["key_path"], "prompts.auditor.mode");
    let all = error["diagnostics"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1]["code"], "unknown-key");

    for args in [
        &["--json", "--pack", "nowhere", "list"][..],
        &["--json", "list", "--bogus"],
    ] {
        let (code, _, stderr) = run(s.cmd().args(args));
        assert_eq!(code, 2, "{args:?}");
        let error: Value =
            serde_json::from_str(&stderr).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        assert_eq!(error["error"]["code"], "usage", "{args:?}");
    }
}

#[test]
fn messages_are_not_wrapped_off_a_terminal() {
    let s = Sandbox::new();
    let dir = ".pi/pi-goal-xx/prompts/a-rather-long-folder-name-that-goes-past-any-width";
    s.local(SETTINGS, &format!(r#"{{ "promptsDir": "{dir}/" }}"#));
    s.local(&format!("{dir}/goal-tweak-extra.md"), "Tweak.");
    let (_, stdout, _) = bounded(&s, &["check"], 4000);
    let line = stdout
        .lines()
        .find(|l| l.contains("the file name matches no prompt key"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.ends_with(&format!("{dir}/goal-tweak-extra.md")),
        "{stdout}"
    );
}

#[test]
fn the_context_is_read_up_to_a_limit_and_only_from_a_file_or_stdin() {
    use std::io::Write;
    let s = Sandbox::new();
    let render = |extra: &[&str]| {
        let mut cmd = s.with_pack("goal-agent");
        cmd.args(["render", "auditor"]).args(extra);
        run(&mut cmd)
    };
    let (code, _, stderr) = render(&["--ctx", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("/dev/zero is not a regular file; pass a JSON file, or `-`"),
        "{stderr}"
    );
    let (code, _, stderr) = render(&["--ctx", "project"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is not a regular file"), "{stderr}");

    s.local("big.json", &format!("{{\"a\": \"{}\"}}", "x".repeat(2048)));
    let (code, _, stderr) = render(&["--ctx", "project/big.json", "--max-ctx-size", "1KiB"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("larger than the context limit of 1 KiB; pass --max-ctx-size to raise it"),
        "{stderr}"
    );
    let (code, ..) = render(&["--ctx", "project/big.json", "--max-ctx-size", "4KiB"]);
    assert_eq!(code, 0);

    // Standard input is cut at the limit too, without reading it all.
    let mut child = s
        .with_pack("goal-agent")
        .args(["render", "auditor", "--ctx", "-", "--max-ctx-size", "64KiB"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let chunk = vec![b' '; 64 * 1024];
        // Writes fail once the tool stops reading and exits: that is the point.
        for _ in 0..64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("standard input is larger than the context limit of 64 KiB"),
        "{stderr}"
    );

    let (code, _, stderr) = render(&["--max-ctx-size", "12 parsecs"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown unit `parsecs`"), "{stderr}");
}

// --- test ------------------------------------------------------------------------------------

/// The pack whose tests fail on purpose, copied into the sandbox as
/// `failing-tests`.
fn with_failing_pack(s: &Sandbox) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/failing-tests");
    copy_dir(&fixture, &s.pack("failing-tests"));
}

#[test]
fn test_passes_on_both_example_packs() {
    let s = Sandbox::new();
    for pack in ["goal-agent", "web-agent"] {
        let (code, stdout, stderr) = run(s.with_pack(pack).arg("test"));
        assert_eq!(code, 0, "{pack}: {stdout}{stderr}");
        assert!(!stdout.contains("FAIL"), "{stdout}");
        assert!(stdout.lines().filter(|l| l.starts_with("pass ")).count() >= 5);
    }
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("goal-agent").arg("test")));
}

#[test]
fn test_reports_each_failure_with_a_diff_and_exits_1() {
    let s = Sandbox::new();
    with_failing_pack(&s);
    s.settings()
        .bind(|| assert_cmd_snapshot!(s.with_pack("failing-tests").arg("test")));
}

#[test]
fn test_json_gives_every_case_and_exits_1_on_a_failure() {
    let s = Sandbox::new();
    with_failing_pack(&s);
    let (code, stdout, _) = run(s.with_pack("failing-tests").args(["test", "--json"]));
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (report["passed"].as_u64(), report["failed"].as_u64()),
        (Some(1), Some(5))
    );
    let case = &report["cases"][2];
    assert_eq!(case["case"], "wrong-text");
    assert_eq!(case["file"], "tests/greeting.toml");
    assert_eq!(case["failures"][0]["expectation"], "equals");
    assert!(
        case["failures"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+Welcome to the shop.")
    );
}

#[test]
fn test_update_rewrites_snapshots_then_they_pass() {
    let s = Sandbox::new();
    with_failing_pack(&s);
    let snapshot = s.pack("failing-tests/tests/snapshots/greeting.stale-snapshot.txt");
    let (code, stdout, _) = run(s.with_pack("failing-tests").args(["test", "--update"]));
    assert_eq!(code, 1, "the other failures remain");
    assert!(
        stdout.contains("snapshot written: tests/snapshots/greeting.stale-snapshot.txt"),
        "{stdout}"
    );
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        "Hello Bob!\nWelcome to the shop."
    );
    let (_, stdout, _) = run(s.with_pack("failing-tests").args(["test", "greeting"]));
    assert!(stdout.contains("pass greeting stale-snapshot"), "{stdout}");
}

/// A `test --update` killed after its commit, its snapshot still staged:
/// the next one finishes it before it reads the snapshots.
#[test]
fn test_update_finishes_a_stopped_update_first() {
    let s = Sandbox::new();
    with_failing_pack(&s);
    let snapshot = s.pack("failing-tests/tests/snapshots/greeting.stale-snapshot.txt");
    let staged = s.pack("failing-tests/tests/snapshots/.greeting.stale-snapshot.txt.promptreg-tmp");
    fs::write(&staged, "Hello Bob!\nWelcome to the shop.").unwrap();
    let journal = s.pack("failing-tests/.promptreg-journal");
    fs::write(
        &journal,
        "promptreg file set 1\ntests/snapshots/greeting.stale-snapshot.txt\nend\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(s.with_pack("failing-tests").args(["test", "--update"]));
    assert_eq!(code, 1, "the other failures remain");
    assert!(
        stderr.contains("note: finished an interrupted write"),
        "{stderr}"
    );
    assert!(stdout.contains("pass greeting stale-snapshot"), "{stdout}");
    assert!(!stdout.contains("snapshot written"), "{stdout}");
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        "Hello Bob!\nWelcome to the shop."
    );
    assert!(!staged.exists() && !journal.exists());
}

#[test]
fn test_runs_with_the_users_configuration() {
    let s = Sandbox::new();
    s.local(
        ".webagent/settings.json",
        r#"{ "prompts": { "webagent-narrator.system": { "mode": "override" } } }"#,
    );
    s.local(
        ".webagent/prompts/webagent-narrator.system.md",
        "You are a pirate. Arr.",
    );
    let (code, stdout, _) = run(s
        .with_pack("web-agent")
        .args(["test", "webagent-narrator.system"]));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("FAIL webagent-narrator.system brand"),
        "{stdout}"
    );
    // The pinned rule survives the override: only the body's checks fail.
    assert!(
        stdout.contains("the text does not contain \"You are the friendly assistant"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("planner.system"),
        "only the prompt asked for"
    );
}

#[test]
fn test_names_an_unknown_prompt_and_test_file_errors() {
    let s = Sandbox::new();
    let (code, _, stderr) = run(s.with_pack("goal-agent").args(["test", "goal-runing"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the pack has no prompt `goal-runing` to test"),
        "{stderr}"
    );

    s.write(
        &s.pack("goal-agent/tests/auditor.toml"),
        "prompt = \"auditor\"\n[[case]]\nname = \"x\"\ncontians = \"Audit\"\n",
    );
    let (code, _, stderr) = run(s.with_pack("goal-agent").arg("test"));
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown field `contians`"), "{stderr}");
    assert!(stderr.contains("did you mean `contains`?"), "{stderr}");
    assert!(stderr.contains("no case was run"), "{stderr}");
}

#[test]
fn schema_tests_is_the_test_file_json_schema() {
    let s = Sandbox::new();
    let schema = json(s.cmd().args(["schema", "tests"]));
    assert_eq!(schema["title"], "promptreg prompt tests");
    assert!(schema["$defs"]["case"]["properties"]["snapshot"].is_object());
}

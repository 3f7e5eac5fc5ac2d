//! Chat prompts: the rules of docs/src/packs.md ("Chat prompts"), each tested
//! through a pack and the user's configuration, and from code.

#![cfg(feature = "packs")]

mod support;

use promptreg::prelude::*;
use std::path::Path;

use promptreg::pack::Pack;
use promptreg::{Chat, ErrorKind, Message, MessageSource, Prompt, PromptRegistry, Role};
use serde_json::json;
use support::Sandbox;

const MANIFEST: &str = "name = \"shop\"\nkeys = [\"narrator\", \"reviewer\"]\n[user]\nprompts_dir = \".shop/prompts\"\nsettings_file = \".shop/settings.json\"\n";

const NARRATOR: &str = "---
kind: chat
template: true
variables:
  brand:
pin_head: \"[{{ brand }} AGENT]\"
pin_tail: Never invent prices.
model:
  model: small
  temperature: 0.2
---
# system
You guide visitors of {{ brand }}.

## Style
Be brief.

# user
Where are the tents?

# assistant
Opening /tents at {{ brand }}.

# history: conversation
";

const NARRATOR_JA: &str = "---
template: true
pin_tail: 価格を作らないこと。
model:
  max_tokens: 1200
---
# system
{{ brand }}の案内役です。

# history: conversation
";

const REVIEWER: &str = "---
kind: chat
roles: [critic]
attach: last-user
---
# system
You review drafts.

# user
First draft.

# critic
Too long.

# user
Second draft.
";

fn write(root: &Path, path: &str, text: &str) {
    support::write(&root.join(path), text);
}

/// The pack in a sandbox, installed with the user's configuration (none yet).
fn shop(sandbox: &Sandbox) -> (PromptRegistry, std::path::PathBuf) {
    let root = sandbox.root().join("pack");
    write(&root, "promptreg.toml", MANIFEST);
    write(&root, "defaults/narrator.md", NARRATOR);
    write(&root, "defaults/narrator.ja.md", NARRATOR_JA);
    write(&root, "defaults/reviewer.md", REVIEWER);
    let pack = Pack::load(&root).unwrap();
    assert_eq!(pack.warnings(), [], "the pack has warnings");
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    registry
        .load_config(pack.spec().clone(), sandbox.options())
        .unwrap();
    (registry, root)
}

fn ctx() -> serde_json::Value {
    json!({ "brand": "Acme" })
}

fn roles(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.role.as_str()).collect()
}

#[test]
fn a_chat_file_renders_its_messages_with_pins_on_the_system_message() {
    let sandbox = Sandbox::new();
    let (registry, _) = shop(&sandbox);
    registry
        .append("narrator", "Answer in the visitor's language.")
        .unwrap();
    let messages = registry.render_messages("narrator", &ctx(), &[]).unwrap();
    assert_eq!(roles(&messages), ["system", "user", "assistant"]);
    assert_eq!(
        messages[0].content,
        "[Acme AGENT]\n\nYou guide visitors of Acme.\n\n## Style\nBe brief.\n\nNever invent prices.\n\nAnswer in the visitor's language."
    );
    // Templates render per message, with the same context.
    assert_eq!(messages[2].content, "Opening /tents at Acme.");
    assert_eq!(
        serde_json::to_value(&messages[1]).unwrap(),
        json!({ "role": "user", "content": "Where are the tents?" })
    );
}

#[test]
fn a_history_is_inserted_at_its_placeholder_and_an_unknown_name_is_an_error() {
    let sandbox = Sandbox::new();
    let (registry, _) = shop(&sandbox);
    let turns = [
        Message::new(Role::User, "And backpacks?"),
        Message::new(Role::Assistant, "Opening /backpacks."),
    ];
    let messages = registry
        .render_messages("narrator", &ctx(), &[("conversation", &turns[..])])
        .unwrap();
    assert_eq!(
        roles(&messages),
        ["system", "user", "assistant", "user", "assistant"]
    );
    assert_eq!(messages[3..], turns);

    let err = registry
        .render_messages("narrator", &ctx(), &[("conversaton", &turns[..])])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChat);
    assert_eq!(err.suggestion(), Some("did you mean `conversation`?"));

    // A history's roles are checked as role headings are.
    let typo = [Message::new(Role::named("usr"), "And backpacks?")];
    let err = registry
        .render_messages("narrator", &ctx(), &[("conversation", &typo[..])])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChat);
    assert_eq!(
        err.to_string(),
        "message 1 of history `conversation` has unknown role `usr` (did you mean `user`?)"
    );
}

#[test]
fn a_history_may_use_a_custom_role_the_prompt_declares() {
    let registry = PromptRegistry::new();
    registry
        .register(
            "debate",
            Prompt::chat(Chat::new().system("Debate.").role("critic").history("h")),
        )
        .unwrap();
    let turns = [Message::new(Role::named("critic"), "Weak argument.")];
    let messages = registry
        .render_messages("debate", &(), &[("h", &turns[..])])
        .unwrap();
    assert_eq!(messages[1], turns[0]);
    let other = [Message::new(Role::named("judge"), "Overruled.")];
    let err = registry
        .render_messages("debate", &(), &[("h", &other[..])])
        .unwrap_err();
    assert!(
        err.suggestion().unwrap().contains("`roles: [judge]`"),
        "{err}: {:?}",
        err.suggestion()
    );
}

#[test]
fn a_locale_variant_replaces_the_whole_list_and_keeps_the_model_settings_rule() {
    let sandbox = Sandbox::new();
    let (registry, _) = shop(&sandbox);
    let messages = registry
        .render_messages_in("narrator", &ctx(), "ja-JP", &[])
        .unwrap();
    // The few-shot pair is the default's: the variant has none.
    assert_eq!(roles(&messages), ["system"]);
    assert_eq!(
        messages[0].content,
        "[Acme AGENT]\n\nAcmeの案内役です。\n\n価格を作らないこと。"
    );
    let model = registry
        .model_settings_in("narrator", "ja")
        .unwrap()
        .unwrap();
    assert_eq!(
        model.to_value(),
        json!({ "model": "small", "temperature": 0.2, "max_tokens": 1200 })
    );
}

#[test]
fn pins_and_appenders_attach_to_the_declared_message() {
    let sandbox = Sandbox::new();
    let (registry, _) = shop(&sandbox);
    registry.append("reviewer", "Reply in one line.").unwrap();
    registry.append_all("No personal data.").unwrap();
    let messages = registry.render_messages("reviewer", &(), &[]).unwrap();
    assert_eq!(roles(&messages), ["system", "user", "critic", "user"]);
    assert_eq!(messages[0].content, "You review drafts.");
    assert_eq!(
        messages[3].content,
        "Second draft.\n\nReply in one line.\n\nNo personal data."
    );
}

#[test]
fn a_user_file_in_mode_override_replaces_the_system_message_and_append_adds_to_it() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(".shop/prompts/narrator.md", "Speak like a pirate.");
    sandbox.cwd_file(".shop/prompts/reviewer.md", "Be kind.");
    sandbox.cwd_file(
        ".shop/settings.json",
        r#"{ "prompts": { "narrator": { "mode": "override" }, "reviewer": { "mode": "append" } } }"#,
    );
    let (registry, _) = shop(&sandbox);
    let narrator = registry.render_messages("narrator", &ctx(), &[]).unwrap();
    assert_eq!(
        narrator[0].content,
        "[Acme AGENT]\n\nSpeak like a pirate.\n\nNever invent prices."
    );
    assert_eq!(narrator[1].content, "Where are the tents?");
    // The user's block goes to the system message even when the rules
    // attach elsewhere.
    let reviewer = registry.render_messages("reviewer", &(), &[]).unwrap();
    assert_eq!(reviewer[0].content, "You review drafts.\n\nBe kind.");
    assert_eq!(reviewer[3].content, "Second draft.");
}

#[test]
fn the_trace_gives_each_message_its_parts_and_their_origins() {
    let sandbox = Sandbox::new();
    let (registry, root) = shop(&sandbox);
    let turns = [Message::new(Role::User, "Hi")];
    let rendered = registry
        .render_messages_traced_in("narrator", &ctx(), "ja", &[("conversation", &turns[..])])
        .unwrap();
    let system = &rendered.messages[0];
    let origins: Vec<String> = system.parts.iter().map(|p| p.origin.to_string()).collect();
    assert_eq!(
        origins,
        [
            "pinned head block #1",
            "override for `ja`",
            "pinned tail block #1 (`ja` translation)"
        ]
    );
    assert_eq!(system.part_text(&system.parts[1]), "Acmeの案内役です。");
    let file = system.parts[1].provenance.as_ref().unwrap().file.clone();
    assert_eq!(file, Some(root.join("defaults/narrator.ja.md")));
    assert_eq!(
        rendered.messages[1].source,
        MessageSource::History {
            name: "conversation".into(),
            index: 0
        }
    );
    assert_eq!(rendered.to_messages()[1], turns[0]);
    let value = serde_json::to_value(&rendered).unwrap();
    assert_eq!(
        value["messages"][0]["parts"][1]["origin"]["kind"],
        "override"
    );
    assert_eq!(value["messages"][0]["role"], "system");
    assert_eq!(value["model"]["max_tokens"], 1200);
}

#[test]
fn rendering_a_chat_prompt_as_text_is_an_error_unless_asked_for() {
    let sandbox = Sandbox::new();
    let (registry, _) = shop(&sandbox);
    let err = registry.render("narrator", &ctx()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ChatPrompt);
    assert_eq!(err.id(), Some("narrator"));
    assert!(err.to_string().contains("render_messages"), "{err}");
    let err = registry.render_traced("reviewer", &()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ChatPrompt);

    let text = registry
        .render_chat_as_text("reviewer", &(), "en", &[])
        .unwrap();
    assert_eq!(
        text,
        "# system\nYou review drafts.\n\n# user\nFirst draft.\n\n# critic\nToo long.\n\n# user\nSecond draft."
    );
    assert!(registry.snapshot().is_chat("reviewer", "en").unwrap());
}

#[test]
fn a_text_prompt_renders_as_one_system_message() {
    let registry = PromptRegistry::new();
    registry.register_default("plain", "Be brief.").unwrap();
    let messages = registry.render_messages("plain", &(), &[]).unwrap();
    assert_eq!(messages, [Message::new(Role::System, "Be brief.")]);
    let err = registry
        .render_messages("plain", &(), &[("history", &messages[..])])
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChat);
}

#[test]
fn a_failed_reload_of_a_chat_file_changes_nothing() {
    let sandbox = Sandbox::new();
    let (registry, root) = shop(&sandbox);
    let before = registry.render_messages("reviewer", &(), &[]).unwrap();
    write(
        &root,
        "defaults/reviewer.md",
        "---\nkind: chat\n---\n# system\nS\n\n# reviewr\nR\n",
    );
    let err = registry.reload().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    let d = &err.diagnostics()[0];
    assert_eq!(d.message, "unknown role `reviewr`");
    assert_eq!(d.position.map(|p| (p.line, p.column)), Some((7, 3)));
    assert_eq!(
        registry.render_messages("reviewer", &(), &[]).unwrap(),
        before
    );
}

#[test]
fn a_chat_registered_in_code_follows_the_same_rules() {
    let registry = PromptRegistry::new();
    let chat = Chat::new()
        .system("Plan.")
        .user(|goal: &String, _: &promptreg::Locale| format!("Goal: {goal}"))
        .attach(1);
    registry
        .register("planner", Prompt::chat(chat).pin_tail("Number the steps."))
        .unwrap();
    let messages = registry
        .render_messages("planner", &"ship it".to_owned(), &[])
        .unwrap();
    assert_eq!(messages[1].content, "Goal: ship it\n\nNumber the steps.");

    let err = registry
        .register("empty", Prompt::chat(Chat::new().history("h")))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChat);
    let err = registry
        .set_chat_override("planner", "ja", Chat::new().system("計画。").attach(3))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidChat);
    assert!(
        !registry
            .snapshot()
            .override_locales("planner")
            .iter()
            .any(|l| l.as_str() == "ja")
    );
}

#[test]
fn a_variant_of_another_kind_than_its_default_is_an_error() {
    let err = Pack::from_files(
        "inline",
        [
            ("promptreg.toml", MANIFEST),
            (
                "defaults/narrator.md",
                "---\nkind: chat\n---\n# system\nS\n",
            ),
            (
                "defaults/narrator.ja.md",
                "---\nkind: text\n---\nテキスト\n",
            ),
        ],
    )
    .unwrap_err();
    let d = &err.diagnostics()[0];
    assert_eq!(
        d.message,
        "this locale variant is `text` but its default is `chat`"
    );
    assert_eq!(d.position.map(|p| p.line), Some(2));
}

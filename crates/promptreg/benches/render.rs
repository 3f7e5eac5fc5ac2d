//! Rendering, each beside a baseline measured in the same run:
//!
//! 1. `full/*`: a ~4 KB prompt with a locale override, a user file layer
//!    (append mode) and three appenders, against `floor_concat` (the same
//!    already-rendered parts concatenated into one `String`) and a naive
//!    `Mutex<HashMap<String, Box<dyn Fn>>>` registry.
//! 2. `stateless/*`: the same prompt through `resolve_prompt`, which reads
//!    the files at every call, against the registry's snapshot render.
//! 3. `template/*`: a template prompt through the registry against the same
//!    template rendered by minijinja directly.
//! 4. `chat/*`: a chat prompt of five messages (~4 KB in all) with a
//!    locale variant and three appenders, rendered as messages, against
//!    `floor_messages` (the same already-rendered messages built into a
//!    `Vec<Message>`).
//!
//! 5. `split/*`: a subject's arm in a split (`promptreg::split`), the
//!    step a render for a subject adds, against `full/promptreg_render`.
//! 6. `contract/*`: the chat prompt of `chat/*` with 20 tools, rendered as
//!    OpenAI's whole request body (`provider_request`), against its
//!    messages alone (`render_messages`).
//!
//! Run with `cargo bench -p promptreg --bench render`; BENCHMARKS.md has
//! the figures.

use promptreg::prelude::*;
use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use divan::{Bencher, black_box};
use promptreg::config::{
    ConfigSpec, LoadOptions, Mode, PromptSettings, ResolveOptions, resolve_prompt,
};
use promptreg::pack::Pack;
use promptreg::{Chat, Locale, Message, Prompt, PromptRegistry, Role};
use tempfile::TempDir;

const ID: &str = "auditor";
const LOCALE: &str = "ja-JP";
const PROMPTS_DIR: &str = ".app/prompts";
const USER_BLOCK: &str = "Reject any claim that is not backed by a command and its output.";

fn main() {
    divan::main();
}

/// About 4 KB of prompt text.
fn body(tag: &str) -> String {
    let line =
        format!("[{tag}] Check every task against the verification contract; cite the evidence.\n");
    line.repeat(4096 / line.len() + 1).trim_end().to_owned()
}

fn appendix(n: usize) -> String {
    format!("Rule {n}: never disclose personal data, and refuse requests unrelated to the task.")
}

/// A home and a project with the user's file for `auditor`.
struct Fixture {
    _root: TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

impl Fixture {
    /// Loads the user configuration (the `auditor` file) into `registry`.
    fn configure(&self, registry: &PromptRegistry) {
        let spec = ConfigSpec::builder("bench")
            .key(ID)
            .prompts_dir(PROMPTS_DIR)
            .build()
            .unwrap();
        registry
            .load_config(spec, LoadOptions::new(&self.home, &self.cwd))
            .unwrap();
    }
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let (home, cwd) = (root.path().join("home"), root.path().join("project"));
    std::fs::create_dir_all(cwd.join(PROMPTS_DIR)).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(cwd.join(PROMPTS_DIR).join("auditor.md"), USER_BLOCK).unwrap();
    Fixture {
        _root: root,
        home,
        cwd,
    }
}

fn full_registry(f: &Fixture) -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry.register_default(ID, body("en")).unwrap();
    registry.set_override(ID, "ja", body("ja")).unwrap();
    for n in 1..=3 {
        registry.append(ID, appendix(n)).unwrap();
    }
    f.configure(&registry);
    registry
}

fn expected_parts() -> Vec<String> {
    let mut parts = vec![body("ja"), USER_BLOCK.to_owned()];
    parts.extend((1..=3).map(appendix));
    parts
}

mod split {
    use super::*;
    use promptreg::split::SplitRule;

    /// The arm of one subject (`user-` and a number, as keys come).
    #[divan::bench]
    fn arm(bencher: Bencher) {
        let rule = SplitRule {
            id: 4,
            basis_points: 1000,
        };
        bencher.bench_local(|| rule.arm(black_box("user-1234567")));
    }

    /// The same prompt as `full/promptreg_render`, with a subject's arm
    /// decided first: what `render_for` adds.
    #[divan::bench]
    fn arm_then_render(bencher: Bencher) {
        let f = fixture();
        let registry = full_registry(&f);
        let ja = Locale::parse(LOCALE).unwrap();
        let rule = SplitRule {
            id: 4,
            basis_points: 1000,
        };
        bencher.bench_local(|| {
            black_box(rule.arm(black_box("user-1234567")));
            registry
                .render_in(black_box(ID), &(), black_box(&ja))
                .unwrap()
        });
    }
}

mod full {
    use super::*;

    #[divan::bench]
    fn promptreg_render(bencher: Bencher) {
        let f = fixture();
        let registry = full_registry(&f);
        let ja = Locale::parse(LOCALE).unwrap();
        assert_eq!(
            registry.render_in(ID, &(), &ja).unwrap(),
            expected_parts().join("\n\n")
        );
        bencher.bench_local(|| {
            registry
                .render_in(black_box(ID), &(), black_box(&ja))
                .unwrap()
        });
    }

    #[divan::bench]
    fn floor_concat(bencher: Bencher) {
        let parts = expected_parts();
        let len: usize = parts.iter().map(|p| p.len() + 2).sum();
        bencher.bench_local(|| {
            let mut out = String::with_capacity(len);
            for part in black_box(&parts) {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(part);
            }
            out
        });
    }

    type NaiveRenderer = Box<dyn Fn(&dyn Any, &str) -> String + Send + Sync>;

    /// A registry as first written by hand: one lock, string keys, owned
    /// strings joined at the end.
    #[derive(Default)]
    struct NaiveRegistry {
        bodies: Mutex<HashMap<String, NaiveRenderer>>,
        appenders: Mutex<HashMap<String, Vec<NaiveRenderer>>>,
    }

    impl NaiveRegistry {
        fn render(&self, id: &str, ctx: &dyn Any, locale: &str) -> Option<String> {
            let bodies = self.bodies.lock().unwrap();
            let language = locale.split('-').next().unwrap_or(locale);
            let body = [
                format!("{id}@{locale}"),
                format!("{id}@{language}"),
                id.to_owned(),
            ]
            .iter()
            .find_map(|key| bodies.get(key))?;
            let mut parts = vec![body(ctx, locale)];
            if let Some(appenders) = self.appenders.lock().unwrap().get(id) {
                parts.extend(appenders.iter().map(|a| a(ctx, locale)));
            }
            Some(parts.join("\n\n"))
        }
    }

    #[divan::bench]
    fn naive_mutex_registry(bencher: Bencher) {
        let naive = NaiveRegistry::default();
        let (en, ja) = (body("en"), body("ja"));
        naive
            .bodies
            .lock()
            .unwrap()
            .insert(ID.to_owned(), Box::new(move |_, _| en.clone()));
        naive
            .bodies
            .lock()
            .unwrap()
            .insert(format!("{ID}@ja"), Box::new(move |_, _| ja.clone()));
        let appenders = std::iter::once(USER_BLOCK.to_owned())
            .chain((1..=3).map(appendix))
            .map(|text| Box::new(move |_: &dyn Any, _: &str| text.clone()) as NaiveRenderer)
            .collect();
        naive
            .appenders
            .lock()
            .unwrap()
            .insert(ID.to_owned(), appenders);
        assert_eq!(
            naive.render(ID, &(), LOCALE).unwrap(),
            expected_parts().join("\n\n")
        );
        bencher.bench_local(|| naive.render(black_box(ID), &(), black_box(LOCALE)).unwrap());
    }
}

mod stateless {
    use super::*;

    /// The user layer alone: the default text plus the user's block.
    fn default_text() -> String {
        body("en")
    }

    /// `resolve_prompt` on files saved before it runs: it reads again a
    /// file changed in the last two seconds.
    fn settled_fixture() -> Fixture {
        let f = fixture();
        std::thread::sleep(std::time::Duration::from_millis(2_100));
        f
    }

    #[divan::bench]
    fn resolve_prompt_reads_files(bencher: Bencher) {
        let f = settled_fixture();
        let options = ResolveOptions::new(PROMPTS_DIR, &f.home);
        let settings = PromptSettings {
            mode: Some(Mode::Append),
            ..Default::default()
        };
        let default = default_text();
        let expected = format!("{default}\n\n{USER_BLOCK}");
        assert_eq!(
            resolve_prompt(ID, &settings, &f.cwd, &default, &options)
                .unwrap()
                .final_text,
            expected
        );
        bencher.bench_local(|| {
            resolve_prompt(black_box(ID), &settings, &f.cwd, &default, &options).unwrap()
        });
    }

    /// The least a call that looks at the file can cost: one `stat`.
    #[divan::bench]
    fn floor_stat(bencher: Bencher) {
        let f = fixture();
        let file = f.cwd.join(PROMPTS_DIR).join("auditor.md");
        bencher.bench_local(|| std::fs::metadata(black_box(&file)).unwrap());
    }

    #[divan::bench]
    fn snapshot_render(bencher: Bencher) {
        let f = fixture();
        let registry = PromptRegistry::new();
        registry.register_default(ID, default_text()).unwrap();
        f.configure(&registry);
        assert_eq!(
            registry.render(ID, &()).unwrap(),
            format!("{}\n\n{USER_BLOCK}", default_text())
        );
        bencher.bench_local(|| registry.render(black_box(ID), &()).unwrap());
    }
}

mod template {
    use super::*;

    const SOURCE: &str = "You are the {{ persona }} assistant of {{ brand }}.\n\
        {% for page in sitemap %}- {{ page }}\n{% endfor %}\
        Answer in {{ locale }}. Never invent prices; read them from the page.";

    fn context() -> serde_json::Value {
        serde_json::json!({
            "brand": "Acme Outdoor",
            "persona": "friendly",
            "sitemap": (0..40).map(|n| format!("/catalogue/section-{n}")).collect::<Vec<_>>(),
        })
    }

    #[divan::bench]
    fn promptreg_template(bencher: Bencher) {
        let pack = Pack::from_files(
            "bench",
            [
                (
                    "promptreg.toml",
                    "name = \"bench\"\nkeys = [\"narrator\"]\n[user]\nprompts_dir = \".b\"\n"
                        .to_owned(),
                ),
                (
                    "defaults/narrator.md",
                    format!("---\ntemplate: true\n---\n{SOURCE}"),
                ),
            ],
        )
        .unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        let ctx = context();
        assert!(
            registry
                .render("narrator", &ctx)
                .unwrap()
                .contains("section-39")
        );
        bencher.bench_local(|| {
            registry
                .render(black_box("narrator"), black_box(&ctx))
                .unwrap()
        });
    }

    /// minijinja with the settings promptreg uses: strict, unescaped, and
    /// the same fuel limit (fuel accounting costs on every instruction).
    fn environment(fuel: Option<u64>) -> minijinja::Environment<'static> {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.set_fuel(fuel);
        env.add_template("narrator", SOURCE).unwrap();
        env
    }

    #[divan::bench(args = [false, true])]
    fn minijinja_directly(bencher: Bencher, with_fuel: bool) {
        let env = environment(with_fuel.then_some(promptreg::TEMPLATE_FUEL));
        let mut ctx = context();
        ctx["locale"] = "en".into();
        let template = env.get_template("narrator").unwrap();
        // The context is serialised per render, as the registry does.
        bencher.bench_local(|| {
            let value = minijinja::Value::from(minijinja::value::Serde(black_box(&ctx)));
            template.render(value).unwrap()
        });
    }
}

mod chat {
    use super::*;

    const CHAT_ID: &str = "narrator";

    /// About `bytes` of text for one message.
    fn text(tag: &str, bytes: usize) -> String {
        let line =
            format!("[{tag}] Narrate each step on the page briefly and cite what you read.\n");
        line.repeat(bytes / line.len() + 1).trim_end().to_owned()
    }

    /// Five messages, about 4 KB together: a long system message and two
    /// few-shot pairs.
    fn messages(tag: &str) -> Vec<(Role, String)> {
        vec![
            (Role::System, text(&format!("{tag} system"), 1600)),
            (Role::User, text(&format!("{tag} user 1"), 600)),
            (Role::Assistant, text(&format!("{tag} assistant 1"), 600)),
            (Role::User, text(&format!("{tag} user 2"), 600)),
            (Role::Assistant, text(&format!("{tag} assistant 2"), 600)),
        ]
    }

    /// The chat of these benchmarks, for the others.
    pub(super) fn chat_for_bench(tag: &str) -> Chat {
        chat(tag)
    }

    fn chat(tag: &str) -> Chat {
        messages(tag)
            .into_iter()
            .fold(Chat::new(), |chat, (role, text)| chat.message(role, text))
    }

    /// What a render returns: the `ja` messages, the system message with
    /// the three appenders.
    fn expected() -> Vec<Message> {
        let mut messages: Vec<Message> = messages("ja")
            .into_iter()
            .map(|(role, text)| Message::new(role, text))
            .collect();
        for n in 1..=3 {
            messages[0]
                .content
                .push_str(&format!("\n\n{}", appendix(n)));
        }
        messages
    }

    #[divan::bench]
    fn promptreg_render_messages(bencher: Bencher) {
        let registry = PromptRegistry::new();
        registry
            .register(CHAT_ID, Prompt::chat(chat("en")))
            .unwrap();
        registry
            .set_chat_override(CHAT_ID, "ja", chat("ja"))
            .unwrap();
        for n in 1..=3 {
            registry.append(CHAT_ID, appendix(n)).unwrap();
        }
        let ja = Locale::parse(LOCALE).unwrap();
        let rendered = registry.render_messages_in(CHAT_ID, &(), &ja, &[]).unwrap();
        assert_eq!(rendered, expected());
        let bytes: usize = rendered.iter().map(|m| m.content.len()).sum();
        assert!((3800..4600).contains(&bytes), "{bytes} bytes");
        bencher.bench_local(|| {
            registry
                .render_messages_in(black_box(CHAT_ID), &(), black_box(&ja), &[])
                .unwrap()
        });
    }

    /// The same messages from their already-rendered parts: the system
    /// message concatenated with its appenders, the others copied.
    #[divan::bench]
    fn floor_messages(bencher: Bencher) {
        let messages = messages("ja");
        let appendices: Vec<String> = (1..=3).map(appendix).collect();
        bencher.bench_local(|| {
            let messages = black_box(&messages);
            let mut out = Vec::with_capacity(messages.len());
            for (i, (role, text)) in messages.iter().enumerate() {
                let extra: usize = match i {
                    0 => appendices.iter().map(|a| a.len() + 2).sum(),
                    _ => 0,
                };
                let mut content = String::with_capacity(text.len() + extra);
                content.push_str(text);
                if i == 0 {
                    for appendix in black_box(&appendices) {
                        content.push_str("\n\n");
                        content.push_str(appendix);
                    }
                }
                out.push(Message::new(role.clone(), content));
            }
            out
        });
    }
}

mod contract {
    use super::*;
    use promptreg::{Contract, JsonObject, Provider, RenderRequest, Tool};

    /// Twenty tools, each with three parameters.
    fn tools() -> Vec<Tool> {
        (0..20)
            .map(|i| {
                let parameters = serde_json::json!({
                    "type": "object",
                    "properties": {
                        "path": { "type": "string", "description": "The page's path" },
                        "limit": { "type": "integer", "minimum": 1, "maximum": 20 },
                        "mode": { "enum": ["quick", "full"] },
                    },
                    "required": ["path", "limit", "mode"],
                    "additionalProperties": false,
                });
                let description =
                    format!("Tool number {i}: open a page of the site and read its text.");
                Tool::new(
                    format!("tool_{i}"),
                    description,
                    JsonObject::from_value(parameters).unwrap(),
                )
            })
            .collect()
    }

    fn registry() -> PromptRegistry {
        let registry = PromptRegistry::new();
        let contract = Contract::new(tools(), None).unwrap();
        registry
            .register(
                "narrator",
                Prompt::chat(super::chat::chat_for_bench("en")).with_contract(contract),
            )
            .unwrap();
        registry
    }

    #[divan::bench]
    fn render_messages(bencher: Bencher) {
        let registry = registry();
        bencher.bench_local(|| {
            registry
                .render_messages(black_box("narrator"), &(), &[])
                .unwrap()
        });
    }

    #[divan::bench]
    fn provider_request_openai(bencher: Bencher) {
        let registry = registry();
        let request = RenderRequest::new("narrator", &());
        let body = registry
            .provider_request(&request, Provider::OpenAiChat)
            .unwrap();
        assert_eq!(body["tools"].as_array().unwrap().len(), 20);
        bencher.bench_local(|| {
            registry
                .provider_request(black_box(&request), Provider::OpenAiChat)
                .unwrap()
        });
    }

    #[divan::bench]
    fn provider_request_json_openai(bencher: Bencher) {
        let registry = registry();
        let request = RenderRequest::new("narrator", &());
        let text = registry
            .provider_request_json(&request, Provider::OpenAiChat)
            .unwrap();
        assert!(text.contains("\"tool_19\""));
        bencher.bench_local(|| {
            registry
                .provider_request_json(black_box(&request), Provider::OpenAiChat)
                .unwrap()
        });
    }
}

/// A template of 50 variables, each typed by a JSON Schema: the render
/// checks every value given against its variable's compiled schema. The
/// same template without schemas is the baseline; the difference is what
/// the checks cost per render.
mod variable_schemas {
    use super::*;

    const VARIABLES: usize = 50;

    /// The pack's prompt file: `v0`..`v49`, each with `schema` when
    /// `typed`, used once each in the body.
    fn prompt_file(typed: bool) -> String {
        let mut file = String::from("---\ntemplate: true\nvariables:\n");
        for i in 0..VARIABLES {
            let schema = match i % 3 {
                0 => "{ type: string, maxLength: 200 }",
                1 => "{ type: integer, minimum: 0 }",
                _ => "{ type: object, properties: { id: { type: string } }, required: [id] }",
            };
            if typed {
                file.push_str(&format!("  v{i}: {{ schema: {schema} }}\n"));
            } else {
                file.push_str(&format!("  v{i}:\n"));
            }
        }
        file.push_str("---\n");
        for i in 0..VARIABLES {
            file.push_str(&format!("{{{{ v{i} }}}} "));
        }
        file
    }

    fn context() -> serde_json::Value {
        let values: serde_json::Map<String, serde_json::Value> = (0..VARIABLES)
            .map(|i| {
                let value = match i % 3 {
                    0 => serde_json::json!(format!("value {i}")),
                    1 => serde_json::json!(i),
                    _ => serde_json::json!({ "id": format!("id-{i}") }),
                };
                (format!("v{i}"), value)
            })
            .collect();
        serde_json::Value::Object(values)
    }

    fn registry(typed: bool) -> PromptRegistry {
        let pack = Pack::from_files(
            "bench",
            [
                (
                    "promptreg.toml",
                    "name = \"bench\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".b\"\n".to_owned(),
                ),
                ("defaults/p.md", prompt_file(typed)),
            ],
        )
        .unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        registry
    }

    fn bench(bencher: Bencher, typed: bool) {
        let registry = registry(typed);
        let ctx = context();
        assert!(registry.render("p", &ctx).unwrap().contains("value 48"));
        bencher.bench_local(|| registry.render(black_box("p"), black_box(&ctx)).unwrap());
    }

    #[divan::bench]
    fn render_untyped(bencher: Bencher) {
        bench(bencher, false);
    }

    #[divan::bench]
    fn render_schema_typed(bencher: Bencher) {
        bench(bencher, true);
    }
}

//! A session against an in-memory catalog, with the SDK's own client over
//! a pipe: typed arguments and their errors, pages, completion, and
//! `list_changed` only when what the session sees changed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use promptreg::pack::Pack;
use promptreg::{PromptRegistry, Snapshot};
use promptreg_mcp::rmcp::model::Extensions;
use promptreg_mcp::rmcp::model::{
    ErrorCode, GetPromptRequestParams, JsonObject, PaginatedRequestParams, ProtocolVersion,
    ServerNotification, SubscriptionFilter,
};
use promptreg_mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService,
};
use promptreg_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt};
use promptreg_mcp::{Catalog, Options, PromptServer, Served, ServedPack, SessionScope};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

const MANIFEST: &str = "name = \"typed\"\nkeys = [\"brief\", \"plain\"]\ndefault_locale = \"en\"\n";
const BRIEF: &str = "---
template: true
variables:
  topic: { required: true, schema: { type: string, examples: [returns, shipping] } }
  words: { type: number, default: 100 }
  count: { schema: { type: integer }, default: 1 }
  tone: { default: plain, schema: { enum: [plain, friendly] } }
  bullets: { type: boolean, default: false }
  points: { type: list, default: [] }
---
{{ tone }} {{ words }} {{ count }} {{ topic }}{% if bullets %} bullets{% endif %}{% for p in points %} {{ p }}{% endfor %}
";

struct Loaded {
    pack: Pack,
    registry: PromptRegistry,
}

impl ServedPack for Loaded {
    fn pack(&self) -> &Pack {
        &self.pack
    }

    fn snapshot(&self, _: Option<&str>) -> Arc<Snapshot> {
        self.registry.snapshot()
    }
}

/// One pack, and a state the test sets.
struct TestCatalog {
    loaded: Arc<Loaded>,
    state: Mutex<String>,
    changes: watch::Sender<u64>,
}

impl TestCatalog {
    fn new() -> Arc<TestCatalog> {
        let pack = Pack::from_files(
            "/typed",
            [
                ("promptreg.toml", MANIFEST),
                ("defaults/brief.md", BRIEF),
                ("defaults/plain.md", "Plain text.\n"),
            ],
        )
        .unwrap();
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        Arc::new(TestCatalog {
            loaded: Arc::new(Loaded { pack, registry }),
            state: Mutex::new("1".into()),
            changes: watch::Sender::new(0),
        })
    }

    /// Ticks, with the state `state`.
    fn tick(&self, state: &str) {
        *self.state.lock().unwrap() = state.to_owned();
        self.changes.send_modify(|n| *n += 1);
    }
}

impl Catalog for TestCatalog {
    type Caller = ();

    fn caller(&self, _: &Extensions) -> Result<(), ErrorData> {
        Ok(())
    }

    fn scope(&self, _: &Extensions) -> Result<SessionScope, ErrorData> {
        Ok(SessionScope::default())
    }

    async fn served(
        &self,
        _: &(),
        _: &SessionScope,
        _: Option<&str>,
    ) -> Result<Vec<Served>, ErrorData> {
        Ok(vec![Served {
            prefix: None,
            pack: self.loaded.clone(),
            state: self.state.lock().unwrap().clone(),
        }])
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    async fn run<R: Send + 'static>(
        &self,
        job: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, ErrorData> {
        Ok(job())
    }
}

/// A client that reports each `list_changed`.
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

type Connected = (
    RunningService<RoleClient, Listener>,
    mpsc::UnboundedReceiver<()>,
);

/// A client over a pipe, with a session (`initialize`).
async fn connect(catalog: Arc<TestCatalog>) -> Connected {
    connect_with(catalog, ClientLifecycleMode::Initialize).await
}

/// A client over a pipe, starting as `lifecycle` says.
async fn connect_with(catalog: Arc<TestCatalog>, lifecycle: ClientLifecycleMode) -> Connected {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = PromptServer::new(catalog, Options::default().page_size(1))
            .serve(server_io)
            .await
            .unwrap();
        let _ = running.waiting().await;
    });
    let (heard, hear) = mpsc::unbounded_channel();
    let client = Listener(heard)
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .unwrap();
    (client, hear)
}

fn arguments(value: Value) -> JsonObject {
    value.as_object().unwrap().clone()
}

async fn text(
    client: &RunningService<RoleClient, Listener>,
    name: &str,
    args: Value,
) -> Result<String, ServiceError> {
    let got = client
        .get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments(args)))
        .await?;
    Ok(got.messages[0].content.as_text().unwrap().text.clone())
}

fn mcp_error(result: Result<String, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected an MCP error, got {other:?}"),
    }
}

#[tokio::test]
async fn arguments_are_coerced_to_their_declared_types_and_errors_name_them() {
    let (client, _) = connect(TestCatalog::new()).await;
    let full = json!({ "topic": "returns", "words": "2.5", "count": "3", "tone": "friendly", "bullets": "true", "points": "[\"a\", \"b\"]" });
    assert_eq!(
        text(&client, "brief", full).await.unwrap(),
        "friendly 2.5 3 returns bullets a b"
    );
    // JSON values are taken as they are.
    assert_eq!(
        text(&client, "brief", json!({ "topic": "x", "words": 7 }))
            .await
            .unwrap(),
        "plain 7 1 x"
    );

    let cases = [
        (
            json!({ "topic": "x", "words": "many" }),
            "argument `words` of `brief` must be a number, such as 3 or 2.5",
        ),
        (
            json!({ "topic": "x", "count": "2.5" }),
            "argument `count` of `brief` must be an integer, such as 3",
        ),
        (
            json!({ "topic": "x", "bullets": "yes" }),
            "argument `bullets` of `brief` must be `true` or `false`",
        ),
        (
            json!({ "topic": "x", "points": "a, b" }),
            "argument `points` of `brief` must be a list as JSON",
        ),
        (
            json!({ "topic": "x", "tone": "loud" }),
            "argument `tone` of `brief` must be one of `plain`, `friendly`",
        ),
        (
            json!({ "topic": "x", "colour": "red" }),
            "prompt `brief` has no argument `colour`: it takes `bullets`, `count`, `points`, `tone`, `topic`, `words`",
        ),
        (json!({}), "prompt `brief` needs argument `topic`"),
    ];
    for (args, expected) in cases {
        let error = mcp_error(text(&client, "brief", args).await);
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert!(error.message.starts_with(expected), "{}", error.message);
    }
    let plain = mcp_error(text(&client, "plain", json!({ "topic": "x" })).await);
    assert_eq!(
        plain.message,
        "prompt `plain` has no argument `topic`: it takes none"
    );
    let missing = mcp_error(text(&client, "nowhere", json!({})).await);
    assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
    assert!(
        missing.message.starts_with("no prompt named `nowhere`"),
        "{}",
        missing.message
    );

    // Arguments past the bound are refused before any render.
    let huge = "x".repeat(promptreg_mcp::MAX_ARGUMENT_BYTES + 1);
    let error = mcp_error(text(&client, "brief", json!({ "topic": huge })).await);
    assert!(
        error
            .message
            .contains("more than the 1048576 a request may send"),
        "{}",
        error.message
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn pages_follow_their_cursor_and_arguments_complete() {
    let (client, _) = connect(TestCatalog::new()).await;
    let first = client.list_prompts(None).await.unwrap();
    assert_eq!(first.prompts[0].name, "brief");
    let meta = first.prompts[0].meta.as_ref().unwrap();
    assert_eq!(meta.0["promptreg/arguments"]["count"]["type"], "integer");
    assert_eq!(
        meta.0["promptreg/arguments"]["tone"]["enum"],
        json!(["plain", "friendly"])
    );
    let cursor = first.next_cursor.clone().unwrap();
    let second = client
        .list_prompts(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.prompts[0].name, "plain");
    assert_eq!(second.next_cursor, None);

    let tones = client
        .complete_prompt_argument("brief", "tone", "f", None)
        .await
        .unwrap();
    assert_eq!(tones.values, ["friendly"]);
    let topics = client
        .complete_prompt_argument("brief", "topic", "", None)
        .await
        .unwrap();
    assert_eq!(topics.values, ["returns", "shipping"]);
    let booleans = client
        .complete_prompt_argument("brief", "bullets", "T", None)
        .await
        .unwrap();
    assert_eq!(booleans.values, ["true"]);
    assert!(
        client
            .complete_prompt_argument("nowhere", "x", "", None)
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_changed_is_sent_when_what_the_session_sees_changes_only() {
    let catalog = TestCatalog::new();
    let (client, mut heard) = connect(catalog.clone()).await;
    client.list_prompts(None).await.unwrap();
    // A tick that changes nothing this session sees: no notification.
    catalog.tick("1");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), heard.recv())
            .await
            .is_err()
    );
    catalog.tick("2");
    let got = tokio::time::timeout(Duration::from_secs(5), heard.recv()).await;
    assert_eq!(got, Ok(Some(())));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_without_a_session_hears_list_changed_through_a_subscription() {
    let catalog = TestCatalog::new();
    let modern = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let (client, _) = connect_with(catalog.clone(), modern).await;
    assert_eq!(
        client.list_prompts(None).await.unwrap().prompts[0].name,
        "brief"
    );
    let filter = SubscriptionFilter::builder().prompts_list_changed().build();
    let mut subscription = client.peer().listen(filter).await.unwrap();
    assert_eq!(subscription.acknowledged().prompts_list_changed, Some(true));
    catalog.tick("2");
    let next = tokio::time::timeout(Duration::from_secs(5), subscription.next()).await;
    assert!(
        matches!(
            next,
            Ok(Ok(Some(ServerNotification::PromptListChangedNotification(
                _
            ))))
        ),
        "{next:?}"
    );
    drop(subscription);
    client.cancel().await.unwrap();
}

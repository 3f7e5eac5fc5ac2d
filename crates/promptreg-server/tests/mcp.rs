//! `/mcp` over HTTP on loopback, spoken as raw JSON-RPC: what a session
//! sees by key, bad input answered with JSON-RPC errors or bounded
//! refusals, the bound on sessions, and `list_changed` reaching a session
//! while another never reads; on SQLite and PostgreSQL.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{TestServer, admin, config, databases, writer};
use promptreg_store::{Label, PackFiles, Scope, Store};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn web_agent() -> PackFiles {
    PackFiles::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/web-agent")).unwrap()
}

async fn release(store: &Store, pack: &str) {
    let production = Label::new("production").unwrap();
    store
        .release(pack, &Label::latest(), &production, None, &writer(), "")
        .await
        .unwrap();
}

/// web-agent and demo, both released to `production`.
async fn released(store: &Store) {
    for files in [web_agent(), common::demo()] {
        let report = store.push(&files, &admin(), "first").await.unwrap();
        release(store, &report.pack).await;
    }
}

/// One MCP session, spoken as JSON-RPC over POSTs.
struct Session<'a> {
    server: &'a TestServer,
    key: Option<String>,
    query: String,
    id: String,
    next: u64,
}

impl<'a> Session<'a> {
    /// Initialises a session (and says it is initialised).
    async fn open(server: &'a TestServer, key: Option<&str>, query: &str) -> Session<'a> {
        let mut session = Session {
            server,
            key: key.map(str::to_owned),
            query: query.to_owned(),
            id: String::new(),
            next: 1,
        };
        let response = session
            .post(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "test", "version": "0" },
                },
            }))
            .await;
        assert_eq!(response.status(), 200);
        session.id = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = session
            .post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        assert_eq!(initialized.status(), 202);
        session
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        self.post_bytes(body.to_string().into_bytes()).await
    }

    async fn post_bytes(&self, body: Vec<u8>) -> reqwest::Response {
        let mut request = self
            .server
            .client
            .post(self.server.url(&format!("/mcp{}", self.query)))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if !self.id.is_empty() {
            request = request.header("mcp-session-id", &self.id);
        }
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        request.send().await.unwrap()
    }

    /// The JSON-RPC response to `method` with `params`.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let response = self
            .post(json!({ "jsonrpc": "2.0", "id": self.next, "method": method, "params": params }))
            .await;
        assert_eq!(response.status(), 200);
        message(&response.text().await.unwrap())
    }
}

/// The JSON-RPC message of a response: its body, or the data of its event.
fn message(body: &str) -> Value {
    let data = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.starts_with('{'))
        .unwrap_or(body);
    serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {body}"))
}

fn names(listed: &Value) -> Vec<&str> {
    listed["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_sees_the_packs_its_key_may_read_and_bad_input_gets_json_rpc_errors() {
    for db in databases("server_mcp").await {
        let store = db.open().await;
        released(&store).await;
        let demo_only = store
            .create_key("demo-only", Some("demo"), Scope::Read, &admin())
            .await
            .unwrap()
            .1;
        let reader = store
            .create_key("reader", None, Scope::Read, &admin())
            .await
            .unwrap()
            .1;
        let server = TestServer::start(store, config()).await;

        let mut everything = Session::open(&server, Some(&reader), "").await;
        let listed = everything.call("prompts/list", json!({})).await;
        assert_eq!(names(&listed).len(), 11, "{}: {listed}", db.name);
        assert!(names(&listed).contains(&"demo/greeting"), "{listed}");

        let mut demo = Session::open(&server, Some(&demo_only), "").await;
        let listed = demo.call("prompts/list", json!({})).await;
        assert_eq!(
            names(&listed),
            ["demo/farewell", "demo/greeting"],
            "{}",
            db.name
        );
        // Another pack's prompt is not found, worded as one that does not exist.
        let hidden = demo
            .call("prompts/get", json!({ "name": "web-agent/planner.system" }))
            .await;
        assert_eq!(hidden["error"]["code"], -32602);
        assert_eq!(
            hidden["error"]["message"],
            "no prompt named `web-agent/planner.system`: `prompts/list` lists the prompts"
        );

        let got = demo
            .call(
                "prompts/get",
                json!({ "name": "demo/greeting", "arguments": { "name": "Ada" } }),
            )
            .await;
        assert_eq!(
            got["result"]["messages"][0]["content"]["text"], "Hello Ada!\n\nBe brief.",
            "{got}"
        );
        assert_eq!(got["result"]["_meta"]["promptreg/version"], 1);
        assert_eq!(got["result"]["_meta"]["promptreg/revision"], 1);
        assert_eq!(got["result"]["_meta"]["promptreg/label"], "production");

        // A bad cursor, an unknown method, an unknown query parameter.
        let cursor = demo.call("prompts/list", json!({ "cursor": "" })).await;
        assert_eq!(cursor["error"]["code"], -32602, "{cursor}");
        let unknown = demo.call("resources/list", json!({})).await;
        assert_eq!(unknown["error"]["code"], -32601, "{unknown}");

        // Not JSON, a batch of thousands: one JSON-RPC error each, at once.
        let garbled = demo.post_bytes(b"{not json".to_vec()).await;
        assert_eq!(garbled.status(), 400);
        assert_eq!(
            message(&garbled.text().await.unwrap())["error"]["code"],
            -32700
        );
        let batch: Vec<Value> = (0..5_000)
            .map(|id| json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }))
            .collect();
        let batch = demo.post(Value::from(batch)).await;
        assert_eq!(batch.status(), 400);
        assert_eq!(
            message(&batch.text().await.unwrap())["error"]["code"],
            -32600
        );

        // A 10 MB argument: refused by the body limit before it is read
        // (the head alone is sent: the answer comes without the body).
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {demo_only}\r\nMcp-Session-Id: {}\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n",
            server.addr, demo.id
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut answer))
            .await
            .expect("an answer without the body")
            .unwrap();
        let answer = String::from_utf8_lossy(&answer[..n]);
        assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

        // No key on a keyed store; a Host the server does not answer to; a
        // write from another site.
        let mut anonymous = Session {
            key: None,
            ..Session::open(&server, Some(&reader), "").await
        };
        anonymous.id.clear();
        let refused = anonymous
            .post(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }))
            .await;
        assert_eq!(refused.status(), 401);
        let rebinding = server
            .client
            .post(server.url("/mcp"))
            .header("host", "evil.example")
            .bearer_auth(&reader)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(rebinding.status(), 421);
        let cross_site = server
            .client
            .post(server.url("/mcp"))
            .header("origin", "https://evil.example")
            .header("sec-fetch-site", "cross-site")
            .bearer_auth(&reader)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(cross_site.status(), 403);

        // And the session still answers.
        let again = demo.call("prompts/list", json!({})).await;
        assert_eq!(names(&again), ["demo/farewell", "demo/greeting"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_are_bounded_and_a_session_that_never_reads_stalls_nobody() {
    let db = &databases("server_mcp_bounds").await[0];
    let store = db.open().await;
    released(&store).await;
    let server = TestServer::start(
        store.clone(),
        promptreg_server::Config {
            max_mcp_sessions: 1_000,
            ..config()
        },
    )
    .await;

    // 1,000 idle sessions, opened 50 at a time; the next is refused at once.
    let mut idle = Vec::new();
    for _ in 0..20 {
        let opened = futures_util::future::join_all(
            (0..50).map(|_| Session::open(&server, None, "?pack=demo")),
        )
        .await;
        idle.extend(opened.into_iter().map(|s| s.id));
    }
    let mut past = Session {
        server: &server,
        key: None,
        query: String::new(),
        id: String::new(),
        next: 0,
    };
    let refused = past
        .post(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } } }))
        .await;
    assert_eq!(refused.status(), 503);
    past.id = idle[0].clone();
    // An idle session answers, and closing sessions makes room.
    let listed = past.call("prompts/list", json!({})).await;
    assert_eq!(names(&listed), ["farewell", "greeting"]);
    for id in &idle[..2] {
        let closed = server
            .client
            .delete(server.url("/mcp"))
            .header("mcp-session-id", id)
            .send()
            .await
            .unwrap();
        assert!(closed.status().is_success(), "{}", closed.status());
    }

    // A session that opened its event stream and never reads it, and one
    // that reads: label moves reach the reader.
    let silent = Session::open(&server, None, "?pack=demo").await;
    let _unread = server
        .client
        .get(server.url("/mcp?pack=demo"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &silent.id)
        .send()
        .await
        .unwrap();
    let reader = Session::open(&server, None, "?pack=demo").await;
    let mut stream = server
        .client
        .get(server.url("/mcp?pack=demo"))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &reader.id)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut files = common::demo();
    for round in 0..20 {
        files.insert(
            "defaults/greeting.md",
            format!("---\ntemplate: true\nvariables:\n  name:\n---\nHello {{{{ name }}}}, round {round}!\n"),
        );
        store.push(&files, &admin(), "again").await.unwrap();
        release(&store, "demo").await;
    }
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        let mut seen = String::new();
        while let Some(chunk) = stream.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("notifications/prompts/list_changed") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(heard, Ok(true));
    // The last move's text follows, once its event is read.
    let mut reader = reader;
    let mut text = Value::Null;
    for _ in 0..200 {
        let got = reader
            .call(
                "prompts/get",
                json!({ "name": "greeting", "arguments": { "name": "Ada" } }),
            )
            .await;
        text = got["result"]["messages"][0]["content"]["text"].clone();
        if text == "Hello Ada, round 19!" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(text, "Hello Ada, round 19!");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_for_agents_read_test_and_propose_but_never_move_a_label() {
    let db = &databases("server_mcp_tools").await[0];
    let store = db.open().await;
    released(&store).await;
    let reader = store
        .create_key("reader", None, Scope::Read, &admin())
        .await
        .unwrap()
        .1;
    let author = store
        .create_key("author", None, Scope::Write, &admin())
        .await
        .unwrap()
        .1;

    // Off by default: no tools capability, no tool.
    let server = TestServer::start(store.clone(), config()).await;
    let mut plain = Session::open(&server, Some(&reader), "").await;
    let called = plain
        .call(
            "tools/call",
            json!({ "name": "list_labels", "arguments": { "pack": "demo" } }),
        )
        .await;
    assert!(called["error"].is_object(), "{called}");
    drop(server);

    let server = TestServer::start(
        store.clone(),
        promptreg_server::Config {
            mcp_tools: true,
            ..config()
        },
    )
    .await;
    let mut reading = Session::open(&server, Some(&reader), "").await;
    let listed = reading.call("tools/list", json!({})).await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_labels",
            "list_revisions",
            "diff_versions",
            "test_change",
            "propose_change"
        ]
    );

    let tool = async |session: &mut Session<'_>, name: &str, arguments: Value| {
        let called = session
            .call(
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            )
            .await;
        let result = &called["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (result["isError"] == true, text, called.clone())
    };
    let (failed, text, _) = tool(
        &mut reading,
        "list_revisions",
        json!({ "pack": "demo", "label": "production" }),
    )
    .await;
    assert!(!failed, "{text}");
    assert!(text.contains("\"revision\": 1"), "{text}");

    let changed = json!({ "defaults/greeting.md": "---\ntemplate: true\nvariables:\n  name:\n---\nHi {{ name }}.\n" });
    let (failed, text, _) = tool(
        &mut reading,
        "test_change",
        json!({ "pack": "demo", "prompt": "greeting", "files": changed }),
    )
    .await;
    assert!(!failed, "{text}");
    assert!(text.contains("\"passed\""), "{text}");

    // A reader may not propose; arguments off the schema are an MCP error.
    let (failed, text, _) = tool(
        &mut reading,
        "propose_change",
        json!({ "pack": "demo", "prompt": "greeting", "files": changed }),
    )
    .await;
    assert!(failed);
    assert!(text.contains("does not allow write"), "{text}");
    let (_, _, off_schema) = tool(&mut reading, "diff_versions", json!({ "pack": "demo" })).await;
    assert_eq!(off_schema["error"]["code"], -32602, "{off_schema}");

    let mut writing = Session::open(&server, Some(&author), "").await;
    let (failed, text, _) = tool(
        &mut writing,
        "propose_change",
        json!({ "pack": "demo", "prompt": "greeting", "files": changed, "message": "Shorter" }),
    )
    .await;
    assert!(!failed, "{text}");
    assert!(text.contains("\"version\": 2"), "{text}");
    // `latest` moved; `production` did not.
    let (_, text, _) = tool(
        &mut writing,
        "diff_versions",
        json!({ "pack": "demo", "prompt": "greeting", "from": "production", "to": "latest" }),
    )
    .await;
    assert!(text.contains("Hi {{ name }}."), "{text}");
    let production = store
        .resolve(
            "demo",
            "greeting",
            &promptreg_store::VersionRef::Label(Label::new("production").unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(production, 1);
}

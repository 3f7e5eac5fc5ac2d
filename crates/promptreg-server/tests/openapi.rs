//! The OpenAPI document: every route is in it, and the responses of the
//! API validate against it.

mod common;

use common::{TestServer, config, published};
use serde_json::{Value, json};

/// Every route the server serves, as the document must list it.
const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/packs"),
    ("get", "/v1/packs/{pack}/prompts"),
    ("get", "/v1/packs/{pack}/prompts/{id}"),
    ("get", "/v1/packs/{pack}/prompts/{id}/versions"),
    ("post", "/v1/packs/{pack}/prompts/{id}/versions"),
    ("get", "/v1/packs/{pack}/prompts/{id}/history"),
    ("put", "/v1/packs/{pack}/prompts/{id}/labels/{label}"),
    (
        "post",
        "/v1/packs/{pack}/prompts/{id}/labels/{label}/rollback",
    ),
    ("get", "/v1/packs/{pack}/prompts/{id}/diff"),
    ("post", "/v1/packs/{pack}/prompts/{id}/render"),
    ("post", "/v1/packs/{pack}/prompts/{id}/explain"),
    ("get", "/v1/packs/{pack}/labels/{label}"),
    ("post", "/v1/packs/{pack}/releases"),
    ("get", "/v1/packs/{pack}/history"),
    ("get", "/v1/packs/{pack}/labels/{label}/revisions"),
    (
        "get",
        "/v1/packs/{pack}/labels/{label}/revisions/{revision}",
    ),
    ("post", "/v1/packs/{pack}/labels/{label}/rollback"),
    ("put", "/v1/packs/{pack}/labels/{label}/revision"),
    ("get", "/v1/packs/{pack}/labels/{label}/fleet"),
    ("get", "/v1/packs/{pack}/labels/{label}/split"),
    ("post", "/v1/packs/{pack}/labels/{label}/split"),
    ("patch", "/v1/packs/{pack}/labels/{label}/split"),
    ("post", "/v1/packs/{pack}/labels/{label}/split/promote"),
    ("post", "/v1/packs/{pack}/labels/{label}/split/abort"),
    ("get", "/v1/packs/{pack}/labels/{label}/split/bundle"),
    ("post", "/v1/packs/{pack}/labels/{label}/fleet"),
    ("get", "/v1/packs/{pack}/l10n"),
    ("get", "/v1/packs/{pack}/l10n/{locale}"),
    ("post", "/v1/packs/{pack}/l10n/{locale}"),
    ("get", "/v1/events"),
    ("get", "/v1/webhooks"),
    ("post", "/v1/webhooks"),
    ("get", "/v1/webhooks/{name}"),
    ("patch", "/v1/webhooks/{name}"),
    ("delete", "/v1/webhooks/{name}"),
    ("post", "/v1/webhooks/{name}/rotate"),
    ("post", "/v1/webhooks/{name}/enable"),
    ("post", "/v1/webhooks/{name}/test"),
    ("get", "/v1/webhooks/{name}/deliveries"),
    ("post", "/v1/webhooks/{name}/deliveries/{id}/redeliver"),
    ("post", "/v1/webhooks/{name}/redeliver"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
];

async fn document(server: &TestServer) -> Value {
    let response = server.get("/v1/openapi.json").await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_is_in_the_document_and_every_documented_route_answers() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let doc = document(&server).await;
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let mut documented: Vec<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    documented.sort();
    let mut expected: Vec<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    expected.sort();
    assert_eq!(documented, expected);
    for (method, path) in ROUTES {
        let concrete = path
            .replace("{pack}", "demo")
            .replace("{id}", "greeting")
            .replace("{label}", "production")
            .replace("{locale}", "ja")
            .replace("{name}", "chat")
            .replace("deliveries/greeting", "deliveries/1");
        let method: reqwest::Method = method.to_uppercase().parse().unwrap();
        let response = server
            .client
            .request(method.clone(), server.url(&concrete))
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await
            .unwrap();
        assert!(
            ![404, 405].contains(&response.status().as_u16())
                || response.headers()["content-type"] == "application/problem+json"
                    && !response.text().await.unwrap().contains("unknown-route"),
            "{method} {concrete} is documented but not served"
        );
    }
}

/// Checks `body` against the schema the document gives for this response.
fn validate(doc: &Value, method: &str, path: &str, status: u16, content_type: &str, body: &Value) {
    let errors = violations(doc, method, path, status, content_type, body);
    assert!(
        errors.is_empty(),
        "{method} {path} {status}: {errors:?}\n{body:#}"
    );
}

/// What in `body` breaks the schema the document gives for this response.
fn violations(
    doc: &Value,
    method: &str,
    path: &str,
    status: u16,
    content_type: &str,
    body: &Value,
) -> Vec<String> {
    // A JSON pointer in a URI fragment: `~` and `/` escaped, braces percent-encoded.
    let escape = |s: &str| {
        s.replace('~', "~0")
            .replace('/', "~1")
            .replace('{', "%7B")
            .replace('}', "%7D")
    };
    let response = &doc["paths"][path][method]["responses"][status.to_string()];
    assert!(
        !response.is_null(),
        "{method} {path}: status {status} is not documented"
    );
    let schema = &response["content"][content_type]["schema"];
    assert!(
        !schema.is_null(),
        "{method} {path} {status}: no {content_type} schema"
    );
    let pointer = format!(
        "#/paths/{}/{method}/responses/{status}/content/{}/schema",
        escape(path),
        escape(content_type)
    );
    let mut root = doc.clone();
    root["$ref"] = Value::String(pointer);
    let validator = jsonschema::validator_for(&root).unwrap();
    validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_validate_against_the_document() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let doc = document(&server).await;
    // The check can fail: a body of the wrong shape is caught.
    let wrong = json!({ "packs": "demo" });
    assert!(!violations(&doc, "get", "/v1/packs", 200, "application/json", &wrong).is_empty());
    let cases: Vec<(&str, &str, &str, Option<Value>)> = vec![
        ("get", "/v1/packs", "/v1/packs", None),
        (
            "get",
            "/v1/packs/{pack}/prompts",
            "/v1/packs/demo/prompts",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts",
            "/v1/packs/nope/prompts",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts/{id}",
            "/v1/packs/demo/prompts/greeting",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts/{id}",
            "/v1/packs/demo/prompts/..%2Fx",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts/{id}/versions",
            "/v1/packs/demo/prompts/greeting/versions",
            None,
        ),
        (
            "post",
            "/v1/packs/{pack}/prompts/{id}/versions",
            "/v1/packs/demo/prompts/farewell/versions",
            Some(json!({ "files": { "defaults/farewell.md": "Bye.\n" } })),
        ),
        (
            "post",
            "/v1/packs/{pack}/prompts/{id}/versions",
            "/v1/packs/demo/prompts/greeting/versions",
            Some(
                json!({ "files": { "defaults/greeting.md": "---\ntemplate: true\n---\n{{ x !\n" } }),
            ),
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts/{id}/history",
            "/v1/packs/demo/prompts/greeting/history",
            None,
        ),
        (
            "put",
            "/v1/packs/{pack}/prompts/{id}/labels/{label}",
            "/v1/packs/demo/prompts/farewell/labels/production",
            Some(json!({ "version": 2 })),
        ),
        (
            "post",
            "/v1/packs/{pack}/prompts/{id}/labels/{label}/rollback",
            "/v1/packs/demo/prompts/farewell/labels/latest/rollback",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/prompts/{id}/diff",
            "/v1/packs/demo/prompts/farewell/diff?from=1&to=latest",
            None,
        ),
        (
            "post",
            "/v1/packs/{pack}/prompts/{id}/render",
            "/v1/packs/demo/prompts/greeting/render",
            Some(json!({ "locale": "fr", "context": { "name": "Ada" } })),
        ),
        (
            "post",
            "/v1/packs/{pack}/prompts/{id}/explain",
            "/v1/packs/demo/prompts/greeting/explain",
            Some(json!({ "context": { "name": "Ada" } })),
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}",
            "/v1/packs/demo/labels/production",
            None,
        ),
        (
            "post",
            "/v1/packs/{pack}/releases",
            "/v1/packs/demo/releases",
            Some(json!({ "from": "latest", "to": "staging" })),
        ),
        (
            "get",
            "/v1/packs/{pack}/history",
            "/v1/packs/demo/history",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}/fleet",
            "/v1/packs/demo/labels/production/fleet",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}/fleet",
            "/v1/packs/demo/labels/production/fleet?until-revision=1&timeout=10ms",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}/fleet",
            "/v1/packs/demo/labels/production/fleet?ratio=2",
            None,
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}/split",
            "/v1/packs/demo/labels/production/split",
            None,
        ),
        (
            "post",
            "/v1/packs/{pack}/labels/{label}/split",
            "/v1/packs/demo/labels/production/split",
            Some(json!({ "from": "latest", "percent": 10 })),
        ),
        (
            "post",
            "/v1/packs/{pack}/labels/{label}/split",
            "/v1/packs/demo/labels/production/split",
            Some(json!({ "from": "latest", "percent": -1 })),
        ),
        (
            "get",
            "/v1/packs/{pack}/labels/{label}/fleet",
            "/v1/packs/demo/labels/production/fleet",
            None,
        ),
        (
            "post",
            "/v1/packs/{pack}/labels/{label}/split/abort",
            "/v1/packs/demo/labels/production/split/abort",
            None,
        ),
        ("get", "/healthz", "/healthz", None),
        ("get", "/readyz", "/readyz", None),
    ];
    // An instance in the fleet view (a report's answer has no body).
    let report = json!({ "instance": "i-1", "library": "test/1", "source": "server", "revision": 1, "interval_ms": 1000 });
    let reported = server
        .post("/v1/packs/demo/labels/production/fleet", report)
        .await;
    assert_eq!(reported.status(), 204);
    for (method, template, concrete, body) in cases {
        let mut request = server
            .client
            .request(method.to_uppercase().parse().unwrap(), server.url(concrete));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let content_type = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        let body: Value = response.json().await.unwrap();
        validate(&doc, method, template, status, &content_type, &body);
    }
}

/// The names in URLs carry the rules the server checks them by, so a
/// client (or a schema-driven tester) knows which strings pass.
#[test]
fn names_in_urls_carry_their_rules() {
    let doc = serde_json::to_value(promptreg_server::openapi()).unwrap();
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "pack",
            &["goal-agent", "a.b_c-1", "x."],
            &["", "..", "a..b", "-a", ".a", "é", "a/b"],
        ),
        (
            "id",
            &["@pack", "goal-running", "planner.system"],
            &["", "a..b", "@other", "_a", "a b"],
        ),
        (
            "label",
            &["production", "v2-canary", "0"],
            &["", "-a", "Production", "a_b", "a.b"],
        ),
    ];
    let (mut seen, mut expected) = (0, 0);
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            expected += ["{pack}", "{id}", "{label}"]
                .iter()
                .filter(|p| path.contains(*p))
                .count();
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let name = parameter["name"].as_str().unwrap();
                let Some((_, valid, invalid)) = cases
                    .iter()
                    .find(|(n, ..)| *n == name && parameter["in"] == "path")
                else {
                    continue;
                };
                seen += 1;
                let schema = jsonschema::validator_for(&parameter["schema"])
                    .unwrap_or_else(|e| panic!("{method} {path} {name}: {e}"));
                for value in *valid {
                    assert!(
                        schema.is_valid(&json!(value)),
                        "{method} {path}: {name} `{value}` refused"
                    );
                }
                for value in *invalid {
                    assert!(
                        !schema.is_valid(&json!(value)),
                        "{method} {path}: {name} `{value}` allowed"
                    );
                }
            }
        }
    }
    assert_eq!(seen, expected, "every name in a path is checked");
}

#[test]
fn problem_codes_are_an_enum_in_the_document() {
    let doc = serde_json::to_value(promptreg_server::openapi()).unwrap();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ProblemDetails"]["properties"]["code"]["$ref"], "#/components/schemas/ProblemCode",
        "{}",
        schemas["ProblemDetails"]
    );
    let codes: Vec<&str> = schemas["ProblemCode"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let every: Vec<&str> = promptreg_server::ProblemCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(codes, every);
    for code in [
        "unknown-pack",
        "conflict",
        "invalid-pack-name",
        "too-many-connections",
    ] {
        assert!(codes.contains(&code), "{code}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_in_a_url_is_refused_with_its_own_code() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    for (path, code) in [
        ("/v1/packs/bad%20name/prompts", "invalid-pack-name"),
        ("/v1/packs/demo/prompts/bad%20id", "invalid-id"),
        ("/v1/packs/demo/labels/Prod", "invalid-label"),
    ] {
        let problem = common::json(server.get(path).await, 400).await;
        assert_eq!(problem["code"], code, "{path}: {problem}");
        assert!(
            !problem["detail"].as_str().unwrap().contains('\u{1f}'),
            "{problem}"
        );
    }
}

//! The fleet view over HTTP: reports, the view, the long poll, its
//! limits, through a restart and across two servers on one PostgreSQL.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, config, databases, json, postgres_only, published, writer};
use promptreg_store::{FleetLimits, Label, Scope, Store};
use serde_json::{Value, json};

const FLEET: &str = "/v1/packs/demo/labels/production/fleet";

fn report(instance: &str, revision: Option<u64>) -> Value {
    json!({
        "instance": instance,
        "name": format!("<script>{instance}</script>"),
        "library": "promptreg-rust/test",
        "source": "server",
        "revision": revision,
        "interval_ms": 2000,
    })
}

/// `production` moved once more: revision 2 (the fixture's three moves
/// made revisions 1 to... the newest is read back).
async fn newest(store: &Store) -> u64 {
    let production = Label::new("production").unwrap();
    store
        .newest_revision("demo", &production)
        .await
        .unwrap()
        .unwrap()
        .0
}

async fn moved_again(store: &Store) -> u64 {
    let production = Label::new("production").unwrap();
    let mut edited = common::demo();
    edited.insert("defaults/greeting.md", "Hi {{ name }}!\n");
    store.push(&edited, &writer(), "hi").await.unwrap();
    store
        .release(
            "demo",
            &Label::latest(),
            &production,
            None,
            &writer(),
            "two",
        )
        .await
        .unwrap();
    newest(store).await
}

/// An instance reports, the view shows it with its name as sent (the
/// page escapes it), and the bundle says which revision it is, on a 200
/// and a 304 alike.
#[tokio::test]
async fn reports_make_the_view_and_the_bundle_names_its_revision() {
    for db in databases("reports_make_the_view_and_the_bundle_names_its_revision").await {
        let store = published(&db).await;
        let revision = newest(&store).await;
        let mut server = TestServer::start(store.clone(), config()).await;

        let bundle = server.get("/v1/packs/demo/labels/production").await;
        assert_eq!(bundle.status(), 200, "{}", db.name);
        let header = |r: &reqwest::Response| {
            r.headers()["promptreg-revision"]
                .to_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(header(&bundle), revision.to_string());
        let etag = bundle.headers()["etag"].to_str().unwrap().to_owned();
        let again = server
            .client
            .get(server.url("/v1/packs/demo/labels/production"))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(
            (again.status().as_u16(), header(&again)),
            (304, revision.to_string())
        );

        let digest = etag.trim_matches('"').to_owned();
        let mut sent = report("web-1", Some(revision));
        sent["digest"] = json!(digest);
        let recorded = server.post(FLEET, sent).await;
        assert_eq!(recorded.status(), 204, "{}", recorded.text().await.unwrap());

        let fleet = json(server.get(FLEET).await, 200).await;
        assert_eq!(fleet["revision"], revision);
        assert_eq!(fleet["digest"], json!(digest));
        assert_eq!(
            fleet["summary"],
            format!("production: revision {revision} live on 1 of 1 instance")
        );
        let one = &fleet["instances"][0];
        assert_eq!(one["name"], "<script>web-1</script>");
        assert_eq!(
            (one["state"].as_str(), one["reporter"].as_str()),
            (Some("online"), Some("local"))
        );
        server.stop().await;
    }
}

/// Bad reports are refused naming the field; a key reports only for a
/// pack it can read; a flood from one key is limited while its reads and
/// other keys' reports go on.
#[tokio::test]
async fn bad_reports_and_floods_are_refused_and_nothing_else_is() {
    let db = common::sqlite();
    let store = published(&db).await;
    let other = {
        let mut files = common::demo();
        let manifest = common::MANIFEST.replace("name = \"demo\"", "name = \"other\"");
        files.insert("promptreg.toml", manifest.as_str());
        files
    };
    store.push(&other, &writer(), "").await.unwrap();
    let admin = common::admin();
    let (_, flood) = store
        .create_key("flood", None, Scope::Read, &admin)
        .await
        .unwrap();
    let (_, calm) = store
        .create_key("calm", None, Scope::Read, &admin)
        .await
        .unwrap();
    let (_, elsewhere) = store
        .create_key("elsewhere", Some("other"), Scope::Admin, &admin)
        .await
        .unwrap();
    let mut server = TestServer::start(
        store.clone(),
        promptreg_server::Config {
            report_rate: 1,
            report_burst: 5,
            ..config()
        },
    )
    .await;
    let post = |secret: &str, body: Value| {
        server
            .client
            .post(server.url(FLEET))
            .bearer_auth(secret)
            .json(&body)
            .send()
    };

    let keyless = server
        .client
        .post(server.url(FLEET))
        .json(&report("a", None))
        .send()
        .await
        .unwrap();
    assert_eq!(keyless.status(), 401);
    let problem = json(post(&elsewhere, report("a", None)).await.unwrap(), 403).await;
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("pack `other` only"),
        "{problem}"
    );

    let cases = [
        (
            json!({"instance": "a b", "library": "x", "source": "server", "interval_ms": 1000}),
            400,
            "the instance id `a b`",
        ),
        (
            json!({"instance": "a", "library": "x", "source": "server", "interval_ms": 1}),
            400,
            "the interval 1ms",
        ),
        (
            json!({"instance": "a", "library": "x", "source": "elsewhere", "interval_ms": 1000}),
            400,
            "unknown variant `elsewhere`",
        ),
        (
            json!({"instance": "a", "library": "x", "source": "server", "interval_ms": 1000, "name": "n".repeat(5000)}),
            413,
            "body",
        ),
    ];
    for (body, status, expected) in cases {
        let problem = json(post(&calm, body).await.unwrap(), status).await;
        assert!(
            problem["detail"].as_str().unwrap().contains(expected),
            "{problem}"
        );
    }

    let mut limited = None;
    for n in 0..20 {
        let response = post(&flood, report(&format!("f{n}"), None)).await.unwrap();
        if response.status() == 429 {
            limited = Some(response);
            break;
        }
        assert_eq!(response.status(), 204);
    }
    let limited = limited.expect("the flood is limited within 20 reports");
    let retry: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "Retry-After: {retry}");
    let problem = json(limited, 429).await;
    assert_eq!(problem["code"], "too-many-reports");
    // The flooding key still reads; another key still reports.
    let read = server
        .client
        .get(server.url("/v1/packs/demo/labels/production"))
        .bearer_auth(&flood)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 200);
    assert_eq!(
        post(&calm, report("calm-1", None)).await.unwrap().status(),
        204
    );
    server.stop().await;
}

/// The long poll returns once the instances reporting serve the revision
/// (or the share asked), else when the time is up with those behind; a
/// revision the label does not have is refused.
#[tokio::test]
async fn the_long_poll_returns_once_converged_or_when_the_time_is_up() {
    for db in databases("the_long_poll_returns_once_converged_or_when_the_time_is_up").await {
        let store = published(&db).await;
        let old = newest(&store).await;
        let mut server = TestServer::start(store.clone(), config()).await;
        for name in ["a", "b", "c", "d"] {
            assert_eq!(
                server.post(FLEET, report(name, Some(old))).await.status(),
                204
            );
        }
        let new = moved_again(&store).await;

        let started = Instant::now();
        let timed_out = json(
            server
                .get(&format!("{FLEET}?until-revision={new}&timeout=300ms"))
                .await,
            200,
        )
        .await;
        assert_eq!(timed_out["converged"], false, "{}", db.name);
        assert!(started.elapsed() >= Duration::from_millis(200));
        let behind: Vec<&str> = timed_out["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["instance"].as_str().unwrap())
            .collect();
        assert_eq!(behind, ["a", "b", "c", "d"]);

        let waiting = tokio::spawn({
            let (client, url) = (
                server.client.clone(),
                server.url(&format!(
                    "{FLEET}?until-revision={new}&ratio=0.75&timeout=20s"
                )),
            );
            async move { client.get(url).send().await.unwrap() }
        });
        tokio::time::sleep(Duration::from_millis(150)).await;
        for name in ["a", "b", "c"] {
            assert_eq!(
                server.post(FLEET, report(name, Some(new))).await.status(),
                204
            );
        }
        let converged = json(waiting.await.unwrap(), 200).await;
        assert_eq!(converged["converged"], true);
        assert_eq!(converged["instances"][0]["instance"], "d", "the one behind");

        let problem = json(
            server
                .get(&format!("{FLEET}?until-revision={}", new + 1))
                .await,
            404,
        )
        .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("no revision {}: its newest is {new}", new + 1)),
            "{problem}"
        );
        let problem = json(
            server
                .get(&format!("{FLEET}?until-revision={new}&timeout=soon"))
                .await,
            400,
        )
        .await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("`timeout` is `soon`"),
            "{problem}"
        );
        let problem = json(server.get(&format!("{FLEET}?ratio=0.5")).await, 400).await;
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .contains("go with `until-revision`"),
            "{problem}"
        );
        server.stop().await;
    }
}

/// The view is the database's: a restarted server shows the instances
/// reported before, and two servers on one PostgreSQL show one view,
/// whichever an instance reports to; a long poll on one sees reports to
/// the other.
#[tokio::test]
async fn the_view_survives_a_restart_and_is_shared_by_two_servers() {
    let Some(db) = postgres_only("the_view_survives_a_restart_and_is_shared_by_two_servers").await
    else {
        return;
    };
    let store = published(&db).await;
    let old = newest(&store).await;
    let mut one = TestServer::start(store.clone(), config()).await;
    assert_eq!(one.post(FLEET, report("a", Some(old))).await.status(), 204);
    one.stop().await;
    let mut one = TestServer::start(db.open().await, config()).await;
    let mut two = TestServer::start(db.open().await, config()).await;
    let fleet = json(one.get(FLEET).await, 200).await;
    assert_eq!(fleet["instances_total"], 1, "kept through the restart");

    let new = moved_again(&store).await;
    let waiting = tokio::spawn({
        let (client, url) = (
            one.client.clone(),
            one.url(&format!("{FLEET}?until-revision={new}&timeout=20s")),
        );
        async move { client.get(url).send().await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(two.post(FLEET, report("a", Some(new))).await.status(), 204);
    assert_eq!(two.post(FLEET, report("b", Some(new))).await.status(), 204);
    let converged = json(waiting.await.unwrap(), 200).await;
    assert_eq!(converged["converged"], true);
    for server in [&one, &two] {
        let fleet = json(server.get(FLEET).await, 200).await;
        assert_eq!(
            (
                fleet["instances_total"].as_u64(),
                fleet["reporting"].as_u64()
            ),
            (Some(2), Some(2))
        );
    }
    one.stop().await;
    two.stop().await;
}

/// A report that would make the view lie is refused, saying what to do,
/// and changes nothing: a label nothing moved (404), a revision the label
/// never had (422), another key's instance (409), a key past its share of
/// instances (507). A row kept from before, on a revision the label never
/// had, does not make a long poll converge.
#[tokio::test]
async fn reports_that_would_make_the_view_lie_are_refused() {
    for db in databases("reports_that_would_make_the_view_lie_are_refused").await {
        let store = published(&db).await;
        let revision = newest(&store).await;
        let admin = common::admin();
        let mut secrets = Vec::new();
        for name in ["a", "b"] {
            let (_, secret) = store
                .create_key(name, None, Scope::Read, &admin)
                .await
                .unwrap();
            secrets.push(secret);
        }
        let (a, b) = (&secrets[0], &secrets[1]);
        let limits = FleetLimits {
            per_key: 2,
            ..FleetLimits::default()
        };
        let mut server = TestServer::start(
            store.clone(),
            promptreg_server::Config {
                fleet_limits: limits,
                ..config()
            },
        )
        .await;
        let post = |path: &str, secret: &str, body: Value| {
            server
                .client
                .post(server.url(path))
                .bearer_auth(secret)
                .json(&body)
                .send()
        };
        let get = |path: String| {
            let request = server.client.get(server.url(&path)).bearer_auth(a);
            async move { request.send().await.unwrap() }
        };
        let refused = |path: &'static str, secret, body, status, code, detail: String| {
            let response = post(path, secret, body);
            async move {
                let problem = json(response.await.unwrap(), status).await;
                assert_eq!(problem["code"], code, "{problem}");
                let text = problem["detail"].as_str().unwrap();
                assert!(text.contains(&detail), "{problem}");
            }
        };

        refused(
            "/v1/packs/demo/labels/nope/fleet",
            a,
            report("web-1", None),
            404,
            "unknown-label",
            "pack `demo` has no label `nope`".into(),
        )
        .await;
        for lie in [999, i64::MAX as u64] {
            refused(
                FLEET,
                a,
                report("web-1", Some(lie)),
                422,
                "unknown-revision",
                format!("has no revision {lie}: its newest is {revision}"),
            )
            .await;
        }
        let sent = post(FLEET, a, report("web-1", Some(revision)))
            .await
            .unwrap();
        assert_eq!(sent.status(), 204, "{}", db.name);
        refused(
            FLEET,
            b,
            report("web-1", Some(revision)),
            409,
            "instance-taken",
            "instance `web-1` of label `production` is reported by `key:a`, not `key:b`".into(),
        )
        .await;
        let sent = post(FLEET, a, report("web-2", None)).await.unwrap();
        assert_eq!(sent.status(), 204);
        refused(
            FLEET,
            a,
            report("web-3", None),
            507,
            "too-many-instances",
            "`key:a` reports 2 instances, its most: instance `web-3`".into(),
        )
        .await;
        let fleet = json(get(FLEET.into()).await, 200).await;
        let kept: Vec<(&str, &str)> = fleet["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["instance"].as_str().unwrap(),
                    i["reporter"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(kept, [("web-1", "key:a"), ("web-2", "key:a")]);
        let nope = get("/v1/packs/demo/labels/nope/fleet".into()).await;
        assert_eq!(json(nope, 200).await["instances_total"], 0);

        // A lying row kept from before: a third of the instances claim a
        // revision after the new one; the wait does not count them.
        let now = promptreg_store::Timestamp::now().0;
        db.tamper(&format!(
            "INSERT INTO fleet_instances (pack_id, label, instance, library, source, revision, \
             interval_ms, reporter, first_seen, last_seen) \
             SELECT pack_id, 'production', 'liar', 'x/1', 'server', 999, 60000, 'key:b', {now}, {now} \
             FROM packs WHERE name = 'demo'"
        ))
        .await;
        let new = moved_again(&store).await;
        let wait = format!("{FLEET}?until-revision={new}&ratio=0.3&timeout=300ms");
        let waited = json(get(wait).await, 200).await;
        assert_eq!(waited["converged"], false, "{waited}");
        server.stop().await;
    }
}

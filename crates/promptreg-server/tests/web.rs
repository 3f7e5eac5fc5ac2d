//! The web page over HTTP on loopback: sign-in and sessions, CSRF, scopes,
//! escaping, limits, editing with conflicts, publishing and rolling back;
//! on SQLite and PostgreSQL.

mod common;

use std::time::Duration;

use common::{TestDb, TestServer, admin, config, databases, writer};
use promptreg_server::Config;
use promptreg_store::{Label, PackFiles, Scope, Store};
use reqwest::StatusCode;

const SCRIPT: &str = "<script>alert(1)</script>";

/// A pack with a prefixed id, a zh-TW variant and a plain prompt.
fn shop() -> PackFiles {
    let mut files = PackFiles::default();
    files.insert(
        "promptreg.toml",
        "name = \"shop\"\nkeys = [\"webagent-narrator\", \"greeting\"]\n[user]\nprompts_dir = \".shop/prompts\"\n",
    );
    files.insert(
        "defaults/webagent-narrator.md",
        "---\ndescription: Narrates each step\n---\nNarrate the step.\n",
    );
    files.insert("defaults/webagent-narrator.zh-TW.md", "敘述步驟。\n");
    files.insert("defaults/greeting.md", "Hello.\n");
    files
}

/// The shop pack, with `production` on v1 of every entry.
async fn published(db: &TestDb) -> Store {
    let store = db.open().await;
    store.push(&shop(), &writer(), "first").await.unwrap();
    let production = Label::new("production").unwrap();
    for id in ["@pack", "webagent-narrator", "greeting"] {
        store
            .move_label("shop", id, &production, 1, None, &writer(), "ship")
            .await
            .unwrap();
    }
    store
}

/// Version 2 of `greeting`, pushed directly to the store.
async fn push_greeting(store: &Store, text: &str, message: &str) {
    let mut files = PackFiles::default();
    files.insert("defaults/greeting.md", text);
    store
        .push_prompt("shop", "greeting", &files, &writer(), message)
        .await
        .unwrap();
}

/// A browser without JavaScript: keeps cookies, does not follow redirects.
struct Browser<'a> {
    server: &'a TestServer,
    client: reqwest::Client,
    cookies: Vec<(String, String)>,
}

/// A page as received.
struct Page {
    status: StatusCode,
    location: Option<String>,
    set_cookies: Vec<String>,
    body: String,
}

impl Page {
    /// The CSRF token of the page's first POST form.
    fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a form with a CSRF token") + marker.len();
        self.body[start..]
            .split('"')
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    fn field(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self.body.find(&marker).expect(name) + marker.len();
        self.body[start..]
            .split('"')
            .next()
            .unwrap_or_default()
            .to_owned()
    }
}

impl<'a> Browser<'a> {
    fn new(server: &'a TestServer) -> Browser<'a> {
        Browser {
            server,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: Vec::new(),
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let cookie: Vec<String> = self
            .cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let response = request
            .header("cookie", cookie.join("; "))
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
            .send()
            .await
            .unwrap();
        let status = response.status();
        let location = response
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        let set_cookies: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        for set in &set_cookies {
            let pair = set.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            self.cookies.retain(|(k, _)| k != name);
            if !value.is_empty() {
                self.cookies.push((name.to_owned(), value.to_owned()));
            }
        }
        // minijinja escapes `/` too; a browser shows it as `/`.
        let body = response.text().await.unwrap().replace("&#x2f;", "/");
        Page {
            status,
            location,
            set_cookies,
            body,
        }
    }

    async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(self.server.url(path));
        self.send(request).await
    }

    async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Page {
        let request = self.client.post(self.server.url(path)).form(fields);
        self.send(request).await
    }

    async fn sign_in(&mut self, key: &str) -> Page {
        let form = self.get("/sign-in").await;
        let token = form.csrf();
        self.post("/sign-in", &[("csrf", &token), ("key", key)])
            .await
    }
}

async fn key(store: &Store, name: &str, scope: Scope) -> String {
    store
        .create_key(name, None, scope, &admin())
        .await
        .unwrap()
        .1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_and_out_and_a_revoked_key_ends_its_session() {
    for db in databases("web_sign_in").await {
        let store = published(&db).await;
        let secret = key(&store, "editor", Scope::Write).await;
        let server = TestServer::start(store.clone(), config()).await;
        let mut browser = Browser::new(&server);

        let away = browser.get("/packs/shop").await;
        assert_eq!(away.status, StatusCode::SEE_OTHER, "{}", db.name);
        assert_eq!(
            away.location.as_deref(),
            Some("/sign-in?next=%2Fpacks%2Fshop")
        );
        // The hint is a command that works.
        let form = browser.get("/sign-in").await;
        assert!(
            form.body.contains("--scope read|write|admin --admin"),
            "{}",
            form.body
        );

        let wrong = browser.sign_in("prk_not-a-key").await;
        assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
        assert!(wrong.body.contains("This key is not valid"));

        let forged = browser
            .post("/sign-in", &[("csrf", "forged"), ("key", &secret)])
            .await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);

        let signed = browser.sign_in(&secret).await;
        assert_eq!(signed.status, StatusCode::SEE_OTHER);
        assert_eq!(signed.location.as_deref(), Some("/"));
        let session = signed
            .set_cookies
            .iter()
            .find(|c| c.starts_with("promptreg_session="))
            .expect("a session cookie");
        assert!(
            session.contains("HttpOnly") && session.contains("SameSite=Strict"),
            "{session}"
        );
        assert!(
            !session.contains(&secret),
            "the cookie names the session, not the key"
        );

        let home = browser.get("/").await;
        assert_eq!(home.status, StatusCode::OK);
        assert!(
            home.body.contains("href=\"/packs/shop\">shop</a>"),
            "{}",
            home.body
        );
        assert!(home.body.contains("editor") && home.body.contains("Sign out"));

        let no_token = browser.post("/sign-out", &[]).await;
        assert_eq!(no_token.status, StatusCode::FORBIDDEN);
        let token = home.csrf();
        let out = browser.post("/sign-out", &[("csrf", &token)]).await;
        assert_eq!(out.location.as_deref(), Some("/sign-in"));
        assert_eq!(browser.get("/").await.status, StatusCode::SEE_OTHER);

        browser.sign_in(&secret).await;
        assert_eq!(browser.get("/packs/shop").await.status, StatusCode::OK);
        store.revoke_key("editor", &admin()).await.unwrap();
        let revoked = browser.get("/packs/shop").await;
        assert_eq!(revoked.status, StatusCode::SEE_OTHER);
        assert_eq!(
            revoked.location.as_deref(),
            Some("/sign-in?next=%2Fpacks%2Fshop")
        );
        assert_eq!(
            browser.sign_in(&secret).await.status,
            StatusCode::UNAUTHORIZED
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_expires() {
    let db = common::sqlite();
    let store = published(&db).await;
    let secret = key(&store, "editor", Scope::Read).await;
    let config = Config {
        session_ttl: Duration::from_millis(300),
        ..config()
    };
    let server = TestServer::start(store, config).await;
    let mut browser = Browser::new(&server);
    browser.sign_in(&secret).await;
    assert_eq!(browser.get("/").await.status, StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(browser.get("/").await.location.as_deref(), Some("/sign-in"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_lands_on_the_page_asked_for_and_never_on_another_site() {
    let db = common::sqlite();
    let store = published(&db).await;
    let secret = key(&store, "editor", Scope::Write).await;
    let server = TestServer::start(store, config()).await;
    for (next, lands) in [
        ("/packs/shop/history", "/packs/shop/history"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
    ] {
        let mut browser = Browser::new(&server);
        let encoded: String = url_encoded(next);
        let form = browser.get(&format!("/sign-in?next={encoded}")).await;
        assert_eq!(form.field("next"), if lands == "/" { "/" } else { next });
        let token = form.csrf();
        let signed = browser
            .post(
                "/sign-in",
                &[("csrf", &token), ("key", &secret), ("next", next)],
            )
            .await;
        assert_eq!(signed.location.as_deref(), Some(lands), "{next}");
    }
}

/// `text` percent-encoded for a query string.
fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_without_the_sessions_csrf_token_are_refused() {
    for db in databases("web_csrf").await {
        // No key in the store: the local user, without sign-in.
        let server = TestServer::start(published(&db).await, config()).await;
        let mut browser = Browser::new(&server);
        let edit = browser.get("/packs/shop/prompts/greeting/edit").await;
        assert_eq!(edit.status, StatusCode::OK, "{}", db.name);
        let path = "/packs/shop/prompts/greeting/edit";
        let fields = |csrf: &'static str| {
            vec![
                ("csrf", csrf),
                ("base", "1"),
                ("action", "save"),
                ("file:defaults/greeting.md", "Hi.\n"),
            ]
        };
        let missing: Vec<_> = fields("")
            .into_iter()
            .filter(|(k, _)| *k != "csrf")
            .collect();
        assert_eq!(
            browser.post(path, &missing).await.status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            browser.post(path, &fields("0000")).await.status,
            StatusCode::FORBIDDEN
        );
        // Another visitor's token is not this one's.
        let mut other = Browser::new(&server);
        let theirs = other.get(path).await.csrf();
        let mut stolen = fields("");
        stolen[0].1 = &theirs;
        assert_eq!(
            browser.post(path, &stolen).await.status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(server.store.log("shop", "greeting").await.unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_keys_see_no_edit_controls_and_their_posts_are_refused() {
    for db in databases("web_read_only").await {
        let store = published(&db).await;
        push_greeting(&store, "Hi.\n", "shorter").await;
        let reader = key(&store, "viewer", Scope::Read).await;
        let server = TestServer::start(store, config()).await;
        let mut browser = Browser::new(&server);
        browser.sign_in(&reader).await;
        let page = browser.get("/packs/shop/prompts/greeting").await;
        assert_eq!(page.status, StatusCode::OK, "{}", db.name);
        for control in [">Edit<", "Move production", "Roll back production"] {
            assert!(!page.body.contains(control), "{control}");
        }
        let csrf = page.csrf();
        let edit = browser.get("/packs/shop/prompts/greeting/edit").await;
        assert_eq!(edit.status, StatusCode::FORBIDDEN);
        assert!(edit.body.contains("This key may only read"));
        for (path, fields) in [
            (
                "/packs/shop/prompts/greeting/edit",
                vec![
                    ("csrf", csrf.as_str()),
                    ("base", "2"),
                    ("action", "save"),
                    ("file:defaults/greeting.md", "X.\n"),
                ],
            ),
            (
                "/packs/shop/prompts/greeting/labels/production/move",
                vec![
                    ("csrf", csrf.as_str()),
                    ("to", "2"),
                    ("expect", "1"),
                    ("reason", "r"),
                ],
            ),
            (
                "/packs/shop/prompts/greeting/labels/production/rollback",
                vec![("csrf", csrf.as_str())],
            ),
        ] {
            let refused = browser.post(path, &fields).await;
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path}");
            assert!(
                refused.body.contains("This key may only read"),
                "{path}: {}",
                refused.body
            );
        }
        assert_eq!(server.store.log("shop", "greeting").await.unwrap().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_from_the_store_and_from_forms_is_escaped_on_every_page() {
    for db in databases("web_escaping").await {
        let store = db.open().await;
        let mut pack = shop();
        pack.insert(
            "defaults/greeting.md",
            format!("---\ndescription: \"{SCRIPT}\"\n---\nHello {SCRIPT}\n"),
        );
        store.push(&pack, &writer(), SCRIPT).await.unwrap();
        push_greeting(&store, &format!("Bye {SCRIPT}\n"), SCRIPT).await;
        let server = TestServer::start(store, config()).await;
        let mut browser = Browser::new(&server);
        let base = "/packs/shop/prompts/greeting";
        let moved = browser
            .get(&format!("{base}/labels/staging/move?to=v2"))
            .await;
        assert_eq!(moved.status, StatusCode::OK, "{}: {}", db.name, moved.body);
        let publish = browser
            .post(
                &format!("{base}/labels/staging/move"),
                &[
                    ("csrf", &moved.csrf()),
                    ("to", "2"),
                    ("expect", "none"),
                    ("reason", SCRIPT),
                ],
            )
            .await;
        assert_eq!(publish.status, StatusCode::SEE_OTHER, "{}", publish.body);
        let staging = Label::new("staging").unwrap();
        let report = promptreg_store::InstanceReport {
            instance: "i-1".into(),
            name: Some(SCRIPT.into()),
            library: SCRIPT.into(),
            source: promptreg_store::Served::Server,
            revision: Some(1),
            digest: None,
            last_error: Some(SCRIPT.into()),
            interval: Duration::from_secs(30),
            split: None,
        };
        let now = promptreg_store::Timestamp::now();
        server
            .store
            .report_instance("shop", &staging, &report, "key:x", now)
            .await
            .unwrap();
        let edit = browser.get(&format!("{base}/edit")).await;
        let check = browser
            .post(
                &format!("{base}/edit"),
                &[
                    ("csrf", &edit.csrf()),
                    ("base", "2"),
                    ("action", "check"),
                    ("message", SCRIPT),
                    (
                        "file:defaults/greeting.md",
                        &format!("---\ntemplate: true\n---\n{{{{ {SCRIPT}\n"),
                    ),
                ],
            )
            .await;
        assert_eq!(
            check.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            check.body
        );
        let encoded = "%3Cscript%3Ealert(1)%3C%2Fscript%3E";
        let mut pages = vec![check];
        for path in [
            "/".to_owned(),
            "/packs/shop".to_owned(),
            format!("/packs/shop?q={encoded}"),
            "/packs/shop/history".to_owned(),
            base.to_owned(),
            format!("{base}?locales={encoded}"),
            format!("{base}/compare?from=v1&to=v2"),
            format!("{base}/compare?from={encoded}&to=v2"),
            format!("{base}/playground?at=v2"),
            format!("{base}/playground?at=v2&context={encoded}"),
            format!("{base}/edit"),
            format!("/packs/shop/prompts/{encoded}"),
            "/packs/shop/labels/staging".to_owned(),
            "/packs/shop/labels/staging/fleet".to_owned(),
        ] {
            pages.push(browser.get(&path).await);
        }
        for page in &pages {
            assert!(!page.body.contains("<script>"), "{}", page.body);
        }
        assert!(pages.iter().any(|p| p.body.contains("&lt;script&gt;")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_page_is_a_page_and_an_unknown_api_route_a_problem() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let mut browser = Browser::new(&server);
    let missing = browser.get("/packz/%3Cscript%3Ealert(1)").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(
        missing.body.contains("There is no page at /packz/"),
        "{}",
        missing.body
    );
    assert!(!missing.body.contains("<script>alert"), "{}", missing.body);
    let api = browser.get("/v1/nothing").await;
    assert_eq!(api.status, StatusCode::NOT_FOUND);
    assert!(api.body.contains("unknown-route"), "{}", api.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_fields_are_refused_with_a_message() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let mut browser = Browser::new(&server);
    let path = "/packs/shop/prompts/greeting/edit";
    let csrf = browser.get(path).await.csrf();
    let huge = "x".repeat(300 * 1024);
    let refused = browser
        .post(
            path,
            &[
                ("csrf", &csrf),
                ("base", "1"),
                ("action", "save"),
                ("file:defaults/greeting.md", &huge),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        refused.body.contains("defaults/greeting.md") && refused.body.contains("256 KiB"),
        "{}",
        refused.body
    );
    assert_eq!(server.store.log("shop", "greeting").await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_shows_diagnostics_save_creates_a_version_and_a_stale_edit_conflicts() {
    for db in databases("web_edit").await {
        let store = published(&db).await;
        let secret = key(&store, "editor", Scope::Write).await;
        let server = TestServer::start(store.clone(), config()).await;
        let mut browser = Browser::new(&server);
        browser.sign_in(&secret).await;
        let path = "/packs/shop/prompts/greeting/edit";
        let edit = browser.get(path).await;
        assert!(
            edit.body.contains(">defaults/greeting.md</label>"),
            "{}",
            edit.body
        );
        let (csrf, base) = (edit.csrf(), edit.field("base"));
        assert_eq!(base, "1");

        let broken = "---\ntemplate: true\n---\nHello {{ name\n";
        let check = browser
            .post(
                path,
                &[
                    ("csrf", &csrf),
                    ("base", &base),
                    ("action", "check"),
                    ("file:defaults/greeting.md", broken),
                ],
            )
            .await;
        assert_eq!(
            check.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            db.name
        );
        assert!(check.body.contains("role=\"alert\""));
        assert!(check.body.contains("line 4, column"), "{}", check.body);
        assert!(check.body.contains("class=\"marked\""));
        let failing_save = browser
            .post(
                path,
                &[
                    ("csrf", &csrf),
                    ("base", &base),
                    ("action", "save"),
                    ("file:defaults/greeting.md", broken),
                ],
            )
            .await;
        assert_eq!(failing_save.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(store.log("shop", "greeting").await.unwrap().len(), 1);

        let saved = browser
            .post(
                path,
                &[
                    ("csrf", &csrf),
                    ("base", &base),
                    ("action", "save"),
                    ("message", "warmer"),
                    ("file:defaults/greeting.md", "Hello there.\n"),
                ],
            )
            .await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
        let shown = browser.get(saved.location.as_deref().unwrap()).await;
        assert!(shown.body.contains("Saved v2"), "{}", shown.body);
        let log = store.log("shop", "greeting").await.unwrap();
        let v2 = log.iter().find(|v| v.number == 2).unwrap();
        assert_eq!(
            (v2.author.as_str(), v2.message.as_str()),
            ("key:editor", "warmer")
        );

        // Someone saves v3 while this edit still begins from v2.
        let stale_form = browser.get(path).await;
        push_greeting(&store, "Hello from elsewhere.\n", "theirs").await;
        let stale = browser
            .post(
                path,
                &[
                    ("csrf", &csrf),
                    ("base", &stale_form.field("base")),
                    ("action", "save"),
                    ("file:defaults/greeting.md", "Mine.\n"),
                ],
            )
            .await;
        assert_eq!(stale.status, StatusCode::CONFLICT);
        assert!(
            stale.body.contains("Someone saved v3 first"),
            "{}",
            stale.body
        );
        // Their line, its changed words marked.
        assert!(stale.body.contains("elsewhere.</ins>"), "{}", stale.body);
        assert!(stale.body.contains("Mine."), "the edit is kept");
        assert_eq!(store.log("shop", "greeting").await.unwrap().len(), 3);
    }
}

/// The confirmation of a move lists its contract changes; one that would
/// break a stable label's contract has no button but for an admin, and
/// the history shows what an admin forced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_that_breaks_a_stable_contract_is_shown_and_kept_for_admins() {
    for db in databases("web_stable_contract").await {
        let store = db.open().await;
        let mut pack = shop();
        let manifest = String::from_utf8(pack.get("promptreg.toml").unwrap().to_vec()).unwrap();
        pack.insert(
            "promptreg.toml",
            format!("{manifest}[release]\nstable_contract = [\"production\"]\n"),
        );
        pack.insert(
            "defaults/greeting.md",
            "---\ntools:\n  - name: wave\n    description: Waves\n---\nHello.\n",
        );
        store.push(&pack, &writer(), "first").await.unwrap();
        let production = Label::new("production").unwrap();
        store
            .release(
                "shop",
                &Label::latest(),
                &production,
                None,
                &writer(),
                "ship",
            )
            .await
            .unwrap();
        push_greeting(&store, "Hello, without a wave.\n", "no wave").await;
        let writer_key = key(&store, "release-manager", Scope::Write).await;
        let admin_key = key(&store, "root", Scope::Admin).await;
        let server = TestServer::start(store.clone(), config()).await;
        let confirm_path = "/packs/shop/prompts/greeting/labels/production/move?to=v2";

        let mut browser = Browser::new(&server);
        browser.sign_in(&writer_key).await;
        let confirm = browser.get(confirm_path).await;
        assert_eq!(
            confirm.status,
            StatusCode::OK,
            "{}: {}",
            db.name,
            confirm.body
        );
        assert!(
            confirm
                .body
                .contains("<li class=\"breaking\">breaking: tool `wave` removed</li>"),
            "{}",
            confirm.body
        );
        assert!(
            confirm
                .body
                .contains("production keeps its prompts' contracts stable"),
            "{}",
            confirm.body
        );
        assert!(
            !confirm.body.contains(">Publish</button>"),
            "{}",
            confirm.body
        );

        let mut admin = Browser::new(&server);
        admin.sign_in(&admin_key).await;
        let confirm = admin.get(confirm_path).await;
        assert!(
            confirm.body.contains(">Publish</button>"),
            "{}",
            confirm.body
        );
        let refused = admin
            .post(
                "/packs/shop/prompts/greeting/labels/production/move",
                &[
                    ("csrf", &confirm.csrf()),
                    ("to", "2"),
                    ("expect", "1"),
                    ("reason", "waving is gone"),
                ],
            )
            .await;
        assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
        assert!(
            refused.body.contains("tool `wave` removed"),
            "{}",
            refused.body
        );
        let forced = admin
            .post(
                "/packs/shop/prompts/greeting/labels/production/move",
                &[
                    ("csrf", &confirm.csrf()),
                    ("to", "2"),
                    ("expect", "1"),
                    ("reason", "waving is gone"),
                    ("force", "on"),
                ],
            )
            .await;
        assert_eq!(forced.status, StatusCode::SEE_OTHER, "{}", forced.body);
        let compared = admin
            .get("/packs/shop/prompts/greeting/compare?from=v1&to=v2")
            .await;
        assert!(
            compared
                .body
                .contains("<li class=\"breaking\">breaking: tool `wave` removed</li>"),
            "{}",
            compared.body
        );
        let history = admin.get("/packs/shop/labels/production").await;
        assert!(
            history
                .body
                .contains("<li>greeting v1 -&gt; v2: tool `wave` removed</li>"),
            "{}",
            history.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moving_and_rolling_back_a_label_show_in_the_history_with_actor_and_reason() {
    for db in databases("web_labels").await {
        let store = published(&db).await;
        push_greeting(&store, "Hi.\n", "shorter").await;
        let secret = key(&store, "release-manager", Scope::Write).await;
        let server = TestServer::start(store.clone(), config()).await;
        let mut browser = Browser::new(&server);
        browser.sign_in(&secret).await;
        let base = "/packs/shop/prompts/greeting";
        let page = browser.get(base).await;
        assert!(page.body.contains(">Move production</a>"), "{}", db.name);

        let confirm = browser
            .get(&format!("{base}/labels/production/move?to=v2"))
            .await;
        assert!(
            confirm.body.contains("Publish v2 to production?"),
            "{}",
            confirm.body
        );
        assert!(
            confirm.body.contains("<del>Hello.</del>") && confirm.body.contains("<ins>Hi.</ins>")
        );
        let moved = browser
            .post(
                &format!("{base}/labels/production/move"),
                &[
                    ("csrf", &confirm.csrf()),
                    ("to", "2"),
                    ("expect", &confirm.field("expect")),
                    ("reason", "shorter is better"),
                ],
            )
            .await;
        assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.body);
        let after = browser.get(moved.location.as_deref().unwrap()).await;
        assert!(
            after.body.contains("production now points at v2"),
            "{}",
            after.body
        );
        let production = Label::new("production").unwrap();
        assert_eq!(
            store
                .resolve(
                    "shop",
                    "greeting",
                    &promptreg_store::VersionRef::Label(production.clone())
                )
                .await
                .unwrap(),
            2
        );

        // A second confirmation, now stale: the label moved since.
        let stale = browser
            .post(
                &format!("{base}/labels/production/move"),
                &[
                    ("csrf", &confirm.csrf()),
                    ("to", "2"),
                    ("expect", "1"),
                    ("reason", "again"),
                ],
            )
            .await;
        assert_eq!(stale.status, StatusCode::CONFLICT);

        let confirm = browser
            .get(&format!("{base}/labels/production/rollback"))
            .await;
        assert!(
            confirm.body.contains("Roll back production?"),
            "{}",
            confirm.body
        );
        let back = browser
            .post(
                &format!("{base}/labels/production/rollback"),
                &[("csrf", &confirm.csrf()), ("reason", "too curt")],
            )
            .await;
        let after = browser.get(back.location.as_deref().unwrap()).await;
        assert!(
            after.body.contains("production now points at v1"),
            "{}",
            after.body
        );
        // One more step back would pass the version it was created on.
        let confirm = browser
            .get(&format!("{base}/labels/production/rollback"))
            .await;
        let past = browser
            .post(
                &format!("{base}/labels/production/rollback"),
                &[("csrf", &confirm.csrf()), ("reason", "")],
            )
            .await;
        assert_eq!(past.status, StatusCode::NOT_FOUND, "{}", past.body);
        assert!(past.body.contains("where it was created"), "{}", past.body);

        let history = browser.get("/packs/shop/history").await;
        assert!(history.body.contains("key:release-manager"));
        assert!(history.body.contains("shorter is better"));
        assert!(history.body.contains("rollback from 2: too curt"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_labels_move_with_admin_keys_only() {
    let db = common::sqlite();
    let store = published(&db).await;
    push_greeting(&store, "Hi.\n", "shorter").await;
    store
        .protect("shop", &Label::new("production").unwrap(), true, &admin())
        .await
        .unwrap();
    let writer_key = key(&store, "editor", Scope::Write).await;
    let admin_key = key(&store, "ops", Scope::Admin).await;
    let server = TestServer::start(store, config()).await;
    let base = "/packs/shop/prompts/greeting";
    let mut editor = Browser::new(&server);
    editor.sign_in(&writer_key).await;
    let page = editor.get(base).await;
    assert!(page.body.contains("Only admin keys may move production"));
    assert!(!page.body.contains("Move production"));
    let refused = editor
        .post(
            &format!("{base}/labels/production/move"),
            &[("csrf", &page.csrf()), ("to", "2"), ("expect", "1")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let mut ops = Browser::new(&server);
    ops.sign_in(&admin_key).await;
    assert!(ops.get(base).await.body.contains("Move production"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_list_groups_by_prefix_and_the_locale_matrix_follows_the_chain() {
    let db = common::sqlite();
    let server = TestServer::start(published(&db).await, config()).await;
    let mut browser = Browser::new(&server);
    let list = browser.get("/packs/shop").await;
    assert!(
        list.body.contains("<h2>webagent-</h2>") && list.body.contains("<h2>other</h2>"),
        "{}",
        list.body
    );
    assert!(list.body.contains("production → v1"));
    let filtered = browser.get("/packs/shop?locale=zh-TW").await;
    assert!(
        filtered.body.contains(">webagent-narrator</a>")
            && !filtered.body.contains(">greeting</a>")
    );
    let page = browser
        .get("/packs/shop/prompts/webagent-narrator?locales=zh-HK,pt-PT")
        .await;
    let row = |locale: &str| {
        let start = page
            .body
            .find(&format!("<td>{locale}</td>"))
            .unwrap_or_else(|| panic!("{locale}: {}", page.body));
        page.body[start..].split("</tr>").next().unwrap().to_owned()
    };
    assert!(
        row("zh-HK").contains("defaults/webagent-narrator.zh-TW.md"),
        "{}",
        row("zh-HK")
    );
    assert!(
        row("zh-HK").contains("<strong>zh-TW</strong>"),
        "{}",
        row("zh-HK")
    );
    assert!(
        row("pt-PT").contains("<code>default</code>"),
        "{}",
        row("pt-PT")
    );
    let playground = browser
        .get("/packs/shop/prompts/webagent-narrator/playground?at=production&locale=zh-HK")
        .await;
    assert!(
        playground.body.contains("敘述步驟。"),
        "{}",
        playground.body
    );
    assert!(playground.body.contains("origin-override"));
    let compare = browser
        .get("/packs/shop/prompts/greeting/compare?from=v1&to=production")
        .await;
    assert_eq!(compare.status, StatusCode::OK, "{}", compare.body);
}

/// A pack with one chat prompt and its model settings.
fn help_desk(user: &str, temperature: &str) -> PackFiles {
    let mut files = PackFiles::default();
    files.insert(
        "promptreg.toml",
        "name = \"help\"\nkeys = [\"support-chat\"]\n[user]\nprompts_dir = \".help/prompts\"\n",
    );
    files.insert(
        "defaults/support-chat.md",
        format!(
            "---\nkind: chat\nmodel:\n  temperature: {temperature}\n---\n# system\nYou help customers.\n\n# history: conversation\n\n# user\n{user}\n"
        ),
    );
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_prompts_compare_per_message_with_their_model_settings() {
    for db in databases("web_chat").await {
        let store = db.open().await;
        store
            .push(&help_desk("Hi.", "0.2"), &writer(), "first")
            .await
            .unwrap();
        store
            .push(
                &help_desk("Hello, I need help.", "0.7"),
                &writer(),
                "warmer",
            )
            .await
            .unwrap();
        let server = TestServer::start(store, config()).await;
        let mut browser = Browser::new(&server);
        let base = "/packs/help/prompts/support-chat";
        let compare = browser
            .get(&format!("{base}/compare?from=v1&to=latest"))
            .await;
        assert_eq!(
            compare.status,
            StatusCode::OK,
            "{}: {}",
            db.name,
            compare.body
        );
        assert!(compare.body.contains("message 3: user"), "{}", compare.body);
        assert!(
            compare.body.contains("<del>Hi.</del>")
                && compare.body.contains("<ins>Hello, I need help.</ins>")
        );
        assert!(
            !compare.body.contains("message 1: system</h4>"),
            "unchanged messages are left out"
        );
        assert!(
            compare
                .body
                .contains("<code>temperature</code></td><td><del>0.2</del></td><td><ins>0.7</ins>"),
            "{}",
            compare.body
        );

        let list = browser.get("/packs/help").await;
        assert!(list.body.contains("<td>chat</td>"), "{}", list.body);
        let history = r#"{"conversation": [{"role": "assistant", "content": "How can I help?"}]}"#;
        let url = reqwest::Url::parse_with_params(
            &server.url(&format!("{base}/playground")),
            [("at", "v2"), ("context", "{}"), ("history", history)],
        )
        .unwrap();
        let query = format!("{}?{}", url.path(), url.query().unwrap_or_default());
        let playground = browser.get(&query).await;
        assert!(
            playground.body.contains(">History (JSON)</label>"),
            "{}",
            playground.body
        );
        assert!(
            playground.body.contains("How can I help?"),
            "{}",
            playground.body
        );
        assert!(playground.body.contains("Hello, I need help."));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_read_as_a_new_user_expects() {
    let db = common::sqlite();
    let store = published(&db).await;
    push_greeting(&store, "Say hello to every visitor.\n", "hello").await;
    push_greeting(&store, "Say goodbye to every visitor.\n", "goodbye").await;
    let template = "---\ntemplate: true\nvariables:\n  name: { required: true }\n  count: { type: number }\n  tags: { default: [a] }\n---\n{{ name }} has {{ count }} items.\n";
    push_greeting(&store, template, "a template").await;
    store
        .release(
            "shop",
            &Label::latest(),
            &Label::new("staging").unwrap(),
            None,
            &writer(),
            "",
        )
        .await
        .unwrap();
    let server = TestServer::start(store, config()).await;
    let mut browser = Browser::new(&server);

    // Labels and versions: two tables under their own headings, versions
    // newest first as `store log` lists them.
    let prompt = browser.get("/packs/shop/prompts/greeting").await;
    let at = |text: &str| {
        prompt
            .body
            .find(text)
            .unwrap_or_else(|| panic!("{text}: {}", prompt.body))
    };
    assert!(at("<h2>Labels</h2>") < at("<h2>Versions</h2>"));
    let versions = &prompt.body[at("<h2>Versions</h2>")..];
    let row = |n: u64| {
        versions
            .find(&format!("<td>v{n}</td>"))
            .unwrap_or_else(|| panic!("v{n}: {versions}"))
    };
    assert!(
        row(4) < row(3) && row(3) < row(2) && row(2) < row(1),
        "{versions}"
    );

    // The playground starts from the declared variables: a default, or an
    // empty value of the declared type.
    let playground = browser.get("/packs/shop/prompts/greeting/playground").await;
    for field in [
        "&quot;name&quot;: &quot;&quot;",
        "&quot;count&quot;: 0",
        "&quot;tags&quot;: [",
    ] {
        assert!(
            playground.body.contains(field),
            "{field}: {}",
            playground.body
        );
    }
    // An error names the file as the pack has it, not the store's name of it.
    let failed = browser
        .get("/packs/shop/prompts/greeting/playground?context=%7B%22name%22%3A%22Ada%22%2C%22count%22%3A%22many%22%7D")
        .await;
    assert!(failed.body.contains("role=\"alert\""), "{}", failed.body);
    assert!(
        failed.body.contains("defaults/greeting.md"),
        "{}",
        failed.body
    );
    assert!(!failed.body.contains("#shop@"), "{}", failed.body);

    // Compare marks the words that changed inside a changed line.
    let compare = browser
        .get("/packs/shop/prompts/greeting/compare?from=v2&to=v3")
        .await;
    assert!(
        compare
            .body
            .contains("Say <del>hello</del> to every visitor.")
            && compare
                .body
                .contains("Say <ins>goodbye</ins> to every visitor."),
        "{}",
        compare.body
    );

    // The editor: the default file first, then the locales; a locale file
    // is added from the default's text, and saved with the rest.
    let edit = browser
        .get("/packs/shop/prompts/webagent-narrator/edit")
        .await;
    let default_at = edit
        .body
        .find("name=\"file:defaults/webagent-narrator.md\"")
        .unwrap();
    let variant_at = edit
        .body
        .find("name=\"file:defaults/webagent-narrator.zh-TW.md\"")
        .unwrap();
    assert!(default_at < variant_at);
    let added = browser
        .post(
            "/packs/shop/prompts/webagent-narrator/edit",
            &[
                ("csrf", &edit.csrf()),
                ("base", &edit.field("base")),
                (
                    "file:defaults/webagent-narrator.md",
                    "---\ndescription: Narrates each step\n---\nNarrate the step.\n",
                ),
                ("file:defaults/webagent-narrator.zh-TW.md", "敘述步驟。\n"),
                ("message", ""),
                ("new_locale", "ja"),
                ("action", "add"),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::OK, "{}", added.body);
    assert!(
        added
            .body
            .contains("Added defaults/webagent-narrator.ja.md"),
        "{}",
        added.body
    );
    let textarea = added
        .body
        .find("name=\"file:defaults/webagent-narrator.ja.md\"")
        .unwrap();
    assert!(
        added.body[textarea..].contains("Narrate the step."),
        "the default's text to translate"
    );
    let bad = browser
        .post(
            "/packs/shop/prompts/webagent-narrator/edit",
            &[
                ("csrf", &edit.csrf()),
                ("base", &edit.field("base")),
                ("new_locale", "en--US"),
                ("action", "add"),
            ],
        )
        .await;
    assert!(
        bad.body
            .contains("Cannot add a locale file: invalid locale"),
        "{}",
        bad.body
    );

    // The label history folds a release's moves into one row that expands.
    let history = browser.get("/packs/shop/history").await;
    assert!(
        history
            .body
            .contains("<summary>A release: 3 entries</summary>"),
        "{}",
        history.body
    );
    assert_eq!(
        history.body.matches("release latest").count(),
        1,
        "{}",
        history.body
    );
}

/// The shop pack with `production` gated and a test `greeting` passes
/// only while it says hello; `production` released from `latest`.
async fn gated_shop(db: &TestDb) -> Store {
    let store = db.open().await;
    let mut files = shop();
    let manifest = String::from_utf8(files.get("promptreg.toml").unwrap().to_vec()).unwrap();
    files.insert(
        "promptreg.toml",
        format!("{manifest}[release]\ngated = [\"production\"]\n"),
    );
    files.insert(
        "tests/greeting.toml",
        "prompt = \"greeting\"\n[[case]]\nname = \"says-hello\"\ncontains = \"Hello\"\n",
    );
    store.push(&files, &writer(), "first").await.unwrap();
    store
        .release(
            "shop",
            &Label::latest(),
            &Label::new("production").unwrap(),
            None,
            &writer(),
            "",
        )
        .await
        .unwrap();
    store
}

/// The publish page tests the state it would publish before its button;
/// a gated label refuses a failing one with its cases, unless an admin
/// forces it; the label page lists revisions and restores any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_test_what_they_publish_and_restore_any_revision() {
    for db in databases("web_revisions").await {
        let store = gated_shop(&db).await;
        push_greeting(&store, "Howdy.\n", "western").await;
        let editor = key(&store, "editor", Scope::Write).await;
        let root = key(&store, "root", Scope::Admin).await;
        let server = TestServer::start(store.clone(), config()).await;
        let mut browser = Browser::new(&server);
        browser.sign_in(&editor).await;

        // The prompt's tests, on demand: at a version, and at a label.
        let at_v2 = browser
            .get("/packs/shop/prompts/greeting/tests?at=v2")
            .await;
        assert_eq!(at_v2.status, StatusCode::OK, "{}", at_v2.body);
        assert!(at_v2.body.contains("0 of 1 cases passed"), "{}", at_v2.body);
        assert!(
            at_v2.body.contains("FAIL</strong> greeting · says-hello"),
            "{}",
            at_v2.body
        );
        let at_prod = browser
            .get("/packs/shop/prompts/greeting/tests?at=production")
            .await;
        assert!(
            at_prod.body.contains("1 of 1 cases passed"),
            "{}",
            at_prod.body
        );
        let prompt = browser.get("/packs/shop/prompts/greeting").await;
        assert!(
            prompt
                .body
                .contains("/packs/shop/prompts/greeting/tests?at=v2")
        );

        // Publishing v2 to production: the failing case before the button.
        let move_page = "/packs/shop/prompts/greeting/labels/production/move";
        let confirm = browser.get(&format!("{move_page}?to=v2")).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.body);
        assert!(
            confirm.body.contains("production is gated"),
            "{}",
            confirm.body
        );
        assert!(
            confirm.body.contains("FAIL</strong> greeting · says-hello"),
            "{}",
            confirm.body
        );
        assert!(
            !confirm.body.contains("name=\"force\""),
            "a writer cannot force"
        );
        let fields = |c: &Page| [c.csrf(), c.field("to"), c.field("expect")];
        let [csrf, to, expect] = fields(&confirm);
        let refused = browser
            .post(
                move_page,
                &[("csrf", &csrf), ("to", &to), ("expect", &expect)],
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        assert!(
            refused.body.contains("label `production` is gated"),
            "{}",
            refused.body
        );
        assert!(
            refused.body.contains("FAIL</strong> greeting · says-hello"),
            "{}",
            refused.body
        );

        // An admin sees the box and forces it, with a reason.
        let mut admin_browser = Browser::new(&server);
        admin_browser.sign_in(&root).await;
        let confirm = admin_browser.get(&format!("{move_page}?to=v2")).await;
        assert!(confirm.body.contains("name=\"force\""), "{}", confirm.body);
        let [csrf, to, expect] = fields(&confirm);
        let forced = admin_browser
            .post(
                move_page,
                &[
                    ("csrf", &csrf),
                    ("to", &to),
                    ("expect", &expect),
                    ("force", "on"),
                    ("reason", "hotfix"),
                ],
            )
            .await;
        assert_eq!(forced.status, StatusCode::SEE_OTHER, "{}", forced.body);

        // The label page: newest first, the forced one marked; restore r1.
        let label = browser.get("/packs/shop/labels/production").await;
        assert_eq!(label.status, StatusCode::OK, "{}", label.body);
        assert!(label.body.contains("r2 <code"), "{}", label.body);
        assert!(
            label.body.contains("<span class=\"tag\">forced</span>"),
            "{}",
            label.body
        );
        assert!(
            label
                .body
                .contains("0 of 1 cases passed, forced by an admin"),
            "{}",
            label.body
        );
        assert!(
            label.body.contains("greeting v1 -&gt; v2"),
            "{}",
            label.body
        );
        let restore = "/packs/shop/labels/production/restore";
        assert!(
            label.body.contains(&format!("{restore}?revision=1")),
            "{}",
            label.body
        );
        let confirm = browser.get(&format!("{restore}?revision=1")).await;
        assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.body);
        assert!(
            confirm.body.contains("1 of 1 cases passed"),
            "{}",
            confirm.body
        );
        assert!(
            confirm.body.contains("defaults/greeting.md"),
            "{}",
            confirm.body
        );
        assert!(
            !confirm.body.contains("defaults/webagent-narrator.md"),
            "only what differs"
        );
        let csrf = confirm.csrf();
        let expect = confirm.field("expect");
        let done = browser
            .post(
                restore,
                &[
                    ("csrf", csrf.as_str()),
                    ("revision", "1"),
                    ("expect", expect.as_str()),
                ],
            )
            .await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
        assert_eq!(
            done.location.as_deref(),
            Some("/packs/shop/labels/production?restored=1")
        );
        let revisions = store
            .revisions("shop", &Label::new("production").unwrap())
            .await
            .unwrap();
        assert_eq!(
            (revisions[0].number, revisions[0].restores),
            (3, Some(1)),
            "{}",
            db.name
        );
        // The same confirmation sent again is refused: the label moved.
        let again = browser
            .post(
                restore,
                &[
                    ("csrf", csrf.as_str()),
                    ("revision", "2"),
                    ("expect", expect.as_str()),
                ],
            )
            .await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
        assert!(
            again.body.contains("is at revision 3, not 2"),
            "{}",
            again.body
        );
        // The pack's label history names each change's revision, linked
        // to the label's page.
        let history = browser.get("/packs/shop/history").await;
        assert!(
            history
                .body
                .contains("<a href=\"/packs/shop/labels/production\">production</a> r3"),
            "{}",
            history.body
        );
        // A revision the label does not have is named.
        let missing = browser.get(&format!("{restore}?revision=9")).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(
            missing.body.contains("has no revision 9"),
            "{}",
            missing.body
        );
    }
}

/// The label page says what serves the label: a line per revision served
/// and the instances, also on a page of its own that the script reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_label_page_shows_what_serves_the_label() {
    let db = common::sqlite();
    let store = published(&db).await;
    let production = Label::new("production").unwrap();
    let report = |instance: &str, revision| promptreg_store::InstanceReport {
        instance: instance.into(),
        name: Some(format!("web {instance}")),
        library: "promptreg-rust/test".into(),
        source: promptreg_store::Served::Server,
        revision: Some(revision),
        digest: None,
        last_error: None,
        interval: Duration::from_secs(30),
        split: None,
    };
    let newest = store
        .newest_revision("shop", &production)
        .await
        .unwrap()
        .unwrap()
        .0;
    let now = promptreg_store::Timestamp::now();
    for (id, revision) in [("a", newest), ("b", newest), ("c", newest - 1)] {
        store
            .report_instance("shop", &production, &report(id, revision), "key:x", now)
            .await
            .unwrap();
    }
    let old = promptreg_store::Timestamp(now.0 - 3_600_000);
    store
        .report_instance("shop", &production, &report("d", newest), "key:x", old)
        .await
        .unwrap();
    let server = TestServer::start(store, config()).await;
    let mut browser = Browser::new(&server);
    let summary = format!(
        "production: revision {newest} live on 2 of 4 instances; 1 on revision {}; 1 offline",
        newest - 1
    );
    for path in [
        "/packs/shop/labels/production",
        "/packs/shop/labels/production/fleet",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        assert!(page.body.contains(&summary), "{path}: {}", page.body);
        assert!(page.body.contains("<td>web c</td>"), "{}", page.body);
        assert!(page.body.contains("<tr class=\"behind\">"), "{}", page.body);
        assert!(
            page.body.contains("<span class=\"tag\">offline</span>"),
            "{}",
            page.body
        );
        assert!(
            page.body
                .contains("data-refresh=\"/packs/shop/labels/production/fleet\"")
        );
    }
    let script = server.get("/assets/fleet.js").await;
    assert_eq!(script.status(), 200);

    // A split running shows beside it, its steps escaped.
    let candidate = promptreg_store::Candidate {
        label: production.clone(),
        revision: Some(promptreg_store::RevisionRef::Number(1)),
    };
    let share: promptreg_store::Share = "12.5".parse().unwrap();
    server
        .store
        .start_split("shop", &production, &candidate, share, &writer(), SCRIPT)
        .await
        .unwrap();
    let page = browser.get("/packs/shop/labels/production").await;
    assert!(
        page.body.contains("Split 1: 12.5% of subjects get <a href=\"/packs/shop/labels/production\">production</a> r1"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("start 12.5% by ada: &lt;script&gt;"),
        "{}",
        page.body
    );
}

/// The label page says who signed each revision: the key's name, its
/// fingerprint on hover, and `unsigned` for the rest; a name from the
/// store is escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_label_page_shows_who_signed_each_revision() {
    let db = common::sqlite();
    let store = published(&db).await;
    let key = promptreg_store::test_support::signing_key(1);
    let fingerprint = key.fingerprint();
    store
        .name_signing_key(&fingerprint, "<b>bot</b>", &admin())
        .await
        .unwrap();
    push_greeting(&store, "Signed hello.", "signed").await;
    store
        .release(
            "shop",
            &Label::latest(),
            &Label::new("production").unwrap(),
            None,
            &writer().signing_with(key),
            "",
        )
        .await
        .unwrap();
    let server = TestServer::start(store, config()).await;
    let mut browser = Browser::new(&server);
    let page = browser.get("/packs/shop/labels/production").await;
    assert!(page.body.contains("Signed by"), "{}", page.body);
    assert!(
        page.body.contains(&format!(
            "title=\"{fingerprint}\">&lt;b&gt;bot&lt;/b&gt;</span>"
        )),
        "{}",
        page.body
    );
    assert!(page.body.contains("unsigned"), "the earlier revisions");
    assert!(!page.body.contains("<b>bot</b>"));
}

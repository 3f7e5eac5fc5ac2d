//! What the tests of this crate and of the crates built on it share
//! (feature `test-support`): the databases every store test runs on, a
//! SQLite file in a temporary folder and a schema of its own in the
//! PostgreSQL server named by [`DATABASE_URL_VAR`] (see
//! `scripts/postgres-for-tests.sh`), actors, and small packs.
//!
//! Test code: its functions panic on failure.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::{Actor, PackFiles, Permission, Store};

/// The variable naming the PostgreSQL server tests use, a URL.
pub const DATABASE_URL_VAR: &str = "PROMPTREG_TEST_DATABASE_URL";

/// One database to run a test on; a SQLite one keeps its folder alive.
pub struct TestDb {
    /// `sqlite` or `postgres`, for messages.
    pub name: &'static str,
    /// What [`Store::open`] takes.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// Opens the store, migrating it.
    pub async fn open(&self) -> Store {
        Store::open(&self.url)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }

    /// Runs `sql` on the database behind the store's back, as someone
    /// with access to the database could: for tests of what a tampered
    /// database makes a server send.
    pub async fn tamper(&self, sql: &str) {
        let done = match self.name {
            "postgres" => {
                let pool = sqlx::PgPool::connect(&self.url).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.map(drop)
            }
            _ => {
                let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&self.url);
                let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
                sqlx::raw_sql(sql).execute(&pool).await.map(drop)
            }
        };
        done.unwrap_or_else(|e| panic!("{}: {sql}: {e}", self.name));
    }
}

/// SQLite always; PostgreSQL when the variable is set. Under `CI=true` a
/// missing variable fails the test, so CI never skips PostgreSQL.
pub async fn databases(test: &str) -> Vec<TestDb> {
    let mut dbs = vec![sqlite()];
    match postgres(test).await {
        Some(db) => dbs.push(db),
        None if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!(
                "{DATABASE_URL_VAR} is not set under CI=true: the PostgreSQL half of `{test}` must run"
            )
        }
        None => eprintln!("{test}: PostgreSQL skipped ({DATABASE_URL_VAR} is not set)"),
    }
    dbs
}

/// PostgreSQL alone, for a test only it can run: `None` (the test is
/// skipped, and says so) without `PROMPTREG_TEST_DATABASE_URL`, which
/// `CI=true` requires.
pub async fn postgres_only(test: &str) -> Option<TestDb> {
    let db = postgres(test).await;
    if db.is_none() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "{DATABASE_URL_VAR} is not set under CI=true: `{test}` must run on PostgreSQL"
        );
        eprintln!("{test}: PostgreSQL skipped ({DATABASE_URL_VAR} is not set)");
    }
    db
}

/// The test that stands for the PostgreSQL half of a test file's tests,
/// for its `common` module: where the crate was built without
/// [`DATABASE_URL_VAR`] (its build script says), cargo's summary counts it
/// ignored and prints how to run them.
#[macro_export]
macro_rules! postgres_half {
    () => {
        #[test]
        #[cfg_attr(
            not(promptreg_postgres),
            ignore = "the PostgreSQL half of these tests is skipped: run scripts/postgres-for-tests.sh start and set PROMPTREG_TEST_DATABASE_URL"
        )]
        fn postgresql_half_of_these_tests() {
            let var = $crate::test_support::DATABASE_URL_VAR;
            assert!(
                std::env::var(var).is_ok_and(|url| !url.is_empty()),
                "{var} is not set, yet these tests were built with it"
            );
        }
    };
}

/// A SQLite store in a temporary folder of its own.
pub fn sqlite() -> TestDb {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("promptreg.db").to_str().unwrap().to_owned();
    TestDb {
        name: "sqlite",
        url,
        _dir: Some(dir),
    }
}

/// A fresh schema of the test server, so tests run in parallel.
pub async fn postgres(test: &str) -> Option<TestDb> {
    let base = std::env::var(DATABASE_URL_VAR)
        .ok()
        .filter(|v| !v.is_empty())?;
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let schema = format!(
        "t_{}_{}_{}",
        test.replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let pool = sqlx::PgPool::connect(&base)
        .await
        .expect("connect to the test server");
    sqlx::raw_sql(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options[search_path]={schema}&application_name={schema}");
    Some(TestDb {
        name: "postgres",
        url,
        _dir: None,
    })
}

/// A releaser's signing key made from `seed`: anyone can make the same
/// one, so it is for tests only.
pub fn signing_key(seed: u8) -> promptreg::signing::SigningKey {
    let text = promptreg::signing::test_key_openssh(seed);
    promptreg::signing::SigningKey::from_openssh(&text, None, "test.key").unwrap()
}

/// Keys that trust only [`signing_key`]`(seed)`.
pub fn trusting(seed: u8) -> promptreg::signing::TrustedKeys {
    let mut trusted = promptreg::signing::TrustedKeys::new();
    trusted
        .add_openssh(&signing_key(seed).public_key_openssh(), "test")
        .unwrap();
    trusted
}

/// A writer, `ada`.
pub fn writer() -> Actor {
    Actor::new("ada", [Permission::Write])
}

/// An administrator, `root`.
pub fn admin() -> Actor {
    Actor::new("root", [Permission::Admin])
}

/// The manifest of [`demo`].
pub const MANIFEST: &str = "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo/prompts\"\n";

/// A small pack: two prompts, one with a French variant.
pub fn demo() -> PackFiles {
    let mut files = PackFiles::default();
    files.insert("promptreg.toml", MANIFEST);
    files.insert(
        "defaults/greeting.md",
        "---\ntemplate: true\nvariables:\n  name:\npin_tail: Be brief.\n---\nHello {{ name }}!\n",
    );
    files.insert(
        "defaults/greeting.fr.md",
        "---\ntemplate: true\n---\nBonjour {{ name }} !\n",
    );
    files.insert("defaults/farewell.md", "Goodbye.\n");
    files
}

/// [`demo`] with `production` gated and one test of `greeting`, which
/// passes.
pub fn gated_demo() -> PackFiles {
    let mut files = demo();
    files.insert(
        "promptreg.toml",
        format!("{MANIFEST}[release]\ngated = [\"production\"]\n"),
    );
    files.insert(
        "tests/greeting.toml",
        "prompt = \"greeting\"\n[[case]]\nname = \"hello\"\ncontext = { name = \"Ada\" }\ncontains = \"Hello Ada\"\n",
    );
    files
}

/// A pack of `n` prompts `p0000`.. with an English and a Japanese file each;
/// prompts below `changed` carry `edit` in their text.
pub fn big_pack(n: usize, changed: usize, edit: &str) -> PackFiles {
    let mut files = PackFiles::default();
    let keys: Vec<String> = (0..n).map(|i| format!("\"p{i:04}\"")).collect();
    files.insert(
        "promptreg.toml",
        format!(
            "name = \"big\"\nkeys = [{}]\n[user]\nprompts_dir = \".big/prompts\"\n",
            keys.join(", ")
        ),
    );
    for i in 0..n {
        let extra = if i < changed { edit } else { "" };
        files.insert(
            format!("defaults/p{i:04}.md"),
            format!("---\ndescription: prompt {i}\n---\nYou are assistant {i}.{extra} Answer in one paragraph, citing sources.\n"),
        );
        files.insert(
            format!("defaults/p{i:04}.ja.md"),
            format!("あなたはアシスタント{i}です。{extra}\n"),
        );
    }
    files
}

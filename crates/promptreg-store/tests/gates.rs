//! Gated moves run their tests outside any transaction, and commit only
//! the state they tested: on SQLite and on PostgreSQL alike.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{databases, gated_demo, writer};
use promptreg_store::{Error, ErrorKind, Label, Store, TestTurns, Turn};
use tokio::sync::{Notify, Semaphore};

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

/// Turns that wait to be let through: a test run is held at its start, so
/// the test can act while a gate's tests "run".
struct Turnstile {
    entered: AtomicUsize,
    entering: Notify,
    through: Semaphore,
}

impl Turnstile {
    fn closed() -> Arc<Turnstile> {
        Arc::new(Turnstile {
            entered: AtomicUsize::new(0),
            entering: Notify::new(),
            through: Semaphore::new(0),
        })
    }

    /// Waits until `n` runs have asked for a turn.
    async fn wait_for(&self, n: usize) {
        loop {
            let entering = self.entering.notified();
            if self.entered.load(Ordering::SeqCst) >= n {
                return;
            }
            entering.await;
        }
    }
}

impl TestTurns for Turnstile {
    fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, Error>> + Send + '_>> {
        Box::pin(async move {
            self.entered.fetch_add(1, Ordering::SeqCst);
            self.entering.notify_waiters();
            self.through.acquire().await.unwrap().forget();
            Ok(Box::new(()) as Turn)
        })
    }
}

/// A release of `latest` to `production` on a task of its own, once its
/// tests are in `turns`' hold.
async fn gated_release_held(
    store: &Store,
    turns: &Turnstile,
) -> tokio::task::JoinHandle<Result<(), Error>> {
    let gated = tokio::spawn({
        let store = store.clone();
        async move { release_latest(&store, &label("production")).await }
    });
    turns.wait_for(1).await;
    gated
}

async fn release_latest(store: &Store, to: &Label) -> Result<(), Error> {
    store
        .release("demo", &Label::latest(), to, None, &writer(), "")
        .await
        .map(|_| ())
}

/// While a gate's tests run, other writes to the same pack go through:
/// no test run holds the store's lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gates_tests_hold_no_lock_while_they_run() {
    for db in databases("gate_holds_no_lock").await {
        let turns = Turnstile::closed();
        let store = db.open().await.with_test_turns(turns.clone());
        store.push(&gated_demo(), &writer(), "first").await.unwrap();
        let gated = gated_release_held(&store, &turns).await;
        // Another label's release and a new version, while the tests run.
        release_latest(&store, &label("staging")).await.unwrap();
        let mut edited = gated_demo();
        edited.insert("defaults/farewell.md", "Goodbye for now.\n");
        store.push(&edited, &writer(), "edit").await.unwrap();
        assert!(!gated.is_finished(), "{}", db.name);
        turns.through.add_permits(10);
        // The edit changed the state `production` would reach: tested
        // again, then committed.
        gated.await.unwrap().unwrap();
        assert_eq!(turns.entered.load(Ordering::SeqCst), 2, "{}", db.name);
        let production = &store.revisions("demo", &label("production")).await.unwrap()[0];
        let latest = &store.revisions("demo", &Label::latest()).await.unwrap()[0];
        assert_eq!(production.digest, latest.digest, "{}", db.name);
        assert_eq!(production.tests.as_deref(), Some("1 of 1 cases passed"));
    }
}

/// A state that changed while its tests ran is tested again, and a failing
/// new state is refused: what is committed is always what was tested.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_that_changed_under_its_tests_is_tested_again() {
    for db in databases("gate_tests_again").await {
        let turns = Turnstile::closed();
        let store = db.open().await.with_test_turns(turns.clone());
        store.push(&gated_demo(), &writer(), "first").await.unwrap();
        let gated = gated_release_held(&store, &turns).await;
        let mut broken = gated_demo();
        broken.insert("defaults/greeting.md", "Good day.\n");
        store.push(&broken, &writer(), "breaks it").await.unwrap();
        turns.through.add_permits(10);
        let err = gated.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TestsFailed, "{}: {err}", db.name);
        assert_eq!(turns.entered.load(Ordering::SeqCst), 2, "{}", db.name);
        let never = store.revisions("demo", &label("production")).await;
        assert_eq!(never.unwrap_err().kind(), ErrorKind::UnknownVersion);
    }
}

/// Turns that push a new version each time a run starts: the candidate
/// never holds still.
struct Churn {
    store: Store,
    runs: AtomicUsize,
}

impl TestTurns for Churn {
    fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, Error>> + Send + '_>> {
        Box::pin(async move {
            let run = self.runs.fetch_add(1, Ordering::SeqCst);
            let mut files = gated_demo();
            files.insert("defaults/farewell.md", format!("Goodbye, take {run}.\n"));
            self.store.push(&files, &writer(), "churn").await?;
            Ok(Box::new(()) as Turn)
        })
    }
}

/// A candidate that changes under every test run is refused after a
/// bounded number of runs, naming the change that won.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_candidate_that_never_holds_still_is_refused_naming_the_winner() {
    for db in databases("gate_churn").await {
        let plain = db.open().await;
        plain.push(&gated_demo(), &writer(), "first").await.unwrap();
        let churn = Arc::new(Churn {
            store: plain.clone(),
            runs: AtomicUsize::new(0),
        });
        let store = plain.with_test_turns(churn.clone());
        let err = release_latest(&store, &label("production"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Conflict, "{}: {err}", db.name);
        let text = err.to_string();
        assert!(
            text.contains(
                "the state label `production` would move to changed while its tests ran, 3 times"
            ),
            "{text}"
        );
        assert!(text.contains("revision 4 of `latest`"), "{text}");
        assert_eq!(churn.runs.load(Ordering::SeqCst), 3);
        let never = store.revisions("demo", &label("production")).await;
        assert_eq!(never.unwrap_err().kind(), ErrorKind::UnknownVersion);
    }
}

/// A host that refuses a turn (busy) refuses the gated move with its
/// reason, moving nothing.
#[tokio::test]
async fn a_refused_turn_refuses_the_move() {
    struct Busy;
    impl TestTurns for Busy {
        fn turn(&self) -> Pin<Box<dyn Future<Output = Result<Turn, Error>> + Send + '_>> {
            Box::pin(async { Err(Error::new(ErrorKind::Unavailable, "the host is busy")) })
        }
    }
    for db in databases("gate_busy").await {
        let store = db.open().await.with_test_turns(Arc::new(Busy));
        store.push(&gated_demo(), &writer(), "first").await.unwrap();
        let err = release_latest(&store, &label("production"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("the host is busy"), "{err}");
        let never = store.revisions("demo", &label("production")).await;
        assert_eq!(never.unwrap_err().kind(), ErrorKind::UnknownVersion);
        // An ungated label never asks for a turn.
        release_latest(&store, &label("staging")).await.unwrap();
    }
}

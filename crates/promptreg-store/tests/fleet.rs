//! The fleet view: what instances report they serve, on SQLite and
//! PostgreSQL alike.

mod common;

use std::time::Duration;

use common::{databases, demo, postgres_only, writer};
use promptreg_store::{
    ErrorKind, FleetQuery, InstanceReport, KEPT_FOR, Label, Served, Store, Timestamp,
};

fn production() -> Label {
    Label::new("production").unwrap()
}

fn report(instance: &str, revision: Option<u64>) -> InstanceReport {
    InstanceReport {
        instance: instance.into(),
        name: None,
        library: "promptreg-rust/test".into(),
        source: Served::Server,
        revision,
        digest: None,
        last_error: None,
        interval: Duration::from_secs(10),
        split: None,
    }
}

/// Judged at `at`, every instance on one page.
fn at(at: i64) -> FleetQuery {
    FleetQuery {
        at: Timestamp(at),
        after: None,
        limit: 1000,
        behind: None,
    }
}

/// A pack released to production twice: revisions 1 and 2.
async fn released_twice(store: &Store) {
    store.push(&demo(), &writer(), "").await.unwrap();
    let (latest, production) = (Label::latest(), production());
    store
        .release("demo", &latest, &production, None, &writer(), "one")
        .await
        .unwrap();
    let mut edited = demo();
    edited.insert("defaults/greeting.md", "Hi {{ name }}!\n");
    store.push(&edited, &writer(), "hi").await.unwrap();
    store
        .release("demo", &latest, &production, None, &writer(), "two")
        .await
        .unwrap();
}

/// Instances on two revisions, one silent past three intervals: the view
/// counts each revision's online instances, shows the silent one offline
/// for a day, then drops it.
#[tokio::test]
async fn the_view_counts_revisions_served_and_ages_instances_out() {
    for db in databases("the_view_counts_revisions_served_and_ages_instances_out").await {
        let store = db.open().await;
        released_twice(&store).await;
        let t0 = 1_000_000_000;
        let report_at = |instance: &'static str, revision, t: i64| {
            let store = store.clone();
            async move {
                let mut sent = report(instance, revision);
                sent.name = Some(format!("<b>{instance}</b>"));
                store
                    .report_instance("demo", &production(), &sent, "key:ci", Timestamp(t))
                    .await
                    .unwrap()
            }
        };
        report_at("a", Some(2), t0).await;
        report_at("b", Some(2), t0).await;
        report_at("c", Some(1), t0).await;
        report_at("gone", Some(1), t0 - 31_000).await;

        let fleet = store.fleet("demo", &production(), &at(t0)).await.unwrap();
        assert_eq!(
            (fleet.revision, fleet.instances_total),
            (Some(2), 4),
            "{}",
            db.name
        );
        assert_eq!((fleet.online, fleet.offline, fleet.reporting), (3, 1, 3));
        assert_eq!(
            fleet.summary(),
            "production: revision 2 live on 2 of 4 instances; 1 on revision 1; 1 offline"
        );
        assert!(!fleet.converged(2, 1.0));
        assert!(fleet.converged(2, 0.6));
        let gone = fleet
            .instances
            .iter()
            .find(|i| i.instance == "gone")
            .unwrap();
        assert!(!gone.online);
        assert_eq!(gone.name.as_deref(), Some("<b>gone</b>"), "kept as sent");
        assert_eq!(gone.reporter, "key:ci");

        // Only the ones a wait for revision 2 waits for.
        let behind = FleetQuery {
            behind: Some(2),
            ..at(t0)
        };
        let waiting = store.fleet("demo", &production(), &behind).await.unwrap();
        let ids: Vec<&str> = waiting
            .instances
            .iter()
            .map(|i| i.instance.as_str())
            .collect();
        assert_eq!(ids, ["c"]);

        // `c` catches up: converged; its first sighting stays.
        report_at("c", Some(2), t0 + 1000).await;
        let fleet = store
            .fleet("demo", &production(), &at(t0 + 1000))
            .await
            .unwrap();
        assert!(fleet.converged(2, 1.0));
        let c = fleet.instances.iter().find(|i| i.instance == "c").unwrap();
        assert_eq!(
            (c.first_seen, c.last_seen),
            (Timestamp(t0), Timestamp(t0 + 1000))
        );

        // A day later `gone` is no longer in the view, nor in the table
        // once a report prunes it.
        let later = t0 - 31_000 + KEPT_FOR.as_millis() as i64 + 1;
        let fleet = store
            .fleet("demo", &production(), &at(later))
            .await
            .unwrap();
        assert_eq!(fleet.instances_total, 3);
        assert!(fleet.instances.iter().all(|i| i.instance != "gone"));
        assert_eq!(fleet.offline, 3, "the rest are offline by then");
        drop(store);
    }
}

/// 10,000 instances page through the view 1,000 at a time, counted
/// right; past its capacity a label refuses new instances, not known
/// ones.
#[tokio::test]
async fn ten_thousand_instances_page_and_a_full_label_refuses_new_ones() {
    for db in databases("ten_thousand_instances_page_and_a_full_label_refuses_new_ones").await {
        let store = db.open().await.with_fleet_capacity(10_000);
        released_twice(&store).await;
        let t0 = 2_000_000_000;
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..8 {
            let store = store.clone();
            tasks.spawn(async move {
                for n in (worker..10_000).step_by(8) {
                    let sent = report(&format!("i{n:05}"), Some(1 + (n % 10 == 0) as u64));
                    store
                        .report_instance("demo", &production(), &sent, "key:ci", Timestamp(t0))
                        .await
                        .unwrap();
                }
            });
        }
        tasks.join_all().await;

        let mut seen = 0;
        let mut query = at(t0);
        loop {
            let page = store.fleet("demo", &production(), &query).await.unwrap();
            assert_eq!(page.instances_total, 10_000, "{}", db.name);
            assert_eq!(page.reporting_on(2), 1000);
            seen += page.instances.len();
            match page.next {
                Some(next) => query.after = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, 10_000);

        let refused = store
            .report_instance(
                "demo",
                &production(),
                &report("new", None),
                "key:ci",
                Timestamp(t0),
            )
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::TooManyInstances);
        assert!(
            refused.to_string().contains("holds 10000 instances"),
            "{refused}"
        );
        store
            .report_instance(
                "demo",
                &production(),
                &report("i00001", Some(2)),
                "key:ci",
                Timestamp(t0),
            )
            .await
            .expect("a known instance still reports");
    }
}

/// Two stores on one PostgreSQL (two servers) share one view: an instance
/// may report to either.
#[tokio::test]
async fn two_stores_on_one_postgres_share_the_view() {
    let Some(db) = postgres_only("two_stores_on_one_postgres_share_the_view").await else {
        return;
    };
    let (one, two) = (db.open().await, db.open().await);
    released_twice(&one).await;
    let now = Timestamp::now().0;
    one.report_instance(
        "demo",
        &production(),
        &report("a", Some(1)),
        "key:ci",
        Timestamp(now),
    )
    .await
    .unwrap();
    two.report_instance(
        "demo",
        &production(),
        &report("a", Some(2)),
        "key:ci",
        Timestamp(now + 1),
    )
    .await
    .unwrap();
    two.report_instance(
        "demo",
        &production(),
        &report("b", Some(2)),
        "key:ci",
        Timestamp(now + 1),
    )
    .await
    .unwrap();
    for store in [&one, &two] {
        let fleet = store
            .fleet("demo", &production(), &at(now + 2))
            .await
            .unwrap();
        assert_eq!((fleet.instances_total, fleet.reporting_on(2)), (2, 2));
    }
}

/// A report for a pack the store does not hold is refused, naming it.
#[tokio::test]
async fn a_report_for_an_unknown_pack_is_refused() {
    for db in databases("a_report_for_an_unknown_pack_is_refused").await {
        let store = db.open().await;
        let refused = store
            .report_instance(
                "nope",
                &production(),
                &report("a", None),
                "key:ci",
                Timestamp::now(),
            )
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::UnknownPack, "{}", db.name);
    }
}

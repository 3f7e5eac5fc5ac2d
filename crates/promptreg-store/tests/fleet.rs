//! The fleet view: what instances report they serve, on SQLite and
//! PostgreSQL alike.

mod common;

use std::time::Duration;

use common::{databases, demo, postgres_only, writer};
use promptreg_store::{
    ErrorKind, FleetLimits, FleetQuery, InstanceReport, KEPT_FOR, Label, Served, Store, Timestamp,
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

/// Every instance of `label`, judged at `t`, as (id, revision, reporter).
async fn kept(store: &Store, label: &Label, t: i64) -> Vec<(String, Option<u64>, String)> {
    let fleet = store.fleet("demo", label, &at(t)).await.unwrap();
    fleet
        .instances
        .into_iter()
        .map(|i| (i.instance, i.revision, i.reporter))
        .collect()
}

/// A report to a label nothing ever moved, or of a revision its label
/// never had, is refused naming them and records nothing: a fleet cannot
/// be made to claim a release no instance serves, nor to grow labels.
#[tokio::test]
async fn reports_of_labels_and_revisions_that_do_not_exist_are_refused() {
    for db in databases("reports_of_labels_and_revisions_that_do_not_exist_are_refused").await {
        let store = db.open().await;
        released_twice(&store).await;
        let t0 = 3_000_000_000;
        let nope = Label::new("nope").unwrap();
        let refused = store
            .report_instance("demo", &nope, &report("a", None), "key:ci", Timestamp(t0))
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::UnknownLabel, "{}", db.name);
        assert!(
            refused
                .to_string()
                .contains("pack `demo` has no label `nope`"),
            "{refused}"
        );
        for revision in [3, 999, i64::MAX as u64] {
            let refused = store
                .report_instance(
                    "demo",
                    &production(),
                    &report("a", Some(revision)),
                    "key:ci",
                    Timestamp(t0),
                )
                .await
                .unwrap_err();
            assert_eq!(refused.kind(), ErrorKind::UnknownRevision, "{}", db.name);
            assert!(
                refused.to_string().contains(&format!(
                    "label `production` of pack `demo` has no revision {revision}: its newest is 2"
                )),
                "{refused}"
            );
        }
        assert!(kept(&store, &nope, t0).await.is_empty());
        assert!(kept(&store, &production(), t0).await.is_empty());

        // In one batch, the good report is recorded and the others refused.
        let lying = report("b", Some(999));
        let honest = report("c", Some(2));
        let batch = [
            promptreg_store::ReportOf {
                pack: "demo",
                label: &production(),
                report: &lying,
                reporter: "key:ci",
            },
            promptreg_store::ReportOf {
                pack: "demo",
                label: &production(),
                report: &honest,
                reporter: "key:ci",
            },
        ];
        let outcomes = store.report_instances(&batch, Timestamp(t0)).await.unwrap();
        assert_eq!(
            outcomes[0].as_ref().unwrap_err().kind(),
            ErrorKind::UnknownRevision
        );
        assert!(outcomes[1].is_ok());
        assert_eq!(
            kept(&store, &production(), t0).await,
            [("c".to_owned(), Some(2), "key:ci".to_owned())]
        );
    }
}

/// Instances are bounded per key and per pack, not only per label: one
/// key cannot fill the store through many labels, and a full key or pack
/// refuses new instances only, naming the bound.
#[tokio::test]
async fn instances_are_bounded_per_key_and_per_pack() {
    for db in databases("instances_are_bounded_per_key_and_per_pack").await {
        let limits = FleetLimits {
            per_label: 10,
            per_pack: 15,
            per_key: 8,
        };
        let store = db.open().await.with_fleet_limits(limits);
        released_twice(&store).await;
        let latest = Label::latest();
        let t0 = 4_000_000_000;
        let send = |label: &Label, instance: String, key: &'static str| {
            let (store, label) = (store.clone(), label.clone());
            async move {
                store
                    .report_instance("demo", &label, &report(&instance, None), key, Timestamp(t0))
                    .await
            }
        };
        // One key: 8 instances over two labels, then no more.
        for n in 0..8 {
            let label = if n % 2 == 0 {
                production()
            } else {
                latest.clone()
            };
            send(&label, format!("a{n}"), "key:a").await.unwrap();
        }
        let refused = send(&production(), "a8".into(), "key:a").await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::TooManyInstances, "{}", db.name);
        assert!(
            refused
                .to_string()
                .contains("`key:a` reports 8 instances, its most: instance `a8`"),
            "{refused}"
        );
        // A known instance of the full key still reports.
        send(&production(), "a0".into(), "key:a").await.unwrap();

        // Other keys fill the pack: 15 in all, then no more on any label.
        for n in 0..7 {
            let label = if n < 6 { production() } else { latest.clone() };
            send(&label, format!("b{n}"), "key:b").await.unwrap();
        }
        let refused = send(&latest, "c0".into(), "key:c").await.unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::TooManyInstances);
        assert!(
            refused
                .to_string()
                .contains("pack `demo` holds 15 instances, its most: instance `c0`"),
            "{refused}"
        );
        let total = |label: Label| {
            let store = store.clone();
            async move {
                store
                    .fleet("demo", &label, &at(t0))
                    .await
                    .unwrap()
                    .instances_total
            }
        };
        assert_eq!(
            (total(production()).await, total(latest.clone()).await),
            (10, 5)
        );
    }
}

/// An instance id is the key's that first reported it: another key's
/// report for it is refused naming the owner, and changes nothing.
#[tokio::test]
async fn an_instance_belongs_to_the_key_that_first_reported_it() {
    for db in databases("an_instance_belongs_to_the_key_that_first_reported_it").await {
        let store = db.open().await;
        released_twice(&store).await;
        let t0 = 5_000_000_000;
        store
            .report_instance(
                "demo",
                &production(),
                &report("web-1", Some(1)),
                "key:a",
                Timestamp(t0),
            )
            .await
            .unwrap();
        let refused = store
            .report_instance(
                "demo",
                &production(),
                &report("web-1", Some(2)),
                "key:b",
                Timestamp(t0 + 1),
            )
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::InstanceTaken, "{}", db.name);
        assert!(
            refused
                .to_string()
                .contains("instance `web-1` of label `production` is reported by `key:a`"),
            "{refused}"
        );
        assert_eq!(
            kept(&store, &production(), t0 + 1).await,
            [("web-1".to_owned(), Some(1), "key:a".to_owned())]
        );
        store
            .report_instance(
                "demo",
                &production(),
                &report("web-1", Some(2)),
                "key:a",
                Timestamp(t0 + 2),
            )
            .await
            .expect("its own key still reports it");
        assert_eq!(kept(&store, &production(), t0 + 2).await[0].1, Some(2));
    }
}

/// Rows kept from before reports were checked may name a revision the
/// label never had: a wait counts them as behind, never as live.
#[tokio::test]
async fn convergence_counts_only_revisions_the_label_has() {
    for db in databases("convergence_counts_only_revisions_the_label_has").await {
        let store = db.open().await;
        released_twice(&store).await;
        let t0 = 6_000_000_000;
        store
            .report_instance(
                "demo",
                &production(),
                &report("honest", Some(1)),
                "key:a",
                Timestamp(t0),
            )
            .await
            .unwrap();
        db.tamper(&format!(
            "INSERT INTO fleet_instances (pack_id, label, instance, library, source, revision, \
             interval_ms, reporter, first_seen, last_seen) \
             SELECT pack_id, 'production', 'liar', 'x/1', 'server', 999, 10000, 'key:b', {t0}, {t0} \
             FROM packs WHERE name = 'demo'"
        ))
        .await;
        let fleet = store.fleet("demo", &production(), &at(t0)).await.unwrap();
        assert_eq!(fleet.reporting, 2, "{}", db.name);
        assert_eq!(fleet.reporting_on(2), 0);
        assert!(!fleet.converged(2, 0.5));
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
        assert_eq!(ids, ["honest", "liar"]);
    }
}

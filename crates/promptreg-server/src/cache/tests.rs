//! The cache's bounds and what drops an entry.

use promptreg_store::{Actor, PackFiles, Permission};
use tokio::sync::watch;

use super::*;

const MANIFEST: &str = "keys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n";

async fn store_with_packs(dir: &std::path::Path, names: &[&str]) -> Store {
    let store = Store::open(dir.join("cache.db").to_str().unwrap())
        .await
        .unwrap();
    for name in names {
        let mut files = PackFiles::default();
        files.insert("promptreg.toml", format!("name = \"{name}\"\n{MANIFEST}"));
        files.insert("defaults/greeting.md", "Hello.");
        store.push(&files, &writer(), "first").await.unwrap();
    }
    store
}

fn writer() -> Actor {
    Actor::new("ada", [Permission::Write])
}

fn label(name: &str) -> Label {
    Label::new(name).unwrap()
}

fn cache(store: Store, packs: usize, labels: usize) -> (Cache, watch::Sender<bool>) {
    let (stop, shutdown) = watch::channel(false);
    let heavy = Arc::new(HeavyWork::new(1, 1, shutdown));
    (Cache::bounded(store, heavy, packs, labels), stop)
}

#[tokio::test]
async fn requests_for_unknown_packs_and_labels_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_packs(dir.path(), &["demo"]).await;
    let (cache, _stop) = cache(store, MAX_PACKS, MAX_LABELS);
    for n in 0..300 {
        let pack = format!("nope-{n}");
        assert!(cache.label(&pack, &Label::latest()).await.is_err());
        assert!(cache.listing(&pack).await.is_err());
        assert!(cache.label("demo", &label(&format!("l{n}"))).await.is_err());
    }
    assert_eq!(cache.held(), (0, 0));
    cache.listing("demo").await.unwrap();
    // The listing read `latest` of the pack, which the store confirmed.
    assert_eq!(cache.held(), (1, 1));
}

#[tokio::test]
async fn known_labels_and_packs_are_bounded_the_least_recently_used_going_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_packs(dir.path(), &["demo", "one", "two"]).await;
    let names = ["a", "b", "c", "d", "e"];
    for name in names {
        for id in [PACK_ENTRY, "greeting"] {
            store
                .move_label("demo", id, &label(name), 1, None, &writer(), "test")
                .await
                .unwrap();
        }
    }
    let (cache, _stop) = cache(store, 2, 3);
    let a = cache.label("demo", &label("a")).await.unwrap();
    for name in names {
        cache.label("demo", &label(name)).await.unwrap();
        // `a` is read between the others: it stays.
        cache.label("demo", &label("a")).await.unwrap();
    }
    assert_eq!(cache.held(), (1, 3));
    let again = cache.label("demo", &label("a")).await.unwrap();
    assert!(Arc::ptr_eq(&a, &again), "`a`, used most, was kept");
    for pack in ["one", "two", "demo", "one"] {
        cache.listing(pack).await.unwrap();
    }
    assert_eq!(cache.held().0, 2);
}

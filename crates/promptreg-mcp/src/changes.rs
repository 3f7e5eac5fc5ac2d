//! Telling a client that what it sees changed: one loop over the
//! catalog's ticks, for a session's notifications and a subscription's.

use std::future::Future;
use std::time::Duration;

use crate::catalog::{Catalog, Served, SessionScope};

/// How long a notification may wait for a session that does not read:
/// past it, that notification is dropped (the next change sends another).
const NOTIFY_WITHIN: Duration = Duration::from_secs(5);

/// Follows `catalog`'s changes for `caller` in `scope` and calls `notify` each time
/// what it sees changes, until `ended` resolves or `notify` fails: for a
/// session's notifications, and for a subscription's. A notification the
/// client does not take within [`NOTIFY_WITHIN`] is dropped; the next
/// change sends another.
pub(crate) async fn announce_changes<C, F, Sent>(
    catalog: &C,
    (caller, scope): (&C::Caller, &SessionScope),
    ended: impl Future<Output = ()>,
    notify: F,
) where
    C: Catalog,
    F: Fn() -> Sent,
    Sent: Future<Output = Result<(), ()>>,
{
    let mut changes = catalog.changes();
    let state = async || {
        let served = catalog.served(caller, scope, None).await.ok()?;
        Some(fingerprint(&served))
    };
    let mut seen = state().await;
    tokio::pin!(ended);
    loop {
        tokio::select! {
            _ = &mut ended => break,
            changed = changes.changed() => if changed.is_err() { break },
        }
        let now = state().await;
        if now.is_none() || now == seen {
            continue;
        }
        seen = now;
        match tokio::time::timeout(NOTIFY_WITHIN, notify()).await {
            Ok(Ok(())) => {}
            Ok(Err(())) => break,
            Err(_) => tracing::debug!("an MCP client does not read: a list_changed dropped"),
        }
    }
}

/// What changes whenever what a session sees does.
fn fingerprint(served: &[Served]) -> Vec<(Option<String>, String)> {
    served
        .iter()
        .map(|s| (s.prefix.clone(), s.state.clone()))
        .collect()
}

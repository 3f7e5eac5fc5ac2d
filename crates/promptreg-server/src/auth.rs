//! Who is calling: an API key (`Authorization: Bearer prk_…`), or, on a
//! loopback server whose store has no key yet, the local user.
//!
//! Checking a key reads the store; a key checked is trusted for
//! [`Config::key_cache`](crate::Config::key_cache) (a revocation takes
//! effect within that time), so reads stay in memory. While the store
//! cannot be reached, a key checked within
//! [`Config::key_grace`](crate::Config::key_grace) stays good and no
//! request waits for the store: a background probe finds it again.
//!
//! A store that has ever had a key is keyed for good: revoking its last
//! key does not open a loopback server to callers without one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use promptreg_store::{Actor, ApiKey, ErrorKind, Permission, Permit, Scope, Store};
use sha2::{Digest, Sha256};

use crate::cache::hex;
use crate::problem::{Problem, ProblemCode};
use crate::state::AppState;

/// The name recorded for writes made without a key on a loopback server
/// whose store has no keys.
pub(crate) const LOCAL_USER: &str = "local";

/// The caller of a request.
#[derive(Debug, Clone)]
pub(crate) enum Caller {
    /// A valid, unrevoked key.
    Key(ApiKey),
    /// No key, on a loopback server whose store has none: may read and
    /// write, not administer (protected labels need an admin key).
    Local,
}

impl Caller {
    /// Refuses (403) a caller whose key does not reach `pack` with `needed`.
    pub(crate) fn require(&self, pack: &str, needed: Scope) -> Result<(), Problem> {
        #[cfg(test)]
        tests::count_check();
        match self {
            Caller::Local if needed < Scope::Admin => Ok(()),
            Caller::Key(key) if key.allows(pack, needed) => Ok(()),
            Caller::Local => Err(Problem::new(
                StatusCode::FORBIDDEN,
                ProblemCode::InsufficientScope,
                "this needs an API key with the admin scope: create one with `promptreg keys create --scope admin`",
            )),
            Caller::Key(key) => Err(Problem::new(
                StatusCode::FORBIDDEN,
                ProblemCode::InsufficientScope,
                format!(
                    "API key `{}` does not allow {} on pack `{pack}`: it has the {} scope{}",
                    key.name,
                    scope_name(needed),
                    scope_name(key.scope),
                    key.pack
                        .as_ref()
                        .map(|p| format!(" on pack `{p}` only"))
                        .unwrap_or_default(),
                ),
            )),
        }
    }

    /// Refuses (403) a caller that is not an admin of every pack: what
    /// the whole store shares (webhooks) is theirs to change.
    pub(crate) fn require_store_admin(&self, what: &str) -> Result<(), Problem> {
        match self {
            Caller::Key(key)
                if key.pack.is_none() && key.scope == Scope::Admin && key.revoked_at.is_none() =>
            {
                Ok(())
            }
            _ => Err(Problem::new(
                StatusCode::FORBIDDEN,
                ProblemCode::InsufficientScope,
                format!(
                    "{what} needs an API key with the admin scope on every pack{}: create one with `promptreg keys create NAME --scope admin --admin`",
                    match self {
                        Caller::Key(key) => format!(" (`{}` is not one)", key.name),
                        Caller::Local => String::new(),
                    }
                ),
            )),
        }
    }

    /// The request's one check of the write scope on `pack`: the permit
    /// a write to the store takes, which the store does not check again
    /// (403 as [`require`](Self::require) says).
    pub(crate) fn permit(&self, pack: &str) -> Result<Permit, Problem> {
        self.require(pack, Scope::Write)?;
        Ok(Permit::vouched(self.actor()))
    }

    /// Who writes, as the store records it, with what it may do.
    pub(crate) fn actor(&self) -> Actor {
        match self {
            Caller::Key(key) => key.actor(),
            Caller::Local => Actor::new(LOCAL_USER, [Permission::Write]),
        }
    }

    /// The name shown for who is signed in: the key's, or `local`.
    pub(crate) fn name(&self) -> &str {
        match self {
            Caller::Key(key) => &key.name,
            Caller::Local => LOCAL_USER,
        }
    }

    /// Whether the caller may read `pack`.
    pub(crate) fn may_read(&self, pack: &str) -> bool {
        self.require(pack, Scope::Read).is_ok()
    }

    /// Whether the caller may write to `pack`.
    pub(crate) fn may_write(&self, pack: &str) -> bool {
        self.require(pack, Scope::Write).is_ok()
    }

    /// A key for one pack sees that pack only.
    pub(crate) fn pack_filter(&self) -> Option<String> {
        match self {
            Caller::Key(key) => key.pack.clone(),
            Caller::Local => None,
        }
    }
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Read => "read",
        Scope::Write => "write",
        _ => "admin",
    }
}

/// How often the store is probed while it cannot be reached.
const PROBE: Duration = Duration::from_millis(500);

/// What the server tells a key it refuses: never which key it was.
const NOT_VALID: &str = "this API key is not valid: it is unknown or was revoked. Ask an admin for a key (`promptreg keys create`)";

/// Keys checked recently, by the SHA-256 of their secret; whether the
/// store has ever had a key; whether the store can be reached.
pub(crate) struct Auth {
    ttl: Duration,
    grace: Duration,
    loopback: bool,
    keys: Mutex<HashMap<String, (ApiKey, Instant)>>,
    /// Whether the store has had a key, and when that was read: once it
    /// has, it stays keyed, even when every key is revoked.
    keyed: Mutex<Option<(bool, Instant)>>,
    /// Set while the store cannot be reached; a background probe clears it.
    unreachable: Arc<AtomicBool>,
}

impl Auth {
    pub(crate) fn new(ttl: Duration, grace: Duration, loopback: bool) -> Auth {
        Auth {
            ttl,
            grace,
            loopback,
            keys: Mutex::default(),
            keyed: Mutex::default(),
            unreachable: Arc::default(),
        }
    }

    async fn caller(&self, store: &Store, parts: &Parts) -> Result<Caller, Problem> {
        let Some(value) = parts.headers.get(header::AUTHORIZATION) else {
            return self.anonymous(store).await?.ok_or_else(|| {
                unauthorized(
                    "this server needs an API key: send `Authorization: Bearer prk_…` (create one with `promptreg keys create`)",
                )
            });
        };
        let secret = bearer(value)
            .ok_or_else(|| unauthorized("the Authorization header must be `Bearer prk_…`"))?;
        self.key(store, secret).await
    }

    /// The caller without a key: the local user on a loopback server whose
    /// store has never had a key, else nobody (`None`).
    pub(crate) async fn anonymous(&self, store: &Store) -> Result<Option<Caller>, Problem> {
        if self.loopback && !self.keyed(store).await? {
            return Ok(Some(Caller::Local));
        }
        Ok(None)
    }

    /// The caller holding the key `secret`: 401 when it is unknown or
    /// revoked. While the store cannot be reached, a key checked less than
    /// the grace time ago stays good, and nothing waits for the store.
    pub(crate) async fn key(&self, store: &Store, secret: &str) -> Result<Caller, Problem> {
        let hash = hex(&Sha256::digest(secret.as_bytes()));
        let known = lock(&self.keys).get(&hash).cloned();
        let unreachable = self.unreachable.load(Ordering::Acquire);
        match &known {
            Some((key, at)) if at.elapsed() < self.ttl => return Ok(Caller::Key(key.clone())),
            Some((key, at)) if unreachable && at.elapsed() < self.ttl + self.grace => {
                return Ok(Caller::Key(key.clone()));
            }
            _ if unreachable => return Err(store_away()),
            _ => {}
        }
        let key = match store.authenticate(secret).await {
            Ok(key) => key,
            Err(e) if e.kind() == ErrorKind::Unavailable => {
                self.lost(store);
                return match known {
                    Some((key, at)) if at.elapsed() < self.ttl + self.grace => Ok(Caller::Key(key)),
                    _ => Err(Problem::from(e)),
                };
            }
            Err(e) => {
                let problem = Problem::from(e);
                if problem.details().status == 401 {
                    lock(&self.keys).remove(&hash);
                    return Err(unauthorized(NOT_VALID));
                }
                return Err(problem);
            }
        };
        let mut keys = lock(&self.keys);
        keys.retain(|_, (_, at)| at.elapsed() < self.ttl + self.grace);
        keys.insert(hash, (key.clone(), Instant::now()));
        Ok(Caller::Key(key))
    }

    async fn keyed(&self, store: &Store) -> Result<bool, Problem> {
        let known = *lock(&self.keyed);
        match known {
            Some((keyed, at)) if keyed || at.elapsed() < self.ttl => return Ok(keyed),
            Some((keyed, _)) if self.unreachable.load(Ordering::Acquire) => return Ok(keyed),
            None if self.unreachable.load(Ordering::Acquire) => return Err(store_away()),
            _ => {}
        }
        let keyed = match store.keys().await {
            // Revoked keys count: revoking the last key must not open the server.
            Ok(keys) => !keys.is_empty(),
            Err(e) if e.kind() == ErrorKind::Unavailable => {
                self.lost(store);
                return known.map(|(keyed, _)| keyed).ok_or_else(|| e.into());
            }
            Err(e) => return Err(e.into()),
        };
        *lock(&self.keyed) = Some((keyed, Instant::now()));
        Ok(keyed)
    }

    /// The store did not answer: probe it in the background until it does,
    /// so requests meanwhile do not wait for it one by one.
    fn lost(&self, store: &Store) {
        if self.unreachable.swap(true, Ordering::AcqRel) {
            return;
        }
        tracing::warn!("the store cannot be reached: serving remembered keys until it is back");
        let (store, unreachable) = (store.clone(), self.unreachable.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(PROBE).await;
                match store.keys().await {
                    Err(e) if e.kind() == ErrorKind::Unavailable => continue,
                    _ => break,
                }
            }
            tracing::info!("the store is reachable again");
            unreachable.store(false, Ordering::Release);
        });
    }
}

/// The secret of an `Authorization: Bearer …` header.
pub(crate) fn bearer(value: &HeaderValue) -> Option<&str> {
    value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

fn store_away() -> Problem {
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ProblemCode::StoreUnavailable,
        "the store cannot be reached, and this key was not checked recently enough to be trusted meanwhile: retry shortly",
    )
}

fn unauthorized(detail: &str) -> Problem {
    Problem::new(StatusCode::UNAUTHORIZED, ProblemCode::Unauthorized, detail)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, Problem> {
        state.auth.caller(&state.store, parts).await
    }
}

#[cfg(test)]
mod tests;

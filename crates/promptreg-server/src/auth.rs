//! Who is calling: an API key (`Authorization: Bearer prk_…`), or, on a
//! loopback server whose store has no key yet, the local user.
//!
//! Checking a key reads the store; a key checked is trusted for
//! [`Config::key_cache`](crate::Config::key_cache) (a revocation takes
//! effect within that time), so reads stay in memory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use promptreg_store::{Actor, ApiKey, ErrorKind, Permission, Scope, Store};
use sha2::{Digest, Sha256};

use crate::cache::hex;
use crate::problem::Problem;
use crate::serve::AppState;

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
        match self {
            Caller::Local if needed < Scope::Admin => Ok(()),
            Caller::Key(key) if key.allows(pack, needed) => Ok(()),
            Caller::Local => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "insufficient-scope",
                "this needs an API key with the admin scope: create one with `promptreg keys create --scope admin`",
            )),
            Caller::Key(key) => Err(Problem::new(
                StatusCode::FORBIDDEN,
                "insufficient-scope",
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

/// Keys checked recently, by the SHA-256 of their secret.
pub(crate) struct Auth {
    ttl: Duration,
    loopback: bool,
    keys: Mutex<HashMap<String, (ApiKey, Instant)>>,
    /// Whether the store has any key, and when that was read.
    any_key: Mutex<Option<(bool, Instant)>>,
}

impl Auth {
    pub(crate) fn new(ttl: Duration, loopback: bool) -> Auth {
        Auth {
            ttl,
            loopback,
            keys: Mutex::default(),
            any_key: Mutex::default(),
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
        let secret = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| unauthorized("the Authorization header must be `Bearer prk_…`"))?;
        self.key(store, secret).await
    }

    /// The caller without a key: the local user on a loopback server whose
    /// store has no key, else nobody (`None`).
    pub(crate) async fn anonymous(&self, store: &Store) -> Result<Option<Caller>, Problem> {
        if self.loopback && !self.store_has_keys(store).await? {
            return Ok(Some(Caller::Local));
        }
        Ok(None)
    }

    /// The caller holding the key `secret`: 401 when it is unknown or revoked.
    pub(crate) async fn key(&self, store: &Store, secret: &str) -> Result<Caller, Problem> {
        let hash = hex(&Sha256::digest(secret.as_bytes()));
        let known = lock(&self.keys).get(&hash).cloned();
        if let Some((key, at)) = &known
            && at.elapsed() < self.ttl
        {
            return Ok(Caller::Key(key.clone()));
        }
        let key = match (store.authenticate(secret).await, known) {
            (Ok(key), _) => key,
            // The store is away: a key it accepted before is still good.
            (Err(e), Some((key, _))) if e.kind() == ErrorKind::Unavailable => {
                return Ok(Caller::Key(key));
            }
            (Err(e), _) => {
                let problem = Problem::from(e);
                return Err(if problem.details().status == 401 {
                    unauthorized(&problem.details().detail)
                } else {
                    problem
                });
            }
        };
        let mut keys = lock(&self.keys);
        keys.retain(|_, (_, at)| at.elapsed() < self.ttl);
        keys.insert(hash, (key.clone(), Instant::now()));
        Ok(Caller::Key(key))
    }

    async fn store_has_keys(&self, store: &Store) -> Result<bool, Problem> {
        let known = *lock(&self.any_key);
        if let Some((any, at)) = known
            && (any || at.elapsed() < self.ttl)
        {
            return Ok(any);
        }
        let any = match store.keys().await {
            Ok(keys) => keys.iter().any(|k| k.revoked_at.is_none()),
            // The store is away: what it said last still holds.
            Err(e) if e.kind() == ErrorKind::Unavailable && known.is_some() => {
                return Ok(known.is_some_and(|(any, _)| any));
            }
            Err(e) => return Err(e.into()),
        };
        *lock(&self.any_key) = Some((any, Instant::now()));
        Ok(any)
    }
}

fn unauthorized(detail: &str) -> Problem {
    Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
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

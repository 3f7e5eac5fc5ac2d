//! API keys: a name, a scope, optionally one pack, and a secret of which
//! the store keeps only the SHA-256.
//!
//! A secret is `prk_` and 32 random bytes in hex. It is shown once, by
//! [`Store::create_key`]; [`Store::authenticate`] hashes what it is given
//! and looks the hash up, so the secret itself is never stored or compared.
//! Names follow the rule of labels and are never reused, even after a
//! revocation, so `key:NAME` in the history always means one key.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind};
use crate::model::{Actor, Permission, Timestamp, name_problem};
use crate::store::Store;

/// What a key may do. Ordered: `admin` implies `write`, which implies `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read prompts, labels, history and events.
    Read,
    /// Also push versions and move unprotected labels.
    Write,
    /// Also move protected labels and protect labels.
    Admin,
}

impl Scope {
    /// `read`, `write` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }
}

/// Honours width and alignment, for tables.
impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = Error;
    /// `read`, `write` or `admin`.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "read" => Ok(Scope::Read),
            "write" => Ok(Scope::Write),
            "admin" => Ok(Scope::Admin),
            _ => Err(Error::new(
                ErrorKind::InvalidKey,
                format!("invalid scope `{s}`: a key's scope is `read`, `write` or `admin`"),
            )),
        }
    }
}

/// An API key as the store records it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    /// The key's name, recorded as `key:NAME` for what it changes.
    pub name: String,
    /// The one pack it may use; `None`: every pack.
    pub pack: Option<String>,
    /// What it may do.
    pub scope: Scope,
    /// When it was created.
    pub created_at: Timestamp,
    /// Who created it.
    pub created_by: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<Timestamp>,
}

impl ApiKey {
    /// Whether the key may act on `pack` with `needed`: it is not revoked,
    /// it is for every pack or for this one, and its scope is at least
    /// `needed`.
    pub fn allows(&self, pack: &str, needed: Scope) -> bool {
        self.revoked_at.is_none()
            && self.pack.as_deref().is_none_or(|p| p == pack)
            && self.scope >= needed
    }

    /// The actor the key acts as: named `key:NAME` in versions and the
    /// history, so a key is never mistaken for a person, with the
    /// permissions of its scope. The pack restriction is not an actor's:
    /// check [`allows`](Self::allows) first.
    pub fn actor(&self) -> Actor {
        let permissions = match self.scope {
            Scope::Read => vec![],
            Scope::Write => vec![Permission::Write],
            Scope::Admin => vec![Permission::Admin],
        };
        Actor::new(format!("key:{}", self.name), permissions)
    }
}

/// A key as the database holds it: name, pack, scope, created_at,
/// created_by, revoked_at.
pub(crate) type KeyRow = (String, Option<String>, String, i64, String, Option<i64>);

fn key_of(row: KeyRow) -> Result<ApiKey, Error> {
    let (name, pack, scope, created_at, created_by, revoked_at) = row;
    let scope = scope.parse().map_err(|_| {
        Error::new(
            ErrorKind::Database,
            format!("API key `{name}` has the unknown scope `{scope}`: the keys table was changed by hand"),
        )
    })?;
    Ok(ApiKey {
        name,
        pack,
        scope,
        created_at: Timestamp(created_at),
        created_by,
        revoked_at: revoked_at.map(Timestamp),
    })
}

/// The prefix of every secret, so one is recognisable in a leak scan.
const SECRET_PREFIX: &str = "prk_";

/// A new secret: the prefix and 32 random bytes from the operating system.
fn new_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot make an API key: the system's random source failed ({e})"),
        )
    })?;
    Ok(SECRET_PREFIX.to_owned() + &hex(&bytes))
}

/// The SHA-256 of a secret, in hex: what the store keeps.
fn secret_digest(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_key_name(name: &str) -> Result<(), Error> {
    match name_problem(name) {
        None => Ok(()),
        Some(why) => Err(Error::new(
            ErrorKind::InvalidKey,
            format!(
                "invalid API key name `{name}`: {why}; a key's name is lowercase letters, digits and `-`, starting with a letter or digit (like `ci-deploy`)"
            ),
        )),
    }
}

impl Store {
    /// Creates the key `name` with `scope`, for `pack` only or (`None`)
    /// every pack. Returns it with its secret, which is not stored and
    /// cannot be shown again.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::InvalidKey`] for a name breaking the rule of labels;
    /// [`ErrorKind::UnknownPack`] for a pack the store does not hold;
    /// [`ErrorKind::Conflict`] when a key (even revoked) has the name.
    pub async fn create_key(
        &self,
        name: &str,
        pack: Option<&str>,
        scope: Scope,
        actor: &Actor,
    ) -> Result<(ApiKey, String), Error> {
        actor.require(Permission::Admin, "create API keys")?;
        check_key_name(name)?;
        if let Some(pack) = pack {
            self.pack(Some(pack)).await?;
        }
        let secret = new_secret()?;
        let row: KeyRow = (
            name.to_owned(),
            pack.map(str::to_owned),
            scope.as_str().to_owned(),
            Timestamp::now().0,
            actor.name.clone(),
            None,
        );
        on_backend!(self, insert_key(&row, &secret_digest(&secret)))?;
        Ok((key_of(row)?, secret))
    }

    /// Every API key, revoked ones included, by name.
    pub async fn keys(&self) -> Result<Vec<ApiKey>, Error> {
        on_backend!(self, keys())?.into_iter().map(key_of).collect()
    }

    /// Revokes the key `name`: it authenticates no more. Revoking a revoked
    /// key changes nothing and returns it as it is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Forbidden`] unless `actor` is an admin;
    /// [`ErrorKind::UnknownKey`] when no key has the name.
    pub async fn revoke_key(&self, name: &str, actor: &Actor) -> Result<ApiKey, Error> {
        actor.require(Permission::Admin, "revoke API keys")?;
        let row = on_backend!(self, revoke_key(name, Timestamp::now(), &actor.name))?;
        match row {
            Some(row) => key_of(row),
            None => Err(Error::new(
                ErrorKind::UnknownKey,
                format!("the store has no API key `{name}`: `promptreg keys list` lists them"),
            )),
        }
    }

    /// The key whose secret is `secret`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Unauthorized`] when no key has that secret;
    /// [`ErrorKind::KeyRevoked`] (naming the key) when its key was revoked.
    /// No message repeats the secret.
    pub async fn authenticate(&self, secret: &str) -> Result<ApiKey, Error> {
        let unknown = || {
            Error::new(
                ErrorKind::Unauthorized,
                "unknown API key: check the secret, or ask an admin for a key (`promptreg keys create`)",
            )
        };
        if !secret.starts_with(SECRET_PREFIX) {
            return Err(unknown());
        }
        let row = on_backend!(self, key_by_secret(&secret_digest(secret)))?;
        let key = key_of(row.ok_or_else(unknown)?)?;
        match key.revoked_at {
            None => Ok(key),
            Some(at) => Err(Error::new(
                ErrorKind::KeyRevoked,
                format!(
                    "API key `{}` was revoked at {at}: ask an admin for a new key",
                    key.name
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_ordered_and_read_back() {
        assert!(Scope::Read < Scope::Write && Scope::Write < Scope::Admin);
        for scope in [Scope::Read, Scope::Write, Scope::Admin] {
            assert_eq!(scope.to_string().parse::<Scope>().unwrap(), scope);
        }
        assert_eq!(format!("{:<5}|", Scope::Read), "read |");
        let err = "owner".parse::<Scope>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidKey);
        assert!(
            err.to_string().contains("`read`, `write` or `admin`"),
            "{err}"
        );
    }

    #[test]
    fn secrets_are_prefixed_random_and_hashed() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 4 + 64);
        assert!(a.starts_with("prk_"));
        assert_eq!(secret_digest(&a).len(), 64);
        assert!(!secret_digest(&a).contains(&a[4..]));
    }

    fn key(pack: Option<&str>, scope: Scope, revoked: bool) -> ApiKey {
        ApiKey {
            name: "ci".into(),
            pack: pack.map(Into::into),
            scope,
            created_at: Timestamp(0),
            created_by: "root".into(),
            revoked_at: revoked.then_some(Timestamp(1)),
        }
    }

    #[test]
    fn a_key_allows_its_scope_and_below_on_its_pack() {
        let write = key(Some("demo"), Scope::Write, false);
        assert!(write.allows("demo", Scope::Read));
        assert!(write.allows("demo", Scope::Write));
        assert!(!write.allows("demo", Scope::Admin));
        assert!(!write.allows("other", Scope::Read));
        assert!(key(None, Scope::Read, false).allows("any", Scope::Read));
        assert!(!key(None, Scope::Admin, true).allows("any", Scope::Read));
    }

    #[test]
    fn a_key_acts_under_its_name_with_its_scope() {
        let read = key(None, Scope::Read, false).actor();
        assert_eq!(read.name, "key:ci");
        assert!(!read.may(Permission::Write));
        let write = key(None, Scope::Write, false).actor();
        assert!(write.may(Permission::Write) && !write.may(Permission::Admin));
        let admin = key(None, Scope::Admin, false).actor();
        assert!(admin.may(Permission::Write) && admin.may(Permission::Admin));
    }
}

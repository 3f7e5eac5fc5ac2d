//! `promptreg keys …`: create, list and revoke the API keys of a store.
//!
//! `--pack NAME` names a pack of the store here (a key for that pack only),
//! not a pack folder.

use promptreg_store::{ApiKey, Scope, Store};
use serde_json::{Value, json};

use super::Output;
use super::store::{admin_user, block_on, failure};
use crate::cli::{KeysArgs, KeysCommand};
use crate::options::Session;
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session, args: &KeysArgs) -> Result<Output, Failure> {
    block_on(execute(session, args))
}

async fn execute(session: &Session, args: &KeysArgs) -> Result<Output, Failure> {
    let store = Store::open(&args.database).await.map_err(failure)?;
    let cmd = Command {
        session,
        args,
        store,
    };
    match &args.command {
        KeysCommand::Create { name, scope, pack } => cmd.create(name, scope, pack.as_deref()).await,
        KeysCommand::List { pack } => cmd.list(pack.as_deref()).await,
        KeysCommand::Revoke { name } => cmd.revoke(name).await,
    }
}

struct Command<'a> {
    session: &'a Session,
    args: &'a KeysArgs,
    store: Store,
}

impl Command<'_> {
    fn admin(&self, what: &str) -> Result<promptreg_store::Actor, Failure> {
        admin_user(self.args.admin, what)
    }

    async fn create(&self, name: &str, scope: &str, pack: Option<&str>) -> Result<Output, Failure> {
        let admin = self.admin("creating an API key")?;
        let scope: Scope = scope.parse().map_err(failure)?;
        let (key, secret) = self
            .store
            .create_key(name, pack, scope, &admin)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(
                &json!({ "key": key_json(&key), "secret": secret }),
            ));
        }
        let packs = key
            .pack
            .as_deref()
            .map_or("every pack".to_owned(), |p| format!("pack {p}"));
        Ok(Output::text(format!(
            "created API key `{}` ({} on {packs}) in {}; its secret:\n{secret}\nThe secret will not be shown again: keep it now, only its hash is stored.\n",
            key.name,
            key.scope,
            self.store.location(),
        )))
    }

    async fn list(&self, pack: Option<&str>) -> Result<Output, Failure> {
        let mut keys = self.store.keys().await.map_err(failure)?;
        if let Some(pack) = pack {
            keys.retain(|k| k.pack.as_deref().is_none_or(|p| p == pack));
        }
        if self.session.args.json {
            return Ok(Output::json(&Value::Array(
                keys.iter().map(key_json).collect(),
            )));
        }
        if keys.is_empty() {
            return Ok(Output::text(format!(
                "no API keys in {}: `promptreg keys create NAME --scope SCOPE --admin` makes one\n",
                self.store.location()
            )));
        }
        let paint = Paint {
            color: self.session.color,
        };
        let created = keys
            .iter()
            .map(|k| k.created_at.to_string().chars().count())
            .max()
            .unwrap_or_default();
        let header = format!(
            "{:<16} {:<5}  {:<12}  {:<created$}  BY",
            "NAME", "SCOPE", "PACK", "CREATED"
        );
        let mut out = paint.dim(&header) + "\n";
        out.extend(keys.iter().map(|k| key_line(k, &paint)));
        Ok(Output::text(out))
    }

    async fn revoke(&self, name: &str) -> Result<Output, Failure> {
        let admin = self.admin("revoking an API key")?;
        let key = self.store.revoke_key(name, &admin).await.map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&key_json(&key)));
        }
        let at = key.revoked_at.map(|t| t.to_string()).unwrap_or_default();
        Ok(Output::text(format!(
            "API key `{name}` is revoked (since {at})\n"
        )))
    }
}

/// name, scope, pack, created when and by whom, revoked.
fn key_line(key: &ApiKey, paint: &Paint) -> String {
    let revoked = key
        .revoked_at
        .map(|t| format!("  revoked {t}"))
        .unwrap_or_default();
    let line = format!(
        "{:<16} {:<5}  {:<12}  {}  {}{}",
        key.name,
        key.scope,
        key.pack.as_deref().unwrap_or("*"),
        paint.dim(&key.created_at.to_string()),
        key.created_by,
        revoked,
    );
    line.trim_end().to_owned() + "\n"
}

fn key_json(key: &ApiKey) -> Value {
    serde_json::to_value(key).unwrap_or_default()
}

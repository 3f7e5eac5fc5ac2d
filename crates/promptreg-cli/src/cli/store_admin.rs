//! The store's administration from the command line: its API keys and
//! its webhooks (`promptreg keys`, `promptreg webhooks`).

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// The store: a SQLite file, `sqlite:PATH` or `postgres://USER:PASSWORD@HOST/DB`
    #[arg(long, global = true, value_name = "URL", default_value = promptreg_store::DEFAULT_DATABASE)]
    pub database: String,
    /// Act as an admin: creating and revoking keys needs it
    #[arg(long, global = true)]
    pub admin: bool,
    #[command(subcommand)]
    pub command: KeysCommand,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key and print its secret, once (`--pack NAME`: for that pack of the store only)
    Create {
        /// The key's name, like `ci-deploy`, recorded as `key:NAME` for what it changes
        name: String,
        /// What it may do: read; write (push, move labels); admin (also protected labels)
        #[arg(long, value_name = "SCOPE", value_parser = ["read", "write", "admin"])]
        scope: String,
        /// The pack of the store it is for [default: every pack]
        #[arg(long, value_name = "NAME")]
        pack: Option<String>,
    },
    /// List the keys (never their secrets)
    List {
        /// Only the keys that work on this pack
        #[arg(long, value_name = "NAME")]
        pack: Option<String>,
    },
    /// Revoke a key: it is refused from now on
    Revoke {
        /// The key's name
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct WebhooksArgs {
    /// The store: a SQLite file, `sqlite:PATH` or `postgres://USER:PASSWORD@HOST/DB`
    #[arg(long, global = true, value_name = "URL", default_value = promptreg_store::DEFAULT_DATABASE)]
    pub database: String,
    /// Act as an admin: every change to webhooks needs it
    #[arg(long, global = true)]
    pub admin: bool,
    #[command(subcommand)]
    pub command: WebhooksCommand,
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Create a webhook and print its secret, once
    Create {
        /// Its name, like `team-chat`
        name: String,
        /// Where deliveries go: an http or https URL
        url: String,
        /// A pack it hears of (repeat for more) [default: every pack]
        #[arg(long = "pack", value_name = "NAME")]
        packs: Vec<String>,
        /// An event type it wants, like `label.released` (repeat for more) [default: every type]
        #[arg(long = "event", value_name = "TYPE")]
        events: Vec<String>,
        /// standard: signed JSON; slack: one line for a chat's incoming webhook
        #[arg(long, value_name = "FORMAT", default_value = "standard", value_parser = ["standard", "slack"])]
        format: String,
    },
    /// List the webhooks (never their secrets), and whether each is disabled
    List,
    /// Change a webhook's URL, packs, event types or format; its secret and log stay
    Update {
        /// Its name
        name: String,
        /// A new URL
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// A pack it hears of, instead of those it has (repeat for more)
        #[arg(long = "pack", value_name = "NAME", conflicts_with = "every_pack")]
        packs: Vec<String>,
        /// Hear of every pack
        #[arg(long)]
        every_pack: bool,
        /// An event type it wants, instead of those it has (repeat for more)
        #[arg(long = "event", value_name = "TYPE", conflicts_with = "every_event")]
        events: Vec<String>,
        /// Want every event type
        #[arg(long)]
        every_event: bool,
        /// standard: signed JSON; slack: one line for a chat's incoming webhook
        #[arg(long, value_name = "FORMAT", value_parser = ["standard", "slack"])]
        format: Option<String>,
    },
    /// Delete a webhook and its delivery log
    Delete {
        /// Its name
        name: String,
    },
    /// Give a webhook a new secret; the old one keeps signing for the overlap
    Rotate {
        /// Its name
        name: String,
        /// How long both secrets sign, like `1h` or `2d` (at most a week)
        #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = humantime::parse_duration)]
        overlap: std::time::Duration,
    },
    /// Enable a webhook disabled after a day of failed deliveries
    Enable {
        /// Its name
        name: String,
    },
    /// Send a `webhook.test` message now, from here, and show how it went
    Test {
        /// Its name
        name: String,
        /// Let it reach loopback, private and link-local addresses
        #[arg(long)]
        allow_private: bool,
    },
    /// Show a webhook's deliveries, newest first, with every attempt
    Log {
        /// Its name
        name: String,
        /// How many deliveries
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: usize,
    },
    /// Make a delivery due again (a running server sends it), or every failed one since a time
    Redeliver {
        /// Its name
        name: String,
        /// The delivery's number, from `webhooks log`
        #[arg(
            required_unless_present = "failed_since",
            conflicts_with = "failed_since"
        )]
        delivery: Option<u64>,
        /// Every failed delivery queued since this time: RFC 3339, or how long ago (`2h`)
        #[arg(long, value_name = "TIME")]
        failed_since: Option<String>,
    },
}

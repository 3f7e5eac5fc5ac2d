//! The command line: global options and one subcommand each.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use clap_complete::ArgValueCandidates;
use promptreg_store::RevisionRef;

use crate::complete;

use crate::options::parse_size;

mod store_admin;

pub use store_admin::{KeysArgs, KeysCommand, WebhooksArgs, WebhooksCommand};

/// List, render and explain the prompts of an application built on
/// promptreg, and check its users' configuration.
#[derive(Debug, Parser)]
#[command(name = "promptreg", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub output: OutputOptions,
    /// Given before the command; each command also takes those it uses
    /// after its name, and lists only those in its `--help`.
    #[command(
        flatten,
        next_help_heading = "Options of the commands that read a pack"
    )]
    pub pack: PackOptions,
    #[command(
        flatten,
        next_help_heading = "Options of the commands that read a pack"
    )]
    pub locale: LocaleOption,
    #[command(
        flatten,
        next_help_heading = "Options of the commands that read a pack"
    )]
    pub server: ServerOptions,
    #[command(subcommand)]
    pub command: Command,
}

/// How every command prints.
#[derive(Debug, Args)]
pub struct OutputOptions {
    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,
    /// When to use colour (`auto` honours NO_COLOR and only colours terminals)
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// Where the pack and the user's configuration are read.
#[derive(Debug, Args, Default, Clone)]
pub struct PackOptions {
    /// The pack folder [default: the nearest promptreg.toml from the current directory upward]
    #[arg(long, value_name = "DIR")]
    pub pack: Option<PathBuf>,
    /// Where local configuration is read; empty for none [default: the current directory]
    #[arg(long, value_name = "DIR", value_parser = any_path)]
    pub cwd: Option<PathBuf>,
    /// Where global configuration is read [default: your home directory]
    #[arg(long, value_name = "DIR", value_parser = any_path)]
    pub home: Option<PathBuf>,
}

/// The locale of a render.
#[derive(Debug, Args, Default, Clone)]
pub struct LocaleOption {
    /// The locale to render for [default: the pack's default locale]
    #[arg(long, value_name = "TAG")]
    pub locale: Option<String>,
}

/// Reading the pack from a server's label instead of a folder.
#[derive(Debug, Args, Default, Clone)]
pub struct ServerOptions {
    /// Read the pack from a `promptreg serve` server (`--pack` then names it there)
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// The API key for --server; PROMPTREG_KEY keeps it out of shell history
    #[arg(
        long,
        value_name = "KEY",
        env = "PROMPTREG_KEY",
        hide_env_values = true
    )]
    pub key: Option<String>,
    /// The label read on --server [default: production]
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// With --server: how long each request to the server may take, in seconds [default: 10]
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Read the pack from a baked bundle file (`promptreg bundle export`)
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    pub bundle: Option<PathBuf>,
    /// Accept only releases signed by a key of this file (.pub, allowed_signers); repeatable
    #[arg(long = "trust-key", value_name = "FILE")]
    pub trust_keys: Vec<PathBuf>,
}

/// A command that reads a pack: from a folder or a server, in a locale.
#[derive(Debug, Args, Default, Clone)]
pub struct ReadOptions {
    #[command(flatten)]
    pub pack: PackOptions,
    #[command(flatten)]
    pub locale: LocaleOption,
    #[command(flatten)]
    pub server: ServerOptions,
}

/// A command that reads a pack folder in a locale (no server).
#[derive(Debug, Args, Default, Clone)]
pub struct LocalReadOptions {
    #[command(flatten)]
    pub pack: PackOptions,
    #[command(flatten)]
    pub locale: LocaleOption,
}

/// The options of the commands, resolved: given before the command or
/// after it (after wins).
#[derive(Debug, Default)]
pub struct GlobalArgs {
    pub pack: Option<PathBuf>,
    pub cwd: Option<PathBuf>,
    pub home: Option<PathBuf>,
    pub locale: Option<String>,
    pub json: bool,
    pub color: ColorChoice,
    pub server: Option<String>,
    pub key: Option<String>,
    pub label: Option<String>,
    pub timeout: u64,
    pub bundle: Option<PathBuf>,
    pub trust_keys: Vec<PathBuf>,
}

/// How long a request to `--server` may take without `--timeout`.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 10;

/// When to colour the output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every prompt: description, locale variants, configuration layers
    List(ListArgs),
    /// Print a prompt exactly as the application would send it
    Render(RenderCommandArgs),
    /// Show a prompt part by part, with where each part came from
    Explain(RenderArgs),
    /// Validate the pack, its prompt tests and the user's configuration
    Check(CheckArgs),
    /// Apply the resolution rule to one key, without a pack
    Resolve(ResolveArgs),
    /// Show how the user's configuration changes a prompt (unified diff)
    Diff(DiffArgs),
    /// Print a JSON Schema for editors (settings file, front matter, test file)
    Schema(SchemaArgs),
    /// Print a prompt of a server's label, and again whenever the label moves
    Follow(FollowArgs),
    /// Run the pack's prompt tests (tests/*.toml) with the user's configuration
    Test(TestArgs),
    /// Create the user's prompt directory and a commented settings file
    Init(InitArgs),
    /// Let a project's configuration read files outside the project
    Trust(TrustArgs),
    /// Print a shell completion script
    Completions(CompletionsArgs),
    /// Versions and labels of packs in a store (SQLite file or PostgreSQL)
    Store(StoreArgs),
    /// API keys of a store: create (the secret is shown once), list, revoke
    Keys(KeysArgs),
    /// Webhooks of a store: create, list, rotate, test; their delivery logs
    Webhooks(WebhooksArgs),
    /// Serve a store over HTTP: prompts, labels, renders and a live change stream
    Serve(ServeArgs),
    /// Serve prompts to an MCP client (an IDE, a desktop assistant) over stdin and stdout
    Mcp(McpArgs),
    /// Baked bundles: a label's release as one file, for an image to start from
    Bundle(BundleArgs),
    /// Translations: coverage per locale, stale variants, XLIFF and PO files
    L10n(L10nArgs),
}

#[derive(Debug, Args)]
pub struct L10nArgs {
    #[command(subcommand)]
    pub command: L10nCommand,
}

#[derive(Debug, Subcommand)]
pub enum L10nCommand {
    /// Per locale: prompts translated, current, stale, untracked, and what the others fall back to
    Status {
        #[command(flatten)]
        read: LocalReadOptions,
    },
    /// Record that a variant translates its default's current text
    MarkCurrent {
        /// The prompt
        #[arg(add = ArgValueCandidates::new(complete::prompt_ids))]
        id: String,
        /// The variant's locale (the `ja` of `defaults/ID.ja.md`)
        locale: String,
        #[command(flatten)]
        pack: PackOptions,
    },
    /// Write every prompt's translatable text for one locale, for translators' tools
    Export {
        /// The format
        #[arg(long, value_enum)]
        format: L10nFormat,
        /// The file to write [default: standard output]
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        read: LocalReadOptions,
    },
    /// Write a translated XLIFF or PO file back to the pack's variant files
    Import {
        /// The translated file
        file: PathBuf,
        /// The largest file read, in bytes or with a unit (`64MiB`); a
        /// larger one is refused before it is read
        #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
        max_file_size: u64,
        #[command(flatten)]
        read: LocalReadOptions,
    },
}

/// The translation file formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum L10nFormat {
    /// XLIFF 2.0
    Xliff,
    /// gettext PO
    Po,
}

#[derive(Debug, Args)]
pub struct BundleArgs {
    #[command(subcommand)]
    pub command: BundleCommand,
}

#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Write a server's label to one file: bundle, revision, digest, signatures
    Export {
        /// The file to write
        #[arg(long, short, value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        pack: PackOptions,
        #[command(flatten)]
        server: ServerOptions,
    },
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub read: ReadOptions,
}

/// `render`: what `explain` takes, and the provider's shape.
#[derive(Debug, Args)]
pub struct RenderCommandArgs {
    #[command(flatten)]
    pub render: RenderArgs,
    /// Print the whole request body for a provider (`openai`,
    /// `openai-responses`, `anthropic`, `gemini`): the messages, the model
    /// settings, the tools and the output schema, without credentials
    #[arg(long, value_name = "PROVIDER", value_parser = parse_provider)]
    pub format: Option<promptreg::Provider>,
}

fn parse_provider(name: &str) -> Result<promptreg::Provider, String> {
    name.parse().map_err(|e: promptreg::Error| {
        let hint = e.suggestion().unwrap_or_default();
        format!("{}; {hint}", e.detail())
    })
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The prompt id
    #[arg(add = ArgValueCandidates::new(complete::prompt_ids))]
    pub id: String,
    #[command(flatten)]
    pub read: ReadOptions,
    /// The render context: a JSON file, or `-` for standard input
    #[arg(long, value_name = "FILE|-")]
    pub ctx: Option<PathBuf>,
    /// The most the context may hold, in bytes or with a unit (`64MiB`); a
    /// larger context is refused, so a huge or endless input cannot fill memory
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_ctx_size: u64,
    /// Print again each time the user's files change, until interrupted
    #[arg(long)]
    pub watch: bool,
    /// The conversation histories a chat prompt inserts at its placeholders:
    /// a JSON file of names, each a list of {"role", "content"} messages
    #[arg(long, value_name = "FILE|-")]
    pub history: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FollowArgs {
    /// The prompt id
    #[arg(add = ArgValueCandidates::new(complete::prompt_ids))]
    pub id: String,
    #[command(flatten)]
    pub read: ReadOptions,
    /// The render context: a JSON file, or `-` for standard input
    #[arg(long, value_name = "FILE|-")]
    pub ctx: Option<PathBuf>,
    /// The most the context may hold, in bytes or with a unit (`64MiB`)
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_ctx_size: u64,
    /// The conversation histories a chat prompt inserts at its placeholders
    #[arg(long, value_name = "FILE|-")]
    pub history: Option<PathBuf>,
    /// Render what this subject (a user, session or tenant key) is served: a gradual release's candidate when its share picks the subject [default: the label's own state]
    #[arg(long, value_name = "KEY")]
    pub subject: Option<String>,
    /// Stop after printing the prompt this many times [default: never]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    #[command(flatten)]
    pub reports: ReportArgs,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub read: ReadOptions,
    /// Serve what this subject (a user, session or tenant key) is served: a gradual release's candidate when its share picks the subject [default: the label's own state]
    #[arg(long, value_name = "KEY")]
    pub subject: Option<String>,
    /// How many prompts a page of `prompts/list` holds
    #[arg(long, value_name = "N", default_value_t = promptreg_mcp::DEFAULT_PAGE_SIZE as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub page_size: u64,
    #[command(flatten)]
    pub reports: ReportArgs,
}

/// What `follow` tells the server it serves (the server's fleet view).
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// How often to tell the server what this process serves, besides on start and each change (`30s`)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    pub report_interval: std::time::Duration,
    /// This process's id in the server's fleet view [default: random]
    #[arg(long, value_name = "ID")]
    pub instance_id: Option<String>,
    /// A name shown beside the id in the fleet view
    #[arg(long, value_name = "NAME")]
    pub instance_name: Option<String>,
    /// Do not tell the server what this process serves
    #[arg(long, conflicts_with_all = ["report_interval", "instance_id", "instance_name"])]
    pub no_reports: bool,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file the schema describes
    #[arg(value_enum, default_value = "settings")]
    pub of: SchemaOf,
}

/// The files `schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// The pack's settings file (JSON with comments)
    Settings,
    /// The front matter of a pack's prompt files
    FrontMatter,
    /// A prompt test file, tests/<name>.toml
    Tests,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The prompt id
    #[arg(add = ArgValueCandidates::new(complete::prompt_ids))]
    pub id: String,
    #[command(flatten)]
    pub read: ReadOptions,
    /// The render context: a JSON file, or `-` for standard input
    #[arg(long, value_name = "FILE|-")]
    pub ctx: Option<PathBuf>,
    /// The most the context may hold, in bytes or with a unit (`64MiB`); a
    /// larger context is refused, so a huge or endless input cannot fill memory
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub max_ctx_size: u64,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Run only the cases of these prompts [default: every case]
    #[arg(value_name = "ID", add = ArgValueCandidates::new(complete::prompt_ids))]
    pub ids: Vec<String>,
    /// Write the snapshot of every case whose text differs from it
    #[arg(long)]
    pub update: bool,
    #[command(flatten)]
    pub read: ReadOptions,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Count warnings as errors
    #[arg(long)]
    pub deny_warnings: bool,
    #[command(flatten)]
    pub read: LocalReadOptions,
}

#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The prompt key
    pub key: String,
    /// The application's default text
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT")]
    pub default: String,
    /// The mode: override, append, global-local, local, global-local-merge, off
    #[arg(long, value_name = "MODE", add = ArgValueCandidates::new(complete::modes))]
    pub mode: Option<String>,
    /// Inline text, which wins in every mode
    #[arg(long, allow_hyphen_values = true, value_name = "TEXT")]
    pub inline: Option<String>,
    /// A file to read the block from
    #[arg(long, allow_hyphen_values = true, value_name = "PATH")]
    pub file: Option<String>,
    /// The prompts directory [default: the pack's, when there is one]
    #[arg(long, value_name = "DIR")]
    pub prompts_dir: Option<String>,
    #[command(flatten)]
    pub pack: PackOptions,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Create the files under home instead of the current directory
    #[arg(long)]
    pub global: bool,
    #[command(flatten)]
    pub pack: PackOptions,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The project folder [default: --cwd]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub pack: PackOptions,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store: a SQLite file, `sqlite:PATH` or `postgres://USER:PASSWORD@HOST/DB`
    #[arg(long, global = true, value_name = "URL", default_value = promptreg_store::DEFAULT_DATABASE)]
    pub database: String,
    #[command(subcommand)]
    pub command: StoreCommand,
}

/// Which pack of the store a command reads or changes.
#[derive(Debug, Args)]
pub struct StorePack {
    /// The pack in the store [default: the only one]
    #[arg(long = "name", value_name = "PACK")]
    pub name: Option<String>,
}

/// Waiting, after a change, until the instances following the label
/// serve its new revision.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Then wait until every instance reporting serves the label's new revision, at most this long (`60s`, `2m`); exit 1 naming those that do not
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub wait: Option<std::time::Duration>,
    /// With --wait: the share of the instances reporting that must serve it, from 0 to 1
    #[arg(long, value_name = "SHARE", requires = "wait", default_value_t = 1.0, value_parser = parse_share)]
    pub wait_ratio: f64,
}

fn parse_share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(share) if (0.0..=1.0).contains(&share) => Ok(share),
        _ => Err(format!("`{text}` is not a share from 0 to 1, like 0.95")),
    }
}

/// Who makes a change.
#[derive(Debug, Args)]
pub struct Author {
    /// Who is recorded as making the change [default: $USER, else the login name]
    #[arg(long, value_name = "NAME", env = "PROMPTREG_AUTHOR")]
    pub author: Option<String>,
}

/// Who moves a label, and whether as an admin.
#[derive(Debug, Args)]
pub struct Mover {
    #[command(flatten)]
    pub author: Author,
    /// Act as an admin: move protected labels, protect labels
    #[arg(long)]
    pub admin: bool,
    /// Move a gated label even though its tests fail (needs --admin and --reason)
    #[arg(long)]
    pub force: bool,
    /// Sign the new revision with this SSH key (Ed25519; PROMPTREG_SIGNING_PASSPHRASE if encrypted)
    #[arg(long, value_name = "KEYFILE")]
    pub sign: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Record a new version of every prompt of the pack folder that changed
    Push {
        /// The pack folder
        dir: PathBuf,
        /// Why, recorded with each new version
        #[arg(long, short, value_name = "TEXT", default_value = "")]
        message: String,
        /// Push even where `latest` moved since the folder was pulled (or
        /// last pushed), overwriting those changes
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        limits: FileLimitArgs,
        #[command(flatten)]
        author: Author,
    },
    /// Write the pack at a label (`--label`, default latest) into a new folder
    Pull {
        /// The folder to create (or an empty one)
        dir: PathBuf,
        /// The label written
        #[arg(long, value_name = "LABEL", default_value = "latest")]
        label: String,
        /// Write the pack as a revision of the label held it: its number, or its digest (8 hex digits or more)
        #[arg(long, value_name = "N|DIGEST")]
        revision: Option<RevisionRef>,
        #[command(flatten)]
        pack: StorePack,
    },
    /// List a prompt's versions, newest first, with their labels
    Log {
        /// The prompt id (`@pack` for the manifest)
        id: String,
        #[command(flatten)]
        pack: StorePack,
    },
    /// Point a label of a prompt at a version (--revision: a label at one of its revisions, for the whole pack)
    Label {
        /// The prompt id (`@pack` for the manifest); with --revision, the label
        #[arg(value_name = "ID")]
        id: String,
        /// The label, like `production` (not with --revision)
        #[arg(required_unless_present = "revision")]
        label: Option<String>,
        /// The version number (not with --revision)
        #[arg(required_unless_present = "revision")]
        version: Option<u64>,
        /// Point the label at what one of its revisions held (its number, or its digest), on every prompt, in one step
        #[arg(long, value_name = "N|DIGEST", conflicts_with_all = ["label", "version"])]
        revision: Option<RevisionRef>,
        /// The version the label points at now, or `none` for a new label; with
        /// --revision, the revision it is at now (optional)
        #[arg(
            long,
            value_name = "VERSION|none",
            required_unless_present = "revision"
        )]
        expect: Option<String>,
        /// Why, recorded in the history
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Move a label one step back in its history (again: one more step back); --label: the whole pack, one revision back
    Rollback {
        /// The prompt id (not with --label)
        #[arg(required_unless_present = "whole_pack")]
        id: Option<String>,
        /// The label (not with --label)
        #[arg(required_unless_present = "whole_pack")]
        label: Option<String>,
        /// Roll this label back one revision for the whole pack, in one step
        #[arg(long = "label", value_name = "LABEL", conflicts_with_all = ["id", "label"])]
        whole_pack: Option<String>,
        /// Why, recorded in the history after `rollback from N`
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Point label TO at what FROM points at, on every prompt, in one step
    Release {
        /// The label released, like `staging`
        from: String,
        /// The label moved, like `production`
        to: String,
        /// Why, recorded in the history after `release FROM`
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
        /// Release only if TO's newest revision is N (0: it has none yet), as `store revisions TO` showed it
        #[arg(long, value_name = "N")]
        expect: Option<u64>,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Serve a candidate to a share of subjects (a gradual release): start it, change its share, promote it or abort it; alone, show the split running
    Canary {
        /// The label split, like `production`
        label: String,
        /// Start: the candidate is this label's revision, like `staging` [default: LABEL itself, with --revision]
        #[arg(long, value_name = "LABEL", conflicts_with_all = ["promote", "abort"])]
        from: Option<String>,
        /// Start: the candidate revision (its number or digest) [default: the newest of --from]
        #[arg(long, value_name = "N|DIGEST", conflicts_with_all = ["promote", "abort"])]
        revision: Option<RevisionRef>,
        /// The share of subjects the candidate serves, from 0 to 100 (`10`, `2.5`): starts a split, or changes the share of the one running
        #[arg(long, value_name = "P", conflicts_with_all = ["promote", "abort"])]
        percent: Option<promptreg_store::Share>,
        /// Make the candidate the label's next revision, and end the split
        #[arg(long, conflicts_with = "abort")]
        promote: bool,
        /// End the split: the label serves its own state to every subject
        #[arg(long)]
        abort: bool,
        /// Change the split only if it is split N, as `store canary LABEL` showed it
        #[arg(long, value_name = "N")]
        expect: Option<u64>,
        /// Why, recorded with the step
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
        #[command(flatten)]
        wait: WaitArgs,
    },
    /// Show what every instance following a label serves (the fleet view), from their reports
    Fleet {
        /// The label
        label: String,
        /// List every instance, not only the first 100
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        pack: StorePack,
    },
    /// Show what changed between two versions or labels of a prompt (--locale for one file; --revision A B: two revisions of a label, the whole pack)
    Diff {
        /// The prompt id; with --revision, the old revision
        id: String,
        /// The old version or label; with --revision, the new revision
        a: String,
        /// The new version or label (not with --revision)
        #[arg(required_unless_present = "revision")]
        b: Option<String>,
        /// Compare only the file of this locale
        #[arg(long, value_name = "TAG")]
        locale: Option<String>,
        /// Compare two revisions of --label: every file of the pack that differs
        #[arg(long, conflicts_with_all = ["b", "locale"])]
        revision: bool,
        /// The label whose revisions --revision compares
        #[arg(long, value_name = "LABEL", default_value = "latest")]
        label: String,
        #[command(flatten)]
        pack: StorePack,
    },
    /// List the revisions of a label, newest first, with what each changed
    Revisions {
        /// The label
        label: String,
        #[command(flatten)]
        pack: StorePack,
    },
    /// Show the label moves of a prompt, or of the whole pack
    History {
        /// The prompt id [default: every prompt]
        id: Option<String>,
        #[command(flatten)]
        pack: StorePack,
    },
    /// Mark a label protected: moving it then needs --admin
    Protect {
        /// The label
        label: String,
        /// Lift the protection instead
        #[arg(long)]
        off: bool,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
    },
    /// Sign a revision of a label (its newest by default) with your key (--sign KEYFILE)
    Sign {
        /// The label
        label: String,
        /// The revision: its number, or its digest (8 hex digits or more) [default: the newest]
        #[arg(long, value_name = "N|DIGEST")]
        revision: Option<RevisionRef>,
        #[command(flatten)]
        pack: StorePack,
        #[command(flatten)]
        who: Mover,
    },
    /// Name a signing key by its fingerprint (`ssh-keygen -l -f KEY.pub`); needs --admin
    NameKey {
        /// The key's fingerprint, `SHA256:…`
        fingerprint: String,
        /// The name shown beside it
        name: String,
        #[command(flatten)]
        who: Mover,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen; an address other than loopback needs an API key in the store
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub listen: std::net::SocketAddr,
    /// The store: a SQLite file, `sqlite:PATH` or `postgres://USER:PASSWORD@HOST/DB`
    #[arg(long, value_name = "URL", default_value = promptreg_store::DEFAULT_DATABASE)]
    pub database: String,
    /// How to write the request log on standard error
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
    /// The largest request body accepted (bytes, or with KiB/MiB)
    #[arg(long, value_name = "SIZE", default_value = "1MiB", value_parser = parse_size)]
    pub max_body_size: u64,
    /// How long a request may take before it is answered 503, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub request_timeout: u64,
    /// How long a client may take to send a request's head, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub header_timeout: u64,
    /// How long a kept-alive connection may stay idle between requests, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub idle_timeout: u64,
    /// How long a response may wait for a client that reads nothing, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub write_timeout: u64,
    /// How many connections the server holds at once; more are answered 503
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_connections: usize,
    /// How many clients may follow the event stream at once; more are answered 503 with Retry-After
    #[arg(long, value_name = "N", default_value_t = 9_000)]
    pub max_streams: usize,
    /// How many requests may be answered at once (the event stream and health checks aside); more are answered 503 with Retry-After
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_requests: usize,
    /// How long a key checked before stays good while the store cannot be reached, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub key_grace: u64,
    /// A host name clients use to reach the server (repeat for more); IP addresses and localhost are always answered
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Clients come through a proxy that terminates TLS: cookies are Secure, and the web page may be served beyond loopback
    #[arg(long)]
    pub behind_tls: bool,
    /// Serve the web page (which takes API keys) over plain HTTP beyond loopback
    #[arg(long)]
    pub web_over_plain_http: bool,
    /// How many MCP sessions (`/mcp`) may be open at once; a new one past it is answered 503
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub max_mcp_sessions: usize,
    /// How many prompts a page of an MCP session's `prompts/list` holds
    #[arg(long, value_name = "N", default_value_t = promptreg_mcp::DEFAULT_PAGE_SIZE as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub mcp_page_size: u64,
    /// Give MCP sessions tools for agents that improve prompts: read labels, revisions and diffs, test and propose a change (a new version on `latest`, never a label move)
    #[arg(long)]
    pub mcp_tools: bool,
    /// Send no webhook deliveries from this server (another one sharing the store does)
    #[arg(long)]
    pub no_webhook_deliveries: bool,
    /// Let webhooks reach loopback, private and link-local addresses (receivers inside the network)
    #[arg(long)]
    pub webhooks_allow_private: bool,
    /// How long a webhook delivery waits for its receiver, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=300))]
    pub webhooks_timeout: u64,
    /// Where people reach the web page, for the links in webhook messages [default: http://ADDR/]
    #[arg(long, value_name = "URL")]
    pub public_url: Option<url::Url>,
    #[command(flatten)]
    pub limits: FileLimitArgs,
}

/// How many files a pushed version may hold: `store push` and `serve`
/// (for `POST …/versions`) enforce the same limits, with the store's
/// defaults.
#[derive(Debug, Args)]
pub struct FileLimitArgs {
    /// The most files of one prompt (its default and locale variants) a push may hold
    #[arg(long, value_name = "N", default_value_t = promptreg_store::FileLimits::default().per_prompt)]
    pub max_files_per_prompt: usize,
    /// The most files of one pack (manifest, snippets, every prompt's files) a push may hold
    #[arg(long, value_name = "N", default_value_t = promptreg_store::FileLimits::default().per_pack)]
    pub max_files_per_pack: usize,
}

impl FileLimitArgs {
    /// The limits, for the store.
    pub fn limits(&self) -> promptreg_store::FileLimits {
        promptreg_store::FileLimits {
            per_prompt: self.max_files_per_prompt,
            per_pack: self.max_files_per_pack,
        }
    }
}

/// How the server writes its log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One line per event, for people.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: clap_complete::Shell,
}

/// A path, the empty one included (`--cwd=` means "no project").
fn any_path(value: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(value))
}

impl Command {
    /// Its name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::List(_) => "list",
            Command::Render(_) => "render",
            Command::Explain(_) => "explain",
            Command::Check(_) => "check",
            Command::Resolve(_) => "resolve",
            Command::Diff(_) => "diff",
            Command::Schema(_) => "schema",
            Command::Follow(_) => "follow",
            Command::Test(_) => "test",
            Command::Init(_) => "init",
            Command::Trust(_) => "trust",
            Command::Completions(_) => "completions",
            Command::Store(_) => "store",
            Command::Keys(_) => "keys",
            Command::Webhooks(_) => "webhooks",
            Command::Serve(_) => "serve",
            Command::Mcp(_) => "mcp",
            Command::Bundle(_) => "bundle",
            Command::L10n(_) => "l10n",
        }
    }

    /// The option groups it takes, as given after its name.
    fn groups(&self) -> Groups<'_> {
        match self {
            Command::List(ListArgs { read })
            | Command::Render(RenderCommandArgs {
                render: RenderArgs { read, .. },
                ..
            })
            | Command::Explain(RenderArgs { read, .. })
            | Command::Diff(DiffArgs { read, .. })
            | Command::Test(TestArgs { read, .. })
            | Command::Follow(FollowArgs { read, .. })
            | Command::Mcp(McpArgs { read, .. }) => Groups {
                pack: Some(&read.pack),
                locale: Some(&read.locale),
                server: Some(&read.server),
            },
            Command::Check(CheckArgs { read, .. }) => Groups {
                pack: Some(&read.pack),
                locale: Some(&read.locale),
                server: None,
            },
            Command::Resolve(ResolveArgs { pack, .. })
            | Command::Init(InitArgs { pack, .. })
            | Command::Trust(TrustArgs { pack, .. }) => Groups {
                pack: Some(pack),
                ..Groups::default()
            },
            Command::Bundle(BundleArgs {
                command: BundleCommand::Export { pack, server, .. },
            }) => Groups {
                pack: Some(pack),
                locale: None,
                server: Some(server),
            },
            Command::L10n(L10nArgs { command }) => match command {
                L10nCommand::Status { read }
                | L10nCommand::Export { read, .. }
                | L10nCommand::Import { read, .. } => Groups {
                    pack: Some(&read.pack),
                    locale: Some(&read.locale),
                    server: None,
                },
                L10nCommand::MarkCurrent { pack, .. } => Groups {
                    pack: Some(pack),
                    ..Groups::default()
                },
            },
            Command::Schema(_)
            | Command::Completions(_)
            | Command::Store(_)
            | Command::Keys(_)
            | Command::Webhooks(_)
            | Command::Serve(_) => Groups::default(),
        }
    }
}

/// The option groups of one command (`None`: it does not take them).
#[derive(Default)]
struct Groups<'a> {
    pack: Option<&'a PackOptions>,
    locale: Option<&'a LocaleOption>,
    server: Option<&'a ServerOptions>,
}

impl Cli {
    /// The options, resolved (given after the command wins over before
    /// it), and the command. An option that changes a result (`--locale`,
    /// `--server`, `--label`, `--timeout`) given before a command that
    /// does not take it is refused, not ignored.
    pub fn resolve(self) -> Result<(GlobalArgs, Command), String> {
        let name = self.command.name();
        let groups = self.command.groups();
        let refuse = |option: &str| {
            format!(
                "`{option}` is not an option of `promptreg {name}` (`promptreg {name} --help` lists its options)"
            )
        };
        // Where to read (--pack, --cwd, --home) is harmless to a command
        // that reads none of it; an option that changes a result is not.
        let pack = match groups.pack {
            Some(after) => after.clone().or(self.pack),
            None => self.pack,
        };
        let locale = match groups.locale {
            Some(after) => after.locale.clone().or(self.locale.locale),
            None if self.locale.locale.is_some() => return Err(refuse("--locale")),
            None => None,
        };
        let server = match groups.server {
            Some(after) => after.clone().or(self.server),
            None if self.server.server.is_some() => {
                return Err(format!(
                    "`promptreg {name}` does not read a server; --server works with list, render, explain, diff, test, follow, mcp and bundle export"
                ));
            }
            None => match self.server.given() {
                Some(option) => return Err(refuse(option)),
                None => ServerOptions::default(),
            },
        };
        let args = GlobalArgs {
            pack: pack.pack,
            cwd: pack.cwd,
            home: pack.home,
            locale,
            json: self.output.json,
            color: self.output.color,
            server: server.server,
            key: server.key,
            label: server.label,
            timeout: server.timeout.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
            bundle: server.bundle,
            trust_keys: server.trust_keys,
        };
        Ok((args, self.command))
    }
}

impl PackOptions {
    /// Each option given after the command, else before it.
    fn or(self, before: PackOptions) -> PackOptions {
        PackOptions {
            pack: self.pack.or(before.pack),
            cwd: self.cwd.or(before.cwd),
            home: self.home.or(before.home),
        }
    }
}

impl ServerOptions {
    /// Each option given after the command, else before it.
    fn or(self, before: ServerOptions) -> ServerOptions {
        ServerOptions {
            server: self.server.or(before.server),
            key: self.key.or(before.key),
            label: self.label.or(before.label),
            timeout: self.timeout.or(before.timeout),
            bundle: self.bundle.or(before.bundle),
            trust_keys: match self.trust_keys.is_empty() {
                true => before.trust_keys,
                false => self.trust_keys,
            },
        }
    }

    /// The first option given, for a refusal. The key is left out: it
    /// may come from `PROMPTREG_KEY`, set for every command.
    fn given(&self) -> Option<&'static str> {
        [
            (self.label.is_some(), "--label"),
            (self.timeout.is_some(), "--timeout"),
            (self.bundle.is_some(), "--bundle"),
            (!self.trust_keys.is_empty(), "--trust-key"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

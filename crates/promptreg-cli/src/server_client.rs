//! `--server`: the prompts of a label on a `promptreg serve` server, read
//! through the library's follower in place of a local pack folder.
//!
//! The tool keeps no disk cache: it shows the server as it is now, or says
//! why it cannot (unreachable, the key refused, a label that does not load,
//! a release no key of `--trust-key` signed). `--bundle FILE` reads a baked
//! bundle instead, checked the same way.

use promptreg::prelude::*;
use std::time::Duration;

use promptreg::pack::Pack;
use promptreg::remote::{BakedBundle, Follower, Remote};
use promptreg::signing::TrustedKeys;
use promptreg::{Error, ErrorKind, PromptRegistry};

use crate::cli::GlobalArgs;
use crate::report::Failure;

/// The label read when `--label` is not given.
const DEFAULT_LABEL: &str = "production";

/// A label of a pack on a server, as the global options name it.
pub struct Target {
    pub remote: Remote,
    /// `pack `web-agent` at label `production` on http://…`, for messages.
    what: String,
    timeout: Duration,
    /// Whether a key is sent.
    keyed: bool,
}

/// What `--server`, `--pack`, `--label`, `--key` and `--timeout` name;
/// `None` without `--server`.
pub fn target(args: &GlobalArgs) -> Result<Option<Target>, Failure> {
    let Some(server) = &args.server else {
        return Ok(None);
    };
    let pack = args.pack.as_ref().and_then(|p| p.to_str()).ok_or_else(|| {
        Failure::usage(format!(
            "--server needs --pack NAME, the pack to read there (`curl {}/v1/packs` lists them)",
            server.trim_end_matches('/')
        ))
    })?;
    let label = args.label.as_deref().unwrap_or(DEFAULT_LABEL);
    let timeout = Duration::from_secs(args.timeout);
    let mut remote = Remote::new(server.as_str())
        .pack(pack)
        .label(label)
        .timeout(timeout)
        .without_disk_cache()
        // A one-off read is no instance of the fleet; `follow` reports.
        .without_reports()
        .library(concat!("promptreg-cli/", env!("CARGO_PKG_VERSION")));
    // An empty PROMPTREG_KEY is no key, not a header value to send.
    let key = args.key.as_deref().map(str::trim).filter(|k| !k.is_empty());
    if let Some(key) = key {
        remote = remote.key(key);
    }
    if let Some(trusted) = trusted_keys(args)? {
        remote = remote.trust_keys(trusted);
    }
    Ok(Some(Target {
        remote,
        what: format!("pack `{pack}` at label `{label}` on {server}"),
        timeout,
        keyed: key.is_some(),
    }))
}

impl Target {
    /// Follows the label in `registry` and waits for the server's first
    /// answer: the follower once the label's prompts are in force, or why
    /// not.
    pub fn follow(self, registry: &PromptRegistry) -> Result<(Follower, Pack), Failure> {
        let follower = registry.follow(self.remote)?;
        // Connecting to the stream and asking for the bundle may each take
        // the whole timeout before the first attempt is known to fail.
        let wait = self.timeout.saturating_mul(2) + Duration::from_secs(1);
        if let Err(why) = follower.wait_for_first_answer(wait) {
            let hint = if !self.keyed && why.contains("HTTP 401") {
                "; no key given; use --key or PROMPTREG_KEY"
            } else {
                ""
            };
            return Err(unavailable(&self.what, &format!("{why}{hint}")));
        }
        let pack = follower
            .pack()
            .ok_or_else(|| unavailable(&self.what, "the server sent no bundle"))?;
        Ok((follower, pack))
    }

    /// The pack at the label, read once.
    pub fn pack(self) -> Result<Pack, Failure> {
        self.follow(&PromptRegistry::new()).map(|(_, pack)| pack)
    }
}

/// The keys of every `--trust-key` file; `None` without one.
pub fn trusted_keys(args: &GlobalArgs) -> Result<Option<TrustedKeys>, Failure> {
    if args.trust_keys.is_empty() {
        return Ok(None);
    }
    let mut trusted = TrustedKeys::new();
    for file in &args.trust_keys {
        trusted.add_file(file)?;
    }
    Ok(Some(trusted))
}

/// The baked bundle of `--bundle`, checked; with `--trust-key`, only when
/// one of those keys signed it.
pub fn baked(args: &GlobalArgs) -> Result<Option<BakedBundle>, Failure> {
    let Some(path) = &args.bundle else {
        return Ok(None);
    };
    let baked = BakedBundle::read(path)?;
    if let Some(trusted) = trusted_keys(args)? {
        baked.verify(&trusted)?;
    }
    Ok(Some(baked))
}

fn unavailable(what: &str, why: &str) -> Failure {
    Failure::from(Error::new(
        ErrorKind::Remote,
        format!("cannot read {what}: {why}"),
    ))
}

//! `promptreg bundle export`: a label of a server's pack as one file (its
//! bundle, revision, digest and signatures), for an image to start from
//! (`--bundle FILE`, `PromptRegistry::from_bundle`).

use promptreg::PromptRegistry;
use serde_json::json;

use super::Output;
use crate::cli::{BundleArgs, BundleCommand};
use crate::options::Session;
use crate::report::Failure;

pub fn run(session: &Session, args: &BundleArgs) -> Result<Output, Failure> {
    let BundleCommand::Export { output, .. } = &args.command;
    let target = crate::server_client::target(&session.args)?.ok_or_else(|| {
        Failure::usage(
            "`bundle export` reads a label on a server: give --server URL and --pack NAME",
        )
    })?;
    let registry = PromptRegistry::new();
    let (follower, _) = target.follow(&registry)?;
    follower.write_bundle(output)?;
    let status = follower.status();
    let revision = status.revision.map(|r| format!("r{r}"));
    if session.args.json {
        return Ok(Output::json(&json!({
            "file": output.display().to_string(),
            "pack": status.pack,
            "label": status.label,
            "revision": status.revision,
            "etag": status.etag,
            "verified_by": status.verified_by,
        })));
    }
    let verified = status
        .verified_by
        .map(|key| format!(", signed by {key}"))
        .unwrap_or_default();
    Ok(Output::text(format!(
        "wrote {}: {} {} {}{verified}\n",
        output.display(),
        status.pack,
        status.label,
        revision.as_deref().unwrap_or("(no revision)")
    )))
}

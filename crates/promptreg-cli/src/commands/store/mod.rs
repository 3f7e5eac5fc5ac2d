//! `promptreg store …`: push and pull packs, list versions, move labels,
//! roll back, release, diff and show history, in a SQLite file or a
//! PostgreSQL database.
//!
//! The rest of the tool is synchronous; the store's client is async, so
//! this command alone runs on a current-thread runtime of its own.

use std::future::Future;

use promptreg::Locale;
use promptreg_store::{
    Actor, Change, Error, ErrorKind, Label, LabelMove, Permission, PushReport, RevisionRef, Store,
    VersionInfo, VersionRef,
};
use serde_json::{Value, json};

use self::base::Base;
use super::Output;

mod base;
mod canary;
mod fleet;
mod revisions;
use crate::cli::{Author, Mover, StoreArgs, StoreCommand, StorePack};
use crate::options::Session;
use crate::report::Failure;
use crate::style::Paint;

pub fn run(session: &Session, args: &StoreArgs) -> Result<Output, Failure> {
    block_on(execute(session, args))
}

pub(super) fn block_on<T>(future: impl Future<Output = Result<T, Failure>>) -> Result<T, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::usage(format!("cannot start the store's runtime: {e}")))?
        .block_on(future)
}

async fn execute(session: &Session, args: &StoreArgs) -> Result<Output, Failure> {
    let store = Store::open(&args.database).await.map_err(failure)?;
    let cmd = |pack, who| Command::new(session, &store, pack, who);
    match &args.command {
        StoreCommand::Push {
            dir,
            message,
            force,
            limits,
            author,
        } => {
            let who = Some(Who::pushing(author));
            cmd(None, who)
                .push(dir, message, *force, limits.limits())
                .await
        }
        StoreCommand::Pull {
            dir,
            label,
            revision,
            pack,
        } => {
            cmd(Some(pack), None)
                .pull(dir, label, revision.as_ref())
                .await
        }
        StoreCommand::Log { id, pack } => cmd(Some(pack), None).log(id).await,
        StoreCommand::Label {
            id,
            label,
            version,
            revision,
            expect,
            reason,
            pack,
            who,
            wait,
        } => {
            let cmd = cmd(Some(pack), Some(Who::moving(who)));
            let expect = expect.as_deref();
            match (revision, label, version) {
                (Some(wanted), ..) => {
                    let done = cmd.restore(id, wanted, expect, reason).await;
                    cmd.then_wait(done, id, wait).await
                }
                (None, Some(label), Some(version)) => {
                    let expect = expect.unwrap_or_default();
                    let done = cmd.label(id, label, *version, expect, reason).await;
                    cmd.then_wait(done, label, wait).await
                }
                _ => Err(Failure::usage(
                    "give ID LABEL VERSION --expect V, or LABEL --revision N",
                )),
            }
        }
        StoreCommand::Rollback {
            id,
            label,
            whole_pack,
            reason,
            pack,
            who,
            wait,
        } => {
            let cmd = cmd(Some(pack), Some(Who::moving(who)));
            match (whole_pack, id, label) {
                (Some(label), ..) => {
                    let done = cmd.rollback_pack(label, reason).await;
                    cmd.then_wait(done, label, wait).await
                }
                (None, Some(id), Some(label)) => {
                    let done = cmd.rollback(id, label, reason).await;
                    cmd.then_wait(done, label, wait).await
                }
                _ => Err(Failure::usage(
                    "give ID LABEL, or --label LABEL for the whole pack",
                )),
            }
        }
        StoreCommand::Release {
            from,
            to,
            reason,
            expect,
            pack,
            who,
            wait,
        } => {
            let cmd = cmd(Some(pack), Some(Who::moving(who)));
            let done = cmd.release(from, to, *expect, reason).await;
            cmd.then_wait(done, to, wait).await
        }
        StoreCommand::Fleet { label, all, pack } => cmd(Some(pack), None).fleet(label, *all).await,
        StoreCommand::Canary {
            label,
            from,
            revision,
            percent,
            promote,
            abort,
            expect,
            reason,
            pack,
            who,
            wait,
        } => {
            let cmd = cmd(Some(pack), Some(Who::moving(who)));
            let asked = canary::Asked {
                from: from.as_deref(),
                revision: revision.as_ref(),
                percent: *percent,
                promote: *promote,
                abort: *abort,
                expect: *expect,
            };
            let done = cmd.canary(label, asked, reason).await;
            match promote {
                true => cmd.then_wait(done, label, wait).await,
                false => done,
            }
        }
        StoreCommand::Diff {
            id,
            a,
            b,
            locale,
            revision,
            label,
            pack,
        } => {
            let cmd = cmd(Some(pack), None);
            match (revision, b) {
                (true, _) => cmd.diff_revisions(label, id, a).await,
                (false, Some(b)) => cmd.diff(id, a, b, locale.as_deref()).await,
                (false, None) => Err(Failure::usage("give ID A B, or --revision A B")),
            }
        }
        StoreCommand::History { id, pack } => cmd(Some(pack), None).history(id.as_deref()).await,
        StoreCommand::Revisions { label, pack } => cmd(Some(pack), None).revisions(label).await,
        StoreCommand::Protect {
            label,
            off,
            pack,
            who,
        } => {
            cmd(Some(pack), Some(Who::moving(who)))
                .protect(label, !off)
                .await
        }
        StoreCommand::Sign {
            label,
            revision,
            pack,
            who,
        } => {
            cmd(Some(pack), Some(Who::moving(who)))
                .sign(label, revision.as_ref())
                .await
        }
        StoreCommand::NameKey {
            fingerprint,
            name,
            who,
        } => {
            cmd(None, Some(Who::moving(who)))
                .name_key(fingerprint, name)
                .await
        }
    }
}

/// Who a change is recorded as made by, whether as an admin, and the key
/// that signs the revisions it makes.
#[derive(Clone, Copy)]
struct Who<'a> {
    author: Option<&'a str>,
    admin: bool,
    /// Past a gate's failing tests.
    force: bool,
    /// `--sign KEYFILE`.
    sign: Option<&'a std::path::Path>,
}

impl<'a> Who<'a> {
    fn pushing(author: &'a Author) -> Self {
        Who {
            author: author.author.as_deref(),
            admin: false,
            force: false,
            sign: None,
        }
    }

    fn moving(mover: &'a Mover) -> Self {
        Who {
            author: mover.author.author.as_deref(),
            admin: mover.admin,
            force: mover.force,
            sign: mover.sign.as_deref(),
        }
    }
}

/// A store error as the tool reports it: the check's diagnostics with
/// their source lines for a pack that fails, one sentence otherwise.
pub(super) fn failure(err: Error) -> Failure {
    if err.kind() == ErrorKind::InvalidPack && !err.diagnostics().is_empty() {
        let diagnostics = promptreg::Error::from_diagnostics(err.diagnostics().to_vec());
        return Failure::stopped(diagnostics, "the pack fails check: nothing was pushed");
    }
    if err.kind() == ErrorKind::TestsFailed && !err.diagnostics().is_empty() {
        let diagnostics = promptreg::Error::from_diagnostics(err.diagnostics().to_vec());
        return Failure::stopped(diagnostics, err.to_string());
    }
    if err.kind() == ErrorKind::TestsFailed {
        // A gate's failing cases, as `promptreg test` reports them.
        let lines = err.failed_cases().iter().flat_map(|case| {
            let head = format!(
                "FAIL {} {} ({}, {})",
                case.prompt, case.case, case.locale, case.file
            );
            std::iter::once(head).chain(case.problems.iter().map(|p| format!("     {p}")))
        });
        let force = "an admin forces the move with --force --admin --reason TEXT".to_owned();
        let lines = lines.chain(std::iter::once(force));
        return Failure::usage(err.to_string()).with_details("tests-failed", lines);
    }
    if err.kind() == ErrorKind::BreakingChange {
        return Failure::usage(format!("{err} (--force --admin --reason TEXT)"));
    }
    if err.kind() == ErrorKind::Forbidden && err.to_string().contains("admin permission") {
        return Failure::usage(format!("{err}: run it with --admin"));
    }
    Failure::usage(err.to_string())
}

struct Command<'a> {
    session: &'a Session,
    store: &'a Store,
    /// `--name`, for the commands that take it.
    pack: Option<&'a str>,
    /// `--author` and `--admin`, for the commands that change the store.
    who: Option<Who<'a>>,
}

impl<'a> Command<'a> {
    fn new(
        session: &'a Session,
        store: &'a Store,
        pack: Option<&'a StorePack>,
        who: Option<Who<'a>>,
    ) -> Self {
        Command {
            session,
            store,
            pack: pack.and_then(|p| p.name.as_deref()),
            who,
        }
    }

    fn actor(&self) -> Result<Actor, Failure> {
        let who = self.who.unwrap_or(Who {
            author: None,
            admin: false,
            force: false,
            sign: None,
        });
        let mut actor = local_user(who.author, who.admin);
        if who.force {
            actor = actor.forcing_gates();
        }
        if let Some(path) = who.sign {
            actor = actor.signing_with(signing_key(path)?);
        }
        Ok(actor)
    }

    async fn pack(&self) -> Result<String, Failure> {
        self.store.pack(self.pack).await.map_err(failure)
    }

    fn paint(&self) -> Paint {
        Paint {
            color: self.session.color,
        }
    }

    /// `store push DIR`: refused where `latest` moved since the folder's
    /// base (what it was pulled or last pushed at; nothing for a folder
    /// never taken from this store), unless `force`; records the new base.
    async fn push(
        &self,
        dir: &std::path::Path,
        message: &str,
        force: bool,
        limits: promptreg_store::FileLimits,
    ) -> Result<Output, Failure> {
        // A pack a write stopped half-way through is finished or undone
        // first: a push stores whole states only.
        if dir.is_dir() {
            crate::options::recover_pack(dir)?;
        }
        let files = promptreg_store::PackFiles::read(dir).map_err(failure)?;
        let store = self.store.clone().with_file_limits(limits);
        let (actor, location) = (self.actor()?, self.store.location());
        let report = if force {
            store.push(&files, &actor, message).await
        } else {
            let pack = files.to_pack(dir).map_err(failure)?;
            let base = Base::read(dir, &location, pack.name()).map_err(Failure::usage)?;
            let entries = base.map(|b| b.entries).unwrap_or_default();
            store.push_from(&files, &entries, &actor, message).await
        };
        let report = report.map_err(failure)?;
        let entries = report.prompts.iter();
        let recorded = Base {
            store: location,
            pack: report.pack.clone(),
            entries: entries
                .filter_map(|(id, _, v)| Some((id.clone(), (*v)?)))
                .collect(),
        }
        .write(dir);
        if self.session.args.json {
            return Ok(Output::json(&push_json(&report)));
        }
        let mut text = self.push_text(&report);
        if let Err(why) = recorded {
            text += &format!("note: {why}: the next push from this folder needs --force\n");
        }
        Ok(Output::text(text))
    }

    fn push_text(&self, report: &PushReport) -> String {
        let count = |change: Change| report.prompts.iter().filter(|p| p.1 == change).count();
        let mut out = format!(
            "pushed {} to {}: {} added, {} changed, {} restored, {} removed, {} unchanged\n",
            report.pack,
            self.store.location(),
            count(Change::Added),
            count(Change::Changed),
            count(Change::Restored),
            count(Change::Removed),
            count(Change::Unchanged),
        );
        for (id, change, version) in &report.prompts {
            if *change == Change::Unchanged {
                continue;
            }
            let version = version.map_or("-".to_owned(), |v| format!("v{v}"));
            out += &format!("  {:<9} {id} {version}\n", change.as_str());
        }
        if !report.not_stored.is_empty() {
            const SHOWN: usize = 10;
            let mut names: Vec<&str> = report
                .not_stored
                .iter()
                .take(SHOWN)
                .map(String::as_str)
                .collect();
            let more = report.not_stored.len().saturating_sub(SHOWN);
            let more = format!("and {more} more");
            if report.not_stored.len() > SHOWN {
                names.push(&more);
            }
            out += &format!(
                "not stored, outside the pack format (a pull does not give them back): {}\n",
                names.join(", ")
            );
        }
        out
    }

    async fn pull(
        &self,
        dir: &std::path::Path,
        label: &str,
        revision: Option<&RevisionRef>,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let (revision, entries) = match revision {
            Some(wanted) => {
                let held = self.store.revision(&pack, &label, wanted.clone()).await;
                let held = held.map_err(failure)?;
                let files = self
                    .store
                    .checkout_revision(&pack, &label, held.number)
                    .await;
                (Some(held.number), files.map(|files| (files, held.entries)))
            }
            None => (None, self.store.checkout_versions(&pack, &label).await),
        };
        let (files, entries) = entries.map_err(failure)?;
        files.write(dir).map_err(failure)?;
        let location = self.store.location();
        Base {
            store: location,
            pack: pack.clone(),
            entries,
        }
        .write(dir)
        .map_err(Failure::usage)?;
        if self.session.args.json {
            let paths: Vec<&str> = files.iter().map(|(p, _)| p).collect();
            return Ok(Output::json(&json!({
                "pack": pack, "label": label.as_str(), "revision": revision, "dir": dir, "files": paths,
            })));
        }
        let at = revision.map_or(label.to_string(), |n| format!("{label} r{n}"));
        Ok(Output::text(format!(
            "wrote {pack} at {at} to {}: {} files\n",
            dir.display(),
            files.len()
        )))
    }

    async fn log(&self, id: &str) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let versions = self.store.log(&pack, id).await.map_err(failure)?;
        if self.session.args.json {
            let list: Vec<Value> = versions.iter().map(version_json).collect();
            return Ok(Output::json(
                &json!({ "pack": pack, "id": id, "versions": list }),
            ));
        }
        let paint = self.paint();
        let mut out = paint.heading(&format!("{id} in {pack}")) + "\n";
        for v in &versions {
            let labels = if v.labels.is_empty() {
                String::new()
            } else {
                format!("  [{}]", v.labels.join(", "))
            };
            let message = if v.message.is_empty() {
                String::new()
            } else {
                format!("  {}", v.message)
            };
            out += &format!(
                "  v{:<4} {}  {}  {}{labels}{message}\n",
                v.number,
                paint.dim(&v.created_at.to_string()),
                paint.dim(&v.digest[..12]),
                v.author,
            );
        }
        Ok(Output::text(out))
    }

    async fn label(
        &self,
        id: &str,
        label: &str,
        version: u64,
        expect: &str,
        reason: &str,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let expect = match expect {
            "none" => None,
            v => match v.parse::<VersionRef>() {
                Ok(VersionRef::Number(n)) => Some(n),
                _ => {
                    return Err(Failure::usage(format!(
                        "--expect {v}: expected the version number the label points at now, or `none` for a new label"
                    )));
                }
            },
        };
        let moved = self
            .store
            .move_label(&pack, id, &label, version, expect, &self.actor()?, reason)
            .await
            .map_err(failure)?;
        self.moves_and_contracts(&pack, &[moved]).await
    }

    async fn rollback(&self, id: &str, label: &str, reason: &str) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let moved = self
            .store
            .rollback(&pack, id, &label, &self.actor()?, reason)
            .await
            .map_err(failure)?;
        self.moves_and_contracts(&pack, &[moved]).await
    }

    async fn release(
        &self,
        from: &str,
        to: &str,
        expect: Option<u64>,
        reason: &str,
    ) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let from = Label::new(from).map_err(failure)?;
        let to = Label::new(to).map_err(failure)?;
        let moved = self
            .store
            .release(&pack, &from, &to, expect, &self.actor()?, reason)
            .await
            .map_err(failure)?;
        if moved.is_empty() && !self.session.args.json {
            return Ok(Output::text(format!(
                "{to} already points where {from} does: nothing moved\n"
            )));
        }
        self.moves_and_contracts(&pack, &moved).await
    }

    /// The moves as the tool prints them, then what each changes in its
    /// prompt's contract, one line per change:
    /// ``contract of auditor v1 -> v2: breaking: output `audit_verdict`, property `verdict` removed``.
    async fn moves_and_contracts(
        &self,
        pack: &str,
        moves: &[LabelMove],
    ) -> Result<Output, Failure> {
        let mut output = self.moves(moves);
        if self.session.args.json {
            return Ok(output);
        }
        for m in moves.iter().filter(|m| !m.prompt.starts_with('@')) {
            let (Some(from), Some(to)) = (m.from, m.to) else {
                continue;
            };
            let (a, b) = (VersionRef::Number(from), VersionRef::Number(to));
            let changes = self
                .store
                .contract_changes(pack, &m.prompt, &a, &b)
                .await
                .map_err(failure)?;
            for change in changes {
                output.stdout.push_str(&format!(
                    "contract of {} v{from} -> v{to}: {change}\n",
                    m.prompt
                ));
            }
        }
        Ok(output)
    }

    async fn sign(&self, label: &str, revision: Option<&RevisionRef>) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let actor = self.actor()?;
        if actor.signer().is_none() {
            return Err(Failure::usage(
                "`store sign` needs --sign KEYFILE, the releaser's private key",
            ));
        }
        let wanted = match revision {
            Some(wanted) => wanted.clone(),
            None => match self
                .store
                .newest_revision(&pack, &label)
                .await
                .map_err(failure)?
            {
                Some((newest, _)) => RevisionRef::Number(newest),
                None => {
                    return Err(failure(Error::new(
                        ErrorKind::UnknownVersion,
                        format!("label `{label}` of pack `{pack}` has no revision to sign"),
                    )));
                }
            },
        };
        let (number, fingerprint) = self
            .store
            .sign_revision(&pack, &label, wanted, &actor)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(&json!({
                "pack": pack, "label": label.as_str(), "revision": number, "fingerprint": fingerprint,
            })));
        }
        Ok(Output::text(format!(
            "{pack} {label} r{number}: signed by {fingerprint}\n"
        )))
    }

    async fn name_key(&self, fingerprint: &str, name: &str) -> Result<Output, Failure> {
        let actor = self.actor()?;
        self.store
            .name_signing_key(fingerprint, name, &actor)
            .await
            .map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(
                &json!({ "fingerprint": fingerprint, "name": name }),
            ));
        }
        Ok(Output::text(format!("{fingerprint} is named `{name}`\n")))
    }

    async fn protect(&self, label: &str, on: bool) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let label = Label::new(label).map_err(failure)?;
        let actor = self.actor()?;
        if !actor.may(Permission::Admin) {
            return Err(Failure::usage(format!(
                "changing the protection of label `{label}` needs --admin"
            )));
        }
        self.store
            .protect(&pack, &label, on, &actor)
            .await
            .map_err(failure)?;
        let protected = self.store.protected_labels(&pack).await.map_err(failure)?;
        if self.session.args.json {
            return Ok(Output::json(
                &json!({ "pack": pack, "protected": protected }),
            ));
        }
        let state = if on {
            "protected"
        } else {
            "no longer protected"
        };
        Ok(Output::text(format!(
            "label `{label}` of {pack} is {state}\n"
        )))
    }

    /// The label history, oldest first, a revision at a time: a change
    /// that moved one entry is one line, one that moved several (a
    /// release, a push, a pack rollback) a line and then its moves.
    async fn history(&self, id: Option<&str>) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let moves = self.store.history(&pack, id).await.map_err(failure)?;
        if self.session.args.json {
            return Ok(self.moves(&moves));
        }
        let paint = self.paint();
        let show = |v: Option<u64>| v.map_or("-".to_owned(), |n| format!("v{n}"));
        let revision = |m: &LabelMove| m.revision.map_or(String::new(), |n| format!(" r{n}"));
        let mut out = String::new();
        for change in moves.chunk_by(LabelMove::same_change) {
            let first = &change[0];
            let what = match change {
                [m] => format!(
                    "{} {}{}: {} -> {}",
                    m.prompt,
                    m.label,
                    revision(m),
                    show(m.from),
                    show(m.to)
                ),
                _ => format!(
                    "{}{}: {} entries",
                    first.label,
                    revision(first),
                    change.len()
                ),
            };
            let line = format!(
                "{}  {what}  {}  {}",
                paint.dim(&first.at.to_string()),
                first.actor,
                paint.dim(&first.reason),
            );
            out += line.trim_end();
            out.push('\n');
            if change.len() > 1 {
                for m in change {
                    out += &format!("  {}: {} -> {}\n", m.prompt, show(m.from), show(m.to));
                }
            }
        }
        Ok(Output::text(out))
    }

    /// Label moves, one a line: when, prompt, label, from -> to, who, why.
    fn moves(&self, moves: &[LabelMove]) -> Output {
        if self.session.args.json {
            return Output::json(&Value::Array(moves.iter().map(move_json).collect()));
        }
        let paint = self.paint();
        let show = |v: Option<u64>| v.map_or("-".to_owned(), |n| format!("v{n}"));
        let out: String = moves
            .iter()
            .map(|m| {
                let line = format!(
                    "{}  {} {}: {} -> {}  {}  {}",
                    paint.dim(&m.at.to_string()),
                    m.prompt,
                    m.label,
                    show(m.from),
                    show(m.to),
                    m.actor,
                    paint.dim(&m.reason),
                );
                line.trim_end().to_owned() + "\n"
            })
            .collect();
        Output::text(out)
    }

    async fn diff(&self, id: &str, a: &str, b: &str, tag: Option<&str>) -> Result<Output, Failure> {
        let pack = self.pack().await?;
        let (a_ref, b_ref) = (version_ref(a)?, version_ref(b)?);
        let locale = tag.map(Locale::parse).transpose().map_err(Failure::from)?;
        let diff = self
            .store
            .diff(&pack, id, &a_ref, &b_ref, locale.as_ref())
            .await
            .map_err(failure)?;
        let (a_num, b_num) = (diff.from, diff.to);
        if diff.files.is_empty() {
            let tag = tag.unwrap_or_default();
            return Err(Failure::usage(format!(
                "`{id}` has no file for locale `{tag}` in v{a_num} or v{b_num}"
            )));
        }
        let mut output = if self.session.args.json {
            let files: Vec<Value> = diff
                .files
                .iter()
                .map(|f| json!({ "path": f.path, "changed": f.changed, "diff": f.diff }))
                .collect();
            Output::json(&json!({
                "id": id, "from": a_num, "to": b_num, "files": files, "contract": diff.contract,
            }))
        } else if !diff.changed() {
            let compared = match (&locale, diff.files.as_slice()) {
                (Some(_), [one]) => format!("the same {}", one.path),
                _ => "the same files".to_owned(),
            };
            Output::text(format!("{id}: v{a_num} and v{b_num} have {compared}\n"))
        } else {
            let paint = self.paint();
            let mut text: String = diff.files.iter().map(|f| paint.diff(&f.diff)).collect();
            text.push_str(&contract_lines(&diff.contract));
            Output::text(text)
        };
        output.code = crate::commands::diff::exit_code(diff.changed());
        Ok(output)
    }
}

/// What a version changes in the prompt's contract, one line per change,
/// breaking ones first said so: `contract: breaking: tool `x` removed`.
fn contract_lines(changes: &[promptreg::ContractChange]) -> String {
    changes.iter().map(|c| format!("contract: {c}\n")).collect()
}

/// The local user, who may write, and administer with `--admin`: named
/// `author` when given, else by `$USER` (or `USERNAME`, `LOGNAME`), else by
/// the process's login name, else `unknown`.
/// The local user as an admin, for `what`, when `--admin` was given.
pub(super) fn admin_user(admin: bool, what: &str) -> Result<Actor, Failure> {
    match admin {
        true => Ok(local_user(None, true)),
        false => Err(Failure::usage(format!("{what} needs --admin"))),
    }
}

pub(super) fn local_user(author: Option<&str>, admin: bool) -> Actor {
    let given = author
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned);
    let name = given
        .or_else(|| {
            ["USER", "USERNAME", "LOGNAME"]
                .iter()
                .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        })
        .or_else(|| whoami::fallible::username().ok().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    let mut permissions = vec![Permission::Write];
    if admin {
        permissions.push(Permission::Admin);
    }
    Actor::new(name, permissions)
}

/// The releaser's key at `path`, decrypted with
/// `PROMPTREG_SIGNING_PASSPHRASE` when it is encrypted.
fn signing_key(path: &std::path::Path) -> Result<promptreg::signing::SigningKey, Failure> {
    let passphrase = std::env::var("PROMPTREG_SIGNING_PASSPHRASE").ok();
    promptreg::signing::SigningKey::from_file(path, passphrase.as_deref()).map_err(Failure::from)
}

/// A version number (`3`, or `v3` as `store log` prints it) or a label.
fn version_ref(text: &str) -> Result<VersionRef, Failure> {
    let number = text
        .strip_prefix('v')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    number.unwrap_or(text).parse().map_err(failure)
}

fn push_json(report: &PushReport) -> Value {
    let prompts: Vec<Value> = report
        .prompts
        .iter()
        .map(|(id, change, version)| json!({ "id": id, "change": change.as_str(), "version": version }))
        .collect();
    json!({
        "pack": report.pack,
        "versions_written": report.versions_written(),
        "prompts": prompts,
        "not_stored": report.not_stored,
    })
}

fn version_json(v: &VersionInfo) -> Value {
    json!({
        "version": v.number,
        "digest": v.digest,
        "author": v.author,
        "message": v.message,
        "created_at": v.created_at.to_string(),
        "labels": v.labels,
    })
}

fn move_json(m: &LabelMove) -> Value {
    json!({
        "id": m.prompt,
        "label": m.label,
        "from": m.from,
        "to": m.to,
        "actor": m.actor,
        "at": m.at.to_string(),
        "reason": m.reason,
        "revision": m.revision,
    })
}

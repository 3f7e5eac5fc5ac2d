// The imports and types every file of `ops/` shares. The operations are
// written once in SQL both databases accept and compiled once per backend:
// `backend/mod.rs` includes these files in a module that defines `Db` (the
// sqlx database) and `DIALECT`.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{Pool, Transaction};

use crate::error::{Error, ErrorKind};
use crate::events::{Event, EventKind, ReleasedPrompt, Written};
use crate::files::Entry;
use crate::model::{
    Actor, Change, EntryVersion, Label, LabelMove, Permission, PushReport, Revision, RevisionCause,
    RevisionChange, RevisionRef, RevisionSignature, Timestamp, VersionInfo, VersionRef,
};
use crate::backend::{EVENTS_CHANNEL, OpError};
use crate::schema::{MIGRATIONS, REVISIONS_SINCE, SCHEMA_TABLE, SCHEMA_VERSION};

type Tx = Transaction<'static, Db>;

/// Every file of every entry at label `$2` of pack `$1`: entry, path,
/// content.
const LABEL_FILES: &str = "SELECT l.entry, f.path, f.content FROM labels l \
     JOIN versions v ON v.pack_id = l.pack_id AND v.entry = l.entry AND v.number = l.number \
     JOIN version_files f ON f.version_id = v.version_id \
     WHERE l.pack_id = $1 AND l.label = $2";

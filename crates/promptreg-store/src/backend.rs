//! The two backends: the operations of `ops.rs` (and `ops_events.rs`,
//! `ops_keys.rs`), compiled for each.

/// SQLite: one file, WAL mode.
pub(crate) mod sqlite {
    type Db = sqlx::Sqlite;
    const DIALECT: crate::schema::Dialect = crate::schema::SQLITE;
    include!("ops.rs");
    include!("ops_events.rs");
    include!("ops_keys.rs");
}

/// PostgreSQL: a server shared by several processes.
pub(crate) mod postgres {
    type Db = sqlx::Postgres;
    const DIALECT: crate::schema::Dialect = crate::schema::POSTGRES;
    include!("ops.rs");
    include!("ops_events.rs");
    include!("ops_keys.rs");
}

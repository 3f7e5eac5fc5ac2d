//! Where a store lives: a SQLite file or a PostgreSQL URL, and how it is
//! shown (a password never reaches a message or a log).

use std::fmt;
use std::path::PathBuf;

/// The default store: a SQLite file in the current folder.
pub const DEFAULT_DATABASE: &str = "promptreg.db";

/// A database named by the user: `postgres://…`, `sqlite:PATH`, or a path.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A SQLite file; the URL when one was given (it may carry `mode=ro`).
    Sqlite { path: PathBuf, url: Option<String> },
    /// A PostgreSQL URL.
    Postgres(String),
}

impl Location {
    pub(crate) fn parse(database: &str) -> Location {
        if database.starts_with("postgres://") || database.starts_with("postgresql://") {
            return Location::Postgres(database.to_owned());
        }
        match database.strip_prefix("sqlite:") {
            Some(rest) => {
                let rest = rest.strip_prefix("//").unwrap_or(rest);
                let path = rest.split('?').next().unwrap_or(rest);
                Location::Sqlite {
                    path: PathBuf::from(path),
                    url: Some(database.to_owned()),
                }
            }
            None => Location::Sqlite {
                path: PathBuf::from(database),
                url: None,
            },
        }
    }
}

/// The location with any password replaced by `***`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite { path, .. } => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

/// `url` with its password replaced by `***`; an unparsable URL is hidden
/// whole after its scheme, since it could hold a password anywhere.
pub(crate) fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            for (key, _) in parsed.query_pairs() {
                if key == "password" {
                    return format!("{}://***", parsed.scheme());
                }
            }
            parsed.to_string()
        }
        Err(_) => {
            let scheme = url.split(':').next().unwrap_or("database");
            format!("{scheme}://***")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let loc = Location::parse("postgres://app:s3cret@db.internal:5432/prompts");
        assert_eq!(
            loc.to_string(),
            "postgres://app:***@db.internal:5432/prompts"
        );
        assert!(!format!("{loc:?}").contains("s3cret"));
        assert_eq!(redact("postgres://h/db?password=s3cret"), "postgres://***");
        assert_eq!(redact("postgres://%zz:s3cret@"), "postgres://***");
    }

    #[test]
    fn paths_and_sqlite_urls_are_files() {
        assert_eq!(
            Location::parse("promptreg.db"),
            Location::Sqlite {
                path: "promptreg.db".into(),
                url: None
            }
        );
        let Location::Sqlite { path, .. } = Location::parse("sqlite://data/p.db?mode=ro") else {
            panic!("not sqlite");
        };
        assert_eq!(path, PathBuf::from("data/p.db"));
    }
}

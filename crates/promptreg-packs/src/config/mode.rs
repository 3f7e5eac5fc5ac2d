//! [`Mode`]: how a user's block combines with the application's prompt.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a user's prompt block combines with the application's prompt, and
/// which of the user's files are consulted.
///
/// An `inline` setting wins in every mode, `off` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The block replaces the application's body. Pinned blocks stay.
    Override,
    /// The application's body, then the block. The local file wins over
    /// the global one.
    Append,
    /// Like `append`: the local file wins over the global one (the default).
    #[default]
    GlobalLocal,
    /// Only the local file is consulted; the global one is never read.
    Local,
    /// The global and the local file, both, global first.
    GlobalLocalMerge,
    /// No file is injected, even if files exist.
    Off,
}

impl Mode {
    /// Every mode, in documentation order.
    pub const ALL: [Mode; 6] = [
        Mode::Override,
        Mode::Append,
        Mode::GlobalLocal,
        Mode::Local,
        Mode::GlobalLocalMerge,
        Mode::Off,
    ];

    /// The mode's name in settings files.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Override => "override",
            Mode::Append => "append",
            Mode::GlobalLocal => "global-local",
            Mode::Local => "local",
            Mode::GlobalLocalMerge => "global-local-merge",
            Mode::Off => "off",
        }
    }

    /// The valid names, quoted and comma-separated, for messages.
    pub(crate) fn valid_names() -> String {
        let names: Vec<String> = Mode::ALL.iter().map(|m| format!("`{m}`")).collect();
        names.join(", ")
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown mode name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode(pub String);

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid mode `{}`; valid modes are {}",
            crate::diagnostic::quoted(&self.0),
            Mode::valid_names()
        )
    }
}

impl std::error::Error for UnknownMode {}

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, UnknownMode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(mode.as_str().parse::<Mode>(), Ok(mode));
        }
        assert_eq!(Mode::default(), Mode::GlobalLocal);
    }

    #[test]
    fn an_unknown_mode_lists_the_valid_ones() {
        let err = "replace".parse::<Mode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid mode `replace`; valid modes are `override`, `append`, `global-local`, `local`, `global-local-merge`, `off`"
        );
    }
}

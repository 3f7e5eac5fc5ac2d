//! [`FileLimits`]: how many files a push may hold, checked before a pack is
//! built from them.

use promptreg::pack::Pack;

use crate::error::{Error, ErrorKind};
use crate::files::PackFiles;

/// The most files a version may hold: per prompt (its default and locale
/// variants) and per pack (the manifest, snippets and every prompt's
/// files). A push over either is refused and writes nothing.
///
/// Every server and follower builds a pack again from a label's bundle,
/// in time proportional to its files: the limits keep one push from making
/// that slow for everyone. The defaults are far above real packs:
///
/// - 1,000 files per prompt: CLDR knows about 1,000 locales (a language,
///   or a language with a region), so a prompt translated into every
///   locale there is still fits;
/// - 10,000 files per pack: the largest configuration the benchmarks load
///   (BENCHMARKS.md, section 1.7) loads in about 100 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// The most files of one prompt (1,000).
    pub per_prompt: usize,
    /// The most files of one pack (10,000).
    pub per_pack: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            per_prompt: 1_000,
            per_pack: 10_000,
        }
    }
}

impl FileLimits {
    /// Refuses `files` (of the pack `what` names) past
    /// [`per_pack`](Self::per_pack); cheap, so it runs before the files are
    /// built into a pack.
    pub(crate) fn check_pack(&self, what: &str, files: &PackFiles) -> Result<(), Error> {
        match files.len() > self.per_pack {
            true => Err(too_many(
                what.to_owned(),
                files.len(),
                self.per_pack,
                "per pack",
                "--max-files-per-pack",
            )),
            false => Ok(()),
        }
    }

    /// Refuses a prompt of more than [`per_prompt`](Self::per_prompt)
    /// files.
    pub(crate) fn check_prompt(&self, prompt: &str, files: usize) -> Result<(), Error> {
        match files > self.per_prompt {
            true => Err(too_many(
                format!("prompt `{prompt}`"),
                files,
                self.per_prompt,
                "per prompt",
                "--max-files-per-prompt",
            )),
            false => Ok(()),
        }
    }

    /// Refuses a pack with a prompt of too many files, naming the first.
    pub(crate) fn check_prompts(&self, pack: &Pack) -> Result<(), Error> {
        for prompt in pack.prompts() {
            let files = prompt.variants().count() + usize::from(prompt.default_file().is_some());
            self.check_prompt(prompt.id().as_str(), files)?;
        }
        Ok(())
    }
}

fn too_many(what: String, count: usize, limit: usize, per: &str, flag: &str) -> Error {
    let files = if limit == 1 { "file" } else { "files" };
    Error::new(
        ErrorKind::TooManyFiles,
        format!(
            "{what} has {count} files, more than the limit of {limit} {files} {per}: nothing was written; \
             remove files no render uses, or raise the limit ({flag})"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_at_the_limit_passes_and_one_more_is_refused_with_both_numbers() {
        let limits = FileLimits {
            per_prompt: 2,
            per_pack: 3,
        };
        assert!(limits.check_prompt("greeting", 2).is_ok());
        let err = limits.check_prompt("greeting", 3).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooManyFiles);
        assert!(
            err.to_string().contains(
                "prompt `greeting` has 3 files, more than the limit of 2 files per prompt"
            ),
            "{err}"
        );
        let files: PackFiles = (0..4)
            .map(|n| (format!("defaults/f{n}.md"), Vec::new()))
            .collect();
        let err = limits.check_pack("pack `demo`", &files).unwrap_err();
        assert!(
            err.to_string()
                .contains("pack `demo` has 4 files, more than the limit of 3 files per pack"),
            "{err}"
        );
    }
}

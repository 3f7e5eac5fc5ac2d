//! `resolve_prompt` on generated files: any settings and file contents give
//! a result or an error, and the result follows the rule's shape.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use promptreg::config::{Mode, PromptSettings, ResolveOptions, Source, resolve_prompt};

#[derive(Debug, Arbitrary)]
struct Input {
    key: String,
    mode: Option<u8>,
    inline: Option<String>,
    file: Option<String>,
    global: Option<Vec<u8>>,
    local: Option<Vec<u8>>,
    default: String,
}

fuzz_target!(|input: Input| {
    let root = tempfile::tempdir().unwrap();
    let (home, cwd) = (root.path().join("home"), root.path().join("cwd"));
    let dir = ".p";
    for (base, contents) in [(&home, &input.global), (&cwd, &input.local)] {
        std::fs::create_dir_all(base.join(dir)).unwrap();
        if let Some(bytes) = contents {
            std::fs::write(base.join(dir).join("auditor.md"), bytes).unwrap();
        }
    }
    let settings = PromptSettings {
        mode: input.mode.map(|m| Mode::ALL[m as usize % Mode::ALL.len()]),
        inline: input.inline,
        file: input.file.filter(|f| !f.contains('\0')),
    };
    let options = ResolveOptions::new(dir, &home);
    let key = if input.key.len() % 2 == 0 {
        "auditor"
    } else {
        input.key.as_str()
    };
    if let Ok(resolved) = resolve_prompt(key, &settings, &cwd, &input.default, &options) {
        match resolved.source {
            Source::None => assert_eq!(resolved.final_text, input.default),
            _ => assert!(resolved.injected.is_some()),
        }
    }
});

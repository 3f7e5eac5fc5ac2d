//! The manifest and front matter parsers: any manifest and any prompt file
//! load or give diagnostics, never a panic.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use promptreg::PromptRegistry;
use promptreg::pack::Pack;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    manifest: &'a str,
    /// Used with a valid manifest, so front matter gets fuzzed deeply.
    prompt: &'a str,
    variant: &'a str,
}

const MANIFEST: &str = "name = \"fuzz\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".f\"\n";

fuzz_target!(|input: Input<'_>| {
    let _ = Pack::from_files(
        "fuzz",
        [
            ("promptreg.toml", input.manifest),
            ("defaults/p.md", input.prompt),
        ],
    );
    let files = [
        ("promptreg.toml", MANIFEST),
        ("defaults/p.md", input.prompt),
        ("defaults/p.ja.md", input.variant),
    ];
    if let Ok(pack) = Pack::from_files("fuzz", files) {
        let registry = PromptRegistry::new();
        pack.install(&registry).unwrap();
        let _ = registry.render_in("p", &serde_json::json!({}), "ja");
        let _ = registry.render_messages_in("p", &serde_json::json!({}), "ja", &[]);
    }
});

//! Template rendering: any template with any context renders or fails with
//! an error, within the fuel limit, never a panic or a hang.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use promptreg::PromptRegistry;
use promptreg::pack::Pack;

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    template: &'a str,
    context: &'a str,
}

const MANIFEST: &str = "name = \"fuzz\"\nkeys = [\"p\"]\n[user]\nprompts_dir = \".f\"\n";

fuzz_target!(|input: Input<'_>| {
    let file = format!("---\ntemplate: true\n---\n{}", input.template);
    let Ok(pack) = Pack::from_files(
        "fuzz",
        [
            ("promptreg.toml", MANIFEST),
            ("defaults/p.md", file.as_str()),
        ],
    ) else {
        return;
    };
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    let context: serde_json::Value = serde_json::from_str(input.context).unwrap_or_default();
    let _ = registry.render("p", &context);
});

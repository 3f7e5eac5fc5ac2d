//! The settings parser and validator: any text gives diagnostics, never a
//! panic, and every diagnostic points inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptreg::config::{ConfigSpec, check_settings};

fuzz_target!(|text: &str| {
    let spec = ConfigSpec::builder("fuzz")
        .keys(["auditor", "goal-running", "planner.system"])
        .key_pattern("tool-*")
        .prompts_dir(".fuzz/prompts")
        .legacy_alias("auditorPrompt", "prompts.auditor.inline")
        .legacy_alias("auditorPromptMode", "prompts.auditor.mode")
        .build()
        .unwrap();
    for d in check_settings(&spec, "settings.json", text) {
        if let Some(span) = &d.span {
            assert!(span.start <= span.end && span.end <= text.len(), "{d:?}");
        }
        let _ = d.to_string();
    }
});

//! Id validation: accepted ids are safe file names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptreg::PromptId;

fuzz_target!(|id: &str| {
    if let Ok(id) = PromptId::new(id) {
        let s = id.as_str();
        assert!(!s.is_empty() && s.len() <= 128);
        assert!(!s.contains("..") && !s.contains('/') && !s.contains('\\'));
        assert!(
            s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        );
        assert!(s.as_bytes()[0].is_ascii_alphanumeric());
    }
});

//! Locale parsing and the fallback chain: any tag parses or is refused; a
//! parsed tag normalises to itself and its chain starts with its key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptreg::Locale;

fuzz_target!(|tag: &str| {
    if let Ok(locale) = Locale::parse(tag) {
        let again = Locale::parse(locale.as_str()).expect("a normalised tag parses");
        assert_eq!(again.as_str(), locale.as_str());
        assert!(locale.chain().count() >= 1);
        assert!(
            locale.chain().all(|key| Locale::parse(key).is_ok()),
            "{locale:?}"
        );
    }
});

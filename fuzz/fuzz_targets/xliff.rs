//! The XLIFF reader: any text reads or is refused with an error, never a
//! panic; a catalog read is written out again without panicking.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use promptreg::l10n::{Catalog, Format};

fuzz_target!(|text: &str| {
    // What decides the format is the first character: make it XML.
    let text = format!("<{text}");
    if let Ok(catalog) = Catalog::read(&text, Path::new("fuzz.xlf")) {
        let _ = catalog.write(Format::Xliff);
    }
});

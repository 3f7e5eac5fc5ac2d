//! The PO reader: any text reads or is refused with an error, never a
//! panic, whatever its lines' length; a catalog read is written out and
//! reads back with the same units.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use promptreg::l10n::{Catalog, Format};

fuzz_target!(|text: &str| {
    let Ok(catalog) = Catalog::read(text, Path::new("fuzz.po")) else {
        return;
    };
    if text.trim_start_matches('\u{feff}').trim_start().starts_with('<') {
        return;
    }
    let again = Catalog::read(&catalog.write(Format::Po), Path::new("again.po"))
        .expect("a catalog written as PO reads back");
    assert_eq!((&again.pack, &again.locale), (&catalog.pack, &catalog.locale));
    assert_eq!(again.units.len(), catalog.units.len());
    for (read, written) in again.units.iter().zip(&catalog.units) {
        assert_eq!(read.key(), written.key());
        assert_eq!(read.source, written.source);
        assert_eq!(read.target, written.target);
    }
});

//! Baked bundles and signatures from arbitrary bytes: reading never
//! panics, and a bundle that reads is checked against a trusted key
//! without panicking either (it is not signed by it: the fuzzer cannot
//! forge an Ed25519 signature).
#![no_main]

use libfuzzer_sys::fuzz_target;
use promptreg::remote::BakedBundle;
use promptreg::signing::{Signature, SigningKey, TrustedKeys, test_key_openssh};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = Signature::from_header(&text);
    let _ = Signature::from_armored(&text);
    let mut trusted = TrustedKeys::new();
    let _ = trusted.add_openssh(&text, "fuzz");
    let key = SigningKey::from_openssh(&test_key_openssh(1), None, "fuzz.key").unwrap();
    trusted.add_openssh(&key.public_key_openssh(), "fuzz").unwrap();
    if let Ok(baked) = BakedBundle::from_slice(data, "fuzz.bundle") {
        assert_eq!(baked.pack().name(), baked.pack_name());
        assert!(baked.verify(&trusted).is_err());
    }
});

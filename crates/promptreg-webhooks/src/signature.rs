//! The Standard Webhooks signature (standardwebhooks.com): HMAC-SHA256
//! of `id.timestamp.body` with each secret's bytes, written
//! `v1,BASE64`, several separated by spaces.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret in its written form.
pub const SECRET_PREFIX: &str = "whsec_";

/// A secret that is not `whsec_` and base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSecret;

impl std::fmt::Display for BadSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a webhook secret is `whsec_` and base64; this one is not (the webhooks table was changed by hand?)")
    }
}

impl std::error::Error for BadSecret {}

/// The `webhook-signature` header of message `id`, sent at `timestamp`
/// (seconds since the epoch) with `body`: one `v1,` signature per secret,
/// in the order given.
///
/// # Errors
///
/// [`BadSecret`] for a secret that is not `whsec_` and base64.
pub fn signature(
    secrets: &[String],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, BadSecret> {
    let mut out = Vec::with_capacity(secrets.len());
    for secret in secrets {
        let key = secret
            .strip_prefix(SECRET_PREFIX)
            .and_then(|b64| BASE64.decode(b64).ok())
            .filter(|key| !key.is_empty())
            .ok_or(BadSecret)?;
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| BadSecret)?;
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        out.push(format!("v1,{}", BASE64.encode(mac.finalize().into_bytes())));
    }
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the scheme's reference libraries: this secret, id,
    /// timestamp and body sign to this value.
    #[test]
    fn signs_the_reference_example() {
        let secrets = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_owned()];
        let signed = signature(
            &secrets,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn every_secret_signs_in_order() {
        let a = "whsec_".to_owned() + &BASE64.encode([1u8; 32]);
        let b = "whsec_".to_owned() + &BASE64.encode([2u8; 32]);
        let both = signature(&[a.clone(), b.clone()], "msg_1", 7, b"{}").unwrap();
        let first = signature(&[a], "msg_1", 7, b"{}").unwrap();
        let second = signature(&[b], "msg_1", 7, b"{}").unwrap();
        assert_eq!(both, format!("{first} {second}"));
        assert_ne!(first, second);
    }

    #[test]
    fn a_secret_not_in_the_written_form_is_refused() {
        for bad in ["prk_abc", "whsec_", "whsec_!!!"] {
            assert_eq!(
                signature(&[bad.into()], "m", 1, b""),
                Err(BadSecret),
                "{bad}"
            );
        }
    }
}

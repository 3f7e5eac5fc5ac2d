//! Keys and signatures: the releaser's private key, which signs; the
//! public keys a follower trusts, which verify; and the signatures, as
//! OpenSSH writes them (`-----BEGIN SSH SIGNATURE-----`).

use std::fmt;
use std::path::Path;

use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};

use super::NAMESPACE;
use super::statement::Statement;
use crate::error::{Error, ErrorKind};

const PEM_BEGIN: &str = "-----BEGIN SSH SIGNATURE-----";
const PEM_END: &str = "-----END SSH SIGNATURE-----";
/// OpenSSH wraps a signature's base64 at 70 columns and reads it so.
const PEM_WIDTH: usize = 70;

fn signature_error(detail: impl Into<String>) -> Error {
    Error::new(ErrorKind::Signature, detail)
}

/// The releaser's private key: an OpenSSH Ed25519 key
/// (`ssh-keygen -t ed25519`), decrypted with its passphrase when it has
/// one. Never printed.
#[derive(Clone)]
pub struct SigningKey {
    key: PrivateKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// The key in the file at `path`, decrypted with `passphrase` when it
    /// is encrypted.
    pub fn from_file(path: &Path, passphrase: Option<&str>) -> Result<SigningKey, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            signature_error(format!(
                "cannot read the signing key {}: {e}",
                path.display()
            ))
        })?;
        SigningKey::from_openssh(&text, passphrase, &path.display().to_string())
    }

    /// The key written in `text` (OpenSSH's private key format), named
    /// `origin` in errors.
    pub fn from_openssh(
        text: &str,
        passphrase: Option<&str>,
        origin: &str,
    ) -> Result<SigningKey, Error> {
        let key = PrivateKey::from_openssh(text).map_err(|e| {
            let detail = match PublicKey::from_openssh(text.trim()) {
                Ok(_) => format!(
                    "{origin} is a public key: sign with the private key (the file without `.pub`)"
                ),
                Err(_) => format!(
                    "{origin} is not an OpenSSH private key ({e}); make one with `ssh-keygen -t ed25519 -f {origin}`"
                ),
            };
            signature_error(detail)
        })?;
        let key = match (key.is_encrypted(), passphrase) {
            (false, _) => key,
            (true, None) => {
                return Err(signature_error(format!(
                    "{origin} is encrypted: give its passphrase (PROMPTREG_SIGNING_PASSPHRASE)"
                )));
            }
            (true, Some(passphrase)) => key.decrypt(passphrase).map_err(|_| {
                signature_error(format!("the passphrase given does not decrypt {origin}"))
            })?,
        };
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(signature_error(format!(
                "{origin} is an {} key: promptreg signs with Ed25519 keys (`ssh-keygen -t ed25519`)",
                key.algorithm()
            )));
        }
        Ok(SigningKey { key })
    }

    /// The public key's fingerprint, as `ssh-keygen -l` prints it
    /// (`SHA256:…`).
    pub fn fingerprint(&self) -> String {
        self.key.fingerprint(HashAlg::Sha256).to_string()
    }

    /// The public key, one line of OpenSSH's format (`ssh-ed25519 AAAA…`).
    pub fn public_key_openssh(&self) -> String {
        self.key.public_key().to_openssh().unwrap_or_default()
    }

    /// Signs `statement`.
    pub fn sign(&self, statement: &Statement) -> Result<Signature, Error> {
        let sig = self
            .key
            .sign(NAMESPACE, HashAlg::Sha512, &statement.to_bytes())
            .map_err(|e| signature_error(format!("cannot sign {statement}: {e}")))?;
        Ok(Signature::from_sig(sig))
    }
}

/// One signature of a release, by one key.
#[derive(Clone, PartialEq, Eq)]
pub struct Signature {
    sig: SshSig,
    fingerprint: String,
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Signature").field(&self.fingerprint).finish()
    }
}

impl Signature {
    fn from_sig(sig: SshSig) -> Signature {
        let fingerprint = sig.public_key().fingerprint(HashAlg::Sha256).to_string();
        Signature { sig, fingerprint }
    }

    /// A signature as OpenSSH writes it (`-----BEGIN SSH SIGNATURE-----`,
    /// what `ssh-keygen -Y sign` makes).
    pub fn from_armored(text: &str) -> Result<Signature, Error> {
        let sig = SshSig::from_pem(text.trim()).map_err(|e| {
            signature_error(format!(
                "not an SSH signature ({e}): expected `{PEM_BEGIN}`"
            ))
        })?;
        if sig.namespace() != NAMESPACE {
            return Err(signature_error(format!(
                "an SSH signature of namespace `{}`, not `{NAMESPACE}`: it was not made for a promptreg release",
                sig.namespace()
            )));
        }
        Ok(Signature::from_sig(sig))
    }

    /// As OpenSSH writes it.
    pub fn to_armored(&self) -> String {
        self.sig.to_pem(LineEnding::LF).unwrap_or_default()
    }

    /// A signature on one line, as an HTTP header carries it: the armored
    /// form's base64, unwrapped.
    pub fn from_header(value: &str) -> Result<Signature, Error> {
        let base64 = value.trim();
        if base64.is_empty()
            || !base64
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        {
            return Err(signature_error(
                "a signature header that is not base64".to_owned(),
            ));
        }
        let mut armored = String::with_capacity(base64.len() + 80);
        armored.push_str(PEM_BEGIN);
        armored.push('\n');
        for line in base64.as_bytes().chunks(PEM_WIDTH) {
            armored.push_str(std::str::from_utf8(line).unwrap_or_default());
            armored.push('\n');
        }
        armored.push_str(PEM_END);
        Signature::from_armored(&armored)
    }

    /// The one-line form [`from_header`](Self::from_header) reads.
    pub fn to_header(&self) -> String {
        self.to_armored()
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect()
    }

    /// The signing key's fingerprint (`SHA256:…`).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// The public keys a follower trusts: a release is accepted only with a
/// valid signature by one of them.
#[derive(Debug, Clone, Default)]
pub struct TrustedKeys {
    keys: Vec<PublicKey>,
}

impl TrustedKeys {
    /// No key: nothing verifies.
    pub fn new() -> TrustedKeys {
        TrustedKeys::default()
    }

    /// Whether no key is trusted.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many keys are trusted.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Trusts the key of `line`: a public key (`ssh-ed25519 AAAA…
    /// comment`, a `.pub` file's line) or a line of an `allowed_signers`
    /// file (`name ssh-ed25519 AAAA…`). `origin` names it in errors.
    pub fn add_openssh(&mut self, line: &str, origin: &str) -> Result<(), Error> {
        let line = line.trim();
        // After a white space character, whose width may be more than a
        // byte (a non-breaking space is two).
        let start = line
            .match_indices(char::is_whitespace)
            .map(|(at, space)| at + space.len())
            .find(|after| line[*after..].trim_start().starts_with("ssh-"))
            .unwrap_or(0);
        let key = PublicKey::from_openssh(line[start..].trim_start()).map_err(|e| {
            signature_error(format!(
                "{origin}: not an OpenSSH public key ({e}); expected `ssh-ed25519 AAAA…` as in a `.pub` file"
            ))
        })?;
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(signature_error(format!(
                "{origin}: an {} key; promptreg verifies Ed25519 keys (`ssh-keygen -t ed25519`)",
                key.algorithm()
            )));
        }
        self.keys.push(key);
        Ok(())
    }

    /// Trusts every key of the file at `path`: one per line, blank lines
    /// and `#` comments skipped (a `.pub` file, an `authorized_keys` or an
    /// `allowed_signers` file).
    pub fn add_file(&mut self, path: &Path) -> Result<(), Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            signature_error(format!(
                "cannot read the trusted keys {}: {e}",
                path.display()
            ))
        })?;
        let before = self.keys.len();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.add_openssh(line, &format!("{}:{}", path.display(), n + 1))?;
        }
        if self.keys.len() == before {
            return Err(signature_error(format!(
                "{} holds no public key",
                path.display()
            )));
        }
        Ok(())
    }

    /// The fingerprint of the trusted key whose signature among
    /// `signatures` verifies `statement`; else why none does.
    pub fn verify(&self, statement: &Statement, signatures: &[Signature]) -> Result<String, Error> {
        if signatures.is_empty() {
            return Err(signature_error(format!(
                "{statement} is not signed, and this follower accepts only releases signed by a trusted key"
            )));
        }
        let message = statement.to_bytes();
        let mut by_trusted = Vec::new();
        for signature in signatures {
            let Some(key) = self
                .keys
                .iter()
                .find(|k| k.key_data() == signature.sig.public_key())
            else {
                continue;
            };
            match key.verify(NAMESPACE, &message, &signature.sig) {
                Ok(()) => return Ok(signature.fingerprint.clone()),
                Err(_) => by_trusted.push(signature.fingerprint.as_str()),
            }
        }
        let detail = if by_trusted.is_empty() {
            let untrusted: Vec<&str> = signatures.iter().map(|s| s.fingerprint.as_str()).collect();
            format!(
                "{statement} is signed only by keys not trusted here ({})",
                untrusted.join(", ")
            )
        } else {
            format!(
                "the signature by {} is not of {statement}: the files were altered after signing, or the signature is of another pack, label or revision",
                by_trusted.join(", ")
            )
        };
        Err(signature_error(detail))
    }
}

pub(super) fn test_key_openssh(seed: u8) -> String {
    let keypair = ssh_key::private::Ed25519Keypair::from_seed(&[seed; 32]);
    PrivateKey::from(keypair)
        .to_openssh(LineEnding::LF)
        .map(|text| text.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_openssh(&test_key_openssh(seed), None, "test.key").unwrap()
    }

    fn trusting(keys: &[&SigningKey]) -> TrustedKeys {
        let mut trusted = TrustedKeys::new();
        for key in keys {
            trusted
                .add_openssh(&key.public_key_openssh(), "test")
                .unwrap();
        }
        trusted
    }

    fn statement() -> Statement {
        Statement::revision("web-agent", "production", 3, "ab12")
    }

    #[test]
    fn a_signature_survives_its_one_line_form() {
        let signature = key(1).sign(&statement()).unwrap();
        let header = signature.to_header();
        assert!(!header.contains('\n'));
        assert_eq!(Signature::from_header(&header).unwrap(), signature);
        assert_eq!(
            Signature::from_armored(&signature.to_armored()).unwrap(),
            signature
        );
    }

    #[test]
    fn only_a_trusted_key_over_exactly_that_statement_verifies() {
        let (releaser, stranger) = (key(1), key(2));
        let signed = releaser.sign(&statement()).unwrap();
        let trusted = trusting(&[&releaser]);
        assert_eq!(
            trusted
                .verify(&statement(), std::slice::from_ref(&signed))
                .unwrap(),
            releaser.fingerprint()
        );

        let none = trusted.verify(&statement(), &[]).unwrap_err().to_string();
        assert!(none.contains("is not signed"), "{none}");
        let strange = stranger.sign(&statement()).unwrap();
        let untrusted = trusted
            .verify(&statement(), std::slice::from_ref(&strange))
            .unwrap_err()
            .to_string();
        assert!(untrusted.contains("not trusted here"), "{untrusted}");
        assert!(untrusted.contains(&stranger.fingerprint()), "{untrusted}");
        // Any one trusted signature among others is enough.
        assert!(
            trusted
                .verify(&statement(), &[strange, signed.clone()])
                .is_ok()
        );

        for other in [
            Statement::revision("other-pack", "production", 3, "ab12"),
            Statement::revision("web-agent", "staging", 3, "ab12"),
            Statement::revision("web-agent", "production", 2, "ab12"),
            Statement::revision("web-agent", "production", 3, "ab13"),
            Statement::split("web-agent", "production", 3, "ab12"),
        ] {
            let why = trusted
                .verify(&other, std::slice::from_ref(&signed))
                .unwrap_err()
                .to_string();
            assert!(why.contains("is not of"), "{why}");
        }
    }

    #[test]
    fn keys_are_read_from_pub_and_allowed_signers_lines_and_bad_ones_named() {
        let releaser = key(1);
        let public = releaser.public_key_openssh();
        let mut trusted = TrustedKeys::new();
        trusted
            .add_openssh(&format!("{public} releaser@example"), "a.pub")
            .unwrap();
        trusted
            .add_openssh(&format!("releaser@example {public}"), "allowed_signers:1")
            .unwrap();
        assert_eq!(trusted.len(), 2);
        let bad = trusted
            .add_openssh("ssh-ed25519 nonsense", "team.pub:3")
            .unwrap_err();
        assert!(bad.to_string().contains("team.pub:3"), "{bad}");
        let private = trusted.add_openssh(&test_key_openssh(1), "x").unwrap_err();
        assert!(
            private.to_string().contains("not an OpenSSH public key"),
            "{private}"
        );
    }

    #[test]
    fn a_key_file_that_is_not_a_private_key_says_what_it_is() {
        let public = key(1).public_key_openssh();
        let why = SigningKey::from_openssh(&public, None, "id.pub")
            .unwrap_err()
            .to_string();
        assert!(why.contains("is a public key"), "{why}");
        let why = SigningKey::from_openssh("hello", None, "notes.txt")
            .unwrap_err()
            .to_string();
        assert!(why.contains("not an OpenSSH private key"), "{why}");
        assert!(why.contains("ssh-keygen -t ed25519"), "{why}");
    }

    #[test]
    fn a_signature_of_another_namespace_or_format_is_refused() {
        let why = Signature::from_armored(
            "-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----",
        )
        .unwrap_err()
        .to_string();
        assert!(why.contains("not an SSH signature"), "{why}");
        let sig = PrivateKey::from_openssh(test_key_openssh(1))
            .unwrap()
            .sign("git", HashAlg::Sha512, b"commit")
            .unwrap();
        let pem = sig.to_pem(LineEnding::LF).unwrap();
        let why = Signature::from_armored(&pem).unwrap_err().to_string();
        assert!(why.contains("namespace `git`"), "{why}");
        assert!(Signature::from_header("not base64 !").is_err());
    }
}

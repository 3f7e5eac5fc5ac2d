//! Signed releases against OpenSSH's own tool: a signature promptreg makes
//! verifies with `ssh-keygen -Y verify`, one `ssh-keygen -Y sign` makes
//! verifies in promptreg, and keys made by `ssh-keygen` (encrypted or
//! not) load.
#![cfg(feature = "signing")]

use std::path::Path;
use std::process::{Command, Stdio};

use promptreg::signing::{NAMESPACE, Signature, SigningKey, Statement, TrustedKeys};

fn ssh_keygen(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new("ssh-keygen")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh-keygen (OpenSSH's client tools) is installed");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn new_key(dir: &Path, name: &str, passphrase: &str) {
    let made = ssh_keygen(
        dir,
        &[
            "-q", "-t", "ed25519", "-N", passphrase, "-C", "releaser", "-f", name,
        ],
        None,
    );
    assert!(made.status.success(), "{made:?}");
}

fn statement() -> Statement {
    Statement::revision(
        "web-agent",
        "production",
        12,
        "3f9c01ab3f9c01ab3f9c01ab3f9c01ab3f9c01ab3f9c01ab3f9c01ab3f9c01ab",
    )
}

#[test]
fn a_release_signed_here_verifies_with_ssh_keygen() {
    let dir = tempfile::tempdir().unwrap();
    new_key(dir.path(), "releaser", "");
    let key = SigningKey::from_file(&dir.path().join("releaser"), None).unwrap();
    let signature = key.sign(&statement()).unwrap();
    std::fs::write(dir.path().join("release.sig"), signature.to_armored()).unwrap();
    std::fs::write(
        dir.path().join("allowed_signers"),
        format!("releaser {}\n", key.public_key_openssh()),
    )
    .unwrap();
    let args = |namespace| {
        [
            "-Y",
            "verify",
            "-f",
            "allowed_signers",
            "-I",
            "releaser",
            "-n",
            namespace,
            "-s",
            "release.sig",
        ]
    };
    let verified = ssh_keygen(dir.path(), &args(NAMESPACE), Some(&statement().to_bytes()));
    assert!(verified.status.success(), "{verified:?}");
    // The same signature over another revision does not verify.
    let replayed = Statement::revision("web-agent", "production", 11, statement().digest());
    let refused = ssh_keygen(dir.path(), &args(NAMESPACE), Some(&replayed.to_bytes()));
    assert!(!refused.status.success(), "{refused:?}");
    let other_namespace = ssh_keygen(dir.path(), &args("git"), Some(&statement().to_bytes()));
    assert!(!other_namespace.status.success());
}

#[test]
fn a_release_signed_by_ssh_keygen_verifies_here() {
    let dir = tempfile::tempdir().unwrap();
    new_key(dir.path(), "releaser", "");
    std::fs::write(dir.path().join("statement"), statement().to_bytes()).unwrap();
    let signed = ssh_keygen(
        dir.path(),
        &["-Y", "sign", "-f", "releaser", "-n", NAMESPACE, "statement"],
        None,
    );
    assert!(signed.status.success(), "{signed:?}");
    let armored = std::fs::read_to_string(dir.path().join("statement.sig")).unwrap();
    let signature = Signature::from_armored(&armored).unwrap();
    let mut trusted = TrustedKeys::new();
    trusted.add_file(&dir.path().join("releaser.pub")).unwrap();
    let fingerprint = trusted.verify(&statement(), &[signature]).unwrap();
    let listed = ssh_keygen(dir.path(), &["-l", "-f", "releaser.pub"], None);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains(&fingerprint), "{listed} / {fingerprint}");
}

#[test]
fn an_encrypted_key_needs_its_passphrase_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    new_key(dir.path(), "locked", "correct horse");
    let path = dir.path().join("locked");
    let none = SigningKey::from_file(&path, None).unwrap_err().to_string();
    assert!(none.contains("is encrypted"), "{none}");
    assert!(none.contains("PROMPTREG_SIGNING_PASSPHRASE"), "{none}");
    let wrong = SigningKey::from_file(&path, Some("battery staple"))
        .unwrap_err()
        .to_string();
    assert!(wrong.contains("does not decrypt"), "{wrong}");
    let key = SigningKey::from_file(&path, Some("correct horse")).unwrap();
    assert!(key.fingerprint().starts_with("SHA256:"));
    let missing = SigningKey::from_file(&dir.path().join("absent"), None).unwrap_err();
    assert!(
        missing.to_string().contains("cannot read the signing key"),
        "{missing}"
    );
}

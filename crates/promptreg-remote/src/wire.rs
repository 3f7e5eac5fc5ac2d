//! The follow protocol, defined once for both ends: `promptreg serve`
//! writes it, a follower reads it, and the follower's disk cache keeps it.
//!
//! A label's bundle (`GET /v1/packs/{pack}/labels/{label}`) is a JSON
//! [`BundleDocument`] with headers that say where it stands, on a `200`
//! and a `304` alike ([`BundleHeaders`]):
//!
//! | header | value |
//! |---|---|
//! | [`REVISION`] `Promptreg-Revision` | the label's revision this state is, a number |
//! | [`SIGNATURE`] `Promptreg-Signature` | one header per signature of that revision: an SSH signature's base64 on one line |
//! | [`SPLIT`] `Promptreg-Split` | the split running on the label: `id=4; share=1000; digest=…` ([`SplitHeader`]) |
//!
//! The disk cache writes the same values on its first line as
//! space-separated `name=value` fields ([`BundleHeaders::to_fields`]), so
//! what a follower starts from offline is what the server said.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::split::SplitRule;

/// `Promptreg-Revision`: the label's revision a bundle is.
pub const REVISION: &str = "promptreg-revision";
/// `Promptreg-Signature`: a signature of the label's revision, one header
/// each.
pub const SIGNATURE: &str = "promptreg-signature";
/// `Promptreg-Split`: the split running on the label.
pub const SPLIT: &str = "promptreg-split";

/// A whole label of a pack: everything a client needs to render every
/// prompt of it offline. A reader ignores fields it does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleDocument {
    /// The pack.
    pub pack: String,
    /// The label.
    pub label: String,
    /// Every entry at the label, `@pack` (the manifest) first.
    pub entries: Vec<BundleEntry>,
}

/// One entry of a bundle: a prompt (or `@pack`, `@tests`) at one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleEntry {
    /// The prompt id, or `@pack` for the manifest.
    pub id: String,
    /// Its version, from 1.
    pub version: u64,
    /// Its content address.
    #[serde(default)]
    pub digest: String,
    /// Path in the pack -> text.
    pub files: BTreeMap<String, String>,
}

/// The split a label's bundle names: which subjects get the candidate, and
/// the candidate bundle's ETag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitHeader {
    /// The split's id and share.
    pub rule: SplitRule,
    /// The candidate's digest: the ETag of `GET …/labels/{label}/split/bundle`.
    pub digest: String,
}

impl SplitHeader {
    /// `id=4; share=1000; digest=3f9c…` (share in basis points).
    pub fn encode(&self) -> String {
        format!(
            "id={}; share={}; digest={}",
            self.rule.id, self.rule.basis_points, self.digest
        )
    }

    /// The header read back; `None` when a field is missing or not a
    /// number. Fields may come in any order, and unknown ones are ignored
    /// (a newer server may send more).
    pub fn decode(value: &str) -> Option<SplitHeader> {
        let field = |name: &str| {
            value
                .split(';')
                .filter_map(|part| part.trim().split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.trim())
        };
        Some(SplitHeader {
            rule: SplitRule {
                id: field("id")?.parse().ok()?,
                basis_points: field("share")?.parse().ok()?,
            },
            digest: field("digest")?.to_owned(),
        })
    }
}

/// What the headers of a bundle say about it, on a `200` and a `304`
/// alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleHeaders {
    /// `Promptreg-Revision`.
    pub revision: Option<u64>,
    /// `Promptreg-Signature`, one line each.
    pub signatures: Vec<String>,
    /// `Promptreg-Split`.
    pub split: Option<SplitHeader>,
}

impl BundleHeaders {
    /// The headers as name and value, in order: the revision, each
    /// signature, the split.
    pub fn encode(&self) -> Vec<(&'static str, String)> {
        let revision = self.revision.map(|r| (REVISION, r.to_string()));
        let signatures = self.signatures.iter().map(|s| (SIGNATURE, s.clone()));
        let split = self.split.as_ref().map(|s| (SPLIT, s.encode()));
        revision
            .into_iter()
            .chain(signatures)
            .chain(split)
            .collect()
    }

    /// The headers read back from `values`, which gives every value of a
    /// header name (lower case). A header that does not read is absent.
    pub fn decode<'a, I>(values: impl Fn(&str) -> I) -> BundleHeaders
    where
        I: IntoIterator<Item = &'a str>,
    {
        let first = |name: &str| values(name).into_iter().next();
        BundleHeaders {
            revision: first(REVISION).and_then(|v| v.trim().parse().ok()),
            signatures: values(SIGNATURE).into_iter().map(str::to_owned).collect(),
            split: first(SPLIT).and_then(SplitHeader::decode),
        }
    }

    /// The same values as `name=value` fields with no spaces inside, for
    /// the disk cache's first line: ` revision=12 signatures=a,b
    /// split=id=4;share=1000;digest=…` (each field led by a space, absent
    /// ones left out). A signature's base64 has no `,` nor space.
    pub fn to_fields(&self) -> String {
        let mut fields = String::new();
        if let Some(revision) = self.revision {
            fields += &format!(" revision={revision}");
        }
        if !self.signatures.is_empty() {
            fields += &format!(" signatures={}", self.signatures.join(","));
        }
        if let Some(split) = &self.split {
            fields += &format!(" split={}", split.encode().replace(' ', ""));
        }
        fields
    }

    /// The values of [`to_fields`](Self::to_fields) read back from
    /// space-separated fields; unknown ones are ignored.
    pub fn from_fields<'a>(fields: impl IntoIterator<Item = &'a str>) -> BundleHeaders {
        let mut headers = BundleHeaders::default();
        for field in fields {
            let Some((name, value)) = field.split_once('=') else {
                continue;
            };
            match name {
                "revision" => headers.revision = value.parse().ok(),
                "signatures" => {
                    headers.signatures = value
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect();
                }
                "split" => headers.split = SplitHeader::decode(value),
                _ => {}
            }
        }
        headers
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Digests and ETags: no space, `;` nor `,` (hex, or a quoted token).
    fn token() -> impl Strategy<Value = String> {
        "[0-9a-zA-Z\"/+_-]{0,40}"
    }

    /// A signature's base64 on one line.
    fn signature() -> impl Strategy<Value = String> {
        "[A-Za-z0-9+/]{1,60}={0,2}"
    }

    fn headers() -> impl Strategy<Value = BundleHeaders> {
        let split = (any::<u64>(), any::<u32>(), token()).prop_map(|(id, basis_points, digest)| {
            SplitHeader {
                rule: SplitRule { id, basis_points },
                digest,
            }
        });
        (
            proptest::option::of(any::<u64>()),
            proptest::collection::vec(signature(), 0..4),
            proptest::option::of(split),
        )
            .prop_map(|(revision, signatures, split)| BundleHeaders {
                revision,
                signatures,
                split,
            })
    }

    proptest! {
        #[test]
        fn headers_round_trip_through_http(headers in headers()) {
            let encoded = headers.encode();
            let decoded = BundleHeaders::decode(|name| {
                let name = name.to_owned();
                encoded.iter().filter(move |(n, _)| *n == name).map(|(_, v)| v.as_str())
            });
            prop_assert_eq!(decoded, headers);
        }

        #[test]
        fn headers_round_trip_through_the_disk_cache(headers in headers()) {
            let line = headers.to_fields();
            prop_assert!(!line.contains('\n'));
            prop_assert_eq!(BundleHeaders::from_fields(line.split(' ')), headers);
        }

        #[test]
        fn a_split_header_round_trips(id in any::<u64>(), basis_points in any::<u32>(), digest in token()) {
            let split = SplitHeader { rule: SplitRule { id, basis_points }, digest };
            prop_assert_eq!(SplitHeader::decode(&split.encode()), Some(split));
        }

        #[test]
        fn a_bundle_document_round_trips(
            pack in "[a-z-]{1,12}",
            label in "[a-z-]{1,12}",
            entries in proptest::collection::vec(
                ("[@a-z.]{1,12}", 1..u64::MAX, token(), proptest::collection::btree_map("[a-z/.]{1,12}", ".{0,40}", 0..3)),
                0..4,
            ),
        ) {
            let document = BundleDocument {
                pack,
                label,
                entries: entries
                    .into_iter()
                    .map(|(id, version, digest, files)| BundleEntry { id, version, digest, files })
                    .collect(),
            };
            let json = serde_json::to_vec(&document).unwrap();
            prop_assert_eq!(serde_json::from_slice::<BundleDocument>(&json).unwrap(), document);
        }
    }

    #[test]
    fn a_split_header_reads_fields_in_any_order_and_ignores_unknown_ones() {
        let split = SplitHeader::decode("digest=abc; weight=3; share=1000; id=4").unwrap();
        assert_eq!(
            split.rule,
            SplitRule {
                id: 4,
                basis_points: 1000
            }
        );
        assert_eq!(split.digest, "abc");
        assert_eq!(SplitHeader::decode("id=4; share=ten; digest=abc"), None);
        assert_eq!(SplitHeader::decode("id=4; share=10"), None);
    }
}

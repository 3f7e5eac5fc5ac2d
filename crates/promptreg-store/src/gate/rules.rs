//! The labels a manifest's `[release]` names (`gated`, `signed`,
//! `stable_contract`), parsed
//! once per manifest version. Every move's transaction asks them of the
//! manifests that rule its label, and those rarely change, so the parsed
//! lists are kept by the manifest's content digest (SHA-256 of its
//! bytes) in a small bounded cache: a move under an unchanged manifest
//! parses no TOML. The cache is content-addressed, so every store of the
//! process shares it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// How many manifest versions the cache holds; past it the one parsed
/// first goes.
const HELD: usize = 64;

/// One manifest's `[release]` lists, each parsed the first time it is
/// asked for.
#[derive(Debug)]
pub(crate) struct ReleaseRules {
    text: String,
    gated: OnceLock<Vec<String>>,
    signed: OnceLock<Vec<String>>,
    stable_contract: OnceLock<Vec<String>>,
}

impl ReleaseRules {
    fn new(manifest: &[u8]) -> ReleaseRules {
        ReleaseRules {
            text: String::from_utf8_lossy(manifest).into_owned(),
            gated: OnceLock::new(),
            signed: OnceLock::new(),
            stable_contract: OnceLock::new(),
        }
    }

    /// The labels `[release] gated` names (none when the manifest does not
    /// parse).
    pub(crate) fn gated(&self) -> &[String] {
        self.gated.get_or_init(|| {
            parsed();
            promptreg::pack::gated_labels(&self.text)
        })
    }

    /// The labels `[release] signed` names (none when the manifest does
    /// not parse).
    pub(crate) fn signed(&self) -> &[String] {
        self.signed.get_or_init(|| {
            parsed();
            promptreg::pack::signed_labels(&self.text)
        })
    }

    /// The labels `[release] stable_contract` names (none when the
    /// manifest does not parse).
    pub(crate) fn stable_contract(&self) -> &[String] {
        self.stable_contract.get_or_init(|| {
            parsed();
            promptreg::pack::stable_contract_labels(&self.text)
        })
    }
}

type ContentDigest = [u8; 32];

/// Parsed manifests by content digest, at most `capacity`.
pub(crate) struct RulesCache {
    capacity: usize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    by_digest: HashMap<ContentDigest, Arc<ReleaseRules>>,
    /// Oldest first.
    order: VecDeque<ContentDigest>,
}

impl RulesCache {
    pub(crate) fn new(capacity: usize) -> RulesCache {
        RulesCache {
            capacity: capacity.max(1),
            held: Mutex::default(),
        }
    }

    /// The rules of `manifest` (its bytes): the ones kept for its digest,
    /// or new ones, kept.
    pub(crate) fn rules(&self, manifest: &[u8]) -> Arc<ReleaseRules> {
        let digest: ContentDigest = Sha256::digest(manifest).into();
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rules) = held.by_digest.get(&digest) {
            return Arc::clone(rules);
        }
        if held.order.len() >= self.capacity
            && let Some(oldest) = held.order.pop_front()
        {
            held.by_digest.remove(&oldest);
        }
        let rules = Arc::new(ReleaseRules::new(manifest));
        held.order.push_back(digest);
        held.by_digest.insert(digest, Arc::clone(&rules));
        rules
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.lock().unwrap().order.len()
    }
}

static RULES: LazyLock<RulesCache> = LazyLock::new(|| RulesCache::new(HELD));

/// The `[release]` rules of `manifest` (its bytes), from the process's
/// cache.
pub(crate) fn rules(manifest: &[u8]) -> Arc<ReleaseRules> {
    RULES.rules(manifest)
}

#[cfg(test)]
thread_local! {
    /// Lists parsed on this thread.
    static PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn parsed() {
    #[cfg(test)]
    PARSED.with(|p| p.set(p.get() + 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses() -> usize {
        PARSED.with(std::cell::Cell::get)
    }

    fn manifest(gated: &str) -> String {
        format!(
            "name = \"demo\"\nkeys = [\"greeting\"]\n[user]\nprompts_dir = \".demo\"\n[release]\ngated = [\"{gated}\"]\nsigned = [\"production\"]\n"
        )
    }

    #[test]
    fn the_same_manifest_is_parsed_once_and_a_new_one_again() {
        let cache = RulesCache::new(4);
        let first = manifest("production");
        let start = parses();
        let rules = cache.rules(first.as_bytes());
        assert_eq!(rules.gated(), ["production"]);
        assert_eq!(rules.signed(), ["production"]);
        assert_eq!(parses() - start, 2);
        // The same bytes: the same lists, nothing parsed.
        let again = cache.rules(first.clone().as_bytes());
        assert!(Arc::ptr_eq(&rules, &again));
        assert_eq!(again.gated(), ["production"]);
        assert_eq!(again.signed(), ["production"]);
        assert_eq!(parses() - start, 2);
        // A new manifest version is parsed.
        let changed = cache.rules(manifest("staging").as_bytes());
        assert!(!Arc::ptr_eq(&rules, &changed));
        assert_eq!(changed.gated(), ["staging"]);
        assert_eq!(parses() - start, 3);
    }

    #[test]
    fn a_list_is_parsed_only_when_asked_for() {
        let cache = RulesCache::new(4);
        let start = parses();
        let rules = cache.rules(manifest("production").as_bytes());
        assert_eq!(parses() - start, 0);
        rules.gated();
        rules.gated();
        assert_eq!(parses() - start, 1);
    }

    #[test]
    fn a_manifest_that_does_not_parse_names_no_label() {
        let cache = RulesCache::new(4);
        let rules = cache.rules(b"[release\ngated = [");
        assert!(rules.gated().is_empty());
        assert!(rules.signed().is_empty());
    }

    #[test]
    fn the_cache_holds_at_most_its_capacity_the_oldest_going_first() {
        let cache = RulesCache::new(2);
        let kept = cache.rules(manifest("a").as_bytes());
        cache.rules(manifest("b").as_bytes());
        assert_eq!(cache.len(), 2);
        cache.rules(manifest("c").as_bytes());
        assert_eq!(cache.len(), 2);
        // `a` went first: asked again, it is parsed anew.
        let again = cache.rules(manifest("a").as_bytes());
        assert!(!Arc::ptr_eq(&kept, &again));
        assert_eq!(cache.len(), 2);
    }
}

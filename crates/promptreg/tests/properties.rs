//! Properties of id validation, locale normalisation and diagnostic
//! positions over generated input.

use promptreg::{
    Chat, LineIndex, Locale, LocaleStep, Origin, Pin, Position, Prompt, PromptId, PromptRegistry,
};
use proptest::prelude::*;

/// The id rules, written independently of the implementation.
fn is_valid_id(id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    (1..=128).contains(&id.len())
        && id.chars().all(allowed)
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !id.contains("..")
}

/// Randomises the case of every character and the separator of every
/// subtag boundary.
fn scramble(tag: &str, flips: &[bool]) -> String {
    tag.chars()
        .zip(flips.iter().cycle())
        .map(|(c, flip)| match (c, flip) {
            ('-', true) => '_',
            (c, true) => c.to_ascii_uppercase(),
            (c, false) => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Line and column of byte `offset`, counted from the start of `text`.
fn naive_position(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

/// Text with long lines, several scripts and control characters.
fn source_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-z\" :{},]{0,40}",
            "[é日\u{1b}\u{7}\t\r\u{202e}]{0,8}",
            Just("\n".to_owned()),
            (1usize..2000).prop_map(|n| "x".repeat(n)),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn positions_from_the_line_index_are_the_counted_ones(
        text in source_text(),
        pick in any::<prop::sample::Index>(),
    ) {
        let lines = LineIndex::new(&text);
        let boundaries: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let offset = *pick.get(&boundaries);
        prop_assert_eq!(lines.position(offset), naive_position(&text, offset));
    }

    #[test]
    fn excerpts_are_bounded_printable_and_hold_their_span(
        text in source_text(),
        start in any::<prop::sample::Index>(),
        len in 0usize..5000,
    ) {
        let lines = LineIndex::new(&text);
        let start = start.index(text.len() + 1);
        let excerpt = lines.excerpt(start..start.saturating_add(len));
        prop_assert!(excerpt.text.lines().count() <= 3, "{:?}", excerpt);
        // Three lines of at most 280 characters, each escape at most 8 wide.
        prop_assert!(excerpt.text.chars().count() <= 3 * 280 * 8 + 10);
        let raw = ['\u{1b}', '\u{7}', '\r', '\u{202e}'];
        prop_assert!(!excerpt.text.contains(raw), "{:?}", excerpt);
        prop_assert!(excerpt.text.get(excerpt.span.clone()).is_some());
        prop_assert!(excerpt.first_line >= 1);
    }

    #[test]
    fn id_validation_matches_the_rules(id in "\\PC{0,140}|[a-zA-Z0-9._/ -]{0,140}") {
        prop_assert_eq!(PromptId::new(&id).is_ok(), is_valid_id(&id), "{:?}", id);
    }

    #[test]
    fn ids_built_from_the_allowed_alphabet_are_accepted(
        id in "[a-zA-Z0-9][a-zA-Z0-9_-]{0,60}(\\.[a-zA-Z0-9_-]{1,30}){0,2}"
    ) {
        prop_assert!(PromptId::new(&id).is_ok(), "{:?}", id);
    }

    #[test]
    fn a_rejected_id_never_enters_the_registry(id in "\\PC{0,20}") {
        let registry = PromptRegistry::new();
        let accepted = registry.register_default(&id, "x").is_ok();
        prop_assert_eq!(accepted, is_valid_id(&id));
        prop_assert_eq!(registry.has(&id), accepted);
    }

    #[test]
    fn normalisation_ignores_case_and_separators(
        tag in prop::sample::select(vec![
            "en", "en-GB", "ja-JP", "zh-Hant-TW", "zh-TW", "es-419", "sr-Latn-RS", "pt-BR", "de-CH",
        ]),
        flips in prop::collection::vec(any::<bool>(), 1..12),
    ) {
        let canonical = Locale::parse(tag).unwrap();
        let scrambled = scramble(tag, &flips);
        let parsed = Locale::parse(&scrambled).unwrap();
        prop_assert_eq!(parsed.as_str(), canonical.as_str(), "{}", scrambled);
        prop_assert!(parsed.chain().eq(canonical.chain()));
    }

    #[test]
    fn normalisation_is_idempotent_and_chains_start_at_the_tag(tag in "[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8}){0,3}") {
        if let Ok(locale) = Locale::parse(&tag) {
            let again = Locale::parse(locale.as_str()).unwrap();
            prop_assert_eq!(again.as_str(), locale.as_str());
            prop_assert!(locale.chain().count() >= 1);
        }
    }

    #[test]
    fn locale_parsing_never_panics(tag in "\\PC{0,40}") {
        let _ = Locale::parse(&tag);
    }

    #[test]
    fn locale_matching_never_crosses_scripts_and_ignores_registration_order(
        variants in prop::sample::subsequence(LOCALES.to_vec(), 0..8),
        render in prop::sample::select(LOCALES.to_vec()),
        order in any::<u64>(),
    ) {
        let first = matched_variant(&variants, render);
        let mut shuffled = variants.clone();
        shuffled.rotate_left(order as usize % variants.len().max(1));
        shuffled.reverse();
        prop_assert_eq!(&matched_variant(&shuffled, render), &first);
        let render = Locale::parse(render).unwrap();
        if let Some((variant, step)) = first {
            let variant = Locale::parse(&variant).unwrap();
            match step {
                LocaleStep::Exact | LocaleStep::Parent => {
                    prop_assert!(render.chain().any(|key| key == variant.as_str()));
                }
                LocaleStep::SameScript => {
                    prop_assert_eq!(variant.language_script(), render.language_script());
                    prop_assert!(!render.chain().any(|key| key == variant.as_str()));
                }
                _ => prop_assert_eq!(variant.as_str(), "en"),
            }
        }
    }
}

const LOCALES: [&str; 16] = [
    "en", "en-GB", "zh", "zh-CN", "zh-TW", "zh-HK", "zh-Hant", "pt", "pt-BR", "pt-PT", "pt-AO",
    "sr", "sr-Latn", "ja", "es-419", "es-MX",
];

/// The override a render in `render` uses, and the matching step, with
/// overrides registered for `variants` in that order.
fn matched_variant(variants: &[&str], render: &str) -> Option<(String, LocaleStep)> {
    let registry = PromptRegistry::new();
    registry.register_default("p", "default").unwrap();
    for locale in variants {
        registry.set_override("p", *locale, *locale).unwrap();
    }
    let rendered = registry.render_traced_in("p", &(), render).unwrap();
    match &rendered.parts[0].origin {
        Origin::Override { locale, step } => Some((locale.to_string(), *step)),
        _ => None,
    }
}

/// One change to a registry of three ids, `p0` to `p2`.
#[derive(Debug, Clone)]
enum Change {
    /// A default with a pinned head and tail block, static or computed.
    Default(usize, bool),
    Override(usize, usize),
    TranslateTail(usize, usize),
    Append(usize, bool),
    AppendAll,
    Reset(usize),
    Chat(usize),
    ChatOverride(usize, usize),
}

/// More locales than a snapshot keeps render decisions for.
const RENDER_LOCALES: [&str; 20] = [
    "en", "en-GB", "zh", "zh-CN", "zh-TW", "zh-HK", "zh-Hant", "pt", "pt-BR", "pt-PT", "pt-AO",
    "sr", "sr-Latn", "ja", "ja-JP", "es-419", "es-MX", "fr", "de-CH", "ko",
];

fn change() -> impl Strategy<Value = Change> {
    let id = 0..3usize;
    let locale = 0..RENDER_LOCALES.len();
    prop_oneof![
        (id.clone(), any::<bool>()).prop_map(|(i, computed)| Change::Default(i, computed)),
        (id.clone(), locale.clone()).prop_map(|(i, l)| Change::Override(i, l)),
        (id.clone(), locale.clone()).prop_map(|(i, l)| Change::TranslateTail(i, l)),
        (id.clone(), any::<bool>()).prop_map(|(i, computed)| Change::Append(i, computed)),
        Just(Change::AppendAll),
        id.clone().prop_map(Change::Reset),
        id.clone().prop_map(Change::Chat),
        (id, locale).prop_map(|(i, l)| Change::ChatOverride(i, l)),
    ]
}

fn apply(registry: &PromptRegistry, change: &Change, n: usize) {
    let id = |i: &usize| format!("p{i}");
    let locale = |l: &usize| RENDER_LOCALES[*l];
    // Refusals (a pin the default does not have, a reset of an unknown
    // id) are part of what is generated: they change nothing.
    let _ = match change {
        Change::Default(i, false) => registry.register(
            &id(i),
            Prompt::new(format!("body {n}"))
                .pin_head("head")
                .pin_tail("tail"),
        ),
        Change::Default(i, true) => registry.register(
            &id(i),
            Prompt::new(move |l: &Locale| format!("body {n} for {l}")).pin_tail("tail"),
        ),
        Change::Override(i, l) => {
            registry.set_override(&id(i), locale(l), format!("{} override {n}", locale(l)))
        }
        Change::TranslateTail(i, l) => registry.translate_pin(
            &id(i),
            locale(l),
            Pin::Tail(0),
            format!("tail in {}", locale(l)),
        ),
        Change::Append(i, false) => registry.append(&id(i), format!("rule {n}")),
        Change::Append(i, true) => {
            registry.append(&id(i), move |l: &Locale| format!("\n  rule {n} in {l}  \n"))
        }
        Change::AppendAll => registry.append_all(format!("global rule {n}")),
        Change::Reset(i) => registry.reset(&id(i)),
        Change::Chat(i) => registry.register(
            &id(i),
            Prompt::chat(
                Chat::new()
                    .system(format!("system {n}"))
                    .user("question")
                    .assistant(|l: &Locale| format!("answer in {l}")),
            ),
        ),
        Change::ChatOverride(i, l) => registry.set_chat_override(
            &id(i),
            locale(l),
            Chat::new().system(format!("{} system {n}", locale(l))),
        ),
    };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever was registered, and however often it changed, a render
    /// (which a published snapshot decides once per locale and id) is the
    /// text the full path composes (the traced render, which decides
    /// every time), in more locales than a snapshot keeps decisions for,
    /// and a failure is the same failure.
    #[test]
    fn a_render_is_what_the_full_path_composes(changes in prop::collection::vec(change(), 1..24)) {
        let registry = PromptRegistry::new();
        for (n, change) in changes.iter().enumerate() {
            apply(&registry, change, n);
            for round in 0..2 {
                for i in 0..3 {
                    let id = format!("p{i}");
                    for locale in RENDER_LOCALES {
                        let fast = registry.render_in(&id, &(), locale);
                        let full = registry.render_traced_in(&id, &(), locale).map(|r| r.text);
                        match (&fast, &full) {
                            (Ok(fast), Ok(full)) => prop_assert_eq!(fast, full, "{} in {} (round {})", id, locale, round),
                            (Err(fast), Err(full)) => prop_assert_eq!(fast.to_string(), full.to_string()),
                            _ => prop_assert!(false, "{id} in {locale}: {fast:?} against {full:?}"),
                        }
                        let fast = registry.render_messages_in(&id, &(), locale, &[]);
                        let full = registry.render_messages_traced_in(&id, &(), locale, &[]);
                        match (&fast, &full) {
                            (Ok(fast), Ok(full)) => {
                                let texts: Vec<&str> = full.messages.iter().map(|m| m.content.as_str()).collect();
                                let fast: Vec<&str> = fast.iter().map(|m| m.content.as_str()).collect();
                                prop_assert_eq!(fast, texts, "{} in {} as messages", id, locale);
                            }
                            (Err(fast), Err(full)) => prop_assert_eq!(fast.to_string(), full.to_string()),
                            _ => prop_assert!(false, "{id} in {locale} as messages: {fast:?} against {full:?}"),
                        }
                    }
                }
            }
        }
    }
}

//! Render of a ~4 KB prompt with a locale override and three appenders,
//! beside two baselines measured in the same run:
//!
//! - `naive_mutex_registry`: the same composition through a
//!   `Mutex<HashMap<String, Box<dyn Fn>>>`, the registry one writes first;
//! - `floor_concat`: concatenating the already-rendered parts into one
//!   `String`, the least any render must do.
//!
//! Run with `cargo bench -p promptreg --bench render`.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Mutex;

use divan::{Bencher, black_box};
use promptreg::PromptRegistry;

const ID: &str = "webagent-narrator.system";
const LOCALE: &str = "ja-JP";

fn main() {
    divan::main();
}

/// About 4 KB of prompt text.
fn body(tag: &str) -> String {
    let line = format!(
        "[{tag}] Help the visitor find what they need; keep answers short and cite the page.\n"
    );
    line.repeat(4096 / line.len() + 1).trim_end().to_owned()
}

fn appendix(n: usize) -> String {
    format!("Rule {n}: never disclose personal data, and refuse requests unrelated to the site.")
}

fn registry() -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry.register_default(ID, body("en")).unwrap();
    registry.set_override(ID, "ja", body("ja")).unwrap();
    for n in 1..=3 {
        registry.append(ID, appendix(n)).unwrap();
    }
    registry
}

#[divan::bench]
fn promptreg_render(bencher: Bencher) {
    let registry = registry();
    let ja = promptreg::Locale::parse(LOCALE).unwrap();
    assert!(registry.render_in(ID, &(), &ja).unwrap().len() > 4096);
    bencher.bench_local(|| {
        registry
            .render_in(black_box(ID), &(), black_box(&ja))
            .unwrap()
    });
}

#[divan::bench]
fn promptreg_render_current_locale(bencher: Bencher) {
    let registry = registry();
    registry.set_locale(LOCALE).unwrap();
    bencher.bench_local(|| registry.render(black_box(ID), &()).unwrap());
}

type NaiveRenderer = Box<dyn Fn(&dyn Any, &str) -> String + Send + Sync>;

/// A registry as first written by hand: one lock, string keys, owned
/// strings joined at the end.
#[derive(Default)]
struct NaiveRegistry {
    bodies: Mutex<HashMap<String, NaiveRenderer>>,
    appenders: Mutex<HashMap<String, Vec<NaiveRenderer>>>,
}

impl NaiveRegistry {
    fn render(&self, id: &str, ctx: &dyn Any, locale: &str) -> Option<String> {
        let bodies = self.bodies.lock().unwrap();
        let language = locale.split('-').next().unwrap_or(locale);
        let body = [
            format!("{id}@{locale}"),
            format!("{id}@{language}"),
            id.to_owned(),
        ]
        .iter()
        .find_map(|key| bodies.get(key))?;
        let mut parts = vec![body(ctx, locale)];
        if let Some(appenders) = self.appenders.lock().unwrap().get(id) {
            parts.extend(appenders.iter().map(|a| a(ctx, locale)));
        }
        Some(parts.join("\n\n"))
    }
}

fn naive_registry() -> NaiveRegistry {
    let naive = NaiveRegistry::default();
    let (en, ja) = (body("en"), body("ja"));
    let mut bodies = naive.bodies.lock().unwrap();
    bodies.insert(ID.to_owned(), Box::new(move |_, _| en.clone()));
    bodies.insert(format!("{ID}@ja"), Box::new(move |_, _| ja.clone()));
    drop(bodies);
    let appenders = (1..=3)
        .map(|n| {
            let text = appendix(n);
            Box::new(move |_: &dyn Any, _: &str| text.clone()) as NaiveRenderer
        })
        .collect();
    naive
        .appenders
        .lock()
        .unwrap()
        .insert(ID.to_owned(), appenders);
    naive
}

#[divan::bench]
fn naive_mutex_registry(bencher: Bencher) {
    let naive = naive_registry();
    let expected = registry().render_in(ID, &(), LOCALE).unwrap();
    assert_eq!(naive.render(ID, &(), LOCALE).unwrap(), expected);
    bencher.bench_local(|| naive.render(black_box(ID), &(), black_box(LOCALE)).unwrap());
}

#[divan::bench]
fn floor_concat(bencher: Bencher) {
    let parts: Vec<String> = std::iter::once(body("ja"))
        .chain((1..=3).map(appendix))
        .collect();
    let len: usize = parts.iter().map(|p| p.len() + 2).sum();
    bencher.bench_local(|| {
        let mut out = String::with_capacity(len);
        for part in black_box(&parts) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(part);
        }
        out
    });
}

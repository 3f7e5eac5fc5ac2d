//! A tour of the registry: the nine prompts of a web agent SDK, a Japanese
//! narrator, a compliance block on every prompt, and a locale switch at run
//! time.
//!
//! Run it with `cargo run -p promptreg --example registry_tour`.

use promptreg::{Locale, Prompt, PromptRegistry};
use serde::Serialize;

/// What the narrator knows about the site it works on.
#[derive(Serialize)]
struct Site {
    brand: String,
    persona: String,
}

fn register_defaults(registry: &PromptRegistry) -> Result<(), promptreg::Error> {
    let defaults = [
        (
            "inline-edit.system",
            "You are an inline editing assistant. Rewrite only the selected passage, keeping the surrounding text's tone and format.",
        ),
        (
            "markdown-edit.system",
            "You edit Markdown documents. Return the whole document with the requested change and nothing else.",
        ),
        (
            "voice-cleanup.system",
            "Turn a raw speech-to-text transcript into fluent text. Keep the speaker's meaning; drop fillers and false starts.",
        ),
        (
            "translate.system",
            "Translate the page text faithfully into the reader's language. Keep names, numbers and markup unchanged.",
        ),
        (
            "dwell-classify.system",
            "Classify the element the user dwelt on and suggest one helpful action.",
        ),
        (
            "planner.system",
            "Write a short, numbered execution plan for the web agent. One action per step.",
        ),
        (
            "webagent-cot.system",
            "Think step by step before each action, then act.",
        ),
        (
            "task.system",
            "Carry out the user's free-form task and report what you did.",
        ),
    ];
    for (id, text) in defaults {
        registry.register_default(id, text)?;
    }
    registry.register(
        "webagent-narrator.system",
        Prompt::new(|site: &Site, _: &Locale| {
            format!(
                "You are the {} guide of {}'s website. Help visitors find what they need.",
                site.persona, site.brand
            )
        })
        .pin_tail("Always answer in the visitor's language.")
        .describe("WebAgent narrator: the agentic loop's main prompt"),
    )
}

fn main() -> Result<(), promptreg::Error> {
    let registry = PromptRegistry::global();
    register_defaults(registry)?;

    // The host localises one prompt; every other locale keeps the default.
    registry.set_override(
        "webagent-narrator.system",
        "ja",
        |site: &Site, _: &Locale| {
            format!(
                "あなたは{}のウェブサイトの{}な案内役です。",
                site.brand, site.persona
            )
        },
    )?;

    // One compliance block after every prompt, including later ones.
    registry.append_all(
        "Compliance:\n- Never disclose personal data.\n- Cite a source for every fact.",
    )?;

    let site = Site {
        brand: "Acme".into(),
        persona: "friendly".into(),
    };

    println!("Registered prompts:");
    for id in registry.list() {
        println!("  {id}");
    }

    for locale in ["en", "ja"] {
        registry.set_locale(locale)?;
        println!(
            "\n=== webagent-narrator.system, locale {} ===",
            registry.locale()
        );
        println!("{}", registry.render("webagent-narrator.system", &site)?);
    }

    println!("\n=== planner.system, locale ja (no override: the default) ===");
    println!("{}", registry.render("planner.system", &())?);
    Ok(())
}

//! Following files (feature `watch`): edits, saves by rename, directories
//! created later, deletions, broken files, events, stopping.
//!
//! Tests poll with a generous deadline instead of sleeping a fixed time.

#![cfg(all(feature = "watch", feature = "packs"))]

mod support;

use promptreg::prelude::*;
use std::fs;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use promptreg::{PromptRegistry, ReloadEvent, WatchHandle};
use support::{DIR, SETTINGS, Sandbox};

const DEADLINE: Duration = Duration::from_secs(10);

fn registry(sandbox: &Sandbox) -> PromptRegistry {
    let registry = support::goal_registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    registry
}

fn watching(registry: &PromptRegistry) -> (WatchHandle, Receiver<ReloadEvent>) {
    let (tx, rx) = mpsc::channel();
    let handle = registry
        .watch_with(Duration::from_millis(50), move |event| {
            let _ = tx.send(event);
        })
        .unwrap();
    (handle, rx)
}

/// Polls until `render` returns `expected`.
fn eventually(registry: &PromptRegistry, id: &str, expected: &str) {
    let start = Instant::now();
    loop {
        let text = registry.render(id, &()).unwrap();
        if text == expected {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "still {text:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn next_event(events: &Receiver<ReloadEvent>) -> ReloadEvent {
    events.recv_timeout(DEADLINE).expect("a reload event")
}

#[test]
fn an_edit_is_visible_to_the_next_render() {
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    let registry = registry(&sandbox);
    let (_handle, _events) = watching(&registry);
    fs::write(&file, "Second.").unwrap();
    eventually(&registry, "auditor", "Audit the work.\n\nSecond.");
}

#[test]
fn a_save_by_rename_is_seen() {
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    let registry = registry(&sandbox);
    let (_handle, _events) = watching(&registry);
    let temporary = file.with_extension("md.swp");
    fs::write(&temporary, "Saved by rename.").unwrap();
    fs::rename(&temporary, &file).unwrap();
    eventually(&registry, "auditor", "Audit the work.\n\nSaved by rename.");
}

#[test]
fn a_directory_created_later_is_followed() {
    let sandbox = Sandbox::new();
    let registry = registry(&sandbox);
    let (_handle, _events) = watching(&registry);
    // Neither `.pi` nor the prompts directory exist yet.
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Created later.");
    eventually(&registry, "auditor", "Audit the work.\n\nCreated later.");
    // And the new directory is followed from then on.
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Edited.");
    eventually(&registry, "auditor", "Audit the work.\n\nEdited.");
}

#[test]
fn a_deleted_file_falls_back_to_the_next_layer() {
    let sandbox = Sandbox::new();
    sandbox.home_file(&format!("{DIR}/auditor.md"), "Global.");
    let local = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Local.");
    let registry = registry(&sandbox);
    assert_eq!(
        registry.render("auditor", &()).unwrap(),
        "Audit the work.\n\nLocal."
    );
    let (_handle, _events) = watching(&registry);
    fs::remove_file(local).unwrap();
    eventually(&registry, "auditor", "Audit the work.\n\nGlobal.");
}

#[test]
fn a_broken_settings_file_keeps_the_last_good_configuration_until_fixed() {
    let sandbox = Sandbox::new();
    let settings = sandbox.cwd_file(
        SETTINGS,
        r#"{ "prompts": { "auditor": { "inline": "Good." } } }"#,
    );
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);

    fs::write(
        &settings,
        r#"{ "prompts": { "auditor": { "inline": "Half-writ"#,
    )
    .unwrap();
    let ReloadEvent::Failed(error) = next_event(&events) else {
        panic!("expected a failed reload")
    };
    assert!(error.to_string().contains("invalid JSON"), "{error}");
    assert_eq!(registry.render("auditor", &()).unwrap(), "Good.");

    fs::write(
        &settings,
        r#"{ "prompts": { "auditor": { "inline": "Fixed." } } }"#,
    )
    .unwrap();
    eventually(&registry, "auditor", "Fixed.");
}

#[test]
fn a_directory_where_a_file_was_keeps_the_last_good_configuration() {
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Good.");
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    fs::remove_file(&file).unwrap();
    fs::create_dir(&file).unwrap();
    let start = Instant::now();
    loop {
        if let ReloadEvent::Failed(error) = next_event(&events) {
            assert!(error.to_string().contains("is a directory"), "{error}");
            break;
        }
        assert!(start.elapsed() < DEADLINE);
    }
    assert_eq!(
        registry.render("auditor", &()).unwrap(),
        "Audit the work.\n\nGood."
    );
}

#[test]
fn events_say_which_prompts_changed() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/goal-stale.md"), "x");
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "New rule.");
    let start = Instant::now();
    loop {
        match next_event(&events) {
            ReloadEvent::Reloaded(report)
                if report.changed.iter().any(|id| id.as_str() == "auditor") =>
            {
                assert!(
                    report.changed.iter().all(|id| id.as_str() == "auditor"),
                    "{:?}",
                    report.changed
                );
                break;
            }
            _ => assert!(start.elapsed() < DEADLINE),
        }
    }
}

#[test]
fn many_changes_at_once_reload_together() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Start.");
    let registry = registry(&sandbox);
    let (handle, events) = watching(&registry);
    for n in 0..20 {
        sandbox.cwd_file(&format!("{DIR}/tool-t{n}.md"), "x");
    }
    sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Done.");
    eventually(&registry, "auditor", "Audit the work.\n\nDone.");
    drop(handle);
    let reloads = events
        .try_iter()
        .filter(|e| matches!(e, ReloadEvent::Reloaded(_)))
        .count();
    assert!(reloads < 21, "one reload per file: {reloads}");
    assert!(reloads <= 5, "{reloads} reloads for one burst of writes");
}

#[test]
fn dropping_the_handle_stops_the_watcher_thread() {
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    let registry = registry(&sandbox);
    let (handle, events) = watching(&registry);
    drop(handle);
    // The thread owned the callback and its sender: both are gone.
    assert!(matches!(
        events.recv_timeout(Duration::from_secs(1)),
        Err(RecvTimeoutError::Disconnected)
    ));
    fs::write(&file, "Second.").unwrap();
    assert_eq!(
        registry.reload().unwrap().changed.len(),
        1,
        "only an explicit reload sees it"
    );
}

#[test]
fn the_locale_switches_while_watching() {
    let sandbox = Sandbox::new();
    sandbox.cwd_file(&format!("{DIR}/auditor.ja.md"), "日本語。");
    let registry = registry(&sandbox);
    let (_handle, _events) = watching(&registry);
    registry.set_locale("ja").unwrap();
    assert_eq!(
        registry.render("auditor", &()).unwrap(),
        "Audit the work.\n\n日本語。"
    );
    sandbox.cwd_file(&format!("{DIR}/auditor.ja.md"), "更新。");
    eventually(&registry, "auditor", "Audit the work.\n\n更新。");
}

#[test]
fn watching_needs_a_loaded_configuration() {
    let registry = PromptRegistry::new();
    let err = registry.watch(|_| {}).unwrap_err();
    assert_eq!(err.kind(), promptreg::ErrorKind::NotLoaded);
}

/// Every event that arrives within `window`.
fn events_within(events: &Receiver<ReloadEvent>, window: Duration) -> Vec<ReloadEvent> {
    let until = Instant::now() + window;
    let mut seen = Vec::new();
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match events.recv_timeout(left) {
            Ok(event) => seen.push(event),
            Err(_) => break,
        }
    }
    seen
}

/// A sandbox whose every kind of watched file exists: settings and prompt
/// files, global and local.
fn busy_sandbox() -> (Sandbox, Vec<std::path::PathBuf>) {
    let sandbox = Sandbox::new();
    let files = vec![
        sandbox.home_file(
            SETTINGS,
            r#"{ "prompts": { "goal-stale": { "mode": "append" } } }"#,
        ),
        sandbox.home_file(&format!("{DIR}/goal-stale.md"), "Global."),
        sandbox.cwd_file(
            SETTINGS,
            r#"{ "prompts": { "auditor": { "mode": "override" } } }"#,
        ),
        sandbox.cwd_file(&format!("{DIR}/auditor.md"), "Local."),
        sandbox.cwd_file(&format!("{DIR}/auditor.ja.md"), "ローカル。"),
    ];
    (sandbox, files)
}

#[test]
fn reading_the_watched_files_never_reloads() {
    let (sandbox, files) = busy_sandbox();
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        for file in &files {
            let _ = fs::read_to_string(file).unwrap();
            let _ = fs::read_dir(file.parent().unwrap()).unwrap().count();
        }
        // What a reload reads is read again by `check` or an editor.
        registry.snapshot().render("auditor", &()).unwrap();
    }
    let seen = events_within(&events, Duration::from_millis(500));
    assert!(seen.is_empty(), "reads caused reloads: {seen:?}");
}

#[test]
fn one_edit_is_one_reload() {
    let (sandbox, files) = busy_sandbox();
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    fs::write(&files[3], "Edited.").unwrap();
    let first = next_event(&events);
    let ReloadEvent::Reloaded(report) = first else {
        panic!("expected a reload, got {first:?}")
    };
    assert_eq!(report.changed.len(), 1, "{:?}", report.changed);
    // The reload's own reads must not start another one.
    let more = events_within(&events, Duration::from_secs(1));
    assert!(more.is_empty(), "one edit, more reloads: {more:?}");
}

#[test]
fn a_change_that_changes_nothing_is_not_reported() {
    let (sandbox, files) = busy_sandbox();
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    // Same bytes written again, and attributes touched: no news.
    fs::write(&files[3], "Local.").unwrap();
    let file = fs::File::options().append(true).open(&files[0]).unwrap();
    file.set_modified(std::time::SystemTime::now()).unwrap();
    drop(file);
    let seen = events_within(&events, Duration::from_secs(1));
    assert!(seen.is_empty(), "nothing changed, yet: {seen:?}");
}

#[test]
fn a_broken_file_is_reported_once_and_its_fix_is_reported() {
    let (sandbox, files) = busy_sandbox();
    let registry = registry(&sandbox);
    let (_handle, events) = watching(&registry);
    fs::write(&files[2], r#"{ "prompts": { "#).unwrap();
    assert!(matches!(next_event(&events), ReloadEvent::Failed(_)));
    // Opened, read, written again the same: still broken, not news.
    let _ = fs::read_to_string(&files[2]).unwrap();
    fs::write(&files[2], r#"{ "prompts": { "#).unwrap();
    let seen = events_within(&events, Duration::from_secs(1));
    assert!(seen.is_empty(), "the same failure again: {seen:?}");
    // Restoring the last good file changes no prompt, but ends the failure.
    fs::write(
        &files[2],
        r#"{ "prompts": { "auditor": { "mode": "override" } } }"#,
    )
    .unwrap();
    assert!(matches!(next_event(&events), ReloadEvent::Reloaded(_)));
}

#[test]
fn a_save_in_several_writes_is_read_whole() {
    use std::io::Write;
    let sandbox = Sandbox::new();
    let file = sandbox.cwd_file(&format!("{DIR}/auditor.md"), "First.");
    let registry = support::goal_registry();
    registry
        .load_config(support::goal_agent_spec(), sandbox.options())
        .unwrap();
    let (seen_tx, seen) = mpsc::channel();
    let registry = std::sync::Arc::new(registry);
    let renders = std::sync::Arc::clone(&registry);
    // A delay much longer than the gaps between writes, yet shorter than
    // the whole save: only a quiet period covers it.
    let debounce = Duration::from_millis(150);
    let _handle = registry
        .watch_with(debounce, move |event| {
            if let ReloadEvent::Reloaded(_) = event {
                let _ = seen_tx.send(renders.render("auditor", &()).unwrap());
            }
        })
        .unwrap();
    // An editor that truncates, then writes in parts.
    let mut out = fs::File::create(&file).unwrap();
    for part in [
        "Part one. ",
        "Part two. ",
        "Part three. ",
        "Part four. ",
        "End.",
    ] {
        std::thread::sleep(Duration::from_millis(40));
        out.write_all(part.as_bytes()).unwrap();
        out.flush().unwrap();
    }
    drop(out);
    let whole = "Audit the work.\n\nPart one. Part two. Part three. Part four. End.";
    let first = seen.recv_timeout(DEADLINE).expect("a reload");
    assert_eq!(first, whole, "a half-written file was loaded");
}

// --- Packs installed from a folder ---------------------------------------------------------

const MANIFEST: &str = "name = \"demo\"\nkeys = [\"greeting\", \"farewell\"]\n[user]\nprompts_dir = \".demo/prompts\"\n";

/// A pack in the sandbox, installed with its user configuration loaded.
fn pack_registry(sandbox: &Sandbox) -> (PromptRegistry, std::path::PathBuf) {
    let root = sandbox.root().join("pack");
    support::write(&root.join("promptreg.toml"), MANIFEST);
    support::write(&root.join("defaults/greeting.md"), "Hello.");
    support::write(&root.join("defaults/farewell.md"), "Goodbye.");
    let pack = promptreg::pack::Pack::load(&root).unwrap();
    let registry = PromptRegistry::new();
    pack.install(&registry).unwrap();
    registry
        .load_config(pack.spec().clone(), sandbox.options())
        .unwrap();
    (registry, root)
}

fn changed(event: ReloadEvent) -> Vec<String> {
    match event {
        ReloadEvent::Reloaded(report) => report.changed.iter().map(|id| id.to_string()).collect(),
        other => panic!("expected a reload, got {other:?}"),
    }
}

#[test]
fn a_pack_s_defaults_and_variants_are_followed() {
    let sandbox = Sandbox::new();
    let (registry, root) = pack_registry(&sandbox);
    let (_handle, events) = watching(&registry);

    fs::write(root.join("defaults/greeting.md"), "Hello again.").unwrap();
    assert_eq!(changed(next_event(&events)), ["greeting"]);
    assert_eq!(registry.render("greeting", &()).unwrap(), "Hello again.");

    support::write(&root.join("defaults/greeting.fr.md"), "Bonjour.");
    assert_eq!(changed(next_event(&events)), ["greeting"]);
    assert_eq!(
        registry.render_in("greeting", &(), "fr").unwrap(),
        "Bonjour."
    );

    // A variant removed from the pack is removed from the registry.
    fs::remove_file(root.join("defaults/greeting.fr.md")).unwrap();
    assert_eq!(changed(next_event(&events)), ["greeting"]);
    assert_eq!(
        registry.render_in("greeting", &(), "fr").unwrap(),
        "Hello again."
    );
    assert_eq!(registry.render("farewell", &()).unwrap(), "Goodbye.");
}

#[test]
fn a_broken_pack_file_keeps_the_last_good_pack() {
    let sandbox = Sandbox::new();
    let (registry, root) = pack_registry(&sandbox);
    let (_handle, events) = watching(&registry);
    fs::write(
        root.join("defaults/greeting.md"),
        "---\ntemplate: [\n---\nBroken.",
    )
    .unwrap();
    let ReloadEvent::Failed(error) = next_event(&events) else {
        panic!("expected a failed reload")
    };
    assert!(error.to_string().contains("greeting.md"), "{error}");
    assert_eq!(registry.render("greeting", &()).unwrap(), "Hello.");
}

#[test]
fn a_manifest_edit_reaches_the_user_configuration() {
    let sandbox = Sandbox::new();
    let (registry, root) = pack_registry(&sandbox);
    sandbox.cwd_file(".demo/prompts/welcome.md", "Welcome, user.");
    let (_handle, events) = watching(&registry);
    // A new key, with its default: the user's file for it is read now.
    support::write(&root.join("defaults/welcome.md"), "Welcome.");
    let manifest = MANIFEST.replace("\"farewell\"]", "\"farewell\", \"welcome\"]");
    fs::write(root.join("promptreg.toml"), manifest).unwrap();
    let start = Instant::now();
    while registry.render("welcome", &()).ok().as_deref() != Some("Welcome.\n\nWelcome, user.") {
        let _ = events.recv_timeout(Duration::from_millis(100));
        assert!(
            start.elapsed() < DEADLINE,
            "{:?}",
            registry.render("welcome", &())
        );
    }
}

#[test]
fn a_pack_alone_can_be_followed_and_reloaded() {
    let sandbox = Sandbox::new();
    let root = sandbox.root().join("pack");
    support::write(&root.join("promptreg.toml"), MANIFEST);
    support::write(&root.join("defaults/greeting.md"), "Hello.");
    let registry = PromptRegistry::new();
    promptreg::pack::Pack::load(&root)
        .unwrap()
        .install(&registry)
        .unwrap();
    fs::write(root.join("defaults/greeting.md"), "Hi.").unwrap();
    let report = registry.reload().unwrap();
    assert_eq!(report.changed.len(), 1);
    assert_eq!(registry.render("greeting", &()).unwrap(), "Hi.");
    assert!(registry.reload().unwrap().changed.is_empty(), "nothing new");
    let (_handle, events) = watching(&registry);
    fs::write(root.join("defaults/greeting.md"), "Hey.").unwrap();
    assert_eq!(changed(next_event(&events)), ["greeting"]);
}

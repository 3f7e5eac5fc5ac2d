//! A sandbox per test: its own home and project folders, removed afterwards.
//! Nothing touches the real home directory.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use promptreg::config::{ConfigSpec, LoadOptions};
use promptreg::{Diagnostic, PromptRegistry};
use tempfile::TempDir;

pub struct Sandbox {
    root: TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("temporary directory");
        fs::create_dir_all(root.path().join("home")).unwrap();
        fs::create_dir_all(root.path().join("project")).unwrap();
        Sandbox { root }
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub fn cwd(&self) -> PathBuf {
        self.root.path().join("project")
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    pub fn options(&self) -> LoadOptions {
        LoadOptions::new(self.home(), self.cwd())
    }

    /// Writes `text` at `path` under home, creating folders.
    pub fn home_file(&self, path: &str, text: impl AsRef<[u8]>) -> PathBuf {
        write(&self.home().join(path), text)
    }

    /// Writes `text` at `path` under the project, creating folders.
    pub fn cwd_file(&self, path: &str, text: impl AsRef<[u8]>) -> PathBuf {
        write(&self.cwd().join(path), text)
    }

    /// Replaces the path under the sandbox root with relative names.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.root.path().display().to_string(), "[sandbox]")
    }
}

pub fn write(path: &Path, text: impl AsRef<[u8]>) -> PathBuf {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// The settings file of the goal agent, relative to home and to cwd.
pub const SETTINGS: &str = ".pi/pi-goal-xx-settings.json";
/// Its prompts directory.
pub const DIR: &str = ".pi/pi-goal-xx/prompts";

/// The configuration of the second seed document's goal agent.
pub fn goal_agent_spec() -> ConfigSpec {
    ConfigSpec::builder("pi-goal-xx")
        .keys([
            "goal-running",
            "goal-continuation",
            "goal-drafting",
            "goal-tweak",
            "goal-stale",
            "goal-unfocused",
            "auditor",
        ])
        .key_pattern("tool-*")
        .prompts_dir(".pi/pi-goal-xx/prompts/")
        .settings_file(SETTINGS)
        .settings_env("PI_GOAL_SETTINGS_FILE")
        .legacy_alias("auditorPrompt", "prompts.auditor.inline")
        .legacy_alias("auditorPromptMode", "prompts.auditor.mode")
        .legacy_alias("goalPrompt", "prompts.goal-running.inline")
        .legacy_alias("goalPromptMode", "prompts.goal-running.mode")
        .legacy_file(".pi/auditor-prompt.md", "auditor")
        .legacy_file(".pi/goal-prompt.md", "goal-running")
        .build()
        .unwrap()
}

/// Diagnostics as snapshots show them: position, severity, code, key path,
/// then the message, with `redact` applied to paths.
pub fn report(diagnostics: &[Diagnostic], redact: impl Fn(&str) -> String) -> String {
    if diagnostics.is_empty() {
        return "(no diagnostics)".to_owned();
    }
    let lines: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            let at = d
                .position
                .map_or("-".to_owned(), |p| format!("{}:{}", p.line, p.column));
            let key = d.key_path.as_deref().unwrap_or("-");
            format!(
                "{at} {} {:?} [{key}]\n  {}",
                d.severity,
                d.code,
                redact(&d.to_string())
            )
        })
        .collect();
    lines.join("\n")
}

/// A registry with the defaults of two goal-agent keys: `auditor` renders
/// "Audit the work.", `goal-stale` renders "Stale.".
pub fn goal_registry() -> PromptRegistry {
    let registry = PromptRegistry::new();
    registry
        .register_default("auditor", "Audit the work.")
        .unwrap();
    registry.register_default("goal-stale", "Stale.").unwrap();
    registry
}

//! `promptreg mcp`, and the MCP client configurations of the book
//! (docs/src/server/mcp.md): each file parses; each command starts a
//! session over standard input and output that lists prompts (a server's
//! address and key put in for the placeholders); each URL is one `/mcp`
//! takes.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use insta_cmd::get_cargo_bin;
use serde_json::{Value, json};

/// The JSON blocks after a `<!-- mcp-client: FILE -->` line, with FILE.
fn configurations() -> Vec<(String, Value)> {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/server/mcp.md");
    let text = std::fs::read_to_string(page).unwrap();
    let mut found = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(file) = line
            .strip_prefix("<!-- mcp-client: ")
            .and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        assert_eq!(
            lines.next(),
            Some("```json"),
            "{file}: a JSON block follows"
        );
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let value =
            serde_json::from_str(&block.join("\n")).unwrap_or_else(|e| panic!("{file}: {e}"));
        found.push((file.to_owned(), value));
    }
    found
}

/// Runs `promptreg ARGS` as an MCP client would, in `dir` with `env`:
/// initialise, list; the prompts' names.
fn listed(args: &[String], dir: &Path, env: &[(String, String)]) -> Vec<String> {
    let mut child = Command::new(get_cargo_bin("promptreg"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("PROMPTREG_KEY")
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "prompts/list" }),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let answer = loop {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let output = child.wait_with_output().unwrap();
            panic!(
                "`promptreg {}` ended: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    drop(stdin);
    assert!(child.wait().unwrap().success());
    answer["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_client_configurations_of_the_book_start_sessions() {
    let served = support::serve(&[]);
    let run = |args: &[&str]| {
        let output = Command::new(get_cargo_bin("promptreg"))
            .current_dir(served.dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["store", "release", "latest", "production"]);
    let created: Value = serde_json::from_str(&run(&[
        "keys", "create", "mcp", "--scope", "read", "--admin", "--json",
    ]))
    .unwrap();
    let key = created["secret"].as_str().unwrap();
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");

    let configurations = configurations();
    assert_eq!(configurations.len(), 3);
    for (file, config) in configurations {
        let servers = config["mcpServers"]
            .as_object()
            .or_else(|| config["servers"].as_object());
        for (name, server) in servers.unwrap_or_else(|| panic!("{file}: no servers")) {
            if let Some(command) = server["command"].as_str() {
                assert_eq!(command, "promptreg", "{file}: {name}");
                let args: Vec<String> = server["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().replace("localhost:7878", &served.addr))
                    .collect();
                let env: Vec<(String, String)> = server["env"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            if k == "PROMPTREG_KEY" {
                                key.to_owned()
                            } else {
                                v.as_str().unwrap().to_owned()
                            },
                        )
                    })
                    .collect();
                let names = listed(&args, &repository, &env);
                assert!(
                    names.iter().any(|n| n == "goal-running"),
                    "{file}: {name}: {names:?}"
                );
            } else {
                let url = server["url"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{file}: {name}: a command or a URL"));
                let (path, query) = url
                    .strip_prefix("http://localhost:7878")
                    .and_then(|rest| rest.split_once('?'))
                    .unwrap_or_else(|| panic!("{file}: {name}: {url}"));
                assert_eq!(path, "/mcp");
                for pair in query.split('&') {
                    let key = pair.split('=').next().unwrap();
                    assert!(
                        ["label", "pack", "locale", "subject"].contains(&key),
                        "{file}: `{key}`"
                    );
                }
                let authorization = server["headers"]["Authorization"].as_str().unwrap();
                assert!(
                    authorization.starts_with("Bearer "),
                    "{file}: {authorization}"
                );
            }
        }
    }
}

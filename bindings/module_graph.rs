//! The graph of a binding crate's modules, from the `crate::` paths in its
//! source files, and the first circle in it: both bindings' tests
//! (`tests/modules.rs`) include this file, so that their modules stay a
//! DAG, leaves first.
//!
//! A module is a file `src/NAME.rs` (the bindings' sources are flat);
//! `lib.rs` is the root, which declares them and is left out. Every
//! `crate::NAME` outside a comment is an edge, in a `use` (grouped ones
//! too: `use crate::{a, b::C}`) or inline.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module name -> the modules it names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The graph of the modules in `src`.
pub fn graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for entry in fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_none_or(|e| e != "rs") || name == "lib" {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let mut edges = BTreeSet::new();
        for line in text.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            edges.extend(named_modules(code));
        }
        edges.remove(name);
        graph.insert(name.to_owned(), edges);
    }
    graph
}

/// The modules `crate::` paths on one line of code name.
fn named_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::C, d::{e, f}}`: the first segment of each item.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[i..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        out.push(identifier(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(identifier(rest));
        }
    }
    out
}

fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first circle of modules found, as a path that ends where it
/// started; `None` for a DAG.
pub fn circle(graph: &Graph) -> Option<Vec<String>> {
    // 0: not visited, 1: on the path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut path = Vec::new();
    for start in graph.keys() {
        if let Some(found) = visit(graph, start, &mut state, &mut path) {
            return Some(found);
        }
    }
    None
}

fn visit<'a>(
    graph: &'a Graph,
    node: &'a str,
    state: &mut BTreeMap<&'a str, u8>,
    path: &mut Vec<&'a str>,
) -> Option<Vec<String>> {
    match state.get(node) {
        Some(2) => return None,
        Some(1) => {
            let from = path.iter().position(|n| *n == node).unwrap_or(0);
            let mut found: Vec<String> = path[from..].iter().map(|n| n.to_string()).collect();
            found.push(node.to_owned());
            return Some(found);
        }
        _ => {}
    }
    state.insert(node, 1);
    path.push(node);
    for next in graph.get(node).into_iter().flatten() {
        if let Some(found) = visit(graph, next, state, path) {
            return Some(found);
        }
    }
    path.pop();
    state.insert(node, 2);
    None
}

/// Asserts that the modules of the crate at `manifest_dir` form a DAG.
pub fn assert_no_circle(manifest_dir: &str) {
    let graph = graph(&Path::new(manifest_dir).join("src"));
    assert!(graph.len() > 1, "no modules found under {manifest_dir}/src");
    if let Some(found) = circle(&graph) {
        panic!(
            "the modules form a circle: {}; move what they share into a module below them",
            found.join(" -> ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_and_inline_paths_are_edges() {
        let mut names = named_modules("use crate::{a, b::C, d::{e, f}};");
        names.extend(named_modules("let x = crate::g::h(crate::i::J);"));
        assert_eq!(names, ["a", "b", "d", "g", "i"]);
    }

    #[test]
    fn a_circle_is_found_and_a_dag_is_not() {
        let edges = |pairs: &[(&str, &str)]| {
            let mut graph = Graph::new();
            for (from, to) in pairs {
                graph
                    .entry(from.to_string())
                    .or_default()
                    .insert(to.to_string());
                graph.entry(to.to_string()).or_default();
            }
            graph
        };
        assert_eq!(circle(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
        let found = circle(&edges(&[("a", "b"), ("b", "c"), ("c", "a")])).unwrap();
        assert_eq!(found, ["a", "b", "c", "a"]);
    }
}

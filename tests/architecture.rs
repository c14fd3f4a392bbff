//! The architecture, checked: the crates' dependency arrows follow the layering (physics,
//! then engine, then the plugin), and no crate's modules import each other in a cycle.
//!
//! The compiler already refuses a crate that uses one it does not depend on; this test
//! refuses the manifest change that would let it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The names in a manifest's `[dependencies]` table (not dev- or build-dependencies).
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut names = BTreeSet::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                names.insert(name.trim().to_string());
            }
        }
    }
    names
}

#[test]
fn the_crates_depend_only_downwards() {
    let root = workspace();
    let physics = dependencies(&root.join("crates/rosin-physics/Cargo.toml"));
    let engine = dependencies(&root.join("crates/rosin-engine/Cargo.toml"));
    let lab = dependencies(&root.join("crates/rosin-lab/Cargo.toml"));
    let plugin = dependencies(&root.join("plugin/Cargo.toml"));
    let framework = ["nice-plug", "nice-plug-egui", "egui", "sensel-sys", "rosin", "rosin-engine", "rosin-lab"];
    for name in framework {
        assert!(!physics.contains(name), "rosin-physics must not depend on {name}");
        assert!(!lab.contains(name), "rosin-lab must not depend on {name}");
    }
    for name in ["nice-plug", "nice-plug-egui", "egui", "sensel-sys", "rosin", "rosin-lab"] {
        assert!(!engine.contains(name), "rosin-engine must not depend on {name}");
    }
    // Plain numeric crates only: a noise generator, and the CPU dispatch of the stencils.
    assert!(physics.iter().all(|d| ["rand_xoshiro", "multiversion"].contains(&d.as_str())), "rosin-physics depends on {physics:?}: only plain numeric crates belong there");
    assert!(engine.contains("rosin-physics") && lab.contains("rosin-physics"));
    assert!(plugin.contains("rosin-engine") && plugin.contains("nice-plug"));
    assert!(!plugin.contains("rosin-lab"), "the plugin does not ship the lab");
}

/// Every module of a crate (by path from the crate root) and the file that holds it.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(src).unwrap();
            if path.is_dir() {
                if relative != Path::new("bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let mut module: Vec<String> = relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            found.insert(module, path);
        }
    }
    found
}

/// The code of a file without its comments, its string literals' contents and its test
/// module (whose `super::` names the file itself).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|line| {
            let line = line.trim_start();
            if line.starts_with("//") {
                ""
            } else {
                line.split(" //").next().unwrap()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file's code names: `crate::a::b` and `super::a` (resolved against `module`).
fn named_paths(code: &str, module: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    for (start, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_' || bytes[start - 1] == b':') {
            continue;
        }
        let rest = &code[start..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
        let mut parts = rest[..end].split("::").filter(|p| !p.is_empty()).map(str::to_string);
        let mut path = match parts.next().as_deref() {
            Some("crate") => Vec::new(),
            _ => {
                // `super` from a.rs is a's parent; from a/mod.rs it is a's parent too.
                let mut parent = module.to_vec();
                if !is_mod_file || !parent.is_empty() {
                    parent.pop();
                }
                parent
            }
        };
        path.extend(parts.take_while(|p| p != "super"));
        paths.push(path);
    }
    paths
}

/// The module graph of a crate: an edge from each module to every other module it names,
/// not counting its own descendants (a parent declares its children).
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let all = modules(src);
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &all {
        let is_mod_file = file.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs");
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let edges = graph.entry(module.clone()).or_default();
        for path in named_paths(&code, module, is_mod_file) {
            // The longest prefix of the path that is a module.
            let target = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| all.contains_key(p));
            if let Some(target) = target {
                if target != *module && !target.starts_with(module) && !target.is_empty() {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// A cycle in `graph`, if there is one.
fn find_cycle(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        marks: &mut BTreeMap<Vec<String>, Mark>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|n| n == node).unwrap();
                let mut cycle = stack[from..].to_vec();
                cycle.push(node.clone());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph.keys().find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

fn show(cycle: &[Vec<String>]) -> String {
    cycle.iter().map(|m| format!("crate::{}", m.join("::"))).collect::<Vec<_>>().join(" -> ")
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = workspace();
    let crates = ["crates/rosin-physics", "crates/rosin-engine", "crates/rosin-lab", "plugin", "sensel-sys", "sensel-mock", "xtask"];
    for krate in crates {
        let graph = module_graph(&root.join(krate).join("src"));
        assert!(graph.len() > 1 || krate == "xtask" || krate == "sensel-mock", "{krate}: no modules found");
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate} has an import cycle: {}", show(&cycle));
        }
    }
}

#[test]
fn the_physics_families_are_layered() {
    // Family to family, from the module graph: no family may reach a family above it.
    let graph = module_graph(&workspace().join("crates/rosin-physics/src"));
    let order = ["string", "friction", "body", "bow", "drum", "waveguide"];
    let rank = |m: &Vec<String>| order.iter().position(|f| m.first().is_some_and(|g| g == f));
    for (from, targets) in &graph {
        for to in targets {
            let (Some(a), Some(b)) = (rank(from), rank(to)) else { continue };
            assert!(b <= a, "crate::{} uses crate::{}, a family above it", from.join("::"), to.join("::"));
        }
    }
    assert!(graph.keys().all(|m| m.is_empty() || rank(m).is_some()), "a physics module outside the families: {:?}", graph.keys().collect::<Vec<_>>());
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    // The checks above are only as good as the finder: it must see a two-module cycle.
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    let mut graph = BTreeMap::from([(a.clone(), BTreeSet::from([b.clone()])), (b.clone(), BTreeSet::new())]);
    assert!(find_cycle(&graph).is_none());
    graph.get_mut(&b).unwrap().insert(a.clone());
    assert_eq!(find_cycle(&graph).map(|c| c.len()), Some(3));
    let module = vec!["x".to_string(), "y".to_string()];
    assert_eq!(named_paths("use super::z::Q;", &module, false), vec![vec!["x".to_string(), "z".to_string(), "Q".to_string()]]);
    assert_eq!(named_paths("use crate::p::q;", &module, false), vec![vec!["p".to_string(), "q".to_string()]]);
}

/// Every physics file cites its paper, or says it is Rosin's own (tuning, intonation, sets).
#[test]
fn every_physics_file_says_where_it_comes_from() {
    let sources = ["willemsen2019", "matusiak2025", "onofrei2021", "serafin1999", "MODELS.md", "Woodhouse", "Rosin"];
    let silent: Vec<String> = modules(&workspace().join("crates/rosin-physics/src"))
        .into_iter()
        .filter(|(_, file)| {
            let text = std::fs::read_to_string(file).unwrap();
            let doc: String = text.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n");
            !sources.iter().any(|s| doc.contains(s))
        })
        .map(|(_, file)| file.display().to_string())
        .collect();
    assert!(silent.is_empty(), "these physics files' module docs cite no paper: {silent:?}");
}

/// The mock LibSensel's control functions (`sensel_sys::mock`) are behind the `mock`
/// feature, and only the tests and the mock itself turn it on: the plugin, and so every
/// bundle built from it, carries none of it (issue 18).
#[test]
fn the_sensel_mock_is_not_in_the_product() {
    let root = workspace();
    let lib = std::fs::read_to_string(root.join("sensel-sys/src/lib.rs")).unwrap();
    assert!(lib.contains("#[cfg(feature = \"mock\")]\npub mod mock;"), "sensel_sys::mock is not behind its feature");
    let enables_mock = |manifest: &str| {
        let text = std::fs::read_to_string(root.join(manifest)).unwrap();
        text.lines().any(|line| line.trim_start().starts_with("sensel-sys") && line.contains("\"mock\""))
    };
    for product in ["plugin/Cargo.toml", "crates/rosin-engine/Cargo.toml", "crates/rosin-lab/Cargo.toml", "xtask/Cargo.toml"] {
        assert!(!enables_mock(product), "{product} turns the Sensel mock on");
    }
    assert!(enables_mock("Cargo.toml") && enables_mock("sensel-mock/Cargo.toml"), "the tests need the mock");
}

/// The quick tier (`scripts/test.sh --quick`) builds the tests without the plugin crate, so a
/// test file that uses the plugin (`rosin::`, `clap_sys::`, `libloading::`) must say so with
/// `#![cfg(feature = "plugin")]`, or the quick tier does not compile (`editor_pages.rs` once
/// did not). The full suite builds with the plugin and would never notice.
#[test]
fn every_test_that_uses_the_plugin_is_behind_its_feature() {
    let plugin_crates = ["rosin::", "clap_sys::", "libloading::"];
    let mut unguarded = Vec::new();
    for entry in std::fs::read_dir(workspace().join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = code_of(&text);
        // A path that starts with the crate's name, not one that ends with it (`my_rosin::`).
        let uses_plugin = plugin_crates.iter().any(|c| code.match_indices(c).any(|(i, _)| code[..i].chars().next_back().is_none_or(|p| !(p.is_alphanumeric() || p == '_' || p == ':'))));
        if uses_plugin && !text.contains("#![cfg(feature = \"plugin\")]") {
            unguarded.push(path.display().to_string());
        }
    }
    assert!(unguarded.is_empty(), "these tests use the plugin but are not behind the `plugin` feature: {unguarded:?}");
}

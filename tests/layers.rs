//! The layers the build keeps: every `crate::` and `super::` path in the library's non-test
//! code, inline paths included (comments and doc links excluded), must point from a module
//! to one in a layer below it. The order is the one `docs/architecture.md` declares (its
//! "Layers" block), so the map and the code cannot drift apart: a new top-level module has to
//! be placed there, and an import that climbs (or a cycle, which always climbs somewhere)
//! fails here with the file and line to look at.
//!
//! Inside `workload` the same reader keeps the kinds apart: no kind (a folder that
//! `workload::kind::KINDS` registers) names another, so what two kinds share lives below them
//! (a module of `workload` that is not a kind, or `sql`) and a kind can be read, changed or
//! removed alone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, from the top layer down, as `docs/architecture.md` lists them in
/// the fenced block after its "## Layers" heading (one module or several separated by
/// spaces per line, before any `#` comment).
fn declared_layers() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("read docs");
    let section = doc
        .split("\n## Layers")
        .nth(1)
        .expect("docs/architecture.md has a '## Layers' section");
    let block = section
        .split("```")
        .nth(1)
        .expect("the Layers section has a fenced block");
    block
        .lines()
        .skip(1)
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_string()
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file with comments, string and char literals blanked out (lines kept, so
/// line numbers stay right) and `#[cfg(test)]` items removed.
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let (open, close) = if rest.starts_with("r#\"") {
                (3, "\"#")
            } else {
                (2, "\"")
            };
            let end = rest[open..]
                .find(close)
                .map_or(rest.len(), |e| open + e + close.len());
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            let b = rest.as_bytes();
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(rest.len());
            out.extend(rest[..end].chars().filter(|&c| c == '\n'));
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with("'\\")
            || (rest.len() > 2 && rest.as_bytes()[2] == b'\'' && rest.starts_with('\''))
        {
            // A char literal ('x', '\n', '\''); lifetimes ('a) have no closing quote.
            let end = rest[1..].find('\'').map_or(1, |e| e + 2);
            out.push_str("' '");
            i += end;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    drop_test_items(&out)
}

/// Blanks `#[cfg(test)]` items (a module with its braces, or one item up to its `;` or its
/// closing brace), keeping the lines.
fn drop_test_items(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let brace = item.find('{');
        let semi = item.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, c) in item[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => item.len(),
        };
        out.extend(item[..end].chars().filter(|&c| c == '\n'));
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The module path of a file below `src` (`workload/oltp/mod.rs` → `[workload, oltp]`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// Every path a file's code names, from the crate's root, with the line it starts on:
/// `crate::a::b`, and `super::` chains resolved from the file's module (`super::x` in
/// `workload/kv/keys.rs` is `workload::kv::x`). A group (`crate::{a, b::{c, d}}`) gives one
/// path per item, across lines; `$crate::` (a macro's) is not the file's own.
fn paths(code: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let chars: Vec<char> = code.chars().collect();
    let at = |i: usize, word: &str| {
        word.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let after_name =
            i > 0 && (is_name(chars[i - 1]) || chars[i - 1] == '$' || chars[i - 1] == ':');
        if chars[i] == '\n' {
            line += 1;
        } else if !after_name && at(i, "crate::") {
            let mut j = i + 7;
            let mut named = Vec::new();
            path_tree(&chars, &mut j, Vec::new(), &mut named);
            found.extend(named.into_iter().map(|p| (line, p)));
        } else if !after_name && at(i, "super::") {
            let mut j = i;
            let mut up = 0;
            while at(j, "super::") {
                up += 1;
                j += 7;
            }
            // From `a/b/c.rs` (module [a, b, c]) `super::` is [a, b].
            if up <= module.len() {
                let mut named = Vec::new();
                path_tree(
                    &chars,
                    &mut j,
                    module[..module.len() - up].to_vec(),
                    &mut named,
                );
                found.extend(named.into_iter().map(|p| (line, p)));
            }
            i = j - 1;
        }
        i += 1;
    }
    found
}

fn is_name(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Reads the path (or group of paths) at `at` after `prefix`, into `out`.
fn path_tree(chars: &[char], at: &mut usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let skip_space = |at: &mut usize| {
        while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
            *at += 1;
        }
    };
    loop {
        skip_space(at);
        if chars.get(*at) == Some(&'{') {
            *at += 1;
            loop {
                skip_space(at);
                match chars.get(*at) {
                    None => return,
                    Some('}') => {
                        *at += 1;
                        return;
                    }
                    _ => path_tree(chars, at, prefix.clone(), out),
                }
                // Past a rename (`a as b`) to the next item.
                while let Some(&c) = chars.get(*at) {
                    match c {
                        ',' => {
                            *at += 1;
                            break;
                        }
                        '}' => break,
                        _ => *at += 1,
                    }
                }
            }
        }
        let name: String = chars[*at..].iter().take_while(|c| is_name(**c)).collect();
        *at += name.chars().count();
        if name.is_empty() {
            // A glob (`a::*`) names what is before it.
            if !prefix.is_empty() {
                out.push(prefix);
            }
            return;
        }
        if name != "self" {
            prefix.push(name);
        }
        if chars.get(*at) == Some(&':') && chars.get(*at + 1) == Some(&':') {
            *at += 2;
            continue;
        }
        out.push(prefix);
        return;
    }
}

/// Every top-level module a file's code names, with the line: `crate::x`, `crate::{x, y}`
/// and `super::` chains that climb to the crate's root.
fn imports(code: &str, module: &[String]) -> Vec<(usize, String)> {
    paths(code, module)
        .into_iter()
        .filter_map(|(line, p)| p.into_iter().next().map(|top| (line, top)))
        .collect()
}

/// The kinds, as `workload::kind::KINDS` registers them (`&super::io::KIND` is `io`).
fn registered_kinds() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("src/workload/kind.rs")).expect("read kind.rs");
    let list = text
        .split("pub static KINDS")
        .nth(1)
        .and_then(|rest| rest.split("];").next())
        .expect("src/workload/kind.rs declares `pub static KINDS`");
    let kinds: Vec<String> = list
        .split("super::")
        .skip(1)
        .map(|item| item.chars().take_while(|c| is_name(*c)).collect())
        .collect();
    for kind in &kinds {
        assert!(
            root().join("src/workload").join(kind).is_dir(),
            "KINDS names `{kind}`, which has no folder src/workload/{kind}/"
        );
    }
    kinds
}

/// The modules of `dir` a file's code names (`dir::NAME` from the crate's root, however it
/// is reached), with the line, once per line.
fn modules_of(code: &str, module: &[String], dir: &str) -> Vec<(usize, String)> {
    let mut named: Vec<(usize, String)> = paths(code, module)
        .into_iter()
        .filter_map(|(line, p)| match &p[..] {
            [d, name, ..] if d == dir => Some((line, name.clone())),
            _ => None,
        })
        .collect();
    named.dedup();
    named
}

/// The kinds other than `own` that a file of kind `own` names, with the line, once each.
fn other_kinds(code: &str, module: &[String], own: &str, kinds: &[String]) -> Vec<(usize, String)> {
    modules_of(code, module, "workload")
        .into_iter()
        .filter(|(_, kind)| kind != own && kinds.contains(kind))
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let layers = declared_layers();
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let tops: BTreeSet<String> = files
        .iter()
        .filter_map(|p| module_of(p.strip_prefix(&src).unwrap()).first().cloned())
        .collect();
    let mut violations = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let module = module_of(rel);
        let Some(top) = module.first().cloned() else {
            continue; // lib.rs and main.rs: the root names every module.
        };
        let text = std::fs::read_to_string(path).unwrap();
        for (line, name) in imports(&code_of(&text), &module) {
            // Its own module, or not a module (an item the root re-exports).
            if name == top || !tops.contains(&name) {
                continue;
            }
            edges.entry(top.clone()).or_default().insert(name.clone());
            if let (Some(a), Some(b)) = (rank.get(top.as_str()), rank.get(name.as_str()))
                && b < a
            {
                violations.push(format!(
                    "src/{}:{line}: `{top}` imports `{name}`, a layer above it",
                    rel.display()
                ));
            }
        }
    }
    let unplaced: Vec<&String> = tops
        .iter()
        .filter(|t| !rank.contains_key(t.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules missing from the Layers block of docs/architecture.md: {unplaced:?}"
    );
    let gone: Vec<&String> = layers.iter().filter(|l| !tops.contains(*l)).collect();
    assert!(
        gone.is_empty(),
        "docs/architecture.md places modules that do not exist: {gone:?}"
    );
    assert!(
        violations.is_empty(),
        "imports against the layers (move the code down, or pass what it needs in):\n{}",
        violations.join("\n")
    );
    // The order is total, so no cycle can pass the check above; say so plainly anyway.
    for (from, tos) in &edges {
        for to in tos {
            assert!(
                !edges.get(to).is_some_and(|back| back.contains(from)),
                "`{from}` and `{to}` import each other"
            );
        }
    }
}

#[test]
fn the_reader_sees_the_paths_the_layers_test_must_see() {
    let code = code_of(
        "use crate::{run::Observer, spec};\n// crate::ui in a comment\nlet s = \"crate::ui\";\nfn f() { crate::stop::Stop::new(); super::super::env::x(); }\n#[cfg(test)]\nmod tests { use crate::ui; }\n",
    );
    let module = vec!["workload".to_string(), "io".to_string()];
    let names: Vec<String> = imports(&code, &module)
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(names, ["run", "spec", "stop", "env"]);
}

#[test]
fn no_kind_imports_another_kind() {
    let kinds = registered_kinds();
    assert!(kinds.len() > 1, "no kinds read from KINDS: {kinds:?}");
    let src = root().join("src");
    let mut violations = Vec::new();
    for kind in &kinds {
        let mut files = Vec::new();
        rust_files(&src.join("workload").join(kind), &mut files);
        files.sort();
        for path in &files {
            let rel = path.strip_prefix(&src).unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            for (line, other) in other_kinds(&code_of(&text), &module_of(rel), kind, &kinds) {
                violations.push(format!(
                    "src/{}:{line}: kind `{kind}` imports kind `{other}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "kinds importing kinds (move what two kinds share below them: a module of src/workload/ \
         that is not a kind, or src/sql/):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_reader_sees_which_kind_a_path_names() {
    let code = code_of(
        "use crate::workload::{io::distribution::{Zipf, self}, kv as cache, rng};\nuse super::super::oltp::Phases;\nfn f() { super::queries::x(); crate::workload::scan::session::connect(); $crate::workload::mail::m(); }\n// crate::workload::jobs\nuse crate::{\n    spec,\n    workload::memory::Kernel,\n};\n#[cfg(test)]\nmod tests { use crate::workload::cpu; }\n",
    );
    let module: Vec<String> = ["workload", "olap", "session"].map(String::from).to_vec();
    let kinds: Vec<String> = [
        "io", "kv", "oltp", "scan", "mail", "jobs", "memory", "cpu", "olap",
    ]
    .map(String::from)
    .to_vec();
    let named = other_kinds(&code, &module, "olap", &kinds);
    let named: Vec<(usize, &str)> = named.iter().map(|(l, k)| (*l, k.as_str())).collect();
    assert_eq!(
        named,
        [
            (1, "io"),
            (1, "kv"),
            (2, "oltp"),
            (3, "scan"),
            (5, "memory")
        ]
    );
    // `super::queries` from `workload/olap/session.rs` is olap's own.
    assert!(
        paths(&code, &module)
            .iter()
            .any(|(_, p)| p == &["workload", "olap", "queries", "x"])
    );
}

/// The sibling files a file of `dir` names through `super::NAME` or `crate::<dir>::NAME`,
/// with the line.
fn sibling_imports(code: &str, dir: &str, siblings: &BTreeSet<String>) -> Vec<(usize, String)> {
    // A file directly in `dir`: its own name does not change where `super::` leads.
    let module = [dir.to_string(), String::new()];
    modules_of(code, &module, dir)
        .into_iter()
        .filter(|(_, name)| siblings.contains(name))
        .collect()
}

#[test]
fn no_command_imports_another_command() {
    let dir = root().join("src/commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files.sort();
    let stem = |p: &Path| p.file_stem().unwrap().to_string_lossy().into_owned();
    // What several commands share lives in `shared`; `mod.rs` dispatches to every command.
    let commands: BTreeSet<String> = files
        .iter()
        .map(|p| stem(p))
        .filter(|s| s != "mod" && s != "shared")
        .collect();
    let mut violations = Vec::new();
    for path in files.iter().filter(|p| commands.contains(&stem(p))) {
        let text = std::fs::read_to_string(path).unwrap();
        for (line, name) in sibling_imports(&code_of(&text), "commands", &commands) {
            if name != stem(path) {
                violations.push(format!(
                    "src/commands/{}.rs:{line}: imports the command file `{name}`",
                    stem(path)
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a command's file imports another's (move what they share into commands/shared.rs, or below the commands):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_sibling_reader_sees_only_sibling_paths() {
    let siblings: BTreeSet<String> = ["report_cmd", "study_cmd"].map(String::from).into();
    let code = "use super::report_cmd::write;\nuse super::shared::x;\nlet a = crate::commands::study_cmd::f();\nlet b = super::super::study_cmd::g();\n";
    let found: Vec<(usize, String)> = sibling_imports(code, "commands", &siblings);
    assert_eq!(
        found,
        [(1, "report_cmd".to_string()), (3, "study_cmd".to_string())]
    );
}

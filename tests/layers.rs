//! The layers the build keeps: every `crate::` and `super::` path in the library's non-test
//! code, inline paths included (comments and doc links excluded), must point from a module
//! to one in a layer below it. The order is the one `docs/architecture.md` declares (its
//! "Layers" block), so the map and the code cannot drift apart: a new top-level module has to
//! be placed there, and an import that climbs (or a cycle, which always climbs somewhere)
//! fails here with the file and line to look at.

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

/// Every top-level module a file's code names, with the line: `crate::x`, `crate::{x, y}`
/// and `super::` chains that climb to the crate's root.
fn imports(code: &str, module: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut search = 0;
        while let Some(p) = line[search..].find("crate::") {
            let at = search + p;
            search = at + 7;
            if at > 0 && line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$')
            {
                continue;
            }
            let after = &line[at + 7..];
            if let Some(group) = after.strip_prefix('{') {
                // Only the group's first level names top-level modules; a group that spans
                // lines is read on the following lines too.
                let mut depth = 0;
                let mut text = String::new();
                for c in group.chars().chain(
                    code.lines()
                        .skip(n + 1)
                        .flat_map(|l| l.chars().chain(['\n'])),
                ) {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => text.push(','),
                        c if depth == 0 => text.push(c),
                        _ => {}
                    }
                }
                for item in text.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.push((n + 1, name));
                    }
                }
            } else {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((n + 1, name));
            }
        }
        let mut search = 0;
        while let Some(p) = line[search..].find("super::") {
            let at = search + p;
            if at > 0 && line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
            {
                search = at + 7;
                continue;
            }
            let mut rest = &line[at..];
            let mut up = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                up += 1;
                rest = r;
            }
            search = at + 7 * up;
            // From `a/b/c.rs` (module [a, b, c]) `super::` is [a, b]; reaching the root
            // names a top-level module.
            if up == module.len() {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((n + 1, name));
            }
        }
    }
    found
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

/// The sibling files a file of `dir` names through `super::NAME` or `crate::<dir>::NAME`,
/// with the line.
fn sibling_imports(code: &str, dir: &str, siblings: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let full = format!("crate::{dir}::");
    for (n, line) in code.lines().enumerate() {
        for pattern in ["super::", full.as_str()] {
            let mut search = 0;
            while let Some(p) = line[search..].find(pattern) {
                let at = search + p;
                search = at + pattern.len();
                // `super::super::` climbs out of the folder; `x::super::` is not a path start.
                if line[search..].starts_with("super::")
                    || (at > 0
                        && line[..at]
                            .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':'))
                {
                    continue;
                }
                let name: String = line[search..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if siblings.contains(&name) {
                    found.push((n + 1, name));
                }
            }
        }
    }
    found
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

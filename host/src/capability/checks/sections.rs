//! Sections of a file that is both the project's manifest and the checks'
//! configuration: `pyproject.toml [tool.pytest]`, `package.json
//! [scripts.test]`, `setup.cfg [tool:pytest]`. Only the named sections are
//! checks, so an honest session that adds a dependency to the manifest is
//! not judged by it, and a replay puts back only those sections.
//!
//! A section is a dotted key path in TOML and JSON (`tool.pytest` is the
//! table `[tool.pytest]` with everything under it; `test` in a Cargo.toml
//! is its `[[test]]` array) and a `[name]` heading in INI files.

use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    Json,
    Ini,
}

fn format(path: &str) -> Result<Format> {
    let name = path.rsplit('/').next().unwrap_or(path);
    Ok(match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("toml") => Format::Toml,
        Some("json") | Some("jsonc") => Format::Json,
        Some("ini") | Some("cfg") => Format::Ini,
        _ => bail!("`{path}`: sections are read from TOML, JSON and INI files only"),
    })
}

/// Each of `sections` in `content`: its text (`None`: absent). Equal text
/// is an equal section.
pub fn extract(
    path: &str,
    content: &str,
    sections: &[String],
) -> Result<BTreeMap<String, Option<String>>> {
    let mut out = BTreeMap::new();
    match format(path)? {
        Format::Toml => {
            let doc: toml_edit::DocumentMut = content
                .parse()
                .with_context(|| format!("`{path}` is not valid TOML"))?;
            for section in sections {
                // The section alone as a document: a table's own text
                // leaves out the tables under it.
                let text = toml_get(doc.as_item(), section).map(|item| {
                    let mut alone = toml_edit::DocumentMut::new();
                    toml_set(&mut alone, section, Some(item.clone()));
                    alone.to_string()
                });
                out.insert(section.clone(), text);
            }
        }
        Format::Json => {
            let value: serde_json::Value = serde_json::from_str(content)
                .with_context(|| format!("`{path}` is not plain JSON"))?;
            for section in sections {
                let found = json_get(&value, section);
                out.insert(section.clone(), found.map(|v| v.to_string()));
            }
        }
        Format::Ini => {
            for section in sections {
                let found = ini_span(content, section).map(|(a, b)| content[a..b].to_string());
                out.insert(section.clone(), found);
            }
        }
    }
    Ok(out)
}

/// `new` with each of `sections` as it is in `old` (removed when `old`
/// has no such section; an empty `old` has none).
pub fn put_back(path: &str, new: &str, old: &str, sections: &[String]) -> Result<String> {
    let format = format(path)?;
    let old = match (format, old.trim().is_empty()) {
        (Format::Json, true) => "{}",
        _ => old,
    };
    match format {
        Format::Toml => {
            let mut doc: toml_edit::DocumentMut = new
                .parse()
                .with_context(|| format!("`{path}` is not valid TOML"))?;
            let before: toml_edit::DocumentMut = old
                .parse()
                .with_context(|| format!("`{path}` was not valid TOML at the start"))?;
            for section in sections {
                toml_set(
                    &mut doc,
                    section,
                    toml_get(before.as_item(), section).cloned(),
                );
            }
            Ok(doc.to_string())
        }
        Format::Json => {
            let mut value: serde_json::Value =
                serde_json::from_str(new).with_context(|| format!("`{path}` is not plain JSON"))?;
            let before: serde_json::Value = serde_json::from_str(old)
                .with_context(|| format!("`{path}` was not plain JSON at the start"))?;
            for section in sections {
                json_set(&mut value, section, json_get(&before, section).cloned());
            }
            Ok(serde_json::to_string_pretty(&value)? + "\n")
        }
        Format::Ini => {
            let mut text = new.to_string();
            for section in sections {
                let old_part = ini_span(old, section).map(|(a, b)| &old[a..b]);
                text = match (ini_span(&text, section), old_part) {
                    (Some((a, b)), part) => {
                        format!("{}{}{}", &text[..a], part.unwrap_or(""), &text[b..])
                    }
                    (None, Some(part)) => {
                        let sep = if text.is_empty() || text.ends_with('\n') {
                            ""
                        } else {
                            "\n"
                        };
                        format!("{text}{sep}{part}")
                    }
                    (None, None) => text,
                };
            }
            Ok(text)
        }
    }
}

fn toml_get<'a>(root: &'a toml_edit::Item, section: &str) -> Option<&'a toml_edit::Item> {
    section
        .split('.')
        .try_fold(root, |item, key| item.as_table_like()?.get(key))
}

fn toml_set(doc: &mut toml_edit::DocumentMut, section: &str, value: Option<toml_edit::Item>) {
    let keys: Vec<&str> = section.split('.').collect();
    let (last, parents) = keys.split_last().expect("split gives one key at least");
    let mut table: &mut dyn toml_edit::TableLike = doc.as_table_mut();
    for key in parents {
        if table.get(key).is_none() {
            if value.is_none() {
                return;
            }
            let mut new = toml_edit::Table::new();
            new.set_implicit(true);
            table.insert(key, toml_edit::Item::Table(new));
        }
        if table.get(key).and_then(|i| i.as_table_like()).is_none() {
            // A value where a table was: the section is that value's now.
            if let Some(value) = value {
                table.insert(key, value);
            }
            return;
        }
        table = table
            .get_mut(key)
            .and_then(|i| i.as_table_like_mut())
            .expect("a table, checked above");
    }
    match value {
        Some(value) => {
            table.insert(last, value);
        }
        None => {
            table.remove(last);
        }
    }
}

fn json_get<'a>(root: &'a serde_json::Value, section: &str) -> Option<&'a serde_json::Value> {
    section
        .split('.')
        .try_fold(root, |value, key| value.as_object()?.get(key))
}

fn json_set(root: &mut serde_json::Value, section: &str, value: Option<serde_json::Value>) {
    let keys: Vec<&str> = section.split('.').collect();
    let (last, parents) = keys.split_last().expect("split gives one key at least");
    let mut node = root;
    for key in parents {
        let Some(object) = node.as_object_mut() else {
            return;
        };
        if !object.contains_key(*key) {
            if value.is_none() {
                return;
            }
            object.insert(key.to_string(), serde_json::json!({}));
        }
        node = object.get_mut(*key).expect("inserted above");
    }
    if let Some(object) = node.as_object_mut() {
        match value {
            Some(value) => {
                object.insert(last.to_string(), value);
            }
            None => {
                object.remove(*last);
            }
        }
    }
}

/// The byte span of INI section `name`: its heading line up to the next
/// heading (or the end).
fn ini_span(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut start = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let heading = line
            .trim()
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .map(str::trim);
        match (start, heading) {
            (None, Some(h)) if h == name => start = Some(at),
            (Some(s), Some(_)) => return Some((s, at)),
            _ => {}
        }
        at += line.len();
    }
    start.map(|s| (s, text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn toml_sections_are_put_back_and_the_rest_kept() {
        let old = "[project]\nname = \"x\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let new = "[project]\nname = \"x\"\ndependencies = [\"requests\"]\n\n[tool.pytest.ini_options]\naddopts = \"-q -k 'not slow'\"\n";
        let sections = names(&["tool.pytest", "tool.ruff"]);
        let a = extract("pyproject.toml", old, &sections).expect("old");
        let b = extract("pyproject.toml", new, &sections).expect("new");
        assert_ne!(a["tool.pytest"], b["tool.pytest"]);
        assert_eq!(a["tool.ruff"], None);
        let back = put_back("pyproject.toml", new, old, &sections).expect("put back");
        assert!(back.contains("requests"), "{back}");
        assert!(back.contains("addopts = \"-q\""), "{back}");
        assert!(!back.contains("not slow"), "{back}");
        // A section the session added is taken out.
        let added = format!("{old}\n[tool.ruff]\nignore = [\"E\"]\n");
        let back = put_back("pyproject.toml", &added, old, &sections).expect("put back");
        assert!(!back.contains("ignore"), "{back}");
    }

    #[test]
    fn json_keys_are_put_back() {
        let old =
            r#"{"name":"x","scripts":{"test":"node --test","build":"tsc"},"dependencies":{}}"#;
        let new = r#"{"name":"x","scripts":{"test":"node --test --test-skip-pattern=add","build":"tsc -b"},"dependencies":{"a":"1"}}"#;
        let back = put_back("package.json", new, old, &names(&["scripts.test"])).expect("back");
        let v: serde_json::Value = serde_json::from_str(&back).expect("json");
        assert_eq!(v["scripts"]["test"], "node --test");
        assert_eq!(v["scripts"]["build"], "tsc -b");
        assert_eq!(v["dependencies"]["a"], "1");
    }

    #[test]
    fn ini_sections_are_put_back() {
        let old = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n";
        let new = "[metadata]\nname = y\n\n[tool:pytest]\naddopts = -q --deselect t.py::test_a\n\n[flake8]\nmax-line-length = 200\n";
        let sections = names(&["tool:pytest", "flake8"]);
        let back = put_back("setup.cfg", new, old, &sections).expect("back");
        assert_eq!(
            back,
            "[metadata]\nname = y\n\n[tool:pytest]\naddopts = -q\n"
        );
        let got = extract("setup.cfg", new, &sections).expect("extract");
        assert!(got["flake8"].as_deref().is_some_and(|s| s.contains("200")));
    }

    #[test]
    fn other_formats_are_refused_by_name() {
        let e = extract("setup.py", "", &names(&["x"])).expect_err("not a section file");
        assert!(e.to_string().contains("setup.py"), "{e}");
    }
}

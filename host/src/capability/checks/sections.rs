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
            let before: toml_edit::DocumentMut = old
                .parse()
                .with_context(|| format!("`{path}` was not valid TOML at the start"))?;
            let mut text = new.to_string();
            for section in sections {
                let mut doc: toml_edit::DocumentMut = text
                    .parse()
                    .with_context(|| format!("`{path}` is not valid TOML"))?;
                let was = toml_get(before.as_item(), section).cloned();
                toml_set(&mut doc, section, was);
                // The section's own lines spliced in, when that gives the
                // same document as the edit through toml_edit (which does
                // not keep `\r\n` line ends, nor always a table's place).
                text = match toml_splice(&text, old, section) {
                    Some(spliced) if same_toml(&spliced, &doc) => spliced,
                    _ => with_line_ends_of(&text, doc.to_string()),
                };
            }
            Ok(text)
        }
        Format::Json => {
            let mut text = new.to_string();
            for section in sections {
                text = json_put_back(path, &text, old, section)?;
            }
            Ok(text)
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

/// `new` with the lines of the tables under `section` (`[tool.pytest]`,
/// `[tool.pytest.ini_options]`, each `[[test]]`) taken from `old`, in the
/// place of the first such table in `new` (or at its end). `None` when a
/// file cannot be read as TOML.
fn toml_splice(new: &str, old: &str, section: &str) -> Option<String> {
    let keys: Vec<&str> = section.split('.').collect();
    let in_new = toml_blocks(new, &keys)?;
    let in_old = toml_blocks(old, &keys)?;
    let mut was: String = in_old.iter().map(|r| &old[r.clone()]).collect();
    let line_end = if new.contains("\r\n") { "\r\n" } else { "\n" };
    let Some(first) = in_new.first() else {
        let mut text = new.to_string();
        if !was.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push_str(line_end);
            }
            if !text.is_empty() && !text.ends_with(&format!("{line_end}{line_end}")) {
                text.push_str(line_end);
            }
            text.push_str(&was);
        }
        return Some(text);
    };
    if !was.is_empty() && !was.ends_with('\n') && first.end < new.len() {
        was.push_str(line_end);
    }
    let mut text = new.to_string();
    for range in in_new.iter().skip(1).rev() {
        text.replace_range(range.clone(), "");
    }
    text.replace_range(first.clone(), &was);
    Some(text)
}

/// The byte ranges of the tables whose header path starts with `keys`:
/// each from its header's line to the next header's line.
fn toml_blocks(text: &str, keys: &[&str]) -> Option<Vec<std::ops::Range<usize>>> {
    fn walk(
        table: &toml_edit::Table,
        path: &mut Vec<String>,
        out: &mut Vec<(usize, bool)>,
        keys: &[&str],
    ) {
        let header = |t: &toml_edit::Table, path: &[String]| {
            let span = t.span().filter(|_| !t.is_implicit() && !t.is_dotted())?;
            let ours = path.len() >= keys.len() && path.iter().zip(keys).all(|(a, b)| a == b);
            Some((span.start, ours))
        };
        for (key, item) in table.iter() {
            path.push(key.to_string());
            match item {
                toml_edit::Item::Table(t) => {
                    out.extend(header(t, path));
                    walk(t, path, out, keys);
                }
                toml_edit::Item::ArrayOfTables(array) => {
                    for t in array.iter() {
                        out.extend(header(t, path));
                        walk(t, path, out, keys);
                    }
                }
                _ => {}
            }
            path.pop();
        }
    }
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut headers = Vec::new();
    walk(doc.as_table(), &mut Vec::new(), &mut headers, keys);
    let mut starts: Vec<(usize, bool)> = headers
        .into_iter()
        .map(|(at, ours)| (text[..at].rfind('\n').map_or(0, |n| n + 1), ours))
        .collect();
    starts.sort();
    Some(
        starts
            .iter()
            .enumerate()
            .filter(|(_, (_, ours))| *ours)
            .map(|(i, (at, _))| *at..starts.get(i + 1).map_or(text.len(), |(next, _)| *next))
            .collect(),
    )
}

/// Whether `text` is `doc` as TOML (the same keys, values and tables).
fn same_toml(text: &str, doc: &toml_edit::DocumentMut) -> bool {
    use serde_json::Value as J;
    use toml_edit::{Item, Value};
    fn value(v: &Value) -> J {
        match v {
            Value::String(s) => J::from(s.value().as_str()),
            Value::Integer(i) => J::from(*i.value()),
            Value::Float(f) => J::from(f.value().to_string()),
            Value::Boolean(b) => J::from(*b.value()),
            Value::Datetime(d) => J::from(d.value().to_string()),
            Value::Array(a) => J::Array(a.iter().map(value).collect()),
            Value::InlineTable(t) => {
                J::Object(t.iter().map(|(k, v)| (k.to_string(), value(v))).collect())
            }
        }
    }
    fn item(i: &Item) -> J {
        match i {
            Item::None => J::Null,
            Item::Value(v) => value(v),
            Item::Table(t) => J::Object(t.iter().map(|(k, i)| (k.to_string(), item(i))).collect()),
            Item::ArrayOfTables(a) => J::Array(
                a.iter()
                    .map(|t| J::Object(t.iter().map(|(k, i)| (k.to_string(), item(i))).collect()))
                    .collect(),
            ),
        }
    }
    text.parse::<toml_edit::DocumentMut>()
        .is_ok_and(|t| item(t.as_item()) == item(doc.as_item()))
}

/// `text`, written with `\r\n` line ends when `like` has them.
fn with_line_ends_of(like: &str, text: String) -> String {
    if like.contains("\r\n") {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text
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

/// `new` with `section` spliced in from `old` as text: the start's value
/// keeps its own bytes and nothing outside it moves, so a formatter check
/// over the file passes after a put-back as it did before.
fn json_put_back(path: &str, new: &str, old: &str, section: &str) -> Result<String> {
    use jsonc_parser::ast::Value;
    use jsonc_parser::common::Ranged;
    let new_ast = json_ast(new).with_context(|| format!("`{path}` is not plain JSON"))?;
    let old_ast =
        json_ast(old).with_context(|| format!("`{path}` was not plain JSON at the start"))?;
    let keys: Vec<&str> = section.split('.').collect();
    let was = json_find(old_ast.as_ref(), &keys).map(|v| v.text(old));
    let Some(Value::Object(object)) = new_ast.as_ref() else {
        bail!("`{path}` does not hold a JSON object");
    };
    let mut object = object;
    for (depth, key) in keys.iter().enumerate() {
        let Some(at) = object
            .properties
            .iter()
            .position(|p| p.name.as_str() == *key)
        else {
            let Some(text) = was else {
                return Ok(new.to_string());
            };
            return Ok(json_insert(
                new,
                object,
                key,
                &json_nest(&keys[depth + 1..], text),
            ));
        };
        let value = &object.properties[at].value;
        match (depth + 1 == keys.len(), value) {
            (true, _) => {
                return Ok(match was {
                    Some(text) => splice(new, value.start(), value.end(), text),
                    None => json_remove(new, object, at),
                });
            }
            (false, Value::Object(inner)) => object = inner,
            // A value where the section's parent object was.
            (false, other) => {
                return Ok(match was {
                    Some(text) => splice(
                        new,
                        other.start(),
                        other.end(),
                        &json_nest(&keys[depth + 1..], text),
                    ),
                    None => new.to_string(),
                });
            }
        }
    }
    unreachable!("a section has one key at least")
}

fn json_ast(text: &str) -> Result<Option<jsonc_parser::ast::Value<'_>>> {
    let parsed = jsonc_parser::parse_to_ast(
        text,
        &jsonc_parser::CollectOptions::default(),
        &jsonc_parser::ParseOptions::default(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(parsed.value)
}

fn json_find<'a, 'b>(
    root: Option<&'b jsonc_parser::ast::Value<'a>>,
    keys: &[&str],
) -> Option<&'b jsonc_parser::ast::Value<'a>> {
    keys.iter().try_fold(root?, |value, key| match value {
        jsonc_parser::ast::Value::Object(o) => o
            .properties
            .iter()
            .find(|p| p.name.as_str() == *key)
            .map(|p| &p.value),
        _ => None,
    })
}

/// `text` under `keys`, as `{"a": {"b": text}}`.
fn json_nest(keys: &[&str], text: &str) -> String {
    keys.iter().rev().fold(text.to_string(), |inner, key| {
        format!("{{{}: {inner}}}", serde_json::Value::from(*key))
    })
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..start], &text[end..])
}

/// `text` without member `at` of `object`, and without the comma and
/// spacing that went with it.
fn json_remove(text: &str, object: &jsonc_parser::ast::Object<'_>, at: usize) -> String {
    use jsonc_parser::common::Ranged;
    let props = &object.properties;
    let (start, end) = if props.len() == 1 {
        (object.start() + 1, object.end() - 1)
    } else if at + 1 < props.len() {
        (props[at].start(), props[at + 1].start())
    } else {
        (props[at - 1].end(), props[at].end())
    };
    splice(text, start, end, "")
}

/// `text` with `"key": value` added as the last member of `object`,
/// spaced as its first member is.
fn json_insert(
    text: &str,
    object: &jsonc_parser::ast::Object<'_>,
    key: &str,
    value: &str,
) -> String {
    use jsonc_parser::common::Ranged;
    let member = format!("{}: {value}", serde_json::Value::from(key));
    match (object.properties.first(), object.properties.last()) {
        (Some(first), Some(last)) => {
            let indent = &text[object.start() + 1..first.start()];
            let indent = if indent.trim().is_empty() && !indent.is_empty() {
                indent
            } else {
                " "
            };
            splice(text, last.end(), last.end(), &format!(",{indent}{member}"))
        }
        _ => splice(text, object.start() + 1, object.start() + 1, &member),
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

    /// Every put-back keeps the file's bytes outside the section: the
    /// session's `new` with only the section changed back is `expected`.
    fn restores(path: &str, old: &str, new: &str, section: &str, expected: &str) {
        let back = put_back(path, new, old, &names(&[section])).expect("put back");
        assert_eq!(back, expected, "{path} [{section}]");
        // And putting back what is already there changes nothing.
        let again = put_back(path, &back, old, &names(&[section])).expect("again");
        assert_eq!(again, back, "{path} [{section}] twice");
    }

    #[test]
    fn json_put_back_is_a_splice_that_keeps_key_order_spacing_and_line_ends() {
        let old = "{\r\n\t\"name\": \"x\",\r\n\t\"scripts\": {\r\n\t\t\"test\": \"x test\",\r\n\t\t\"build\": \"tsc\"\r\n\t},\r\n\t\"devDependencies\": {\"b\": \"1\", \"a\": \"2\"}\r\n}\r\n";
        // Strengthened test script, and an edit elsewhere that stays.
        let new = old
            .replace("\"x test\"", "\"x test && npm run size\"")
            .replace("\"tsc\"", "\"tsc -b\"");
        restores(
            "package.json",
            old,
            &new,
            "scripts.test",
            &old.replace("\"tsc\"", "\"tsc -b\""),
        );
        // A script the session added, first, middle or last, is taken out
        // with its comma.
        let plain = "{\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"lint\": \"x\"\n  },\n  \"z\": 1\n}\n";
        for added in [
            "{\n  \"scripts\": {\n    \"test\": \"t\",\n    \"build\": \"tsc\",\n    \"lint\": \"x\"\n  },\n  \"z\": 1\n}\n",
            "{\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"test\": \"t\",\n    \"lint\": \"x\"\n  },\n  \"z\": 1\n}\n",
            "{\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"lint\": \"x\",\n    \"test\": \"t\"\n  },\n  \"z\": 1\n}\n",
        ] {
            restores("package.json", plain, added, "scripts.test", plain);
        }
        // A script the session removed comes back, spaced as its siblings.
        let with = "{\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"lint\": \"x\",\n    \"test\": \"t\"\n  },\n  \"z\": 1\n}\n";
        restores("package.json", with, plain, "scripts.test", with);
        // The only member, and a parent object the session removed.
        restores(
            "package.json",
            "{\"scripts\": {}}",
            "{\"scripts\": {\"test\": \"t\"}}",
            "scripts.test",
            "{\"scripts\": {}}",
        );
        restores(
            "package.json",
            "{\"scripts\": {\"test\": \"t\"}, \"a\": 1}",
            "{\"a\": 1}",
            "scripts.test",
            "{\"a\": 1, \"scripts\": {\"test\": \"t\"}}",
        );
    }

    #[test]
    fn toml_put_back_keeps_the_rest_of_the_file_as_the_session_left_it() {
        let old = "# the project\r\n[project]\r\nname = \"x\"  # ours\r\ndependencies = []\r\n\r\n[tool.pytest.ini_options]\r\naddopts = \"-q\"\r\n\r\n[tool.black]\r\nline-length = 100\r\n";
        let new = old
            .replace("addopts = \"-q\"", "addopts = \"-q -k 'not slow'\"")
            .replace("dependencies = []", "dependencies = [\"requests\"]");
        let expected = old.replace("dependencies = []", "dependencies = [\"requests\"]");
        restores("pyproject.toml", old, &new, "tool.pytest", &expected);
        // A table the session added before the section does not move it.
        let new = new.replace(
            "[tool.pytest",
            "[tool.mypy]\r\nstrict = true\r\n\r\n[tool.pytest",
        );
        let expected = expected.replace(
            "[tool.pytest",
            "[tool.mypy]\r\nstrict = true\r\n\r\n[tool.pytest",
        );
        restores("pyproject.toml", old, &new, "tool.pytest", &expected);
        // A file with mixed line ends keeps each line's own.
        let old = "[project]\r\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let new = old.replace("-q", "-q -x").replace("\"x\"", "\"y\"");
        restores(
            "pyproject.toml",
            old,
            &new,
            "tool.pytest",
            &old.replace("\"x\"", "\"y\""),
        );
        // A section written as dotted keys, not under a header of its own,
        // is still put back (through toml_edit).
        let old = "[tool]\npytest.ini_options.addopts = \"-q\"\nblack.line-length = 100\n";
        let new = old.replace("-q", "-q -x").replace("100", "90");
        let back = put_back("pyproject.toml", &new, old, &names(&["tool.pytest"])).expect("back");
        assert!(back.contains("\"-q\"") && back.contains("90"), "{back}");
        // Cargo's `[[test]]` array, put back among other tables.
        let old = "[package]\nname = \"c\"\n\n[[test]]\nname = \"a\"\nharness = false\n\n[dependencies]\nx = \"1\"\n";
        let new = old
            .replace("harness = false", "harness = false\ntest = false")
            .replace("x = \"1\"", "x = \"2\"");
        restores(
            "Cargo.toml",
            old,
            &new,
            "test",
            &old.replace("x = \"1\"", "x = \"2\""),
        );
    }

    #[test]
    fn ini_put_back_keeps_the_rest_of_the_file() {
        let old = "[metadata]\r\nname = x\r\n\r\n[tool:pytest]\r\naddopts = -q\r\n\r\n[flake8]\r\nmax-line-length = 100\r\n";
        let new = old
            .replace("addopts = -q", "addopts = -q -x")
            .replace("name = x", "name = y");
        restores(
            "setup.cfg",
            old,
            &new,
            "tool:pytest",
            &old.replace("name = x", "name = y"),
        );
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

//! The list of what counts as a check, in the syntax of `.prove-it/checks`
//! (SPEC.md, "Weakened checks"), parsed once and matched path by path.
//!
//! ```text
//! # a comment
//! [tests]                      test files and folders: added ones never weaken
//! tests/
//! **/test_*.py
//! [config]                     runner, linter, type-checker configuration, hooks
//! pytest.ini
//! pyproject.toml [tool.pytest] only that section of the file
//! [inline]                     source files whose own test parts are checks
//! **/*.rs
//! !tests/fixtures/generated/   a leading `!` takes paths out of every section
//! [git-config]                 git configuration keys the checks read
//! diff.wsErrorHighlight
//! ```
//!
//! Patterns are git's (`.gitignore`): no `/` but at the end matches a name
//! at any depth, `**` crosses folders, a trailing `/` matches a folder and
//! everything in it. `verify.sh` and `.prove-it/checks` itself are always
//! checks, whatever the list says.

use gix::bstr::{BStr, ByteSlice};
use gix::glob::Pattern;
use gix::glob::pattern::Case;
use gix::glob::wildmatch::Mode;

/// Where the list in force comes from, and its file name in the repository.
pub const FILE: &str = ".prove-it/checks";

/// Comment lines around the built-in defaults an `@defaults` line expands
/// to ([`super::defaults::expand`]), so that a problem is said at its line
/// in the file the person wrote.
pub const DEFAULTS_BEGIN: &str = "#@defaults-begin";
pub const DEFAULTS_END: &str = "#@defaults-end";

/// What a listed path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// A test file: an added one stays when the checks are replayed.
    Test,
    /// Configuration or a hook: an added one is left out of a replay.
    Config,
    /// Only these sections of the file are checks.
    Sections(Vec<String>),
    /// A source file whose test parts (Rust `#[cfg(test)]` modules, doc
    /// tests) are checks.
    Inline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heading {
    Tests,
    Config,
    Inline,
    GitConfig,
}

struct Entry {
    pattern: Pattern,
    heading: Heading,
    section: Option<String>,
}

/// A parsed list.
pub struct List {
    entries: Vec<Entry>,
    negations: Vec<Pattern>,
    /// The `[git-config]` keys, as written.
    pub git_keys: Vec<String>,
}

/// Always checks, whatever the list says.
const ALWAYS: [&str; 2] = ["verify.sh", FILE];

impl List {
    /// Parses `text`; lines it cannot use are returned as problems, each
    /// naming its line number, and are otherwise left out.
    pub fn parse(text: &str) -> (List, Vec<String>) {
        let mut list = List {
            entries: Vec::new(),
            negations: Vec::new(),
            git_keys: Vec::new(),
        };
        let mut problems = Vec::new();
        let mut heading = Heading::Tests;
        // The line in the person's file: an expanded `@defaults` is one.
        let (mut n, mut expanded) = (0, false);
        for line in text.lines() {
            let line = line.trim();
            match line {
                DEFAULTS_BEGIN => {
                    (n, expanded) = (n + 1, true);
                    continue;
                }
                DEFAULTS_END => {
                    expanded = false;
                    continue;
                }
                _ if !expanded => n += 1,
                _ => {}
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line {
                "[tests]" => heading = Heading::Tests,
                "[config]" => heading = Heading::Config,
                "[inline]" => heading = Heading::Inline,
                "[git-config]" => heading = Heading::GitConfig,
                _ if line.starts_with('[') => problems.push(format!(
                    "line {}: `{line}` is not a heading (`[tests]`, `[config]`, `[inline]` or `[git-config]`)",
                    n
                )),
                _ if heading == Heading::GitConfig => {
                    let key_like = line.contains('.')
                        && !line.starts_with('.')
                        && !line.ends_with('.')
                        && !line.contains(char::is_whitespace);
                    if key_like {
                        list.git_keys.push(line.to_string());
                    } else {
                        problems.push(format!(
                            "line {}: `{line}` is not a git configuration key (`section.name`, as `git config` takes it)",
                            n
                        ));
                    }
                }
                _ => {
                    let (glob, section) = match line.split_once(" [") {
                        Some((glob, rest)) => match rest.strip_suffix(']') {
                            Some(section) if !section.trim().is_empty() => {
                                (glob.trim(), Some(section.trim().to_string()))
                            }
                            _ => {
                                problems.push(format!(
                                    "line {}: `{line}`: a section is written `FILE [SECTION]`",
                                    n
                                ));
                                continue;
                            }
                        },
                        None => (line, None),
                    };
                    let Some(pattern) = Pattern::from_bytes(glob.as_bytes()) else {
                        continue;
                    };
                    if pattern.is_negative() {
                        list.negations.push(pattern);
                    } else {
                        list.entries.push(Entry {
                            pattern,
                            heading,
                            section,
                        });
                    }
                }
            }
        }
        (list, problems)
    }

    /// What `path` (relative to the root, `/`-separated) is, or `None`
    /// when it is not a check.
    pub fn classify(&self, path: &str) -> Option<Class> {
        if ALWAYS.contains(&path) {
            return Some(Class::Config);
        }
        if self.negations.iter().any(|p| matches(p, path)) {
            return None;
        }
        let mut test = false;
        let mut inline = false;
        let mut sections = Vec::new();
        for entry in self.entries.iter().filter(|e| matches(&e.pattern, path)) {
            match (&entry.section, entry.heading) {
                (Some(section), _) => sections.push(section.clone()),
                (None, Heading::Config) => return Some(Class::Config),
                (None, Heading::Tests) => test = true,
                (None, Heading::Inline) => inline = true,
                (None, Heading::GitConfig) => {}
            }
        }
        if test {
            Some(Class::Test)
        } else if !sections.is_empty() {
            sections.dedup();
            Some(Class::Sections(sections))
        } else {
            inline.then_some(Class::Inline)
        }
    }
}

/// Whether `pattern` matches `path` or one of the folders it is in, as a
/// `.gitignore` line would.
fn matches(pattern: &Pattern, path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut ends: Vec<(usize, bool)> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(|(i, _)| (i, true))
        .collect();
    ends.push((bytes.len(), false));
    ends.into_iter().any(|(end, is_dir)| {
        let prefix: &BStr = bytes[..end].as_bstr();
        let base = prefix.rfind_byte(b'/').map(|p| p + 1);
        pattern.matches_repo_relative_path(
            prefix,
            base,
            Some(is_dir),
            Case::Sensitive,
            Mode::NO_MATCH_SLASH_LITERAL,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A problem is said at its line in the file the person wrote, the
    /// built-in defaults its `@defaults` line expands to counting as one.
    #[test]
    fn a_problem_after_the_defaults_is_said_at_its_own_line() {
        let text = super::super::defaults::expand("# mine\n@defaults\n[nonsense]\n");
        let (_, problems) = List::parse(&text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("line 3: `[nonsense]`"),
            "{problems:?}"
        );
    }

    fn class(list: &str, path: &str) -> Option<Class> {
        let (list, problems) = List::parse(list);
        assert!(problems.is_empty(), "{problems:?}");
        list.classify(path)
    }

    #[test]
    fn folders_names_and_globs_match_as_in_gitignore() {
        let list = "[tests]\ntests/\n**/test_*.py\n*_test.go\n[config]\n**/conftest.py\npytest.ini\n/mypy.ini\n";
        assert_eq!(class(list, "tests/unit/a.py"), Some(Class::Test));
        assert_eq!(class(list, "pkg/test_calc.py"), Some(Class::Test));
        assert_eq!(class(list, "test_calc.py"), Some(Class::Test));
        assert_eq!(class(list, "cmd/x/main_test.go"), Some(Class::Test));
        assert_eq!(class(list, "pytest.ini"), Some(Class::Config));
        // A hook inside a test folder is configuration: an added one is
        // left out of a replay.
        assert_eq!(class(list, "tests/conftest.py"), Some(Class::Config));
        assert_eq!(class(list, "src/calc.py"), None);
        // A name without a `/` matches at any depth; a leading `/` anchors.
        assert_eq!(class(list, "sub/pytest.ini"), Some(Class::Config));
        assert_eq!(class(list, "mypy.ini"), Some(Class::Config));
        assert_eq!(class(list, "sub/mypy.ini"), None);
        assert_eq!(class(list, "testsuite/a.py"), None);
    }

    #[test]
    fn sections_inline_and_negations() {
        let list = "[config]\npyproject.toml [tool.pytest]\npyproject.toml [tool.ruff]\n[inline]\n**/*.rs\n[tests]\ntests/\n!tests/generated/\n";
        assert_eq!(
            class(list, "pyproject.toml"),
            Some(Class::Sections(vec![
                "tool.pytest".into(),
                "tool.ruff".into()
            ]))
        );
        assert_eq!(class(list, "src/lib.rs"), Some(Class::Inline));
        assert_eq!(class(list, "tests/it.rs"), Some(Class::Test));
        assert_eq!(class(list, "tests/generated/x.rs"), None);
    }

    #[test]
    fn verify_sh_and_the_list_are_always_checks() {
        assert_eq!(class("!verify.sh\n", "verify.sh"), Some(Class::Config));
        assert_eq!(class("", FILE), Some(Class::Config));
    }

    #[test]
    fn bad_lines_are_named() {
        let (_, problems) = List::parse("[test]\nx [y\n");
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("line 1"), "{problems:?}");
    }

    #[test]
    fn git_config_keys_are_kept_and_bad_ones_named() {
        let (list, problems) =
            List::parse("[git-config]\ndiff.wsErrorHighlight\ncore.whitespace\nnot a key\n.x\n");
        assert_eq!(list.git_keys, ["diff.wsErrorHighlight", "core.whitespace"]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("line 4"), "{problems:?}");
        // A key is not a path: it classifies no file.
        assert_eq!(list.classify("core.whitespace"), None);
    }
}

//! What counts as a check when nothing narrower is committed, and what
//! `verify.sh` itself brings in (SPEC.md, "Weakened checks").
//!
//! Two parts, both read from a commit (never the work tree, which the
//! agent edits):
//! - [`builtin`]: every stack family's test and configuration patterns
//!   together (`crate::stacks::CHECK_FILES`). They are specific
//!   (`tests/`, `test_*.py`, `*_test.go`, `pytest.ini`), so a Python
//!   project with no manifest is protected like one with a manifest:
//!   guessing the stack from root files no longer narrows the list.
//! - [`derive`]: what `verify.sh` runs. A `package.json` script it runs
//!   brings the scripts that script calls (`npm run x`, `pnpm x`,
//!   `run-s a b`, `pre`/`post` scripts), transitively; every command found
//!   on the way brings the configuration files of its tool (oxlint,
//!   biome, tsc's `tsconfig.json`, ...), the file it is pointed at
//!   (`-c ci.ini`, `-p tsconfig.build.json`), and a script file it runs
//!   (`./scripts/check.sh`), which is read in turn. Always:
//!   `.gitattributes`, which configures `git diff --check`.
//!
//! It only reads a commit's files, and says why each derived line is there
//! (`prove-it doctor` shows it).

use super::list::{Class, List};
use crate::capability::git::Commit;
use std::collections::BTreeSet;

/// The line of a committed `.prove-it/checks` that stands for the
/// built-in defaults.
pub const DEFAULTS_LINE: &str = "@defaults";

/// Every family's check files, in the syntax of `.prove-it/checks`.
pub fn builtin() -> String {
    let mut text = String::new();
    for (key, lines) in crate::stacks::CHECK_FILES {
        text.push_str(&format!("# {key}\n"));
        text.push_str(lines);
    }
    text
}

/// `text` with an `@defaults` line replaced by [`builtin`].
pub fn expand(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim() == DEFAULTS_LINE {
            out.push_str(super::list::DEFAULTS_BEGIN);
            out.push('\n');
            out.push_str(&builtin());
            // The person's own lines after it start under `[tests]`, as
            // at the top of a file.
            out.push_str("[tests]\n");
            out.push_str(super::list::DEFAULTS_END);
            out.push('\n');
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// One line a check list gains from what `verify.sh` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    /// A `[config]` line: a pattern, or `FILE [SECTION]`.
    pub line: String,
    /// Why it is a check, for the person.
    pub why: String,
}

/// The lines `verify.sh` at `commit` brings to a list whose own text is
/// `base`: those `base` does not already make checks.
pub fn derive(commit: Option<&Commit>, base: &str) -> Vec<Derived> {
    let mut walk = Walk {
        commit,
        out: Vec::new(),
        seen_lines: BTreeSet::new(),
        seen_scripts: BTreeSet::new(),
        seen_files: BTreeSet::new(),
        depth: 0,
    };
    walk.add(".gitattributes", "it configures `git diff --check`".into());
    walk.file("verify.sh", "verify.sh");
    // The package scripts the list already names are checks too: what
    // they call is.
    for (manifest, script) in named_scripts(base) {
        walk.script(
            &manifest,
            &script,
            &format!("`{manifest} [scripts.{script}]`"),
        );
    }
    // Keep only what `base` does not already make a check of the same
    // kind: the derived line is news for the person then.
    let (base_list, _) = List::parse(base);
    let base_lines: BTreeSet<&str> = base.lines().map(str::trim).collect();
    walk.out
        .into_iter()
        .filter(|d| !base_lines.contains(d.line.as_str()) && !already(&base_list, &d.line))
        .collect()
}

/// Whether `base` already classes the path of `line` as it would be.
fn already(base: &List, line: &str) -> bool {
    let (path, section) = match line.split_once(" [") {
        Some((path, rest)) => (path, rest.strip_suffix(']')),
        None => (line, None),
    };
    if path.contains('*') || path.ends_with('/') {
        return false;
    }
    match (base.classify(path), section) {
        (Some(Class::Config), _) => true,
        (Some(Class::Sections(names)), Some(section)) => names.iter().any(|n| n == section),
        _ => false,
    }
}

/// The `FILE [scripts.NAME]` lines of a list: (manifest path, script).
fn named_scripts(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (file, rest) = line.trim().split_once(" [")?;
            let section = rest.strip_suffix(']')?.trim();
            let name = section.strip_prefix("scripts.")?;
            (file.ends_with("package.json") && !file.contains('*'))
                .then(|| (file.trim_start_matches('/').to_string(), name.to_string()))
        })
        .collect()
}

/// What a file an interpreter is given ends in, when it is a script.
const SCRIPT_EXTENSIONS: &[&str] = &[
    ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".py", ".rb", ".pl",
];

/// The derived lines in the syntax of `.prove-it/checks`, each after a
/// comment saying why.
pub fn render(derived: &[Derived]) -> String {
    if derived.is_empty() {
        return String::new();
    }
    let mut text = String::from("# what verify.sh runs\n[config]\n");
    for d in derived {
        text.push_str(&format!("# {}\n{}\n", d.why.replace('\n', " "), d.line));
    }
    text
}

/// Scripts are followed this deep (a script calling itself ends anyway).
const MAX_DEPTH: usize = 8;

struct Walk<'a> {
    commit: Option<&'a Commit>,
    out: Vec<Derived>,
    seen_lines: BTreeSet<String>,
    seen_scripts: BTreeSet<(String, String)>,
    seen_files: BTreeSet<String>,
    depth: usize,
}

impl Walk<'_> {
    fn add(&mut self, line: &str, why: String) {
        if self.seen_lines.insert(line.to_string()) {
            self.out.push(Derived {
                line: line.to_string(),
                why,
            });
        }
    }

    fn read(&self, path: &str) -> Option<String> {
        let (bytes, _) = self.commit?.file(path).ok()??;
        String::from_utf8(bytes).ok()
    }

    /// A script file run by a check: a check itself, and what it runs is.
    /// Named whether or not the commit has it: a script the session adds
    /// where `verify.sh` looks for one is a hook like any other.
    fn file(&mut self, path: &str, by: &str) {
        if path.is_empty()
            || path.contains(['$', '*', '~', '`'])
            || !self.seen_files.insert(path.to_string())
            || self.depth > MAX_DEPTH
        {
            return;
        }
        if path != "verify.sh" {
            self.add(path, format!("run by {by}"));
        }
        let Some(text) = self.read(path) else {
            return;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let lines: Vec<String> =
            if matches!(name, "Makefile" | "makefile" | "GNUmakefile") || name.ends_with(".mk") {
                // A Makefile's commands are its recipe lines.
                text.lines()
                    .filter_map(|l| l.strip_prefix('\t'))
                    .map(str::to_string)
                    .collect()
            } else if matches!(name, "justfile" | "Justfile" | ".justfile") {
                text.lines()
                    .filter(|l| l.starts_with(' ') || l.starts_with('\t'))
                    .map(str::to_string)
                    .collect()
            } else {
                text.lines().map(str::to_string).collect()
            };
        self.depth += 1;
        let mut dir = String::new();
        for line in lines {
            self.commands(&line, &mut dir, &format!("`{path}`"));
        }
        self.depth -= 1;
    }

    /// Every command of one shell line, run from `dir` (relative to the
    /// root; a `cd` changes it for what follows).
    fn commands(&mut self, line: &str, dir: &mut String, by: &str) {
        let code = strip_comment(line);
        for command in split_commands(code) {
            let words = words(&command);
            self.command(&words, dir, by);
        }
    }

    fn command(&mut self, words: &[String], dir: &mut String, by: &str) {
        let mut words: Vec<&str> = words
            .iter()
            .map(String::as_str)
            .skip_while(|w| is_assignment(w))
            .collect();
        // Wrappers that run the command after them.
        loop {
            match words.as_slice() {
                [
                    "exec" | "time" | "command" | "nice" | "nohup" | "xargs" | "npx" | "bunx"
                    | "cross-env" | "env" | "sudo" | "dotenv",
                    rest @ ..,
                ] => {
                    words = rest
                        .iter()
                        .copied()
                        .skip_while(|w| w.starts_with('-') || is_assignment(w) || *w == "--")
                        .collect()
                }
                ["timeout", _, rest @ ..] => words = rest.to_vec(),
                // Shell keywords before a command.
                [
                    "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!",
                    rest @ ..,
                ] => words = rest.to_vec(),
                ["pnpm" | "yarn" | "npm", "exec" | "dlx" | "x", rest @ ..] => {
                    words = rest
                        .iter()
                        .copied()
                        .skip_while(|w| w.starts_with('-') || *w == "--")
                        .collect()
                }
                [
                    "uv" | "poetry" | "pipenv" | "hatch" | "pdm" | "rye",
                    "run",
                    rest @ ..,
                ] => {
                    words = rest
                        .iter()
                        .copied()
                        .skip_while(|w| w.starts_with('-'))
                        .collect()
                }
                ["python" | "python3" | "py", "-m", tool, rest @ ..] => {
                    let mut next = vec![*tool];
                    next.extend(rest.iter().copied());
                    words = next;
                }
                _ => break,
            }
        }
        let Some((&first, args)) = words.split_first() else {
            return;
        };
        if first == "cd" {
            if let Some(to) = args.first() {
                *dir = join(dir, to);
            }
            return;
        }
        let tool = first.rsplit('/').next().unwrap_or(first);
        // A script file run by its path, or by an interpreter.
        if first.contains('/') && !first.starts_with('/') && !first.contains("node_modules") {
            let path = join(dir, first);
            if !path.contains(".venv/") && !path.contains("venv/bin/") {
                self.file(&path, by);
            }
        }
        if matches!(first, "." | "source")
            && let Some(script) = args.first()
        {
            let path = join(dir, script);
            self.file(&path, by);
        }
        if matches!(
            tool,
            "sh" | "bash"
                | "zsh"
                | "dash"
                | "node"
                | "python"
                | "python3"
                | "ruby"
                | "perl"
                | "tsx"
                | "ts-node"
                | "deno"
                | "bun"
        ) && let Some(script) = args
            .iter()
            .find(|a| !a.starts_with('-') && SCRIPT_EXTENSIONS.iter().any(|e| a.ends_with(e)))
        {
            let path = join(dir, script);
            self.file(&path, by);
        }
        // A file the tool is pointed at: its configuration.
        for pair in args.windows(2) {
            if matches!(
                pair[0],
                "-c" | "--config"
                    | "-p"
                    | "--project"
                    | "--rcfile"
                    | "--config-file"
                    | "--settings"
            ) && pair[1].contains('.')
                && !pair[1].starts_with('-')
            {
                let path = join(dir, pair[1]);
                if !path.contains(['$', '*', '~']) {
                    self.add(
                        &path,
                        format!("the configuration `{tool}` is given, run by {by}"),
                    );
                }
            }
        }
        for arg in args {
            if let Some(value) = arg
                .strip_prefix("--config=")
                .or_else(|| arg.strip_prefix("--project="))
                .or_else(|| arg.strip_prefix("--rcfile="))
            {
                let path = join(dir, value);
                if !path.contains(['$', '*', '~']) {
                    self.add(
                        &path,
                        format!("the configuration `{tool}` is given, run by {by}"),
                    );
                }
            }
        }
        // Package scripts.
        let manifest = |dir: &str| join(dir, "package.json");
        let script_dir = |args: &[&str], dir: &str| -> String {
            for pair in args.windows(2) {
                if matches!(pair[0], "--prefix" | "--dir" | "-C" | "--cwd") {
                    return join(dir, pair[1]);
                }
            }
            dir.to_string()
        };
        match tool {
            "npm" | "pnpm" | "yarn" | "bun" => {
                let here = script_dir(args, dir);
                let rest: Vec<&str> = args
                    .iter()
                    .copied()
                    .filter(|a| !a.starts_with('-'))
                    .collect();
                let name = match (tool, rest.as_slice()) {
                    (_, ["test" | "t" | "tst", ..]) if tool != "bun" => Some("test"),
                    (_, ["run" | "run-script" | "rum" | "urn", name, ..]) => Some(*name),
                    ("pnpm" | "yarn", [name, ..]) if !is_builtin(tool, name) => Some(*name),
                    _ => None,
                };
                if let Some(name) = name {
                    self.script(&manifest(&here), name, by);
                } else if tool == "bun" && rest.first() == Some(&"test") {
                    self.add(
                        "bunfig.toml",
                        format!("the configuration of `bun test`, run by {by}"),
                    );
                }
            }
            "run-s" | "run-p" | "npm-run-all" | "npm-run-all2" => {
                for name in args.iter().filter(|a| !a.starts_with('-')) {
                    self.script(&manifest(dir), name, by);
                }
            }
            "concurrently" => {
                for arg in args.iter().filter(|a| !a.starts_with('-')) {
                    match arg.split_once(':') {
                        Some(("npm" | "pnpm" | "yarn" | "bun", name)) => {
                            self.script(&manifest(dir), name, by)
                        }
                        _ => self.commands(arg, &mut dir.clone(), by),
                    }
                }
            }
            _ => {}
        }
        for (tools, files) in TOOL_CONFIGS {
            if tools.contains(&tool) {
                for file in *files {
                    self.add(file, format!("the configuration of `{tool}`, run by {by}"));
                }
            }
        }
    }

    /// A package script run by a check: its section is a check, and what
    /// it runs is. `name` may be a glob (`lint:*`, as `run-s` takes).
    fn script(&mut self, manifest: &str, name: &str, by: &str) {
        if self.depth > MAX_DEPTH {
            return;
        }
        let Some(text) = self.read(manifest) else {
            return;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            return;
        };
        let Some(scripts) = json["scripts"].as_object() else {
            return;
        };
        let dir = manifest
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string());
        let mut names: Vec<String> = if name.contains('*') {
            let (prefix, suffix) = name.split_once('*').unwrap_or((name, ""));
            scripts
                .keys()
                .filter(|k| k.starts_with(prefix) && k.ends_with(suffix))
                .cloned()
                .collect()
        } else {
            vec![name.to_string()]
        };
        // npm runs `preX` and `postX` around `X`.
        let around: Vec<String> = names
            .iter()
            .flat_map(|n| [format!("pre{n}"), format!("post{n}")])
            .collect();
        names.extend(around);
        for name in names {
            let Some(command) = scripts.get(&name).and_then(|c| c.as_str()) else {
                continue;
            };
            if !self
                .seen_scripts
                .insert((manifest.to_string(), name.clone()))
            {
                continue;
            }
            let line = format!("{manifest} [scripts.{name}]");
            self.add(&line, format!("run by {by}"));
            self.depth += 1;
            let by = format!("`{line}`");
            self.commands(command, &mut dir.clone(), &by);
            self.depth -= 1;
        }
    }
}

/// What each tool reads as its configuration, beyond the built-in
/// defaults when a check runs it.
const TOOL_CONFIGS: &[(&[&str], &[&str])] = &[
    (
        &["eslint"],
        &[
            ".eslintrc*",
            "eslint.config.*",
            ".eslintignore",
            "package.json [eslintConfig]",
        ],
    ),
    (
        &["prettier"],
        &[
            ".prettierrc*",
            "prettier.config.*",
            ".prettierignore",
            "package.json [prettier]",
        ],
    ),
    (
        &["oxlint"],
        &[".oxlintrc*", "oxlint.config.*", ".oxlintignore"],
    ),
    (&["oxfmt"], &[".oxfmtrc*", "oxfmt.config.*", ".oxfmtignore"]),
    (&["biome"], &["biome.json", "biome.jsonc"]),
    (
        &["dprint"],
        &["dprint.json", ".dprint.json", "dprint.jsonc"],
    ),
    (
        &["tsc", "tsgo", "vue-tsc", "tsd", "tstyche", "tsup"],
        &["tsconfig*.json", "jsconfig*.json"],
    ),
    (
        &["vitest"],
        &[
            "vitest.config.*",
            "vitest.workspace.*",
            "vite.config.*",
            "vitest.setup.*",
        ],
    ),
    (
        &["jest"],
        &["jest.config.*", "jest.setup.*", "package.json [jest]"],
    ),
    (&["mocha"], &[".mocharc*", "package.json [mocha]"]),
    (&["ava"], &["ava.config.*", "package.json [ava]"]),
    (&["tap"], &[".taprc", "package.json [tap]"]),
    (&["c8"], &[".c8rc*", "package.json [c8]"]),
    (&["nyc"], &[".nycrc*", "package.json [nyc]"]),
    (
        &["stylelint"],
        &[
            ".stylelintrc*",
            "stylelint.config.*",
            ".stylelintignore",
            "package.json [stylelint]",
        ],
    ),
    (&["markdownlint", "markdownlint-cli2"], &[".markdownlint*"]),
    (
        &["knip"],
        &["knip.json", "knip.jsonc", ".knip.json", "knip.config.*"],
    ),
    (&["playwright"], &["playwright.config.*"]),
    (&["cypress"], &["cypress.config.*"]),
    (&["tox"], &["tox.ini"]),
    (&["pre-commit"], &[".pre-commit-config.yaml"]),
    (&["make"], &["Makefile", "makefile", "GNUmakefile"]),
    (&["just"], &["justfile", "Justfile", ".justfile"]),
    (&["shellcheck"], &[".shellcheckrc"]),
    (&["codespell"], &[".codespellrc"]),
    (
        &["yamllint"],
        &[".yamllint", ".yamllint.yaml", ".yamllint.yml"],
    ),
    (&["hadolint"], &[".hadolint.yaml"]),
];

/// pnpm's and yarn's own commands: anything else after them is a script.
fn is_builtin(tool: &str, word: &str) -> bool {
    const PNPM: &[&str] = &[
        "install",
        "i",
        "add",
        "remove",
        "rm",
        "update",
        "up",
        "exec",
        "dlx",
        "run",
        "test",
        "t",
        "start",
        "create",
        "init",
        "link",
        "unlink",
        "list",
        "ls",
        "outdated",
        "audit",
        "publish",
        "pack",
        "prune",
        "rebuild",
        "store",
        "why",
        "config",
        "import",
        "fetch",
        "deploy",
        "install-test",
        "it",
        "env",
        "setup",
        "licenses",
        "patch",
        "approve-builds",
    ];
    const YARN: &[&str] = &[
        "install",
        "add",
        "remove",
        "up",
        "upgrade",
        "run",
        "test",
        "exec",
        "dlx",
        "workspace",
        "workspaces",
        "init",
        "info",
        "link",
        "unlink",
        "pack",
        "publish",
        "why",
        "config",
        "cache",
        "constraints",
        "dedupe",
        "explain",
        "npm",
        "plugin",
        "set",
        "version",
    ];
    match tool {
        "pnpm" => PNPM.contains(&word),
        "yarn" => YARN.contains(&word),
        _ => true,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `dir/rel`, normalised (`./` and `..` resolved, no leading `/`).
fn join(dir: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// The line without a shell comment (a `#` that starts a word).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The simple commands of a line: split at `&&`, `||`, `;`, `|`, `&`,
/// and the insides of `$(...)`, backticks and parentheses, outside quotes.
fn split_commands(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some('"'), '`') | (None, '`' | ';' | '|' | '&' | '(' | ')' | '{' | '}') => {
                out.push(std::mem::take(&mut current));
            }
            (Some('"'), '$') => {
                out.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    out.push(current);
    out.into_iter()
        .map(|c| c.trim().trim_matches('$').trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The words of a simple command, quotes taken off.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    let mut any = false;
    for c in command.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any || !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                any = false;
            }
            (None, '<' | '>') => {}
            _ => current.push(c),
        }
    }
    if any || !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_split_into_commands_and_words() {
        assert_eq!(
            split_commands("cd web && pnpm test || true; echo $(tsc -p x.json)"),
            ["cd web", "pnpm test", "true", "echo", "tsc -p x.json"]
        );
        assert_eq!(
            words("FOO=1 npm run 'test:types' --silent"),
            ["FOO=1", "npm", "run", "test:types", "--silent"]
        );
        assert_eq!(strip_comment("pytest -q # tests # more"), "pytest -q ");
        assert_eq!(strip_comment("echo '#not'"), "echo '#not'");
        assert_eq!(join("web", "../scripts/./x.sh"), "scripts/x.sh");
    }

    /// `unjs/defu`'s shape: `test` runs `lint` and `test:types`, which run
    /// oxlint, oxfmt and tsgo; verify.sh also runs a script of its own.
    #[test]
    fn what_verify_sh_runs_is_followed_through_scripts_and_tools() {
        use prove_it_test_support::git;
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path();
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, text).expect("write");
        };
        write(
            "verify.sh",
            "#!/bin/sh\nset -e\npnpm test # the tests\n./scripts/lint.sh\nif [ -f run.cfg ]; then . ./run.cfg; fi\ngit diff --check\n",
        );
        write(
            "package.json",
            r#"{"scripts":{"test":"pnpm lint && pnpm test:types && vitest run --coverage","lint":"oxlint . && oxfmt --check src","test:types":"tsgo --noEmit || true","pretest":"node scripts/gen.mjs","build":"unbuild"}}"#,
        );
        write("scripts/lint.sh", "eslint -c config/eslint.mjs .\n");
        write("scripts/gen.mjs", "");
        write("config/eslint.mjs", "export default []\n");
        git(root, &["init", "-q", "-b", "main"]);
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "x"]);
        let head = git(root, &["rev-parse", "HEAD"]);
        let commit = Commit::open(root, Some(head.trim()))
            .expect("open")
            .expect("a commit");
        let derived = derive(Some(&commit), &builtin());
        let lines: Vec<&str> = derived.iter().map(|d| d.line.as_str()).collect();
        for want in [
            ".gitattributes",
            "package.json [scripts.test:types]",
            "package.json [scripts.pretest]",
            "scripts/gen.mjs",
            ".oxlintrc*",
            ".oxfmtrc*",
            "tsconfig*.json",
            "scripts/lint.sh",
            "config/eslint.mjs",
            "run.cfg",
        ] {
            assert!(lines.contains(&want), "{want} missing from {derived:#?}");
        }
        // Already checks by the defaults: not said again; not a check: not said.
        for not in [
            "package.json [scripts.test]",
            "package.json [scripts.build]",
            "vitest.config.*",
        ] {
            assert!(!lines.contains(&not), "{not} in {derived:#?}");
        }
        let why = |line: &str| &derived.iter().find(|d| d.line == line).expect("line").why;
        assert_eq!(
            why("package.json [scripts.test:types]"),
            "run by `package.json [scripts.test]`"
        );
        assert_eq!(
            why(".oxlintrc*"),
            "the configuration of `oxlint`, run by `package.json [scripts.lint]`"
        );
        // The list with them in force classes the files so.
        let (list, problems) = List::parse(&(builtin() + &render(&derived)));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(list.classify(".oxlintrc.json"), Some(Class::Config));
        assert_eq!(list.classify("tsconfig.build.json"), Some(Class::Config));
        assert_eq!(list.classify("sub/.gitattributes"), Some(Class::Config));
        assert_eq!(
            list.classify("package.json"),
            Some(Class::Sections(vec![
                "scripts.test".into(),
                "scripts.lint".into(),
                "scripts.typecheck".into(),
                "jest".into(),
                "mocha".into(),
                "ava".into(),
                "c8".into(),
                "nyc".into(),
                "eslintConfig".into(),
                "prettier".into(),
                "scripts.test:types".into(),
                "scripts.pretest".into(),
            ]))
        );
    }

    #[test]
    fn the_defaults_hold_every_family() {
        let (list, problems) = List::parse(&builtin());
        assert!(problems.is_empty(), "{problems:?}");
        // A Python layout with no manifest, a Go test, a Node test.
        assert_eq!(list.classify("tests/test_calc.py"), Some(Class::Test));
        assert_eq!(list.classify("pytest.ini"), Some(Class::Config));
        assert_eq!(list.classify("src/conftest.py"), Some(Class::Config));
        // A root conftest.py (the rootdir's, loaded even when ignored).
        assert_eq!(list.classify("conftest.py"), Some(Class::Config));
        assert_eq!(list.classify("pkg/calc_test.go"), Some(Class::Test));
        assert_eq!(list.classify("src/a.test.ts"), Some(Class::Test));
        assert_eq!(list.classify("src/calc.py"), Some(Class::Inline));
        assert_eq!(list.classify("src/calc.go"), None);
        let expanded = expand("@defaults\nspecs/\n!tests/fixtures/\n");
        let (list, problems) = List::parse(&expanded);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(list.classify("specs/a.rb"), Some(Class::Test));
        assert_eq!(list.classify("tests/fixtures/x"), None);
        assert_eq!(list.classify("tests/x.py"), Some(Class::Test));
    }
}

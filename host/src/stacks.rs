//! Which stacks a repository uses, from the files at its root: the checks
//! `prove-it init` offers for each (commented out until the person has run
//! them by hand) and the defects `prove-it canary` plants; and which files
//! are checks rather than code in each family ([`CHECK_FILES`], together
//! the default of `.prove-it/checks`, whatever is detected).
//!
//! Most stacks are one row of [`STACKS`]: marker files and checks. The few
//! whose checks depend on what else is there (a lock file, a wrapper, a
//! line in a manifest) are a function each.

use std::path::Path;

/// One detected stack: a heading and its candidate checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// The family, whatever its tools: "rust", "node", "python", "go", ...
    /// (what `prove-it canary` plants defects by).
    pub key: &'static str,
    /// e.g. "Node (pnpm)".
    pub name: String,
    /// The file(s) that gave it away, for the heading.
    pub evidence: String,
    /// Commands, most useful first: tests, types, lint, format.
    pub checks: Vec<String>,
}

/// The files at a repository's root.
struct Root<'a>(&'a Path);

impl Root<'_> {
    fn has(&self, name: &str) -> bool {
        self.0.join(name).exists()
    }

    fn has_any(&self, names: &[&str]) -> bool {
        names.iter().any(|name| self.has(name))
    }

    /// Whether a file at the root starts with one of `prefixes`.
    fn has_prefix(&self, prefixes: &[&str]) -> bool {
        std::fs::read_dir(self.0)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                prefixes.iter().any(|p| name.starts_with(p))
            })
    }

    fn has_extension(&self, extensions: &[&str]) -> bool {
        std::fs::read_dir(self.0)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                extensions.iter().any(|ext| name.ends_with(ext))
            })
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap_or_default()
    }
}

/// How a stack is recognised.
enum Rule {
    /// Any of `markers` at the root; always the same checks.
    Files {
        key: &'static str,
        name: &'static str,
        markers: &'static [&'static str],
        evidence: &'static str,
        checks: &'static [&'static str],
    },
    /// A stack whose checks depend on more than one file.
    Odd(fn(&Root) -> Option<Stack>),
}

/// Every stack, in the order `init` writes their sections.
const STACKS: &[Rule] = &[
    Rule::Files {
        key: "rust",
        name: "Rust",
        markers: &["Cargo.toml"],
        evidence: "Cargo.toml",
        checks: &[
            "cargo test",
            "cargo clippy --all-targets -- -D warnings",
            "cargo fmt --all --check",
        ],
    },
    Rule::Odd(node),
    Rule::Files {
        key: "deno",
        name: "Deno",
        markers: &["deno.json", "deno.jsonc"],
        evidence: "deno.json",
        checks: &["deno test", "deno check .", "deno lint", "deno fmt --check"],
    },
    Rule::Odd(python),
    Rule::Files {
        key: "go",
        name: "Go",
        markers: &["go.mod"],
        evidence: "go.mod",
        checks: &[
            "go test ./...",
            "go vet ./...",
            "gofmt -l . | sed 's/^/gofmt would reformat: /' | (! grep .)",
        ],
    },
    Rule::Files {
        key: "maven",
        name: "Java (Maven)",
        markers: &["pom.xml"],
        evidence: "pom.xml",
        checks: &["mvn -q -B test"],
    },
    Rule::Odd(gradle),
    Rule::Odd(dotnet),
    Rule::Odd(ruby),
    Rule::Files {
        key: "php",
        name: "PHP",
        markers: &["composer.json"],
        evidence: "composer.json",
        checks: &["vendor/bin/phpunit", "vendor/bin/phpstan analyse"],
    },
    Rule::Odd(dart),
    Rule::Files {
        key: "elixir",
        name: "Elixir",
        markers: &["mix.exs"],
        evidence: "mix.exs",
        checks: &[
            "mix test",
            "mix format --check-formatted",
            "mix compile --warnings-as-errors",
        ],
    },
    Rule::Odd(c_cpp),
    Rule::Files {
        key: "swift",
        name: "Swift",
        markers: &["Package.swift"],
        evidence: "Package.swift",
        checks: &["swift build", "swift test"],
    },
];

/// Which files are checks in each family (by [`Stack::key`]), in the
/// syntax of `.prove-it/checks` (SPEC.md, "Weakened checks"): under
/// `[tests]` test files and folders, snapshots and test data; under
/// `[config]` test-runner, linter and type-checker configuration and the
/// hooks they load, whole files or (`FILE [SECTION]`) the sections of a
/// file that is also the project's manifest; under `[inline]` source files
/// whose own test parts are checks (Rust test modules and doc tests,
/// Python doctests). All of them together are the built-in defaults
/// (`capability::checks::defaults`), whatever stacks are found: each
/// pattern is specific to its family, so together they protect a
/// repository no marker file gives away.
pub const CHECK_FILES: &[(&str, &str)] = &[
    (
        "rust",
        "[tests]\ntests/\n**/tests/\n**/tests.rs\n**/snapshots/\n\
         [config]\nclippy.toml\n.clippy.toml\nrustfmt.toml\n.rustfmt.toml\ndeny.toml\n.config/nextest.toml\n\
         Cargo.toml [lints]\nCargo.toml [workspace.lints]\nCargo.toml [test]\nCargo.toml [lib.test]\nCargo.toml [lib.doctest]\n\
         [inline]\n**/*.rs\n",
    ),
    (
        "node",
        "[tests]\ntest/\ntests/\n**/__tests__/\n**/__snapshots__/\n\
         **/*.test.js\n**/*.test.mjs\n**/*.test.cjs\n**/*.test.jsx\n**/*.test.ts\n**/*.test.mts\n**/*.test.cts\n**/*.test.tsx\n\
         **/*.spec.js\n**/*.spec.mjs\n**/*.spec.cjs\n**/*.spec.jsx\n**/*.spec.ts\n**/*.spec.mts\n**/*.spec.cts\n**/*.spec.tsx\n\
         [config]\njest.config.*\nvitest.config.*\nvitest.workspace.*\n.mocharc*\nava.config.*\n\
         .eslintrc*\neslint.config.*\n.prettierrc*\nprettier.config.*\n.c8rc*\n.nycrc*\n\
         package.json [scripts.test]\npackage.json [scripts.lint]\npackage.json [scripts.typecheck]\n\
         package.json [jest]\npackage.json [mocha]\npackage.json [ava]\npackage.json [c8]\npackage.json [nyc]\n\
         package.json [eslintConfig]\npackage.json [prettier]\n\
         tsconfig.json [compilerOptions.strict]\ntsconfig.json [compilerOptions.noImplicitAny]\n\
         tsconfig.json [compilerOptions.strictNullChecks]\ntsconfig.json [compilerOptions.checkJs]\n\
         tsconfig.json [compilerOptions.noUnusedLocals]\ntsconfig.json [compilerOptions.noUnusedParameters]\n",
    ),
    (
        "deno",
        "[tests]\n**/*_test.ts\n**/*.test.ts\n**/*_test.js\n**/*.test.js\ntests/\n**/__snapshots__/\n\
         [config]\ndeno.json [test]\ndeno.json [lint]\ndeno.json [fmt]\ndeno.json [compilerOptions]\n\
         deno.jsonc [test]\ndeno.jsonc [lint]\ndeno.jsonc [fmt]\ndeno.jsonc [compilerOptions]\n",
    ),
    (
        "python",
        "[tests]\ntests/\ntest/\n**/tests/\n**/test_*.py\n**/*_test.py\n**/__snapshots__/\n**/snapshots/\n\
         [config]\n**/conftest.py\npytest.ini\n.pytest.ini\nmypy.ini\n.mypy.ini\n.flake8\nruff.toml\n.ruff.toml\n\
         .pylintrc\npylintrc\npyrightconfig.json\n.coveragerc\nnoxfile.py\n\
         tox.ini [pytest]\ntox.ini [flake8]\ntox.ini [mypy]\n\
         setup.cfg [tool:pytest]\nsetup.cfg [flake8]\nsetup.cfg [mypy]\n\
         pyproject.toml [tool.pytest]\npyproject.toml [tool.mypy]\npyproject.toml [tool.ruff]\n\
         pyproject.toml [tool.pyright]\npyproject.toml [tool.pylint]\npyproject.toml [tool.coverage]\n\
         pyproject.toml [tool.black]\npyproject.toml [tool.isort]\npyproject.toml [tool.flake8]\n\
         [inline]\n**/*.py\n",
    ),
    (
        "go",
        "[tests]\n**/*_test.go\n**/testdata/\n\
         [config]\n.golangci.yml\n.golangci.yaml\n.golangci.toml\n.golangci.json\n",
    ),
    (
        "maven",
        "[tests]\nsrc/test/\n**/src/test/\n[config]\ncheckstyle.xml\nspotbugs*.xml\npmd*.xml\n",
    ),
    (
        "gradle",
        "[tests]\nsrc/test/\n**/src/test/\n[config]\ncheckstyle.xml\nconfig/checkstyle/\nconfig/detekt/\ndetekt.yml\n",
    ),
    (
        "dotnet",
        "[tests]\n**/*Tests/\n**/*.Tests/\n**/*Test/\n**/*Tests.cs\n**/*Tests.fs\n\
         [config]\n.editorconfig\n*.ruleset\nDirectory.Build.props\nstylecop.json\n",
    ),
    (
        "ruby",
        "[tests]\nspec/\ntest/\n[config]\n.rspec\n.rubocop.yml\n.rubocop_todo.yml\n",
    ),
    (
        "php",
        "[tests]\ntests/\n[config]\nphpunit.xml\nphpunit.xml.dist\nphpstan.neon\nphpstan.neon.dist\nphpcs.xml\n",
    ),
    (
        "dart",
        "[tests]\ntest/\n[config]\nanalysis_options.yaml\ndart_test.yaml\n",
    ),
    (
        "flutter",
        "[tests]\ntest/\nintegration_test/\n**/goldens/\n[config]\nanalysis_options.yaml\ndart_test.yaml\n",
    ),
    (
        "elixir",
        "[tests]\ntest/\n[config]\n.formatter.exs\n.credo.exs\n",
    ),
    (
        "c",
        "[tests]\ntests/\ntest/\n[config]\n.clang-tidy\n.clang-format\n",
    ),
    (
        "swift",
        "[tests]\nTests/\n[config]\n.swiftlint.yml\n.swiftformat\n",
    ),
];

/// All stacks detected at `root`, in a fixed order.
pub fn detect(root: &Path) -> Vec<Stack> {
    let root = Root(root);
    STACKS
        .iter()
        .filter_map(|rule| match rule {
            Rule::Files {
                key,
                name,
                markers,
                evidence,
                checks,
            } => root
                .has_any(markers)
                .then(|| stack(key, name, evidence, checks)),
            Rule::Odd(detect) => detect(&root),
        })
        .collect()
}

fn stack<S: AsRef<str>>(key: &'static str, name: &str, evidence: &str, checks: &[S]) -> Stack {
    Stack {
        key,
        name: name.to_string(),
        evidence: evidence.to_string(),
        checks: checks.iter().map(|c| c.as_ref().to_string()).collect(),
    }
}

/// Node: the package manager follows the lock file, and the checks come
/// from what the project has: its `package.json` scripts first, then the
/// tools it is configured for (`tsconfig.json`, an ESLint or Prettier
/// config), never a script it lacks.
fn node(root: &Root) -> Option<Stack> {
    if !root.has("package.json") {
        return None;
    }
    let (runner, evidence) = if root.has("pnpm-lock.yaml") {
        ("pnpm", "package.json, pnpm-lock.yaml")
    } else if root.has("yarn.lock") {
        ("yarn", "package.json, yarn.lock")
    } else if root.has_any(&["bun.lockb", "bun.lock"]) {
        ("bun", "package.json, bun.lock")
    } else {
        ("npm", "package.json")
    };
    let exec = match runner {
        "npm" => "npx",
        "bun" => "bunx",
        other => other,
    };
    let manifest: serde_json::Value =
        serde_json::from_str(&root.read("package.json")).unwrap_or_default();
    let script = |name: &str| {
        manifest["scripts"][name]
            .as_str()
            // npm's placeholder fails on purpose: it is not a test.
            .is_some_and(|s| !s.contains("no test specified"))
    };
    let run = |name: &str| match name {
        "test" => format!("{runner} test"),
        _ => format!("{runner} run {name}"),
    };
    let first = |names: &[&'static str]| names.iter().copied().find(|n| script(n));
    let mut checks = Vec::new();
    if script("test") {
        checks.push(run("test"));
    } else if root.0.join("test").is_dir() || root.0.join("tests").is_dir() {
        checks.push("node --test".to_string());
    }
    match first(&["typecheck", "type-check", "types", "tsc"]) {
        Some(name) => checks.push(run(name)),
        None if root.has("tsconfig.json") => checks.push(format!("{exec} tsc --noEmit")),
        None => {}
    }
    let eslint =
        root.has_prefix(&["eslint.config.", ".eslintrc"]) || manifest.get("eslintConfig").is_some();
    match first(&["lint"]) {
        Some(name) => checks.push(run(name)),
        None if eslint => checks.push(format!("{exec} eslint .")),
        None => {}
    }
    let prettier =
        root.has_prefix(&["prettier.config.", ".prettierrc"]) || manifest.get("prettier").is_some();
    match first(&[
        "format:check",
        "fmt:check",
        "prettier:check",
        "check-format",
        "lint:format",
    ]) {
        Some(name) => checks.push(run(name)),
        None if prettier => checks.push(format!("{exec} prettier --check .")),
        None => {}
    }
    Some(stack(
        "node",
        &format!("Node ({runner})"),
        evidence,
        &checks,
    ))
}

/// Python: pytest, and the type checker and linters the project is
/// configured for.
fn python(root: &Root) -> Option<Stack> {
    if !root.has_any(&[
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "pytest.ini",
        "tox.ini",
        "conftest.py",
        "Pipfile",
        "noxfile.py",
    ]) {
        return None;
    }
    let pyproject = root.read("pyproject.toml");
    let setup_cfg = root.read("setup.cfg");
    let tox = root.read("tox.ini");
    let configured = |files: &[&str], sections: &[&str]| {
        root.has_any(files)
            || sections.iter().any(|s| {
                pyproject.contains(&format!("[{s}"))
                    || setup_cfg.contains(&format!("[{s}"))
                    || tox.contains(&format!("[{s}"))
            })
    };
    let mut checks = vec!["python -m pytest -q".to_string()];
    if configured(&["mypy.ini", ".mypy.ini"], &["tool.mypy", "mypy"]) {
        checks.push("python -m mypy .".to_string());
    }
    if configured(&["pyrightconfig.json"], &["tool.pyright"]) {
        checks.push("pyright".to_string());
    }
    let ruff = configured(&["ruff.toml", ".ruff.toml"], &["tool.ruff"]);
    if ruff {
        checks.push("ruff check --no-fix .".to_string());
        checks.push("ruff format --check .".to_string());
    }
    if configured(&[".flake8"], &["flake8"]) {
        checks.push("python -m flake8".to_string());
    }
    if !ruff && configured(&[], &["tool.black"]) {
        checks.push("black --check .".to_string());
    }
    Some(stack(
        "python",
        "Python",
        "pyproject.toml / setup.py / requirements.txt / pytest.ini",
        &checks,
    ))
}

/// Gradle: the project's wrapper when it has one.
fn gradle(root: &Root) -> Option<Stack> {
    let markers = [
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
    ];
    if !root.has_any(&markers) {
        return None;
    }
    let gradle = if root.has("gradlew") {
        "./gradlew"
    } else {
        "gradle"
    };
    let checks = [format!("{gradle} test"), format!("{gradle} check")];
    Some(stack("gradle", "Java (Gradle)", "build.gradle", &checks))
}

/// .NET: project files have the project's own name.
fn dotnet(root: &Root) -> Option<Stack> {
    root.has_extension(&[".sln", ".csproj", ".fsproj", ".vbproj"])
        .then(|| {
            stack(
                "dotnet",
                ".NET",
                "*.sln / *.csproj",
                &["dotnet test", "dotnet format --verify-no-changes"],
            )
        })
}

/// Ruby: RSpec when the project uses it, else rake's tests.
fn ruby(root: &Root) -> Option<Stack> {
    if !root.has("Gemfile") {
        return None;
    }
    let test = if root.has(".rspec") || root.0.join("spec").is_dir() {
        "bundle exec rspec"
    } else {
        "bundle exec rake test"
    };
    Some(stack(
        "ruby",
        "Ruby",
        "Gemfile",
        &[test, "bundle exec rubocop"],
    ))
}

/// Dart, or Flutter when the manifest says so.
fn dart(root: &Root) -> Option<Stack> {
    if !root.has("pubspec.yaml") {
        return None;
    }
    Some(if root.read("pubspec.yaml").contains("flutter:") {
        stack(
            "flutter",
            "Flutter",
            "pubspec.yaml",
            &["flutter test", "flutter analyze"],
        )
    } else {
        stack(
            "dart",
            "Dart",
            "pubspec.yaml",
            &[
                "dart test",
                "dart analyze",
                "dart format --output=none --set-exit-if-changed .",
            ],
        )
    })
}

/// C and C++: CMake when there is a CMakeLists.txt, else make.
fn c_cpp(root: &Root) -> Option<Stack> {
    if root.has("CMakeLists.txt") {
        Some(stack(
            "c",
            "C/C++ (CMake)",
            "CMakeLists.txt",
            &[
                "cmake -S . -B build && cmake --build build",
                "ctest --test-dir build --output-on-failure",
            ],
        ))
    } else if root.has_any(&["Makefile", "makefile", "GNUmakefile"]) {
        Some(stack(
            "c",
            "C/C++ (make)",
            "Makefile",
            &["make", "make test"],
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(files: &[(&str, &str)]) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tmp");
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).expect("write");
        }
        detect(dir.path()).into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn node_runner_follows_the_lockfile() {
        assert_eq!(
            names(&[("package.json", "{}"), ("pnpm-lock.yaml", "")]),
            ["Node (pnpm)"]
        );
        assert_eq!(
            names(&[("package.json", "{}"), ("yarn.lock", "")]),
            ["Node (yarn)"]
        );
        assert_eq!(
            names(&[("package.json", "{}"), ("bun.lockb", "")]),
            ["Node (bun)"]
        );
        assert_eq!(names(&[("package.json", "{}")]), ["Node (npm)"]);
    }

    fn checks(files: &[(&str, &str)]) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tmp");
        for (name, content) in files {
            std::fs::write(dir.path().join(name), content).expect("write");
        }
        detect(dir.path())
            .into_iter()
            .flat_map(|s| s.checks)
            .collect()
    }

    #[test]
    fn node_checks_come_from_what_the_project_has() {
        // A mocha library with no lint script: no `npm run lint`.
        let mocha = r#"{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"}}"#;
        assert_eq!(checks(&[("package.json", mocha)]), ["npm test"]);
        let full = r#"{"scripts":{"test":"vitest run","lint":"eslint .","typecheck":"tsc -b","format:check":"prettier -c ."}}"#;
        assert_eq!(
            checks(&[("package.json", full), ("pnpm-lock.yaml", "")]),
            [
                "pnpm test",
                "pnpm run typecheck",
                "pnpm run lint",
                "pnpm run format:check"
            ]
        );
        let configs = r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#;
        assert_eq!(
            checks(&[
                ("package.json", configs),
                ("tsconfig.json", "{}"),
                ("eslint.config.js", "")
            ]),
            ["npx tsc --noEmit", "npx eslint ."]
        );
    }

    #[test]
    fn python_checks_follow_its_configuration() {
        assert_eq!(
            checks(&[("pyproject.toml", "[project]\n")]),
            ["python -m pytest -q"]
        );
        let ruff = "[tool.ruff]\nfix = true\n[tool.mypy]\nstrict = true\n";
        assert_eq!(
            checks(&[("pyproject.toml", ruff)]),
            [
                "python -m pytest -q",
                "python -m mypy .",
                "ruff check --no-fix .",
                "ruff format --check ."
            ]
        );
    }

    #[test]
    fn flutter_and_dart_are_told_apart() {
        assert_eq!(
            names(&[("pubspec.yaml", "name: x\nflutter:\n  sdk: flutter\n")]),
            ["Flutter"]
        );
        assert_eq!(names(&[("pubspec.yaml", "name: x\n")]), ["Dart"]);
    }

    #[test]
    fn several_stacks_each_get_a_section() {
        assert_eq!(
            names(&[("Cargo.toml", ""), ("package.json", "{}"), ("go.mod", "")]),
            ["Rust", "Node (npm)", "Go"]
        );
    }

    #[test]
    fn every_family_names_its_check_files() {
        for rule in STACKS {
            let key = match rule {
                Rule::Files { key, .. } => *key,
                Rule::Odd(_) => continue,
            };
            assert!(
                CHECK_FILES.iter().any(|(k, _)| *k == key),
                "{key} has no check files"
            );
        }
        for key in [
            "node", "python", "gradle", "dotnet", "ruby", "dart", "flutter", "c",
        ] {
            assert!(CHECK_FILES.iter().any(|(k, _)| *k == key), "{key}");
        }
    }

    #[test]
    fn nothing_known_is_nothing() {
        assert!(names(&[("notes.txt", "")]).is_empty());
    }
}

//! Which stacks a repository uses, from the files at its root, and the checks
//! `prove-it init` offers for each (commented out until the person has run
//! them by hand).

use std::path::Path;

/// One detected stack: a heading and its candidate checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stack {
    /// e.g. "Node (pnpm)".
    pub name: String,
    /// The file(s) that gave it away, for the heading.
    pub evidence: String,
    /// Commands, most useful first: tests, types, lint, format.
    pub checks: Vec<String>,
}

/// All stacks detected at `root`, in a fixed order.
pub fn detect(root: &Path) -> Vec<Stack> {
    let has = |name: &str| root.join(name).exists();
    let any_ext = |exts: &[&str]| {
        std::fs::read_dir(root)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                exts.iter().any(|ext| name.ends_with(ext))
            })
    };
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    let mut stacks = Vec::new();
    let mut add = |name: &str, evidence: &str, checks: &[&str]| {
        stacks.push(Stack {
            name: name.to_string(),
            evidence: evidence.to_string(),
            checks: checks.iter().map(|c| c.to_string()).collect(),
        });
    };

    if has("Cargo.toml") {
        add(
            "Rust",
            "Cargo.toml",
            &[
                "cargo test",
                "cargo clippy --all-targets -- -D warnings",
                "cargo fmt --all --check",
            ],
        );
    }
    if has("package.json") {
        let (runner, evidence) = if has("pnpm-lock.yaml") {
            ("pnpm", "package.json, pnpm-lock.yaml")
        } else if has("yarn.lock") {
            ("yarn", "package.json, yarn.lock")
        } else if has("bun.lockb") || has("bun.lock") {
            ("bun", "package.json, bun.lock")
        } else {
            ("npm", "package.json")
        };
        let mut checks = vec![format!("{runner} test")];
        if has("tsconfig.json") {
            let exec = match runner {
                "npm" => "npx",
                "bun" => "bunx",
                other => other,
            };
            checks.push(format!("{exec} tsc --noEmit"));
        }
        checks.push(format!("{runner} run lint"));
        let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
        add(&format!("Node ({runner})"), evidence, &checks);
    }
    if has("deno.json") || has("deno.jsonc") {
        add(
            "Deno",
            "deno.json",
            &["deno test", "deno check .", "deno lint", "deno fmt --check"],
        );
    }
    if has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has("requirements.txt") {
        add(
            "Python",
            "pyproject.toml / setup.py / requirements.txt",
            &["python -m pytest -q", "python -m mypy .", "ruff check ."],
        );
    }
    if has("go.mod") {
        add(
            "Go",
            "go.mod",
            &["go test ./...", "go vet ./...", "test -z \"$(gofmt -l .)\""],
        );
    }
    if has("pom.xml") {
        add("Java (Maven)", "pom.xml", &["mvn -q -B test"]);
    }
    if has("build.gradle")
        || has("build.gradle.kts")
        || has("settings.gradle")
        || has("settings.gradle.kts")
    {
        let gradle = if has("gradlew") {
            "./gradlew"
        } else {
            "gradle"
        };
        add(
            "Java (Gradle)",
            "build.gradle",
            &[&format!("{gradle} test"), &format!("{gradle} check")],
        );
    }
    if any_ext(&[".sln", ".csproj", ".fsproj", ".vbproj"]) {
        add(
            ".NET",
            "*.sln / *.csproj",
            &["dotnet test", "dotnet format --verify-no-changes"],
        );
    }
    if has("Gemfile") {
        let test = if has(".rspec") || root.join("spec").is_dir() {
            "bundle exec rspec"
        } else {
            "bundle exec rake test"
        };
        add("Ruby", "Gemfile", &[test, "bundle exec rubocop"]);
    }
    if has("composer.json") {
        add(
            "PHP",
            "composer.json",
            &["vendor/bin/phpunit", "vendor/bin/phpstan analyse"],
        );
    }
    if has("pubspec.yaml") {
        if read("pubspec.yaml").contains("flutter:") {
            add(
                "Flutter",
                "pubspec.yaml",
                &["flutter test", "flutter analyze"],
            );
        } else {
            add(
                "Dart",
                "pubspec.yaml",
                &[
                    "dart test",
                    "dart analyze",
                    "dart format --output=none --set-exit-if-changed .",
                ],
            );
        }
    }
    if has("mix.exs") {
        add(
            "Elixir",
            "mix.exs",
            &[
                "mix test",
                "mix format --check-formatted",
                "mix compile --warnings-as-errors",
            ],
        );
    }
    if has("CMakeLists.txt") {
        add(
            "C/C++ (CMake)",
            "CMakeLists.txt",
            &[
                "cmake -S . -B build && cmake --build build",
                "ctest --test-dir build --output-on-failure",
            ],
        );
    } else if has("Makefile") || has("makefile") || has("GNUmakefile") {
        add("C/C++ (make)", "Makefile", &["make", "make test"]);
    }
    if has("Package.swift") {
        add("Swift", "Package.swift", &["swift build", "swift test"]);
    }
    stacks
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
    fn nothing_known_is_nothing() {
        assert!(names(&[("notes.txt", "")]).is_empty());
    }
}

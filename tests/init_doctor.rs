//! `prove-it init` on one fixture repo per stack, and `prove-it doctor` on a
//! gated, an ungated and a non-git directory.

use crate::util::{Repo, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

fn run(
    dir: &std::path::Path,
    args: &[&str],
    env: &std::collections::BTreeMap<String, String>,
) -> Output {
    crate::util::prove_it(dir, env, args)
        .output()
        .expect("prove-it runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Lines of a shell script that do something (not blank, not comments).
fn active_lines(script: &str) -> Vec<&str> {
    script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

fn init_in(files: &[(&str, &str)]) -> (Sandbox, Repo, String) {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    for (name, content) in files {
        repo.write(name, content);
    }
    repo.commit("stack files");
    let out = run(&repo.root, &["init"], &repo.env);
    assert!(out.status.success(), "init failed:\n{}", text(&out));
    let output = text(&out);
    (sb, repo, output)
}

/// A package.json with a test script: `init` offers only scripts a
/// project has.
const TEST_SCRIPT: &str = r#"{"scripts":{"test":"node --test"}}"#;

/// A stack's name, its marker files, and one check init must offer.
type Fixture = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

#[test]
fn init_writes_a_verify_sh_that_passes_on_day_one_for_every_stack() {
    let fixtures: &[Fixture] = &[
        ("Rust", &[("Cargo.toml", "[package]\n")], "cargo test"),
        ("Node (npm)", &[("package.json", TEST_SCRIPT)], "npm test"),
        (
            "Node (pnpm)",
            &[("package.json", TEST_SCRIPT), ("pnpm-lock.yaml", "")],
            "pnpm test",
        ),
        (
            "Node (yarn)",
            &[("package.json", TEST_SCRIPT), ("yarn.lock", "")],
            "yarn test",
        ),
        (
            "Node (bun)",
            &[("package.json", TEST_SCRIPT), ("bun.lock", "")],
            "bun test",
        ),
        ("Deno", &[("deno.json", "{}")], "deno test"),
        ("Python", &[("pyproject.toml", "[project]\n")], "pytest"),
        ("Go", &[("go.mod", "module x\n")], "go test ./..."),
        (
            "Java (Maven)",
            &[("pom.xml", "<project/>")],
            "mvn -q -B test",
        ),
        ("Java (Gradle)", &[("build.gradle", "")], "gradle test"),
        (".NET", &[("App.csproj", "<Project/>")], "dotnet test"),
        ("Ruby", &[("Gemfile", "")], "bundle exec rake test"),
        ("PHP", &[("composer.json", "{}")], "vendor/bin/phpunit"),
        ("Dart", &[("pubspec.yaml", "name: x\n")], "dart test"),
        (
            "Flutter",
            &[("pubspec.yaml", "name: x\nflutter:\n")],
            "flutter test",
        ),
        ("Elixir", &[("mix.exs", "")], "mix test"),
        ("C/C++ (CMake)", &[("CMakeLists.txt", "")], "ctest"),
        ("C/C++ (make)", &[("Makefile", "all:\n")], "make test"),
        ("Swift", &[("Package.swift", "")], "swift test"),
    ];
    for (stack, files, check) in fixtures {
        let (_sb, repo, output) = init_in(files);
        assert!(
            output.contains(&format!("stack: {stack} (")),
            "{stack}:\n{output}"
        );
        let script = std::fs::read_to_string(repo.path("verify.sh")).expect("verify.sh written");
        assert_eq!(
            active_lines(&script),
            [
                "set -euo pipefail",
                "cd \"$(git rev-parse --show-toplevel)\"",
                "git diff --check"
            ],
            "{stack}: only `git diff --check` may be active"
        );
        assert!(
            script
                .lines()
                .any(|l| l.starts_with('#') && l.contains(check)),
            "{stack}: no `{check}` offered"
        );
        // The changed-files example is in the stack's own terms: a Node
        // project's runs its own test command, never pytest.
        let example = script
            .split("A slow check")
            .nth(1)
            .unwrap_or_else(|| panic!("{stack}: no changed-files example:\n{script}"));
        if stack.starts_with("Node") {
            assert!(
                example.contains(&format!("\n#   {check}\n")) && !example.contains("pytest"),
                "{stack}: the example does not run `{check}`:\n{example}"
            );
        }
        let mode = std::fs::metadata(repo.path("verify.sh"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "{stack}: verify.sh must be executable");
        // The demo copy is gone: the only changes are verify.sh and the
        // list of checks for the stack.
        assert_eq!(
            repo.git(&["status", "--porcelain", "--untracked-files=all"]),
            "?? .prove-it/checks\n?? verify.sh",
            "{stack}"
        );
        // The list is the built-in defaults, whatever the stack: what
        // counts as a check never rests on the guess.
        let checks = std::fs::read_to_string(repo.path(".prove-it/checks")).expect("checks");
        assert!(
            checks.lines().any(|l| l == "@defaults"),
            "{stack}: the defaults are not in the list:\n{checks}"
        );
        assert!(
            output.contains("passed") && output.contains("would refuse the turn"),
            "{stack}:\n{output}"
        );
        assert!(
            output.contains("attempt 1 of 3"),
            "{stack}: the demo shows the gate's real words\n{output}"
        );
        let day_one = Command::new(repo.path("verify.sh"))
            .current_dir(&repo.root)
            .output()
            .expect("run");
        assert!(
            day_one.status.success(),
            "{stack}: verify.sh fails on day one"
        );
    }
}

#[test]
fn init_gives_each_of_several_stacks_its_section() {
    let (_sb, repo, _) = init_in(&[
        ("Cargo.toml", "[package]\n"),
        ("package.json", "{}"),
        ("go.mod", "module x\n"),
    ]);
    let script = std::fs::read_to_string(repo.path("verify.sh")).expect("verify.sh");
    for heading in [
        "# Rust (Cargo.toml)",
        "# Node (npm) (package.json)",
        "# Go (go.mod)",
    ] {
        assert!(script.contains(heading), "missing {heading}:\n{script}");
    }
}

#[test]
fn init_never_overwrites_an_existing_verify_sh() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("echo mine; exit 0");
    let before = std::fs::read(repo.path("verify.sh")).expect("read");
    let out = run(&repo.root, &["init"], &repo.env);
    assert!(out.status.success());
    assert!(text(&out).contains("left untouched"), "{}", text(&out));
    assert_eq!(std::fs::read(repo.path("verify.sh")).expect("read"), before);
}

#[test]
fn init_outside_git_says_what_to_do() {
    let sb = Sandbox::new();
    let out = run(sb.tmp.path(), &["init"], &sb.env);
    assert!(!out.status.success());
    assert!(text(&out).contains("git init"), "{}", text(&out));
    assert!(!sb.tmp.path().join("verify.sh").exists());
}

#[test]
fn doctor_on_a_gated_repo_exits_0() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let out = run(&repo.root, &["doctor"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    for needle in [
        "result: gated",
        "policy",
        &format!("ABI {}", prove_it_gate::abi::ABI_VERSION),
        "state",
        "ledger",
        "prove-it 0.",
    ] {
        assert!(said.contains(needle), "missing {needle:?}:\n{said}");
    }
}

/// "What would happen if the turn ended now?": doctor runs verify.sh once
/// and shows the block the agent would get; a failing check is the gate
/// working, so doctor still exits 0. `--no-run` leaves it alone.
#[test]
fn doctor_says_what_a_turn_ending_now_would_meet() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm_counting();
    let out = run(&repo.root, &["doctor"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("would pass: ./verify.sh exit 0"),
        "{}",
        text(&out)
    );
    assert_eq!(repo.runs(), 1);

    repo.write("broken", "x");
    let out = run(&repo.root, &["doctor"], &repo.env);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("would be blocked") && said.contains("1 failed, 41 passed"),
        "{said}"
    );

    let out = run(&repo.root, &["doctor", "--no-run"], &repo.env);
    assert!(out.status.success());
    assert_eq!(repo.runs(), 2, "--no-run ran verify.sh");
    assert!(!text(&out).contains("would be blocked"));
}

#[test]
fn doctor_on_an_ungated_repo_says_why_and_exits_1() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let out = run(&repo.root, &["doctor"], &repo.env);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("prove-it init"), "{}", text(&out));

    repo.arm("exit 0");
    repo.chmod("verify.sh", 0o644);
    let out = run(&repo.root, &["doctor"], &repo.env);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("chmod +x verify.sh"), "{}", text(&out));

    repo.chmod("verify.sh", 0o755);
    let mut env = repo.env.clone();
    env.insert("PROVE_IT_SKIP".into(), "1".into());
    let out = run(&repo.root, &["doctor"], &env);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("PROVE_IT_SKIP=1"), "{}", text(&out));
}

#[test]
fn doctor_fails_when_the_state_dir_cannot_be_written() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    // A file where the state dir should be (permissions would not stop root).
    let blocked = sb.tmp.path().join("a-file");
    std::fs::write(&blocked, "x").expect("write");
    let mut env = repo.env.clone();
    env.insert(
        "PROVE_IT_STATE_DIR".into(),
        blocked.join("state").display().to_string(),
    );
    let out = run(&repo.root, &["doctor"], &env);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("cannot be written") && text(&out).contains("gate error"),
        "{}",
        text(&out)
    );
}

#[test]
fn doctor_outside_git_exits_1() {
    let sb = Sandbox::new();
    let out = run(sb.tmp.path(), &["doctor"], &sb.env);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("not inside a git repository"),
        "{}",
        text(&out)
    );
}

/// The threat from the agent's own account (SPEC.md, "What the gate
/// defends against"): doctor reads the agent hosts' sandbox settings and
/// says what the agent's shell could still rewrite. Warnings, not
/// failures: the gate runs either way.
#[test]
fn doctor_says_whether_the_hosts_sandbox_keeps_the_gate_out_of_reach() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let home = std::path::PathBuf::from(&repo.env["HOME"]);
    let sandbox_rows = |env: &std::collections::BTreeMap<String, String>| {
        let out = run(&repo.root, &["doctor", "--no-run"], env);
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
            .lines()
            .filter(|l| l.contains(" sandbox "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let said = sandbox_rows(&repo.env);
    assert!(
        said.contains("warn") && said.contains("Claude Code's sandbox is off"),
        "{said}"
    );
    assert!(!said.contains("Codex"), "Codex is not wired here: {said}");

    // On, but the state dir is in the temp dir the sandbox lets commands
    // write, and commands may leave the sandbox.
    std::fs::create_dir_all(home.join(".claude")).expect("claude dir");
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"sandbox": {"enabled": true}}"#,
    )
    .expect("settings");
    let mut env = repo.env.clone();
    env.insert("TMPDIR".into(), sb.tmp.path().display().to_string());
    let said = sandbox_rows(&env);
    assert!(said.contains("sandbox is on, but"), "{said}");
    assert!(said.contains("the state dir ("), "{said}");
    assert!(said.contains("allowUnsandboxedCommands"), "{said}");

    // The repository's local settings turn it off again: the last layer wins.
    repo.write(
        ".claude/settings.local.json",
        r#"{"sandbox": {"enabled": false}}"#,
    );
    assert!(sandbox_rows(&env).contains("sandbox is off"));

    // Codex, once wired, gets its own row from its config.
    let out = run(&repo.root, &["setup", "codex"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    let said = sandbox_rows(&repo.env);
    assert!(said.contains("no sandbox_mode in Codex's config"), "{said}");
    let config = home.join(".codex/config.toml");
    let mut toml = std::fs::read_to_string(&config).expect("setup wrote Codex's config");
    toml.insert_str(0, "sandbox_mode = \"danger-full-access\"\n");
    std::fs::write(&config, toml).expect("config");
    let said = sandbox_rows(&repo.env);
    assert!(
        said.contains("sandbox_mode is danger-full-access"),
        "{said}"
    );
}

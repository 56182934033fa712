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

/// A project with CI suggests each check as its CI runs it (a crate whose
/// CI runs clippy without `--all-targets` may fail with it), and says so.
#[test]
fn init_suggests_checks_as_the_projects_ci_runs_them() {
    let (_sb, repo, said) = init_in(&[
        (
            "Cargo.toml",
            "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("src/lib.rs", "pub fn f() {}\n"),
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: cargo clippy -- -D warnings\n      - name: tests\n        run: |\n          cargo test --workspace\n          cargo test --doc ${{ matrix.flags }}\n",
        ),
    ]);
    let script = std::fs::read_to_string(repo.path("verify.sh")).expect("verify.sh");
    assert!(
        script.contains("# cargo clippy -- -D warnings\n"),
        "{script}"
    );
    assert!(!script.contains("--all-targets"), "{script}");
    assert!(script.contains("# cargo test --workspace\n"), "{script}");
    assert!(script.contains("# cargo fmt --all --check\n"), "{script}");
    assert!(
        said.contains(
            "suggested as `.github/workflows/ci.yml` runs it: `cargo clippy -- -D warnings`"
        ),
        "{said}"
    );
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

/// README.md's hooks, wired by hand in `file` of `repo`, running `program`.
fn wire_by_hand(repo: &Repo, file: &str, program: &str, events: &[&str]) {
    let mut hooks = serde_json::Map::new();
    for event in events {
        let command = match *event {
            "SessionStart" => "session-start",
            "UserPromptSubmit" => "user-prompt-submit",
            _ => "stop",
        };
        hooks.insert(
            event.to_string(),
            serde_json::json!([{"hooks": [{"type": "command", "command": format!("{program} hook {command}")}]}]),
        );
    }
    repo.write(file, &serde_json::json!({ "hooks": hooks }).to_string());
}

const ALL_EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "Stop"];

/// The lines of doctor's screen about Claude Code, and its result.
fn claude_lines(said: &str) -> String {
    said.lines()
        .filter(|l| {
            l.contains(" plugin ")
                || l.contains(" hooks ")
                || l.starts_with("result")
                || l.starts_with("No agent host")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn doctor_on_a_gated_repo_exits_0() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    wire_by_hand(&repo, ".claude/settings.json", crate::util::BIN, ALL_EVENTS);
    let out = run(&repo.root, &["doctor"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    for needle in [
        "result: gated in Claude Code",
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
    wire_by_hand(&repo, ".claude/settings.json", crate::util::BIN, ALL_EVENTS);
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

/// Nothing wired: no agent turn would ever meet the gate, so doctor says
/// "not gated" (exit 1) with the command for each host, though
/// `verify.sh` and everything else are fine.
#[test]
fn doctor_with_no_agent_host_wired_says_not_gated() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let out = run(&repo.root, &["doctor", "--no-run"], &repo.env);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for needle in [
        "result: not gated: no agent host runs prove-it here.",
        "/plugin install prove-it@whynext",
        "wire the hooks by hand",
        "`prove-it setup codex`",
        "`prove-it setup qwen`",
        "info  plugin      not installed in Claude Code",
        "info  hooks       none wired by hand",
    ] {
        assert!(said.contains(needle), "missing {needle:?}:\n{said}");
    }
    assert!(!said.contains("result: gated"), "{said}");

    // Another host wired is enough.
    let out = run(&repo.root, &["setup", "codex"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    let out = run(&repo.root, &["doctor", "--no-run"], &repo.env);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("result: gated in Codex"),
        "{}",
        text(&out)
    );
}

/// Hooks wired by hand (README.md, "Without the plugin") have their own
/// row: gated when a Stop hook runs a prove-it that is there, failing when
/// it names one that is not, warned when an event is missing, and not
/// gated when `disableAllHooks` turns every hook off.
#[test]
fn doctor_reads_hooks_wired_by_hand() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let doctor = |env: &std::collections::BTreeMap<String, String>| {
        let out = run(&repo.root, &["doctor", "--no-run"], env);
        (out.status.code(), claude_lines(&text(&out)))
    };

    wire_by_hand(
        &repo,
        ".claude/settings.local.json",
        crate::util::BIN,
        ALL_EVENTS,
    );
    let (code, said) = doctor(&repo.env);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("ok    hooks       wired by hand in `")
            && said.contains(".claude/settings.local.json`")
            && said.contains("result: gated in Claude Code"),
        "{said}"
    );

    // The README's bare `prove-it`, found on PATH, or not.
    std::fs::remove_file(repo.path(".claude/settings.local.json")).expect("rm");
    wire_by_hand(&repo, ".claude/settings.json", "prove-it", ALL_EVENTS);
    let bin_dir = sb.tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin");
    std::os::unix::fs::symlink(crate::util::BIN, bin_dir.join("prove-it")).expect("link");
    let mut on_path = repo.env.clone();
    on_path.insert(
        "PATH".into(),
        format!("{}:/usr/bin:/bin", bin_dir.display()),
    );
    let (code, said) = doctor(&on_path);
    assert_eq!(code, Some(0), "{said}");
    let mut off_path = repo.env.clone();
    off_path.insert("PATH".into(), "/usr/bin:/bin".into());
    let (code, said) = doctor(&off_path);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("FAIL  hooks") && said.contains("runs `prove-it`, which is not there"),
        "{said}"
    );
    assert!(
        said.contains("No agent host runs prove-it here either."),
        "{said}"
    );

    // A path the hook's shell expands: `$HOME/...`.
    let home = std::path::PathBuf::from(&repo.env["HOME"]);
    std::fs::create_dir_all(home.join("bin")).expect("home bin");
    std::os::unix::fs::symlink(crate::util::BIN, home.join("bin/prove-it")).expect("link");
    wire_by_hand(
        &repo,
        ".claude/settings.json",
        "\"$HOME/bin/prove-it\"",
        ALL_EVENTS,
    );
    let (code, said) = doctor(&off_path);
    assert_eq!(code, Some(0), "{said}");

    // No Stop hook: a turn would end unverified.
    wire_by_hand(
        &repo,
        ".claude/settings.json",
        crate::util::BIN,
        &["SessionStart"],
    );
    let (code, said) = doctor(&repo.env);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("with no Stop hook"), "{said}");

    // Stop alone runs the gate; the missing events are said.
    wire_by_hand(&repo, ".claude/settings.json", crate::util::BIN, &["Stop"]);
    let (code, said) = doctor(&repo.env);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("warn  hooks") && said.contains("no SessionStart, UserPromptSubmit hook"),
        "{said}"
    );

    // disableAllHooks in the local settings turns them all off.
    repo.write(
        ".claude/settings.local.json",
        r#"{"disableAllHooks": true}"#,
    );
    let (code, said) = doctor(&repo.env);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("sets disableAllHooks"), "{said}");
}

/// The plugin counts when Claude Code's `installed_plugins.json` lists it
/// for this repository and the settings that apply here enable it (the
/// files as `claude plugin install` and `claude plugin disable --scope
/// local` write them; tests/plugin.rs checks them against the real CLI).
#[test]
fn doctor_reads_whether_the_plugin_is_installed_and_enabled_here() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let home = std::path::PathBuf::from(&repo.env["HOME"]);
    let doctor = || {
        let out = run(&repo.root, &["doctor", "--no-run"], &repo.env);
        (out.status.code(), claude_lines(&text(&out)))
    };
    let version = env!("CARGO_PKG_VERSION");
    let install = |scope: &str, project: &std::path::Path| {
        std::fs::create_dir_all(home.join(".claude/plugins")).expect("plugins");
        let entry = serde_json::json!({"scope": scope, "version": version,
            "installPath": home.join(format!(".claude/plugins/cache/whynext/prove-it/{version}")),
            "projectPath": project});
        std::fs::write(
            home.join(".claude/plugins/installed_plugins.json"),
            serde_json::json!({"version": 2, "plugins": {"prove-it@whynext": [entry]}}).to_string(),
        )
        .expect("installed_plugins.json");
    };
    std::fs::create_dir_all(home.join(".claude")).expect("claude dir");
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"prove-it@whynext": true}}"#,
    )
    .expect("settings");

    // Installed for another project only: not here.
    install("project", &sb.tmp.path().join("elsewhere"));
    let (code, said) = doctor();
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("plugin      not installed"), "{said}");

    install("user", &repo.root);
    let (code, said) = doctor();
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!(
            "ok    plugin      installed ({version}) and enabled here by `"
        )) && said.contains("result: gated in Claude Code"),
        "{said}"
    );

    // Disabled for this repository alone: the most specific file wins.
    repo.write(
        ".claude/settings.local.json",
        r#"{"enabledPlugins": {"prove-it@whynext": false}}"#,
    );
    let (code, said) = doctor();
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("but not enabled here")
            && said.contains("claude plugin enable prove-it@whynext"),
        "{said}"
    );
    assert!(said.contains("result: not gated"), "{said}");

    // Enabled again, and hooks wired by hand too: the gate would run twice.
    std::fs::remove_file(repo.path(".claude/settings.local.json")).expect("rm");
    wire_by_hand(&repo, ".claude/settings.json", crate::util::BIN, ALL_EVENTS);
    let (code, said) = doctor();
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("runs ./verify.sh twice"), "{said}");
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
    wire_by_hand(&repo, ".claude/settings.json", crate::util::BIN, ALL_EVENTS);
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

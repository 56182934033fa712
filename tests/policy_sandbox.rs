//! Custom policies and the sandbox around them: adversarial modules (WAT)
//! are contained, named in a message the user sees, and the default policy
//! still decides; the policy is pinned at session start; the module cache
//! survives damage and concurrent writers.

use crate::util::{Repo, Sandbox, files_under};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The ABI version this prove-it speaks.
const ABI: i32 = prove_it_gate::abi::ABI_VERSION;

/// A minimal policy in WAT: the ABI exports, a bump allocator, and
/// `prove_it_decide` doing `body` (which must leave an i64 on the stack).
/// `extra` adds module fields (imports, functions).
fn module(abi: i32, body: &str, extra: &str) -> Vec<u8> {
    let text = format!(
        r#"(module
  {extra}
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 4096))
  (func (export "prove_it_abi_version") (result i32) (i32.const {abi}))
  (func (export "prove_it_alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (local.get $len)))
    (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.div_u (global.get $next) (i32.const 65536)) (i32.const 1))))))
    (local.get $p))
  (func $decide (export "prove_it_decide") (param i32 i32) (result i64) {body})
  (data (i32.const 16) "{{\"action\":\"block\",\"reason\":\"custom policy says no\"}}")
)"#
    );
    wat::parse_str(&text).unwrap_or_else(|e| panic!("bad WAT: {e}\n{text}"))
}

/// Returns the decision in the data segment (at 16, 51 bytes).
const BLOCKS: &str = "(i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 51))";

fn with_reason(reason: &str) -> Vec<u8> {
    let json = format!("{{\"action\":\"block\",\"reason\":\"{reason}\"}}");
    let text = format!(
        r#"(module
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 4096))
  (func (export "prove_it_abi_version") (result i32) (i32.const {ABI}))
  (func (export "prove_it_alloc") (param $len i32) (result i32)
    (local $p i32) (local.set $p (global.get $next))
    (global.set $next (i32.add (global.get $next) (local.get $len))) (local.get $p))
  (func (export "prove_it_decide") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const {len})))
  (data (i32.const 16) "{escaped}")
)"#,
        len = json.len(),
        escaped = json.replace('"', "\\\"")
    );
    wat::parse_str(&text).expect("WAT")
}

/// A failing repo, a session started under the policy at `policy`, and work.
fn gated_repo(sb: &Sandbox) -> Repo {
    let repo = sb.repo("r");
    repo.arm_counting();
    repo
}

fn write_module(sb: &Sandbox, name: &str, bytes: &[u8]) -> PathBuf {
    let path = sb.tmp.path().join(name);
    std::fs::write(&path, bytes).expect("write module");
    path
}

/// A gated repo whose session "s" started under the module `bytes` (chosen
/// with `PROVE_IT_POLICY`), with one changed file `changed`: the next stop
/// has work to judge.
fn session_under(bytes: &[u8], changed: &str) -> (Sandbox, Repo) {
    let mut sb = Sandbox::new();
    let path = write_module(&sb, "policy.wasm", bytes);
    sb.set("PROVE_IT_POLICY", path.to_str().expect("utf-8"));
    let repo = gated_repo(&sb);
    repo.start("s");
    repo.write(changed, "x");
    (sb, repo)
}

/// Each broken module: contained, named, and the default still blocks.
#[test]
fn adversarial_modules_are_contained_named_and_never_a_silent_pass() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("traps", module(ABI, "unreachable", ""), "trapped"),
        (
            "spins",
            module(ABI, "(loop $l (br $l)) (i64.const 0)", ""),
            "ran out of fuel",
        ),
        (
            "eats memory",
            module(
                ABI,
                "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 64)) (i32.const -1)))) (i64.const 0)",
                "",
            ),
            "MiB of memory",
        ),
        (
            "recurses",
            module(ABI, "(call $decide (local.get 0) (local.get 1))", ""),
            "stack",
        ),
        (
            "imports what the host does not offer",
            module(
                ABI,
                BLOCKS,
                r#"(import "prove_it" "launch_missiles" (func))"#,
            ),
            "launch_missiles",
        ),
        ("has the wrong ABI", module(99, BLOCKS, ""), "ABI 99"),
        (
            "is not wasm",
            b"#!/bin/sh\necho not a module\n".to_vec(),
            "not a valid wasm module",
        ),
        (
            "answers with garbage",
            module(
                ABI,
                "(i64.or (i64.shl (i64.const 0) (i64.const 32)) (i64.const 8))",
                "",
            ),
            "not valid JSON",
        ),
        (
            "answers with more than the cap",
            module(
                ABI,
                "(i64.or (i64.shl (i64.const 0) (i64.const 32)) (i64.const 50000000))",
                "",
            ),
            "limit",
        ),
    ];
    for (what, bytes, named) in cases {
        let (_sb, repo) = session_under(&bytes, "broken");
        let began = Instant::now();
        let out = repo.stop("s", false);
        let took = began.elapsed();
        // The default policy still protects the repository...
        out.assert_blocked_with("1 failed, 41 passed");
        // ...and the user is told which module failed, and how.
        let message = out.message();
        assert!(
            message.contains(named),
            "a module that {what}: message lacks {named:?}\n{out}"
        );
        assert!(
            message.contains("default policy decided instead"),
            "{what}\n{out}"
        );
        assert!(
            took < Duration::from_secs(5),
            "a module that {what} took {took:?}"
        );
    }
}

/// A module that floods stderr (2 MiB) and then traps: the user's message
/// shows the start of what it printed, bounded (the host keeps at most
/// 16 KiB of it and shows 500 characters), beside the default policy's
/// decision.
#[test]
fn a_module_flooding_stderr_is_capped_and_still_named() {
    let flood = module(
        ABI,
        "(local $i i32)
         (memory.fill (i32.const 32768) (i32.const 65) (i32.const 16384))
         (i32.store (i32.const 100) (i32.const 32768))
         (i32.store (i32.const 104) (i32.const 16384))
         (loop $l
           (drop (call $fd_write (i32.const 2) (i32.const 100) (i32.const 1) (i32.const 200)))
           (local.set $i (i32.add (local.get $i) (i32.const 1)))
           (br_if $l (i32.lt_u (local.get $i) (i32.const 128))))
         unreachable",
        r#"(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))"#,
    );
    let (_sb, repo) = session_under(&flood, "broken");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed, 41 passed");
    let message = out.message();
    assert!(
        message.contains("the policy printed: AAAA"),
        "the start of what it printed is shown\n{out}"
    );
    assert!(message.contains("default policy decided instead"), "{out}");
    assert!(
        message.len() < 4_000,
        "the message is bounded, not 2 MiB: {} bytes",
        message.len()
    );
}

/// A module writing session state: a small state is kept; one over the
/// host's cap (256 KiB) is refused and leaves no trace, and the module's
/// decision still reaches the user.
#[test]
fn session_state_over_the_cap_is_refused_and_a_small_one_kept() {
    // Request `{"value":"xxx…"}` with `n` x's, built at 256 KiB in memory.
    let writes = |n: usize| {
        module(
            ABI,
            &format!(
                "(drop (memory.grow (i32.const 9)))
                 (memory.copy (i32.const 262144) (i32.const 1024) (i32.const 10))
                 (memory.fill (i32.const 262154) (i32.const 120) (i32.const {n}))
                 (i32.store8 (i32.const {q}) (i32.const 34))
                 (i32.store8 (i32.const {b}) (i32.const 125))
                 (drop (call $session_write (i32.const 262144) (i32.const {len})))
                 {BLOCKS}",
                q = 262_154 + n,
                b = 262_155 + n,
                len = 12 + n,
            ),
            r#"(import "prove_it" "session_write" (func $session_write (param i32 i32) (result i64)))
               (data (i32.const 1024) "{\"value\":\"")"#,
        )
    };
    let holds_state = |sb: &Sandbox| {
        crate::util::files_under(&sb.state_dir())
            .iter()
            .filter(|f| f.ends_with(".json"))
            .any(|f| {
                std::fs::read_to_string(sb.state_dir().join(f))
                    .is_ok_and(|text| text.contains("xxxxxxxxxx"))
            })
    };
    for (n, kept) in [(1_000, true), (300_000, false)] {
        let (sb, repo) = session_under(&writes(n), "work.txt");
        repo.stop("s", false)
            .assert_blocked_with("custom policy says no");
        assert_eq!(
            holds_state(&sb),
            kept,
            "session state of {n} bytes kept: {:?}",
            crate::util::files_under(&sb.state_dir())
        );
    }
}

#[test]
fn a_spinning_module_is_stopped_in_well_under_a_second() {
    let mut sb = Sandbox::new();
    let path = write_module(
        &sb,
        "spin.wasm",
        &module(ABI, "(loop $l (br $l)) (i64.const 0)", ""),
    );
    sb.set("PROVE_IT_POLICY", path.to_str().expect("utf-8"));
    let repo = gated_repo(&sb);
    repo.start("s");
    repo.write("broken", "x");
    // Warm the module cache, then time one stop (fuel, not a timer, stops it).
    repo.stop("s", false);
    let began = Instant::now();
    repo.stop("s", true).assert_blocked_with("attempt 2 of 3");
    let took = began.elapsed();
    assert!(took < Duration::from_millis(900), "took {took:?}");
}

#[test]
fn a_custom_policy_decides_and_is_pinned_for_the_session() {
    let mut sb = Sandbox::new();
    let path = write_module(&sb, "policy.wasm", &with_reason("policy A says no"));
    sb.set("PROVE_IT_POLICY", path.to_str().expect("utf-8"));
    let repo = gated_repo(&sb);
    repo.start("s");
    repo.write("work.txt", "x");
    repo.stop("s", false)
        .assert_blocked_with("policy A says no");
    // The module states no verdict: its block is recorded as one, and no
    // tree (it named none), so status cannot call anything proven.
    let status = crate::util::prove_it(&repo.root, &repo.env, &["status", "--json"])
        .output()
        .expect("status");
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).expect("JSON");
    assert_eq!(
        (
            status.status.code(),
            json["verdict"].as_str(),
            json["tree"].is_null()
        ),
        (Some(1), Some("blocked"), true),
        "{json}"
    );

    // The agent swaps the module mid-session: the session keeps A, and the
    // user is told.
    std::fs::write(&path, with_reason("policy B says yes")).expect("swap");
    let out = repo.stop("s", false);
    out.assert_blocked_with("policy A says no");
    assert!(
        out.message().contains("changed since this session started"),
        "{out}"
    );
    // ...and removing it does not disarm the session either.
    std::fs::remove_file(&path).expect("rm");
    repo.stop("s", false)
        .assert_blocked_with("policy A says no");

    // A new session takes the new choice.
    std::fs::write(&path, with_reason("policy B says no")).expect("write");
    repo.start("s2");
    repo.write("work.txt", "y");
    repo.stop("s2", false)
        .assert_blocked_with("policy B says no");
}

/// The session's copy of its policy is read only to compile it: with the
/// compiled module cached, a missing copy changes nothing; a copy changed
/// in the state dir is refused when it would be compiled (the default
/// decides and the user is told), never run or cached under the pinned hash.
#[test]
fn a_changed_copy_of_the_pinned_policy_is_refused_not_compiled() {
    let (sb, mut repo) = session_under(&with_reason("pinned policy says no"), "broken");
    // A cache of its own, to empty below.
    let cache = sb.tmp.path().join("cache");
    repo.env.insert(
        "PROVE_IT_CACHE_DIR".into(),
        cache.to_str().expect("utf-8").into(),
    );
    repo.stop("s", false)
        .assert_blocked_with("pinned policy says no");

    let copies: Vec<_> = crate::util::files_under(&sb.state_dir())
        .into_iter()
        .filter(|f| f.starts_with("policies/"))
        .collect();
    assert_eq!(copies.len(), 1, "one pinned copy: {copies:?}");
    let copy = sb.state_dir().join(&copies[0]);
    std::fs::remove_file(&copy).expect("rm copy");
    repo.stop("s", false)
        .assert_blocked_with("pinned policy says no");

    std::fs::write(&copy, with_reason("tampered policy says yes")).expect("tamper");
    std::fs::remove_dir_all(&cache).expect("empty the cache");
    for _ in 0..2 {
        let out = repo.stop("s", false);
        out.assert_blocked_with("1 failed, 41 passed");
        assert!(
            out.message().contains("was changed since it was pinned")
                && out.message().contains("default policy decided instead"),
            "{out}"
        );
    }
}

#[test]
fn the_repository_can_choose_its_policy() {
    let sb = Sandbox::new();
    let repo = gated_repo(&sb);
    repo.write(".prove-it/placeholder", "");
    std::fs::write(
        repo.path(".prove-it/policy.wasm"),
        with_reason("the repo's policy says no"),
    )
    .expect("write");
    repo.commit("policy");
    repo.start("s");
    repo.write("work.txt", "x");
    repo.stop("s", false)
        .assert_blocked_with("the repo's policy says no");
}

#[test]
fn an_unreadable_policy_path_falls_back_to_the_default_and_says_so() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_POLICY", "/nowhere/policy.wasm");
    let repo = gated_repo(&sb);
    repo.start("s");
    repo.write("broken", "x");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed");
    assert!(
        out.message().contains("/nowhere/policy.wasm") && out.message().contains("default policy"),
        "{out}"
    );
}

#[test]
fn the_strict_policy_refuses_a_pass_through_a_changed_verify_sh() {
    for (policy, blocked) in [("strict", true), ("default", false)] {
        let mut sb = Sandbox::new();
        sb.set("PROVE_IT_POLICY", policy);
        let repo = gated_repo(&sb);
        repo.start("s");
        repo.write("verify.sh", "#!/bin/sh\nexit 0\n");
        let out = repo.stop("s", false);
        assert_eq!(out.blocked(), blocked, "{policy}\n{out}");
        if blocked {
            out.assert_blocked_with("git checkout HEAD -- verify.sh");
            // Restored: it passes like the default.
            repo.git(&["checkout", "HEAD", "--", "verify.sh"]);
            repo.write("feature.txt", "real work");
            repo.stop("s", true).assert_verified();
        } else {
            // The default lets it through and says so: the session-start
            // `verify.sh`, replayed, passes too.
            assert!(
                out.message()
                    .contains("checks changed: 1 file; the session-start checks pass too")
                    && out
                        .message()
                        .contains("`verify.sh` (configuration, modified)"),
                "{out}"
            );
        }
    }
}

fn cache_entries(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|f| f.ends_with(".cwasm"))
        .map(|f| dir.join(f))
        .collect()
}

/// A stop in a fresh repo with the cache dir `cache`, under a small custom
/// policy that blocks: the cache treats every module alike, and compiling
/// this one takes milliseconds where the default policy takes half a second
/// of both cores. The session starts with the shared cache (a session start
/// runs the default policy too), so the stop's is the only module `cache`
/// gets.
fn stop_with_cache(cache: &Path) -> crate::util::Outcome {
    let (_sb, mut repo) = session_under(&with_reason(CACHED_SAYS), "broken");
    repo.env.insert(
        "PROVE_IT_CACHE_DIR".into(),
        cache.to_str().expect("utf-8").into(),
    );
    repo.stop("s", false)
}

/// What the policy [`stop_with_cache`] runs under says.
const CACHED_SAYS: &str = "the cached policy says no";

#[test]
fn the_module_cache_survives_a_truncated_or_damaged_entry() {
    let cache = tempfile::tempdir().expect("tmp");
    stop_with_cache(cache.path()).assert_blocked_with(CACHED_SAYS);
    let entries = cache_entries(cache.path());
    assert_eq!(entries.len(), 1, "one compiled entry");
    let entry = &entries[0];
    let whole = std::fs::read(entry).expect("read");

    // Truncated.
    std::fs::write(entry, &whole[..whole.len() / 2]).expect("truncate");
    stop_with_cache(cache.path()).assert_blocked_with(CACHED_SAYS);
    assert_eq!(
        std::fs::read(entry).expect("read").len(),
        whole.len(),
        "rebuilt"
    );

    // Same length, one byte flipped in the middle.
    let mut damaged = whole.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0xff;
    std::fs::write(entry, &damaged).expect("damage");
    stop_with_cache(cache.path()).assert_blocked_with(CACHED_SAYS);
    assert_eq!(
        std::fs::read(entry).expect("read"),
        whole,
        "rebuilt, not trusted"
    );
}

#[test]
fn two_processes_filling_the_cache_at_once_both_work() {
    let cache = tempfile::tempdir().expect("tmp");
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(cache.path().join("modules"));
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| stop_with_cache(cache.path()));
            let b = s.spawn(|| stop_with_cache(cache.path()));
            (a.join().expect("a"), b.join().expect("b"))
        });
        a.assert_blocked_with(CACHED_SAYS);
        b.assert_blocked_with(CACHED_SAYS);
    }
    let leftovers: Vec<String> = files_under(cache.path())
        .into_iter()
        .filter(|f| !f.ends_with(".cwasm") && !f.ends_with(".b3"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temp files left behind: {leftovers:?}"
    );
}

fn prove_it(sb: &Sandbox, dir: &Path, args: &[&str]) -> std::process::Output {
    crate::util::prove_it(dir, &sb.env, args)
        .output()
        .expect("prove-it runs")
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn policy_check_accepts_the_shipped_policies_and_says_why_it_refuses_others() {
    let sb = Sandbox::new();
    for builtin in ["default", "strict"] {
        let out = prove_it(&sb, sb.tmp.path(), &["policy", "check", builtin]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("prove_it.run_verify"), "{}", text(&out));
    }
    let bad = write_module(&sb, "old.wasm", &module(99, BLOCKS, ""));
    let out = prove_it(
        &sb,
        sb.tmp.path(),
        &["policy", "check", bad.to_str().expect("utf-8")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("ABI 99"), "{}", text(&out));
}

#[test]
#[ignore = "slow suite: builds a fresh policy crate (./verify.sh --full)"]
fn policy_new_builds_into_a_module_that_checks_and_runs() {
    let sb = Sandbox::new();
    let gate = crate::claude::workspace().join("gate-wasm");
    let out = prove_it(
        &sb,
        sb.tmp.path(),
        &[
            "policy",
            "new",
            "my-policy",
            "--gate-path",
            gate.to_str().expect("utf-8"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let crate_dir = sb.tmp.path().join("my-policy");
    // Build it as an author would (its own target dir, offline is enough
    // once the workspace's dependencies are fetched).
    let build = Command::new(env!("CARGO"))
        .args(["build", "--release", "--target", "wasm32-wasip1", "--quiet"])
        .current_dir(&crate_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo");
    assert!(
        build.status.success(),
        "the new policy does not build:\n{}",
        text(&build)
    );
    let wasm = crate_dir.join("target/wasm32-wasip1/release/my_policy.wasm");
    let out = prove_it(
        &sb,
        sb.tmp.path(),
        &["policy", "check", wasm.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));

    let repo = gated_repo(&sb);
    repo.write("broken", "x");
    let out = prove_it(
        &sb,
        &repo.root,
        &["policy", "run", wasm.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("\"decision\":\"block\""),
        "{}",
        text(&out)
    );
}

/// `policy run` promises throwaway state. With `PROVE_IT_LEDGER=1` it used
/// to append its dry-run row to the person's real ledger.
#[test]
fn policy_run_leaves_the_real_ledger_and_state_alone() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_LEDGER", "1");
    let repo = sb.repo("r");
    repo.arm_counting();
    repo.write("broken", "x");
    let out = prove_it(&sb, &repo.root, &["policy", "run", "default"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("\"decision\":\"block\""),
        "{}",
        text(&out)
    );
    assert!(!sb.ledger_dir().exists(), "a dry run wrote the ledger");
    assert!(!sb.state_dir().exists(), "a dry run wrote state");
}

/// WASI is linked by what a module imports: one importing only the four
/// functions Rust's standard library asks for gets wasmtime-wasi's own
/// implementation of just those, one importing more gets all of WASI, and
/// either way the module reads its empty environment, writes to stderr and
/// exits as it would under all of WASI. A WASI name that does not exist is
/// refused by name.
#[test]
fn wasi_is_linked_for_what_a_module_imports() {
    // environ_sizes_get must answer 0 variables and environ_get succeed
    // (else trap), then "said hello" goes to stderr and the module exits
    // with status 3.
    let body = |extra_call: &str| {
        format!(
            "{extra_call}
             (i32.store (i32.const 300) (i32.const 77))
             (if (i32.ne (call $environ_sizes_get (i32.const 300) (i32.const 304)) (i32.const 0))
               (then unreachable))
             (if (i32.ne (i32.load (i32.const 300)) (i32.const 0)) (then unreachable))
             (if (i32.ne (call $environ_get (i32.const 320) (i32.const 330)) (i32.const 0))
               (then unreachable))
             (i32.store (i32.const 100) (i32.const 2048))
             (i32.store (i32.const 104) (i32.const 10))
             (drop (call $fd_write (i32.const 2) (i32.const 100) (i32.const 1) (i32.const 200)))
             (call $proc_exit (i32.const 3))
             unreachable"
        )
    };
    let imports = r#"(import "wasi_snapshot_preview1" "environ_get" (func $environ_get (param i32 i32) (result i32)))
       (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
       (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
       (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
       (data (i32.const 2048) "said hello")"#;
    let clock = r#"(import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))"#;
    let cases = [
        ("the four", module(ABI, &body(""), imports)),
        (
            "all of WASI",
            module(
                ABI,
                &body(
                    "(if (i32.ne (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 400)) (i32.const 0)) (then unreachable))",
                ),
                &format!("{imports}\n{clock}"),
            ),
        ),
    ];
    for (what, bytes) in cases {
        let (_sb, repo) = session_under(&bytes, "broken");
        let out = repo.stop("s", false);
        out.assert_blocked_with("1 failed, 41 passed");
        let message = out.message();
        assert!(
            message.contains("the policy printed: said hello"),
            "{what}: what the module wrote to stderr is shown\n{out}"
        );
        assert!(
            message.contains("exit status 3"),
            "{what}: its exit is named\n{out}"
        );
        assert!(
            message.contains("default policy decided instead"),
            "{what}\n{out}"
        );
    }
    let unknown = module(
        ABI,
        BLOCKS,
        r#"(import "wasi_snapshot_preview1" "sock_launch" (func))"#,
    );
    let (_sb, repo) = session_under(&unknown, "broken");
    let out = repo.stop("s", false);
    out.assert_blocked_with("1 failed, 41 passed");
    assert!(out.message().contains("sock_launch"), "{out}");
}

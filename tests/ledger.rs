//! The ledger: off by default; with PROVE_IT_LEDGER=1 one private row per
//! caught claim and one per verdict that matters, and `prove-it ledger`
//! reading a month of it back.

use crate::util::Sandbox;
use std::os::unix::fs::PermissionsExt;

#[test]
fn one_row_per_caught_claim_with_private_modes() {
    let mut sb = Sandbox::new();
    sb.set("PROVE_IT_LEDGER", "1");
    let repo = sb.failing_session("s");
    repo.stop_claiming("s", false, "All tests pass. Ready to merge.")
        .assert_blocked_with("attempt 1");
    repo.stop_claiming("s", true, "Fixed it, all green.")
        .assert_blocked_with("attempt 2");
    repo.stop_claiming("s", true, "Really done.")
        .assert_blocked_with("attempt 3");

    let path = sb.ledger_dir().join("ledger.jsonl");
    let text = std::fs::read_to_string(&path).expect("ledger written");
    let all: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON row"))
        .collect();
    let rows: Vec<&serde_json::Value> = all.iter().filter(|r| r["kind"] == "caught").collect();
    assert_eq!(rows.len(), 1, "retries of one turn add no claim: {text}");
    // Each block is a verdict of its own, with its attempt and time.
    let verdicts: Vec<&serde_json::Value> = all.iter().filter(|r| r["kind"] == "verdict").collect();
    assert_eq!(verdicts.len(), 3, "{text}");
    assert_eq!(verdicts[2]["verdict"], "blocked");
    assert_eq!(verdicts[2]["attempts"], 2);
    assert!(verdicts[2]["verify_ms"].is_u64(), "{text}");
    let row = rows[0];
    assert_eq!(row["claim"], "All tests pass. Ready to merge.");
    assert_eq!(row["evidence_demanded"], "verify.sh exit 0");
    assert_eq!(row["exit_code"], 1);
    assert_eq!(
        row["actual"],
        serde_json::json!(["test result: 1 failed, 41 passed"])
    );
    assert_eq!(row["repo"], repo.root.display().to_string());
    let ts = row["ts"].as_str().expect("ts");
    assert!(
        ts.len() == 20 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T',
        "{ts}"
    );

    let file_mode = std::fs::metadata(&path).expect("file").permissions().mode() & 0o777;
    let dir_mode = std::fs::metadata(sb.ledger_dir())
        .expect("dir")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!((file_mode, dir_mode), (0o600, 0o700));

    // A new turn (a new prompt) is a new claim: a second row.
    repo.prompt("s");
    repo.stop_claiming("s", false, "Done now.")
        .assert_blocked_with("attempt 1");
    let caught = |text: &str| {
        text.lines()
            .filter(|l| l.contains(r#""kind":"caught""#))
            .count()
    };
    assert_eq!(caught(&std::fs::read_to_string(&path).expect("ledger")), 2);

    // Fixed after one block: the report tells it.
    std::fs::remove_file(repo.path("broken")).expect("rm");
    repo.write("fixed.txt", "x");
    repo.stop_claiming("s", true, "Fixed.").assert_verified();
    let report = ledger_json(&sb, &[]);
    assert_eq!(report["caught"], 2, "{report}");
    assert_eq!(report["fixed"], 1, "{report}");
    assert_eq!(report["fixed_after"]["1"], 1, "{report}");
}

/// The repository as the ledger names it: its resolved path.
fn named(repo: &crate::util::Repo) -> String {
    let root = repo.root.canonicalize().expect("root");
    root.display().to_string()
}

/// `prove-it ledger --json ARGS` in the sandbox.
fn ledger_json(sb: &Sandbox, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["ledger", "--json"];
    all.extend(args);
    let out = crate::util::prove_it(sb.tmp.path(), &sb.env, &all)
        .output()
        .expect("prove-it ledger");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

/// A month of rows, written as the gate writes them, with lines a crash or
/// an editor left behind: the report's every figure, counted by hand.
#[test]
fn a_month_of_rows_gives_the_right_counts() {
    use serde_json::json;
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    let root = named(&repo);
    let at = |days_ago: u64| {
        let t =
            std::time::SystemTime::now() - std::time::Duration::from_secs(days_ago * 86_400 + 60);
        humantime::format_rfc3339_seconds(t).to_string()
    };
    let caught = |days: u64, repo: &str, actual: &[&str]| {
        json!({"ts": at(days), "kind": "caught", "repo": repo, "exit_code": 1,
               "claim": "All tests pass.", "evidence_demanded": "verify.sh exit 0", "actual": actual})
    };
    let verdict = |days: u64, verdict: &str, attempts: u64, ms: u64| {
        json!({"ts": at(days), "kind": "verdict", "repo": root, "verdict": verdict,
               "attempts": attempts, "verify_ms": ms})
    };
    let mut rows = vec![
        caught(1, &root, &["test result: 3 failed, 41 passed"]),
        caught(2, &root, &["test result: 1 failed, 43 passed"]),
        caught(
            8,
            &root,
            &["test result: 2 failed, 42 passed", "error: build failed"],
        ),
        caught(9, &root, &["test result: 1 failed, 43 passed"]),
        caught(15, &root, &["error[E0308]: mismatched types"]),
        caught(22, &root, &["timed out after 300 s"]),
        caught(3, "/elsewhere", &["test result: 9 failed, 1 passed"]),
        caught(40, &root, &["test result: 5 failed, 5 passed"]),
    ];
    for (days, attempts) in [(1, 1), (2, 1), (8, 1), (9, 2), (10, 0), (11, 0)] {
        rows.push(verdict(days, "verified", attempts, 2_000));
    }
    rows.push(verdict(15, "yielded", 3, 75_000));
    rows.push(verdict(22, "yielded", 3, 300_000));
    rows.push(json!({"ts": at(4), "kind": "verdict", "repo": root, "verdict": "skipped"}));
    rows.push(json!({"ts": at(5), "kind": "verdict", "repo": root, "verdict": "disarm_refused", "attempts": 0}));
    let mut text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    text.push_str("not a row at all\n");
    text.push_str(r#"{"ts":"2026-"#);
    text.push('\n');
    std::fs::create_dir_all(sb.ledger_dir()).expect("ledger dir");
    std::fs::write(sb.ledger_dir().join("ledger.jsonl"), text).expect("write");

    let r = ledger_json(&sb, &["--repo", repo.root.to_str().expect("utf-8")]);
    assert_eq!(r["caught"], 6, "{r}");
    assert_eq!(r["fixed"], 4, "{r}");
    assert_eq!(r["fixed_after"], json!({"1": 3, "2": 1}), "{r}");
    assert_eq!(r["yielded"], 2, "{r}");
    assert_eq!(r["skipped"], 1, "{r}");
    assert_eq!(r["disarm_refused"], 1, "{r}");
    assert_eq!(r["timeouts"], 1, "{r}");
    assert_eq!(r["malformed"], 2, "{r}");
    assert_eq!(
        r["recurring"][0],
        json!({"line": "test result: N failed, N passed", "count": 4}),
        "{r}"
    );
    assert_eq!(r["verify"]["runs"], 8, "{r}");
    assert_eq!(r["verify"]["over_a_minute"], 2, "{r}");
    assert_eq!(r["verify"]["slowest_ms"], 300_000, "{r}");
    let weekly: u64 = r["weeks"]
        .as_array()
        .expect("weeks")
        .iter()
        .map(|w| w["caught"].as_u64().expect("count"))
        .sum();
    assert_eq!(weekly, 6, "{r}");

    // Every repository, and a shorter period.
    assert_eq!(ledger_json(&sb, &[])["caught"], 7);
    assert_eq!(ledger_json(&sb, &["--days", "7"])["caught"], 3);

    // The same, for a person.
    let out = crate::util::prove_it(sb.tmp.path(), &sb.env, &["ledger"])
        .output()
        .expect("prove-it ledger");
    let said = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "7 false completions",
        "4 turns then passed in the same turn (3 after 1 block, 1 after 2 blocks)",
        "2 turns ended UNVERIFIED",
        "2 over a minute",
        "5×  test result: N failed, N passed",
        "2 lines skipped (not a row",
    ] {
        assert!(said.contains(needle), "missing {needle:?}:\n{said}");
    }
}

#[test]
fn ledger_is_off_unless_enabled() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_blocked_with("attempt 1");
    assert!(!sb.ledger_dir().exists());
}

/// `doctor` reads the ledger's last week: a `verify.sh` that took over a
/// minute there is said, with the figure.
#[test]
fn doctor_says_when_the_ledger_shows_a_slow_verify_sh() {
    let sb = Sandbox::new();
    let repo = sb.repo("r");
    repo.arm("exit 0");
    let root = named(&repo);
    let ts = humantime::format_rfc3339_seconds(
        std::time::SystemTime::now() - std::time::Duration::from_secs(3600),
    );
    let row = serde_json::json!({"ts": ts.to_string(), "kind": "verdict", "repo": root,
        "verdict": "verified", "attempts": 0, "verify_ms": 95_000});
    std::fs::create_dir_all(sb.ledger_dir()).expect("ledger dir");
    std::fs::write(sb.ledger_dir().join("ledger.jsonl"), format!("{row}\n")).expect("write");
    let out = crate::util::prove_it(&repo.root, &sb.env, &["doctor", "--no-run"])
        .output()
        .expect("doctor");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "1 of the last week's 1 runs of ./verify.sh here took over a minute (slowest 95 s)"
        ),
        "{said}"
    );
}

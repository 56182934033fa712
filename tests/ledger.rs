//! The ledger: off by default; with PROVE_IT_LEDGER=1 one private row per
//! caught claim.

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
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON row"))
        .collect();
    assert_eq!(rows.len(), 1, "retries of one stretch add no rows: {text}");
    let row = &rows[0];
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

    // A new stretch (a new prompt) is a new claim: a second row.
    repo.prompt("s");
    repo.stop_claiming("s", false, "Done now.")
        .assert_blocked_with("attempt 1");
    assert_eq!(
        std::fs::read_to_string(&path)
            .expect("ledger")
            .lines()
            .count(),
        2
    );
}

#[test]
fn ledger_is_off_unless_enabled() {
    let sb = Sandbox::new();
    let repo = sb.failing_session("s");
    repo.stop("s", false).assert_blocked_with("attempt 1");
    assert!(!sb.ledger_dir().exists());
}

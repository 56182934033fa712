//! The release archives as users download them (release/build.sh, run by
//! `./verify.sh --full` into `PROVE_IT_RELEASE_DIR`): each Linux archive
//! unpacks to the layout plugin/fetch.sh expects, is small, matches its
//! .sha256, and its binary answers a real hook round trip on a git
//! repository, the aarch64 one under qemu-user.

use crate::download::target;
use crate::util::Sandbox;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The download budget (the issue: under 10 MB compressed).
const MAX_ARCHIVE_BYTES: u64 = 10_000_000;

/// The folder release/build.sh wrote the archives to. Unset is a failure,
/// not a skip: these tests exist to prove the archives work.
pub fn release_dir() -> PathBuf {
    let dir = std::env::var_os("PROVE_IT_RELEASE_DIR").map(PathBuf::from).expect(
        "PROVE_IT_RELEASE_DIR is not set: ./verify.sh --full builds the release archives with release/build.sh and sets it",
    );
    assert!(
        dir.is_dir(),
        "PROVE_IT_RELEASE_DIR={} is not a folder",
        dir.display()
    );
    dir
}

/// Checks `TARGET`'s archive and unpacks it into `into`; returns the binary.
pub fn unpack(target: &str, into: &Path) -> PathBuf {
    let dir = release_dir();
    let name = format!("prove-it-{VERSION}-{target}");
    let archive = dir.join(format!("{name}.tar.gz"));
    let size = std::fs::metadata(&archive)
        .unwrap_or_else(|e| panic!("{}: {e}", archive.display()))
        .len();
    assert!(size < MAX_ARCHIVE_BYTES, "{name}.tar.gz is {size} bytes");
    let check = Command::new("sha256sum")
        .args(["-c", &format!("{name}.tar.gz.sha256")])
        .current_dir(&dir)
        .output()
        .expect("sha256sum");
    assert!(check.status.success(), "{check:?}");
    std::fs::create_dir_all(into).expect("mkdir");
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(into)
        .output()
        .expect("tar");
    assert!(out.status.success(), "{out:?}");
    let bin = into.join(&name).join("prove-it");
    assert!(bin.is_file(), "{name}.tar.gz holds no {name}/prove-it");
    bin
}

/// A command running `bin`, under qemu when it is for another CPU.
fn runner(bin: &Path, target: &str) -> Command {
    let native = target.starts_with(std::env::consts::ARCH);
    if native {
        return Command::new(bin);
    }
    let arch = target.split('-').next().expect("arch");
    let mut cmd = Command::new(format!("qemu-{arch}"));
    cmd.arg(bin);
    cmd
}

fn round_trip(target: &str) {
    let sb = Sandbox::new();
    let bin = unpack(target, &sb.tmp.path().join("unpacked"));
    let version = runner(&bin, target)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({target}): {e}", bin.display()));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("prove-it {VERSION}"),
        "{version:?}"
    );

    let repo = sb.repo("r");
    repo.arm("if [ -e broken ]; then echo 'test result: FAILED. 1 failed'; exit 1; fi");
    let hook = |event: &str| -> String {
        let mut cmd = runner(&bin, target);
        cmd.args(["hook", event])
            .current_dir(&repo.root)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .envs(repo.env.iter())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::util::git_env(&mut cmd);
        let mut child = cmd.spawn().expect("hook");
        let input = serde_json::json!({"session_id": "s", "cwd": repo.root, "source": "startup", "stop_hook_active": false, "last_assistant_message": "All tests pass."});
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("hook");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(hook("session-start"), "");
    repo.write("broken", "x");
    let answer: Value = serde_json::from_str(&hook("stop")).expect("JSON");
    assert_eq!(answer["decision"], "block", "{answer}");
    let reason = answer["reason"].as_str().expect("reason");
    assert!(
        reason.contains("attempt 1 of 3") && reason.contains("1 failed"),
        "{reason}"
    );
    std::fs::remove_file(repo.path("broken")).expect("rm");
    assert_eq!(hook("stop"), "", "a passing verify.sh lets the turn end");
}

#[test]
#[ignore = "slow suite: release archives (./verify.sh --full builds them)"]
fn the_x86_64_linux_archive_answers_a_hook() {
    round_trip("x86_64-unknown-linux-musl");
}

#[test]
#[ignore = "slow suite: release archives (./verify.sh --full builds them)"]
fn the_aarch64_linux_archive_answers_a_hook_under_qemu() {
    round_trip("aarch64-unknown-linux-musl");
}

/// The four targets fetch.sh downloads are the four the release workflow
/// builds, and the archive names agree.
#[test]
fn the_release_workflow_builds_what_the_launcher_downloads() {
    let root = crate::claude::workspace();
    let fetch = std::fs::read_to_string(root.join("plugin/fetch.sh")).expect("fetch.sh");
    let workflow =
        std::fs::read_to_string(root.join(".github/workflows/release.yml")).expect("release.yml");
    let build = std::fs::read_to_string(root.join("release/build.sh")).expect("build.sh");
    let targets = [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ];
    for t in targets {
        assert!(fetch.contains(&format!("target={t}")), "fetch.sh: {t}");
        assert!(
            workflow.contains(&format!("target: {t}")),
            "release.yml: {t}"
        );
        assert!(build.contains(t), "build.sh: {t}");
    }
    assert_eq!(workflow.matches("- target: ").count(), targets.len());
    assert!(workflow.contains("release/build.sh ${{ matrix.target }} dist"));
    assert!(workflow.contains("actions/attest-build-provenance"));
    assert!(fetch.contains("name=prove-it-$version-$target"));
    assert!(build.contains("name=\"prove-it-$version-$target\""));
    assert!(targets.contains(&target()));
}

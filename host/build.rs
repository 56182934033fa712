//! Builds the shipped policies for `wasm32-wasip1`, `default`
//! (`policies/default/`) and `strict` (`policies/strict/`), in one inner
//! cargo build, and leaves them in OUT_DIR, where `runtime` embeds them: one
//! `prove-it` binary carries exactly one build of each, and knows each
//! one's blake3 hash.
//!
//! It reruns exactly when what the modules are built from changes: the
//! inner build's own dep-info lists every source file, and the manifests
//! and the lock file are added. The inner cargo uses its own target dir
//! (sharing ours would deadlock on the build lock) and none of the outer
//! build's flags or wrappers, but it does share cargo's jobserver, so
//! `cargo build -j N` bounds both builds together.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shipped policies: crate, module file name, the variable its hash
/// is passed in.
const POLICIES: [(&str, &str, &str); 2] = [
    (
        "prove-it-default",
        "prove_it_default",
        "PROVE_IT_DEFAULT_POLICY_BLAKE3",
    ),
    (
        "prove-it-strict",
        "prove_it_strict",
        "PROVE_IT_STRICT_POLICY_BLAKE3",
    ),
];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let workspace = manifest_dir.join("..");
    let target_dir = out_dir.join("policy-target");
    build_modules(&workspace, &target_dir);

    let release = target_dir.join("wasm32-wasip1/release");
    let mut inputs = vec![
        workspace.join("Cargo.toml"),
        workspace.join("Cargo.lock"),
        workspace.join("gate-wasm/Cargo.toml"),
    ];
    for (krate, name, var) in POLICIES {
        let wasm = release.join(format!("{name}.wasm"));
        let bytes =
            std::fs::read(&wasm).unwrap_or_else(|e| panic!("cannot read {}: {e}", wasm.display()));
        std::fs::write(out_dir.join(format!("{name}.wasm")), &bytes)
            .unwrap_or_else(|e| panic!("cannot copy {}: {e}", wasm.display()));
        // The module's identity (its cache key), hashed here rather than
        // at every stop.
        println!("cargo:rustc-env={var}={}", blake3::hash(&bytes).to_hex());
        let folder = krate.trim_start_matches("prove-it-");
        inputs.push(workspace.join("policies").join(folder).join("Cargo.toml"));
        inputs.extend(dep_info(&release.join(format!("{name}.d"))));
    }
    inputs.sort();
    inputs.dedup();
    for input in inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
}

fn build_modules(workspace: &Path, target_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--locked")
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .args(["--target", "wasm32-wasip1"])
        .arg("--target-dir")
        .arg(target_dir);
    for (krate, _, _) in POLICIES {
        cmd.args(["-p", krate]);
    }
    // The outer build's settings are for the host, not for wasm. The
    // jobserver variables (CARGO_MAKEFLAGS and friends) stay.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    // Smallest module: it is compiled at the first stop and loaded at every
    // one after, so its size is paid for in time.
    for (var, value) in [
        ("CARGO_PROFILE_RELEASE_OPT_LEVEL", "s"),
        ("CARGO_PROFILE_RELEASE_LTO", "fat"),
        ("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1"),
        ("CARGO_PROFILE_RELEASE_PANIC", "abort"),
        ("CARGO_PROFILE_RELEASE_STRIP", "true"),
    ] {
        cmd.env(var, value);
    }
    let status = cmd
        .status()
        .expect("cannot run cargo to build the policy modules");
    if !status.success() {
        panic!(
            "building the policy modules for wasm32-wasip1 failed; if the target is missing, run `rustup target add wasm32-wasip1` and build again"
        );
    }
}

/// The files a cargo dep-info file (`output: input input ...`, spaces in
/// names escaped with `\`) lists as inputs.
fn dep_info(path: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read the dep-info {}: {e}", path.display()));
    let Some((_, inputs)) = text.lines().next().and_then(|l| l.split_once(": ")) else {
        panic!("the dep-info {} names no inputs", path.display());
    };
    let mut files = Vec::new();
    let mut current = String::new();
    let mut chars = inputs.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => files
                .extend((!current.is_empty()).then(|| PathBuf::from(std::mem::take(&mut current)))),
            c => current.push(c),
        }
    }
    files.extend((!current.is_empty()).then(|| PathBuf::from(current)));
    files
}

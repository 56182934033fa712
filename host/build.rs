//! Builds the default policy (`gate-wasm/`) for `wasm32-wasip1` and leaves
//! it in OUT_DIR, where `runtime::DEFAULT_POLICY` embeds it: one `prove-it`
//! binary carries exactly one policy build.
//!
//! The inner cargo uses its own target dir (sharing ours would deadlock on
//! the build lock) and none of the outer build's flags or wrappers.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let gate = manifest_dir.join("../gate-wasm");
    println!("cargo:rerun-if-changed={}", gate.join("src").display());
    println!(
        "cargo:rerun-if-changed={}",
        gate.join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("../Cargo.lock").display()
    );

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = out_dir.join("gate-target");
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--manifest-path")
        .arg(gate.join("Cargo.toml"))
        .args(["--target", "wasm32-wasip1", "--features", "default-module"])
        .arg("--target-dir")
        .arg(&target_dir);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("cannot run cargo to build the policy");
    if !status.success() {
        panic!(
            "building the default policy for wasm32-wasip1 failed; if the target is missing, run `rustup target add wasm32-wasip1` and build again"
        );
    }
    let wasm = target_dir.join("wasm32-wasip1/release/prove_it_gate.wasm");
    std::fs::copy(&wasm, out_dir.join("prove_it_gate.wasm"))
        .unwrap_or_else(|e| panic!("cannot copy {}: {e}", wasm.display()));
}

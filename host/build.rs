//! Builds the shipped policies for `wasm32-wasip1`, the default
//! (`gate-wasm/`) and `strict` (`policies/strict/`), and leaves them in
//! OUT_DIR, where `runtime` embeds them: one `prove-it` binary carries
//! exactly one build of each, and knows each one's blake3 hash.
//!
//! The inner cargo uses its own target dir (sharing ours would deadlock on
//! the build lock) and none of the outer build's flags or wrappers.

use std::path::{Path, PathBuf};
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

    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("../policies/strict/src").display()
    );
    let workspace = manifest_dir.join("..");
    let target_dir = out_dir.join("policy-target");
    // Two builds: the default module exports from prove-it-gate itself (a
    // feature), the strict one from its own crate; built together, feature
    // unification would give the strict module both sets of exports.
    build_module(
        &workspace,
        &target_dir,
        &["-p", "prove-it-gate", "--features", "default-module"],
    );
    build_module(&workspace, &target_dir, &["-p", "prove-it-strict"]);
    for (name, var) in [
        ("prove_it_gate", "PROVE_IT_DEFAULT_POLICY_BLAKE3"),
        ("prove_it_strict", "PROVE_IT_STRICT_POLICY_BLAKE3"),
    ] {
        let wasm = target_dir.join(format!("wasm32-wasip1/release/{name}.wasm"));
        let bytes =
            std::fs::read(&wasm).unwrap_or_else(|e| panic!("cannot read {}: {e}", wasm.display()));
        std::fs::write(out_dir.join(format!("{name}.wasm")), &bytes)
            .unwrap_or_else(|e| panic!("cannot copy {}: {e}", wasm.display()));
        // The module's identity (its cache key), hashed here rather than
        // at every stop.
        println!("cargo:rustc-env={var}={}", blake3::hash(&bytes).to_hex());
    }
}

fn build_module(workspace: &Path, target_dir: &Path, args: &[&str]) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--locked")
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .args(["--target", "wasm32-wasip1"])
        .args(args)
        .arg("--target-dir")
        .arg(target_dir);
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
        .expect("cannot run cargo to build a policy module");
    if !status.success() {
        panic!(
            "building a policy module ({args:?}) for wasm32-wasip1 failed; if the target is missing, run `rustup target add wasm32-wasip1` and build again"
        );
    }
}

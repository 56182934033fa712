//! Rules about the code itself that the compiler does not check.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Configuration enters once: only `settings.rs` reads the environment, so
/// a test or a dry run handed other values can never reach the person's
/// real state, cache or ledger by accident.
#[test]
fn only_settings_reads_the_environment() {
    let src = prove_it_test_support::workspace().join("host/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "{} files under {}",
        files.len(),
        src.display()
    );
    let mut offenders = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("settings.rs")) {
        let text = std::fs::read_to_string(file).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if ["env::var", "env::vars", "env::set_var", "env::remove_var"]
                .iter()
                .any(|call| code.contains(call))
            {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "read the environment in settings.rs:\n{}",
        offenders.join("\n")
    );
}

/// host/link.sh builds the musl target with the system C compiler, which
/// is safe only for C code that uses no C library type (its headers are
/// glibc's, the library linked is musl). So every crate that can compile C
/// is named here with the reason its C is safe, and a new one fails this
/// test until someone has looked at its C.
#[test]
fn c_code_for_the_target_is_only_what_link_sh_names() {
    const KNOWN: &[(&str, &str)] = &[
        ("blake3", "SIMD kernels: integer and vector types only"),
        (
            "wasmtime",
            "helpers.c: stdbool/stdint/stdlib types, no library call",
        ),
        ("wasmtime-internal-fiber", "C only on Windows"),
        (
            "wasmtime-internal-jit-debug",
            "C only with its gdb_jit_int feature, which is off",
        ),
    ];
    let lock = prove_it_test_support::workspace().join("Cargo.lock");
    let text = std::fs::read_to_string(&lock).expect("Cargo.lock");
    let doc: toml_edit::DocumentMut = text.parse().expect("Cargo.lock is TOML");
    let packages = doc["package"]
        .as_array_of_tables()
        .expect("[[package]] tables");
    let compiles_c = |deps: &toml_edit::Array| {
        deps.iter().any(|d| {
            let name = d.as_str().unwrap_or("").split(' ').next().unwrap_or("");
            matches!(name, "cc" | "cmake")
        })
    };
    let mut found: Vec<&str> = packages
        .iter()
        .filter(|p| {
            p.get("dependencies")
                .and_then(|d| d.as_array())
                .is_some_and(compiles_c)
        })
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    found.sort();
    found.dedup();
    assert!(
        found.contains(&"blake3"),
        "the check reads Cargo.lock: {found:?}"
    );
    let new: Vec<&&str> = found
        .iter()
        .filter(|name| !KNOWN.iter().any(|(known, _)| known == *name))
        .collect();
    assert!(
        new.is_empty(),
        "{new:?} compile C: read their C; if it uses no C library type (struct, errno, stdio), add them to KNOWN with the reason, else give host/link.sh a musl C compiler"
    );
}

/// Within `commands/` and `commands/ci/` every arrow runs one way: no two
/// files of one folder name each other (`super::x` both ways), so each
/// reads without the other open.
#[test]
fn the_command_files_name_each_other_one_way_only() {
    let mut both_ways = Vec::new();
    for (folder, path) in [
        ("src/commands", "crate::commands"),
        ("src/commands/ci", "crate::commands::ci"),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("read dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        let name = |p: &Path| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        // `super::x`, `crate::commands::x`, or `x` in a `super::{...}`
        // list, outside comments.
        let uses = |p: &Path, other: &str| {
            let word = |code: &str| {
                code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == other)
            };
            std::fs::read_to_string(p)
                .expect("read")
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .any(|code| {
                    code.contains(&format!("super::{other}"))
                        || code.contains(&format!("{path}::{other}"))
                        || ((code.contains("super::{") || code.contains(&format!("{path}::{{")))
                            && word(code))
                })
        };
        for a in &files {
            for b in &files {
                let (x, y) = (name(a), name(b));
                if x < y && x != "mod" && y != "mod" && uses(a, &y) && uses(b, &x) {
                    both_ways.push(format!("{folder}: {x} <-> {y}"));
                }
            }
        }
    }
    assert!(
        both_ways.is_empty(),
        "files naming each other: {both_ways:?}"
    );
}

/// The command line is the top: what it runs never reaches back up to it
/// (the commands and the capabilities take their options as their own
/// types, which `cli.rs` names).
#[test]
fn nothing_below_the_command_line_names_it() {
    let mut files = Vec::new();
    for dir in ["src/commands", "src/capability", "src/runtime", "src/agent"] {
        rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    }
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .expect("read")
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .any(|code| code.contains("crate::cli"))
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "naming `crate::cli`: {offenders:?}");
}

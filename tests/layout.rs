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

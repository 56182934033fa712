//! The hook's cost, measured as whole processes: `./bench.sh` (`--quick`
//! for a small smoke run, as CI does), which runs `cargo bench --bench gate`
//! on prove-it linked as ./install.sh links it. It builds its own repos,
//! runs each measurement alternating with its yardsticks in the same loop
//! (`git status --porcelain -uall`, the repository's own `git status
//! --porcelain`, `/bin/true`), reports medians, and judges the budgets in
//! BENCHMARKS.md, which are ratios to those yardsticks: a busy machine
//! slows both sides alike, so it can neither hide a regression nor fake
//! one. Absolute figures are shown as information. It is not a test: CI
//! runs it quick to keep it from rotting, and judges nothing then.

use prove_it_test_support::{Measured as Sample, git, hook_command_line, measure};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The binary measured: the one cargo built, or `PROVE_IT_BENCH_BIN` (for
/// example a release archive's binary, which is what users download).
static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    std::env::var("PROVE_IT_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_prove-it").into())
});

/// How the binary at `path` is linked, from its ELF program headers: a
/// dynamically linked executable names its loader (a `PT_INTERP` header).
/// ./bench.sh measures the build ./install.sh installs; a plain
/// `cargo bench` measures a dynamic one, 0.7 to 1.0 ms slower per start.
fn linking(path: &Path) -> &'static str {
    const PT_INTERP: u32 = 3;
    let Ok(elf) = std::fs::read(path) else {
        return "linking unknown (unreadable)";
    };
    let u16_at = |at: usize| {
        elf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let u64_at = |at: usize| {
        elf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
    };
    // 64-bit little-endian ELF only (the platforms static linking is set
    // up for); anything else is reported as unknown.
    if elf.get(..6) != Some(b"\x7fELF\x02\x01") {
        return "linking unknown (not a 64-bit little-endian ELF file)";
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return "linking unknown (truncated ELF header)";
    };
    let interp = (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        elf.get(at..at + 4)
            .is_some_and(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) == PT_INTERP)
    });
    if interp {
        "linked dynamically (./bench.sh measures the static build ./install.sh installs)"
    } else {
        "linked statically"
    }
}

struct Bench {
    tmp: PathBuf,
    env: Vec<(String, String)>,
}

impl Bench {
    /// A repository of `files` files in `folders` folders, with an
    /// executable `verify.sh` that does `exit 0`, committed.
    fn repo(&self, name: &str, files: usize, folders: usize) -> PathBuf {
        let root = self.tmp.join(name);
        for i in 0..files {
            let dir = root.join(format!("dir{:03}", i % folders.max(1)));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(
                dir.join(format!("file{i:05}.txt")),
                format!("line {i}\n").repeat(20),
            )
            .expect("write");
        }
        std::fs::write(root.join("verify.sh"), "#!/bin/sh\nexit 0\n").expect("verify.sh");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join("verify.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "bench"]);
        root
    }

    /// [`Bench::repo`], set up as large-repository users set theirs up
    /// (`feature.manyFiles`: index v4, the untracked cache, no index
    /// checksum), with the untracked cache filled by a first `git status`.
    fn many_files_repo(&self, name: &str, files: usize, folders: usize) -> PathBuf {
        let root = self.repo(name, files, folders);
        git(&root, &["config", "feature.manyFiles", "true"]);
        git(
            &root,
            &["update-index", "--index-version", "4", "--untracked-cache"],
        );
        git(&root, &["status", "--porcelain"]);
        root
    }

    fn hook(&self, repo: &Path, event: &str, session: &str, extra: &[(&str, &str)]) -> Sample {
        let mut cmd = Command::new(&*BIN);
        cmd.args(["hook", event]);
        self.run_hook(repo, session, &mut cmd, extra)
    }

    /// Runs `cmd` (a hook command line) in `repo` with this bench's
    /// settings and then `extra`, on the input of an event of `session`.
    fn run_hook(
        &self,
        repo: &Path,
        session: &str,
        cmd: &mut Command,
        extra: &[(&str, &str)],
    ) -> Sample {
        // One session per repository, as in use: a stop covers every
        // repository its session has state in, so one id shared by the
        // bench's repositories would measure four fingerprints per stop.
        let session = format!(
            "{session}-{}",
            repo.file_name().map_or("".into(), |n| n.to_string_lossy())
        );
        let input = format!(
            r#"{{"session_id":"{session}","cwd":"{}","source":"startup","stop_hook_active":false,"last_assistant_message":"done"}}"#,
            repo.display()
        );
        cmd.current_dir(repo)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .envs(extra.iter().copied());
        measure(cmd, input.as_bytes())
    }

    fn stop(&self, repo: &Path, session: &str) -> Sample {
        self.hook(repo, "stop", session, &[])
    }
}

fn git_status(repo: &Path) -> Sample {
    measure(
        Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=all"])
            .current_dir(repo),
        b"",
    )
}

/// What the person runs: `git status --porcelain` as the repository's
/// configuration has it (its untracked cache, fsmonitor, index version).
fn own_status(repo: &Path) -> Sample {
    measure(
        Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(repo),
        b"",
    )
}

fn trivial() -> Sample {
    measure(&mut Command::new("true"), b"")
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn ms(samples: &[Sample]) -> f64 {
    median(samples.iter().map(|s| s.wall.as_secs_f64() * 1e3).collect())
}

fn peak_mib(samples: &[Sample]) -> f64 {
    samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0) as f64 / 1024.0
}

/// The `PROVE_IT_TIMINGS` figure `key` (microseconds), median over samples.
fn timing(samples: &[Sample], key: &str) -> f64 {
    median(
        samples
            .iter()
            .filter_map(|s| {
                let line = s.stderr.lines().find(|l| l.contains("prove_it_timings"))?;
                let v: serde_json::Value = serde_json::from_str(line).ok()?;
                v["prove_it_timings"][key].as_f64()
            })
            .collect(),
    ) / 1e3
}

struct Report {
    rows: Vec<String>,
    budgets: Vec<String>,
    /// Whether budgets are judged (not in a quick run).
    judged: bool,
}

impl Report {
    fn row(&mut self, what: &str, value: String, compare: String) {
        self.rows.push(format!("| {what} | {value} | {compare} |"));
    }
    fn budget(&mut self, what: &str, measured: f64, limit: f64, unit: &str) {
        let verdict = match (self.judged, measured <= limit) {
            (false, _) => "not judged (quick)".to_string(),
            (true, true) => "met".to_string(),
            (true, false) => format!("MISSED by {:.2} {unit}", measured - limit),
        };
        self.budgets.push(format!(
            "| {what} | {measured:.2} {unit} | {limit:.2} {unit} | {verdict} |"
        ));
    }
}

/// One repository's read-only stops against its yardsticks, alternating.
struct ReadOnly {
    stop: Vec<Sample>,
    status: Vec<Sample>,
    own: Vec<Sample>,
    spawn: Vec<Sample>,
}

fn read_only(b: &Bench, repo: &Path, runs: usize) -> ReadOnly {
    let mut r = ReadOnly {
        stop: vec![],
        status: vec![],
        own: vec![],
        spawn: vec![],
    };
    for _ in 0..runs {
        r.stop.push(b.stop(repo, "s"));
        r.status.push(git_status(repo));
        r.own.push(own_status(repo));
        r.spawn.push(trivial());
    }
    r
}

/// `PROVE_IT_BENCH_VERSUS=NAME=PATH,NAME=PATH,...`: instead of the full
/// run, the figures that depend on how a binary is built (start and
/// policy load, first compile, peak memory) for each binary, alternating
/// between them and `git status` in the same loops, so a noisy machine
/// shifts them alike. Each binary has a state dir of its own: two builds
/// whose memo formats differ would otherwise throw each other's away.
fn versus(spec: &str, b: &Bench, runs: usize, small: &Path, large: &Path) {
    let bins: Vec<(&str, &str)> = spec
        .split(',')
        .map(|pair| pair.split_once('=').expect("NAME=PATH"))
        .collect();
    let states: Vec<String> = (0..bins.len())
        .map(|j| b.tmp.join(format!("state-{j}")).display().to_string())
        .collect();
    let hook = |j: usize, event: &str, repo: &Path, extra: &[(&str, &str)]| {
        let mut cmd = Command::new(bins[j].1);
        cmd.args(["hook", event]);
        let mut env = vec![("PROVE_IT_STATE_DIR", states[j].as_str())];
        env.extend_from_slice(extra);
        b.run_hook(repo, "s", &mut cmd, &env)
    };
    for j in 0..bins.len() {
        for repo in [small, large] {
            hook(j, "session-start", repo, &[]);
            hook(j, "stop", repo, &[]);
        }
    }
    let empty = || -> Vec<Vec<Sample>> { bins.iter().map(|_| Vec::new()).collect() };
    let (mut small_stops, mut large_stops, mut first) = (empty(), empty(), empty());
    // A stop that runs `verify.sh` (`exit 0`): a new change each time.
    let (mut small_runs, mut large_runs) = (empty(), empty());
    let (mut small_status, mut large_status) = (Vec::new(), Vec::new());
    let large_name = large.file_name().map_or("".into(), |n| n.to_string_lossy());
    for i in 0..runs {
        small_status.push(git_status(small));
        large_status.push(git_status(large));
        for j in 0..bins.len() {
            small_stops[j].push(hook(j, "stop", small, &[]));
            large_stops[j].push(hook(j, "stop", large, &[]));
            for (repo, runs) in [(small, &mut small_runs), (large, &mut large_runs)] {
                std::fs::write(repo.join("change.txt"), format!("versus {i} {j}")).expect("write");
                runs[j].push(hook(j, "stop", repo, &[]));
                // Back to the session's start: the read-only stops above
                // stay read-only for every binary.
                std::fs::remove_file(repo.join("change.txt")).expect("remove");
            }
            if i < 7 {
                let cache = b.tmp.join(format!("cold-{j}-{i}"));
                let cache = cache.to_str().expect("utf-8");
                first[j].push(hook(j, "stop", small, &[("PROVE_IT_CACHE_DIR", cache)]));
            }
        }
    }
    let (small_git, large_git) = (ms(&small_status), ms(&large_status));
    println!(
        "`git status --porcelain -uall` in the same loop: {small_git:.2} ms (200 files), {large_git:.1} ms ({large_name})\n"
    );
    println!(
        "| binary (median of {runs}; first compile of 7) | read-only Stop, 200 files | read-only Stop, {large_name} | policy load from cache | first compile | peak memory, {large_name} | |\n|---|---|---|---|---|---|---|",
    );
    for (j, (name, bin)) in bins.iter().enumerate() {
        let size = std::fs::metadata(bin).map_or(0, |m| m.len()) as f64 / 1e6;
        let (small_ms, large_ms) = (ms(&small_stops[j]), ms(&large_stops[j]));
        println!(
            "| {name} | {small_ms:.2} ms ({:.2}x) | {large_ms:.1} ms ({:.2}x) | {:.2} ms | {:.1} ms | {:.1} MiB | {size:.1} MB, {} |",
            small_ms / small_git,
            large_ms / large_git,
            timing(&small_stops[j], "load_us"),
            timing(&first[j], "load_us"),
            peak_mib(&large_stops[j]),
            linking(Path::new(bin))
        );
    }
    println!(
        "\n| binary (median of {runs}) | stop that runs `verify.sh` (`exit 0`), 200 files | the same, {large_name} |\n|---|---|---|",
    );
    for (j, (name, _)) in bins.iter().enumerate() {
        let (small_ms, large_ms) = (ms(&small_runs[j]), ms(&large_runs[j]));
        println!(
            "| {name} | {small_ms:.2} ms ({:.2}x) | {large_ms:.1} ms ({:.2}x) |",
            small_ms / small_git,
            large_ms / large_git,
        );
    }
}

/// The sizes `--scale` measures (files per repository).
const SCALE_SIZES: [usize; 5] = [1_000, 10_000, 30_000, 100_000, 300_000];

fn parse_sizes(list: &str) -> Vec<usize> {
    list.split(',')
        .map(|n| {
            n.trim()
                .replace('_', "")
                .parse()
                .expect("--scale=N,N,...: numbers of files")
        })
        .collect()
}

/// `--scale`: the scale table (BENCHMARKS.md). For each size, a plain
/// repository and one with `feature.manyFiles`: the read-only stop,
/// SessionStart, and a stop that runs `verify.sh` (`exit 0`; its overhead
/// beyond running it), each against both yardsticks in the same loop, and
/// the peak memory of any of them. Fewer runs as repositories grow: 41 up
/// to 10,000 files, 21 up to 30,000, 11 beyond.
fn scale(b: &Bench, sizes: &[usize]) {
    println!(
        "| files | kind | read-only Stop | SessionStart | Stop running verify.sh: overhead | git status -uall / own | peak memory |\n|---|---|---|---|---|---|---|"
    );
    for &files in sizes {
        let runs = match files {
            0..=10_000 => 41,
            10_001..=30_000 => 21,
            _ => 11,
        };
        for many in [false, true] {
            let name = format!("scale-{files}{}", if many { "-many" } else { "" });
            eprintln!("building {name}...");
            let repo = if many {
                b.many_files_repo(&name, files, (files / 100).max(1))
            } else {
                b.repo(&name, files, (files / 100).max(1))
            };
            b.hook(&repo, "session-start", "s", &[]);
            b.stop(&repo, "s");
            let ReadOnly {
                stop: read_only_stops,
                mut status,
                mut own,
                ..
            } = read_only(b, &repo, runs);
            let (mut starts, mut verifying, mut direct) = (vec![], vec![], vec![]);
            for i in 0..runs {
                starts.push(b.hook(&repo, "session-start", &format!("new{i}"), &[]));
                std::fs::write(repo.join("change.txt"), format!("work {i}")).expect("write");
                verifying.push(b.stop(&repo, "s"));
                direct.push(measure(
                    Command::new(repo.join("verify.sh")).current_dir(&repo),
                    b"",
                ));
                status.push(git_status(&repo));
                own.push(own_status(&repo));
            }
            let (status, own) = (ms(&status), ms(&own));
            let against = |t: f64| format!("{t:.1} ms ({:.2}x / {:.2}x)", t / status, t / own);
            let overhead = ms(&verifying) - ms(&direct);
            let peak = [&read_only_stops, &starts, &verifying]
                .iter()
                .map(|s| peak_mib(s))
                .fold(0.0, f64::max);
            println!(
                "| {files} | {} | {} | {} | {} | {status:.1} / {own:.1} ms | {peak:.1} MiB |",
                if many { "feature.manyFiles" } else { "plain" },
                against(ms(&read_only_stops)),
                against(ms(&starts)),
                against(overhead),
            );
            // Hundreds of thousands of files: not kept for the next size.
            let _ = std::fs::remove_dir_all(&repo);
        }
    }
    println!(
        "\nEach time: median, and its ratio to `git status --porcelain -uall` / to the repository's own `git status --porcelain`, both run in the same loop."
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 5 } else { 41 };
    let (large_files, large_folders) = if quick { (2_000, 20) } else { (30_000, 300) };
    // The largest repositories, plain and as large-repository users set
    // them up (`feature.manyFiles`: index v4, the untracked cache, no index
    // checksum); full runs only.
    let huge_files = if quick { 0 } else { 100_000 };
    let big_bytes: usize = if quick { 5 << 20 } else { 50 << 20 };
    let tmp = tempfile::tempdir().expect("tmp");
    let b = Bench {
        tmp: tmp.path().to_path_buf(),
        env: vec![
            (
                "PROVE_IT_STATE_DIR".into(),
                tmp.path().join("state").display().to_string(),
            ),
            (
                "PROVE_IT_CACHE_DIR".into(),
                tmp.path().join("cache").display().to_string(),
            ),
            ("PROVE_IT_TIMINGS".into(), "1".into()),
            ("HOME".into(), tmp.path().display().to_string()),
        ],
    };
    if let Some(sizes) = std::env::args().find_map(|a| {
        (a == "--scale")
            .then(|| SCALE_SIZES.to_vec())
            .or_else(|| a.strip_prefix("--scale=").map(parse_sizes))
    }) {
        scale(&b, &sizes);
        return;
    }
    eprintln!(
        "building repos ({} runs each{})...",
        runs,
        if quick { ", quick" } else { "" }
    );
    let small = b.repo("small", 200, 10);
    let large = b.repo("large", large_files, large_folders);
    // A test file, named as a check: changing it makes a passing stop
    // replay the checks (SPEC.md, "Weakened checks").
    for repo in [&small, &large] {
        std::fs::create_dir_all(repo.join("tests")).expect("mkdir");
        std::fs::write(repo.join("tests/check.txt"), "test 0\n").expect("write");
        std::fs::create_dir_all(repo.join(".prove-it")).expect("mkdir");
        std::fs::write(repo.join(".prove-it/checks"), "[tests]\ntests/\n").expect("write");
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-q", "-m", "a check"]);
    }
    if let Ok(spec) = std::env::var("PROVE_IT_BENCH_VERSUS") {
        versus(&spec, &b, runs, &small, &large);
        return;
    }
    // Big files are written by another process: the peak memory read from
    // wait4 includes this process's own high-water mark (the hook is
    // spawned with vfork), which a 50 MB buffer here would inflate.
    let sh = |script: String| {
        let ok = Command::new("sh").args(["-c", &script]).status();
        assert!(ok.expect("sh").success(), "{script}");
    };
    let write_big = |path: &Path| {
        sh(format!(
            "head -c {big_bytes} /dev/zero > '{}'",
            path.display()
        ))
    };
    let untracked = b.repo("untracked-big", 200, 10);
    write_big(&untracked.join("big.bin"));
    let tracked = b.repo("tracked-big", 200, 10);
    write_big(&tracked.join("big.bin"));
    git(&tracked, &["add", "big.bin"]);
    git(&tracked, &["commit", "-q", "-m", "big"]);
    let big = tracked.join("big.bin");
    sh(format!("printf 'edited\\n' >> '{}'", big.display()));
    // Settle the big files' mtimes past the hash cache's racy window.
    std::thread::sleep(Duration::from_secs(3));

    // Warm: compile the policy once; start a session in each repo.
    for repo in [&small, &large, &untracked, &tracked] {
        b.hook(repo, "session-start", "s", &[]);
        b.stop(repo, "s");
    }
    let mut r = Report {
        rows: Vec::new(),
        budgets: Vec::new(),
        judged: !quick,
    };

    // Read-only stops, alternating with their yardsticks. One loop per
    // repository: run between 30,000-file walks, a small repository's stop
    // and status both pay for caches the big walk evicted (about +0.9 ms
    // for the stop here), which is not the small case.
    let small_ro = read_only(&b, &small, runs);
    let large_ro = read_only(&b, &large, runs);
    let (stop_small, spawn, stop_large) = (&small_ro.stop, &small_ro.spawn, &large_ro.stop);
    for (files, ro) in [(200, &small_ro), (large_files, &large_ro)] {
        r.row(
            &format!("read-only Stop, {files} files"),
            format!("{:.2} ms", ms(&ro.stop)),
            format!(
                "{:.2}x git status -uall ({:.2} ms), {:.2}x own git status ({:.2} ms), {:.1}x `true` ({:.2} ms)",
                ms(&ro.stop) / ms(&ro.status),
                ms(&ro.status),
                ms(&ro.stop) / ms(&ro.own),
                ms(&ro.own),
                ms(&ro.stop) / ms(&ro.spawn),
                ms(&ro.spawn)
            ),
        );
    }
    r.budget(
        "read-only Stop / git status -uall, 200 files",
        ms(stop_small) / ms(&small_ro.status),
        1.25,
        "x",
    );
    r.budget(
        &format!("read-only Stop / git status -uall, {large_files} files"),
        ms(stop_large) / ms(&large_ro.status),
        1.0,
        "x",
    );
    if huge_files > 0 {
        let huge = b.repo("huge", huge_files, huge_files / 100);
        let many = b.many_files_repo("huge-many-files", huge_files, huge_files / 100);
        for repo in [&huge, &many] {
            b.hook(repo, "session-start", "s", &[]);
            b.stop(repo, "s");
        }
        let huge_ro = read_only(&b, &huge, runs.min(21));
        let many_ro = read_only(&b, &many, runs.min(21));
        for (what, ro) in [("", &huge_ro), (", feature.manyFiles", &many_ro)] {
            r.row(
                &format!("read-only Stop, {huge_files} files{what}"),
                format!("{:.2} ms; peak {:.1} MiB", ms(&ro.stop), peak_mib(&ro.stop)),
                format!(
                    "{:.2}x git status -uall ({:.2} ms), {:.2}x own git status ({:.2} ms)",
                    ms(&ro.stop) / ms(&ro.status),
                    ms(&ro.status),
                    ms(&ro.stop) / ms(&ro.own),
                    ms(&ro.own)
                ),
            );
        }
        r.budget(
            &format!("read-only Stop / git status -uall, {huge_files} files"),
            ms(&huge_ro.stop) / ms(&huge_ro.status),
            1.0,
            "x",
        );
        r.budget(
            &format!("read-only Stop / own git status, {huge_files} files, feature.manyFiles"),
            ms(&many_ro.stop) / ms(&many_ro.own),
            1.0,
            "x",
        );
        r.budget(
            &format!("peak memory, {huge_files} files"),
            peak_mib(&huge_ro.stop).max(peak_mib(&many_ro.stop)),
            64.0,
            "MiB",
        );
    }
    r.row(
        "spawning `true`",
        format!("{:.2} ms", ms(spawn)),
        String::new(),
    );
    r.row(
        "policy load / run from cache (in the hook)",
        format!(
            "{:.2} ms / {:.2} ms",
            timing(stop_small, "load_us"),
            timing(stop_small, "policy_us")
        ),
        format!("capability calls {:.2} ms", timing(stop_small, "host_us")),
    );
    r.row(
        &format!("peak memory, {large_files} files"),
        format!("{:.1} MiB", peak_mib(stop_large)),
        String::new(),
    );

    // The Stop hook's command line from plugin/hooks.json, run by a shell
    // as Claude Code runs it (`sh -c` here), with the launcher finding this
    // binary, alternating with the binary run directly.
    let plugin_root = prove_it_test_support::workspace();
    let command = hook_command_line(&plugin_root, "stop");
    let (mut launched, mut bare) = (vec![], vec![]);
    for _ in 0..runs {
        let root = plugin_root.to_str().expect("utf-8");
        launched.push(b.run_hook(
            &small,
            "s",
            Command::new("sh").args(["-c", &command]),
            &[("CLAUDE_PLUGIN_ROOT", root), ("PROVE_IT_BIN", BIN.as_str())],
        ));
        bare.push(b.stop(&small, "s"));
    }
    r.row(
        "read-only Stop through the plugin's hook command",
        format!("{:.2} ms", ms(&launched)),
        format!(
            "+{:.2} ms over the binary alone ({:.2} ms)",
            ms(&launched) - ms(&bare),
            ms(&bare)
        ),
    );

    // A changed tree that already passed.
    std::fs::write(small.join("change.txt"), "work").expect("write");
    b.stop(&small, "s"); // runs verify.sh once and remembers the pass
    let (mut passed, mut baseline) = (vec![], vec![]);
    for _ in 0..runs {
        passed.push(b.stop(&small, "s"));
        baseline.push(trivial());
    }
    r.row(
        "Stop on a changed tree that already passed",
        format!("{:.2} ms", ms(&passed)),
        String::new(),
    );

    // A stop that runs `exit 0`, alternating with running it directly.
    let (mut verifying, mut direct) = (vec![], vec![]);
    for i in 0..runs {
        std::fs::write(small.join("change.txt"), format!("work {i}")).expect("write");
        verifying.push(b.stop(&small, "s"));
        direct.push(measure(
            Command::new(small.join("verify.sh")).current_dir(&small),
            b"",
        ));
    }
    let overhead = ms(&verifying) - ms(&direct);
    r.row(
        "Stop that runs `verify.sh` (`exit 0`)",
        format!("{:.2} ms", ms(&verifying)),
        format!(
            "`./verify.sh` alone {:.2} ms; overhead {overhead:.2} ms",
            ms(&direct)
        ),
    );

    // The commit trailer (`prove-it setup trailer`): a stop that runs
    // `verify.sh` first keeps the tree's content tree (`git add -A` on a
    // copy of the index, then `git write-tree`); a read-only stop after it
    // reuses that. On and off alternate in one loop (the opt-in is one
    // file in the state dir, moved aside for "off"), with `git status`.
    for (repo, files) in [(&small, 200), (&large, large_files)] {
        let setup = Command::new(&*BIN)
            .args(["setup", "trailer"])
            .current_dir(repo)
            .envs(b.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("prove-it setup trailer");
        assert!(setup.status.success(), "{setup:?}");
        let marker = std::fs::read_dir(b.tmp.join("state/repos"))
            .expect("state dir")
            .flatten()
            .map(|e| e.path().join("trailer"))
            .find(|m| m.exists())
            .expect("the trailer's opt-in");
        let off = marker.with_extension("off");
        let (mut run_on, mut run_off, mut ro_on, mut ro_off, mut status) =
            (vec![], vec![], vec![], vec![], vec![]);
        for i in 0..runs.min(21) {
            for on in [true, false] {
                let (from, to) = if on { (&off, &marker) } else { (&marker, &off) };
                if from.exists() {
                    std::fs::rename(from, to).expect("move the opt-in");
                }
                std::fs::write(repo.join("change.txt"), format!("trailer {i} {on}"))
                    .expect("write");
                let (run, ro) = if on {
                    (&mut run_on, &mut ro_on)
                } else {
                    (&mut run_off, &mut ro_off)
                };
                run.push(b.stop(repo, "s"));
                ro.push(b.stop(repo, "s"));
            }
            status.push(git_status(repo));
        }
        if marker.exists() {
            std::fs::rename(&marker, &off).expect("move the opt-in");
        }
        let st = ms(&status);
        r.row(
            &format!("Stop that runs `verify.sh`, {files} files, trailer on / off"),
            format!("{:.2} ms / {:.2} ms", ms(&run_on), ms(&run_off)),
            format!(
                "+{:.2} ms, {:.2}x git status -uall ({st:.2} ms)",
                ms(&run_on) - ms(&run_off),
                (ms(&run_on) - ms(&run_off)) / st
            ),
        );
        r.row(
            &format!("read-only Stop after it, {files} files, trailer on / off"),
            format!("{:.2} ms / {:.2} ms", ms(&ro_on), ms(&ro_off)),
            format!(
                "{:.2}x / {:.2}x git status -uall",
                ms(&ro_on) / st,
                ms(&ro_off) / st
            ),
        );
    }

    // A passing stop after the session changed a check: `verify.sh` runs,
    // then again in a throwaway copy with the check as it was at the start
    // (the replay), alternating with a passing stop that changed no check.
    for (repo, files) in [(&small, 200), (&large, large_files)] {
        let (mut replaying, mut plain) = (vec![], vec![]);
        for i in 0..runs.min(11) {
            std::fs::write(repo.join("tests/check.txt"), format!("test {}\n", i + 1))
                .expect("write");
            replaying.push(b.stop(repo, "s"));
            std::fs::write(repo.join("tests/check.txt"), "test 0\n").expect("write");
            std::fs::write(repo.join("change.txt"), format!("work {i}")).expect("write");
            plain.push(b.stop(repo, "s"));
        }
        r.row(
            &format!("Stop that replays the checks (a test changed), {files} files"),
            format!("{:.2} ms", ms(&replaying)),
            format!(
                "a passing Stop with no check changed {:.2} ms: the replay adds {:.2} ms ({:.1}x)",
                ms(&plain),
                ms(&replaying) - ms(&plain),
                ms(&replaying) / ms(&plain)
            ),
        );
    }

    // SessionStart (a new baseline each time).
    let (mut start_small, mut start_large) = (vec![], vec![]);
    for i in 0..runs {
        start_small.push(b.hook(&small, "session-start", &format!("new{i}"), &[]));
        start_large.push(b.hook(&large, "session-start", &format!("new{i}"), &[]));
    }
    r.row(
        "SessionStart (baseline)",
        format!(
            "{:.2} ms (200) / {:.2} ms ({large_files})",
            ms(&start_small),
            ms(&start_large)
        ),
        String::new(),
    );

    // First run after install: an empty module cache each time.
    let mut first = vec![];
    for i in 0..runs.min(7) {
        let cache = tmp.path().join(format!("cold{i}"));
        first.push(b.hook(
            &small,
            "stop",
            "s",
            &[("PROVE_IT_CACHE_DIR", cache.to_str().expect("utf-8"))],
        ));
    }
    r.row(
        "first Stop after install (policy compile)",
        format!("{:.1} ms", ms(&first)),
        format!(
            "load {:.1} ms vs {:.2} ms cached",
            timing(&first, "load_us"),
            timing(stop_small, "load_us")
        ),
    );
    // Big files that have not changed since the last stop.
    let (mut with_untracked, mut with_tracked, mut without) = (vec![], vec![], vec![]);
    for _ in 0..runs {
        with_untracked.push(b.stop(&untracked, "s"));
        with_tracked.push(b.stop(&tracked, "s"));
        without.push(b.stop(&small, "s"));
    }
    let mib = big_bytes >> 20;
    let added_untracked = ms(&with_untracked) - ms(&without);
    let added_tracked = ms(&with_tracked) - ms(&without);
    r.row(
        &format!("Stop with an unchanged {mib} MB untracked file"),
        format!("{:.2} ms", ms(&with_untracked)),
        format!(
            "+{added_untracked:.2} ms; peak {:.1} MiB",
            peak_mib(&with_untracked)
        ),
    );
    r.row(
        &format!("Stop with an unchanged, edited {mib} MB tracked file"),
        format!("{:.2} ms", ms(&with_tracked)),
        format!(
            "+{added_tracked:.2} ms; peak {:.1} MiB",
            peak_mib(&with_tracked)
        ),
    );

    println!(
        "prove-it measured: `{}`, {}\n",
        *BIN,
        linking(Path::new(&*BIN))
    );
    println!("| measurement (median of {runs}) | prove-it | comparison |\n|---|---|---|");
    for row in &r.rows {
        println!("{row}");
    }
    println!("\n| budget | measured | limit | verdict |\n|---|---|---|---|");
    for row in &r.budgets {
        println!("{row}");
    }
}

//! The plugin installs its own host: the launcher downloads the prebuilt
//! `prove-it` for its version from a real HTTP server on loopback, checks
//! it, installs it, and goes on with the hook; and every way that can go
//! wrong ends in a message the person sees, with nothing half-installed.

use crate::claude::{clean_copy, workspace};
use crate::util::{BIN, Sandbox};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A static file server on 127.0.0.1: `GET /PATH` answers the file
/// `root/PATH`, or 404. It records every path asked for.
pub struct FileServer {
    pub url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    port: u16,
}

impl FileServer {
    /// `delay`: how long each answer waits before its body (to make two
    /// downloads overlap).
    pub fn start(root: &Path, delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (root, seen, stopping) = (root.to_path_buf(), requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (root, seen) = (root.clone(), seen.clone());
                std::thread::spawn(move || serve(stream, &root, &seen, delay));
            }
        });
        FileServer {
            url: format!("http://127.0.0.1:{port}/releases/download"),
            requests,
            stop,
            port,
        }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(stream: TcpStream, root: &Path, seen: &Mutex<Vec<String>>, delay: Duration) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => return,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = first.split(' ').nth(1).unwrap_or("/").to_string();
    seen.lock().expect("lock").push(path.clone());
    let file = root.join(path.trim_start_matches("/releases/download/"));
    let mut stream = stream;
    match std::fs::read(&file) {
        Ok(body) if !path.contains("..") => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                body.len()
            );
            std::thread::sleep(delay);
            let _ = stream.write_all(&body);
        }
        _ => {
            let _ = write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found"
            );
        }
    }
}

/// An address where nothing listens.
pub fn closed_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    format!("http://127.0.0.1:{port}/releases/download")
}

/// This machine's release target, as plugin/fetch.sh names it.
pub fn target() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-musl",
        "aarch64" => "aarch64-unknown-linux-musl",
        other => panic!("no release target for {other}"),
    }
}

/// Writes `dir/vVERSION/prove-it-VERSION-TARGET.tar.gz` and its `.sha256`
/// as release/build.sh lays them out, holding `binary` as `prove-it`.
/// Returns the archive's path.
pub fn publish(dir: &Path, version: &str, binary: &Path) -> PathBuf {
    let name = format!("prove-it-{version}-{}", target());
    let release = dir.join(format!("v{version}"));
    let stage = dir.join(format!("stage-{version}"));
    std::fs::create_dir_all(stage.join(&name)).expect("stage");
    std::fs::create_dir_all(&release).expect("release dir");
    std::fs::copy(binary, stage.join(&name).join("prove-it")).expect("copy binary");
    let archive = release.join(format!("{name}.tar.gz"));
    // gzip -1: the real binary the tests publish is a debug build of tens
    // of megabytes, which the default level takes seconds to compress;
    // what is tested (download, checksum, unpack) is the same at any level.
    let file = std::fs::File::create(&archive).expect("archive");
    let mut tar = Command::new("tar")
        .arg("-cf")
        .arg("-")
        .arg("-C")
        .arg(&stage)
        .arg(&name)
        .stdout(Stdio::piped())
        .spawn()
        .expect("tar");
    let gzip = Command::new("gzip")
        .arg("-1")
        .stdin(tar.stdout.take().expect("tar's stdout"))
        .stdout(file)
        .status()
        .expect("gzip");
    assert!(
        gzip.success() && tar.wait().expect("tar").success(),
        "tar | gzip -1 failed"
    );
    let sum = run_ok(
        Command::new("sha256sum")
            .arg(format!("{name}.tar.gz"))
            .current_dir(&release),
    );
    std::fs::write(release.join(format!("{name}.tar.gz.sha256")), sum + "\n").expect("sha256");
    archive
}

/// A copy of `binary` without its line tables: the same program, half the
/// bytes to compress, check and unpack (a debug build's tables are tens of
/// megabytes). The binary itself where `strip` is missing or fails.
pub fn without_debug_info(sb: &Sandbox, binary: &Path) -> PathBuf {
    let copy = sb.tmp.path().join("prove-it-stripped");
    let stripped = Command::new("strip")
        .arg("--strip-debug")
        .arg("-o")
        .arg(&copy)
        .arg(binary)
        .status()
        .is_ok_and(|s| s.success());
    if stripped { copy } else { binary.to_path_buf() }
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("runs");
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A stand-in host: says it is `version`, and answers any hook with a
/// message naming itself. For what the launcher does around the host.
pub fn fake_host(dir: &Path, version: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(format!("fake-prove-it-{version}"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  --version) echo 'prove-it {version}' ;;\n  hook) cat >/dev/null; echo '{{\"systemMessage\":\"fake host {version} ran\"}}' ;;\nesac\n"
        ),
    )
    .expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A server holding a release of this version whose host is a stand-in.
fn fake_release(sb: &Sandbox, delay: Duration) -> FileServer {
    let site = sb.tmp.path().join("site");
    publish(&site, VERSION, &fake_host(sb.tmp.path(), VERSION));
    FileServer::start(&site, delay)
}

/// A copy of the plugin as Claude Code installs it, at `version`.
fn plugin_at(sb: &Sandbox, version: &str) -> PathBuf {
    let root = sb.tmp.path().join(format!("plugin {version}"));
    clean_copy(&workspace(), &root);
    let manifest = root.join(".claude-plugin/plugin.json");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace(
            &format!("\"version\": \"{VERSION}\""),
            &format!("\"version\": \"{version}\""),
        ),
    )
    .expect("write");
    root
}

/// The launcher as a hook runs it, with a PATH that holds no `prove-it`
/// and no cargo, and `data` as the plugin's data folder.
fn launcher(root: &Path, data: &Path, url: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg(root.join("plugin/prove-it"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root.join("no-home"))
        .env("CLAUDE_PLUGIN_ROOT", root)
        .env("CLAUDE_PLUGIN_DATA", data)
        .env("PROVE_IT_DOWNLOAD_URL", url)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    crate::util::git_env(&mut cmd);
    cmd
}

fn run(cmd: &mut Command, stdin: &str) -> Output {
    let mut child = cmd.spawn().expect("sh");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("launcher")
}

fn launch(
    root: &Path,
    data: &Path,
    url: &str,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> Output {
    run(
        launcher(root, data, url)
            .args(args)
            .envs(env.iter().copied()),
        stdin,
    )
}

/// What a session start with no host says.
fn session_start(root: &Path, data: &Path, url: &str) -> String {
    message(&launch(
        root,
        data,
        url,
        &["hook", "session-start"],
        "{}",
        &[],
    ))
}

fn message(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0: {out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not one JSON answer: {out:?}"));
    answer["systemMessage"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Nothing but the installed binaries is left in the data folder: no
/// temporary download, no half-written file.
fn installed(data: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(data.join("bin")) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        for inner in std::fs::read_dir(entry.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            found.push(format!("{name}/{}", inner.file_name().to_string_lossy()));
        }
        if std::fs::read_dir(entry.path())
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
        {
            found.push(format!("{name}/"));
        }
    }
    found.sort();
    found
}

fn stop_input(repo: &Path) -> String {
    serde_json::json!({"session_id": "s1", "cwd": repo, "source": "startup", "stop_hook_active": false}).to_string()
}

#[test]
fn the_first_session_downloads_checks_and_is_gated() {
    let sb = Sandbox::new();
    let site = sb.tmp.path().join("site");
    publish(&site, VERSION, &without_debug_info(&sb, Path::new(BIN)));
    let server = FileServer::start(&site, Duration::ZERO);
    let root = plugin_at(&sb, VERSION);
    let data = sb.tmp.path().join("data");
    let repo = sb.repo("r");
    repo.arm_counting();
    let env: Vec<(&str, &str)> = repo
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();

    let hook = |event: &str| {
        launch(
            &root,
            &data,
            &server.url,
            &["hook", event],
            &stop_input(&repo.root),
            &env,
        )
    };
    let said = message(&hook("session-start"));
    assert!(
        said.contains(&format!("installed prove-it {VERSION}")) && said.contains("SHA-256 checked"),
        "{said}"
    );
    assert_eq!(installed(&data), [format!("{VERSION}/prove-it")]);
    let name = format!("prove-it-{VERSION}-{}.tar.gz", target());
    assert_eq!(
        server.requests(),
        [
            format!("/releases/download/v{VERSION}/{name}"),
            format!("/releases/download/v{VERSION}/{name}.sha256")
        ]
    );

    // The same session's stop is gated by the binary just installed.
    repo.write("broken", "x");
    let stop = hook("stop");
    let answer: Value = serde_json::from_slice(&stop.stdout).expect("JSON");
    assert_eq!(answer["decision"], "block", "{answer}");

    // A later session finds it: no download, and nothing said.
    let again = hook("session-start");
    assert!(again.stdout.is_empty(), "{again:?}");
    assert_eq!(server.requests().len(), 2, "downloaded again");

    // doctor says which binary runs and where it came from.
    let doctor = launch(
        &root,
        &data,
        &server.url,
        &["doctor", repo.root.to_str().expect("utf-8")],
        "",
        &env,
    );
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains(
            &data
                .join(format!("bin/{VERSION}/prove-it"))
                .display()
                .to_string()
        ) && text.contains("the prebuilt binary the plugin downloaded"),
        "{text}"
    );
}

#[test]
fn a_wrong_checksum_is_never_installed() {
    let sb = Sandbox::new();
    let site = sb.tmp.path().join("site");
    let archive = publish(&site, VERSION, &fake_host(sb.tmp.path(), VERSION));
    let sum = archive.with_extension("gz.sha256");
    std::fs::write(&sum, format!("{}  x\n", "0".repeat(64))).expect("write");
    let server = FileServer::start(&site, Duration::ZERO);
    let root = plugin_at(&sb, VERSION);
    let data = sb.tmp.path().join("data");
    for event in ["session-start", "stop"] {
        let said = message(&launch(
            &root,
            &data,
            &server.url,
            &["hook", event],
            "{}",
            &[],
        ));
        let expected = if event == "stop" {
            "NOT verified"
        } else {
            "SHA-256"
        };
        assert!(said.contains(expected), "{event}: {said}");
    }
    assert_eq!(
        installed(&data),
        [format!("{VERSION}/")],
        "nothing installed, nothing left"
    );
    // The stop did not try to download: only the session start did.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn every_failed_install_says_not_gated_and_leaves_nothing() {
    let sb = Sandbox::new();
    let root = plugin_at(&sb, VERSION);
    // (what the server holds, what the person must be told)
    type Prepare = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Prepare, &str)> = vec![
        ("404", Box::new(|_: &Path| {}), "404"),
        (
            "wrong version",
            Box::new(|site: &Path| {
                publish(site, VERSION, &fake_host(site, "0.0.1"));
            }),
            "says it is \\\"prove-it 0.0.1\\\"",
        ),
        (
            "does not run",
            Box::new(|site: &Path| {
                let junk = site.join("junk");
                std::fs::write(&junk, b"\x7fELF not really").expect("write");
                publish(site, VERSION, &junk);
            }),
            "does not run on this machine",
        ),
        (
            "not an archive",
            Box::new(|site: &Path| {
                let archive = publish(site, VERSION, &fake_host(site, VERSION));
                std::fs::write(&archive, b"not gzip").expect("write");
                let sum = run_ok(Command::new("sha256sum").arg(&archive));
                std::fs::write(archive.with_extension("gz.sha256"), sum).expect("write");
            }),
            "could not be unpacked",
        ),
    ];
    for (what, prepare, expected) in cases {
        let site = sb.tmp.path().join(format!("site {what}"));
        std::fs::create_dir_all(&site).expect("site");
        prepare(&site);
        let server = FileServer::start(&site, Duration::ZERO);
        let data = sb.tmp.path().join(format!("data {what}"));
        let out = launch(
            &root,
            &data,
            &server.url,
            &["hook", "session-start"],
            "{}",
            &[],
        );
        let said = message(&out);
        let raw = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("NOT gated") && raw.contains(expected) && said.contains("fetch"),
            "{what}: {raw}"
        );
        assert_eq!(
            installed(&data),
            [format!("{VERSION}/")],
            "{what}: something was left"
        );
    }

    // The server is down.
    let data = sb.tmp.path().join("data down");
    let said = session_start(&root, &data, &closed_url());
    assert!(
        said.contains("NOT gated") && said.contains("failed"),
        "{said}"
    );
    assert_eq!(installed(&data), [format!("{VERSION}/")]);

    // The disk is full (a file size limit stands in for it).
    let site = sb.tmp.path().join("site full");
    publish(&site, VERSION, &noise(sb.tmp.path(), 300_000));
    let server = FileServer::start(&site, Duration::ZERO);
    let data = sb.tmp.path().join("data full");
    let mut cmd = launcher(&root, &data, &server.url);
    cmd.args(["hook", "session-start"]);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 32 << 10,
                rlim_max: 32 << 10,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let said = message(&run(&mut cmd, "{}"));
    assert!(
        said.contains("NOT gated") && said.contains("failed"),
        "{said}"
    );
    assert_eq!(installed(&data), [format!("{VERSION}/")]);

    // The data folder cannot be made (a file is in its way: permissions
    // would not stop root).
    let data = sb.tmp.path().join("not a folder");
    std::fs::write(&data, "x").expect("write");
    let said = session_start(&root, &data, &closed_url());
    assert!(
        said.contains("NOT gated") && said.contains("cannot"),
        "{said}"
    );
}

/// A folder of links to every program in /usr/bin and /bin but `left_out`.
fn path_without(dir: &Path, left_out: &[&str]) -> PathBuf {
    let tools = dir.join("tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    for bin in ["/usr/bin", "/bin"] {
        for entry in std::fs::read_dir(bin).expect("bin").flatten() {
            let name = entry.file_name();
            let link = tools.join(&name);
            if left_out.iter().any(|t| name == *t) || link.exists() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), link).expect("symlink");
        }
    }
    tools
}

/// `len` bytes that do not compress: an archive bigger than the limit.
fn noise(dir: &Path, len: usize) -> PathBuf {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let path = dir.join("noise");
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn a_plugin_update_fetches_its_own_version() {
    let sb = Sandbox::new();
    let site = sb.tmp.path().join("site");
    publish(&site, "9.9.8", &fake_host(sb.tmp.path(), "9.9.8"));
    publish(&site, "9.9.9", &fake_host(sb.tmp.path(), "9.9.9"));
    let server = FileServer::start(&site, Duration::ZERO);
    let data = sb.tmp.path().join("data");
    let old = plugin_at(&sb, "9.9.8");
    let said = session_start(&old, &data, &server.url);
    assert!(said.contains("fake host 9.9.8 ran"), "{said}");
    let new = plugin_at(&sb, "9.9.9");
    let said = session_start(&new, &data, &server.url);
    assert!(
        said.contains("fake host 9.9.9 ran"),
        "the old binary was used: {said}"
    );
    assert_eq!(installed(&data), ["9.9.8/prove-it", "9.9.9/prove-it"]);
    assert!(server.requests().iter().any(|r| r.contains("v9.9.9/")));
}

#[test]
fn two_sessions_starting_at_once_install_one_good_binary() {
    let sb = Sandbox::new();
    // Each answer waits, so the two downloads overlap.
    let server = fake_release(&sb, Duration::from_millis(500));
    let root = plugin_at(&sb, VERSION);
    let data = sb.tmp.path().join("data");
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| session_start(&root, &data, &server.url));
        let b = s.spawn(|| session_start(&root, &data, &server.url));
        (a.join().expect("a"), b.join().expect("b"))
    });
    for said in [a, b] {
        assert!(said.contains(&format!("fake host {VERSION} ran")), "{said}");
    }
    assert_eq!(
        server.requests().len(),
        4,
        "both downloaded: {:?}",
        server.requests()
    );
    assert_eq!(installed(&data), [format!("{VERSION}/prove-it")]);
    let said = run_ok(Command::new(data.join(format!("bin/{VERSION}/prove-it"))).arg("--version"));
    assert_eq!(said, format!("prove-it {VERSION}"));
}

#[test]
fn fetch_installs_without_claude_code() {
    let sb = Sandbox::new();
    let server = fake_release(&sb, Duration::ZERO);
    let data_home = sb.tmp.path().join("xdg data");
    // A clone, not a plugin install: no CLAUDE_PLUGIN_ROOT or _DATA.
    let fetch_with = |url: &str, path: &Path| {
        Command::new("sh")
            .arg(workspace().join("plugin/prove-it"))
            .arg("fetch")
            .env_clear()
            .env("PATH", path)
            .env("HOME", sb.tmp.path().join("home"))
            .env("XDG_DATA_HOME", &data_home)
            .env("PROVE_IT_DOWNLOAD_URL", url)
            .stdin(Stdio::null())
            .output()
            .expect("sh")
    };
    let fetch = |url: &str| fetch_with(url, Path::new("/usr/bin:/bin"));
    let out = fetch(&server.url);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let path = data_home.join(format!("prove-it/bin/{VERSION}/prove-it"));
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(path.is_file());
    // Without curl and sha256sum: wget and shasum (macOS has shasum).
    let tools = path_without(sb.tmp.path(), &["curl", "sha256sum"]);
    std::fs::remove_dir_all(&data_home).expect("rm");
    let out = fetch_with(&server.url, &tools);
    assert!(out.status.success(), "{out:?}");
    assert!(path.is_file());
    // Failure is an exit code and a message on stderr.
    let out = fetch(&closed_url());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("could not be installed"),
        "{out:?}"
    );
}

#[test]
#[ignore = "slow suite: waits for the download's time limit (about 35 s)"]
fn a_server_that_stalls_is_given_up_on_inside_the_hook_timeout() {
    let sb = Sandbox::new();
    // Headers at once, then a body that never comes.
    let server = fake_release(&sb, Duration::from_secs(3600));
    let root = plugin_at(&sb, VERSION);
    let data = sb.tmp.path().join("data");
    let started = std::time::Instant::now();
    let said = session_start(&root, &data, &server.url);
    let took = started.elapsed();
    // The session-start hook's timeout in plugin/hooks.json.
    assert!(took < Duration::from_secs(55), "took {took:?}");
    assert!(
        said.contains("NOT gated") && said.contains("failed"),
        "{said}"
    );
    assert_eq!(installed(&data), [format!("{VERSION}/")]);
}

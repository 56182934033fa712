//! Every copy runs its own code: what would make a run in the throwaway
//! copy import the person's work tree is pointed at the copy instead.
//! Without this, the replay's "session-start code" is the session's code,
//! and a deliberate change reads as a weakening.
//!
//! - Python: an editable install (`pip install -e .`) puts the tree's
//!   folders on `sys.path` through a `.pth` file, or an `__editable__`
//!   finder, in site-packages, which the copy shares (its `.venv` is a
//!   link). Those folders, as the copy's, go first on `PYTHONPATH`: Python
//!   looks there before site-packages and before any finder.
//! - `PYTHONPATH` and `NODE_PATH` entries naming the tree name the copy.
//! - `node_modules` entries that link into the tree (`npm link`,
//!   workspaces) link into the copy; the others link to the tree's.
//! - `go.mod`, `go.work` and `Cargo.toml` paths written as absolute paths
//!   into the tree (a `replace`, a `[patch]`, a path dependency) name the
//!   copy.

use crate::settings::ImportPaths;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a run in the copy needs so that it imports the copy's code.
#[derive(Debug, Default)]
pub struct Redirect {
    /// Variables for every `verify.sh` run in the copy.
    pub env: Vec<(&'static str, OsString)>,
    /// One line for each thing redirected, for the person.
    pub said: Vec<String>,
}

/// Redirects what `repo`'s environment points at in the tree to `copy`
/// (see the module's comment); `node_modules` is made here when it must be.
pub fn redirect(repo: &Path, copy: &Path) -> Result<Redirect> {
    redirect_with(repo, copy, &crate::settings::import_paths())
}

/// [`redirect`], with the variables `verify.sh` inherits given.
fn redirect_with(repo: &Path, copy: &Path, inherited: &ImportPaths) -> Result<Redirect> {
    let mut out = Redirect::default();
    let trees = tree_names(repo);
    let to_copy = |path: &Path| -> Option<PathBuf> {
        trees
            .iter()
            .find_map(|t| path.strip_prefix(t).ok())
            .map(|rel| copy.join(rel))
    };

    // Python's editable installs, then the variables that name the tree.
    let mut python: Vec<PathBuf> = Vec::new();
    for site in site_dirs(repo, inherited.virtual_env.as_deref()) {
        for (path, how) in editable_paths(&site) {
            if let Some(mapped) = to_copy(&path)
                && !python.contains(&mapped)
            {
                out.said.push(format!(
                    "`{}` imported from the copy, not the work tree ({how} in `{}`)",
                    path.display(),
                    site.display()
                ));
                python.push(mapped);
            }
        }
    }
    let rewrite = |value: &Option<String>| -> Option<String> {
        let value = value.as_deref()?;
        let parts: Vec<String> = value
            .split(':')
            .map(|p| match to_copy(Path::new(p)) {
                Some(mapped) => mapped.to_string_lossy().into_owned(),
                None => p.to_string(),
            })
            .collect();
        Some(parts.join(":")).filter(|new| *new != value)
    };
    let rewritten = rewrite(&inherited.python_path);
    let existing = rewritten.clone().or(inherited.python_path.clone());
    if let Some(new) = &rewritten {
        out.said.push(format!("`PYTHONPATH` names the copy: {new}"));
    }
    if !python.is_empty() || rewritten.is_some() {
        let mut parts: Vec<String> = python
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        parts.extend(existing.filter(|e| !e.is_empty()));
        out.env.push(("PYTHONPATH", parts.join(":").into()));
    }
    if let Some(new) = rewrite(&inherited.node_path) {
        out.said.push(format!("`NODE_PATH` names the copy: {new}"));
        out.env.push(("NODE_PATH", new.into()));
    }

    // Manifests that name the tree by its absolute path.
    for name in ["go.mod", "go.work", "Cargo.toml", ".cargo/config.toml"] {
        let at = copy.join(name);
        let Ok(text) = std::fs::read_to_string(&at) else {
            continue;
        };
        let mut new = text.clone();
        for tree in &trees {
            let tree = tree.to_string_lossy();
            // Only whole path starts: `/repo` in `/repo/x` or `"/repo"`.
            for end in ['/', '"', '\'', ' ', '\n'] {
                new = new.replace(
                    &format!("{tree}{end}"),
                    &format!("{}{end}", copy.to_string_lossy()),
                );
            }
        }
        if new != text {
            std::fs::write(&at, new)
                .with_context(|| format!("cannot point `{name}` at the copy"))?;
            out.said.push(format!(
                "`{name}` in the copy names the copy where it named the work tree"
            ));
        }
    }
    Ok(out)
}

/// Makes the copy's `node_modules` when the tree's has entries that link
/// into the tree (outside `node_modules`): a folder of links, each to the
/// tree's entry, but those into the tree point into the copy. `None` (and
/// nothing made) when there is no such entry: then the whole folder is
/// linked.
pub fn node_modules(repo: &Path, copy: &Path) -> Result<Option<Vec<String>>> {
    let modules = repo.join("node_modules");
    let Ok(real_modules) = modules.canonicalize() else {
        return Ok(None);
    };
    let trees = tree_names(repo);
    // Each entry, one level into `@scope` folders: (name, where it links
    // to in the copy when it links into the tree).
    let mut entries: Vec<(String, Option<PathBuf>)> = Vec::new();
    let mut into_tree = Vec::new();
    let mut look = |name: String, path: &Path| {
        let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let inside = link
            .then(|| path.canonicalize().ok())
            .flatten()
            .filter(|real| !real.starts_with(&real_modules))
            .and_then(|real| {
                trees
                    .iter()
                    .find_map(|t| real.strip_prefix(t).ok().map(|rel| copy.join(rel)))
            });
        if inside.is_some() {
            into_tree.push(name.clone());
        }
        entries.push((name, inside));
    };
    for entry in std::fs::read_dir(&modules)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with('@') && path.is_dir() && !path.is_symlink() {
            for inner in std::fs::read_dir(&path)?.flatten() {
                let inner_name = inner.file_name().to_string_lossy().into_owned();
                look(format!("{name}/{inner_name}"), &inner.path());
            }
        } else {
            look(name, &path);
        }
    }
    if into_tree.is_empty() {
        return Ok(None);
    }
    let made = copy.join("node_modules");
    for (name, inside) in &entries {
        let at = made.join(name);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let target = inside.clone().unwrap_or_else(|| modules.join(name));
        std::os::unix::fs::symlink(&target, &at)
            .with_context(|| format!("cannot link `node_modules/{name}` into the copy"))?;
    }
    Ok(Some(
        into_tree
            .into_iter()
            .map(|name| format!("`node_modules/{name}` links into the copy, not the work tree"))
            .collect(),
    ))
}

/// The tree's path as written and as resolved (a `.pth` holds whichever
/// the installer saw).
fn tree_names(repo: &Path) -> Vec<PathBuf> {
    let mut names = vec![repo.to_path_buf()];
    if let Ok(real) = repo.canonicalize()
        && real != repo
    {
        names.push(real);
    }
    names
}

/// The site-packages folders a run may import from: the tree's own
/// environments, `$VIRTUAL_ENV`'s, and those of the `python3` on `PATH`
/// (with its user site).
fn site_dirs(repo: &Path, virtual_env: Option<&Path>) -> Vec<PathBuf> {
    let mut envs: Vec<PathBuf> = vec![repo.join(".venv"), repo.join("venv")];
    envs.extend(virtual_env.map(Path::to_path_buf));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for env in envs {
        for lib in ["lib", "lib64"] {
            let Ok(entries) = std::fs::read_dir(env.join(lib)) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with("python") {
                    dirs.push(entry.path().join("site-packages"));
                }
            }
        }
    }
    // `-S`: the paths only, no site processing (fast, and nothing run).
    let asked = Command::new("python3")
        .args([
            "-S",
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    if let Ok(out) = asked
        && out.status.success()
    {
        dirs.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(PathBuf::from),
        );
    }
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let real = d.canonicalize().unwrap_or_else(|_| d.clone());
        d.is_dir() && !seen.contains(&real) && {
            seen.push(real);
            true
        }
    });
    dirs
}

/// The folders `site`'s editable installs put on `sys.path`: each path line
/// of a `.pth` file, and the parent of each package an `__editable__`
/// finder maps (setuptools' strict mode), with how it was found.
fn editable_paths(site: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(site) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        if name.ends_with(".pth") {
            for line in text.lines().map(str::trim) {
                if line.starts_with('/') {
                    out.push((PathBuf::from(line), "a `.pth` file"));
                }
            }
        } else if name.starts_with("__editable__") && name.ends_with("finder.py") {
            for quote in ['\'', '"'] {
                for string in text.split(quote).skip(1).step_by(2) {
                    // A package's folder or a module's file: the folder
                    // holding it is what `sys.path` needs.
                    if string.starts_with('/')
                        && let Some(parent) = Path::new(string).parent()
                    {
                        out.push((parent.to_path_buf(), "an `__editable__` finder"));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_paths() -> ImportPaths {
        ImportPaths {
            python_path: None,
            node_path: None,
            virtual_env: None,
        }
    }

    /// `PYTHONPATH` and `NODE_PATH` entries that name the tree name the
    /// copy; other entries stay as they are.
    #[test]
    fn path_variables_naming_the_tree_name_the_copy() {
        let dir = tempfile::tempdir().expect("temp");
        let (repo, copy) = (dir.path().join("repo"), dir.path().join("copy"));
        std::fs::create_dir_all(&repo).expect("repo");
        std::fs::create_dir_all(&copy).expect("copy");
        let paths = ImportPaths {
            python_path: Some(format!("{}/src:/opt/lib", repo.display())),
            node_path: Some(format!("{}/packages", repo.display())),
            virtual_env: None,
        };
        let out = redirect_with(&repo, &copy, &paths).expect("redirect");
        let get = |k: &str| {
            out.env
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        let python = get("PYTHONPATH").expect("PYTHONPATH");
        assert!(
            python.ends_with(&format!("{}/src:/opt/lib", copy.display())),
            "{python}"
        );
        assert_eq!(
            get("NODE_PATH"),
            Some(format!("{}/packages", copy.display()))
        );
        // Naming nothing in the tree: nothing set.
        let other = ImportPaths {
            python_path: Some("/opt/lib".into()),
            ..no_paths()
        };
        let out = redirect_with(&repo, &copy, &other).expect("redirect");
        assert!(
            out.env.iter().all(|(k, _)| *k != "PYTHONPATH"),
            "{:?}",
            out.env
        );
    }

    /// Workspaces and `npm link`: the entries that link into the tree link
    /// into the copy, the others to the tree's own `node_modules`.
    #[test]
    fn node_modules_links_into_the_tree_point_into_the_copy() {
        let dir = tempfile::tempdir().expect("temp");
        let (repo, copy) = (dir.path().join("repo"), dir.path().join("copy"));
        for d in [
            "node_modules/lodash",
            "node_modules/@s",
            "packages/b",
            "packages/c",
        ] {
            std::fs::create_dir_all(repo.join(d)).expect("dir");
        }
        std::fs::create_dir_all(copy.join("packages/b")).expect("copy");
        std::os::unix::fs::symlink("../packages/b", repo.join("node_modules/b")).expect("b");
        std::os::unix::fs::symlink(repo.join("packages/c"), repo.join("node_modules/@s/c"))
            .expect("c");
        let said = node_modules(&repo, &copy)
            .expect("made")
            .expect("links into the tree");
        assert_eq!(said.len(), 2, "{said:?}");
        let made = copy.join("node_modules");
        assert_eq!(
            std::fs::read_link(made.join("b")).expect("b"),
            copy.join("packages/b")
        );
        assert_eq!(
            std::fs::read_link(made.join("@s/c")).expect("c"),
            copy.join("packages/c")
        );
        assert_eq!(
            std::fs::read_link(made.join("lodash")).expect("lodash"),
            repo.join("node_modules/lodash")
        );
        // None into the tree: nothing made, the folder is linked whole.
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(plain.join("node_modules/lodash")).expect("plain");
        assert!(
            node_modules(&plain, &dir.path().join("c2"))
                .expect("looked")
                .is_none()
        );
    }

    /// Manifests that name the tree by its absolute path name the copy; a
    /// longer path that only starts the same is left alone.
    #[test]
    fn absolute_paths_into_the_tree_in_manifests_name_the_copy() {
        let dir = tempfile::tempdir().expect("temp");
        let (repo, copy) = (dir.path().join("repo"), dir.path().join("copy"));
        std::fs::create_dir_all(&repo).expect("repo");
        std::fs::create_dir_all(&copy).expect("copy");
        let (r, c) = (repo.display(), copy.display());
        std::fs::write(
            copy.join("go.mod"),
            format!(
                "module x\n\nreplace example.com/y => {r}/y\nreplace example.com/z => {r}-other/z\n"
            ),
        )
        .expect("go.mod");
        std::fs::write(
            copy.join("Cargo.toml"),
            format!("[patch.crates-io]\nfoo = {{ path = \"{r}/foo\" }}\n"),
        )
        .expect("Cargo.toml");
        let out = redirect_with(&repo, &copy, &no_paths()).expect("redirect");
        let go = std::fs::read_to_string(copy.join("go.mod")).expect("go.mod");
        assert!(
            go.contains(&format!("=> {c}/y")) && go.contains(&format!("=> {r}-other/z")),
            "{go}"
        );
        let cargo = std::fs::read_to_string(copy.join("Cargo.toml")).expect("Cargo.toml");
        assert!(cargo.contains(&format!("\"{c}/foo\"")), "{cargo}");
        assert_eq!(
            out.said
                .iter()
                .filter(|s| s.contains("names the copy"))
                .count(),
            2,
            "{:?}",
            out.said
        );
    }
}

//! The person's settings: `PROVE_IT_*` environment variables and the
//! directories prove-it keeps things in.
//!
//! Only the host reads the environment; the policy gets the result in its
//! event. A bad value is never fatal: the default applies and the user is told.

use prove_it_gate::abi::Settings;
use std::ffi::OsString;
use std::path::PathBuf;

/// Settings plus the complaints about values that could not be used.
pub struct Loaded {
    pub settings: Settings,
    pub notes: Vec<String>,
}

/// Reads settings from the process environment.
pub fn from_env() -> Loaded {
    from_lookup(|name| std::env::var_os(name))
}

/// Reads settings through `lookup` (the environment, or a test's map).
pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Loaded {
    let defaults = Settings::default();
    let mut notes = Vec::new();
    let mut get = |name: &str| -> Option<String> {
        let raw = lookup(name)?;
        match raw.into_string() {
            Ok(value) => Some(value.trim().to_string()),
            Err(_) => {
                notes.push(format!(
                    "prove-it: `{name}` is not valid UTF-8; using its default."
                ));
                None
            }
        }
    };
    let skip = get("PROVE_IT_SKIP");
    let ledger = get("PROVE_IT_LEDGER");
    let max_blocks = get("PROVE_IT_MAX_BLOCKS");
    let timeout = get("PROVE_IT_TIMEOUT");
    let settings = Settings {
        skip: flag("PROVE_IT_SKIP", skip, &mut notes),
        ledger: flag("PROVE_IT_LEDGER", ledger, &mut notes),
        max_blocks: number(
            "PROVE_IT_MAX_BLOCKS",
            max_blocks,
            (0, 1000),
            defaults.max_blocks,
            &mut notes,
        ),
        timeout_secs: number(
            "PROVE_IT_TIMEOUT",
            timeout,
            (1, MAX_TIMEOUT_SECS),
            defaults.timeout_secs,
            &mut notes,
        ),
    };
    Loaded { settings, notes }
}

fn flag(name: &str, value: Option<String>, notes: &mut Vec<String>) -> bool {
    match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => false,
        Some("1" | "true" | "yes" | "on") => true,
        Some(other) => {
            notes.push(format!(
                "prove-it: `{name}={other}` is not understood (use 1 or 0); treating it as off."
            ));
            false
        }
    }
}

/// The plugin's Stop hook timeout is 3600 s; the gate must end a slow
/// `verify.sh` itself, before Claude Code gives up on the hook.
pub const MAX_TIMEOUT_SECS: u64 = 3000;

fn number<T>(
    name: &str,
    value: Option<String>,
    (min, max): (T, T),
    default: T,
    notes: &mut Vec<String>,
) -> T
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
{
    let Some(value) = value.filter(|v| !v.is_empty()) else {
        return default;
    };
    match value.parse::<T>() {
        Ok(n) if n >= min && n <= max => n,
        _ => {
            notes.push(format!(
                "prove-it: `{name}={value}` is not a whole number from {min} to {max}; using {default}."
            ));
            default
        }
    }
}

/// Set by the plugin's launcher to the plugin's version.
pub const PLUGIN_VERSION_VAR: &str = "PROVE_IT_PLUGIN_VERSION";

/// This host's version.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A message for the user when the plugin and this host are different
/// versions (the policy ships in the host, the hooks in the plugin).
pub fn version_mismatch() -> Option<String> {
    let plugin = std::env::var(PLUGIN_VERSION_VAR).ok()?;
    if plugin == HOST_VERSION || plugin == "unknown" || plugin.is_empty() {
        return None;
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "prove-it".into());
    Some(format!(
        "prove-it: the plugin is version {plugin} but the installed `prove-it` ({exe}) is {HOST_VERSION}. Run `git checkout v{plugin} && ./install.sh` in your prove-it checkout (or install {plugin} another way), then restart Claude Code."
    ))
}

/// Where session state lives: `PROVE_IT_STATE_DIR`, else
/// `$XDG_STATE_HOME/prove-it`, else `~/.local/state/prove-it`.
pub fn state_dir() -> PathBuf {
    dir_from("PROVE_IT_STATE_DIR", "XDG_STATE_HOME", ".local/state")
}

/// Where compiled policy modules are cached: `PROVE_IT_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/prove-it`, else `~/.cache/prove-it`.
pub fn cache_dir() -> PathBuf {
    dir_from("PROVE_IT_CACHE_DIR", "XDG_CACHE_HOME", ".cache")
}

/// Where the ledger lives: `PROVE_IT_LEDGER_DIR`, else `~/.prove-it`.
pub fn ledger_dir() -> PathBuf {
    non_empty("PROVE_IT_LEDGER_DIR").unwrap_or_else(|| home().join(".prove-it"))
}

fn dir_from(own: &str, xdg: &str, fallback: &str) -> PathBuf {
    non_empty(own)
        .or_else(|| non_empty(xdg).map(|base| base.join("prove-it")))
        .unwrap_or_else(|| home().join(fallback).join("prove-it"))
}

fn non_empty(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> PathBuf {
    // With no HOME the temp dir keeps the gate working; doctor shows where.
    non_empty("HOME").unwrap_or_else(std::env::temp_dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(pairs: &[(&str, &str)]) -> Loaded {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn defaults_without_environment() {
        let loaded = load(&[]);
        assert_eq!(loaded.settings, Settings::default());
        assert!(loaded.notes.is_empty());
    }

    #[test]
    fn values_are_read() {
        let loaded = load(&[
            ("PROVE_IT_SKIP", "1"),
            ("PROVE_IT_LEDGER", "true"),
            ("PROVE_IT_MAX_BLOCKS", "0"),
            ("PROVE_IT_TIMEOUT", "7"),
        ]);
        let s = loaded.settings;
        assert!(s.skip && s.ledger);
        assert_eq!((s.max_blocks, s.timeout_secs), (0, 7));
    }

    #[test]
    fn bad_values_fall_back_and_are_reported() {
        let loaded = load(&[
            ("PROVE_IT_MAX_BLOCKS", "many"),
            ("PROVE_IT_TIMEOUT", "0"),
            ("PROVE_IT_SKIP", "maybe"),
        ]);
        assert_eq!(loaded.settings, Settings::default());
        assert_eq!(loaded.notes.len(), 3, "{:?}", loaded.notes);
        let too_long = load(&[("PROVE_IT_TIMEOUT", "3601")]);
        assert_eq!(too_long.settings.timeout_secs, 300);
        assert_eq!(too_long.notes.len(), 1);
    }
}

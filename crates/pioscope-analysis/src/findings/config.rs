//! The rules' thresholds: findings.toml built in as the defaults, a user file overriding any
//! subset. The defaults are the schema: a key the defaults lack is unknown, a value must have
//! the type of the default (an integer may stand for a float), numbers are never negative and
//! keys ending in `_share` stay within 0..=1, so a typo fails loudly instead of silently
//! leaving a rule at its default.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toml::{Table, Value};

/// The built-in thresholds (crates/pioscope-analysis/findings.toml).
pub const DEFAULTS: &str = include_str!("../../findings.toml");

/// A bad findings configuration. Every variant names the file; key errors name the key as
/// `section.key` and the value as written.
#[derive(Debug, thiserror::Error)]
pub enum FindingsError {
    /// The file could not be read.
    #[error("cannot read findings config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("findings config {} is not valid TOML: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A section or key the rules do not have.
    #[error("findings config {}: unknown key `{key}` (known: {known})", path.display())]
    UnknownKey {
        /// The file.
        path: PathBuf,
        /// `section` or `section.key`.
        key: String,
        /// The keys that would have been accepted there.
        known: String,
    },
    /// A value of the wrong type or out of range.
    #[error("findings config {}: `{key}` = {value}: {expected}", path.display())]
    BadValue {
        /// The file.
        path: PathBuf,
        /// `section.key`.
        key: String,
        /// The value as written.
        value: String,
        /// What it should be.
        expected: String,
    },
}

/// Thresholds of every rule (findings.toml, overridable by `--config`).
#[derive(Debug)]
pub struct Config {
    table: Table,
    /// Keys a rule asked for that the defaults lack (a programming error the tests catch).
    missing: Mutex<Vec<String>>,
}

impl Clone for Config {
    fn clone(&self) -> Config {
        Config {
            table: self.table.clone(),
            missing: Mutex::new(Vec::new()),
        }
    }
}

impl PartialEq for Config {
    fn eq(&self, other: &Config) -> bool {
        self.table == other.table
    }
}

impl Default for Config {
    fn default() -> Config {
        // The embedded file parses (tested); an empty table would leave every rule at zero
        // thresholds and the `missing` list would say so.
        let table = DEFAULTS.parse::<Table>().unwrap_or_default();
        Config {
            table,
            missing: Mutex::new(Vec::new()),
        }
    }
}

/// The largest findings config read: a FIFO, a device or a huge file given as `--config` is
/// refused instead of hanging or filling memory.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

impl Config {
    /// The defaults overridden by the keys of the TOML file at `path`.
    pub fn from_file(path: &Path) -> Result<Config, FindingsError> {
        let text =
            pioscope_trace::input_file::read_bounded(path, MAX_CONFIG_BYTES).map_err(|source| {
                FindingsError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            })?;
        Config::from_toml(&text, path)
    }

    /// The defaults overridden by `text`; `path` names the source in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, FindingsError> {
        let user = text.parse::<Table>().map_err(|e| FindingsError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim().to_string(),
        })?;
        let mut config = Config::default();
        for (section, body) in user {
            let Some(Value::Table(defaults)) = config.table.get_mut(&section) else {
                return Err(FindingsError::UnknownKey {
                    path: path.to_path_buf(),
                    key: section,
                    known: known(&config.table),
                });
            };
            let Value::Table(body) = body else {
                return Err(FindingsError::BadValue {
                    path: path.to_path_buf(),
                    key: section.clone(),
                    value: body.to_string(),
                    expected: format!("expected a table: [{section}] with keys under it"),
                });
            };
            for (key, value) in body {
                let name = format!("{section}.{key}");
                let Some(default) = defaults.get(&key) else {
                    return Err(FindingsError::UnknownKey {
                        path: path.to_path_buf(),
                        key: name,
                        known: known(defaults),
                    });
                };
                let value = check(&key, default, value).map_err(|(value, expected)| {
                    FindingsError::BadValue {
                        path: path.to_path_buf(),
                        key: name,
                        value,
                        expected,
                    }
                })?;
                defaults.insert(key, value);
            }
        }
        Ok(config)
    }

    /// The thresholds of one section (a rule id, or `general`).
    pub(crate) fn section<'c>(&'c self, name: &'c str) -> Section<'c> {
        Section { config: self, name }
    }

    /// Keys rules asked for that the defaults lack.
    #[cfg(test)]
    pub(crate) fn missing(&self) -> Vec<String> {
        self.missing.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn get(&self, section: &str, key: &str) -> Option<&Value> {
        let v = self.table.get(section).and_then(|s| s.get(key));
        if v.is_none() {
            if let Ok(mut m) = self.missing.lock() {
                m.push(format!("{section}.{key}"));
            }
        }
        v
    }
}

fn known(t: &Table) -> String {
    t.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// Checks a user value against its default: the same type (integers accepted for floats),
/// not negative, shares within 0..=1, severities by name.
fn check(key: &str, default: &Value, value: Value) -> Result<Value, (String, String)> {
    let shown = value.to_string();
    let bad = |expected: &str| Err((shown.clone(), expected.to_string()));
    let share = key.ends_with("_share");
    match (default, &value) {
        (Value::Integer(_), Value::Integer(i)) if *i < 0 => bad("expected a number >= 0"),
        (Value::Integer(_), Value::Integer(_)) => Ok(value),
        (Value::Integer(_), _) => bad("expected an integer"),
        (Value::Float(_), Value::Integer(i)) => check(key, default, Value::Float(*i as f64)),
        (Value::Float(_), Value::Float(f)) if !f.is_finite() || *f < 0.0 => {
            bad("expected a number >= 0")
        }
        (Value::Float(_), Value::Float(f)) if share && *f > 1.0 => {
            bad("expected a share between 0 and 1")
        }
        (Value::Float(_), Value::Float(_)) => Ok(value),
        (Value::Float(_), _) => bad("expected a number"),
        (Value::Boolean(_), Value::Boolean(_)) => Ok(value),
        (Value::Boolean(_), _) => bad("expected true or false"),
        (Value::String(_), Value::String(_)) => Ok(value),
        (Value::String(_), _) => bad("expected a string"),
        _ => bad("unexpected value"),
    }
}

/// The keys of one section, read by a rule when it is built.
pub(crate) struct Section<'c> {
    config: &'c Config,
    name: &'c str,
}

impl Section<'_> {
    /// An integer key (0 if the defaults lack it).
    pub(crate) fn u64(&self, key: &str) -> u64 {
        match self.config.get(self.name, key) {
            Some(Value::Integer(i)) => (*i).max(0) as u64,
            _ => 0,
        }
    }

    /// A float key (integers accepted).
    pub(crate) fn f64(&self, key: &str) -> f64 {
        match self.config.get(self.name, key) {
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            _ => 0.0,
        }
    }

    /// A boolean key.
    pub(crate) fn bool(&self, key: &str) -> bool {
        matches!(self.config.get(self.name, key), Some(Value::Boolean(true)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("my.toml")
    }

    #[test]
    fn defaults_parse_and_every_section_has_enabled() {
        let t = DEFAULTS.parse::<Table>().expect("findings.toml parses");
        let c = Config::default();
        assert_eq!(c.section("general").f64("high_share"), 0.2);
        assert_eq!(c.section("small-requests").u64("max_bytes"), 65536);
        for (name, body) in &t {
            if name != "general" {
                assert_eq!(body.get("enabled"), Some(&Value::Boolean(true)), "{name}");
            }
        }
        assert!(c.missing().is_empty());
    }

    #[test]
    fn a_device_or_fifo_is_not_read() {
        // Issue 12: `report --config /dev/zero` read forever (and a FIFO hung).
        let e = Config::from_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot read findings config /dev/zero: not a regular file (a character device)"
        );
    }

    #[test]
    fn an_override_changes_one_threshold_and_keeps_the_others() {
        let c = Config::from_toml(
            "[small-requests]\nmax_bytes = 4096\n[data-sieving]\nmin_amplification = 3\n",
            p(),
        )
        .expect("valid");
        assert_eq!(c.section("small-requests").u64("max_bytes"), 4096);
        assert_eq!(c.section("small-requests").u64("min_requests"), 1000);
        assert_eq!(c.section("data-sieving").f64("min_amplification"), 3.0);
        assert_ne!(c, Config::default());
        assert_eq!(
            Config::from_toml("", p()).expect("empty"),
            Config::default()
        );
    }

    #[test]
    fn from_file_reads_and_names_a_missing_file() {
        let dir = tempfile::tempdir().expect("tmp");
        let f = dir.path().join("t.toml");
        std::fs::write(&f, "[general]\nworst = 2\n").expect("write");
        assert_eq!(
            Config::from_file(&f)
                .expect("ok")
                .section("general")
                .u64("worst"),
            2
        );
        let e = Config::from_file(&dir.path().join("nope.toml")).expect_err("missing");
        assert!(e.to_string().contains("nope.toml"), "{e}");
    }

    #[test]
    fn unknown_keys_and_sections_are_errors_naming_them() {
        let e = Config::from_toml("[small-requests]\nmax_byte = 1\n", p()).expect_err("key");
        let s = e.to_string();
        assert!(
            s.contains("my.toml") && s.contains("`small-requests.max_byte`"),
            "{s}"
        );
        assert!(s.contains("max_bytes"), "lists the known keys: {s}");
        let e = Config::from_toml("[small-request]\nmax_bytes = 1\n", p()).expect_err("section");
        assert!(e.to_string().contains("`small-request`"), "{e}");
        let e = Config::from_toml("worst = 3\n", p()).expect_err("top-level key");
        assert!(e.to_string().contains("`worst`"), "{e}");
    }

    #[test]
    fn bad_values_are_errors_naming_key_and_value() {
        for (text, key, value) in [
            (
                "[small-requests]\nmax_bytes = \"big\"\n",
                "small-requests.max_bytes",
                "\"big\"",
            ),
            (
                "[small-requests]\nmax_bytes = -1\n",
                "small-requests.max_bytes",
                "-1",
            ),
            (
                "[small-requests]\nmax_bytes = 1.5\n",
                "small-requests.max_bytes",
                "1.5",
            ),
            (
                "[small-requests]\nmin_share = 1.5\n",
                "small-requests.min_share",
                "1.5",
            ),
            ("[reread]\nenabled = 1\n", "reread.enabled", "1"),
        ] {
            let e = Config::from_toml(text, p()).expect_err(text);
            let s = e.to_string();
            assert!(
                s.contains("my.toml") && s.contains(&format!("`{key}`")) && s.contains(value),
                "{s}"
            );
        }
        let e = Config::from_toml("[general\n", p()).expect_err("syntax");
        assert!(matches!(e, FindingsError::Parse { .. }), "{e}");
    }
}

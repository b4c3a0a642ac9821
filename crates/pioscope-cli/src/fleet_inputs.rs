//! The inputs of `pioscope fleet`: the directories and files given, walked for trace stores (a
//! directory with meta.json, not entered further) and Darshan logs (told by their first bytes,
//! `import::darshan::sniff`, whatever their name). A file named on the command line that is
//! neither, and a directory that cannot be read, are inputs too: they become rows with the
//! error, so nothing given is silently left out.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use pioscope_analysis::fleet::InputKind;
use pioscope_trace::import::darshan::{sniff, SNIFF_BYTES};
use pioscope_trace::input_file;
use pioscope_trace::store::META_FILE;

/// One input.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// Its path, as found under the directory given.
    pub path: PathBuf,
    /// What it is.
    pub kind: InputKind,
    /// Why it cannot be used (kind `Unknown`).
    pub error: Option<String>,
}

impl Input {
    /// A short name: the directory's name, the log's file name without `.darshan`.
    pub fn job_name(&self) -> String {
        let name = self.path.file_name().unwrap_or(self.path.as_os_str());
        let name = name.to_string_lossy();
        name.strip_suffix(".darshan").unwrap_or(&name).to_string()
    }

    fn unknown(path: &Path, error: String) -> Input {
        Input {
            path: path.to_path_buf(),
            kind: InputKind::Unknown,
            error: Some(error),
        }
    }
}

/// Every input under `roots`, each root's in name order.
pub fn find(roots: &[PathBuf]) -> Vec<Input> {
    let mut found = Vec::new();
    for root in roots {
        if root.is_dir() {
            walk(root, &mut found);
        } else {
            let kind = file_kind(root);
            found.push(match kind {
                Ok(Some(kind)) => Input {
                    path: root.clone(),
                    kind,
                    error: None,
                },
                Ok(None) => Input::unknown(root, "not a trace store or a Darshan log".into()),
                Err(e) => Input::unknown(root, e),
            });
        }
    }
    found
}

/// A directory: a store, or the inputs beneath it (symbolic links to directories are not
/// followed, so a loop cannot trap the walk; links to files are).
fn walk(dir: &Path, found: &mut Vec<Input>) {
    if dir.join(META_FILE).exists() {
        found.push(Input {
            path: dir.to_path_buf(),
            kind: InputKind::Trace,
            error: None,
        });
        return;
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            found.push(Input::unknown(
                dir,
                format!("cannot read the directory: {e}"),
            ));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let is_link = path.symlink_metadata().is_ok_and(|m| m.is_symlink());
        if path.is_dir() {
            if !is_link {
                walk(&path, found);
            }
        } else if let Ok(Some(kind)) = file_kind(&path) {
            found.push(Input {
                path,
                kind,
                error: None,
            });
        }
    }
}

/// What the regular file `path` holds, by its first bytes.
fn file_kind(path: &Path) -> Result<Option<InputKind>, String> {
    let mut file = input_file::open_regular(path).map_err(|e| e.to_string())?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    file.by_ref()
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| e.to_string())?;
    Ok(sniff(&head).then_some(InputKind::Darshan))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_logs_are_found_and_other_files_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        fs::create_dir_all(root.join("a/store")).expect("mkdir");
        fs::write(root.join("a/store").join(META_FILE), "{}").expect("meta");
        // A store is not entered: a log inside it is its own business.
        fs::write(
            root.join("a/store/inner.darshan"),
            b"3.41\0\0\0\0\x37\x35\x64\0\0\0\0\0",
        )
        .expect("log");
        fs::write(
            root.join("a/job.log"),
            b"3.41\0\0\0\0\x37\x35\x64\0\0\0\0\0",
        )
        .expect("log");
        fs::write(root.join("a/notes.txt"), "hello").expect("text");
        let found = find(&[root.to_path_buf(), root.join("a/notes.txt")]);
        let kinds: Vec<(String, InputKind)> =
            found.iter().map(|i| (i.job_name(), i.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("job.log".to_string(), InputKind::Darshan),
                ("store".to_string(), InputKind::Trace),
                ("notes.txt".to_string(), InputKind::Unknown),
            ]
        );
        assert_eq!(
            found[2].error.as_deref(),
            Some("not a trace store or a Darshan log")
        );
    }
}

//! The one owner of "write an output safely" for every command (issue 12).
//!
//! Rules, in one place:
//! - the parent directory of an output must exist (nothing creates it silently);
//! - an existing output is replaced only with `--force`, and only if it is what the command
//!   writes: a regular file for a file output, or a directory the command recognises as its own
//!   (a pioscope trace, an OTF2 archive) or an empty directory for a directory output. Device
//!   nodes, FIFOs, sockets, symbolic links and foreign directories are never replaced, truncated
//!   or deleted;
//! - the output is written under a hidden temporary name in the same directory, flushed to disk
//!   and renamed into place, so a failed or interrupted command leaves the old output (or
//!   nothing) rather than half a file; the temporary is removed on error and on drop.
//!
//! Trace stores are staged by `pioscope_trace`'s `StoreWriter` (the same idea); for them only the
//! checks here apply ([`prepare_directory`]).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A directory output's kind, for `--force`: its name in messages ("a pioscope trace") and
/// whether an existing directory is one (an empty directory may always be replaced).
pub type OwnDirectory<'a> = (&'a str, &'a dyn Fn(&Path) -> bool);

/// Checks that `path` may be written as a file: its parent exists, and it does not exist or
/// (with `force`) is a regular file.
pub fn check_file(path: &Path, force: bool) -> Result<()> {
    check_parent(path)?;
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(());
    };
    if !meta.file_type().is_file() {
        bail!(
            "refusing to replace {}: it is {}, not a regular file",
            path.display(),
            kind(&meta)
        );
    }
    if !force {
        bail!(
            "{} already exists (use --force to replace it)",
            path.display()
        );
    }
    Ok(())
}

/// Checks that `path` may be written as a directory of kind `own.0`: its parent exists, and
/// it does not exist or (with `force`) is an empty directory or one for which `own.1` holds.
/// Returns whether a directory is there to be replaced.
pub fn check_directory(path: &Path, force: bool, own: OwnDirectory<'_>) -> Result<bool> {
    check_parent(path)?;
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(false);
    };
    if !force {
        bail!(
            "{} already exists (use --force to replace it)",
            path.display()
        );
    }
    let (what, is_own) = own;
    if !meta.file_type().is_dir() {
        bail!(
            "refusing to replace {}: it is {}, not {what} directory",
            path.display(),
            kind(&meta)
        );
    }
    let empty = fs::read_dir(path)
        .with_context(|| format!("reading {}", path.display()))?
        .next()
        .is_none();
    if !(empty || is_own(path)) {
        bail!(
            "refusing to replace {}: it is not {what} directory",
            path.display()
        );
    }
    Ok(true)
}

/// For outputs whose writer stages and renames by itself (trace stores): checks as
/// [`check_directory`], then removes a replaceable existing directory so the writer's rename
/// can take its place.
pub fn prepare_directory(path: &Path, force: bool, own: OwnDirectory<'_>) -> Result<()> {
    if check_directory(path, force, own)? {
        fs::remove_dir_all(path).with_context(|| format!("removing {}", path.display()))?;
    }
    Ok(())
}

/// Writes `bytes` to the file `path` safely (checks, temporary, fsync, rename).
pub fn write(path: &Path, force: bool, bytes: &[u8]) -> Result<()> {
    let staged = Staged::file(path, force)?;
    let mut f =
        File::create(staged.path()).with_context(|| format!("writing {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    drop(f);
    staged.commit()
}

/// An output being written under a hidden temporary name beside its final path; [`commit`]
/// renames it into place, dropping it uncommitted removes it.
///
/// [`commit`]: Staged::commit
#[derive(Debug)]
pub struct Staged {
    target: PathBuf,
    tmp: PathBuf,
    directory: bool,
    replaces_directory: bool,
    committed: bool,
}

impl Staged {
    /// Stages the file output `target` (see [`check_file`]) and creates the empty temporary
    /// [`path`](Staged::path) for the writer: created new, so nothing planted at that name
    /// (a symbolic link) is followed, and an unwritable directory fails before any work.
    pub fn file(target: &Path, force: bool) -> Result<Staged> {
        check_file(target, force)?;
        // Created before a `Staged` owns it: a name that was already taken is not removed.
        let tmp = sibling(target, "writing");
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("cannot write {}", target.display()))?;
        Ok(Staged::new(target, tmp, false, false))
    }

    /// Stages the directory output `target` (see [`check_directory`]); the writer creates the
    /// directory [`path`](Staged::path).
    pub fn directory(target: &Path, force: bool, own: OwnDirectory<'_>) -> Result<Staged> {
        let replaces = check_directory(target, force, own)?;
        Ok(Staged::new(
            target,
            sibling(target, "writing"),
            true,
            replaces,
        ))
    }

    fn new(target: &Path, tmp: PathBuf, directory: bool, replaces_directory: bool) -> Staged {
        Staged {
            target: target.to_path_buf(),
            tmp,
            directory,
            replaces_directory,
            committed: false,
        }
    }

    /// Where the writer writes (a hidden sibling of the target).
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Flushes the output to disk and renames it into place.
    pub fn commit(mut self) -> Result<()> {
        let target = self.target.clone();
        let context = || format!("writing {}", target.display());
        sync_tree(&self.tmp).with_context(context)?;
        if self.replaces_directory {
            // rename(2) does not replace a non-empty directory: move the old one aside first,
            // so the target is never missing for longer than two renames.
            let old = sibling(&self.target, "old");
            fs::rename(&self.target, &old).with_context(context)?;
            if let Err(e) = fs::rename(&self.tmp, &self.target) {
                let _ = fs::rename(&old, &self.target);
                return Err(e).with_context(context);
            }
            self.committed = true;
            fs::remove_dir_all(&old).with_context(|| format!("removing {}", old.display()))?;
        } else {
            fs::rename(&self.tmp, &self.target).with_context(context)?;
            self.committed = true;
        }
        if let Some(parent) = parent_dir(&self.target) {
            // Makes the rename itself durable; some file systems cannot sync a directory.
            let _ = File::open(parent).and_then(|d| d.sync_all());
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = if self.directory {
                fs::remove_dir_all(&self.tmp)
            } else {
                fs::remove_file(&self.tmp)
            };
        }
    }
}

/// Flushes the file `path`, or every file under the directory `path`, to disk.
fn sync_tree(path: &Path) -> std::io::Result<()> {
    if path.symlink_metadata()?.is_dir() {
        for entry in fs::read_dir(path)? {
            sync_tree(&entry?.path())?;
        }
        Ok(())
    } else {
        File::open(path)?.sync_all()
    }
}

/// `.NAME.pioscope-TAG-PID` beside `target`: the same file system, so the rename is atomic.
fn sibling(target: &Path, tag: &str) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let hidden = format!(".{name}.pioscope-{tag}-{}", std::process::id());
    match parent_dir(target) {
        Some(p) => p.join(hidden),
        None => PathBuf::from(hidden),
    }
}

/// The directory holding `path`, `None` for a bare name (the current directory).
fn parent_dir(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

fn check_parent(path: &Path) -> Result<()> {
    if path.file_name().is_none() {
        bail!("{} is not a file name", path.display());
    }
    if let Some(parent) = parent_dir(path) {
        if !parent.is_dir() {
            bail!(
                "cannot write {}: directory {} does not exist",
                path.display(),
                parent.display()
            );
        }
    }
    Ok(())
}

/// "a directory", "a character device", … for messages.
fn kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_own(_: &Path) -> bool {
        false
    }

    #[test]
    fn devices_are_never_replaced() {
        let e = check_file(Path::new("/dev/null"), true).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        assert_eq!(
            fs::metadata("/dev/null").map(|m| m.is_file()).ok(),
            Some(false)
        );
    }

    #[test]
    fn a_regular_file_is_replaced_only_with_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out.csv");
        fs::write(&out, "old").expect("write");
        assert!(write(&out, false, b"new").is_err());
        write(&out, true, b"new").expect("replace");
        assert_eq!(fs::read_to_string(&out).expect("read"), "new");
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }

    #[test]
    fn dropped_staging_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out.json");
        let staged = Staged::file(&out, false).expect("stage");
        fs::write(staged.path(), "half").expect("write");
        drop(staged);
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 0);
    }

    #[test]
    fn a_missing_parent_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("a/b/c");
        let e = check_file(&out, false).unwrap_err().to_string();
        assert!(e.contains(&format!(
            "{} does not exist",
            dir.path().join("a/b").display()
        )));
        assert!(check_directory(&out, false, ("a trace", &no_own)).is_err());
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn foreign_directories_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("d");
        fs::create_dir(&out).expect("mkdir");
        fs::write(out.join("precious"), "x").expect("write");
        assert!(prepare_directory(&out, true, ("a trace", &no_own)).is_err());
        assert!(out.join("precious").is_file());
        let staged = Staged::directory(
            &out,
            true,
            ("an archive", &|p: &Path| p.join("precious").is_file()),
        )
        .expect("own directory");
        fs::create_dir(staged.path()).expect("mkdir");
        fs::write(staged.path().join("new"), "y").expect("write");
        staged.commit().expect("commit");
        assert!(out.join("new").is_file() && !out.join("precious").exists());
        assert_eq!(fs::read_dir(dir.path()).expect("ls").count(), 1);
    }
}

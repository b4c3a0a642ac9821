//! Opening an input that the user or a damaged directory may have replaced by a FIFO (reading
//! would hang until a writer appears), a device such as /dev/zero (reading never ends) or, for
//! the small text inputs (meta.json, a model TOML), a huge file: every reader of a raw file, a
//! store table or a text input opens it here, and only regular files are read.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading if it is a regular file (after symlinks); otherwise an
/// `InvalidInput` error saying what it is ("not a regular file (a FIFO)").
pub fn open_regular(path: &Path) -> io::Result<File> {
    // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer;
    // the type is then checked on the open file, not on a name that could change meanwhile.
    // For a regular file the flag changes nothing.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({what})"),
    ))
}

/// Reads `path` as UTF-8 text if it is a regular file of at most `max_bytes` bytes (see
/// [`open_regular`]); otherwise an `InvalidInput` error saying what it is.
pub fn read_bounded(path: &Path, max_bytes: u64) -> io::Result<String> {
    let mut text = String::new();
    open_regular(path)?
        .take(max_bytes + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than {max_bytes} bytes"),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_small_regular_files_are_read() {
        // Issue 12: a FIFO hung and /dev/zero read gigabytes where a model or meta.json was
        // expected.
        let tmp = tempfile::tempdir().expect("tmp");
        let small = tmp.path().join("small.toml");
        fs::write(&small, "a = 1\n").expect("write");
        assert_eq!(read_bounded(&small, 6).expect("read"), "a = 1\n");
        let e = read_bounded(&small, 5).unwrap_err();
        assert_eq!(e.to_string(), "larger than 5 bytes");
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let fifo = tmp.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let e = read_bounded(&fifo, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(read_bounded(tmp.path(), 10).is_err());
        // Issue 12: a FIFO named events.parquet or *.praw hung the readers in open().
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        let e = open_regular(tmp.path()).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
        assert!(open_regular(&small).is_ok());
    }
}

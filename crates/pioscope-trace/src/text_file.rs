//! Reading a small text input (meta.json, a model TOML) that the user or a damaged directory
//! may have replaced by a FIFO (reading would hang until a writer appears), a device such as
//! /dev/zero (reading never ends) or a huge file: only regular files are read, and at most a
//! stated size.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Reads `path` as UTF-8 text if it is a regular file (after symlinks) of at most `max_bytes`
/// bytes; otherwise an `InvalidInput` error saying what it is.
pub fn read_bounded(path: &Path, max_bytes: u64) -> io::Result<String> {
    // Checked before opening: opening a FIFO for reading blocks.
    let kind = fs::metadata(path)?.file_type();
    if !kind.is_file() {
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
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({what})"),
        ));
    }
    let mut text = String::new();
    fs::File::open(path)?
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
    }
}

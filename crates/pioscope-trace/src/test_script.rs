//! Executable shell scripts for tests that stand in for another program (a Darshan reader, an
//! MPI launcher, a benchmark).

use std::path::Path;
use std::process::Command;

/// Writes `#!/bin/sh` and `body` to `path` and makes it executable.
///
/// A child shell writes the file, not this process: another test thread forking while this
/// process held the file open for writing would pass that descriptor on to its child, and
/// running the script before that child execs fails with "Text file busy" (ETXTBSY).
pub fn write_shell_script(path: &Path, body: &str) {
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"printf '#!/bin/sh\n%s\n' "$1" > "$2" && chmod 755 "$2""#)
        .arg("sh")
        .arg(body)
        .arg(path)
        .status()
        .expect("run /bin/sh");
    assert!(
        status.success(),
        "writing the script {} failed: {status}",
        path.display()
    );
}

//! Storage server daemons traced in server mode (docs/SERVERS.md) beside a job: which daemon
//! a raw file comes from (its name, role and brick), which of them belong to the job's time
//! window, and the store's `server` container of each.
//!
//! The daemons live longer than the job: only the records that overlap the job's window are
//! kept, and only the daemons that lived during it. A live daemon's raw file has no END chunk
//! yet; that is not a loss.

use crate::raw::reader::UNFINISHED_REASON;
use crate::store::containers::server_meta;
use crate::store::meta::ProcessMeta;

/// meta.json `facts` key of a server's brick (the directory it stores data in), when it has
/// one (GlusterFS `glusterfsd`).
pub const BRICK_FACT: &str = "brick";
/// meta.json `facts` key of the host a real server runs on (the runtime's JOB fact).
pub const HOST_FACT: &str = "host";
/// Role of a daemon that stores file data.
pub const DATA_ROLE: &str = "data";
/// Role of a daemon that manages the file system (GlusterFS `glusterd`).
pub const MANAGEMENT_ROLE: &str = "management";

/// What a server daemon is, from its executable and command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerIdentity {
    /// The container's name: `<host>:<brick>` for a brick daemon (GlusterFS's own name of a
    /// brick), else `<executable>@<host>`.
    pub name: String,
    /// `data` or `management`.
    pub role: &'static str,
    /// The brick directory, if the daemon serves one.
    pub brick: Option<String>,
}

/// Daemons whose role is management, by executable name; every other daemon stores data
/// (glusterfsd, pvfs2-server, ganesha.nfsd, daos_engine).
const MANAGEMENT_DAEMONS: &[&str] = &["glusterd"];

/// Identifies a daemon from its host, executable path and command line (words shell-quoted and
/// separated by spaces, as the runtime's `cmdline` JOB fact holds them).
pub fn identify(host: &str, exe: Option<&str>, cmdline: Option<&str>) -> ServerIdentity {
    let words: Vec<&str> = cmdline
        .unwrap_or("")
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect();
    // argv[0] first: glusterd is glusterfsd under another name.
    let program = words.first().copied().or(exe).unwrap_or("server");
    let program = program.rsplit('/').next().unwrap_or(program);
    // glusterfsd names its brick with `--brick-name DIR`.
    let brick = words
        .windows(2)
        .find(|w| w[0] == "--brick-name")
        .map(|w| w[1].trim_matches('\'').to_string());
    let role = if MANAGEMENT_DAEMONS.contains(&program) {
        MANAGEMENT_ROLE
    } else {
        DATA_ROLE
    };
    let name = match &brick {
        Some(b) => format!("{host}:{b}"),
        None => format!("{program}@{host}"),
    };
    ServerIdentity { name, role, brick }
}

/// True when a daemon lived during the window [start, end] (reference-clock ns): it started
/// before the window ended and, if its trace is finished, its last record is not before the
/// window began.
pub fn lived_during(
    started: i64,
    last_record_end: Option<i64>,
    finished: bool,
    start: i64,
    end: i64,
) -> bool {
    started <= end && (!finished || last_record_end.is_some_and(|t| t >= start))
}

/// True when a record [record_start, record_end] overlaps the window [start, end].
pub fn in_window(record_start: i64, record_end: i64, start: i64, end: i64) -> bool {
    record_end >= start && record_start <= end
}

/// Why a server's raw file is incomplete, leaving out that a live daemon has not finished it.
pub fn server_partial_reason(reason: Option<String>) -> Option<String> {
    reason.filter(|r| r != UNFINISHED_REASON)
}

/// The meta.json entry of a real server from that of its process: `server_meta` (kind
/// `server`, rank -1, `host` and `server` fact its name, its `role`), with the process's pid,
/// executable, command line, threads, raw file and facts (its `host` among them), and its
/// `brick`.
pub fn server_container(process: ProcessMeta, identity: &ServerIdentity) -> ProcessMeta {
    let mut server = server_meta(
        process.process,
        &identity.name,
        identity.role,
        process.clock,
    );
    let mut facts = process.facts;
    facts.append(&mut server.facts);
    if let Some(b) = &identity.brick {
        facts.insert(BRICK_FACT.into(), b.clone());
    }
    ProcessMeta {
        pid: process.pid,
        ppid: process.ppid,
        exe: process.exe,
        cmdline: process.cmdline,
        threads: process.threads,
        raw_file: process.raw_file,
        partial: process.partial,
        facts,
        ..server
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_brick_daemon_is_named_by_its_brick() {
        // As the runtime's `cmdline` fact holds it: words shell-quoted, separated by spaces.
        let cmd = "/usr/sbin/glusterfsd -s vm --volfile-id v.vm.b0 --brick-name '/lab/bricks/b0' --brick-port 49152";
        let id = identify("vm", Some("/usr/sbin/glusterfsd"), Some(cmd));
        assert_eq!(
            id,
            ServerIdentity {
                name: "vm:/lab/bricks/b0".into(),
                role: DATA_ROLE,
                brick: Some("/lab/bricks/b0".into()),
            }
        );
    }

    #[test]
    fn glusterd_manages_and_other_daemons_store() {
        let id = identify(
            "n1",
            Some("/usr/sbin/glusterfsd"),
            Some("glusterd --pid-file=x"),
        );
        assert_eq!(
            (id.name.as_str(), id.role),
            ("glusterd@n1", MANAGEMENT_ROLE)
        );
        assert_eq!(id.brick, None);
        let id = identify(
            "n2",
            None,
            Some("/opt/orangefs/sbin/pvfs2-server /etc/fs.conf"),
        );
        assert_eq!((id.name.as_str(), id.role), ("pvfs2-server@n2", DATA_ROLE));
    }

    #[test]
    fn windows() {
        // Started before the window, still running: kept even if idle.
        assert!(lived_during(0, None, false, 100, 200));
        // Finished before the window (a hook script of glusterd): left out.
        assert!(!lived_during(0, Some(50), true, 100, 200));
        // Started after the window ended: left out.
        assert!(!lived_during(300, None, false, 100, 200));
        assert!(in_window(90, 100, 100, 200));
        assert!(in_window(200, 250, 100, 200));
        assert!(!in_window(201, 250, 100, 200));
        assert!(!in_window(10, 99, 100, 200));
    }

    #[test]
    fn a_live_daemon_is_not_a_loss() {
        assert_eq!(
            server_partial_reason(Some(UNFINISHED_REASON.to_string())),
            None
        );
        assert_eq!(
            server_partial_reason(Some("damaged at byte 12".into())).as_deref(),
            Some("damaged at byte 12")
        );
    }
}

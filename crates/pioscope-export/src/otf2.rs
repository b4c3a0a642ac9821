//! OTF2 export (Vampir, otf2-print) through libotf2: an archive directory OUT with the anchor
//! file OUT/traces.otf2. The system tree is machine > host; a location group per container
//! (rank, server, disk), a location per thread; a region per function (role and paradigm from
//! its layer); one Enter and one Leave per call; an MpiSend and an MpiRecv per message on
//! MPI_COMM_WORLD (restricted to the exported ranks); clock properties in ns since the job
//! start (realtime offset = the job's start).
//!
//! Events are written in store order (rank, then time): each thread's calls arrive in time
//! order, so each location's Enter/Leave records are written as they come, and a rank's event
//! writers are closed when the next rank begins, so only one rank's buffers are in memory.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, CString};
use std::os::raw::c_void;
use std::path::Path;

use pioscope_trace::functions;
use pioscope_trace::store::{Event, Trace};
use pioscope_trace::Layer;

use crate::model;
use crate::otf2_sys as sys;
use crate::{for_each_event, ExportError, Options, Progress, Summary};

/// The archive's name inside OUT: OUT/traces.otf2, OUT/traces.def, OUT/traces/.
pub const ARCHIVE_NAME: &str = "traces";

fn check(code: sys::OTF2_ErrorCode, what: &'static str) -> Result<(), ExportError> {
    if code == sys::OTF2_SUCCESS {
        return Ok(());
    }
    // SAFETY: libotf2 returns a static NUL-terminated description for every code.
    let message = unsafe {
        let p = sys::OTF2_Error_GetDescription(code);
        if p.is_null() {
            format!("error {code}")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    Err(ExportError::Otf2 { what, message })
}

fn non_null<T>(p: *mut T, what: &'static str) -> Result<*mut T, ExportError> {
    if p.is_null() {
        Err(ExportError::Otf2 {
            what,
            message: "returned no handle".to_string(),
        })
    } else {
        Ok(p)
    }
}

extern "C" fn pre_flush(
    _user: *mut c_void,
    _file_type: sys::OTF2_FileType,
    _location: sys::OTF2_LocationRef,
    _caller: *mut c_void,
    _final: bool,
) -> sys::OTF2_FlushType {
    sys::OTF2_FLUSH
}

extern "C" fn post_flush(
    _user: *mut c_void,
    _file_type: sys::OTF2_FileType,
    _location: sys::OTF2_LocationRef,
) -> sys::OTF2_TimeStamp {
    0
}

static FLUSH: sys::OTF2_FlushCallbacks = sys::OTF2_FlushCallbacks {
    pre_flush,
    post_flush: Some(post_flush),
};

/// An open archive, closed on drop if the export stops early.
struct Archive(*mut sys::OTF2_Archive);

impl Drop for Archive {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the handle came from OTF2_Archive_Open and is closed once.
            unsafe {
                sys::OTF2_Archive_Close(self.0);
            }
        }
    }
}

/// Interned strings of the global definitions.
#[derive(Default)]
struct Strings {
    ids: HashMap<String, u32>,
    list: Vec<String>,
}

impl Strings {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.ids.insert(s.to_string(), i);
        self.list.push(s.to_string());
        i
    }
}

/// A region per (layer, function).
struct Region {
    layer: Layer,
    name: String,
}

/// An open call on a location.
#[derive(Clone, Copy)]
struct Open {
    end: u64,
    depth: u8,
    region: u32,
}

/// One location (thread) being written.
struct Location {
    writer: *mut sys::OTF2_EvtWriter,
    stack: Vec<Open>,
    last: u64,
    records: u64,
}

/// The location id of a thread: container << 16 | thread.
pub fn location_id(process: i32, thread: i32) -> u64 {
    ((process.max(0) as u64) << 16) | (thread.max(0) as u64 & 0xffff)
}

fn role_and_paradigm(layer: Layer, func: &str) -> (u8, u8) {
    use sys::*;
    match layer {
        Layer::Mpi if functions::is_point_to_point(func) => {
            (OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI)
        }
        Layer::Mpi if functions::is_mpi_collective(func) => {
            (OTF2_REGION_ROLE_COLL_OTHER, OTF2_PARADIGM_MPI)
        }
        Layer::Mpi => (OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI),
        Layer::MpiIo => (OTF2_REGION_ROLE_FILE_IO, OTF2_PARADIGM_MPI),
        Layer::Posix
        | Layer::Stdio
        | Layer::Server
        | Layer::Disk
        | Layer::Hdf5
        | Layer::Pnetcdf => match functions::kind_of(layer, func) {
            pioscope_trace::OpKind::Read | pioscope_trace::OpKind::Write => {
                (OTF2_REGION_ROLE_FILE_IO, OTF2_PARADIGM_UNKNOWN)
            }
            _ => (OTF2_REGION_ROLE_FILE_IO_METADATA, OTF2_PARADIGM_UNKNOWN),
        },
        Layer::Region => (OTF2_REGION_ROLE_CODE, OTF2_PARADIGM_USER),
        Layer::Tracer => (
            OTF2_REGION_ROLE_ARTIFICIAL,
            OTF2_PARADIGM_MEASUREMENT_SYSTEM,
        ),
    }
}

/// MPI messages to write: by the event that sends or receives them.
#[derive(Default)]
struct Messages {
    /// Send event id → (receiver's comm rank, tag, bytes).
    sends: HashMap<i64, Vec<(u32, u32, u64)>>,
    /// Receive event id → (sender's comm rank, tag, bytes, when).
    recvs: HashMap<i64, Vec<(u32, u32, u64, u64)>>,
    /// World ranks of the communicator's members, in order (its rank = the index).
    ranks: Vec<i32>,
}

struct State {
    archive: *mut sys::OTF2_Archive,
    messages: Messages,
    locations: BTreeMap<u64, Location>,
    /// Locations whose writer is closed: (records) for the definitions.
    done: BTreeMap<u64, u64>,
    regions: Vec<Region>,
    region_ids: HashMap<(Layer, String), u32>,
    rank: Option<i32>,
    summary: Summary,
}

impl State {
    fn leave(loc: &mut Location, at: u64) -> Result<(), ExportError> {
        if let Some(open) = loc.stack.pop() {
            let t = at.max(loc.last);
            loc.last = t;
            // SAFETY: the writer is open until the location is finished.
            check(
                unsafe {
                    sys::OTF2_EvtWriter_Leave(loc.writer, std::ptr::null_mut(), t, open.region)
                },
                "OTF2_EvtWriter_Leave",
            )?;
            loc.records += 1;
        }
        Ok(())
    }

    /// Closes every call still open and the writers (at the end of a rank).
    fn finish_locations(&mut self) -> Result<(), ExportError> {
        for (id, mut loc) in std::mem::take(&mut self.locations) {
            while let Some(top) = loc.stack.last().copied() {
                Self::leave(&mut loc, top.end)?;
            }
            // SAFETY: closing a writer this archive handed out, once.
            check(
                unsafe { sys::OTF2_Archive_CloseEvtWriter(self.archive, loc.writer) },
                "OTF2_Archive_CloseEvtWriter",
            )?;
            self.done.insert(id, loc.records);
        }
        Ok(())
    }

    fn event(&mut self, e: &Event<'_>) -> Result<(), ExportError> {
        if self.rank != Some(e.rank) {
            self.finish_locations()?;
            self.rank = Some(e.rank);
        }
        let next_region = self.regions.len() as u32;
        let region = *self
            .region_ids
            .entry((e.layer, e.func.to_string()))
            .or_insert(next_region);
        if region == next_region {
            self.regions.push(Region {
                layer: e.layer,
                name: e.func.to_string(),
            });
        }
        let id = location_id(e.process, e.thread);
        if !self.locations.contains_key(&id) {
            // SAFETY: the archive is open with event files open.
            let writer = non_null(
                unsafe { sys::OTF2_Archive_GetEvtWriter(self.archive, id) },
                "OTF2_Archive_GetEvtWriter",
            )?;
            self.locations.insert(
                id,
                Location {
                    writer,
                    stack: Vec::new(),
                    last: 0,
                    records: self.done.remove(&id).unwrap_or(0),
                },
            );
        }
        let Some(loc) = self.locations.get_mut(&id) else {
            return Ok(());
        };
        let start = e.start_ns.max(0) as u64;
        let end = e.end_ns().max(0) as u64;
        // Calls at this level or deeper, and calls that ended, leave before this one enters.
        while let Some(top) = loc.stack.last().copied() {
            if top.depth < e.depth && top.end >= start {
                break;
            }
            Self::leave(loc, top.end.min(start))?;
        }
        let t = start.max(loc.last);
        loc.last = t;
        // SAFETY: the writer is open.
        check(
            unsafe { sys::OTF2_EvtWriter_Enter(loc.writer, std::ptr::null_mut(), t, region) },
            "OTF2_EvtWriter_Enter",
        )?;
        loc.records += 1;
        loc.stack.push(Open {
            end: end.max(t),
            depth: e.depth,
            region,
        });
        self.summary.events += 1;
        if let Some(sends) = self.messages.sends.get(&e.id) {
            for &(receiver, tag, bytes) in sends {
                // SAFETY: the writer is open.
                check(
                    unsafe {
                        sys::OTF2_EvtWriter_MpiSend(
                            loc.writer,
                            std::ptr::null_mut(),
                            t,
                            receiver,
                            0,
                            tag,
                            bytes,
                        )
                    },
                    "OTF2_EvtWriter_MpiSend",
                )?;
                loc.records += 1;
                self.summary.messages += 1;
            }
        }
        if let Some(recvs) = self.messages.recvs.get(&e.id) {
            for &(sender, tag, bytes, at) in recvs {
                let t = at.max(loc.last);
                loc.last = t;
                // SAFETY: the writer is open.
                check(
                    unsafe {
                        sys::OTF2_EvtWriter_MpiRecv(
                            loc.writer,
                            std::ptr::null_mut(),
                            t,
                            sender,
                            0,
                            tag,
                            bytes,
                        )
                    },
                    "OTF2_EvtWriter_MpiRecv",
                )?;
                loc.records += 1;
            }
        }
        Ok(())
    }
}

/// The messages of the export, keyed by their events; the communicator is MPI_COMM_WORLD
/// restricted to the exported ranks.
fn messages(trace: &Trace, opts: &Options) -> Result<Messages, ExportError> {
    let mut m = Messages::default();
    let mut ranks: Vec<i32> = model::containers(&trace.meta, opts)
        .iter()
        .filter(|c| c.rank >= 0)
        .map(|c| c.rank)
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let index: HashMap<i32, u32> = ranks
        .iter()
        .enumerate()
        .map(|(i, &r)| (r, i as u32))
        .collect();
    for msg in trace.messages()? {
        if !opts.keeps_message(&msg) {
            continue;
        }
        let (Some(&to), Some(&from)) = (index.get(&msg.to_rank), index.get(&msg.from_rank)) else {
            continue;
        };
        let (tag, bytes) = (msg.tag as u32, msg.bytes.max(0) as u64);
        m.sends
            .entry(msg.send_id)
            .or_default()
            .push((to, tag, bytes));
        m.recvs
            .entry(msg.recv_id)
            .or_default()
            .push((from, tag, bytes, msg.recv_ns.max(0) as u64));
    }
    m.ranks = ranks;
    Ok(m)
}

/// Writes `trace` as an OTF2 archive in the directory `out` (created; must not exist).
pub fn export(
    trace: &Trace,
    out: &Path,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Summary, ExportError> {
    let path = CString::new(out.to_string_lossy().as_bytes()).map_err(|_| ExportError::Otf2 {
        what: "OTF2_Archive_Open",
        message: "the output path holds a NUL byte".to_string(),
    })?;
    let name = CString::new(ARCHIVE_NAME).unwrap_or_default();
    let creator =
        CString::new(format!("pioscope-export {}", env!("CARGO_PKG_VERSION"))).unwrap_or_default();
    // SAFETY: valid C strings; the handle is owned by `Archive`, which closes it.
    let archive = Archive(non_null(
        unsafe {
            sys::OTF2_Archive_Open(
                path.as_ptr(),
                name.as_ptr(),
                sys::OTF2_FILEMODE_WRITE,
                sys::OTF2_CHUNK_SIZE_MIN * 4,
                sys::OTF2_CHUNK_SIZE_MIN * 4,
                sys::OTF2_SUBSTRATE_POSIX,
                sys::OTF2_COMPRESSION_NONE,
            )
        },
        "OTF2_Archive_Open",
    )?);
    let a = archive.0;
    // SAFETY (this block and below): `a` is an open archive; FLUSH is static.
    unsafe {
        check(
            sys::OTF2_Archive_SetCreator(a, creator.as_ptr()),
            "OTF2_Archive_SetCreator",
        )?;
        check(
            sys::OTF2_Archive_SetFlushCallbacks(a, &FLUSH, std::ptr::null_mut()),
            "OTF2_Archive_SetFlushCallbacks",
        )?;
        check(
            sys::OTF2_Archive_SetSerialCollectiveCallbacks(a),
            "OTF2_Archive_SetSerialCollectiveCallbacks",
        )?;
        check(
            sys::OTF2_Archive_OpenEvtFiles(a),
            "OTF2_Archive_OpenEvtFiles",
        )?;
    }
    let mut st = State {
        archive: a,
        messages: messages(trace, opts)?,
        locations: BTreeMap::new(),
        done: BTreeMap::new(),
        regions: Vec::new(),
        region_ids: HashMap::new(),
        rank: None,
        summary: Summary::default(),
    };
    for_each_event(trace, opts, progress, |e| st.event(e))?;
    st.finish_locations()?;
    unsafe {
        check(
            sys::OTF2_Archive_CloseEvtFiles(a),
            "OTF2_Archive_CloseEvtFiles",
        )?;
        // Every location gets its (empty) local definition file, which readers expect.
        check(
            sys::OTF2_Archive_OpenDefFiles(a),
            "OTF2_Archive_OpenDefFiles",
        )?;
        for &id in st.done.keys() {
            let dw = non_null(
                sys::OTF2_Archive_GetDefWriter(a, id),
                "OTF2_Archive_GetDefWriter",
            )?;
            check(
                sys::OTF2_Archive_CloseDefWriter(a, dw),
                "OTF2_Archive_CloseDefWriter",
            )?;
        }
        check(
            sys::OTF2_Archive_CloseDefFiles(a),
            "OTF2_Archive_CloseDefFiles",
        )?;
    }
    write_definitions(trace, opts, a, &st)?;
    let mut archive = archive;
    // SAFETY: closing the archive once; Drop then sees null.
    let code = unsafe { sys::OTF2_Archive_Close(archive.0) };
    archive.0 = std::ptr::null_mut();
    check(code, "OTF2_Archive_Close")?;
    Ok(st.summary)
}

fn write_definitions(
    trace: &Trace,
    opts: &Options,
    a: *mut sys::OTF2_Archive,
    st: &State,
) -> Result<(), ExportError> {
    let meta = &trace.meta;
    let containers = model::containers(meta, opts);
    let hosts = model::hosts(&containers);
    let mut strings = Strings::default();
    // Reserve the ids first, then write strings before anything refers to them.
    let machine = strings.id("machine");
    let node = strings.id("node");
    let host_names: Vec<u32> = hosts.iter().map(|h| strings.id(h)).collect();
    let groups: Vec<(u32, u32, u32)> = containers
        .iter()
        .filter(|c| st.done.keys().any(|&id| (id >> 16) as i32 == c.process))
        .map(|c| {
            let h = hosts.iter().position(|h| *h == c.host).unwrap_or(0) as u32;
            (c.process as u32, strings.id(&c.label), h + 1)
        })
        .collect();
    let locations: Vec<(u64, u32, u64)> = st
        .done
        .iter()
        .map(|(&id, &records)| {
            let process = (id >> 16) as i32;
            let owner = containers
                .iter()
                .find(|c| c.process == process)
                .map_or("?", |c| c.label.as_str());
            let name = format!("{owner} thread {}", id & 0xffff);
            (id, strings.id(&name), records)
        })
        .collect();
    let comm_names = (
        strings.id("MPI_COMM_WORLD locations"),
        strings.id("MPI_COMM_WORLD ranks"),
        strings.id("MPI_COMM_WORLD"),
    );
    // The location of each member rank: its first container's thread 0.
    let members: Vec<u64> = st
        .messages
        .ranks
        .iter()
        .map(|&r| {
            let p = containers
                .iter()
                .find(|c| c.rank == r)
                .map_or(0, |c| c.process);
            location_id(p, 0)
        })
        .collect();
    let comm_ranks: Vec<u64> = (0..members.len() as u64).collect();
    let regions: Vec<(u32, u32, u32, u8, u8)> = st
        .regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let (role, paradigm) = role_and_paradigm(r.layer, &r.name);
            (
                i as u32,
                strings.id(&r.name),
                strings.id(r.layer.name()),
                role,
                paradigm,
            )
        })
        .collect();
    // SAFETY: `a` is open; every string passed lives until the call returns.
    unsafe {
        let gw = non_null(
            sys::OTF2_Archive_GetGlobalDefWriter(a),
            "OTF2_Archive_GetGlobalDefWriter",
        )?;
        check(
            sys::OTF2_GlobalDefWriter_WriteClockProperties(
                gw,
                1_000_000_000,
                0,
                meta.job.duration_ns.max(0) as u64 + 1,
                meta.job.start_unix_ns.max(0) as u64,
            ),
            "OTF2_GlobalDefWriter_WriteClockProperties",
        )?;
        for (i, s) in strings.list.iter().enumerate() {
            let c = CString::new(s.replace('\0', " ")).unwrap_or_default();
            check(
                sys::OTF2_GlobalDefWriter_WriteString(gw, i as u32, c.as_ptr()),
                "OTF2_GlobalDefWriter_WriteString",
            )?;
        }
        check(
            sys::OTF2_GlobalDefWriter_WriteSystemTreeNode(
                gw,
                0,
                machine,
                machine,
                sys::OTF2_UNDEFINED_SYSTEM_TREE_NODE,
            ),
            "OTF2_GlobalDefWriter_WriteSystemTreeNode",
        )?;
        for (i, &h) in host_names.iter().enumerate() {
            check(
                sys::OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, i as u32 + 1, h, node, 0),
                "OTF2_GlobalDefWriter_WriteSystemTreeNode",
            )?;
        }
        for &(id, name, parent) in &groups {
            check(
                sys::OTF2_GlobalDefWriter_WriteLocationGroup(
                    gw,
                    id,
                    name,
                    sys::OTF2_LOCATION_GROUP_TYPE_PROCESS,
                    parent,
                    sys::OTF2_UNDEFINED_LOCATION_GROUP,
                ),
                "OTF2_GlobalDefWriter_WriteLocationGroup",
            )?;
        }
        for &(id, name, records) in &locations {
            check(
                sys::OTF2_GlobalDefWriter_WriteLocation(
                    gw,
                    id,
                    name,
                    sys::OTF2_LOCATION_TYPE_CPU_THREAD,
                    records,
                    (id >> 16) as u32,
                ),
                "OTF2_GlobalDefWriter_WriteLocation",
            )?;
        }
        if !members.is_empty() {
            check(
                sys::OTF2_GlobalDefWriter_WriteGroup(
                    gw,
                    0,
                    comm_names.0,
                    sys::OTF2_GROUP_TYPE_COMM_LOCATIONS,
                    sys::OTF2_PARADIGM_MPI,
                    sys::OTF2_GROUP_FLAG_NONE,
                    members.len() as u32,
                    members.as_ptr(),
                ),
                "OTF2_GlobalDefWriter_WriteGroup",
            )?;
            check(
                sys::OTF2_GlobalDefWriter_WriteGroup(
                    gw,
                    1,
                    comm_names.1,
                    sys::OTF2_GROUP_TYPE_COMM_GROUP,
                    sys::OTF2_PARADIGM_MPI,
                    sys::OTF2_GROUP_FLAG_NONE,
                    comm_ranks.len() as u32,
                    comm_ranks.as_ptr(),
                ),
                "OTF2_GlobalDefWriter_WriteGroup",
            )?;
            check(
                sys::OTF2_GlobalDefWriter_WriteComm(
                    gw,
                    0,
                    comm_names.2,
                    1,
                    sys::OTF2_UNDEFINED_COMM,
                    sys::OTF2_COMM_FLAG_NONE,
                ),
                "OTF2_GlobalDefWriter_WriteComm",
            )?;
        }
        for &(id, name, layer, role, paradigm) in &regions {
            check(
                sys::OTF2_GlobalDefWriter_WriteRegion(
                    gw,
                    id,
                    name,
                    name,
                    layer,
                    role,
                    paradigm,
                    sys::OTF2_REGION_FLAG_NONE,
                    sys::OTF2_UNDEFINED_STRING,
                    0,
                    0,
                ),
                "OTF2_GlobalDefWriter_WriteRegion",
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_pack_container_and_thread() {
        assert_eq!(location_id(3, 2), (3 << 16) | 2);
        assert_eq!(location_id(0, 0), 0);
    }
}

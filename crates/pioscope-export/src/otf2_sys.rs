//! Hand-written declarations of the libotf2 functions the OTF2 export calls (OTF2 3.x, headers
//! in /usr/include/otf2/), and the constants it uses. build.rs links `-lotf2`.
#![allow(non_camel_case_types, dead_code)]

use std::os::raw::{c_char, c_int, c_void};

/// `OTF2_ErrorCode` (a C enum: int); 0 is success.
pub type OTF2_ErrorCode = c_int;
pub type OTF2_TimeStamp = u64;
pub type OTF2_StringRef = u32;
pub type OTF2_RegionRef = u32;
pub type OTF2_LocationRef = u64;
pub type OTF2_LocationGroupRef = u32;
pub type OTF2_SystemTreeNodeRef = u32;
pub type OTF2_FileType = u8;
pub type OTF2_FlushType = u8;

/// Opaque handles.
#[repr(C)]
pub struct OTF2_Archive {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_EvtWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_DefWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_GlobalDefWriter {
    _p: [u8; 0],
}

pub type OTF2_PreFlushCallback = extern "C" fn(
    user_data: *mut c_void,
    file_type: OTF2_FileType,
    location: OTF2_LocationRef,
    caller_data: *mut c_void,
    is_final: bool,
) -> OTF2_FlushType;
pub type OTF2_PostFlushCallback = extern "C" fn(
    user_data: *mut c_void,
    file_type: OTF2_FileType,
    location: OTF2_LocationRef,
) -> OTF2_TimeStamp;

/// `OTF2_FlushCallbacks`.
#[repr(C)]
pub struct OTF2_FlushCallbacks {
    pub pre_flush: OTF2_PreFlushCallback,
    pub post_flush: Option<OTF2_PostFlushCallback>,
}

pub const OTF2_SUCCESS: OTF2_ErrorCode = 0;
pub const OTF2_FILEMODE_WRITE: u8 = 0;
pub const OTF2_SUBSTRATE_POSIX: u8 = 1;
pub const OTF2_COMPRESSION_NONE: u8 = 1;
pub const OTF2_FLUSH: OTF2_FlushType = 1;
pub const OTF2_CHUNK_SIZE_MIN: u64 = 256 * 1024;
pub const OTF2_UNDEFINED_STRING: OTF2_StringRef = u32::MAX;
pub const OTF2_UNDEFINED_SYSTEM_TREE_NODE: OTF2_SystemTreeNodeRef = u32::MAX;
pub const OTF2_UNDEFINED_LOCATION_GROUP: OTF2_LocationGroupRef = u32::MAX;
pub const OTF2_LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const OTF2_LOCATION_TYPE_CPU_THREAD: u8 = 1;
pub const OTF2_REGION_ROLE_FUNCTION: u8 = 1;
pub const OTF2_REGION_ROLE_CODE: u8 = 4;
pub const OTF2_REGION_ROLE_COLL_OTHER: u8 = 26;
pub const OTF2_REGION_ROLE_FILE_IO: u8 = 27;
pub const OTF2_REGION_ROLE_POINT2POINT: u8 = 28;
pub const OTF2_REGION_ROLE_ARTIFICIAL: u8 = 31;
pub const OTF2_REGION_ROLE_FILE_IO_METADATA: u8 = 38;
pub const OTF2_PARADIGM_UNKNOWN: u8 = 0;
pub const OTF2_PARADIGM_USER: u8 = 1;
pub const OTF2_PARADIGM_MPI: u8 = 4;
pub const OTF2_PARADIGM_MEASUREMENT_SYSTEM: u8 = 6;
pub const OTF2_REGION_FLAG_NONE: u32 = 0;
pub const OTF2_GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const OTF2_GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const OTF2_GROUP_FLAG_NONE: u32 = 0;
pub const OTF2_COMM_FLAG_NONE: u32 = 0;
pub const OTF2_UNDEFINED_COMM: u32 = u32::MAX;

#[link(name = "otf2")]
extern "C" {
    pub fn OTF2_Error_GetDescription(code: OTF2_ErrorCode) -> *const c_char;
    pub fn OTF2_Archive_Open(
        archive_path: *const c_char,
        archive_name: *const c_char,
        file_mode: u8,
        chunk_size_events: u64,
        chunk_size_defs: u64,
        file_substrate: u8,
        compression: u8,
    ) -> *mut OTF2_Archive;
    pub fn OTF2_Archive_Close(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetCreator(
        archive: *mut OTF2_Archive,
        creator: *const c_char,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetFlushCallbacks(
        archive: *mut OTF2_Archive,
        callbacks: *const OTF2_FlushCallbacks,
        flush_data: *mut c_void,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetSerialCollectiveCallbacks(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_OpenEvtFiles(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_CloseEvtFiles(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_OpenDefFiles(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_CloseDefFiles(archive: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetEvtWriter(
        archive: *mut OTF2_Archive,
        location: OTF2_LocationRef,
    ) -> *mut OTF2_EvtWriter;
    pub fn OTF2_Archive_CloseEvtWriter(
        archive: *mut OTF2_Archive,
        writer: *mut OTF2_EvtWriter,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetDefWriter(
        archive: *mut OTF2_Archive,
        location: OTF2_LocationRef,
    ) -> *mut OTF2_DefWriter;
    pub fn OTF2_Archive_CloseDefWriter(
        archive: *mut OTF2_Archive,
        writer: *mut OTF2_DefWriter,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetGlobalDefWriter(archive: *mut OTF2_Archive)
        -> *mut OTF2_GlobalDefWriter;
    pub fn OTF2_EvtWriter_Enter(
        writer: *mut OTF2_EvtWriter,
        attributes: *mut c_void,
        time: OTF2_TimeStamp,
        region: OTF2_RegionRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_Leave(
        writer: *mut OTF2_EvtWriter,
        attributes: *mut c_void,
        time: OTF2_TimeStamp,
        region: OTF2_RegionRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiSend(
        writer: *mut OTF2_EvtWriter,
        attributes: *mut c_void,
        time: OTF2_TimeStamp,
        receiver: u32,
        communicator: u32,
        tag: u32,
        length: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiRecv(
        writer: *mut OTF2_EvtWriter,
        attributes: *mut c_void,
        time: OTF2_TimeStamp,
        sender: u32,
        communicator: u32,
        tag: u32,
        length: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteGroup(
        writer: *mut OTF2_GlobalDefWriter,
        id: u32,
        name: OTF2_StringRef,
        group_type: u8,
        paradigm: u8,
        flags: u32,
        members: u32,
        member_ids: *const u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteComm(
        writer: *mut OTF2_GlobalDefWriter,
        id: u32,
        name: OTF2_StringRef,
        group: u32,
        parent: u32,
        flags: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteClockProperties(
        writer: *mut OTF2_GlobalDefWriter,
        timer_resolution: u64,
        global_offset: u64,
        trace_length: u64,
        realtime_timestamp: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteString(
        writer: *mut OTF2_GlobalDefWriter,
        id: OTF2_StringRef,
        string: *const c_char,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteRegion(
        writer: *mut OTF2_GlobalDefWriter,
        id: OTF2_RegionRef,
        name: OTF2_StringRef,
        canonical_name: OTF2_StringRef,
        description: OTF2_StringRef,
        role: u8,
        paradigm: u8,
        flags: u32,
        source_file: OTF2_StringRef,
        begin_line: u32,
        end_line: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteSystemTreeNode(
        writer: *mut OTF2_GlobalDefWriter,
        id: OTF2_SystemTreeNodeRef,
        name: OTF2_StringRef,
        class_name: OTF2_StringRef,
        parent: OTF2_SystemTreeNodeRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocationGroup(
        writer: *mut OTF2_GlobalDefWriter,
        id: OTF2_LocationGroupRef,
        name: OTF2_StringRef,
        group_type: u8,
        system_tree_parent: OTF2_SystemTreeNodeRef,
        creating_location_group: OTF2_LocationGroupRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocation(
        writer: *mut OTF2_GlobalDefWriter,
        id: OTF2_LocationRef,
        name: OTF2_StringRef,
        location_type: u8,
        number_of_events: u64,
        location_group: OTF2_LocationGroupRef,
    ) -> OTF2_ErrorCode;
}

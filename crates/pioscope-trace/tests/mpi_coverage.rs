//! The MPI functions pioscope must trace, written out from the MPI 4.0 standard, checked
//! against the function table generated from runtime/src/functions.def: a function missing
//! from the runtime fails this test. Chapter 14 (I/O) is listed whole, with every large-count
//! `_c` form MPI 4.0 defines; of the communication chapters, the point-to-point and collective
//! calls the runtime records and their `_c` forms. (The file error handler and handle
//! conversion calls, MPI_File_{create,set,get,call}_errhandler and MPI_File_{c2f,f2c}, belong
//! to chapters 9 and 19 and move no data: not traced.)

use pioscope_trace::functions::{self, OpKind};
use pioscope_trace::Layer;

/// MPI 4.0 chapter 14, section by section.
const FILE_CHAPTER: &[&str] = &[
    // 14.2 File manipulation
    "MPI_File_open",
    "MPI_File_close",
    "MPI_File_delete",
    "MPI_File_set_size",
    "MPI_File_preallocate",
    "MPI_File_get_size",
    "MPI_File_get_group",
    "MPI_File_get_amode",
    "MPI_File_set_info",
    "MPI_File_get_info",
    // 14.3 File views
    "MPI_File_set_view",
    "MPI_File_get_view",
    // 14.4.2 Explicit offsets
    "MPI_File_read_at",
    "MPI_File_read_at_all",
    "MPI_File_write_at",
    "MPI_File_write_at_all",
    "MPI_File_iread_at",
    "MPI_File_iread_at_all",
    "MPI_File_iwrite_at",
    "MPI_File_iwrite_at_all",
    // 14.4.3 Individual file pointers
    "MPI_File_read",
    "MPI_File_read_all",
    "MPI_File_write",
    "MPI_File_write_all",
    "MPI_File_iread",
    "MPI_File_iread_all",
    "MPI_File_iwrite",
    "MPI_File_iwrite_all",
    "MPI_File_seek",
    "MPI_File_get_position",
    "MPI_File_get_byte_offset",
    // 14.4.4 Shared file pointers
    "MPI_File_read_shared",
    "MPI_File_write_shared",
    "MPI_File_iread_shared",
    "MPI_File_iwrite_shared",
    "MPI_File_read_ordered",
    "MPI_File_write_ordered",
    "MPI_File_seek_shared",
    "MPI_File_get_position_shared",
    // 14.4.5 Split collective data access
    "MPI_File_read_at_all_begin",
    "MPI_File_read_at_all_end",
    "MPI_File_write_at_all_begin",
    "MPI_File_write_at_all_end",
    "MPI_File_read_all_begin",
    "MPI_File_read_all_end",
    "MPI_File_write_all_begin",
    "MPI_File_write_all_end",
    "MPI_File_read_ordered_begin",
    "MPI_File_read_ordered_end",
    "MPI_File_write_ordered_begin",
    "MPI_File_write_ordered_end",
    // 14.5 File interoperability
    "MPI_File_get_type_extent",
    "MPI_Register_datarep",
    // 14.6 Consistency and semantics
    "MPI_File_set_atomicity",
    "MPI_File_get_atomicity",
    "MPI_File_sync",
];

/// The functions of chapter 14 that MPI 4.0 also defines with MPI_Count arguments (`_c`).
const FILE_CHAPTER_LARGE_COUNT: &[&str] = &[
    "MPI_File_read_at",
    "MPI_File_read_at_all",
    "MPI_File_write_at",
    "MPI_File_write_at_all",
    "MPI_File_iread_at",
    "MPI_File_iread_at_all",
    "MPI_File_iwrite_at",
    "MPI_File_iwrite_at_all",
    "MPI_File_read",
    "MPI_File_read_all",
    "MPI_File_write",
    "MPI_File_write_all",
    "MPI_File_iread",
    "MPI_File_iread_all",
    "MPI_File_iwrite",
    "MPI_File_iwrite_all",
    "MPI_File_read_shared",
    "MPI_File_write_shared",
    "MPI_File_iread_shared",
    "MPI_File_iwrite_shared",
    "MPI_File_read_ordered",
    "MPI_File_write_ordered",
    "MPI_File_read_at_all_begin",
    "MPI_File_write_at_all_begin",
    "MPI_File_read_all_begin",
    "MPI_File_write_all_begin",
    "MPI_File_read_ordered_begin",
    "MPI_File_write_ordered_begin",
    "MPI_File_get_type_extent",
    "MPI_Register_datarep",
];

/// The traced point-to-point and collective calls that have a `_c` form (MPI_Barrier has no
/// count).
const COMMUNICATION_LARGE_COUNT: &[&str] = &[
    "MPI_Send",
    "MPI_Ssend",
    "MPI_Bsend",
    "MPI_Rsend",
    "MPI_Recv",
    "MPI_Sendrecv",
    "MPI_Isend",
    "MPI_Issend",
    "MPI_Irecv",
    "MPI_Bcast",
    "MPI_Reduce",
    "MPI_Allreduce",
    "MPI_Gather",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Scatterv",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Alltoall",
    "MPI_Alltoallv",
    "MPI_Alltoallw",
    "MPI_Reduce_scatter",
    "MPI_Reduce_scatter_block",
    "MPI_Scan",
    "MPI_Exscan",
];

fn missing(names: impl Iterator<Item = String>) -> Vec<String> {
    names.filter(|n| functions::by_name(n).is_none()).collect()
}

#[test]
fn every_function_of_the_file_chapter_is_traced() {
    let absent = missing(FILE_CHAPTER.iter().map(|n| n.to_string()));
    assert!(absent.is_empty(), "not in functions.def: {absent:?}");
    let absent = missing(FILE_CHAPTER_LARGE_COUNT.iter().map(|n| format!("{n}_c")));
    assert!(absent.is_empty(), "not in functions.def: {absent:?}");
    for n in FILE_CHAPTER {
        let layer = functions::by_name(n).map(|f| f.layer);
        assert_eq!(layer, Some(Layer::MpiIo), "{n}");
    }
}

#[test]
fn every_traced_communication_call_has_its_large_count_form() {
    let absent = missing(COMMUNICATION_LARGE_COUNT.iter().map(|n| format!("{n}_c")));
    assert!(absent.is_empty(), "not in functions.def: {absent:?}");
}

#[test]
fn large_count_forms_are_classified_as_their_int_twins() {
    let twins = FILE_CHAPTER_LARGE_COUNT
        .iter()
        .chain(COMMUNICATION_LARGE_COUNT);
    for n in twins {
        let int = functions::by_name(n).expect("int form");
        let large = functions::by_name(&format!("{n}_c")).expect("_c form");
        assert_eq!(int.layer, large.layer, "{n}");
        assert_eq!(int.kind(), large.kind(), "{n}");
        assert_eq!(
            functions::is_send(int.name),
            functions::is_send(large.name),
            "{n}"
        );
        assert_eq!(
            functions::is_point_to_point(int.name),
            functions::is_point_to_point(large.name),
            "{n}"
        );
        assert_eq!(
            functions::is_mpi_collective(int.name),
            functions::is_mpi_collective(large.name),
            "{n}"
        );
    }
    assert_eq!(
        functions::by_name("MPI_File_write_at_all_c").map(|f| f.kind()),
        Some(OpKind::Write)
    );
    assert_eq!(
        functions::by_name("MPI_Alltoallv_c").map(|f| f.kind()),
        Some(OpKind::Message)
    );
}

#[test]
fn posix_aio_requests_move_data_and_their_waits_do_not() {
    let kind = |n: &str| functions::by_name(n).map(|f| f.kind());
    assert_eq!(kind("aio_write"), Some(OpKind::Write));
    assert_eq!(kind("aio_read64"), Some(OpKind::Read));
    for n in [
        "aio_suspend",
        "aio_return",
        "aio_error",
        "lio_listio",
        "aio_fsync",
    ] {
        assert_eq!(kind(n), Some(OpKind::Other), "{n}");
    }
}

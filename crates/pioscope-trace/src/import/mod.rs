//! Stores made from other tools' records: `darshan` turns a Darshan log into a trace store
//! (`pioscope import darshan`, docs/IMPORT.md).

pub mod darshan;
mod darshan_reader;

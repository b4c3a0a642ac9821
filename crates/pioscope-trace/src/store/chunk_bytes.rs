//! The column chunks of one row group, mapped from their file and handed to the Parquet decoder
//! from memory. Read from the file itself, the decoder makes a few system calls per page (a
//! duplicated descriptor, a seek, a buffered read of the page header, a read of the page): about
//! a million for a pass over 100 million events, a second of CPU. Mapped rather than read into a
//! buffer: a read copied every byte from the page cache into pages the kernel first zeroed (7 %
//! of a report's CPU). Used for reads of whole row groups only; a read of a few pages keeps
//! reading just those from the file.
//!
//! A store's files are written whole and renamed into place, never changed after: a mapping of
//! one is not cut short under the reader (which would be a SIGBUS on the next page touched).

use std::fs::File;

use bytes::Bytes;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::reader::{ChunkReader, Length};

/// The bytes `[offset, offset + bytes.len())` of a file of `file_len` bytes: the chunks of the
/// columns a read decodes (and whatever lies between them).
pub struct ChunkBytes {
    offset: u64,
    bytes: Bytes,
    file_len: u64,
}

impl ChunkBytes {
    /// Maps from `file` the span holding the chunks of `columns` (leaf numbers) of `rg`.
    pub fn map(file: &File, rg: &RowGroupMetaData, columns: &[usize]) -> Result<ChunkBytes> {
        let ranges = columns.iter().map(|&c| rg.column(c).byte_range());
        let start = ranges.clone().map(|(s, _)| s).min().unwrap_or(0);
        let end = ranges.map(|(s, len)| s + len).max().unwrap_or(0);
        let file_len = file.metadata()?.len();
        // The footer's ranges are checked against the file: a map past its end would fault.
        if end > file_len {
            return Err(ParquetError::EOF(format!(
                "column chunks end at offset {end}, past the file's {file_len} bytes"
            )));
        }
        let len = usize::try_from(end - start).map_err(|e| ParquetError::External(Box::new(e)))?;
        let bytes = match len {
            0 => Bytes::new(),
            // SAFETY: the store's files are not changed once written (see the module's note).
            _ => Bytes::from_owner(unsafe {
                memmap2::MmapOptions::new()
                    .offset(start)
                    .len(len)
                    .map(file)?
            }),
        };
        Ok(ChunkBytes {
            offset: start,
            bytes,
            file_len,
        })
    }

    /// `length` bytes from file offset `start`, which must lie inside the span read.
    fn span(&self, start: u64, length: usize) -> Result<Bytes> {
        let at = start
            .checked_sub(self.offset)
            .and_then(|at| usize::try_from(at).ok())
            .filter(|&at| {
                at.checked_add(length)
                    .is_some_and(|end| end <= self.bytes.len())
            });
        match at {
            Some(at) => Ok(self.bytes.slice(at..at + length)),
            None => Err(ParquetError::EOF(format!(
                "{length} bytes at offset {start} are outside the column chunks read \
                 ({} bytes at offset {})",
                self.bytes.len(),
                self.offset
            ))),
        }
    }
}

impl Length for ChunkBytes {
    fn len(&self) -> u64 {
        self.file_len
    }
}

impl ChunkReader for ChunkBytes {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T> {
        let rest = (self.offset + self.bytes.len() as u64).saturating_sub(start);
        Ok(bytes::Buf::reader(self.span(start, rest as usize)?))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes> {
        self.span(start, length)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// Bytes 100..110 of a 1000-byte file.
    fn chunks() -> ChunkBytes {
        ChunkBytes {
            offset: 100,
            bytes: Bytes::from_iter(0u8..10),
            file_len: 1000,
        }
    }

    #[test]
    fn serves_the_span_read_at_file_offsets() {
        let c = chunks();
        assert_eq!(c.len(), 1000);
        assert_eq!(&c.get_bytes(102, 3).expect("inside")[..], &[2, 3, 4]);
        assert_eq!(
            &c.get_bytes(100, 10).expect("whole")[..],
            &(0u8..10).collect::<Vec<_>>()[..]
        );
        let mut rest = Vec::new();
        c.get_read(107)
            .expect("inside")
            .read_to_end(&mut rest)
            .expect("read");
        assert_eq!(rest, [7, 8, 9]);
    }

    /// A row group's chunks as mapped are the file's bytes at the same offsets.
    #[test]
    fn maps_the_file_at_the_chunks_offsets() {
        use std::sync::Arc;

        use arrow_array::{ArrayRef, Int64Array, RecordBatch};
        use parquet::arrow::ArrowWriter;
        use parquet::file::reader::{FileReader, SerializedFileReader};

        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.parquet");
        let column = |n: i64| Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef;
        let batch =
            RecordBatch::try_from_iter([("a", column(1000)), ("b", column(1000))]).expect("batch");
        let mut w =
            ArrowWriter::try_new(File::create(&path).expect("create"), batch.schema(), None)
                .expect("writer");
        w.write(&batch).expect("write");
        w.close().expect("close");
        let file = File::open(&path).expect("open");
        let whole = std::fs::read(&path).expect("read");
        let reader = SerializedFileReader::new(file.try_clone().expect("clone")).expect("footer");
        let rg = reader.metadata().row_group(0);
        let c = ChunkBytes::map(&file, rg, &[1]).expect("map");
        let (start, len) = rg.column(1).byte_range();
        let at = usize::try_from(start).expect("offset");
        let len = usize::try_from(len).expect("length");
        assert_eq!(c.len(), whole.len() as u64);
        assert_eq!(
            &c.get_bytes(start, len).expect("inside")[..],
            &whole[at..at + len]
        );
        // Column a's chunk lies before b's, outside the span mapped.
        assert!(c.get_bytes(rg.column(0).byte_range().0, 1).is_err());
    }

    #[test]
    fn refuses_bytes_outside_the_span() {
        let c = chunks();
        for (start, len) in [(99, 2), (105, 6), (110, 1), (0, 1)] {
            let e = c.get_bytes(start, len).expect_err("outside").to_string();
            assert!(
                e.contains(&format!("{len} bytes at offset {start} are outside")),
                "{e}"
            );
        }
    }
}

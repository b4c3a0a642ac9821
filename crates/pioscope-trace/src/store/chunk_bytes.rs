//! The column chunks of one row group, read from their file in one call and handed to the
//! Parquet decoder from memory. Read from the file itself, the decoder makes a few system calls
//! per page (a duplicated descriptor, a seek, a buffered read of the page header, a read of the
//! page): about a million for a pass over 100 million events, a second of CPU. Used for reads of
//! whole row groups only; a read of a few pages keeps reading just those from the file.

use std::fs::File;
use std::os::unix::fs::FileExt;

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
    /// Reads from `file` the span holding the chunks of `columns` (leaf numbers) of `rg`.
    pub fn read(file: &File, rg: &RowGroupMetaData, columns: &[usize]) -> Result<ChunkBytes> {
        let ranges = columns.iter().map(|&c| rg.column(c).byte_range());
        let start = ranges.clone().map(|(s, _)| s).min().unwrap_or(0);
        let end = ranges.map(|(s, len)| s + len).max().unwrap_or(0);
        let mut bytes =
            vec![0; usize::try_from(end - start).map_err(|e| ParquetError::External(Box::new(e)))?];
        file.read_exact_at(&mut bytes, start)?;
        Ok(ChunkBytes {
            offset: start,
            bytes: bytes.into(),
            file_len: file.metadata()?.len(),
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

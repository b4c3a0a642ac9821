//! Reads the DT_NEEDED entries of an ELF executable, so `run --runtime auto` can tell an MPI
//! program (it links libmpi*) from a plain one without running it, and the functions it
//! imports (its undefined dynamic symbols), so `run` can name the MPI calls it makes that the
//! tracer does not record.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_STRTAB: i64 = 5;
const SHT_DYNSYM: u32 = 11;
/// Larger symbol or string tables are not read (no real executable comes close).
const MAX_TABLE: u64 = 64 << 20;

fn read_at(f: &mut File, offset: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    f.seek(SeekFrom::Start(offset)).ok()?;
    f.read_exact(&mut buf).ok()?;
    Some(buf)
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

/// The shared libraries a 64-bit little-endian ELF file names in its dynamic section; None for
/// anything else (scripts, static binaries, other architectures' formats).
pub fn needed_libraries(path: &Path) -> Option<Vec<String>> {
    let mut f = File::open(path).ok()?;
    let eh = read_at(&mut f, 0, 64)?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let phoff = u64_at(&eh, 0x20);
    let phentsize = u16_at(&eh, 0x36) as u64;
    let phnum = u16_at(&eh, 0x38) as u64;
    if phentsize < 56 || phnum == 0 || phnum > 4096 {
        return None;
    }
    let ph = read_at(&mut f, phoff, (phentsize * phnum) as usize)?;
    let mut loads = Vec::new();
    let mut dynamic = None;
    for i in 0..phnum as usize {
        let p = &ph[i * phentsize as usize..];
        let (kind, offset, vaddr, filesz) =
            (u32_at(p, 0), u64_at(p, 8), u64_at(p, 16), u64_at(p, 32));
        match kind {
            PT_LOAD => loads.push((offset, vaddr, filesz)),
            PT_DYNAMIC => dynamic = Some((offset, filesz)),
            _ => {}
        }
    }
    let (dyn_off, dyn_size) = dynamic?;
    if dyn_size > 1 << 20 {
        return None;
    }
    let d = read_at(&mut f, dyn_off, dyn_size as usize)?;
    let mut needed = Vec::new();
    let mut strtab = None;
    for e in d.chunks_exact(16) {
        let (tag, val) = (u64_at(e, 0) as i64, u64_at(e, 8));
        match tag {
            DT_NULL => break,
            DT_NEEDED => needed.push(val),
            DT_STRTAB => strtab = Some(val),
            _ => {}
        }
    }
    let strtab = strtab?;
    // DT_STRTAB is an address; the PT_LOAD segment holding it maps it to a file offset.
    let (seg_off, seg_vaddr, _) = loads
        .into_iter()
        .find(|&(_, vaddr, size)| strtab >= vaddr && strtab < vaddr + size)?;
    let strtab_off = seg_off + (strtab - seg_vaddr);
    let mut names = Vec::new();
    for n in needed {
        let raw =
            read_at(&mut f, strtab_off + n, 256).or_else(|| read_at(&mut f, strtab_off + n, 32))?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        names.push(String::from_utf8_lossy(&raw[..end]).into_owned());
    }
    Some(names)
}

/// The names of the functions and objects a 64-bit little-endian ELF file imports (its
/// undefined dynamic symbols, version suffixes excluded); None for anything else.
pub fn undefined_symbols(path: &Path) -> Option<Vec<String>> {
    let mut f = File::open(path).ok()?;
    let eh = read_at(&mut f, 0, 64)?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 || eh[5] != 1 {
        return None;
    }
    let shoff = u64_at(&eh, 0x28);
    let shentsize = u16_at(&eh, 0x3a) as u64;
    let shnum = u16_at(&eh, 0x3c) as u64;
    if shentsize < 64 || shnum == 0 || shnum > 65_535 {
        return None;
    }
    let sh = read_at(&mut f, shoff, (shentsize * shnum) as usize)?;
    let section = |i: u64| &sh[(i * shentsize) as usize..];
    let dynsym = (0..shnum)
        .map(section)
        .find(|h| u32_at(h, 4) == SHT_DYNSYM)?;
    let (sym_off, sym_size, link) = (
        u64_at(dynsym, 0x18),
        u64_at(dynsym, 0x20),
        u32_at(dynsym, 0x28),
    );
    if link as u64 >= shnum || sym_size > MAX_TABLE {
        return None;
    }
    let strtab = section(link as u64);
    let (str_off, str_size) = (u64_at(strtab, 0x18), u64_at(strtab, 0x20));
    if str_size > MAX_TABLE {
        return None;
    }
    let syms = read_at(&mut f, sym_off, sym_size as usize)?;
    let strings = read_at(&mut f, str_off, str_size as usize)?;
    let mut names = Vec::new();
    for sym in syms.chunks_exact(24) {
        let (name, shndx) = (u32_at(sym, 0) as usize, u16_at(sym, 6));
        if shndx != 0 || name == 0 || name >= strings.len() {
            continue;
        }
        let text = &strings[name..];
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        names.push(String::from_utf8_lossy(&text[..end]).into_owned());
    }
    Some(names)
}

/// True when the executable links an MPI library (libmpi.so, libmpich.so, libmpi_cray, ...).
pub fn links_mpi(path: &Path) -> bool {
    needed_libraries(path).is_some_and(|libs| libs.iter().any(|l| l.starts_with("libmpi")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_needed_of_a_system_binary() {
        // /bin/sh is dynamically linked against libc on every Linux we run on.
        let libs = needed_libraries(Path::new("/bin/sh")).expect("ELF");
        assert!(libs.iter().any(|l| l.starts_with("libc.so")), "{libs:?}");
        assert!(!links_mpi(Path::new("/bin/sh")));
    }

    #[test]
    fn reads_imports_of_a_system_binary() {
        let imports = undefined_symbols(Path::new("/bin/sh")).expect("ELF");
        assert!(imports.iter().any(|s| s == "write"), "{imports:?}");
        assert!(
            !imports.iter().any(|s| s == "main"),
            "main is defined, not imported"
        );
    }

    #[test]
    fn non_elf_is_none() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("script.sh");
        std::fs::write(&p, "#!/bin/sh\necho hi\n").expect("write");
        assert_eq!(needed_libraries(&p), None);
        assert!(!links_mpi(&p));
        assert_eq!(needed_libraries(&dir.path().join("missing")), None);
    }
}

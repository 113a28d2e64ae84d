//! The daily files under the paths of `mds import nse-bhavcopy PATH...`,
//! each handed on as it is read: nothing is unpacked to disk, and an
//! archive is never held whole (one member at a time, in a buffer reused
//! from one to the next; a daily file is about half a megabyte).
//!
//! A path is:
//! - a directory: read recursively, its entries in name order; of its
//!   files, the `.csv` ones and the archives below are read, others (a
//!   README) ignored;
//! - a `.tar.zst` (or `.tzst`) or `.tar` archive: its `.csv` members in
//!   archive order, as the archive is decompressed;
//! - a `.zst` file: the one file it compresses;
//! - a `.zip` archive (as NSE publishes each daily file): its `.csv`
//!   members in archive order, each inflated as it is read;
//! - any other file named on the command line: read as a daily file,
//!   whatever its name.
//!
//! Archives inside archives are not opened. A member is named
//! `archive:member` in errors. Bytes the binary carries (the demo's,
//! [`Source::Embedded`]) are read as a file of their name would be
//! ([`for_each_source`]).

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use super::BhavcopyError;
use crate::format::Source;

/// What kind of file a path is, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    TarZst,
    Tar,
    Zst,
    Zip,
    Csv,
    Other,
}

fn kind(name: &str) -> Kind {
    let name = name.to_ascii_lowercase();
    if name.ends_with(".tar.zst") || name.ends_with(".tzst") {
        Kind::TarZst
    } else if name.ends_with(".tar") {
        Kind::Tar
    } else if name.ends_with(".zst") {
        Kind::Zst
    } else if name.ends_with(".zip") {
        Kind::Zip
    } else if name.ends_with(".csv") {
        Kind::Csv
    } else {
        Kind::Other
    }
}

/// What is handed each file: its name and its bytes.
pub type Visit<'v> = dyn FnMut(&str, &[u8]) -> Result<(), BhavcopyError> + 'v;

/// Hands every daily file under `paths` to `visit`, with its name, in
/// order; stops at the first error (`visit`'s or a read's). Returns how
/// many files were handed on.
pub fn for_each_file<P: AsRef<Path>>(paths: &[P], visit: &mut Visit<'_>) -> Result<usize, BhavcopyError> {
    let mut walk = Walk { buf: Vec::new(), files: 0, visit };
    for path in paths {
        walk.path(path.as_ref(), true)?;
    }
    Ok(walk.files)
}

/// Hands every daily file of `sources` to `visit`, as [`for_each_file`]
/// does: a path as that path, embedded bytes by their name's kind (a
/// `.tar.zst`, `.zst`, `.zip` or a daily file). Returns how many files
/// were handed on.
pub fn for_each_source(sources: &[Source], visit: &mut Visit<'_>) -> Result<usize, BhavcopyError> {
    let mut walk = Walk { buf: Vec::new(), files: 0, visit };
    for source in sources {
        match source {
            Source::Path(path) => walk.path(path, true)?,
            Source::Embedded { name, bytes } => walk.embedded(name, bytes)?,
        }
    }
    Ok(walk.files)
}

struct Walk<'v> {
    /// The one buffer every file is read into.
    buf: Vec<u8>,
    files: usize,
    visit: &'v mut Visit<'v>,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> BhavcopyError + '_ {
    move |source| BhavcopyError::Io { path: path.display().to_string(), source }
}

fn named_io_error(name: &str) -> impl FnOnce(io::Error) -> BhavcopyError + '_ {
    move |source| BhavcopyError::Io { path: name.to_owned(), source }
}

impl Walk<'_> {
    fn path(&mut self, path: &Path, named: bool) -> Result<(), BhavcopyError> {
        let meta = std::fs::metadata(path).map_err(io_error(path))?;
        if meta.is_dir() {
            let mut entries = std::fs::read_dir(path)
                .and_then(|d| d.map(|e| e.map(|e| e.path())).collect::<io::Result<Vec<_>>>())
                .map_err(io_error(path))?;
            entries.sort();
            for entry in entries {
                self.path(&entry, false)?;
            }
            return Ok(());
        }
        let name = path.display().to_string();
        let open = || File::open(path).map_err(io_error(path));
        match kind(&name) {
            Kind::TarZst => {
                let decoder = zstd::Decoder::new(open()?).map_err(io_error(path))?;
                self.tar(&name, decoder)
            }
            Kind::Tar => self.tar(&name, BufReader::new(open()?)),
            Kind::Zst => {
                let mut decoder = zstd::Decoder::new(open()?).map_err(io_error(path))?;
                self.buf.clear();
                decoder.read_to_end(&mut self.buf).map_err(io_error(path))?;
                self.hand_on(&name)
            }
            Kind::Zip => self.zip(&name, BufReader::new(open()?)),
            Kind::Csv => self.file(path, &name),
            Kind::Other if named => self.file(path, &name),
            Kind::Other => Ok(()),
        }
    }

    /// Bytes named `name`, read as a file of that name is.
    fn embedded(&mut self, name: &str, bytes: &[u8]) -> Result<(), BhavcopyError> {
        match kind(name) {
            Kind::TarZst => self.tar(name, zstd::Decoder::new(bytes).map_err(named_io_error(name))?),
            Kind::Tar => self.tar(name, bytes),
            Kind::Zst => {
                let mut decoder = zstd::Decoder::new(bytes).map_err(named_io_error(name))?;
                self.buf.clear();
                decoder.read_to_end(&mut self.buf).map_err(named_io_error(name))?;
                self.hand_on(name)
            }
            Kind::Zip => self.zip(name, Cursor::new(bytes)),
            Kind::Csv | Kind::Other => {
                self.buf.clear();
                self.buf.extend_from_slice(bytes);
                self.hand_on(name)
            }
        }
    }

    fn file(&mut self, path: &Path, name: &str) -> Result<(), BhavcopyError> {
        self.buf.clear();
        open_read(path, &mut self.buf)?;
        self.hand_on(name)
    }

    fn hand_on(&mut self, name: &str) -> Result<(), BhavcopyError> {
        self.files += 1;
        (self.visit)(name, &self.buf)
    }

    /// The `.csv` members of the tar archive `name` read from `reader`.
    fn tar(&mut self, name: &str, reader: impl Read) -> Result<(), BhavcopyError> {
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().map_err(named_io_error(name))? {
            let mut entry = entry.map_err(named_io_error(name))?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let member = entry.path().map_err(named_io_error(name))?.display().to_string();
            if kind(&member) != Kind::Csv {
                continue;
            }
            self.buf.clear();
            entry.read_to_end(&mut self.buf).map_err(named_io_error(name))?;
            self.hand_on(&format!("{name}:{member}"))?;
        }
        Ok(())
    }

    /// The `.csv` members of the zip archive `name` read from `reader`.
    fn zip(&mut self, name: &str, reader: impl Read + io::Seek) -> Result<(), BhavcopyError> {
        let path = name;
        let zip_error = |source| BhavcopyError::Zip { path: path.to_owned(), source };
        let mut archive = zip::ZipArchive::new(reader).map_err(zip_error)?;
        for i in 0..archive.len() {
            let mut member = archive.by_index(i).map_err(zip_error)?;
            let name = member.name().to_owned();
            if !member.is_file() || kind(&name) != Kind::Csv {
                continue;
            }
            self.buf.clear();
            member.read_to_end(&mut self.buf).map_err(named_io_error(path))?;
            drop(member);
            self.hand_on(&format!("{path}:{name}"))?;
        }
        Ok(())
    }
}

fn open_read(path: &Path, buf: &mut Vec<u8>) -> Result<(), BhavcopyError> {
    File::open(path).and_then(|mut f| f.read_to_end(buf)).map(drop).map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        assert_eq!(kind("a/b.TAR.ZST"), Kind::TarZst);
        assert_eq!(kind("b.tzst"), Kind::TarZst);
        assert_eq!(kind("b.csv.zst"), Kind::Zst);
        assert_eq!(kind("BhavCopy_NSE_CM_0_0_0_20240708_F_0000.csv.zip"), Kind::Zip);
        assert_eq!(kind("x.tar"), Kind::Tar);
        assert_eq!(kind("x.CSV"), Kind::Csv);
        assert_eq!(kind("README.md"), Kind::Other);
    }
}

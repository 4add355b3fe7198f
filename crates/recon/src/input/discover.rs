//! Discovery: the files of a table (one file, a directory read recursively
//! in sorted path order, or a glob pattern), their Hive partition values
//! (`key=value` directory levels), and each file's format and compression
//! by its name or magic bytes. Folders of Delta and Iceberg tables are
//! refused here: they are read as tables ([`super::catalog::lakehouse`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Format;
use crate::error::{ReconError, Result};
use crate::input::store::Object;

/// Compression of a text file, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Splits a file name into (format by extension, compression).
pub(super) fn classify(name: &str) -> (Option<Format>, Compression) {
    let lower = name.to_ascii_lowercase();
    let (stem, compression) = if let Some(s) = lower.strip_suffix(".gz") {
        (s.to_string(), Compression::Gzip)
    } else if let Some(s) = lower.strip_suffix(".zst") {
        (s.to_string(), Compression::Zstd)
    } else {
        (lower.clone(), Compression::None)
    };
    let ext = stem.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let format = match ext {
        "parquet" | "pq" => Some(Format::Parquet),
        "arrow" | "feather" | "ipc" | "arrows" => Some(Format::Ipc),
        "csv" => Some(Format::Csv),
        "tsv" | "tab" => Some(Format::Tsv),
        // TPC-H's dbgen and other legacy exports: pipe-delimited, no header.
        "tbl" => Some(Format::Csv),
        "jsonl" | "ndjson" => Some(Format::Ndjson),
        _ => None,
    };
    (format, compression)
}

/// Recognizes binary formats by their magic bytes, for files without a
/// known extension (Hive writes `000000_0`). Text is never guessed.
pub(super) fn sniff(f: &Found) -> Option<Format> {
    use std::io::Read;
    #[cfg(feature = "remote")]
    if let Some(o) = &f.remote {
        return magic_format(&o.fetch(0..o.size.min(6)).ok()?);
    }
    let mut head = [0u8; 6];
    let n = std::fs::File::open(&f.path).ok()?.read(&mut head).ok()?;
    magic_format(&head[..n])
}

/// Parquet or Arrow IPC, by the first bytes of a file.
pub(super) fn magic_format(head: &[u8]) -> Option<Format> {
    match head {
        [b'P', b'A', b'R', b'1', ..] => Some(Format::Parquet),
        [b'A', b'R', b'R', b'O', b'W', b'1'] => Some(Format::Ipc),
        [0xff, 0xff, 0xff, 0xff, ..] => Some(Format::Ipc),
        _ => None,
    }
}

/// Spark and friends leave _SUCCESS, _committed_*, .crc and other markers
/// beside the data; names starting with `_` or `.` are never data.
fn is_marker(name: &str) -> bool {
    name.starts_with('_') || name.starts_with('.')
}

/// A file found for a table, with its Hive partition values.
pub(super) struct Found {
    pub(super) path: PathBuf,
    pub(super) partitions: Vec<(String, Option<String>)>,
    /// The object, when the file is in an object store.
    pub(super) remote: Option<Arc<Object>>,
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<Found>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| ReconError::input(dir, e.to_string()))?;
    let mut children = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| ReconError::input(dir, e.to_string()))?;
        // file_type() does not follow symlinks, so a link cycle cannot recurse forever.
        let kind = entry
            .file_type()
            .map_err(|e| ReconError::input(entry.path(), e.to_string()))?;
        children.push((entry.path(), kind));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (child, kind) in children {
        let name = child.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if is_marker(name) {
            continue;
        }
        if kind.is_dir() {
            collect_files(root, &child, out)?;
        } else if kind.is_symlink() && child.is_dir() {
            return Err(ReconError::input(
                &child,
                "symlinked directory inside a table is not followed; pass the real path",
            ));
        } else {
            out.push(Found {
                partitions: hive_parts(root, &child)?,
                path: child,
                remote: None,
            });
        }
    }
    Ok(())
}

/// The `key=value` directory levels between `root` and `file`.
fn hive_parts(root: &Path, file: &Path) -> Result<Vec<(String, Option<String>)>> {
    let Ok(rel) = file.strip_prefix(root) else {
        return Err(ReconError::Internal(format!(
            "{} is outside its table root {}",
            file.display(),
            root.display()
        )));
    };
    let mut parts = Vec::new();
    let dirs: Vec<_> = rel.components().collect();
    for c in dirs.iter().take(dirs.len().saturating_sub(1)) {
        let s = c.as_os_str().to_string_lossy();
        if let Some((k, v)) = s.split_once('=') {
            if k.is_empty() {
                return Err(ReconError::input(
                    file,
                    "partition directory with an empty key",
                ));
            }
            let value = if v == "__HIVE_DEFAULT_PARTITION__" {
                None
            } else {
                Some(percent_decode(v).ok_or_else(|| {
                    ReconError::input(file, format!("partition value '{v}' is badly escaped"))
                })?)
            };
            parts.push((percent_decode(k).unwrap_or_else(|| k.to_string()), value));
        }
    }
    Ok(parts)
}

/// Hive escapes special characters in partition paths as %XX.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// What a folder of a lakehouse table format holds besides live data.
const TABLE_FOLDER_WHY: &str = "its folder also holds the files of older versions (until VACUUM or expiry removes them) and files whose rows later deletes remove, so reading every Parquet file in it would count dead and deleted rows";

/// Refuses a directory that is (or lies inside) a Delta Lake or Iceberg
/// table: `_delta_log/` in it or an ancestor, or Iceberg's
/// `metadata/*.metadata.json` beside it or in an ancestor. recon reads
/// plain folders of files; reading a table folder as one would silently
/// count rows the table no longer holds.
fn refuse_table_folder(dir: &Path) -> Result<()> {
    let absolute = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    for level in absolute.ancestors() {
        if level.join("_delta_log").is_dir() {
            return Err(ReconError::input(
                dir,
                format!(
                    "this is inside a Delta table ({} has _delta_log/): {TABLE_FOLDER_WHY}. {}",
                    level.display(),
                    if cfg!(feature = "delta") {
                        format!("Read the table with delta:{} (its latest version), or pin one with delta:{}@VERSION", level.display(), level.display())
                    } else {
                        "This recon was built without Delta support: compare an export of the version you mean".to_string()
                    }
                ),
            ));
        }
        if is_iceberg_root(level) {
            return Err(ReconError::input(
                dir,
                format!(
                    "this is inside an Iceberg table ({} holds *.metadata.json): {TABLE_FOLDER_WHY}. {}",
                    level.join("metadata").display(),
                    if cfg!(feature = "iceberg") {
                        format!("Read the table with iceberg:{} (its current snapshot), or pin one with iceberg:{}@SNAPSHOT_ID", level.display(), level.display())
                    } else {
                        "This recon was built without Iceberg support: compare an export of the snapshot you mean".to_string()
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// True when `dir` is an Iceberg table's root: its `metadata/` folder holds
/// a `*.metadata.json`.
pub(super) fn is_iceberg_root(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("metadata"))
        .ok()
        .is_some_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_str().is_some_and(is_metadata_name))
        })
}

/// An Iceberg table metadata file's name: `….metadata.json`, maybe gzipped.
pub(super) fn is_metadata_name(name: &str) -> bool {
    name.ends_with(".metadata.json") || name.ends_with(".metadata.json.gz")
}
/// Lists the files of `path` (a file, a directory, or a glob pattern; on
/// disk, or in an object store with `storage_options`).
pub(super) fn discover(path: &Path, storage_options: &[(String, String)]) -> Result<Vec<Found>> {
    let text = path.to_string_lossy();
    #[cfg(feature = "remote")]
    if crate::input::store::is_url(&text) {
        return discover_remote(&text, &crate::input::store::Stores::new(storage_options));
    }
    let _ = storage_options;
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            return Ok(vec![Found {
                path: path.to_path_buf(),
                partitions: Vec::new(),
                remote: None,
            }])
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(ReconError::input(
                path,
                "is not a regular file, directory or pipe: recon reads its inputs more than once, so write it to a file first",
            ));
        }
        Ok(_) => {
            refuse_table_folder(path)?;
            let mut files = Vec::new();
            collect_files(path, path, &mut files)?;
            if files.is_empty() {
                return Err(ReconError::input(path, "directory holds no data files"));
            }
            return Ok(files);
        }
        Err(e) if !has_glob_chars(&text) => {
            return Err(ReconError::input(path, e.to_string()));
        }
        Err(_) => {}
    }
    // A glob: Hive levels are counted from the pattern's literal prefix.
    // `./` is dropped from both sides: glob reports `./src/x` as `src/x`.
    let plain = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let root: PathBuf = plain(path)
        .components()
        .take_while(|c| !has_glob_chars(&c.as_os_str().to_string_lossy()))
        .collect();
    let paths =
        glob::glob(&text).map_err(|e| ReconError::input(path, format!("bad glob pattern: {e}")))?;
    let mut matched: Vec<PathBuf> = Vec::new();
    for p in paths {
        let p = p.map_err(|e| ReconError::input(e.path(), e.error().to_string()))?;
        let p = plain(&p);
        let rel = p.strip_prefix(&root).map_err(|_| {
            ReconError::Internal(format!(
                "glob match {} is outside its root {}",
                p.display(),
                root.display()
            ))
        })?;
        // Markers at any level below the root (`_temporary/…`, `.hidden/…`) are not data.
        if rel
            .components()
            .any(|c| is_marker(&c.as_os_str().to_string_lossy()))
        {
            continue;
        }
        matched.push(p);
    }
    let mut files = Vec::new();
    for p in matched {
        if p.is_dir() {
            collect_files(&root, &p, &mut files)?;
        } else {
            files.push(Found {
                partitions: hive_parts(&root, &p)?,
                path: p,
                remote: None,
            });
        }
    }
    // `**` matches a directory and the files inside it: read each file once.
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    if files.is_empty() {
        return Err(ReconError::input(path, "glob pattern matches no files"));
    }
    Ok(files)
}

/// Lists the objects of `url` (an object, a folder, or a glob pattern),
/// like [`discover`] does for local paths: sorted by key, markers skipped
/// at every level, Hive levels counted below the folder (or the pattern's
/// literal prefix), and the folders of Delta and Iceberg tables refused.
#[cfg(feature = "remote")]
fn discover_remote(url: &str, stores: &crate::input::store::Stores) -> Result<Vec<Found>> {
    let path = Path::new(url);
    let (scheme_root, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (
            format!("{scheme}://{}", rest.split('/').next().unwrap_or("")),
            rest.split_once('/').map_or("", |(_, k)| k),
        ),
        None => return Err(ReconError::input(path, "not a URL")),
    };
    let found = |objects: Vec<Arc<Object>>, root: &Path| -> Result<Vec<Found>> {
        let mut files = Vec::new();
        for o in objects {
            let p = o.path();
            let rel = p.strip_prefix(root).unwrap_or(&p);
            if rel
                .components()
                .any(|c| is_marker(&c.as_os_str().to_string_lossy()))
            {
                continue;
            }
            files.push(Found {
                partitions: hive_parts(root, &p)?,
                path: p,
                remote: Some(o),
            });
        }
        Ok(files)
    };
    let one = |o: Arc<Object>| {
        vec![Found {
            path: o.path(),
            partitions: Vec::new(),
            remote: Some(o),
        }]
    };
    // A plain HTTP server cannot be listed, and `?` starts a query there:
    // an http(s) URL names one file.
    if scheme_root.starts_with("http") {
        return Ok(one(stores.head(url)?));
    }
    if has_glob_chars(rest) {
        let literal: Vec<&str> = rest.split('/').take_while(|c| !has_glob_chars(c)).collect();
        let root = format!("{scheme_root}/{}", literal.join("/"));
        let pattern = glob::Pattern::new(rest)
            .map_err(|e| ReconError::input(path, format!("bad glob pattern: {e}")))?;
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..Default::default()
        };
        let listed = stores.list(&root)?;
        refuse_remote_table_folder(url, &scheme_root, &listed)?;
        // A pattern that matches a folder takes the objects inside it.
        let matched: Vec<Arc<Object>> = listed
            .into_iter()
            .filter(|o| {
                let key = o.key();
                pattern.matches_with(key, options)
                    || key
                        .match_indices('/')
                        .any(|(i, _)| pattern.matches_with(&key[..i], options))
            })
            .collect();
        let files = found(matched, Path::new(&root))?;
        if files.is_empty() {
            return Err(ReconError::input(path, "glob pattern matches no objects"));
        }
        return Ok(files);
    }
    // An object, or else a folder (a prefix ending at a `/`).
    if !rest.is_empty() && !rest.ends_with('/') {
        match stores.head(url) {
            Ok(o) => return Ok(one(o)),
            Err(ReconError::Input { message, .. }) if message.starts_with("not found") => {}
            Err(e) => return Err(e),
        }
    }
    let root = url.trim_end_matches('/');
    let listed = stores.list(root)?;
    if listed.is_empty() {
        return Err(ReconError::input(
            path,
            "not found (no such object, folder or bucket)",
        ));
    }
    refuse_remote_table_folder(url, &scheme_root, &listed)?;
    let files = found(listed, Path::new(root))?;
    if files.is_empty() {
        return Err(ReconError::input(path, "folder holds no data files"));
    }
    Ok(files)
}

/// Refuses a folder that holds a Delta log or Iceberg metadata, as
/// [`refuse_table_folder`] does on disk (a folder inside a table is not
/// seen from its listing: object stores have no parent folders to look at).
#[cfg(feature = "remote")]
fn refuse_remote_table_folder(url: &str, scheme_root: &str, listed: &[Arc<Object>]) -> Result<()> {
    for o in listed {
        let key = o.key();
        if let Some(i) = key.find("_delta_log/") {
            let table = format!("{scheme_root}/{}", key[..i].trim_end_matches('/'));
            return Err(ReconError::input(
                Path::new(url),
                format!("this holds a Delta table ({table} has _delta_log/): {TABLE_FOLDER_WHY}. Read the table with delta:{table}, or pin a version with delta:{table}@VERSION"),
            ));
        }
        if let Some(i) = key.find("metadata/") {
            if is_metadata_name(&key[i + "metadata/".len()..]) {
                let table = format!("{scheme_root}/{}", key[..i].trim_end_matches('/'));
                return Err(ReconError::input(
                    Path::new(url),
                    format!("this holds an Iceberg table ({table}/metadata holds *.metadata.json): {TABLE_FOLDER_WHY}. Read the table with iceberg:{table}, or pin a snapshot with iceberg:{table}@SNAPSHOT_ID"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str, bytes: &[u8]) -> PathBuf {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A found file: its path below the root, and its Hive (key, value) pairs.
    type Listed = (String, Vec<(String, Option<String>)>);

    fn relative(root: &Path, found: &[Found]) -> Vec<Listed> {
        found
            .iter()
            .map(|f| {
                let rel = f.path.strip_prefix(root).unwrap();
                (rel.display().to_string(), f.partitions.clone())
            })
            .collect()
    }

    #[test]
    fn a_directory_lists_its_data_files_in_path_order_with_hive_values() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(root, "region=west/b.csv", b"x\n1\n");
        touch(root, "region=west/a.csv", b"x\n2\n");
        touch(root, "region=New%20York/c.csv.gz", b"");
        touch(root, "region=__HIVE_DEFAULT_PARTITION__/d.csv", b"x\n3\n");
        // Markers beside the data, and hidden or temporary folders, are not data.
        touch(root, "_SUCCESS", b"");
        touch(root, "region=west/.a.csv.crc", b"");
        touch(root, "_temporary/0/part.csv", b"x\n9\n");
        let found = discover(root, &[]).unwrap();
        let part = |v: Option<&str>| vec![("region".to_string(), v.map(String::from))];
        assert_eq!(
            relative(root, &found),
            [
                ("region=New%20York/c.csv.gz".into(), part(Some("New York"))),
                ("region=__HIVE_DEFAULT_PARTITION__/d.csv".into(), part(None)),
                ("region=west/a.csv".into(), part(Some("west"))),
                ("region=west/b.csv".into(), part(Some("west"))),
            ]
        );
    }

    #[test]
    fn a_glob_counts_hive_levels_below_its_literal_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(root, "t/day=1/x.parquet", b"PAR1");
        touch(root, "t/day=2/x.parquet", b"PAR1");
        touch(root, "t/day=2/_committed_1", b"");
        touch(root, "t/day=2/x.csv", b"a\n");
        let found = discover(&root.join("t/day=*/*.parquet"), &[]).unwrap();
        let day = |d: &str| vec![("day".to_string(), Some(d.to_string()))];
        assert_eq!(
            relative(root, &found),
            [
                ("t/day=1/x.parquet".into(), day("1")),
                ("t/day=2/x.parquet".into(), day("2")),
            ]
        );
        let none = discover(&root.join("t/*.arrow"), &[])
            .map(|_| ())
            .unwrap_err();
        assert!(
            none.to_string().contains("glob pattern matches no files"),
            "{none}"
        );
    }

    #[test]
    fn empty_folders_bad_escapes_and_table_folders_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("empty/_logs")).unwrap();
        let e = discover(&root.join("empty"), &[]).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("directory holds no data files"),
            "{e}"
        );

        touch(root, "bad/k=%zz/a.csv", b"x\n");
        let e = discover(&root.join("bad"), &[]).map(|_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("partition value '%zz' is badly escaped"),
            "{e}"
        );

        touch(root, "delta/_delta_log/00000000000000000000.json", b"{}");
        touch(root, "delta/part-0.parquet", b"PAR1");
        let e = discover(&root.join("delta"), &[]).map(|_| ()).unwrap_err();
        assert!(
            e.to_string().contains("this is inside a Delta table"),
            "{e}"
        );

        touch(root, "ice/metadata/v1.metadata.json", b"{}");
        touch(root, "ice/data/part-0.parquet", b"PAR1");
        assert!(is_iceberg_root(&root.join("ice")));
        let e = discover(&root.join("ice/data"), &[])
            .map(|_| ())
            .unwrap_err();
        assert!(
            e.to_string().contains("this is inside an Iceberg table"),
            "{e}"
        );
    }

    #[test]
    fn formats_come_from_names_or_magic_bytes() {
        assert_eq!(
            classify("Orders.CSV.GZ"),
            (Some(Format::Csv), Compression::Gzip)
        );
        assert_eq!(
            classify("x.parquet.zst"),
            (Some(Format::Parquet), Compression::Zstd)
        );
        assert_eq!(
            classify("lineitem.tbl"),
            (Some(Format::Csv), Compression::None)
        );
        assert_eq!(classify("a.tab"), (Some(Format::Tsv), Compression::None));
        assert_eq!(
            classify("e.ndjson"),
            (Some(Format::Ndjson), Compression::None)
        );
        assert_eq!(classify("000000_0"), (None, Compression::None));
        assert_eq!(magic_format(b"PAR1\x15\x04"), Some(Format::Parquet));
        assert_eq!(magic_format(b"ARROW1"), Some(Format::Ipc));
        assert_eq!(magic_format(&[0xff; 8]), Some(Format::Ipc));
        assert_eq!(magic_format(b"a,b\n1,2"), None);
        let dir = tempfile::tempdir().unwrap();
        let hive = touch(dir.path(), "000000_0", b"PAR1....");
        assert_eq!(
            sniff(&Found {
                path: hive.clone(),
                partitions: Vec::new(),
                remote: None,
            }),
            Some(Format::Parquet)
        );
    }
}

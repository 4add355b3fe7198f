//! Iceberg tables, read as of a snapshot.
//!
//! An Iceberg table's folder holds the data files of every snapshot not yet
//! expired, and delete files whose rows later snapshots remove; only the
//! metadata says which rows a snapshot holds. recon reads the metadata JSON,
//! the snapshot's manifest list and manifests (Avro, through `apache-avro`),
//! and the position delete files; then it reads the live Parquet data files
//! itself, skipping deleted positions, so locators point at rows of real
//! files and evidence comes back as for any Parquet table.
//!
//! Why not iceberg-rust: its 0.10 release is built on arrow 58 and recon on
//! arrow 60, so using it would compile a second arrow and parquet and need
//! a conversion between the two at every batch. What recon needs of the
//! spec (metadata, manifests, position deletes, field ids) is small.
//!
//! What recon applies: the snapshot's live data files (manifest entries not
//! marked deleted), position deletes (to data files of the same or an
//! earlier sequence number), equality deletes (to data files of an earlier
//! sequence number in the same partition, or in every partition when
//! written unpartitioned; applied as positions by `lakehouse::equality`),
//! columns by the spec's column projection under
//! the snapshot's schema: by field id (renamed columns resolve, allowed type
//! promotions are widened exactly), else the file's identity partition value
//! from its manifest, else the name mapping, else the column's
//! `initial-default`, else NULL (a required column is refused instead).
//! Refused by name: deletion vectors (format 3), data files that are not
//! Parquet, nested initial defaults, and equality deletes on a dropped
//! column or a floating-point one (whose equality Iceberg's Java reader
//! and recon define differently for -0.0).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apache_avro::types::Value;
use arrow::array::{Array, ArrayRef, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use serde_json::Value as Json;

use crate::error::{ReconError, Result};
use crate::input::format::block::BlockMeta;
use crate::input::store::Object;

/// Field metadata key of a file column's field id: arrow-rs's for Parquet,
/// and recon's ORC reader puts `iceberg.id` under the same key.
pub(crate) const FIELD_ID: &str = parquet::arrow::PARQUET_FIELD_ID_META_KEY;

/// The formats of data and delete files recon reads (`file_format` in a
/// manifest entry); Avro data files are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileFormat {
    Parquet,
    Orc,
}

impl FileFormat {
    fn of(file_format: &str) -> Option<FileFormat> {
        match file_format {
            "PARQUET" => Some(FileFormat::Parquet),
            "ORC" => Some(FileFormat::Orc),
            _ => None,
        }
    }

    /// The file's footer metadata, read as its format reads it.
    pub(crate) fn open(
        self,
        path: &Path,
        remote: Option<&Arc<Object>>,
        int96_unit: crate::config::Int96Unit,
    ) -> Result<BlockMeta> {
        match self {
            FileFormat::Parquet => BlockMeta::parquet(path, remote, int96_unit),
            FileFormat::Orc => BlockMeta::orc(path, remote),
        }
    }
}

/// A column of the snapshot's schema.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    pub id: i32,
    pub field: Field,
    /// Declared `required`: a file without it must supply it some other
    /// way (its identity partition value, an initial default), or it is
    /// refused, never NULL.
    pub required: bool,
    /// `initial-default` (format 3): the value files written before the
    /// column was added hold for it, a one-row array of its type.
    pub initial_default: Option<ArrayRef>,
}

/// A live data file of a snapshot.
#[derive(Debug)]
pub(crate) struct LiveFile {
    pub path: PathBuf,
    pub format: FileFormat,
    /// The object, when the table is in an object store.
    pub remote: Option<Arc<crate::input::store::Object>>,
    /// Rows the manifest says the file holds.
    pub record_count: Option<u64>,
    /// Positions (from 0, ascending, unique) that position deletes remove.
    pub deleted: Option<Vec<u64>>,
    /// The values of the file's identity partition fields by source field
    /// id, each a one-row array of the column's type: a file written
    /// without its partition columns (Hive-migrated tables, writers with
    /// `write.parquet.write-partition-values=false`) holds them only here.
    pub identity: HashMap<i32, ArrayRef>,
    /// The equality deletes that apply to the file (indices into
    /// [`IcebergSnapshot::equality_deletes`]): of a higher sequence number,
    /// and unpartitioned or of the file's own spec and partition.
    pub equality: Vec<usize>,
}

/// An equality delete file of a snapshot: it removes the rows of the data
/// files it applies to whose values of the columns `ids` equal one of its
/// rows' (NULL equal to NULL).
#[derive(Debug)]
pub(crate) struct EqualityDelete {
    pub path: PathBuf,
    pub format: FileFormat,
    pub remote: Option<Arc<crate::input::store::Object>>,
    /// The schema's field ids it compares, ascending.
    pub ids: Vec<i32>,
}

/// What an Iceberg table is at one snapshot.
#[derive(Debug)]
pub(crate) struct IcebergSnapshot {
    /// The metadata file read.
    pub metadata_file: PathBuf,
    /// None: the table has no snapshot yet (no rows). Wide enough for
    /// every id a metadata file holds: the spec's longs, and the unsigned
    /// 64-bit ids some writers put there (9876543210123456789).
    pub snapshot_id: Option<SnapshotId>,
    pub columns: Vec<Column>,
    /// Field ids by column name in files written without ids
    /// (`schema.name-mapping.default`).
    pub name_mapping: Option<HashMap<String, i32>>,
    pub files: Vec<LiveFile>,
    pub equality_deletes: Vec<EqualityDelete>,
}

/// A snapshot id: a signed 64-bit long by the spec, but metadata written by
/// other engines holds unsigned ids above 2^63 too; both fit here.
pub(crate) type SnapshotId = i128;

/// Splits `iceberg:PATH[@SNAPSHOT_ID]` into the path and the snapshot id.
pub(crate) fn parse_source(
    text: &str,
) -> Option<std::result::Result<(PathBuf, Option<SnapshotId>), String>> {
    let rest = text.strip_prefix("iceberg:")?;
    Some(match rest.rsplit_once('@') {
        Some((path, id)) if !path.is_empty() => parse_id(id)
            .map(|id| (PathBuf::from(path), Some(id)))
            .ok_or_else(|| {
                format!("iceberg:{path}@{id}: the snapshot id must be a whole number from -2^63 to 2^64-1 (the table's snapshots list them)")
            }),
        _ => Ok((PathBuf::from(rest), None)),
    })
}

/// A snapshot id as text: any i64 or u64.
fn parse_id(text: &str) -> Option<SnapshotId> {
    let id = text.parse::<i128>().ok()?;
    (i128::from(i64::MIN)..=i128::from(u64::MAX))
        .contains(&id)
        .then_some(id)
}

/// Where a table's files are read from: a path on this machine, or an
/// object-store URL (`s3://…`), which the metadata may also name for
/// single files. Objects are looked up once and kept: the data files'
/// objects (size, ETag) are the ones the scan reads.
pub(crate) struct Fs {
    #[cfg(feature = "remote")]
    stores: crate::input::store::Stores,
    #[cfg(feature = "remote")]
    heads: std::sync::Mutex<HashMap<PathBuf, Option<Arc<Object>>>>,
}

impl Fs {
    pub(crate) fn new(storage_options: &[(String, String)]) -> Fs {
        let _ = storage_options;
        Fs {
            #[cfg(feature = "remote")]
            stores: crate::input::store::Stores::new(storage_options),
            #[cfg(feature = "remote")]
            heads: Default::default(),
        }
    }

    fn is_url(p: &Path) -> bool {
        crate::input::store::is_url(&p.to_string_lossy())
    }

    /// The object at `p` when `p` is a URL and it exists (a data or delete
    /// file's, for the scan); errors other than "not found" (denied,
    /// unreachable) are errors.
    pub(super) fn remote(&self, p: &Path) -> Result<Option<Arc<Object>>> {
        #[cfg(feature = "remote")]
        if Fs::is_url(p) {
            let mut heads = self.heads.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(known) = heads.get(p) {
                return Ok(known.clone());
            }
            let found = match self.stores.head(&p.to_string_lossy()) {
                Ok(o) => Some(o),
                Err(ReconError::Input { message, .. }) if message.starts_with("not found") => None,
                Err(e) => return Err(e),
            };
            heads.insert(p.to_path_buf(), found.clone());
            return Ok(found);
        }
        let _ = p;
        Ok(None)
    }

    fn is_file(&self, p: &Path) -> Result<bool> {
        if Fs::is_url(p) {
            return Ok(self.remote(p)?.is_some());
        }
        Ok(p.is_file())
    }

    /// As [`Fs::is_file`], but a local directory counts (the old `exists`).
    fn exists(&self, p: &Path) -> Result<bool> {
        if Fs::is_url(p) {
            return self.is_file(p);
        }
        Ok(p.exists())
    }

    /// The bytes of `p`, or None when there is no such file.
    fn read_if_exists(&self, p: &Path) -> Result<Option<Vec<u8>>> {
        if Fs::is_url(p) {
            return match self.is_file(p)? {
                true => self.read(p).map(Some),
                false => Ok(None),
            };
        }
        Ok(std::fs::read(p).ok())
    }

    /// True when `dir/metadata` holds metadata files (a table's root).
    fn has_metadata_dir(&self, dir: &Path) -> Result<bool> {
        let metadata = dir.join("metadata");
        if Fs::is_url(dir) {
            return Ok(self
                .metadata_files(&metadata)?
                .is_some_and(|n| !n.is_empty()));
        }
        Ok(metadata.is_dir())
    }

    fn read(&self, p: &Path) -> Result<Vec<u8>> {
        if Fs::is_url(p) {
            #[cfg(feature = "remote")]
            if let Some(o) = self.remote(p)? {
                return Ok(o.fetch(0..o.size)?.to_vec());
            }
            return Err(ReconError::input(p, "not found (no such object)"));
        }
        std::fs::read(p).map_err(|e| ReconError::input(p, e.to_string()))
    }

    /// The names of the metadata files directly in `dir`, sorted; None when
    /// it cannot be listed.
    fn metadata_files(&self, dir: &Path) -> Result<Option<Vec<String>>> {
        let mut names: Vec<String> = if Fs::is_url(dir) {
            #[cfg(feature = "remote")]
            {
                let text = dir.to_string_lossy();
                let prefix = format!("{}/", text.trim_end_matches('/'));
                self.stores
                    .list(&text)?
                    .iter()
                    .filter_map(|o| o.url.strip_prefix(&prefix).map(str::to_string))
                    .filter(|n| !n.contains('/'))
                    .collect()
            }
            #[cfg(not(feature = "remote"))]
            return Ok(None);
        } else {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return Ok(None);
            };
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        };
        names.retain(|n| crate::input::discover::is_metadata_name(n));
        names.sort();
        Ok(Some(names))
    }
}

/// The version number a metadata file's name carries: `00003-<uuid>` (the
/// catalogs' names) or `v3` (Hadoop tables).
fn metadata_version(name: &str) -> Option<u64> {
    let stem = name.split('.').next()?;
    let digits = match stem.strip_prefix('v') {
        Some(rest) => rest,
        None => stem.split('-').next()?,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The metadata file to read for `path` (a metadata file, a table's root or
/// its `metadata/` folder), and the table's root on this machine.
pub(crate) fn locate(fs: &Fs, path: &Path) -> Result<(PathBuf, PathBuf)> {
    let is_file = if Fs::is_url(path) {
        fs.is_file(path)?
    } else {
        std::fs::metadata(path)
            .map_err(|e| ReconError::input(path, e.to_string()))?
            .is_file()
    };
    if is_file {
        let dir = path.parent().unwrap_or(Path::new("."));
        let root = if dir.file_name().is_some_and(|n| n == "metadata") {
            dir.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            dir.to_path_buf()
        };
        return Ok((path.to_path_buf(), root));
    }
    let (dir, root) = if fs.has_metadata_dir(path)? {
        (path.join("metadata"), path.to_path_buf())
    } else if path.file_name().is_some_and(|n| n == "metadata") {
        (
            path.to_path_buf(),
            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
        )
    } else {
        return Err(ReconError::input(
            path,
            "is not an Iceberg table: it has no metadata/ folder",
        ));
    };
    let names = fs.metadata_files(&dir)?.unwrap_or_default();
    if names.is_empty() {
        return Err(ReconError::input(
            &dir,
            "holds no *.metadata.json: not an Iceberg table's metadata",
        ));
    }
    let hint = dir.join("version-hint.text");
    let hint_text = fs
        .read_if_exists(&hint)?
        .and_then(|b| String::from_utf8(b).ok());
    if let Some(text) = hint_text
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if let Ok(n) = text.parse::<u64>() {
            let matching: Vec<&String> = names
                .iter()
                .filter(|name| metadata_version(name) == Some(n))
                .collect();
            return match matching.as_slice() {
                [one] => Ok((dir.join(one), root)),
                [] => Err(ReconError::input(
                    &hint,
                    format!("names version {n}, but no metadata file of that version is in the folder"),
                )),
                many => Err(ReconError::input(
                    &hint,
                    format!(
                        "names version {n}, which {} metadata files claim ({}): pin one with iceberg:FILE",
                        many.len(),
                        many.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                )),
            };
        }
        // Some writers put the file's name, its path or its stem in the hint.
        let named = Path::new(text);
        let named = if named.is_absolute() {
            named.to_path_buf()
        } else {
            dir.join(named)
        };
        let stem = PathBuf::from(format!("{}.metadata.json", named.display()));
        for candidate in [named, stem] {
            if fs.is_file(&candidate)? {
                return Ok((candidate, root));
            }
        }
        // Otherwise, as Java's HadoopTableOperations does with a hint it
        // cannot use, the folder's highest version is the current one.
    }
    // No (usable) hint: the highest-numbered metadata file is the current one.
    let mut best: Option<(u64, Vec<&String>)> = None;
    for name in &names {
        let Some(v) = metadata_version(name) else {
            continue;
        };
        match &mut best {
            Some((b, list)) if *b == v => list.push(name),
            Some((b, _)) if *b > v => {}
            _ => best = Some((v, vec![name])),
        }
    }
    match best {
        Some((_, list)) if list.len() == 1 => Ok((dir.join(list[0]), root)),
        Some((v, list)) => Err(ReconError::input(
            &dir,
            format!(
                "{} metadata files claim the highest version {v} ({}): pin one with iceberg:FILE",
                list.len(),
                list.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
        None => Err(ReconError::input(
            &dir,
            "no metadata file name carries a version number (00003-….metadata.json or v3.metadata.json): pin one with iceberg:FILE",
        )),
    }
}

fn read_json(fs: &Fs, path: &Path) -> Result<Json> {
    let mut bytes = fs.read(path)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_end(&mut out)
            .map_err(|e| ReconError::input(path, format!("gzip: {e}")))?;
        bytes = out;
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ReconError::input(path, format!("not Iceberg table metadata (JSON): {e}")))
}

/// Locations written in metadata are absolute URIs of where the table was
/// written; a table copied elsewhere (off a warehouse, into a test folder)
/// keeps them. A location under the table's recorded `location` is looked
/// up under the root recon was given first, then as written.
struct Locations<'f> {
    /// The recorded location, without scheme and trailing slash.
    recorded: String,
    root: PathBuf,
    fs: &'f Fs,
}

/// `file:///x`, `file:/x` and `/x` all name `/x`; other schemes stay.
/// A location as recon compares it: without a `file:` scheme, and a
/// relative one without leading `./` (writers spell the same relative
/// location both ways, `./warehouse/t/data/x.parquet` in one file and
/// `warehouse/t/data/x.parquet` in another).
fn strip_file_scheme(s: &str) -> &str {
    let mut rest = if let Some(rest) = s.strip_prefix("file://") {
        rest
    } else if let Some(rest) = s.strip_prefix("file:") {
        rest
    } else {
        s
    };
    while let Some(r) = rest.strip_prefix("./") {
        rest = r.trim_start_matches('/');
    }
    rest
}

impl Locations<'_> {
    fn resolve(&self, metadata: &Path, written: &str) -> Result<PathBuf> {
        let plain = strip_file_scheme(written);
        if let Some(rel) = plain
            .strip_prefix(self.recorded.as_str())
            .and_then(|r| r.strip_prefix('/'))
        {
            let local = self.root.join(rel);
            if self.fs.exists(&local)? {
                return Ok(local);
            }
        }
        // As written: a local path, or an object-store URL.
        let as_written = PathBuf::from(plain);
        // Another scheme (hdfs://) is neither.
        if (Fs::is_url(&as_written) || !plain.contains("://")) && self.fs.exists(&as_written)? {
            return Ok(as_written);
        }
        Err(ReconError::input(
            metadata,
            format!(
                "names {written}, which is neither under the table's folder {} (its recorded location is {}) nor a local file",
                self.root.display(),
                self.recorded
            ),
        ))
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> ReconError {
    ReconError::input(path, format!("Iceberg metadata: {what}"))
}

fn json_i64(v: &Json, key: &str) -> Option<i64> {
    v.get(key).and_then(Json::as_i64)
}

/// A snapshot id held under `key`: None when absent or null; an error when
/// it is there but not an id (a fraction, a number past u64), rather than
/// reading it as "no snapshot".
fn json_id(path: &Path, v: &Json, key: &str) -> Result<Option<SnapshotId>> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(n) => n
            .as_i64()
            .map(SnapshotId::from)
            .or_else(|| n.as_u64().map(SnapshotId::from))
            .map(Some)
            .ok_or_else(|| {
                bad(
                    path,
                    format!("{key} {n} is not a whole number from -2^63 to 2^64-1"),
                )
            }),
    }
}

/// Maps an Iceberg type (a string, or a struct/list/map object) to the
/// Arrow type its values are compared as.
fn arrow_type(path: &Path, column: &str, t: &Json) -> Result<DataType> {
    let unsupported = |what: &str| {
        bad(
            path,
            format!("column {column} has type {what}, which recon cannot read"),
        )
    };
    if let Some(s) = t.as_str() {
        let s = s.trim();
        return Ok(match s {
            "boolean" => DataType::Boolean,
            "int" => DataType::Int32,
            "long" => DataType::Int64,
            "float" => DataType::Float32,
            "double" => DataType::Float64,
            "date" => DataType::Date32,
            "time" => DataType::Time64(TimeUnit::Microsecond),
            "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, None),
            "timestamptz" => DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
            "timestamp_ns" => DataType::Timestamp(TimeUnit::Nanosecond, None),
            "timestamptz_ns" => DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())),
            "string" => DataType::Utf8,
            "uuid" => DataType::FixedSizeBinary(16),
            "binary" => DataType::Binary,
            _ => {
                if let Some(inner) = s.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
                    let mut parts = inner.split(',').map(|p| p.trim().parse::<i64>());
                    match (parts.next(), parts.next(), parts.next()) {
                        (Some(Ok(p)), Some(Ok(sc)), None)
                            if (1..=38).contains(&p) && (0..=p).contains(&sc) =>
                        {
                            DataType::Decimal128(p as u8, sc as i8)
                        }
                        _ => return Err(unsupported(s)),
                    }
                } else if let Some(n) = s.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
                    match n.trim().parse::<i32>() {
                        Ok(n) if n > 0 => DataType::FixedSizeBinary(n),
                        _ => return Err(unsupported(s)),
                    }
                } else {
                    return Err(unsupported(s));
                }
            }
        });
    }
    match t.get("type").and_then(Json::as_str) {
        Some("struct") => {
            let fields = struct_fields(path, t)?;
            Ok(DataType::Struct(Fields::from(
                fields.into_iter().map(|c| c.field).collect::<Vec<_>>(),
            )))
        }
        Some("list") => {
            let element = t
                .get("element")
                .ok_or_else(|| unsupported("list without an element"))?;
            let inner = arrow_type(path, column, element)?;
            Ok(DataType::List(Arc::new(Field::new("element", inner, true))))
        }
        Some("map") => {
            let (Some(k), Some(v)) = (t.get("key"), t.get("value")) else {
                return Err(unsupported("map without a key or value"));
            };
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", arrow_type(path, column, k)?, false),
                    Field::new("value", arrow_type(path, column, v)?, true),
                ])),
                false,
            );
            Ok(DataType::Map(Arc::new(entries), false))
        }
        _ => Err(unsupported(&t.to_string())),
    }
}

fn struct_fields(path: &Path, schema: &Json) -> Result<Vec<Column>> {
    let fields = schema
        .get("fields")
        .and_then(Json::as_array)
        .ok_or_else(|| bad(path, "a schema without fields"))?;
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let name = f
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| bad(path, "a schema field without a name"))?;
        let id = json_i64(f, "id").ok_or_else(|| bad(path, format!("field {name} has no id")))?;
        let ty = f
            .get("type")
            .ok_or_else(|| bad(path, format!("field {name} has no type")))?;
        let data_type = arrow_type(path, name, ty)?;
        let initial_default =
            match f.get("initial-default") {
                None | Some(Json::Null) => None,
                Some(d) => Some(default_array(d, &data_type).map_err(|why| {
                    bad(path, format!("column {name}'s initial-default {d}: {why}"))
                })?),
            };
        // Every column is read as nullable: files written before a column
        // was added hold NULL for it.
        out.push(Column {
            id: id as i32,
            field: Field::new(name, data_type, true),
            required: f.get("required").and_then(Json::as_bool) == Some(true),
            initial_default,
        });
    }
    Ok(out)
}

/// `schema.name-mapping.default`: field ids by the names files without ids use.
fn name_mapping(path: &Path, meta: &Json) -> Result<Option<HashMap<String, i32>>> {
    let Some(text) = meta
        .get("properties")
        .and_then(|p| p.get("schema.name-mapping.default"))
        .and_then(Json::as_str)
    else {
        return Ok(None);
    };
    let parsed: Json = serde_json::from_str(text)
        .map_err(|e| bad(path, format!("schema.name-mapping.default: {e}")))?;
    let mut out = HashMap::new();
    for entry in parsed.as_array().into_iter().flatten() {
        let Some(id) = json_i64(entry, "field-id") else {
            continue;
        };
        for n in entry
            .get("names")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = n.as_str() {
                out.insert(n.to_string(), id as i32);
            }
        }
    }
    Ok(Some(out))
}

/// A record field of an Avro value, through the `["null", T]` unions.
fn avro_field<'v>(record: &'v Value, name: &str) -> Option<&'v Value> {
    let Value::Record(fields) = record else {
        return None;
    };
    let v = fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)?;
    let v = match v {
        Value::Union(_, inner) => inner.as_ref(),
        other => other,
    };
    (!matches!(v, Value::Null)).then_some(v)
}

fn avro_i64(record: &Value, name: &str) -> Option<i64> {
    match avro_field(record, name)? {
        Value::Int(i) => Some(*i as i64),
        Value::Long(i) => Some(*i),
        _ => None,
    }
}

fn avro_str<'v>(record: &'v Value, name: &str) -> Option<&'v str> {
    match avro_field(record, name)? {
        Value::String(s) => Some(s),
        Value::Enum(_, s) => Some(s),
        _ => None,
    }
}

/// An Avro file's header key-value metadata (`partition-spec`, …).
type AvroHeader = HashMap<String, Vec<u8>>;

/// An Avro file's records and its header's key-value metadata.
fn read_avro(fs: &Fs, path: &Path) -> Result<(Vec<Value>, AvroHeader)> {
    let bytes = fs.read(path)?;
    let reader = apache_avro::Reader::new(bytes.as_slice())
        .map_err(|e| ReconError::input(path, format!("not a readable Avro file: {e}")))?;
    let header = reader.user_metadata().clone();
    let records = reader
        .map(|v| v.map_err(|e| ReconError::input(path, format!("Avro: {e}"))))
        .collect::<Result<_>>()?;
    Ok((records, header))
}

/// A file a manifest lists as live in the snapshot.
struct Entry {
    content: i64,
    record_count: Option<i64>,
    written_path: String,
    format: String,
    sequence: i64,
    equality_ids: Vec<i64>,
    manifest: PathBuf,
    /// The partition tuple (`data_file.partition`), fields in spec order.
    partition: Vec<(String, Value)>,
    /// The partition spec the file was written with: its id (None where
    /// neither the manifest list nor the manifest names one) and fields.
    spec_id: Option<i64>,
    spec: Arc<[SpecField]>,
}

impl Entry {
    /// Whether the file's spec partitions nothing (no field, or only
    /// `void` ones: Java's `PartitionSpec.isUnpartitioned`). An equality
    /// delete written so applies to every partition.
    fn unpartitioned(&self) -> bool {
        self.spec.iter().all(|f| f.transform == "void")
    }

    /// Whether this equality delete applies to data file `data` (the
    /// spec's scan planning): written later (a strictly higher data
    /// sequence number), and unpartitioned or in the same partition of
    /// the same spec.
    fn deletes_from(&self, data: &Entry) -> bool {
        fn plain(v: &Value) -> &Value {
            match v {
                Value::Union(_, inner) => plain(inner),
                v => v,
            }
        }
        self.sequence > data.sequence
            && (self.unpartitioned()
                || (self.spec_id == data.spec_id
                    && self.partition.len() == data.partition.len()
                    && self
                        .partition
                        .iter()
                        .zip(&data.partition)
                        .all(|((_, a), (_, b))| plain(a) == plain(b))))
    }
}

/// A field of a partition spec: the partition tuple's field `name`, made
/// from schema field `source_id` by `transform`.
#[derive(Debug)]
struct SpecField {
    name: String,
    source_id: i64,
    transform: String,
}

/// A manifest of a snapshot, with what its entries inherit.
struct ManifestRef {
    path: PathBuf,
    sequence: i64,
    /// `partition_spec_id` from the manifest list (format 2; optional in 1).
    spec_id: Option<i64>,
}

/// A spec's fields (`partition-specs[].fields`, or format 1's
/// `partition-spec` list).
fn spec_fields(path: &Path, fields: &Json) -> Result<Arc<[SpecField]>> {
    let list = fields
        .as_array()
        .ok_or_else(|| bad(path, "a partition spec's fields must be a list"))?;
    list.iter()
        .map(|f| {
            let text = |key: &str| f.get(key).and_then(Json::as_str).map(str::to_string);
            Ok(SpecField {
                name: text("name").ok_or_else(|| bad(path, "a partition field without a name"))?,
                source_id: json_i64(f, "source-id")
                    .or_else(|| {
                        // Format 3 may name several sources; identity has one.
                        f.get("source-ids")?.as_array()?.first()?.as_i64()
                    })
                    .ok_or_else(|| bad(path, "a partition field without a source-id"))?,
                transform: text("transform").unwrap_or_default(),
            })
        })
        .collect()
}

/// The table's partition specs by id.
fn partition_specs(mf: &Path, meta: &Json) -> Result<HashMap<i64, Arc<[SpecField]>>> {
    let mut specs = HashMap::new();
    for spec in meta
        .get("partition-specs")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        let id = json_i64(spec, "spec-id")
            .ok_or_else(|| bad(mf, "a partition spec without a spec-id"))?;
        let fields = spec.get("fields").unwrap_or(&Json::Null);
        specs.insert(id, spec_fields(mf, fields)?);
    }
    // Format 1: the one spec may be given as a bare list.
    if let Some(fields) = meta.get("partition-spec") {
        let id = json_i64(meta, "default-spec-id").unwrap_or(0);
        if let std::collections::hash_map::Entry::Vacant(slot) = specs.entry(id) {
            slot.insert(spec_fields(mf, fields)?);
        }
    }
    Ok(specs)
}

/// Reads the table at `path` (see [`locate`]) as of `snapshot_id` (None:
/// the metadata's current snapshot).
pub(crate) fn open(
    path: &Path,
    snapshot_id: Option<SnapshotId>,
    fs: &Fs,
) -> Result<IcebergSnapshot> {
    let (metadata_file, root) = locate(fs, path)?;
    let meta = read_json(fs, &metadata_file)?;
    let mf = metadata_file.as_path();
    let format_version = json_i64(&meta, "format-version").unwrap_or(1);
    if !(1..=3).contains(&format_version) {
        return Err(bad(
            mf,
            format!("format version {format_version}, which recon does not know"),
        ));
    }
    let recorded = meta
        .get("location")
        .and_then(Json::as_str)
        .ok_or_else(|| bad(mf, "no table location"))?;
    let locations = Locations {
        recorded: strip_file_scheme(recorded)
            .trim_end_matches('/')
            .to_string(),
        root,
        fs,
    };
    let snapshot = find_snapshot(mf, &meta, snapshot_id)?;
    let schema = snapshot_schema(mf, &meta, snapshot)?;
    let columns = struct_fields(mf, schema)?;
    let name_mapping = name_mapping(mf, &meta)?;
    let mut result = IcebergSnapshot {
        metadata_file: metadata_file.clone(),
        snapshot_id: match snapshot {
            Some(s) => json_id(mf, s, "snapshot-id")?,
            None => None,
        },
        columns,
        name_mapping,
        files: Vec::new(),
        equality_deletes: Vec::new(),
    };
    let Some(snapshot) = snapshot else {
        return Ok(result);
    };
    let manifests = manifests(mf, snapshot, &locations)?;
    let specs = partition_specs(mf, &meta)?;
    let entries = manifest_entries(fs, &manifests, &specs)?;
    let id = result.snapshot_id.unwrap_or_default();
    let data: Vec<&Entry> = entries.iter().filter(|e| e.content == 0).collect();
    for d in &data {
        if FileFormat::of(&d.format).is_none() {
            return Err(bad(
                &d.manifest,
                format!(
                    "data file {} is {}: recon reads Iceberg data files in Parquet and ORC",
                    d.written_path, d.format
                ),
            ));
        }
    }
    let deletes = position_deletes(&entries, id, &locations)?;
    let equality: Vec<&Entry> = entries.iter().filter(|e| e.content == 2).collect();
    result.equality_deletes = equality
        .iter()
        .map(|e| equality_delete(e, &result.columns, id, &locations))
        .collect::<Result<_>>()?;
    result.files = live_files(
        mf,
        id,
        &result.columns,
        data,
        &equality,
        &deletes,
        &locations,
    )?;
    Ok(result)
}

/// The snapshot `snapshot_id` names, else the metadata's current one (None:
/// the table has no snapshot yet).
fn find_snapshot<'m>(
    mf: &Path,
    meta: &'m Json,
    snapshot_id: Option<SnapshotId>,
) -> Result<Option<&'m Json>> {
    let snapshots: Vec<(&Json, Option<SnapshotId>)> = meta
        .get("snapshots")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .map(|s| Ok((s, json_id(mf, s, "snapshot-id")?)))
                .collect::<Result<_>>()
        })
        .transpose()?
        .unwrap_or_default();
    let wanted = match snapshot_id {
        Some(id) => Some(id),
        // -1 is how format 1 writers say "no snapshot".
        None => json_id(mf, meta, "current-snapshot-id")?.filter(|&id| id != -1),
    };
    let snapshot = match wanted {
        None => None,
        Some(id) => Some(
            snapshots
                .iter()
                .find(|(_, s)| *s == Some(id))
                .map(|(s, _)| *s)
                .ok_or_else(|| {
                    let known: Vec<String> = snapshots
                        .iter()
                        .filter_map(|(_, s)| *s)
                        .map(|i| i.to_string())
                        .collect();
                    bad(
                        mf,
                        format!(
                            "snapshot {id} is not in this metadata (its snapshots: {})",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    )
                })?,
        ),
    };
    Ok(snapshot)
}

/// The schema `snapshot` was written with, as time travel reads it (the
/// current schema when there is no snapshot).
fn snapshot_schema<'m>(mf: &Path, meta: &'m Json, snapshot: Option<&Json>) -> Result<&'m Json> {
    let schema_id = snapshot
        .and_then(|s| json_i64(s, "schema-id"))
        .or_else(|| json_i64(meta, "current-schema-id"));
    let schema = match (meta.get("schemas").and_then(Json::as_array), schema_id) {
        (Some(list), Some(id)) => list
            .iter()
            .find(|s| json_i64(s, "schema-id") == Some(id))
            .ok_or_else(|| bad(mf, format!("schema {id} is not in this metadata")))?,
        _ => meta.get("schema").ok_or_else(|| bad(mf, "no schema"))?,
    };
    Ok(schema)
}

/// A snapshot's manifests: (path, sequence number). Whether a file is data
/// or deletes is read from each manifest entry.
fn manifests(mf: &Path, snapshot: &Json, locations: &Locations) -> Result<Vec<ManifestRef>> {
    let mut manifests = Vec::new();
    if let Some(list) = snapshot.get("manifest-list").and_then(Json::as_str) {
        let list_path = locations.resolve(mf, list)?;
        for m in read_avro(locations.fs, &list_path)?.0 {
            let written = avro_str(&m, "manifest_path")
                .ok_or_else(|| bad(&list_path, "a manifest list entry without manifest_path"))?;
            manifests.push(ManifestRef {
                path: locations.resolve(&list_path, written)?,
                sequence: avro_i64(&m, "sequence_number").unwrap_or(0),
                spec_id: avro_i64(&m, "partition_spec_id"),
            });
        }
    } else if let Some(list) = snapshot.get("manifests").and_then(Json::as_array) {
        // Format 1 may list the manifests in the snapshot itself.
        for m in list {
            let written = m
                .as_str()
                .ok_or_else(|| bad(mf, "a snapshot's manifests must be paths"))?;
            manifests.push(ManifestRef {
                path: locations.resolve(mf, written)?,
                sequence: 0,
                spec_id: None,
            });
        }
    } else {
        return Err(bad(mf, "the snapshot has no manifest list"));
    }
    Ok(manifests)
}

/// The files the manifests list as live (data and deletes), each with the
/// sequence number it applies at.
fn manifest_entries(
    fs: &Fs,
    manifests: &[ManifestRef],
    specs: &HashMap<i64, Arc<[SpecField]>>,
) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for m in manifests {
        let (manifest, manifest_sequence) = (&m.path, &m.sequence);
        let (records, header) = read_avro(fs, manifest)?;
        let (spec_id, spec) = manifest_spec(manifest, m.spec_id, &header, specs)?;
        for e in records {
            let status = avro_i64(&e, "status").unwrap_or(1);
            if status == 2 {
                continue; // deleted in this snapshot
            }
            let file = avro_field(&e, "data_file")
                .ok_or_else(|| bad(manifest, "a manifest entry without data_file"))?;
            let written_path = avro_str(file, "file_path")
                .ok_or_else(|| bad(manifest, "a data file without file_path"))?
                .to_string();
            // Added entries inherit the manifest's sequence number.
            let sequence = match avro_i64(&e, "sequence_number") {
                Some(s) => s,
                None if status == 1 => *manifest_sequence,
                None => 0,
            };
            let equality_ids = match avro_field(file, "equality_ids") {
                Some(Value::Array(ids)) => ids
                    .iter()
                    .filter_map(|v| match v {
                        Value::Int(i) => Some(*i as i64),
                        Value::Long(i) => Some(*i),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            entries.push(Entry {
                content: avro_i64(file, "content").unwrap_or(0),
                record_count: avro_i64(file, "record_count"),
                format: avro_str(file, "file_format")
                    .unwrap_or("PARQUET")
                    .to_ascii_uppercase(),
                written_path,
                sequence,
                equality_ids,
                manifest: manifest.clone(),
                partition: match avro_field(file, "partition") {
                    Some(Value::Record(fields)) => fields.clone(),
                    _ => Vec::new(),
                },
                spec_id,
                spec: spec.clone(),
            });
        }
    }
    Ok(entries)
}

/// Position deletes by the data file they name, as written: (position,
/// sequence number) pairs. Deletion vectors are refused; equality deletes
/// are read by [`equality_delete`].
fn position_deletes(
    entries: &[Entry],
    id: SnapshotId,
    locations: &Locations,
) -> Result<HashMap<String, Vec<(u64, i64)>>> {
    let mut deletes: HashMap<String, Vec<(u64, i64)>> = HashMap::new();
    for del in entries.iter().filter(|e| e.content != 0) {
        if del.content != 1 && del.content != 2 {
            return Err(bad(
                &del.manifest,
                format!(
                    "file {} has content type {}, which recon does not know",
                    del.written_path, del.content
                ),
            ));
        }
        if del.format == "PUFFIN" {
            return Err(bad(
                &del.manifest,
                format!("snapshot {id} has deletion vectors (format 3, {}), which recon does not apply yet", del.written_path),
            ));
        }
        if del.content == 2 {
            continue;
        }
        let Some(format) = FileFormat::of(&del.format) else {
            return Err(bad(
                &del.manifest,
                format!(
                    "position delete file {} is {}: recon reads Parquet and ORC delete files",
                    del.written_path, del.format
                ),
            ));
        };
        let local = locations.resolve(&del.manifest, &del.written_path)?;
        read_position_deletes(locations.fs, &local, format, del.sequence, &mut deletes)?;
    }
    Ok(deletes)
}

/// The snapshot's data files, sorted by path (so locators and evidence
/// order do not depend on manifest order), with the positions deletes of
/// the same or a later sequence number remove.
fn live_files(
    mf: &Path,
    id: SnapshotId,
    columns: &[Column],
    data: Vec<&Entry>,
    equality: &[&Entry],
    deletes: &HashMap<String, Vec<(u64, i64)>>,
    locations: &Locations,
) -> Result<Vec<LiveFile>> {
    let mut files = Vec::with_capacity(data.len());
    for d in data {
        let path = locations.resolve(&d.manifest, &d.written_path)?;
        let key = strip_file_scheme(&d.written_path);
        let deleted = deletes.get(key).and_then(|list| {
            let mut rows: Vec<u64> = list
                .iter()
                .filter(|(_, seq)| *seq >= d.sequence)
                .map(|(pos, _)| *pos)
                .collect();
            rows.sort_unstable();
            rows.dedup();
            (!rows.is_empty()).then_some(rows)
        });
        let identity = identity_values(&d.manifest, d, columns)?;
        files.push(LiveFile {
            remote: locations.fs.remote(&path)?,
            path,
            format: FileFormat::of(&d.format).ok_or_else(|| {
                ReconError::Internal(format!("data file format {} not checked", d.format))
            })?,
            record_count: d.record_count.and_then(|n| u64::try_from(n).ok()),
            deleted,
            identity,
            equality: (0..equality.len())
                .filter(|&e| equality[e].deletes_from(d))
                .collect(),
        });
    }
    // Sorted paths: locators and evidence order do not depend on manifest order.
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for w in files.windows(2) {
        if w[0].path == w[1].path {
            return Err(bad(
                mf,
                format!(
                    "snapshot {id} lists data file {} twice",
                    w[0].path.display()
                ),
            ));
        }
    }
    Ok(files)
}

/// The spec a manifest's files were written with: by the manifest list's
/// `partition_spec_id`, else the manifest header's `partition-spec-id`,
/// else the header's own copy of the spec (`partition-spec`).
fn manifest_spec(
    manifest: &Path,
    listed: Option<i64>,
    header: &AvroHeader,
    specs: &HashMap<i64, Arc<[SpecField]>>,
) -> Result<(Option<i64>, Arc<[SpecField]>)> {
    let text = |key: &str| header.get(key).and_then(|v| std::str::from_utf8(v).ok());
    let id = listed.or_else(|| text("partition-spec-id")?.trim().parse().ok());
    if let Some(spec) = id.and_then(|id| specs.get(&id)) {
        return Ok((id, spec.clone()));
    }
    if let Some(json) = text("partition-spec") {
        let fields: Json = serde_json::from_str(json)
            .map_err(|e| bad(manifest, format!("the manifest's partition-spec: {e}")))?;
        return Ok((id, spec_fields(manifest, &fields)?));
    }
    match id {
        // A spec id the metadata does not hold: its partition values
        // cannot be placed, so a file relying on them would read wrong.
        Some(id) => Err(bad(
            manifest,
            format!("the manifest was written with partition spec {id}, which the table metadata does not hold"),
        )),
        None => Ok((None, Arc::from(Vec::new()))),
    }
}

/// An equality delete file of the snapshot, checked against what recon
/// applies exactly: Parquet, and columns of the snapshot's schema whose
/// equality is recon's value equality. Floats are refused: Iceberg's Java
/// reader compares them with `Double.compare` (-0.0 is not 0.0), recon's
/// encoding makes -0.0 equal 0.0, and a delete applied by the other rule
/// would remove other rows.
fn equality_delete(
    del: &Entry,
    columns: &[Column],
    id: SnapshotId,
    locations: &Locations,
) -> Result<EqualityDelete> {
    let refuse = |why: String| {
        bad(
            &del.manifest,
            format!(
                "equality delete file {} of snapshot {id} {why}",
                del.written_path
            ),
        )
    };
    let Some(format) = FileFormat::of(&del.format) else {
        return Err(refuse(format!(
            "is {}: recon reads Parquet and ORC delete files",
            del.format
        )));
    };
    if del.equality_ids.is_empty() {
        return Err(refuse("names no equality_ids".into()));
    }
    let mut ids = Vec::with_capacity(del.equality_ids.len());
    for &i in &del.equality_ids {
        let column = columns.iter().find(|c| i64::from(c.id) == i).ok_or_else(|| {
            refuse(format!(
                "compares field id {i}, which the snapshot's schema does not hold (a dropped column): recon does not apply it"
            ))
        })?;
        let ty = column.field.data_type();
        if ty.is_nested() || ty.is_floating() {
            return Err(refuse(format!(
                "compares column {} of type {ty}: recon applies equality deletes on primitive, non-floating columns only",
                column.field.name()
            )));
        }
        ids.push(column.id);
    }
    ids.sort_unstable();
    ids.dedup();
    let path = locations.resolve(&del.manifest, &del.written_path)?;
    Ok(EqualityDelete {
        remote: locations.fs.remote(&path)?,
        path,
        format,
        ids,
    })
}

/// The identity partition values of data file `d`, by source field id, as
/// one-row arrays of the columns' types (the spec's column projection: a
/// field id missing from a data file takes its identity partition value).
fn identity_values(
    manifest: &Path,
    d: &Entry,
    columns: &[Column],
) -> Result<HashMap<i32, ArrayRef>> {
    let mut out = HashMap::new();
    for (k, f) in d.spec.iter().enumerate() {
        if f.transform != "identity" {
            continue;
        }
        // Top-level columns only: a nested source field is read from the file.
        let Some(column) = columns.iter().find(|c| i64::from(c.id) == f.source_id) else {
            continue;
        };
        // The tuple's fields are named as the spec names them, in its order.
        let value = d
            .partition
            .iter()
            .find(|(n, _)| *n == f.name)
            .or_else(|| d.partition.get(k))
            .map(|(_, v)| v);
        let Some(value) = value else {
            continue;
        };
        let array = partition_array(value, column.field.data_type()).map_err(|why| {
            bad(
                manifest,
                format!(
                    "data file {}: partition value of {} {why}",
                    d.written_path,
                    column.field.name()
                ),
            )
        })?;
        out.insert(column.id, array);
    }
    Ok(out)
}

/// An Avro partition value as a one-row array of `ty`, exactly (the
/// spec's single-value binary forms, with the type promotions Iceberg
/// allows: int to long, float to double, a wider decimal of the same
/// scale), or why not.
fn partition_array(value: &Value, ty: &DataType) -> std::result::Result<ArrayRef, String> {
    use arrow::array::*;
    let value = match value {
        Value::Union(_, inner) => inner.as_ref(),
        v => v,
    };
    let array: ArrayRef = match (value, ty) {
        (Value::Null, _) => new_null_array(ty, 1),
        (Value::Boolean(b), DataType::Boolean) => Arc::new(BooleanArray::from(vec![*b])),
        (Value::Int(i), DataType::Int32) => Arc::new(Int32Array::from(vec![*i])),
        (Value::Int(i), DataType::Int64) => Arc::new(Int64Array::from(vec![i64::from(*i)])),
        (Value::Long(i), DataType::Int64) => Arc::new(Int64Array::from(vec![*i])),
        (Value::Float(x), DataType::Float32) => Arc::new(Float32Array::from(vec![*x])),
        (Value::Float(x), DataType::Float64) => Arc::new(Float64Array::from(vec![f64::from(*x)])),
        (Value::Double(x), DataType::Float64) => Arc::new(Float64Array::from(vec![*x])),
        (Value::String(t), DataType::Utf8) => Arc::new(StringArray::from(vec![t.as_str()])),
        (Value::Bytes(b), DataType::Binary) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
        (Value::Date(d) | Value::Int(d), DataType::Date32) => Arc::new(Date32Array::from(vec![*d])),
        (Value::TimeMicros(t) | Value::Long(t), DataType::Time64(TimeUnit::Microsecond)) => {
            Arc::new(Time64MicrosecondArray::from(vec![*t]))
        }
        (
            Value::TimestampMicros(t) | Value::LocalTimestampMicros(t) | Value::Long(t),
            DataType::Timestamp(TimeUnit::Microsecond, tz),
        ) => Arc::new(TimestampMicrosecondArray::from(vec![*t]).with_timezone_opt(tz.clone())),
        (
            Value::TimestampNanos(t) | Value::LocalTimestampNanos(t) | Value::Long(t),
            DataType::Timestamp(TimeUnit::Nanosecond, tz),
        ) => Arc::new(TimestampNanosecondArray::from(vec![*t]).with_timezone_opt(tz.clone())),
        (Value::Uuid(u), DataType::FixedSizeBinary(16)) => Arc::new(
            FixedSizeBinaryArray::try_from_iter(std::iter::once(u.as_bytes().as_slice()))
                .map_err(|e| e.to_string())?,
        ),
        (Value::Fixed(n, b), DataType::FixedSizeBinary(w)) if i32::try_from(*n) == Ok(*w) => {
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(std::iter::once(b.as_slice()))
                    .map_err(|e| e.to_string())?,
            )
        }
        (Value::Decimal(d), DataType::Decimal128(p, s)) => {
            let bytes: Vec<u8> = d.try_into().map_err(|e| format!("{e}"))?;
            decimal_array(&bytes, *p, *s)?
        }
        (Value::Fixed(_, b) | Value::Bytes(b), DataType::Decimal128(p, s)) => {
            decimal_array(b, *p, *s)?
        }
        (v, _) => return Err(format!("{v:?} cannot be read as {ty}")),
    };
    Ok(array)
}

/// An `initial-default` in the spec's JSON single-value form as a one-row
/// array of `ty`, exactly, or why not. Nested defaults are refused: recon
/// reads nested columns only in the shape the file holds.
fn default_array(value: &Json, ty: &DataType) -> std::result::Result<ArrayRef, String> {
    use arrow::array::*;
    use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
    let text = || {
        value
            .as_str()
            .ok_or_else(|| format!("{ty} defaults are JSON strings"))
    };
    let int = || {
        value
            .as_i64()
            .ok_or_else(|| "not a whole number".to_string())
    };
    let hex = |t: &str| -> std::result::Result<Vec<u8>, String> {
        if !t.len().is_multiple_of(2) || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("not a hexadecimal string".into());
        }
        (0..t.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&t[i..i + 2], 16).map_err(|e| e.to_string()))
            .collect()
    };
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    let micros = |t: NaiveDateTime| -> std::result::Result<i64, String> {
        (t - epoch.and_time(NaiveTime::MIN))
            .num_microseconds()
            .ok_or_else(|| "out of range".to_string())
    };
    let array: ArrayRef = match ty {
        DataType::Boolean => Arc::new(BooleanArray::from(vec![value
            .as_bool()
            .ok_or("not true or false")?])),
        DataType::Int32 => Arc::new(Int32Array::from(vec![
            i32::try_from(int()?).map_err(|_| "out of the int range")?
        ])),
        DataType::Int64 => Arc::new(Int64Array::from(vec![int()?])),
        DataType::Float32 | DataType::Float64 => {
            // The number's shortest text, parsed at the column's width: a
            // float default read through f64 would round twice.
            let n = value.as_number().ok_or("not a number")?.to_string();
            if *ty == DataType::Float32 {
                Arc::new(Float32Array::from(vec![n
                    .parse::<f32>()
                    .map_err(|e| e.to_string())?]))
            } else {
                Arc::new(Float64Array::from(vec![n
                    .parse::<f64>()
                    .map_err(|e| e.to_string())?]))
            }
        }
        DataType::Utf8 => Arc::new(StringArray::from(vec![text()?])),
        DataType::Binary => Arc::new(BinaryArray::from(vec![hex(text()?)?.as_slice()])),
        DataType::FixedSizeBinary(16) if text()?.contains('-') => {
            let digits: String = text()?.chars().filter(|&c| c != '-').collect();
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(std::iter::once(hex(&digits)?))
                    .map_err(|e| e.to_string())?,
            )
        }
        DataType::FixedSizeBinary(w) => {
            let b = hex(text()?)?;
            if i32::try_from(b.len()) != Ok(*w) {
                return Err(format!("{} bytes, not {w}", b.len()));
            }
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(std::iter::once(b.as_slice()))
                    .map_err(|e| e.to_string())?,
            )
        }
        DataType::Date32 => {
            let d = NaiveDate::parse_from_str(text()?, "%Y-%m-%d").map_err(|e| e.to_string())?;
            let days = (d - epoch).num_days();
            Arc::new(Date32Array::from(vec![
                i32::try_from(days).map_err(|_| "out of range")?
            ]))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            let t = NaiveTime::parse_from_str(text()?, "%H:%M:%S%.f").map_err(|e| e.to_string())?;
            let us = micros(epoch.and_time(t))?;
            if t.format("%.f").to_string().len() > 7 {
                return Err("finer than microseconds".into());
            }
            Arc::new(Time64MicrosecondArray::from(vec![us]))
        }
        DataType::Timestamp(unit, tz) => {
            let t = text()?;
            let at = match tz {
                Some(_) => chrono::DateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f%:z")
                    .map_err(|e| e.to_string())?
                    .naive_utc(),
                None => NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
                    .map_err(|e| e.to_string())?,
            };
            let nanos = (at - epoch.and_time(NaiveTime::MIN))
                .num_nanoseconds()
                .ok_or("out of range")?;
            match unit {
                TimeUnit::Microsecond if nanos % 1000 == 0 => Arc::new(
                    TimestampMicrosecondArray::from(vec![nanos / 1000])
                        .with_timezone_opt(tz.clone()),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    TimestampNanosecondArray::from(vec![nanos]).with_timezone_opt(tz.clone()),
                ),
                _ => return Err("finer than the column's unit".into()),
            }
        }
        DataType::Decimal128(p, sc) => {
            let t = text()?;
            let (neg, digits) = match t.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, t),
            };
            let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
            let scale = usize::try_from(*sc).map_err(|_| "a negative scale")?;
            if whole.is_empty()
                || !whole
                    .bytes()
                    .chain(frac.bytes())
                    .all(|b| b.is_ascii_digit())
                || frac.len() > scale
            {
                return Err(format!("not a decimal of scale {sc}"));
            }
            let unscaled: i128 = format!("{whole}{frac:0<scale$}")
                .parse()
                .map_err(|_| "too many digits")?;
            decimal_one(if neg { -unscaled } else { unscaled }, *p, *sc)?
        }
        _ => return Err(format!("recon applies no initial default to a {ty} column")),
    };
    Ok(array)
}

/// A decimal's unscaled value, big-endian two's complement, as a one-row
/// Decimal128 array, if it fits the precision.
fn decimal_array(bytes: &[u8], p: u8, s: i8) -> std::result::Result<ArrayRef, String> {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0 };
    let cut = bytes.len().saturating_sub(16);
    if bytes[..cut].iter().any(|&b| b != fill) {
        return Err(format!(
            "a decimal of {} bytes does not fit decimal({p},{s})",
            bytes.len()
        ));
    }
    let mut wide = [fill; 16];
    wide[16 - (bytes.len() - cut)..].copy_from_slice(&bytes[cut..]);
    decimal_one(i128::from_be_bytes(wide), p, s)
}

/// One unscaled decimal value as a one-row Decimal128 array, if it fits
/// the precision.
fn decimal_one(unscaled: i128, p: u8, s: i8) -> std::result::Result<ArrayRef, String> {
    let array = arrow::array::Decimal128Array::from(vec![unscaled])
        .with_precision_and_scale(p, s)
        .map_err(|e| e.to_string())?;
    array
        .validate_decimal_precision(p)
        .map_err(|_| format!("{unscaled} (unscaled) does not fit decimal({p},{s})"))?;
    Ok(Arc::new(array))
}

/// Adds the (position, sequence number) pairs of one position delete file.
fn read_position_deletes(
    fs: &Fs,
    path: &Path,
    format: FileFormat,
    sequence: i64,
    into: &mut HashMap<String, Vec<(u64, i64)>>,
) -> Result<()> {
    // Through the block reader, as data files are read: one path for
    // Parquet and ORC.
    let block = format.open(path, fs.remote(path)?.as_ref(), Default::default())?;
    let find = |name: &str| block.schema.fields().iter().position(|f| f.name() == name);
    let (Some(fp), Some(pos)) = (find("file_path"), find("pos")) else {
        return Err(ReconError::input(
            path,
            "is not an Iceberg position delete file: it has no file_path and pos columns",
        ));
    };
    let (projected, fp, pos) = if fp < pos {
        ([fp, pos], 0, 1)
    } else {
        ([pos, fp], 1, 0)
    };
    for unit in block.units(0) {
        block.read(path, &unit, &projected, 8192, &mut |cols, _, _| {
            take_position_deletes(path, &cols[fp], &cols[pos], sequence, into)
        })?;
    }
    Ok(())
}

/// Adds one batch of a position delete file (its `file_path` and `pos`
/// columns) to `into`.
fn take_position_deletes(
    path: &Path,
    paths: &ArrayRef,
    positions: &ArrayRef,
    sequence: i64,
    into: &mut HashMap<String, Vec<(u64, i64)>>,
) -> Result<()> {
    // The block reader keeps a dictionary-encoded column (as file_path and
    // pos often are) as an Arrow dictionary: its values, exactly.
    let values = |a: &ArrayRef| match a.data_type() {
        DataType::Dictionary(_, v) => {
            arrow::compute::cast(a, v).map_err(|e| ReconError::arrow(path, e))
        }
        _ => Ok(a.clone()),
    };
    let (paths, positions) = (values(paths)?, values(positions)?);
    let paths = paths.as_any().downcast_ref::<StringArray>();
    let positions = positions.as_any().downcast_ref::<Int64Array>();
    let (Some(paths), Some(positions)) = (paths, positions) else {
        return Err(ReconError::input(
            path,
            "position delete file: file_path must be a string and pos a long",
        ));
    };
    if paths.null_count() > 0 || positions.null_count() > 0 {
        return Err(ReconError::input(
            path,
            "position delete file holds a NULL file_path or pos",
        ));
    }
    for i in 0..paths.len() {
        let p = positions.value(i);
        if p < 0 {
            return Err(ReconError::input(
                path,
                format!("position delete of a negative position {p}"),
            ));
        }
        into.entry(strip_file_scheme(paths.value(i)).to_string())
            .or_default()
            .push((p as u64, sequence));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_name_a_path_and_maybe_a_snapshot() {
        assert_eq!(
            parse_source("iceberg:lake/orders@123"),
            Some(Ok((PathBuf::from("lake/orders"), Some(123))))
        );
        assert_eq!(
            parse_source("iceberg:m/00003-x.metadata.json"),
            Some(Ok((PathBuf::from("m/00003-x.metadata.json"), None)))
        );
        assert!(parse_source("iceberg:t@main").unwrap().is_err());
        assert_eq!(parse_source("delta:t"), None);
    }

    #[test]
    fn snapshot_ids_above_the_signed_range_are_ids_not_errors() {
        // duckdb-iceberg's equality_delete_extra_column writes this id.
        assert_eq!(
            parse_source("iceberg:t@9876543210123456789"),
            Some(Ok((PathBuf::from("t"), Some(9876543210123456789))))
        );
        assert_eq!(
            parse_source("iceberg:t@-9223372036854775808"),
            Some(Ok((PathBuf::from("t"), Some(i64::MIN.into()))))
        );
        assert!(parse_source("iceberg:t@18446744073709551616")
            .unwrap()
            .is_err());
        let p = Path::new("m.json");
        let meta: Json =
            serde_json::from_str(r#"{"a": 9876543210123456789, "b": 1.5, "c": null}"#).unwrap();
        assert_eq!(json_id(p, &meta, "a").unwrap(), Some(9876543210123456789));
        assert!(json_id(p, &meta, "b").is_err());
        assert_eq!(json_id(p, &meta, "c").unwrap(), None);
        assert_eq!(json_id(p, &meta, "d").unwrap(), None);
    }

    #[test]
    fn metadata_names_carry_versions() {
        assert_eq!(metadata_version("00003-6c1f.metadata.json"), Some(3));
        assert_eq!(metadata_version("v12.metadata.json"), Some(12));
        assert_eq!(metadata_version("v2.gz.metadata.json"), Some(2));
        assert_eq!(metadata_version("x-1.metadata.json"), None);
    }

    #[test]
    fn locations_rebase_onto_the_given_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/a.parquet"), b"x").unwrap();
        let fs = Fs::new(&[]);
        let l = Locations {
            recorded: "/warehouse/orders".into(),
            root: dir.path().to_path_buf(),
            fs: &fs,
        };
        let m = Path::new("m.json");
        for written in [
            "/warehouse/orders/data/a.parquet",
            "file:/warehouse/orders/data/a.parquet",
            "file:///warehouse/orders/data/a.parquet",
        ] {
            assert_eq!(
                l.resolve(m, written).unwrap(),
                dir.path().join("data/a.parquet")
            );
        }
        let e = l.resolve(m, "s3://bucket/other/b.parquet").unwrap_err();
        assert!(e.to_string().contains("s3://bucket/other/b.parquet"), "{e}");
    }

    #[test]
    fn dot_slash_locations_resolve_like_plain_relative_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/a.parquet"), b"x").unwrap();
        let fs = Fs::new(&[]);
        // The recorded location as open() normalizes it, from either spelling.
        for recorded in ["./warehouse/orders", "warehouse/orders"] {
            let l = Locations {
                recorded: strip_file_scheme(recorded).into(),
                root: dir.path().to_path_buf(),
                fs: &fs,
            };
            for written in [
                "warehouse/orders/data/a.parquet",
                "./warehouse/orders/data/a.parquet",
                "././warehouse/orders/data/a.parquet",
                "file:./warehouse/orders/data/a.parquet",
            ] {
                assert_eq!(
                    l.resolve(Path::new("m.json"), written).unwrap(),
                    dir.path().join("data/a.parquet"),
                    "{recorded} {written}"
                );
            }
        }
        // Position deletes name files by the same key either way.
        assert_eq!(strip_file_scheme("./a/b.parquet"), "a/b.parquet");
        assert_eq!(strip_file_scheme("/a/b.parquet"), "/a/b.parquet");
    }

    #[test]
    fn types_map_and_widen_exactly() {
        let widening =
            |a: &DataType, b: &DataType| crate::input::types::widening(a, b, Default::default());
        let p = Path::new("m.json");
        assert_eq!(
            arrow_type(p, "c", &Json::from("decimal(10, 2)")).unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert!(arrow_type(p, "c", &Json::from("variant")).is_err());
        assert_eq!(
            widening(&DataType::Int32, &DataType::Int64),
            Some(Some(DataType::Int64))
        );
        assert_eq!(
            widening(&DataType::Decimal64(10, 2), &DataType::Decimal128(12, 2)),
            Some(Some(DataType::Decimal128(12, 2)))
        );
        assert!(widening(&DataType::Int64, &DataType::Int32).is_none());
        assert!(widening(&DataType::Decimal128(10, 2), &DataType::Decimal128(10, 3)).is_none());
        assert!(widening(&DataType::Float64, &DataType::Decimal128(10, 2)).is_none());
    }
}

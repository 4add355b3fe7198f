//! Object stores: files of a table in S3, Google Cloud Storage, Azure Blob
//! Storage (ADLS Gen2) or behind an HTTPS server, read through the
//! `object_store` crate with ranged GETs.
//!
//! A remote file is an [`Object`]: its URL, size and ETag, taken once when
//! the table is opened. Every later request carries `If-Match: <ETag>`, so a
//! file replaced during the run fails the request (HTTP 412) instead of
//! mixing two versions into one answer.
//!
//! Reads come in two shapes, both behind [`super::Blob`], which is what the block
//! and text readers open instead of a `File`:
//! - Parquet asks for byte ranges (`ChunkReader`). Before a row group is
//!   decoded, [`super::Blob::prefetch`] fetches the ranges it will need — whole
//!   column chunks for a scan, only the selected pages (from the offset
//!   index) for a targeted second pass or an evidence fetch — concurrently
//!   and coalesced, so a 2-thread run keeps many requests in flight.
//! - Arrow IPC and text are read as a stream (`Read` + `Seek`): blocks
//!   that double from 256 KiB to 8 MiB while reading forward, with the next
//!   block always in flight.
//!
//! Transient failures (5xx, timeouts, connection resets) are retried by
//! object_store with exponential backoff, at most [`RETRIES`] times.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as Key;
use object_store::{
    BackoffConfig, GetOptions, GetRange, ObjectStore, ObjectStoreExt, ObjectStoreScheme,
    RetryConfig,
};
use url::Url;

use crate::error::{ReconError, Result};

/// Most retries of one request (object_store's backoff: 100 ms doubling, at
/// most 15 s apart, all within `RETRY_WINDOW`).
pub(crate) const RETRIES: usize = 5;
const RETRY_WINDOW: Duration = Duration::from_secs(120);
/// Requests in flight for one prefetch.
const CONCURRENT: usize = 8;
/// Ranges closer than this are fetched in one request...
const COALESCE: u64 = 1 << 20;
/// ...of at most this many bytes, so a row group's chunks arrive over
/// several connections at once.
const MAX_REQUEST: u64 = 16 << 20;
/// The first and the largest block of a streamed read.
pub(super) const FIRST_BLOCK: u64 = 256 << 10;
pub(super) const MAX_BLOCK: u64 = 8 << 20;

/// URL schemes read through an object store.
const SCHEMES: &[&str] = &[
    "s3", "s3a", "gs", "az", "adl", "azure", "abfs", "abfss", "http", "https",
];

/// True when `spec` is a URL of an object store (`s3://…`, `https://…`).
pub(crate) fn is_url(spec: &str) -> bool {
    spec.split_once("://")
        .is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// The runtime every object-store request runs on: two workers are enough
/// to keep dozens of requests in flight; recon's threads wait on it.
pub(super) fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("recon-store")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| ReconError::Internal(format!("cannot start the object-store runtime: {e}")))
}

/// Runs `f` to completion on the object-store runtime.
pub(super) fn block_on<T, E>(
    f: impl std::future::Future<Output = std::result::Result<T, E>>,
) -> Result<std::result::Result<T, E>> {
    Ok(runtime()?.block_on(f))
}

/// The stores of one table, by `scheme://bucket`, built once with the
/// table's storage options.
pub(crate) struct Stores {
    options: Vec<(String, String)>,
    built: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
}

impl Stores {
    pub(crate) fn new(options: &[(String, String)]) -> Stores {
        Stores {
            options: options.to_vec(),
            built: Mutex::new(HashMap::new()),
        }
    }

    /// The store holding `url`, and the object key within it.
    pub(crate) fn resolve(&self, url: &str) -> Result<(Arc<dyn ObjectStore>, Key, Url)> {
        let parsed = Url::parse(url).map_err(|e| input(url, format!("not a valid URL: {e}")))?;
        let (scheme, key) = ObjectStoreScheme::parse(&parsed)
            .map_err(|e| input(url, format!("not an object-store URL: {e}")))?;
        let key = Key::parse(key).map_err(|e| input(url, format!("bad object path: {e}")))?;
        let root = format!("{}://{}", parsed.scheme(), parsed.authority());
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = built.get(&root) {
            return Ok((s.clone(), key, parsed));
        }
        let store = self.build(scheme, &parsed)?;
        built.insert(root, store.clone());
        Ok((store, key, parsed))
    }

    fn build(&self, scheme: ObjectStoreScheme, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
        use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
        use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
        use object_store::http::HttpBuilder;
        use object_store::ClientConfigKey;
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: RETRIES,
            retry_timeout: RETRY_WINDOW,
        };
        let bad_key = |k: &str| {
            ReconError::Usage(format!(
                "--storage-option {k}=…: not an option of {} (object_store's keys, as in delta-rs: see docs/object-stores.md)",
                url.scheme()
            ))
        };
        // Each builder: the cloud's environment, the URL, our retries, then
        // the options under the builder's own config keys (unknown: refused).
        macro_rules! configured {
            ($builder:expr, $key:ty) => {{
                let mut b = $builder.with_retry(retry);
                for (k, v) in &self.options {
                    let key = <$key>::from_str(&k.to_ascii_lowercase()).map_err(|_| bad_key(k))?;
                    b = b.with_config(key, v);
                }
                b.build().map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
            }};
        }
        let built = match scheme {
            ObjectStoreScheme::AmazonS3 => configured!(
                AmazonS3Builder::from_env().with_url(url.as_str()),
                AmazonS3ConfigKey
            ),
            ObjectStoreScheme::GoogleCloudStorage => configured!(
                GoogleCloudStorageBuilder::from_env().with_url(url.as_str()),
                GoogleConfigKey
            ),
            ObjectStoreScheme::MicrosoftAzure => configured!(
                MicrosoftAzureBuilder::from_env().with_url(url.as_str()),
                AzureConfigKey
            ),
            ObjectStoreScheme::Http => configured!(
                HttpBuilder::new().with_url(&url[..url::Position::BeforePath]),
                ClientConfigKey
            ),
            _ => {
                return Err(input(
                    url.as_str(),
                    "is not an s3://, gs://, az://, abfss:// or https:// URL",
                ))
            }
        };
        built.map_err(|e| store_error(url.as_str(), &e))
    }

    /// The object at `url`, with its size and ETag now.
    pub(crate) fn head(&self, url: &str) -> Result<Arc<Object>> {
        let (store, key, _) = self.resolve(url)?;
        let meta = block_on(store.head(&key))?.map_err(|e| store_error(url, &e))?;
        Ok(Arc::new(Object::new(store, key, url.to_string(), &meta)))
    }

    /// The objects under `url` taken as a folder (its key plus `/`), sorted
    /// by key, with their sizes and ETags.
    pub(crate) fn list(&self, url: &str) -> Result<Vec<Arc<Object>>> {
        let (store, key, parsed) = self.resolve(url)?;
        let prefix = if key.as_ref().is_empty() {
            None
        } else {
            Some(key.clone())
        };
        let metas: Vec<object_store::ObjectMeta> =
            block_on(store.list(prefix.as_ref()).try_collect())?
                .map_err(|e| store_error(url, &e))?;
        let root = format!("{}://{}", parsed.scheme(), parsed.authority());
        let mut out: Vec<Arc<Object>> = metas
            .iter()
            .map(|m| {
                let name = format!("{root}/{}", m.location);
                Arc::new(Object::new(store.clone(), m.location.clone(), name, m))
            })
            .collect();
        out.sort_by(|a, b| a.key.as_ref().cmp(b.key.as_ref()));
        Ok(out)
    }
}

/// Bytes and requests fetched from object stores.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fetched {
    pub bytes: u64,
    pub requests: u64,
}

/// A remote file: where it is, and its size and ETag when the table was
/// opened, which every read must still match.
pub(crate) struct Object {
    store: Arc<dyn ObjectStore>,
    key: Key,
    /// The URL, as messages name the file.
    pub url: String,
    pub size: u64,
    etag: Option<String>,
    bytes: AtomicU64,
    requests: AtomicU64,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("url", &self.url)
            .field("size", &self.size)
            .field("etag", &self.etag)
            .finish()
    }
}

impl Object {
    fn new(
        store: Arc<dyn ObjectStore>,
        key: Key,
        url: String,
        meta: &object_store::ObjectMeta,
    ) -> Object {
        Object {
            store,
            key,
            url,
            size: meta.size,
            etag: meta.e_tag.clone(),
            bytes: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        }
    }

    /// The URL as a path, which is how the readers name files.
    pub(crate) fn path(&self) -> PathBuf {
        PathBuf::from(&self.url)
    }

    /// The key within its bucket.
    pub(crate) fn key(&self) -> &str {
        self.key.as_ref()
    }

    pub(crate) fn fetched(&self) -> Fetched {
        Fetched {
            bytes: self.bytes.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
        }
    }

    fn options(&self, range: Range<u64>) -> GetOptions {
        GetOptions {
            if_match: self.etag.clone(),
            range: Some(GetRange::Bounded(range)),
            ..Default::default()
        }
    }

    pub(super) async fn get(self: Arc<Self>, range: Range<u64>) -> Result<Bytes> {
        let len = range.end - range.start;
        let got = self
            .store
            .get_opts(&self.key, self.options(range))
            .await
            .map_err(|e| self.error(&e))?;
        let bytes = got.bytes().await.map_err(|e| self.error(&e))?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if bytes.len() as u64 != len {
            return Err(ReconError::input(
                self.path(),
                format!(
                    "the store returned {} bytes for a range of {len}: the object changed or the store is faulty",
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }

    /// The bytes of `range`, in one request.
    pub(crate) fn fetch(self: &Arc<Self>, range: Range<u64>) -> Result<Bytes> {
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        block_on(self.clone().get(range))?
    }

    /// The bytes of each of `ranges`: ranges closer than `COALESCE` are
    /// fetched in one request (up to `MAX_REQUEST` bytes), and up to
    /// `CONCURRENT` requests run at once.
    pub(crate) fn fetch_many(self: &Arc<Self>, ranges: &[Range<u64>]) -> Result<Vec<(u64, Bytes)>> {
        let merged = merge_ranges(ranges, |last, r| {
            r.start <= last.end + COALESCE && r.end - last.start <= MAX_REQUEST
        });
        let this = self.clone();
        block_on(async move {
            futures::stream::iter(merged.into_iter().map(|r| {
                let o = this.clone();
                async move { o.get(r.clone()).await.map(|b| (r.start, b)) }
            }))
            .buffered(CONCURRENT)
            .try_collect()
            .await
        })?
    }

    fn error(&self, e: &object_store::Error) -> ReconError {
        if matches!(e, object_store::Error::Precondition { .. }) {
            return ReconError::input(
                self.path(),
                format!(
                    "changed during the run (its ETag is no longer {}): recon will not mix two versions of a file into one answer; run again",
                    self.etag.as_deref().unwrap_or("?")
                ),
            );
        }
        store_error(&self.url, e)
    }
}

/// The non-empty `ranges` sorted by start, each joined into the one before
/// it while `join(before, next)` says so.
pub(super) fn merge_ranges(
    ranges: &[Range<u64>],
    join: impl Fn(&Range<u64>, &Range<u64>) -> bool,
) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| !r.is_empty()).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match merged.last_mut() {
            Some(last) if join(last, &r) => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

fn input(url: &str, message: impl Into<String>) -> ReconError {
    ReconError::input(Path::new(url), message.into())
}

/// One line for an object-store failure, naming the URL. Query strings
/// (SAS tokens, signatures) and the values of secret settings are cut out:
/// a message must never carry a credential.
pub(crate) fn store_error(url: &str, e: &object_store::Error) -> ReconError {
    use object_store::Error as E;
    let what = match e {
        E::NotFound { .. } => "not found (no such object, folder or bucket)".to_string(),
        E::PermissionDenied { .. } => {
            "access denied: check the credentials (see docs/object-stores.md)".to_string()
        }
        E::Unauthenticated { .. } => {
            "not authenticated: the credentials were refused (see docs/object-stores.md)"
                .to_string()
        }
        E::Precondition { .. } => "changed during the run".to_string(),
        // S3's code and Azure's (Azurite and the service send the same).
        other
            if matches!(
                xml_field(&other.to_string(), "Code").as_deref(),
                Some("NoSuchBucket" | "ContainerNotFound")
            ) =>
        {
            "not found: no such bucket".to_string()
        }
        other => {
            // An S3-style XML error body: its code and message, not the XML.
            let mut text = without_xml(&other.to_string());
            let mut source = std::error::Error::source(other);
            while let Some(s) = source {
                let s = without_xml(&s.to_string());
                if !text.contains(&s) {
                    text.push_str(": ");
                    text.push_str(&s);
                }
                source = s_source(source);
            }
            redact(&text)
        }
    };
    input(&redact(url), what)
}

/// An error text with an XML body cut to its code and message, so a
/// source that repeats the body adds nothing the line already says.
fn without_xml(text: &str) -> String {
    match (text.find("<?xml"), xml_field(text, "Code")) {
        (Some(i), Some(code)) => {
            let message = xml_field(text, "Message").unwrap_or_default();
            format!("{}{code}: {message}", &text[..i])
        }
        _ => text.to_string(),
    }
}

/// The text of the first `<name>…</name>` in `text`.
fn xml_field(text: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let start = text.find(&open)? + open.len();
    let end = start + text[start..].find(&format!("</{name}>"))?;
    Some(text[start..end].to_string())
}

fn s_source<'a>(
    e: Option<&'a (dyn std::error::Error + 'static)>,
) -> Option<&'a (dyn std::error::Error + 'static)> {
    e.and_then(|e| e.source())
}

/// `text` on one line, without URL query strings or secret values.
pub(crate) fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(q) = rest.find('?') {
        out.push_str(&rest[..q]);
        // Cut a query string only when it follows a URL on this word.
        let word_start = out.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        if out[word_start..].contains("://") {
            let end = rest[q..]
                .find(|c: char| c.is_whitespace() || c == ')' || c == '"' || c == '\'')
                .map_or(rest.len(), |i| q + i);
            out.push_str("?…");
            rest = &rest[end..];
        } else {
            out.push('?');
            rest = &rest[q + 1..];
        }
    }
    out.push_str(rest);
    let mut line = out.replace(['\n', '\r'], " ");
    for secret in secrets() {
        if secret.len() >= 4 {
            line = line.replace(&secret, "***");
        }
    }
    line
}

/// Values of environment variables that hold credentials.
fn secrets() -> Vec<String> {
    std::env::vars()
        .filter(|(k, _)| {
            let k = k.to_ascii_uppercase();
            (k.starts_with("AWS_") || k.starts_with("AZURE_") || k.starts_with("GOOGLE_"))
                && ["SECRET", "TOKEN", "KEY", "PASSWORD", "SAS"]
                    .iter()
                    .any(|s| k.contains(s))
                && !k.ends_with("_ID")
        })
        .map(|(_, v)| v)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_recognized_by_scheme() {
        assert!(is_url("s3://bucket/a.parquet"));
        assert!(is_url("S3://bucket/a"));
        assert!(is_url("abfss://c@acct.dfs.core.windows.net/x"));
        assert!(is_url("https://example.com/x.csv"));
        assert!(!is_url("delta:s3://b/t"));
        assert!(!is_url("postgres://u@h/db"));
        assert!(!is_url("data/a.parquet"));
        assert!(!is_url("C:/data"));
    }

    #[test]
    fn redaction_cuts_query_strings_and_keeps_the_rest() {
        assert_eq!(
            redact("GET https://a.blob.core.windows.net/c/x?sv=1&sig=SECRET failed\nretry"),
            "GET https://a.blob.core.windows.net/c/x?… failed retry"
        );
        assert_eq!(redact("is it? yes"), "is it? yes");
    }
}

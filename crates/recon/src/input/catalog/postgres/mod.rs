//! PostgreSQL tables and queries as inputs: `postgres://USER@HOST:PORT/DB?table=SCHEMA.NAME`,
//! or a database URL with `--source-query` / `--target-query`.
//!
//! # How a table is read
//! 1. A leader connection opens a `REPEATABLE READ, READ ONLY` transaction
//!    and exports its snapshot (`pg_export_snapshot()`).
//! 2. N connections (`--connections`, default one per core) each import it
//!    (`SET TRANSACTION SNAPSHOT`) and read one range of the table's pages
//!    (`ctid >= '(a,0)' AND ctid < '(b,0)'`, a TID range scan since
//!    PostgreSQL 14) with `COPY (…) TO STDOUT (FORMAT binary)`: no text
//!    casts, every value in its binary form ([`decode`]).
//! 3. Each connection writes its rows, as Arrow, to its own file in the
//!    run's temp directory. The table recon compares is those files.
//!
//! So the run sees one instant of the table (rows committed after the
//! export are in no slice), with several server cores reading. recon reads
//! an input more than once (a second pass, evidence fetched by position);
//! it does so from the spooled files, never from the live table, which
//! could not give the same rows back in the same order.
//!
//! A query is read by one connection (an arbitrary SELECT cannot be cut
//! into ranges), as are views, partitioned and foreign tables, and servers
//! before 14. Unconstrained `numeric` columns take one more read first,
//! in the same snapshot, for the scale their values need.

mod connect;
mod decode;

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{Field, Schema, SchemaRef};
use postgres::Client;

use connect::Target;
use decode::{decimal_shape, Builder, ColumnKind};

use crate::config::{Format, InputOptions};
use crate::error::{ReconError, Result};
use crate::input::assemble;
use crate::input::spool::Spool;
use crate::input::table::{DatabaseRead, Table};
use crate::side::Side;
use crate::tempspace::RunDir;

/// Rows per Arrow batch written, at most.
const BATCH_ROWS: usize = 65_536;
/// Bytes of values per batch, at most (wide rows make smaller batches).
const BATCH_BYTES: usize = 16 << 20;
/// Pages per slice, at least: a small table is read by fewer connections.
const MIN_SLICE_PAGES: i64 = 128;

/// What the leader found: the columns, the SELECT, and how to cut it.
struct ReadPlan {
    server_version: String,
    /// The SELECT of the whole table or the user's query.
    select: String,
    columns: Vec<(String, ColumnKind)>,
    /// Page ranges, one per connection (`None` bounds are open); empty:
    /// one connection reads `select` whole.
    slices: Vec<(Option<i64>, Option<i64>)>,
}

/// Reads a `postgres://` table or query into the run's temp directory
/// and opens it from there.
pub(in crate::input) fn open(
    spec: &Path,
    opts: &InputOptions,
    side: Side,
    temp_dir: &Path,
) -> Result<Table> {
    let target = connect::parse(&spec.to_string_lossy())
        .map_err(|m| ReconError::input(redacted(spec), m))?;
    let name = PathBuf::from(&target.display);
    let fail = |m: String| ReconError::input(&name, m);
    let what = match (&target.table, &opts.query) {
        (Some(t), None) => What::Table(t.clone()),
        (None, Some(q)) => What::Query(q.trim().trim_end_matches(';').trim().to_string()),
        (Some(_), Some(_)) => {
            return Err(fail(format!(
                "names a table (?table=) and {} gives a query: give one",
                flag(side)
            )))
        }
        (None, None) => {
            return Err(fail(format!(
                "names no table: add ?table=SCHEMA.NAME, or give a SELECT with {}",
                flag(side)
            )))
        }
    };
    let connections = opts
        .connections
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut leader = connect(&target).map_err(fail)?;
    let (plan, snapshot) = plan(&mut leader, &what, connections).map_err(fail)?;
    let dir = RunDir::create(temp_dir)?;
    let fields: Vec<Field> = plan
        .columns
        .iter()
        .map(|(n, k)| Field::new(n, k.data_type(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let read = if plan.slices.is_empty() {
        let sql = copy_sql(&plan.select, None);
        copy_into(
            &mut leader,
            &sql,
            &plan.columns,
            &schema,
            &dir.path().join("part-0000.arrow"),
        )
        .map(|_| ())
    } else {
        read_slices(
            &target,
            &plan,
            snapshot.as_deref().unwrap_or(""),
            &schema,
            dir.path(),
        )
    };
    read.map_err(|m| fail(spool_message(m, dir.path())))?;
    // The snapshot's transaction ends once every slice is read.
    leader
        .batch_execute("COMMIT")
        .map_err(|e| fail(pg_error(&e)))?;
    let ipc = InputOptions {
        format: Some(Format::Ipc),
        query: None,
        ..opts.clone()
    };
    let mut table = assemble::open_spool(Spool::of_dir(dir), &ipc, &name)?;
    table.database = Some(DatabaseRead {
        system: "postgres",
        server_version: plan.server_version,
        snapshot,
        query: plan.select,
        connections: plan.slices.len().max(1),
    });
    Ok(table)
}

enum What {
    Table(String),
    Query(String),
}

fn flag(side: Side) -> String {
    crate::error::hint::option(crate::input::source::query_setting(side), "\"SELECT …\"")
}

/// A spec that did not parse, shown without what could be a password.
fn redacted(spec: &Path) -> PathBuf {
    let s = spec.to_string_lossy();
    match (s.find("://"), s.find('@')) {
        (Some(a), Some(b)) if b > a => PathBuf::from(format!("{}://…{}", &s[..a], &s[b..])),
        _ => spec.to_path_buf(),
    }
}

fn connect(target: &Target) -> std::result::Result<Client, String> {
    target.config.connect(target.tls.clone()).map_err(|e| {
        format!(
            "connecting to {} as {}: {}",
            connect::host_of(&target.config),
            target.config.get_user().unwrap_or("?"),
            pg_error(&e)
        )
    })
}

/// A server's error as one line: its message (and hint), or what broke.
fn pg_error(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.hint() {
            Some(h) => format!("{} ({h})", db.message()),
            None => db.message().to_string(),
        };
    }
    if e.is_closed() {
        return "the server closed the connection (it stopped, or the session was terminated)"
            .into();
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(x) = src {
        let more = x.to_string();
        if !s.contains(&more) {
            s.push_str(": ");
            s.push_str(&more);
        }
        src = x.source();
    }
    s
}

/// The leader's work: the snapshot, the columns, the slices.
fn plan(
    leader: &mut Client,
    what: &What,
    connections: usize,
) -> std::result::Result<(ReadPlan, Option<String>), String> {
    let q = |c: &mut Client, sql: &str| c.query(sql, &[]).map_err(|e| pg_error(&e));
    leader
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .map_err(|e| pg_error(&e))?;
    // The snapshot is taken by the transaction's first statement, so the
    // export comes first when others will share it.
    let snapshot: Option<String> = if connections > 1 {
        Some(q(leader, "SELECT pg_export_snapshot()")?[0].get(0))
    } else {
        None
    };
    let row = &q(
        leader,
        "SELECT current_setting('server_version'), current_setting('server_version_num')::int",
    )?[0];
    let server_version: String = row.get(0);
    let version_num: i32 = row.get(1);
    let (select, paged) = match what {
        What::Table(t) => {
            let rows = leader
                .query(
                    "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relkind::text, \
                     pg_relation_size(c.oid) / current_setting('block_size')::bigint \
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE c.oid = to_regclass($1::text)",
                    &[t],
                )
                .map_err(|e| format!("table {t}: {}", pg_error(&e)))?;
            let Some(r) = rows.first() else {
                return Err(format!(
                    "table {t} does not exist (or is not visible to this user)"
                ));
            };
            let rel: String = r.get(0);
            let kind: String = r.get(1);
            let pages: i64 = r.get(2);
            // ctid ranges need a heap (tables, materialized views) and a
            // TID range scan (14+); otherwise one connection reads it all.
            let paged = (kind == "r" || kind == "m") && version_num >= 140_000;
            let stmt = leader
                .prepare(&format!("SELECT * FROM {rel}"))
                .map_err(|e| format!("table {t}: {}", pg_error(&e)))?;
            let cols: Vec<String> = stmt
                .columns()
                .iter()
                .map(|c| quote_ident(c.name()))
                .collect();
            (
                format!("SELECT {} FROM {rel}", cols.join(", ")),
                paged.then_some(pages),
            )
        }
        What::Query(sql) => (sql.clone(), None),
    };
    let stmt = leader
        .prepare(&select)
        .map_err(|e| format!("{}: {}", shorten(&select), pg_error(&e)))?;
    let mut columns = Vec::new();
    for c in stmt.columns() {
        let kind = ColumnKind::of(c.type_(), c.type_modifier())
            .map_err(|m| format!("column {}: {m}", c.name()))?;
        columns.push((c.name().to_string(), kind));
    }
    size_numerics(leader, &select, &mut columns)?;
    let slices = match paged {
        Some(pages) if connections > 1 => {
            let n = (pages / MIN_SLICE_PAGES).clamp(1, connections as i64);
            (0..n)
                .map(|i| {
                    let lo = (i > 0).then(|| pages * i / n);
                    let hi = (i + 1 < n).then(|| pages * (i + 1) / n);
                    (lo, hi)
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let snapshot = if slices.is_empty() { None } else { snapshot };
    Ok((
        ReadPlan {
            server_version,
            select,
            columns,
            slices,
        },
        snapshot,
    ))
}

/// Gives each unconstrained `numeric` column the precision and scale its
/// values need, read in the run's snapshot: the largest scale and the most
/// integer digits of any value.
fn size_numerics(
    leader: &mut Client,
    select: &str,
    columns: &mut [(String, ColumnKind)],
) -> std::result::Result<(), String> {
    let unsized_cols: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].1 == ColumnKind::NumericUnsized)
        .collect();
    if unsized_cols.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    for &i in &unsized_cols {
        let c = quote_ident(&columns[i].0);
        // NaN and infinities have no scale (and count a few digits here);
        // they are refused when read.
        parts.push(format!(
            "coalesce(max(scale({c})), 0), coalesce(max(length(trunc(abs({c}))::text)), 1)"
        ));
    }
    let sql = format!("SELECT {} FROM ({select}) AS recon_q", parts.join(", "));
    let row = leader
        .query_one(&sql, &[])
        .map_err(|e| format!("finding the scale of numeric columns: {}", pg_error(&e)))?;
    for (j, &i) in unsized_cols.iter().enumerate() {
        let scale: i32 = row.get(2 * j);
        let digits: i32 = row.get(2 * j + 1);
        columns[i].1 = decimal_shape((digits + scale.max(0)) as u32, scale)
            .map_err(|m| format!("column {} (numeric): {m}", columns[i].0))?;
    }
    Ok(())
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn shorten(sql: &str) -> String {
    let one_line: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 80 {
        format!("{}…", one_line.chars().take(79).collect::<String>())
    } else {
        one_line
    }
}

fn copy_sql(select: &str, slice: Option<(Option<i64>, Option<i64>)>) -> String {
    let select = match slice {
        None => select.to_string(),
        Some((lo, hi)) => {
            let mut conds = Vec::new();
            if let Some(lo) = lo {
                conds.push(format!("ctid >= '({lo},0)'::tid"));
            }
            if let Some(hi) = hi {
                conds.push(format!("ctid < '({hi},0)'::tid"));
            }
            if conds.is_empty() {
                select.to_string()
            } else {
                format!("{select} WHERE {}", conds.join(" AND "))
            }
        }
    };
    format!("COPY ({select}) TO STDOUT (FORMAT binary)")
}

/// Every slice on its own connection in the leader's snapshot, at once.
fn read_slices(
    target: &Target,
    plan: &ReadPlan,
    snapshot: &str,
    schema: &SchemaRef,
    dir: &Path,
) -> std::result::Result<(), String> {
    let stop = AtomicBool::new(false);
    let results: Vec<std::result::Result<u64, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .slices
            .iter()
            .enumerate()
            .map(|(i, &slice)| {
                let stop = &stop;
                s.spawn(move || {
                    let r = (|| {
                        let mut c = connect(target)?;
                        c.batch_execute(&format!(
                            "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET TRANSACTION SNAPSHOT '{}'",
                            snapshot.replace('\'', "''")
                        ))
                        .map_err(|e| pg_error(&e))?;
                        let sql = copy_sql(&plan.select, Some(slice));
                        let out = dir.join(format!("part-{i:04}.arrow"));
                        let n = copy_into_until(&mut c, &sql, &plan.columns, schema, &out, stop)?;
                        c.batch_execute("COMMIT").map_err(|e| pg_error(&e))?;
                        Ok(n)
                    })();
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a reader thread panicked".into()))
            })
            .collect()
    });
    // The error that stopped the others, not theirs.
    let mut errors: Vec<String> = results.into_iter().filter_map(|r| r.err()).collect();
    errors.sort_by_key(|m| m == STOPPED);
    errors.into_iter().next().map_or(Ok(()), Err)
}

const STOPPED: &str = "stopped: another connection failed";

fn copy_into(
    client: &mut Client,
    sql: &str,
    columns: &[(String, ColumnKind)],
    schema: &SchemaRef,
    out: &Path,
) -> std::result::Result<u64, String> {
    copy_into_until(client, sql, columns, schema, out, &AtomicBool::new(false))
}

/// Runs one binary COPY and writes its rows to the Arrow IPC file `out`,
/// a batch at a time; returns the rows read.
fn copy_into_until(
    client: &mut Client,
    sql: &str,
    columns: &[(String, ColumnKind)],
    schema: &SchemaRef,
    out: &Path,
    stop: &AtomicBool,
) -> std::result::Result<u64, String> {
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut writer = arrow::ipc::writer::FileWriter::try_new(std::io::BufWriter::new(file), schema)
        .map_err(|e| e.to_string())?;
    let reader = client.copy_out(sql).map_err(|e| pg_error(&e))?;
    let mut r = BufReader::with_capacity(1 << 20, reader);
    let io = |e: std::io::Error| -> String {
        // The connection's own error, when it broke.
        match e
            .get_ref()
            .and_then(|x| x.downcast_ref::<postgres::Error>())
        {
            Some(pe) => pg_error(pe),
            None => format!("reading the COPY stream: {e}"),
        }
    };
    let mut header = [0u8; 19];
    r.read_exact(&mut header).map_err(io)?;
    if &header[..11] != b"PGCOPY\n\xff\r\n\0" {
        return Err("the server's COPY output is not in the binary format".into());
    }
    let ext = u32::from_be_bytes([header[15], header[16], header[17], header[18]]);
    std::io::copy(&mut (&mut r).take(ext as u64), &mut std::io::sink()).map_err(io)?;
    let mut builders: Vec<Builder> = columns.iter().map(|(_, k)| Builder::new(k)).collect();
    let mut buf = Vec::new();
    let (mut rows, mut in_batch, mut bytes) = (0u64, 0usize, 0usize);
    let mut flush = |builders: &mut Vec<Builder>| -> std::result::Result<(), String> {
        let arrays = builders.iter_mut().map(|b| b.finish()).collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(|e| e.to_string())?;
        writer.write(&batch).map_err(|e| write_failed(out, e))
    };
    loop {
        let mut n = [0u8; 2];
        r.read_exact(&mut n).map_err(io)?;
        let n = i16::from_be_bytes(n);
        if n == -1 {
            break;
        }
        if n as usize != columns.len() {
            return Err(format!(
                "the COPY stream has rows of {n} fields, not {}",
                columns.len()
            ));
        }
        for (b, (name, _)) in builders.iter_mut().zip(columns) {
            let mut len = [0u8; 4];
            r.read_exact(&mut len).map_err(io)?;
            let len = i32::from_be_bytes(len);
            let value = if len < 0 {
                None
            } else {
                buf.resize(len as usize, 0);
                r.read_exact(&mut buf).map_err(io)?;
                bytes += buf.len();
                Some(&buf[..])
            };
            b.append(value).map_err(|m| format!("column {name}: {m}"))?;
        }
        rows += 1;
        in_batch += 1;
        if in_batch == BATCH_ROWS || bytes >= BATCH_BYTES {
            flush(&mut builders)?;
            (in_batch, bytes) = (0, 0);
            if stop.load(Ordering::Relaxed) {
                return Err(STOPPED.into());
            }
        }
    }
    if in_batch > 0 {
        flush(&mut builders)?;
    }
    writer.finish().map_err(|e| write_failed(out, e))?;
    Ok(rows)
}

fn write_failed(out: &Path, e: arrow::error::ArrowError) -> String {
    format!("writing {}: {e}", out.display())
}

/// A full disk under the temp directory says where to make room.
fn spool_message(m: String, dir: &Path) -> String {
    if m.contains("No space left") || m.contains("Disk quota") {
        format!(
            "{m}: recon copies a database table to its temp directory ({}) to read it more than once; point --temp-dir at a larger disk",
            dir.display()
        )
    } else {
        m
    }
}

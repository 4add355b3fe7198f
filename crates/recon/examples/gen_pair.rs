//! Generates a fact-table pair with planted drift, so the expected verdict is known.
//!
//! ```text
//! cargo run --release --example gen_pair -- ROWS OUT_DIR [--source-only]
//!     [--target-only] [--changed K] [--copies C]
//! ```
//!
//! Writes OUT_DIR/source.parquet, OUT_DIR/target.parquet and OUT_DIR/expected.json
//! (with `--source-only`, the source alone: a 1B-row pair does not fit
//! where the source does, and diffing the source with itself measures
//! linearity).
//! 11 columns (ints, date, decimal(18,2), double, microsecond timestamp,
//! strings with NULLs); 0.1% of rows are duplicates (every 1000th row copies
//! its predecessor). The target is written in a permuted order with a
//! different row-group size, and carries planted drift:
//! - 5 amounts changed by one cent;
//! - one NULL note turned into '';
//! - one row deleted and one new row inserted;
//! - one duplicate copy moved: a row that appears twice in the source appears
//!   once in the target, and another row gains a second copy.
//!
//! Row counts stay equal; source_only_rows = target_only_rows = 8.
//!
//! `--changed K` changes K amounts instead of 5 (spread over the table);
//! with `--copies C`, those K rows are not changed but gain C more copies
//! in the target (the drift of a job that ran twice, C + 1 times). Both
//! only touch the target, which `--target-only` writes alone beside an
//! existing source.

use std::fmt::Write as _;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

const BATCH: u64 = 65_536;

fn mix(mut x: u64) -> u64 {
    // splitmix64 finalizer: deterministic, well-spread values from a row number.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The drift plan for N rows.
struct Plan {
    n: u64,
    changed: Vec<u64>,
    null_to_empty: u64,
    deleted: u64,
    dup_moved_from: u64, // a row i with i % 1000 == 999 (a copy of i - 1)
    dup_moved_to: u64,   // in the target, row i copies this row instead
}

impl Plan {
    fn new(n: u64, changed: u64) -> Plan {
        let block = |x: u64| x / 1000 * 1000;
        // Rows i ≡ 123 (mod 1000) are never duplicates nor the other drift.
        let changed = (1..=changed)
            .map(|k| block(n / (changed + 1) * k) + 123)
            .collect();
        let mut null_to_empty = block(n / 2) + 200;
        while !note_is_null(null_to_empty) || null_to_empty % 1000 >= 900 {
            null_to_empty += 1;
        }
        Plan {
            n,
            changed,
            null_to_empty,
            deleted: block(n / 3) + 345,
            dup_moved_from: block(n / 4) + 999,
            dup_moved_to: block(n / 4) + 500,
        }
    }
}

fn note_is_null(base: u64) -> bool {
    mix(base * 5 + 4).is_multiple_of(10)
}

/// Which base row a row index shows (duplicates copy their predecessor).
fn base_of(i: u64) -> u64 {
    if i % 1000 == 999 {
        i - 1
    } else {
        i
    }
}

#[derive(Default)]
struct Cols {
    order_id: Vec<i64>,
    customer_id: Vec<i32>,
    store_id: Vec<i32>,
    order_date: Vec<i32>,
    amount: Vec<i128>,
    discount: Vec<f64>,
    created_at: Vec<i64>,
    status: StringBuilder,
    region: StringBuilder,
    note: StringBuilder,
    quantity: Vec<i32>,
}

const STATUS: [Option<&str>; 5] = [
    Some("NEW"),
    Some("PAID"),
    Some("SHIPPED"),
    Some("CANCELLED"),
    None,
];
const REGION: [&str; 8] = [
    "north",
    "south",
    "east",
    "west",
    "central",
    "north-east",
    "south-west",
    "islands",
];

impl Cols {
    fn push(&mut self, base: u64, amount_delta: i128, note_override: Option<&str>) {
        let h1 = mix(base * 5);
        let h2 = mix(base * 5 + 1);
        let h3 = mix(base * 5 + 2);
        let h4 = mix(base * 5 + 3);
        let h5 = mix(base * 5 + 4);
        self.order_id.push(base as i64);
        self.customer_id.push((h1 % 1_000_000) as i32);
        self.store_id.push(((h1 >> 20) % 500) as i32);
        self.order_date.push(18_000 + (h2 % 2000) as i32);
        self.amount
            .push(((h2 >> 16) % 10_000_000) as i128 + amount_delta);
        self.discount.push((h3 % 1000) as f64 / 1000.0);
        self.created_at
            .push(1_600_000_000_000_000 + ((h3 >> 10) % 100_000_000_000_000) as i64);
        self.status.append_option(STATUS[(h4 % 5) as usize]);
        self.region.append_value(REGION[((h4 >> 8) % 8) as usize]);
        match note_override {
            Some(s) => self.note.append_value(s),
            None if h5.is_multiple_of(10) => self.note.append_null(),
            None => {
                let mut s = String::with_capacity(16);
                let _ = write!(s, "note {}", (h5 >> 8) % 100_000);
                self.note.append_value(&s);
            }
        }
        self.quantity.push(((h5 >> 32) % 100) as i32 + 1);
    }

    fn finish(&mut self, schema: &SchemaRef) -> RecordBatch {
        let c = std::mem::take(self);
        let mut c = c;
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(c.order_id)),
            Arc::new(Int32Array::from(c.customer_id)),
            Arc::new(Int32Array::from(c.store_id)),
            Arc::new(Date32Array::from(c.order_date)),
            Arc::new(
                Decimal128Array::from(c.amount)
                    .with_precision_and_scale(18, 2)
                    .unwrap(),
            ),
            Arc::new(Float64Array::from(c.discount)),
            Arc::new(TimestampMicrosecondArray::from(c.created_at)),
            Arc::new(c.status.finish()),
            Arc::new(c.region.finish()),
            Arc::new(c.note.finish()),
            Arc::new(Int32Array::from(c.quantity)),
        ];
        RecordBatch::try_new(schema.clone(), cols).unwrap()
    }
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("customer_id", DataType::Int32, false),
        Field::new("store_id", DataType::Int32, false),
        Field::new("order_date", DataType::Date32, false),
        Field::new("amount", DataType::Decimal128(18, 2), false),
        Field::new("discount", DataType::Float64, false),
        Field::new(
            "created_at",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            false,
        ),
        Field::new("status", DataType::Utf8, true),
        Field::new("region", DataType::Utf8, false),
        Field::new("note", DataType::Utf8, true),
        Field::new("quantity", DataType::Int32, false),
    ]))
}

fn writer(path: &Path, rows_per_group: usize) -> ArrowWriter<File> {
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(rows_per_group))
        .build();
    ArrowWriter::try_new(File::create(path).unwrap(), schema(), Some(props)).unwrap()
}

fn write_source(plan: &Plan, out: &Path) {
    let schema = schema();
    let mut w = writer(&out.join("source.parquet"), 1 << 20);
    let mut cols = Cols::default();
    for i in 0..plan.n {
        cols.push(base_of(i), 0, None);
        if (i + 1) % BATCH == 0 || i + 1 == plan.n {
            w.write(&cols.finish(&schema)).unwrap();
        }
    }
    w.close().unwrap();
}

fn write_target(plan: &Plan, copies: u64, out: &Path) {
    let schema = schema();
    let mut w = writer(&out.join("target.parquet"), 750_000);
    let mut cols = Cols::default();
    // A permutation without memory: j -> j * P mod N for a prime P not dividing N.
    let n = plan.n;
    let p = [1_000_003u64, 998_244_353, 2_147_483_647]
        .into_iter()
        .find(|p| !n.is_multiple_of(*p))
        .unwrap();
    let mut pending = 0u64;
    for j in 0..n {
        let i = ((j as u128 * p as u128) % n as u128) as u64;
        if i == plan.deleted {
            continue;
        }
        let base = if i == plan.dup_moved_from {
            plan.dup_moved_to
        } else {
            base_of(i)
        };
        let drifts = plan.changed.binary_search(&i).is_ok();
        let delta = i128::from(drifts && copies == 0);
        let note = (i == plan.null_to_empty).then_some("");
        let times = if drifts { 1 + copies } else { 1 };
        for _ in 0..times {
            cols.push(base, delta, note);
            pending += 1;
            if pending == BATCH {
                w.write(&cols.finish(&schema)).unwrap();
                pending = 0;
            }
        }
    }
    // The inserted row: a base number no source row uses.
    cols.push(n + 10_000_000_000, 0, None);
    w.write(&cols.finish(&schema)).unwrap();
    w.close().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        eprintln!(
            "usage: gen_pair ROWS OUT_DIR [--source-only] [--target-only] [--changed K] [--copies C]"
        );
        std::process::exit(2);
    };
    if args.len() < 3 {
        usage();
    }
    let number = |a: &str| -> u64 { a.replace('_', "").parse().unwrap_or_else(|_| usage()) };
    let n = number(&args[1]);
    assert!(n >= 10_000, "ROWS must be at least 10000");
    let out = Path::new(&args[2]);
    let (mut source_only, mut target_only, mut changed, mut copies) = (false, false, 5, 0);
    let mut rest = args[3..].iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--source-only" => source_only = true,
            "--target-only" => target_only = true,
            "--changed" => changed = number(rest.next().unwrap_or_else(|| usage())),
            "--copies" => copies = number(rest.next().unwrap_or_else(|| usage())),
            _ => usage(),
        }
    }
    assert!(changed <= n / 1000, "--changed is at most ROWS / 1000");
    std::fs::create_dir_all(out).unwrap();
    let plan = Plan::new(n, changed);
    if source_only {
        write_source(&plan, out);
        println!("wrote {} source rows to {}", n, out.display());
        return;
    }
    std::thread::scope(|s| {
        if !target_only {
            s.spawn(|| write_source(&plan, out));
        }
        s.spawn(|| write_target(&plan, copies, out));
    });
    // Beside the K changed rows (or K · C extra copies): a NULL note made
    // '', a deleted and an inserted row, a duplicate copy moved.
    let (source_only_rows, target_only_rows) = match copies {
        0 => (changed + 3, changed + 3),
        c => (3, changed * c + 3),
    };
    let expected = serde_json::json!({
        "source_rows": n,
        "target_rows": n + changed * copies,
        "source_only_rows": source_only_rows,
        "target_only_rows": target_only_rows,
        "exact_match": false,
    });
    std::fs::write(
        out.join("expected.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
    println!("wrote {} rows per side to {}", n, out.display());
}

//! Regenerates the small committed fixtures in testdata/ (see testdata/README.md).
//!
//! Run: `cargo run --example make_fixtures`. Output is deterministic.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

fn write(
    path: &str,
    batch: &RecordBatch,
    rows_per_group: usize,
    compression: Compression,
    dict: bool,
) {
    let p = Path::new("testdata").join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group.max(1)))
        .set_compression(compression)
        .set_dictionary_enabled(dict)
        .set_created_by("recon make_fixtures".into())
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(&p).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn simple(path: &str, batch: RecordBatch) {
    write(path, &batch, 1024, Compression::SNAPPY, true);
}

fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(cols.into_iter().map(|(n, a)| (n.to_string(), a))).unwrap()
}

fn strs(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn ints(v: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

fn main() {
    // The 4-row demo from the README.
    simple(
        "demo/source.parquet",
        batch(vec![
            (
                "region",
                strs(&[Some("north"), Some("south"), Some("south"), None]),
            ),
            ("amount", ints(&[Some(100), Some(200), Some(200), Some(50)])),
        ]),
    );
    simple(
        "demo/target.parquet",
        batch(vec![
            (
                "region",
                strs(&[None, Some("south"), Some("north"), Some("south")]),
            ),
            ("amount", ints(&[Some(50), Some(200), Some(100), Some(201)])),
        ]),
    );
    // Duplicate-only defect: a set comparison sees {A,B} on both sides.
    simple(
        "demo/dups_source.parquet",
        batch(vec![("v", strs(&[Some("A"), Some("B"), Some("B")]))]),
    );
    simple(
        "demo/dups_target.parquet",
        batch(vec![("v", strs(&[Some("A"), Some("A"), Some("B")]))]),
    );

    // NULL, '', ' ', '<NULL>' and 'NULL' are five different values.
    simple(
        "null_vs_empty/source.parquet",
        batch(vec![(
            "s",
            strs(&[None, Some(""), Some(" "), Some("<NULL>"), Some("NULL")]),
        )]),
    );
    simple(
        "null_vs_empty/target.parquet",
        batch(vec![(
            "s",
            strs(&[Some(""), Some(""), Some(" "), Some("<NULL>"), Some("NULL")]),
        )]),
    );

    // ('ab','c') vs ('a','bc'): naive concatenation would call these equal.
    simple(
        "separator/source.parquet",
        batch(vec![
            ("a", strs(&[Some("ab"), Some("x|")])),
            ("b", strs(&[Some("c"), Some("y")])),
        ]),
    );
    simple(
        "separator/target.parquet",
        batch(vec![
            ("a", strs(&[Some("a"), Some("x")])),
            ("b", strs(&[Some("bc"), Some("|y")])),
        ]),
    );

    // NaN equals NaN (any payload), -0.0 equals 0.0; f32 and f64 hold the same values.
    let odd_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    simple(
        "float_semantics/source.parquet",
        batch(vec![(
            "x",
            Arc::new(Float64Array::from(vec![
                Some(f64::NAN),
                Some(-0.0),
                Some(1.5),
                None,
            ])) as ArrayRef,
        )]),
    );
    simple(
        "float_semantics/target.parquet",
        batch(vec![(
            "x",
            Arc::new(Float64Array::from(vec![
                None,
                Some(1.5),
                Some(0.0),
                Some(odd_nan),
            ])) as ArrayRef,
        )]),
    );

    // Same 1000 rows: reordered, different row-group sizes, compression,
    // dictionary vs plain, Utf8 vs LargeUtf8, Int32 vs Int64.
    let n = 1000;
    let ids: Vec<i32> = (0..n).collect();
    let names: Vec<Option<String>> = (0..n)
        .map(|i| (i % 7 != 0).then(|| format!("name-{}", i % 13)))
        .collect();
    let src = batch(vec![
        ("id", Arc::new(Int32Array::from(ids.clone())) as ArrayRef),
        (
            "name",
            Arc::new(StringArray::from(names.clone())) as ArrayRef,
        ),
    ]);
    write(
        "layout/source.parquet",
        &src,
        100,
        Compression::SNAPPY,
        true,
    );
    let rev: Vec<usize> = (0..n as usize).rev().collect();
    let tgt = batch(vec![
        (
            "name",
            Arc::new(LargeStringArray::from(
                rev.iter().map(|&i| names[i].clone()).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
        (
            "id",
            Arc::new(Int64Array::from(
                rev.iter().map(|&i| ids[i] as i64).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
    ]);
    write(
        "layout/target.parquet",
        &tgt,
        333,
        Compression::UNCOMPRESSED,
        false,
    );
    // The same table split over a directory, with Spark's marker files beside it.
    write(
        "layout/target_dir/part-00000.parquet",
        &tgt.slice(0, 600),
        250,
        Compression::SNAPPY,
        true,
    );
    write(
        "layout/target_dir/nested/part-00001.parquet",
        &tgt.slice(600, 400),
        1000,
        Compression::SNAPPY,
        true,
    );
    std::fs::write("testdata/layout/target_dir/_SUCCESS", b"").unwrap();
    std::fs::write(
        "testdata/layout/target_dir/.part-00000.parquet.crc",
        b"junk",
    )
    .unwrap();

    // Decimals of different precision and scale hold the same values.
    let dec_src = Decimal128Array::from(vec![Some(150), Some(-2), None, Some(0)])
        .with_precision_and_scale(10, 2)
        .unwrap();
    let dec_tgt = Decimal128Array::from(vec![Some(0), Some(1_500_000), Some(-20_000), None])
        .with_precision_and_scale(38, 6)
        .unwrap();
    simple(
        "decimal/source.parquet",
        batch(vec![("amount", Arc::new(dec_src) as ArrayRef)]),
    );
    simple(
        "decimal/target.parquet",
        batch(vec![("amount", Arc::new(dec_tgt) as ArrayRef)]),
    );

    // Nested: lists keep order, structs compare field by field.
    let list = |v: Vec<Option<Vec<Option<i32>>>>| {
        Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(v)) as ArrayRef
    };
    simple(
        "nested/source.parquet",
        batch(vec![(
            "l",
            list(vec![
                Some(vec![Some(1), Some(2)]),
                Some(vec![]),
                None,
                Some(vec![None]),
            ]),
        )]),
    );
    simple(
        "nested/target.parquet",
        batch(vec![(
            "l",
            list(vec![
                Some(vec![Some(2), Some(1)]),
                Some(vec![]),
                None,
                Some(vec![None]),
            ]),
        )]),
    );

    // A migration: a Spark extract and a warehouse extract of the same orders,
    // with different column order and name case, decimal scales, timestamp
    // units, CHAR padding, and a Spark-only load timestamp.
    let spark = batch(vec![
        (
            "order_id",
            Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef,
        ),
        ("customer", strs(&[Some("ACME"), Some("Globex"), None])),
        (
            "amount",
            Arc::new(
                Decimal128Array::from(vec![1_500_000, 20_000_000, -250_000])
                    .with_precision_and_scale(38, 6)
                    .unwrap(),
            ) as ArrayRef,
        ),
        (
            "created_at",
            Arc::new(
                TimestampMicrosecondArray::from(vec![
                    1_700_000_000_000_000,
                    1_700_000_001_000_000,
                    1_700_000_002_000_000,
                ])
                .with_timezone("UTC"),
            ) as ArrayRef,
        ),
        (
            "load_ts",
            Arc::new(TimestampMicrosecondArray::from(vec![1, 2, 3])) as ArrayRef,
        ),
    ]);
    simple("migration/spark.parquet", spark);
    let warehouse = batch(vec![
        (
            "CREATED_AT",
            Arc::new(
                TimestampMillisecondArray::from(vec![
                    1_700_000_002_000,
                    1_700_000_000_000,
                    1_700_000_001_000,
                ])
                .with_timezone("UTC"),
            ) as ArrayRef,
        ),
        (
            "AMOUNT",
            Arc::new(
                Decimal128Array::from(vec![-25, 150, 2000])
                    .with_precision_and_scale(18, 2)
                    .unwrap(),
            ) as ArrayRef,
        ),
        (
            "CUSTOMER",
            strs(&[None, Some("ACME      "), Some("Globex    ")]),
        ),
        (
            "ORDER_ID",
            Arc::new(Int32Array::from(vec![3, 1, 2])) as ArrayRef,
        ),
    ]);
    simple("migration/warehouse.parquet", warehouse);
    std::fs::write(
        "testdata/migration/orders.toml",
        "# recon rules for the orders migration (see README)\nignore_case_names = true\nexclude = [\"load_ts\"]\ntrim = [\"customer\"]\n",
    )
    .unwrap();

    // Empty tables (schema only).
    let empty = batch(vec![("region", strs(&[])), ("amount", ints(&[]))]);
    simple("empty/empty.parquet", empty);

    // Corrupt inputs: garbage bytes, and a real file cut short.
    std::fs::create_dir_all("testdata/bad").unwrap();
    std::fs::write(
        "testdata/bad/garbage.parquet",
        b"this is not a parquet file at all, just text\n",
    )
    .unwrap();
    let good = std::fs::read("testdata/layout/source.parquet").unwrap();
    std::fs::write("testdata/bad/truncated.parquet", &good[..good.len() / 2]).unwrap();
    std::fs::write("testdata/bad/zero.parquet", b"").unwrap();

    lake_and_extract();
    keyed();
    println!("fixtures written under testdata/");
}

/// The keyed demo: an orders table keyed by (order_id, line_no), with every
/// keyed category planted (see testdata/README.md). The target's key is
/// int64 where the source's is int32, and its amounts are decimal(12,3).
fn keyed() {
    type Row<'a> = (Option<i64>, Option<i32>, i128, f64, &'a str);
    let source: Vec<Row> = vec![
        (Some(1), Some(1), 1000, 1.5, "NEW"),  // matched
        (Some(1), Some(2), 2000, 2.5, "NEW"),  // amount changed
        (Some(2), Some(1), 3000, 3.0, "PAID"), // amount and status changed
        (Some(2), Some(2), 4000, 4.0, "PAID"), // amount +0.01: matches within 0.01
        (Some(3), Some(1), 5000, 5.0, "NEW"),  // missing in target
        (Some(5), Some(1), 6000, 6.0, "NEW"),  // twice here, once in the target
        (Some(5), Some(1), 6000, 6.0, "NEW"),
        (Some(6), Some(1), 7000, 7.0, "NEW"), // twice here, three times there
        (Some(6), Some(1), 7000, 7.0, "NEW"),
        (Some(7), None, 8000, 8.0, "NEW"), // NULL in one key column
    ];
    let target: Vec<Row> = vec![
        (Some(6), Some(1), 70000, 7.0, "NEW"),
        (Some(1), Some(1), 10000, 1.5, "NEW"),
        (Some(2), Some(2), 40010, 4.0, "PAID"),
        (Some(1), Some(2), 20500, 2.5, "NEW"),
        (Some(4), Some(1), 90000, 9.0, "NEW"), // missing in source
        (Some(2), Some(1), 31000, 3.0, "SHIPPED"),
        (Some(5), Some(1), 60000, 6.0, "NEW"),
        (Some(6), Some(1), 70000, 7.0, "NEW"),
        (Some(6), Some(1), 70000, 7.0, "NEW"),
        (Some(7), None, 80000, 8.0, "NEW"),
        (None, Some(1), 1000, 1.0, "NEW"), // NULL key, target only
    ];
    let make = |rows: &[Row], wide: bool| {
        let order: ArrayRef = if wide {
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            ))
        } else {
            Arc::new(Int32Array::from(
                rows.iter()
                    .map(|r| r.0.map(|v| v as i32))
                    .collect::<Vec<_>>(),
            ))
        };
        let (p, s) = if wide { (12, 3) } else { (10, 2) };
        let amount: ArrayRef = Arc::new(
            Decimal128Array::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())
                .with_precision_and_scale(p, s)
                .unwrap(),
        );
        batch(vec![
            ("order_id", order),
            (
                "line_no",
                Arc::new(Int32Array::from(
                    rows.iter().map(|r| r.1).collect::<Vec<_>>(),
                )),
            ),
            ("amount", amount),
            (
                "price",
                Arc::new(Float64Array::from(
                    rows.iter().map(|r| r.3).collect::<Vec<_>>(),
                )),
            ),
            (
                "status",
                Arc::new(StringArray::from(
                    rows.iter().map(|r| r.4).collect::<Vec<_>>(),
                )),
            ),
        ])
    };
    simple("keyed/orders_source.parquet", make(&source, false));
    simple("keyed/orders_target.parquet", make(&target, true));
}

/// A Hive-partitioned lakehouse table and the gzip CSV extract of the same
/// orders from the legacy database (plus one with a changed amount).
fn lake_and_extract() {
    use std::io::Write;
    let days = ["2024-01-01", "2024-01-02", "2024-01-03"];
    let customers = [
        Some("ACME"),
        Some(""),
        None,
        Some("Globex, Inc."),
        Some("Initech \"NY\""),
    ];
    let mut csv = String::from("order_id,customer,amount,created_at,business_date\n");
    for (d, day) in days.iter().enumerate() {
        // The last row of each day repeats the one before it: duplicates count.
        let ids: Vec<i64> = (0..40)
            .map(|i: usize| (d * 100 + i.min(38)) as i64)
            .collect();
        let cust: Vec<Option<&str>> = ids.iter().map(|&i| customers[i as usize % 5]).collect();
        let cents: Vec<i128> = ids.iter().map(|&i| i as i128 * 137 - 2000).collect();
        let micros: Vec<i64> = ids
            .iter()
            .map(|&i| 1_704_067_200_000_000 + d as i64 * 86_400_000_000 + (i % 100) * 1_000_001)
            .collect();
        let b = batch(vec![
            (
                "order_id",
                Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            ),
            ("customer", strs(&cust)),
            (
                "amount",
                Arc::new(
                    Decimal128Array::from(cents.clone())
                        .with_precision_and_scale(18, 2)
                        .unwrap(),
                ) as ArrayRef,
            ),
            (
                "created_at",
                Arc::new(TimestampMicrosecondArray::from(micros.clone()).with_timezone("UTC"))
                    as ArrayRef,
            ),
        ]);
        write(
            &format!("lake/orders/business_date={day}/part-0000.parquet"),
            &b,
            16,
            Compression::SNAPPY,
            true,
        );
        for i in 0..ids.len() {
            let c = match cust[i] {
                None => String::new(),
                Some(s) => format!("\"{}\"", s.replace('"', "\"\"")),
            };
            let sign = if cents[i] < 0 { "-" } else { "" };
            let amount = format!("{sign}{}.{:02}", cents[i].abs() / 100, cents[i].abs() % 100);
            let ts = arrow::temporal_conversions::timestamp_us_to_datetime(micros[i]).unwrap();
            csv.push_str(&format!(
                "{},{c},{amount},{},{day}\n",
                ids[i],
                ts.format("%Y-%m-%d %H:%M:%S%.6f")
            ));
        }
    }
    std::fs::write("testdata/lake/orders/_SUCCESS", b"").unwrap();
    let gz = |path: &str, text: &str| {
        let mut e = flate2::GzBuilder::new()
            .mtime(0)
            .write(File::create(path).unwrap(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        e.finish().unwrap();
    };
    gz("testdata/demo/extract.csv.gz", &csv);
    gz(
        "testdata/demo/extract_drift.csv.gz",
        &csv.replacen(",-15.89,", ",-15.98,", 1),
    );
}

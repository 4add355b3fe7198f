//! Diffs two tables held in memory, keyless and then keyed, with no input
//! file on disk: the library takes Arrow data as well as file names.
//!
//!     cargo run -p recon --example in_memory
//!
//! The batches are read where they are (not copied); a stream that can be
//! read only once (the third diff) is spooled to the temp directory first.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use recon::config::AlignOptions;
use recon::{diff, DiffOptions, Source};

fn orders(rows: &[(i64, &str, Option<i64>)]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, false),
        Field::new("amount", DataType::Int64, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
        Arc::new(Int64Array::from_iter(rows.iter().map(|r| r.2))),
    ];
    RecordBatch::try_new(schema, cols).expect("columns match the schema")
}

fn main() -> Result<(), recon::ReconError> {
    // The source holds order 2 twice; the target once, with order 3's
    // amount changed and a NULL amount on both sides (NULL matches NULL).
    let source = orders(&[
        (1, "north", Some(100)),
        (2, "south", Some(200)),
        (2, "south", Some(200)),
        (3, "east", Some(300)),
        (4, "west", None),
    ]);
    let target = orders(&[
        (1, "north", Some(100)),
        (2, "south", Some(200)),
        (3, "east", Some(301)),
        (4, "west", None),
    ]);
    let table = |name: &str, b: &RecordBatch| Source::batches(name, b.schema(), vec![b.clone()]);

    // Keyless: EXCEPT ALL both ways.
    let keyless = diff(
        table("source (in memory)", &source)?,
        table("target (in memory)", &target)?,
        &DiffOptions::default(),
    )?;
    print!("{}", keyless.report.render_text(&keyless.quoted));
    let r = &keyless.report;
    assert!(!r.exact_match);
    assert_eq!((r.source_only_rows, r.target_only_rows), (2, 1));

    // Keyed by order_id: order 2 is a duplicate key, order 3 changed.
    let keyed_opts = DiffOptions {
        align: AlignOptions {
            key: Some(vec!["order_id".into()]),
            ..AlignOptions::default()
        },
        ..DiffOptions::default()
    };
    let keyed = diff(
        table("source (in memory)", &source)?,
        table("target (in memory)", &target)?,
        &keyed_opts,
    )?;
    println!();
    print!("{}", keyed.report.render_text(&keyed.quoted));
    let k = keyed.report.keyed.as_ref().expect("a keyed report");
    assert_eq!(
        (k.matched_keys, k.value_mismatch, k.duplicate_keys),
        (2, 1, 1)
    );

    // A stream read once (here an iterator of batches): spooled, then read
    // like a file. The same table against itself is an exact match.
    let stream = RecordBatchIterator::new(vec![Ok(source.clone())], source.schema());
    let same = diff(
        Source::stream("source (stream)", stream),
        table("source (in memory)", &source)?,
        &DiffOptions::default(),
    )?;
    println!();
    println!("{}", same.report.verdict_line());
    assert!(same.report.exact_match);
    Ok(())
}

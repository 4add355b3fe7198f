//! Arrow data as tables: batches in memory are read in place, streams are
//! spooled; either gives the answer the same rows give from a file, with
//! evidence, under a memory limit smaller than the table.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, RecordBatchIterator, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use recon::config::{AlignOptions, RunSettings};
use recon::{diff, DiffOptions, Passes, ReconError, Source};

/// `n` rows in batches of `per_batch`; row `changed` gets another amount.
fn table(n: i64, per_batch: i64, changed: Option<i64>) -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("note", DataType::Utf8, true),
        Field::new("amount", DataType::Int64, true),
    ]));
    (0..n)
        .step_by(per_batch as usize)
        .map(|start| {
            let ids: Vec<i64> = (start..(start + per_batch).min(n)).collect();
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(StringArray::from_iter(
                    ids.iter().map(|i| (i % 7 != 0).then(|| format!("row {i}"))),
                )),
                Arc::new(Int64Array::from_iter(ids.iter().map(|&i| {
                    (i % 11 != 0).then_some(if Some(i) == changed { -1 } else { i * 3 })
                }))),
            ];
            RecordBatch::try_new(schema.clone(), cols).unwrap()
        })
        .collect()
}

fn batches(name: &str, b: &[RecordBatch]) -> Source {
    Source::batches(name, b[0].schema(), b.to_vec()).unwrap()
}

fn stream(name: &str, b: &[RecordBatch]) -> Source {
    let schema = b[0].schema();
    // Owned batches: the stream outlives this borrow of them.
    let owned: Vec<RecordBatch> = b.to_vec();
    Source::stream(
        name,
        RecordBatchIterator::new(owned.into_iter().map(Ok), schema),
    )
}

fn write_parquet(path: &Path, b: &[RecordBatch]) {
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), b[0].schema(), None).unwrap();
    for x in b {
        w.write(x).unwrap();
    }
    w.close().unwrap();
}

fn rows_of(path: &Path) -> Vec<(i64, Option<i64>)> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let id = b.column_by_name("id").unwrap();
        let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
        let amount = b.column_by_name("amount").unwrap();
        let amount = amount.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.push((id.value(i), amount.is_valid(i).then(|| amount.value(i))));
        }
    }
    out.sort();
    out
}

fn opts(dir: &Path, limit: u64, passes: Passes) -> DiffOptions {
    DiffOptions {
        run: RunSettings {
            threads: 2,
            memory_limit: limit,
            passes,
            temp_dir: Some(dir.to_path_buf()),
            ..RunSettings::default()
        },
        ..DiffOptions::default()
    }
}

/// Every kind of source against every other gives the file's answer, and
/// the evidence rows are the changed row's two versions.
#[test]
fn in_memory_and_streamed_tables_answer_as_their_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (
        table(30_000, 4_096, None),
        table(30_000, 1_000, Some(12_345)),
    );
    let (sf, tf) = (dir.path().join("s.parquet"), dir.path().join("t.parquet"));
    write_parquet(&sf, &s);
    write_parquet(&tf, &t);
    let file_report = diff(&sf, &tf, &opts(dir.path(), 64 << 20, Passes::Auto))
        .unwrap()
        .report;
    assert_eq!(
        (file_report.source_only_rows, file_report.target_only_rows),
        (1, 1)
    );
    type Make = fn(&str, &[RecordBatch]) -> Source;
    let kinds: [(&str, Make); 2] = [("batches", batches), ("stream", stream)];
    for (sk, make_s) in kinds {
        for (tk, make_t) in kinds {
            for passes in [Passes::One, Passes::Two] {
                let out = dir.path().join(format!("out-{sk}-{tk}-{passes:?}"));
                let mut o = opts(dir.path(), 16 << 20, passes);
                o.output_dir = Some(out.clone());
                let r = diff(make_s("source", &s), make_t("target", &t), &o)
                    .unwrap()
                    .report;
                let what = format!("{sk} vs {tk}, {passes:?}");
                assert_eq!(r.source_rows, 30_000, "{what}");
                assert_eq!((r.source_only_rows, r.target_only_rows), (1, 1), "{what}");
                assert_eq!(r.inputs.source.path, "source", "{what}");
                let format = |k: &str| {
                    if k == "batches" {
                        "arrow (in memory)"
                    } else {
                        "arrow stream"
                    }
                };
                assert_eq!(r.inputs.source.format, format(sk), "{what}");
                assert_eq!(r.inputs.target.format, format(tk), "{what}");
                assert_eq!(
                    rows_of(&out.join("source_only.parquet")),
                    [(12_345, Some(12_345 * 3))],
                    "{what}"
                );
                assert_eq!(
                    rows_of(&out.join("target_only.parquet")),
                    [(12_345, Some(-1))],
                    "{what}"
                );
            }
        }
    }
    // Nothing is left in the temp dir: spools go with their run.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("recon-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn keyed_diff_of_in_memory_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = (table(5_000, 512, None), table(5_000, 700, Some(42)));
    let mut o = opts(dir.path(), 16 << 20, Passes::Auto);
    o.align = AlignOptions {
        key: Some(vec!["id".into()]),
        ..AlignOptions::default()
    };
    let r = diff(batches("s", &s), batches("t", &t), &o).unwrap().report;
    let k = r.keyed.as_ref().unwrap();
    assert_eq!((k.matched_keys, k.value_mismatch), (4_999, 1));
    assert_eq!(k.column_mismatches.get("amount"), Some(&1));
}

#[test]
fn a_stream_is_read_once_and_batches_must_share_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let s = table(100, 50, None);
    let once = stream("once", &s);
    let o = opts(dir.path(), 64 << 20, Passes::Auto);
    // The mode's own entry point borrows its sources, so one can be reused.
    let run = |a: &Source| recon::internals::multiset_diff(a, &batches("b", &s), &o);
    assert!(run(&once).unwrap().report.exact_match);
    let Err(again) = run(&once) else {
        panic!("a stream read a second time");
    };
    assert!(matches!(again, ReconError::Usage(_)), "{again}");
    assert!(
        again.to_string().contains("once: this stream was read"),
        "{again}"
    );

    let other = Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false)]));
    let e = Source::batches("mixed", other, s.clone()).unwrap_err();
    assert!(
        e.to_string().starts_with("mixed: batch 0 has schema"),
        "{e}"
    );
}

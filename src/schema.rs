//! Schema preflight: which columns are compared, and whether their types can
//! be compared by value.
//!
//! Columns pair up by name. Each column's Arrow type maps to a *value class*
//! (integer, decimal, string, ...) that mirrors the canonical encoding's tags:
//! two columns are comparable when their classes match, because then equal
//! values encode to equal bytes whatever the physical type.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use arrow::datatypes::{DataType, Schema};

use crate::encode::check_supported;
use crate::error::{ReconError, Result};

/// The class of values a column holds, independent of physical storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueClass {
    /// The Arrow `Null` type: every value is NULL, so it pairs with anything.
    Null,
    Bool,
    Integer,
    Float,
    Decimal,
    String,
    Binary,
    Date,
    Timestamp,
    TimestampZoned,
    Time,
    Duration,
    Interval,
    List(Box<ValueClass>),
    /// Fields sorted by name.
    Struct(Vec<(String, ValueClass)>),
    Map(Box<ValueClass>, Box<ValueClass>),
}

impl ValueClass {
    pub fn of(dt: &DataType) -> ValueClass {
        use DataType::*;
        match dt {
            Null => ValueClass::Null,
            Boolean => ValueClass::Bool,
            Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => ValueClass::Integer,
            Float16 | Float32 | Float64 => ValueClass::Float,
            Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..) => ValueClass::Decimal,
            Utf8 | LargeUtf8 | Utf8View => ValueClass::String,
            Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => ValueClass::Binary,
            Date32 | Date64 => ValueClass::Date,
            Timestamp(_, None) => ValueClass::Timestamp,
            Timestamp(_, Some(_)) => ValueClass::TimestampZoned,
            Time32(_) | Time64(_) => ValueClass::Time,
            Duration(_) => ValueClass::Duration,
            Interval(_) => ValueClass::Interval,
            List(f) | LargeList(f) | FixedSizeList(f, _) | ListView(f) | LargeListView(f) => {
                ValueClass::List(Box::new(ValueClass::of(f.data_type())))
            }
            Struct(fields) => {
                let mut v: Vec<(String, ValueClass)> = fields
                    .iter()
                    .map(|f| (f.name().clone(), ValueClass::of(f.data_type())))
                    .collect();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                ValueClass::Struct(v)
            }
            Map(entries, _) => match entries.data_type() {
                Struct(kv) if kv.len() == 2 => ValueClass::Map(
                    Box::new(ValueClass::of(kv[0].data_type())),
                    Box::new(ValueClass::of(kv[1].data_type())),
                ),
                _ => ValueClass::Null,
            },
            Dictionary(_, v) => ValueClass::of(v),
            RunEndEncoded(_, v) => ValueClass::of(v.data_type()),
            _ => ValueClass::Null,
        }
    }

    /// Whether values of the two classes can be compared by value.
    pub fn compatible(&self, other: &ValueClass) -> bool {
        use ValueClass::*;
        match (self, other) {
            (Null, _) | (_, Null) => true,
            (List(a), List(b)) => a.compatible(b),
            (Struct(a), Struct(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((na, ca), (nb, cb))| na == nb && ca.compatible(cb))
            }
            (Map(ka, va), Map(kb, vb)) => ka.compatible(kb) && va.compatible(vb),
            (a, b) => a == b,
        }
    }
}

/// One compared column.
#[derive(Debug, Clone)]
pub struct ColumnPair {
    pub name: String,
    pub source_index: usize,
    pub target_index: usize,
    pub source_type: DataType,
    pub target_type: DataType,
}

/// The comparison plan: compared columns in source order.
#[derive(Debug, Clone)]
pub struct ComparePlan {
    pub columns: Vec<ColumnPair>,
}

impl ComparePlan {
    pub fn names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

fn duplicate_names(schema: &Schema) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut dups = BTreeSet::new();
    for f in schema.fields() {
        if !seen.insert(f.name().as_str()) {
            dups.insert(f.name().clone());
        }
    }
    dups.into_iter().collect()
}

/// Pairs the columns of `source` and `target` by name and checks that every
/// pair is comparable. Collects every problem before failing, so the user sees
/// them all at once.
pub fn plan(
    source: &Schema,
    source_path: &Path,
    target: &Schema,
    target_path: &Path,
) -> Result<ComparePlan> {
    let mut reasons = Vec::new();
    for (schema, path) in [(source, source_path), (target, target_path)] {
        let dups = duplicate_names(schema);
        if !dups.is_empty() {
            reasons.push(format!(
                "{} has duplicate column names: {}",
                path.display(),
                dups.join(", ")
            ));
        }
    }
    let only_source: Vec<&str> = source
        .fields()
        .iter()
        .filter(|f| target.field_with_name(f.name()).is_err())
        .map(|f| f.name().as_str())
        .collect();
    let only_target: Vec<&str> = target
        .fields()
        .iter()
        .filter(|f| source.field_with_name(f.name()).is_err())
        .map(|f| f.name().as_str())
        .collect();
    if !only_source.is_empty() {
        reasons.push(format!(
            "columns only in source {}: {}",
            source_path.display(),
            only_source.join(", ")
        ));
    }
    if !only_target.is_empty() {
        reasons.push(format!(
            "columns only in target {}: {}",
            target_path.display(),
            only_target.join(", ")
        ));
    }
    let mut columns = Vec::new();
    for (si, sf) in source.fields().iter().enumerate() {
        let Ok(ti) = target.index_of(sf.name()) else {
            continue;
        };
        let tf = target.field(ti);
        for (f, path) in [(sf.as_ref(), source_path), (tf, target_path)] {
            if let Err(why) = check_supported(f.data_type()) {
                reasons.push(format!(
                    "column '{}' in {}: {why}",
                    f.name(),
                    path.display()
                ));
            }
        }
        let (sc, tc) = (
            ValueClass::of(sf.data_type()),
            ValueClass::of(tf.data_type()),
        );
        if !sc.compatible(&tc) {
            reasons.push(format!(
                "column '{}' is {} in source but {} in target: not comparable by value",
                sf.name(),
                sf.data_type(),
                tf.data_type()
            ));
        }
        columns.push(ColumnPair {
            name: sf.name().clone(),
            source_index: si,
            target_index: ti,
            source_type: sf.data_type().clone(),
            target_type: tf.data_type().clone(),
        });
    }
    if !reasons.is_empty() {
        return Err(ReconError::Schema { reasons });
    }
    Ok(ComparePlan { columns })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, TimeUnit};

    fn schema(fields: Vec<(&str, DataType)>) -> Schema {
        Schema::new(
            fields
                .into_iter()
                .map(|(n, t)| Field::new(n, t, true))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn storage_variants_are_compatible() {
        let s = schema(vec![
            ("a", DataType::Utf8),
            ("b", DataType::Int32),
            ("c", DataType::Decimal128(10, 2)),
            (
                "d",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            ),
        ]);
        let t = schema(vec![
            ("d", DataType::Utf8View),
            ("c", DataType::Decimal256(38, 6)),
            ("b", DataType::UInt64),
            ("a", DataType::LargeUtf8),
        ]);
        let p = plan(&s, Path::new("s"), &t, Path::new("t")).unwrap();
        assert_eq!(p.names(), vec!["a", "b", "c", "d"]);
        assert_eq!(p.columns[0].target_index, 3);
    }

    #[test]
    fn every_problem_is_reported() {
        let s = schema(vec![
            ("a", DataType::Utf8),
            ("x", DataType::Int32),
            ("ts", DataType::Timestamp(TimeUnit::Microsecond, None)),
        ]);
        let t = schema(vec![
            ("a", DataType::Int64),
            ("y", DataType::Int32),
            (
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
        ]);
        let err = plan(&s, Path::new("s"), &t, Path::new("t")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("columns only in source s: x"), "{msg}");
        assert!(msg.contains("columns only in target t: y"), "{msg}");
        assert!(
            msg.contains("column 'a' is Utf8 in source but Int64"),
            "{msg}"
        );
        assert!(msg.contains("column 'ts'"), "{msg}");
    }

    #[test]
    fn duplicate_column_names_are_rejected() {
        let s = schema(vec![("a", DataType::Utf8), ("a", DataType::Utf8)]);
        let err = plan(&s, Path::new("s.parquet"), &s, Path::new("t.parquet")).unwrap_err();
        assert!(err.to_string().contains("duplicate column names: a"));
    }
}

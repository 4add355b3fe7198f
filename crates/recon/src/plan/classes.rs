//! Value classes: each Arrow type maps to the class of values it holds
//! (integer, decimal, string, ...), mirroring the canonical encoding's tags.
//! Two columns are comparable when their classes match, because then equal
//! values encode to equal bytes whatever the physical type. Column pairing
//! and rules live in [`crate::align`].

use arrow::datatypes::DataType;

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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, TimeUnit};

    #[test]
    fn storage_variants_share_a_class() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        for (a, b) in [
            (DataType::Utf8, DataType::LargeUtf8),
            (DataType::Utf8View, dict),
            (DataType::Int8, DataType::UInt64),
            (DataType::Decimal128(10, 2), DataType::Decimal256(38, 6)),
            (DataType::Float32, DataType::Float64),
            (DataType::Date32, DataType::Date64),
            (
                DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
                DataType::Timestamp(TimeUnit::Nanosecond, Some("+05:00".into())),
            ),
        ] {
            assert!(
                ValueClass::of(&a).compatible(&ValueClass::of(&b)),
                "{a} vs {b}"
            );
        }
    }

    #[test]
    fn different_classes_are_incompatible() {
        for (a, b) in [
            (DataType::Utf8, DataType::Int64),
            (
                DataType::Date32,
                DataType::Timestamp(TimeUnit::Second, None),
            ),
            (
                DataType::Timestamp(TimeUnit::Second, None),
                DataType::Timestamp(TimeUnit::Second, Some("UTC".into())),
            ),
            (DataType::Int64, DataType::Decimal128(18, 0)),
        ] {
            assert!(
                !ValueClass::of(&a).compatible(&ValueClass::of(&b)),
                "{a} vs {b}"
            );
        }
        let s1 = DataType::Struct(vec![Field::new("a", DataType::Int32, true)].into());
        let s2 = DataType::Struct(vec![Field::new("b", DataType::Int32, true)].into());
        assert!(!ValueClass::of(&s1).compatible(&ValueClass::of(&s2)));
    }
}

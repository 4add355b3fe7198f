//! Exact type unification: which one type a table reads a column as when
//! its files store it differently, and how each file's values are brought
//! to that type without losing or reinterpreting anything.
//!
//! Three callers share these rules:
//! - a directory or glob of plain Parquet/IPC files: [`unify`] gives the
//!   common type of two files' columns (the table reads the widest);
//! - Delta and Iceberg: the table format declares the type, and
//!   [`widening`] says whether a file's stored type reads as it exactly;
//! - every read of a file whose type differs: `convert` converts a batch.
//!
//! [`unify`] only returns a type both sides widen to, so a plain file set
//! reads through the same [`widening`] and `convert` as a lakehouse table.
//! A conversion that could lose or change a value is refused by type where
//! the types already say so (int64 to float64, a decimal's scale), and
//! value by value where only the value can (nanoseconds to microseconds,
//! an offset past 2^31).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, GenericListArray, MapArray, OffsetSizeTrait, StructArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray,
    TimestampSecondArray,
};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{DataType, Field, FieldRef, Fields, TimeUnit};

/// What a table format declares about its columns beyond their types.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// A zone-less stored timestamp holds UTC instants: Delta's `timestamp`
    /// is microseconds since the epoch in UTC whatever the Parquet file's
    /// annotation says (Spark writes INT96, or INT64 without
    /// isAdjustedToUTC). Without it, naive and zoned timestamps differ.
    pub naive_is_utc: bool,
    /// A struct field the file lacks reads as NULL (Delta's nested schema
    /// evolution). Without it, a struct's fields must correspond one to one
    /// by name. A field the file holds and the table does not name is
    /// refused either way.
    pub struct_fields_evolve: bool,
}

/// Delta: `timestamp` columns are UTC instants; nested fields evolve.
// Only the lakehouse readers declare a table type's rules.
#[cfg_attr(not(any(feature = "delta", feature = "iceberg")), allow(dead_code))]
pub(crate) const DELTA: Declared = Declared {
    naive_is_utc: true,
    struct_fields_evolve: true,
};

/// Bits and signedness of an integer type.
fn int_range(t: &DataType) -> Option<(u8, bool)> {
    use DataType::*;
    Some(match t {
        Int8 => (8, true),
        Int16 => (16, true),
        Int32 => (32, true),
        Int64 => (64, true),
        UInt8 => (8, false),
        UInt16 => (16, false),
        UInt32 => (32, false),
        UInt64 => (64, false),
        _ => return None,
    })
}

fn int_type(bits: u8, signed: bool) -> Option<DataType> {
    use DataType::*;
    Some(match (bits, signed) {
        (8, true) => Int8,
        (16, true) => Int16,
        (32, true) => Int32,
        (64, true) => Int64,
        (8, false) => UInt8,
        (16, false) => UInt16,
        (32, false) => UInt32,
        (64, false) => UInt64,
        _ => return None,
    })
}

/// Whether every value of integer type `a` is a value of `b`.
fn int_within(a: (u8, bool), b: (u8, bool)) -> bool {
    match (a.1, b.1) {
        (s, t) if s == t => a.0 <= b.0,
        // Unsigned into signed needs one more bit: u32 fits i64, u64 fits nothing.
        (false, true) => a.0 < b.0,
        // A negative value fits no unsigned type.
        (true, false) => false,
        _ => unreachable!(),
    }
}

/// Decimal digits the largest value of an integer type has.
fn int_digits((bits, signed): (u8, bool)) -> u8 {
    match (bits, signed) {
        (8, _) => 3,
        (16, _) => 5,
        (32, _) => 10,
        (64, true) => 19,
        _ => 20,
    }
}

fn float_rank(t: &DataType) -> Option<u8> {
    match t {
        DataType::Float16 => Some(1),
        DataType::Float32 => Some(2),
        DataType::Float64 => Some(3),
        _ => None,
    }
}

/// (width rank, precision, scale) of a decimal type.
fn decimal(t: &DataType) -> Option<(u8, u8, i8)> {
    match *t {
        DataType::Decimal32(p, s) => Some((1, p, s)),
        DataType::Decimal64(p, s) => Some((2, p, s)),
        DataType::Decimal128(p, s) => Some((3, p, s)),
        DataType::Decimal256(p, s) => Some((4, p, s)),
        _ => None,
    }
}

fn decimal_type(rank: u8, p: u8, s: i8) -> DataType {
    match rank {
        1 => DataType::Decimal32(p, s),
        2 => DataType::Decimal64(p, s),
        3 => DataType::Decimal128(p, s),
        _ => DataType::Decimal256(p, s),
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

/// The element field of a list layout (List, LargeList and their views).
fn list_item(t: &DataType) -> Option<&FieldRef> {
    match t {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => Some(f),
        _ => None,
    }
}

/// Finer of two time units (more digits).
fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    let rank = |u: TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// The one type that holds every value of both `a` and `b` exactly and
/// means the same by them, for two files of one table storing a column
/// differently; None when no such type exists (a lossy or ambiguous
/// difference, which the caller refuses).
///
/// Accepted: string layouts (Utf8, LargeUtf8, Utf8View read as Utf8),
/// binary layouts (with fixed-size binary, as Binary), list layouts (as
/// List), dictionaries (as their values), integer widths (unsigned into a
/// wider signed type; u64 and a signed type have none), float widths,
/// decimal precision at one scale, timestamp units at one zone (the finer
/// unit), NULL-typed columns (as the other type), and nested types made of
/// these. Refused: integer against float or decimal, decimal scales,
/// naive against zoned timestamps or two zones, date against timestamp,
/// structs whose field names differ, anything else that is not equal.
pub(crate) fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Dictionary(_, v), other) | (other, Dictionary(_, v)) => unify(v, other),
        (Null, other) | (other, Null) => Some(other.clone()),
        (x, y) if is_string(x) && is_string(y) => Some(Utf8),
        (x, y)
            if (is_binary(x) || matches!(x, FixedSizeBinary(_)))
                && (is_binary(y) || matches!(y, FixedSizeBinary(_))) =>
        {
            Some(Binary)
        }
        (x, y) if int_range(x).is_some() && int_range(y).is_some() => {
            let (p, q) = (int_range(x)?, int_range(y)?);
            if int_within(p, q) {
                Some(y.clone())
            } else if int_within(q, p) {
                Some(x.clone())
            } else {
                // Mixed signs: the narrowest signed type holding both (u32 and i16: i64).
                [16, 32, 64]
                    .into_iter()
                    .find(|&bits| int_within(p, (bits, true)) && int_within(q, (bits, true)))
                    .and_then(|bits| int_type(bits, true))
            }
        }
        (x, y) if float_rank(x).is_some() && float_rank(y).is_some() => {
            Some(if float_rank(x) >= float_rank(y) {
                x.clone()
            } else {
                y.clone()
            })
        }
        (x, y) if decimal(x).is_some() && decimal(y).is_some() => {
            let ((r1, p1, s1), (r2, p2, s2)) = (decimal(x)?, decimal(y)?);
            // Another scale would rescale values and change how they print: refused.
            (s1 == s2).then(|| decimal_type(r1.max(r2), p1.max(p2), s1))
        }
        (Timestamp(u, z1), Timestamp(v, z2)) if z1 == z2 => {
            Some(Timestamp(finer(*u, *v), z1.clone()))
        }
        (x, y) if list_item(x).is_some() && list_item(y).is_some() => {
            let (f, g) = (list_item(x)?, list_item(y)?);
            Some(List(Arc::new(Field::new(
                f.name(),
                unify(f.data_type(), g.data_type())?,
                f.is_nullable() || g.is_nullable(),
            ))))
        }
        (Struct(fs), Struct(gs)) if fs.len() == gs.len() => {
            let fields: Option<Vec<Field>> = fs
                .iter()
                .zip(gs.iter())
                .map(|(f, g)| {
                    (f.name() == g.name()).then_some(())?;
                    Some(Field::new(
                        f.name(),
                        unify(f.data_type(), g.data_type())?,
                        f.is_nullable() || g.is_nullable(),
                    ))
                })
                .collect();
            Some(Struct(fields?.into()))
        }
        (Map(f, s1), Map(g, s2)) => {
            let (Struct(fk), Struct(gk)) = (f.data_type(), g.data_type()) else {
                return None;
            };
            if fk.len() != 2 || gk.len() != 2 {
                return None;
            }
            let key = unify(fk[0].data_type(), gk[0].data_type())?;
            let value = unify(fk[1].data_type(), gk[1].data_type())?;
            let entries = Struct(Fields::from(vec![
                Field::new(fk[0].name(), key, false),
                Field::new(
                    fk[1].name(),
                    value,
                    fk[1].is_nullable() || gk[1].is_nullable(),
                ),
            ]));
            Some(Map(
                Arc::new(Field::new(f.name(), entries, false)),
                *s1 && *s2,
            ))
        }
        _ => None,
    }
}

/// How a file's column stored as `file` reads as the table's type `table`:
/// `Some(None)` as it is, `Some(Some(table))` converted by `convert`,
/// None refused (no exact conversion exists).
pub(crate) fn widening(
    file: &DataType,
    table: &DataType,
    rules: Declared,
) -> Option<Option<DataType>> {
    if file == table {
        return Some(None);
    }
    converts(file, table, rules).then(|| Some(table.clone()))
}

/// Whether [`convert`] brings every value of `from` to `to` exactly (or
/// refuses the value that it cannot).
fn converts(from: &DataType, to: &DataType, rules: Declared) -> bool {
    use DataType::*;
    if from == to {
        return true;
    }
    match (from, to) {
        (Null, _) => true,
        (Dictionary(_, v), _) => converts(v, to, rules),
        (x, y) if is_string(x) => is_string(y),
        (x, y) if is_binary(x) || matches!(x, FixedSizeBinary(_)) => is_binary(y),
        (x, y) if int_range(x).is_some() => {
            let p = int_range(x).unwrap_or((64, false));
            match y {
                _ if int_range(y).is_some() => int_within(p, int_range(y).unwrap_or((0, true))),
                // Floats hold integers exactly up to 2^24 and 2^53 (Delta's type widening).
                Float32 => p.0 <= 16,
                Float64 => p.0 <= 32,
                _ => decimal(y).is_some_and(|(_, q, t)| {
                    t >= 0 && i16::from(q) - i16::from(t) >= i16::from(int_digits(p))
                }),
            }
        }
        (x, y) if float_rank(x).is_some() => {
            float_rank(y).is_some_and(|r| r >= float_rank(x).unwrap_or(4))
        }
        (x, y) if decimal(x).is_some() => match (decimal(x), decimal(y)) {
            // A wider scale only appends zeros; the integer digits must fit.
            (Some((_, p, s)), Some((_, q, t))) => {
                t >= s && i16::from(q) - i16::from(t) >= i16::from(p) - i16::from(s)
            }
            _ => false,
        },
        // Midnight of the day, in a wall-clock timestamp (Delta's type widening).
        (Date32, Timestamp(_, None)) => true,
        (Timestamp(_, z1), Timestamp(_, z2)) => match (z1, z2) {
            // An instant keeps its meaning under any zone's label.
            (Some(_), Some(_)) => true,
            (None, None) => true,
            (None, Some(_)) => rules.naive_is_utc,
            (Some(_), None) => false,
        },
        (x, y) if list_item(x).is_some() => match (list_item(x), y) {
            (Some(f), List(g) | LargeList(g)) => converts(f.data_type(), g.data_type(), rules),
            _ => false,
        },
        (Struct(fs), Struct(gs)) => {
            let each = gs.iter().all(|g| match fs.find(g.name()) {
                Some((_, f)) => converts(f.data_type(), g.data_type(), rules),
                None => rules.struct_fields_evolve && g.is_nullable(),
            });
            // A field the file holds but the table does not name is refused,
            // not dropped: it may hold the values (a shredded variant's
            // `typed_value`), and dropping them could make a false match.
            each && fs.iter().all(|f| gs.find(f.name()).is_some())
        }
        (Map(f, _), Map(g, _)) => match (f.data_type(), g.data_type()) {
            (Struct(fk), Struct(gk)) if fk.len() == 2 && gk.len() == 2 => {
                converts(fk[0].data_type(), gk[0].data_type(), rules)
                    && converts(fk[1].data_type(), gk[1].data_type(), rules)
            }
            _ => false,
        },
        _ => false,
    }
}

/// `array` (of a type [`widening`] accepted) as type `to`, exactly; or why
/// a value cannot be (a sub-unit digit, an overflow), for the caller to
/// name with the file and column.
pub(crate) fn convert(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    use DataType::*;
    let from = array.data_type();
    if from == to {
        return Ok(array.clone());
    }
    match (from, to) {
        (Null, _) => Ok(arrow::array::new_null_array(to, array.len())),
        (Dictionary(_, v), _) if !matches!(to, Dictionary(..)) => {
            let plain = cast(array, v)?;
            convert(&plain, to)
        }
        (Timestamp(..), Timestamp(unit, zone)) => timestamp(array, *unit, zone.clone()),
        (Date32, Timestamp(unit, zone)) => {
            let days = array.as_primitive::<arrow::datatypes::Date32Type>();
            let per_day = 86_400 * units_per_second(*unit);
            let values = checked_values(days.values(), days.nulls(), |d| {
                i64::from(d).checked_mul(per_day).ok_or_else(|| {
                    format!(
                        "date {d} days from 1970-01-01 is out of range for a timestamp in {unit:?}"
                    )
                })
            })?;
            Ok(timestamp_array(
                values,
                days.nulls().cloned(),
                *unit,
                zone.clone(),
            ))
        }
        (_, List(f)) if list_item(from).is_some() => list::<i32>(array, f),
        (_, LargeList(f)) if list_item(from).is_some() => list::<i64>(array, f),
        (Struct(_), Struct(fields)) => structure(array, fields),
        (Map(..), Map(f, sorted)) => map(array, f, *sorted),
        // Integers, floats, decimals, string and binary layouts: arrow's
        // cast is exact for the pairs [`widening`] accepts, and with
        // `safe: false` an overflow is an error rather than a NULL.
        _ => cast(array, to),
    }
}

fn cast(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    let options = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow::compute::cast_with_options(array, to, &options).map_err(|e| e.to_string())
}

fn units_per_second(u: TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// `f` applied to every valid value; NULL slots (whose stored values mean
/// nothing) become 0 unchecked.
fn checked_values<T: Copy>(
    values: &[T],
    nulls: Option<&NullBuffer>,
    f: impl Fn(T) -> Result<i64, String>,
) -> Result<ScalarBuffer<i64>, String> {
    let out: Result<Vec<i64>, String> = match nulls {
        None => values.iter().map(|&v| f(v)).collect(),
        Some(n) => values
            .iter()
            .enumerate()
            .map(|(i, &v)| if n.is_valid(i) { f(v) } else { Ok(0) })
            .collect(),
    };
    out.map(ScalarBuffer::from)
}

fn timestamp_parts(array: &ArrayRef) -> Option<(ScalarBuffer<i64>, Option<NullBuffer>, TimeUnit)> {
    use arrow::datatypes::{
        TimestampMicrosecondType as Us, TimestampMillisecondType as Ms,
        TimestampNanosecondType as Ns, TimestampSecondType as S,
    };
    let DataType::Timestamp(unit, _) = array.data_type() else {
        return None;
    };
    let (values, nulls) = match unit {
        TimeUnit::Second => {
            let a = array.as_primitive::<S>();
            (a.values().clone(), a.nulls().cloned())
        }
        TimeUnit::Millisecond => {
            let a = array.as_primitive::<Ms>();
            (a.values().clone(), a.nulls().cloned())
        }
        TimeUnit::Microsecond => {
            let a = array.as_primitive::<Us>();
            (a.values().clone(), a.nulls().cloned())
        }
        TimeUnit::Nanosecond => {
            let a = array.as_primitive::<Ns>();
            (a.values().clone(), a.nulls().cloned())
        }
    };
    Some((values, nulls, *unit))
}

fn timestamp_array(
    values: ScalarBuffer<i64>,
    nulls: Option<NullBuffer>,
    unit: TimeUnit,
    zone: Option<Arc<str>>,
) -> ArrayRef {
    match unit {
        TimeUnit::Second => {
            Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Millisecond => {
            Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Microsecond => {
            Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(zone))
        }
        TimeUnit::Nanosecond => {
            Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(zone))
        }
    }
}

/// A timestamp in another unit and under another zone label. The zone is
/// a label on the same integers (arrow's zoned timestamps count from the
/// epoch in UTC; [`widening`] admits a naive source only where the table
/// declares it UTC). A finer unit multiplies, refusing an overflow; a
/// coarser one divides, refusing a value with digits below it. arrow's own
/// cast would truncate those digits and turn an overflow into NULL.
fn timestamp(array: &ArrayRef, unit: TimeUnit, zone: Option<Arc<str>>) -> Result<ArrayRef, String> {
    let (values, nulls, from) = timestamp_parts(array)
        .ok_or_else(|| format!("{} is not a timestamp", array.data_type()))?;
    let (a, b) = (units_per_second(from), units_per_second(unit));
    let values = if a == b {
        values
    } else if b > a {
        let k = b / a;
        checked_values(&values, nulls.as_ref(), |v| {
            v.checked_mul(k).ok_or_else(|| {
                format!(
                    "timestamp {} is out of range for Timestamp({unit:?})",
                    show(v, from)
                )
            })
        })?
    } else {
        let k = a / b;
        checked_values(&values, nulls.as_ref(), |v| {
            if v % k == 0 {
                Ok(v / k)
            } else {
                Err(format!(
                    "timestamp {} has digits below the {} of Timestamp({unit:?}); recon does not truncate",
                    show(v, from),
                    match unit {
                        TimeUnit::Second => "seconds",
                        TimeUnit::Millisecond => "milliseconds",
                        TimeUnit::Microsecond => "microseconds",
                        TimeUnit::Nanosecond => "nanoseconds",
                    }
                ))
            }
        })?
    };
    Ok(timestamp_array(values, nulls, unit, zone))
}

/// A timestamp value for messages: ISO 8601 in UTC, exact to its unit.
fn show(v: i64, unit: TimeUnit) -> String {
    let per = units_per_second(unit);
    let (secs, sub) = (v.div_euclid(per), v.rem_euclid(per));
    let nanos = sub * (1_000_000_000 / per);
    match chrono::DateTime::from_timestamp(secs, nanos as u32) {
        Some(t) => t
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
            .to_string(),
        None => format!("{v} ({unit:?} since the epoch)"),
    }
}

/// A list (any list layout) as a List or LargeList of `item`.
fn list<O: OffsetSizeTrait>(array: &ArrayRef, item: &FieldRef) -> Result<ArrayRef, String> {
    let from_item = list_item(array.data_type())
        .ok_or_else(|| format!("{} is not a list", array.data_type()))?;
    // First the layout, keeping the element type: exact, or an error past 2^31 offsets.
    let layout_field = Arc::new(Field::new(
        item.name(),
        from_item.data_type().clone(),
        from_item.is_nullable(),
    ));
    let layout = if O::IS_LARGE {
        DataType::LargeList(layout_field)
    } else {
        DataType::List(layout_field)
    };
    let same_layout = matches!(
        (array.data_type(), O::IS_LARGE),
        (DataType::List(_), false) | (DataType::LargeList(_), true)
    );
    let array = if same_layout {
        array.clone()
    } else {
        cast(array, &layout)?
    };
    let (_, offsets, values, nulls) = array.as_list::<O>().clone().into_parts();
    let values = convert(&values, item.data_type())?;
    GenericListArray::<O>::try_new(item.clone(), offsets, values, nulls)
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| e.to_string())
}

/// A struct as struct `fields`, each taken by name from the array's (a
/// field the array lacks: NULL; see [`Declared::struct_fields_evolve`]).
fn structure(array: &ArrayRef, fields: &Fields) -> Result<ArrayRef, String> {
    let s = array.as_struct();
    let children = fields
        .iter()
        .map(|f| match s.column_by_name(f.name()) {
            Some(c) => convert(c, f.data_type()),
            None => Ok(arrow::array::new_null_array(f.data_type(), s.len())),
        })
        .collect::<Result<Vec<_>, _>>()?;
    StructArray::try_new(fields.clone(), children, s.nulls().cloned())
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| e.to_string())
}

/// A map as a map of `entries`: keys and values by position (writers name
/// the entries' fields differently).
fn map(array: &ArrayRef, entries: &FieldRef, sorted: bool) -> Result<ArrayRef, String> {
    let m = array.as_map();
    let DataType::Struct(kv) = entries.data_type() else {
        return Err(format!("{} is not a map's entries", entries.data_type()));
    };
    let e = m.entries();
    let children = kv
        .iter()
        .zip(e.columns())
        .map(|(f, c)| convert(c, f.data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    let e = StructArray::try_new(kv.clone(), children, e.nulls().cloned())
        .map_err(|e| e.to_string())?;
    MapArray::try_new(
        entries.clone(),
        m.offsets().clone(),
        e,
        m.nulls().cloned(),
        sorted,
    )
    .map(|a| Arc::new(a) as ArrayRef)
    .map_err(|e| e.to_string())
}

/// `array` under type `to`, which differs from its type in nested field
/// names only (Delta column mapping: files name struct fields by their
/// physical names, the table by their logical ones). The same buffers.
pub(crate) fn relabel(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, String> {
    fn data(d: arrow::array::ArrayData, to: &DataType) -> Result<arrow::array::ArrayData, String> {
        let kids: Vec<&DataType> = match to {
            DataType::Struct(fs) => fs.iter().map(|f| f.data_type()).collect(),
            DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => vec![f.data_type()],
            _ => Vec::new(),
        };
        if kids.len() != d.child_data().len() {
            return Err(format!("{} does not have the shape of {to}", d.data_type()));
        }
        let children = d
            .child_data()
            .iter()
            .zip(kids)
            .map(|(c, t)| data(c.clone(), t))
            .collect::<Result<Vec<_>, _>>()?;
        d.into_builder()
            .data_type(to.clone())
            .child_data(children)
            .build()
            .map_err(|e| e.to_string())
    }
    if array.data_type() == to {
        return Ok(array.clone());
    }
    data(array.to_data(), to).map(arrow::array::make_array)
}

/// `t` with 64-bit-offset strings and binaries as their 32-bit forms at
/// any depth, names and nullability kept: the type to read a nested column
/// as when its writer chose large offsets (pyarrow's `large_string` inside
/// a map) and the table declares plain ones. [`convert`] to it is exact or
/// an error (a value past 2 GiB).
#[cfg(feature = "iceberg")]
pub(crate) fn narrow_offsets(t: &DataType) -> DataType {
    use DataType::*;
    let field = |f: &FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(narrow_offsets(f.data_type())),
        )
    };
    match t {
        LargeUtf8 => Utf8,
        LargeBinary => Binary,
        List(f) => List(field(f)),
        LargeList(f) => LargeList(field(f)),
        Struct(fs) => Struct(fs.iter().map(field).collect()),
        Map(f, sorted) => Map(field(f), *sorted),
        other => other.clone(),
    }
}

/// `t` with every nested field nullable, to compare shapes: a child the
/// file stores as required reads exactly as the optional child a table
/// declares.
#[cfg(feature = "iceberg")]
pub(crate) fn loosen(t: &DataType) -> DataType {
    use DataType::*;
    let field = |f: &FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(loosen(f.data_type()))
                .with_nullable(true),
        )
    };
    match t {
        List(f) => List(field(f)),
        LargeList(f) => LargeList(field(f)),
        Struct(fs) => Struct(fs.iter().map(field).collect()),
        Map(f, sorted) => Map(field(f), *sorted),
        other => other.clone(),
    }
}

/// `t` without field metadata at any depth: a table format's bookkeeping
/// (Delta's column-mapping ids, Parquet field ids) is not part of a type.
#[cfg_attr(not(feature = "delta"), allow(dead_code))]
pub(crate) fn strip_metadata(t: &DataType) -> DataType {
    use DataType::*;
    let field = |f: &FieldRef| {
        Arc::new(Field::new(
            f.name(),
            strip_metadata(f.data_type()),
            f.is_nullable(),
        ))
    };
    match t {
        List(f) => List(field(f)),
        LargeList(f) => LargeList(field(f)),
        ListView(f) => ListView(field(f)),
        LargeListView(f) => LargeListView(field(f)),
        FixedSizeList(f, n) => FixedSizeList(field(f), *n),
        Map(f, s) => Map(field(f), *s),
        Struct(fs) => Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        Date32Array, Decimal128Array, Int32Array, Int64Array, LargeStringArray, ListArray,
        StringArray, UInt32Array,
    };
    use arrow::datatypes::Int32Type;
    use DataType::*;

    fn ts(u: TimeUnit, zone: Option<&str>) -> DataType {
        Timestamp(u, zone.map(Arc::from))
    }

    fn list(t: DataType, name: &str) -> DataType {
        List(Arc::new(Field::new(name, t, true)))
    }

    fn strukt(fields: &[(&str, DataType)]) -> DataType {
        Struct(
            fields
                .iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect(),
        )
    }

    /// Pairs of types and their common type: the exact classes.
    fn accepted() -> Vec<(DataType, DataType, DataType)> {
        let dict = Dictionary(Box::new(Int32), Box::new(Utf8));
        vec![
            (Utf8, LargeUtf8, Utf8),
            (Utf8View, LargeUtf8, Utf8),
            (dict.clone(), LargeUtf8, Utf8),
            (Binary, LargeBinary, Binary),
            (BinaryView, FixedSizeBinary(16), Binary),
            (Int8, Int64, Int64),
            (Int32, Int16, Int32),
            (UInt8, UInt32, UInt32),
            (UInt32, Int64, Int64),
            (UInt32, Int32, Int64),
            (UInt8, Int8, Int16),
            (UInt16, Int8, Int32),
            (Float32, Float64, Float64),
            (Float16, Float32, Float32),
            (Decimal128(18, 2), Decimal128(19, 2), Decimal128(19, 2)),
            (Decimal64(18, 2), Decimal128(10, 2), Decimal128(18, 2)),
            (Decimal32(9, 0), Decimal256(40, 0), Decimal256(40, 0)),
            (
                ts(TimeUnit::Millisecond, Some("UTC")),
                ts(TimeUnit::Microsecond, Some("UTC")),
                ts(TimeUnit::Microsecond, Some("UTC")),
            ),
            (
                ts(TimeUnit::Second, None),
                ts(TimeUnit::Nanosecond, None),
                ts(TimeUnit::Nanosecond, None),
            ),
            (Null, Date32, Date32),
            (
                list(Int32, "item"),
                list(Int64, "element"),
                list(Int64, "item"),
            ),
            (
                LargeList(Arc::new(Field::new("item", LargeUtf8, true))),
                list(Utf8, "item"),
                list(Utf8, "item"),
            ),
            (
                strukt(&[("a", Int32), ("b", Utf8View)]),
                strukt(&[("a", Int64), ("b", Utf8)]),
                strukt(&[("a", Int64), ("b", Utf8)]),
            ),
        ]
    }

    /// Pairs no type holds exactly, or whose values mean different things.
    fn refused() -> Vec<(DataType, DataType)> {
        vec![
            (UInt64, Int64),
            (UInt64, Int8),
            (Int64, Float64),
            (Int32, Float32),
            (Int64, Decimal128(38, 0)),
            (Float64, Decimal128(38, 10)),
            (Decimal128(10, 2), Decimal128(10, 3)),
            (Decimal128(18, 2), Decimal128(19, 4)),
            (
                ts(TimeUnit::Microsecond, None),
                ts(TimeUnit::Microsecond, Some("UTC")),
            ),
            (
                ts(TimeUnit::Microsecond, Some("UTC")),
                ts(TimeUnit::Microsecond, Some("+01:00")),
            ),
            (Date32, ts(TimeUnit::Microsecond, None)),
            (Date32, Date64),
            (Utf8, Binary),
            (Utf8, Int32),
            (Boolean, Int8),
            (strukt(&[("a", Int32)]), strukt(&[("b", Int32)])),
            (
                strukt(&[("a", Int32)]),
                strukt(&[("a", Int32), ("b", Int32)]),
            ),
            (list(Int32, "item"), list(Float64, "item")),
            (list(Int32, "item"), Int32),
        ]
    }

    #[test]
    fn unify_accepts_exact_differences_both_ways() {
        for (a, b, want) in accepted() {
            assert_eq!(unify(&a, &b).as_ref(), Some(&want), "{a} with {b}");
            let back = unify(&b, &a).unwrap_or_else(|| panic!("{b} with {a}"));
            // Symmetric up to nested field names (the first file's are kept).
            assert!(back.equals_datatype(&want), "{b} with {a}: {back}");
            assert_eq!(unify(&a, &a), Some(a.clone()));
        }
    }

    #[test]
    fn unify_refuses_lossy_or_ambiguous_differences() {
        for (a, b) in refused() {
            assert_eq!(unify(&a, &b), None, "{a} with {b}");
            assert_eq!(unify(&b, &a), None, "{b} with {a}");
        }
    }

    #[test]
    fn every_unified_type_is_a_widening_of_both() {
        for (a, b, want) in accepted() {
            for t in [&a, &b] {
                assert!(
                    widening(t, &want, Declared::default()).is_some(),
                    "{t} does not widen to {want}"
                );
            }
        }
        // And narrowing a number is refused by type (a timestamp's unit is
        // checked value by value instead; layouts convert both ways).
        for (a, b, want) in accepted() {
            for t in [a, b] {
                let number = int_range(&t).is_some() || float_rank(&t).is_some();
                let precision =
                    matches!((decimal(&t), decimal(&want)), (Some(x), Some(y)) if x.1 < y.1);
                if t != want && (number || precision) {
                    assert!(
                        widening(&want, &t, Declared::default()).is_none(),
                        "{want} to {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn declared_types_widen_exactly() {
        let d = Declared::default();
        assert_eq!(widening(&Int32, &Int64, d), Some(Some(Int64)));
        assert_eq!(widening(&Int64, &Int64, d), Some(None));
        assert_eq!(widening(&Int32, &Float64, d), Some(Some(Float64)));
        assert_eq!(widening(&Int64, &Float64, d), None);
        assert_eq!(
            widening(&Int32, &Decimal128(10, 0), d),
            Some(Some(Decimal128(10, 0)))
        );
        assert_eq!(widening(&Int32, &Decimal128(11, 2), d), None);
        assert_eq!(
            widening(&Int64, &Decimal128(21, 2), d),
            Some(Some(Decimal128(21, 2)))
        );
        assert_eq!(widening(&UInt64, &Int64, d), None);
        assert_eq!(
            widening(&Decimal128(10, 2), &Decimal128(12, 4), d),
            Some(Some(Decimal128(12, 4)))
        );
        assert_eq!(widening(&Decimal128(10, 2), &Decimal128(11, 4), d), None);
        assert_eq!(widening(&Decimal128(10, 4), &Decimal128(12, 2), d), None);
        assert!(widening(&Date32, &ts(TimeUnit::Microsecond, None), d).is_some());
        assert!(widening(&Date32, &ts(TimeUnit::Microsecond, Some("UTC")), d).is_none());
        // Naive to zoned only where the table declares naive values UTC.
        let (naive, utc) = (
            ts(TimeUnit::Microsecond, None),
            ts(TimeUnit::Microsecond, Some("UTC")),
        );
        assert!(widening(&naive, &utc, d).is_none());
        assert!(widening(&naive, &utc, DELTA).is_some());
        assert!(widening(&utc, &naive, DELTA).is_none());
        assert!(widening(&ts(TimeUnit::Nanosecond, None), &utc, DELTA).is_some());
        // A struct field the file lacks: NULL only where fields evolve.
        let (old, new) = (
            strukt(&[("a", Int32)]),
            strukt(&[("a", Int32), ("b", Utf8)]),
        );
        assert!(widening(&old, &new, d).is_none());
        assert!(widening(&old, &new, DELTA).is_some());
        assert!(widening(&new, &old, DELTA).is_none());
    }

    #[test]
    fn zoneless_timestamps_become_utc_instants_unchanged() {
        let a: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            Some(1),
            None,
            Some(-5),
        ]));
        let out = convert(&a, &ts(TimeUnit::Microsecond, Some("UTC"))).unwrap();
        assert_eq!(out.data_type(), &ts(TimeUnit::Microsecond, Some("UTC")));
        let v = out.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(v.iter().collect::<Vec<_>>(), vec![Some(1), None, Some(-5)]);
    }

    #[test]
    fn nanoseconds_become_microseconds_only_without_digits_below() {
        let to = ts(TimeUnit::Microsecond, Some("UTC"));
        let exact: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![
            Some(-3_000),
            None,
            Some(7_000),
        ]));
        let out = convert(&exact, &to).unwrap();
        let v = out.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(v.iter().collect::<Vec<_>>(), vec![Some(-3), None, Some(7)]);
        let lossy: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![
            Some(1_000),
            Some(1_000_001),
        ]));
        let e = convert(&lossy, &to).unwrap_err();
        assert!(e.contains("1970-01-01T00:00:00.001000001Z"), "{e}");
        assert!(e.contains("digits below"), "{e}");
        // A NULL's stored value means nothing and is not checked.
        let masked: ArrayRef = Arc::new(TimestampNanosecondArray::new(
            vec![5, 1_000].into(),
            Some(NullBuffer::from(vec![false, true])),
        ));
        assert!(convert(&masked, &to).is_ok());
    }

    #[test]
    fn overflow_is_refused_not_nulled() {
        let far: ArrayRef = Arc::new(TimestampSecondArray::from(vec![i64::MAX / 10]));
        assert!(convert(&far, &ts(TimeUnit::Nanosecond, None)).is_err());
        let days: ArrayRef = Arc::new(Date32Array::from(vec![i32::MAX]));
        assert!(convert(&days, &ts(TimeUnit::Nanosecond, None)).is_err());
        let day: ArrayRef = Arc::new(Date32Array::from(vec![1]));
        let out = convert(&day, &ts(TimeUnit::Microsecond, None)).unwrap();
        let v = out.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
        assert_eq!(v.value(0), 86_400_000_000);
    }

    #[test]
    fn layouts_and_widths_convert_to_the_same_values() {
        let s: ArrayRef = Arc::new(LargeStringArray::from(vec![Some("a"), None, Some("ü")]));
        let out = convert(&s, &Utf8).unwrap();
        assert_eq!(
            out.as_string::<i32>(),
            &StringArray::from(vec![Some("a"), None, Some("ü")])
        );
        let u: ArrayRef = Arc::new(UInt32Array::from(vec![u32::MAX, 0]));
        let out = convert(&u, &Int64).unwrap();
        assert_eq!(
            out.as_primitive::<arrow::datatypes::Int64Type>(),
            &Int64Array::from(vec![u32::MAX as i64, 0])
        );
        let d: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(12_345), None])
                .with_precision_and_scale(18, 2)
                .unwrap(),
        );
        let out = convert(&d, &Decimal128(19, 2)).unwrap();
        assert_eq!(out.data_type(), &Decimal128(19, 2));
        assert_eq!(
            out.as_primitive::<arrow::datatypes::Decimal128Type>()
                .value(0),
            12_345
        );
        let l: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
            Some(vec![]),
        ]));
        let to = LargeList(Arc::new(Field::new("element", Int64, true)));
        let out = convert(&l, &to).unwrap();
        assert_eq!(out.data_type(), &to);
        assert_eq!(out.null_count(), 1);
        let inner = out.as_list::<i64>().value(0);
        assert_eq!(
            inner.as_primitive::<arrow::datatypes::Int64Type>(),
            &Int64Array::from(vec![Some(1), None])
        );
        let i: ArrayRef = Arc::new(Int32Array::from(vec![7]));
        let out = convert(&i, &Decimal128(12, 2)).unwrap();
        assert_eq!(
            out.as_primitive::<arrow::datatypes::Decimal128Type>()
                .value(0),
            700
        );
    }

    #[test]
    fn struct_fields_convert_by_name_and_missing_ones_are_null() {
        let s: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("a", Int32, true)),
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
        )]));
        let to = strukt(&[("b", Utf8), ("a", Int64)]);
        let out = convert(&s, &to).unwrap();
        let out = out.as_struct();
        assert_eq!(out.column(0).null_count(), 2);
        assert_eq!(
            out.column(1)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .value(1),
            2
        );
    }

    #[test]
    fn relabel_renames_nested_fields_only() {
        let s: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("col-1", Int32, true)),
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
        )]));
        let to = strukt(&[("a", Int32)]);
        let out = relabel(&s, &to).unwrap();
        assert_eq!(out.data_type(), &to);
        assert!(relabel(&s, &strukt(&[("a", Int32), ("b", Int32)])).is_err());
    }
}

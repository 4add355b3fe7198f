//! Numbers carried by value: what tolerances compare and what the maximum
//! absolute difference of a column is computed from.
//!
//! Integers and decimals stay exact (an `i128` mantissa and its scale) and
//! are compared in exact decimal arithmetic, so `--tolerance amount=0.01`
//! accepts a difference of exactly one cent and refuses 0.0100001. Floats
//! are compared as float64, the arithmetic their values live in.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::*;

use crate::config::Tolerance;

/// One number, or NULL.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Null,
    /// `mantissa × 10^-scale`.
    Exact {
        mantissa: i128,
        scale: i32,
    },
    Float(f64),
}

/// Bytes of one number in a spill record.
pub(crate) const NUM_BYTES: usize = 24;

impl Num {
    /// Writes the number into `out` (exactly [`NUM_BYTES`] long).
    pub(crate) fn encode(&self, out: &mut [u8]) {
        out.fill(0);
        match *self {
            Num::Null => {}
            Num::Exact { mantissa, scale } => {
                out[0] = 1;
                out[4..8].copy_from_slice(&scale.to_le_bytes());
                out[8..24].copy_from_slice(&mantissa.to_le_bytes());
            }
            Num::Float(f) => {
                out[0] = 2;
                out[8..16].copy_from_slice(&f.to_bits().to_le_bytes());
            }
        }
    }

    /// Reads a number written by [`Num::encode`].
    pub(crate) fn decode(b: &[u8]) -> Num {
        let word = |r: std::ops::Range<usize>| {
            let mut w = [0u8; 16];
            w[..r.len()].copy_from_slice(&b[r]);
            w
        };
        match b[0] {
            1 => Num::Exact {
                scale: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                mantissa: i128::from_le_bytes(word(8..24)),
            },
            2 => Num::Float(f64::from_bits(u64::from_le_bytes(
                word(8..16)[..8].try_into().unwrap_or([0; 8]),
            ))),
            _ => Num::Null,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match *self {
            Num::Null => None,
            Num::Exact { mantissa, scale } => Some(mantissa as f64 / 10f64.powi(scale)),
            Num::Float(f) => Some(f),
        }
    }

    /// The number as text: exact decimals digit for digit, floats in the
    /// shortest form that reads back to the same float64.
    pub(crate) fn render(&self) -> String {
        match *self {
            Num::Null => "NULL".into(),
            Num::Float(f) => format!("{f}"),
            Num::Exact { mantissa, scale } => {
                let neg = mantissa < 0;
                let digits = mantissa.unsigned_abs().to_string();
                let body = if scale > 0 {
                    let scale = scale as usize;
                    let padded = format!("{digits:0>width$}", width = scale + 1);
                    let (i, f) = padded.split_at(padded.len() - scale);
                    let f = f.trim_end_matches('0');
                    if f.is_empty() {
                        i.to_string()
                    } else {
                        format!("{i}.{f}")
                    }
                } else {
                    format!("{digits}{}", "0".repeat((-scale) as usize))
                };
                if neg {
                    format!("-{body}")
                } else {
                    body
                }
            }
        }
    }
}

/// Whether a value class is carried as numbers (after conversions).
pub(crate) fn is_numeric_class(class: &crate::plan::classes::ValueClass) -> bool {
    use crate::plan::classes::ValueClass;
    matches!(
        class,
        ValueClass::Integer | ValueClass::Float | ValueClass::Decimal
    )
}

/// Appends every value of `array` as a [`Num`]. A Decimal256 value beyond
/// the range of i128 is an error (it cannot be compared exactly here).
pub(crate) fn numbers(array: &ArrayRef, out: &mut Vec<Num>) -> Result<(), String> {
    use DataType::*;
    if let Dictionary(_, v) = array.data_type() {
        let plain = arrow::compute::cast(array, v).map_err(|e| e.to_string())?;
        return numbers(&plain, out);
    }
    let n = array.len();
    out.reserve(n);
    macro_rules! each {
        ($t:ty, $f:expr) => {{
            let a = array.as_primitive::<$t>();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    Num::Null
                } else {
                    $f(a.value(i))
                });
            }
        }};
    }
    let int = |v: i128| Num::Exact {
        mantissa: v,
        scale: 0,
    };
    match array.data_type() {
        Int8 => each!(Int8Type, |v| int(v as i128)),
        Int16 => each!(Int16Type, |v| int(v as i128)),
        Int32 => each!(Int32Type, |v| int(v as i128)),
        Int64 => each!(Int64Type, |v| int(v as i128)),
        UInt8 => each!(UInt8Type, |v| int(v as i128)),
        UInt16 => each!(UInt16Type, |v| int(v as i128)),
        UInt32 => each!(UInt32Type, |v| int(v as i128)),
        UInt64 => each!(UInt64Type, |v| int(v as i128)),
        Float16 => {
            // float16 → float64 is exact.
            let wide = arrow::compute::cast(array, &Float64).map_err(|e| e.to_string())?;
            return numbers(&wide, out);
        }
        Float32 => each!(Float32Type, |v| Num::Float(v as f64)),
        Float64 => each!(Float64Type, Num::Float),
        Decimal32(_, s) => {
            let s = *s as i32;
            each!(Decimal32Type, |v| Num::Exact {
                mantissa: v as i128,
                scale: s
            })
        }
        Decimal64(_, s) => {
            let s = *s as i32;
            each!(Decimal64Type, |v| Num::Exact {
                mantissa: v as i128,
                scale: s
            })
        }
        Decimal128(_, s) => {
            let s = *s as i32;
            each!(Decimal128Type, |v| Num::Exact {
                mantissa: v,
                scale: s
            })
        }
        Decimal256(_, s) => {
            let s = *s as i32;
            let a = array.as_primitive::<Decimal256Type>();
            for i in 0..n {
                if a.is_null(i) {
                    out.push(Num::Null);
                    continue;
                }
                let m = a.value(i).to_i128().ok_or_else(|| {
                    format!(
                        "decimal {} is beyond the range tolerances compare",
                        a.value(i)
                    )
                })?;
                out.push(Num::Exact {
                    mantissa: m,
                    scale: s,
                });
            }
        }
        other => return Err(format!("{other} is not a number")),
    }
    Ok(())
}

/// `m × 10^by` in i256, or None on overflow.
fn rescale(m: i128, by: i32) -> Option<i256> {
    rescale_i256(i256::from_i128(m), by)
}

/// Two exact numbers (and optionally a third) at one common scale.
fn common(values: &[(i128, i32)]) -> Option<Vec<i256>> {
    let s = values.iter().map(|v| v.1).max()?;
    values.iter().map(|&(m, sc)| rescale(m, s - sc)).collect()
}

/// Whether `a` and `b` match within `tol`. NULL matches only NULL. Exact
/// numbers are compared exactly (a bound so large that the arithmetic
/// would overflow 256 bits counts as not within); anything involving a
/// float in float64.
pub(crate) fn within(a: Num, b: Num, tol: &Tolerance) -> bool {
    match (a, b) {
        (Num::Null, Num::Null) => true,
        (Num::Null, _) | (_, Num::Null) => false,
        (
            Num::Exact {
                mantissa: am,
                scale: asc,
            },
            Num::Exact {
                mantissa: bm,
                scale: bsc,
            },
        ) => {
            if tol.relative {
                // |a − b| ≤ t·max(|a|,|b|) with t = tm·10^-ts:
                // |a' − b'|·10^ts ≤ tm·max(|a'|,|b'|) at a common scale.
                let Some(v) = common(&[(am, asc), (bm, bsc)]) else {
                    return false;
                };
                let (x, y) = (v[0], v[1]);
                let Some(diff) = x.checked_sub(y).map(|d| d.wrapping_abs()) else {
                    return false;
                };
                let biggest = if x.wrapping_abs() > y.wrapping_abs() {
                    x.wrapping_abs()
                } else {
                    y.wrapping_abs()
                };
                let (lhs, rhs) = if tol.scale >= 0 {
                    (
                        rescale_i256(diff, tol.scale),
                        biggest.checked_mul(i256::from_i128(tol.mantissa)),
                    )
                } else {
                    (
                        Some(diff),
                        biggest
                            .checked_mul(i256::from_i128(tol.mantissa))
                            .and_then(|r| rescale_i256(r, -tol.scale)),
                    )
                };
                matches!((lhs, rhs), (Some(l), Some(r)) if l <= r)
            } else {
                let Some(v) = common(&[(am, asc), (bm, bsc), (tol.mantissa, tol.scale)]) else {
                    return false;
                };
                match v[0].checked_sub(v[1]) {
                    Some(d) => d.wrapping_abs() <= v[2],
                    None => false,
                }
            }
        }
        _ => {
            let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
                return false;
            };
            // An infinity is within no tolerance of anything but itself
            // (inf − x is inf, and a relative bound of inf would admit it).
            if !x.is_finite() || !y.is_finite() {
                return x == y;
            }
            let diff = (x - y).abs();
            let bound = if tol.relative {
                tol.as_f64() * x.abs().max(y.abs())
            } else {
                tol.as_f64()
            };
            diff <= bound
        }
    }
}

fn rescale_i256(v: i256, by: i32) -> Option<i256> {
    let ten = i256::from_i128(10);
    let mut v = v;
    for _ in 0..by {
        v = v.checked_mul(ten)?;
    }
    Some(v)
}

/// The largest absolute difference seen in one column, exact for exact numbers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MaxDiff {
    best: Option<Num>,
}

impl MaxDiff {
    /// Counts the difference between `a` and `b` (ignored when either is NULL).
    pub(crate) fn add(&mut self, a: Num, b: Num) {
        let d = match (a, b) {
            (
                Num::Exact {
                    mantissa: am,
                    scale: asc,
                },
                Num::Exact {
                    mantissa: bm,
                    scale: bsc,
                },
            ) => {
                let s = asc.max(bsc);
                let diff = rescale(am, s - asc)
                    .zip(rescale(bm, s - bsc))
                    .and_then(|(x, y)| x.checked_sub(y))
                    .and_then(|d| d.wrapping_abs().to_i128());
                match diff {
                    Some(m) => Num::Exact {
                        mantissa: m,
                        scale: s,
                    },
                    None => match (a.as_f64(), b.as_f64()) {
                        (Some(x), Some(y)) => Num::Float((x - y).abs()),
                        _ => return,
                    },
                }
            }
            _ => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => Num::Float((x - y).abs()),
                _ => return,
            },
        };
        let bigger = match self.best {
            None => true,
            Some(best) => greater(d, best),
        };
        if bigger {
            self.best = Some(d);
        }
    }

    pub(crate) fn get(&self) -> Option<Num> {
        self.best
    }
}

/// Whether non-negative `a` exceeds `b`.
fn greater(a: Num, b: Num) -> bool {
    match (a, b) {
        (
            Num::Exact {
                mantissa: am,
                scale: asc,
            },
            Num::Exact {
                mantissa: bm,
                scale: bsc,
            },
        ) => match common(&[(am, asc), (bm, bsc)]) {
            Some(v) => v[0] > v[1],
            None => a.as_f64() > b.as_f64(),
        },
        // NaN (inf − inf) ranks above everything, so it is never hidden.
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x.is_nan() || x > y,
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(mantissa: i128, scale: i32) -> Num {
        Num::Exact { mantissa, scale }
    }

    #[test]
    fn numbers_round_trip_through_their_bytes() {
        for n in [
            Num::Null,
            dec(-12345, 2),
            dec(i128::MAX, -3),
            Num::Float(-0.5),
        ] {
            let mut b = [0u8; NUM_BYTES];
            n.encode(&mut b);
            assert_eq!(Num::decode(&b), n);
        }
    }

    #[test]
    fn a_difference_equal_to_the_tolerance_is_within_it() {
        let cent = Tolerance::parse("0.01").unwrap();
        assert!(within(dec(10000, 2), dec(10001, 2), &cent));
        assert!(!within(dec(10000, 2), dec(10002, 2), &cent));
        // Different scales on the two sides compare exactly.
        assert!(within(dec(1000, 2), dec(100_100, 4), &cent));
        assert!(!within(dec(1000, 2), dec(100_101, 4), &cent));
        assert!(!within(dec(1, 0), Num::Null, &cent));
        assert!(within(Num::Null, Num::Null, &cent));
        let rel = Tolerance::parse("0.01r").unwrap();
        assert!(within(dec(100, 0), dec(101, 0), &rel));
        assert!(!within(dec(100, 0), dec(102, 0), &rel));
        let floats = Tolerance::parse("0.5").unwrap();
        assert!(within(Num::Float(1.0), Num::Float(1.5), &floats));
        assert!(!within(Num::Float(1.0), Num::Float(1.5000001), &floats));
        assert!(!within(Num::Float(f64::NAN), Num::Float(1.0), &floats));
        let rel = Tolerance::parse("0.5r").unwrap();
        assert!(!within(Num::Float(f64::INFINITY), Num::Float(5.0), &rel));
        assert!(!within(
            Num::Float(f64::INFINITY),
            Num::Float(f64::NEG_INFINITY),
            &rel
        ));
        assert!(!within(Num::Float(f64::INFINITY), dec(5, 0), &rel));
        let thousands = Tolerance::parse("1e3").unwrap();
        assert!(within(dec(0, 0), dec(1000, 0), &thousands));
        assert!(!within(dec(0, 0), dec(1001, 0), &thousands));
    }

    #[test]
    fn the_largest_difference_is_exact_for_decimals() {
        let mut m = MaxDiff::default();
        m.add(dec(100, 2), dec(101, 2));
        m.add(dec(5, 0), dec(7, 1));
        m.add(Num::Null, dec(1_000_000, 0));
        assert_eq!(m.get().unwrap().render(), "4.3");
        assert_eq!(dec(-1500, 3).render(), "-1.5");
        assert_eq!(dec(12, -2).render(), "1200");
    }

    #[test]
    fn typed_arrays_become_numbers() {
        use arrow::array::{Decimal128Array, Float64Array, Int32Array};
        use std::sync::Arc;
        let mut out = Vec::new();
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(3), None]));
        numbers(&ints, &mut out).unwrap();
        let decs: ArrayRef = Arc::new(
            Decimal128Array::from(vec![Some(150)])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        );
        numbers(&decs, &mut out).unwrap();
        let fl: ArrayRef = Arc::new(Float64Array::from(vec![2.5]));
        numbers(&fl, &mut out).unwrap();
        assert_eq!(
            out,
            vec![dec(3, 0), Num::Null, dec(150, 2), Num::Float(2.5)]
        );
    }
}

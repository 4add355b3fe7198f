package dev.recon.spark;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimeType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The canonical encoding (docs/encoding.md) of one Spark type's internal
 * values. Each encoder writes exactly the bytes recon's Rust encoder
 * (crates/recon/src/digest/encode/canonical.rs) writes for the Arrow array
 * Spark hands {@code mapInArrow} for that type (pyspark's
 * {@code to_arrow_type}, Spark's {@code ArrowWriter}); the Rust digest is the
 * test oracle (python/tests/test_spark_jvm.py).
 *
 * <p>{@link #write} is only called for a non-NULL value; NULL is the caller's
 * {@code 00} (nested NULLs included), which keeps the null check in one place.
 */
abstract class Encoder {
    static final int NULL = 0x00;
    static final int BOOL = 0x01;
    static final int INT = 0x02;
    static final int FLOAT = 0x03;
    static final int DECIMAL = 0x04;
    static final int DECIMAL_WIDE = 0x05;
    static final int UTF8 = 0x06;
    static final int BINARY = 0x07;
    static final int DATE = 0x08;
    static final int TIMESTAMP = 0x09;
    static final int TIMESTAMP_UTC = 0x0A;
    static final int TIME = 0x0B;
    static final int DURATION = 0x0C;
    static final int LIST = 0x10;
    static final int STRUCT = 0x11;
    static final int MAP = 0x12;

    /** Appends the encoding of the non-NULL value {@code src[i]}. */
    abstract void write(SpecializedGetters src, int i, Buf out);

    /**
     * For the non-NULL value {@code src[i]} whose encoding is at most 16
     * bytes: that encoding zero-padded to 16 bytes, as two little-endian
     * longs into {@code out} (what {@link Digest#value} reads of a short
     * encoding), computed without writing bytes; false (and nothing
     * written) when this encoder has no such shortcut for the value. Each
     * override states the bytes {@link #write} writes; VectorsTest checks
     * both paths give the same digest.
     */
    boolean halves(SpecializedGetters src, int i, long[] out) {
        return false;
    }

    /** {@code tag} then the long {@code v}: 9 bytes. */
    static boolean tagLong(int tag, long v, long[] out) {
        out[0] = tag | (v << 8);
        out[1] = v >>> 56;
        return true;
    }

    /** Appends {@code src[i]}'s encoding, {@code 00} when it is NULL. */
    final void writeNullable(SpecializedGetters src, int i, Buf out) {
        if (src.isNullAt(i)) {
            out.put(NULL);
        } else {
            write(src, i, out);
        }
    }

    /**
     * The encoder of {@code type}, or an UnsupportedOperationException
     * naming {@code where} and the type when recon has no exact encoding for
     * it: the same refusals as the Rust path (which refuses what
     * {@code digest_schema} or the Rust encoder cannot take), and every type
     * this code does not know, so nothing is ever approximated.
     */
    static Encoder of(DataType type, String where) {
        // instanceof, since Spark's type objects are Scala singletons of
        // subclasses (TimestampType$). Nanosecond timestamps are not
        // TimestampType subclasses, so they fall through to the refusal.
        if (type instanceof NullType) {
            return new Null();
        } else if (type instanceof BooleanType) {
            return new Bool();
        } else if (type instanceof ByteType || type instanceof ShortType
                || type instanceof IntegerType || type instanceof LongType) {
            return new Int(type);
        } else if (type instanceof FloatType) {
            return new Float32();
        } else if (type instanceof DoubleType) {
            return new Float64();
        } else if (type instanceof DecimalType) {
            DecimalType d = (DecimalType) type;
            return new Dec(d.precision(), d.scale());
        } else if (type instanceof StringType) {
            // Char, varchar and collated strings too: their internal values
            // are UTF8String, written to Arrow as utf8 unchanged.
            return new Str();
        } else if (type instanceof BinaryType) {
            return new Bin();
        } else if (type instanceof DateType) {
            return new Date();
        } else if (type instanceof TimestampType) {
            // Arrow timestamp[us, tz=session zone] holds the UTC instant,
            // which is Spark's internal value: tag 0a, whatever the zone.
            return new Micros(TIMESTAMP_UTC);
        } else if (type instanceof TimestampNTZType) {
            return new Micros(TIMESTAMP);
        } else if (type instanceof DayTimeIntervalType) {
            // Arrow duration[us]: a duration (tag 0c), whatever its fields.
            return new Micros(DURATION);
        } else if (type instanceof TimeType) {
            // Internal nanoseconds since midnight, Arrow time64[ns].
            return new Time();
        } else if (type instanceof ArrayType) {
            ArrayType a = (ArrayType) type;
            return new List(of(a.elementType(), where + " (array element)"));
        } else if (type instanceof StructType) {
            return new Struct((StructType) type, where);
        } else if (type instanceof MapType) {
            MapType m = (MapType) type;
            return new Map(of(m.keyType(), where + " (map key)"),
                    of(m.valueType(), where + " (map value)"));
        }
        throw new UnsupportedOperationException(where + " is " + type.simpleString()
                + ", which recon cannot digest (no exact canonical encoding: "
                + "variant, year-month and calendar intervals, user-defined, spatial "
                + "and nanosecond timestamp types are refused)");
    }

    private static final class Null extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(NULL);
        }
    }

    private static final class Bool extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(BOOL);
            out.put(src.getBoolean(i) ? 1 : 0);
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            out[0] = BOOL | (src.getBoolean(i) ? 0x100 : 0);
            out[1] = 0;
            return true;
        }
    }

    /** Every integer width encodes alike: tag 02 and the value as an i64. */
    private static final class Int extends Encoder {
        private final int width;

        Int(DataType t) {
            width = t.defaultSize();
        }

        private long get(SpecializedGetters src, int i) {
            switch (width) {
                case 1: return src.getByte(i);
                case 2: return src.getShort(i);
                case 4: return src.getInt(i);
                default: return src.getLong(i);
            }
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(INT);
            out.putLong(get(src, i));
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            return tagLong(INT, get(src, i), out);
        }
    }

    /** Every NaN is the quiet NaN 7ff8000000000000, and -0.0 is 0.0. */
    static long canonicalBits(double v) {
        if (v != v) {
            return 0x7ff8000000000000L;
        }
        return v == 0.0 ? 0L : Double.doubleToRawLongBits(v);
    }

    private static final class Float32 extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(FLOAT);
            // float -> double widening is exact, as in Rust's `as f64`.
            out.putLong(canonicalBits(src.getFloat(i)));
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            return tagLong(FLOAT, canonicalBits(src.getFloat(i)), out);
        }
    }

    private static final class Float64 extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(FLOAT);
            out.putLong(canonicalBits(src.getDouble(i)));
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            return tagLong(FLOAT, canonicalBits(src.getDouble(i)), out);
        }
    }

    private static final BigInteger TEN = BigInteger.TEN;

    private static final class Dec extends Encoder {
        private final int precision;
        private final int scale;

        Dec(int precision, int scale) {
            this.precision = precision;
            this.scale = scale;
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            Decimal d = src.getDecimal(i, precision, scale);
            if (d.scale() != scale || d.precision() > precision) {
                // Spark's ArrowWriter rescales such a value (HALF_UP) and
                // writes NULL when it does not fit; do the same on a copy,
                // since getDecimal may return the row's own object.
                d = d.clone();
                if (!d.changePrecision(precision, scale)) {
                    out.put(NULL);
                    return;
                }
            }
            if (precision <= 18) {
                putDecimal(d.toUnscaledLong(), scale, out);
            } else {
                putDecimal(d.toJavaBigDecimal().unscaledValue(), scale, out);
            }
        }

        /** Tag 04, the scale (2 bytes) and the mantissa (8): 11 bytes, when no rescale is due. */
        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            if (precision > 18) {
                return false;
            }
            Decimal d = src.getDecimal(i, precision, scale);
            if (d.scale() != scale || d.precision() > precision) {
                return false;
            }
            long m = d.toUnscaledLong();
            int e = scale;
            if (m == 0) {
                e = 0;
            } else {
                while (m % 10 == 0) {
                    m /= 10;
                    e--;
                }
            }
            out[0] = DECIMAL | ((e & 0xFFFFL) << 8) | (m << 24);
            out[1] = m >>> 40;
            return true;
        }
    }

    /** Tag 04: trailing decimal zeros stripped, zero as mantissa 0 at scale 0. */
    static void putDecimal(long m, int scale, Buf out) {
        if (m == 0) {
            scale = 0;
        } else {
            while (m % 10 == 0) {
                m /= 10;
                scale--;
            }
        }
        out.put(DECIMAL);
        out.putShort(scale);
        out.putLong(m);
    }

    /** Tag 04 when the normalized mantissa fits i64, else 05 with an i256. */
    static void putDecimal(BigInteger m, int scale, Buf out) {
        if (m.bitLength() <= 63) {
            putDecimal(m.longValue(), scale, out);
            return;
        }
        BigInteger[] qr = m.divideAndRemainder(TEN);
        while (qr[1].signum() == 0) {
            m = qr[0];
            scale--;
            qr = m.divideAndRemainder(TEN);
        }
        if (m.bitLength() <= 63) {
            putDecimal(m.longValue(), scale, out);
            return;
        }
        out.put(DECIMAL_WIDE);
        out.putShort(scale);
        // i256 little-endian two's complement; a decimal128 mantissa always fits.
        byte[] be = m.toByteArray();
        byte fill = (byte) (m.signum() < 0 ? 0xFF : 0x00);
        out.ensure(32);
        for (int k = 0; k < 32; k++) {
            out.b[out.n + k] = k < be.length ? be[be.length - 1 - k] : fill;
        }
        out.n += 32;
    }

    private static final class Str extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            UTF8String s = src.getUTF8String(i);
            int len = s.numBytes();
            out.put(UTF8);
            out.putVarint(len);
            out.ensure(len);
            s.writeToMemory(out.b, Platform.BYTE_ARRAY_OFFSET + out.n);
            out.n += len;
        }

        /** Tag 06, the length (one varint byte) and up to 14 bytes. */
        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            UTF8String s = src.getUTF8String(i);
            int len = s.numBytes();
            if (len > 14) {
                return false;
            }
            Object base = s.getBaseObject();
            long at = s.getBaseOffset();
            long lo = UTF8 | ((long) len << 8);
            long hi = 0;
            for (int j = 0; j < len; j++) {
                long b = Platform.getByte(base, at + j) & 0xFFL;
                if (j < 6) {
                    lo |= b << (8 * (j + 2));
                } else {
                    hi |= b << (8 * (j - 6));
                }
            }
            out[0] = lo;
            out[1] = hi;
            return true;
        }
    }

    private static final class Bin extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            byte[] v = src.getBinary(i);
            out.put(BINARY);
            out.putVarint(v.length);
            out.putBytes(v, 0, v.length);
        }
    }

    /** Arrow date32 as recon encodes it: milliseconds since 1970-01-01. */
    private static final class Date extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(DATE);
            out.putLong(src.getInt(i) * 86_400_000L);
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            return tagLong(DATE, src.getInt(i) * 86_400_000L, out);
        }
    }

    /** Microseconds as whole seconds (floored, i64) and nanoseconds past them (u32). */
    private static final class Micros extends Encoder {
        private final int tag;

        Micros(int tag) {
            this.tag = tag;
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            long v = src.getLong(i);
            out.put(tag);
            out.putLong(Math.floorDiv(v, 1_000_000L));
            out.putInt((int) (Math.floorMod(v, 1_000_000L) * 1000));
        }

        /** The tag, the seconds (8 bytes) and the nanoseconds (4): 13 bytes. */
        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            long v = src.getLong(i);
            long seconds = Math.floorDiv(v, 1_000_000L);
            long nanos = Math.floorMod(v, 1_000_000L) * 1000;
            out[0] = tag | (seconds << 8);
            out[1] = (seconds >>> 56) | (nanos << 8);
            return true;
        }
    }

    private static final class Time extends Encoder {
        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            out.put(TIME);
            out.putLong(src.getLong(i));
        }

        @Override
        boolean halves(SpecializedGetters src, int i, long[] out) {
            return tagLong(TIME, src.getLong(i), out);
        }
    }

    private static final class List extends Encoder {
        private final Encoder element;

        List(Encoder element) {
            this.element = element;
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            ArrayData a = src.getArray(i);
            int n = a.numElements();
            out.put(LIST);
            out.putVarint(n);
            for (int j = 0; j < n; j++) {
                element.writeNullable(a, j, out);
            }
        }
    }

    /** Fields in the bytewise order of their UTF-8 names, each name written before its value. */
    private static final class Struct extends Encoder {
        private final int width;
        private final int[] order;
        private final byte[][] names;
        private final Encoder[] fields;

        Struct(StructType type, String where) {
            StructField[] f = type.fields();
            width = f.length;
            byte[][] utf8 = new byte[width][];
            Integer[] idx = new Integer[width];
            for (int k = 0; k < width; k++) {
                utf8[k] = f[k].name().getBytes(StandardCharsets.UTF_8);
                idx[k] = k;
            }
            // Stable, as Rust's sort_by, so duplicate names keep their order.
            Arrays.sort(idx, (x, y) -> Arrays.compareUnsigned(utf8[x], utf8[y]));
            order = new int[width];
            names = new byte[width][];
            fields = new Encoder[width];
            for (int k = 0; k < width; k++) {
                int at = idx[k];
                order[k] = at;
                names[k] = utf8[at];
                fields[k] = of(f[at].dataType(), where + "." + f[at].name());
            }
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            InternalRow r = src.getStruct(i, width);
            out.put(STRUCT);
            out.putVarint(width);
            for (int k = 0; k < width; k++) {
                out.putVarint(names[k].length);
                out.putBytes(names[k], 0, names[k].length);
                fields[k].writeNullable(r, order[k], out);
            }
        }
    }

    /** Entries (key encoding, then value encoding) sorted bytewise: a map is unordered. */
    private static final class Map extends Encoder {
        private final Encoder key;
        private final Encoder value;

        Map(Encoder key, Encoder value) {
            this.key = key;
            this.value = value;
        }

        @Override
        void write(SpecializedGetters src, int i, Buf out) {
            MapData m = src.getMap(i);
            int n = m.numElements();
            ArrayData keys = m.keyArray();
            ArrayData values = m.valueArray();
            out.put(MAP);
            out.putVarint(n);
            if (n == 0) {
                return;
            }
            // Encode the entries in place, then reorder the region. Maps
            // allocate their offsets and a copy: the price of sorting.
            int[] start = new int[n + 1];
            for (int j = 0; j < n; j++) {
                start[j] = out.n;
                key.writeNullable(keys, j, out);
                value.writeNullable(values, j, out);
            }
            start[n] = out.n;
            byte[] region = Arrays.copyOfRange(out.b, start[0], out.n);
            int base = start[0];
            Integer[] idx = new Integer[n];
            for (int j = 0; j < n; j++) {
                idx[j] = j;
            }
            Arrays.sort(idx, (x, y) -> Arrays.compareUnsigned(
                    region, start[x] - base, start[x + 1] - base,
                    region, start[y] - base, start[y + 1] - base));
            int at = base;
            for (int j = 0; j < n; j++) {
                int e = idx[j];
                int len = start[e + 1] - start[e];
                System.arraycopy(region, start[e] - base, out.b, at, len);
                at += len;
            }
        }
    }
}

package dev.recon.spark;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Random;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.YearMonthIntervalType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The spec's vectors (docs/encoding.md's two tables, docs/fingerprint.md's
 * demo fingerprint) and pinned XXH3-128 vectors, checked through the bound
 * functions as Spark calls them. Plain main, no JUnit: exits 1 on any
 * mismatch. With {@code --xxh3 FILE} it also checks each line
 * "x&lt;input in hex&gt; &lt;xxh3_128 in hex&gt;" of FILE (python/tests/test_spark_jvm.py writes
 * one from Python's xxhash on random bytes).
 */
public final class VectorsTest {
    private static int failures;
    private static int checks;

    private VectorsTest() {}

    // XXH3-128 of the first L bytes of pattern(): {L, hi, lo}, computed with
    // Python's xxhash 4.1.0 (the reference C library).
    private static final long[][] XXH3 = {
        {0L, 0x99aa06d3014798d8L, 0x6001c324468d497fL},
        {1L, 0x495b62073ef70ca4L, 0x4c5cca45d0f4811fL},
        {2L, 0x12b2847aa0de5aaaL, 0xa7e250c97710ff27L},
        {3L, 0x46f66cb935381565L, 0x15f7093b173d005cL},
        {4L, 0x7fefeeffb4d0eab3L, 0xb987ca5d9241572aL},
        {5L, 0x2fbb16712b4bf1d5L, 0x752a86982353f4f3L},
        {6L, 0x278464ce40937bdcL, 0x6a25095300ac44e1L},
        {7L, 0x9194efbddb0d752cL, 0x90d8d40e8b5ca9c4L},
        {8L, 0x803c675a846cc6c2L, 0x56bb836ceb6d4baaL},
        {9L, 0xd46556872d230f22L, 0x4376673580310154L},
        {10L, 0xa0588b789a971411L, 0x38ae16544280f193L},
        {11L, 0xbcfc02420941f7dbL, 0x1696c6f427b4ab16L},
        {12L, 0x48480c880e4976fdL, 0x2f65dbab90c80af2L},
        {13L, 0xd3501e256f11edadL, 0xbe3c377269892f4dL},
        {14L, 0x215767df9249803fL, 0xab41516a147df4f9L},
        {15L, 0x2c612e00ed4f13d9L, 0x571df173bded2e23L},
        {16L, 0x650fe308c566747dL, 0xf853dd94614dfa07L},
        {17L, 0x18217300b5132d5aL, 0x78c349fe81b2f26cL},
        {31L, 0xa7591e70669b73f8L, 0x45e862e1ac921624L},
        {32L, 0x3220ff5fe507b3c0L, 0x5726e079716c6a62L},
        {33L, 0x91a4c56ad1b91d88L, 0x3b25275300c8b44eL},
        {64L, 0xf9bfa77da0891a96L, 0x36c5f7e547426bc4L},
        {65L, 0x5642c5d38e6e787dL, 0xd0d1d7884590a330L},
        {96L, 0x59861d1adb3e51a2L, 0x63451be079edd707L},
        {97L, 0x0912f66857975b13L, 0xfa4138b7dc44e45bL},
        {127L, 0x3117b681087b4ef4L, 0x8a02b1f75c556ac3L},
        {128L, 0xb4f87b99d2db8a51L, 0x1e04fad9f0cacb4dL},
        {129L, 0x6881633650cd8924L, 0xc51bc887976aef63L},
        {160L, 0xc000b788df6dbbc4L, 0xf661814e66697391L},
        {200L, 0x8d8629a1aef9ef90L, 0x60ea018811f9a437L},
        {239L, 0x75acb2ecd970b399L, 0x6df5c761356a5057L},
        {240L, 0xde57aab31e77a2ffL, 0x93e173833f75ab66L},
        {241L, 0x92b991a7192f3f08L, 0x0b3b630948ce4a00L},
        {255L, 0x3aee17704ab0ca49L, 0xb8df44df98bc5241L},
        {256L, 0xc0ad80e5a4c09a1aL, 0x812439002ec29a0bL},
        {1023L, 0xa8c8e7c4e5550b62L, 0xd04f7a5a5c53bdedL},
        {1024L, 0x4eaeb140d3cb1b7fL, 0xed50d11760f4619bL},
        {1025L, 0x857c1711a9904a21L, 0xf5d032ca86d62dfbL},
        {1088L, 0x93ac9652e373a535L, 0x794a291b5e9756f9L},
        {2048L, 0x3bf8cd71a242fdc5L, 0x04a8bb5b1fe5d29dL},
        {2100L, 0x63814fc0022a57d9L, 0x6229d2229737ee1eL},
    };

    private static byte[] pattern() {
        byte[] d = new byte[2100];
        for (int i = 0; i < d.length; i++) {
            d[i] = (byte) ((i * 31 + 7) * (i / 251 + 1));
        }
        return d;
    }

    private static void check(String what, String got, String want) {
        checks++;
        if (!got.equals(want)) {
            failures++;
            System.out.println("MISMATCH " + what + ": got " + got + ", want " + want);
        }
    }

    private static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%02x", x & 0xFF));
        }
        return s.toString();
    }

    private static String u128(long lo, long hi) {
        return String.format("%016x%016x", hi, lo);
    }

    private static byte[] unhex(String h) {
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    private static StructType one(DataType t) {
        return new StructType(new StructField[] {DataTypes.createStructField("v", t, true)});
    }

    private static InternalRow row(Object... v) {
        return new GenericInternalRow(v);
    }

    private static void encoding(String what, DataType t, Object v, String want) {
        check("encoding of " + what, hex(new RowDigester(one(t), "test").encoding(row(v), 0)),
                want.replace(" ", ""));
    }

    private static String value(DataType t, Object v) {
        long[] out = new long[2];
        new RowDigester(one(t), "test").value(row(v), 0, out);
        return u128(out[0], out[1]);
    }

    /** V of {@code v} by the byte path: the encoding written, then {@link Digest#value}. */
    private static String valueByBytes(DataType t, Object v) {
        byte[] e = new RowDigester(one(t), "test").encoding(row(v), 0);
        byte[] b = java.util.Arrays.copyOf(e, Math.max(16, e.length));
        long[] out = new long[2];
        Digest.value(b, e.length, out);
        return u128(out[0], out[1]);
    }

    /**
     * The fixed-width shortcut ({@link Encoder#halves}) against the byte
     * path, on edge values and random ones of every type that has it.
     */
    private static void halvesAgreeWithBytes() {
        Random r = new Random(20261205);
        long[] edges = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1_000_000, -999_999, -1_000_001};
        DataType[] ints = {DataTypes.ByteType, DataTypes.ShortType, DataTypes.IntegerType,
            DataTypes.LongType};
        DataType[] micros = {DataTypes.TimestampType, DataTypes.TimestampNTZType,
            DataTypes.createDayTimeIntervalType()};
        for (int n = 0; n < 2000; n++) {
            long x = n < edges.length ? edges[n] : r.nextLong() >> r.nextInt(64);
            for (DataType t : ints) {
                Object v = t == DataTypes.ByteType ? (Object) (byte) x
                        : t == DataTypes.ShortType ? (Object) (short) x
                        : t == DataTypes.IntegerType ? (Object) (int) x : (Object) x;
                same(t, v);
            }
            for (DataType t : micros) {
                same(t, x);
            }
            same(DataTypes.DateType, (int) x);
            // Strings of 0 to 20 bytes, some of them multi-byte UTF-8.
            StringBuilder text = new StringBuilder();
            for (int j = r.nextInt(12); j > 0; j--) {
                text.append(r.nextInt(4) == 0 ? '\u00e9' : (char) ('a' + r.nextInt(26)));
            }
            same(DataTypes.StringType, UTF8String.fromString(text.toString()));
            same(DataTypes.BooleanType, (x & 1) == 0);
            double d = n % 7 == 0 ? Double.NaN : n % 11 == 0 ? -0.0 : Double.longBitsToDouble(x);
            same(DataTypes.DoubleType, d);
            same(DataTypes.FloatType, (float) d);
            // Mantissas with trailing zeros, zero, and the widest precision
            // the shortcut takes; precision 19 takes the byte path.
            long m = (x % 1_000_000_000_000_000_000L) / (n % 5 == 0 ? 1 : 1000) * (n % 3 == 0 ? 100 : 1);
            if (Math.abs(m) < 1_000_000_000_000_000_000L) {
                int scale = Math.floorMod(n, 19);
                same(DataTypes.createDecimalType(18, scale), Decimal.apply(BigDecimal.valueOf(m, scale), 18, scale));
            }
        }
    }

    private static void same(DataType t, Object v) {
        checks++;
        String fast = value(t, v);
        String bytes = valueByBytes(t, v);
        if (!fast.equals(bytes)) {
            failures++;
            if (failures < 20) {
                System.out.println("MISMATCH: V(" + v + " as " + t.simpleString() + "): shortcut " + fast
                        + ", bytes " + bytes);
            }
        }
    }

    private static BoundFunction bind(String fn, StructField... args) throws Exception {
        return new ReconCatalog().loadFunction(Identifier.of(new String[0], fn))
                .bind(new StructType(args));
    }

    private static String leU128(byte[] d) {
        return u128(Digest.readLong(d, 0), Digest.readLong(d, 8));
    }

    public static void main(String[] args) throws Exception {
        DataType str = DataTypes.StringType;
        encoding("NULL (string)", str, null, "00");
        encoding("'ab'", str, UTF8String.fromString("ab"), "06 02 61 62");
        encoding("''", str, UTF8String.fromString(""), "06 00");
        encoding("-2 (int)", DataTypes.IntegerType, -2, "02 fe ff ff ff ff ff ff ff");
        System.out.println("not expressible in Spark (no unsigned 64-bit type): 18446744073709551615 as UInt64");
        encoding("1.5 (double)", DataTypes.DoubleType, 1.5, "03 00 00 00 00 00 00 f8 3f");
        encoding("1.50 (decimal(10,2))", DataTypes.createDecimalType(10, 2),
                Decimal.apply(new BigDecimal("1.50"), 10, 2), "04 01 00 0f 00 00 00 00 00 00 00");
        // Timestamp(ms) without zone: Spark's timestamp_ntz, in microseconds.
        encoding("1969-12-31 23:59:59.999 (timestamp_ntz)", DataTypes.TimestampNTZType, -1000L,
                "09 ff ff ff ff ff ff ff ff c0 87 8b 3b");
        encoding("true", DataTypes.BooleanType, true, "01 01");
        encoding("1970-01-02 (date)", DataTypes.DateType, 1, "08 00 5c 26 05 00 00 00 00");
        encoding("[1, NULL] (array<tinyint>)", DataTypes.createArrayType(DataTypes.ByteType),
                new GenericArrayData(new Object[] {(byte) 1, null}),
                "10 02 02 01 00 00 00 00 00 00 00 00");

        check("V(00)", value(str, null), "736a9cf56a518b388a7ad6c9814ac603");
        check("V(int -2)", value(DataTypes.IntegerType, -2), "ebc98e8e0919846f44561c4b3139db34");
        check("V('ab')", value(str, UTF8String.fromString("ab")), "716f5109266eb11169b57f30167ebd37");
        long[] a0 = Digest.a(0);
        long[] b0 = Digest.b(0);
        long[] a1 = Digest.a(1);
        long[] b1 = Digest.b(1);
        check("A_0", u128(a0[0], a0[1]), "1ac046dda8e86e2abe2c3b00b1d348c8");
        check("B_0", u128(b0[0], b0[1]), "0d35b78b9930a2bd80f4d5a8ca972ced");
        check("A_1", u128(a1[0], a1[1]), "c092b9d3981ecda1b8f05fb9bdfb1c82");
        check("B_1", u128(b1[0], b1[1]), "4a8035856681dfef3c7581a7ed64c935");
        StructField region = DataTypes.createStructField("region", str, true);
        StructField amount = DataTypes.createStructField("amount", DataTypes.LongType, true);
        DigestFunction digest = (DigestFunction) bind("digest",
                DataTypes.createStructField("r", new StructType(new StructField[] {region, amount}), false));
        check("row ('north', 100)", leU128(digest.invoke(row(UTF8String.fromString("north"), 100L))),
                "4782c54d603d81007ce99b7748fa9eee");
        check("V('a longer string value')", value(str, UTF8String.fromString("a longer string value")),
                "6bb100ac22d5938588a8d6192c8c0ce8");

        // docs/fingerprint.md's demo: columns in name order (amount, region).
        StructType byName = new StructType(new StructField[] {amount, region});
        DigestFunction fd = (DigestFunction) bind("digest",
                DataTypes.createStructField("r", byName, false));
        FingerprintFunction fp = (FingerprintFunction) bind("fingerprint",
                DataTypes.createStructField("d", DataTypes.BinaryType, false));
        Object[][] demo = {{100L, "north"}, {200L, "south"}, {200L, "south"}, {50L, null}};
        long[] s = fp.newAggregationState();
        long[] other = fp.newAggregationState();
        RowDigester cols = new RowDigester(byName, "test");
        long[][] colSum = new long[2][2];
        int[] nonNull = new int[2];
        for (int i = 0; i < demo.length; i++) {
            InternalRow r = row(demo[i][0], demo[i][1] == null ? null : UTF8String.fromString((String) demo[i][1]));
            // Two partial states merged, as Spark merges partitions.
            fp.update(i % 2 == 0 ? s : other, row((Object) fd.invoke(r)));
            for (int c = 0; c < 2; c++) {
                if (!r.isNullAt(c)) {
                    long[] v = new long[2];
                    cols.value(r, c, v);
                    long lo = colSum[c][0] + v[0];
                    colSum[c][1] += v[1] + (Long.compareUnsigned(lo, v[0]) < 0 ? 1 : 0);
                    colSum[c][0] = lo;
                    nonNull[c]++;
                }
            }
        }
        InternalRow f = fp.produceResult(fp.merge(s, other));
        check("demo rows", Long.toString(f.getLong(0)), "4");
        check("demo row_sum", leU128(f.getBinary(1)), "84708a5dfc250ab4c5770b5645e4ec10");
        check("demo row_mix", Long.toUnsignedString(f.getLong(2)), "2252679656846208895");
        check("demo amount non_null", Integer.toString(nonNull[0]), "4");
        check("demo amount sum", u128(colSum[0][0], colSum[0][1]), "c10a296d5baccf7d2eb6b42bbaa360b6");
        check("demo region non_null", Integer.toString(nonNull[1]), "3");
        check("demo region sum", u128(colSum[1][0], colSum[1][1]), "9935345693f3d32e4a10cbfd6b3a13e7");

        BucketFunction bucket = (BucketFunction) bind("bucket",
                DataTypes.createStructField("d", DataTypes.BinaryType, false),
                DataTypes.createStructField("b", DataTypes.IntegerType, false));
        byte[] d = digest.invoke(row(UTF8String.fromString("north"), 100L));
        // D = 4782c54d603d8100...: its top 12 bits are 0x478, its top bit 0.
        check("bucket(D, 12)", Integer.toHexString(bucket.invoke(d, 12)), "478");
        check("bucket(D, 1)", Integer.toString(bucket.invoke(d, 1)), "0");

        for (DataType refused : new DataType[] {DataTypes.VariantType,
                YearMonthIntervalType.apply(), DataTypes.CalendarIntervalType}) {
            checks++;
            try {
                bind("digest", DataTypes.createStructField("r", one(refused), false));
                failures++;
                System.out.println("MISMATCH: " + refused.simpleString() + " was not refused");
            } catch (UnsupportedOperationException expected) {
                if (!expected.getMessage().contains(refused.simpleString())) {
                    failures++;
                    System.out.println("MISMATCH: refusal does not name the type: " + expected.getMessage());
                }
            }
        }

        int before = checks;
        halvesAgreeWithBytes();
        System.out.println((checks - before) + " short values: shortcut against bytes");

        byte[] data = pattern();
        long[] out = new long[2];
        for (long[] v : XXH3) {
            int len = (int) v[0];
            // At an offset, to check reads relative to it.
            byte[] shifted = new byte[len + 3];
            System.arraycopy(data, 0, shifted, 3, len);
            Xxh3.hash128(shifted, 3, len, out);
            check("xxh3_128 of " + len + " bytes", u128(out[0], out[1]), u128(v[2], v[1]));
        }
        if (args.length == 2 && args[0].equals("--xxh3")) {
            int fromFile = checks;
            List<String> lines = Files.readAllLines(Paths.get(args[1]), StandardCharsets.US_ASCII);
            for (String line : lines) {
                String[] parts = line.trim().split(" ");
                byte[] in = unhex(parts[0].substring(1));
                Xxh3.hash128(in, 0, in.length, out);
                check("xxh3_128 of random " + in.length + " bytes", u128(out[0], out[1]), parts[1]);
            }
            System.out.println((checks - fromFile) + " xxh3 vectors from " + args[1]);
        }
        System.out.println(checks + " checks, " + failures + " mismatches");
        if (failures != 0) {
            System.exit(1);
        }
    }
}

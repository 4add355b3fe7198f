package dev.recon.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.functions.AggregateFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code recon_jvm.bucket_sums(digests array<bigint>, bucket int, bits int)}: pass 1
 * of a diff on one side, in one aggregate over each row's {@link
 * RowDigestsFunction} longs. Each row's digest D goes into its bucket among
 * {@code 2^bits} (count, sum of D mod 2^128, sum of mix(D) mod 2^64), and
 * each column's non-NULL values into that column's count and value-digest
 * sum. A NULL bucket is D's own bucket ({@link Digest#bucket}: its top
 * bits, as the command line buckets; recon.spark's keyless diffs); else
 * the bucket is the engine's choice (recon.spark's keyed diffs pass the
 * bucket of the key, so that all rows of a key share one). Any choice is
 * exact, since buckets only say where each digest is added.
 *
 * <p>The result is the bucket sums' wire format that the Python package's
 * native module reads ({@code BucketSums::from_bytes} in
 * crates/recon/src/modes/distributed.rs, "reconBS1"); NULL when no row was
 * added. One aggregate over the whole side, rather than a GROUP BY bucket:
 * each partition sends one state (about 128 KiB at 4096 buckets) instead
 * of a row per bucket.
 */
public final class BucketSumsFunction implements AggregateFunction<long[], byte[]> {
    private static final long serialVersionUID = 1L;
    private static final byte[] MAGIC = "reconBS1".getBytes(StandardCharsets.US_ASCII);

    // The state is a long[] (see FingerprintFunction for why no class of
    // this jar): empty before the first row, then {bits, k, k x (non_null,
    // sum lo, sum hi), 2^bits x (rows, sum lo, sum hi, mix)}.
    private static final int HEAD = 2;

    /** V of NULL, which no other value has (encoding.md): a NULL column. */
    private static final long[] NULL_DIGEST = new long[2];

    static {
        Digest.p(0, 0, NULL_DIGEST);
    }

    private static int columnAt(int c) {
        return HEAD + 3 * c;
    }

    private static int bucketAt(int k, int b) {
        return HEAD + 3 * k + 4 * b;
    }

    @Override
    public long[] newAggregationState() {
        return new long[0];
    }

    @Override
    public long[] update(long[] state, InternalRow input) {
        if (input.isNullAt(0)) {
            throw new IllegalArgumentException("recon_jvm.bucket_sums: a row without digests");
        }
        ArrayData digests = input.getArray(0);
        int n = digests.numElements();
        if (n < 2 || n % 2 != 0) {
            throw new IllegalArgumentException("recon_jvm.bucket_sums: not row_digests (" + n + " longs)");
        }
        int k = n / 2 - 1;
        if (state.length == 0) {
            int bits = input.getInt(2);
            if (bits < 1 || bits > 20) {
                throw new IllegalArgumentException("recon_jvm.bucket_sums: bits must be 1 to 20, not " + bits);
            }
            state = new long[bucketAt(k, 1 << bits)];
            state[0] = bits;
            state[1] = k;
        } else if (state[1] != k) {
            throw new IllegalArgumentException("recon_jvm.bucket_sums: rows of different widths");
        }
        for (int c = 0; c < k; c++) {
            long lo = digests.getLong(2 + 2 * c);
            long hi = digests.getLong(3 + 2 * c);
            if (lo != NULL_DIGEST[0] || hi != NULL_DIGEST[1]) {
                int at = columnAt(c);
                state[at]++;
                Digest.add128(state, at + 1, lo, hi);
            }
        }
        long lo = digests.getLong(0);
        long hi = digests.getLong(1);
        int bucket = input.isNullAt(1) ? Digest.bucket(hi, (int) state[0]) : input.getInt(1);
        if (bucket < 0 || bucket >= 1 << state[0]) {
            throw new IllegalArgumentException("recon_jvm.bucket_sums: bucket " + bucket + " is out of range");
        }
        int at = bucketAt(k, bucket);
        state[at]++;
        Digest.add128(state, at + 1, lo, hi);
        state[at + 3] += Digest.mix(lo, hi);
        return state;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
        if (a.length == 0) {
            return b;
        }
        if (b.length == 0) {
            return a;
        }
        if (a.length != b.length || a[0] != b[0] || a[1] != b[1]) {
            throw new IllegalStateException("recon_jvm.bucket_sums: states of different shapes");
        }
        int k = (int) a[1];
        for (int c = 0; c < k; c++) {
            int at = columnAt(c);
            a[at] += b[at];
            Digest.add128(a, at + 1, b[at + 1], b[at + 2]);
        }
        for (int at = bucketAt(k, 0); at < a.length; at += 4) {
            a[at] += b[at];
            Digest.add128(a, at + 1, b[at + 1], b[at + 2]);
            a[at + 3] += b[at + 3];
        }
        return a;
    }

    @Override
    public byte[] produceResult(long[] s) {
        if (s.length == 0) {
            return null;
        }
        int k = (int) s[1];
        int used = 0;
        for (int at = bucketAt(k, 0); at < s.length; at += 4) {
            used += s[at] != 0 ? 1 : 0;
        }
        ByteBuffer out = ByteBuffer.allocate(MAGIC.length + 8 + 24 * k + 36 * used)
                .order(ByteOrder.LITTLE_ENDIAN);
        out.put(MAGIC).putInt((int) s[0]).putInt(k);
        for (int c = 0; c < k; c++) {
            int at = columnAt(c);
            out.putLong(s[at]).putLong(s[at + 1]).putLong(s[at + 2]);
        }
        int b = 0;
        for (int at = bucketAt(k, 0); at < s.length; at += 4, b++) {
            if (s[at] != 0) {
                out.putInt(b).putLong(s[at]).putLong(s[at + 1]).putLong(s[at + 2]).putLong(s[at + 3]);
            }
        }
        return out.array();
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {DataTypes.createArrayType(DataTypes.LongType, false), DataTypes.IntegerType, DataTypes.IntegerType};
    }

    @Override
    public DataType resultType() {
        return DataTypes.BinaryType;
    }

    @Override
    public boolean isResultNullable() {
        return true;
    }

    @Override
    public String name() {
        return "bucket_sums";
    }

    @Override
    public String canonicalName() {
        return "recon.bucket_sums";
    }

    // Stateless: every binding is the same function (see DigestFunction.equals).
    @Override
    public boolean equals(Object o) {
        return o instanceof BucketSumsFunction;
    }

    @Override
    public int hashCode() {
        return 5;
    }
}

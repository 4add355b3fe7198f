package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.functions.AggregateFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon.fingerprint(digest binary)}: the multiset fingerprint of the
 * digests (docs/fingerprint.md), as STRUCT&lt;rows BIGINT, sum BINARY (16
 * bytes little-endian, sum of D mod 2^128), mix BIGINT (sum of mix(D) mod
 * 2^64)&gt;.
 *
 * <p>The sums are Java long arithmetic, which wraps: exactly the modular
 * sums the spec asks for, and never an ANSI overflow error (Spark's own
 * arithmetic is not involved). A NULL digest is an error: every row has a
 * digest, and skipping one would miscount.
 */
public final class FingerprintFunction implements AggregateFunction<long[], InternalRow> {
    private static final long serialVersionUID = 1L;

    static final StructType RESULT = new StructType(new StructField[] {
        DataTypes.createStructField("rows", DataTypes.LongType, false),
        DataTypes.createStructField("sum", DataTypes.BinaryType, false),
        DataTypes.createStructField("mix", DataTypes.LongType, false),
    });

    // The state is a long[4] {rows, sum lo, sum hi, mix}, not a class of
    // this jar: Spark serializes aggregation states with Java serialization
    // and deserializes them with its own class loader (V2Aggregator), which
    // cannot see a jar added at runtime (ADD JAR); a long[] resolves anywhere.
    private static final int ROWS = 0;
    private static final int LO = 1;
    private static final int HI = 2;
    private static final int MIX = 3;

    @Override
    public long[] newAggregationState() {
        return new long[4];
    }

    @Override
    public long[] update(long[] state, InternalRow input) {
        if (input.isNullAt(0)) {
            throw new IllegalArgumentException("recon.fingerprint: a NULL digest (every row has one)");
        }
        byte[] d = input.getBinary(0);
        if (d.length != 16) {
            throw new IllegalArgumentException("recon.fingerprint: a digest is 16 bytes, not " + d.length);
        }
        long lo = Digest.readLong(d, 0);
        long hi = Digest.readLong(d, 8);
        state[ROWS]++;
        Digest.add128(state, LO, lo, hi);
        state[MIX] += Digest.mix(lo, hi);
        return state;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
        a[ROWS] += b[ROWS];
        Digest.add128(a, LO, b[LO], b[HI]);
        a[MIX] += b[MIX];
        return a;
    }

    @Override
    public InternalRow produceResult(long[] s) {
        byte[] sum = new byte[16];
        Digest.writeLong(sum, 0, s[LO]);
        Digest.writeLong(sum, 8, s[HI]);
        return new GenericInternalRow(new Object[] {s[ROWS], sum, s[MIX]});
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {DataTypes.BinaryType};
    }

    @Override
    public DataType resultType() {
        return RESULT;
    }

    @Override
    public boolean isResultNullable() {
        return false;
    }

    @Override
    public String name() {
        return "fingerprint";
    }

    @Override
    public String canonicalName() {
        return "recon.fingerprint";
    }

    // Stateless: every binding is the same function (see DigestFunction.equals).
    @Override
    public boolean equals(Object o) {
        return o instanceof FingerprintFunction;
    }

    @Override
    public int hashCode() {
        return 4;
    }
}

package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon.row_words(struct)}: what pass 1 adds up for a row, as
 * 32-bit words in longs, so that Spark's own {@code sum} adds them in its
 * generated hash aggregate (a V2 aggregate runs row by row in an object
 * hash aggregate, outside the generated code: that cost a third of pass 1).
 *
 * <p>Layout, 6 + 5k longs, each word in 0 .. 2^32 - 1, low word first:
 * the row digest D (4 words), mix(D) (2 words), then per field c a flag (1
 * when the value is not NULL) and its value digest V_c (4 words; all 0 for
 * NULL, so a NULL adds nothing). A sum of n such words is below n * 2^32,
 * exact in a long while a group holds fewer than 2^31 rows; the caller
 * checks its groups' row counts and combines the word sums modulo 2^128
 * and 2^64 (python/recon/_spark_jvm.py). A NULL struct gives NULL.
 */
public final class RowWordsFunction implements ScalarFunction<ArrayData> {
    private static final long serialVersionUID = 1L;
    private static final long WORD = 0xffffffffL;

    private final StructType type;
    private transient RowDigester digester;
    private transient long[] d;
    private transient long[] values;
    private transient long nullLo;
    private transient long nullHi;

    RowWordsFunction(StructType type) {
        this.type = type;
        new RowDigester(type, name()); // refuses unsupported types at bind time
    }

    /** Spark's magic method (whole-stage codegen). */
    public ArrayData invoke(InternalRow row) {
        if (row == null) {
            return null;
        }
        int k = type.size();
        if (digester == null) {
            digester = new RowDigester(type, name());
            d = new long[2];
            values = new long[2 * k];
            long[] nul = new long[2];
            Digest.p(0, 0, nul);
            nullLo = nul[0];
            nullHi = nul[1];
        }
        digester.digest(row, d, values);
        long[] words = new long[6 + 5 * k];
        split(d[0], d[1], words, 0);
        long m = Digest.mix(d[0], d[1]);
        words[4] = m & WORD;
        words[5] = m >>> 32;
        for (int c = 0; c < k; c++) {
            long lo = values[2 * c];
            long hi = values[2 * c + 1];
            if (lo != nullLo || hi != nullHi) {
                int at = 6 + 5 * c;
                words[at] = 1;
                split(lo, hi, words, at + 1);
            }
        }
        return UnsafeArrayData.fromPrimitiveArray(words);
    }

    private static void split(long lo, long hi, long[] words, int at) {
        words[at] = lo & WORD;
        words[at + 1] = lo >>> 32;
        words[at + 2] = hi & WORD;
        words[at + 3] = hi >>> 32;
    }

    @Override
    public ArrayData produceResult(InternalRow input) {
        return input.isNullAt(0) ? null : invoke(input.getStruct(0, type.size()));
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {type};
    }

    @Override
    public DataType resultType() {
        return DataTypes.createArrayType(DataTypes.LongType, false);
    }

    @Override
    public boolean isResultNullable() {
        return true;
    }

    @Override
    public String name() {
        return "row_words";
    }

    @Override
    public String canonicalName() {
        return "recon.row_words";
    }

    // Equal types make equal functions (see DigestFunction.equals).
    @Override
    public boolean equals(Object o) {
        return o instanceof RowWordsFunction && ((RowWordsFunction) o).type.equals(type);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + 9;
    }
}

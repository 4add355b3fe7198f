package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon_jvm.row_digests(struct)}: the row digest D and each field's
 * value digest V_c, as 16 * (k + 1) bytes (D, then V_0 ... V_{k-1}, each
 * little-endian, low half first). A NULL struct gives NULL.
 *
 * <p>This is what {@link BucketSumsFunction} adds up. It is a scalar
 * function so that Spark compiles it into the scan's generated code: an
 * aggregate's own inputs are evaluated row by row, interpreted (the
 * {@code struct(...)} of a row costs more there than the digest itself).
 */
public final class RowDigestsFunction implements ScalarFunction<byte[]> {
    private static final long serialVersionUID = 1L;

    private final StructType type;
    private transient RowDigester digester;
    private transient long[] d;
    private transient long[] values;

    RowDigestsFunction(StructType type) {
        this.type = type;
        new RowDigester(type, name()); // refuses unsupported types at bind time
    }

    /** Spark's magic method (whole-stage codegen). */
    public byte[] invoke(InternalRow row) {
        if (row == null) {
            return null;
        }
        int k = type.size();
        if (digester == null) {
            digester = new RowDigester(type, name());
            d = new long[2];
            values = new long[2 * k];
        }
        digester.digest(row, d, values);
        byte[] out = new byte[16 * (k + 1)];
        Digest.writeLong(out, 0, d[0]);
        Digest.writeLong(out, 8, d[1]);
        for (int i = 0; i < 2 * k; i++) {
            Digest.writeLong(out, 16 + 8 * i, values[i]);
        }
        return out;
    }

    @Override
    public byte[] produceResult(InternalRow input) {
        return input.isNullAt(0) ? null : invoke(input.getStruct(0, type.size()));
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {type};
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
        return "row_digests";
    }

    @Override
    public String canonicalName() {
        return "recon.row_digests";
    }

    // Equal types make equal functions (see DigestFunction.equals).
    @Override
    public boolean equals(Object o) {
        return o instanceof RowDigestsFunction && ((RowDigestsFunction) o).type.equals(type);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + 8;
    }
}

package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon_jvm.row_digests(struct)}: the row digest D and each field's
 * value digest V_c, as 2 * (k + 1) longs (D, then V_0 ... V_{k-1}, each low
 * half first). A NULL struct gives NULL. An array of longs rather than
 * bytes: the aggregate reads it in place from Spark's row (a binary value
 * is copied out first, a tenth of pass 1).
 *
 * <p>This is what {@link BucketSumsFunction} adds up. It is a scalar
 * function so that Spark compiles it into the scan's generated code: an
 * aggregate's own inputs are evaluated row by row, interpreted (the
 * {@code struct(...)} of a row costs more there than the digest itself).
 */
public final class RowDigestsFunction implements ScalarFunction<ArrayData> {
    private static final long serialVersionUID = 1L;

    private final StructType type;
    private transient RowDigester digester;
    private transient long[] values;
    // Reused: fromPrimitiveArray copies it into the result.
    private transient long[] out;

    RowDigestsFunction(StructType type) {
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
            values = new long[2 * k];
            out = new long[2 * (k + 1)];
        }
        digester.digest(row, out, values);
        System.arraycopy(values, 0, out, 2, 2 * k);
        return UnsafeArrayData.fromPrimitiveArray(out);
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

package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon.digest(struct)}: the row digest D of the struct's fields as
 * columns 0..k-1, as 16 bytes little-endian (low half first). A NULL struct
 * is not a row and digests to NULL.
 *
 * <p>The public instance method {@code invoke} is Spark's "magic method":
 * with it the call compiles into whole-stage codegen on Spark's internal
 * values, instead of the interpreted {@link #produceResult}.
 */
public final class DigestFunction implements ScalarFunction<byte[]> {
    private static final long serialVersionUID = 1L;

    private final StructType type;
    /**
     * False for {@code digest_once}: the same digest, declared
     * nondeterministic so that Spark's optimizer keeps it where it is
     * projected. recon.spark's second pass projects the digest and then
     * filters on it; with a deterministic function the optimizer pushes the
     * filter below the projection by substituting the call, and every row
     * is digested twice.
     */
    private final boolean deterministic;
    // Rebuilt after deserialization: each task gets its own buffers.
    private transient RowDigester digester;
    private transient long[] out;

    DigestFunction(StructType type) {
        this(type, true);
    }

    DigestFunction(StructType type, boolean deterministic) {
        this.type = type;
        this.deterministic = deterministic;
        new RowDigester(type, name()); // refuses unsupported types at bind time
    }

    @Override
    public boolean isDeterministic() {
        return deterministic;
    }

    public byte[] invoke(InternalRow row) {
        if (row == null) {
            return null;
        }
        if (digester == null) {
            digester = new RowDigester(type, name());
            out = new long[2];
        }
        digester.digest(row, out);
        byte[] d = new byte[16];
        Digest.writeLong(d, 0, out[0]);
        Digest.writeLong(d, 8, out[1]);
        return d;
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
        return deterministic ? "digest" : "digest_once";
    }

    @Override
    public String canonicalName() {
        return "recon." + name();
    }

    // Spark compares bound functions with equals (they sit in the plan as
    // literals): equal types make equal functions, so a grouping expression
    // matches the same call in the select list, and a digest used twice in
    // one projection is computed once (common subexpression elimination).
    @Override
    public boolean equals(Object o) {
        return o instanceof DigestFunction && ((DigestFunction) o).type.equals(type)
                && ((DigestFunction) o).deterministic == deterministic;
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + (deterministic ? 1 : 7);
    }
}

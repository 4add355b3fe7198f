package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@code recon.value_words(struct)}: per field, the low 64 bits of its value
 * digest V_c (keyed mode's column words, docs/encoding.md), in struct order.
 * Position-free, like V_c itself. A NULL struct gives NULL.
 */
public final class ValueWordsFunction implements ScalarFunction<ArrayData> {
    private static final long serialVersionUID = 1L;

    private final StructType type;
    private transient RowDigester digester;
    private transient long[] out;

    ValueWordsFunction(StructType type) {
        this.type = type;
        new RowDigester(type, name()); // refuses unsupported types at bind time
    }

    /** Spark's magic method (whole-stage codegen). */
    public ArrayData invoke(InternalRow row) {
        if (row == null) {
            return null;
        }
        if (digester == null) {
            digester = new RowDigester(type, name());
            out = new long[2];
        }
        long[] words = new long[digester.width()];
        for (int c = 0; c < words.length; c++) {
            digester.value(row, c, out);
            words[c] = out[0];
        }
        return UnsafeArrayData.fromPrimitiveArray(words);
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
        return "value_words";
    }

    @Override
    public String canonicalName() {
        return "recon.value_words";
    }

    // Spark compares bound functions with equals (they sit in the plan as
    // literals): equal types make equal functions, so a grouping expression
    // matches the same call in the select list, and a digest used twice in
    // one projection is computed once (common subexpression elimination).
    @Override
    public boolean equals(Object o) {
        return o instanceof ValueWordsFunction && ((ValueWordsFunction) o).type.equals(type);
    }

    @Override
    public int hashCode() {
        return type.hashCode() * 31 + 2;
    }
}

package dev.recon.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code recon.bucket(digest binary, bits int)}: the digest's bucket among
 * 2^bits, bits from 1 to 20.
 *
 * <p>The bucket is the top {@code bits} bits of the digest's high 64-bit
 * half (bytes 8..15, little-endian), the bits recon's own engine buckets by
 * (crates/recon/src/digest/multiset.rs), so a bucket is a prefix of the
 * digest's top bits whatever the bucket count, and independent of the low
 * half that digest hash maps use.
 */
public final class BucketFunction implements ScalarFunction<Integer> {
    private static final long serialVersionUID = 1L;

    /** Spark's magic method (whole-stage codegen). A NULL digest or bad bits is an error, never a bucket. */
    public int invoke(byte[] digest, int bits) {
        if (digest == null || digest.length != 16) {
            throw new IllegalArgumentException("recon.bucket: a digest is 16 bytes, not "
                    + (digest == null ? "NULL" : digest.length + " bytes"));
        }
        if (bits < 1 || bits > 20) {
            throw new IllegalArgumentException("recon.bucket: bits must be 1 to 20, not " + bits);
        }
        return Digest.bucket(Digest.readLong(digest, 8), bits);
    }

    @Override
    public Integer produceResult(InternalRow input) {
        if (input.isNullAt(1)) {
            throw new IllegalArgumentException("recon.bucket: bits must be 1 to 20, not NULL");
        }
        return invoke(input.isNullAt(0) ? null : input.getBinary(0), input.getInt(1));
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {DataTypes.BinaryType, DataTypes.IntegerType};
    }

    @Override
    public DataType resultType() {
        return DataTypes.IntegerType;
    }

    @Override
    public boolean isResultNullable() {
        return false;
    }

    @Override
    public String name() {
        return "bucket";
    }

    @Override
    public String canonicalName() {
        return "recon.bucket";
    }

    // Stateless: every binding is the same function (see DigestFunction.equals).
    @Override
    public boolean equals(Object o) {
        return o instanceof BucketFunction;
    }

    @Override
    public int hashCode() {
        return 3;
    }
}

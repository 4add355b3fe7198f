package dev.recon.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * {@code recon_jvm.selected(digest binary, bucket int, selector binary)}:
 * whether the second pass keeps a row of pass 1's {@code bucket}, by the
 * selector the driver's comparison wrote
 * ({@code Selector::to_bytes} in crates/recon/src/modes/distributed.rs:
 * bits u32, the count of whole buckets u32 and each bucket u32, then the
 * decoded digests, 16 bytes each, all little-endian). A row is kept when
 * its bucket did not decode (every row of it is needed) or its digest is a
 * decoded one: {@code Selector::select} with the engine's buckets.
 *
 * <p>The selector is a literal, the same array on every call of a task; it
 * is parsed once into a bucket bitmap and a sorted digest array.
 */
public final class SelectedFunction implements ScalarFunction<Boolean> {
    private static final long serialVersionUID = 1L;

    private transient byte[] parsed;
    /** Per bucket: whether every row of it is kept. */
    private transient boolean[] full;
    /** The decoded digests as (hi, lo) pairs, sorted by hi then lo. */
    private transient long[] his;
    private transient long[] los;

    private void parse(byte[] selector) {
        ByteBuffer in = ByteBuffer.wrap(selector).order(ByteOrder.LITTLE_ENDIAN);
        int b = in.getInt();
        if (b < 1 || b > 20) {
            throw new IllegalArgumentException("recon_jvm.selected: not a selector (bits " + b + ")");
        }
        boolean[] whole = new boolean[1 << b];
        int count = in.getInt();
        for (int i = 0; i < count; i++) {
            whole[in.getInt()] = true;
        }
        if (in.remaining() % 16 != 0) {
            throw new IllegalArgumentException("recon_jvm.selected: a selector's digests are 16 bytes each");
        }
        int n = in.remaining() / 16;
        long[][] pairs = new long[n][];
        for (int i = 0; i < n; i++) {
            long lo = in.getLong();
            long hi = in.getLong();
            pairs[i] = new long[] {hi, lo};
        }
        Arrays.sort(pairs, (x, y) -> {
            int c = Long.compare(x[0], y[0]);
            return c != 0 ? c : Long.compare(x[1], y[1]);
        });
        his = new long[n];
        los = new long[n];
        for (int i = 0; i < n; i++) {
            his[i] = pairs[i][0];
            los[i] = pairs[i][1];
        }
        full = whole;
        parsed = selector;
    }

    private boolean holds(long hi, long lo) {
        int low = 0;
        int high = his.length - 1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int c = Long.compare(his[mid], hi);
            if (c == 0) {
                c = Long.compare(los[mid], lo);
            }
            if (c < 0) {
                low = mid + 1;
            } else if (c > 0) {
                high = mid - 1;
            } else {
                return true;
            }
        }
        return false;
    }

    public boolean invoke(byte[] digest, int bucket, byte[] selector) {
        if (selector != parsed && (parsed == null || !Arrays.equals(selector, parsed))) {
            parse(selector);
        }
        if (digest.length != 16) {
            throw new IllegalArgumentException("recon_jvm.selected: a digest is 16 bytes, not " + digest.length);
        }
        if (bucket < 0 || bucket >= full.length) {
            throw new IllegalArgumentException("recon_jvm.selected: bucket " + bucket + " is out of range");
        }
        return full[bucket] || holds(Digest.readLong(digest, 8), Digest.readLong(digest, 0));
    }

    @Override
    public Boolean produceResult(InternalRow input) {
        if (input.isNullAt(0) || input.isNullAt(1) || input.isNullAt(2)) {
            throw new IllegalArgumentException("recon_jvm.selected: a NULL digest, bucket or selector");
        }
        return invoke(input.getBinary(0), input.getInt(1), input.getBinary(2));
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {DataTypes.BinaryType, DataTypes.IntegerType, DataTypes.BinaryType};
    }

    @Override
    public DataType resultType() {
        return DataTypes.BooleanType;
    }

    @Override
    public boolean isResultNullable() {
        return false;
    }

    @Override
    public String name() {
        return "selected";
    }

    @Override
    public String canonicalName() {
        return "recon.selected";
    }

    // Stateless but for its cache: every binding is the same function.
    @Override
    public boolean equals(Object o) {
        return o instanceof SelectedFunction;
    }

    @Override
    public int hashCode() {
        return 6;
    }
}

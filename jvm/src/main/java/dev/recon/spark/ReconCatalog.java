package dev.recon.spark;

import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.IntegralType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * recon's digests as Spark SQL functions, through a DataSource V2 function
 * catalog (no Scala, no session extension):
 *
 * <pre>
 *   spark.sql("ADD JAR '/path/recon-spark.jar'")
 *   spark.conf.set("spark.sql.catalog.recon", "dev.recon.spark.ReconCatalog")
 *   SELECT recon.digest(struct(a, b)), recon.bucket(recon.digest(struct(a, b)), 12) ...
 * </pre>
 *
 * Functions: {@code digest(struct) -> binary(16)}, {@code value_words(struct)
 * -> array<bigint>}, {@code bucket(binary, int) -> int}, {@code
 * selected(binary, int, selector binary) -> boolean} and the aggregates
 * {@code fingerprint(binary) -> struct<rows, sum, mix>} and {@code
 * bucket_sums(array<bigint>, int, int) -> binary} over {@code row_digests(struct)
 * -> array<bigint>} (recon.spark's pass 1). Binding refuses,
 * with an UnsupportedOperationException naming the field and its type, any
 * type recon cannot digest exactly (Spark reports it as an analysis error).
 */
public final class ReconCatalog implements FunctionCatalog {
    private static final String[] NAMES = {
        "digest", "digest_once", "row_digests", "value_words", "bucket", "fingerprint",
        "bucket_sums", "selected"
    };

    private String name = "recon";

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Identifier[] listFunctions(String[] namespace) {
        Identifier[] ids = new Identifier[NAMES.length];
        for (int i = 0; i < NAMES.length; i++) {
            ids[i] = Identifier.of(new String[0], NAMES[i]);
        }
        return ids;
    }

    @Override
    public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
        if (ident.namespace().length == 0) {
            for (String n : NAMES) {
                if (n.equals(ident.name())) {
                    return new Unbound(n);
                }
            }
        }
        throw new NoSuchFunctionException(ident);
    }

    /** Binds a function by name on its argument types. */
    static final class Unbound implements UnboundFunction {
        private static final long serialVersionUID = 1L;
        private final String fn;

        Unbound(String fn) {
            this.fn = fn;
        }

        @Override
        public String name() {
            return fn;
        }

        @Override
        public BoundFunction bind(StructType input) {
            StructField[] args = input.fields();
            switch (fn) {
                case "digest":
                    return new DigestFunction(struct(args));
                case "digest_once":
                    return new DigestFunction(struct(args), false);
                case "value_words":
                    return new ValueWordsFunction(struct(args));
                case "row_digests":
                    return new RowDigestsFunction(struct(args));
                case "bucket_sums":
                    if (args.length != 3 || !isLongs(args[0].dataType())
                            || !(args[1].dataType() instanceof IntegerType)
                            || !(args[2].dataType() instanceof IntegerType)) {
                        throw usage("bucket_sums(row_digests array<bigint>, bucket int, bits int)", input);
                    }
                    return new BucketSumsFunction();
                case "selected":
                    if (args.length != 3 || !(args[0].dataType() instanceof BinaryType)
                            || !(args[1].dataType() instanceof IntegerType)
                            || !(args[2].dataType() instanceof BinaryType)) {
                        throw usage("selected(digest binary, bucket int, selector binary)", input);
                    }
                    return new SelectedFunction();
                case "bucket":
                    if (args.length != 2 || !(args[0].dataType() instanceof BinaryType)
                            || !(args[1].dataType() instanceof IntegralType)) {
                        throw usage("bucket(digest binary, bits int)", input);
                    }
                    return new BucketFunction();
                default:
                    if (args.length != 1 || !(args[0].dataType() instanceof BinaryType)) {
                        throw usage("fingerprint(digest binary)", input);
                    }
                    return new FingerprintFunction();
            }
        }

        private static boolean isLongs(DataType t) {
            return t instanceof ArrayType && ((ArrayType) t).elementType() instanceof LongType;
        }

        private StructType struct(StructField[] args) {
            if (args.length != 1 || !(args[0].dataType() instanceof StructType)) {
                throw usage(fn + "(struct)", new StructType(args));
            }
            return (StructType) args[0].dataType();
        }

        private static UnsupportedOperationException usage(String signature, StructType input) {
            StringBuilder got = new StringBuilder();
            for (StructField f : input.fields()) {
                DataType t = f.dataType();
                got.append(got.length() == 0 ? "" : ", ").append(t.simpleString());
            }
            return new UnsupportedOperationException(
                    "recon." + signature + " cannot take (" + got + ")");
        }

        @Override
        public String description() {
            switch (fn) {
                case "digest":
                    return "recon.digest(struct): recon's 128-bit row digest (encoding v2), 16 bytes little-endian";
                case "digest_once":
                    return "recon.digest_once(struct): recon.digest, evaluated where it is projected (nondeterministic to the optimizer)";
                case "value_words":
                    return "recon.value_words(struct): the low 64 bits of each field's value digest";
                case "bucket":
                    return "recon.bucket(digest, bits): the top bits of the digest's high half";
                case "bucket_sums":
                    return "recon.bucket_sums(row_digests, bucket, bits): pass 1's bucket and column sums (a NULL bucket: the digest's own top bits), in the Python package's wire format";
                case "row_digests":
                    return "recon.row_digests(struct): the row digest and each field's value digest, two longs each (low half first)";
                case "selected":
                    return "recon.selected(digest, bucket, selector): whether the second pass keeps the row";
                default:
                    return "recon.fingerprint(digest): struct<rows, sum (16 bytes LE, mod 2^128), mix (mod 2^64)>";
            }
        }
    }
}

package dev.recon.spark;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * recon's digest construction, encoding version 2 (docs/encoding.md,
 * "Digests"; the Rust reference is crates/recon/src/digest/encode/mix.rs).
 * 128-bit values travel as two longs, {@code lo} and {@code hi}; Java's
 * wrapping long arithmetic is exactly the spec's unsigned arithmetic mod 2^64.
 */
final class Digest {
    private Digest() {}

    static final long P_XOR_HI = 0x243f6a8885a308d3L;
    static final long P_XOR_LO = 0x13198a2e03707344L;
    // P's round keys and multipliers as scalars, not arrays: the JIT folds
    // a static final long into the instruction, but not an array element.
    static final long P_KEY0 = 0x9e3779b97f4a7c15L;
    static final long P_KEY1 = 0xf39cc0605cedc835L;
    static final long P_KEY2 = 0xbf58476d1ce4e5b9L;
    static final long P_MUL0 = 0x94d049bb133111ebL;
    static final long P_MUL1 = 0xd6e8feb86659fd93L;
    static final long P_MUL2 = 0xa0761d6478bd642fL;
    static final long Q_XOR_HI = 0xa4093822299f31d0L;
    static final long Q_XOR_LO = 0x082efa98ec4e6c89L;
    static final long Q_MUL1_HI = 0xff51afd7ed558ccdL;
    static final long Q_MUL1_LO = 0xc4ceb9fe1a85ec53L;
    static final long Q_MUL2_HI = 0xd6e8feb86659fd93L;
    static final long Q_MUL2_LO = 0xa0761d6478bd642fL;
    static final long A_SEED = 0x6a09e667f3bcc908L;
    static final long B_SEED = 0xbb67ae8584caa73bL;

    private static long folded(long a, long b) {
        return (a * b) ^ Xxh3.mulHi(a, b);
    }

    /**
     * The value digest of an encoding: {@code P} of the zero-padded bytes when
     * at most 16, else XXH3-128. {@code buf} must hold at least 16 bytes; the
     * bytes past {@code len} are overwritten with the zero padding (cheaper
     * than a padded copy). Result in {@code out[0]} (lo), {@code out[1]} (hi).
     */
    static void value(byte[] buf, int len, long[] out) {
        if (len > 16) {
            Xxh3.hash128(buf, 0, len, out);
            return;
        }
        for (int i = len; i < 16; i++) {
            buf[i] = 0;
        }
        p(readLong(buf, 0), readLong(buf, 8), out);
    }

    /** {@code P}: three Feistel rounds, a bijection, so short values never collide. */
    static void p(long lo, long hi, long[] out) {
        long l = lo ^ P_XOR_LO;
        long r = hi ^ P_XOR_HI;
        l ^= folded(r ^ P_KEY0, P_MUL0);
        r ^= folded(l ^ P_KEY1, P_MUL1);
        l ^= folded(r ^ P_KEY2, P_MUL2);
        out[0] = l;
        out[1] = r;
    }

    /**
     * {@code Q}: {@code x ^= Q_XOR}, twice {@code x ^= x >> 64; x *= Q_MUL_i}
     * (mod 2^128), then {@code x ^ (x >> 64)}.
     */
    static void q(long lo, long hi, long[] out) {
        lo ^= Q_XOR_LO;
        hi ^= Q_XOR_HI;
        lo ^= hi;
        // (hi:lo) * (mh:ml) mod 2^128 = lo*ml + ((hi*ml + lo*mh) << 64)
        long nlo = lo * Q_MUL1_LO;
        long nhi = Xxh3.mulHi(lo, Q_MUL1_LO) + hi * Q_MUL1_LO + lo * Q_MUL1_HI;
        lo = nlo ^ nhi;
        hi = nhi;
        nlo = lo * Q_MUL2_LO;
        nhi = Xxh3.mulHi(lo, Q_MUL2_LO) + hi * Q_MUL2_LO + lo * Q_MUL2_HI;
        out[0] = nlo ^ nhi;
        out[1] = nhi;
    }

    private static long splitmix(long[] state) {
        state[0] += 0x9e3779b97f4a7c15L;
        long z = state[0];
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** {@code word(seed, c)}: {hi, lo} from splitmix64's first two outputs. */
    private static long[] word(long seed, int c) {
        long[] s = {seed ^ ((long) c * 0xd1342543de82ef95L)};
        long hi = splitmix(s);
        long lo = splitmix(s);
        return new long[] {lo, hi};
    }

    /** {@code A_c} as {lo, hi}. */
    static long[] a(int c) {
        return word(A_SEED, c);
    }

    /** {@code B_c} as {lo, hi}: both halves made odd, so each lane of T_c is a bijection. */
    static long[] b(int c) {
        long[] w = word(B_SEED, c);
        w[0] |= 1;
        w[1] |= 1;
        return w;
    }

    /**
     * Adds (lo, hi) to the 128-bit sum held at s[at] (low half) and
     * s[at + 1] (high half), modulo 2^128: the carry out of the low half
     * is an unsigned overflow.
     */
    static void add128(long[] s, int at, long lo, long hi) {
        long sum = s[at] + lo;
        s[at + 1] += hi + (Long.compareUnsigned(sum, lo) < 0 ? 1 : 0);
        s[at] = sum;
    }

    /** The fingerprint mix of a row digest (docs/fingerprint.md, multiset.rs). */
    static long mix(long lo, long hi) {
        long x = lo ^ Long.rotateLeft(hi, 23);
        x = (x ^ (x >>> 33)) * 0xff51afd7ed558ccdL;
        x = (x ^ (x >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return x ^ (x >>> 33);
    }

    // Little-endian longs in byte arrays, as one load or store each (the
    // JIT compiles a byte-array view to a plain access; a loop over the
    // bytes cost a tenth of pass 1).
    private static final VarHandle LE_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * The bucket among 2^bits of a digest whose high 64-bit half is {@code
     * hi}: its top {@code bits} bits, as recon's own engine buckets
     * (crates/recon/src/digest/multiset.rs). The one definition for {@link
     * BucketFunction} and {@link BucketSumsFunction}.
     */
    static int bucket(long hi, int bits) {
        return (int) (hi >>> (64 - bits));
    }

    static long readLong(byte[] b, int at) {
        return (long) LE_LONG.get(b, at);
    }

    static void writeLong(byte[] b, int at, long v) {
        LE_LONG.set(b, at, v);
    }
}

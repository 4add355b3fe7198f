/*
 * XXH3-128 (seed 0, default secret), ported to Java from the reference
 * implementation in xxHash's xxhash.h (version 0.8.3): the scalar code
 * paths, which every SIMD variant of the reference must equal bit for bit.
 * recon's value digests of encodings longer than 16 bytes are XXH3-128
 * (docs/encoding.md), computed in Rust by the xxhash-rust crate; this port
 * must give the same 128 bits, which scripts/build-jar.sh's self-test and
 * python/tests/test_spark_jvm.py (against Python's xxhash) check.
 *
 * xxHash - Extremely Fast Hash algorithm
 * Copyright (C) 2012-2023 Yann Collet
 *
 * BSD 2-Clause License (https://www.opensource.org/licenses/bsd-license.php)
 *
 * Redistribution and use in source and binary forms, with or without
 * modification, are permitted provided that the following conditions are
 * met:
 *
 *    * Redistributions of source code must retain the above copyright
 *      notice, this list of conditions and the following disclaimer.
 *    * Redistributions in binary form must reproduce the above
 *      copyright notice, this list of conditions and the following disclaimer
 *      in the documentation and/or other materials provided with the
 *      distribution.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
 * "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
 * LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR
 * A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
 * OWNER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
 * SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT
 * LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
 * DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
 * THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
 * (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
 * OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
 *
 * You can contact the author at:
 *   - xxHash homepage: https://www.xxhash.com
 *   - xxHash source repository: https://github.com/Cyan4973/xxHash
 */
package dev.recon.spark;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * XXH3-128 with seed 0. Java has no unsigned 64-bit type; every operation
 * below is the same bits as the reference's uint64 arithmetic (addition,
 * multiplication and xor wrap identically; shifts are {@code >>>}). The seed
 * is 0 throughout, so the reference's seed terms are dropped.
 */
final class Xxh3 {
    private Xxh3() {}

    // Little-endian reads at any offset, without allocating.
    private static final VarHandle LE64 =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE32 =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private static final long PRIME32_1 = 0x9E3779B1L;
    private static final long PRIME32_2 = 0x85EBCA77L;
    private static final long PRIME32_3 = 0xC2B2AE3DL;
    private static final long PRIME64_1 = 0x9E3779B185EBCA87L;
    private static final long PRIME64_2 = 0xC2B2AE3D27D4EB4FL;
    private static final long PRIME64_3 = 0x165667B19E3779F9L;
    private static final long PRIME64_4 = 0x85EBCA77C2B2AE63L;
    private static final long PRIME64_5 = 0x27D4EB2F165667C5L;
    private static final long PRIME_MX1 = 0x165667919E3779F9L;
    private static final long PRIME_MX2 = 0x9FB21C651E98DF25L;

    private static final int STRIPE_LEN = 64;
    private static final int SECRET_CONSUME_RATE = 8;
    private static final int MIDSIZE_STARTOFFSET = 3;
    private static final int MIDSIZE_LASTOFFSET = 17;
    private static final int SECRET_SIZE_MIN = 136;
    private static final int SECRET_LASTACC_START = 7;
    private static final int SECRET_MERGEACCS_START = 11;

    /** XXH3_kSecret, the default 192-byte secret (taken from FARSH). */
    private static final byte[] SECRET = bytes(
            0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
            0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
            0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
            0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
            0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
            0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
            0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
            0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
            0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
            0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
            0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
            0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e);
    private static final int SECRET_SIZE = 192;

    private static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = (byte) v[i];
        }
        return b;
    }

    private static long r64(byte[] b, int at) {
        return (long) LE64.get(b, at);
    }

    private static long r32(byte[] b, int at) {
        return ((int) LE32.get(b, at)) & 0xFFFFFFFFL;
    }

    /** The high 64 bits of the unsigned 128-bit product (Java 11 has only the signed one). */
    static long mulHi(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }

    private static long fold64(long a, long b) {
        return (a * b) ^ mulHi(a, b);
    }

    private static long xxh64Avalanche(long h) {
        h ^= h >>> 33;
        h *= PRIME64_2;
        h ^= h >>> 29;
        h *= PRIME64_3;
        return h ^ (h >>> 32);
    }

    private static long avalanche(long h) {
        h ^= h >>> 37;
        h *= PRIME_MX1;
        return h ^ (h >>> 32);
    }

    private static long mix16(byte[] in, int at, int secret) {
        return fold64(r64(in, at) ^ r64(SECRET, secret), r64(in, at + 8) ^ r64(SECRET, secret + 8));
    }

    /**
     * XXH3-128 of {@code in[off, off + len)}: the low half in {@code out[0]},
     * the high half in {@code out[1]} (the caller's array, so nothing is
     * allocated per hash).
     */
    static void hash128(byte[] in, int off, int len, long[] out) {
        if (len <= 16) {
            short0to16(in, off, len, out);
        } else if (len <= 128) {
            mid17to128(in, off, len, out);
        } else if (len <= 240) {
            mid129to240(in, off, len, out);
        } else {
            hashLong(in, off, len, out);
        }
    }

    private static void short0to16(byte[] in, int off, int len, long[] out) {
        if (len > 8) {
            long bitflipl = r64(SECRET, 32) ^ r64(SECRET, 40);
            long bitfliph = r64(SECRET, 48) ^ r64(SECRET, 56);
            long inLo = r64(in, off);
            long inHi = r64(in, off + len - 8);
            long x = inLo ^ inHi ^ bitflipl;
            long mLo = x * PRIME64_1;
            long mHi = mulHi(x, PRIME64_1);
            mLo += (long) (len - 1) << 54;
            inHi ^= bitfliph;
            mHi += inHi + (inHi & 0xFFFFFFFFL) * (PRIME32_2 - 1);
            mLo ^= Long.reverseBytes(mHi);
            long hLo = mLo * PRIME64_2;
            long hHi = mulHi(mLo, PRIME64_2) + mHi * PRIME64_2;
            out[0] = avalanche(hLo);
            out[1] = avalanche(hHi);
        } else if (len >= 4) {
            long inLo = r32(in, off);
            long inHi = r32(in, off + len - 4);
            long input64 = inLo + (inHi << 32);
            long bitflip = r64(SECRET, 16) ^ r64(SECRET, 24);
            long keyed = input64 ^ bitflip;
            long mul = PRIME64_1 + ((long) len << 2);
            long mLo = keyed * mul;
            long mHi = mulHi(keyed, mul);
            mHi += mLo << 1;
            mLo ^= mHi >>> 3;
            mLo ^= mLo >>> 35;
            mLo *= PRIME_MX2;
            mLo ^= mLo >>> 28;
            out[0] = mLo;
            out[1] = avalanche(mHi);
        } else if (len > 0) {
            int c1 = in[off] & 0xFF;
            int c2 = in[off + (len >> 1)] & 0xFF;
            int c3 = in[off + len - 1] & 0xFF;
            int combinedl = (c1 << 16) | (c2 << 24) | c3 | (len << 8);
            int combinedh = Integer.rotateLeft(Integer.reverseBytes(combinedl), 13);
            long bitflipl = r32(SECRET, 0) ^ r32(SECRET, 4);
            long bitfliph = r32(SECRET, 8) ^ r32(SECRET, 12);
            out[0] = xxh64Avalanche((combinedl & 0xFFFFFFFFL) ^ bitflipl);
            out[1] = xxh64Avalanche((combinedh & 0xFFFFFFFFL) ^ bitfliph);
        } else {
            out[0] = xxh64Avalanche(r64(SECRET, 64) ^ r64(SECRET, 72));
            out[1] = xxh64Avalanche(r64(SECRET, 80) ^ r64(SECRET, 88));
        }
    }

    // XXH128_mix32B on the accumulator (out[0], out[1]).
    private static void mix32(long[] acc, byte[] in, int in1, int in2, int secret) {
        acc[0] += mix16(in, in1, secret);
        acc[0] ^= r64(in, in2) + r64(in, in2 + 8);
        acc[1] += mix16(in, in2, secret + 16);
        acc[1] ^= r64(in, in1) + r64(in, in1 + 8);
    }

    private static void finishMid(long[] acc, int len) {
        long lo = acc[0] + acc[1];
        long hi = acc[0] * PRIME64_1 + acc[1] * PRIME64_4 + (long) len * PRIME64_2;
        acc[0] = avalanche(lo);
        acc[1] = -avalanche(hi);
    }

    private static void mid17to128(byte[] in, int off, int len, long[] acc) {
        acc[0] = (long) len * PRIME64_1;
        acc[1] = 0;
        if (len > 32) {
            if (len > 64) {
                if (len > 96) {
                    mix32(acc, in, off + 48, off + len - 64, 96);
                }
                mix32(acc, in, off + 32, off + len - 48, 64);
            }
            mix32(acc, in, off + 16, off + len - 32, 32);
        }
        mix32(acc, in, off, off + len - 16, 0);
        finishMid(acc, len);
    }

    private static void mid129to240(byte[] in, int off, int len, long[] acc) {
        acc[0] = (long) len * PRIME64_1;
        acc[1] = 0;
        for (int i = 32; i < 160; i += 32) {
            mix32(acc, in, off + i - 32, off + i - 16, i - 32);
        }
        acc[0] = avalanche(acc[0]);
        acc[1] = avalanche(acc[1]);
        for (int i = 160; i <= len; i += 32) {
            mix32(acc, in, off + i - 32, off + i - 16, MIDSIZE_STARTOFFSET + i - 160);
        }
        // The reference passes seed 0 - seed here: still 0.
        mix32(acc, in, off + len - 16, off + len - 32, SECRET_SIZE_MIN - MIDSIZE_LASTOFFSET - 16);
        finishMid(acc, len);
    }

    // XXH3_accumulate_512_scalar: one 64-byte stripe into the 8 lanes.
    private static void accumulate512(long[] acc, byte[] in, int at, int secret) {
        for (int lane = 0; lane < 8; lane++) {
            long dataVal = r64(in, at + lane * 8);
            long dataKey = dataVal ^ r64(SECRET, secret + lane * 8);
            acc[lane ^ 1] += dataVal;
            acc[lane] += (dataKey & 0xFFFFFFFFL) * (dataKey >>> 32);
        }
    }

    private static void scramble(long[] acc, int secret) {
        for (int lane = 0; lane < 8; lane++) {
            long a = acc[lane];
            a ^= a >>> 47;
            a ^= r64(SECRET, secret + lane * 8);
            a *= PRIME32_1;
            acc[lane] = a;
        }
    }

    private static long mergeAccs(long[] acc, int secret, long start) {
        long r = start;
        for (int i = 0; i < 4; i++) {
            r += fold64(acc[2 * i] ^ r64(SECRET, secret + 16 * i),
                    acc[2 * i + 1] ^ r64(SECRET, secret + 16 * i + 8));
        }
        return avalanche(r);
    }

    private static void hashLong(byte[] in, int off, int len, long[] out) {
        // Long inputs are rare (encodings over 240 bytes); a per-call
        // accumulator keeps this method reentrant.
        long[] acc = {PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3,
                      PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1};
        int stripesPerBlock = (SECRET_SIZE - STRIPE_LEN) / SECRET_CONSUME_RATE;
        int blockLen = STRIPE_LEN * stripesPerBlock;
        int blocks = (len - 1) / blockLen;
        for (int n = 0; n < blocks; n++) {
            for (int s = 0; s < stripesPerBlock; s++) {
                accumulate512(acc, in, off + n * blockLen + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
            }
            scramble(acc, SECRET_SIZE - STRIPE_LEN);
        }
        int stripes = ((len - 1) - blockLen * blocks) / STRIPE_LEN;
        for (int s = 0; s < stripes; s++) {
            accumulate512(acc, in, off + blocks * blockLen + s * STRIPE_LEN, s * SECRET_CONSUME_RATE);
        }
        accumulate512(acc, in, off + len - STRIPE_LEN, SECRET_SIZE - STRIPE_LEN - SECRET_LASTACC_START);
        out[0] = mergeAccs(acc, SECRET_MERGEACCS_START, (long) len * PRIME64_1);
        out[1] = mergeAccs(acc, SECRET_SIZE - STRIPE_LEN - SECRET_MERGEACCS_START,
                ~((long) len * PRIME64_2));
    }
}

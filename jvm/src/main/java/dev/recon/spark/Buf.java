package dev.recon.spark;

import java.util.Arrays;

/**
 * A growable byte buffer that one digester reuses for every value, so the
 * hot path allocates nothing once it has grown to the widest value seen.
 * Never shorter than 16 bytes: {@link Digest#value} pads short encodings in
 * place.
 */
final class Buf {
    byte[] b = new byte[256];
    int n;

    void reset() {
        n = 0;
    }

    void ensure(int more) {
        if (n + more > b.length) {
            b = Arrays.copyOf(b, Math.max(b.length * 2, n + more));
        }
    }

    void put(int v) {
        ensure(1);
        b[n++] = (byte) v;
    }

    void putShort(int v) {
        ensure(2);
        b[n++] = (byte) v;
        b[n++] = (byte) (v >>> 8);
    }

    void putInt(int v) {
        ensure(4);
        for (int i = 0; i < 4; i++) {
            b[n++] = (byte) (v >>> (8 * i));
        }
    }

    void putLong(long v) {
        ensure(8);
        Digest.writeLong(b, n, v);
        n += 8;
    }

    /** Unsigned LEB128. */
    void putVarint(long v) {
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            b[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        b[n++] = (byte) v;
    }

    void putBytes(byte[] src, int off, int len) {
        ensure(len);
        System.arraycopy(src, off, b, n, len);
        n += len;
    }
}

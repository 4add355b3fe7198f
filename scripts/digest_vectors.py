#!/usr/bin/env python3
"""An independent implementation of recon's digest spec (encoding version 2,
docs/encoding.md), written from the document, not from the Rust code. It
prints the test vectors that src/digest/encode/tests.rs pins, so a reading of the
spec that disagrees with the code shows up as a differing line.

Run: pip install xxhash && python3 scripts/digest_vectors.py
"""
import xxhash

M = (1 << 128) - 1
P_XOR = 0x243F6A8885A308D313198A2E03707344
P_KEYS = [0x9E3779B97F4A7C15, 0xF39CC0605CEDC835, 0xBF58476D1CE4E5B9]
P_MULS = [0x94D049BB133111EB, 0xD6E8FEB86659FD93, 0xA0761D6478BD642F]
W = 2**64 - 1
Q_XOR = 0xA4093822299F31D0082EFA98EC4E6C89
Q_MUL1 = 0xFF51AFD7ED558CCDC4CEB9FE1A85EC53
Q_MUL2 = 0xD6E8FEB86659FD93A0761D6478BD642F
A_SEED = 0x6A09E667F3BCC908
B_SEED = 0xBB67AE8584CAA73B


def permute(x, xor, m1, m2):
    x ^= xor
    x ^= x >> 64
    x = (x * m1) & M
    x ^= x >> 64
    x = (x * m2) & M
    return x ^ (x >> 64)


def folded_mul(a, b):
    r = a * b
    return (r & W) ^ (r >> 64)


def p(x):
    x ^= P_XOR
    l, r = x & W, x >> 64
    l ^= folded_mul(r ^ P_KEYS[0], P_MULS[0])
    r ^= folded_mul(l ^ P_KEYS[1], P_MULS[1])
    l ^= folded_mul(r ^ P_KEYS[2], P_MULS[2])
    return (r << 64) | l


def value_digest(e: bytes) -> int:
    if len(e) <= 16:
        return p(int.from_bytes(e.ljust(16, b"\0"), "little"))
    return xxhash.xxh3_128_intdigest(e)


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return state, z ^ (z >> 31)


def word(seed, c):
    s = seed ^ ((c * 0xD1342543DE82EF95) & (2**64 - 1))
    s, hi = splitmix64(s)
    s, lo = splitmix64(s)
    return (hi << 64) | lo


def column_constants(c):
    return word(A_SEED, c), word(B_SEED, c) | 1 | (1 << 64)


def term(v, a, b):
    x = v ^ a
    lo = ((x & W) * (b & W)) & W
    hi = ((x >> 64) * (b >> 64)) & W
    return (hi << 64) | lo


def lane_add(acc, t):
    lo = ((acc & W) + (t & W)) & W
    hi = ((acc >> 64) + (t >> 64)) & W
    return (hi << 64) | lo


def row_digest(encodings):
    acc = 0
    for c, e in enumerate(encodings):
        a, b = column_constants(c)
        acc = lane_add(acc, term(value_digest(e), a, b))
    return permute(acc, Q_XOR, Q_MUL1, Q_MUL2)


def enc_str(s: str) -> bytes:
    b = s.encode()
    assert len(b) < 128
    return bytes([0x06, len(b)]) + b


def enc_int(v: int) -> bytes:
    return bytes([0x02]) + v.to_bytes(8, "little", signed=True)


vectors = [
    ("V(NULL)", value_digest(bytes([0x00]))),
    ("V(int -2)", value_digest(enc_int(-2))),
    ("V('ab')", value_digest(enc_str("ab"))),
    ("A_0", column_constants(0)[0]),
    ("B_0", column_constants(0)[1]),
    ("A_1", column_constants(1)[0]),
    ("B_1", column_constants(1)[1]),
    ("D('north', 100)", row_digest([enc_str("north"), enc_int(100)])),
    ("V('a longer string value')", value_digest(enc_str("a longer string value"))),
]
for name, v in vectors:
    print(f"{name:28} {v:032x}")


# The fingerprint (docs/fingerprint.md) of testdata/demo/source.parquet:
# rows (region, amount) = ('north', 100), ('south', 200), ('south', 200),
# (NULL, 50); columns in name order: amount, region.
M64 = (1 << 64) - 1


def mix(d):
    x = (d & M64) ^ (((d >> 64) << 23 | (d >> 64) >> 41) & M64)
    x = ((x ^ (x >> 33)) * 0xff51afd7ed558ccd) & M64
    x = ((x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53) & M64
    return x ^ (x >> 33)


NULL = bytes([0x00])
demo = [(enc_int(100), enc_str("north")), (enc_int(200), enc_str("south")),
        (enc_int(200), enc_str("south")), (enc_int(50), NULL)]
row_sum = sum(row_digest(list(r)) for r in demo) % (1 << 128)
row_mix = sum(mix(row_digest(list(r))) for r in demo) % (1 << 64)
print(f"{'demo rows':28} 4")
print(f"{'demo row_sum':28} {row_sum:032x}")
print(f"{'demo row_mix':28} {row_mix}")
for c, name in enumerate(["amount", "region"]):
    vals = [r[c] for r in demo if r[c] != NULL]
    total = sum(value_digest(e) for e in vals) % (1 << 128)
    print(f"{'demo ' + name:28} non_null {len(vals)} sum {total:032x}")

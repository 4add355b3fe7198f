#!/usr/bin/env python3
"""An independent implementation of recon's sketch of row digests (an
invertible Bloom lookup table with signed counts, docs/sketch.md), written
from the document, not from the Rust code. It prints the test vectors that
crates/recon/src/digest/iblt/tests.rs pins, so a reading of the spec that
disagrees with the code shows up as a differing line.

Run: python3 scripts/sketch_vectors.py
"""

P = 2**128 - 159
W64 = 2**64 - 1
W128 = 2**128 - 1


def mix(d):
    """The engine's nonlinear 64-bit mix of a digest (docs/fingerprint.md)."""
    lo, hi = d & W64, d >> 64
    x = lo ^ (((hi << 23) | (hi >> 41)) & W64)
    x = ((x ^ (x >> 33)) * 0xFF51AFD7ED558CCD) & W64
    x = ((x ^ (x >> 33)) * 0xC4CEB9FE1A85EC53) & W64
    return x ^ (x >> 33)


class Sketch:
    def __init__(self, tables, log_cells):
        self.tables, self.log = tables, log_cells
        self.cells = [[0, 0, 0] for _ in range(tables << log_cells)]  # count, check, sum

    def index(self, j, d):
        return (j << self.log) | ((d >> (32 * j)) & ((1 << self.log) - 1))

    def add(self, d, c):
        for j in range(self.tables):
            cell = self.cells[self.index(j, d)]
            cell[0] += c
            cell[1] = (cell[1] + mix(d) * c) & W64
            cell[2] = (cell[2] + d * c) % P

    def fold(self):
        half = Sketch(self.tables, self.log - 1)
        m = 1 << self.log
        for j in range(self.tables):
            for i in range(m):
                a, b = half.cells[(j << half.log) | (i & (m // 2 - 1))], self.cells[(j << self.log) | i]
                a[0] += b[0]
                a[1] = (a[1] + b[1]) & W64
                a[2] = (a[2] + b[2]) % P
        return half

    def pure(self, i):
        count, check, s = self.cells[i]
        if count == 0:
            return None
        d = s * pow(count, -1, P) % P
        if (mix(d) * count) & W64 != check or self.index(i >> self.log, d) != i:
            return None
        return d, count

    def peel(self):
        """Pure cells out one at a time until none is left; complete when
        every cell is empty."""
        found = {}
        progress = True
        while progress:
            progress = False
            for i in range(len(self.cells)):
                p = self.pure(i)
                if p:
                    d, c = p
                    self.add(d, -c)
                    found[d] = found.get(d, 0) + c
                    progress = True
        complete = all(c == [0, 0, 0] for c in self.cells)
        return sorted((d, c) for d, c in found.items() if c), complete

    def lines(self):
        for i, (count, check, s) in enumerate(self.cells):
            if (count, check, s) != (0, 0, 0):
                yield f"{i} {count & W64:016x} {check:016x} {s:032x}"

    def cell_bytes(self):
        return b"".join(
            (c & W64).to_bytes(8, "little") + k.to_bytes(8, "little") + s.to_bytes(16, "little")
            for c, k, s in self.cells
        )


# Digests spelled out, so the vectors depend on nothing else.
DIGESTS = [
    0x0123456789ABCDEFFEDCBA9876543210,
    0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00,  # just below p: sums wrap modulo p
    0x00000000000000000000000000000001,
    0x9E3779B97F4A7C15F39CC0605CEDC835,
    0x243F6A8885A308D313198A2E03707344,
]
# Copy-count differences, source − target.
COUNTS = [1, 2, -1, 20, -16384]


def main():
    print("# inverses modulo p")
    for c in [1, -1, 2, 20, -16384, 2**63 - 1]:
        print(f"inv {c} {pow(c, -1, P):032x}")
    print("# mix")
    for d in DIGESTS:
        print(f"mix {d:032x} {mix(d):016x}")
    s = Sketch(3, 3)
    for d, c in zip(DIGESTS, COUNTS):
        s.add(d, c)
    print("# 3 tables x 2^3 cells: nonzero cells (index count check sum)")
    for line in s.lines():
        print(line)
    f = s.fold()
    print("# folded once: 3 tables x 2^2 cells")
    for line in f.lines():
        print(line)
    got, complete = Sketch.__new__(Sketch), None
    got.tables, got.log, got.cells = s.tables, s.log, [list(c) for c in s.cells]
    found, complete = got.peel()
    print(f"# peeled: complete={str(complete).lower()}")
    for d, c in found:
        print(f"peeled {d:032x} {c}")
    # A digest of p or more (one in 2^121) reads back as itself minus p,
    # which the mix refuses: the decode fails, it never names a wrong row.
    top = Sketch(3, 3)
    top.add(W128, 1)
    found, complete = top.peel()
    print(f"# a digest above p: complete={str(complete).lower()}, peeled {len(found)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reads a PNG (stdlib only: zlib + struct) and reports the connected regions of one colour.

usage: png_regions.py FILE.png RRGGBB [TOLERANCE [MIN_AREA]]
prints: "<width>x<height> distinct=<n colours sampled> count=<n regions> big=<n regions of at
least MIN_AREA pixels (default 1)> regions=<sizes, largest first, the first 60>"
Used by the drift HTML test: a drifted node is a heat-map cell, i.e. a large region of the drift
colour; a blank or failed render is one colour.
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("not a PNG: %s" % path)
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit("unsupported PNG: depth %d colour type %d interlace %d" % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    path, hexcol = sys.argv[1], sys.argv[2]
    tol = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    min_area = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    want = tuple(int(hexcol[k:k + 2], 16) for k in (0, 2, 4))
    w, h, bpp, rows = decode(path)
    mask = bytearray(w * h)
    colours = set()
    for y in range(h):
        r = rows[y]
        for x in range(w):
            px = (r[x * bpp], r[x * bpp + 1], r[x * bpp + 2])
            if (x + y) % 7 == 0:
                colours.add(px)
            if all(abs(px[k] - want[k]) <= tol for k in range(3)):
                mask[y * w + x] = 1
    sizes = []
    for start in range(w * h):
        if mask[start] != 1:
            continue
        mask[start] = 2
        stack, n = [start], 0
        while stack:
            p = stack.pop()
            n += 1
            x, y = p % w, p // w
            for q in ((p - 1) if x > 0 else -1, (p + 1) if x < w - 1 else -1,
                      (p - w) if y > 0 else -1, (p + w) if y < h - 1 else -1):
                if q >= 0 and mask[q] == 1:
                    mask[q] = 2
                    stack.append(q)
        sizes.append(n)
    sizes.sort(reverse=True)
    print("%dx%d distinct=%d count=%d big=%d regions=%s" % (
        w, h, len(colours), len(sizes), len([n for n in sizes if n >= min_area]),
        ",".join(map(str, sizes[:60])) or "none"))


if __name__ == "__main__":
    main()

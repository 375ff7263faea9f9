# Writes Zarr format 2 stores with zarr-python (2.13) for the interop
# tests: each NAME.zarr beside NAME.npy, what zarr-python reads from it.
import os, sys
import numpy as np
import zarr
from numcodecs import Blosc, Zstd, Zlib, GZip, LZ4

d = sys.argv[1]
rng = np.random.default_rng(3)


def save(name, a, chunks, region=None, **kw):
    path = os.path.join(d, name + ".zarr")
    z = zarr.open(path, mode="w", shape=a.shape, chunks=chunks, dtype=a.dtype, **kw)
    if region is None:
        z[...] = a
    else:
        z[region] = a[region]
    np.save(os.path.join(d, name + ".npy"), z[...])


f8 = rng.standard_normal((37, 23)) * 100
save("default", f8, (10, 7))
for cname in ["lz4", "zstd", "zlib", "blosclz", "lz4hc"]:
    for shuffle in [0, 1, 2]:
        save("blosc_%s_%d" % (cname, shuffle), f8, (10, 7), compressor=Blosc(cname=cname, clevel=5, shuffle=shuffle))
# Big chunks: several blocks, split streams, a short last block.
big = np.cumsum(rng.integers(-3, 4, 300001)).astype("<i4")
for cname in ["lz4", "zstd", "blosclz", "zlib"]:
    for shuffle in [1, 2]:
        save("bigblosc_%s_%d" % (cname, shuffle), big, (200003,), compressor=Blosc(cname=cname, clevel=5, shuffle=shuffle))
save("bigblosc_noise", rng.standard_normal(100000), (70000,), compressor=Blosc(cname="lz4", shuffle=1))
save("bigblosc_f8_bit", np.linspace(0, 1, 80000), (80000,), compressor=Blosc(cname="zstd", shuffle=2, blocksize=4096))
for name, comp in [("zstd", Zstd(level=3)), ("zlib", Zlib(level=5)), ("gzip", GZip(level=5)), ("lz4", LZ4()), ("none", None)]:
    save("c_" + name, f8, (10, 7), compressor=comp)
save("slash", f8, (10, 7), dimension_separator="/")
save("slash_F", f8, (10, 7), dimension_separator="/", order="F")
save("order_F", f8, (10, 7), order="F", compressor=Zstd())
t3 = (rng.standard_normal((9, 10, 11)) * 50)
save("f_3d", t3, (4, 3, 5), order="F")
save("c_3d", t3, (4, 3, 5))
for code in ["<i4", ">f4", "|u1", "|b1", "<f2", ">i2", "<u8", "<i8", "|i1", ">u2", "<u4", ">f8"]:
    a = (rng.standard_normal((13, 6)) * 60).astype(code) if code != "|b1" else rng.standard_normal((13, 6)) > 0
    save("dt_" + code[1:] + ("_be" if code[0] == ">" else ""), a, (5, 4))
save("missing", f8, (10, 7), region=(slice(0, 12), slice(0, 9)), fill_value=-7.5)
save("missing_nan", f8, (10, 7), region=(slice(25, 37), slice(0, 5)), fill_value=np.nan)
save("missing_inf", f8.astype("<f4"), (10, 7), region=(slice(0, 3), slice(0, 3)), fill_value=-np.inf)
save("missing_int", (f8 * 10).astype("<i8"), (10, 7), region=(slice(0, 3), slice(0, 3)), fill_value=42)
save("missing_bool", f8 > 0, (10, 7), region=(slice(0, 3), slice(0, 3)), fill_value=True)
save("one_d", f8.ravel(), (100,))
save("zero_d", np.array(3.25), ())
g = zarr.open_group(os.path.join(d, "g.zarr"), mode="w")
g.create_dataset("x", data=f8, chunks=(8, 8))
sub = g.create_group("sub")
sub.create_dataset("y", data=f8[:5], chunks=(5, 5))
np.save(os.path.join(d, "g_x.npy"), f8)
np.save(os.path.join(d, "g_sub_y.npy"), f8[:5])

# Format 3 stores, written by hand (zarr-python 2 writes only format 2):
# zarr.json, and each chunk padded to the chunk shape, transposed, laid
# out in the byte order of the bytes codec, compressed by numcodecs.
import json


def crc32c(b):
    crc = 0xFFFFFFFF
    for byte in b:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def save_v3(name, a, chunks, codecs, key="default", sep="/", fill=0, fill_json=0, skip=()):
    path = os.path.join(d, name + ".zarr")
    os.makedirs(path, exist_ok=True)
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(a.shape), "data_type": str(a.dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": key, "configuration": {"separator": sep}},
            "fill_value": fill_json, "codecs": [c[0] for c in codecs], "attributes": {}}
    full = np.full(a.shape, fill, dtype=a.dtype)
    grid = [-(-s // c) for s, c in zip(a.shape, chunks)]
    for idx in np.ndindex(*grid):
        if idx in skip:
            continue
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, a.shape))
        full[sl] = a[sl]
        block = np.full(chunks, fill, dtype=a.dtype)
        block[tuple(slice(0, x.stop - x.start) for x in sl)] = a[sl]
        data = block
        for spec, enc in codecs:
            data = enc(data)
        k = sep.join(str(i) for i in idx)
        k = ("c" + sep + k if idx else "c") if key == "default" else (k or "0")
        p = os.path.join(path, k)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(meta, f)
    np.save(os.path.join(d, name + ".npy"), full)


def transpose(order):
    return ({"name": "transpose", "configuration": {"order": order}}, lambda x: np.ascontiguousarray(x.transpose(order)))


def bytes_(endian):
    return ({"name": "bytes", "configuration": {"endian": endian}},
            lambda x: x.astype(x.dtype.newbyteorder("<" if endian == "little" else ">")).tobytes())


def comp(name, codec, **cfg):
    return ({"name": name, "configuration": cfg}, lambda b: codec.encode(b))


crc = ({"name": "crc32c"}, lambda b: b + crc32c(b).to_bytes(4, "little"))
f4 = (rng.standard_normal((13, 9)) * 10).astype("float32")
save_v3("v3_zstd", f4, (5, 4), [bytes_("little"), comp("zstd", Zstd(level=3), level=3, checksum=False)])
save_v3("v3_transpose_big_blosc", f4, (5, 4), [transpose([1, 0]), bytes_("big"),
        comp("blosc", Blosc(cname="lz4", shuffle=1), cname="lz4", clevel=5, shuffle="shuffle", typesize=4, blocksize=0)],
        sep=".")
save_v3("v3_v2key_gzip_crc", f4, (5, 4), [bytes_("little"), comp("gzip", GZip(level=5), level=5), crc],
        key="v2", sep=".", fill=np.float32(np.nan), fill_json="NaN", skip={(1, 1), (2, 0)})
save_v3("v3_i2_3d", (rng.standard_normal((6, 7, 5)) * 100).astype("int16"), (4, 3, 5),
        [transpose([2, 0, 1]), bytes_("little")], fill=-3, fill_json=-3, skip={(0, 1, 0)})
save_v3("v3_hexfill", f4, (5, 4), [bytes_("little"), comp("numcodecs.zlib", Zlib(level=1), level=1)],
        fill=np.float32(-2.5), fill_json="0xc0200000",
        skip={(0, 0)})


def save_sharded(name, a, shard, inner, inner_codecs, fill=0, skip_inner=(), index_at_start=False):
    """A format 3 array of shards (sharding_indexed): each store chunk a
    shard of inner chunks, each encoded by inner_codecs, then the index of
    (offset, length) pairs, little-endian uint64 and a crc32c."""
    path = os.path.join(d, name + ".zarr")
    os.makedirs(path, exist_ok=True)
    sh_cfg = {"chunk_shape": list(inner), "codecs": [c[0] for c in inner_codecs],
              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
              "index_location": "start" if index_at_start else "end"}
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(a.shape), "data_type": str(a.dtype),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
            "codecs": [{"name": "sharding_indexed", "configuration": sh_cfg}], "attributes": {}}
    full = np.full(a.shape, fill, dtype=a.dtype)
    grid = [-(-s // c) for s, c in zip(a.shape, shard)]
    igrid = [s // i for s, i in zip(shard, inner)]
    for idx in np.ndindex(*grid):
        block = np.full(shard, fill, dtype=a.dtype)
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, shard, a.shape))
        block[tuple(slice(0, x.stop - x.start) for x in sl)] = a[sl]
        body, index = b"", []
        n_index = int(np.prod(igrid)) * 16 + 4
        base = n_index if index_at_start else 0
        for j in np.ndindex(*igrid):
            isl = tuple(slice(k * c, (k + 1) * c) for k, c in zip(j, inner))
            if (idx, j) in skip_inner:
                index.append((2**64 - 1, 2**64 - 1))
                block[isl] = fill
                continue
            data = block[isl]
            for spec, enc in inner_codecs:
                data = enc(data)
            index.append((base + len(body), len(data)))
            body += data
        full[sl] = block[tuple(slice(0, x.stop - x.start) for x in sl)]
        ib = b"".join(o.to_bytes(8, "little") + n.to_bytes(8, "little") for o, n in index)
        ib += crc32c(ib).to_bytes(4, "little")
        k = "c/" + "/".join(str(i) for i in idx)
        p = os.path.join(path, k)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(ib + body if index_at_start else body + ib)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        json.dump(meta, f)
    np.save(os.path.join(d, name + ".npy"), full)


f8s = rng.standard_normal((19, 13))
save_sharded("v3_sharded", f8s, (8, 6), (4, 3), [bytes_("little"), comp("zstd", Zstd(level=3), level=3, checksum=False)],
             fill=-1, skip_inner={((0, 0), (1, 1)), ((2, 1), (0, 0))})
save_sharded("v3_sharded_start_T", f8s, (8, 6), (2, 6), [transpose([1, 0]), bytes_("big"), crc], index_at_start=True)

"""TFRecord's checksums, for the integration tests that write or check
TFRecord files (test_dlio_datasets.sh, test_formats.sh): a record is its
length (u64 LE), masked(crc32c(length)), the data, masked(crc32c(data)),
as TensorFlow's record writer and DLIO's tfrecord generator frame it."""

_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(b):
    """CRC-32C (Castagnoli) of the bytes b."""
    c = 0xFFFFFFFF
    for v in b:
        c = _TABLE[(c ^ v) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(c):
    """TFRecord's masked form of a CRC-32C."""
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

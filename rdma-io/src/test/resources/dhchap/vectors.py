#!/usr/bin/env python3
# Independent DH-HMAC-CHAP test vectors (Python hmac/hashlib/zlib/base64 only), after Linux
# drivers/nvme/common/auth.c (key format, transform) and drivers/nvme/host/auth.c (response inputs).
# Run once; its output is vectors.txt, read by DhchapVectorsTest.
import base64, hashlib, hmac, struct, zlib
H = {1: hashlib.sha256, 2: hashlib.sha384, 3: hashlib.sha512}
HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:6a3c0f3e-1b1e-4b7a-9d44-5c2d6e1f0a11"
SUBNQN = "nqn.2026-11.io.rdmablock:volume:vol1"
def secret(hh, key):
    return "DHHC-1:%02d:%s:" % (hh, base64.b64encode(key + struct.pack("<I", zlib.crc32(key))).decode())
def transform(hh, key, nqn):
    return key if hh == 0 else hmac.new(key, nqn.encode() + b"NVMe-over-Fabrics", H[hh]).digest()
def host_response(h, k, c, s1, tid, hostnqn, subnqn):
    return hmac.new(k, c + struct.pack("<I", s1) + struct.pack("<H", tid) + b"\0" + b"HostHost"
                    + hostnqn.encode() + b"\0" + subnqn.encode(), H[h]).digest()
def ctrl_response(h, k, c, s2, tid, subnqn, hostnqn):
    return hmac.new(k, c + struct.pack("<I", s2) + struct.pack("<H", tid) + b"\0" + b"Controller"
                    + subnqn.encode() + b"\0" + hostnqn.encode(), H[h]).digest()
def augment(h, skey, c):
    return hmac.new(H[h](skey).digest(), c, H[h]).digest()
for hh, n in ((0, 32), (1, 32), (2, 48), (3, 64)):
    key = bytes((i * 7 + hh) & 0xFF for i in range(n))
    print("secret", hh, key.hex(), secret(hh, key), transform(hh, key, HOSTNQN).hex())
for h in (1, 2, 3):
    n = H[h]().digest_size
    k = bytes(range(n)); c = bytes((0xA0 + i) & 0xFF for i in range(n))
    print("host", h, k.hex(), c.hex(), "305419896", "7", host_response(h, k, c, 305419896, 7, HOSTNQN, SUBNQN).hex())
    print("ctrl", h, k.hex(), c.hex(), "2271560481", "7", ctrl_response(h, k, c, 2271560481, 7, SUBNQN, HOSTNQN).hex())
    skey = bytes((i * 3) & 0xFF for i in range(256))
    print("augment", h, skey.hex(), c.hex(), augment(h, skey, c).hex())

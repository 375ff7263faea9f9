"""A small 9P2000.L client: what the marsfs module needs of the protocol.

marsfs serves its tree over 9P2000.L on a unix socket (the default of
``marsfs up``) and on loopback TCP. The kernel tells the server who is on the
other end of a unix socket, so no authentication is spoken here; a server
beyond loopback wants the cluster key over TLS, which this client does not
speak (mount the tree instead, and give its directory).

Requests are sent one at a time under a lock: the module's calls are
sequential, and a blocking read (``wait``) gets a connection of its own.
"""

import errno
import os
import socket
import struct
import threading

VERSION = "9P2000.L"
MSIZE = 4 << 20
NOTAG = 0xFFFF
NOFID = 0xFFFFFFFF

# Message types (9P2000.L and 9P2000.u's base).
RLERROR = 7
TLOPEN = 12
TLCREATE = 14
TREADDIR = 40
TUNLINKAT = 76
TVERSION = 100
TATTACH = 104
TWALK = 110
TREAD = 116
TWRITE = 118
TCLUNK = 120

# Linux open flags, as 9P2000.L carries them.
O_RDONLY = 0
O_WRONLY = 1
O_CREAT = 0o100
O_TRUNC = 0o1000
AT_REMOVEDIR = 0x200


def _s(text):
    b = text.encode("utf-8")
    return struct.pack("<H", len(b)) + b


def socket_path(addr):
    """The unix socket path addr names ("/path" or "unix:path"), or None."""
    if addr.startswith("unix:"):
        return addr[len("unix:"):]
    if addr.startswith("/"):
        return addr
    return None


class Conn:
    """One 9P2000.L connection, attached to the root of a marsfs tree."""

    def __init__(self, addr, timeout=10.0):
        self.addr = addr
        path = socket_path(addr)
        try:
            if path is not None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    sock.settimeout(timeout)
                    sock.connect(path)
                except BaseException:
                    sock.close()
                    raise
            else:
                host, _, port = addr.rpartition(":")
                sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            raise ConnectionRefusedError(
                e.errno, "%s: connection refused: no marsfs server listens there "
                "(not started, stopped, or restarting)" % addr) from None
        sock.settimeout(None)
        self._sock = sock
        self._lock = threading.Lock()
        self._fids = 1  # fid 0 is the root
        self._free = []
        self.msize = MSIZE
        try:
            self._version()
            self._rpc(TATTACH, struct.pack("<II", 0, NOFID) + _s("") + _s("/") + struct.pack("<I", NOFID))
        except BaseException:
            sock.close()
            raise

    def close(self):
        self._sock.close()

    # The wire.

    def _recv(self, n):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = self._sock.recv_into(view[got:])
            if k == 0:
                raise ConnectionResetError(
                    errno.ECONNRESET,
                    "%s: the marsfs server hung up (stopping or restarting: try again)" % self.addr)
            got += k
        return buf

    def _send(self, mtype, tag, body):
        self._sock.sendall(struct.pack("<IBH", 7 + len(body), mtype, tag) + body)

    def _version(self):
        self._send(TVERSION, NOTAG, struct.pack("<I", MSIZE) + _s(VERSION))
        size, rtype, _ = struct.unpack("<IBH", self._recv(7))
        body = bytes(self._recv(size - 7))
        if rtype == RLERROR:
            code = struct.unpack_from("<I", body)[0]
            if code == errno.EACCES:
                raise PermissionError(
                    code, "%s refused plain 9P: a server beyond loopback serves only "
                    "clients with its key; mount its tree and give the directory" % self.addr)
            raise OSError(code, "%s: Tversion refused: %s" % (self.addr, os.strerror(code)))
        if rtype != TVERSION + 1:
            raise OSError(errno.EPROTO, "%s: Tversion answered with type %d" % (self.addr, rtype))
        msize = struct.unpack_from("<I", body)[0]
        if not 8192 <= msize <= MSIZE:
            raise OSError(errno.EPROTO, "%s granted an msize of %d" % (self.addr, msize))
        self.msize = msize

    def _rpc(self, mtype, body, path=""):
        with self._lock:
            self._send(mtype, 1, body)
            size, rtype, _ = struct.unpack("<IBH", self._recv(7))
            rbody = self._recv(size - 7)
        if rtype == RLERROR:
            code = struct.unpack_from("<I", rbody)[0]
            raise OSError(code, os.strerror(code), path or None)
        if rtype != mtype + 1:
            raise OSError(errno.EPROTO, "answered type %d to type %d" % (rtype, mtype), path or None)
        return rbody

    # Fids.

    def _fid(self):
        if self._free:
            return self._free.pop()
        self._fids += 1
        return self._fids

    def walk(self, path):
        """A new fid for path, slash-separated from the root."""
        names = [n for n in path.split("/") if n]
        fid = self._fid()
        body = struct.pack("<IIH", 0, fid, len(names)) + b"".join(_s(n) for n in names)
        try:
            r = self._rpc(TWALK, body, path)
        except OSError:
            self._free.append(fid)
            raise
        if struct.unpack_from("<H", r)[0] != len(names):
            # A partial walk makes no fid.
            self._free.append(fid)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        return fid

    def clunk(self, fid, path=""):
        """Clunk fid. A clunk can fail: a submit's clunk submits the spec."""
        try:
            self._rpc(TCLUNK, struct.pack("<I", fid), path)
        finally:
            self._free.append(fid)

    # Files.

    def open(self, path, flags):
        fid = self.walk(path)
        try:
            self._rpc(TLOPEN, struct.pack("<II", fid, flags), path)
        except OSError:
            self.clunk(fid)
            raise
        return fid

    def create(self, dirpath, name, flags, mode=0o644):
        fid = self.walk(dirpath)
        path = dirpath.rstrip("/") + "/" + name
        try:
            self._rpc(TLCREATE, struct.pack("<I", fid) + _s(name) + struct.pack("<III", flags, mode, 0), path)
        except OSError:
            self.clunk(fid)
            raise
        return fid

    def read_fid(self, fid, path=""):
        """Read fid from offset 0 to its end."""
        parts = []
        off = 0
        count = self.msize - 11
        while True:
            r = self._rpc(TREAD, struct.pack("<IQI", fid, off, count), path)
            n = struct.unpack_from("<I", r)[0]
            if n == 0:
                return b"".join(parts)
            parts.append(bytes(r[4:4 + n]))
            off += n

    def write_fid(self, fid, data, off=0, path=""):
        """Write data at off; returns the offset after it."""
        view = memoryview(data).cast("B")
        most = self.msize - 23
        while len(view):
            piece = view[:most]
            r = self._rpc(TWRITE, struct.pack("<IQI", fid, off, len(piece)) + piece.tobytes(), path)
            n = struct.unpack_from("<I", r)[0]
            if n == 0:
                raise OSError(errno.EIO, "short write", path or None)
            off += n
            view = view[n:]
        return off

    def read(self, path):
        fid = self.open(path, O_RDONLY)
        try:
            return self.read_fid(fid, path)
        finally:
            self.clunk(fid)

    def write(self, path, data):
        """Write data to path from offset 0, and clunk it: errors of the
        clunk (a submit refused there) are raised too."""
        fid = self.open(path, O_WRONLY | O_TRUNC)
        try:
            self.write_fid(fid, data, 0, path)
        except BaseException:
            try:
                self.clunk(fid)
            except OSError:
                pass
            raise
        self.clunk(fid, path)

    def listdir(self, path):
        fid = self.open(path, O_RDONLY)
        names = []
        off = 0
        try:
            while True:
                r = self._rpc(TREADDIR, struct.pack("<IQI", fid, off, self.msize - 11), path)
                n = struct.unpack_from("<I", r)[0]
                if n == 0:
                    return names
                p = 4
                end = 4 + n
                while p < end:
                    # qid[13] offset[8] type[1] name[s]
                    off = struct.unpack_from("<Q", r, p + 13)[0]
                    ln = struct.unpack_from("<H", r, p + 22)[0]
                    name = bytes(r[p + 24:p + 24 + ln]).decode("utf-8")
                    if name not in (".", ".."):
                        names.append(name)
                    p += 24 + ln
        finally:
            self.clunk(fid)

    def remove(self, dirpath, name, directory=False):
        fid = self.walk(dirpath)
        try:
            self._rpc(TUNLINKAT, struct.pack("<I", fid) + _s(name) + struct.pack("<I", AT_REMOVEDIR if directory else 0),
                      dirpath.rstrip("/") + "/" + name)
        finally:
            self.clunk(fid)

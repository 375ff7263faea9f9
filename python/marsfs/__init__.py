"""marsfs from Python: run NumPy-like specs on a marsfs cluster.

marsfs is a file tree. This module is a thin client of it: a session is a
directory, a spec is written into its ``submit`` file, and results are read
back from ``tensors/NAME/npy``. It speaks 9P2000.L itself on the unix socket
``marsfs up`` listens on (or on loopback TCP), or uses a mounted tree when
given its directory. NumPy is its only dependency.

    import numpy as np
    import marsfs

    with marsfs.Session() as s:                 # clones a session; closes it at the end
        s.upload("x", np.arange(10.0))
        out = s.run("y = (x * 2).sum()")        # {"y": array(90.)}
        print(out["y"], s.tensors)              # 90.0 ['x', 'y']

    marsfs.run("pi = 4 * ((rand(10**6, seed=1)**2 + rand(10**6, seed=2)**2) < 1).mean()")

Where the server is: ``addr=``, else ``$MARSFS_ADDR``, else the socket
``marsfs up`` makes by default (``$XDG_RUNTIME_DIR/marsfs.sock``, or
``/tmp/marsfs-UID.sock``) when it exists, else ``127.0.0.1:5640``. An address is a unix socket path (``/path`` or
``unix:path``), a loopback ``host:port``, or the directory of a mounted tree.

A spec the server refuses raises ``SpecError`` with the session's ``error``
file's text (``1:5: unknown function frobnicate``); a graph that fails raises
``GraphError`` with the graph's ``error``.
"""

import io
import json
import os
import sys
import time

import numpy as np

from . import _ninep

__all__ = ["Client", "Session", "MarsfsError", "SpecError", "GraphError", "run", "default_addr"]


class MarsfsError(Exception):
    """What marsfs refused or failed, in its own words."""


class SpecError(MarsfsError):
    """A spec (or an upload, a drop, a close) the server refused: the message
    is the session's ``error`` file."""


class GraphError(MarsfsError):
    """A graph that ended FAILED or CANCELLED."""

    def __init__(self, graph, state, message, status):
        super().__init__("graph %d %s: %s" % (graph, state, message.strip()))
        self.graph = graph
        self.state = state
        self.status = status


def default_addr():
    """The server's address when none is given: $MARSFS_ADDR, else the
    socket marsfs up listens on by default, else its TCP address."""
    if os.environ.get("MARSFS_ADDR"):
        return os.environ["MARSFS_ADDR"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        sock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "marsfs.sock")
    else:
        sock = "/tmp/marsfs-%d.sock" % os.getuid()
    # The socket when there is one (the kernel names its clients to the
    # server), else the TCP address the client verbs default to.
    return sock if os.path.exists(sock) else "127.0.0.1:5640"


class _Mounted:
    """The tree through a mount: the same calls as _ninep.Conn, on files."""

    def __init__(self, root):
        self.root = root

    def _p(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def read(self, path):
        with open(self._p(path), "rb") as f:
            return f.read()

    def write(self, path, data):
        with open(self._p(path), "wb", buffering=0) as f:
            view = memoryview(data).cast("B")
            while len(view):
                view = view[f.write(view):]

    def listdir(self, path):
        return sorted(os.listdir(self._p(path)))

    def remove(self, dirpath, name, directory=False):
        p = os.path.join(self._p(dirpath), name)
        (os.rmdir if directory else os.unlink)(p)

    def writer(self, dirpath, name):
        return open(os.path.join(self._p(dirpath), name), "wb", buffering=0)

    def close(self):
        pass


class _Writer:
    """A file created on a 9P connection, written in order: np.save's sink."""

    def __init__(self, conn, dirpath, name):
        self.conn = conn
        self.path = dirpath.rstrip("/") + "/" + name
        self.fid = conn.create(dirpath, name, _ninep.O_WRONLY | _ninep.O_CREAT | _ninep.O_TRUNC)
        self.off = 0

    def write(self, data):
        self.off = self.conn.write_fid(self.fid, data, self.off, self.path)
        return len(memoryview(data).cast("B"))

    def close(self):
        if self.fid is not None:
            fid, self.fid = self.fid, None
            self.conn.clunk(fid, self.path)

    def abandon(self):
        if self.fid is not None:
            fid, self.fid = self.fid, None
            try:
                self.conn.clunk(fid, self.path)
            except OSError:
                pass


class Client:
    """A connection to a marsfs server (or a mounted tree)."""

    def __init__(self, addr=None):
        self.addr = addr or default_addr()
        if os.path.isdir(self.addr):
            self._t = _Mounted(self.addr)
        else:
            self._t = _ninep.Conn(self.addr)

    def _waiter(self):
        """A connection for a blocking read, so that the client's own stays
        free (a progress bar reads while a graph runs)."""
        if isinstance(self._t, _Mounted):
            return self._t
        return _ninep.Conn(self.addr)

    def read(self, path):
        """The bytes of the file at path (slash-separated, from the root)."""
        return self._t.read(path)

    def write(self, path, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self._t.write(path, data)

    def listdir(self, path):
        return self._t.listdir(path)

    def session(self):
        """A new session (a clone of /sessions/clone)."""
        return Session(client=self)

    def sessions(self):
        return sorted(int(n) for n in self.listdir("/sessions") if n.isdigit())

    def close(self):
        self._t.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Session:
    """A marsfs session: its tensors live until it is closed.

    ``Session()`` clones one on the default server; ``Session(addr=...)`` on
    another; ``client.session()`` on a client already connected. ``with``
    closes it (freeing its chunks) at the end of the block.
    """

    def __init__(self, addr=None, client=None):
        self._own = client is None
        self.client = client or Client(addr)
        try:
            sid = self.client.read("/sessions/clone")
        except OSError as e:
            if self._own:
                self.client.close()
            raise MarsfsError("clone a session at %s: %s" % (self.client.addr, e.strerror or e)) from e
        self.id = int(sid.decode().strip())
        self.path = "/sessions/%d" % self.id
        self.closed = False

    def __repr__(self):
        return "<marsfs.Session %d at %s>" % (self.id, self.client.addr)

    def error(self):
        """The session's error file: why the last write was refused."""
        try:
            return self.client.read(self.path + "/error").decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def _refused(self, what, e):
        msg = self.error()
        return SpecError(msg or "%s: %s" % (what, e.strerror or e))

    def submit(self, spec):
        """Submit a spec; returns its graph's number. A refused spec raises
        SpecError with the server's message."""
        try:
            self.client.write(self.path + "/submit", spec)
        except OSError as e:
            raise self._refused("submit", e) from None
        graphs = [int(n) for n in self.client.listdir(self.path + "/graphs") if n.isdigit()]
        if not graphs:
            raise SpecError(self.error() or "submit: no graph was made")
        return max(graphs)

    def status(self, graph):
        """The graph's status file as a dict: "state", then its key values."""
        return _status(self.client.read("%s/graphs/%d/status" % (self.path, graph)))

    def wait(self, graph, progress=None):
        """Wait for a graph to end; returns its status. A graph that did not
        succeed raises GraphError. progress: True shows a bar (on stderr, or
        in Jupyter), False none, None one when stderr is a terminal or in
        Jupyter."""
        g = "%s/graphs/%d" % (self.path, graph)
        bar = _bar(progress)
        if bar is None:
            w = self.client._waiter()
            try:
                st = _status(w.read(g + "/wait"))
            finally:
                if w is not self.client._t:
                    w.close()
        else:
            delay = 0.05
            while True:
                line = self.client.read(g + "/progress").decode("utf-8", "replace").strip()
                bar.show(line)
                st = self.status(graph)
                if st["state"] not in ("PREPARING", "RUNNING"):
                    bar.show(self.client.read(g + "/progress").decode("utf-8", "replace").strip())
                    bar.end()
                    break
                time.sleep(delay)
                delay = min(delay * 1.5, 0.5)
        if st["state"] != "SUCCEEDED":
            try:
                msg = self.client.read(g + "/error").decode("utf-8", "replace")
            except OSError:
                msg = ""
            raise GraphError(graph, st["state"], msg, st)
        return st

    def outputs(self, graph):
        """The names a graph's spec fetches, in its order."""
        try:
            doc = json.loads(self.client.read("%s/graphs/%d/spec.json" % (self.path, graph)))
        except (OSError, ValueError):
            return []
        return [o["name"] for o in doc.get("outputs") or []]

    def run(self, spec, progress=None):
        """Submit a spec, wait for it, and return its outputs as
        {name: ndarray} (0-d arrays for scalars)."""
        g = self.submit(spec)
        self.wait(g, progress=progress)
        return {name: self.fetch(name) for name in self.outputs(g)}

    def fetch(self, name):
        """The kept tensor name as a NumPy array."""
        try:
            data = self.client.read("%s/tensors/%s/npy" % (self.path, name))
        except FileNotFoundError:
            raise KeyError(name) from None
        return np.load(io.BytesIO(data), allow_pickle=False)

    __getitem__ = fetch

    def upload(self, name, array):
        """Upload an array as tensor name (its dtype and shape kept)."""
        a = np.asarray(array)
        t = self.client._t
        try:
            if isinstance(t, _Mounted):
                with t.writer(self.path + "/tensors", name + ".npy") as f:
                    np.lib.format.write_array(f, a, allow_pickle=False)
            else:
                w = _Writer(t, self.path + "/tensors", name + ".npy")
                try:
                    np.lib.format.write_array(w, a, allow_pickle=False)
                except BaseException:
                    w.abandon()
                    raise
                w.close()
        except OSError as e:
            raise self._refused("upload " + name, e) from None

    @property
    def tensors(self):
        """The names of the session's kept tensors."""
        return self.client.listdir(self.path + "/tensors")

    def drop(self, name):
        """Drop a kept tensor, freeing its chunks."""
        try:
            self.client._t.remove(self.path + "/tensors", name, directory=True)
        except OSError as e:
            raise self._refused("drop " + name, e) from None

    def close(self):
        """Close the session: its tensors and chunks are freed."""
        if self.closed:
            return
        self.closed = True
        try:
            self.client.write(self.path + "/ctl", b"close\n")
        except OSError as e:
            if not isinstance(e, (ConnectionError, FileNotFoundError)):
                raise self._refused("close", e) from None
        finally:
            if self._own:
                self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def run(spec, addr=None, progress=None):
    """Run a spec in a session of its own, and return its outputs as
    {name: ndarray}; the session is closed after."""
    with Session(addr=addr) as s:
        return s.run(spec, progress=progress)


def _status(b):
    lines = b.decode("utf-8", "replace").splitlines()
    st = {"state": lines[0].strip() if lines else ""}
    for ln in lines[1:]:
        k, _, v = ln.partition(" ")
        if k:
            st[k] = v.strip()
    return st


def _in_jupyter():
    ip = sys.modules.get("IPython")
    if ip is None or "ipykernel" not in sys.modules:
        return False
    try:
        return ip.get_ipython() is not None
    except Exception:
        return False


def _bar(progress):
    if progress is False:
        return None
    if _in_jupyter():
        return _JupyterBar()
    if progress or (progress is None and sys.stderr.isatty()):
        return _TermBar(sys.stderr)
    return None


class _TermBar:
    """The graph's progress line, redrawn in place on a terminal."""

    def __init__(self, out):
        self.out = out
        self.width = 0

    def show(self, line):
        pad = max(0, self.width - len(line))
        self.out.write("\r" + line + " " * pad)
        self.out.flush()
        self.width = len(line)

    def end(self):
        self.out.write("\n")
        self.out.flush()


class _JupyterBar:
    """The progress line as an HTML progress element, updated in place."""

    def __init__(self):
        from IPython.display import HTML, display

        self.HTML = HTML
        self.handle = display(HTML(""), display_id=True)

    def show(self, line):
        import html

        pct = 0.0
        for word in line.split():
            if word.endswith("%"):
                try:
                    pct = float(word[:-1])
                except ValueError:
                    pass
                break
        text = line.split("]", 1)[-1].strip()
        self.handle.update(self.HTML(
            '<progress value="%.1f" max="100" style="width:30em"></progress> <code>%s</code>'
            % (pct, html.escape(text))))

    def end(self):
        pass

"""A resident process that holds one device for ``fuzzfarm sweep``: ``fuzzfarm serve``.

A sweep started from a shell pays, before its first unit, for the interpreter, numpy and
pyopencl, every OpenCL platform, a context, its programs and a pool of checking
processes (docs/cold_start.md: about 2 s on the GPU machine, most of which no sweep can
do without).  ``fuzzfarm serve -d SEL`` pays them once and keeps them: the device's
context and built programs (``DeviceRunner``s, kept across sweeps; what a sweep finds,
faults and choices included, is its own: each gets a fresh ``DeviceSession``) and the
checking processes with their shared slots (``CheckPool``, forked before any context
exists, as the sweep's own are).  ``fuzzfarm sweep`` then asks a resident process first
(``forward``): the client imports nothing heavy, sends its options, and prints what
the sweep prints, which is exactly what the command would print in the client's own
process, with the same exit status.

Wire: a Unix stream socket ``<server_dir()>/<device fingerprint>.sock`` (the folder
0700, the socket 0600, the peer's uid checked), one JSON object per line.  The client
sends a ``Request``; the server answers ``{"accept": true}`` or ``{"decline": why}``, then
streams ``{"out": text}`` / ``{"err": text}`` and ends with ``{"exit": status}``.  A
client's Ctrl-C is sent as ``{"interrupt": true}`` and becomes a SIGINT of the sweep
(the first stops launching and finishes the units in flight, as in the client's own
process); a client that goes away counts as one Ctrl-C: its finished units are kept.

A server declines, and the client runs the sweep itself (saying why, on stderr), when:
another sweep is running; the request's fuzzfarm code or Python differs from the
server's (``code_stamp``; the server then stops: it is stale for everyone); the
request's driver environment (OCL_*, POCL_*, CUDA_*, ... variables) differs; ``-d``
does not select exactly its device; or ``-j`` asks for another number of checking
processes.  Its slots take the largest chunk a sweep may have (their pages are handed
back after each sweep).  It stops on ``fuzzfarm serve --stop``, SIGTERM, Ctrl-C while
it waits, or after ``idle`` seconds without a request.

A driver that crashes the server ends the client's sweep with one line and exit status
1; the units checked before are kept and a new run of the command resumes the sweep
(in the client's process, or a new server's).
"""
from __future__ import annotations

import io
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["Request", "Resident", "Origin", "server_dir", "code_stamp", "forward", "serve",
           "ping_servers", "stop_servers", "server_lines", "serve_device", "driver_environment",
           "NO_SERVER_ENV", "DRIVER_ENV_PREFIXES"]

#: Set (to anything but "" or "0") to keep every sweep in its own process.
NO_SERVER_ENV = "FUZZFARM_NO_SERVER"

#: Environment variables that change what a driver does: a request whose values differ
#: from the server's (as it started) is declined.
DRIVER_ENV_PREFIXES = ("OCL_", "OPENCL_", "POCL_", "CUDA_", "NVIDIA_", "OCLGRIND_",
                       "SYCL_", "INTEL_", "LD_")

#: Environment variables a request brings to its sweep (and takes away after): how it
#: writes (the terminal) and what fuzzfarm is told (FUZZFARM_*, planted faults included).
_REQUEST_ENV = ("COLUMNS", "LINES", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TZ")

#: The packages whose files make the code stamp.
_PACKAGES = ("fuzzfarm", "edgecases", "strategies")

#: How long a client waits to connect, and then for a server's answer (it answers at
#: once unless its process is wedged: then the client runs the sweep itself).
_CONNECT_SECONDS = 2.0
_ANSWER_SECONDS = 30.0


# --------------------------------------------------------------------------- places
def server_dir() -> Path:
    """Where servers listen: ``$XDG_RUNTIME_DIR/fuzzfarm``, else fuzzfarm's cache folder's
    ``serve`` (``~/.cache/fuzzfarm/serve``)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "fuzzfarm"
    from fuzzfarm.device.icd import cache_root
    return cache_root() / "serve"


def code_stamp() -> str:
    """A hash of the Python running and of every file of fuzzfarm's packages (path, size,
    modification time): a server and a client with different stamps run different code.
    A few milliseconds (stat calls only)."""
    import hashlib
    import importlib.util
    h = hashlib.sha256(f"{sys.executable}\0{sys.version}".encode())
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        roots = list(spec.submodule_search_locations or []) if spec else []
        for root in sorted(roots):
            for path, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for f in sorted(files):
                    if not f.endswith((".pyc", ".pyo")):
                        st = os.stat(os.path.join(path, f))
                        h.update(f"{path}/{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def driver_environment(env=None) -> dict:
    """The variables of ``env`` (default: this process's) that change what a driver does
    (``DRIVER_ENV_PREFIXES``)."""
    return {k: v for k, v in (os.environ if env is None else env).items()
            if k.startswith(DRIVER_ENV_PREFIXES)}


# --------------------------------------------------------------------------- the request
@dataclass(frozen=True)
class Request:
    """A ``fuzzfarm sweep`` for a server: ``argv`` (its arguments after ``fuzzfarm``), the
    ``-d`` ``selector`` (None: every device) and ``workers`` (None: the server's), the
    client's folder (``cwd``) and ``code`` stamp, its driver environment
    (``driver_env``), what it brings to the sweep (``env``) and whether its stdout and
    stderr are terminals (``tty``: [stdout, stderr])."""

    argv: tuple
    selector: str | None
    workers: int | None
    cwd: str
    code: str
    driver_env: dict
    env: dict
    tty: tuple = (False, False)

    @classmethod
    def here(cls, argv, selector, workers) -> "Request":
        """The request of this process (its environment, terminal and code)."""
        import shutil
        env = {k: v for k, v in os.environ.items()
               if k.startswith("FUZZFARM_") or k in _REQUEST_ENV}
        tty = (_isatty(sys.stdout), _isatty(sys.stderr))
        if tty[0] or tty[1]:
            size = shutil.get_terminal_size()
            env.setdefault("COLUMNS", str(size.columns))
            env.setdefault("LINES", str(size.lines))
        return cls(tuple(argv), selector, workers, os.getcwd(), code_stamp(),
                   driver_environment(), env, tty)

    @classmethod
    def from_message(cls, message: dict) -> "Request":
        """The request of a ``{"sweep": ...}`` message.  Raises ValueError for any other."""
        try:
            fields = dict(message["sweep"])
            fields["argv"], fields["tty"] = tuple(fields["argv"]), tuple(fields["tty"])
            return cls(**fields)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a sweep request ({exc})") from None


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# --------------------------------------------------------------------------- the client
def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_CONNECT_SECONDS)
    try:
        conn.connect(str(path))
    except OSError:             # a socket its server left (killed), or a server gone
        conn.close()
        return None
    return conn


def _servers() -> list[Path]:
    try:
        return sorted(server_dir().glob("*.sock"))
    except OSError:
        return []


def _ask(conn: socket.socket, message: dict) -> tuple[dict, object]:
    """Send ``message``; the first answer and the reader of what follows."""
    conn.sendall((json.dumps(message) + "\n").encode())
    reader = conn.makefile("rb")
    line = reader.readline()
    return (json.loads(line) if line.strip() else {"decline": "no answer"}), reader


def forward(argv, selector: str | None, workers: int | None) -> int | None:
    """Run ``fuzzfarm <argv>`` (a sweep of device ``selector``, ``workers`` checking
    processes or None) in a server that holds its device, if one listens and takes it:
    its output is printed here as it comes, and its exit status returned.  None where
    none took it (run the sweep in this process); a server's reason that concerns this
    request is printed on stderr then.  Costs a listing of ``server_dir()`` where no
    server listens."""
    if os.environ.get(NO_SERVER_ENV, "") not in ("", "0"):
        return None
    request = None
    for path in _servers():
        conn = _connect(path)
        if conn is None:
            continue
        try:
            request = request or Request.here(argv, selector, workers)
        except OSError:             # no current folder (removed): nothing to send
            conn.close()
            return None
        try:
            conn.settimeout(_ANSWER_SECONDS)
            answer, reader = _ask(conn, {"sweep": asdict(request)})
        except (OSError, ValueError) as exc:
            answer = {"decline": f"no answer: {exc}", "tell": True}
        if "accept" not in answer:
            if answer.get("tell"):
                print(f"fuzzfarm: the server at {path} did not take this sweep "
                      f"({answer.get('decline', '')}); running it here", file=sys.stderr)
            conn.close()
            continue
        conn.settimeout(None)
        return _relay(conn, reader, path)
    return None


def _echo(message: dict) -> None:
    """A streamed ``{"out"|"err": text}`` written here (a closed stdout, as of a pipe
    into ``head``, drops it: the sweep goes on)."""
    stream = sys.stdout if "out" in message else sys.stderr
    try:
        stream.write(message.get("out", message.get("err", "")))
        stream.flush()
    except (OSError, ValueError):
        pass


def _relay(conn: socket.socket, reader, path: Path) -> int:
    """Print what the server streams until its exit status; Ctrl-C is sent to it (the
    second one also stops waiting: the server finishes the units in flight alone)."""
    sigints = [0]

    def on_sigint(signum, frame):
        sigints[0] += 1
        try:
            conn.sendall(b'{"interrupt": true}\n')
        except OSError:
            pass
        if sigints[0] > 1:
            raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        for line in reader:
            message = json.loads(line)
            if "exit" in message:
                return int(message["exit"])
            _echo(message)
    except KeyboardInterrupt:
        return 130
    except (OSError, ValueError):
        pass
    finally:
        signal.signal(signal.SIGINT, old)
        conn.close()
    print(f"Error: the fuzzfarm server at {path} ended during the sweep (its process "
          f"died: a driver crash?); the units checked are kept, and the same command "
          f"resumes the sweep", file=sys.stderr)
    return 1


def ping_servers(stop: bool = False) -> list[dict]:
    """Every listening server's description ({"device", "fingerprint", "pid", "socket",
    "busy", "started"}); ``stop``: ask each to stop (it finishes the sweep it runs)."""
    out = []
    for path in _servers():
        conn = _connect(path)
        if conn is None:
            continue
        try:
            answer, _ = _ask(conn, {"stop" if stop else "ping": True})
            out.append(answer | {"socket": str(path)})
        except (OSError, ValueError):
            pass
        finally:
            conn.close()
    return out


def stop_servers() -> list[dict]:
    """Ask every listening server to stop; their descriptions."""
    return ping_servers(stop=True)


def server_lines(stop: bool = False) -> list[str]:
    """One line per listening server (``fuzzfarm serve --list``); ``stop``: each asked to
    stop (``--stop``).  A line saying so where none listens."""
    lines = [f"{'stopping ' if stop else ''}{d['device']} [{d['fingerprint']}] pid "
             f"{d['pid']} at {d['socket']}{' (sweeping)' if d['busy'] else ''}"
             for d in ping_servers(stop)]
    return lines or [f"no fuzzfarm server listens in {server_dir()}"]


# --------------------------------------------------------------------------- the server
@dataclass
class Resident:
    """What a server keeps for its sweeps: its device ``info`` (a DeviceInfo) among every
    device ``infos`` (for ``-d``), the checking processes and their slots (``pool``, an
    orchestrate.pipeline.CheckPool), what it was started from (``origin``) and the
    device's runners by build options (``runners``, for work.session.DeviceSession)."""

    info: object
    infos: list
    pool: object
    origin: "Origin"
    runners: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Origin:
    """A server's code stamp (``code_stamp``) and driver environment
    (``driver_environment``), both taken as its command starts: before it imports the
    rest of fuzzfarm, and before fuzzfarm registers the environment's drivers
    (fuzzfarm.device.icd sets OCL_ICD_VENDORS), as a client sees them."""

    code: str
    driver_env: dict

    @classmethod
    def now(cls) -> "Origin":
        return cls(code_stamp(), driver_environment())


class _Stream(io.TextIOBase):
    """A text stream that sends what is written to the client as ``{key: text}`` lines;
    a client gone makes it a sink (the sweep goes on and keeps its units)."""

    def __init__(self, conn: socket.socket, key: str, tty: bool, lock: threading.Lock):
        super().__init__()
        self.conn, self.key, self.tty, self.lock = conn, key, tty, lock

    @property
    def encoding(self) -> str:
        return "utf-8"

    def write(self, text: str) -> int:
        if not isinstance(text, str):       # click asks whether it takes bytes: it does not
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            _send(self.conn, {self.key: text}, self.lock)
        return len(text)

    def isatty(self) -> bool:
        return self.tty

    def writable(self) -> bool:
        return True


def _send(conn: socket.socket, message: dict, lock: threading.Lock) -> bool:
    """Send ``message``; whether the client took it (False: it has gone)."""
    with lock:
        try:
            conn.sendall((json.dumps(message) + "\n").encode())
            return True
        except OSError:
            return False


@contextmanager
def _environment(values: dict, cwd: str):
    """The request's variables set (FUZZFARM_* ones not given removed) and its folder
    current, all as before afterwards."""
    old = dict(os.environ)
    for k in [k for k in os.environ if k.startswith("FUZZFARM_") or k in _REQUEST_ENV]:
        del os.environ[k]
    os.environ.update(values)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(old)


class _Server:
    """The accepting thread and the main thread's sweeps (module docstring)."""

    def __init__(self, resident: Resident, listener: socket.socket, idle: float, command,
                 say):
        self.resident, self.listener, self.idle, self.say = resident, listener, idle, say
        self.command = command
        self.requests: queue.Queue = queue.Queue(maxsize=1)
        self.busy = threading.Event()
        self.stopping = threading.Event()
        self.started = time.time()
        self.sweeping = False           # the main thread is inside a sweep's command
        self.client_signalled = False   # the last SIGINT came from a client (or --stop)

    def on_sigint(self, signum, frame) -> None:
        """SIGINT: within a sweep, the sweep's (its own handler, while it launches units,
        takes it first); a client's arriving after its sweep ended is dropped; any other
        stops the server."""
        if self.client_signalled and not self.sweeping:
            self.client_signalled = False
            return
        raise KeyboardInterrupt

    # -- the accepting thread: answers pings and stops, queues one sweep at a time
    def accept_forever(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                self._greet(conn)
            except (OSError, ValueError):
                conn.close()

    def _describe(self) -> dict:
        info = self.resident.info
        return {"device": info.label, "fingerprint": info.fingerprint, "pid": os.getpid(),
                "busy": self.busy.is_set(), "started": self.started}

    def _greet(self, conn: socket.socket) -> None:
        conn.settimeout(_CONNECT_SECONDS)
        if not _same_user(conn):
            conn.close()
            return
        line = conn.makefile("rb").readline()
        message = json.loads(line) if line.strip() else {}
        if "ping" in message or "stop" in message:
            conn.sendall((json.dumps(self._describe()) + "\n").encode())
            conn.close()
            if "stop" in message:
                self.stop()
            return
        request = Request.from_message(message)
        why, tell = self._refusal(request)
        if why is None:
            self.busy.set()
            try:
                self.requests.put_nowait((conn, request))
            except queue.Full:
                why, tell = "it is running another sweep", True
            else:
                return
        conn.sendall((json.dumps({"decline": why, "tell": tell}) + "\n").encode())
        conn.close()

    def _refusal(self, r: Request) -> tuple[str | None, bool]:
        """(why the server does not take ``r``, whether the client should say so)."""
        from fuzzfarm.device.discovery import DeviceSelectionError, select_devices
        if self.stopping.is_set():
            return "it is stopping", False
        if self.busy.is_set():
            return "it is running another sweep", True
        origin = self.resident.origin
        if r.code != origin.code:
            self.stop()
            return "it was started from other fuzzfarm code or Python; it stops now", True
        if r.driver_env != origin.driver_env:
            keys = sorted(set(r.driver_env) ^ set(origin.driver_env) | {
                k for k in r.driver_env if origin.driver_env.get(k) != r.driver_env[k]})
            return f"it runs the drivers with other {', '.join(keys)}", True
        try:
            chosen = select_devices(r.selector, self.resident.infos)
        except DeviceSelectionError:
            return "-d selects no device here", False
        if [d.fingerprint for d in chosen] != [self.resident.info.fingerprint]:
            return "-d selects another device", False
        pool = self.resident.pool
        if r.workers not in (None, pool.workers):
            return f"it has {pool.workers} checking processes, not {r.workers}", True
        return None, False

    def stop(self) -> None:
        """Stop accepting; the sweep running (if any) is told as by a Ctrl-C."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self.sweeping:
            self._interrupt()
        try:
            self.requests.put_nowait(None)
        except queue.Full:
            pass

    def _interrupt(self) -> None:
        self.client_signalled = True
        os.kill(os.getpid(), signal.SIGINT)

    # -- the main thread: one sweep after another
    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                item = self.requests.get(timeout=self.idle)
            except queue.Empty:
                self.say(f"idle for {self.idle:.0f} s: stopping")
                break
            if item is None:
                break
            conn, request = item
            try:
                self._sweep(conn, request)
            finally:
                conn.close()
                self.busy.clear()
        self.stop()

    def _sweep(self, conn: socket.socket, request: Request) -> None:
        lock, gone = threading.Lock(), threading.Event()
        self.client_signalled = False
        conn.settimeout(None)               # a slow terminal slows the sweep, loses nothing
        if not _send(conn, {"accept": True}, lock):
            return                          # it gave up waiting: it runs the sweep itself
        threading.Thread(target=self._watch, args=(conn, gone), daemon=True).start()
        status, crashed = 1, False
        out = _Stream(conn, "out", request.tty[0], lock)
        err = _Stream(conn, "err", request.tty[1], lock)
        try:
            with _environment(request.env, request.cwd), redirect_stdout(out), \
                    redirect_stderr(err):
                self.sweeping = True
                if gone.is_set():           # gone before it started: nothing to do
                    raise KeyboardInterrupt
                try:
                    self.command.main(args=list(request.argv), prog_name="fuzzfarm",
                                      obj=self.resident)
                except SystemExit as exc:
                    status = exc.code if isinstance(exc.code, int) else int(bool(exc.code))
                except Exception:   # a bug of fuzzfarm: its traceback, and no more sweeps
                    import traceback
                    err.write(traceback.format_exc())
                    crashed = True
                finally:
                    self.sweeping = False
        except KeyboardInterrupt:
            self.sweeping = False
            status = 130
        _send(conn, {"exit": status}, lock)
        self.say(f"sweep {' '.join(request.argv[1:2])}: exit status {status}")
        if crashed:
            self.say("stopping after an unexpected error (its traceback went to the client)")
            self.stop()

    def _watch(self, conn: socket.socket, gone: threading.Event) -> None:
        """A client's interrupts (and its going away, ``gone``: one) become SIGINTs of the
        sweep."""
        try:
            for line in conn.makefile("rb"):
                if b"interrupt" in line and self.sweeping:
                    self._interrupt()
        except (OSError, ValueError):
            pass
        gone.set()
        if self.sweeping:
            self._interrupt()


def _same_user(conn: socket.socket) -> bool:
    """Whether the peer runs as this user (Linux's SO_PEERCRED; True where unknown)."""
    import struct
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                struct.calcsize("3i"))
    except (AttributeError, OSError):
        return True
    return struct.unpack("3i", creds)[1] == os.getuid()


def serve(resident: Resident, idle: float, command, say=print) -> None:
    """Serve sweeps on ``resident``'s device until stopped (module docstring): ``idle``
    seconds without a request, ``fuzzfarm serve --stop``, SIGTERM or Ctrl-C.
    ``command``: the click group a request's arguments are given to (fuzzfarm.cli.main,
    which hands ``resident`` to its sweep as the context's ``obj``); ``say``: one line
    per event.  Raises OSError when the socket cannot be made, and
    ServerRunning (BadInput) when a server of the device listens already."""
    from fuzzfarm.errors import BadInput
    folder = server_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    path = folder / f"{resident.info.fingerprint}.sock"
    probe = _connect(path) if path.exists() else None
    if probe is not None:
        probe.close()
        raise BadInput(f"a fuzzfarm server of {resident.info.label} listens at {path} "
                       f"already; `fuzzfarm serve --stop` stops it")
    path.unlink(missing_ok=True)            # its server was killed
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old_mask)
    listener.listen(8)
    server = _Server(resident, listener, idle, command, say)
    old_term = signal.signal(signal.SIGTERM, lambda *_: server.stop())
    old_int = signal.signal(signal.SIGINT, server.on_sigint)
    acceptor = threading.Thread(target=server.accept_forever, daemon=True)
    acceptor.start()
    say(f"serving sweeps on {resident.info.label} [{resident.info.fingerprint}] at {path} "
        f"({resident.pool.workers} checking processes); `fuzzfarm serve --stop` ends it")
    try:
        server.run()
    except KeyboardInterrupt:
        say("interrupted: stopping")
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
        server.stop()
        listener.close()
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def serve_device(info, infos: list, workers: int | None, idle: float, origin: Origin,
                 command, say=print) -> None:
    """``fuzzfarm serve``: fork the checking processes (``workers``, default one per core)
    with slots for the largest chunk a sweep takes, open ``info``'s device (a context with
    no build options), then ``serve``.  ``infos``: every device (what ``-d`` selects
    from); ``origin``: ``Origin.now()`` as the command started; ``command`` as for
    ``serve``.  Raises what ``serve`` raises,
    DeviceSelectionError where the device is gone."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.oracle.screen_answer import ScreenChunk
    from fuzzfarm.orchestrate.pipeline import CheckPool
    from fuzzfarm.orchestrate.sweep import (MAX_CHUNK_BITS, SLOT_MEMORY, default_workers,
                                            without_pandas)
    workers = workers or default_workers()
    with without_pandas():          # as in a sweep's own process, and its workers'
        # slots for any sweep: SweepOptions takes at most workers + 2 of them, none larger
        # than half the slot memory and a chunk's screen answer
        pool = CheckPool(workers, workers + 2,
                         SLOT_MEMORY // 2 + ScreenChunk.nbytes(1 << MAX_CHUNK_BITS))
        try:
            resident = Resident(info, infos, pool, origin, {"": DeviceRunner(info, "")})
            serve(resident, idle, command, say)
        finally:
            pool.close(abandon=True)

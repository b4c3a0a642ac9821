"""praw.py: a small reader of pioscope raw files (runtime/src/raw_format.h) for tests.

Mirrors the C layout with struct formats; function names come from runtime/src/functions.def.
Not the product reader (crates/pioscope-trace): just enough to assert on decoded facts.
"""
import os
import re
import struct

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")

FILE_HEADER = struct.Struct("<8sHHHHIIQQQQQ")   # 64 bytes
CHUNK_HEADER = struct.Struct("<IHHIIQQ")        # 32
EVENT = struct.Struct("<QIHBBIIQ")              # 32
EXT = struct.Struct("<qQiIQ")                   # 32
STRING = struct.Struct("<IHHQ")                 # 16 + text
SETTINGS = struct.Struct("<IHHQ")               # 16 + text
CLOCK_SYNC = struct.Struct("<IIqQQ")            # 32

CHUNK_MAGIC = 0x4B4E4843
CHUNK_EVENTS, CHUNK_STRING, CHUNK_JOB, CHUNK_SETTINGS, CHUNK_CLOCK_SYNC, CHUNK_PARTIAL, \
    CHUNK_END = range(1, 8)

F_EXT, F_COLLECTIVE, F_NONBLOCKING, F_OFFSET_UNKNOWN, F_COMPLETION = 0x01, 0x02, 0x04, 0x08, 0x10
NO_RANK = 0xFFFFFFFF


def function_names():
    """id -> name and name -> id, from functions.def."""
    names = {}
    with open(os.path.join(SRC, "functions.def")) as f:
        for m in re.finditer(r"^PIOSCOPE_FUNC\((\d+),\s*(\w+),\s*(\w+)\)", f.read(), re.M):
            names[int(m.group(1))] = m.group(3)
    return names, {v: k for k, v in names.items()}


FUNC_NAMES, FUNC_IDS = function_names()


class Event:
    __slots__ = ("thread", "start", "duration", "func", "name", "depth", "flags", "object",
                 "size", "offset", "result", "error", "link")

    def __repr__(self):
        return (f"<{self.name} d={self.depth} fl={self.flags:#x} obj={self.object} "
                f"size={self.size} off={self.offset:#x} res={self.result} err={self.error} "
                f"link={self.link:#x}>")

    @property
    def end(self):
        return self.start + self.duration

    @property
    def peer(self):
        return self.offset >> 32

    @property
    def tag(self):
        return self.offset & 0xFFFFFFFF


class RawFile:
    """One decoded raw file: header, job facts, strings, events, settings, clock syncs."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        h = FILE_HEADER.unpack_from(data, 0)
        if h[0] != b"PIOSCOPE":
            raise ValueError(f"{path}: not a pioscope raw file")
        self.pid, self.ppid = h[5], h[6]
        self.job = {}
        self.strings = {}
        self.events = []
        self.settings = []     # (object, func name, ticks, {key: value})
        self.clock_syncs = []  # (phase, reference, offset_ns, rtt_ns, local_mono_ns)
        self.partial = None
        self.ended = False
        pos = h[2]
        while pos + CHUNK_HEADER.size <= len(data):
            magic, kind, _, thread, nbytes, _, _ = CHUNK_HEADER.unpack_from(data, pos)
            if magic != CHUNK_MAGIC or pos + CHUNK_HEADER.size + nbytes > len(data):
                self.partial = self.partial or "damaged chunk"
                break
            payload = data[pos + CHUNK_HEADER.size: pos + CHUNK_HEADER.size + nbytes]
            pos += CHUNK_HEADER.size + nbytes
            self._chunk(kind, thread, payload)

    @staticmethod
    def _text(raw):
        return raw.rstrip(b"\0").decode("utf-8", "replace")

    @staticmethod
    def _pairs(text):
        out = {}
        for line in text.splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
        return out

    def _chunk(self, kind, thread, payload):
        if kind == CHUNK_EVENTS:
            i = 0
            while i + EVENT.size <= len(payload):
                start, duration, func, depth, flags, obj, size_lo, offset = \
                    EVENT.unpack_from(payload, i)
                i += EVENT.size
                e = Event()
                e.thread, e.start, e.func, e.depth, e.flags, e.object = \
                    thread, start, func, depth, flags, obj
                e.name = FUNC_NAMES.get(func, f"func{func}")
                e.offset, e.duration, e.size = offset, duration, size_lo
                e.result, e.error, e.link = size_lo, 0, 0
                if flags & F_EXT:
                    result, duration64, error, size_hi, link = EXT.unpack_from(payload, i)
                    i += EXT.size
                    e.result, e.duration, e.error, e.link = result, duration64, error, link
                    e.size = size_lo | (size_hi << 32)
                    e.result = result
                self.events.append(e)
        elif kind == CHUNK_STRING:
            sid, skind, length, _ = STRING.unpack_from(payload, 0)
            self.strings[sid] = payload[STRING.size: STRING.size + length].decode("utf-8",
                                                                                  "replace")
        elif kind == CHUNK_JOB:
            self.job.update(self._pairs(self._text(payload)))
        elif kind == CHUNK_SETTINGS:
            obj, func, _, ticks = SETTINGS.unpack_from(payload, 0)
            self.settings.append((obj, FUNC_NAMES.get(func, str(func)), ticks,
                                  self._pairs(self._text(payload[SETTINGS.size:]))))
        elif kind == CHUNK_CLOCK_SYNC:
            self.clock_syncs.append(CLOCK_SYNC.unpack_from(payload, 0))
        elif kind == CHUNK_PARTIAL:
            self.partial = self._text(payload)
        elif kind == CHUNK_END:
            self.ended = True

    @property
    def rank(self):
        return int(self.job.get("rank", -1))

    def sorted_events(self):
        return sorted(self.events, key=lambda e: (e.thread, e.start, -e.depth))

    def named(self, name):
        return [e for e in self.sorted_events() if e.name == name]

    def children(self, parent):
        """Records directly inside `parent` (same thread, one level deeper, within its time)."""
        return [e for e in self.sorted_events()
                if e.thread == parent.thread and e.depth == parent.depth + 1
                and parent.start <= e.start <= parent.end]


def read_dir(directory):
    """Every raw file in directory, keyed by MPI rank (pid when a file has no rank)."""
    out = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".praw"):
            raw = RawFile(os.path.join(directory, name))
            out[raw.rank if raw.rank >= 0 else -raw.pid] = raw
    return out

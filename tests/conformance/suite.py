"""The conformance suite: real MPI-IO programs run untraced and under `pioscope run`, their
traces checked against what the programs do, replayed by the simulator, and their reports
checked for findings known to be false. Shared by the pytest module (the subset) and
run_suite.py (the table, `--all` for every program). See docs/CONFORMANCE.md."""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
PIOSCOPE = ROOT / "build" / "bin" / "pioscope"
BUILD = ROOT / "build" / "conformance"
ROMIO = BUILD / "romio" / "bin"
PNETCDF = BUILD / "pnetcdf" / "bin"
BENCH = ROOT / "build" / "bin"
TIMEOUT_S = 300

os.environ.setdefault("HYDRA_LAUNCHER", "fork")

INT = 4
DOUBLE = 8


@dataclass(frozen=True)
class Program:
    """One program of the suite and what it must do."""
    name: str
    executable: Path
    ranks: int
    # The arguments (numbers or paths allowed), given the directory the program works in.
    args: Callable[[Path], list]
    # MPI-IO bytes counted from the program's source and arguments: "write" and "read" are the
    # totals of each direction, other keys one function's bytes.
    expected: dict[str, int]
    in_subset: bool = False
    # Turns stdout into what must match between the untraced and the traced run.
    normalise: Callable[[str], str] = lambda text: text
    # The target of tests/conformance/Makefile that builds it (None: the top-level `make all`).
    build: str | None = None


def romio(name, ranks, written, read, in_subset=False, file_arg="-fname"):
    """A ROMIO test: it takes its file as `-fname FILE` (some as a bare FILE) and rank 0
    prints " No Errors"."""
    return Program(name, ROMIO / name, ranks,
                   lambda work: [*([file_arg] if file_arg else []), str(work / "testfile")],
                   {"write": written, "read": read}, in_subset, build="romio")


def drop_json_timings(text: str) -> str:
    """A bench program's `--json` object without its measured times and rates."""
    timed = re.compile(r"time|throughput|per_s|wall")

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if not timed.search(k)}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(json.loads(text)), sort_keys=True)


def pnetcdf(name, data_bytes):
    """A PnetCDF example (examples/C/), quiet (-q: no timings), 4 ranks. Its variables' data
    goes through MPI_File_write_at_all; the netCDF header (a size PnetCDF decides) through
    rank 0's MPI_File_write_at."""
    return Program(f"pnetcdf {name}", PNETCDF / name, 4,
                   lambda work: ["-q", str(work / "testfile.nc")],
                   {"MPI_File_write_at_all": data_bytes, "read": 0}, build="pnetcdf")


def bench(name, ranks, benchmark, options, written, read, in_subset=False):
    """One of pioscope's own benchmarks (bench/), printing `--json`, its data in the work
    directory (md-test's files under --dir, the others' file at --path)."""
    where = "--dir" if benchmark == "md-test" else "--path"
    return Program(name, BENCH / f"pioscope-{benchmark}", ranks,
                   lambda work: [*options, "--json", where, str(work / "bench.d")],
                   {"write": written, "read": read}, in_subset, drop_json_timings)


# MPI-IO bytes, from each test's source (MPICH 4.0.2, src/mpi/romio/test/):
SIMPLE = 4 * 65536                   # each rank writes then reads SIZE bytes (SIZE/4 ints)
DARRAY_32 = 32 * 32 * 32 * INT       # coll_test, split_coll: a 32^3 int array over the ranks
NONCONTIG = 2 * (2500 + 2500 + 5000) * INT  # 2 ranks, 3 cases: a vector of SIZE/2 ints twice,
                                            # then SIZE contiguous ints; each written, read back
NONCONTIG_COLL2 = 5 * 4 * (2 * 5000 // 4 + 5000) * INT
MIO_BLOCKS, MIO_BLOCK, MIO_ITER = 16, 65536, 2
MD_FILES = 100
HPIO_REGIONS, HPIO_REGION, HPIO_ITER = 4096, 32, 2
H5_ROWS = 64
IOR_SEGMENTS, IOR_BLOCK, IOR_TRANSFER = 4, 1 << 20, 1 << 18
# PnetCDF's examples: NUM_VARS=10 int variables, each rank's block len^3 (len 10 by default)
PNC_VARS = 10 * 10 ** 3 * 4 * INT
H5_DATA = 4 * H5_ROWS * 1024 * DOUBLE

PROGRAMS = [
    romio("simple", 4, SIMPLE, SIMPLE, in_subset=True),
    romio("psimple", 4, SIMPLE, SIMPLE),
    romio("async", 4, SIMPLE, SIMPLE, in_subset=True),
    # 32 nonblocking writes then reads of nints/32 ints each, per rank
    romio("async-multiple", 4, SIMPLE, SIMPLE),
    romio("status", 1, 65536, 0),    # one rank writes SIZE bytes
    # each rank writes 1 int at its rank's offset in 3 data representations (native,
    # external32, internal) to test.datarep in its working directory; the check reads with stdio
    Program("external32", ROMIO / "external32", 4, lambda work: [],
            {"write": 3 * 4 * INT, "read": 0}, build="romio"),
    # each rank writes and reads COUNT=1024 ints through the shared file pointer
    romio("shared_fp", 4, 4 * 1024 * INT, 4 * 1024 * INT, in_subset=True),
    romio("ordered_fp", 4, 4 * 200 * INT, 4 * 200 * INT),  # COUNT=200 ints, ordered
    # write_all of the array; rank 0 reads it whole independently, then read_all of it
    romio("coll_test", 4, DARRAY_32, 2 * DARRAY_32, in_subset=True),
    romio("split_coll", 4, DARRAY_32, DARRAY_32),
    romio("excl", 4, 0, 0),          # opens with MPI_MODE_EXCL only
    romio("file_info", 4, 0, 0),     # hints only
    # twice (atomic mode set by call, then with a hint): rank 0 fills the file with BUFSIZE=10000
    # ints, then writes them again while the 3 other ranks read 10000 ints each
    romio("atomicity", 4, 2 * 2 * 10000 * INT, 2 * 3 * 10000 * INT),
    romio("noncontig", 2, NONCONTIG, NONCONTIG),
    romio("noncontig_coll", 2, NONCONTIG, NONCONTIG),
    romio("i_noncontig", 2, NONCONTIG, NONCONTIG),
    # 5 runs (without cb_config_list, then 4 orders of it), each the 3 cases of noncontig_coll
    # on 4 ranks with SIZE=5000: a vector of SIZE/4 ints twice, then SIZE ints, per rank
    romio("noncontig_coll2", 4, NONCONTIG_COLL2, NONCONTIG_COLL2),
    # 3 filetypes (indexed, hindexed, struct), each: rank 0 fills MAXLEN=9 ints, the 2 ranks
    # write_all 3 + 6 ints through blocks of length 0 or 1, rank 0 reads the 9 ints back
    romio("types_with_zeros", 2, 3 * 2 * 9 * INT, 3 * 9 * INT, file_arg=None),
    # rank 0 writes the NSIDE^2=25 doubles; each of the 4 ranks reads its darray block
    romio("darray_read", 4, 25 * DOUBLE, 25 * DOUBLE, file_arg=None),
    # rank 0 zero-fills 2 copies of the 10 x 20 char array; each rank writes_all its 2 x 2
    # blocks of 3 chars in each copy; rank 0 reads both copies back
    romio("hindexed", 4, 2 * 200 + 4 * 2 * 12, 2 * 200, file_arg=None),
    # NUM_OBJS=4 objects of OBJ_SIZE=1 MiB per rank, written then read collectively
    Program("aggregation1", ROMIO / "aggregation1", 4,
            lambda work: ["-h", "-f", str(work / "testfile")],
            {"write": 4 * 4 * 1048576, "read": 4 * 4 * 1048576}, build="romio"),
    romio("aggregation2", 4, 4 * 512 * INT, 4 * 512 * INT, file_arg=None),  # BUFSIZE=512 ints
    # the dataset's raw data (4 ranks x 64 rows x 1024 doubles) goes through the collective
    # calls; HDF5's own metadata (superblock, object headers) through independent ones
    Program("h5_collective", BUILD / "bin" / "h5_collective", 4,
            lambda work: [str(work / "values.h5"), str(H5_ROWS)],
            {"MPI_File_write_at_all": H5_DATA, "MPI_File_read_at_all": H5_DATA},
            in_subset=True, build="hdf5"),
    # IOR's -a MPIIO -c -e pattern through MPI_File_write_at_all_c / read_at_all_c: every
    # rank writes then reads IOR_SEGMENTS blocks of IOR_BLOCK bytes
    Program("ior_large_count", BUILD / "bin" / "ior_large_count", 4,
            lambda work: [str(work / "ior.dat"), IOR_SEGMENTS, IOR_BLOCK, IOR_TRANSFER],
            {"MPI_File_write_at_all_c": 4 * IOR_SEGMENTS * IOR_BLOCK,
             "MPI_File_read_at_all_c": 4 * IOR_SEGMENTS * IOR_BLOCK,
             "write": 4 * IOR_SEGMENTS * IOR_BLOCK, "read": 4 * IOR_SEGMENTS * IOR_BLOCK},
            in_subset=True, build="mpi4"),
    pnetcdf("collective_write", PNC_VARS),             # ncmpi_put_vara_int_all per variable
    pnetcdf("nonblocking_write", 2 * PNC_VARS),        # the variables twice: iput, then bput
    pnetcdf("put_vara", 4 * 10 * 4 * INT),             # one NY=10 x NX=4 int block per rank
    # each rank writes and reads back its blocks, every iteration
    bench("mpi-io-test -c", 4, "mpi-io-test",
          ["--collective", "--blocks", MIO_BLOCKS, "--block-size", MIO_BLOCK,
           "--iterations", MIO_ITER],
          4 * MIO_BLOCKS * MIO_BLOCK * MIO_ITER, 4 * MIO_BLOCKS * MIO_BLOCK * MIO_ITER,
          in_subset=True),
    bench("md-test", 4, "md-test", ["--files", MD_FILES], 0, 0, in_subset=True),
    # each rank writes its regions every iteration (the default --op write)
    bench("hpio independent", 4, "hpio",
          ["--mode", "independent", "--region-size", HPIO_REGION,
           "--region-count", HPIO_REGIONS, "--iterations", HPIO_ITER],
          4 * HPIO_REGIONS * HPIO_REGION * HPIO_ITER, 0, in_subset=True),
]
SUBSET = [p for p in PROGRAMS if p.in_subset]
BY_NAME = {p.name: p for p in PROGRAMS}


def build(programs: list[Program]) -> None:
    """Builds `programs` into build/conformance (make: only what is out of date)."""
    targets = sorted({p.build for p in programs if p.build})
    if targets:
        subprocess.run(["make", "-s", "-C", str(Path(__file__).parent), f"OUT={BUILD}",
                        *targets], check=True)


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str


def run(cmd: list, cwd: Path) -> Run:
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    return Run(result.returncode, result.stdout, result.stderr)


def pioscope(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(PIOSCOPE), *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT_S)


def pioscope_json(*args) -> dict:
    """The JSON a pioscope command prints; an error naming the command when it fails."""
    result = pioscope(*args)
    if result.returncode != 0:
        raise RuntimeError(f"pioscope {' '.join(map(str, args))} exited {result.returncode}: "
                           f"{result.stderr.strip()}")
    return json.loads(result.stdout)


@dataclass
class Outcome:
    """Everything the suite measures of one program; the tests and the table read it."""
    program: Program
    untraced: Run
    traced: Run
    # The directories the two runs worked in (their paths may show in the output).
    dirs: tuple[Path, Path]
    trace: Path
    # MPI-IO calls and bytes by function, from `pioscope stats --by func --json`.
    mpiio: dict[str, dict] = field(default_factory=dict)
    replay: subprocess.CompletedProcess | None = None
    report: dict = field(default_factory=dict)

    @property
    def program_output(self) -> str:
        """The traced run's stdout without pioscope's own summary, which follows it."""
        lines = self.traced.stdout.splitlines(keepends=True)
        for i, line in enumerate(lines):
            if re.match(r"\d+ ranks?, \d+ process(es)?, \d+ events", line):
                return "".join(lines[:i])
        return self.traced.stdout

    def outputs(self) -> tuple[str, str]:
        """The untraced and traced output, normalised: work directories as WORK, then the
        program's own normaliser."""
        plain, traced = (text.replace(str(d), "WORK") for text, d in
                         zip((self.untraced.stdout, self.program_output), self.dirs))
        return self.program.normalise(plain), self.program.normalise(traced)

    @property
    def same_output(self) -> bool:
        plain, traced = self.outputs()
        return plain == traced

    def calls(self) -> int:
        return sum(row["operations"] for row in self.mpiio.values())

    def bytes(self, key: str) -> int:
        """The MPI-IO bytes of a direction ("write", "read") or of one function."""
        if key in ("write", "read"):
            return sum(row["bytes"] for func, row in self.mpiio.items() if key in func)
        return self.mpiio.get(key, {}).get("bytes", 0)

    def unexpected_bytes(self) -> dict[str, tuple[int, int]]:
        """{key: (traced, expected)} for each expected byte count the trace does not have."""
        return {key: (self.bytes(key), want) for key, want in self.program.expected.items()
                if self.bytes(key) != want}

    @property
    def bytes_as_expected(self) -> bool:
        return self.calls() > 0 and not self.unexpected_bytes()

    @property
    def top_finding(self) -> str:
        findings = self.report.get("findings", [])
        return f"{findings[0]['id']} ({findings[0]['severity']})" if findings else "-"


def measure(program: Program, work: Path) -> Outcome:
    """Runs `program` untraced then traced in fresh directories under `work`, and reads its
    trace with stats, simulate --trace and report."""
    plain, traced = work / "untraced", work / "traced"
    for d in (plain, traced):
        d.mkdir(parents=True)
    untraced = run(["mpiexec", "-n", program.ranks, program.executable,
                    *program.args(plain)], plain)
    trace = work / "trace"
    traced_run = run([PIOSCOPE, "run", "-n", program.ranks, "-o", trace, "--",
                      program.executable, *program.args(traced)], traced)
    outcome = Outcome(program, untraced, traced_run, (plain, traced), trace)
    if not (trace / "meta.json").exists():
        return outcome
    stats = pioscope_json("stats", trace, "--by", "func", "--json")
    outcome.mpiio = {row["group"]: row for row in stats["rows"] if row["layer"] == "mpiio"}
    outcome.replay = pioscope("simulate", "--trace", trace, "-o", work / "replayed")
    outcome.report = pioscope_json("report", trace, "--json")
    return outcome

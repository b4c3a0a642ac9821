# spack/package.py: the Spack recipe of pioscope (docs/INSTALL.md, "Spack"). It builds with
# `make all` and installs with `make install PREFIX=<prefix>`, with one MPI runtime per MPI
# library chosen in the `mpi` variant, each built with that library's own compiler wrapper.
# Checked by tests/test_spack_recipe.py against stand-ins for Spack's directives (Spack itself
# is not installable on the machines this project is built on).
from spack.package import *


class Pioscope(MakefilePackage):
    """Traces, explains and predicts the I/O of MPI programs: a runtime preloaded with
    LD_PRELOAD records MPI-IO, MPI, POSIX and STDIO calls nested by cause; a command-line tool
    merges them into a Parquet trace store, reports findings, exports and simulates."""

    license("MIT OR Apache-2.0")

    # No published source archive yet: build a clone with
    # `spack dev-build -d /path/to/pioscope pioscope@=0.1.0` (docs/INSTALL.md).
    version("0.1.0")

    variant(
        "mpi",
        default="mpich",
        values=("mpich", "openmpi"),
        multi=True,
        description="MPI libraries to build a runtime for (lib/libpioscope-<mpi>.so each; "
        "the first is the default lib/libpioscope.so)",
    )

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("rust@1.85:", type="build")
    # `pioscope export --to otf2` links libotf2.
    depends_on("otf2")
    depends_on("mpich", when="mpi=mpich")
    depends_on("openmpi", when="mpi=openmpi")

    # The order the runtime's Makefile knows the flavours in; the first chosen is the default.
    MPI_FLAVOURS = ("mpich", "openmpi")

    def chosen_mpis(self):
        """The MPI libraries of the `mpi` variant, in MPI_FLAVOURS order."""
        chosen = self.spec.variants["mpi"].value
        return [mpi for mpi in self.MPI_FLAVOURS if mpi in chosen]

    def make_args(self):
        """The compiler wrapper of every flavour: a chosen MPI's own, and empty for the others,
        so that a wrapper found on PATH (Debian's mpicc.openmpi) is not used instead."""
        chosen = self.chosen_mpis()
        args = [f"MPICC={self.spec[chosen[0]].mpicc}"]
        for mpi in self.MPI_FLAVOURS:
            args.append(f"MPICC_{mpi}={self.spec[mpi].mpicc if mpi in chosen else ''}")
        return args

    def setup_build_environment(self, env):
        # Cargo's downloads and registry index stay in the build stage.
        env.set("CARGO_HOME", join_path(self.stage.path, "cargo-home"))

    def build(self, spec, prefix):
        make("all", *self.make_args())

    def install(self, spec, prefix):
        make("install", f"PREFIX={prefix}", *self.make_args())

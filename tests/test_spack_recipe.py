"""spack/package.py, read against stand-ins for Spack's directives and MakefilePackage (Spack is
not on PyPI nor in Debian, so it cannot be installed here): the recipe loads, declares the MPI
variant and its dependencies, and hands make the compiler wrapper of each MPI chosen."""
import importlib.util
import sys
import types

import pytest

from conftest import ROOT

RECIPE = ROOT / "spack" / "package.py"


class Directives:
    """What the recipe's class body declared, by directive."""

    def __init__(self):
        self.calls = {}

    def recorder(self, name):
        def record(*args, **kwargs):
            self.calls.setdefault(name, []).append((args, kwargs))
        return record


class FakeSpec:
    """spec["mpich"].mpicc and spec.variants["mpi"].value, as Spack's Spec has them."""

    def __init__(self, mpis):
        self.variants = {"mpi": types.SimpleNamespace(value=tuple(mpis))}

    def __getitem__(self, name):
        return types.SimpleNamespace(mpicc=f"/spack/{name}/bin/mpicc")


@pytest.fixture
def recipe(monkeypatch):
    """(recipe module, declared directives, make calls) with spack.package stood in for."""
    declared = Directives()
    made = []
    package = types.ModuleType("spack.package")

    class MakefilePackage:
        def __init__(self, spec):
            self.spec = spec

    package.MakefilePackage = MakefilePackage
    for directive in ("version", "variant", "depends_on", "license"):
        setattr(package, directive, declared.recorder(directive))
    package.make = lambda *args: made.append(args)
    package.join_path = lambda *parts: "/".join(parts)
    package.__all__ = ["MakefilePackage", "version", "variant", "depends_on", "license", "make",
                       "join_path"]
    spack = types.ModuleType("spack")
    spack.package = package
    monkeypatch.setitem(sys.modules, "spack", spack)
    monkeypatch.setitem(sys.modules, "spack.package", package)
    spec = importlib.util.spec_from_file_location("pioscope_recipe", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, declared.calls, made


def test_the_recipe_declares_the_mpi_variant_and_dependencies(recipe):
    _, calls, _ = recipe
    (args, kwargs), = calls["variant"]
    assert args == ("mpi",)
    assert kwargs["values"] == ("mpich", "openmpi") and kwargs["multi"]
    depends = {(args[0], kwargs.get("when"), kwargs.get("type")) for args, kwargs in calls["depends_on"]}
    assert depends == {("c", None, "build"), ("gmake", None, "build"),
                       ("rust@1.85:", None, "build"), ("otf2", None, None),
                       ("mpich", "mpi=mpich", None), ("openmpi", "mpi=openmpi", None)}
    # The version the workspace's Cargo.toml carries.
    assert calls["version"] == [(("0.1.0",), {})]
    assert 'version = "0.1.0"' in (ROOT / "Cargo.toml").read_text()


@pytest.mark.parametrize("mpis, expected", [
    (("openmpi",), ["MPICC=/spack/openmpi/bin/mpicc", "MPICC_mpich=",
                    "MPICC_openmpi=/spack/openmpi/bin/mpicc"]),
    (("openmpi", "mpich"), ["MPICC=/spack/mpich/bin/mpicc", "MPICC_mpich=/spack/mpich/bin/mpicc",
                            "MPICC_openmpi=/spack/openmpi/bin/mpicc"]),
])
def test_make_gets_the_wrapper_of_each_chosen_mpi(recipe, mpis, expected):
    module, _, made = recipe
    package = module.Pioscope(FakeSpec(mpis))
    package.build(package.spec, "/opt/p")
    package.install(package.spec, "/opt/p")
    assert made == [("all", *expected), ("install", "PREFIX=/opt/p", *expected)]

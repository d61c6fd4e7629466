"""Loads the Spack recipe with a stand-in for Spack's package API and runs
its stand-alone tests (test_* methods) against an installed prefix, then
checks that check() runs go with the build's Go environment:
    python3 tests/install/recipe_smoke.py <prefix> [version]
Spack itself cannot run in CI; this checks the recipe's Python, its
directives' arguments and what its tests run (the real binaries, the
bundled workload), not Spack's concretization, fetching or compiler
wrapper (spack/README.md: run it on a real Spack by hand)."""

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import types

RECIPE = os.path.join(os.path.dirname(__file__), "..", "..", "spack", "spack_repo",
                      "occa_tools", "packages", "occa_tools", "package.py")
directives = []


class SkipTest(Exception):
    pass


@contextlib.contextmanager
def chdir(d):
    old = os.getcwd()
    os.chdir(d)
    try:
        yield
    finally:
        os.chdir(old)


class Prefix(str):
    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class Executable:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, output=None, error=None, extra_env=None, env=None):
        e = dict(env if env is not None else os.environ)
        e.update(extra_env or {})
        p = subprocess.run([self.path, *args], env=e, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{self.path} {' '.join(args)}: exit status {p.returncode}\n{p.stderr}")
        return p.stdout + p.stderr if output in (str, str.split) else None


def which(*names, required=False, path=None):
    for n in names:
        f = n if os.path.isabs(n) and os.access(n, os.X_OK) else shutil.which(n)
        if f:
            return Executable(f)
    if required:
        raise RuntimeError(f"which: none of {names}")
    return None


def directive(name):
    def record(*args, **kwargs):
        directives.append((name, args, kwargs))
    return record


def stub_modules():
    pkg = types.ModuleType("spack.package")
    for d in ("version", "depends_on", "variant", "license", "maintainers", "conflicts"):
        setattr(pkg, d, directive(d))
    pkg.when = lambda *a, **k: contextlib.nullcontext()
    pkg.join_path = os.path.join
    pkg.which = which
    pkg.Executable = Executable
    pkg.SkipTest = SkipTest
    pkg.working_dir = chdir
    pkg.find_libraries = lambda name, root, shared, recursive: [
        os.path.join(root, f) for f in os.listdir(root) if f.startswith(name + ".so")]
    pkg.find_headers = lambda name, root, recursive: [
        os.path.join(root, f) for f in os.listdir(root) if f == name + ".h"]
    pkg.__all__ = [n for n in vars(pkg) if not n.startswith("_")]
    spack = types.ModuleType("spack")
    spack.package = pkg
    go = types.ModuleType("spack_repo.builtin.build_systems.go")
    go.GoPackage = type("GoPackage", (), {})
    for name, m in {"spack": spack, "spack.package": pkg, "spack_repo": types.ModuleType("x"),
                    "spack_repo.builtin": types.ModuleType("x"),
                    "spack_repo.builtin.build_systems": types.ModuleType("x"),
                    "spack_repo.builtin.build_systems.go": go}.items():
        sys.modules[name] = m


class Spec:
    def __init__(self, version):
        self.version = version
        self.deps = {"go": types.SimpleNamespace(prefix=Prefix("/nonexistent/go"))}

    def satisfies(self, s):
        return s == "@develop" and self.version == "develop"

    def __getitem__(self, name):
        return self.deps[name]


GO_VARS = ("CGO_ENABLED", "GOTOOLCHAIN", "GOFLAGS", "GOPROXY", "GOPATH")


def check_go_env(pkg):
    """check() (spack install --test=root) runs the build's go with the
    build's Go environment, for a release tarball (vendor/) and develop."""
    with tempfile.TemporaryDirectory() as d:
        go, log = os.path.join(d, "go", "bin", "go"), os.path.join(d, "go.log")
        os.makedirs(os.path.dirname(go))
        with open(go, "w") as f:
            # A stand-in go that writes its environment and arguments.
            f.write(f"#!/bin/sh\nexec >'{log}'\n"
                    + "".join(f'echo "{v}=${{{v}-unset}}"\n' for v in GO_VARS) + 'echo "args=$*"\n')
        os.chmod(go, 0o755)
        pkg.spec.deps["go"].prefix = Prefix(os.path.join(d, "go"))
        pkg.stage = types.SimpleNamespace(path=d, source_path=os.path.join(d, "src"))
        os.makedirs(pkg.stage.source_path)
        for kind in ("develop", "release"):
            if kind == "release":
                os.makedirs(os.path.join(pkg.stage.source_path, "vendor"))
            env = pkg._go_env()
            want = ({"GOFLAGS": "-mod=vendor", "GOPROXY": "off"} if kind == "release" else
                    {"GOFLAGS": "-modcacherw", "GOPATH": os.path.join(d, "go")})
            assert all(env.get(k) == v for k, v in want.items()), f"{kind}: Go environment {env}"
            args = pkg._make_args()
            assert f"GO={go}" in args and all(f"{k}={v}" in args for k, v in env.items()), \
                f"{kind}: make arguments {args} lack the Go environment {env}"
            if os.path.exists(log):
                os.remove(log)
            pkg.check()
            with open(log) as f:
                got = dict(line.rstrip("\n").split("=", 1) for line in f)
            for v in GO_VARS:
                assert got[v] == env.get(v, os.environ.get(v, "unset")), \
                    f"{kind}: check() ran go with {v}={got[v]}, the build with {env}"
            assert got["args"].startswith("test "), got["args"]
            print(f"PASSED check_go_env ({kind}): go {got['args']} with {env}")


def main():
    prefix, version = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "develop")
    stub_modules()
    spec = importlib.util.spec_from_file_location("occa_tools_recipe", RECIPE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, args, kwargs in directives:
        print(f"directive {name}{args}{kwargs if kwargs else ''}")
    pkg = mod.OccaTools()
    pkg.prefix = Prefix(os.path.abspath(prefix))
    pkg.spec = Spec(version)
    for f in mod.OccaTools.sanity_check_is_file:
        assert os.path.isfile(os.path.join(prefix, f)), f"sanity_check_is_file: {f} missing"
    print("libs:", pkg.libs, "headers:", pkg.headers)
    assert pkg.libs and pkg.headers
    failed = 0
    for name in sorted(n for n in dir(pkg) if n.startswith("test_")):
        with tempfile.TemporaryDirectory() as d, chdir(d):
            try:
                getattr(pkg, name)()
                print(f"PASSED {name}")
            except SkipTest as e:
                print(f"SKIPPED {name}: {e}")
            except Exception as e:  # noqa: BLE001 - report every test
                print(f"FAILED {name}: {e!r}")
                failed += 1
    try:
        check_go_env(pkg)
    except Exception as e:  # noqa: BLE001 - report it like a test
        print(f"FAILED check_go_env: {e!r}")
        failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

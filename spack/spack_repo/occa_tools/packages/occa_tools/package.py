# Spack recipe of occa-tools (spack/README.md says how to use it).
#
# The project builds with its Makefile: a C runtime library
# (libocca_tools.so.1), a Go c-shared core loaded by it
# (libocca_tools_core.so), the occa-tools command, and `make install
# PREFIX=...` lays out bin/, lib/ (with pkgconfig/ and cmake/OccaTools/),
# include/ and share/occa-tools/. So, like builtin go_sh, this GoPackage
# overrides build and install, here to drive the Makefile.

import glob
import os

from spack_repo.builtin.build_systems.go import GoPackage

from spack.package import *


class OccaTools(GoPackage):
    """Profiler for OCCA applications: a low-overhead tracing runtime
    (C callback ABI, Go core writing compact binary traces) and the
    occa-tools command that reads, summarizes and converts the traces."""

    homepage = "https://github.com/libocca/occa-tools"
    git = "https://github.com/libocca/occa-tools.git"
    # Release tarballs are `make dist` outputs: Go modules vendored and a
    # VERSION file, so they build with no network.
    url = "https://github.com/libocca/occa-tools/releases/download/v0.1.0/occa-tools-0.1.0.tar.gz"

    # No license() yet: the repository has no LICENSE file to name one from.

    version("develop", branch="main")
    # Releases, newest first: one line per vX.Y.Z tag, added right after the
    # tag is cut (CONTRIBUTING.md, "Cutting a release"): `make dist
    # spack-version` on the tag prints the line with the tarball's sha256.
    # (A recipe cannot ship inside the tarball it checksums, so each line
    # lands one commit after its tag; tests/install checks that every tag
    # has one.) No release is tagged yet; the first will read:
    #   version("0.1.0", sha256="<sha256 of occa-tools-0.1.0.tar.gz>")

    # go.mod says `go 1.24.0`; GoPackage sets GOTOOLCHAIN=local, so the
    # toolchain must be at least that.
    depends_on("go@1.24:", type="build")
    # cgo: the runtime core is a -buildmode=c-shared library; the runtime
    # and the workload are C.
    depends_on("c", type="build")
    # The OCCA adapter (lib/libocca_tools_occa.so) is C++. Spack 1.x's
    # compiler wrapper refuses a language the recipe does not declare
    # ("SPACK_CXX_* variables not set"), and sets CXX only for a declared one.
    depends_on("cxx", type="build")
    depends_on("gmake", type="build")

    # The OCCA adapter (lib/libocca_tools_occa.so) is always built: it needs
    # no OCCA at build time. +occa adds OCCA to the environment `spack load`
    # makes, and a stand-alone test that captures a real OCCA program.
    variant(
        "occa",
        default=False,
        description="Depend on OCCA; test that occa-prof captures an OCCA program",
    )
    depends_on("occa", when="+occa")

    sanity_check_is_file = [
        join_path("bin", "occa-tools"),
        join_path("bin", "occa-tools-workload"),
        join_path("lib", "libocca_tools.so.1"),
        join_path("lib", "libocca_tools_core.so"),
        join_path("lib", "libocca_tools_occa.so"),
        join_path("lib", "libocca_tools_preload.so"),
        join_path("bin", "occa-prof"),
        join_path("include", "occa_tools.h"),
        join_path("lib", "pkgconfig", "occa-tools.pc"),
        join_path("lib", "cmake", "OccaTools", "OccaToolsConfig.cmake"),
    ]

    @property
    def libs(self):
        return find_libraries("libocca_tools", root=self.prefix.lib, shared=True, recursive=False)

    @property
    def headers(self):
        return find_headers("occa_tools", root=self.prefix.include, recursive=False)

    def _go_env(self):
        """The Go environment of both the build and check(): the same module
        source, module cache and toolchain rule."""
        env = {
            # The runtime core is -buildmode=c-shared: cgo is required (the
            # Makefile builds the commands with CGO_ENABLED=0 itself).
            "CGO_ENABLED": "1",
            "GOTOOLCHAIN": "local",
        }
        if os.path.isdir(join_path(self.stage.source_path, "vendor")):
            # A release tarball: build from vendor/, never from the network.
            env.update(GOFLAGS="-mod=vendor", GOPROXY="off")
        else:
            # develop: modules are downloaded into the stage's GOPATH; keep
            # them deletable.
            env.update(GOFLAGS="-modcacherw", GOPATH=join_path(self.stage.path, "go"))
        return env

    def _make_args(self):
        # Command-line variables, which make also exports to go.
        args = [f"PREFIX={self.prefix}", f"GO={self.spec['go'].prefix.bin.go}"]
        return args + [f"{k}={v}" for k, v in self._go_env().items()]

    def build(self, spec, prefix):
        # Only what install copies: not the test programs (`make
        # test-programs`: the stand-in libocca, the OpenMP programs, which
        # want clang), which Spack's compilers would not build.
        with working_dir(self.stage.source_path):
            make("all", "workload", *self._make_args())

    def install(self, spec, prefix):
        with working_dir(self.stage.source_path):
            make("install", *self._make_args(), parallel=False)

    def check(self):
        """`spack install --test=root`: the Go tests, with the build's Go and
        Go environment (no race detector: it needs a cgo toolchain Spack may
        not give; `make test` in CI does)."""
        go = Executable(self.spec["go"].prefix.bin.go)
        with working_dir(self.stage.source_path):
            go("test", "-count=1", "./formats/...", "./filters/...", "./cmd/...",
               extra_env=self._go_env())

    # ---- stand-alone tests: spack test run occa-tools ----

    def _tool(self):
        return which(join_path(self.prefix.bin, "occa-tools"), required=True)

    def _record(self, config="default.toml"):
        """Runs the bundled workload traced with an installed config in the
        test's working directory; returns the trace's path."""
        for old in glob.glob(join_path("occa-tools-traces", "*.occatrace")):
            os.remove(old)
        workload = which(join_path(self.prefix.bin, "occa-tools-workload"), required=True)
        cfg = join_path(self.prefix.share, "occa-tools", "configs", config)
        out = workload(
            "-t", "2", "-s", "50", output=str.split, error=str.split,
            extra_env={"OCCA_TOOLS_CONFIG": cfg},
        )
        assert "workload: threads=2 steps=50" in out, out
        traces = glob.glob(join_path("occa-tools-traces", "*.occatrace"))
        assert len(traces) == 1, f"expected one trace, found {traces}"
        return traces[0]

    def _has_command(self, name):
        out = self._tool()("help", output=str.split, error=str.split)
        return any(line.split()[:1] == [name] for line in out.splitlines())

    def test_version(self):
        """occa-tools version prints the tool, ABI and trace format versions"""
        out = self._tool()("version", output=str.split, error=str.split)
        assert "ABI version" in out and "trace format version" in out, out
        if not self.spec.satisfies("@develop"):
            assert f"occa-tools version v{self.spec.version}" in out, out

    def test_record_info(self):
        """record the bundled workload and read its trace with info and dump"""
        trace = self._record()
        out = self._tool()("info", trace, output=str.split, error=str.split)
        assert "complete" in out, out
        dump = self._tool()("dump", "-n", "20", trace, output=str.split, error=str.split)
        assert dump.strip(), "dump printed nothing"

    def test_convert(self):
        """record the bundled workload and convert its trace"""
        if not self._has_command("convert"):
            raise SkipTest("this occa-tools has no convert command")
        trace = self._record()
        for fmt in ("csv", "parquet"):
            out = f"converted-{fmt}"
            self._tool()("convert", "-to", fmt, "-o", out, "-progress", "off", trace,
                         output=str.split, error=str.split)
            # The layout of releases up to 0.x: events-rankNNNNN.* and
            # _processes.csv; since: events/, processes/ (SCHEMA.md).
            procs = glob.glob(join_path(out, "processes", "part-*")) + glob.glob(join_path(out, "_processes.csv"))
            tables = glob.glob(join_path(out, "events", "**", f"*.{fmt}"), recursive=True)
            tables += glob.glob(join_path(out, f"events-rank*.{fmt}"))
            assert procs and tables, os.listdir(out)
            assert all(os.path.getsize(t) > 0 for t in tables), tables

    def test_summary(self):
        """record the bundled workload and summarize its trace"""
        if not self._has_command("summary"):
            raise SkipTest("this occa-tools has no summary command")
        trace = self._record()
        out = self._tool()("summary", trace, output=str.split, error=str.split)
        assert "axpy" in out, out

    def test_link(self):
        """build and run a C program against the installed library"""
        cc = which(os.environ.get("CC", "cc"), "cc", "gcc", "clang")
        if cc is None:
            raise SkipTest("no C compiler found to build a test program")
        with open("app.c", "w") as f:
            f.write(
                "#include <stdio.h>\n#include <occa_tools.h>\n"
                'int main(void){int t = occa_tools_marker("spack-test") == 0;'
                ' printf("traced=%d\\n", t); return 0;}\n'
            )
        cc("app.c", f"-I{self.prefix.include}", f"-L{self.prefix.lib}", "-locca_tools",
           f"-Wl,-rpath,{self.prefix.lib}", "-o", "app")
        out = Executable("./app")(output=str.split, error=str.split)
        assert "traced=0" in out, out

    def test_occa_capture(self):
        """occa-prof captures an unmodified OCCA program (with +occa)"""
        if not self.spec.satisfies("+occa"):
            raise SkipTest("built without +occa: no OCCA to test against")
        cxx = which(os.environ.get("CXX", "c++"), "c++", "g++", "clang++")
        if cxx is None:
            raise SkipTest("no C++ compiler found to build the OCCA program")
        occa = self.spec["occa"].prefix
        examples = join_path(self.prefix.share, "occa-tools", "examples", "occa")
        cxx("-std=c++17", join_path(examples, "vectors.cpp"), f"-I{occa.include}",
            f"-L{occa.lib}", "-locca", f"-Wl,-rpath,{occa.lib}", "-o", "vectors")
        prof = which(join_path(self.prefix.bin, "occa-prof"), required=True)
        out = prof(
            "--output", "occa-traces", "./vectors", "Serial", join_path(examples, "addVectors.okl"),
            "5", output=str.split, error=str.split,
            extra_env={"OCCA_DIR": occa, "OCCA_CACHE_DIR": join_path(os.getcwd(), "occa-cache")},
        )
        assert "ok" in out and "addVectors" in out, out
        summary = self._tool()("summary", "occa-traces", output=str.split, error=str.split)
        assert "addVectors" in summary and "_occa_jit_kernel" in summary, summary

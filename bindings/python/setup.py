"""Builds jigsawdb._jigsawdb through the project's CMake build.

The extension is the CMake target ``_jigsawdb`` (bindings/python/
CMakeLists.txt), linked with the engine's static library. By default this
configures a Release build of the repository in the setuptools build
directory; ``JIGSAW_CMAKE_BUILD_DIR`` (an absolute path) names an existing build tree
configured with ``-DJIGSAW_BUILD_PYTHON=ON`` to build the target there
instead (scripts/test.sh reuses its unit-test tree). ``JIGSAW_JOBS`` sets
the build's parallelism.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def engine_version():
    text = (ROOT / "include" / "jigsaw" / "version.h").read_text()
    parts = [re.search(rf"#define JIGSAW_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        jobs = os.environ.get("JIGSAW_JOBS", str(os.cpu_count() or 1))
        tree = os.environ.get("JIGSAW_CMAKE_BUILD_DIR")
        if tree:
            tree = Path(tree)
            if not tree.is_absolute():
                raise RuntimeError(f"JIGSAW_CMAKE_BUILD_DIR must be an absolute path, not {tree}")
        else:
            tree = Path(self.build_temp).resolve() / "cmake"
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                 "-DJIGSAW_BUILD_PYTHON=ON", "-DJIGSAW_BUILD_TESTS=OFF", "-DJIGSAW_BUILD_BENCH=OFF",
                 "-DJIGSAW_BUILD_TOOLS=OFF", "-DJIGSAW_INSTALL=OFF", f"-DPython3_EXECUTABLE={sys.executable}"],
                check=True)
        subprocess.run(["cmake", "--build", str(tree), "--target", "_jigsawdb", "-j", jobs], check=True)
        built = sorted((tree / "bindings" / "python" / "jigsawdb").glob("_jigsawdb*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _jigsawdb module in {tree}, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    version=engine_version(),
    ext_modules=[Extension("jigsawdb._jigsawdb", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)

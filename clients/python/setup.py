"""Ships the function library inside the package: functions/rl.lua of this
repository is copied in as src/limits_rl/rl.lua when an sdist or a wheel is
built from a checkout, so the package never holds a second, hand-edited copy
(src/limits_rl/rl.lua is gitignored). An sdist carries the copy it was made
with, and a wheel built from it (pip install of the sdist, far from any
checkout) ships that copy: the same bytes as the release's rl-<version>.lua.
The repository's LICENSE is copied in the same way, as LICENSE (also
gitignored), which setuptools puts in the sdist and the wheel's metadata."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_LIBRARY = os.path.join(HERE, "..", "..", "functions", "rl.lua")
PACKAGED = os.path.join(HERE, "src", "limits_rl", "rl.lua")
REPO_LICENSE = os.path.join(HERE, "..", "..", "LICENSE")

# Before setup() reads its license files: in a checkout the repository's
# LICENSE wins; an unpacked sdist carries its copy.
if os.path.isfile(REPO_LICENSE):
    shutil.copyfile(REPO_LICENSE, os.path.join(HERE, "LICENSE"))


def copy_library():
    # In a checkout the repository's file wins; in an unpacked sdist there
    # is none, and the packaged copy is the library.
    if os.path.isfile(REPO_LIBRARY):
        shutil.copyfile(REPO_LIBRARY, PACKAGED)
    elif not os.path.isfile(PACKAGED):
        raise SystemExit(
            f"limits-rl: neither {REPO_LIBRARY} (a checkout of rl) nor {PACKAGED} (an sdist) is here"
        )


class CopyLibraryBuild(build_py):
    def run(self):
        copy_library()
        super().run()


class CopyLibrarySdist(sdist):
    def run(self):
        copy_library()
        super().run()


setup(cmdclass={"build_py": CopyLibraryBuild, "sdist": CopyLibrarySdist})

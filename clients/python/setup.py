"""Ships the function library inside the package: functions/rl.lua of this
repository is copied into the built package as limits_rl/rl.lua, so the
package never holds a second, hand-edited copy (src/limits_rl/rl.lua is
gitignored; an sdist carries the copy it was built with)."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_LIBRARY = os.path.join(HERE, "..", "..", "functions", "rl.lua")
PACKAGED = os.path.join(HERE, "src", "limits_rl", "rl.lua")


class CopyLibrary(build_py):
    def run(self):
        if os.path.isfile(REPO_LIBRARY):
            shutil.copyfile(REPO_LIBRARY, PACKAGED)
        elif not os.path.isfile(PACKAGED):
            raise SystemExit(f"limits-rl: {REPO_LIBRARY} not found: build from the rl repository")
        super().run()


setup(cmdclass={"build_py": CopyLibrary})

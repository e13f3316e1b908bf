"""Put the evaluate module folders (metrics/, measurements/) into the wheel as textxai/_modules/."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithModules(build_py):
    def run(self):
        super().run()
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "textxai" / "_modules"
        for kind in ("metrics", "measurements"):
            if (root / kind).is_dir():
                shutil.copytree(root / kind, target / kind, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))


setup(cmdclass={"build_py": BuildWithModules})

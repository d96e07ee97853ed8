"""Package discovery for the folder mapping in pyproject.toml.

``core/``, ``app/`` and ``assets/`` sit at the top level of the repository and are installed as
``privclust.core``, ``privclust.app`` and ``privclust.assets`` (``[tool.setuptools.package-dir]``).
setuptools' ``find`` does not apply that mapping, so each mapped folder is searched here and its
subpackages are named under its package: a new subpackage needs no edit anywhere.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]

setup(
    packages=[
        name if not sub else f"{name}.{sub}"
        for name, folder in PACKAGE_DIR.items()
        for sub in ["", *find_packages(where=str(ROOT / folder))]
    ]
)

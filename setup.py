"""The course's distribution; its metadata and layout are in pyproject.toml.

Two things are here:

- setuptools leaves data files (``[tool.setuptools.data-files]``: the course's JupyterLab extension) out of an
  editable install, because its editable build asks the distribution for ``has_data``, which names none. Answering
  it makes ``pip install -e .`` put them where ``pip install .`` does.
- The course's content (the lessons, the labs' sources and nbgrader configuration, the sample submissions: the
  paths ``grader.content.CONTENT`` names) lives outside the packages, where the course's authors keep it. A build
  copies it into the grader package (``grader/_content``), so that an installed course can demo, release and grade
  without the checkout. An editable build does not: an editable install reads the checkout itself.
"""

import ast
import shutil
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def content_settings() -> dict:
    """CONTENT, NOT_CONTENT and PACKAGED of grader/content.py, read without importing the package."""
    tree = ast.parse((HERE / "grader" / "content.py").read_text(encoding="utf-8"))
    wanted = {"CONTENT", "NOT_CONTENT", "PACKAGED"}
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in wanted
    }


class CourseDistribution(Distribution):
    def has_data(self) -> bool:
        return self.has_data_files()


class BuildWithContent(build_py):
    """build_py, then the course's content copied into the built grader package."""

    def run(self):
        super().run()
        if not self.editable_mode:
            self.copy_content()

    def content_folder(self) -> Path:
        return Path(self.build_lib) / "grader" / content_settings()["PACKAGED"]

    def copy_content(self) -> None:
        settings = content_settings()
        target = self.content_folder()
        shutil.rmtree(target, ignore_errors=True)  # nothing left from an earlier build
        for relative in settings["CONTENT"]:
            source, copy = HERE / relative, target / relative
            if not source.exists():
                raise FileNotFoundError(f"{source} is missing: the course's content must be built into the package")
            copy.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                # Symbolic links (the mock exam's notebook in labs/source) are copied as the files they point to.
                shutil.copytree(source, copy, ignore=shutil.ignore_patterns(*settings["NOT_CONTENT"]))
            else:
                shutil.copy2(source, copy)

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        folder = self.content_folder()
        if not self.editable_mode and folder.is_dir():
            outputs += [str(path) for path in sorted(folder.rglob("*")) if path.is_file()]
        return outputs


setup(distclass=CourseDistribution, cmdclass={"build_py": BuildWithContent})

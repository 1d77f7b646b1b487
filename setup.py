"""The course's distribution; its metadata and layout are in pyproject.toml.

Only one thing is here: setuptools leaves data files (``[tool.setuptools.data-files]``: the course's
JupyterLab extension) out of an editable install, because its editable build asks the distribution for
``has_data``, which names none. Answering it makes ``pip install -e .`` put them where ``pip install .`` does.
"""

from setuptools import Distribution, setup


class CourseDistribution(Distribution):
    def has_data(self) -> bool:
        return self.has_data_files()


setup(distclass=CourseDistribution)

"""The course's nbgrader configuration, loaded the way nbgrader's own commands load it.

An nbgrader command reads ``jupyter_config`` and ``nbgrader_config`` (``.py`` and ``.json``) from each Jupyter
configuration folder (``jupyter --paths``: the user's, the environment's, the system's; the first has the last
word), then ``nbgrader_config.py`` from the folder it runs in, then from the course folder
(``CourseDirectory.root``) when a setting put the course elsewhere. Here the folder given to
``python -m grader --course`` plays the part of the folder nbgrader runs in. The loading itself is nbgrader's:
its base application, with its translation of outdated settings.

What the grading engine adds on top of this configuration is in ``grader.pipeline.Course.api``.
"""

from __future__ import annotations

import copy
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from nbgrader.apps.baseapp import NbGrader
from traitlets.config import Application, Config

CONFIG_NAME = "nbgrader_config"


class ConfigError(Exception):
    """A configuration file that cannot be loaded; the message names it and says what to do."""


@dataclass(frozen=True)
class CourseConfig:
    """A course's configuration: the settings, where the course is, and the files they came from."""

    config: Config
    folder: Path  # the folder the command was given (``--course``)
    root: Path  # the course: CourseDirectory.root when a setting moved it, else ``folder``
    files: tuple[Path, ...]  # the configuration files read, the one with the last word last

    def setting(self, section: str, name: str, default=None):
        """A configured value, or ``default`` when nothing sets it (the config is not changed by asking)."""
        if section in self.config and name in self.config[section]:
            return self.config[section][name]
        return default

    def copy(self) -> Config:
        """A copy of the settings to add to, leaving this one as loaded."""
        return copy.deepcopy(self.config)


class _Loader(NbGrader):
    """nbgrader's base application, used for its configuration loading alone: it is never started."""

    name = "python -m grader"
    load_cwd_config = False  # the course folder plays the part of the working folder


def _load(app: _Loader, name: str, folder: str) -> list[Path]:
    """Load ``name`` (.py and .json) from ``folder`` into the app's config; return the files read."""
    files = [p for p in (Path(folder, f"{name}.py"), Path(folder, f"{name}.json")) if p.is_file()]
    if not files:
        return []
    try:
        Application.load_config_file(app, name, path=folder)
    except Exception as exc:  # noqa: BLE001 - whatever the file's own code raised
        raise ConfigError(
            f"The nbgrader configuration file {' or '.join(map(str, files))} cannot be loaded "
            f"({type(exc).__name__}: {str(exc).strip() or 'no details'}). Fix it (nbgrader's own commands read it too), "
            "then run the command again."
        ) from None
    return files


def load(folder: Path) -> CourseConfig:
    """The configuration nbgrader would use for the course in ``folder``; a ConfigError if a file cannot be read."""
    folder = Path(folder).resolve()
    app = _Loader(raise_config_file_errors=True)
    app.log = logging.getLogger("grader.config")  # nbgrader's notes on outdated settings are its own to print
    app.log.setLevel(logging.ERROR)
    if str(folder) not in sys.path:
        sys.path.append(
            str(folder)
        )  # as nbgrader adds its working folder: a course's own plugin module beside its config
    files: list[Path] = []
    search = [str(p) for p in app.config_file_paths]  # highest priority first
    for name in ("jupyter_config", CONFIG_NAME):
        for where in reversed(search):
            files += _load(app, name, where)
    files += _load(app, CONFIG_NAME, str(folder))
    root = folder
    configured = app.config.CourseDirectory.get("root") if "CourseDirectory" in app.config else None
    if configured:
        root = Path(folder, os.path.expanduser(str(configured))).resolve()
        if root != folder:  # nbgrader then reads the configuration in the course folder too
            files += _load(app, CONFIG_NAME, str(root))
    config = copy.deepcopy(app.config)
    config.CourseDirectory.root = str(root)
    return CourseConfig(config, folder, root, tuple(files))

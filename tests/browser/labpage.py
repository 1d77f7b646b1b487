"""What a learner does in a JupyterLab notebook page, and what the page shows, for the browser tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "build" / "screenshots"
LABS = sorted(p.name for p in (REPO / "labs" / "source").glob("lab[0-9]*"))
RUN_TIMEOUT = 120  # seconds for Run All to reach the last cell
POLL = 100  # ms between two looks at the page while waiting on it (a look every frame costs the kernels CPU)
NOTEBOOK = "#jp-main-dock-panel .jp-NotebookPanel:not(.lm-mod-hidden)"
CYRILLIC = re.compile("[\u0400-\u04ff]")
TRACEBACK = re.compile(r"Traceback|^\S*(Error|Exception)\b|File \"", re.MULTILINE)


def shot(page, name: str) -> Path:
    """Save a full-page screenshot to build/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def open_notebook(page, server, path: str) -> None:
    """Open ``path`` (relative to the server's root) and wait until its kernel is idle."""
    page.goto(f"{server.url}/lab/tree/{path}?reset")  # reset: no tabs left open from before
    page.locator(f"{NOTEBOOK} .jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    wait_idle(page, timeout=60)


def menu(page, name: str, command: str) -> None:
    """One item of the menu bar's menu ``name``, picked by its command."""
    page.locator("#jp-menu-panel .lm-MenuBar-item", has_text=re.compile(f"^{name}$")).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


def run_all(page) -> None:
    """Run -> Run All Cells, from the menu bar, as a learner does."""
    menu(page, "Run", "runmenu:run-all")


# After a restart and clear: the kernel is idle and no code cell shows an execution count.
CLEARED_JS = """(sel) => [...document.querySelector(sel).querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .every(p => !/\\d/.test(p.textContent))"""


def restart_and_clear(page) -> None:
    """Kernel -> Restart Kernel and Clear Outputs of All Cells, confirmed; wait until the fresh kernel is idle."""
    menu(page, "Kernel", "kernelmenu:restart-and-clear")
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    page.wait_for_function(
        f"(sel) => ({IDLE_JS})(sel) && ({CLEARED_JS})(sel)", arg=NOTEBOOK, timeout=60_000, polling=POLL
    )


# The status bar names the current notebook's kernel and its state, e.g. "Python 3 (ipykernel) | Idle".
IDLE_JS = """(sel) => {
    const panel = document.querySelector(sel);
    const idle = [...document.querySelectorAll('.jp-StatusBar-Left .jp-StatusBar-TextItem')]
        .some(item => /\\| Idle$/.test(item.textContent.trim()));
    return Boolean(panel) && idle
        && ![...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(p => p.textContent.includes('*'));
}"""
# A cell whose input is collapsed shows no prompt; Run All stops at an error, so the cells after it tell.
ALL_RUN_JS = """(sel) => [...document.querySelector(sel).querySelectorAll('.jp-CodeCell')].every(cell => {
    const code = cell.querySelector('.jp-InputArea-editor .cm-content');
    const prompt = (cell.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.trim();
    return (code && !code.textContent.trim()) || !prompt || /\\[\\d+\\]/.test(prompt);
})"""


def wait_idle(page, timeout: float = RUN_TIMEOUT) -> None:
    """Wait until the notebook's kernel is idle and no cell is queued or running."""
    page.wait_for_function(IDLE_JS, arg=NOTEBOOK, timeout=timeout * 1000, polling=POLL)


def wait_all_run(page, timeout: float = RUN_TIMEOUT) -> None:
    """Wait until the kernel is idle and every code cell with code shows an execution count."""
    try:
        page.wait_for_function(
            f"(sel) => ({IDLE_JS})(sel) && ({ALL_RUN_JS})(sel)", arg=NOTEBOOK, timeout=timeout * 1000, polling=POLL
        )
    except Exception as error:  # a Playwright TimeoutError: say which cells did not run
        raise AssertionError(
            f"Run All did not reach every code cell within {timeout} s; prompts: {prompts(page)}"
        ) from error


def finish_run(page, screenshot: str) -> None:
    """After Run All: wait for every cell, record on ``page.ran`` why not (None when all ran), and take a screenshot.

    A fixture calls this, so that one notebook that does not finish fails the test that asserts it ran, not all."""
    try:
        wait_all_run(page)
        page.ran = None
    except AssertionError as error:
        page.ran = str(error)
    shot(page, screenshot)


def prompts(page) -> list[str]:
    """Every code cell's prompt, e.g. ['[1]:', '[2]:', '[ ]:']."""
    return page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-CodeCell .jp-InputPrompt", "ps => ps.map(p => p.textContent.trim())"
    )


def cells(page) -> list[dict]:
    """Every cell in order: its type ('code' or 'markdown' ...), source and outputs' text (textContent)."""
    return page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-Notebook .jp-Cell",
        """cs => cs.map(c => ({
            type: c.classList.contains('jp-CodeCell') ? 'code' : c.classList.contains('jp-MarkdownCell') ? 'markdown' : 'raw',
            source: (c.querySelector('.jp-InputArea-editor .cm-content') || {textContent: ''}).textContent,
            output: [...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join('\\n'),
        }))""",
    )


def outputs_text(page) -> list[str]:
    """Each code cell's output text, in order (textContent, so off-screen cells count too)."""
    return [c["output"] for c in cells(page) if c["type"] == "code"]


def stderr_outputs(page) -> list[str]:
    """The text of every stderr output (JupyterLab renders errors with this mime type too)."""
    return page.eval_on_selector_all(
        f'{NOTEBOOK} .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]',
        "os => os.map(o => o.textContent)",
    )


def error_outputs(page) -> list[str]:
    """Outputs that show an error: stderr holding a traceback or an exception's name."""
    return [text for text in stderr_outputs(page) if TRACEBACK.search(text)]


def notebook_text(page) -> str:
    """All the notebook's text as rendered, prose and outputs alike."""
    return page.eval_on_selector(NOTEBOOK, "p => p.textContent")


def scroll_through(page) -> None:
    """Scroll the notebook to its end and back, so whatever renders on sight (images, math) has rendered.

    The suite's JupyterLab renders every cell at once (``windowingMode`` none, conftest), so one pass is enough."""
    scroller = page.locator(f"{NOTEBOOK} .jp-WindowedPanel-outer")
    for top in ("s.scrollHeight", "0"):
        scroller.evaluate(f"s => {{ s.scrollTop = {top}; }}")
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def math_count(page) -> int:
    """How many typeset math elements the page holds."""
    return page.locator("mjx-container").count()


def code_cell(page, index: int):
    """The ``index``-th code cell (0-based) as a locator."""
    return page.locator(f"{NOTEBOOK} .jp-CodeCell").nth(index)


def set_source(page, cell, source: str) -> None:
    """Replace a cell's code as a learner would: select all in its editor and type over it."""
    editor = cell.locator(".jp-InputArea-editor .cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(source)


def run_cell(page, cell) -> None:
    """Run one cell (Ctrl+Enter in its editor) and wait until it has run."""
    cell.locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("Control+Enter")
    wait_idle(page)


class Console:
    """Page errors and console errors seen on one page, less those a test allows."""

    def __init__(self, page, allow: tuple[str, ...] = ()) -> None:
        self.allow = [re.compile(p) for p in allow]
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self._add(f"page error: {error}"))
        page.on("console", lambda message: message.type == "error" and self._add(f"console error: {message.text}"))

    def _add(self, text: str) -> None:
        if not any(p.search(text) for p in self.allow):
            self.errors.append(text)

    def check(self) -> None:
        if self.errors:
            pytest.fail("The page reported errors:\n" + "\n".join(self.errors[:20]), pytrace=False)


def watch(page, *allow: str) -> Console:
    """Record ``page``'s errors (for pages a module shares); ``.check()`` fails on any not allowed."""
    return Console(page, allow)


class RunAhead:
    """Notebooks opened in pages of their own and run with Run All, a few ahead of the tests that read them.

    ``take(name)`` hands over the page of ``name`` once its Run All has finished (``finish_run``); by then the next
    ``ahead`` notebooks have been started too, so their kernels run while the tests read this one. A notebook that
    fails to open ahead is opened again when its turn comes, so only its own tests fail.
    """

    def __init__(self, context, server, paths: dict[str, str], ahead: int) -> None:
        self.context, self.server, self.paths, self.ahead = context, server, paths, ahead
        self.order = list(paths)
        self.pages: dict = {}

    def _start(self, name: str) -> None:
        page = self.pages[name] = self.context.new_page()
        page.name, page.path = name, self.paths[name]
        page.console = watch(page)
        open_notebook(page, self.server, page.path)
        run_all(page)

    def take(self, name: str, screenshot: str):
        if name not in self.pages:
            self._start(name)
        for following in self.order[self.order.index(name) + 1 :][: self.ahead]:
            if following not in self.pages:
                try:
                    self._start(following)
                except PlaywrightError:  # its own tests say what went wrong, when they start it again
                    self.pages.pop(following).close()
        page = self.pages.pop(name)
        finish_run(page, screenshot)
        return page

    def close(self) -> None:
        for page in self.pages.values():
            page.close()
        self.pages.clear()

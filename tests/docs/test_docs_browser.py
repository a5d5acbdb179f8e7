"""The built docs site in a real browser.

Debian's headless Chromium, driven through Debian's chromedriver, loads the site that
``mkdocs build`` wrote to ``site/`` (or ``$TOOLCALL_SPEC_SITE``), served by a loopback HTTP server
of this test. Nothing is downloaded: no browser build, no driver, no font. Screenshots go to
``$TOOLCALL_SPEC_SCREENSHOTS`` or the temporary directory, never into the repository.

Locally the test is skipped, with the reason, when Chromium, chromedriver, Selenium or the built
site is missing. In CI (``CI`` set) each of those is a failure: the check must really run there.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from support.repo import REPO

sys.path.insert(0, str(REPO / "docs" / "hooks"))  # the docs build's modules, as mkdocs loads them
import architecture

from toolcall_spec.catalog import all_schemas
from toolcall_spec.requirement_registry import find_witnesses, registry

PUBLISHED_URL = "https://toolcall-spec.github.io/toolcall-spec/"
"""mkdocs.yml's site_url: every schema $id is under it (tests/schemas/test_schema_bundle.py)."""

SITE = Path(os.environ.get("TOOLCALL_SPEC_SITE", REPO / "site"))
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SHOTS = (
    Path(os.environ.get("TOOLCALL_SPEC_SCREENSHOTS") or tempfile.gettempdir())
    / "toolcall-spec-docs"
)
WAIT_SECONDS = 30

SEARCH_TERM = "fixtureErrors"
SCHEMA_PAGE = "reference/schemas/suites/agent-eval-suite/"
MATRIX_PAGE = "reference/requirements/"
SHOWCASE_ID = "openwop.requirement.0245.fixture-error-replayed"
TUTORIAL_PAGE = "tutorial/"
PICTURES_PAGE = "pictures/"
ARCHITECTURE_PAGE = "architecture/"


def _unavailable(reason: str) -> None:
    """Skip locally; fail in CI, where the browser check is part of the build."""
    if os.environ.get("CI"):
        pytest.fail(f"the browser check cannot run in CI: {reason}")
    pytest.skip(reason)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


SOURCES = ("mkdocs.yml", "pyproject.toml", "docs", "spec", "schemas", "examples", "tests")
"""What the pages checked here are built from: a change to any of these makes a built site stale.
A test file counts only when it names requirements (the matrix lists it as a witness)."""


def _newer_source(than: float) -> Path | None:
    for root in SOURCES:
        top = REPO / root
        for path in [top] if top.is_file() else top.rglob("*"):
            if "__pycache__" in path.parts or not path.is_file() or path.stat().st_mtime <= than:
                continue
            if root != "tests" or "requirement(" in path.read_text(
                encoding="utf-8", errors="ignore"
            ):
                return path
    return None


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    built = SITE / "search" / "search_index.json"  # written last by the build
    if not built.is_file():
        _unavailable(f"no built site at {SITE}: run `nox -s docs` (or mkdocs build) first")
    newer = _newer_source(built.stat().st_mtime)
    if newer is not None:
        _unavailable(f"the built site at {SITE} is older than {newer}: build it again")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.is_file():
            _unavailable(f"{binary} is missing: apt-get install chromium chromium-driver")
    try:
        from selenium import webdriver
    except ImportError:
        _unavailable("selenium is not installed: pip install -e '.[test]'")
    profile = tempfile.mkdtemp(prefix="toolcall-spec-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--window-size=1280,1400",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)), options=options
    )
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(driver: Any, url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, WAIT_SECONDS).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "article.md-content__inner h1")
    )


def _screenshot(driver: Any, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    assert driver.save_screenshot(str(path)), f"no screenshot written to {path}"
    assert path.stat().st_size > 10_000, "the screenshot is suspiciously small (a blank page?)"
    return path


def _article_text(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, "article.md-content__inner").text)


def test_home_page_leads_to_replay_and_error_counting(site_url: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site_url)
    text = _article_text(browser)
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == "toolcall-spec"
    assert (
        "A tool result is an error exactly when its isError member is the JSON boolean true" in text
    )
    links = {
        a.text.strip(): a.get_attribute("href")
        for a in browser.find_elements(By.CSS_SELECTOR, "article a")
    }
    assert links.get("Replaying a suite", "").endswith("/replay/")
    assert links.get("Counting tool errors", "").endswith("/analytics/")
    _screenshot(browser, "home")


def test_schema_page_renders_members_rules_and_examples(site_url: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site_url + SCHEMA_PAGE)
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == "AgentEvalSuite"
    entry = browser.find_element(By.ID, "ToolResponse")
    assert "ToolResponse" in entry.text
    rows = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "article table tr")]
    assert any(row.startswith("isError boolean optional") for row in rows), rows
    text = _article_text(browser)
    assert "When argsMatch is present, args must be present too." in text
    # The invalid RFC 0245 example, with what validate reported at build time.
    assert "tasks[0].fixtures.toolResponses[0].isError" in text
    browser.execute_script("arguments[0].scrollIntoView()", entry)
    time.sleep(0.5)
    _screenshot(browser, "schema-agent-eval-suite")


def test_matrix_lists_every_requirement_with_its_witnesses(site_url: str, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site_url + MATRIX_PAGE)
    witnesses: dict[str, set[str]] = {}
    for witness in find_witnesses(REPO / "tests"):
        witnesses.setdefault(witness.requirement_id, set()).add(witness.test)
    for requirement in registry().values():
        anchor = browser.find_element(By.ID, requirement.id)
        row = anchor.find_element(By.XPATH, "ancestor::tr").text
        assert requirement.id in row
        assert requirement.level in row
        for test in witnesses.get(requirement.id, ()):
            assert test in row, f"{requirement.id}: witness {test} missing from the matrix row"
    showcase = browser.find_element(By.ID, SHOWCASE_ID).find_element(By.XPATH, "ancestor::tr")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", showcase)
    time.sleep(0.5)  # let the header finish its scroll transition before the picture
    _screenshot(browser, "requirement-matrix")


def test_site_search_finds_fixture_errors(site_url: str, browser: Any) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _open(browser, site_url)
    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()
    box.send_keys(SEARCH_TERM)

    def found(driver: Any) -> tuple[str, list[str]] | Literal[False]:
        """The results' text and links once they name the term; the list is redrawn while the
        search runs, so an element read mid-redraw is stale and the wait reads it again."""
        items = driver.find_elements(By.CSS_SELECTOR, "li.md-search-result__item")
        texts = " ".join(item.text for item in items)
        links = driver.find_elements(By.CSS_SELECTOR, "li.md-search-result__item a")
        hrefs = [link.get_attribute("href") or "" for link in links]
        return (texts, hrefs) if SEARCH_TERM.lower() in texts.lower() else False

    wait = WebDriverWait(
        browser, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,)
    )
    texts, hrefs = wait.until(found)
    assert SEARCH_TERM.lower() in texts.lower()
    assert any("/reference/schemas/capabilities/discovery/" in href for href in hrefs), hrefs
    _screenshot(browser, "search-fixtureErrors")


def _rendered_diagrams(driver: Any, expected: int) -> list[Any]:
    """Wait until mermaid has replaced every diagram's code block by its drawing (material puts
    the SVG in a closed shadow root of a ``div.mermaid``), then return those drawings."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def rendered(d: Any) -> list[Any] | Literal[False]:
        drawings = d.find_elements(By.CSS_SELECTOR, "article div.mermaid")
        left_as_code = d.find_elements(By.CSS_SELECTOR, "article pre.mermaid")
        return drawings if len(drawings) == expected and not left_as_code else False

    drawings: list[Any] = WebDriverWait(driver, WAIT_SECONDS).until(rendered)
    for drawing in drawings:
        assert drawing.size["height"] > 100, "a diagram rendered empty"
    return drawings


def _loaded_from_elsewhere(driver: Any, site_url: str) -> list[str]:
    names = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    return [name for name in names if not name.startswith(site_url)]


def _console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_tutorial_shows_real_outputs_a_diagram_and_wraps_long_lines(
    site_url: str, browser: Any
) -> None:

    _open(browser, site_url + TUTORIAL_PAGE)
    text = _article_text(browser)
    assert "Tutorial: write your first suite" in text
    # Outputs of the real commands, run when the site was built.
    assert "examples/templates/suite.json: valid (1 document)" in text
    assert "tasks[0].fixtures.toolResponses[0].isError" in text
    assert "ERROR toolcall-spec.tool_failed" in text
    (sequence,) = _rendered_diagrams(browser, expected=1)
    assert "sequenceDiagram" not in text, "the diagram is shown as code"
    overflowing = browser.execute_script(
        "return [...document.querySelectorAll('article pre > code')]"
        ".filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 60))"
    )
    assert overflowing == [], "a code block scrolls sideways instead of wrapping"
    assert _loaded_from_elsewhere(browser, site_url) == []
    assert _console_errors(browser) == []
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", sequence)
    time.sleep(0.5)
    _screenshot(browser, "tutorial-replay-diagram")


def test_the_pictures_page_draws_every_diagram_with_the_site_own_mermaid(
    site_url: str, browser: Any
) -> None:
    _open(browser, site_url + PICTURES_PAGE)
    drawings = _rendered_diagrams(browser, expected=4)
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert f"{site_url}javascripts/mermaid.min.js" in loaded
    assert _loaded_from_elsewhere(browser, site_url) == []
    assert _console_errors(browser) == [], "e.g. a 404 for versions.json"
    for number, drawing in enumerate(drawings):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", drawing)
        time.sleep(0.3)
        _screenshot(browser, f"pictures-diagram-{number}")


def test_the_site_serves_each_schema_raw_at_its_id(site_url: str, browser: Any) -> None:
    """The $id says where the schema lives: under the site's URL, the file itself."""
    import json as json_module
    import urllib.request

    for path, schema in all_schemas().items():
        served = site_url + schema["$id"].removeprefix(PUBLISHED_URL)
        with urllib.request.urlopen(served, timeout=10) as answer:  # the test's loopback server
            assert json_module.loads(answer.read()) == schema, path


def _shadow_svg_texts(driver: Any) -> list[list[str]]:
    """The text of each SVG drawn inside a shadow root, read through the DevTools protocol:
    mkdocs-material closes the shadow roots of its diagrams to the page's own scripts."""
    document = driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1, "pierce": True})
    drawings: list[list[str]] = []

    def texts(node: dict[str, Any]) -> list[str]:
        own = [node["nodeValue"].strip()] if node.get("nodeType") == 3 else []
        return own + [t for child in node.get("children", []) for t in texts(child)]

    def visit(node: dict[str, Any], in_shadow: bool) -> None:
        if in_shadow and node.get("nodeName") == "svg":
            drawings.append([t for t in texts(node) if t])
            return
        for child in node.get("children", []):
            visit(child, in_shadow)
        for root in node.get("shadowRoots", []):
            visit(root, True)

    visit(document["root"], False)
    return drawings


def test_the_architecture_page_draws_the_layers_of_the_import_contracts(
    site_url: str, browser: Any
) -> None:
    contracts = architecture.read_contracts()
    _open(browser, site_url + ARCHITECTURE_PAGE)
    drawings = _rendered_diagrams(browser, expected=len(architecture.diagrams(contracts)))
    assert "flowchart" not in _article_text(browser), "a diagram is shown as code"
    layers, *others = _shadow_svg_texts(browser)
    for layer in architecture.layers_of(contracts):
        for module in layer.modules:
            assert module in " ".join(layers), f"layer module {module} is not in the drawn SVG"
    assert layers.count("may import") == len(architecture.layers_of(contracts)) - 1
    assert others, "the forbidden and independence contracts are not drawn"
    for labels in others:
        assert "never" in labels, labels
    assert _loaded_from_elsewhere(browser, site_url) == []
    assert _console_errors(browser) == []
    for number, drawing in enumerate(drawings):
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", drawing)
        time.sleep(0.3)
        _screenshot(browser, f"architecture-diagram-{number}")

"""The bot as users install it, by the Dockerfile's steps one for one (this test is that file's
check): the wheel in a fresh venv with the runtime lock alone, run outside the source tree."""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from bot.core import rules_text
from testing.botproc import ROOT, Bots
from testing.fakeserver import FakeServer
from testing.tabletop import playing
from testing.webapp import shell_scripts

# What the Dockerfile's build stage copies.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "bot", "engine", "seeds")
LANGS = ("en", "ru", "uk")
PAGE = "https://cards.example.org/app/"


def _run(*args: str | Path, cwd: Path) -> None:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"


def _wheelhouse(pip: tuple[str, ...]) -> Path:
    """The runtime lock's and the build's wheels, fetched once per lock into this venv: pip
    reads every release on the index to pick one (ten CPU seconds); the steps read here."""
    lock = ROOT / "requirements-runtime.lock"
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    house = Path(sys.prefix, f"wheelhouse-{hashlib.sha1(lock.read_bytes()).hexdigest()}")
    if not house.is_dir():
        part = Path(tempfile.mkdtemp(dir=sys.prefix))
        _run(*pip, "download", "--quiet", "--dest", part, "-r", lock, cwd=ROOT)
        _run(*pip, "download", "--quiet", "--no-deps", "--dest", part, *build, cwd=ROOT)
        part.rename(house)
    return house


def _install(tmp: Path) -> Path:
    """The Dockerfile's steps 1-5, by this process's pip, nothing compiled ahead: its python."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, src / name)
    pip = (sys.executable, "-m", "pip", "--disable-pip-version-check")
    local = ("--no-index", "--find-links", _wheelhouse(pip))
    # The Dockerfile's two stages are independent until the wheel is installed: the wheel
    # is built while the venv is made and the lock installed, as a builder would run them.
    with ThreadPoolExecutor(1) as builder:
        built = builder.submit(_run, *pip, "wheel", *local, "--quiet", "--no-deps", "--wheel-dir",
                               "dist", ".", cwd=src)  # fmt: skip
        _run(sys.executable, "-m", "venv", "--without-pip", tmp / "venv", cwd=tmp)
        python = tmp / "venv" / "bin" / "python"
        into = (*pip, "--python", python)
        _run(*into, "install", *local, "--quiet", "--no-compile", "-r",
             ROOT / "requirements-runtime.lock", cwd=tmp)  # fmt: skip
        built.result()
    (wheel,) = (src / "dist").glob("cardtable-*.whl")
    _run(*into, "install", *local, "--quiet", "--no-compile", "--no-deps", wheel, cwd=tmp)
    _run(*into, "check", cwd=tmp)
    return python


@pytest.mark.timeout(900)
async def test_the_installed_wheel_answers_rules_in_three_languages_and_plays_a_game(
    tmp_path: Path, served: FakeServer, bots: Bots
) -> None:
    python = _install(tmp_path)
    # Only the runtime: none of the dev tools came with it.
    for tool in ("pytest", "mypy", "ruff", "hypothesis", "selenium"):
        absent = subprocess.run([python, "-c", f"import {tool}"], capture_output=True)
        assert absent.returncode != 0, f"{tool} is installed"
    run = tmp_path / "run"
    run.mkdir()  # its working directory: no source tree in sight
    # No REDIS_URL: the in-process store, which the runtime must carry.
    bot = await bots.start(
        served.url, python=str(python), cwd=run, source_tree=False, WEBAPP_URL=PAGE
    )
    h = bots.harness(served.telegram, bot)
    async with httpx.AsyncClient(base_url=bot.root) as c:  # the page, from the package
        kinds = {"": "text/html", ".js": "text/javascript", ".css": "text/css"}
        for name in ("", "table.css", *shell_scripts()):  # static/'s, as the page loads them
            got = await c.get(f"/app/{name}")
            kind = kinds[name and Path(name).suffix]
            assert got.status_code == 200 and got.headers["content-type"].startswith(kind)
            assert got.content == (ROOT / "bot/webapp/static" / (name or "index.html")).read_bytes()
    for lang in LANGS:
        reader = h.user(f"Reader-{lang}", language_code=lang)
        await h.private(reader, "/rules football")
        shown = "\n".join(m.text or "" for m in h.screen(reader) if m.from_bot)
        source = rules_text.source("football", lang)
        assert source is not None
        heading = source.splitlines()[0].lstrip("# ").strip()
        assert shown.startswith(heading), (lang, shown[:200])
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "football", players)
    await top.play(players, random.Random(11))
    assert top.finished()
    assert h.problems() == []
    bot.process.terminate()
    assert await bot.stopped(15) == 0
    log = bot.log()
    assert "REDIS_URL is not set" in log and "Traceback" not in log, log
    installed = subprocess.run(
        [python, "-c", "import bot; print(bot.__file__)"], cwd=run, capture_output=True, text=True
    )
    assert "site-packages" in installed.stdout

"""The bot as users install it, by the Dockerfile's steps one for one (this test is that file's
check): the wheel in a fresh venv with the runtime lock alone, run outside the source tree."""

from __future__ import annotations

import asyncio
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
from testing.tabletop import PASS, TAKE, playing
from testing.webapp import shell_scripts

# What the Dockerfile's build stage copies.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "bot", "engine", "seeds")
LANGS = ("en", "ru", "uk")
PAGE = "https://cards.example.org/app/"


def _pip(python: str | Path, *args: str | Path, cwd: Path) -> None:
    command = [str(python), "-m", "pip", "--disable-pip-version-check", *map(str, args)]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"


def _venv(path: Path, *wanted: str | Path) -> Path:
    """A venv made anew at ``path`` with what ``wanted`` names (a lock's text read) and pip,
    installed once per this venv and seen through a .pth file: pip reads every release on the
    index to pick one (ten CPU seconds), then installs them (five). Its python."""
    key = b"".join(w.read_bytes() if isinstance(w, Path) else w.encode() for w in wanted)
    done = Path(sys.prefix, f"{path.name}-{hashlib.sha1(key).hexdigest()}")
    if not done.is_dir():
        part = Path(tempfile.mkdtemp(dir=sys.prefix))
        _pip(sys.executable, "install", "--quiet", "--target", part, "pip", *wanted, cwd=ROOT)
        part.rename(done)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", path], check=True)
    next(path.glob("lib/python3.*/site-packages")).joinpath("once.pth").write_text(f"{done}\n")
    return path / "bin" / "python"


def _wheel(tmp: Path) -> Path:
    """The Dockerfile's build stage (step 1), in a venv of the build's requirements alone."""
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, src / name)
    needs = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    _pip(_venv(tmp / "build", *needs), "wheel", "--no-build-isolation", "--quiet", "--no-deps",
         "--wheel-dir", "dist", ".", cwd=src)  # fmt: skip
    (wheel,) = (src / "dist").glob("cardtable-*.whl")
    return wheel


def _install(tmp: Path) -> Path:
    """The Dockerfile's steps 1-4, its two stages side by side as builders run them: its python."""
    with ThreadPoolExecutor(1) as stages:
        wheel = stages.submit(_wheel, tmp)
        python = _venv(tmp / "runtime", "-r", ROOT / "requirements-runtime.lock")
        _pip(python, "install", "--no-index", "--quiet", "--no-compile", "--no-deps",
             wheel.result(), cwd=tmp)  # fmt: skip
    return python


def _runtime_only(python: Path, tmp: Path) -> None:
    """The Dockerfile's step 5 (the lock satisfies the wheel), and none of the dev tools
    came with the runtime."""
    _pip(python, "check", cwd=tmp)
    tools = ("pytest", "mypy", "ruff", "hypothesis", "selenium")
    probe = f"import importlib.util as u; print(*[t for t in {tools!r} if u.find_spec(t)])"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True)
    assert found.stdout.split() == [], f"installed: {found.stdout}"


@pytest.mark.timeout(900)
async def test_the_installed_wheel_answers_rules_in_three_languages_and_plays_a_game(
    tmp_path: Path, served: FakeServer, bots: Bots
) -> None:
    python = _install(tmp_path)
    run = tmp_path / "run"
    run.mkdir()  # its working directory: no source tree in sight
    with ThreadPoolExecutor(1) as side:  # checked while the bot starts
        checked = side.submit(_runtime_only, python, tmp_path)
        # No REDIS_URL: the in-process store, which the runtime must carry.
        bot = await bots.start(
            served.url, python=str(python), cwd=run, source_tree=False, WEBAPP_URL=PAGE
        )
        checked.result()
    h = bots.harness(served.telegram, bot)
    async with httpx.AsyncClient(base_url=bot.root) as c:  # the page, from the package
        kinds = {"": "text/html", ".js": "text/javascript", ".css": "text/css"}
        for name in ("", "table.css", *shell_scripts()):  # static/'s, as the page loads them
            got = await c.get(f"/app/{name}")
            kind = kinds[name and Path(name).suffix]
            assert got.status_code == 200 and got.headers["content-type"].startswith(kind)
            assert got.content == (ROOT / "bot/webapp/static" / (name or "index.html")).read_bytes()
    readers = [h.user(f"Reader-{lang}", language_code=lang) for lang in LANGS]
    await asyncio.gather(*(h.private(reader, "/rules football") for reader in readers))
    for lang, reader in zip(LANGS, readers, strict=True):
        shown = "\n".join(m.text or "" for m in h.screen(reader) if m.from_bot)
        source = rules_text.source("football", lang)
        assert source is not None
        heading = source.splitlines()[0].lstrip("# ").strip()
        assert shown.startswith(heading), (lang, shown[:200])
    players = [h.user("Ann"), h.user("Bob")]
    top = await playing(h, "durak", players, ("d", "d"))  # on 24 cards, played the shortest way
    await top.play(players, random.Random(11), shun=PASS, prefer=TAKE)
    assert top.finished()
    assert h.problems() == []
    bot.process.terminate()
    where = [python, "-c", "import bot; print(bot.__file__)"]
    installed, code = await asyncio.gather(  # asked while the bot stops
        asyncio.to_thread(subprocess.run, where, cwd=run, capture_output=True, text=True),
        bot.stopped(15),
    )
    assert code == 0
    log = bot.log()
    assert "REDIS_URL is not set" in log and "Traceback" not in log, log
    assert "site-packages" in installed.stdout

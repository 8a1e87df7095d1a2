"""The documents a reader relies on: docs/records.md's example and the real records beside
it replay as the document says, and every citation of a rule (``seeds/durak.md §4.3``,
``docs/records.md §6``) in the code, the tests and the docs names a point that exists, in
every language of the seeds."""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from engine import records
from testing.replays import ok

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GAMES = ("football", "durak")
# The seeds' languages: "" for the original, ".ru" for seeds/<game>.ru.md and so on.
LANGS = ("", *sorted({"." + p.name.split(".")[1] for p in (ROOT / "seeds").glob("*.*.md")}))
_HEADING = re.compile(r"^## (\d+)\. ", re.MULTILINE)
_POINT = re.compile(r"^(\d+)\. ", re.MULTILINE)
_REF = r"§\d+(?:\.\d+)?"
_REFS = rf"{_REF}(?:(?:, | and | or ){_REF})*"
_FILE = r"(?:seeds/(?:\w+|<game>)\.md|docs/records\.md)"
# "seeds/durak.md §2.3 and §3.2" and "§7.1 of seeds/football.md and seeds/durak.md".
_CITE_AFTER = re.compile(rf"({_FILE})\s+({_REFS})")
_CITE_BEFORE = re.compile(rf"({_REFS})\s+of\s+({_FILE}(?:\s+and\s+{_FILE})?)")


def _json_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```json\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)


def _shape(markdown: str) -> dict[int, tuple[int, int, list[str]]]:
    """Section number (0: the text before the first) -> how many numbered points and
    bullets it has, and the rule points it cites."""
    parts = _HEADING.split(markdown)
    bodies = {0: parts[0]} | {
        int(number): body for number, body in zip(parts[1::2], parts[2::2], strict=True)
    }
    return {
        number: (
            len(_POINT.findall(body)),
            len(re.findall(r"^\s*- ", body, re.MULTILINE)),
            sorted(re.findall(_REF, body)),
        )
        for number, body in bodies.items()
    }


def _exists(path: str, ref: str) -> bool:
    section, _, point = ref.lstrip("§").partition(".")
    shape = _shape((ROOT / path).read_text(encoding="utf-8")).get(int(section))
    return int(section) > 0 and shape is not None and (not point or int(point) <= shape[0])


def _citations(path: Path) -> list[tuple[str, str]]:
    """(cited file, §ref) pairs in one file; a bare "(§3.3)" in a seed or in
    docs/records.md cites that same document."""
    text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
    text = re.sub(r"\[`?([^\]`]+)`?\]\([^)]*\)", r"\1", text)  # [`seeds/x.md`](…) -> seeds/x.md
    found: list[tuple[str, str]] = []
    for files, refs in [(m[1], m[2]) for m in _CITE_AFTER.finditer(text)] + [
        (m[2], m[1]) for m in _CITE_BEFORE.finditer(text)
    ]:
        for name in re.findall(_FILE, files):
            for game in GAMES if "<game>" in name else (None,):
                cited = name.replace("<game>", game or "")
                found += [(cited, ref) for ref in re.findall(_REF, refs)]
    relative = path.relative_to(ROOT).as_posix()
    if relative.startswith("seeds/") or relative == "docs/records.md":
        own = relative if relative == "docs/records.md" else f"seeds/{path.name.split('.')[0]}.md"
        found += [
            (own, ref)
            for refs in re.findall(rf"\(({_REFS})\)", text)
            for ref in re.findall(_REF, refs)
        ]
    return found


def test_the_example_replays_to_the_output_the_document_shows() -> None:
    example, shown = _json_blocks((DOCS / "records.md").read_text(encoding="utf-8"))
    assert ok(json.loads(example)) == json.loads(shown)
    assert json.loads(shown)["ok"] is True


@pytest.mark.parametrize("game", GAMES)
def test_the_real_records_replay_to_their_end(game: str) -> None:
    record = json.loads((DOCS / f"{game}-record.json").read_text(encoding="utf-8"))
    assert record["game"] == game
    out = records.replay(record)
    assert out["ok"] and out["finished"] and out["result"] is not None and out["legal"] == []
    # One move fewer and the game is not over: the file holds the whole game.
    cut = records.replay({**record, "moves": record["moves"][:-1]})
    assert not cut["finished"] and cut["legal"]


def test_the_documents_links_lead_to_files_of_the_repository() -> None:
    for doc in (ROOT / "README.md", *DOCS.glob("*.md")):
        for target in re.findall(r"\]\(([^)#:]+)\)", doc.read_text(encoding="utf-8")):
            assert (doc.parent / target).is_file(), f"{doc.name}: {target}"


def test_every_cited_rule_point_exists() -> None:
    sources = [
        p
        for folder in ("engine", "bot", "bench", "tests", "seeds", "docs")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in (".py", ".md")
        if p != Path(__file__).resolve()
    ] + [ROOT / "README.md"]
    cited = {(path, c) for path in sources for c in _citations(path)}
    assert len(cited) > 20  # the check sees the citations (the code has some thirty)
    missing = sorted(
        f"{p.relative_to(ROOT)}: {f} {ref}" for p, (f, ref) in cited if not _exists(f, ref)
    )
    assert not missing
    everything = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    assert "rules.md" not in everything.replace("docs/records.md", "")
    assert "shared/" not in everything


@pytest.mark.parametrize("game", GAMES)
def test_the_translations_keep_the_numbering(game: str) -> None:
    """Every language has every section of the original (durak's variants, §9 on, as well
    as the seed's game), each with as many numbered points and bullets, citing the same
    points: a section, a point or a cross-reference left untranslated shows."""
    english, *others = (
        _shape((ROOT / "seeds" / f"{game}{lang}.md").read_text(encoding="utf-8")) for lang in LANGS
    )
    assert len(english) >= 8 and sum(points for points, _, _ in english.values()) >= 10
    differ = [
        f"seeds/{game}{lang}.md §{number}: {other.get(number)}, the original {shape}"
        for lang, other in zip(LANGS[1:], others, strict=True)
        for number, shape in english.items()
        if other.get(number) != shape
    ]
    assert differ == []
    assert all(other.keys() == english.keys() for other in others)  # nor a section more


# A path in the repository as prose names it: `bot/service/taps.py`, `docs/`, `seeds/<game>.md`
# (a placeholder in angle brackets stands for any name: some file must fit it).
_PATH = re.compile(
    r"(?<![\w/.:<>-])((?:bench|bot|docs|engine|scripts|seeds|testing|tests|\.ci)/[\w./<>-]*[\w/>])"
)
# A module, or a name in one, as a docstring names it: ``bot.service.taps.commit``.
_DOTTED = re.compile(r"(?<![\w/.-])((?:bench|bot|engine|testing)(?:\.[A-Za-z_][\w<>]*)+)")
# Files a document tells its reader to make (a new language's), not ones it says exist.
_TO_MAKE = {
    "docs/translating.md": {
        "bot/core/locales/pl.po",
        "seeds/durak.pl.md",
        "seeds/football.pl.md",
    }
}
_DEFS = ast.FunctionDef | ast.AsyncFunctionDef
_SUFFIXES = {"py", "md", "json", "toml", "js", "css", "png", "lock", "txt", "html"}


def _prose() -> list[tuple[Path, str]]:
    """The documents and the code whole, the scripts' comments: what names paths (this
    file's own examples excepted; the test reads the code's prose out where it must)."""
    found = [(p, p.read_text(encoding="utf-8")) for p in (ROOT / "README.md", *DOCS.glob("*.md"))]
    for folder in ("bench", "bot", "engine", "testing", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != Path(__file__).resolve():
                found.append((path, path.read_text(encoding="utf-8")))
    for path in (*(ROOT / "scripts").iterdir(), ROOT / ".ci" / "run"):
        lines = path.read_text(encoding="utf-8").splitlines()
        found.append((path, "\n".join(line for line in lines if line.lstrip().startswith("#"))))
    return found


def _docstrings_and_comments(source: str) -> str:
    tree = ast.parse(source)
    texts = [
        ast.get_docstring(node, clean=False) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | _DEFS)
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    texts += [tok.string for tok in tokens if tok.type == tokenize.COMMENT]
    return "\n".join(texts)


def _path_exists(named: str) -> bool:
    pattern = re.sub(r"<[^>]*>", "*", named.rstrip("."))
    return any(ROOT.glob(pattern.rstrip("/"))) if "*" in pattern else (ROOT / pattern).exists()


@functools.cache
def _names(module: Path) -> dict[str, set[str] | None]:
    """A module's top-level names: for a class the names in its body, else None (kept
    for the run: the docstrings name some modules many times over)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: dict[str, set[str] | None] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found[node.name] = {
                n.name if not isinstance(n, ast.AnnAssign | ast.Assign) else _target(n)
                for n in node.body
                if isinstance(
                    n, ast.FunctionDef | ast.AsyncFunctionDef | ast.AnnAssign | ast.Assign
                )
            }
        elif isinstance(node, _DEFS):
            found[node.name] = None
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            found[_target(node)] = None
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update({(a.asname or a.name).split(".")[0]: None for a in node.names})
    return found


def _target(node: ast.Assign | ast.AnnAssign) -> str:
    target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
    return target.id if isinstance(target, ast.Name) else ""


def _module_exists(dotted: str) -> bool:
    """``a.b.c.name.attr``: the longest prefix that is a module or package of the
    repository (at least two parts), then a name it defines, then one in that class."""
    if "<" in dotted:  # a placeholder: some module must fit it
        pattern = re.sub(r"<[^>]*>", "*", dotted.replace(".", "/"))
        return any(ROOT.glob(f"{pattern}.py")) or any(ROOT.glob(pattern))
    parts = dotted.split(".")
    if parts[-1] in _SUFFIXES:  # a file name (``bot.py``), not a module
        return True
    for i in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:i])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else None
        if module is None and base.is_dir():
            module = base / "__init__.py"
            if not module.is_file():
                return i == len(parts)  # a folder of data (bot/core/locales)
        if module is None:
            continue
        rest = parts[i:]
        if not rest:
            return True
        names = _names(module)
        if rest[0] not in names:
            return (module.parent / rest[0]).is_dir()  # a subpackage named off its parent
        members = names[rest[0]]
        return len(rest) == 1 or members is None or rest[1] in members
    return False


def test_every_path_the_docs_name_exists() -> None:
    """README.md, docs/*.md and the code's docstrings and comments name only paths and
    modules the repository has (the repository stands alone)."""
    missing = []
    checked = 0
    for source, text in _prose():
        to_make = _TO_MAKE.get(source.relative_to(ROOT).as_posix(), set())
        code = source.suffix == ".py"
        named, lacking = _lacking(text, to_make, code=code)
        if code and lacking:  # its prose, named in it whole, is read out only here (2 s in all)
            named, lacking = _lacking(_docstrings_and_comments(text), to_make, code=code)
        checked += named
        missing += [f"{source.relative_to(ROOT)}: {each}" for each in lacking]
    assert checked > 200  # it sees the paths the docs name
    assert sorted(missing) == [], "\n".join(sorted(missing))


def _lacking(text: str, to_make: set[str], *, code: bool) -> tuple[int, list[str]]:
    """How many paths (and in ``code`` modules) ``text`` names, and those it names that
    the repository does not have."""
    named = [(n, _path_exists) for n in set(_PATH.findall(text)) - to_make]
    if code:
        named += [(n, _module_exists) for n in set(_DOTTED.findall(text))]
    return len(named), [n for n, exists in named if not exists(n)]

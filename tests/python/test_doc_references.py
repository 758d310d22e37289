"""Every docs page the code cites exists, and so does the section it names: comments point into the
repository (docs/design/contracts.md, "The reference every comment means"), never to documents outside it."""

import os
import re

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SOURCES = ("cpp", "python", "tests", "bench")
SUFFIXES = (".cpp", ".hpp", ".py", ".md", ".txt", ".sh")
# docs/x.md "Section" or docs/x.md, "Section": the quoted text must be in the page (a heading or bold text).
CITATION = re.compile(r'(docs/[\w/]+\.md)(?:[,;]? "([^"]+)")?')
README_SECTION = re.compile(r'README "([^"]+)"')


def _files():
    for top in SOURCES:
        for root, dirs, names in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d not in ("results", "__pycache__", "build")]
            for name in names:
                if name.endswith(SUFFIXES) and name != os.path.basename(__file__):
                    yield os.path.join(root, name)


def _citations():
    found = []
    for path in _files():
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                where = f"{os.path.relpath(path, REPO)}:{number}"
                found += [(where, page, section) for page, section in CITATION.findall(line)]
                found += [(where, "README.md", section) for section in README_SECTION.findall(line)]
                if re.search(r'\bDESIGN "', line):
                    found.append((where, "DESIGN", ""))
    return found


CITATIONS = _citations()


def test_the_code_cites_the_docs():
    assert len(CITATIONS) > 50  # the scan finds the citations at all


@pytest.mark.parametrize(("where", "page", "section"), CITATIONS, ids=[c[0] for c in CITATIONS])
def test_every_cited_page_and_section_exists(where, page, section):
    path = os.path.join(REPO, page)
    assert os.path.isfile(path), f"{where} cites {page}, which is not in the repository"
    if section:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        assert section in text, f"{where} cites the section {section!r} of {page}, which has no such text"

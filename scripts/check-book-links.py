"""Checks every link of the built book: each relative link leads to a page
or file of the book, and each `#anchor` to an element with that id on the
page it names. Links to other sites are left alone (no network here).

Usage: python3 scripts/check-book-links.py BOOK_DIR
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The ids and the links (href and src) of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif name == "href" or (name == "src" and tag in ("img", "script")):
                self.links.append(value)


def main() -> int:
    book = Path(sys.argv[1]).resolve()
    pages: dict[Path, Page] = {}
    for path in sorted(book.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path] = page
    # mdBook's own pages: the print page repeats every link, 404 and toc
    # pages use absolute site paths.
    skip = {book / "print.html", book / "404.html", book / "toc.html"}
    problems = []
    checked = 0
    for path, page in pages.items():
        if path in skip:
            continue
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            checked += 1
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(book)}: {link}"
            if book not in target.parents and target != book:
                problems.append(f"{where}: leads outside the book")
            elif not target.exists():
                problems.append(f"{where}: no such page or file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{where}: no anchor `{parts.fragment}` on that page")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} broken links in the book", file=sys.stderr)
        return 1
    if checked < 100:
        print(f"only {checked} links were found: is {book} the built book?", file=sys.stderr)
        return 1
    print(f"{checked} links in {len(pages)} pages lead somewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())

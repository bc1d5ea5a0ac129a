"""A tiny Sphinx extension: include a benchmark results file written in Markdown.

The documentation has no Markdown parser; the benchmark scripts write their results as Markdown
(``benchmarks/results/<family>.md``). The directive ::

    .. markdown-tables:: ../benchmarks/results/linear_model.md

reads the file at build time (so the page always shows the committed results) and turns the
subset of Markdown those files use into docutils nodes:

* ``#`` headings: the first level-1 heading becomes a rubric; deeper headings become nested
  sections (levels renumbered from the shallowest one, so they always nest under the section
  that contains the directive, and they appear in the page's table of contents). The directive
  must therefore be the last element of its section;
* pipe tables (``| a | b |`` lines with a ``|---|`` separator): tables with a header row;
* ``![alt](file.png)`` on a line of its own: an image (copied next to the generated pages, so
  the image may live outside the documentation folder);
* ``-`` / ``*`` bullet lists and ``1.`` numbered lists, fenced code blocks, and paragraphs;
* inline: code spans (any number of backticks), ``**strong**``, ``*emphasis*`` and
  ``[text](url)`` links; everything else is plain text (no reST interpretation, so ``q_`` or
  ``|x|`` in the results need no escaping).

The role ``:bench:`linear_model | <row label> | <column header>``` puts one cell of a results
table into prose (``benchmarks/results/linear_model.md``; the row is found by its first cell in
any table that has that column; ``linear_model#<text>`` searches only the tables whose heading or
preceding paragraph contains ``<text>``), so a figure quoted in the text is read from the same file at build time.
``:bench-range:`kernel_selection#<text> | ratio@2``` gives ``'<min> to <max>'`` of a column
(the second column named ``ratio``) over the rows of one table (``| <prefix>`` leaves out the
rows whose first cell starts with it). A missing file, row or column, or an ambiguous row, is an
error.

The path is relative to the document, like ``literalinclude``. When the file is not there
(the documentation sources were copied elsewhere to be built), it is looked up in the
repository that the imported ``skonline`` package comes from. A missing file is a warning
(an error with ``-W``).
"""

import os
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

# --------------------------------------------------------------------------- inline

_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<code_text>.+?)(?P=ticks))"
    r"|(?P<strong>\*\*(?P<strong_text>.+?)\*\*)"
    r"|(?P<em>(?<![\w*])\*(?P<em_text>[^*\s](?:[^*]*?[^*\s])?)\*(?![\w*]))"
    r"|(?P<link>\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\))"
)


def inline_nodes(text):
    """Docutils inline nodes for a line of Markdown text."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        if m.start() > pos:
            out.append(nodes.Text(text[pos:m.start()]))
        if m.group("code"):
            code = m.group("code_text")
            if code.startswith(" ") and code.endswith(" ") and code.strip():
                code = code[1:-1]
            out.append(nodes.literal(code, code))
        elif m.group("strong"):
            out.append(nodes.strong("", "", *inline_nodes(m.group("strong_text"))))
        elif m.group("em"):
            out.append(nodes.emphasis("", "", *inline_nodes(m.group("em_text"))))
        else:
            url = m.group("link_url")
            out.append(nodes.reference("", "", *inline_nodes(m.group("link_text")), refuri=url))
        pos = m.end()
    if pos < len(text):
        out.append(nodes.Text(text[pos:]))
    return out


def _paragraph(text):
    return nodes.paragraph("", "", *inline_nodes(text))


# --------------------------------------------------------------------------- blocks

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBER = re.compile(r"^(\s*)\d+[.)]\s+(.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _split_row(line):
    """Cells of a pipe-table row; ``\\|`` is a literal pipe."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [c.strip().replace("\\|", "|") for c in cells]


def parse_blocks(text):
    """The Markdown text as a list of blocks ``(kind, payload)``."""
    lines = text.splitlines()
    blocks, k = [], 0
    while k < len(lines):
        line = lines[k]
        stripped = line.strip()
        if not stripped:
            k += 1
            continue
        if stripped.startswith("```"):
            body = []
            k += 1
            while k < len(lines) and not lines[k].strip().startswith("```"):
                body.append(lines[k])
                k += 1
            blocks.append(("code", "\n".join(body)))
            k += 1
            continue
        m = _HEADING.match(stripped)
        if m:
            blocks.append(("heading", (len(m.group(1)), m.group(2))))
            k += 1
            continue
        m = _IMAGE.match(stripped)
        if m:
            blocks.append(("image", (m.group("alt"), m.group("src"))))
            k += 1
            continue
        if stripped.startswith("|") and k + 1 < len(lines) and _TABLE_SEP.match(lines[k + 1]):
            header = _split_row(stripped)
            rows = []
            k += 2
            while k < len(lines) and lines[k].strip().startswith("|"):
                rows.append(_split_row(lines[k]))
                k += 1
            blocks.append(("table", (header, rows)))
            continue
        if _BULLET.match(line) or _NUMBER.match(line):
            kind = "bullets" if _BULLET.match(line) else "numbers"
            pattern = _BULLET if kind == "bullets" else _NUMBER
            items = []
            while k < len(lines) and lines[k].strip():
                m = pattern.match(lines[k])
                if m:
                    items.append(m.group(2).strip())
                elif items and (lines[k].startswith((" ", "\t"))
                                or not (_BULLET.match(lines[k]) or _NUMBER.match(lines[k]))):
                    items[-1] += " " + lines[k].strip()  # continuation line
                else:
                    break
                k += 1
            blocks.append((kind, items))
            continue
        para = []
        while k < len(lines) and lines[k].strip():
            nxt = lines[k].strip()
            if para and (_HEADING.match(nxt) or _IMAGE.match(nxt) or nxt.startswith(("|", "```"))
                         or _BULLET.match(lines[k]) or _NUMBER.match(lines[k])):
                break
            para.append(nxt)
            k += 1
        blocks.append(("paragraph", " ".join(para)))
    return blocks


def _table(header, rows):
    ncols = len(header)
    rows = [(r + [""] * ncols)[:ncols] for r in rows]
    table = nodes.table(classes=["markdown-table"])
    group = nodes.tgroup(cols=ncols)
    table += group
    for j in range(ncols):
        width = max([len(header[j])] + [len(r[j]) for r in rows])
        group += nodes.colspec(colwidth=max(width, 3))

    def row_node(cells):
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            if cell:
                entry += _paragraph(cell)
            row += entry
        return row

    thead = nodes.thead()
    thead += row_node(header)
    group += thead
    tbody = nodes.tbody()
    for r in rows:
        tbody += row_node(r)
    group += tbody
    return table


# --------------------------------------------------------------------------- directive


def _repository_fallback(abs_path, srcdir):
    """The same file in the repository the imported skonline package comes from."""
    try:
        import skonline
    except ImportError:
        return None
    repo = Path(skonline.__file__).resolve().parents[1]
    try:
        rel = Path(os.path.relpath(abs_path, Path(srcdir).resolve().parent))
    except ValueError:
        return None
    if rel.parts and rel.parts[0] == "..":
        return None
    candidate = repo / rel
    return candidate if candidate.is_file() else None


class MarkdownTables(SphinxDirective):
    """``.. markdown-tables:: <path to a .md file>``: see the module docstring."""

    required_arguments = 1
    has_content = False

    def run(self):
        _, abs_path = self.env.relfn2path(self.arguments[0], self.env.docname)
        path = Path(abs_path)
        if not path.is_file():
            path = _repository_fallback(abs_path, self.env.srcdir)
        if path is None:
            msg = f"markdown-tables: file not found: {self.arguments[0]}"
            return [self.state.document.reporter.warning(msg, line=self.lineno)]
        self.env.note_dependency(str(path))
        blocks = parse_blocks(path.read_text(encoding="utf-8"))

        levels = [lvl for kind, payload in blocks if kind == "heading"
                  for lvl in [payload[0]] if lvl > 1]
        base = min(levels) if levels else 2
        top = []  # nodes before the first section
        stack = []  # (depth, section node)
        seen_h1 = False

        def container():
            return stack[-1][1] if stack else None

        def add(node):
            parent = container()
            if parent is None:
                top.append(node)
            else:
                parent += node

        for kind, payload in blocks:
            if kind == "heading":
                level, title = payload
                if level == 1 and not seen_h1 and not stack:
                    seen_h1 = True
                    add(nodes.rubric("", "", *inline_nodes(title)))
                    continue
                depth = max(level - base, 0)
                depth = min(depth, stack[-1][0] + 1 if stack else 0)  # no skipped levels
                while stack and stack[-1][0] >= depth:
                    stack.pop()
                section = nodes.section()
                section += nodes.title(title, "", *inline_nodes(title))
                section["names"].append(nodes.fully_normalize_name(title))
                self.state.document.note_implicit_target(section, section)
                add(section)
                stack.append((depth, section))
            elif kind == "paragraph":
                add(_paragraph(payload))
            elif kind in ("bullets", "numbers"):
                lst = nodes.bullet_list() if kind == "bullets" else nodes.enumerated_list()
                for item in payload:
                    li = nodes.list_item()
                    li += _paragraph(item)
                    lst += li
                add(lst)
            elif kind == "table":
                add(_table(*payload))
            elif kind == "code":
                add(nodes.literal_block(payload, payload))
            elif kind == "image":
                alt, src = payload
                image = path.parent / src
                if not image.is_file():
                    add(self.state.document.reporter.warning(
                        f"markdown-tables: image not found: {image}", line=self.lineno))
                    continue
                target = Path(self.env.srcdir) / "generated" / "markdown_images" / image.name
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.is_file() or target.read_bytes() != image.read_bytes():
                    shutil.copyfile(image, target)
                add(nodes.image(uri=f"/generated/markdown_images/{image.name}", alt=alt or src))
        # sections come after every body element of the enclosing section
        body = [n for n in top if not isinstance(n, nodes.section)]
        sections = [n for n in top if isinstance(n, nodes.section)]
        return body + sections


# --------------------------------------------------------------------------- role


def _strip_markup(cell):
    return re.sub(r"\*\*(.+?)\*\*", r"\1", cell).strip()


def find_cell(text, row_label, column, section=None):
    """The cell of the one pipe table row whose first cell is ``row_label``, in column ``column``.

    With ``section``, only the tables whose heading, or the paragraph just before them, contains
    that text are searched. A ``row_label`` ending with ``...`` matches rows starting with the rest;
    one with ``' / '`` matches the row's first cells joined by ``' / '``.
    Markup (``**bold**``) is ignored when matching and removed from the result. Raises
    ``LookupError`` when no table, or more than one, has such a row and column.
    """
    found = []
    heading = caption = ""
    for kind, payload in parse_blocks(text):
        if kind == "heading":
            heading, caption = payload[1], ""
        elif kind == "paragraph":
            caption = payload
        if kind != "table" or (section is not None and section not in heading and section not in caption):
            caption = "" if kind == "table" else caption
            continue
        header, rows = payload
        header = [_strip_markup(h) for h in header]
        if column not in header:
            continue
        j = header.index(column)
        for row in rows:
            first = _strip_markup(row[0]) if row else None
            if first is None or j >= len(row):
                continue
            if " / " in row_label:  # the first cells, joined by ' / '
                first = " / ".join(_strip_markup(c) for c in row[: row_label.count(" / ") + 1])
            if first == row_label or (row_label.endswith("...") and first.startswith(row_label[:-3])):
                found.append(_strip_markup(row[j]))
    if len(found) != 1:
        raise LookupError(f"{len(found)} rows {row_label!r} with a column {column!r}")
    return found[0]


_LEADING_NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?(?:%|x)?")


def find_range(text, column, section=None, exclude=None):
    """``'<min> to <max>'`` over the rows of the one table with ``column`` (``name@k``: the k-th
    column of that name), by the leading number of each cell, shown as written (``153x``);
    rows whose first cell starts with ``exclude`` are left out. Raises ``LookupError``."""
    name, _, k = column.partition("@")
    k = int(k) if k else 1
    tables = []
    heading = caption = ""
    for kind, payload in parse_blocks(text):
        if kind == "heading":
            heading, caption = payload[1], ""
        elif kind == "paragraph":
            caption = payload
        elif kind == "table":
            header = [_strip_markup(h) for h in payload[0]]
            where = [j for j, h in enumerate(header) if h == name]
            if len(where) >= k and (section is None or section in heading or section in caption):
                tables.append((where[k - 1], payload[1]))
            caption = ""
    if len(tables) != 1:
        raise LookupError(f"{len(tables)} tables with a column {column!r}")
    j, rows = tables[0]
    values = []
    for row in rows:
        if exclude and _strip_markup(row[0]).startswith(exclude):
            continue
        m = _LEADING_NUMBER.match(_strip_markup(row[j])) if j < len(row) else None
        if m:
            values.append((float(m.group(0).rstrip("%x").replace(",", "")), m.group(0)))
    if not values:
        raise LookupError(f"no number in column {column!r}")
    return f"{min(values)[1]} to {max(values)[1]}"


def bench_range_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``:bench-range:`<file>[#section] | <column>[@k] [| <exclude rows starting with>]```:
    ``'<min> to <max>'`` of a results column, read at build time (see :func:`find_range`)."""
    return _bench(rawtext, text, lineno, inliner, ranged=True)


def bench_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """See the module docstring."""
    return _bench(rawtext, text, lineno, inliner, ranged=False)


def _bench(rawtext, text, lineno, inliner, ranged):
    """One figure (``bench``) or a range (``bench-range``) from ``benchmarks/results/<stem>.md``,
    read at build time (a prose figure can then not go stale). A file, row or column that is not
    there (or a row that is ambiguous) is an error."""
    env = inliner.document.settings.env
    reporter = inliner.reporter
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3 and not (ranged and len(parts) == 2):
        want = "file | column [| exclude]" if ranged else "file | row | column"
        msg = reporter.error(f"bench: expected '{want}', got {text!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    stem = parts[0]
    stem, _, section = (p.strip() for p in stem.partition("#"))
    _, abs_path = env.relfn2path(f"/../benchmarks/results/{stem}.md", env.docname)
    path = Path(abs_path)
    if not path.is_file():
        path = _repository_fallback(abs_path, env.srcdir)
    if path is None:
        msg = reporter.error(f"bench: file not found: benchmarks/results/{stem}.md", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    env.note_dependency(str(path))
    try:
        content = path.read_text(encoding="utf-8")
        if ranged:
            value = find_range(content, parts[1], section or None, parts[2] if len(parts) == 3 else None)
        else:
            value = find_cell(content, parts[1], parts[2], section or None)
    except LookupError as exc:
        msg = reporter.error(f"bench: {stem}.md: {exc}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.Text(value)], []


def setup(app):
    app.add_directive("markdown-tables", MarkdownTables)
    app.add_role("bench", bench_role)
    app.add_role("bench-range", bench_range_role)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""The safe YAML layer: located values, and refusal of everything a mission does not need."""

from __future__ import annotations

import pytest

from executive.language.yaml_source import (
    MAX_YAML_DEPTH,
    SourceError,
    YMap,
    YScalar,
    YSeq,
    parse,
)


def _fatal(data: bytes) -> tuple[int, int, str]:
    with pytest.raises(SourceError) as info:
        parse(data, "f.yaml")
    d = info.value.diagnostic
    return d.where.line, d.where.col, d.message


def test_values_keep_line_and_column() -> None:
    tree, problems = parse(b"a: 1\nb:\n  - x\n  - {c: 'd\xc3\xa9', e: 2.5}\n", "f.yaml")
    assert problems == []
    assert isinstance(tree, YMap)
    a = tree.entries["a"]
    assert (a.key_where.line, a.key_where.col) == (1, 1)
    assert isinstance(a.value, YScalar) and a.value.value == 1
    assert (a.value.where.line, a.value.where.col) == (1, 4)
    b = tree.entries["b"].value
    assert isinstance(b, YSeq)
    inner = b.items[1]
    assert isinstance(inner, YMap)
    # columns count characters, not bytes: 'dé' is 4 characters wide with its quotes
    assert (inner.entries["e"].key_where.line, inner.entries["e"].key_where.col) == (4, 15)
    c = inner.entries["c"].value
    assert isinstance(c, YScalar) and c.value == "dé" and c.quoted


def test_scalars_are_typed_like_yaml_but_safe() -> None:
    tree, problems = parse(b"i: 3\nf: 0.5\nb: true\nn: ~\ns: hello\nq: '3'\nh: 0x1F\n", "f")
    assert problems == []
    assert isinstance(tree, YMap)
    values = {k: e.value.value for k, e in tree.entries.items() if isinstance(e.value, YScalar)}
    assert values == {"i": 3, "f": 0.5, "b": True, "n": None, "s": "hello", "q": "3", "h": 31}


def test_aliases_are_refused_so_bombs_cannot_expand() -> None:
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]\n"
    line, col, message = _fatal(bomb)
    assert (line, col) == (1, 4)
    assert "anchors" in message


def test_alias_without_anchor_is_refused() -> None:
    assert (
        "aliases" in _fatal(b"a: *nothing\n")[2] or "not valid YAML" in _fatal(b"a: *nothing\n")[2]
    )


def test_tags_are_refused() -> None:
    line, col, message = _fatal(b"x: !!python/object/apply:os.system ['rm -rf /']\n")
    assert (line, col) == (1, 4)
    assert "tags" in message


def test_merge_keys_are_refused() -> None:
    tree, problems = parse(b"a: {<<: {b: 1}}\n", "f")
    assert any("merge keys" in p.message for p in problems)


def test_binary_junk_is_a_clean_error() -> None:
    line, col, message = _fatal(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    assert "not UTF-8" in message or "not valid YAML" in message


def test_not_utf8_names_the_place() -> None:
    line, col, message = _fatal(b"mission: x\nname: caf\xe9\n")
    assert (line, col) == (2, 10)
    assert "not UTF-8" in message


def test_control_characters_are_a_clean_error() -> None:
    line, col, message = _fatal(b"a: 1\nb: \x07\n")
    assert line == 2 and "not valid YAML" in message


def test_huge_file_is_refused_before_parsing() -> None:
    line, col, message = _fatal(b"a: " + b"x" * (1 << 20) + b"\n")
    assert (line, col) == (1, 1)
    assert "limit" in message


def test_deep_nesting_is_refused_without_recursion() -> None:
    line, col, message = _fatal(b"[" * 100_000)
    assert "nested deeper" in message
    assert col == MAX_YAML_DEPTH + 1


def test_deep_block_nesting_is_refused() -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(MAX_YAML_DEPTH + 5))
    assert "nested deeper" in _fatal(text.encode())[2]


def test_syntax_error_has_a_location() -> None:
    line, col, message = _fatal(b"a: [1, 2\nb: 3\n")
    assert line == 2 and "not valid YAML" in message


def test_empty_and_multi_document_files() -> None:
    assert "empty" in _fatal(b"")[2]
    assert "empty" in _fatal(b"# only a comment\n")[2]
    line, _, message = _fatal(b"a: 1\n---\nb: 2\n")
    assert line == 2 and "one YAML document" in message


def test_duplicate_keys_are_reported_not_silently_dropped() -> None:
    tree, problems = parse(b"a: 1\nb: 2\na: 3\n", "f")
    assert [(p.where.line, p.path, p.message) for p in problems] == [
        (3, "a", "duplicate key (first at line 1)")
    ]
    assert isinstance(tree, YMap)
    assert tree.entries["a"].value == YScalar(1, tree.entries["a"].value.where)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: 010\n", "octal"),
        ("a: 1:30\n", "base-60"),
        ("a: 2024-01-01\n", "date"),
        ("a: " + "9" * 5000 + "\n", "too large"),
        ("? [1, 2]\n: x\n", "keys must be text"),
        ("1: x\n", "keys must be text"),
        # int() said "invalid literal for int() with base 16: ''" (found by tests/fuzz)
        ("a: 0x_\n", "'0x_' reads as a number without digits"),
        ("a: -0b__\n", "'-0b__' reads as a number without digits"),
    ],
)
def test_surprising_scalars_are_reported(text: str, needle: str) -> None:
    _, problems = parse(text.encode(), "f")
    assert any(needle in p.message for p in problems), problems


def test_utf8_bom_is_accepted() -> None:
    tree, problems = parse(b"\xef\xbb\xbfa: 1\n", "f")
    assert isinstance(tree, YMap) and not problems

"""The flat network YAML reader (no PyYAML import) against PyYAML, the independent method."""

from __future__ import annotations

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topologies.astra.validators import _yaml_loader, flat_yaml, load_yaml

#: Items and keys, plain and tricky: YAML booleans, nulls, octal-looking, signed,
#: exponent and special floats, quoted, spaced, non-ASCII.
_WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True)
_PLAIN = st.one_of(
    _WORD,
    st.from_regex(r"[-+]?(0|[1-9][0-9]{0,5})(\.[0-9]{1,3})?", fullmatch=True),
)
_TRICKY = st.one_of(
    _PLAIN,
    st.sampled_from(["yes", "No", "on", "OFF", "true", "False", "null", "~", "y", "n",
                     "012", "0x1F", "1e3", "1_000", ".5", "5.", ".inf", "-.inf", ".nan",
                     "'Ring'", '"4"', "Ring Switch", "1:30", "2026-01-01", "µ", "a#b",
                     "", " ", "<<", "=", "!!str 4", "&a", "*a", "-", "- 1", "[1]", "{a: 1}"]),
)


@st.composite
def documents(draw) -> str:
    """Mostly plain documents (the flat reader reads them), some with a tricky token or line."""
    tricky = draw(st.integers(0, 3)) == 0
    tokens = _TRICKY if tricky else _PLAIN
    kinds = ["entry", "entry", "entry", "comment", "blank"] + (["odd"] if tricky else [])
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(kinds))
        if kind == "comment":
            lines.append(draw(st.sampled_from(["# note", "  # indented", "#", "# Ring 4 x 4"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  "])))
        elif kind == "odd":
            lines.append(draw(st.sampled_from(["---", "...", "key: 4", "  key: [1]", "key:[1]",
                                               "key : [1]", "key: [1,]", "key: [1] #c",
                                               "key: [1]#c", "\tkey: [1]", "key: [1]\r",
                                               "key: [a, b", "%YAML 1.1"])))
        else:
            key = draw(tokens if tricky else _WORD)
            items = draw(st.lists(tokens, max_size=4))
            sep = draw(st.sampled_from([", ", ",", " , "]))
            pad = draw(st.sampled_from(["", " "]))
            tail = draw(st.sampled_from(["", " ", "  # GB/s"]))
            lines.append(f"{key}: [{pad}{sep.join(items)}{pad}]{tail}")
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


def _pyyaml(text: str):
    try:
        return ("ok", yaml.load(text, Loader=_yaml_loader()))
    except yaml.YAMLError:
        return ("error", None)


@settings(max_examples=600, deadline=None)
@given(documents())
@example("# Small 2D\ntopology: [Ring, Switch]\nnpus_count: [4, 4]\nbandwidth: [4, 1]\n"
         "latency: [20, 500]\n")
@example("topology: [Ring]\ntopology: [Ring]\n")
@example("on: [1]\n")
@example("latency: [ ]\n")
def test_what_the_flat_reader_reads_pyyaml_reads_alike(text: str) -> None:
    flat = flat_yaml(text)
    if flat is None:
        return
    status, value = _pyyaml(text)
    assert status == "ok"
    assert repr(flat) == repr(value)  # the same keys, items and types (4 is not 4.0)


def test_the_bundled_presets_are_read_flat_and_alike() -> None:
    from topologies.presets import presets_dir

    files = sorted(presets_dir().glob("*.yml"))
    assert files
    for path in files:
        text = path.read_text()
        assert flat_yaml(text) is not None, path.name
        assert repr(flat_yaml(text)) == repr(_pyyaml(text)[1])


def test_what_the_flat_reader_leaves_to_pyyaml() -> None:
    assert flat_yaml("topology: [Ring]\ntopology: [Switch]\n") is None  # PyYAML names the line
    assert flat_yaml("bandwidth: [1e3]\n") is None
    assert flat_yaml("npus_count: [yes]\n") is None
    assert flat_yaml("topology: Ring\n") is None
    assert flat_yaml("# only a comment\n") is None
    assert flat_yaml("topology: [Ring]  # µ\n") is None
    assert flat_yaml("npus_count: [04]\n") is None
    # ... and load_yaml gives PyYAML's answer for them.
    assert load_yaml("bandwidth: [1e3]\n", "f.yml") == {"bandwidth": [1000.0]}
    assert load_yaml("npus_count: [yes]\n", "f.yml") == {"npus_count": [True]}


def test_a_flat_document_by_hand() -> None:
    text = "# net\ntopology: [ Ring,Switch ]  # two\nbandwidth: [4.50, -0]\nlatency: []\n"
    assert flat_yaml(text) == {"topology": ["Ring", "Switch"], "bandwidth": [4.5, 0],
                               "latency": []}
    assert isinstance(flat_yaml(text)["bandwidth"][1], int)  # type: ignore[index]

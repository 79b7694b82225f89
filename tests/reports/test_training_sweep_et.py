"""[[training]] specs over Chakra execution traces: the R5 runs' ETs (read in
``../shared/reference``) give the end of ``themis train ... --json`` and of the real 2.x
binary; train-report --db writes their tables; what train refuses is refused when the
spec is read, in one line."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from reports.cli import main
from reports.sweep import load_spec, run_sweep
from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace, write_et

SHARED = Path(__file__).resolve().parents[3] / "shared"
R5 = SHARED / "reference" / "astra-sim-2.x" / "training" / "runs-R5.json"
pytestmark = pytest.mark.skipif(not R5.is_file(), reason="../shared/reference is missing")


def _run(name: str) -> dict:
    (run,) = [r for r in json.loads(R5.read_text()) if r["name"] == name]
    return run


def _spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "study.toml"
    path.write_text('title = "ET study"\n[[training]]\n' + body)
    return path


def _r5_table(run: dict, extra: str = "") -> str:
    return (f'workloads = ["{SHARED / run["prefix"]}"]\n'
            f'networks = ["{SHARED / run["network"]}"]\n'
            f'systems = ["{SHARED / run["system"]}"]\n' + extra)


@pytest.mark.parametrize("name", ["N2b_tinyDATA_none_s16_trace", "N2a_microAllReduce_s16"])
def test_an_et_case_ends_where_train_and_the_real_binary_end(tmp_path, capsys, name) -> None:
    """baseline/fifo on an R5 run's ETs: the row's end and exposed communication are
    ``themis train PREFIX --json``'s and the 2.x binary's; themis/scf's row equals train
    with --policy themis --intra scf; the bound task's row is train's iteration bound."""
    run = _run(name)
    spec = _spec(tmp_path, _r5_table(run, 'policies = ["baseline/fifo", "themis/scf"]\n'))
    loaded = load_spec(spec)
    assert (loaded.cases, len(loaded.training)) == (1, 3)
    db = tmp_path / "et.sqlite"
    res = run_sweep(str(spec), str(db), workers=1, stream=io.StringIO())
    assert (res.ran, res.failed) == (3, 0)
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        rows = {r["method"]: dict(r) for r in conn.execute("SELECT * FROM training")}
    assert set(rows) == {"baseline/fifo", "themis/scf", "bound"}
    base = rows["baseline/fifo"]
    assert (base["end_ns"], base["exposed_comm_ns"]) == (run["end_ns"], run["exposed_comm_ns"])
    assert (base["parallelism"], base["timing"], base["npus"], base["passes"]) == (
        "chakra-et", "astra-sim-2", run["npus"], 1)
    for method, flags in (("baseline/fifo", []), ("themis/scf", ["--policy", "themis",
                                                                 "--intra", "scf"])):
        assert main(["train", str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                     "--system", str(SHARED / run["system"]), *flags, "--json"]) == 0
        data = json.loads(capsys.readouterr()[0])
        assert rows[method]["end_ns"] == data["end_ns"]
        assert rows[method]["compute_ns"] == data["compute_ns"]
        assert rows["bound"]["lower_bound_ns"] == data["iteration_bound_ns"] <= data["end_ns"]
    out = tmp_path / "report"
    assert main(["train-report", "--db", str(db), "--out", str(out)]) == 0
    capsys.readouterr()
    assert "astra-sim-2" in (out / "README.md").read_text()
    with open(out / "results.csv", newline="") as f:
        ends = {r["policy"]: int(r["end_ns"]) for r in csv.DictReader(f)}
    assert ends["baseline/fifo"] == run["end_ns"]


def test_chunks_and_another_timing_run_as_train_does(tmp_path, capsys) -> None:
    """``chunks`` replaces the system's splits and ``timing = alpha-beta`` times each
    collective its way, exactly as train's --chunks and --timing."""
    run = _run("N2a_microAllReduce_s16")
    spec = _spec(tmp_path, _r5_table(run, 'policies = ["baseline/fifo"]\nchunks = [4]\n'
                                          'timing = ["alpha-beta", "astra-sim-2"]\n'))
    db = tmp_path / "et.sqlite"
    assert run_sweep(str(spec), str(db), workers=1, stream=io.StringIO()).failed == 0
    with sqlite3.connect(db) as conn:
        got = dict(conn.execute("SELECT timing, end_ns FROM training WHERE method != "
                                "'bound'").fetchall())
    for timing in ("alpha-beta", "astra-sim-2"):
        assert main(["train", str(SHARED / run["prefix"]), str(SHARED / run["network"]),
                     "--system", str(SHARED / run["system"]), "--chunks", "4", "--timing",
                     timing, "--json"]) == 0
        assert got[timing] == json.loads(capsys.readouterr()[0])["end_ns"]
    assert got["alpha-beta"] != got["astra-sim-2"]


NET = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYSTEM = {"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
          "preferred-dataset-splits": 2, "all-reduce-implementation": ["ring"],
          "all-gather-implementation": ["ring"], "reduce-scatter-implementation": ["ring"],
          "all-to-all-implementation": ["ring"], "collective-optimization": "localBWAware"}


def _small(tmp_path: Path, comm_type: int = 0, ranks: int = 4, pg: str | None = None) -> None:
    attrs = [Attribute("comm_type", "int64", comm_type), Attribute("comm_size", "int64", 4096)]
    if pg is not None:
        attrs.append(Attribute("pg_name", "string", pg))
    nodes = [Node(0, "c", 4, duration_micros=2), Node(1, "ar", 7, data_deps=[0], attrs=attrs)]
    for rank in range(ranks):
        write_et(Trace(GlobalMetadata(), nodes), tmp_path / f"t.{rank}.et")
    (tmp_path / "net.yml").write_text(NET)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    (tmp_path / "groups.json").write_text('{"1": [0, 1, 2, 3]}')


SMALL = 'workloads = ["t"]\nnetworks = ["net.yml"]\nsystems = ["sys.json"]\n'


@pytest.mark.parametrize(("body", "kw"), [
    (SMALL + "passes = [2]\n", dict(key="training[0].passes", says="hold their passes")),
    (SMALL + 'policies = ["online-mix/feed"]\n', dict(key="training[0].policies[0]",
                                                      says="training-level planner")),
    (SMALL + 'policies = ["1,0"]\n', dict(key="training[0].policies[0]", says="1,0")),
    ('workloads = ["vgg16"]\nnetworks = ["net.yml"]\ncomm_group = "groups.json"\n',
     dict(key="training[0].comm_group", says="only Chakra traces")),
    (SMALL + 'comm_group = "nope.json"\n', dict(key="training[0].comm_group",
                                                says="no such file")),
    ('workloads = ["vgg16", "t"]\nnetworks = ["net.yml"]\nsystems = ["sys.json"]\n'
     'timing = ["astra-sim-2"]\n', dict(key="training[0].timing[0]", says="1.0 workloads")),
])
def test_what_train_refuses_is_refused_when_the_spec_is_read(tmp_path, capsys, body,
                                                             kw) -> None:
    _small(tmp_path)
    code = main(["sweep", str(_spec(tmp_path, body)), "--db", str(tmp_path / "db.sqlite")])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1, err
    assert kw["key"] in err and kw["says"] in err
    assert not (tmp_path / "db.sqlite").exists()


@pytest.mark.parametrize(("make", "says"), [
    (dict(comm_type=1), "comm_type"),           # a REDUCE: 2.x has none
    (dict(ranks=3), "missing rank"),             # 4 NPUs, ranks 0..2
    (dict(pg="7"), "pg_name"),                   # a group the file does not hold
])
def test_a_trace_train_refuses_is_one_line_naming_its_file(tmp_path, capsys, make,
                                                           says) -> None:
    _small(tmp_path, **make)
    spec = _spec(tmp_path, SMALL + 'comm_group = "groups.json"\n')
    code = main(["sweep", str(spec), "--db", str(tmp_path / "db.sqlite")])
    err = capsys.readouterr()[1]
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert "t." in err and ".et" in err


def test_a_small_trace_by_hand(tmp_path) -> None:
    """One 2 us compute then one 4 KiB all-reduce, under alpha-beta on a 4-NPU ring
    (50 GB/s, 500 ns; ring all-reduce in 2 chunks of 2 KiB): 2(p-1) = 6 steps of a
    512-byte piece per chunk, pipelined on one ring: the collective is what
    ``simulate --timing alpha-beta`` gives, so the end is 2,000 ns + that, and a
    communicator group naming every NPU changes nothing."""
    _small(tmp_path, pg="1")
    spec = _spec(tmp_path, SMALL + 'comm_group = "groups.json"\npolicies = ["baseline/fifo"]\n'
                                   'timing = ["alpha-beta"]\n')
    db = tmp_path / "db.sqlite"
    assert run_sweep(str(spec), str(db), workers=1, stream=io.StringIO()).failed == 0
    with sqlite3.connect(db) as conn:
        (end, compute), = conn.execute("SELECT end_ns, compute_ns FROM training WHERE "
                                       "method != 'bound'").fetchall()
    from themis.collective import Collective
    from themis.system_run import run_system
    from topologies.presets import resolve_network, resolve_system

    net = resolve_network(str(tmp_path / "net.yml"))
    system = resolve_system(str(tmp_path / "sys.json")).with_astra_defaults()
    coll = run_system(net, system, Collective("all-reduce", 4096, 2), "alpha-beta",
                      "baseline", "fifo").makespan_ns
    assert compute == 2000 and end == 2000 + -(-coll // 1)


def test_train_report_runs_traces_as_train_does(tmp_path, capsys) -> None:
    """``train-report --workloads PREFIX`` beside a bundled workload: the ET rows are
    train's (and the 2.x binary's end for baseline/fifo), the 1.0 workload's rows are
    themis train's on the same network; a policy without a discipline takes FIFO."""
    run = _run("N2b_tinyDATA_none_s16_trace")
    net, system = str(SHARED / run["network"]), str(SHARED / run["system"])
    out = tmp_path / "report"
    assert main(["train-report", "--workloads", f"{SHARED / run['prefix']},mlp-model",
                 "--networks", net, "--system", system, "--policies", "baseline,themis",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    with open(out / "results.csv", newline="") as f:
        rows = {(r["workload"].rsplit("/", 1)[-1], r["policy"]): r for r in csv.DictReader(f)}
    assert set(rows) == {(w, p) for w in ("tinyDATA_none", "mlp-model")
                         for p in ("baseline/fifo", "themis/fifo")}
    assert int(rows["tinyDATA_none", "baseline/fifo"]["end_ns"]) == run["end_ns"]
    assert rows["tinyDATA_none", "baseline/fifo"]["timing"] == "astra-sim-2"
    for workload, flags in (("tinyDATA_none", [str(SHARED / run["prefix"])]),
                            ("mlp-model", ["mlp-model", "--timing", "astra-sim-1.0"])):
        for policy in ("baseline", "themis"):
            assert main(["train", *flags, net, "--system", system, "--policy", policy,
                         "--intra", "fifo", "--json"]) == 0
            end = json.loads(capsys.readouterr()[0])["end_ns"]
            assert float(rows[workload, f"{policy}/fifo"]["end_ns"]) == pytest.approx(end,
                                                                                      abs=0.5)
    assert "Made by `themis train-report --out" in (out / "README.md").read_text()


@pytest.mark.parametrize(("extra", "says"), [
    (["--system", "S", "--policies", "online-mix/feed"], "--policies = 'online-mix/feed'"),
    (["--system", "S", "--comm-group", "nope.json"], "--comm-group = 'nope.json': no such"),
])
def test_train_report_refuses_what_train_refuses(tmp_path, capsys, extra, says) -> None:
    run = _run("N2b_tinyDATA_none_s16_trace")
    extra = [str(SHARED / run["system"]) if v == "S" else v for v in extra]
    code = main(["train-report", "--workloads", str(SHARED / run["prefix"]), "--networks",
                 str(SHARED / run["network"]), *extra, "--out", str(tmp_path / "r")])
    err = capsys.readouterr()[1]
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "r").exists()


def test_train_report_comm_group_needs_traces(capsys) -> None:
    assert main(["train-report", "--workloads", "vgg16", "--comm-group", "g.json"]) == 2
    assert "only Chakra traces" in capsys.readouterr()[1]


def test_traces_without_a_system_file_run_with_the_one_defaults(tmp_path, capsys) -> None:
    """No system file: ASTRA-sim 2.x's defaults and the chunk default of every command
    (4 splits), in ``train``, a ``[[training]]`` table without ``systems`` and
    ``train-report`` alike; ``--chunks`` / ``chunks`` replace the 4 and change the end."""
    run = _run("N2b_tinyDATA_none_s16_trace")
    prefix, net = str(SHARED / run["prefix"]), str(SHARED / run["network"])
    ends = {}
    for chunks in (None, 16):
        flags = [] if chunks is None else ["--chunks", str(chunks)]
        assert main(["train", prefix, net, *flags, "--json"]) == 0
        data = json.loads(capsys.readouterr()[0])
        assert (data["splits"], data["timing"]) == (chunks or 4, "astra-sim-2")
        ends[chunks] = data["end_ns"]
        extra = "" if chunks is None else f"chunks = [{chunks}]\n"
        spec = _spec(tmp_path, f'workloads = ["{prefix}"]\nnetworks = ["{net}"]\n'
                               f'policies = ["baseline/fifo"]\n{extra}')
        db = tmp_path / f"nosys{chunks}.sqlite"
        assert run_sweep(str(spec), str(db), workers=1, stream=io.StringIO()).failed == 0
        with sqlite3.connect(db) as conn:
            (end,) = conn.execute("SELECT end_ns FROM training WHERE method != 'bound'").fetchone()
        assert end == ends[chunks]
    assert ends[None] != ends[16]
    out = tmp_path / "r"
    assert main(["train-report", "--workloads", prefix, "--networks", net, "--policies",
                 "baseline/fifo", "--out", str(out)]) == 0
    capsys.readouterr()
    with open(out / "results.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert int(row["end_ns"]) == ends[None]


def test_traces_on_the_wrong_network_say_which_network(tmp_path, capsys) -> None:
    """train-report on traces needs the network they ran on (the bundled networks' NPU
    counts are not the traces' ranks), and a rank count that does not fit names the
    network it was read against."""
    run = _run("N2b_tinyDATA_none_s16_trace")
    prefix = str(SHARED / run["prefix"])
    assert main(["train-report", "--workloads", prefix, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and err.startswith("themis: error: --networks:")
    assert main(["train-report", "--workloads", prefix, "--networks", "small-2d", "--out",
                 str(tmp_path / "r")]) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and "(on network small-2d, 16 NPUs)" in err
    assert not (tmp_path / "r").exists()

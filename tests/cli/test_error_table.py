"""Bad input, command by command: one line naming the file, the user's key and the value.

A table-driven fuzz of every command's files and flags (issue 14 §5). Each case
runs in-process through ``reports.cli.main``; it must exit with status 2, print
nothing on stdout and exactly one line on stderr (no traceback) that contains
each expected part: the file (``{d}`` is the folder of the files below), the
key as the user wrote it and the value. ``train``, ``improve`` and workload
files have the most cases.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main

LAYER = ["conv1", "-1", "10", "NONE", "0", "20", "NONE", "0", "30", "ALLREDUCE", "4096", "1"]
COLUMNS = ["reserved", "fwd_compute", "fwd_type", "fwd_size", "ig_compute", "ig_type",
           "ig_size", "wg_compute", "wg_type", "wg_size", "update_time"]
L = " ".join(LAYER)


def layer_with(col: str, value: str) -> str:
    toks = list(LAYER)
    toks[1 + COLUMNS.index(col)] = value
    return " ".join(toks)


def net_json(**changes) -> str:
    base = {"dimensions-count": 2, "topologies-per-dim": ["Ring", "Switch"],
            "units-count": [4, 8], "links-count": [2, 1], "link-latency": [1, 1],
            "link-bandwidth": [50, 25]}
    base.update(changes)
    return json.dumps(base)


def net_yml(topology="[Ring]", npus="[4]", bandwidth="[50]", latency="[1]") -> str:
    return f"topology: {topology}\nnpus_count: {npus}\nbandwidth: {bandwidth}\n" \
           f"latency: {latency}\n"


FILES: dict[str, str] = {
    # ASTRA-sim 2.x networks
    "n_topo.yml": net_yml(topology="[Rong]"),
    "n_len.yml": net_yml(topology="[Ring, Ring]", bandwidth="[50, 50]", latency="[1, 1]"),
    "n_bw.yml": net_yml(bandwidth="[-5]"),
    "n_bw0.yml": net_yml(bandwidth="[0]"),
    "n_bwinf.yml": net_yml(bandwidth="[.inf]"),
    "n_bwstr.yml": net_yml(bandwidth="[fast]"),
    "n_npus0.yml": net_yml(npus="[0]"),
    "n_npusstr.yml": net_yml(npus="[four]"),
    "n_npusbool.yml": net_yml(npus="[true]"),
    "n_npusfrac.yml": net_yml(npus="[4.5]"),
    "n_lat.yml": net_yml(latency="[-1]"),
    "n_latnan.yml": net_yml(latency="[.nan]"),
    "n_miss.yml": "topology: [Ring]\nnpus_count: [4]\nlatency: [1]\n",
    "n_yaml.yml": "topology: [Ring\nnpus_count: 4\n",
    "n_scalar.yml": net_yml(topology="Ring"),
    "n_empty.yml": "",
    "n_list.yml": "- 1\n- 2\n",
    # ASTRA-sim 1.0 networks
    "j_bad.json": "{ not json",
    "j_count.json": net_json(**{"dimensions-count": 3}),
    "j_links0.json": net_json(**{"links-count": [0, 1]}),
    "j_ring1.json": net_json(**{"links-count": [1, 1]}),
    "j_bw0.json": net_json(**{"link-bandwidth": [0, 25]}),
    "j_topo.json": net_json(**{"topologies-per-dim": ["Ring", "Swatch"]}),
    "j_units.json": net_json(**{"units-count": [4, "8"]}),
    "j_unitsneg.json": net_json(**{"units-count": [4, -8]}),
    "j_lat.json": net_json(**{"link-latency": [1, -1]}),
    "j_list.json": "[1, 2]",
    # ASTRA-sim 1.0 system files
    "s_splits0.txt": "preferred-dataset-splits: 0\n",
    "s_splitsx.txt": "preferred-dataset-splits: many\n",
    "s_active0.txt": "active-chunks-per-dimension: 0\n",
    "s_delay.txt": "endpoint-delay: -3\n",
    "s_sched.txt": "scheduling-policy: RANDOM\n",
    "s_intra.txt": "intra-dimension-scheduling: LARGEST\n",
    "s_inter.txt": "inter-dimension-scheduling: magic\n",
    "s_algos1.txt": "preferred-dataset-splits: 4\nall-reduce-implementation: ring\n",
    "s_algos3.txt": "preferred-dataset-splits: 4\nall-reduce-implementation: ring_ring_ring\n",
    "s_algox.txt": "all-reduce-implementation: ring_warp\n",
    "s_rsx.txt": "reduce-scatter-implementation: warp_ring\n",
    "s_opt.txt": "collective-optimization: fast\n",
    "s_boost.txt": "boost-mode: 2\n",
    "s_line.txt": "preferred-dataset-splits 4\n",
    "s_dup.txt": "boost-mode: 1\nboost-mode: 0\n",
    "s_empty.txt": "",
    "s_a2a.txt": ("preferred-dataset-splits: 4\nscheduling-policy: LIFO\n"
                  "collective-optimization: localBWAware\nall-to-all-implementation: ring_ring\n"),
    # ASTRA-sim 2.x system files
    "sj_list3.json": json.dumps({"preferred-dataset-splits": 4,
                                 "all-reduce-implementation": ["ring", "ring", "ring"]}),
    "sj_listx.json": json.dumps({"all-reduce-implementation": ["ring", "warp"]}),
    "sj_splits.json": json.dumps({"preferred-dataset-splits": "x"}),
    "sj_num.json": json.dumps({"all-reduce-implementation": 5}),
    "sj_bad.json": "{",
    "sj_list.json": "[1]",
    # workload files: header
    "w_kw.txt": "DATAX\n1\n" + L,
    "w_count.txt": "DATA\n2\n" + L,
    "w_countx.txt": "DATA\nten\n" + L,
    "w_zero.txt": "DATA\n0\n",
    "w_short.txt": "DATA\n1\nconv1 -1 10 NONE 0\n",
    "w_long.txt": "DATA\n1\n" + L + " 5",
    "w_empty.txt": "",
    "w_bin.txt": "\x00\x01\x02",
    "w_tr0.txt": "HYBRID_TRANSFORMER model_parallel_NPU_group: 0\n1\n" + L,
    "w_trx.txt": "HYBRID_TRANSFORMER model_parallel_NPU_group: x\n1\n" + L,
    "w_tr5.txt": "HYBRID_TRANSFORMER model_parallel_NPU_group: 5\n1\n" + L,
    "w_dlrm.txt": "HYBRID_DLRM last_bottom_layer: 7\n1\n" + L,
    "w_cust.txt": "HYBRID_CUSTOMIZED\n1\n" + L + " NOPE",
    "w_cust2.txt": "HYBRID_CUSTOMIZED\n1\n" + L + " HYBRID_CUSTOMIZED",
    "w_fib.txt": "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 checkpoints: 1 5 "
                 "checkpoint_initiates: 1 0\n1\n" + L,
    "w_small.txt": "DATA\n1\n" + layer_with("wg_size", "3"),
    "w_ara2a.txt": "DATA\n1\n" + layer_with("wg_type", "ALLREDUCEALLTOALL"),
    "w_upd0.txt": "DATA\n1\n" + layer_with("update_time", "0"),
    # spec files and databases
    "spec_key.toml": "title = 'x'\n[[grid]]\nnetworks = ['tpu']\nsizez = ['1GiB']\n",
    "spec_toml.toml": "title = \n",
    "spec_sizes.toml": "[[grid]]\nnetworks = ['tpu']\n",
    "db.sqlite": "not a database",
}
# workload files: every numeric column not an integer, negative, beyond the limit;
# every type column unknown
for col in COLUMNS:
    if col.endswith("_type"):
        FILES[f"w_{col}_x.txt"] = "DATA\n1\n" + layer_with(col, "BROADCAST")
        continue
    FILES[f"w_{col}_frac.txt"] = "DATA\n1\n" + layer_with(col, "1.5")
    if col != "reserved":
        FILES[f"w_{col}_neg.txt"] = "DATA\n1\n" + layer_with(col, "-7")
        FILES[f"w_{col}_big.txt"] = "DATA\n1\n" + layer_with(col, "1" + "0" * 40)

C = "themis: error: "


def case(argv: str, *parts: str):
    return pytest.param(argv, parts, id=argv[:80])


CASES = [
    # -- network files (every command reads them the same way; simulate, bound, train) --
    case("simulate {d}/n_topo.yml", "{d}/n_topo.yml: topology[0] = 'Rong'"),
    case("simulate {d}/n_len.yml", "{d}/n_len.yml: npus_count = [4]", "one entry per dimension"),
    case("simulate {d}/n_bw.yml", "{d}/n_bw.yml: bandwidth[0] = -5"),
    case("simulate {d}/n_bw0.yml", "{d}/n_bw0.yml: bandwidth[0] = 0"),
    case("simulate {d}/n_bwinf.yml", "{d}/n_bwinf.yml: bandwidth[0] = inf"),
    case("simulate {d}/n_bwstr.yml", "{d}/n_bwstr.yml: bandwidth[0] = 'fast'"),
    case("simulate {d}/n_npus0.yml", "{d}/n_npus0.yml: npus_count[0] = 0"),
    case("simulate {d}/n_npusstr.yml", "{d}/n_npusstr.yml: npus_count[0] = 'four'"),
    case("simulate {d}/n_npusbool.yml", "{d}/n_npusbool.yml: npus_count[0] = True"),
    case("simulate {d}/n_npusfrac.yml", "{d}/n_npusfrac.yml: npus_count[0] = 4.5"),
    case("simulate {d}/n_lat.yml", "{d}/n_lat.yml: latency[0] = -1"),
    case("simulate {d}/n_latnan.yml", "{d}/n_latnan.yml: latency[0] = nan"),
    case("simulate {d}/n_miss.yml", "{d}/n_miss.yml: bandwidth: missing"),
    case("simulate {d}/n_yaml.yml", "{d}/n_yaml.yml: line 2", "invalid YAML"),
    case("simulate {d}/n_scalar.yml", "{d}/n_scalar.yml: topology = 'Ring'"),
    case("simulate {d}/n_empty.yml", "{d}/n_empty.yml: ", "empty"),
    case("simulate {d}/n_list.yml", "{d}/n_list.yml: ", "mapping"),
    case("bound {d}/j_bad.json", "{d}/j_bad.json: line 1", "invalid JSON"),
    case("bound {d}/j_count.json", "{d}/j_count.json: dimensions-count = 3"),
    case("bound {d}/j_links0.json", "{d}/j_links0.json: links-count[0] = 0"),
    case("bound {d}/j_ring1.json", "{d}/j_ring1.json: links-count[0] = 1",
         "a Ring needs at least 2 links"),
    case("bound {d}/j_bw0.json", "{d}/j_bw0.json: link-bandwidth[0] = 0"),
    case("bound {d}/j_topo.json", "{d}/j_topo.json: topologies-per-dim[1] = 'Swatch'"),
    case("bound {d}/j_units.json", "{d}/j_units.json: units-count[1] = '8'"),
    case("bound {d}/j_unitsneg.json", "{d}/j_unitsneg.json: units-count[1] = -8"),
    case("bound {d}/j_lat.json", "{d}/j_lat.json: link-latency[1] = -1"),
    case("bound {d}/j_list.json", "{d}/j_list.json: ", "mapping"),
    case("network {d}/n_len.yml", "{d}/n_len.yml: npus_count = [4]"),
    case("network nope", "NETWORK = 'nope'"),
    case("simulate {d}/nofile.yml", "NETWORK = '{d}/nofile.yml'"),
    case("train vgg16 {d}/n_topo.yml", "{d}/n_topo.yml: topology[0] = 'Rong'"),
    case("train vgg16 {d}/j_ring1.json", "{d}/j_ring1.json: links-count[0] = 1"),
    case("improve {d}/n_bw.yml", "{d}/n_bw.yml: bandwidth[0] = -5"),
    case("improve {d}/j_count.json", "{d}/j_count.json: dimensions-count = 3"),
    # -- system files --
    case("simulate tpu --system {d}/s_splits0.txt",
         "{d}/s_splits0.txt: preferred-dataset-splits = 0"),
    case("simulate tpu --system {d}/s_splitsx.txt",
         "{d}/s_splitsx.txt: preferred-dataset-splits = 'many'"),
    case("simulate tpu --system {d}/s_active0.txt",
         "{d}/s_active0.txt: active-chunks-per-dimension = 0"),
    case("simulate tpu --system {d}/s_delay.txt", "{d}/s_delay.txt: endpoint-delay = -3"),
    case("simulate tpu --system {d}/s_intra.txt",
         "{d}/s_intra.txt: intra-dimension-scheduling = 'LARGEST'"),
    case("simulate tpu --system {d}/s_inter.txt",
         "{d}/s_inter.txt: inter-dimension-scheduling = 'magic'"),
    case("simulate tpu --system {d}/s_algos1.txt",
         "{d}/s_algos1.txt: all-reduce-implementation = 'ring': 1 algorithm for a network "
         "of 2 dimensions"),
    case("simulate tpu --system {d}/s_algos3.txt",
         "{d}/s_algos3.txt: all-reduce-implementation = 'ring_ring_ring': 3 algorithms"),
    case("simulate tpu --system {d}/s_algox.txt",
         "{d}/s_algox.txt: all-reduce-implementation[1] = 'warp'"),
    case("simulate tpu --collective reduce-scatter --system {d}/s_rsx.txt",
         "{d}/s_rsx.txt: reduce-scatter-implementation[0] = 'warp'"),
    case("simulate tpu --system {d}/s_opt.txt", "{d}/s_opt.txt: collective-optimization = 'fast'"),
    case("simulate tpu --system {d}/s_boost.txt", "{d}/s_boost.txt: boost-mode = '2'"),
    case("simulate tpu --system {d}/s_line.txt",
         "{d}/s_line.txt: line 1 = 'preferred-dataset-splits 4'"),
    case("simulate tpu --system {d}/s_dup.txt", "{d}/s_dup.txt: boost-mode = '0': duplicate"),
    case("simulate tpu --system {d}/s_empty.txt", "{d}/s_empty.txt: ", "empty"),
    case("simulate tpu --system {d}/n_topo.yml", "{d}/n_topo.yml: topology: this is a network"),
    case("simulate tpu --system {d}/sj_list3.json",
         "{d}/sj_list3.json: all-reduce-implementation = ['ring', 'ring', 'ring']: 3 "
         "algorithms"),
    case("simulate tpu --system {d}/sj_listx.json",
         "{d}/sj_listx.json: all-reduce-implementation[1] = 'warp'"),
    case("simulate tpu --system {d}/sj_splits.json",
         "{d}/sj_splits.json: preferred-dataset-splits = 'x'"),
    case("simulate tpu --system {d}/sj_num.json",
         "{d}/sj_num.json: all-reduce-implementation = 5"),
    case("simulate tpu --system {d}/sj_bad.json", "{d}/sj_bad.json: line 1", "invalid JSON"),
    case("simulate tpu --system {d}/sj_list.json", "{d}/sj_list.json: ", "mapping"),
    case("simulate tpu --system nofile.txt", "SYSTEM = 'nofile.txt'"),
    case("bound tpu --system {d}/s_algos3.txt", "{d}/s_algos3.txt: all-reduce-implementation"),
    case("solve tpu --system {d}/s_splits0.txt", "{d}/s_splits0.txt: preferred-dataset-splits"),
    case("compare tpu --system {d}/sj_list3.json",
         "{d}/sj_list3.json: all-reduce-implementation = ['ring', 'ring', 'ring']"),
    case("train vgg16 tpu --system {d}/s_sched.txt",
         "{d}/s_sched.txt: scheduling-policy = 'RANDOM'"),
    case("train vgg16 tpu --system {d}/s_algos1.txt",
         "{d}/s_algos1.txt: all-reduce-implementation = 'ring': 1 algorithm"),
    case("train vgg16 tpu --system {d}/sj_list3.json",
         "{d}/sj_list3.json: all-reduce-implementation = ['ring', 'ring', 'ring']"),
    case("train vgg16 tpu --system {d}/s_algox.txt",
         "{d}/s_algox.txt: all-reduce-implementation[1] = 'warp'"),
    case("train vgg16 tpu --system {d}/s_splits0.txt",
         "{d}/s_splits0.txt: preferred-dataset-splits = 0"),
    case("train vgg16 tpu --system {d}/s_intra.txt",
         "{d}/s_intra.txt: intra-dimension-scheduling = 'LARGEST'"),
    case("train vgg16 tpu --system {d}/s_inter.txt",
         "{d}/s_inter.txt: inter-dimension-scheduling = 'magic'"),
    case("train dlrm tpu --system {d}/s_a2a.txt",
         "{d}/s_a2a.txt: all-to-all-implementation = 'ring_ring'"),
    case("train vgg16 tpu --system {d}/s_empty.txt", "{d}/s_empty.txt: ", "empty"),
    case("improve tpu --system {d}/s_algos1.txt",
         "{d}/s_algos1.txt: all-reduce-implementation = 'ring'"),
    case("improve tpu --system {d}/sj_list3.json",
         "{d}/sj_list3.json: all-reduce-implementation = ['ring', 'ring', 'ring']"),
    case("improve tpu --system {d}/s_splits0.txt",
         "{d}/s_splits0.txt: preferred-dataset-splits = 0"),
    case("improve tpu --system {d}/s_delay.txt", "{d}/s_delay.txt: endpoint-delay = -3"),
    # -- workload files: header and structure --
    case("train {d}/w_kw.txt tpu", "{d}/w_kw.txt:1: parallelism = 'DATAX'"),
    case("train {d}/w_count.txt tpu", "{d}/w_count.txt:2: layer count = 2"),
    case("train {d}/w_countx.txt tpu", "{d}/w_countx.txt:2: layer count = 'ten'"),
    case("train {d}/w_zero.txt tpu", "{d}/w_zero.txt:2: layer count = '0'"),
    case("train {d}/w_short.txt tpu", "{d}/w_short.txt:3: layer = 'conv1'", "this one 5"),
    case("train {d}/w_long.txt tpu", "{d}/w_long.txt:3: layer = 'conv1'", "this one 13"),
    case("train {d}/w_empty.txt tpu", "{d}/w_empty.txt:1: parallelism"),
    case("train {d}/w_bin.txt tpu", "WORKLOAD = '{d}/w_bin.txt'",
         "a binary file (a NUL byte at byte 0)"),
    case("train {d}/w_tr0.txt tpu", "{d}/w_tr0.txt:1: model_parallel_npu_group = '0'"),
    case("train {d}/w_trx.txt tpu", "{d}/w_trx.txt:1: model_parallel_npu_group = 'x'"),
    case("train {d}/w_tr5.txt tpu", "{d}/w_tr5.txt: model_parallel_NPU_group = 5"),
    case("train {d}/w_dlrm.txt tpu", "{d}/w_dlrm.txt:1: ", "= 'last_bottom_layer:'"),
    case("train {d}/w_cust.txt tpu", "{d}/w_cust.txt:3: conv1 parallelism = 'NOPE'"),
    case("train {d}/w_cust2.txt tpu", "{d}/w_cust2.txt: parallelism = 'HYBRID_CUSTOMIZED'"),
    case("train {d}/w_fib.txt tpu", "{d}/w_fib.txt:1: checkpoints = 5"),
    case("train {d}/w_small.txt tpu", "--chunks = 4: {d}/w_small.txt: layer 0 (conv1) wg",
         "3 bytes"),
    case("train {d}/w_small.txt tpu --chunks 8",
         "--chunks = 8: {d}/w_small.txt: layer 0 (conv1) wg"),
    case("train {d}/w_small.txt tpu --system {d}/../s_splits8.txt",
         "{d}/../s_splits8.txt: preferred-dataset-splits = 8: {d}/w_small.txt: layer 0"),
    case("train {d}/w_ara2a.txt tpu",
         "{d}/w_ara2a.txt: layer 0 (conv1) wg_type = 'ALLREDUCEALLTOALL'"),
    case("train {d}/w_upd0.txt tpu", "{d}/w_upd0.txt:3: conv1 update_time = '0'"),
    case("train {d} tpu", "WORKLOAD = '{d}'"),
    case("train vgg17 tpu", "WORKLOAD = 'vgg17'"),
    # -- train flags --
    case("train vgg16 tpu --policy fixed", "--policy = 'fixed': needs a route"),
    case("train vgg16 tpu --policy 0,0", "--policy = '0,0': a route must be a permutation"),
    case("train vgg16 tpu --policy 0,1,2", "--policy = '0,1,2'"),
    case("train vgg16 tpu --policy magic", "--policy = 'magic': unknown policy"),
    case("train vgg16 tpu --intra nope", "--intra = 'nope'"),
    case("train vgg16 tpu --timing nope", "--timing = 'nope'"),
    case("train vgg16 tpu --passes 0", "--passes = 0"),
    case("train vgg16 tpu --passes two", "--passes = 'two'"),
    case("train vgg16 tpu --chunks 0", "--chunks = 0"),
    case("train vgg16 tpu --chunks x", "--chunks = 'x'"),
    case("train vgg16 tpu --comm-scale 0", "--comm-scale = 0.0"),
    case("train vgg16 tpu --comm-scale -2", "--comm-scale = -2.0"),
    case("train vgg16 tpu --comm-scale nan", "--comm-scale = nan"),
    case("train vgg16 tpu --comm-scale inf", "--comm-scale = inf"),
    case("train vgg16 tpu --comm-scale 1e40", "--comm-scale = 1e+40", "float32"),
    case("train vgg16 tpu --comm-scale 1e30", "--comm-scale = 1e+30", "vgg16.txt: layer 0"),
    case("train vgg16 tpu --compute-scale 1e40", "--compute-scale = 1e+40", "float32"),
    case("train vgg16 tpu --compute-scale 1e20", "--compute-scale = 1e+20", "vgg16.txt: layer"),
    case("train vgg16 tpu --compute-scale x", "--compute-scale = 'x'"),
    case("train vgg16 tpu --timeline t.gif", "--timeline = 't.gif'"),
    case("train vgg16 tpu --timeline {d}/nodir/t.png", "--timeline = '{d}/nodir/t.png'"),
    case("train vgg16 tpu --timeline {d}", "--timeline = '{d}'"),
    case("train-report --out {d}/r --workloads ,,", "--workloads = ',,'"),
    case("train-report --out {d}/r --networks ,", "--networks = ','"),
    case("train-report --out {d}/r --workloads vgg16,nope", "--workloads = 'nope'"),
    case("train-report --out {d}/r --networks torus-9d", "--networks = 'torus-9d'"),
    case("train-report --out {d}/w_kw.txt", "--out = '{d}/w_kw.txt'", "not a folder"),
    case("train-report --out {d}/nodir/r", "--out = '{d}/nodir/r'", "no such folder"),
    # -- improve flags --
    case("improve tpu --evaluations -1", "--evaluations = -1"),
    case("improve tpu --evaluations x", "--evaluations = 'x'"),
    case("improve tpu --cpsat-dtime -1", "--cpsat-dtime = -1.0"),
    case("improve tpu --cpsat-dtime inf", "--cpsat-dtime = inf"),
    case("improve tpu --cpsat-dtime x", "--cpsat-dtime = 'x'"),
    case("improve tpu --time-limit 0", "--time-limit = 0.0"),
    case("improve tpu --time-limit -1", "--time-limit = -1.0"),
    case("improve tpu --time-limit inf", "--time-limit = inf"),
    case("improve tpu --seed x", "--seed = 'x'"),
    case("improve tpu --target-gap -1", "--target-gap = -1.0"),
    case("improve tpu --target-gap 1", "--target-gap = 1.0"),
    case("improve tpu --target-gap nan", "--target-gap = nan"),
    case("improve tpu --target-gap x", "--target-gap = 'x'"),
    case("improve tpu --gantt g.txt", "--gantt = 'g.txt'"),
    case("improve tpu --gantt {d}/nodir/g.png", "--gantt = '{d}/nodir/g.png'"),
    case("improve tpu --schedule-out {d}", "--schedule-out = '{d}'"),
    case("improve tpu --schedule-out {d}/nodir/s.json", "--schedule-out = '{d}/nodir/s.json'"),
    case("improve tpu --chunks 0", "--chunks = 0"),
    case("improve tpu --chunks 3 --size 2", "--chunks = 3: more chunks than bytes"),
    case("improve tpu --size 0", "--size = '0'"),
    case("improve tpu --size 2PiB", "--size = '2PiB'"),
    case("improve tpu --endpoint-delay -1", "--endpoint-delay = -1.0"),
    case("improve nope", "NETWORK = 'nope'"),
    # -- simulate flags --
    case("simulate tpu --policy fixed", "--policy = 'fixed': needs a route"),
    case("simulate tpu --policy 0,0", "--policy = '0,0'"),
    case("simulate tpu --policy magic", "--policy = 'magic'"),
    case("simulate tpu --system {d}/../s_inter_fixed.txt --chunks 4",
         "{d}/../s_inter_fixed.txt: inter-dimension-scheduling"),
    case("simulate tpu --intra nope", "--intra = 'nope'"),
    case("simulate tpu --timing nope", "--timing = 'nope'"),
    case("simulate tpu --size 0", "--size = '0'"),
    case("simulate tpu --size 1.5", "--size = '1.5'"),
    case("simulate tpu --size abc", "--size = 'abc'"),
    case("simulate tpu --chunks 0", "--chunks = 0"),
    case("simulate tpu --chunks x", "--chunks = 'x'"),
    case("simulate tpu --chunks 3 --size 2", "--chunks = 3: more chunks than bytes"),
    case("simulate tpu --chunks 10000000", "--chunks = 10000000", "GiB of memory"),
    case("simulate tpu --system {d}/../s_splits_huge.txt",
         "{d}/../s_splits_huge.txt: preferred-dataset-splits = 10000000", "--no-limit"),
    case("simulate tpu --active-chunks 0", "--active-chunks = 0"),
    case("simulate tpu --endpoint-delay -1", "--endpoint-delay = -1.0"),
    case("simulate tpu --endpoint-delay inf", "--endpoint-delay = inf"),
    case("simulate tpu --schedule-out {d}", "--schedule-out = '{d}'"),
    case("simulate tpu --gantt g.gif", "--gantt = 'g.gif'"),
    case("simulate tpu --collective broadcast", "--collective", "'broadcast'"),
    # -- solve, bound, compare, spec, sweep, report --
    case("solve tpu --solver nope", "--solver = 'nope'"),
    case("solve tpu --time-limit -1", "--time-limit = -1.0"),
    case("solve tpu --deterministic-time -1", "--deterministic-time = -1.0"),
    case("solve tpu --node-limit 0", "--node-limit = 0"),
    case("solve tpu --threads 0", "--threads = 0"),
    case("solve tpu --ag-order x", "--ag-order = 'x'"),
    case("solve tpu --solver-log {d}/nodir/l.txt", "--solver-log = '{d}/nodir/l.txt'"),
    case("solve tpu --chunks 100000", "--chunks = 100000", "too large for the CP-SAT model"),
    case("bound tpu --ag-order 0,0", "--ag-order = '0,0'"),
    case("bound tpu --size 0", "--size = '0'"),
    case("compare tpu --policies magic", "--policies = 'magic'"),
    case("compare tpu --policies ,,", "--policies = ',,'"),
    case("compare tpu --intra nope", "--intra = 'nope'"),
    case("compare tpu --solvers nope", "--solvers = 'nope'"),
    case("compare tpu --ag-order 9", "--ag-order = '9'"),
    case("compare tpu --threads 0", "--threads = 0"),
    case("compare tpu --time-limit -2", "--time-limit = -2.0"),
    case("spec tpu --policies magic", "--policies = 'magic'"),
    case("spec tpu --out {d}/nodir/s.toml", "--out = '{d}/nodir/s.toml'"),
    case("sweep {d}/spec_key.toml --db {d}/x.sqlite", "{d}/spec_key.toml: grid[0].sizez"),
    case("sweep {d}/spec_toml.toml --db {d}/x.sqlite", "{d}/spec_toml.toml: ", "invalid TOML"),
    case("sweep {d}/spec_sizes.toml --db {d}/x.sqlite", "{d}/spec_sizes.toml: grid[0].sizes"),
    case("sweep {d}/nospec.toml --db {d}/x.sqlite", "SPEC = '{d}/nospec.toml'"),
    case("sweep {d}/spec_key.toml --db {d}/x.sqlite --workers 0", "--workers = 0"),
    case("report {d}/db.sqlite --out {d}/rep", "DB = '{d}/db.sqlite'"),
    case("report {d}/nodb.sqlite --out {d}/rep", "DB = '{d}/nodb.sqlite'"),
]
for _col in COLUMNS:
    _f = f"w_{_col}_x.txt"
    if _col.endswith("_type"):
        CASES.append(case(f"train {{d}}/{_f} tpu", f"{{d}}/{_f}:3: conv1 {_col} = 'BROADCAST'"))
        continue
    CASES.append(case(f"train {{d}}/w_{_col}_frac.txt tpu",
                      f"{{d}}/w_{_col}_frac.txt:3: conv1 {_col} = '1.5': not an integer"))
    if _col != "reserved":
        CASES.append(case(f"train {{d}}/w_{_col}_neg.txt tpu",
                          f"{{d}}/w_{_col}_neg.txt:3: conv1 {_col} = '-7'"))
        CASES.append(case(f"train {{d}}/w_{_col}_big.txt tpu",
                          f"{{d}}/w_{_col}_big.txt:3: conv1 {_col} = '1{'0' * 40}': more than"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad-inputs")
    d = root / "files"
    d.mkdir()
    for name, text in FILES.items():
        (d / name).write_text(text)
    (root / "s_splits8.txt").write_text("preferred-dataset-splits: 8\nscheduling-policy: LIFO\n"
                                        "collective-optimization: localBWAware\n")
    (root / "s_inter_fixed.txt").write_text("inter-dimension-scheduling: fixed\n")
    (root / "s_splits_huge.txt").write_text("preferred-dataset-splits: 10000000\n")
    return d


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 150
    commands = [c.values[0].split()[0] for c in CASES]
    assert commands.count("train") >= 60 and commands.count("improve") >= 25


@pytest.mark.parametrize(("argv", "parts"), CASES)
def test_bad_input_gives_one_line_and_exit_2(capsys, folder: Path, argv: str, parts) -> None:
    args = [a.replace("{d}", str(folder)) for a in argv.split()]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (code, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert err.startswith(C) or err.startswith("themis ") and ": error: " in err
    for part in parts:
        assert part.replace("{d}", str(folder)) in err, err

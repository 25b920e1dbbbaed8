"""The deployment files in cluster/: the `ray up` config, the KubeRay RayJob, the nightly
script and its systemd and cron files.

Fast and without Ray: the YAML files are parsed and checked against what `ray up` and
KubeRay read (the `ray up` config against the JSON schema Ray ships), the shell commands
they run are executed with stand-ins for `fuzzfarm` and `ray` on PATH, and nightly.sh is
run against a fake `fuzzfarm` that records its arguments and writes the campaign status
files a real run writes (DIR/_campaign/<run_id>/status.json).
"""
from __future__ import annotations

import datetime
import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "cluster"
RAY_UP = CLUSTER / "ray-up.yaml"
RAYJOB = CLUSTER / "kuberay-rayjob.yaml"
NIGHTLY = CLUSTER / "nightly.sh"
SERVICE = CLUSTER / "systemd" / "fuzzfarm-nightly.service"
TIMER = CLUSTER / "systemd" / "fuzzfarm-nightly.timer"
CRONTAB = CLUSTER / "crontab.example"

NIGHT = "2026-11-22"
DEVICE_JSON = '{"fuzzfarm_dev_0123456789ab_0": 1}'


def _write_exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _calls(path: Path) -> list[list[str]]:
    """The argument lists a stand-in recorded, one per call (fields split on \\x1f)."""
    if not path.exists():
        return []
    return [line.split("\x1f")[:-1] for line in path.read_text().splitlines()]


# ---------------------------------------------------------------------------------------
# Every YAML file

def test_every_yaml_file_parses():
    files = sorted(CLUSTER.rglob("*.yaml")) + sorted(CLUSTER.rglob("*.yml"))
    assert RAY_UP in files and RAYJOB in files
    for f in files:
        docs = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
        assert docs, f"{f} holds no YAML document"
        assert all(isinstance(d, dict) for d in docs), f


# ---------------------------------------------------------------------------------------
# ray up

@pytest.fixture(scope="module")
def ray_up():
    return yaml.safe_load(RAY_UP.read_text())


def test_ray_up_has_what_ray_up_requires(ray_up):
    for key in ("cluster_name", "provider", "auth", "available_node_types", "head_node_type",
                "max_workers", "setup_commands", "head_start_ray_commands",
                "worker_start_ray_commands", "file_mounts"):
        assert key in ray_up, key
    assert ray_up["provider"]["type"] == "aws"
    types = ray_up["available_node_types"]
    assert ray_up["head_node_type"] in types
    for name, t in types.items():
        assert "resources" in t and "node_config" in t, name
        assert "InstanceType" in t["node_config"], name
    workers = [t for n, t in types.items() if n != ray_up["head_node_type"]]
    assert len(workers) == 2                                   # a GPU type and a CPU type
    assert any(t["node_config"]["InstanceType"].startswith(("g", "p")) for t in workers)
    for t in workers:
        assert t["min_workers"] == t["max_workers"] >= 1       # a fixed fleet
    assert sum(t["max_workers"] for t in workers) <= ray_up["max_workers"]


def test_ray_up_matches_rays_schema(ray_up):
    """The JSON schema `ray up` validates a config with, read from the installed Ray
    (without importing it)."""
    jsonschema = pytest.importorskip("jsonschema")
    spec = importlib.util.find_spec("ray")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("ray is not installed")
    schema_path = Path(list(spec.submodule_search_locations)[0]) / "autoscaler" / "ray-schema.json"
    if not schema_path.exists():
        pytest.skip(f"no {schema_path}")
    jsonschema.validate(ray_up, json.loads(schema_path.read_text()))


def test_ray_up_setup_installs_fuzzfarm_and_mounts_shared_results(ray_up):
    setup = "\n".join(ray_up["setup_commands"])
    assert "pip install" in setup and "fuzzfarm @ git+https://" in setup
    assert "mount -t nfs4" in setup and "efs" in setup          # the shared results directory
    assert "/etc/OpenCL/vendors/nvidia.icd" in setup            # NVIDIA's OpenCL ICD
    assert ray_up["file_mounts"]                                # the campaigns


def test_ray_up_start_commands_return(ray_up):
    """`ray up` runs the start commands over SSH and waits for each: `ray stop`, then a
    `ray start` without --block; the head's runs the autoscaler."""
    head, worker = ray_up["head_start_ray_commands"], ray_up["worker_start_ray_commands"]
    for cmds in (head, worker):
        assert cmds[0] == "ray stop"
        assert not any("--block" in c for c in cmds)
    assert any("ray start --head" in c and "--autoscaling-config=~/ray_bootstrap_config.yaml" in c
               for c in head)
    assert any("ray start --address=$RAY_HEAD_IP:6379" in c for c in worker)


@pytest.fixture()
def standins(tmp_path):
    """A bin directory with a fake `fuzzfarm` (`node --print-resources` prints DEVICE_JSON,
    or fails with FAKE_NODE_FAIL set) and a fake `ray`; both record their arguments, `ray`
    also RAY_OVERRIDE_RESOURCES."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _write_exe(bin_dir / "fuzzfarm", f"""#!/usr/bin/env bash
{{ printf '%s\\x1f' "$@"; printf '\\n'; }} >> "{tmp_path}/fuzzfarm.calls"
[[ -n ${{FAKE_NODE_FAIL:-}} ]] && {{ echo "Error: --devices: no device matches" >&2; exit 2; }}
echo '{DEVICE_JSON}'
""")
    _write_exe(bin_dir / "ray", f"""#!/usr/bin/env bash
{{ printf '%s\\x1f' "$@"; printf '\\n'; }} >> "{tmp_path}/ray.calls"
printf '%s\\n' "${{RAY_OVERRIDE_RESOURCES:-}}" >> "{tmp_path}/ray.env"
""")
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(home)}
    return tmp_path, env


@pytest.mark.parametrize("node_type, selector", [("worker.gpu", "nvidia"), ("worker.cpu", "pocl")])
def test_ray_up_worker_offers_its_devices(ray_up, standins, node_type, selector):
    """Run a worker type's initialization commands and the worker start command as the
    launcher does (each in its own bash, RAY_HEAD_IP exported): `ray start` joins the head
    with the resources `fuzzfarm node --print-resources` printed for the type's devices."""
    tmp, env = standins
    for cmd in ray_up["available_node_types"][node_type]["initialization_commands"]:
        subprocess.run(["bash", "-c", cmd], env=env, check=True)
    start = ray_up["worker_start_ray_commands"][1]
    subprocess.run(["bash", "-c", f"export RAY_HEAD_IP=10.1.2.3; {start}"], env=env, check=True)
    assert _calls(tmp / "fuzzfarm.calls") == [["node", "--print-resources", "--devices", selector]]
    [ray_call] = _calls(tmp / "ray.calls")
    assert ray_call[0] == "start"
    assert "--address=10.1.2.3:6379" in ray_call
    assert f"--resources={DEVICE_JSON}" in ray_call


def test_ray_up_worker_without_its_device_does_not_join(ray_up, standins):
    tmp, env = standins
    (Path(env["HOME"]) / ".fuzzfarm-devices").write_text("nvidia\n")
    start = ray_up["worker_start_ray_commands"][1]
    r = subprocess.run(["bash", "-c", f"export RAY_HEAD_IP=10.1.2.3; {start}"],
                       env={**env, "FAKE_NODE_FAIL": "1"}, capture_output=True, text=True)
    assert r.returncode != 0
    assert _calls(tmp / "ray.calls") == []


# ---------------------------------------------------------------------------------------
# KubeRay

@pytest.fixture(scope="module")
def kube():
    docs = [d for d in yaml.safe_load_all(RAYJOB.read_text()) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    return by_kind


def _rayjob(kube):
    [job] = kube["RayJob"]
    return job


def _pods(job):
    spec = job["spec"]["rayClusterSpec"]
    yield "head", spec["headGroupSpec"]
    for g in spec["workerGroupSpecs"]:
        yield g["groupName"], g


def test_rayjob_fields(kube):
    job = _rayjob(kube)
    assert job["apiVersion"] == "ray.io/v1"
    spec = job["spec"]
    assert spec["entrypoint"].split()[:3] == ["fuzzfarm", "run", "--campaign"]
    assert spec["entrypoint"] == ("fuzzfarm run --campaign /campaigns/nightly.toml "
                                  "--address auto --out /results")
    assert spec["shutdownAfterJobFinishes"] is True
    assert set(spec) <= {"entrypoint", "submissionMode", "shutdownAfterJobFinishes",
                         "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit",
                         "rayClusterSpec", "runtimeEnvYAML", "metadata", "suspend",
                         "submitterPodTemplate", "entrypointNumCpus"}
    cluster = spec["rayClusterSpec"]
    assert {"rayVersion", "headGroupSpec", "workerGroupSpecs"} <= set(cluster)
    assert len(cluster["workerGroupSpecs"]) == 2
    for name, group in _pods(job):
        assert "rayStartParams" in group and "template" in group, name
        if name != "head":
            assert {"groupName", "replicas", "minReplicas", "maxReplicas"} <= set(group)
            assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]


def test_rayjob_gpu_and_pocl_groups(kube):
    groups = {n: g for n, g in _pods(_rayjob(kube)) if n != "head"}
    selectors = {}
    for name, g in groups.items():
        [c] = g["template"]["spec"]["containers"]
        [arg] = c["args"]
        assert "ray start" not in arg           # else KubeRay generates no `ray start`
        assert "fuzzfarm node --print-resources --devices" in arg
        assert "RAY_OVERRIDE_RESOURCES" in arg
        selectors[name] = arg.split("--devices", 1)[1].split(")")[0].strip()
        gpus = c["resources"]["limits"].get("nvidia.com/gpu")
        if selectors[name] == "nvidia":
            assert gpus == 1
        else:
            assert gpus is None
    assert sorted(selectors.values()) == ["nvidia", "pocl"]


def test_rayjob_volumes(kube):
    job = _rayjob(kube)
    [pvc] = kube["PersistentVolumeClaim"]
    [cm] = kube["ConfigMap"]
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    for name, group in _pods(job):
        pod = group["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m["name"] for c in pod["containers"]
                  for m in c.get("volumeMounts", [])}
        assert volumes[mounts["/results"]]["persistentVolumeClaim"]["claimName"] == \
            pvc["metadata"]["name"], name
        if name == "head":                      # the driver reads the campaign there
            assert volumes[mounts["/campaigns"]]["configMap"]["name"] == cm["metadata"]["name"]


def test_rayjob_campaign_is_valid(kube):
    [cm] = kube["ConfigMap"]
    text = cm["data"]["nightly.toml"]
    data = tomllib.loads(text)
    assert data["jobs"]
    try:
        from fuzzfarm.orchestrate import campaign
    except ImportError:
        return
    campaign.loads(text, "kuberay-rayjob.yaml:nightly.toml")


@pytest.mark.parametrize("fail", [False, True])
def test_rayjob_worker_args_reach_ray_start(kube, standins, fail):
    """KubeRay runs `bash -lc '<args> && ulimit -n 65536; ray start ... --block'`: the
    args' export must reach `ray start`, and a node without its device must not start."""
    tmp, env = standins
    groups = {n: g for n, g in _pods(_rayjob(kube)) if n != "head"}
    [c] = groups["gpu"]["template"]["spec"]["containers"]
    user = "".join(f" {a} " for a in c["args"])           # KubeRay's convertCmdToString
    generated = ("ulimit -n 65536; ray start  --address=fuzzfarm-head-svc:6379  --block "
                 " --num-cpus=8  --num-gpus=1 ")
    r = subprocess.run(["bash", "-c", f"{user} && {generated}"], capture_output=True, text=True,
                       env={**env, **({"FAKE_NODE_FAIL": "1"} if fail else {})})
    if fail:
        assert r.returncode != 0
        assert _calls(tmp / "ray.calls") == []
    else:
        assert r.returncode == 0, r.stderr
        assert _calls(tmp / "ray.calls")[0][0] == "start"
        assert (tmp / "ray.env").read_text().strip() == DEVICE_JSON


# ---------------------------------------------------------------------------------------
# systemd and cron

def _unit_sections(path: Path) -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections.setdefault(current, [])
        else:
            assert current is not None and "=" in line, (path, line)
            key, value = line.split("=", 1)
            sections[current].append((key.strip(), value.strip()))
    return sections


def test_systemd_service():
    s = _unit_sections(SERVICE)
    assert {"Unit", "Service"} <= set(s)
    service = dict(s["Service"])
    assert service["Type"] == "oneshot"
    assert service["ExecStart"].endswith("/cluster/nightly.sh")
    env = [v.split("=", 1)[0] for k, v in s["Service"] if k == "Environment"]
    assert {"FUZZFARM", "CAMPAIGN", "RESULTS", "KEEP_DAYS"} <= set(env)


def test_systemd_timer():
    s = _unit_sections(TIMER)
    assert {"Unit", "Timer", "Install"} <= set(s)
    timer = dict(s["Timer"])
    assert timer["OnCalendar"]
    assert timer["Persistent"] == "true"
    assert timer.get("Unit", SERVICE.name) == SERVICE.name
    assert dict(s["Install"])["WantedBy"] == "timers.target"


def test_systemd_units_verify(tmp_path):
    """systemd's own check, where it is installed (ExecStart pointed at this checkout)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    text = SERVICE.read_text().replace("/opt/fuzzfarm/cluster/nightly.sh", str(NIGHTLY))
    (tmp_path / SERVICE.name).write_text(text)
    shutil.copy(TIMER, tmp_path / TIMER.name)
    r = subprocess.run(["systemd-analyze", "verify", SERVICE.name, TIMER.name], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_crontab_example():
    entries = [line.split() for line in CRONTAB.read_text().splitlines()
               if line.strip() and not line.lstrip().startswith("#") and "=" not in line]
    assert len(entries) == 1
    fields = entries[0]
    assert len(fields) == 6 and fields[5].endswith("/cluster/nightly.sh")
    assert "%" not in CRONTAB.read_text().split("# m  h")[1]     # cron reads % as newline


# ---------------------------------------------------------------------------------------
# nightly.sh

def test_nightly_syntax():
    subprocess.run(["bash", "-n", str(NIGHTLY)], check=True)
    assert os.access(NIGHTLY, os.X_OK)


def test_nightly_shellcheck():
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed")
    r = subprocess.run(["shellcheck", str(NIGHTLY)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


FAKE_FUZZFARM = r"""#!/usr/bin/env bash
# A stand-in for fuzzfarm: records its arguments (\x1f after each) in $FAKE_CALLS, then
#   run --campaign F --out DIR   writes DIR/_campaign/run-N/status.json: "completed", or
#                                with FAKE_RUN_EXIT=130 (or 3) "interrupted" and exits so;
#                                FAKE_RUN_EXIT=2 writes nothing and exits 2 (bad input)
#   run --resume DIR             the same for every campaign of DIR
#   triage --help                exits 0, or 2 with FAKE_NO_TRIAGE set
#   triage ... --out DIR         creates DIR, exits FAKE_TRIAGE_EXIT (default 0)
set -eu
{ printf '%s\x1f' "$@"; printf '\n'; } >> "$FAKE_CALLS"
cmd=$1; shift
out='' resume=''
while (( $# )); do
    case $1 in
        --out) out=$2; shift ;;
        --resume) resume=$2; shift ;;
        --help) if [[ $cmd == triage && -z ${FAKE_NO_TRIAGE:-} ]]; then exit 0; fi; exit 2 ;;
    esac
    shift
done
case $cmd in
    run)
        code=${FAKE_RUN_EXIT:-0}
        if (( code == 2 )); then echo "Error: bad campaign" >&2; exit 2; fi
        state=completed
        (( code == 0 )) || state=interrupted
        if [[ -n $resume ]]; then
            dir=$resume
        else
            dir=$out
            n=1
            while [[ -e $dir/_campaign/run-$n ]]; do n=$((n + 1)); done
            mkdir -p "$dir/_campaign/run-$n"
        fi
        for c in "$dir"/_campaign/*/; do
            printf '{"devices": {"d0": {"state": "up"}}, "state": "%s"}\n' "$state" > "${c}status.json"
        done
        echo "fake fuzzfarm run: $state"
        exit "$code" ;;
    triage)
        mkdir -p "$out"
        echo "fake fuzzfarm triage"
        exit "${FAKE_TRIAGE_EXIT:-0}" ;;
esac
exit 2
"""


def make_night(results: Path, day: str, state: str | None = "completed") -> Path:
    """A night directory as `fuzzfarm run` leaves it (state None: no campaign at all)."""
    d = results / f"nightly-{day}"
    d.mkdir(parents=True)
    if state is not None:
        (d / "_campaign" / "run-1").mkdir(parents=True)
        (d / "_campaign" / "run-1" / "status.json").write_text(json.dumps({"state": state}))
    return d


class Nightly:
    """Runs nightly.sh with the fake fuzzfarm; `calls` are the fake's argument lists."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.results = tmp_path / "results"
        self.results.mkdir()
        self.fake = _write_exe(tmp_path / "fuzzfarm", FAKE_FUZZFARM)
        self.campaign = tmp_path / "nightly.toml"
        self.campaign.write_text('name = "nightly"\n')
        self.calls_file = tmp_path / "calls"

    def __call__(self, **env) -> subprocess.CompletedProcess:
        base = {"PATH": os.environ["PATH"], "HOME": str(self.tmp), "LC_ALL": "C",
                "FUZZFARM": str(self.fake), "PYTHON": sys.executable,
                "CAMPAIGN": str(self.campaign), "RESULTS": str(self.results),
                "FAKE_CALLS": str(self.calls_file), "NIGHT": NIGHT}
        if "TZ" in os.environ:                      # `date +%F` and Python agree on today
            base["TZ"] = os.environ["TZ"]
        base.update({k: v for k, v in env.items() if v is not None})
        for k in [k for k, v in env.items() if v is None]:
            base.pop(k, None)
        self.calls_file.unlink(missing_ok=True)
        return subprocess.run(["bash", str(NIGHTLY)], env=base, capture_output=True, text=True,
                              timeout=60)

    @property
    def calls(self) -> list[list[str]]:
        return _calls(self.calls_file)

    def night(self, day: str = NIGHT) -> str:
        return str(self.results / f"nightly-{day}")


@pytest.fixture()
def nightly(tmp_path):
    return Nightly(tmp_path)


def test_nightly_runs_then_triages_against_the_previous_night(nightly):
    make_night(nightly.results, "2026-11-20")
    make_night(nightly.results, "2026-11-21")
    r = nightly(RAY_ADDRESS="head:6379")
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls == [
        ["run", "--campaign", str(nightly.campaign), "--address", "head:6379",
         "--out", nightly.night()],
        ["triage", "--help"],
        ["triage", "--baseline", nightly.night("2026-11-21"), "--current", nightly.night(),
         "--out", str(nightly.results / f"triage-{NIGHT}")],
    ]
    assert (nightly.results / f"triage-{NIGHT}").is_dir()
    log = (nightly.results / "logs" / f"nightly-{NIGHT}.log").read_text()
    assert "fake fuzzfarm run: completed" in log and "fake fuzzfarm triage" in log
    assert "fake fuzzfarm" not in r.stdout            # fuzzfarm's output: the log only
    assert "done (status 0)" in r.stdout and "done (status 0)" in log


def test_nightly_without_ray_address_runs_on_one_machine(nightly):
    r = nightly(RAY_ADDRESS=None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[0] == ["run", "--campaign", str(nightly.campaign), "--out",
                                nightly.night()]


def test_nightly_default_night_is_today(nightly):
    before = datetime.date.today().isoformat()
    r = nightly(NIGHT=None)
    after = datetime.date.today().isoformat()
    assert r.returncode == 0, r.stdout + r.stderr
    out = nightly.calls[0][-1]
    assert out in (nightly.night(before), nightly.night(after))


def test_nightly_baseline_is_the_latest_completed_earlier_night(nightly):
    make_night(nightly.results, "2026-11-19")
    make_night(nightly.results, "2026-11-20", state="interrupted")
    make_night(nightly.results, "2026-11-21", state=None)     # rejected: nothing written
    make_night(nightly.results, "2026-11-23")                 # later than tonight
    r = nightly()
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[-1][:3] == ["triage", "--baseline", nightly.night("2026-11-19")]
    assert "nightly-2026-11-20 is unfinished; not a baseline" in r.stdout


@pytest.mark.parametrize("code", [130, 3])
def test_nightly_resumes_an_unfinished_night(nightly, code):
    make_night(nightly.results, "2026-11-21")
    r = nightly(FAKE_RUN_EXIT=str(code), RAY_ADDRESS="auto")
    assert r.returncode == code
    assert nightly.calls == [["run", "--campaign", str(nightly.campaign), "--address", "auto",
                              "--out", nightly.night()]]            # no triage
    assert not (nightly.results / f"triage-{NIGHT}").exists()

    r = nightly(RAY_ADDRESS="auto")                                # the same day, again
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[0] == ["run", "--resume", nightly.night(), "--address", "auto"]
    assert nightly.calls[-1][:4] == ["triage", "--baseline", nightly.night("2026-11-21"),
                                     "--current"]

    r = nightly(RAY_ADDRESS="auto")                                # completed: not rerun
    assert r.returncode == 0, r.stdout + r.stderr
    assert [c[0] for c in nightly.calls] == ["triage", "triage"]
    assert "already completed" in r.stdout


def test_nightly_bad_input_stops_and_next_run_starts_fresh(nightly):
    make_night(nightly.results, "2026-11-21")
    r = nightly(FAKE_RUN_EXIT="2")
    assert r.returncode == 2
    assert [c[0] for c in nightly.calls] == ["run"]
    r = nightly()
    assert r.returncode == 0
    assert nightly.calls[0][:2] == ["run", "--campaign"]


def test_nightly_skips_triage_without_the_command(nightly):
    make_night(nightly.results, "2026-11-21")
    r = nightly(FAKE_NO_TRIAGE="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[1:] == [["triage", "--help"]]
    assert "skipped triage" in r.stdout


def test_nightly_skips_triage_without_a_previous_night(nightly):
    r = nightly()
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[1:] == [["triage", "--help"]]
    assert "no earlier completed night" in r.stdout


def test_nightly_passes_on_triage_findings(nightly):
    make_night(nightly.results, "2026-11-21")
    r = nightly(FAKE_TRIAGE_EXIT="1")
    assert r.returncode == 1
    assert "triage reported new failures" in r.stdout


def test_nightly_keep_days_prunes(nightly):
    res = nightly.results
    for day in ("2026-11-10", "2026-11-19", "2026-11-20", "2026-11-21"):
        make_night(res, day)
    for day in ("2026-11-10", "2026-11-20"):
        (res / f"triage-{day}").mkdir()
    (res / "logs").mkdir()
    for day in ("2026-11-10", "2026-11-21"):
        (res / "logs" / f"nightly-{day}.log").write_text("old\n")
    (res / "nightly-notes").mkdir()                                # not a night
    r = nightly(KEEP_DAYS="2")                                     # keep 11-20 onwards
    assert r.returncode == 0, r.stdout + r.stderr
    left = sorted(p.name for p in res.iterdir())
    assert left == [".nightly.lock", "logs", "nightly-2026-11-20", "nightly-2026-11-21",
                    f"nightly-{NIGHT}", "nightly-notes", "triage-2026-11-20",
                    f"triage-{NIGHT}"]
    assert sorted(p.name for p in (res / "logs").iterdir()) == [
        "nightly-2026-11-21.log", f"nightly-{NIGHT}.log"]


def test_nightly_keep_days_zero_keeps_everything(nightly):
    make_night(nightly.results, "2000-01-01", state="failed")
    make_night(nightly.results, "2000-01-02")
    r = nightly(KEEP_DAYS="0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (nightly.results / "nightly-2000-01-01").is_dir()
    assert (nightly.results / "nightly-2000-01-02").is_dir()


def test_nightly_keep_days_spares_the_baseline(nightly):
    """Tonight's triage needs the latest completed night, however old."""
    res = nightly.results
    make_night(res, "2026-10-01")
    make_night(res, "2026-10-02")
    make_night(res, "2026-10-03", state="interrupted")
    r = nightly(KEEP_DAYS="1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert nightly.calls[-1][:3] == ["triage", "--baseline", nightly.night("2026-10-02")]
    assert sorted(p.name for p in res.glob("nightly-*")) == ["nightly-2026-10-02",
                                                             f"nightly-{NIGHT}"]


def test_nightly_lock_keeps_two_nights_apart(nightly):
    lock = nightly.results / ".nightly.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        r = nightly()
    assert r.returncode == 75
    assert "another nightly" in r.stderr
    assert nightly.calls == []
    assert nightly().returncode == 0                               # released


@pytest.mark.parametrize("env, message", [
    ({"RESULTS": None}, "RESULTS is not set"),
    ({"NIGHT": "2026-02-30"}, "NIGHT=2026-02-30 is not a date"),
    ({"KEEP_DAYS": "two"}, "KEEP_DAYS=two"),
    ({"FUZZFARM": "/nonexistent/fuzzfarm"}, "FUZZFARM=/nonexistent/fuzzfarm"),
    ({"CAMPAIGN": "/nonexistent.toml"}, "CAMPAIGN=/nonexistent.toml"),
])
def test_nightly_configuration_errors(nightly, env, message):
    r = nightly(**env)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.splitlines()) == 1
    assert nightly.calls == []

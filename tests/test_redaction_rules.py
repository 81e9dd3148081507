"""The redaction rules of ``bot.matching.examples`` as a table: each rule has lines it must change (with the
secret that must be gone) and lines it must leave alone; a rule added to ``REDACTIONS`` without examples here
fails ``test_every_rule_has_examples``. What suspects and signatures need must survive every rule."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.matching.redaction import REDACTIONS, Redaction, hosts_in, redact
from bot.matching.secrets import rules, rules_version, secrets_in


@dataclass(frozen=True)
class Examples:
    """``changed``: (line, the secret in it); ``kept``: lines the rule must not touch."""

    changed: list[tuple[str, str]]
    kept: list[str]


GH = "ghp_" + "A1b2" * 9
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
EXAMPLES: dict[str, Examples] = {
    "url-credentials": Examples(
        [
            ("git clone https://bob:hunter2@git.example.com/repo.git", "hunter2"),
            ("fetch https://user@evil.com:secret@host/x failed", "secret"),
        ],
        ["see https://pytorch.org/docs/stable/distributed.html#torch.distributed.init_process_group"],
    ),
    "slack-webhook": Examples(
        [("POST https://hooks.slack.com/services/T0000/B0000/XXXXsecretXXXX failed", "XXXXsecretXXXX")],
        ["posted to https://slack.com/api/chat.postMessage"],
    ),
    "presigned-url": Examples(
        [("GET /ckpt.pt?X-Amz-Signature=deadbeefcafe0123&X-Amz-Date=2026 403", "deadbeefcafe0123")],
        ["s3://bucket/checkpoints/step_1000/model.pt: 403 Forbidden"],
    ),
    "authorization-header": Examples(
        [("header Authorization: token 0123456789abcdef rejected", "0123456789abcdef")],
        ["401 Unauthorized: check the token's scopes"],
    ),
    "bearer": Examples(
        [("curl -H 'X-Auth: Bearer abcdefghijklmnop' https://api", "abcdefghijklmnop")],
        ["Bearer tokens expire after one hour"],
    ),
    "secret-key-value": Examples(
        [
            ("DB_PASSWORD=s3cr3t-value python train.py", "s3cr3t-value"),
            ('{"wandb_api_key": "0f0f0f0f0f"}', "0f0f0f0f0f"),
            ("aws_secret_access_key: wJalrXUtnFEMI", "wJalrXUtnFEMI"),
        ],
        ["tokenizer = AutoTokenizer.from_pretrained(path)", "passed 8/8 checks"],
    ),
    "secret-key-space-value": Examples(
        [
            ("MY_PASSWD hunter2 rejected", "hunter2"),
            ("aws_session_token ABCDEFGHIJKLMNOP123456 expired", "ABCDEFGHIJKLMNOP123456"),
        ],
        ["the token expired and the password was wrong", "max_tokens 4096 reached"],
    ),
    "mysql-password": Examples(
        [("ERROR: mysql -h dbhost -u trainer -pHunter2Secret failed: Access denied", "Hunter2Secret")],
        ["mkdir -p /tmp/x failed; ssh -p 2222 gpu-a01 failed", "mysql -u trainer -p failed: Access denied"],
    ),
    "query-secret": Examples(
        [
            (
                "GET https://acct.blob.core.windows.net/c/ckpt.pt?sv=2020-08-04&sp=r&sig=abcDEF123%2Bxyz%3D 403",
                "abcDEF123%2Bxyz%3D",
            ),
            ("GET /v1/models?key=AbC123xyz987 401", "AbC123xyz987"),
        ],
        ["GET /ckpt.pt?part=3&offset=4096 206", "sort?key_order=asc"],
    ),
    "private-key": Examples(
        [("-----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA7", "MIIEpAIBAAKCAQEA7")],
        ["-----BEGIN CERTIFICATE----- is a public certificate"],
    ),
    "secret-flag": Examples(
        [("huggingface-cli login --token hf-not-shaped-secret", "hf-not-shaped-secret")],
        ["torchrun --nproc-per-node 8 --nnodes 2 train.py"],
    ),
    "slack-token": Examples(
        [("SLACK_BOT=xoxb-1234567890-abcdefghij failed auth", "xoxb-1234567890-abcdefghij")],
        ["xox is not a token"],
    ),
    "github-token": Examples([(f"git push https://x@github.com {GH}", GH)], ["ghp_short is not a token"]),
    "slack-refresh-token": Examples(
        [
            (
                "Error: refresh failed xoxe-1-My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5 revoked",
                "xoxe-1-My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5",
            )
        ],
        ["xoxe is not a token"],
    ),
    "vendor-token": Examples(
        [
            ("npm ERR! npm_abcdefghijklmnopqrstuvwxyz0123456789 401", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
            (
                "docker login dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c denied",
                "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c",
            ),
            (
                "nvapi-0123456789abcdefghijklmnopqrstuvwxyzABCD rejected",
                "nvapi-0123456789abcdefghijklmnopqrstuvwxyzABCD",
            ),
            ("token ya29.a0AfH6SMBx3example_token_value_1234 expired", "ya29.a0AfH6SMBx3example_token_value_1234"),
            ("telegram 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw failed", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"),
        ],
        ["npm ERR! code E401", "nvapi-short", "step 110201543:AA done"],
    ),
    "aws-access-key": Examples(
        [("boto3 failed for AKIAIOSFODNN7EXAMPLE in us-east-1", "AKIAIOSFODNN7EXAMPLE")],
        ["AKIA alone, or AKIAshort, is not a key"],
    ),
    "openai-key": Examples(
        [("openai.AuthenticationError: sk-" + "a1B2" * 6 + " invalid", "sk-" + "a1B2" * 6)],
        ["sk-learn is a package name"],
    ),
    "huggingface-token": Examples(
        [("HF_HOME=/data hf_" + "Ab12" * 6 + " 401", "hf_" + "Ab12" * 6)],
        ["hf_hub_download failed: 404"],
    ),
    "gitlab-token": Examples([("remote: glpat-" + "x" * 20 + " denied", "glpat-" + "x" * 20)], ["glpat-short"]),
    "jwt": Examples([(f"token {JWT} expired", JWT)], ["eyJ alone is base64 of a brace"]),
    "email": Examples(
        [("Reported-by: Alice Example <alice@example.com>", "alice@example.com")],
        ["torch.cuda.OutOfMemoryError: CUDA out of memory"],
    ),
    "ipv6": Examples(
        [
            ("connect to fe80::1ff:fe23:4567:890a failed", "fe80::1ff:fe23:4567:890a"),
            ("bind 2001:db8:0:0:0:0:2:1 failed", "2001:db8:0:0:0:0:2:1"),
        ],
        ["PCI 0000:3b:00.0 at 10:12:01", "mac 00:1b:21:3a:4f:5c link down", "std::vector<int>::size failed"],
    ),
    "ipv4": Examples(
        [("NCCL WARN Connect to 10.38.10.112<43215> failed", "10.38.10.112")],
        ["NCCL version 2.18.1+cuda12.1", "torch 2.1.0.dev20230801"],
    ),
}

# Lines whose identifiers suspects and signatures need: no rule may touch them.
SURVIVORS = [
    "GPU 00000000:4E:00.0 at 10:12:01, mac 00:1b:21:3a:4f:5c, PCI 0000:3b:00.0",
    "api key hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    " for GPU-5fd4d5e6-1c2a-4b3f-9e8d-7a6b5c4d3e2f",
    "NVRM: Xid (PCI:0000:3b:00): 48, pid=218402, name=python, An uncorrectable double bit error (DBE)",
    "GPU 00000000:4E:00.0: GPU-5fd4d5e6-1c2a-4b3f-9e8d-7a6b5c4d3e2f fell off the bus",
    "CUDA error: an illegal memory access was encountered at 0x7f8a3c000000",
    "checkpoint sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 mismatch",
    "[rank3]: ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] Watchdog caught collective operation timeout",
    "NET/IB : Got completion from peer with error 12, opcode 32753, len 0, vendor err 129 (Recv)",
]


RULES = [pytest.param(rule, id=rule.name) for rule in REDACTIONS]


def test_every_rule_has_examples() -> None:
    assert set(EXAMPLES) == {rule.name for rule in REDACTIONS}
    assert all(examples.changed and examples.kept for examples in EXAMPLES.values())


@pytest.mark.parametrize("rule", RULES)
def test_the_rule_removes_its_secret(rule: Redaction) -> None:
    for line, secret in EXAMPLES[rule.name].changed:
        assert secret in line
        assert secret not in rule.pattern.sub(rule.replacement, line), line  # this rule alone
        assert secret not in redact(line), line  # and the whole redaction


@pytest.mark.parametrize("rule", RULES)
def test_the_rule_leaves_its_look_alikes(rule: Redaction) -> None:
    for line in EXAMPLES[rule.name].kept:
        assert rule.pattern.sub(rule.replacement, line) == line, line


@pytest.mark.parametrize("line", SURVIVORS)
def test_what_suspects_and_signatures_need_survives(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "redacted"),
    [
        ("mlflow.internal timed out", "<host> timed out"),
        ("MLFLOW.INTERNAL timed out", "<host> timed out"),  # a top-level domain in any case
        ("nfs01.storage.io unreachable", "<host> unreachable"),  # three labels: any real top-level domain
        ("a.b.de unreachable", "<host> unreachable"),
        ("torch.ai failed", "torch.ai failed"),  # two labels under a suffix that is as often code
        ("x = np.int(3)", "x = np.int(3)"),
        ("load ckpt.pt failed", "load ckpt.pt failed"),
    ],
)
def test_fully_qualified_names_become_host_and_code_does_not(line: str, redacted: str) -> None:
    assert redact(line) == redacted


@pytest.mark.parametrize(
    ("line", "host"),
    [
        ("slurmstepd: error: *** JOB 42 ON gpu-b07 CANCELLED AT 2024-01-01T00:00:00 ***", "gpu-b07"),
        ("gpu-a01:1234:1234 [0] NCCL INFO Bootstrap : Using eth0", "gpu-a01"),
        ("srun: error: gpu-c03: task 7: Exited with exit code 1", "gpu-c03"),
        (
            "Mar  3 10:00:01 gpu-d04 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
            "gpu-d04",
        ),
        ("2024-03-03T10:00:01.123+00:00 gpu-d05 kernel: NVRM: Xid (PCI:0000:3b:00): 79", "gpu-d05"),
    ],
)
def test_a_host_the_line_names_in_a_host_position_is_found_and_redacted(line: str, host: str) -> None:
    assert hosts_in([line]) == {host}
    assert host not in redact(line) and "<host>" in redact(line)


def test_the_pastes_suspects_are_redacted_in_any_case_and_one_letter_names_are_not() -> None:
    assert redact("GPU-A07 is slow", hosts=["gpu-a07"]) == "<host> is slow"
    assert redact("rank on gpu-a07x is slow", hosts=["gpu-a07"]) == "rank on gpu-a07x is slow"  # whole names only
    assert redact("a b c", hosts=["a"]) == "a b c"


# The shapes the adversarial review found stored verbatim (M1), each with its secret: gitleaks' rule set
# (bot.matching.secrets) or one of ours must take every one out.
SECRETS = [
    (
        "Error: git push failed for github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz on repo ckpt",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    ),
    ("ERROR: s3 upload failed with ASIAQWERTYUIOPASDFGH session expired for bucket ckpt-eu", "ASIAQWERTYUIOPASDFGH"),
    (
        "Error: slack notifier refresh failed xoxe-1-My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5 revoked",
        "My0xLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5",
    ),
    ("ERROR: mysql -h dbhost -u trainer -pHunter2Secret failed: Access denied for user trainer", "Hunter2Secret"),
    (
        "Error: azure blob upload failed AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA== for container ckpts",
        "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",
    ),
    ("maps failed: key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY rejected", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    (
        "token ya29.a0AfH6SMBx3example_token_value_here1234567890 expired",
        "a0AfH6SMBx3example_token_value_here1234567890",
    ),
    ("stripe charge failed sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("npm ERR! 401 npm_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    (
        "twine upload failed pypi-AgEIcHlwaS5vcmcCJGE0ZjYxYzQ2LWVkMjAtNGY5Yi04NzA1LTJkZDg5MzkzYzk0MAACKlsz"
        "LCJmMmMwMGRiZS05ZTAzLTQ1NzEtYjZlZS05MzA2NjI1MWE1MjUiXQAABiDtHqGFO4Q",
        "AgEIcHlwaS5vcmcCJGE0ZjYxYzQ2",
    ),
    ("docker login failed dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c", "2b3e36beeb386dfdaacb9b46004ccb7c"),
    (
        "NGC pull failed nvapi-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX",
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX",
    ),
    (
        "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 sendgrid failed",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
    ),
    ("telegram notify failed 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"),
    (
        "ssh failed: -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    (
        "GET https://a.blob.core.windows.net/c/x?sv=2020-08-04&se=2026-01-01&sig=abcDEF123%2Bxyz%3D 403",
        "abcDEF123%2Bxyz",
    ),
    ("GET https://api.example.com/v1?signature=9f8e7d6c5b4a 403", "9f8e7d6c5b4a"),
    ("login failed: MY_PASSWD hunter2", "hunter2"),
    ("aws_session_token IQoJb3JpZ2luX2VjEJr expired", "IQoJb3JpZ2luX2VjEJr"),
    (
        "wandb: ERROR api_key not configured: 0123456789abcdef0123456789abcdef01234567",
        "0123456789abcdef0123456789abcdef01234567",
    ),
    ("fetch https://user@evil.com:secret@host/x failed", "secret@"),
    ("connect to fe80::1ff:fe23:4567:890a failed", "fe80::1ff:fe23:4567:890a"),
]


@pytest.mark.parametrize(("line", "secret"), SECRETS, ids=[f"m1-{n}" for n in range(len(SECRETS))])
def test_every_secret_shape_of_the_review_is_redacted(line: str, secret: str) -> None:
    assert secret in line
    assert secret not in redact(line)


def test_gitleaks_rules_are_vendored_with_their_version_and_licence() -> None:
    found, _ = rules()
    assert len(found) > 200  # the whole rule set, not a sample
    assert "gitleaks v8" in rules_version() and "MIT" in rules_version()
    vendored = Path(__file__).resolve().parent.parent / "bot" / "matching" / "gitleaks"
    assert "MIT License" in (vendored / "LICENSE").read_text(encoding="utf-8")
    ids = {rule.id for rule in found}
    assert {"aws-access-token", "github-fine-grained-pat", "gcp-api-key", "stripe-access-token", "private-key"} <= ids


def test_a_gitleaks_finding_below_its_rules_entropy_or_allowlisted_is_not_a_secret() -> None:
    """gitleaks' own checks hold: generic-api-key needs entropy (a repeated letter is not a key)."""
    assert [r for r, _, _ in secrets_in("api_key = aaaaaaaaaaaaaaaaaaaaaaaa")] == []
    assert [r for r, _, _ in secrets_in("api_key = 7fG2kLq9Zx4MwP1sT8vR")] == ["generic-api-key"]


@pytest.mark.parametrize("line", SURVIVORS)
def test_gitleaks_leaves_what_suspects_and_signatures_need(line: str) -> None:
    assert list(secrets_in(line)) == []


def test_overlapping_names_are_replaced_longest_first_and_two_letter_names_count() -> None:
    line = "down: gpu-a1.dc1 and gpu-a1, then n1"
    assert redact(line, hosts=["gpu-a1", "gpu-a1.dc1", "n1"]) == "down: <host> and <host>, then <host>"
    assert redact("connect to fe80::1ff:fe23:4567:890a failed", ()) == "connect to <ip> failed"

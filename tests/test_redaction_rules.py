"""The redaction rules of ``bot.matching.examples`` as a table: each rule has lines it must change (with the
secret that must be gone) and lines it must leave alone; a rule added to ``REDACTIONS`` without examples here
fails ``test_every_rule_has_examples``. What suspects and signatures need must survive every rule."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.matching.redaction import REDACTIONS, Redaction, redact


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
        [("git clone https://bob:hunter2@git.example.com/repo.git", "hunter2")],
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
    "secret-flag": Examples(
        [("huggingface-cli login --token hf-not-shaped-secret", "hf-not-shaped-secret")],
        ["torchrun --nproc-per-node 8 --nnodes 2 train.py"],
    ),
    "slack-token": Examples(
        [("SLACK_BOT=xoxb-1234567890-abcdefghij failed auth", "xoxb-1234567890-abcdefghij")],
        ["xox is not a token"],
    ),
    "github-token": Examples([(f"git push https://x@github.com {GH}", GH)], ["ghp_short is not a token"]),
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
    "ipv4": Examples(
        [("NCCL WARN Connect to 10.38.10.112<43215> failed", "10.38.10.112")],
        ["NCCL version 2.18.1+cuda12.1", "torch 2.1.0.dev20230801"],
    ),
}

# Lines whose identifiers suspects and signatures need: no rule may touch them.
SURVIVORS = [
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

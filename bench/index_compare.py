"""bm25s against tantivy (and the old hand-written BM25) on this project's workload: the whole texts of a
real-looking library (bench/reallike.py) queried with the error lines of real pastes.

    python -m bench.index_compare 10000

bm25s and the old index get the hand-written log-aware terms (``bench.handwritten_bm25.tokenize``) as
pre-tokenized input; tantivy tokenizes in Rust the text ``bot.matching.engine.prepare`` readies, as the
bot does.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.handwritten_bm25 import BM25Index, tokenize
from bench.quality import load_real
from bench.reallike import write_library
from bot.library.case_store import load_library
from bot.matching.casetext import case_document
from bot.matching.normalize import clean


def _rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _queries() -> list[str]:
    out = []
    for paste in load_real("dev"):
        cleaned = clean(paste.text, 2 << 20, slack_encoded=False)
        out.append("\n".join(cleaned.text.splitlines()[-30:]))
    return out


def _time(label: str, fn: Any) -> Any:
    started = time.perf_counter()
    value = fn()
    print(f"  {label}: {time.perf_counter() - started:.2f} s", flush=True)
    return value


def _latency(search: Any, queries: list[str]) -> str:
    samples = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return f"p50 {statistics.median(samples):.1f} ms, p95 {samples[int(0.95 * (len(samples) - 1))]:.1f} ms"


def run(engine: str, docs: list[str], queries: list[str]) -> None:
    print(f"{engine} ({len(docs)} documents)", flush=True)
    if engine == "handwritten":
        index = _time("build (Python tokens)", lambda: BM25Index(docs, doc_limit=20_000, max_df_share=0.5))
        print("  query:", _latency(lambda q: index.search(q, top=5, limit=4000), queries))
    elif engine == "bm25s":
        import bm25s

        tokens = _time("tokenize (Python tokens)", lambda: [tokenize(d, limit=20_000) for d in docs])
        retriever = bm25s.BM25()
        _time("index", lambda: retriever.index(tokens, show_progress=False))

        def search(query: str) -> Any:
            terms = [t for t in tokenize(query, limit=4000) if t in retriever.vocab_dict]
            return retriever.get_scores(terms) if terms else None

        print("  query:", _latency(search, queries))
    else:
        import tantivy

        from bot.matching.engine import TextEngine, schema

        with tempfile.TemporaryDirectory() as directory:
            built = _time(
                "build (prepared text, Rust tokenizer)",
                lambda: TextEngine.build(docs, tantivy.Index(schema(), path=directory), identifiers=False),
            )
            print("  query:", _latency(lambda q: built.search(q, 5), queries))
            _time("open from disk", lambda: TextEngine.from_index(tantivy.Index.open(directory), len(docs)))
    print(f"  peak RSS so far {_rss():.0f} MB", flush=True)


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    engines = sys.argv[2:] or ["tantivy", "bm25s", "handwritten"]
    with tempfile.TemporaryDirectory() as directory:
        library = load_library(write_library(count, Path(directory)))
    docs = [case_document(case) for case in library.cases.values()]
    queries = _queries()
    print(json.dumps({"cases": len(docs), "queries": len(queries)}))
    for engine in engines:
        run(engine, docs, queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
